"""Task validation: run every task of a program and report what is wrong with it.

The compiler checks that a task is well typed; only running it shows whether
it makes sense. For each task this replays the reference solution on the
task's initial data and reports, as diagnostics at the task's own spans:

- a solution call that fails (WS610), a check still false after it (WS611),
  a frame the solution breaks (WS612);
- a check already true at the start (WS613, a warning), a task that scores 1
  when nothing is done and nothing is said (WS614) — unless it is a *restraint*
  task, whose frame is ``only changes nothing`` in a world where a broken frame
  zeroes the reward: there the right outcome is to change nothing (the request
  breaks the policy, say), doing nothing earns the reward by design and any change
  loses it;
- an answer check that the solution's own reference reply fails (WS622);
- a solution call passing a value that names something (an entity key, a string) the agent
  was never shown before that call (WS624, :mod:`~worldspec.services.discoverability`);
- a literal table key in a check that exists neither before nor after the
  solution, or an id in the instruction that no table holds (WS615).

:func:`check_paths` is the compiler's check (:func:`~worldspec.compiler.api.check_specs`)
followed by this validation; it is ``worldspec.check_paths``, and what the CLI's
``check``, ``build``, ``tasks`` and ``export`` run. A task with errors of its own does
not stop the others from being validated: it is set aside (:func:`set_aside_broken_tasks`)
and the rest is checked again without it and run. Only errors outside every
task (in a world) leave the tasks unvalidated, and their reports say so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from worldspec.compiler import types as t
from worldspec.compiler.api import CheckResult, check_specs
from worldspec.compiler.checker import check_program
from worldspec.compiler.loader import Program
from worldspec.compiler.model import ProgramModel, TaskInfo, WorldModel
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import Diagnostic, DiagnosticSink, Related, Severity
from worldspec.runtime.episode import Episode, TaskSpec
from worldspec.services.discoverability import ShownText, report_unseen_arguments
from worldspec.services.instruction_ids import key_shape, words_like_keys

__all__ = ["TaskReport", "TaskSplit", "TaskStatus", "ValidatedResult", "check_paths",
           "set_aside_broken_tasks", "validate_tasks"]

#: ``valid``: run, and nothing wrong; ``invalid``: it has errors (its own, or found by
#: running it); ``not-validated``: never run, because the specs have errors outside tasks.
TaskStatus = Literal["valid", "invalid", "not-validated"]


@dataclass
class TaskReport:
    """The validation status of one task.

    ``validated`` is False when the task could not be run at all (the world it
    belongs to has errors); ``reason`` then says which errors stopped it.
    """

    world: str
    task: str
    file: str
    line: int
    problems: list[Diagnostic] = field(default_factory=list)
    validated: bool = True
    reason: str = ""

    @property
    def status(self) -> TaskStatus:
        if any(d.severity is Severity.ERROR for d in self.problems):
            return "invalid"
        return "valid" if self.validated else "not-validated"

    @property
    def valid(self) -> bool:
        """True only for a task that was run and has no error."""
        return self.status == "valid"

    def to_json(self) -> dict[str, Any]:
        return {"world": self.world, "task": self.task, "file": self.file, "line": self.line,
                "status": self.status, "valid": self.valid, "reason": self.reason,
                "problems": [d.to_json() for d in self.problems]}


@dataclass(frozen=True)
class ValidatedResult:
    """What :func:`check_paths` returns: the compiler's check result plus what running the
    tasks found.

    ``diagnostics`` holds both (sorted), so ``ok`` is False for a spec the
    compiler accepts when one of its tasks fails validation; ``tasks`` has one
    report per task declared, whatever its status.
    """

    result: CheckResult
    tasks: tuple[TaskReport, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def ok(self) -> bool:
        """True when there is no error, in the specs or in a task (warnings allowed)."""
        return not self.errors

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def program(self) -> Program:
        return self.result.program

    @property
    def model(self) -> ProgramModel:
        return self.result.model


@dataclass(frozen=True)
class TaskSplit:
    """A check result's errors split into those inside task declarations and the rest.

    ``runnable`` is the program without the tasks that have errors, checked
    again, or None when it cannot be run: there are errors outside tasks
    (``fatal``), or setting the tasks aside broke something else (then those
    errors are ``fatal``).
    """

    fatal: tuple[Diagnostic, ...]
    #: (world as written, task) -> the errors inside that task's declaration
    task_errors: dict[tuple[str, str], list[Diagnostic]]
    runnable: CheckResult | None


def _task_decls(result: CheckResult) -> list[tuple[str, n.TaskDecl]]:
    return [(path, d) for path, f in result.program.files.items()
            for d in f.module.decls if isinstance(d, n.TaskDecl)]


def _inside(d: Diagnostic, path: str, task: n.TaskDecl) -> bool:
    return path == d.span.file and task.span.start <= d.span.start < task.span.end


def set_aside_broken_tasks(result: CheckResult) -> TaskSplit:
    """Split ``result``'s errors by task, and check the program again without broken tasks."""
    if result.ok:
        return TaskSplit((), {}, result)
    tasks = _task_decls(result)
    fatal = tuple(d for d in result.errors
                  if d.code.startswith("WS1")  # input and syntax errors: nothing is sure
                  or not any(_inside(d, path, task) for path, task in tasks))
    if fatal:
        return TaskSplit(fatal, {}, None)
    task_errors: dict[tuple[str, str], list[Diagnostic]] = {}
    broken: set[int] = set()
    for d in result.errors:
        for path, task in tasks:
            if _inside(d, path, task):
                task_errors.setdefault((task.world.name, task.name.name), []).append(d)
                broken.add(id(task))
    program = Program(
        files={path: replace(f, module=replace(f.module, decls=tuple(
            d for d in f.module.decls if id(d) not in broken)))
            for path, f in result.program.files.items()},
        roots=list(result.program.roots), imports=dict(result.program.imports))
    sink = DiagnosticSink()
    model = check_program(program, sink)
    runnable = CheckResult(program=program, model=model, diagnostics=tuple(sink.sorted()))
    if not runnable.ok:  # setting the tasks aside broke something else: show it, not guess
        return TaskSplit(runnable.errors, task_errors, None)
    return TaskSplit((), task_errors, runnable)


def _not_run_reason(fatal: tuple[Diagnostic, ...]) -> str:
    first = fatal[0]
    count = "1 error" if len(fatal) == 1 else f"{len(fatal)} errors"
    return (f"not validated: the specs have {count} outside tasks (first: "
            f"{first.span.file}:{first.span.line}: {first.code} {first.message})")


def check_paths(paths: Iterable[str | Path]) -> ValidatedResult:
    """Check specs and validate every task by running it.

    Tasks with errors of their own are reported invalid and the others are
    still run; when the specs have errors outside tasks, no task is run and
    each report says ``not-validated`` and why.
    """
    result = check_specs(paths)
    split = set_aside_broken_tasks(result)
    ran: dict[tuple[str, str], TaskReport] = {}
    if split.runnable is not None:
        ran = {(r.world, r.task): r for r in validate_tasks(split.runnable)}
    reason = _not_run_reason(split.fatal) if split.fatal else ""
    reports: list[TaskReport] = []
    for path, decl in _task_decls(result):
        key = (decl.world.name, decl.name.name)
        if key in ran:
            reports.append(ran.pop(key))
            continue
        own = [d for d in result.diagnostics if _inside(d, path, decl)]
        reports.append(TaskReport(*key, path, decl.span.line, own, validated=False,
                                  reason="" if key in split.task_errors else reason))
    extra = [d for r in reports if r.validated for d in r.problems]
    diagnostics = tuple(sorted([*result.diagnostics, *extra], key=Diagnostic.sort_key))
    return ValidatedResult(result, tuple(reports), diagnostics)


def validate_tasks(result: CheckResult) -> list[TaskReport]:
    """Run every task of a clean result; one report per task, in declaration order."""
    if not any(world.tasks for world in result.model.worlds.values()):
        return []  # nothing to run: no code to generate
    from worldspec.services.loading import load_result

    loaded = load_result(result)
    reports = []
    for name, world in sorted(result.model.worlds.items()):
        runner = _Runner(loaded.worlds[name])
        for task in world.tasks.values():
            sink = DiagnosticSink()
            _validate(task, world, result.model, runner, sink)
            reports.append(TaskReport(name, task.name, task.file, task.node.span.line,
                                      sink.sorted()))
    return reports


class _Runner:
    """The two episodes every task of one world is run in, reset from task to task.

    Tasks share their initial data (114 tau2 tasks name one 3 MB database, loaded once by
    the generated package), so the episodes are made once: ``run`` is reset to each task
    (undoing the last task's calls, the runtime's undo log, instead of loading or copying the
    data) and runs the solution; ``start`` is reset to the task too and never called, so it
    *is* the task's initial state, which every score compares with. What is derived from an
    initial state alone (the keys its tables hold) is kept per data value.
    """

    def __init__(self, episode_class: type[Episode]) -> None:
        self.episode_class = episode_class
        self._run: Episode | None = None
        self._start: Episode | None = None
        #: id(initial data) -> (that data, the keys of its rows as text, their shapes)
        self._keys: dict[int, tuple[object, set[str], set[str]]] = {}
        self._world_shown: ShownText | None = None

    def reset(self, task: str) -> tuple[Episode, Episode]:
        """The episode to run ``task`` in and the task's initial state, both fresh."""
        if self._run is None or self._start is None:
            self._run = self.episode_class(task=task)
            self._start = self.episode_class(task=task)
        else:
            self._run.reset(task=task)
            self._start.reset(task=task)
        return self._run, self._start

    def shown_at_start(self, spec: TaskSpec, episode: Episode) -> ShownText:
        """What the agent is shown before its first call in ``spec``: the world's policy and
        tool definitions, the instruction, and what the simulated user may tell (its persona
        and ``known`` information, never ``unknown``)."""
        if self._world_shown is None:
            self._world_shown = ShownText([self.episode_class.POLICY])
            self._world_shown.add_definitions(episode.tools())
        shown = self._world_shown.copy()
        for text in (spec.instruction, spec.persona, spec.known):
            if text:
                shown.add_value(text)
        return shown

    def initial_keys(self, task: str, initial: Episode) -> tuple[set[str], set[str]]:
        """Every row key of ``task``'s initial state as text, and the keys' shapes."""
        data = self.episode_class.TASKS[task].data
        kept = self._keys.get(id(data))
        if kept is None or kept[0] is not data:
            known = {str(k) for rows in initial.tables.values() for k in rows.rows}
            kept = (data, known, {key_shape(k) for k in known})
            self._keys[id(data)] = kept
        return kept[1], kept[2]


def _restraint(spec: TaskSpec, episode_class: type[Episode]) -> bool:
    """Whether a task grades restraint: ``only changes nothing``, with a broken frame zeroing
    the reward (so an agent that changes anything earns nothing)."""
    zeroes = bool(getattr(spec, "frame_zeroes", episode_class.FRAME_ZEROES))
    return spec.frame == () and zeroes


def _validate(task: TaskInfo, world: WorldModel, program: ProgramModel, runner: _Runner,
              sink: DiagnosticSink) -> None:
    node = task.node
    episode_class = runner.episode_class
    spec = episode_class.TASKS[task.name]
    try:
        episode, initial = runner.reset(task.name)
    except ValueError as exc:  # the world's `on load` refused the task's data
        load = world.load_node
        message = getattr(exc.__cause__, "message", str(exc))
        sink.report("WS623", node.name.span, f"task '{task.name}': on load refuses the "
                    f"task's data: {message}",
                    related=[Related(load.span, "the on load block")] if load else [])
        return
    start = episode.score(initial=initial)
    checks = {c.name.name: c for c in node.checks}
    holding: list[n.Check] = []
    if _restraint(spec, episode_class):
        pass  # doing nothing is the right outcome, and any change zeroes the reward
    elif node.checks and start.reward >= 1.0 and start.frame_ok:
        sink.report("WS614", node.name.span, f"task '{task.name}' scores 1 when nothing is done",
                    hints=["add a check that only the task's work makes true"])
    else:
        holding = [checks[o.name] for o in start.checks if o.passed and o.name in checks]
    solution = node.solution
    calls = solution.calls if solution is not None else ()
    seen = runner.shown_at_start(spec, episode)
    row_keys = runner.initial_keys(task.name, initial)[0]
    failed = False
    for call_node, (name, arguments) in zip(calls, spec.solution, strict=False):
        tool = world.tools.get(name)
        if tool is not None:
            report_unseen_arguments(call_node, tool, arguments, world, seen, sink, row_keys)
        result = episode.call(name, dict(arguments))
        if episode.failed(result):
            message = episode.last_error.message if episode.last_error else str(result)
            sink.report("WS610", call_node.span, f"solution call {name}() fails: {message}")
            failed = True
            break
        seen.add_value(result)
    worked_on = set() if failed or solution is None else _changed_state(episode, initial)
    for check in holding:
        if not _guards(check, world, program, worked_on):
            sink.report("WS613", check.name.span, f"check '{check.name.name}' already holds "
                        "before the agent does anything",
                        hints=["a check should become true through the task's work"])
    if failed:
        return
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
    _check_keys(task, world, runner, initial, episode, sink)


#: What a check reads or a solution changes: a state item or a table's set of rows
#: (``(name, None)``), or one field of a table's rows (``(table, field)``).
_Part = tuple[str, str | None]


def _changed_state(episode: Episode, initial: Episode) -> set[_Part]:
    """What ``episode`` changed from ``initial``: state items, tables' sets of rows (a row
    added or removed) and tables' fields (a row's field changed)."""
    changed: set[_Part] = set()
    for change in episode.diff(initial):
        head, _, rest = change["path"].partition("[")
        changed.add((head, rest.rpartition("].")[2] if "]." in rest else None))
    return changed


def _guards(check: n.Check, world: WorldModel, program: ProgramModel,
            worked_on: set[_Part]) -> bool:
    """Whether ``check``, true from the start, guards what the task works on: it reads a
    field, a set of rows or a state item that the reference solution changes
    (``others_kept: tickets["T4"].status == sold`` while the task refunds ``T3``). A frame
    names whole fields, so such a check is how a task says which rows its work must leave
    alone; it is no free reward. A check on what the solution leaves alone is (a frame that
    keeps it already makes it hold, or nothing could ever change it)."""
    reads: set[_Part] = set()
    for expr in n.walk(check.condition):
        if isinstance(expr, n.NameRef) and expr.name in world.state:
            reads.add((expr.name, None))
        elif isinstance(expr, n.Attribute):
            row = t.strip_optional(program.type_of(expr.obj) or t.UNKNOWN)
            table = world.table_of(row.name) if isinstance(row, t.Named) and \
                row.kind == "entity" else None
            if table is not None:
                reads.add((table.name, expr.name.name))
    return bool(reads & worked_on)


def _values_told(task: TaskInfo) -> set[str]:
    """What the task itself holds as values, outside its instruction: whole numbers and the
    words of texts in its data, checks and solution (a credit score of 790, a deposit of 195,
    a note "CT00008", in a world whose rooms are 101...). The instruction tells them; they are
    no ids the task lacks."""
    told: set[str] = set()
    for expr in n.walk(task.node):
        if isinstance(expr, n.Instruction):
            continue
        if isinstance(expr, n.IntLit) or (isinstance(expr, n.FloatLit)
                                          and float(expr.value).is_integer()):
            told.add(str(int(expr.value)))
        elif isinstance(expr, n.StrLit):
            told.update(expr.value.split())
    stack: list[object] = [task.initial_data]
    while stack:  # and the values of its data (the credit score of an application it holds)
        value = stack.pop()
        if isinstance(value, dict):
            stack += value.values()
        elif isinstance(value, list | tuple):
            stack += value
        elif isinstance(value, str):
            told.update(value.split())
        elif isinstance(value, int | float) and not isinstance(value, bool) and \
                float(value).is_integer():
            told.add(str(int(value)))
    return told


def _check_keys(task: TaskInfo, world: WorldModel, runner: _Runner, initial: Episode,
                final: Episode, sink: DiagnosticSink) -> None:
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
    known, shapes = runner.initial_keys(task.name, initial)
    added = {str(k) for name, table in final.tables.items()
             for k in table.rows.keys() - initial.tables[name].rows.keys()}
    if added:  # rows the solution inserted
        known = known | added
        shapes = shapes | {key_shape(k) for k in added}
    if not known:
        return
    unknown = [word for word in words_like_keys(instruction.text, shapes) if word not in known]
    told = _values_told(task) if unknown else set()  # its data walked only when needed
    for word in unknown:
        if word not in told:
            sink.report("WS615", instruction.span, f"the instruction names '{word}', which no "
                        "table holds")
