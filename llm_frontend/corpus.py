"""``synth corpus``: one resumable pipeline from domains (or a task corpus) to a validated corpus.

Stages, each with its own journal under ``OUT/journals/``, so that a run stopped at any
moment (a kill, a crash, a server gone) resumes at the stage and item where it stopped,
without asking the model again for anything it already answered:

1. **descriptions** — from ``--domains`` (one description per line, with an ``id``) as
   given; from ``--corpus`` (user requests) by the themes stage of ``synth themes``
   (assessed, filtered, deduplicated). The descriptions are written to
   ``descriptions.jsonl``; a finished themes stage is recorded in ``journals/stages.jsonl``
   with the hash of what it wrote, so it is not run (nor its embeddings asked) again.
2. **worlds** — ``synth world`` for each description (at most ``worlds``), each world with
   its sample tasks (the seed data), written to ``worlds/<id>/<name>.world``.
3. **tasks** — ``synth tasks`` for each accepted world: ``tasks`` slots, the last
   ``conversational`` of them conversational, into ``worlds/<id>/tasks.world``.
   **mined** (with ``mined_per_world``) — ``synth tasks --mine`` for each accepted world:
   candidates mined from its seed data, the model writing only each instruction
   (:mod:`~llm_frontend.synth_mined`); each outcome is a record of the tasks journal (slots
   after the written ones), so the accepted ones join ``tasks.world`` and every later stage
   as written tasks do. A world is mined once: a run stopped while mining it mines it again.
4. **validation** — every world with its tasks is checked and validated as
   ``worldspec tasks`` does, then explored (``explore_examples`` x ``explore_steps``) from
   *every* task's data; the per-tool coverage and the findings are journaled per world
   (keyed by the hashes of its files and the budget, so an unchanged world is not explored
   twice).
5. **export** — ``dataset.jsonl`` (one row per valid task, the columns of
   ``worldspec export``, loadable with ``datasets.load_dataset("json", ...)``), a
   ``README.md`` dataset card and ``corpus.json``, the index: worlds, tasks, coverage,
   provenance and token costs per stage. These are rebuilt from the journals on every run.

Rejected drafts are kept with their problems under ``journals/rejected/`` (named
``*.world.rejected``, so ``worldspec check OUT`` reads only the corpus).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from worldspec.llm_frontend.batch import (
    BatchItem,
    BatchSummary,
    ClientWorker,
    InputError,
    ItemRecord,
    Journal,
    Progress,
    SplitWork,
    file_sha256,
    item_key,
    read_input_text,
    restore_output,
    run_batch,
    sha256_text,
    write_atomically,
)
from worldspec.llm_frontend.coverage import coverage_cells, unreached
from worldspec.llm_frontend.synth_tasks import TaskOptions
from worldspec.llm_frontend.synth_world import WorldOptions
from worldspec.llm_frontend.themes import ThemeOptions
from worldspec.services.mining import DIFFICULTY_BANDS
from worldspec.services.model_client import LLMConfig, Usage

__all__ = ["CorpusOptions", "CorpusReport", "CorpusSource", "Description", "StageStats",
           "WorldFacts", "build_corpus", "read_descriptions", "validated_fields", "world_facts",
           "world_totals"]

#: The version of ``corpus.json``'s layout.
INDEX_VERSION = 1


@dataclass(frozen=True)
class CorpusOptions:
    """How big the corpus is and how hard each stage tries."""

    #: at most this many descriptions become worlds (None: all)
    worlds: int | None = None
    tasks_per_world: int = 6
    #: of which this many are conversational (persona, known, unknown)
    conversational: int = 2
    world: WorldOptions = field(default_factory=lambda: WorldOptions(
        test_examples=100, test_steps=40))
    task: TaskOptions = field(default_factory=lambda: TaskOptions(min_calls=4))
    themes: ThemeOptions = field(default_factory=ThemeOptions)
    explore_examples: int = 100
    explore_steps: int = 40
    retry_rejected: bool = False
    #: world names the corpus must not use (other worlds checked beside it)
    reserved_names: frozenset[str] = frozenset()
    #: tasks mined per world (``synth tasks --mine``: the model writes only the
    #: instruction), besides the ``tasks_per_world`` written whole; 0: no mining stage
    mined_per_world: int = 0
    #: of the mined tasks of a world, how many are conversational (the model also writes
    #: persona, known and unknown)
    mined_conversational: int = 0
    #: mined tasks whose instructions one request writes (and one checks)
    mined_batch: int = 1

    def to_json(self) -> dict[str, Any]:
        return {"worlds": self.worlds, "tasks_per_world": self.tasks_per_world,
                "conversational": self.conversational,
                "world": {"max_rounds": self.world.max_rounds, "plan": self.world.plan,
                          "test_examples": self.world.test_examples,
                          "test_steps": self.world.test_steps,
                          "sample_tasks": self.world.sample_tasks,
                          **({"size": self.world.size} if self.world.size != "small" else {})},
                "task": {"max_rounds": self.task.max_rounds, "min_calls": self.task.min_calls,
                         "max_ids": self.task.max_instruction_ids},
                "explore": {"examples": self.explore_examples, "steps": self.explore_steps},
                **({"mined_per_world": self.mined_per_world,
                    "mined_conversational": self.mined_conversational,
                    "mined_batch": self.mined_batch} if self.mined_per_world else {})}


@dataclass(frozen=True)
class CorpusSource:
    """Where the descriptions come from: ``domains`` (descriptions) or ``corpus`` (requests)."""

    kind: str
    path: Path
    text_field: str | None = None
    id_field: str | None = None


@dataclass(frozen=True)
class Description:
    """One environment to build: a unique folder id, the text, and where it came from; a
    domains line may also name its domain ``family`` and, for this world only, how many
    ``tasks`` are written (instead of ``-n``) and how many of them are ``conversational``."""

    id: str
    text: str
    source: dict[str, Any]
    family: str | None = None
    tasks: int | None = None
    conversational: int | None = None

    def row(self) -> dict[str, Any]:
        """Its line of ``descriptions.jsonl``."""
        extra = {name: value for name, value in (("family", self.family),
                                                 ("tasks", self.tasks),
                                                 ("conversational", self.conversational))
                 if value is not None}
        return {"id": self.id, "description": self.text, "source": self.source, **extra}


def _folder_id(raw: str, taken: set[str]) -> str:
    base = "".join(ch.lower() if ch.isascii() and ch.isalnum() else "_" for ch in raw)
    base = "_".join(part for part in base.split("_") if part)[:40] or "world"
    name, suffix = base, 2
    while name in taken:
        name, suffix = f"{base}_{suffix}", suffix + 1
    taken.add(name)
    return name


def _description_extras(value: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A domains line's optional ``family`` (text), ``tasks`` and ``conversational``
    (counts, the second at most the first), checked."""
    extra: dict[str, Any] = {}
    family = value.get("family")
    if family is not None:
        if not isinstance(family, str) or not family.strip():
            raise InputError(f"{where}: \"family\" must be a non-empty string")
        extra["family"] = family.strip()
    for name in ("tasks", "conversational"):
        count = value.get(name)
        if count is not None:
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise InputError(f"{where}: \"{name}\" must be a whole number, 0 or more")
            extra[name] = count
    if extra.get("conversational", 0) > extra.get("tasks", extra.get("conversational", 0)):
        raise InputError(f"{where}: \"conversational\" ({extra['conversational']}) cannot "
                         f"exceed \"tasks\" ({extra['tasks']})")
    return extra


def read_descriptions(path: Path) -> list[Description]:
    """``--domains``: JSON Lines of ``{"id", "description"}`` objects (optionally with
    ``family``, ``tasks`` and ``conversational``) or strings, or a text file with one
    description per line (``#`` comments and blank lines skipped)."""
    text = read_input_text(path, "a descriptions file")
    taken: set[str] = set()
    found: list[Description] = []
    extra: dict[str, Any] = {}
    as_json = path.suffix in (".jsonl", ".json") or text.lstrip().startswith(("{", '"'))
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or (not as_json and line.lstrip().startswith("#")):
            continue
        label = f"line-{number}"
        if as_json:
            try:
                value = json.loads(line)
            except ValueError as exc:
                raise InputError(f"{path}:{number}: not valid JSON ({exc})") from None
            if isinstance(value, dict):
                description = value.get("description")
                label = str(value.get("id") or value.get("domain") or label)
                extra = _description_extras(value, f"{path}:{number}")
            else:
                description = value
        else:
            description = line
        if not isinstance(description, str) or not description.strip():
            raise InputError(f"{path}:{number}: expected a \"description\" string")
        found.append(Description(_folder_id(label, taken), description.strip(),
                                 {"file": path.name, "line": number, "id": label}, **extra))
        extra = {}
    if not found:
        raise InputError(f"'{path}' holds no descriptions")
    return found


@dataclass
class StageStats:
    """What one stage did: items, outcomes, repair rounds, requests and tokens."""

    name: str
    items: int = 0
    accepted: int = 0
    rejected: int = 0
    errors: int = 0
    rounds: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    skipped: bool = False

    @classmethod
    def of(cls, name: str, summary: BatchSummary) -> StageStats:
        return cls(name, summary.total, summary.count("accepted"), summary.count("rejected"),
                   summary.count("error"), {str(k): v for k, v in summary.rounds.items()},
                   dict(sorted(summary.reasons.items())), summary.usage)

    @property
    def acceptance(self) -> float | None:
        finished = self.accepted + self.rejected
        return round(self.accepted / finished, 4) if finished else None

    def to_json(self) -> dict[str, Any]:
        return {"items": self.items, "accepted": self.accepted, "rejected": self.rejected,
                "errors": self.errors, "acceptance_rate": self.acceptance,
                "repair_rounds": self.rounds, "reasons": self.reasons,
                "requests": self.usage.requests, "retries": self.usage.retries,
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
                "total_tokens": self.usage.total_tokens,
                "tokens_per_accepted": self.tokens_per_accepted}

    @property
    def tokens_per_accepted(self) -> int | None:
        """The stage's tokens per accepted item (rejected items' tokens included): what a
        written task costs beside a mined one."""
        return round(self.usage.total_tokens / self.accepted) if self.accepted else None

    def line(self) -> str:
        rate = f" ({self.acceptance:.0%})" if self.acceptance is not None else ""
        rounds = ", ".join(f"{k}: {v}" for k, v in self.rounds.items()) or "-"
        return (f"{self.name}: {self.items} item(s), {self.accepted} accepted{rate}, "
                f"{self.rejected} rejected, {self.errors} error(s); repair rounds {rounds}; "
                f"{self.usage.requests} request(s), {self.usage.total_tokens:,} tokens"
                + (f" ({self.tokens_per_accepted:,} per accepted)"
                   if self.tokens_per_accepted is not None and self.usage.total_tokens else ""))


@dataclass
class CorpusReport:
    """What a ``synth corpus`` run left in the folder, and whether it is complete."""

    out: Path
    index: dict[str, Any]
    stages: list[StageStats]
    #: the stage the run stopped at, when it could not go on ("" when it went through)
    stopped: str = ""
    message: str = ""
    restored: list[str] = field(default_factory=list)
    #: with ``--reindex``: the worlds whose files were edited by hand since the last index
    edited: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every stage went through, every item was accepted, every world validated clean."""
        if self.stopped:
            return False
        if any(s.errors or s.rejected for s in self.stages if s.name in ("worlds", "tasks")):
            return False
        return all(w.get("validated") for w in self.index.get("worlds", []))

    def render_text(self) -> str:
        lines = [f"synth corpus: {self.out}"]
        lines += [f"  rewrote {path} from the journal (it was missing or changed)"
                  for path in self.restored]
        lines += [f"  recorded a hand edit of {world} in its provenance"
                  for world in self.edited]
        for stage in self.stages:
            lines.append(f"  {stage.line()}" if not stage.skipped
                         else f"  {stage.name}: done before (recorded in the journal)")
            lines += [f"    {count} x {reason}" for reason, count in
                      sorted(stage.reasons.items(), key=lambda kv: (-kv[1], kv[0])) if reason]
        failed = sum(stage.errors for stage in self.stages)
        if failed:
            lines.append(f"  {failed} item(s) failed (a model request, most often): run the "
                         "same command again to retry them")
        if self.stopped:
            lines.append(f"  stopped at the {self.stopped} stage: {self.message}")
            lines.append("  run the same command again to resume there")
            return "\n".join(lines) + "\n"
        for world in self.index.get("worlds", []):
            writes = [t for t, row in world["coverage"].items() if row["changes_state"]]
            reached = [t for t in writes if t not in unreached(world["coverage"])]
            status = "validated" if world["validated"] else "NOT VALIDATED: " + \
                "; ".join(world["problems"][:3])
            lines.append(f"  {world['world']} ({world['id']}): {len(world['tasks'])} task(s), "
                         f"{world['conversational_tasks']} conversational; write tools "
                         f"{len(reached)}/{len(writes)} reached; {status}")
            lines.append("    coverage: " + coverage_cells(world["coverage"]))
        totals = self.index.get("totals", {})
        lines.append(f"  {totals.get('worlds', 0)} world(s), {totals.get('tasks', 0)} task(s) "
                     f"({totals.get('conversational_tasks', 0)} conversational), "
                     f"{totals.get('tokens', 0):,} tokens in {totals.get('requests', 0)} "
                     "request(s)")
        lines.append(f"  wrote {self.out / 'corpus.json'}, {self.out / 'dataset.jsonl'} "
                     f"({totals.get('tasks', 0)} row(s)) and {self.out / 'README.md'}")
        return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ layout
class _Layout:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.journals = root / "journals"
        self.rejected = self.journals / "rejected"

    def journal(self, stage: str) -> Journal:
        return Journal.open(self.journals / f"{stage}.jsonl")

    def world_dir(self, description: Description) -> Path:
        return self.root / "worlds" / description.id

    def relative(self, path: str | Path) -> str:
        try:
            return Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return Path(path).name


ProgressFactory = Callable[[int, str], Progress | None]


def _no_progress(total: int, label: str) -> Progress | None:
    return None


# ------------------------------------------------------------------ hand edits
def edited_worlds(layout: _Layout) -> dict[str, dict[str, Any]]:
    """The worlds of the folder's index that were edited by hand and re-indexed
    (``--reindex`` recorded ``edits`` in their provenance), whose files are still as the
    index says: by description id, their index entries. A run keeps them as they are: their
    world is not asked for again, their written tasks are not asked for again, and tasks
    mined for them are appended to their tasks file."""
    path = layout.root / "corpus.json"
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    found: dict[str, dict[str, Any]] = {}
    for entry in index.get("worlds", []) if isinstance(index, dict) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            continue
        provenance = entry.get("provenance")
        if not isinstance(provenance, dict) or not provenance.get("edits"):
            continue
        tasks_file = entry.get("tasks_file")
        same_world = file_sha256(layout.root / entry["file"]) == entry.get("sha256")
        same_tasks = tasks_file is None or \
            file_sha256(layout.root / str(tasks_file)) == entry.get("tasks_sha256")
        if same_world and same_tasks:
            found[str(entry.get("id"))] = entry
    return found


# ------------------------------------------------------------------ stages
async def _descriptions(config: LLMConfig, source: CorpusSource, layout: _Layout,
                        options: CorpusOptions, progress: ProgressFactory,
                        executor: Any, stages: list[StageStats],
                        restored: list[str]) -> list[Description] | str:
    """The descriptions, or why the stage could not finish."""
    out = layout.root / "descriptions.jsonl"
    if source.kind == "domains":
        found = read_descriptions(source.path)
        rows = [d.row() for d in found]
        text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
        if file_sha256(out) != sha256_text(text):
            write_atomically(out, text)
        return found[:options.worlds] if options.worlds else found
    from worldspec.llm_frontend.themes import mine_themes, read_corpus, render_descriptions
    from worldspec.services.model_client import LLMClient

    corpus_text = read_input_text(source.path, "a JSONL file")
    key = item_key("corpus-themes", {"corpus_sha256": sha256_text(corpus_text),
                                     "text_field": source.text_field,
                                     "id_field": source.id_field,
                                     "min_score": options.themes.min_score,
                                     "similarity": options.themes.similarity,
                                     "max_chars": options.themes.max_chars})
    marks = layout.journal("stages")
    record = marks.records.get(key)
    if record is not None and record.status == "accepted":
        verdict = restore_output(record, root=layout.root)
        if verdict == "rewrote":
            restored.append(layout.relative(out))
        if verdict != "lost":
            stage = StageStats("themes", skipped=True, usage=record.usage)
            stages.append(stage)
            return _theme_descriptions(str(record.data["text"]), options)
    readout = read_corpus(source.path, text_field=source.text_field,
                          id_field=source.id_field or "id")
    async with LLMClient(config) as client:
        result = await mine_themes(client, readout, options.themes, corpus=source.path.name,
                                   journal=layout.journal("themes"),
                                   progress=progress(len(readout.items), "themes: "),
                                   concurrency=config.concurrency, executor=executor)
    stage = StageStats.of("themes", result.batch)
    stage.usage = result.usage
    stages.append(stage)
    text = render_descriptions(result.rows)
    write_atomically(out, text)
    if not result.ok:
        problems = len(result.errors) + len(readout.problems)
        return (f"{problems} corpus item(s) could not be read or assessed "
                f"({len(result.rows)} description(s) so far)")
    marks.append(ItemRecord(key, "accepted", "themes", usage=result.usage,
                            output=layout.relative(out), output_sha256=sha256_text(text),
                            data={"text": text, "kept": len(result.rows)}))
    return _theme_descriptions(text, options)


def _theme_descriptions(text: str, options: CorpusOptions) -> list[Description]:
    taken: set[str] = set()
    found = []
    for line in text.splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        found.append(Description(_folder_id(str(row.get("domain") or row.get("id")), taken),
                                 str(row["description"]),
                                 {"corpus": row.get("source"), "id": row.get("id"),
                                  "domain": row.get("domain"), "score": row.get("score")}))
    return found[:options.worlds] if options.worlds else found


def _world_item(description: Description) -> BatchItem:
    # the same key as ``synth world``: a journal of either can seed the other
    return BatchItem.make("world", {"description": description.text}, description.id)


async def _worlds(config: LLMConfig, descriptions: Sequence[Description], layout: _Layout,
                  options: CorpusOptions, progress: ProgressFactory, executor: Any,
                  stages: list[StageStats], restored: list[str],
                  edited: Mapping[str, Mapping[str, Any]] = {}) -> dict[str, ItemRecord]:
    """The world of each description (accepted or not), by description id; a world edited
    by hand (``edited``) stays as it is."""
    from dataclasses import replace

    from worldspec.llm_frontend.stages import (
        keep_draft,
        rename_world,
        settle_world,
        slug,
        unique_name,
    )
    from worldspec.llm_frontend.synth_workers import world_work
    from worldspec.llm_frontend.synth_world import WorldOutcome

    by_key = {_world_item(d).key: d for d in descriptions}
    journal = layout.journal("worlds")

    def unique(item: BatchItem, outcome: WorldOutcome) -> WorldOutcome:
        """World names are unique in the corpus (and apart from ``reserved_names``): a
        second ``Library`` is renamed ``Library2`` before it is written."""
        taken = set(options.reserved_names) | {
            str(r.data.get("world")) for key, r in journal.records.items()
            if key != item.key and key in by_key and r.status == "accepted"}
        name = outcome.world_name or "World"
        if name not in taken or outcome.text is None:
            return outcome
        new = unique_name(name, taken)
        return replace(outcome, text=rename_world(outcome.text, new), world_name=new)

    def settle(item: BatchItem, outcome: WorldOutcome) -> ItemRecord:
        description = by_key[item.key]
        folder = layout.world_dir(description)
        if not outcome.accepted:
            record = settle_world(item, replace(outcome, text=None), layout.rejected)
            if outcome.text is not None:
                draft = keep_draft(layout.rejected, description.id, outcome.text,
                                   {"id": description.id, "reason": outcome.reason,
                                    "detail": outcome.detail, "stage": outcome.stage,
                                    "problems": list(outcome.problems),
                                    "history": record.data["history"]})
                record.data.update({"draft": layout.relative(draft),
                                    "problems": list(outcome.problems)})
            return record
        outcome = unique(item, outcome)
        target = folder / f"{slug(outcome.world_name or 'world')}.world"
        record = settle_world(item, outcome, folder, target=target)
        record.output = layout.relative(target)  # the journal holds no machine's paths
        return record

    work = SplitWork(ClientWorker(config, world_work),
                     lambda item: (by_key[item.key].text, options.world), settle)
    items = [_world_item(d) for d in descriptions]
    # the files of worlds edited by hand, which the journal's texts must not overwrite
    kept = {str(entry["file"]) for entry in edited.values()}
    summary = await run_batch("corpus worlds", items, work, journal=journal,
                              concurrency=config.concurrency, executor=executor,
                              progress=progress(len(items), "worlds: "),
                              retry_rejected=options.retry_rejected,
                              verify=lambda r: "ok" if r.output in kept
                              else restore_output(r, root=layout.root))
    restored += summary.restored
    stages.append(StageStats.of("worlds", summary))
    return {by_key[r.key].id: r for r in summary.records if r.key in by_key}


async def _tasks(config: LLMConfig, worlds: Sequence[tuple[Description, Path]], layout: _Layout,
                 options: CorpusOptions, progress: ProgressFactory, executor: Any,
                 stages: list[StageStats], restored: list[str],
                 edited: Mapping[str, Mapping[str, Any]] = {}) -> Any:
    from dataclasses import replace

    from worldspec.llm_frontend.stages import TaskBatch, TaskJob
    from worldspec.llm_frontend.synth_tasks import load_task_world
    from worldspec.llm_frontend.synth_workers import task_work

    jobs = []
    for description, path in worlds:
        world = load_task_world(path)
        count = options.tasks_per_world if description.tasks is None else description.tasks
        talks = options.conversational if description.conversational is None \
            else description.conversational
        out = path.parent / "tasks.world"
        if description.id in edited:  # its tasks file as edited: no slot written again
            kept = out.read_text(encoding="utf-8") if out.is_file() else None
            jobs.append(TaskJob(world, 0, False, out, kept_text=kept))
            continue
        jobs.append(TaskJob(world, count, False, out,
                            conversational_slots=min(talks, count)))

    def slot_options(job: TaskJob, conversational: bool) -> TaskOptions:
        return replace(options.task, conversational=conversational)

    batch = TaskBatch(jobs, layout.journal("tasks"), slot_options,
                      drafts=lambda job: layout.rejected / job.out.parent.name,
                      shown=layout.relative)
    restored += batch.restore_files()
    work = SplitWork(ClientWorker(config, task_work), batch.prepare, batch.settle)
    items = batch.items()
    summary = await run_batch("corpus tasks", items, work, journal=batch.journal,
                              concurrency=config.concurrency, on_record=batch.materialise,
                              executor=executor, retry_rejected=options.retry_rejected,
                              verify=None, progress=progress(len(items), "tasks: "))
    stages.append(StageStats.of("tasks", summary))
    return batch


async def _mined(config: LLMConfig, batch: Any, options: CorpusOptions,
                 stages: list[StageStats]) -> None:
    """Mine ``mined_per_world`` tasks for each world of ``batch`` not mined before, and
    journal each outcome in the tasks journal (accepted ones then join its tasks file)."""
    import asyncio

    from worldspec.llm_frontend.synth_mined import MineOptions, mine_world_tasks
    from worldspec.services.model_client import LLMClient

    stage = StageStats("mined")
    mined_before = {str(r.data.get("world_sha256")) for r in batch.journal.records.values()
                    if r.data.get("mined")}
    todo = [job for job in batch.jobs if job.world.sha256 not in mined_before]
    refills = _refills(batch) if options.retry_rejected else {}
    mine = MineOptions(count=options.mined_per_world,
                       conversational_count=options.mined_conversational,
                       batch=options.mined_batch,
                       max_instruction_ids=options.task.max_instruction_ids)
    slots = asyncio.Semaphore(max(1, config.concurrency))

    async def mine_one(job: Any) -> None:
        report = await mine_world_tasks(client, job.world, mine, slots=slots)
        # each world's records together, once its mining is done (a run stopped before
        # mines that world again)
        for number, outcome in enumerate(report.outcomes or [None]):
            record = _mined_record(batch, job, job.count + number, outcome)
            batch.journal.append(record)
            batch.materialise(record)

    async def refill_one(job: Any) -> None:
        slots_left, refill = refills[job.world.sha256]
        report = await mine_world_tasks(client, job.world, mine, slots=slots,
                                        refill=refill)
        for outcome in report.outcomes:  # each into a rejected slot of its setting
            queue = slots_left[outcome.conversational]
            if queue:
                record = _mined_record(batch, job, queue.pop(0), outcome, retried=True)
                batch.journal.append(record)
                batch.materialise(record)

    again = [job for job in batch.jobs if job.world.sha256 in refills]
    async with LLMClient(config) as client:  # the worlds mined side by side
        await asyncio.gather(*(mine_one(job) for job in todo),
                             *(refill_one(job) for job in again))
    # the stage's figures from the journal, so a resumed run reports what a whole one does
    worlds = {job.world.sha256 for job in batch.jobs}
    for record in batch.journal.records.values():
        if not record.data.get("mined") or record.data.get("world_sha256") not in worlds:
            continue
        stage.items += 1
        stage.usage.add(record.usage)
        if record.status == "accepted":
            stage.accepted += 1
        else:
            stage.rejected += 1
            stage.reasons[record.reason] = stage.reasons.get(record.reason, 0) + 1
    stages.append(stage)


def _refills(batch: Any) -> dict[str, tuple[dict[bool, list[int]], Any]]:
    """World sha256 -> its mined slots rejected before, by setting (conversational or
    not), and the :class:`Refill` that mines them again with candidates not taken yet."""
    from worldspec.llm_frontend.synth_mined import Refill

    found: dict[str, tuple[dict[bool, list[int]], set[str], set[str], list[str]]] = {}
    for record in batch.journal.records.values():
        data = record.data
        if not data.get("mined") or not data.get("candidate"):
            continue
        rejected, kept, tried, accepted = found.setdefault(
            str(data.get("world_sha256")), ({False: [], True: []}, set(), set(), []))
        if record.status == "accepted":
            kept.add(str(data["candidate"]))
            accepted.append(str(data.get("instruction") or ""))
        else:
            tried.add(str(data["candidate"]))
            rejected[bool(data.get("conversational"))].append(int(data["slot"]))
    return {sha: ({k: sorted(v) for k, v in rejected.items()},
                  Refill(len(rejected[False]), len(rejected[True]), frozenset(kept),
                         frozenset(tried), tuple(accepted)))
            for sha, (rejected, kept, tried, accepted) in found.items()
            if rejected[False] or rejected[True]}


def _mined_record(batch: Any, job: Any, slot: int, outcome: Any, *, retried: bool = False
                  ) -> ItemRecord:
    """The tasks journal's record of one mined task (``outcome`` None: nothing to mine);
    ``retried``: it takes the place of the slot's rejected record, whose candidate, reason
    and tokens it keeps (the tokens count in its usage)."""
    key = item_key("corpus-mined-task", {"world_sha256": job.world.sha256, "slot": slot})
    data: dict[str, Any] = {"world": batch.shown(job.world.path),
                            "world_sha256": job.world.sha256, "slot": slot,
                            "conversational": False, "mined": True}
    earlier = batch.journal.records.get(key) if retried else None
    if earlier is not None and outcome is not None:
        data["earlier"] = [*earlier.data.get("earlier", []),
                           {"candidate": earlier.data.get("candidate"),
                            "reason": earlier.reason, "usage": earlier.usage.to_json()}]
        usage = Usage()
        usage.add(earlier.usage)
        usage.add(outcome.usage)
        outcome = replace(outcome, usage=usage)
    if outcome is None:
        return ItemRecord(key, "rejected", f"{job.world.name}#mined",
                          reason="nothing to mine from the world's seed data", data=data)
    data.update({"candidate": outcome.candidate, "difficulty": outcome.difficulty,
                 "instruction": outcome.instruction,
                 "conversational": outcome.conversational})
    if not outcome.accepted or outcome.text is None:
        return ItemRecord(key, "rejected", f"{job.world.name}.{outcome.candidate}",
                          reason=outcome.reason, detail=outcome.detail, usage=outcome.usage,
                          data=data)
    data.update({"task": outcome.candidate, "text": outcome.text})
    return ItemRecord(key, "accepted", f"{job.world.name}.{outcome.candidate}",
                      usage=outcome.usage, output=batch.shown(job.out),
                      output_sha256=sha256_text(outcome.text), data=data)


def _validate_world(world_file: Path, tasks_file: Path | None, options: CorpusOptions
                    ) -> dict[str, Any]:
    """Check, validate and explore one world with its tasks (no model involved)."""
    from worldspec.llm_frontend.coverage import explore_from_tasks
    from worldspec.services.loading import load_result
    from worldspec.services.validation import check_paths

    paths = [world_file] + ([tasks_file] if tasks_file is not None else [])
    validated = check_paths(paths)
    errors = [f"{Path(d.span.file).name}:{d.span.line}: {d.code} {d.message}"
              for d in validated.errors]
    tasks = [{"task": r.task, "file": Path(r.file).name, "line": r.line, "valid": r.valid,
              "problems": [f"{d.code} {d.message}" for d in r.problems
                           if d.severity.value == "error"]} for r in validated.tasks]
    result: dict[str, Any] = {"tasks": tasks, "errors": errors[:20], "coverage": {},
                              "findings": [], "notes": [], "calls": 0}
    if not validated.result.ok:
        return result
    loaded = load_result(validated.result)
    names = list(validated.result.model.worlds)
    if len(names) != 1:
        result["errors"].append(f"expected one world, found {len(names)}")
        return result
    found = explore_from_tasks(loaded.worlds[names[0]], examples=options.explore_examples,
                               steps=options.explore_steps)
    result.update({"coverage": found.coverage, "calls": found.calls,
                   "findings": found.findings, "notes": found.notes})
    return result


def _validate_locked(world_file: Path, tasks_file: Path | None, options: CorpusOptions
                     ) -> dict[str, Any]:
    from worldspec.services.compile_lock import COMPILE_LOCK

    with COMPILE_LOCK:
        return _validate_world(world_file, tasks_file, options)


@dataclass(frozen=True)
class WorldFacts:
    """What a world's files say beyond validation: its dataset rows and its statistics."""

    #: the rows of its valid tasks (the columns of ``worldspec export``)
    rows: list[dict[str, Any]]
    #: task -> the calls of its reference solution (tasks that compile)
    calls: dict[str, int]
    #: the tasks that have a persona (the conversational ones)
    personas: frozenset[str]
    #: the tasks declared in the world file itself (its samples)
    in_world_file: frozenset[str]
    #: ``{"read": n, "write": m}``: its tools, read-only as the compiler infers
    tools: dict[str, int]
    #: how many state items the world declares
    state_items: int
    #: task -> its difficulty (:meth:`~worldspec.services.mining.Difficulty.to_json`, from
    #: its reference solution and data; tasks that compile)
    difficulty: dict[str, dict[str, Any]] = field(default_factory=dict)


def world_facts(world_file: Path, tasks_file: Path | None) -> WorldFacts:
    """Check a world with its tasks and read its rows and statistics (no exploration).

    Tasks with errors of their own are set aside as validation does, so a world with one
    broken task still has its tools and state counted; a world with errors outside its
    tasks has none.
    """
    from worldspec.dsl import nodes
    from worldspec.services.dataset import task_rows
    from worldspec.services.loading import load_result
    from worldspec.services.mining import solution_difficulty
    from worldspec.services.validation import check_paths, set_aside_broken_tasks

    validated = check_paths([world_file] + ([tasks_file] if tasks_file is not None else []))
    personas: set[str] = set()
    in_world_file: set[str] = set()
    for path, parsed in validated.result.program.files.items():
        for decl in parsed.module.decls:
            if not isinstance(decl, nodes.TaskDecl):
                continue
            if any(isinstance(item, nodes.Persona) for item in decl.items):
                personas.add(decl.name.name)
            if Path(path).resolve() == world_file.resolve():
                in_world_file.add(decl.name.name)
    runnable = set_aside_broken_tasks(validated.result).runnable
    facts = WorldFacts([], {}, frozenset(personas), frozenset(in_world_file),
                       {"read": 0, "write": 0}, 0)
    if runnable is None or len(runnable.model.worlds) != 1:
        return facts
    [(name, model)] = runnable.model.worlds.items()
    world_class = load_result(runnable).worlds[name]
    valid = {r.task for r in validated.tasks if r.valid}
    read = sum(1 for tool in world_class.TOOLS.values() if tool.read_only)
    return WorldFacts(
        rows=[row for row in task_rows(world_class) if row["task_id"] in valid],
        calls={task: len(spec.solution) for task, spec in world_class.TASKS.items()},
        personas=facts.personas, in_world_file=facts.in_world_file,
        tools={"read": read, "write": len(world_class.TOOLS) - read},
        state_items=len(model.state),
        difficulty={task: solution_difficulty(world_class, spec.data, spec.solution).to_json()
                    for task, spec in world_class.TASKS.items() if task in valid})


def validated_fields(checked: ItemRecord, facts: WorldFacts, sample: set[str],
                     conversational: set[str]) -> dict[str, Any]:
    """The fields of a world's index entry that its files decide: validation (``checked``,
    the journaled record), tasks, statistics; ``sample`` and ``conversational`` flag tasks.

    One function for ``synth corpus`` and ``--reindex``, so both write the same entry for
    the same files.
    """
    accepted = checked.status == "accepted"
    checked_tasks = checked.data.get("tasks", [])
    exported = {row["task_id"] for row in facts.rows} if accepted else set()
    settings = {"one-shot": 0, "conversational": 0}
    bands = {name: 0 for name, _ in DIFFICULTY_BANDS}
    for task in exported:
        settings["conversational" if task in conversational else "one-shot"] += 1
        if task in facts.difficulty:
            bands[facts.difficulty[task]["band"]] += 1
    return {
        "validated": accepted,
        "problems": list(checked.data.get("problems", [])),
        "coverage": checked.data.get("coverage", {}),
        "findings": checked.data.get("findings", []),
        "notes": checked.data.get("notes", []),
        "explored_calls": checked.data.get("calls", 0),
        "conversational_tasks": sum(1 for t in checked_tasks
                                    if t["task"] in conversational and t["valid"]),
        "tasks": [{"task": t["task"], "file": t["file"], "line": t["line"],
                   "valid": t["valid"], "calls": facts.calls.get(t["task"], 0),
                   "sample": t["task"] in sample,
                   "conversational": t["task"] in conversational,
                   **({"difficulty": facts.difficulty[t["task"]]}
                      if t["task"] in facts.difficulty else {})}
                  for t in checked_tasks],
        "tools": dict(facts.tools),
        "state_items": facts.state_items,
        "tasks_by_setting": settings,
        "tasks_by_difficulty": bands,
    }


async def _validation(worlds: Sequence[tuple[Description, Path, Path | None]],
                      layout: _Layout, options: CorpusOptions, progress: ProgressFactory,
                      stages: list[StageStats]) -> dict[str, ItemRecord]:
    """One journaled validation per world, keyed by the hashes of its files and the budget."""
    import asyncio

    journal = layout.journal("validation")
    bar = progress(len(worlds), "validation: ")
    done: dict[str, ItemRecord] = {}
    stage = StageStats("validation", items=len(worlds))
    if bar is not None:
        bar.start([])
    try:
        for description, world_file, tasks_file in worlds:
            key = item_key("corpus-validation", {
                "world_sha256": file_sha256(world_file),
                "tasks_sha256": file_sha256(tasks_file) if tasks_file else None,
                "examples": options.explore_examples, "steps": options.explore_steps})
            record = journal.records.get(key)
            if record is None:
                found = await asyncio.to_thread(_validate_locked, world_file, tasks_file,
                                                options)
                # as the journal holds it (keys sorted): a run writes the same index whether
                # it validated the world or read the journal
                found = json.loads(json.dumps(found, sort_keys=True))
                problems = found["errors"] + [
                    f"{t['task']}: {'; '.join(t['problems'])}" for t in found["tasks"]
                    if not t["valid"]] + [
                    f"{f['kind']} in {f['tool']}: {f['message']}" for f in found["findings"]] + [
                    f"{name} never succeeds" for name in unreached(found["coverage"])]
                record = ItemRecord(key, "rejected" if problems else "accepted",
                                    description.id, reason="; ".join(problems[:3]),
                                    data={**found, "problems": problems})
                journal.append(record)
            done[description.id] = record
            stage.accepted += record.status == "accepted"
            stage.rejected += record.status == "rejected"
            if record.status == "rejected":
                why = f"{description.id}: {record.reason}"
                stage.reasons[why] = stage.reasons.get(why, 0) + 1
            if bar is not None:
                bar.update(record, 0)
    finally:
        if bar is not None:
            bar.close()
    stages.append(stage)
    return done


# --------------------------------------------------------------------- run
async def build_corpus(config: LLMConfig, source: CorpusSource, out: Path,
                       options: CorpusOptions = CorpusOptions(), *,
                       progress: ProgressFactory = _no_progress,
                       executor: Any = None) -> CorpusReport:
    """Run (or resume) every stage; the folder ``out`` holds the corpus and its journals.

    Model failures end a stage's items as ``error`` records (retried on the next run);
    the pipeline goes on with what was accepted, so a run always leaves a usable index.
    """
    layout = _Layout(out)
    out.mkdir(parents=True, exist_ok=True)
    stages: list[StageStats] = []
    restored: list[str] = []
    edited = edited_worlds(layout)
    found = await _descriptions(config, source, layout, options, progress, executor, stages,
                                restored)
    if isinstance(found, str):
        return CorpusReport(out, {}, stages, "themes", found, restored)
    descriptions = found
    records = await _worlds(config, descriptions, layout, options, progress, executor, stages,
                            restored, edited)
    accepted = [(d, out / (records[d.id].output or "")) for d in descriptions
                if d.id in records and records[d.id].status == "accepted"]
    batch = await _tasks(config, accepted, layout, options, progress, executor, stages,
                         restored, edited)
    if options.mined_per_world:
        await _mined(config, batch, options, stages)
    with_tasks = []
    for description, world_file in accepted:
        tasks_file = world_file.parent / "tasks.world"
        with_tasks.append((description, world_file, tasks_file if tasks_file.is_file() else None))
    validation = await _validation(with_tasks, layout, options, progress, stages)
    index, rows = _index(config, source, layout, options, descriptions, records, batch,
                         with_tasks, validation, stages, edited)
    _export(layout, index, rows)
    return CorpusReport(out, index, stages, restored=restored)


def _index(config: LLMConfig, source: CorpusSource, layout: _Layout, options: CorpusOptions,
           descriptions: Sequence[Description], records: Mapping[str, ItemRecord], batch: Any,
           worlds: Sequence[tuple[Description, Path, Path | None]],
           validation: Mapping[str, ItemRecord], stages: Sequence[StageStats],
           edited: Mapping[str, Mapping[str, Any]] = {}
           ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = []
    entries = []
    tasks_by_world: dict[str, list[ItemRecord]] = {}
    for job in batch.jobs:
        tasks_by_world[str(job.world.path)] = batch.accepted_of(job.world.sha256)
    for description, world_file, tasks_file in worlds:
        world_record = records[description.id]
        checked = validation[description.id]
        synthesized = tasks_by_world.get(str(world_file), [])
        conversational = {str(r.data.get("task")) for r in synthesized
                          if r.data.get("conversational")}
        task_usage = Usage()
        for r in synthesized:
            task_usage.add(r.usage)
        facts = world_facts(world_file, tasks_file)
        if checked.status == "accepted":
            rows += facts.rows
        sample = set(world_record.data.get("sample_tasks", []))
        before = edited.get(description.id)
        if before is not None:  # edited by hand: its tasks as the index had them, and then
            conversational |= {str(t.get("task")) for t in before.get("tasks", [])
                               if isinstance(t, dict) and t.get("conversational")}
            sample = {str(t.get("task")) for t in before.get("tasks", [])
                      if isinstance(t, dict) and t.get("sample")} | \
                (sample & set(facts.in_world_file))
        entries.append({
            "id": description.id,
            "world": world_record.data.get("world"),
            "description": description.text,
            **({"family": description.family} if description.family else {}),
            "file": layout.relative(world_file),
            "tasks_file": layout.relative(tasks_file) if tasks_file else None,
            "sha256": file_sha256(world_file),
            "tasks_sha256": file_sha256(tasks_file) if tasks_file else None,
            **validated_fields(checked, facts, sample, conversational),
            "gate_coverage": world_record.data.get("coverage", {}),
            "provenance": {"source": description.source, "world_journal_key": world_record.key,
                           "repair_rounds": world_record.rounds,
                           "rounds": world_record.data.get("history", []),
                           "world_tokens": world_record.usage.to_json(),
                           "task_tokens": _task_tokens(task_usage, before),
                           **({"edits": before["provenance"]["edits"],
                               "edited_task_tokens": _edited_task_tokens(before)}
                              if before is not None else {})},
        })
    rejected = [{"id": d.id, "reason": records[d.id].reason, "detail": records[d.id].detail,
                 "draft": records[d.id].data.get("draft")}
                for d in descriptions if d.id in records and records[d.id].status != "accepted"]
    usage = Usage()
    for stage in stages:
        usage.add(stage.usage)
    for entry in entries:  # what a world edited by hand spent on tasks before its edit
        earlier = entry["provenance"].get("edited_task_tokens")
        if isinstance(earlier, dict):
            usage.add(Usage(requests=int(earlier.get("requests", 0)),
                            prompt_tokens=int(earlier.get("prompt_tokens", 0)),
                            completion_tokens=int(earlier.get("completion_tokens", 0))))
    index = {
        "version": INDEX_VERSION,
        "generator": "worldspec synth corpus",
        "model": config.model,
        "source": {"kind": source.kind, "file": source.path.name,
                   "sha256": file_sha256(source.path)},
        "options": options.to_json(),
        "prompts_sha256": _prompts_sha256(options),
        "stages": {s.name: {**s.to_json(), "skipped": s.skipped} for s in stages},
        "worlds": entries,
        "rejected_worlds": rejected,
        "totals": {"descriptions": len(descriptions), **world_totals(entries, rows),
                   "requests": usage.requests, "prompt_tokens": usage.prompt_tokens,
                   "completion_tokens": usage.completion_tokens, "tokens": usage.total_tokens},
        "dataset": "dataset.jsonl",
    }
    return index, rows


def _task_tokens(usage: Usage, before: Mapping[str, Any] | None) -> dict[str, Any]:
    """A world's task tokens: this run's journal's, plus, for a world edited by hand, those
    spent before the edit (on tasks keyed by the world as it was; the index keeps them as
    ``edited_task_tokens`` so that later runs do not count them twice)."""
    spent = usage.to_json()
    if before is None:
        return spent
    provenance = before["provenance"]
    earlier = provenance.get("edited_task_tokens", provenance.get("task_tokens"))
    if not isinstance(earlier, dict):
        return spent
    return {key: value + earlier[key] if isinstance(value, int) and
            isinstance(earlier.get(key), int) else value for key, value in spent.items()}


def _edited_task_tokens(before: Mapping[str, Any]) -> dict[str, Any]:
    provenance = before["provenance"]
    earlier = provenance.get("edited_task_tokens", provenance.get("task_tokens"))
    return dict(earlier) if isinstance(earlier, dict) else {}


def world_totals(entries: Sequence[Mapping[str, Any]], rows: Sequence[dict[str, Any]]
                 ) -> dict[str, Any]:
    """The totals the world entries and the dataset rows decide (tokens are the stages')."""
    tools = {"read": 0, "write": 0}
    settings = {"one-shot": 0, "conversational": 0}
    bands = {name: 0 for name, _ in DIFFICULTY_BANDS}
    for entry in entries:
        for kind in tools:
            tools[kind] += entry["tools"][kind]
        for setting in settings:
            settings[setting] += entry["tasks_by_setting"][setting]
        for band in bands:
            bands[band] += entry.get("tasks_by_difficulty", {}).get(band, 0)
    return {"worlds": len(entries),
            "validated_worlds": sum(1 for e in entries if e["validated"]),
            "families": len({e["family"] for e in entries if e.get("family")}),
            "tasks": len(rows),
            "conversational_tasks": sum(e["conversational_tasks"] for e in entries),
            "tools": tools, "state_items": sum(e["state_items"] for e in entries),
            "tasks_by_setting": settings, "tasks_by_difficulty": bands}


def _prompts_sha256(options: CorpusOptions) -> str:
    """The hash of the prompts' fixed parts (a world's, a task's): which prompts made it."""
    from worldspec.llm_frontend.prompts import write_task_messages, write_world_messages

    world = write_world_messages("", None, sample_tasks=options.world.sample_tasks)
    task = write_task_messages(world_name="World", world_file="world.world", world_text="",
                               written=(), focus_tool=None, conversational=True,
                               min_calls=options.task.min_calls,
                               max_ids=options.task.max_instruction_ids)
    return sha256_text(world[0]["content"] + "\0" + task[0]["content"])


_CARD = """\
---
configs:
- config_name: default
  data_files: dataset.jsonl
---
# {title}

Tool environments and tasks made by `worldspec synth corpus` ({worlds} world(s), {tasks}
task(s)). Each row is one task: its prompt, the world's tools (OpenAI format, as JSON text),
the initial state and the reference solution (JSON text), the checks and the frame; rebuild
the episode with `worldspec.load_world(spec)(task=task_id)` from the `.world` files under
`worlds/`. `corpus.json` lists every world with its tasks, per-tool coverage, provenance and
token costs.

```python
from datasets import load_dataset
rows = load_dataset("json", data_files="dataset.jsonl", split="train")
```

## Statistics

Means per world beside those EnvScaler published for its release (its "state categories"
stand beside our state items; a task is one of its scenarios):

{compared}

Per world (tools as the compiler infers them; difficulty bands by the score of each task's
reference solution: calls, distinct tools, reads and careless calls that fail):

{per_world}
"""

#: EnvScaler's published statistics of its release: worlds, and per world the mean read
#: tools, state-changing tools, state categories and scenarios
ENVSCALER = {"worlds": 191, "read": 10.4, "write": 8.1, "state": 21.0, "tasks": 37.0,
             "total_tasks": 7000}


def statistics_tables(index: Mapping[str, Any]) -> tuple[str, str]:
    """The corpus's statistics as two markdown tables: its means beside EnvScaler's, and
    one row per world."""
    worlds = [w for w in index["worlds"] if w.get("validated")]
    count = max(len(worlds), 1)
    totals = index["totals"]

    def mean(values: Sequence[float]) -> str:
        return f"{sum(values) / count:.1f}"

    settings = totals.get("tasks_by_setting", {})
    bands = totals.get("tasks_by_difficulty", {})
    tasks = totals.get("tasks", 0)
    talk = settings.get("conversational", 0)
    families = {w["family"] for w in worlds if w.get("family")}
    rows = [("worlds", str(len(worlds)), str(ENVSCALER["worlds"])),
            ("domain families", str(len(families)) if families else "-", "-"),
            ("read tools per world", mean([w["tools"]["read"] for w in worlds]),
             str(ENVSCALER["read"])),
            ("state-changing tools per world", mean([w["tools"]["write"] for w in worlds]),
             str(ENVSCALER["write"])),
            ("state items per world", mean([w["state_items"] for w in worlds]),
             f"{ENVSCALER['state']:g} (state categories)"),
            ("tasks per world", mean([sum(w["tasks_by_setting"].values()) for w in worlds]),
             f"~{ENVSCALER['tasks']:g} (scenarios)"),
            ("tasks", f"{tasks:,}", f"~{ENVSCALER['total_tasks']:,}"),
            ("conversational tasks", f"{talk:,} ({100 * talk / max(tasks, 1):.0f}%)", "-"),
            ("difficulty: easy / medium / hard",
             " / ".join(str(bands.get(b, 0)) for b in ("easy", "medium", "hard")), "-")]
    compared = "\n".join(["| | this corpus | EnvScaler |", "|---|---|---|",
                          *(f"| {name} | {ours} | {theirs} |" for name, ours, theirs in rows)])
    lines = ["| world | family | read tools | state-changing tools | state items | tasks | "
             "conversational | easy / medium / hard |", "|---|---|---|---|---|---|---|---|"]
    for w in worlds:
        by = w.get("tasks_by_difficulty", {})
        lines.append(f"| {w['world']} ({w['id']}) | {w.get('family') or '-'} | "
                     f"{w['tools']['read']} | "
                     f"{w['tools']['write']} | {w['state_items']} | "
                     f"{sum(w['tasks_by_setting'].values())} | "
                     f"{w['tasks_by_setting'].get('conversational', 0)} | "
                     + " / ".join(str(by.get(b, 0)) for b in ("easy", "medium", "hard"))
                     + " |")
    return compared, "\n".join(lines)


def _export(layout: _Layout, index: dict[str, Any], rows: Sequence[dict[str, Any]]) -> None:
    text = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)
    write_atomically(layout.root / "dataset.jsonl", text)
    index["dataset_sha256"] = sha256_text(text)
    compared, per_world = statistics_tables(index)
    write_atomically(layout.root / "README.md", _CARD.format(
        title=f"WorldSpec corpus: {layout.root.name}", worlds=index["totals"]["worlds"],
        tasks=index["totals"]["tasks"], compared=compared, per_world=per_world))
    write_atomically(layout.root / "corpus.json",
                     json.dumps(index, ensure_ascii=False, indent=1, sort_keys=False) + "\n")
