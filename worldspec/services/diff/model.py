"""The records of a semantic diff: changes, their impact, and the report holding both.

A :class:`Change` names the rule that classified it (its level and area come
from the rule table), a readable coordinate such as ``tool send_message /
param body``, the old and new values as spec text, and where it is in the new
file. Its fingerprint hashes only the rule, the world and the coordinate, so
a review decision recorded against it survives rewording of the spec's
messages and of the diff's own prose.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from worldspec.dsl.nodes import Span

__all__ = ["Level", "Area", "Change", "TaskImpact", "CallDifference", "TrajectoryImpact",
           "Impact", "DiffReport", "span_json"]


class Level(StrEnum):
    """How much a change can hurt what was built on the old spec, worst first."""

    BREAKING = "breaking"
    DANGEROUS = "dangerous"
    SAFE = "safe"
    INFO = "info"

    @property
    def rank(self) -> int:
        """3 for breaking down to 0 for info, for sorting and for ``--fail-on``."""
        return _RANKS[self]


_RANKS = {Level.BREAKING: 3, Level.DANGEROUS: 2, Level.SAFE: 1, Level.INFO: 0}


class Area(StrEnum):
    """What a change affects."""

    INTERFACE = "interface"   # the tools the agent sees: names, parameters, types, descriptions
    BEHAVIOUR = "behaviour"   # what calls do: preconditions, messages, effects, conventions
    STATE = "state"           # the state schema and the data it holds
    TASKS = "tasks"           # checks, frames, solutions, instructions, initial data


def span_json(span: Span | None) -> dict[str, Any] | None:
    """A span as the JSON output writes it."""
    if span is None:
        return None
    return {"file": span.file, "line": span.line, "column": span.column,
            "end_line": span.end_line, "end_column": span.end_column}


@dataclass(frozen=True, slots=True)
class Change:
    """One semantic difference between the old and the new spec."""

    rule: str
    level: Level
    area: Area
    world: str
    coordinate: str
    message: str
    old: str | None = None
    new: str | None = None
    #: where the change is in the new spec (for something removed: what held it)
    span: Span | None = None
    #: where the changed thing was in the old spec
    old_span: Span | None = None
    #: tools whose calls this change concerns (to attribute impact)
    tools: tuple[str, ...] = ()
    #: tasks this change concerns
    tasks: tuple[str, ...] = ()

    @property
    def fingerprint(self) -> str:
        """A stable id: the rule, the world and the coordinate, hashed."""
        text = f"{self.rule}\0{self.world}\0{self.coordinate}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def sort_key(self) -> tuple[int, str, str, int, str]:
        line = self.span.line if self.span is not None else 0
        file = self.span.file if self.span is not None else ""
        return (-self.level.rank, self.world, file, line, self.coordinate)


@dataclass(frozen=True, slots=True)
class TaskImpact:
    """A task whose validation status differs, or whose old data the new schema rejects.

    ``status`` is ``broken`` (valid before, not now), ``fixed`` (the reverse),
    ``invalid`` (a new task that does not validate) or ``data`` (the old
    initial data does not load under the new schema).
    """

    world: str
    task: str
    status: str
    problems: tuple[str, ...]
    span: Span | None
    #: the tools the task's solution calls
    tools: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"world": self.world, "task": self.task, "status": self.status,
                "problems": list(self.problems), "span": span_json(self.span)}


@dataclass(frozen=True, slots=True)
class CallDifference:
    """The first call of a trajectory whose result differs between the two sides."""

    index: int
    tool: str
    old: Any
    new: Any

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "tool": self.tool, "old": self.old, "new": self.new}


@dataclass(frozen=True, slots=True)
class TrajectoryImpact:
    """A recorded trajectory replayed on both sides.

    ``status`` is ``changed`` (a result, the reward, a check or the frame
    differs), ``unchanged``, ``task-removed`` / ``task-added`` (the task exists
    on one side only), ``task-invalid`` (the task is declared on both sides but
    has errors on one, so it cannot be replayed there) or ``unreadable`` (the
    file is not a trajectory, or names no task either side knows).
    """

    file: str
    task: str
    world: str | None
    status: str
    old_reward: float | None = None
    new_reward: float | None = None
    first_difference: CallDifference | None = None
    #: check names whose outcome differs, with old and new status
    checks: tuple[tuple[str, str, str], ...] = ()
    frame: tuple[bool, bool] | None = None
    message: str = ""
    tools: tuple[str, ...] = ()

    @property
    def score_changed(self) -> bool:
        return (self.old_reward != self.new_reward or bool(self.checks)
                or (self.frame is not None and self.frame[0] != self.frame[1]))

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file, "task": self.task, "world": self.world, "status": self.status,
            "old_reward": self.old_reward, "new_reward": self.new_reward,
            "first_difference": (self.first_difference.to_json()
                                 if self.first_difference is not None else None),
            "checks": [{"check": name, "old": old, "new": new}
                       for name, old, new in self.checks],
            "frame": ({"old_ok": self.frame[0], "new_ok": self.frame[1]}
                      if self.frame is not None else None),
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class Impact:
    """What running the tasks and trajectories of both sides showed."""

    tasks: tuple[TaskImpact, ...] = ()
    trajectories: tuple[TrajectoryImpact, ...] = ()
    #: False when the impact analysis was not run (``--no-impact``)
    ran: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"ran": self.ran, "tasks": [t.to_json() for t in self.tasks],
                "trajectories": [t.to_json() for t in self.trajectories]}


@dataclass
class DiffReport:
    """Everything ``worldspec diff`` found, ready to render."""

    old_label: str
    new_label: str
    changes: list[Change] = field(default_factory=list)
    impact: Impact = field(default_factory=Impact)

    def counts(self) -> dict[str, int]:
        """How many changes of each level (every level present, worst first)."""
        out = {level.value: 0 for level in Level}
        for change in self.changes:
            out[change.level.value] += 1
        return out

    def impact_of(self, change: Change) -> tuple[list[TaskImpact], list[TrajectoryImpact]]:
        """The impact items this change plausibly explains.

        A task or trajectory is attributed to a change of its own task, or to
        a change of the tool that fails first (a task's failing solution call,
        a trajectory's first call whose result differs; every tool it calls
        when no call is to blame); old data the new schema rejects is
        attributed to the world's state changes.
        """
        tasks = [t for t in self.impact.tasks if t.world == change.world and (
            t.task in change.tasks or bool(set(t.tools) & set(change.tools))
            or (t.status == "data" and change.area is Area.STATE))]
        trajectories = [t for t in self.impact.trajectories
                        if t.world == change.world and t.status == "changed" and (
                            t.task in change.tasks or bool(set(t.tools) & set(change.tools)))]
        return tasks, trajectories

    def worst(self) -> int:
        """The rank ``--fail-on`` compares with: changes, and the impact counted in.

        A task that no longer validates counts as breaking; a trajectory that
        replays differently counts as dangerous.
        """
        ranks = [c.level.rank for c in self.changes]
        if any(t.status in ("broken", "invalid", "data") for t in self.impact.tasks):
            ranks.append(Level.BREAKING.rank)
        if any(t.status in ("changed", "task-removed", "task-invalid")
               for t in self.impact.trajectories):
            ranks.append(Level.DANGEROUS.rank)
        return max(ranks, default=-1)
