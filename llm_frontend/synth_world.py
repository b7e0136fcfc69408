"""``synth world``: from a description to a world that checks clean and passes its property tests.

The loop, for one description:

1. **Plan** (optional): the model answers a :class:`~llm_frontend.prompts.WorldPlan`
   (entities, state, rules, tools) as structured output, validated by pydantic.
2. **Write**: the model writes the ``.world`` file and its sample tasks, prompted with
   the condensed language reference, an example world and a whole small file.
3. **Judge** (:func:`judge_world`): the text is parsed and refused if it imports
   anything (a synthesised world is one self-contained file, so nothing outside
   it is ever read) or holds fewer than ``sample_tasks`` sample tasks with inline
   data (the world's *seed data*); then the compiler checks it. Its diagnostics,
   as JSON with the offending source line, go back to the model for repair.
4. **Validate** the sample tasks as ``worldspec tasks`` does (each solution
   replayed on its data must pass its checks within its frame).
5. **Test**: the compiled world is explored with random tool-call sequences
   *starting from each sample task's data* (:func:`worldspec.testing.explore.explore`,
   the property tests of ``worldspec test``); findings, each with its shortest
   failing call sequence, go back to the model too.
6. **Coverage**: every state-changing tool must succeed at least once in those
   calls. When one has not, the exploration goes on with fresh seeds (at most
   ``coverage_tries`` runs in all); a write tool that still never succeeds goes
   back to the model, with the error it failed with most often. A world whose
   write tools never succeed passes its property tests vacuously (nothing it
   does is ever tested), so it is repaired or rejected, never accepted.

Steps 3 to 6 repeat for at most ``max_rounds`` repair rounds. A world is accepted
only when it checks clean, its sample tasks validate, its property tests find
nothing and every write tool was reached; the outcome says how many repair
rounds were used, the per-tool coverage and, if rejected, why (with the last
draft and its problems, so a rejected world can be looked at).

The model's text is never executed: it is parsed, checked, compiled by the
compiler into the usual generated package, and only that package runs.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from worldspec.compiler.api import check_source
from worldspec.compiler.model import WorldModel
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.parser import parse_module
from worldspec.llm_frontend.prompts import (
    WORLD_SIZES,
    WorldPlan,
    WorldSize,
    compiler_feedback,
    coverage_feedback,
    plan_world_messages,
    property_feedback,
    sample_task_feedback,
    structure_feedback,
    write_world_messages,
)
from worldspec.services.compile_lock import COMPILE_LOCK
from worldspec.services.model_client import LLMClient, LLMOutputError, Usage
from worldspec.services.model_diagnostics import MAX_FEEDBACK, diagnostics_for_model
from worldspec.services.world_replies import (
    extract_world_code,
    missing_code_feedback,
    repair_messages,
)

__all__ = ["RoundRecord", "WorldOptions", "WorldOutcome", "WorldVerdict", "judge_world",
           "synthesize_world", "uncovered_tools"]

@dataclass(frozen=True)
class WorldOptions:
    """How hard to try, and how thoroughly to test."""

    max_rounds: int = 4
    plan: bool = True
    #: random call sequences the property tests run, and calls per sequence
    test_examples: int = 30
    test_steps: int = 20
    test_seed: int = 0
    #: the file name the world is checked under (shown in diagnostics)
    filename: str = "world.world"
    #: the fewest sample tasks (with inline seed data) the file must hold; 0: none needed
    sample_tasks: int = 1
    #: exploration runs (seeds) at most, while some state-changing tool has not succeeded
    coverage_tries: int = 3
    #: how big the world is asked to be, and the least it must have (``WORLD_SIZES``)
    size: str = "small"


@dataclass(frozen=True)
class RoundRecord:
    """How one attempt ended: ``no code``, ``structure``, ``compile``, ``properties`` or ``ok``."""

    round: int
    stage: str
    problems: int
    codes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"round": self.round, "stage": self.stage, "problems": self.problems,
                "codes": list(self.codes)}


@dataclass
class WorldOutcome:
    """The result of synthesising one world."""

    accepted: bool
    #: the accepted world (formatted), or the last attempt when rejected
    text: str | None
    world_name: str | None
    #: repair rounds used (0: the first draft was accepted)
    rounds: int
    #: why it was rejected: a short category ("" when accepted)
    reason: str = ""
    detail: str = ""
    usage: Usage = field(default_factory=Usage)
    history: list[RoundRecord] = field(default_factory=list)
    plan: WorldPlan | None = None
    #: tool -> ``{"calls", "succeeded", "changes_state"}`` in the last exploration
    coverage: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the names of the sample tasks in ``text``
    sample_tasks: tuple[str, ...] = ()
    #: what was wrong with the last attempt (empty when accepted)
    problems: tuple[dict[str, Any], ...] = ()
    #: the stage the last attempt stopped at (``ok`` when accepted)
    stage: str = ""


@dataclass(frozen=True)
class WorldVerdict:
    """What judging found: ``stage`` ``structure``, ``compile``, ``validation``,
    ``properties``, ``coverage`` or ``ok``."""

    stage: str
    problems: tuple[dict[str, Any], ...] = ()
    world_name: str | None = None
    codes: tuple[str, ...] = ()
    coverage: dict[str, dict[str, Any]] = field(default_factory=dict)
    sample_tasks: tuple[str, ...] = ()


def uncovered_tools(coverage: dict[str, dict[str, Any]]) -> list[str]:
    """The state-changing tools that neither random calls nor a sample solution got to
    succeed (:func:`llm_frontend.coverage.unreached`)."""
    from worldspec.llm_frontend.coverage import unreached

    return unreached(coverage)


# ------------------------------------------------------------------ judging
def _problem(message: str, line: int = 0) -> dict[str, Any]:
    item: dict[str, Any] = {"code": "synth", "severity": "error", "message": message}
    if line:
        item["line"] = line
    return item


def judge_world(text: str, options: WorldOptions = WorldOptions()) -> WorldVerdict:
    """Parse, check, validate, compile and explore one world's text. Never raises for bad text."""
    sink = DiagnosticSink()
    parsed = parse_module(text, options.filename, sink)
    if not parsed.ok:
        problems = diagnostics_for_model(sink.sorted(), text)
        return WorldVerdict("compile", tuple(problems), codes=_codes(problems))
    refused = _structure(parsed.module.decls, options)
    if refused:
        return WorldVerdict("structure", tuple(refused), codes=("synth",))
    headers = [d for d in parsed.module.decls if isinstance(d, n.WorldDecl)]
    tasks = tuple(d.name.name for d in parsed.module.decls if isinstance(d, n.TaskDecl))
    result = check_source(text, options.filename)
    if not result.ok:
        problems = diagnostics_for_model(list(result.diagnostics), text)
        return WorldVerdict("compile", tuple(problems), codes=_codes(problems),
                            sample_tasks=tasks)
    name = headers[0].name.name
    small = _size_problems(result.model.worlds[name], WORLD_SIZES[options.size])
    if small:
        return WorldVerdict("structure", tuple(small), name, ("synth",), sample_tasks=tasks)
    invalid = _validate_samples(result, text)
    if invalid:
        return WorldVerdict("validation", tuple(invalid), name, _codes(invalid),
                            sample_tasks=tasks)
    findings, coverage = _explore(result, name, options)
    if findings:
        return WorldVerdict("properties", tuple(findings), name,
                            tuple(sorted({f["kind"] for f in findings})), coverage, tasks)
    missing = uncovered_tools(coverage)
    if missing:
        uncovered = tuple(_coverage_problem(tool, coverage[tool], bool(tasks))
                          for tool in missing)
        return WorldVerdict("coverage", uncovered, name, ("never succeeds",), coverage, tasks)
    return WorldVerdict("ok", (), name, coverage=coverage, sample_tasks=tasks)


def _size_problems(world: WorldModel, size: WorldSize) -> list[dict[str, Any]]:
    """What the world lacks to be as big as ``size`` asks: read-only and state-changing
    tools (as the compiler infers them) and state items."""
    read = sum(1 for tool in world.tools.values() if tool.read_only)
    write = len(world.tools) - read
    wanted = [(read, size.min_read_tools, "tools that only read"),
              (write, size.min_write_tools, "tools that change state"),
              (len(world.state), size.min_state_items, "state items (tables, sequences, "
                                                       "settings)")]
    return [_problem(f"a {size.name} world has at least {least} {what}: this one has {have}; "
                     "add more (each with its doc string, rules and seed data to succeed "
                     "from)")
            for have, least, what in wanted if have < least]


def _structure(decls: tuple[n.Decl, ...], options: WorldOptions) -> list[dict[str, Any]]:
    refused = [_problem(f"a synthesised world is one self-contained file: remove the import "
                        f"of '{d.path}'", d.span.line)
               for d in decls if isinstance(d, n.Import)]
    headers = [d for d in decls if isinstance(d, n.WorldDecl)]
    if len(headers) != 1:
        refused.append(_problem("the file must start with one `world Name \"doc\"` header"))
    tasks = [d for d in decls if isinstance(d, n.TaskDecl)]
    if options.sample_tasks == 0 and tasks:
        refused += [_problem(f"leave tasks out of the world file: remove task '{d.name.name}'",
                             d.span.line) for d in tasks]
        return refused
    if len(tasks) < options.sample_tasks:
        refused.append(_problem(
            f"after the world, write at least {options.sample_tasks} sample task(s) whose "
            f"inline `given {{ ... }}` holds the seed data (the file has {len(tasks)})"))
    for task in tasks:
        line = task.span.line
        given = [item for item in task.items if isinstance(item, n.Given)]
        if any(isinstance(item.source, str) for item in given):
            refused.append(_problem(f"task '{task.name.name}': give the seed data inline, "
                                    "`given { ... }`, not from a file", line))
        elif not given:
            refused.append(_problem(f"task '{task.name.name}' needs `given {{ ... }}` with the "
                                    "seed data", line))
        if task.solution is None or not task.solution.calls:
            refused.append(_problem(f"task '{task.name.name}' needs a `solution {{ ... }}` of "
                                    "tool calls", line))
        if not task.checks:
            refused.append(_problem(f"task '{task.name.name}' needs `check` items", line))
    return refused


def _validate_samples(result: Any, text: str) -> list[dict[str, Any]]:
    """The errors validation finds in the sample tasks (their solutions replayed)."""
    from worldspec.services.validation import validate_tasks

    problems: list[dict[str, Any]] = []
    for report in validate_tasks(result):
        problems += [p for p in diagnostics_for_model(report.problems, text)
                     if p["severity"] == "error"]
    return problems[:MAX_FEEDBACK]


def _coverage_problem(tool: str, row: dict[str, Any], seeded: bool) -> dict[str, Any]:
    calls = int(row.get("calls", 0))
    common = str(row.get("error") or "").rstrip(".")
    why = f"; it failed most often with: {common}" if common else ""
    start = "the sample tasks' data" if seeded else "an empty state (there is no seed data)"
    return {"kind": "never succeeds", "tool": tool,
            "message": f"{tool} changes the state but succeeded in none of its {calls} random "
                       f"calls from {start}{why}. Give the seed data what the tool needs to "
                       "succeed (rows in the right state for its preconditions) or fix a "
                       "precondition that can never hold."}


def _codes(problems: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> tuple[str, ...]:
    return tuple(sorted({str(p["code"]) for p in problems if p["severity"] == "error"}))


def _explore(result: Any, world: str, options: WorldOptions
             ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Findings and per-tool coverage of random calls from the sample tasks' data
    (:func:`~llm_frontend.coverage.explore_from_tasks`, ``coverage_tries`` runs at most)."""
    from worldspec.llm_frontend.coverage import explore_from_tasks
    from worldspec.services.loading import load_result

    found = explore_from_tasks(load_result(result).worlds[world],
                               examples=options.test_examples, steps=options.test_steps,
                               seed=options.test_seed, tries=options.coverage_tries,
                               limit=MAX_FEEDBACK)
    return found.findings, found.coverage


def _judge_locked(text: str, options: WorldOptions) -> WorldVerdict:
    with COMPILE_LOCK:
        return judge_world(text, options)


def _formatted(text: str, filename: str) -> str:
    """The canonical layout of an accepted world, if formatting keeps it clean."""
    from worldspec.dsl.formatter import format_source

    formatted = format_source(text, filename)
    if formatted is None or formatted == text:
        return text
    if not check_source(formatted, filename).ok:
        return text
    return formatted


# ------------------------------------------------------------------ the loop
async def synthesize_world(client: LLMClient, description: str,
                           options: WorldOptions = WorldOptions(), *,
                           usage: Usage | None = None) -> WorldOutcome:
    """Plan, write, check, test and repair one world.

    Model failures that persist (:class:`~worldspec.services.model_client.LLMRequestError`)
    propagate; everything the model gets wrong ends in a rejected outcome.
    """
    spent = usage if usage is not None else Usage()
    plan: WorldPlan | None = None
    if options.plan:
        try:
            planned = await client.chat(
                plan_world_messages(description, WORLD_SIZES[options.size]),
                json_schema=WorldPlan, usage=spent)
        except LLMOutputError as exc:
            return WorldOutcome(False, None, None, 0, "no valid plan", str(exc), spent)
        plan = planned.parsed
    base = write_world_messages(description, plan, sample_tasks=options.sample_tasks,
                                size=WORLD_SIZES[options.size])
    messages = base
    history: list[RoundRecord] = []
    last_text: str | None = None
    verdict: WorldVerdict | None = None
    for round_number in range(options.max_rounds + 1):
        reply = await client.chat(messages, usage=spent)
        code = extract_world_code(reply.text)
        if code is None:
            history.append(RoundRecord(round_number, "no code", 1))
            messages = repair_messages(base, reply.text, missing_code_feedback("`.world` file"))
            continue
        last_text = code
        verdict = await asyncio.to_thread(_judge_locked, code, options)
        history.append(RoundRecord(round_number, verdict.stage, len(verdict.problems),
                                   verdict.codes))
        if verdict.stage == "ok":
            text = await asyncio.to_thread(_formatted, code, options.filename)
            return WorldOutcome(True, text, verdict.world_name, round_number, usage=spent,
                                history=history, plan=plan, coverage=verdict.coverage,
                                sample_tasks=verdict.sample_tasks, stage="ok")
        if verdict.stage == "properties":
            feedback = property_feedback(verdict.problems)
        elif verdict.stage == "coverage":
            feedback = coverage_feedback(verdict.problems)
        elif verdict.stage == "validation":
            feedback = sample_task_feedback(verdict.problems)
        elif verdict.stage == "structure":
            feedback = structure_feedback(verdict.problems, "file")
        else:
            feedback = compiler_feedback(verdict.problems, "file")
        messages = repair_messages(base, f"```world\n{code}```", feedback)
    rounds = options.max_rounds
    if verdict is None:
        return WorldOutcome(False, None, None, rounds, "no code in the replies",
                            f"no `.world` code in {rounds + 1} replies", spent, history, plan)
    if verdict.stage in ("compile", "structure"):
        reason = f"compile errors remain after {rounds} repair rounds"
        detail = "; ".join(f"{p.get('code')}: {p.get('message')}" for p in verdict.problems[:3])
    elif verdict.stage == "validation":
        reason = f"sample tasks do not validate after {rounds} repair rounds"
        detail = "; ".join(f"{p.get('code')}: {p.get('message')}" for p in verdict.problems[:3])
    elif verdict.stage == "coverage":
        reason = f"write tools never succeed after {rounds} repair rounds"
        detail = ", ".join(str(p["tool"]) for p in verdict.problems)
    else:
        reason = f"property tests fail after {rounds} repair rounds"
        detail = "; ".join(f"{p['kind']} in {p['tool']}: {p['message']}"
                           for p in verdict.problems[:3])
    return WorldOutcome(False, last_text, verdict.world_name, rounds, reason, detail, spent,
                        history, plan, verdict.coverage, verdict.sample_tasks,
                        verdict.problems, verdict.stage)

