"""What the driver of a ``synth`` batch does with each item's outcome: records and files.

Shared by ``synth world``, ``synth tasks`` and the ``synth corpus`` pipeline, so a world or
a task is journaled and written the same way whichever command made it:

- :func:`settle_world`: an accepted world is written (its text also goes into the record,
  so a resumed run can rebuild a missing file); a rejected one keeps its last draft and
  its problems (:func:`keep_draft`), to be looked at or retried with ``--retry-rejected``.
- :class:`TaskBatch`: the task slots of several worlds, their payloads (with the tasks
  accepted so far), their settling (name clashes renamed, duplicates refused: the same
  text, or the same meaning, :func:`~llm_frontend.synth_tasks.task_meaning`) and the
  tasks files, rebuilt from the journal whenever they do not match it.

Only the driver runs this: workers return outcomes, nothing else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldspec.llm_frontend.batch import (
    BatchItem,
    ItemRecord,
    Journal,
    file_sha256,
    sha256_text,
    write_atomically,
    write_output,
)
from worldspec.llm_frontend.synth_tasks import (
    TaskOptions,
    TaskOutcome,
    TaskWorld,
    rename_task,
    render_tasks_file,
    task_fingerprint,
)
from worldspec.llm_frontend.synth_workers import TaskPayload
from worldspec.llm_frontend.synth_world import WorldOutcome
from worldspec.runtime.values import escape_surrogates

__all__ = ["TaskBatch", "TaskJob", "keep_draft", "rename_world", "settle_world", "slug",
           "unique_name"]


def slug(name: str) -> str:
    """``ParkingGarage`` -> ``parking_garage``: a file name made of ``[a-z0-9_]``."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and not name[i - 1].isupper():
            out.append("_")
        out.append(ch.lower() if ch.isascii() and ch.isalnum() else "_")
    return "".join(out).strip("_") or "world"


def unique_name(name: str, taken: set[str] | frozenset[str]) -> str:
    """``name``, or ``name2``, ``name3``, ... (``Room1_2`` after a digit): the first one not
    in ``taken``."""
    joint = "_" if name[-1:].isdigit() else ""
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}{joint}{number}", number + 1
    return candidate


def rename_world(text: str, new_name: str) -> str:
    """``text`` with its world (the header and every task's ``in World``) named ``new_name``."""
    from worldspec.dsl import nodes as n
    from worldspec.dsl.diagnostics import DiagnosticSink
    from worldspec.dsl.parser import parse_module

    parsed = parse_module(text, "world.world", DiagnosticSink())
    headers = [d for d in parsed.module.decls if isinstance(d, n.WorldDecl)]
    if not parsed.ok or len(headers) != 1:
        return text
    old = headers[0].name.name
    spans = [headers[0].name.span] + [d.world.span for d in parsed.module.decls
                                      if isinstance(d, n.TaskDecl) and d.world.name == old]
    for span in sorted(spans, key=lambda sp: sp.start, reverse=True):
        text = text[:span.start] + new_name + text[span.end:]
    return text


def keep_draft(folder: Path, stem: str, text: str, report: dict[str, Any], *,
               suffix: str = ".world.rejected") -> Path:
    """Write a rejected draft as ``folder/stem-<sha12><suffix>`` and, beside it,
    ``stem-<sha12>.problems.json`` (``report``: the reason, the stage and the problems the
    model was last told). Drafts are not named ``*.world``, so that ``worldspec check`` on
    the folder reads only what was accepted: rename one to work on it. A lone surrogate the
    model wrote (``"\\ud800"`` in its JSON answer, which the compiler refuses) is written as
    its escape, six characters, so that both files are UTF-8."""
    draft, _ = write_output(folder, stem, escape_surrogates(text), suffix)
    problems = json.dumps(report, ensure_ascii=False, indent=1)
    write_atomically(draft.with_name(draft.name.removesuffix(suffix) + ".problems.json"),
                     escape_surrogates(problems) + "\n")
    return draft


def settle_world(item: BatchItem, outcome: WorldOutcome, out: Path, *, single: bool = False,
                 target: Path | None = None) -> ItemRecord:
    """The journal record of one world, writing it or its last draft.

    Accepted: to ``target`` when given, else ``out`` itself when ``single``, else
    ``out/<name>-<sha12>.world``. Rejected: the draft beside ``out`` (``single``) or in
    ``out/rejected/``.
    """
    data: dict[str, Any] = {"world": outcome.world_name,
                            "history": [h.to_json() for h in outcome.history],
                            "coverage": outcome.coverage,
                            "sample_tasks": list(outcome.sample_tasks)}
    record = ItemRecord(item.key, "accepted" if outcome.accepted else "rejected", item.label,
                        outcome.rounds, outcome.reason, outcome.detail, data=data)
    stem = slug(outcome.world_name or "world")
    if outcome.accepted and outcome.text is not None:
        if target is not None or single:
            path = target if target is not None else out
            write_atomically(path, outcome.text)
            digest = sha256_text(outcome.text)
        else:
            path, digest = write_output(out, stem, outcome.text)
        record.output, record.output_sha256 = str(path), digest
        data["text"] = outcome.text
    elif outcome.text is not None:
        folder = out.parent if single else out / "rejected"
        draft = keep_draft(folder, out.stem if single else stem, outcome.text,
                           {"label": item.label, "reason": outcome.reason,
                            "detail": outcome.detail, "stage": outcome.stage,
                            "problems": list(outcome.problems), "history": data["history"],
                            "coverage": outcome.coverage})
        data.update({"draft": str(draft), "problems": list(outcome.problems)})
    return record


@dataclass
class TaskJob:
    """The tasks wanted for one world: how many, which are conversational, and where."""

    world: TaskWorld
    count: int
    conversational: bool
    out: Path
    #: with ``conversational`` False, the last this many slots are conversational
    conversational_slots: int = 0
    #: the tasks file as edited by hand (a corpus re-indexed after the edit): kept as it is,
    #: the journal's tasks for the world as it is now appended to it
    kept_text: str | None = None

    def is_conversational(self, slot: int) -> bool:
        return self.conversational or slot >= self.count - self.conversational_slots


class TaskBatch:
    """The task slots of ``jobs``, settled against ``journal`` (see the module docstring)."""

    def __init__(self, jobs: Sequence[TaskJob], journal: Journal,
                 options: Callable[[TaskJob, bool], TaskOptions],
                 drafts: Callable[[TaskJob], Path] | None = None,
                 shown: Callable[[Path], str] = str) -> None:
        self.jobs = list(jobs)
        self.journal = journal
        #: the options of a slot of ``job`` (conversational or not)
        self.options = options
        #: where a job's rejected drafts go (default: ``OUT.rejected/`` beside its tasks file)
        self.drafts = drafts or (lambda job: job.out.with_name(job.out.name + ".rejected"))
        #: how a path is written into a record (the corpus keeps them relative to its folder)
        self.shown = shown
        self.by_sha = {job.world.sha256: job for job in self.jobs}

    def items(self) -> list[BatchItem]:
        items = []
        for job in self.jobs:
            for slot in range(job.count):
                payload = {"world_sha256": job.world.sha256, "slot": slot,
                           "conversational": job.is_conversational(slot)}
                items.append(BatchItem.make("task", payload, f"{job.world.name}#{slot}"))
        return items

    def accepted_of(self, sha: str) -> list[ItemRecord]:
        records = [r for r in self.journal.records.values()
                   if r.status == "accepted" and r.data.get("world_sha256") == sha]
        return sorted(records, key=lambda r: int(r.data.get("slot", 0)))

    def tasks_text(self, job: TaskJob) -> str | None:
        records = self.accepted_of(job.world.sha256)
        if job.kept_text is not None:  # what the kept file holds already is not added again
            held = set(re.findall(r"(?m)^task\s+(\w+)\s", job.kept_text))
            records = [r for r in records if str(r.data.get("task")) not in held]
        texts = [str(r.data["text"]) for r in records]
        if job.kept_text is not None:
            if not texts:
                return job.kept_text
            joined = "\n\n".join([job.kept_text.rstrip("\n"),
                                   *(t.strip("\n") for t in texts)]) + "\n"
            from worldspec.dsl.formatter import format_source

            return format_source(joined, str(job.out)) or joined
        return render_tasks_file(job.world, job.out, texts) if texts else None

    def materialise(self, record: ItemRecord) -> None:
        """After an accepted task: its world's tasks file, from the journal."""
        job = self.by_sha.get(str(record.data.get("world_sha256")))
        if record.status != "accepted" or job is None:
            return
        text = self.tasks_text(job)
        if text is not None:
            write_atomically(job.out, text)

    def restore_files(self) -> list[str]:
        """Rebuild every tasks file that does not match the journal; the ones rewritten."""
        restored = []
        for job in self.jobs:
            wanted = self.tasks_text(job)
            if wanted is not None and file_sha256(job.out) != sha256_text(wanted):
                write_atomically(job.out, wanted)
                restored.append(str(job.out))
        return restored

    def prepare(self, item: BatchItem) -> TaskPayload:
        """On the driver, at dispatch: the slot with the tasks accepted so far."""
        job = self.by_sha[str(item.payload["world_sha256"])]
        written = [(str(r.data["task"]), str(r.data.get("instruction", "")))
                   for r in self.accepted_of(job.world.sha256)]
        options = self.options(job, bool(item.payload.get("conversational")))
        return TaskPayload(job.world, int(item.payload["slot"]), options, tuple(written),
                           frozenset(name for name, _ in written))

    def settle(self, item: BatchItem, outcome: TaskOutcome) -> ItemRecord:
        """On the driver: slots run concurrently, so name clashes and duplicates are settled
        here, against the tasks accepted by then."""
        job = self.by_sha[str(item.payload["world_sha256"])]
        slot = int(item.payload["slot"])
        data: dict[str, Any] = {"world": self.shown(job.world.path),
                                "world_sha256": job.world.sha256,
                                "slot": slot,
                                "conversational": bool(item.payload.get("conversational"))}
        if not outcome.accepted or outcome.text is None or outcome.name is None:
            if outcome.text is not None:
                draft = keep_draft(self.drafts(job), f"slot{slot}", outcome.text,
                                   {"label": item.label, "reason": outcome.reason,
                                    "detail": outcome.detail, "problems": list(outcome.problems)})
                data.update({"draft": self.shown(draft), "problems": list(outcome.problems)})
            return ItemRecord(item.key, "rejected", item.label, outcome.rounds,
                              outcome.reason, outcome.detail, data=data)
        done = self.accepted_of(job.world.sha256)
        if outcome.meaning and outcome.meaning in job.world.own_meanings:
            return ItemRecord(item.key, "rejected", item.label, outcome.rounds,
                              "duplicate of one of the world's own tasks",
                              "the same data, checks, frame and solution", data=data)
        print_ = task_fingerprint(outcome.text)
        twin = next((r for r in done if r.data.get("fingerprint") == print_ or
                     (outcome.meaning and r.data.get("meaning") == outcome.meaning)), None)
        if twin is not None:
            same = "the same text" if twin.data.get("fingerprint") == print_ else \
                "the same data, checks, frame and solution"
            return ItemRecord(item.key, "rejected", item.label, outcome.rounds,
                              "duplicate of an accepted task",
                              f"{twin.data.get('task')} ({same})", data=data)
        names = {str(r.data.get("task")) for r in done} | set(job.world.own_tasks)
        name, text = outcome.name, outcome.text
        suffix = 2
        while name in names:
            name = f"{outcome.name}_{suffix}"
            suffix += 1
        if name != outcome.name:
            text = rename_task(text, name)
        data.update({"task": name, "text": text, "instruction": outcome.instruction,
                     "fingerprint": print_, "meaning": outcome.meaning,
                     "warnings": list(outcome.warnings)})
        return ItemRecord(item.key, "accepted", f"{job.world.name}.{name}", outcome.rounds,
                          output=self.shown(job.out), output_sha256=sha256_text(text),
                          data=data)
