"""The recorded trajectories a ``worldspec diff --trajectories PATH`` replays.

``PATH`` is a file or a folder (every ``*.jsonl`` and ``*.json`` file below it). A file is

- a **rollout journal** (what ``worldspec rollout`` writes: one record per line, see
  :mod:`worldspec.services.journals`): each record, the latest per rollout, is a trajectory
  of its own task, named ``FILE:LINE`` (``sed -n LINEp FILE`` prints it);
- any other trajectory file ``worldspec run --calls`` reads (JSONL calls, a chat
  transcript, one record), of the task its file name names: the name up to its first dot.

A run folder holds a journal and the batch's ``summary.json`` beside it; that summary is not
a trajectory and is skipped. A file that cannot be read becomes a trajectory with a
``problem`` that names the file and says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldspec.services.calls import read_calls, read_replies, transcript_calls
from worldspec.services.journals import (
    JOURNAL_NAME,
    SUMMARY_NAME,
    Journal,
    RecordError,
    RolloutRecord,
    is_journal,
)

__all__ = ["TRAJECTORY_SUFFIXES", "Trajectory", "read_trajectories", "task_of_trajectory"]

#: Files of a ``--trajectories`` folder that are read (others are ignored).
TRAJECTORY_SUFFIXES = (".jsonl", ".json")


@dataclass(frozen=True)
class Trajectory:
    """One recorded trajectory: the tool calls to replay and what the agent said."""

    #: how the report names it: the file, or ``FILE:LINE`` for a record of a journal
    shown: str
    task: str
    calls: list[tuple[str, Any]] = field(default_factory=list)
    #: the agent's messages to the user (what answer checks read)
    replies: list[str] = field(default_factory=list)
    #: why it cannot be replayed (the file cannot be read); ``None`` when it can
    problem: str | None = None


def task_of_trajectory(path: Path) -> str:
    """The task a trajectory file is for: its name up to the first dot."""
    return path.name.split(".", 1)[0]


def _unreadable(path: Path, exc: Exception) -> Trajectory:
    if isinstance(exc, UnicodeDecodeError):
        why = f"{path}: not UTF-8 text (byte {exc.start} cannot be decoded)"
    elif isinstance(exc, OSError):
        why = f"{path}: cannot be read: {exc.strerror or exc}"
    else:
        why = str(exc) if str(path) in str(exc) else f"{path}: {exc}"
    return Trajectory(str(path), task_of_trajectory(path), problem=why)


def _record_trajectory(path: Path, line: int, record: RolloutRecord) -> Trajectory:
    shown = f"{path}:{line}"
    task, messages = record.get("task"), record.get("messages")
    if not isinstance(task, str) or not isinstance(messages, list):
        return Trajectory(shown, str(task or task_of_trajectory(path)),
                          problem=f"{shown}: a rollout record without a task or messages")
    replies = record.get("replies")
    said = [r for r in replies if isinstance(r, str)] if isinstance(replies, list) else []
    try:
        calls = transcript_calls(messages, shown)
    except ValueError as exc:
        return Trajectory(shown, task, problem=str(exc))
    return Trajectory(shown, task, calls, said)


def _journal_trajectories(path: Path) -> list[Trajectory]:
    try:
        journal = Journal.open(path)
    except RecordError as exc:
        return [Trajectory(str(path), task_of_trajectory(path), problem=str(exc))]
    if not journal.records:
        return [Trajectory(str(path), task_of_trajectory(path),
                           problem=f"{path}: a rollout journal without a readable record")]
    return [_record_trajectory(path, journal.lines[key], record)
            for key, record in journal.records.items()]


def _file_trajectories(path: Path) -> list[Trajectory]:
    if is_journal(path):
        return _journal_trajectories(path)
    try:
        calls = read_calls(str(path))
        replies = read_replies(str(path))  # what the agent said, for answer checks
    except (OSError, ValueError) as exc:
        return [_unreadable(path, exc)]
    return [Trajectory(str(path), task_of_trajectory(path), calls, replies)]


def _is_run_summary(path: Path) -> bool:
    """``summary.json`` beside a journal: the batch's figures, not a trajectory."""
    return path.name == SUMMARY_NAME and (path.parent / JOURNAL_NAME).is_file()


def read_trajectories(path: Path) -> list[Trajectory]:
    """The trajectories in ``path`` (a file or a folder), in file order."""
    if not path.is_dir():
        return _file_trajectories(path)
    files = sorted(p for p in path.rglob("*")
                   if p.is_file() and p.suffix in TRAJECTORY_SUFFIXES
                   and not _is_run_summary(p))
    return [trajectory for file in files for trajectory in _file_trajectories(file)]
