"""Rollout records (one JSON object per rollout) and the journal that holds them.

A service: ``worldspec rollout`` writes journals, ``worldspec view`` and ``export`` read
them, and ``worldspec diff --trajectories`` replays them (``worldspec.rollout.records``
re-exports this module for the rollout front end).

A record is everything needed to train on, grade or replay one rollout; its fields are
:class:`RolloutRecord` (the table of ``docs/rollouts.md`` documents each, and a test keeps the
two the same) and versioned by :data:`FORMAT` (a reader refuses a version it does not know).
The journal is a JSON Lines file of records, append-only: each record is written whole,
flushed and fsynced as soon as its rollout ends, so a batch killed at any moment loses at most
the rollouts in flight, and a torn last line (the kill came mid-write) is skipped on reading
and closed before the next append. A rollout is identified by its
:func:`rollout_key` (the world's hash, the task, the sample index and every setting that
shapes it); the latest record of a key wins, and only ``finished`` records count as done, so a
resumed batch redoes the rollouts that failed (``error``) and nothing else.

A record holds whatever text the model sent, lone surrogates (``"\\ud800"``, valid JSON that
is not Unicode) and control characters included: :func:`json_line` writes each lone surrogate
as its JSON escape, so the line is valid UTF-8 and reads back as the same text. A line nested
too deep for the JSON reader counts as unreadable, like a torn one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypedDict, cast

from worldspec.runtime.values import escape_surrogates
from worldspec.services.files import append_line_durably, read_text_file, special_file_kind

__all__ = ["FORMAT", "FORMAT_FAMILY", "JOURNAL_NAME", "MAX_JOURNAL_BYTES", "SUMMARY_NAME",
           "Journal", "RecordError", "RolloutRecord", "is_journal", "json_line", "read_records",
           "record_files", "rollout_key"]

#: The record format; bumped when a field changes meaning or goes away.
FORMAT = "worldspec.rollout/1"

#: What every version of the record format starts with: a line whose ``format`` starts so
#: is a rollout record (of a version this worldspec may not read).
FORMAT_FAMILY = "worldspec.rollout/"

#: The journal's file name inside the output folder (``-o runs/`` -> ``runs/rollouts.jsonl``).
JOURNAL_NAME = "rollouts.jsonl"

#: The batch summary ``worldspec rollout`` writes beside the journal (not a record file).
SUMMARY_NAME = "summary.json"


class _RecordIdentity(TypedDict):
    """What every record holds (a reader checks both): its format and its rollout's key."""

    format: str
    key: str


class RolloutRecord(_RecordIdentity, total=False):
    """One rollout record, as the journal holds it (one JSON object per line).

    A reader checks ``format`` and ``key`` only: the rest may be absent, from a rollout that
    raised (whose record stops at ``usage``) or a record written before a field was added
    within the version (``passed``)."""

    status: str  # "finished" or "error"
    error: str | None
    world: str
    world_sha256: str
    world_path: str
    task: str
    sample: int
    seed: int
    env_seed: int
    conversational: bool
    setting: str
    api: str
    models: dict[str, str | None]
    settings: dict[str, Any]
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    steps: list[dict[str, Any]]
    replies: list[str]
    reward: float
    checks_reward: float
    passed: bool
    checks: list[dict[str, Any]]
    frame: dict[str, Any]
    termination: str | None
    agent_messages: int
    user_turns: int
    usage: dict[str, Any]
    timing: dict[str, Any]


class RecordError(Exception):
    """Records cannot be read (a missing folder, a record of an unknown format)."""


#: the largest journal read (a bound, so that a wrong path fails with a message, not a
#: MemoryError; a batch of 100,000 long rollouts fits)
MAX_JOURNAL_BYTES = 4_000_000_000


def json_line(value: Any, *, sort_keys: bool = False) -> str:
    """``value`` as one line of JSON (no newline), non-ASCII text kept as it is and each lone
    surrogate escaped: always writable as UTF-8, and ``json.loads`` gives ``value`` back."""
    return escape_surrogates(json.dumps(value, ensure_ascii=False, sort_keys=sort_keys))


def rollout_key(payload: Mapping[str, Any]) -> str:
    """The SHA-256 that identifies one rollout: its defining settings as canonical JSON."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(escape_surrogates(text).encode("utf-8")).hexdigest()


def _parse(line: str) -> RolloutRecord | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("key"), str):
        return None
    return cast(RolloutRecord, value)


class Journal:
    """The append-only, fsynced JSONL file of rollout records, safe against a kill."""

    def __init__(self, path: Path) -> None:
        self.path = path
        #: the latest record of each key, in first-seen order
        self.records: dict[str, RolloutRecord] = {}
        #: lines that could not be read (a torn last line after a kill)
        self.skipped_lines = 0
        #: key -> the line (from 1) that holds its latest record (``sed -n Np`` prints it)
        self.lines: dict[str, int] = {}

    @classmethod
    def open(cls, path: str | Path) -> Journal:
        """Read the journal at ``path`` (a missing file is an empty journal)."""
        journal = cls(Path(path))
        try:
            text = read_text_file(journal.path, limit=MAX_JOURNAL_BYTES)
        except FileNotFoundError:
            return journal
        except (OSError, UnicodeDecodeError) as exc:
            raise RecordError(f"cannot read the journal '{path}': {exc}") from exc
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            record = _parse(line)
            if record is None:
                journal.skipped_lines += 1
                continue
            _check_format(record, f"{path}")
            journal.records[record["key"]] = record
            journal.lines[record["key"]] = number
        return journal

    def finished(self, key: str) -> bool:
        record = self.records.get(key)
        return record is not None and record.get("status") == "finished"

    def append(self, record: RolloutRecord) -> None:
        """Write ``record`` durably (one line, flushed and fsynced) and remember it."""
        append_line_durably(self.path, json_line(record, sort_keys=True) + "\n")
        self.records[str(record["key"])] = record.copy()


def _check_format(record: RolloutRecord, where: str) -> None:
    found = record.get("format")
    if found != FORMAT:
        raise RecordError(f"{where}: a record of format {found!r}; this worldspec reads "
                          f"{FORMAT!r}")


def is_journal(path: str | Path) -> bool:
    """Whether ``path`` is a file of rollout records: its first line that is not blank is
    a record (an object with a ``key`` and a ``format`` of this family, whatever version).
    Only a regular file can be one (a named pipe is not opened: the read would block)."""
    if not Path(path).is_file():
        return False
    try:
        with open(path, encoding="utf-8") as handle:
            first = next((line for line in handle if line.strip()), "")
    except (OSError, UnicodeDecodeError):
        return False
    record = _parse(first)
    return record is not None and str(record.get("format", "")).startswith(FORMAT_FAMILY)


def record_files(path: str | Path) -> list[Path]:
    """The JSONL files of a runs folder (every ``*.jsonl`` below it), or the file itself."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.rglob("*.jsonl") if f.is_file())
        if not files:
            raise RecordError(f"no rollout records (*.jsonl) in '{path}'")
        return files
    if p.is_file():
        return [p]
    if p.exists():
        kind = special_file_kind(p.stat().st_mode) or "not a regular file"
        raise RecordError(f"'{path}' is {kind}, not a file of records")
    raise RecordError(f"'{path}' does not exist")


def read_records(path: str | Path, *, finished_only: bool = True
                 ) -> Iterator[RolloutRecord]:
    """The records under ``path`` (a runs folder or a journal file), the latest per key,
    ``finished`` ones only unless told otherwise."""
    latest: dict[str, RolloutRecord] = {}
    for file in record_files(path):
        journal = Journal.open(file)
        latest.update(journal.records)
    for record in latest.values():
        if not finished_only or record.get("status") == "finished":
            yield record
