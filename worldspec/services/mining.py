"""Task mining: candidate tasks from a world's start state, without a model.

From a start state (a task's ``given`` data) :func:`mine_tasks` draws runs of
state-changing calls that all succeed (:func:`~worldspec.testing.mining.draw_write_runs`)
and makes each a candidate task:

- the **reference solution** is the run's writes, each preceded by the reads that show
  every value it names (the discoverability rule,
  :mod:`~worldspec.services.discoverability`): a read whose argument is already shown, a
  read without arguments, or a read by a value of the row (an email, a name) that the
  instruction must then tell; a value no read shows is told by the instruction;
- the **goal** is the diff of the state after the solution against the start, and the
  **checks** say exactly that (``loans["L002"].returned_on == date("2026-05-20")``; an
  inserted row as ``exists r in loans: r.member == "M003" and ...`` without its generated
  key; a deleted one as ``not (exists r in holds: r.id == "H001")``) with a **frame**
  (``only changes ...``) naming exactly the tables and fields that changed;
- its **difficulty**: calls, distinct tools, reads needed, and the failures a careless agent
  meets (:func:`~worldspec.testing.mining.careless_failures`).

Candidates with the same tools and the same changed paths are one (the first is kept).
Each is rendered as a ``task`` block with a placeholder instruction (:meth:`MinedTask.text`)
and :func:`validate_mined` runs them through the validation ``worldspec tasks`` runs
(:func:`~worldspec.services.validation.validate_tasks`, discoverability included).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldspec.compiler import types as t
from worldspec.compiler.api import check_source
from worldspec.compiler.model import StateInfo, ToolInfo, WorldModel
from worldspec.dsl import nodes as n
from worldspec.dsl.formatter import format_source, quote_string
from worldspec.runtime.episode import Episode
from worldspec.runtime.values import quote
from worldspec.services.discoverability import ShownText, unseen_values
from worldspec.services.validation import TaskReport, set_aside_broken_tasks, validate_tasks
from worldspec.testing.explore import Call
from worldspec.testing.mining import WriteRun, careless_failures, draw_write_runs

__all__ = ["DIFFICULTY_BANDS", "PLACEHOLDER_INSTRUCTION", "Change", "Difficulty", "MinedCheck",
           "MinedTask", "clock_bound", "derive_checks", "derive_frame", "goal_changes",
           "linked_writes", "literal", "mine_starts", "mine_tasks", "solution_difficulty",
           "validate_mined"]

#: how many reads deep a key is looked for (a read by a key that an earlier read shows)
_READ_HOPS = 2

#: what a mined task's instruction says until a model writes one
PLACEHOLDER_INSTRUCTION = "[mined task: the instruction is still to be written]"


# ------------------------------------------------------------------ literals
def _text_literal(value: Any, typ: Any, world: WorldModel) -> str | None:
    return quote_string(value) if isinstance(value, str) else None


def _int_literal(value: Any, typ: Any, world: WorldModel) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return str(int(value)) if float(value).is_integer() else None


def _float_literal(value: Any, typ: Any, world: WorldModel) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    text = repr(float(value))
    return text if text not in ("inf", "-inf", "nan") else None


def _number_literal(value: Any, typ: Any, world: WorldModel) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _float_literal(value, typ, world)


def _bool_literal(value: Any, typ: Any, world: WorldModel) -> str | None:
    return ("true" if value else "false") if isinstance(value, bool) else None


def _parsed(builtin: str) -> Callable[[Any, Any, WorldModel], str | None]:
    def render(value: Any, typ: Any, world: WorldModel) -> str | None:
        return f"{builtin}({quote_string(value)})" if isinstance(value, str) else None

    return render


#: primitive type name -> how a value of it is written in a check or a solution call;
#: a type without a row (``json``, ``duration``) is not written
_PRIM_LITERALS: dict[str, Callable[[Any, Any, WorldModel], str | None]] = {
    "str": _text_literal, "int": _int_literal, "float": _float_literal,
    "number": _number_literal, "bool": _bool_literal, "date": _parsed("date"),
    "datetime": _parsed("datetime"),
}


def _prim(value: Any, typ: t.Prim, world: WorldModel) -> str | None:
    render = _PRIM_LITERALS.get(typ.name)
    return render(value, typ, world) if render is not None else None


def _optional(value: Any, typ: t.Optional, world: WorldModel) -> str | None:
    return "none" if value is None else literal(value, typ.inner, world)


def _list(value: Any, typ: t.ListOf, world: WorldModel) -> str | None:
    if not isinstance(value, list | tuple):
        return None
    items = [_inner_literal(item, typ.element, world) for item in value]
    return None if any(i is None for i in items) else "[" + ", ".join(map(str, items)) + "]"


def _map(value: Any, typ: t.MapOf, world: WorldModel) -> str | None:
    if not isinstance(value, Mapping) or not value:
        return None
    parts = []
    for key, item in value.items():
        key_text = literal(key, typ.key, world)
        item_text = _inner_literal(item, typ.value, world)
        if key_text is None or item_text is None:
            return None
        parts.append(f"{key_text}: {item_text}")
    return "{" + ", ".join(parts) + "}"


def _named(value: Any, typ: t.Named, world: WorldModel) -> str | None:
    if typ.kind == "enum":
        enum = world.enums.get(typ.name)
        member = next((m for m in enum.members.values() if m.value == value), None) \
            if enum is not None else None
        return f"{typ.name}.{member.name}" if member is not None else None
    if typ.kind == "entity":
        if isinstance(value, str):
            return quote_string(value)
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else None
    if typ.kind == "record" and isinstance(value, Mapping):
        record = world.records.get(typ.name)
        if record is None:
            return None
        parts = []
        for name, item in value.items():
            info = record.fields.get(str(name))
            text = _inner_literal(item, info.type, world) if info is not None else None
            if text is None:
                return None
            parts.append(f"{name}: {text}")
        return f"{typ.name}({', '.join(parts)})"
    return None


def _row_lookup(value: Any, typ: t.Type, world: WorldModel) -> str | None:
    """An entity inside a list, a map or a record as the row it names, ``items["F01"]``:
    there a key is not a row (only a call's argument and a comparison take the key for the
    row), and a table holding the entity's rows is the one expression of its type."""
    inner = typ.inner if isinstance(typ, t.Optional) else typ
    if not (isinstance(inner, t.Named) and inner.kind == "entity") or value is None:
        return None
    table = world.table_of(inner.name)
    key = _named(value, inner, world)
    return f"{table.name}[{key}]" if table is not None and key is not None else None


def _inner_literal(value: Any, typ: t.Type, world: WorldModel) -> str | None:
    """``value`` as an element or a field of a bigger literal (an entity as its row)."""
    return _row_lookup(value, typ, world) or literal(value, typ, world)


_LITERALS: dict[type, Callable[[Any, Any, WorldModel], str | None]] = {
    t.Prim: _prim, t.Optional: _optional, t.ListOf: _list, t.MapOf: _map, t.Named: _named,
}


def literal(value: Any, typ: t.Type, world: WorldModel) -> str | None:
    """``value`` (as exported or passed to a tool) as a WorldSpec expression of type ``typ``:
    ``date("2026-05-20")``, ``HoldStatus.active``, ``"M003"`` for an entity; None where
    the type has no literal form here (``json``, ``duration``, sets)."""
    render = _LITERALS.get(type(typ))
    return render(value, typ, world) if render is not None else None


def _data_text(value: Any) -> str:
    """Plain JSON data as a ``given`` data literal."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{quote_string(str(k))}: {_data_text(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_data_text(v) for v in value) + "]"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quote_string(value)
    return repr(value)


# ------------------------------------------------------------------ the goal
@dataclass(frozen=True)
class Change:
    """One part of a goal: a row's fields set, a row inserted or deleted, a state item set.

    ``kind`` is ``set``, ``insert``, ``delete`` or ``state``; ``fields`` holds the new values
    (``set``: only the changed fields; ``insert``: the whole row; ``delete``: the old row)."""

    kind: str
    target: str
    key: Any = None
    fields: Mapping[str, Any] = field(default_factory=dict)
    old: Mapping[str, Any] = field(default_factory=dict)

    @property
    def paths(self) -> tuple[str, ...]:
        """The paths of :meth:`Episode.diff` this change covers
        (``loans["L002"].returned_on``)."""
        if self.kind == "state":
            return (self.target,)
        row = f"{self.target}[{quote(self.key)}]"
        if self.kind == "set":
            return tuple(f"{row}.{name}" for name in self.fields)
        return (row,)

    @property
    def frame(self) -> tuple[str, ...]:
        """What ``only changes`` must name for this change."""
        if self.kind == "set":
            return tuple(f"{self.target}.{name}" for name in self.fields)
        return (self.target,)

    def words(self) -> str:
        """The change in plain words, for a reader or a model."""
        shown = ", ".join(f"{k} {json.dumps(v, ensure_ascii=False)}"
                          for k, v in self.fields.items())
        if self.kind == "set":
            was = ", ".join(f"{k} {json.dumps(v, ensure_ascii=False)}"
                            for k, v in self.old.items())
            return f"{self.target} {json.dumps(self.key)}: {shown} (was: {was})"
        if self.kind == "insert":
            return f"{self.target}: a new row with {shown}"
        if self.kind == "delete":
            return f"{self.target} {json.dumps(self.key)} removed (it had {shown})"
        return f"{self.target} set to {json.dumps(self.fields.get('value'))}"


def goal_changes(initial: Episode, final: Episode) -> list[Change]:
    """What ``final`` changed from ``initial``, one :class:`Change` per row or state item."""
    changes: list[Change] = []
    before, after = initial.state.export(), final.state.export()
    for name, value in after.items():
        if before.get(name) != value:
            changes.append(Change("state", name, fields={"value": value},
                                  old={"value": before.get(name)}))
    for name, table in final.tables.items():
        old_rows = initial.tables[name].rows
        for key, row in table.rows.items():
            was = old_rows.get(key)
            if was is None:
                changes.append(Change("insert", name, key, row.export()))
            elif was.digest() != row.digest():
                old, new = was.export(), row.export()
                changed = [f for f in new if old.get(f) != new[f]]
                changes.append(Change("set", name, key, {f: new[f] for f in changed},
                                      {f: old.get(f) for f in changed}))
        for key, was in old_rows.items():
            if key not in table.rows:
                changes.append(Change("delete", name, key, was.export()))
    return changes


@dataclass(frozen=True)
class MinedCheck:
    """A check item: ``check NAME "DOC": CONDITION``."""

    name: str
    doc: str
    condition: str


def _identifier(text: str) -> str:
    word = re.sub(r"[^0-9a-zA-Z]+", "_", text).strip("_").lower()
    return word if word and not word[0].isdigit() else f"k_{word}"


def _generated_key(state: StateInfo, world: WorldModel) -> str | None:
    """The key field of a table whose key a sequence (``next(...)``) fills, or None."""
    entity = world.records.get(state.entity or "")
    if entity is None:
        return None
    for info in entity.fields.values():
        if info.is_key and isinstance(info.default, n.Call):
            return info.name
    return None


def _key_field(state: StateInfo, world: WorldModel) -> str | None:
    entity = world.records.get(state.entity or "")
    if entity is None:
        return None
    return next((f.name for f in entity.fields.values() if f.is_key), None)


#: the first and last moment of the solution's run (its clock before the first call and after
#: the last), or None: no value is taken for a time stamp
Moments = tuple[str, str] | None


#: (table, key, field) of a goal's values that move with the clock (:func:`clock_bound`)
Moving = frozenset[tuple[str, str, str]]


def _stamped(value: Any, typ: t.Type, moments: Moments) -> bool:
    """Whether ``value`` is a time stamp the run put there (a ``datetime`` between its first
    and last moment): it moves with every call the agent makes (the clock ticks per call),
    so a check pinning it would fail an agent that reads once more; the frame covers it."""
    inner = typ.inner if isinstance(typ, t.Optional) else typ
    return (moments is not None and isinstance(inner, t.Prim) and inner.name == "datetime"
            and isinstance(value, str) and moments[0] <= value <= moments[1])


def _moving_parts(moving: Moving, where: tuple[str, str], name: str) -> frozenset[str] | None:
    """Of field ``name`` of the row at ``where``: None when the whole value moves with the
    clock, else the parts of a record value that do (``at`` of ``decision.at``)."""
    if (*where, name) in moving:
        return None
    prefix = f"{name}."
    return frozenset(f[len(prefix):] for table, key, f in moving
                     if (table, key) == where and f.startswith(prefix))


def _field_parts(path: str, value: Any, typ: t.Type, world: WorldModel,
                 moving: frozenset[str] | None) -> list[str]:
    """The comparisons a check makes of one field at ``path``: ``path == literal``; for a
    record some of whose parts move with the clock, each other part of it
    (``x.decision != none and (x.decision ?? Decision(...)).note == " "``: the ``??`` only
    types the optional record, which the first comparison says is set); none for a value
    that moves or has no literal."""
    if moving is None:
        return []
    whole = literal(value, typ, world)
    if not moving:
        return [f"{path} == {whole}"] if whole is not None else []
    optional = isinstance(typ, t.Optional)
    inner = typ.inner if isinstance(typ, t.Optional) else typ
    record = world.records.get(inner.name) if isinstance(inner, t.Named) and \
        inner.kind == "record" else None
    if record is None or whole is None or not isinstance(value, Mapping):
        return []
    base = f"({path} ?? {whole})" if optional else path
    parts = [f"{path} != none"] if optional else []
    for name, item in value.items():
        info = record.fields.get(str(name))
        text = _inner_literal(item, info.type, world) if info is not None else None
        if name not in moving and text is not None:
            parts.append(f"{base}.{name} == {text}")
    return parts


def _row_check(change: Change, world: WorldModel, index: int, moments: Moments = None,
               moving: Moving = frozenset()) -> MinedCheck | None:
    state = world.state.get(change.target)
    entity = world.records.get(state.entity or "") if state is not None else None
    if state is None or entity is None:
        return None
    key_text = literal(change.key, t.Named("entity", entity.name), world)
    if key_text is None:
        return None
    where = (change.target, str(change.key))
    if change.kind == "set":
        parts = []
        for name, value in change.fields.items():
            info = entity.fields.get(name)
            if info is not None and not _stamped(value, info.type, moments):
                parts += _field_parts(f"{change.target}[{key_text}].{name}", value, info.type,
                                      world, _moving_parts(moving, where, name))
        if not parts:
            return None
        return MinedCheck(f"{_identifier(entity.name)}_{_identifier(str(change.key))}_changed",
                          f"{entity.name} {change.key} changed as asked.", " and ".join(parts))
    key_field = _key_field(state, world)
    if change.kind == "delete":
        if key_field is None:
            return None
        return MinedCheck(f"{_identifier(entity.name)}_{_identifier(str(change.key))}_removed",
                          f"{entity.name} {change.key} is removed.",
                          f"not (exists r in {change.target}: r.{key_field} == {key_text})")
    generated = _generated_key(state, world)
    parts = []
    for name, value in change.fields.items():
        info = entity.fields.get(name)
        if info is None or name == generated or _stamped(value, info.type, moments):
            continue
        parts += _field_parts(f"r.{name}", value, info.type, world,
                              _moving_parts(moving, where, name))
    if not parts:
        return None
    suffix = f"_{index}" if index else ""
    return MinedCheck(f"new_{_identifier(entity.name)}{suffix}",
                      f"A new {entity.name} as asked.",
                      f"exists r in {change.target}: " + " and ".join(parts))


def _state_check(change: Change, world: WorldModel, moving: Moving = frozenset()
                 ) -> MinedCheck | None:
    state = world.state.get(change.target)
    if state is None or state.kind != "value" or (change.target, "", "value") in moving:
        return None  # a sequence moves with the rows it keys: the frame names it
    text = literal(change.fields.get("value"), state.type, world)
    if text is None:
        return None
    return MinedCheck(f"{_identifier(change.target)}_set", f"{change.target} is set as asked.",
                      f"{change.target} == {text}")


def derive_checks(changes: Sequence[Change], world: WorldModel, moments: Moments = None,
                  moving: Moving = frozenset()) -> list[MinedCheck]:
    """Checks as specific as ``changes``: one per changed, inserted or deleted row and per
    changed state value; a part with no literal form (``json``, ``duration``), a time
    stamp of the run (a datetime within ``moments``) and a value that moves with the clock
    (``moving``: a deadline ``now + minutes(15)``, a time of day) are left to the frame."""
    checks: list[MinedCheck] = []
    inserted: dict[str, int] = {}
    for change in changes:
        if change.kind == "state":
            check = _state_check(change, world, moving)
        else:
            index = inserted.get(change.target, 0)
            if change.kind == "insert":
                inserted[change.target] = index + 1
            check = _row_check(change, world, index, moments, moving)
        if check is not None:
            checks.append(check)
    return checks


def _moving_key(change: Change) -> tuple[str, str]:
    return (change.target, "" if change.kind == "state" else str(change.key))


def clock_bound(world: type[Episode], data: Mapping[str, Any], solution: Sequence[Call],
                changes: Sequence[Change]) -> Moving:
    """The values of ``changes`` that move with the clock: the solution run again from
    ``data`` one clock tick later (as if the agent had read once more first) sets them
    otherwise (a time stamp, a deadline ``now + minutes(15)``, a time of day). Nothing in a
    world whose clock does not tick, or where the later run fails (then the run's moments
    alone leave time stamps out)."""
    if not world.TICK:
        return frozenset()
    initial = world(data=data)
    later = world(data=data)
    later.clock += dt.timedelta(seconds=world.TICK)
    for name, args in solution:
        later.call(name, dict(args))
        if later.last_error is not None:
            return frozenset()
    shifted = {(_moving_key(c), c.kind): c.fields for c in goal_changes(initial, later)}
    moving: set[tuple[str, str, str]] = set()
    for change in changes:
        other = shifted.get((_moving_key(change), change.kind))
        if other is None:
            continue  # the later run does not make this change: nothing to compare
        for name, value in change.fields.items():
            moved = other.get(name)
            if moved == value:
                continue
            if isinstance(value, Mapping) and isinstance(moved, Mapping):
                moving |= {(*_moving_key(change), f"{name}.{part}") for part in value
                           if moved.get(part) != value[part]}
            else:
                moving.add((*_moving_key(change), name))
    return frozenset(moving)


def derive_frame(changes: Sequence[Change]) -> tuple[str, ...]:
    """The ``only changes`` targets naming exactly what ``changes`` touch."""
    whole = {c.target for c in changes if c.kind != "set"}
    targets = {f for c in changes for f in c.frame
               if c.kind != "set" or f.split(".", 1)[0] not in whole}
    return tuple(sorted(targets))


# ------------------------------------------------------------------ a candidate
@dataclass(frozen=True)
class Difficulty:
    """How hard a mined task is: its solution's calls, distinct tools and reads, and how many
    of :data:`~worldspec.testing.mining` careless draws of its write tools fail."""

    calls: int
    tools: int
    reads: int
    careless_failures: int

    @property
    def score(self) -> float:
        """One number to sort by: calls, tools and reads, plus the careless failures per
        write tool drawn (eight draws each)."""
        return self.calls + self.tools + self.reads + self.careless_failures / 8

    @property
    def band(self) -> str:
        """``easy``, ``medium`` or ``hard``, by :attr:`score` (:data:`DIFFICULTY_BANDS`)."""
        return next(name for name, below in DIFFICULTY_BANDS if self.score < below)

    def to_json(self) -> dict[str, Any]:
        return {"calls": self.calls, "tools": self.tools, "reads": self.reads,
                "careless_failures": self.careless_failures, "score": self.score,
                "band": self.band}


#: the difficulty bands, by score below which a task falls in each: a read and a write
#: (score about 5) is easy, three to four calls over three tools medium, five calls or more
#: over four tools or more (with careless calls failing) hard
DIFFICULTY_BANDS: tuple[tuple[str, float], ...] = (
    ("easy", 7.0), ("medium", 12.0), ("hard", float("inf")))


def solution_difficulty(world: type[Episode], data: Mapping[str, Any],
                        solution: Sequence[tuple[str, Mapping[str, Any]]], *,
                        seed: int = 0) -> Difficulty:
    """The difficulty of any task with a reference solution (a written one too), as a mined
    task's is scored: its calls, distinct tools, reads, and how many careless calls of its
    write tools fail from its start ``data``."""
    writes = [name for name, _ in solution
              if name in world.TOOLS and not world.TOOLS[name].read_only]
    return Difficulty(len(solution), len({name for name, _ in solution}),
                      len(solution) - len(writes),
                      careless_failures(world, data, writes, seed=seed))


@dataclass(frozen=True)
class MinedTask:
    """A candidate task: its start data, reference solution, goal, checks and frame."""

    name: str
    world: str
    data: Mapping[str, Any]
    solution: tuple[Call, ...]
    changes: tuple[Change, ...]
    checks: tuple[MinedCheck, ...]
    frame: tuple[str, ...]
    #: values the instruction must tell (no read before the call that names them shows them)
    told: tuple[str, ...]
    difficulty: Difficulty
    #: the start's label (the task whose data it is), for grouping outcomes of one start
    start: str = ""
    #: solution calls rendered (``tool(arg: literal)``)
    call_texts: tuple[str, ...] = ()
    #: the state-changing calls of the solution, in order
    writes: tuple[Call, ...] = ()
    #: whether each write after the first names a value an earlier write named or a row an
    #: earlier write inserted (one errand, not unrelated ones)
    linked: bool = True
    #: state items that only number rows (sequences): in the frame, not in the goal's words
    counters: frozenset[str] = frozenset()

    @property
    def dedup_key(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Same write tools and same changed paths: the same task told twice."""
        return (tuple(name for name, _ in self.writes),
                tuple(sorted(p for c in self.changes for p in c.paths)))

    def goal_words(self) -> list[str]:
        """The goal in plain words, one line per change (a sequence that numbers the new
        rows is left out: the rows say it)."""
        return [c.words() for c in self.changes
                if not (c.kind == "state" and c.target in self.counters)]

    def told_uses(self) -> list[tuple[str, str, str]]:
        """Each value the instruction must tell with the call of the reference solution that
        takes it first: (value, tool, parameter); a value no call takes (none should be)
        has empty tool and parameter."""
        uses = []
        for value in self.told:
            use = next(((tool, param) for tool, args in self.solution
                        for param, arg in args.items() if _holds(arg, value)), ("", ""))
            uses.append((value, *use))
        return uses

    def placeholder_instruction(self) -> str:
        """The placeholder instruction: it says what the instruction must tell."""
        if not self.told:
            return PLACEHOLDER_INSTRUCTION
        named = ", ".join(f'"{v}"' for v in self.told)
        return f"{PLACEHOLDER_INSTRUCTION} It names {named}."

    def text(self, instruction: str | None = None, *, name: str | None = None,
             persona: str | None = None, known: str | None = None,
             unknown: str | None = None, doc: str | None = None) -> str:
        """The ``task ... { ... }`` block, formatted as ``worldspec fmt`` writes it."""
        lines = [f"task {name or self.name} in {self.world}",
                 f"  {quote_string(doc or self._doc())}", "{",
                 f"  given {_data_text(self.data)}",
                 f"  instruction {quote_string(instruction or self.placeholder_instruction())}"]
        for word, value in (("persona", persona), ("known", known), ("unknown", unknown)):
            if value:
                lines.append(f"  {word} {quote_string(value)}")
        for check in self.checks:
            lines.append(f"  check {check.name} {quote_string(check.doc)}: {check.condition}")
        lines.append(f"  only changes {', '.join(self.frame)}")
        lines.append("  solution {")
        lines.extend(f"    {call}" for call in self.call_texts)
        lines.extend(["  }", "}", ""])
        text = "\n".join(lines)
        formatted = format_source(text, "mined.world")
        return formatted if formatted is not None else text

    def _doc(self) -> str:
        tools = ", ".join(dict.fromkeys(name for name, _ in self.solution))
        return f"Mined from the explorer's calls ({tools}): {len(self.changes)} change(s)."


def _holds(arg: Any, value: str) -> bool:
    """Whether a call's argument is ``value`` or holds it (in a list or an object)."""
    if isinstance(arg, Mapping):
        return any(_holds(item, value) for item in arg.values())
    if isinstance(arg, list | tuple):
        return any(_holds(item, value) for item in arg)
    return not isinstance(arg, bool) and isinstance(arg, str | int) and str(arg) == value


def _call_text(tool: ToolInfo, args: Mapping[str, Any], world: WorldModel) -> str | None:
    parts = []
    for param in tool.params:
        if param.name not in args:
            continue
        text = _argument_text(args[param.name], param.type, world)
        if text is None:
            return None
        parts.append(f"{param.name}: {text}")
    return f"{tool.name}({', '.join(parts)})"


def _argument_text(value: Any, typ: t.Type, world: WorldModel) -> str | None:
    """A call's argument: a list or an object as the JSON the agent sent (a row inside it is
    its key there, as in the agent's call; a typed literal could not say that), anything
    else as its typed literal (``Cabin.economy``, ``date("2024-05-01")``)."""
    if isinstance(value, Mapping | list | tuple):
        return _data_text(value) if _plain_json(value) else None
    return literal(value, typ, world)


def _plain_json(value: Any) -> bool:
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _plain_json(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_plain_json(v) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str | int | bool)


class _Solver:
    """Builds the reference solution of a run: each write preceded by the reads that show
    the values it names, made in one episode so each read sees the state before its write."""

    def __init__(self, model: WorldModel, world: type[Episode], data: Mapping[str, Any]
                 ) -> None:
        self.model = model
        self.world = world
        self.data = data
        self.reads = [spec for spec in world.TOOLS.values() if spec.read_only]
        probe = world(data=data)
        self.row_keys = {str(k) for table in probe.tables.values() for k in table.rows}
        self.definitions = probe.tools()

    def solve(self, run: WriteRun) -> tuple[Episode, list[Call], list[str]] | None:
        """The episode after the solution, the solution's calls and the values told; None
        when a write fails once the reads run before it (a clock that moved, say)."""
        episode = self.world(data=self.data)
        shown = ShownText([self.world.POLICY])
        shown.add_definitions(self.definitions)
        solution: list[Call] = []
        told: list[str] = []
        for name, args in run.calls:
            tool = self.model.tools[name]
            for param in tool.params:
                for value in unseen_values(param, args, self.model, shown, self.row_keys):
                    if shown.shows(value.value, row_key=True):
                        continue  # an earlier read of this call showed it
                    plan = self._reveal(episode, value.value, shown, _READ_HOPS)
                    if plan is None:
                        plan = [(None, str(value.value))]
                    for call, needs in plan:
                        if needs is not None:
                            told.append(needs)
                            shown.add_value(needs)
                        if call is not None:
                            shown.add_value(episode.call(call[0], dict(call[1])))
                            solution.append(call)
            result = episode.call(name, dict(args))
            if episode.last_error is not None:
                return None
            shown.add_value(result)
            solution.append((name, dict(args)))
        return episode, solution, told

    def _reveal(self, episode: Episode, value: str | int, shown: ShownText, hops: int
                ) -> list[tuple[Call | None, str | None]] | None:
        """Reads that show ``value``, each with the value the instruction must tell for it
        (None: nothing), cheapest first: a read by a value already shown, a read without
        arguments, a read by a text of the row ``value`` keys; else, ``hops`` deep, a read
        by another key of that row, after the reads that show that key."""
        row = self._row_of(episode, value)
        options: list[tuple[int, Call, str | None]] = []
        hidden_keys: list[tuple[Call, str | int]] = []
        for spec in self.reads:
            required = [p for p in spec.params if p.required]
            if not required:
                options.append((1, (spec.name, {}), None))
            elif len(required) == 1 and row is not None:
                param = required[0]
                for item in row.values():
                    if isinstance(item, bool) or not isinstance(item, str | int) or \
                            item == value:
                        continue
                    is_key = str(item) in self.row_keys
                    call = (spec.name, {param.name: item})
                    if shown.shows(item, row_key=is_key):
                        options.append((0, call, None))
                    elif not is_key and isinstance(item, str) and param.table is None:
                        options.append((2, call, item))
                    elif is_key:
                        hidden_keys.append((call, item))
        for _, call, needs in sorted(options, key=lambda o: o[0]):
            if self._shows(episode, call, value):
                return [(call, needs)]
        if hops <= 0:
            return None
        for call, key in hidden_keys:
            if self._shows(episode, call, value):
                before = self._reveal(episode, key, shown, hops - 1)
                if before is not None:
                    return [*before, (call, None)]
        return None

    @staticmethod
    def _shows(episode: Episode, call: Call, value: str | int) -> bool:
        """Whether ``call`` succeeds in ``episode`` (left as it was) and its result shows
        ``value``."""
        snap = episode.snapshot()
        result = episode.call(call[0], dict(call[1]))
        failed = episode.last_error is not None
        episode.restore(snap)
        if failed:
            return False
        seen = ShownText()
        seen.add_value(result)
        return seen.shows(value, row_key=True)

    @staticmethod
    def _row_of(episode: Episode, value: str | int) -> dict[str, Any] | None:
        for table in episode.tables.values():
            row = table.rows.get(value)
            if row is not None:
                return dict(row.export())
        return None


def _task_name(start: str, solution: Sequence[Call], checks: Sequence[MinedCheck]) -> str:
    digest = hashlib.sha256(json.dumps(
        [start, [[c[0], c[1]] for c in solution], [c.condition for c in checks]],
        sort_keys=True, default=str).encode()).hexdigest()
    return f"mined_{digest[:10]}"


def mine_tasks(model: WorldModel, world: type[Episode], data: Mapping[str, Any], *,
               start: str = "", seed: int = 0, runs: int = 100, max_calls: int = 4,
               seconds: float | None = None) -> list[MinedTask]:
    """Distinct candidate tasks from ``data`` (not yet validated: see :func:`validate_mined`),
    drawn from ``runs`` seeded runs, or for ``seconds`` at most."""
    solver = _Solver(model, world, data)
    initial = world(data=data)
    found: dict[tuple[tuple[str, ...], tuple[str, ...]], MinedTask] = {}
    deadline = None if seconds is None else time.perf_counter() + seconds
    for run in draw_write_runs(world, data, seed=seed, runs=runs, max_calls=max_calls):
        if deadline is not None and time.perf_counter() > deadline:
            break
        task = _candidate(model, world, solver, initial, run, start, seed)
        if task is not None and task.dedup_key not in found:
            found[task.dedup_key] = task
    return list(found.values())


def mine_starts(model: WorldModel, world: type[Episode], starts: Mapping[str, Mapping[str, Any]],
                *, seed: int = 0, runs: int = 100, max_calls: int = 4,
                seconds: float | None = None) -> list[MinedTask]:
    """Distinct candidates from several start states (name -> data; starts with equal data
    are mined once): ``runs`` runs from each with ``seed``, or, given ``seconds``, rounds of
    ``runs`` runs with seeds ``seed``, ``seed + 1``, ... until that time is spent."""
    unique: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for name, data in starts.items():
        unique.setdefault(json.dumps(data, sort_keys=True, default=str), (name, data))
    deadline = None if seconds is None else time.perf_counter() + seconds
    found: dict[tuple[str, Any], MinedTask] = {}
    round_seed = seed
    while True:
        for name, data in unique.values():
            left = None if deadline is None else deadline - time.perf_counter()
            if left is not None and left <= 0:
                return list(found.values())
            for task in mine_tasks(model, world, data, start=name, seed=round_seed, runs=runs,
                                   max_calls=max_calls, seconds=left):
                found.setdefault((name, task.dedup_key), task)
        if deadline is None:
            return list(found.values())
        round_seed += 1


def _tellable(value: str) -> bool:
    """Whether a user could say ``value``: printable, with a letter or digit in it (the
    explorer also draws odd strings, ``"a\\nb"`` or ``"{}"``, to test the tools)."""
    return value.isprintable() and any(ch.isalnum() for ch in value)


def _candidate(model: WorldModel, world: type[Episode], solver: _Solver, initial: Episode,
               run: WriteRun, start: str, seed: int) -> MinedTask | None:
    solved = solver.solve(run)
    if solved is None:
        return None
    final, solution, told = solved
    if not all(_tellable(value) for value in told):
        return None
    changes = goal_changes(initial, final)
    moments = (initial.clock.isoformat(), final.clock.isoformat())
    checks = derive_checks(changes, model, moments,
                           clock_bound(world, solver.data, solution, changes))
    if not changes or not checks:
        return None
    texts = [_call_text(model.tools[name], args, model) for name, args in solution]
    if any(text is None for text in texts):
        return None
    writes = tuple(call for call in solution if not world.TOOLS[call[0]].read_only)
    difficulty = solution_difficulty(world, solver.data, solution, seed=seed)
    counters = frozenset(name for name, info in model.state.items()
                         if info.kind == "sequence")
    return MinedTask(_task_name(start, solution, checks), world.WORLD, solver.data,
                     tuple(solution), tuple(changes), tuple(checks), derive_frame(changes),
                     tuple(dict.fromkeys(told)), difficulty, start,
                     tuple(text for text in texts if text is not None), writes,
                     linked_writes(writes, changes), counters)


def _named_values(args: Mapping[str, Any]) -> set[str]:
    return {str(v) for v in args.values()
            if isinstance(v, str | int) and not isinstance(v, bool)}


def linked_writes(writes: Sequence[Call], changes: Sequence[Change]) -> bool:
    """Whether every write after the first names a value an earlier write named, or a row
    the run inserted (``place_hold`` then ``cancel_hold`` of that hold)."""
    inserted = {str(c.key) for c in changes if c.kind == "insert"}
    seen: set[str] = set()
    for index, (_, args) in enumerate(writes):
        values = _named_values(args)
        if index and not values & (seen | inserted):
            return False
        seen |= values
    return True


# ------------------------------------------------------------------ validation
def validate_mined(world_path: str | Path, texts: Mapping[str, str]
                   ) -> dict[str, TaskReport | None]:
    """Validate task blocks (name -> text) in a file beside the world that imports it, as
    ``worldspec tasks`` does: name -> its report (None: it did not even compile)."""
    path = Path(world_path)
    probe = str(path.parent / "__mined_tasks__.world")
    body = "\n\n".join(texts.values())
    result = check_source(f'import "{path.name}"\n\n{body}\n', probe)
    split = set_aside_broken_tasks(result)
    reports: dict[str, TaskReport | None] = dict.fromkeys(texts)
    if split.runnable is None:
        return reports
    shown = split.runnable.program.roots[0] if split.runnable.program.roots else probe
    for report in validate_tasks(split.runnable):
        if report.file == shown and report.task in reports:
            reports[report.task] = report
    return reports
