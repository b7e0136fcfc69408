"""``synth corpus --reindex``: bring a corpus's index up to date after hand edits, no model.

A corpus's worlds and tasks may be repaired by hand (a new read tool, a task fixed for a new
rule). Running ``synth corpus`` again would not do: its worlds stage restores the journaled
outputs. Re-indexing reads ``corpus.json`` and, for every world it lists, validates the files
as they are now exactly as the validation stage does (journaled in
``journals/validation.jsonl`` under the files' hashes, so an unchanged world is not explored
again), then rewrites the world's entry from the result: hashes, validation, coverage, tasks
(their ``sample`` and ``conversational`` flags carried over by name) and statistics. What the
model made stays: a world's provenance keeps its journal key, rounds and tokens, and gains
one record in ``provenance.edits`` per re-index that found its files changed. The totals,
``dataset.jsonl``, its hash and ``README.md`` are written again as a run writes them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from worldspec.llm_frontend.batch import InputError, ItemRecord, file_sha256
from worldspec.llm_frontend.corpus import (
    INDEX_VERSION,
    CorpusOptions,
    CorpusReport,
    Description,
    ProgressFactory,
    StageStats,
    WorldFacts,
    _export,
    _Layout,
    _no_progress,
    _validation,
    validated_fields,
    world_facts,
    world_totals,
)

__all__ = ["edit_record", "read_index", "reindex_corpus"]

#: what each world entry of ``corpus.json`` must hold for a re-index, and of what type
_ENTRY_FIELDS: Mapping[str, type | tuple[type, ...]] = {
    "id": str, "description": str, "file": str, "tasks_file": (str, type(None)),
    "sha256": (str, type(None)), "tasks_sha256": (str, type(None)), "tasks": list,
    "provenance": dict}


def read_index(path: Path) -> dict[str, Any]:
    """``corpus.json`` as a ``synth corpus`` run wrote it, or an :class:`InputError` that
    says what is wrong with it."""
    if not path.is_file():
        raise InputError(f"'{path}' does not exist: --reindex reads the index that a "
                         "'synth corpus' run wrote in the folder")
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read '{path}': {exc}") from None
    except ValueError as exc:
        raise InputError(f"'{path}' is not valid JSON ({exc})") from None
    if not isinstance(index, dict) or index.get("version") != INDEX_VERSION:
        raise InputError(f"'{path}' is not a corpus index of version {INDEX_VERSION} "
                         "(a 'synth corpus' run writes one)")
    for name, kind in (("worlds", list), ("totals", dict), ("options", dict)):
        if not isinstance(index.get(name), kind):
            raise InputError(f"'{path}': '{name}' is missing or is not a JSON "
                             f"{'array' if kind is list else 'object'}")
    for number, entry in enumerate(index["worlds"], start=1):
        if not isinstance(entry, dict):
            raise InputError(f"'{path}': world entry {number} is not a JSON object")
        for name, field_kind in _ENTRY_FIELDS.items():
            if name not in entry or not isinstance(entry[name], field_kind):
                raise InputError(f"'{path}': world entry {number} "
                                 f"({entry.get('id', 'no id')!s}) has no valid '{name}'")
        if not isinstance(entry["provenance"].get("edits", []), list):
            raise InputError(f"'{path}': world entry {number} ({entry['id']}): "
                             "provenance.edits is not a JSON array")
    return index


def _explore_options(index: Mapping[str, Any], path: Path) -> CorpusOptions:
    """The exploration budget the corpus was validated with (part of the journal key)."""
    explore = index["options"].get("explore")
    budget = [explore.get(name) if isinstance(explore, dict) else None
              for name in ("examples", "steps")]
    examples, steps = (value if isinstance(value, int) and value >= 1 else 0
                       for value in budget)
    if not examples or not steps:
        raise InputError(f"'{path}': options.explore needs 'examples' and 'steps' "
                         "(whole numbers, at least 1)")
    return CorpusOptions(explore_examples=examples, explore_steps=steps)


def _inside(layout: _Layout, raw: str, entry: Mapping[str, Any]) -> Path:
    """The file ``raw`` (relative to the corpus folder) names; it must still be there."""
    relative = PurePosixPath(raw)
    if relative.is_absolute() or ".." in relative.parts:
        raise InputError(f"world '{entry['id']}': '{raw}' is not a path inside the corpus "
                         "folder")
    path = layout.root / relative
    if not path.is_file():
        raise InputError(f"world '{entry['id']}': {raw} is gone; put it back, or remove "
                         "the world's entry from corpus.json to drop the world")
    return path


def _flags(entry: Mapping[str, Any], checked: ItemRecord, facts: WorldFacts
           ) -> tuple[set[str], set[str]]:
    """The sample and conversational tasks: as the entry said, by name; a task new to the
    entry is a sample when the world file declares it, conversational when it has a
    persona."""
    before = {str(t.get("task")): t for t in entry["tasks"] if isinstance(t, dict)}
    sample: set[str] = set()
    conversational: set[str] = set()
    for task in (str(t["task"]) for t in checked.data.get("tasks", [])):
        old = before.get(task)
        if old.get("sample") if old is not None else task in facts.in_world_file:
            sample.add(task)
        if old.get("conversational") if old is not None else task in facts.personas:
            conversational.add(task)
    return sample, conversational


def edit_record(entry: Mapping[str, Any], world_sha256: str | None, tasks_sha256: str | None,
                checked: ItemRecord) -> dict[str, Any] | None:
    """The record of a hand edit of the entry's files, or None when neither changed.

    Deterministic (no clock): ``edit`` counts the world's recorded edits from 1, and
    ``validation_journal_key`` names the validation of the edited files.
    """
    if (entry["sha256"], entry["tasks_sha256"]) == (world_sha256, tasks_sha256):
        return None
    return {"edit": len(entry["provenance"].get("edits", [])) + 1,
            "world_sha256_before": entry["sha256"],
            "tasks_sha256_before": entry["tasks_sha256"],
            "world_sha256": world_sha256, "tasks_sha256": tasks_sha256,
            "validation_journal_key": checked.key}


async def reindex_corpus(out: Path, *, progress: ProgressFactory = _no_progress
                         ) -> CorpusReport:
    """Validate every world of the corpus in ``out`` as its files are now and rewrite
    ``corpus.json``, ``dataset.jsonl`` and ``README.md`` to match; asks no model.

    Raises :class:`InputError` (before writing anything) for a missing or garbled index and
    for a world or tasks file that is gone.
    """
    layout = _Layout(out)
    index_path = out / "corpus.json"
    index = read_index(index_path)
    options = _explore_options(index, index_path)
    worlds = []
    for entry in index["worlds"]:
        source = entry["provenance"].get("source")
        description = Description(entry["id"], entry["description"],
                                  source if isinstance(source, dict) else {})
        tasks_file = entry["tasks_file"]
        worlds.append((description, _inside(layout, entry["file"], entry),
                       _inside(layout, tasks_file, entry) if tasks_file else None))
    if len({d.id for d, _, _ in worlds}) != len(worlds):
        raise InputError(f"'{index_path}': two world entries have the same id")
    stages: list[StageStats] = []
    validation = await _validation(worlds, layout, options, progress, stages)
    rows: list[dict[str, Any]] = []
    edited: list[str] = []
    for entry, (description, world_file, tasks_file) in zip(index["worlds"], worlds, strict=True):
        checked = validation[description.id]
        facts = world_facts(world_file, tasks_file)
        world_sha256 = file_sha256(world_file)
        tasks_sha256 = file_sha256(tasks_file) if tasks_file else None
        edit = edit_record(entry, world_sha256, tasks_sha256, checked)
        sample, conversational = _flags(entry, checked, facts)
        entry.update({"sha256": world_sha256, "tasks_sha256": tasks_sha256,
                      **validated_fields(checked, facts, sample, conversational)})
        if edit is not None:
            entry["provenance"].setdefault("edits", []).append(edit)
            edited.append(description.id)
        if checked.status == "accepted":
            rows += facts.rows
    index["totals"].update(world_totals(index["worlds"], rows))
    stages_index = index.setdefault("stages", {})
    if isinstance(stages_index, dict):
        stages_index["validation"] = {**stages[0].to_json(), "skipped": False}
    _export(layout, index, rows)
    return CorpusReport(out, index, stages, edited=edited)
