"""``synth themes``: mine a corpus of tasks for environment descriptions (EnvScaler's topic mining).

A corpus of user tasks (one JSON object per line) is turned into the
descriptions ``synth world --input`` takes, in four steps:

1. **Read** (:func:`read_corpus`): each line is an object with a text field
   (``task``, ``text``, ``instruction`` or ``prompt``, or the one named) or a
   bare JSON string. Lines that cannot be used are collected as problems with
   their line numbers, never raised one by one; equal texts are one item that
   remembers every line it came from.
2. **Assess** (:func:`assess_task`): one structured request per item asks
   whether the task needs persistent, domain-specific state, and if so for the
   domain, a description of the environment (entities, state, tools, rules),
   a usefulness and a modelability score (1-5) and the reason.
   :func:`drop_reason` keeps the items that need state and score at least
   ``min_score`` on both. The assessment is journaled per item; the filter is
   applied again on every run, so a new ``--min-score`` costs no request.
3. **Deduplicate** (:func:`cluster_by_similarity`): the kept descriptions are
   embedded and clustered by cosine similarity with a deterministic leader
   clustering: in order of score, each description joins the first cluster whose
   leader is at least ``similarity`` alike, or leads a new one. The leader, the
   best-scored item, is kept; every duplicate is within the threshold of it.
4. **Write** (:func:`render_descriptions`): one JSON object per kept item,
   sorted by score (best first) then id, with its provenance: the corpus lines
   and ids of every item in its cluster, the cluster size and the scores.

The model's answers are data: JSON read with ``json.loads`` and validated by
pydantic; nothing in them is executed or used as a path.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, model_validator

from worldspec.llm_frontend.batch import (
    BatchItem,
    BatchSummary,
    ClientWorker,
    InputError,
    ItemRecord,
    Journal,
    Progress,
    SplitWork,
    read_input_text,
    run_batch,
)
from worldspec.services.executors import Executor
from worldspec.services.model_client import LLMClient, LLMRequestError, Message, Usage

__all__ = ["MALFORMED", "TEXT_FIELDS", "THEMES_PROMPT_VERSION", "Cluster", "CorpusItem",
           "CorpusReadout", "Dropped", "Kept", "SourceRef", "ThemeAssessment", "ThemeOptions",
           "ThemesResult", "assess_messages", "assess_task", "cluster_by_similarity",
           "deduplicate", "description_rows", "drop_reason", "mine_themes", "prompt_text",
           "read_corpus", "render_descriptions", "theme_item"]

#: The fields a corpus line's text is looked for in, in this order.
TEXT_FIELDS = ("task", "text", "instruction", "prompt")

#: Part of every item's key: a new prompt makes the journal's old assessments stale.
THEMES_PROMPT_VERSION = 1

#: At most this many bad corpus lines are listed one by one.
MAX_LISTED_PROBLEMS = 20


@dataclass(frozen=True)
class ThemeOptions:
    """What to keep and what counts as a duplicate."""

    #: both scores must be at least this (1-5)
    min_score: int = 3
    #: cosine similarity at or above which two descriptions are duplicates
    similarity: float = 0.9
    #: a task's text is cut to this many characters in the prompt
    max_chars: int = 6000


# ------------------------------------------------------------------- corpus
@dataclass(frozen=True)
class SourceRef:
    """Where an item came from: its line in the corpus and its id there."""

    line: int
    id: str


@dataclass(frozen=True)
class CorpusItem:
    """One distinct task text and every corpus line that holds it."""

    text: str
    sources: tuple[SourceRef, ...]

    @property
    def id(self) -> str:
        return self.sources[0].id

    @property
    def line(self) -> int:
        return self.sources[0].line


@dataclass
class CorpusReadout:
    """The usable items of a corpus and what was wrong with the other lines."""

    items: list[CorpusItem]
    #: ``"FILE:LINE: why"`` for each line that could not be used
    problems: list[str] = field(default_factory=list)
    #: non-blank lines read
    lines: int = 0

    def problems_text(self) -> str:
        """The unusable lines, one a line (the first few, then a count)."""
        lines = [f"skipped {problem}" for problem in self.problems[:MAX_LISTED_PROBLEMS]]
        if len(self.problems) > MAX_LISTED_PROBLEMS:
            lines.append(f"... and {len(self.problems) - MAX_LISTED_PROBLEMS} more bad line(s)")
        return "".join(line + "\n" for line in lines)


def _line_text(value: Any, text_field: str | None) -> tuple[str | None, str]:
    """The task text of one parsed line, or ``None`` and why not."""
    if isinstance(value, str):
        return (value, "") if value.strip() else (None, "the string is empty")
    if not isinstance(value, dict):
        return None, f"expected a JSON object or string, not {type(value).__name__}"
    names = (text_field,) if text_field else TEXT_FIELDS
    for name in names:
        if name in value:
            text = value[name]
            if not isinstance(text, str):
                return None, f"\"{name}\" must be a string, not {type(text).__name__}"
            if not text.strip():
                return None, f"\"{name}\" is empty"
            return text, ""
    wanted = " or ".join(f"\"{n}\"" for n in names)
    return None, f"no {wanted} field (choose the text field with --field)"


def read_corpus(path: str | Path, *, text_field: str | None = None,
                id_field: str = "id") -> CorpusReadout:
    """Read a JSON Lines corpus: its items, and a problem for each unusable line.

    Raises :class:`~llm_frontend.batch.InputError` when the file cannot be read
    or holds no usable line at all.
    """
    text = read_input_text(path)
    readout = CorpusReadout([])
    by_text: dict[str, list[SourceRef]] = {}
    used_ids: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        readout.lines += 1
        try:
            value = json.loads(line)
        except ValueError as exc:
            readout.problems.append(f"{path}:{number}: not valid JSON ({exc})")
            continue
        task, why = _line_text(value, text_field)
        if task is None:
            readout.problems.append(f"{path}:{number}: {why}")
            continue
        raw_id = value.get(id_field) if isinstance(value, dict) else None
        item_id = str(raw_id).strip() if isinstance(raw_id, (str, int)) and \
            not isinstance(raw_id, bool) and str(raw_id).strip() else f"line-{number}"
        if item_id in used_ids:
            item_id = f"{item_id}@{number}"
        used_ids.add(item_id)
        by_text.setdefault(task.strip(), []).append(SourceRef(number, item_id))
    readout.items = [CorpusItem(task, tuple(refs)) for task, refs in by_text.items()]
    if not readout.items:
        shown = f": {readout.problems[0]}" if readout.problems else ""
        raise InputError(f"'{path}' holds no usable task{shown}")
    return readout


# --------------------------------------------------------------- assessment
class ThemeAssessment(BaseModel):
    """What the model makes of one task: does it need a stateful environment, and which."""

    needs_state: bool = Field(description="true when doing the task means reading and changing "
                                          "persistent, domain-specific state through tools")
    domain: str = Field(description="the domain in a few words, e.g. 'hotel reservations'")
    description: str = Field(description="the environment the task needs, as a paragraph: "
                                         "its entities and their fields, the state it keeps, "
                                         "the tools an agent calls and the business rules; "
                                         "empty when needs_state is false")
    usefulness: int = Field(ge=1, le=5, description="1-5: how useful an environment for this "
                                                    "kind of task is for training agents")
    modelability: int = Field(ge=1, le=5, description="1-5: how well it can be modelled as "
                                                      "typed state with deterministic tools")
    reason: str = Field(description="one or two sentences on the decision")

    @model_validator(mode="after")
    def _described_when_stateful(self) -> ThemeAssessment:
        if self.needs_state and not self.description.strip():
            raise ValueError("a task that needs state needs an environment description")
        return self

    @property
    def score(self) -> int:
        return self.usefulness + self.modelability


_ASSESS_SYSTEM = """\
You sort user tasks for building tool environments for LLM agents. An environment is a small \
stateful application (a booking system, a shop's back office, a ticket desk, a file system, \
a bank) with typed data, tools that read and change that data under business rules, and a \
final state that can be checked.

Keep a task (needs_state: true) only when doing it means reading and changing persistent, \
domain-specific state through tools: records that exist before the task and are changed by \
it. Drop it (needs_state: false) when it is stateless: general knowledge, maths, writing or \
translating text, coding help, chit-chat, web search, or one stateless API call.

For a task you keep, describe the environment it needs, not the task: the entities (with \
their key and main fields), the other state (the signed-in user, counters, settings), 5 to 12 \
tools (look-ups and actions) and the rules the tools must enforce. Write it so that someone \
who never saw the task could build the environment, and general enough to serve many tasks \
of that kind.

Scores, 1 (poor) to 5 (excellent):
- usefulness: how valuable agents trained in this environment would be (realistic, common, \
multi-step work);
- modelability: how well it fits typed tables and deterministic tools (no free-form media, \
no real-world side effects, no dependence on live external data)."""


def prompt_text(text: str, max_chars: int = 6000) -> str:
    """The task as the model sees it: stripped, and cut to ``max_chars``."""
    body = text.strip()
    return body[:max_chars] + "\n[... cut]" if len(body) > max_chars else body


def assess_messages(text: str, max_chars: int = 6000) -> list[Message]:
    """The request that assesses one task (its text cut to ``max_chars``)."""
    body = prompt_text(text, max_chars)
    return [{"role": "system", "content": _ASSESS_SYSTEM},
            {"role": "user", "content": f"The task:\n\n<task>\n{body}\n</task>\n\n"
                                        "Assess it and answer with the JSON object."}]


async def assess_task(client: LLMClient, text: str, options: ThemeOptions = ThemeOptions(),
                      *, usage: Usage | None = None) -> ThemeAssessment:
    """Ask the model about one task; :class:`~worldspec.services.model_client.LLMOutputError`
    when it never answers with a valid :class:`ThemeAssessment`."""
    reply = await client.chat(assess_messages(text, options.max_chars),
                              json_schema=ThemeAssessment, usage=usage)
    return reply.parsed


def drop_reason(assessment: ThemeAssessment, options: ThemeOptions) -> str:
    """Why an assessed item is dropped, or ``""`` when it is kept."""
    if not assessment.needs_state:
        return "no persistent state"
    if min(assessment.usefulness, assessment.modelability) < options.min_score:
        return f"score below {options.min_score}"
    return ""


# ------------------------------------------------------------ deduplication
def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else [0.0] * len(vector)


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return float(sum(map(operator.mul, a, b)))


def cluster_by_similarity(vectors: Sequence[Sequence[float]], threshold: float
                          ) -> list[list[tuple[int, float]]]:
    """Leader clustering by cosine similarity, in the order given.

    Each vector joins the first cluster whose leader (its first member) has a
    cosine similarity of at least ``threshold`` with it, or starts a new
    cluster. Returns the clusters in order of their leaders, each a list of
    ``(index, similarity to the leader)`` with the leader first (similarity
    1.0). Deterministic; a zero vector is alike to nothing. ``ValueError`` when
    the vectors differ in length.
    """
    if vectors and len({len(v) for v in vectors}) > 1:
        raise ValueError("the embeddings differ in length")
    units = [_unit(v) for v in vectors]
    clusters: list[list[tuple[int, float]]] = []
    for index, vector in enumerate(units):
        for cluster in clusters:
            similarity = _dot(units[cluster[0][0]], vector)
            if similarity >= threshold:
                cluster.append((index, round(similarity, 6)))
                break
        else:
            clusters.append([(index, 1.0)])
    return clusters


@dataclass(frozen=True)
class Kept:
    """An item that passed the filter, with its assessment."""

    item: CorpusItem
    assessment: ThemeAssessment

    @property
    def score(self) -> int:
        return self.assessment.score


def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that puts ``line-9`` before ``line-10``."""
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.split(r"(\d+)", text) if part)


def _rank(kept: Kept) -> tuple[Any, ...]:
    return (-kept.score, -kept.assessment.usefulness, _natural(kept.item.id), kept.item.line)


@dataclass(frozen=True)
class Cluster:
    """Near-duplicate descriptions: the one kept, and the others with their similarity."""

    leader: Kept
    duplicates: tuple[tuple[Kept, float], ...] = ()

    @property
    def size(self) -> int:
        return 1 + len(self.duplicates)


def deduplicate(kept: Sequence[Kept], vectors: Sequence[Sequence[float]], threshold: float
                ) -> list[Cluster]:
    """Cluster ``kept`` (whose descriptions ``vectors`` embed), best-ranked first.

    Items are ranked by score (usefulness + modelability), then usefulness,
    then id, so each cluster's leader is its best item.
    """
    if len(kept) != len(vectors):
        raise ValueError(f"{len(vectors)} embeddings for {len(kept)} descriptions")
    order = sorted(range(len(kept)), key=lambda i: _rank(kept[i]))
    groups = cluster_by_similarity([vectors[i] for i in order], threshold)
    return [Cluster(kept[order[members[0][0]]],
                    tuple((kept[order[i]], similarity) for i, similarity in members[1:]))
            for members in groups]


# ------------------------------------------------------------------- output
def description_rows(clusters: Sequence[Cluster], corpus: str) -> list[dict[str, Any]]:
    """One output object per cluster, sorted by score (best first) then id."""
    rows: list[dict[str, Any]] = []
    for cluster in clusters:
        leader = cluster.leader
        found = leader.assessment
        members = [leader.item, *(k.item for k, _ in cluster.duplicates)]
        refs = sorted((ref for item in members for ref in item.sources),
                      key=lambda ref: ref.line)
        rows.append({
            "id": leader.item.id,
            "description": found.description.strip(),
            "domain": found.domain.strip(),
            "score": found.score,
            "usefulness": found.usefulness,
            "modelability": found.modelability,
            "reason": found.reason.strip(),
            "task": leader.item.text,
            "source": {"corpus": corpus, "lines": [ref.line for ref in refs],
                       "ids": [ref.id for ref in refs]},
            "cluster_size": cluster.size,
            "duplicates": [{"id": k.item.id, "line": k.item.line, "similarity": similarity,
                            "score": k.score} for k, similarity in cluster.duplicates],
        })
    rows.sort(key=lambda row: (-int(row["score"]), _natural(str(row["id"]))))
    return rows


def render_descriptions(rows: Sequence[Mapping[str, Any]]) -> str:
    """The output file: one JSON object per line (what ``synth world --input`` reads)."""
    return "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)


# ---------------------------------------------------------------------- run
@dataclass(frozen=True)
class Dropped:
    """An item left out: why (a short category) and the details."""

    item: CorpusItem
    reason: str
    detail: str = ""


@dataclass
class ThemesResult:
    """What a themes run found: the rows to write and where every item went."""

    corpus: str
    readout: CorpusReadout
    options: ThemeOptions
    batch: BatchSummary
    kept: list[Kept] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    #: items the model could not be asked about (retried on the next run)
    errors: list[Dropped] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    embed_usage: Usage = field(default_factory=Usage)
    #: where the rows were written, once they are
    output: str | None = None

    @property
    def ok(self) -> bool:
        """No unusable corpus line and no item left unassessed."""
        return not self.readout.problems and not self.errors

    @property
    def duplicates(self) -> int:
        return sum(c.size - 1 for c in self.clusters)

    @property
    def reasons(self) -> dict[str, int]:
        counted = Counter(d.reason for d in self.dropped)
        counted.update({"near-duplicate": self.duplicates} if self.duplicates else {})
        return dict(sorted(counted.items(), key=lambda kv: (-kv[1], kv[0])))

    @property
    def chat_usage(self) -> Usage:
        return self.batch.usage

    @property
    def usage(self) -> Usage:
        return self.batch.usage + self.embed_usage

    @property
    def run_usage(self) -> Usage:
        return self.batch.run_usage + self.embed_usage

    def item_statuses(self) -> list[dict[str, Any]]:
        """Every item: ``kept``, ``duplicate`` (of which), ``dropped`` or ``error``, by line."""
        out: list[dict[str, Any]] = []
        for cluster in self.clusters:
            leader = cluster.leader
            out.append({"id": leader.item.id, "lines": _lines(leader.item), "status": "kept",
                        "score": leader.score, "domain": leader.assessment.domain})
            for kept, similarity in cluster.duplicates:
                out.append({"id": kept.item.id, "lines": _lines(kept.item),
                            "status": "duplicate", "of": leader.item.id,
                            "similarity": similarity, "score": kept.score})
        for status, group in (("dropped", self.dropped), ("error", self.errors)):
            out += [{"id": d.item.id, "lines": _lines(d.item), "status": status,
                     "reason": d.reason, "detail": d.detail} for d in group]
        return sorted(out, key=lambda row: (row["lines"][0], row["id"]))

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "synth themes", "corpus": self.corpus, "lines": self.readout.lines,
            "bad_lines": list(self.readout.problems), "tasks": len(self.readout.items),
            "resumed": self.batch.resumed, "passed_filter": len(self.kept),
            "kept": len(self.rows), "clusters": len(self.clusters),
            "clusters_with_duplicates": sum(1 for c in self.clusters if c.size > 1),
            "duplicates": self.duplicates, "dropped": self.reasons, "errors": len(self.errors),
            "min_score": self.options.min_score, "similarity": self.options.similarity,
            "usage": {"chat": self.chat_usage.to_json(),
                      "embeddings": self.embed_usage.to_json(),
                      "total": self.usage.to_json()},
            "run_usage": self.run_usage.to_json(), "output": self.output,
            "items": self.item_statuses(),
        }

    def render_text(self) -> str:
        lines: list[str] = []
        listed = [d for d in self.dropped if d.reason == MALFORMED] + self.errors
        for d in listed[:MAX_LISTED_PROBLEMS]:
            status = "error" if d in self.errors else "dropped"
            lines.append(f"{status} {d.item.id} (line {d.item.line}): {d.reason}: {d.detail}")
        if len(listed) > MAX_LISTED_PROBLEMS:
            lines.append(f"... and {len(listed) - MAX_LISTED_PROBLEMS} more")
        bad = f", {len(self.readout.problems)} bad line(s) skipped" \
            if self.readout.problems else ""
        resumed = f", {self.batch.resumed} assessed before (resumed)" \
            if self.batch.resumed else ""
        lines.append(f"synth themes: {len(self.readout.items)} task(s) from "
                     f"{self.readout.lines} line(s){bad}{resumed}")
        with_twins = sum(1 for c in self.clusters if c.size > 1)
        lines.append(f"  kept {len(self.rows)} description(s): {len(self.kept)} task(s) passed "
                     f"the filter, in {len(self.clusters)} cluster(s) ({with_twins} with "
                     f"near-duplicates, similarity >= {self.options.similarity:g})")
        dropped = len(self.dropped) + self.duplicates
        if dropped:
            lines.append(f"  dropped {dropped}:")
            lines += [f"    {count} x {reason}" for reason, count in self.reasons.items()]
        if self.errors:
            lines.append(f"  {len(self.errors)} error(s): not assessed, run again to retry")
        chat, embed = self.chat_usage, self.embed_usage
        lines.append(f"  tokens: {self.usage.total_tokens:,} (chat: prompt "
                     f"{chat.prompt_tokens:,}, completion {chat.completion_tokens:,} in "
                     f"{chat.requests} request(s), {chat.retries} retried; embeddings: "
                     f"{embed.total_tokens:,} in {embed.requests} request(s)); this run: "
                     f"{self.run_usage.total_tokens:,}")
        if self.output is not None:
            lines.append(f"  wrote {len(self.rows)} description(s) to {self.output}")
        return "\n".join(lines) + "\n"


#: The reason of an item whose every reply failed validation.
MALFORMED = "malformed model output"


def _lines(item: CorpusItem) -> list[int]:
    return [ref.line for ref in item.sources]


def theme_item(item: CorpusItem, options: ThemeOptions) -> BatchItem:
    """The batch item of a corpus item: keyed by what the model is shown, and the prompt."""
    payload = {"text": prompt_text(item.text, options.max_chars),
               "prompt": THEMES_PROMPT_VERSION}
    return BatchItem.make("theme", payload, item.id)


async def mine_themes(client: LLMClient, readout: CorpusReadout,
                      options: ThemeOptions = ThemeOptions(), *, corpus: str = "",
                      journal: Journal | None = None, progress: Progress | None = None,
                      concurrency: int = 4, embed_client: LLMClient | None = None,
                      executor: Executor | None = None,
                      retry_rejected: bool = False) -> ThemesResult:
    """Assess every item not finished in ``journal``, filter, embed, cluster.

    ``embed_client`` (default ``client``) computes the embeddings. Model
    requests that keep failing during assessment become ``error`` items (tried
    again on the next run); a failing embedding request raises
    :class:`~worldspec.services.model_client.LLMError` (the journal keeps the assessments).
    The assessments run on ``executor`` (default: this event loop), each worker
    with its own client of ``client.config``; the rest runs here. ``retry_rejected``
    asks again about items the journal holds as dropped or malformed.
    """
    from worldspec.llm_frontend.synth_workers import ThemeVerdict, theme_work

    keyed = [(theme_item(item, options), item) for item in readout.items]
    texts = {batch_item.key: item.text for batch_item, item in keyed}

    def settle(batch_item: BatchItem, verdict: ThemeVerdict) -> ItemRecord:
        if verdict.assessment is None:
            return ItemRecord(batch_item.key, "rejected", batch_item.label, reason=MALFORMED,
                              detail=verdict.malformed)
        found = ThemeAssessment.model_validate(verdict.assessment)
        reason = drop_reason(found, options)
        return ItemRecord(batch_item.key, "rejected" if reason else "accepted",
                          batch_item.label, reason=reason,
                          data={"assessment": found.model_dump()})

    work = SplitWork(ClientWorker(client.config, theme_work, client),
                     lambda batch_item: (texts[batch_item.key], options), settle)
    summary = await run_batch("synth themes", [b for b, _ in keyed], work, journal=journal,
                              concurrency=concurrency, progress=progress, executor=executor,
                              retry_rejected=retry_rejected)
    result = ThemesResult(corpus, readout, options, summary)
    records = {record.key: record for record in summary.records}
    for batch_item, item in keyed:
        record = records.get(batch_item.key)
        if record is None or record.status == "error":
            result.errors.append(Dropped(item, record.reason if record else "not run",
                                         record.detail if record else ""))
            continue
        raw = record.data.get("assessment")
        if not isinstance(raw, dict):
            result.dropped.append(Dropped(item, record.reason or MALFORMED, record.detail))
            continue
        try:
            found = ThemeAssessment.model_validate(raw)
        except ValueError:
            result.errors.append(Dropped(item, "unreadable journal record",
                                         "the assessment in the journal does not validate"))
            continue
        reason = drop_reason(found, options)
        if reason:
            result.dropped.append(Dropped(item, reason, found.reason))
        else:
            result.kept.append(Kept(item, found))
    if result.kept:
        vectors = await (embed_client or client).embed(
            [k.assessment.description.strip() for k in result.kept], usage=result.embed_usage)
        try:
            result.clusters = deduplicate(result.kept, vectors, options.similarity)
        except ValueError as exc:
            raise LLMRequestError(f"the embeddings cannot be compared: {exc}") from None
    result.rows = description_rows(result.clusters, corpus)
    return result
