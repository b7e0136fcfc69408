"""``synth tasks``: tasks for a world, written in the language and accepted only when they validate.

For each task slot the model writes one ``task ... { ... }`` block: inline
initial data (``given {...}``), the instruction (multi-step, state-changing,
with as few ids as possible), check items, a frame condition
(``only changes ...``) and a reference solution; with ``conversational``, also
``persona``, ``known`` and ``unknown``. :func:`judge_task` then

1. parses the block alone and refuses anything but one task in the world: no
   ``import``, no other declarations, no ``given "file"`` (so nothing outside
   the world and the task is ever read), and asks for the parts a good task
   has (instruction, checks, frame, a solution of several calls, at least one
   of them state-changing);
2. checks it with the compiler, as a file that imports the world;
3. validates it with :func:`worldspec.services.validation.validate_tasks`: the
   reference solution is replayed on the compiled world and must pass every
   check within the frame, and doing nothing must not;
4. counts the table keys the instruction names, and asks for fewer when there
   are more than ``max_instruction_ids``.

What fails goes back to the model as JSON for repair, for at most
``max_rounds`` rounds. Accepted tasks are gathered into one ``.world`` file
that imports the world (:func:`render_tasks_file`).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldspec.compiler.api import CheckResult, check_source, check_specs
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.parser import parse_module
from worldspec.llm_frontend.batch import InputError, read_input_text, sha256_text
from worldspec.llm_frontend.prompts import (
    compiler_feedback,
    structure_feedback,
    task_feedback,
    write_task_messages,
)
from worldspec.services.compile_lock import COMPILE_LOCK
from worldspec.services.model_client import LLMClient, Usage
from worldspec.services.model_diagnostics import MAX_FEEDBACK, diagnostics_for_model
from worldspec.services.world_replies import (
    extract_world_code,
    missing_code_feedback,
    repair_messages,
)

__all__ = ["TaskOptions", "TaskOutcome", "TaskVerdict", "TaskWorld", "judge_task",
           "load_task_world", "render_tasks_file", "rename_task", "synthesize_task",
           "task_fingerprint", "task_meaning"]

#: The name the task is checked under, in the world's folder (never written to disk).
_PROBE_NAME = "__synth_task__.world"


@dataclass(frozen=True)
class TaskOptions:
    max_rounds: int = 4
    conversational: bool = False
    #: the reference solution needs at least this many calls
    min_calls: int = 2
    #: the instruction may name at most this many table keys
    max_instruction_ids: int = 2
    #: values the instruction must tell (no tool shows them): data the user has, not keys
    #: they look up, so never counted as ids
    told: frozenset[str] = frozenset()


@dataclass(frozen=True)
class TaskWorld:
    """A world tasks are written for: its file, text, hash, name and tools."""

    path: Path
    text: str
    sha256: str
    name: str
    #: tool name -> whether it only reads
    tools: dict[str, bool]
    #: task names the world's own file already uses
    own_tasks: frozenset[str]
    #: :func:`task_meaning` of each of those tasks (a new task may not repeat one)
    own_meanings: frozenset[str] = frozenset()

    @property
    def changing_tools(self) -> list[str]:
        return sorted(name for name, reads in self.tools.items() if not reads)


def load_task_world(path: str | Path) -> TaskWorld:
    """Read, check and compile a world file; :class:`InputError` says what is wrong with it."""
    source = Path(path)
    text = read_input_text(source, "a .world file")
    with COMPILE_LOCK:
        result = check_specs([source])
        if not result.ok:
            first = result.errors[0]
            raise InputError(f"'{path}' has {len(result.errors)} error(s), the first at "
                             f"{first.span.file}:{first.span.line}: {first.message}; run "
                             f"'worldspec check {path}'")
        worlds = list(result.model.worlds.values())
        if len(worlds) != 1:
            raise InputError(f"'{path}' defines {len(worlds)} worlds; tasks need exactly one")
        from worldspec.services.loading import load_result

        world_class = load_result(result).worlds[worlds[0].name]
        meanings = frozenset(_own_meaning(result, info, world_class)
                             for info in worlds[0].tasks.values())
    return TaskWorld(source, text, sha256_text(text), worlds[0].name,
                     {name: spec.read_only for name, spec in world_class.TOOLS.items()},
                     frozenset(worlds[0].tasks), meanings)


def _own_meaning(result: CheckResult, info: Any, world_class: Any) -> str:
    """:func:`task_meaning` of a task the world's file holds."""
    source = result.program.source(info.file) or ""
    checks = [" ".join(source[c.condition.span.start:c.condition.span.end].split())
              for c in info.node.checks]
    spec = world_class.TASKS[info.name]
    return task_meaning(world_class(task=info.name).export_state(),
                        [[tool, dict(args)] for tool, args in spec.solution], checks, spec.frame)


# ------------------------------------------------------------------ judging
@dataclass(frozen=True)
class TaskVerdict:
    """``stage``: ``structure``, ``compile``, ``validation`` or ``ok``."""

    stage: str
    problems: tuple[dict[str, Any], ...] = ()
    name: str | None = None
    instruction: str = ""
    warnings: tuple[str, ...] = ()
    #: :func:`task_meaning` of an accepted task
    meaning: str = ""


def _problem(message: str, line: int = 0) -> dict[str, Any]:
    item: dict[str, Any] = {"code": "synth", "severity": "error", "message": message}
    if line:
        item["line"] = line
    return item


def _parse_task(text: str) -> tuple[n.TaskDecl | None, list[dict[str, Any]]]:
    sink = DiagnosticSink()
    parsed = parse_module(text, "task.world", sink)
    if not parsed.ok:
        return None, diagnostics_for_model(sink.sorted(), text)
    decls = parsed.module.decls
    tasks = [d for d in decls if isinstance(d, n.TaskDecl)]
    problems = [_problem("write only the task: remove this "
                         f"{type(d).__name__.removesuffix('Decl').lower()}", d.span.line)
                for d in decls if not isinstance(d, n.TaskDecl)]
    if len(tasks) != 1:
        problems.append(_problem(f"write exactly one task block, not {len(tasks)}"))
    return (tasks[0] if len(tasks) == 1 else None), problems


def _structure(task: n.TaskDecl, world: TaskWorld, taken: set[str],
               options: TaskOptions) -> list[dict[str, Any]]:
    problems: list[dict[str, Any]] = []
    line = task.span.line
    if task.world.name != world.name:
        problems.append(_problem(f"the task must be `in {world.name}`", line))
    if task.name.name in taken:
        problems.append(_problem(f"the name '{task.name.name}' is taken: choose a new one", line))
    for item in task.items:
        if isinstance(item, n.Given) and isinstance(item.source, str):
            problems.append(_problem("give the initial data inline, `given { ... }`, not from "
                                     "a file", item.span.line))
    kinds = {type(item) for item in task.items}
    if n.Instruction not in kinds:
        problems.append(_problem("the task needs an `instruction`", line))
    if not task.checks:
        problems.append(_problem("the task needs `check` items", line))
    if task.frame is None:
        problems.append(_problem("the task needs a frame condition: `only changes ...`", line))
    calls = task.solution.calls if task.solution is not None else ()
    if len(calls) < options.min_calls:
        problems.append(_problem(f"the reference solution needs at least {options.min_calls} "
                                 f"tool calls (it has {len(calls)}): the task must take several "
                                 "steps", line))
    elif not any(not world.tools.get(c.tool.name, True) for c in calls):
        problems.append(_problem("the reference solution only reads: the task must change the "
                                 "state", line))
    if options.conversational:
        for kind, word in ((n.Persona, "persona"), (n.Known, "known"), (n.Unknown, "unknown")):
            if kind not in kinds:
                problems.append(_problem(f"a conversational task needs `{word} \"...\"`", line))
    return problems


def _probe(world: TaskWorld, text: str) -> tuple[str, str]:
    """The task as a file importing the world: its path (beside the world) and text."""
    return (str(world.path.parent / _PROBE_NAME),
            f'import "{world.path.name}"\n\n{text}')


def _instruction_ids(instruction: str, keys: set[str]) -> list[str]:
    named = []
    for key in sorted(keys):
        if len(key) >= 3 and any(ch.isdigit() for ch in key) and \
                re.search(rf"(?<![\w#]){re.escape(key)}(?!\w)", instruction):
            named.append(key)
    return named


def judge_task(world: TaskWorld, text: str, taken: set[str],
               options: TaskOptions = TaskOptions()) -> TaskVerdict:
    """Everything wrong with one task's text, or ``ok``. Never raises for bad text."""
    task, problems = _parse_task(text)
    if task is None or problems:
        syntax = any(p["code"] != "synth" for p in problems)
        return TaskVerdict("compile" if syntax else "structure", tuple(problems))
    name = task.name.name
    instruction = next((i.text for i in task.items if isinstance(i, n.Instruction)), "")
    problems = _structure(task, world, taken, options)
    if problems:
        return TaskVerdict("structure", tuple(problems), name, instruction)
    checks = sorted(" ".join(text[c.condition.span.start:c.condition.span.end].split())
                    for c in task.checks)
    path, probe = _probe(world, text)
    result = check_source(probe, path)
    shown = result.program.roots[0] if result.program.roots else path
    if not result.ok:
        found = diagnostics_for_model(list(result.diagnostics), text, file=shown, line_offset=2)
        return TaskVerdict("compile", tuple(found or [_problem("the world does not check")]),
                           name, instruction)
    return _validate(world, result, shown, name, instruction, text, options, checks)


def task_meaning(initial_state: Any, solution: Any, checks: Sequence[str],
                 frame: Sequence[str] | None) -> str:
    """A hash of what a task *is*: its initial state (as loaded, whatever the layout of its
    data), its solution's calls, its checks' conditions and its frame; not its name, doc,
    instruction or check names. Two tasks with the same meaning are one task told twice."""
    import json

    canonical = json.dumps({"state": initial_state, "solution": solution,
                            "checks": sorted(checks), "frame": sorted(frame or ())},
                           sort_keys=True, ensure_ascii=False, default=str)
    return sha256_text(canonical)


def _validate(world: TaskWorld, result: CheckResult, shown: str, name: str, instruction: str,
              text: str, options: TaskOptions, checks: Sequence[str] = ()) -> TaskVerdict:
    from worldspec.services.loading import load_result
    from worldspec.services.validation import validate_tasks

    reports = [r for r in validate_tasks(result) if r.task == name and r.file == shown]
    problems = diagnostics_for_model(reports[0].problems if reports else [], text, file=shown,
                                     line_offset=2)
    errors = [p for p in problems if p["severity"] == "error"]
    others = [p for p in problems if p["severity"] != "error"]
    warnings = tuple(f"{p['code']}: {p['message']}" for p in others)
    episode = load_result(result).worlds[world.name](task=name)
    keys = {str(k) for table in episode.tables.values() for k in table.rows}
    named = _instruction_ids(instruction, keys - options.told)
    if len(named) > options.max_instruction_ids:
        errors.append(_problem(
            f"the instruction names {len(named)} ids ({', '.join(named)}); a user knows few "
            f"ids: keep at most {options.max_instruction_ids} and describe the rest by what "
            "the user knows (names, emails, dates) so the agent looks them up (an id is a "
            "row's key of 3 characters or more with a digit in it, written as a word of its "
            "own; a value the task must tell does not count)"))
    if errors:
        return TaskVerdict("validation", tuple((errors + others)[:MAX_FEEDBACK]), name,
                           instruction, warnings)
    spec = episode.TASKS[name]
    meaning = task_meaning(episode.export_state(),
                           [[tool, dict(args)] for tool, args in spec.solution],
                           checks, spec.frame)
    return TaskVerdict("ok", (), name, instruction, warnings, meaning)


def _judge_locked(world: TaskWorld, text: str, taken: set[str],
                  options: TaskOptions) -> TaskVerdict:
    with COMPILE_LOCK:
        return judge_task(world, text, taken, options)


# ----------------------------------------------------------------- helpers
def rename_task(text: str, new_name: str) -> str:
    """``text`` with its (one) task renamed to ``new_name``."""
    sink = DiagnosticSink()
    parsed = parse_module(text, "task.world", sink)
    for decl in parsed.module.decls:
        if isinstance(decl, n.TaskDecl):
            span = decl.name.span
            return text[:span.start] + new_name + text[span.end:]
    return text


def task_fingerprint(text: str) -> str:
    """A hash of a task's text that ignores its name and layout: equal tasks, equal prints."""
    sink = DiagnosticSink()
    parsed = parse_module(text, "task.world", sink)
    body = text
    for decl in parsed.module.decls:
        if isinstance(decl, n.TaskDecl):
            body = text[:decl.name.span.start] + "_" + text[decl.name.span.end:]
    return sha256_text(" ".join(body.split()))


def render_tasks_file(world: TaskWorld, out: Path, tasks: Sequence[str]) -> str:
    """The text of a tasks file at ``out``: a header, the import of the world, the tasks."""
    relative = os.path.relpath(world.path.resolve(), out.resolve().parent).replace(os.sep, "/")
    header = (f"# Tasks for the {world.name} world, written by `worldspec synth tasks` and "
              "validated\n# (each reference solution passes every check; doing nothing "
              "does not).\n\n")
    body = "\n\n".join(t.strip("\n") for t in tasks)
    text = f'{header}import "{relative}"\n\n{body}\n'
    from worldspec.dsl.formatter import format_source

    return format_source(text, str(out)) or text


# ------------------------------------------------------------------ the loop
@dataclass
class TaskOutcome:
    """The result of writing one task."""

    accepted: bool
    name: str | None
    #: the accepted task block, or the last attempt when rejected
    text: str | None
    rounds: int
    reason: str = ""
    detail: str = ""
    instruction: str = ""
    warnings: tuple[str, ...] = ()
    usage: Usage = field(default_factory=Usage)
    #: :func:`task_meaning` (accepted tasks only)
    meaning: str = ""
    #: what was wrong with the last attempt of a rejected task
    problems: tuple[dict[str, Any], ...] = ()


async def synthesize_task(client: LLMClient, world: TaskWorld, slot: int,
                          options: TaskOptions = TaskOptions(), *,
                          written: Sequence[tuple[str, str]] = (),
                          taken: set[str] | None = None,
                          usage: Usage | None = None) -> TaskOutcome:
    """Write, check, validate and repair the task of ``slot`` (which picks a tool to focus on).

    ``written`` holds ``(name, instruction)`` of the accepted tasks and
    ``taken`` the names in use (the world's own tasks are added).
    """
    spent = usage if usage is not None else Usage()
    names = set(taken or ()) | set(world.own_tasks)
    tools = world.changing_tools or sorted(world.tools)
    focus = tools[slot % len(tools)] if tools else None
    base = write_task_messages(world_name=world.name, world_file=world.path.name,
                               world_text=world.text, written=written, focus_tool=focus,
                               conversational=options.conversational,
                               min_calls=options.min_calls,
                               max_ids=options.max_instruction_ids)
    messages = base
    last: str | None = None
    verdict: TaskVerdict | None = None
    for round_number in range(options.max_rounds + 1):
        reply = await client.chat(messages, usage=spent)
        code = extract_world_code(reply.text)
        if code is None:
            messages = repair_messages(base, reply.text, missing_code_feedback("task"))
            continue
        last = code
        verdict = await asyncio.to_thread(_judge_locked, world, code, names, options)
        if verdict.stage == "ok":
            return TaskOutcome(True, verdict.name, code, round_number,
                               instruction=verdict.instruction, warnings=verdict.warnings,
                               usage=spent, meaning=verdict.meaning)
        if verdict.stage == "validation":
            feedback = task_feedback(verdict.problems)
        elif verdict.stage == "structure":
            feedback = structure_feedback(verdict.problems, "task")
        else:
            feedback = compiler_feedback(verdict.problems, "task")
        messages = repair_messages(base, f"```world\n{code}```", feedback)
    rounds = options.max_rounds
    if verdict is None:
        return TaskOutcome(False, None, None, rounds, "no code in the replies", usage=spent)
    reason = {"structure": "the task lacks what a task needs",
              "compile": "compile errors remain",
              "validation": "the task does not validate"}[verdict.stage]
    detail = "; ".join(str(p.get("message")) for p in verdict.problems[:3])
    return TaskOutcome(False, verdict.name, last, rounds, f"{reason} after {rounds} repair rounds",
                       detail, verdict.instruction, usage=spent, problems=verdict.problems)
