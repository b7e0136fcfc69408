"""Task validation: run every task of a clean program and report what is wrong with it.

The compiler checks that a task is well typed; only running it shows whether
it makes sense. For each task this replays the reference solution on the
task's initial data and reports, as diagnostics at the task's own spans:

- a solution call that fails (WS610), a check still false after it (WS611),
  a frame the solution breaks (WS612);
- a check already true at the start (WS613, a warning), a task that scores 1
  when nothing is done and nothing is said (WS614);
- an answer check that the solution's own reference reply fails (WS622);
- a literal table key in a check that exists neither before nor after the
  solution, or an id in the instruction that no table holds (WS615).

``check_paths`` here is the compiler's check followed by this validation;
the CLI's ``check`` and ``tasks`` commands use it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldspec.compiler.api import CheckResult
from worldspec.compiler.api import check_paths as check_specs
from worldspec.compiler.loader import Program
from worldspec.compiler.model import TaskInfo, WorldModel
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import Diagnostic, DiagnosticSink
from worldspec.runtime.episode import Episode

__all__ = ["TaskReport", "ValidatedResult", "check_paths", "validate_tasks"]

_ID = re.compile(r"#?[A-Za-z]{0,6}[0-9][A-Za-z0-9_-]{2,}")


@dataclass
class TaskReport:
    """The validation status of one task."""

    world: str
    task: str
    file: str
    line: int
    problems: list[Diagnostic] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not any(d.severity.value == "error" for d in self.problems)

    def to_json(self) -> dict[str, Any]:
        return {"world": self.world, "task": self.task, "file": self.file, "line": self.line,
                "valid": self.valid, "problems": [d.to_json() for d in self.problems]}


@dataclass(frozen=True)
class ValidatedResult:
    """A check result plus what running the tasks found."""

    result: CheckResult
    tasks: tuple[TaskReport, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def ok(self) -> bool:
        return not any(d.severity.value == "error" for d in self.diagnostics)

    @property
    def program(self) -> Program:
        return self.result.program


def check_paths(paths: Iterable[str | Path]) -> ValidatedResult:
    """Check specs and, when they are clean, validate every task by running it."""
    result = check_specs(paths)
    reports: list[TaskReport] = []
    extra: list[Diagnostic] = []
    if result.ok:
        reports = validate_tasks(result)
        extra = [d for r in reports for d in r.problems]
    else:
        reports = [TaskReport(w.name, t.name, t.file, t.node.span.line,
                              [d for d in result.diagnostics if d.span.file == t.file and
                               t.node.span.start <= d.span.start <= t.node.span.end])
                   for w in result.model.worlds.values() for t in w.tasks.values()]
    diagnostics = tuple(sorted([*result.diagnostics, *extra], key=Diagnostic.sort_key))
    return ValidatedResult(result, tuple(reports), diagnostics)


def validate_tasks(result: CheckResult) -> list[TaskReport]:
    """Run every task of a clean result; one report per task, in declaration order."""
    from worldspec.services.loading import load_result

    loaded = load_result(result)
    reports = []
    for name, world in sorted(result.model.worlds.items()):
        episode_class = loaded.worlds[name]
        for task in world.tasks.values():
            sink = DiagnosticSink()
            _validate(task, world, episode_class, sink)
            reports.append(TaskReport(name, task.name, task.file, task.node.span.line,
                                      sink.sorted()))
    return reports


def _validate(task: TaskInfo, world: WorldModel, episode_class: type[Episode],
              sink: DiagnosticSink) -> None:
    node = task.node
    spec = episode_class.TASKS[task.name]
    episode = episode_class(task=task.name)
    start = episode.score()
    checks = {c.name.name: c for c in node.checks}
    if node.checks and start.reward >= 1.0 and start.frame_ok:
        sink.report("WS614", node.name.span, f"task '{task.name}' scores 1 when nothing is done",
                    hints=["add a check that only the task's work makes true"])
    else:
        for outcome in start.checks:
            if outcome.passed and outcome.name in checks:
                sink.report("WS613", checks[outcome.name].name.span,
                            f"check '{outcome.name}' already holds before the agent does "
                            "anything", hints=["a check should become true through the "
                                               "task's work"])
    solution = node.solution
    calls = solution.calls if solution is not None else ()
    for call_node, (name, arguments) in zip(calls, spec.solution, strict=False):
        result = episode.call(name, dict(arguments))
        if episode.failed(result):
            message = episode.last_error.message if episode.last_error else str(result)
            sink.report("WS610", call_node.span, f"solution call {name}() fails: {message}")
            return
    initial = episode.initial_state()
    final = episode.score(initial=initial, replies=spec.replies)
    if solution is not None:
        for outcome in final.checks:
            if not outcome.passed and outcome.name in checks:
                why = f" ({outcome.message})" if outcome.message.startswith("error") else ""
                if outcome.name in task.answer_checks:
                    said = spec.replies[-1] if spec.replies else ""
                    shown = said if len(said) <= 60 else said[:59] + "…"
                    sink.report("WS622", checks[outcome.name].name.span,
                                f"check '{outcome.name}' is false for the reference reply "
                                f"{json.dumps(shown, ensure_ascii=False)}{why}")
                    continue
                sink.report("WS611", checks[outcome.name].name.span,
                            f"check '{outcome.name}' is false after the reference "
                            f"solution{why}")
        if not final.frame_ok and node.frame is not None:
            shown = ", ".join(final.frame_violations[:3])
            more = f" and {len(final.frame_violations) - 3} more" \
                if len(final.frame_violations) > 3 else ""
            sink.report("WS612", node.frame.span, "the reference solution changes what the "
                        f"frame does not allow: {shown}{more}")
    _check_keys(task, world, initial, episode, sink)


def _check_keys(task: TaskInfo, world: WorldModel, initial: Episode, final: Episode,
                sink: DiagnosticSink) -> None:
    for check in task.node.checks:
        for expr in n.walk(check.condition):
            if not (isinstance(expr, n.Index) and isinstance(expr.obj, (n.NameRef, n.Attribute))
                    and isinstance(expr.index, n.StrLit | n.IntLit)):
                continue
            table = expr.obj.name if isinstance(expr.obj, n.NameRef) else expr.obj.name.name
            state = world.state.get(table)
            if state is None or state.kind != "table":
                continue
            key = expr.index.value
            if key not in initial.tables[table].rows and key not in final.tables[table].rows:
                sink.report("WS615", expr.index.span, f"no {state.entity} with key {key!r} "
                            "before or after the reference solution")
    instruction = next((i for i in task.node.items if isinstance(i, n.Instruction)), None)
    if instruction is None:
        return
    known: set[str] = set()
    for episode in (initial, final):
        for rows in episode.tables.values():
            known.update(str(k) for k in rows.rows)
    if not known:
        return
    prefixes = {_prefix(k) for k in known}
    for word in _ID.findall(instruction.text):
        token = word.rstrip(".,;:!?)")
        if token and token not in known and _prefix(token) in prefixes and \
                any(ch.isdigit() for ch in token):
            sink.report("WS615", instruction.span, f"the instruction names '{token}', which no "
                        "table holds")


def _prefix(key: str) -> str:
    """The non-digit head of an id (``#W``, ``MSG``, ``U``): ids of one table share it."""
    return re.sub(r"[0-9].*$", "", key)
