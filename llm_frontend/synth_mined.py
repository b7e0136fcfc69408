"""``synth tasks --mine``: mined tasks, with only the instruction written by a model.

The miner (:mod:`worldspec.services.mining`) finds candidate tasks in a world without a
model: goal, checks, frame, reference solution and difficulty. Per candidate the model
then writes only what a user would say:

1. **write** (one request): the model gets a summary of the world (its description, policy
   and tools), the rows of the start state the solution touches, the goal in plain words
   and as checks, and the values the instruction must tell; it replies with the
   instruction (and ``persona``, ``known`` and ``unknown`` with ``conversational``);
2. **validate**: the task with that instruction goes through :func:`judge_task` (the
   compiler, then :func:`~worldspec.services.validation.validate_tasks` with
   discoverability, and the instruction's id count); what fails goes back once for repair;
3. **determine** (a second, separate request): the instruction is shown with the true
   outcome among up to three other outcomes mined from the same start, shuffled, and the
   model says which one the instruction asks for. Only an instruction that picks out its
   own outcome is accepted: one that two different goal states would satisfy is not;
4. an instruction that repeats an accepted one (the same words, near enough) is dropped.

With ``batch`` > 1 (:func:`write_mined_batch`), one request writes the instructions of that
many candidates (the world's summary sent once for all of them), the failing ones go back
together for their one repair, and one request checks them all, each against its own
outcomes: a few requests per world instead of two per task.

:class:`MineReport` counts requests, tokens, accepted tasks, rejections by reason and the
tokens spent per validated task; :func:`journal_tokens_per_task` gives the same figure for
tasks written whole by ``synth tasks``, from its journal, to compare with.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from worldspec.compiler import types as t
from worldspec.compiler.api import check_specs
from worldspec.compiler.model import WorldModel
from worldspec.llm_frontend.batch import InputError
from worldspec.llm_frontend.synth_tasks import TaskOptions, TaskWorld, judge_task
from worldspec.runtime.episode import Episode
from worldspec.services.compile_lock import COMPILE_LOCK
from worldspec.services.mining import MinedTask, mine_starts
from worldspec.services.model_client import LLMClient, LLMOutputError, Message, Usage

__all__ = ["BatchChoices", "BatchInstructions", "DeterminedChoice", "MineOptions",
           "MineReport", "MinedInstruction", "MinedOutcome", "Refill", "batch_determine_messages",
           "batch_instruction_messages", "determine_messages", "instruction_messages",
           "journal_tokens_per_task", "mine_world_tasks", "write_mined_batch",
           "write_mined_task"]


@dataclass(frozen=True)
class MineOptions:
    """How many tasks to mine and write, and the limits they are held to."""

    count: int = 5
    conversational: bool = False
    seed: int = 0
    #: seeded runs of write calls drawn from each start state
    runs: int = 60
    max_calls: int = 4
    max_instruction_ids: int = 2
    #: other outcomes of the same start shown beside the true one
    distractors: int = 3
    #: candidates whose instructions one request writes (and one request then checks): the
    #: world's summary is sent once for all of them instead of once per task
    batch: int = 1
    #: of ``count``, how many are conversational (the last ones); None: all of them with
    #: ``conversational``, none without
    conversational_count: int | None = None


# ------------------------------------------------------------------ prompts
class MinedInstruction(BaseModel):
    """What the model writes for a mined task."""

    instruction: str = Field(description="what the user asks, in their own words")
    persona: str = Field(default="", description="who the user is and how they talk "
                                                 "(conversational tasks)")
    known: str = Field(default="", description="what the user knows and may tell "
                                               "(conversational tasks)")
    unknown: str = Field(default="", description="what the user does not know "
                                                 "(conversational tasks)")


class DeterminedChoice(BaseModel):
    """The outcome an instruction asks for."""

    outcome: str = Field(description="the letter of the outcome the instruction asks for")


class BatchInstruction(MinedInstruction):
    """One task's request in a batch, by the task's id in the request."""

    id: str = Field(description="the task's id, as given (T1, T2, ...)")


class BatchInstructions(BaseModel):
    """What the model writes for a batch of mined tasks."""

    tasks: list[BatchInstruction] = Field(description="one entry per task, by its id")


class BatchChoice(DeterminedChoice):
    """The outcome one request of a batch asks for."""

    id: str = Field(description="the request's id, as given (T1, T2, ...)")


class BatchChoices(BaseModel):
    """The outcomes the requests of a batch ask for."""

    answers: list[BatchChoice] = Field(description="one entry per request, by its id")


_WRITE_SYSTEM = """\
You write the user's request for a task in a stateful tool environment. The task is already \
fixed: its start state, the exact goal state (the changes) and the reference solution. You \
write only what the user says, so that an agent that follows it reaches exactly that goal.

Rules:
- Ask for every change of the goal, with the values it sets, and nothing else: an agent that \
follows the request must reach this goal and no other.
- Name the values listed under "must tell" word for word, each for the call argument it is \
listed with: no tool shows them to the agent.
- Ids: an id is a row's key (its `key` field, a code such as "L002" or "ST03") written in \
the request as a word of its own; a key counts only if it is 3 characters or longer with a \
digit in it. Name at most {max_ids} ids. The values under "must tell" never count (the \
user has them and must say them), nor do names, titles, emails, dates, amounts or statuses. \
Describe every other row by what a user knows of it (a name, a title, an email, a date), as \
listed under the rows the task touches, the rows they refer to and the session, so the \
agent looks its id up.
- Write as the user, in the first person; no tool names, no mention of checks or states.
{conversational}
Reply with one JSON object: {{"instruction": "..."{fields}}}."""

_CONVERSATIONAL_RULES = """\
- A conversational task (each task says whether it is one): also write `persona` (who the \
user is and how they talk), `known` (what the user knows and tells when asked: every value \
under "must tell") and `unknown` (what the user does not know)."""

#: what each task's brief says it is, and what to write for it
_KIND_LINES = {
    True: "Conversational: write `instruction`, `persona`, `known` (every value under "
          "\"must tell\") and `unknown`.",
    False: "Not conversational: write `instruction` only.",
}

_DETERMINE_SYSTEM = """\
You check a user's request against the outcomes of a stateful tool environment. Each \
outcome lists the changes it makes to the same start state. Say which single outcome the \
request asks for. Reply with one JSON object: {"outcome": "<letter>"}."""

_BATCH_NOTE = """\
Several tasks of the same world follow, each with its id (T1, T2, ...); each is separate \
(its own start state, goal and user). Write one request per task, following the rules for \
each on its own."""

_BATCH_DETERMINE_SYSTEM = """\
You check users' requests against the outcomes of a stateful tool environment. Each request \
has its id (T1, T2, ...) and its own lettered outcomes, each listing the changes it makes to \
the same start state. For each request, say which single one of its outcomes it asks for. \
Reply with one JSON object: {"answers": [{"id": "T1", "outcome": "<letter>"}, ...]}."""


def _world_summary(world_class: type[Episode], model: WorldModel) -> str:
    lines = [f"World {model.name}: {model.doc or ''}".rstrip()]
    if model.policy:
        lines.append(f"Policy: {model.policy}")
    lines.append("Tools:")
    for name, spec in world_class.TOOLS.items():
        params = ", ".join(p.name for p in spec.params)
        kind = "reads" if spec.read_only else "changes state"
        doc = " ".join(spec.doc.split())
        lines.append(f"- {name}({params}) [{kind}]: {doc}")
    return "\n".join(lines)


def _row_line(table: str, row: Mapping[str, Any]) -> str:
    return f"{table}: {json.dumps(row, ensure_ascii=False)}"


def _unwrapped(typ: t.Type) -> t.Type:
    """A field's type without ``?`` and one list around it (the type of what it names)."""
    if isinstance(typ, t.Optional):
        typ = typ.inner
    return typ.element if isinstance(typ, t.ListOf) else typ


def _references(model: WorldModel, table: str) -> dict[str, str]:
    """The fields of ``table``'s rows that name rows (an entity, optional or in a list):
    field -> the table holding the rows named."""
    state = model.state.get(table)
    entity = model.records.get(state.entity or "") if state is not None else None
    found: dict[str, str] = {}
    for info in entity.fields.values() if entity is not None else ():
        typ = _unwrapped(info.type)
        if isinstance(typ, t.Named) and typ.kind == "entity":
            holder = model.table_of(typ.name)
            if holder is not None:
                found[info.name] = holder.name
    return found


def _name_fields(model: WorldModel, table: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """What a user calls a row: its key and its text fields (names, titles, emails)."""
    state = model.state.get(table)
    entity = model.records.get(state.entity or "") if state is not None else None
    if entity is None:
        return dict(row)
    return {name: value for name, value in row.items()
            if (info := entity.fields.get(name)) is not None and
            (info.is_key or (_is_text(_unwrapped(info.type)) and isinstance(value, str)))}


def _is_text(typ: t.Type) -> bool:
    return isinstance(typ, t.Prim) and typ.name == "str"


def _keys_in(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [item for item in value if isinstance(item, str | int)]
    return [value] if isinstance(value, str | int) and not isinstance(value, bool) else []


def _relevant_rows(task: MinedTask, world_class: type[Episode], model: WorldModel
                   ) -> tuple[list[str], list[str], list[str]]:
    """What the writer sees of the start state, as lines: the rows the solution names or
    the goal changes (whole); the rows those rows and the goal's new values refer to, one
    hop, by what a user calls them; and the session (the rows state values that are not
    tables hold: who is signed in, say), by what a user calls them."""
    episode = world_class(data=task.data)
    wanted: set[str] = {str(c.key) for c in task.changes if c.key is not None}
    for _, args in task.solution:
        wanted |= {str(v) for v in args.values() if isinstance(v, str | int)}
    touched: list[str] = []
    sources: list[tuple[str, str, Mapping[str, Any]]] = []
    for name, rows in episode.tables.items():
        for key, row in rows.rows.items():
            if str(key) in wanted:
                exported = row.export()
                touched.append(_row_line(name, exported))
                sources.append((name, f"{name} {json.dumps(key)}", exported))
    for change in task.changes:
        if change.kind in ("insert", "set"):
            label = f"{change.target} {json.dumps(change.key)}" if change.kind == "set" \
                else f"the new {change.target} row"
            sources.append((change.target, label, change.fields))
    shown = set(touched)
    referred: list[str] = []
    for table, label, row in sources:
        for field_name, holder in _references(model, table).items():
            for key in _keys_in(row.get(field_name)):
                target = episode.tables[holder].rows.get(key)
                line = _row_line(holder, target.export()) if target is not None else ""
                if target is None or line in shown:
                    continue
                shown.add(line)
                names = _name_fields(model, holder, target.export())
                referred.append(f"{holder} {json.dumps(key)} (the {field_name} of {label}): "
                                f"{json.dumps(names, ensure_ascii=False)}")
    session: list[str] = []
    values = episode.state.export()
    for name, info in model.state.items():
        typ = _unwrapped(info.type)
        holder_state = model.table_of(typ.name) if info.kind == "value" and \
            isinstance(typ, t.Named) and typ.kind == "entity" else None
        value = values.get(name)
        target = episode.tables[holder_state.name].rows.get(value) \
            if holder_state is not None and isinstance(value, str | int) else None
        if holder_state is None or target is None:
            continue  # not a row the session holds (a setting, a counter, nobody signed in)
        doc = f" ({' '.join(info.doc.split())})" if info.doc else ""
        names = _name_fields(model, holder_state.name, target.export())
        session.append(f"{name} = {json.dumps(value, ensure_ascii=False)}{doc}: "
                       f"{holder_state.name} {json.dumps(names, ensure_ascii=False)}")
    return touched, referred, session


def instruction_messages(task: MinedTask, world_class: type[Episode], model: WorldModel, *,
                         conversational: bool, max_ids: int) -> list[Message]:
    """Ask for the instruction (and persona, known, unknown) of a mined task."""
    fields = ', "persona": "...", "known": "...", "unknown": "..."' if conversational else ""
    system = _WRITE_SYSTEM.format(max_ids=max_ids, fields=fields,
                                  conversational=_CONVERSATIONAL_RULES if conversational
                                  else "")
    brief = _task_brief(task, world_class, model, conversational=conversational)
    user = f"{_world_summary(world_class, model)}\n\n{brief}\n\nWrite the user's request."
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def determine_messages(instruction: str, outcomes: Sequence[Sequence[str]]) -> list[Message]:
    """Ask which of ``outcomes`` (each its change lines) ``instruction`` asks for; they are
    lettered A, B, C, ... in the order given."""
    listed = "\n\n".join(f"Outcome {chr(65 + i)}:\n" + "\n".join(f"- {line}" for line in lines)
                         for i, lines in enumerate(outcomes))
    user = f"The request:\n{instruction}\n\n{listed}\n\nWhich outcome does the request ask for?"
    return [{"role": "system", "content": _DETERMINE_SYSTEM}, {"role": "user", "content": user}]


def _told_lines(task: MinedTask) -> list[str]:
    """Each value the request must tell, with the call argument of the reference solution
    it is (the writer sees what it is for)."""
    lines = []
    for value, tool, param in task.told_uses():
        use = f"the `{param}` argument of {tool}" if tool else "a value of the goal"
        lines.append(f"- {json.dumps(value, ensure_ascii=False)}: {use}")
    return lines


def _task_brief(task: MinedTask, world_class: type[Episode], model: WorldModel, *,
                conversational: bool) -> str:
    """What the writer is told of one task: whether it is conversational, the rows it
    touches (and the rows they refer to, and the session), its goal, its checks and the
    values the request must tell, each with the call argument it is."""
    goal = "\n".join(f"- {line}" for line in task.goal_words())
    checks = "\n".join(f"- {c.condition}" for c in task.checks)
    touched, referred, session = _relevant_rows(task, world_class, model)
    rows = "\n".join(touched) or "(none)"
    told = ", ".join(json.dumps(v, ensure_ascii=False) for v in task.told) or "(nothing)"
    parts = [_KIND_LINES[conversational],
             f"The start state's rows this task touches:\n{rows}"]
    if referred:
        parts.append("The rows they refer to, by what a user calls them:\n"
                     + "\n".join(f"- {line}" for line in referred))
    if session:
        parts.append("The session at the start (who is signed in):\n"
                     + "\n".join(f"- {line}" for line in session))
    parts += [f"The goal (what must have changed when the task is done):\n{goal}",
              f"The checks, in WorldSpec:\n{checks}",
              "\n".join([f"Must tell: {told}", *_told_lines(task)])]
    return "\n\n".join(parts)


def batch_instruction_messages(tasks: Sequence[MinedTask], world_class: type[Episode],
                               model: WorldModel, *, conversational: bool,
                               max_ids: int) -> list[Message]:
    """Ask for the instructions of several mined tasks of one world in one request: the
    world's summary once, then each task by its id (``T1``, ``T2``, ... in order)."""
    fields = ', "persona": "...", "known": "...", "unknown": "..."' if conversational else ""
    system = _WRITE_SYSTEM.format(max_ids=max_ids, fields=fields,
                                  conversational=_CONVERSATIONAL_RULES if conversational
                                  else "")
    system = system.rsplit("\nReply with", 1)[0] + (
        f"\n{_BATCH_NOTE}\nReply with one JSON object: "
        f'{{"tasks": [{{"id": "T1", "instruction": "..."{fields}}}, ...]}}.')
    briefs = "\n\n".join(
        f"Task T{i + 1}:\n{_task_brief(task, world_class, model, conversational=conversational)}"
        for i, task in enumerate(tasks))
    user = (f"{_world_summary(world_class, model)}\n\n{briefs}\n\nWrite the user's request "
            f"of each of the {len(tasks)} tasks.")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def batch_determine_messages(requests: Sequence[tuple[str, str, Sequence[Sequence[str]]]]
                             ) -> list[Message]:
    """Ask which outcome each request asks for: ``requests`` are (id, instruction, outcomes),
    each request's outcomes lettered A, B, C, ... in the order given."""
    parts = []
    for ident, instruction, outcomes in requests:
        listed = "\n\n".join(
            f"Outcome {chr(65 + i)}:\n" + "\n".join(f"- {line}" for line in lines)
            for i, lines in enumerate(outcomes))
        parts.append(f"Request {ident}:\n{instruction}\n\n{listed}")
    user = "\n\n---\n\n".join(parts) + \
        "\n\nFor each request, which of its outcomes does it ask for?"
    return [{"role": "system", "content": _BATCH_DETERMINE_SYSTEM},
            {"role": "user", "content": user}]


def _repair_messages(base: Sequence[Message], reply: str, problems: Sequence[str]) -> list[Message]:
    listed = "\n".join(f"- {p}" for p in problems)
    return [*base, {"role": "assistant", "content": reply},
            {"role": "user", "content": "The task with that request does not validate:\n"
                                        f"{listed}\n\nWrite the request again (the same JSON "
                                        "object), fixing these."}]


# ------------------------------------------------------------------ one task
@dataclass
class MinedOutcome:
    """What became of one mined candidate."""

    candidate: str
    accepted: bool
    #: the accepted task's text (or the last one tried)
    text: str | None = None
    instruction: str = ""
    reason: str = ""
    detail: str = ""
    usage: Usage = field(default_factory=Usage)
    difficulty: dict[str, Any] = field(default_factory=dict)
    conversational: bool = False


def _normalised_words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z0-9]+", text.casefold()))


async def write_mined_task(client: LLMClient, world: TaskWorld, world_class: type[Episode],
                           model: WorldModel, task: MinedTask, others: Sequence[MinedTask],
                           options: MineOptions, rng: random.Random) -> MinedOutcome:
    """Write, validate (one repair) and check the instruction of one mined task. A reply
    that never parses rejects the task; a server that cannot be reached raises
    :class:`~worldspec.services.model_client.LLMRequestError` (the run stops)."""
    spent = Usage()
    outcome = MinedOutcome(task.name, False, usage=spent,
                           difficulty={**task.difficulty.to_json(), "linked": task.linked})
    base = instruction_messages(task, world_class, model,
                                conversational=options.conversational,
                                max_ids=options.max_instruction_ids)
    judge_options = TaskOptions(conversational=options.conversational, min_calls=1,
                                max_instruction_ids=options.max_instruction_ids,
                                told=frozenset(task.told))
    messages = base
    for attempt in range(2):
        try:
            reply = await client.chat(messages, json_schema=MinedInstruction, usage=spent)
        except LLMOutputError as exc:
            outcome.reason, outcome.detail = "no usable reply", str(exc)
            return outcome
        written = reply.parsed
        text = task.text(written.instruction, persona=written.persona or None,
                         known=written.known or None, unknown=written.unknown or None)
        outcome.text, outcome.instruction = text, written.instruction
        verdict = await asyncio.to_thread(_judge_locked, world, text, judge_options)
        if verdict.stage == "ok":
            break
        problems = [str(p.get("message")) for p in verdict.problems]
        if attempt == 1:
            outcome.reason = "the task does not validate after one repair"
            outcome.detail = "; ".join(problems[:3])
            return outcome
        messages = _repair_messages(base, reply.text, problems)
    if not others:
        outcome.reason = "no other outcome from the same start to tell it from"
        return outcome
    shown = [task, *rng.sample(list(others), min(options.distractors, len(others)))]
    rng.shuffle(shown)
    try:
        choice = await client.chat(
            determine_messages(outcome.instruction, [t.goal_words() for t in shown]),
            json_schema=DeterminedChoice, usage=spent)
    except LLMOutputError as exc:
        outcome.reason, outcome.detail = "no usable reply", str(exc)
        return outcome
    letter = choice.parsed.outcome.strip().upper()[:1]
    truth = chr(65 + shown.index(task))
    if letter != truth:
        outcome.reason = "the instruction does not determine the goal"
        outcome.detail = f"the judge picked outcome {letter or '?'}, not {truth}"
        return outcome
    outcome.accepted = True
    return outcome


async def write_mined_batch(client: LLMClient, world: TaskWorld, world_class: type[Episode],
                            model: WorldModel, tasks: Sequence[MinedTask],
                            others: Mapping[str, Sequence[MinedTask]], options: MineOptions,
                            rng: random.Random, spent: Usage) -> list[MinedOutcome]:
    """:func:`write_mined_task` for several candidates at once: one request writes their
    instructions, the tasks are validated one by one, those that fail go back together for
    one repair, and one request checks that each instruction picks out its own outcome.
    ``others`` are each candidate's other outcomes from the same start (by name). The
    requests' tokens go to ``spent``; each outcome's are its share of them."""
    outcomes = {task.name: MinedOutcome(task.name, False, difficulty={
        **task.difficulty.to_json(), "linked": task.linked}) for task in tasks}
    ids = {f"T{i + 1}": task for i, task in enumerate(tasks)}
    base = batch_instruction_messages(tasks, world_class, model,
                                      conversational=options.conversational,
                                      max_ids=options.max_instruction_ids)
    judge_options = TaskOptions(conversational=options.conversational, min_calls=1,
                                max_instruction_ids=options.max_instruction_ids)
    messages = base
    pending = dict(ids)
    passed: dict[str, MinedTask] = {}
    for attempt in range(2):
        try:
            reply = await client.chat(messages, json_schema=BatchInstructions, usage=spent)
        except LLMOutputError as exc:
            for task in pending.values():
                outcomes[task.name].reason = "no usable reply"
                outcomes[task.name].detail = str(exc)
            break
        written = {entry.id.strip(): entry for entry in reply.parsed.tasks}
        problems: dict[str, list[str]] = {}
        for ident, task in pending.items():
            outcome = outcomes[task.name]
            entry = written.get(ident)
            if entry is None:
                problems[ident] = [f"the reply has no entry for task {ident}"]
                outcome.reason = "no usable reply"
                outcome.detail = f"the reply has no entry for task {ident}"
                continue
            text = task.text(entry.instruction, persona=entry.persona or None,
                             known=entry.known or None, unknown=entry.unknown or None)
            outcome.text, outcome.instruction = text, entry.instruction
            verdict = await asyncio.to_thread(_judge_locked, world, text,
                                              replace(judge_options, told=frozenset(task.told)))
            if verdict.stage == "ok":
                passed[ident] = task
                outcome.reason = outcome.detail = ""
            else:
                problems[ident] = [str(p.get("message")) for p in verdict.problems]
                outcome.reason = "the task does not validate after one repair"
                outcome.detail = "; ".join(problems[ident][:3])
        if not problems or attempt == 1:
            break
        pending = {ident: ids[ident] for ident in problems}
        listed = "\n\n".join(f"Task {ident}:\n" + "\n".join(f"- {p}" for p in found)
                              for ident, found in problems.items())
        messages = [*base, {"role": "assistant", "content": reply.text},
                    {"role": "user", "content": "These tasks with those requests do not "
                                                f"validate:\n{listed}\n\nWrite the requests "
                                                "of these tasks again (the same JSON object, "
                                                "only these tasks), fixing these."}]
    asked: list[tuple[str, str, list[MinedTask]]] = []
    for ident, task in passed.items():
        rivals = list(others.get(task.name, ()))
        if not rivals:
            outcomes[task.name].reason = "no other outcome from the same start to tell it from"
            continue
        shown = [task, *rng.sample(rivals, min(options.distractors, len(rivals)))]
        rng.shuffle(shown)
        asked.append((ident, outcomes[task.name].instruction, shown))
    if asked:
        try:
            choice = await client.chat(
                batch_determine_messages([(ident, instruction, [t.goal_words() for t in shown])
                                          for ident, instruction, shown in asked]),
                json_schema=BatchChoices, usage=spent)
            answers = {a.id.strip(): a.outcome.strip().upper()[:1]
                       for a in choice.parsed.answers}
        except LLMOutputError as exc:
            answers = {}
            for ident, _, _ in asked:
                outcomes[ids[ident].name].detail = str(exc)
        for ident, _, shown in asked:
            task = ids[ident]
            outcome = outcomes[task.name]
            letter = answers.get(ident)
            truth = chr(65 + shown.index(task))
            if letter is None:
                outcome.reason = "no usable reply"
                outcome.detail = outcome.detail or f"the judge gave no answer for {ident}"
            elif letter != truth:
                outcome.reason = "the instruction does not determine the goal"
                outcome.detail = f"the judge picked outcome {letter or '?'}, not {truth}"
            else:
                outcome.accepted = True
    # each outcome's share of the batch's requests and tokens (the first ones take the
    # remainders), so that the outcomes' usages add up to the batch's exactly
    share = len(tasks)
    for i, outcome in enumerate(outcomes.values()):
        outcome.usage = Usage(**{
            name: getattr(spent, name) // share + (i < getattr(spent, name) % share)
            for name in ("requests", "prompt_tokens", "completion_tokens", "retries",
                         "cached_tokens", "replayed_requests", "replayed_tokens")})
    return [outcomes[task.name] for task in tasks]


def _judge_locked(world: TaskWorld, text: str, options: TaskOptions) -> Any:
    with COMPILE_LOCK:
        return judge_task(world, text, set(world.own_tasks), options)


# ------------------------------------------------------------------ a world
@dataclass
class MineReport:
    """One ``synth tasks --mine`` run over a world."""

    world: str
    candidates: int = 0
    outcomes: list[MinedOutcome] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    @property
    def accepted(self) -> list[MinedOutcome]:
        return [o for o in self.outcomes if o.accepted]

    @property
    def rejected(self) -> Counter[str]:
        return Counter(o.reason for o in self.outcomes if not o.accepted)

    @property
    def tokens_per_task(self) -> float | None:
        """Tokens spent per accepted (validated and determined) task."""
        count = len(self.accepted)
        return self.usage.total_tokens / count if count else None

    def to_json(self) -> dict[str, Any]:
        return {"world": self.world, "candidates": self.candidates,
                "written": len(self.outcomes), "accepted": len(self.accepted),
                "rejected": dict(self.rejected), "usage": self.usage.to_json(),
                "tokens_per_task": self.tokens_per_task,
                "tasks": [{"candidate": o.candidate, "accepted": o.accepted,
                           "instruction": o.instruction, "reason": o.reason,
                           "detail": o.detail, "difficulty": o.difficulty,
                           "conversational": o.conversational,
                           "tokens": o.usage.total_tokens} for o in self.outcomes]}

    def render_text(self) -> str:
        per = self.tokens_per_task
        lines = [f"{self.world}: {self.candidates} candidate(s) mined, {len(self.outcomes)} "
                 f"written, {len(self.accepted)} accepted",
                 f"requests: {self.usage.requests}, tokens: {self.usage.total_tokens} "
                 f"({self.usage.prompt_tokens} prompt, {self.usage.completion_tokens} "
                 "completion)",
                 "tokens per validated task: " + (f"{per:.0f}" if per is not None else "-")]
        for reason, count in sorted(self.rejected.items()):
            lines.append(f"rejected ({count}): {reason}")
        if not self.candidates:
            lines.append("nothing to mine: no task of the world gives a start state whose "
                         "state-changing calls succeed (mining starts from the data of the "
                         "world's own tasks)")
        return "\n".join(lines) + "\n"


def load_mining_world(path: Path) -> tuple[WorldModel, type[Episode]]:
    """The world of a file, checked and compiled (:class:`InputError` when it is not one)."""
    from worldspec.services.loading import load_result

    with COMPILE_LOCK:
        result = check_specs([path])
        worlds = list(result.model.worlds.values())
        if not result.ok or len(worlds) != 1:
            raise InputError(f"'{path}' must check clean and define one world")
        return worlds[0], load_result(result).worlds[worlds[0].name]


def _pick(candidates: Sequence[MinedTask], count: int) -> list[MinedTask]:
    """``count`` candidates spread over the start states: those whose writes make one errand
    (:attr:`MinedTask.linked`) first, the hardest first."""
    ranked = sorted(candidates, key=lambda c: (not c.linked, -c.difficulty.score, c.name))
    by_start: dict[str, list[MinedTask]] = {}
    for candidate in ranked:
        by_start.setdefault(candidate.start, []).append(candidate)
    picked: list[MinedTask] = []
    while len(picked) < count and any(by_start.values()):
        for queue in by_start.values():
            if queue and len(picked) < count:
                picked.append(queue.pop(0))
    return picked


async def _write_group(client: LLMClient, world: TaskWorld, world_class: type[Episode],
                       model: WorldModel, candidates: Sequence[MinedTask],
                       picked: Sequence[MinedTask], options: MineOptions,
                       slots: asyncio.Semaphore, offset: int
                       ) -> tuple[list[MinedOutcome], Usage]:
    """Write the instructions of ``picked`` in one setting: a request per task, or with
    ``options.batch`` > 1 a request per batch. Each outcome's usage is its own requests' or
    its share of its batch's; the usage returned is the group's requests' exactly."""
    others = {t.name: [c for c in candidates if c.start == t.start and c is not t]
              for t in picked}

    async def one(index: int, task: MinedTask) -> tuple[list[MinedOutcome], Usage]:
        async with slots:
            outcome = await write_mined_task(client, world, world_class, model, task,
                                             others[task.name], options,
                                             random.Random(options.seed * 7919 + index))
        return [outcome], outcome.usage

    async def batch(index: int, group: Sequence[MinedTask]) -> tuple[list[MinedOutcome], Usage]:
        spent = Usage()
        async with slots:
            outcomes = await write_mined_batch(client, world, world_class, model, group,
                                               others, options,
                                               random.Random(options.seed * 7919 + index),
                                               spent)
        return outcomes, spent

    if options.batch > 1:
        size = options.batch
        runs = [batch(offset + i, picked[start:start + size])
                for i, start in enumerate(range(0, len(picked), size))]
    else:
        runs = [one(offset + i, task) for i, task in enumerate(picked)]
    total = Usage()
    outcomes: list[MinedOutcome] = []
    for part, spent in await asyncio.gather(*runs):
        outcomes += part
        total.add(spent)
    for outcome in outcomes:
        outcome.conversational = options.conversational
    return outcomes, total


@dataclass(frozen=True)
class Refill:
    """Slots of an earlier mining of a world to fill again (``--retry-rejected``): how many
    plain and conversational tasks, the candidates the earlier run accepted (never taken
    again) and rejected (taken again only when no fresh one is left), and the instructions it
    accepted (a new one repeating them is a near-duplicate)."""

    plain: int
    conversational: int
    kept: frozenset[str] = frozenset()
    tried: frozenset[str] = frozenset()
    accepted: tuple[str, ...] = ()


async def mine_world_tasks(client: LLMClient, world: TaskWorld, options: MineOptions,
                           concurrency: int = 4, *,
                           slots: asyncio.Semaphore | None = None,
                           refill: Refill | None = None) -> MineReport:
    """Mine candidates from the world's own tasks' start states and write ``options.count``
    of them (the hardest, spread over the starts), at most ``concurrency`` requests at once
    (or as many as ``slots``, shared with other worlds mined at the same time, allows).
    With ``refill``, write that many candidates the earlier run did not take instead."""
    model, world_class = await asyncio.to_thread(load_mining_world, world.path)
    candidates = await asyncio.to_thread(
        mine_starts, model, world_class,
        {name: spec.data for name, spec in world_class.TASKS.items()},
        seed=options.seed, runs=options.runs, max_calls=options.max_calls)
    report = MineReport(world.name, len(candidates))
    if not candidates:
        return report
    if slots is None:
        slots = asyncio.Semaphore(max(1, concurrency))

    if refill is None:
        picked = _pick(candidates, options.count)
        talks = (options.conversational_count if options.conversational_count is not None
                 else len(picked) if options.conversational else 0)
        split = max(0, len(picked) - talks)
    else:
        ranked = [c for c in _pick(candidates, len(candidates)) if c.name not in refill.kept]
        fresh = [c for c in ranked if c.name not in refill.tried] + \
            [c for c in ranked if c.name in refill.tried]
        picked = fresh[:refill.plain + refill.conversational]
        split = min(refill.plain, len(picked))
    # the last ``talks`` of the picked candidates are written as conversational tasks
    groups = [(group, replace(options, conversational=talk))
              for group, talk in ((picked[:split], False), (picked[split:], True)) if group]
    outcomes: list[MinedOutcome] = []
    for group, setting in groups:
        written, spent = await _write_group(client, world, world_class, model, candidates,
                                            group, setting, slots,
                                            offset=split if setting.conversational else 0)
        outcomes += written
        report.usage.add(spent)
    seen = [_normalised_words(text) for text in (refill.accepted if refill else ())]
    for outcome in outcomes:
        if outcome.accepted:
            words = _normalised_words(outcome.instruction)
            if any(len(words & other) >= 0.9 * max(len(words | other), 1) for other in seen):
                outcome.accepted = False
                outcome.reason = "a near-duplicate of an accepted instruction"
            else:
                seen.append(words)
        report.outcomes.append(outcome)
    return report


def journal_tokens_per_task(path: str | Path) -> tuple[int, float] | None:
    """From a ``synth tasks`` journal: how many tasks were accepted and the tokens spent per
    accepted task (all items' tokens, rejected ones included), or None without any."""
    accepted = 0
    tokens = 0
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if not isinstance(record, Mapping):
            continue
        usage = record.get("usage")
        if isinstance(usage, Mapping) and isinstance(usage.get("total_tokens"), int):
            tokens += usage["total_tokens"]
        accepted += record.get("status") == "accepted"
    return (accepted, tokens / accepted) if accepted else None
