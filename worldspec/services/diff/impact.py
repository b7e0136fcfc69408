"""What a change does to the tasks and the recorded trajectories built on a world.

Three analyses, each running both sides:

- **tasks** — every task is validated on each side (its checks type-check, its
  data loads, its reference solution succeeds and passes, as ``worldspec
  tasks`` does); a task valid on the old side and not on the new one is
  ``broken``;
- **data** — the initial data of every old task is loaded under the *new*
  schema, so a schema change is caught even when the change also rewrote the
  data files;
- **trajectories** — each recorded trajectory (a file ``<task>.jsonl``, or
  ``<task>.<anything>.json[l]``: the task is the file name up to its first
  dot; or each record of a rollout journal, see :mod:`.trajectories`) is
  replayed call by call on both sides and the results and scores compared.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from worldspec.compiler.data_check import load_initial_data
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import Diagnostic, DiagnosticSink
from worldspec.runtime.episode import Episode, Score
from worldspec.services.diff.model import CallDifference, Impact, TaskImpact, TrajectoryImpact
from worldspec.services.diff.sources import Side
from worldspec.services.diff.trajectories import (
    TRAJECTORY_SUFFIXES,
    read_trajectories,
    task_of_trajectory,
)
from worldspec.services.loading import LoadedWorlds, load_result
from worldspec.services.validation import validate_tasks

__all__ = ["analyse_impact", "task_of_trajectory", "TRAJECTORY_SUFFIXES"]

def _problem(d: Diagnostic) -> str:
    return f"{d.code}: {d.message}"


def _solution_tools(task: n.TaskDecl) -> tuple[str, ...]:
    solution = task.solution
    return tuple(dict.fromkeys(c.tool.name for c in solution.calls)) if solution else ()


class _Validity:
    """Which tasks of one side are valid, and why the others are not."""

    def __init__(self, side: Side) -> None:
        self.problems: dict[tuple[str, str], list[str]] = {
            key: [_problem(d) for d in errors] for key, errors in side.task_errors.items()}
        self.nodes: dict[tuple[str, str], n.TaskDecl] = {}
        for world in side.result.model.worlds.values():
            for task in world.tasks.values():
                self.nodes[(world.name, task.name)] = task.node
        for source in side.result.program.files.values():
            for decl in source.module.decls:
                if isinstance(decl, n.TaskDecl):
                    self.nodes.setdefault((decl.world.name, decl.name.name), decl)
        #: the tools whose solution calls fail, where that is why a task is invalid
        self.failing: dict[tuple[str, str], tuple[str, ...]] = {}
        if side.runnable is not None:
            for report in validate_tasks(side.runnable):
                key = (report.world, report.task)
                errors = [d for d in report.problems if d.severity.value == "error"]
                if errors:
                    self.problems[key] = [_problem(d) for d in errors]
                    self.failing[key] = self._failing_tools(key, errors)

    def _failing_tools(self, key: tuple[str, str], errors: list[Diagnostic]
                       ) -> tuple[str, ...]:
        node = self.nodes.get(key)
        calls = node.solution.calls if node is not None and node.solution else ()
        spans = {d.span for d in errors if d.code == "WS610"}
        return tuple(c.tool.name for c in calls if c.span in spans)

    def valid(self, key: tuple[str, str]) -> bool:
        return key in self.nodes and key not in self.problems

    def tools(self, key: tuple[str, str], node: n.TaskDecl) -> tuple[str, ...]:
        """The tools an invalid task's problems concern: the failing call, or all calls."""
        return self.failing.get(key) or _solution_tools(node)


def _task_impact(old: Side, new: Side) -> list[TaskImpact]:
    before, after = _Validity(old), _Validity(new)
    out: list[TaskImpact] = []
    for key, node in after.nodes.items():
        tools = after.tools(key, node)
        span = new.show_span(node.name.span)
        if not after.valid(key):
            if before.valid(key):
                out.append(TaskImpact(*key, "broken", tuple(after.problems[key]), span, tools))
            elif key not in before.nodes:
                out.append(TaskImpact(*key, "invalid", tuple(after.problems[key]), span,
                                      tools))
        elif key in before.nodes and not before.valid(key):
            out.append(TaskImpact(*key, "fixed", tuple(before.problems[key]), span, tools))
    out += _data_impact(old, new, {(t.world, t.task) for t in out})
    return out


def _data_impact(old: Side, new: Side, reported: set[tuple[str, str]]) -> list[TaskImpact]:
    """Old tasks whose initial data the new schema rejects."""
    if new.runnable is None:
        return []
    out: list[TaskImpact] = []
    new_worlds = new.runnable.model.worlds
    for world in old.result.model.worlds.values():
        target = new_worlds.get(world.name)
        if target is None:
            continue
        for task in world.tasks.values():
            key = (world.name, task.name)
            if key in reported or key in old.task_errors or task.initial_data is None:
                continue
            sink = DiagnosticSink()
            load_initial_data(task.node, task.file, target, sink)
            errors = [d for d in sink.sorted() if d.severity.value == "error"]
            if errors:
                counterpart = target.tasks.get(task.name)
                span = (new.show_span(counterpart.node.name.span) if counterpart is not None
                        else old.show_span(task.node.name.span))
                out.append(TaskImpact(world.name, task.name, "data",
                                      tuple(_problem(d) for d in errors), span,
                                      _solution_tools(task.node)))
    return out


# ------------------------------------------------------------- trajectories
def _replay(world: type[Episode], task: str, calls: list[tuple[str, Any]],
            replies: list[str]) -> tuple[list[tuple[Any, bool]], Score]:
    episode = world(task=task)
    results: list[tuple[Any, bool]] = []
    for name, arguments in calls:
        result = episode.call(name, arguments)
        results.append((result, episode.failed(result)))
    return results, episode.score(replies=replies)


def _compare_replays(path: str, task: str, world: str, calls: list[tuple[str, Any]],
                     old: tuple[list[tuple[Any, bool]], Score],
                     new: tuple[list[tuple[Any, bool]], Score]) -> TrajectoryImpact:
    (old_results, old_score), (new_results, new_score) = old, new
    first = None
    for index, (before, after) in enumerate(zip(old_results, new_results, strict=True)):
        if before != after:
            first = CallDifference(index, calls[index][0], before[0], after[0])
            break
    old_checks = {c.name: c.status for c in old_score.checks}
    new_checks = {c.name: c.status for c in new_score.checks}
    checks = tuple((name, old_checks.get(name, "absent"), new_checks.get(name, "absent"))
                   for name in dict.fromkeys([*old_checks, *new_checks])
                   if old_checks.get(name) != new_checks.get(name))
    frame = (old_score.frame_ok, new_score.frame_ok)
    changed = (first is not None or checks or old_score.reward != new_score.reward
               or frame[0] != frame[1])
    # the first call that differs is what a change of the trajectory's tools explains
    tools = (first.tool,) if first is not None else tuple(dict.fromkeys(c for c, _ in calls))
    return TrajectoryImpact(path, task, world, "changed" if changed else "unchanged",
                            old_score.reward, new_score.reward, first, checks, frame,
                            tools=tools)


def _declared(side: Side) -> set[str]:
    """The tasks a side declares, whether or not they have errors."""
    return {decl.name.name for source in side.result.program.files.values()
            for decl in source.module.decls if isinstance(decl, n.TaskDecl)}


def _trajectory_impact(old: LoadedWorlds | None, new: LoadedWorlds | None,
                       source: Path, declared: tuple[set[str], set[str]] = (set(), set())
                       ) -> list[TrajectoryImpact]:
    out: list[TrajectoryImpact] = []
    for trajectory in read_trajectories(source):
        shown, task = trajectory.shown, trajectory.task
        calls, replies = trajectory.calls, trajectory.replies
        if trajectory.problem is not None:
            out.append(TrajectoryImpact(shown, task, None, "unreadable",
                                        message=trajectory.problem))
            continue
        old_world = old.world_of_task(task) if old is not None else None
        new_world = new.world_of_task(task) if new is not None else None
        tools = tuple(dict.fromkeys(name for name, _ in calls))
        if old_world is None and new_world is None:
            out.append(TrajectoryImpact(shown, task, None, "unreadable", message=f"no valid "
                                        f"task '{task}' on either side (the task is the "
                                        "record's, or the file name up to its first dot)",
                                        tools=tools))
            continue
        if old_world is None or new_world is None:
            present = new_world if new_world is not None else old_world
            assert present is not None
            side = "new" if old_world is None else "old"
            missing = "old" if old_world is None else "new"
            if task in declared[0 if old_world is None else 1]:
                out.append(TrajectoryImpact(shown, task, present.WORLD, "task-invalid",
                                            message=f"task '{task}' is declared on the "
                                            f"{missing} side but has errors there, so the "
                                            "trajectory is replayed on neither", tools=tools))
                continue
            status = "task-added" if old_world is None else "task-removed"
            out.append(TrajectoryImpact(shown, task, present.WORLD, status,
                                        message=f"task '{task}' is valid on the {side} side "
                                        "only", tools=tools))
            continue
        try:
            before = _replay(old_world, task, calls, replies)
            after = _replay(new_world, task, calls, replies)
        except Exception as exc:  # a replay must not stop the report; say what happened
            out.append(TrajectoryImpact(shown, task, new_world.WORLD, "error",
                                        message=f"{type(exc).__name__}: {exc}", tools=tools))
            continue
        out.append(_compare_replays(shown, task, new_world.WORLD, calls, before, after))
    return out


def analyse_impact(old: Side, new: Side, trajectories: Path | None = None) -> Impact:
    """Validate the tasks of both sides and replay ``trajectories`` (a file or a folder of
    them, see :mod:`.trajectories`) on both."""
    tasks = _task_impact(old, new)
    replayed: Iterable[TrajectoryImpact] = ()
    if trajectories is not None:
        old_loaded = load_result(old.runnable) if old.runnable is not None else None
        new_loaded = load_result(new.runnable) if new.runnable is not None else None
        replayed = _trajectory_impact(old_loaded, new_loaded, trajectories,
                                      (_declared(old), _declared(new)))
    order = {"broken": 0, "data": 1, "invalid": 2, "fixed": 3}
    return Impact(tuple(sorted(tasks, key=lambda t: (order.get(t.status, 9), t.world, t.task))),
                  tuple(replayed))
