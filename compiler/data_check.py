"""Initial data (a task's ``given``) checked against the world's schema.

A ``given`` is a JSON file (relative to the spec file) or inline data. Both
are turned into plain Python values first; inline data keeps a side index
from JSON path to source span so that problems point at the exact node,
while problems in a file point at the ``given`` statement and carry the JSON
path in the message (``$.users[2].phone: expected str, found 42``).

What fits a type is decided by the runtime's value validator
(``worldspec/runtime/shapes.py``), the very loaders and rules that load tool arguments and
initial data at run time: a scalar, an enum member, a map key, a ``json`` leaf and a
refinement are each given to it, and so are the structures (what an array and an object
are, a set's repeats, a record's unknown and missing fields, a field given under its name
and its alias, a union's tag); a refusal comes back as data (a ``Misfit``, the names of
the fields) that the tables here word as diagnostics (WS601-WS603; WS617 for text holding
a lone surrogate; WS207 for an enum or a tag). What is the compiler's own stays here:
reading the files, spans, bare enum names of inline data, nesting limits, keys repeated
in one object, a walk that goes on past a misfit to report *every* problem (the
generated loaders stop at the first), and references between rows.
``tests/test_value_acceptance.py`` checks, value for value, that this walk and the
generated loaders accept the same data and normalise it alike.

The walk is driven by tables: :data:`_TYPE_CHECKERS` (semantic type class -> checker),
:data:`_NAMED_CHECKERS` (kind of a named type -> checker) and the runtime's ``SCALARS``
(builtin type name -> loader). Every checker returns the *normalised* value, the shape the
runtime builds its initial state from:

- a table is a list of row dicts in the given order (an object keyed by row
  key is accepted; the key field is injected or verified);
- a reference (an entity used as a field type) is the row's key;
- an enum is its members' serialised string (inline data may name members
  bare: ``delivery: sent``);
- a ``float`` is a Python float, a ``map[int, V]`` has int keys;
- a date or datetime is its ISO text as the runtime exports it, a duration its
  seconds as the runtime exports them (a whole number as an int);
- a field given as null that has a default stays null (the runtime fills in the default);
- everything else is JSON as given.

Keys and references are checked last: duplicate row keys and references to
rows that do not exist (in a table the data defines) are WS605.

Nothing here raises for bad input: deep nesting, huge numbers, NaN and odd
strings are reported, and each ``given`` stops after :data:`MAX_PROBLEMS`.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from worldspec.compiler import types as t
from worldspec.compiler.model import FieldInfo, RecordInfo, StateInfo, WorldModel
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink, Related, did_you_mean
from worldspec.dsl.nodes import Span
from worldspec.runtime.errors import ToolError
from worldspec.runtime.shapes import (
    MAX_INT_DIGITS,
    SCALARS,
    Misfit,
    Reason,
    check_length_within,
    check_matches,
    check_within,
    frozen,
    is_array,
    is_object,
    load_date,
    load_datetime,
    load_int_key,
    load_json_key,
    load_json_leaf,
    load_member,
    load_str,
    object_keys,
    repeats,
    unaliased,
    union_tag,
)

__all__ = ["check_given", "check_data", "load_initial_data", "data_to_python", "argument_problems",
           "date_text_problem", "datetime_text_problem", "MAX_PROBLEMS", "MAX_DEPTH"]

#: Problems reported per ``given`` before the check gives up on it.
MAX_PROBLEMS: Final = 50
#: Deepest nesting of data accepted (objects and arrays inside each other).
MAX_DEPTH: Final = 100

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SHOW_LIMIT = 60
_LIST_LIMIT = 10


# ------------------------------------------------------------- plain values
class _BareName(str):
    """A bare word from inline data (``delivery: sent``): an enum member without quotes."""

    __slots__ = ()


class _Obj(dict[str, object]):
    """A data object that repeats some keys; the last value of each wins."""

    __slots__ = ("repeated",)

    def __init__(self, items: dict[str, object], repeated: Iterable[str]) -> None:
        super().__init__(items)
        self.repeated: tuple[str, ...] = tuple(repeated)


class _Marker:
    """A named sentinel."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: What a checker returns for a value it reported as bad.
_INVALID: Final = _Marker("<invalid>")
#: Inline data nested deeper than :data:`MAX_DEPTH`.
_TOO_DEEP: Final = _Marker("<too deep>")


def _make_object(items: dict[str, object], repeated: list[str]) -> dict[str, object]:
    return _Obj(items, repeated) if repeated else items


def _json_object_hook(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """``json.loads`` hook that remembers repeated keys instead of dropping them silently."""
    items: dict[str, object] = {}
    repeated: list[str] = []
    for key, value in pairs:
        if key in items:
            repeated.append(key)
        items[key] = value
    return _make_object(items, repeated)


def _plain(value: object, depth: int = 0) -> object:
    """A copy made of plain dicts, lists and scalars (markers removed)."""
    if depth > MAX_DEPTH or isinstance(value, _Marker):
        return None
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, _BareName):
        return str(value)
    return value


# ------------------------------------------------------------ inline data
@dataclass
class _SpanIndex:
    """JSON path (raw segments) -> (value span, ``key: value`` pair span) for inline data."""

    fallback: Span
    entries: dict[tuple[str | int, ...], tuple[Span, Span | None]] = field(default_factory=dict)

    def lookup(self, raw: tuple[str | int, ...], pair: bool) -> Span:
        """The span of the value at ``raw`` (its pair when ``pair``), else of an ancestor."""
        while True:
            entry = self.entries.get(raw)
            if entry is not None:
                value_span, pair_span = entry
                return pair_span if pair and pair_span is not None else value_span
            if not raw:
                return self.fallback
            raw, pair = raw[:-1], False


_SCALAR_NODES: dict[type[n.Node], Callable[[Any], object]] = {
    n.DataString: lambda d: str(d.value),
    n.DataInt: lambda d: int(d.value),
    n.DataFloat: lambda d: float(d.value),
    n.DataBool: lambda d: bool(d.value),
    n.DataNull: lambda d: None,
    n.DataName: lambda d: _BareName(d.name),
}


def _convert(node: n.Data, raw: tuple[str | int, ...], index: _SpanIndex | None,
             depth: int) -> object:
    """Inline data -> values; bare names stay :class:`_BareName`, spans go to ``index``."""
    if depth > MAX_DEPTH:
        return _TOO_DEEP
    if isinstance(node, n.DataObject):
        items: dict[str, object] = {}
        repeated: list[str] = []
        for pair in node.pairs:
            if pair.key in items:
                repeated.append(pair.key)
            sub = (*raw, pair.key)
            if index is not None:
                index.entries[sub] = (pair.value.span, pair.span)
            items[pair.key] = _convert(pair.value, sub, index, depth + 1)
        return _make_object(items, repeated)
    if isinstance(node, n.DataArray):
        out: list[object] = []
        for i, item in enumerate(node.items):
            sub = (*raw, i)
            if index is not None:
                index.entries[sub] = (item.span, None)
            out.append(_convert(item, sub, index, depth + 1))
        return out
    convert = _SCALAR_NODES.get(type(node))
    return convert(node) if convert is not None else None


def data_to_python(node: n.Data) -> object:
    """Inline data as plain JSON-like values, without a schema.

    Objects become dicts (a repeated key keeps its last value), arrays lists,
    and a bare name (``sent``) its text; ``true``/``false``/``none`` are
    already booleans and ``None``. Nesting deeper than :data:`MAX_DEPTH` is
    cut off as ``None``. Mapping enum member names to their serialised
    strings needs the schema: :func:`load_initial_data` does that.
    """
    return _plain(_convert(node, (), None, 0))


# --------------------------------------------------------------- messages
def _quote(text: str, limit: int | None = _SHOW_LIMIT) -> str:
    """``text`` as a JSON string, shortened to ``limit`` characters, safe to print."""
    if limit is not None and len(text) > limit:
        text = text[:limit] + "..."
    quoted = json.dumps(text, ensure_ascii=False)
    try:
        quoted.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        quoted = json.dumps(text)
    return quoted


def _show_int(value: int) -> str:
    if value.bit_length() > 3 * MAX_INT_DIGITS:
        return f"an integer of about {int(value.bit_length() * math.log10(2))} digits"
    text = str(value)
    return text if len(text) <= _SHOW_LIMIT else f"an integer of {len(text.lstrip('-'))} digits"


def _show_float(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def _show(value: object) -> str:
    """A short description of a data value for messages."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return _show_int(value)
    if isinstance(value, float):
        return _show_float(value)
    if isinstance(value, _BareName):
        return f"the bare name {value}"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    if value is _TOO_DEEP:
        return "deeply nested data"
    return type(value).__name__


def _show_list(items: Iterable[str]) -> str:
    shown = list(items)
    text = ", ".join(shown[:_LIST_LIMIT])
    return text + (", ..." if len(shown) > _LIST_LIMIT else "")


def _show_range(ref: t.Refinement) -> str:
    low = "" if ref.low is None else str(ref.low)
    high = "" if ref.high is None else str(ref.high)
    return f"({low}..{high})"


#: reason a refinement refuses a value -> the problem's words
_REFINEMENT_WORDS: dict[Reason, Callable[[Any, t.Refinement], str]] = {
    Reason.OUT_OF_RANGE: lambda value, ref: f"{_show(value)} is outside the range "
                                            f"{_show_range(ref)}",
    Reason.BAD_LENGTH: lambda value, ref: f"length {len(value)} is outside the length range "
                                          f"{_show_range(ref)}",
    Reason.NO_MATCH: lambda value, ref: f"{_quote(value)} does not match /{ref.pattern}/",
}


# ---------------------------------------------------------------- problems
class _Loc:
    """Where a value sits: raw path segments (for spans) and the JSON path text.

    Made for every value checked, but read only for the few that are reported: so a
    location keeps its parent and its own segment, and works out ``raw`` and ``text`` when
    asked (``depth`` is kept as it goes, for the depth limit).
    """

    __slots__ = ("_root_raw", "_root_text", "at_key", "depth", "how", "parent", "segment")

    def __init__(self, raw: tuple[str | int, ...] = (), text: str = "$") -> None:
        #: a root has no parent; its raw path and text are given
        self.parent: _Loc | None = None
        self.segment: str | int = ""
        #: how ``segment`` is written after the parent's text: "field", "key", "index", "as_key"
        self.how = ""
        self.depth = len(raw)
        self.at_key = False
        self._root_raw = raw
        self._root_text = text

    def _child(self, segment: str | int, how: str) -> _Loc:
        loc = _Loc.__new__(_Loc)
        loc.parent, loc.segment, loc.how = self, segment, how
        loc.depth = self.depth + (how != "as_key")
        loc.at_key = how == "as_key"
        loc._root_raw, loc._root_text = (), ""
        return loc

    def field(self, name: str) -> _Loc:
        return self._child(name, "field")

    def key(self, name: str) -> _Loc:
        return self._child(name, "key")

    def index(self, i: int) -> _Loc:
        return self._child(i, "index")

    def as_key(self) -> _Loc:
        """The same place, but about the object key rather than its value."""
        return self._child("", "as_key")

    def _chain(self) -> list[_Loc]:
        """This location and its ancestors up to the root, root first."""
        chain: list[_Loc] = []
        loc: _Loc | None = self
        while loc is not None:
            chain.append(loc)
            loc = loc.parent
        chain.reverse()
        return chain

    @property
    def raw(self) -> tuple[str | int, ...]:
        chain = self._chain()
        return (*chain[0]._root_raw, *(loc.segment for loc in chain[1:] if loc.how != "as_key"))

    @property
    def text(self) -> str:
        chain = self._chain()
        parts = [chain[0]._root_text]
        for loc in chain[1:]:
            segment = loc.segment
            if loc.how == "field":
                assert isinstance(segment, str)
                parts.append(f".{segment}" if _IDENT.fullmatch(segment) else
                             f"[{_quote(segment)}]")
            elif loc.how == "key":
                assert isinstance(segment, str)
                parts.append(f"[{_quote(segment)}]")
            elif loc.how == "index":
                parts.append(f"[{segment}]")
            else:
                parts.append(" (the key)")
        return "".join(parts)

    @property
    def state(self) -> str:
        """The top-level state name the value belongs to."""
        raw = self.raw
        return str(raw[0]) if raw else ""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Loc):
            return NotImplemented
        return (self.raw, self.text, self.at_key) == (other.raw, other.text, other.at_key)

    def __hash__(self) -> int:
        return hash((self.raw, self.text, self.at_key))

    def __repr__(self) -> str:
        return f"_Loc({self.raw!r}, {self.text!r}, at_key={self.at_key})"


@dataclass(frozen=True, slots=True)
class _Problem:
    """One bad value, reported at its value's span (or its ``key: value`` pair's)."""

    code: str
    loc: _Loc
    message: str
    hints: tuple[str, ...] = ()
    at_pair: bool = False
    related: tuple[tuple[_Loc, str], ...] = ()

    @property
    def text(self) -> str:
        return f"{self.loc.text}: {self.message}"


@dataclass(frozen=True, slots=True)
class _Ref:
    """A reference seen in data: ``entity`` row with ``key``, found at ``loc``."""

    entity: str
    key: object
    loc: _Loc


def argument_problems(value: object, typ: t.Type, world: WorldModel, name: str) -> list[str]:
    """Why the JSON ``value`` does not fit a parameter of type ``typ`` (empty when it fits),
    by the rules of tool arguments: what a solution may pass as an agent would send it."""
    validator = _Validator(world, n.NO_SPAN, None)
    validator.check(value, typ, _Loc((name,), name))
    return [problem.text for problem in validator.problems]


# --------------------------------------------------------------- validator
def _load_keys(world: WorldModel) -> dict[str, StateInfo]:
    """The state items by the key data gives them under: the alias (``from "..."``) where
    one is declared, else the name (the first item, where two clash: WS514)."""
    keys: dict[str, StateInfo] = {}
    for state in world.state.values():
        keys.setdefault(state.load_key, state)
    return keys


class _Validator:
    """Checks one ``given``'s value against a world and normalises it."""

    def __init__(self, world: WorldModel, given_span: Span, spans: _SpanIndex | None) -> None:
        self.world = world
        self.given_span = given_span
        self.spans = spans
        self.problems: list[_Problem] = []
        #: table state name -> frozen row key -> where the row is
        self.tables: dict[str, dict[object, _Loc]] = {}
        self.refs: list[_Ref] = []
        self._fast_paths: dict[str, dict[str, _Normaliser | None]] = {}

    def fast_paths(self, rec: RecordInfo) -> dict[str, _Normaliser | None]:
        """Field name -> its :func:`_fast_path`, worked out once per record per check."""
        found = self._fast_paths.get(rec.name)
        if found is None:
            found = self._fast_paths[rec.name] = {
                name: _fast_path(info.type) for name, info in rec.fields.items()}
        return found

    # reporting ----------------------------------------------------------
    @property
    def full(self) -> bool:
        return len(self.problems) >= MAX_PROBLEMS

    def report(self, code: str, loc: _Loc, message: str, *, hints: Iterable[str] = (),
               at_pair: bool = False, related: Iterable[tuple[_Loc, str]] = ()) -> object:
        """Record a problem (until the cap); returns :data:`_INVALID` for convenience."""
        if not self.full:
            self.problems.append(_Problem(code, loc, message, tuple(hints),
                                          at_pair or loc.at_key, tuple(related)))
        return _INVALID

    def mismatch(self, loc: _Loc, expected: str, value: object) -> object:
        """WS601 ``expected X, found Y``."""
        hints: list[str] = []
        if isinstance(value, _BareName):
            hints.append(f'write "{value}" in quotes if you mean a string')
        return self.report("WS601", loc, f"expected {expected}, found {_show(value)}",
                           hints=hints)

    def too_deep(self, loc: _Loc) -> object:
        """WS601 for data nested beyond :data:`MAX_DEPTH`."""
        return self.report("WS601", loc, f"data is nested deeper than {MAX_DEPTH} levels")

    def span_of(self, loc: _Loc, pair: bool) -> Span:
        if self.spans is None:
            return self.given_span
        return self.spans.lookup(loc.raw, pair)

    def flush(self, sink: DiagnosticSink) -> bool:
        """Report the problems into ``sink``; True when there was any.

        Problems with the same code at the same span (every problem of a
        JSON file is at its ``given``) become one diagnostic whose hints
        list the others, since the sink keeps one report per code and span.
        """
        groups: dict[tuple[str, Span], list[_Problem]] = {}
        for p in self.problems:
            groups.setdefault((p.code, self.span_of(p.loc, p.at_pair)), []).append(p)
        last = len(groups) - 1
        for i, ((code, span), items) in enumerate(groups.items()):
            first = items[0]
            hints = [*first.hints, *(f"also {p.text}" for p in items[1:])]
            if i == last and self.full:
                hints.append(f"stopped after {MAX_PROBLEMS} problems in this data")
            related = ([Related(self.span_of(loc, False), msg) for loc, msg in first.related]
                       if self.spans is not None else [])
            sink.report(code, span, first.text, hints=hints, related=related)
        return bool(self.problems)

    # the walk ------------------------------------------------------------
    def check(self, value: object, typ: t.Type, loc: _Loc) -> object:
        """Check ``value`` against ``typ``; the normalised value or :data:`_INVALID`."""
        if self.full:
            return _INVALID
        if value is _TOO_DEEP or loc.depth > MAX_DEPTH:
            return self.too_deep(loc)
        checker = _TYPE_CHECKERS.get(type(typ))
        if checker is None:
            return _plain(value)
        return checker(self, value, typ, loc)

    def check_data(self, value: object) -> dict[str, object]:
        """Check a whole ``given``: an object whose keys are state names."""
        root = _Loc()
        out: dict[str, object] = {}
        if not is_object(value):
            self.mismatch(root, "an object whose keys are state names", value)
            return out
        self.check_repeated(value, root)
        keys = _load_keys(self.world)
        for name, item in value.items():
            if self.full:
                break
            loc = root.field(name)
            state = keys.get(name)
            if state is None:
                self.unknown_state(name, value, loc, keys)
                continue
            # keyed as loaded: a state item with an alias (`from "..."`) under its alias
            out[name] = _STATE_CHECKERS[state.kind](self, item, state, loc)
        return out

    def unknown_state(self, name: str, value: dict[str, object], loc: _Loc,
                      keys: Mapping[str, StateInfo]) -> None:
        """WS602 for a top-level key that names no state item as loaded; a state item with
        an alias loads from the alias only, so its own name (alone or beside it) is refused."""
        named = self.world.state.get(name)
        alias = named.node.alias if named is not None else None
        if named is None or alias is None:
            self.report("WS602", loc, f"world {self.world.name} has no state {_quote(name)}",
                        hints=did_you_mean(name, keys), at_pair=True)
        elif alias in value:
            self.report("WS602", loc, f"state {_quote(name)} is given twice (as {_quote(name)} "
                        f"and as its alias {_quote(alias)}); it loads from {_quote(alias)} only",
                        at_pair=True)
        else:
            self.report("WS602", loc, f"state {_quote(name)} loads from the key {_quote(alias)}, "
                        "not from its name", hints=[f"give it as {_quote(alias)}"],
                        at_pair=True)

    def check_references(self, tables: Mapping[str, Mapping[object, _Loc]],
                         refs: Iterable[_Ref]) -> None:
        """Report references to missing rows of the tables in ``tables``."""
        for ref in refs:
            if self.full:
                return
            table = self.world.table_of(ref.entity)
            if table is None or table.name not in tables:
                continue
            rows = tables[table.name]
            if frozen(ref.key) in rows:
                continue
            hints: list[str] = []
            if isinstance(ref.key, str) and len(rows) <= 10_000:
                hints = did_you_mean(ref.key, (k for k in rows if isinstance(k, str)))
            self.report("WS605", ref.loc, f"no {ref.entity} with key {_show(ref.key)}",
                        hints=hints)

    def check_repeated(self, value: dict[str, object], loc: _Loc) -> None:
        for key in getattr(value, "repeated", ()):
            self.report("WS601", loc.field(key), "this key is given twice in one object; "
                        "the last value would win", at_pair=True)

    # state kinds -----------------------------------------------------------
    def state_value(self, value: object, state: StateInfo, loc: _Loc) -> object:
        return self.check(value, state.type, loc)

    def state_sequence(self, value: object, state: StateInfo, loc: _Loc) -> object:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return self.mismatch(loc, f"the current counter of sequence {state.name} "
                                 "(an int >= 0)", value)
        return value

    def state_table(self, value: object, state: StateInfo, loc: _Loc) -> object:
        rec = self.world.records.get(state.entity or "")
        if rec is None:
            return _plain(value)
        key = rec.key
        rows: list[object] = []
        keys = self.tables.setdefault(state.name, {})
        if is_array(value):
            need = frozenset({key.name}) if key is not None else frozenset()
            for i, row in enumerate(value):
                if self.full:
                    break
                sub = loc.index(i)
                checked = self.table_row(row, rec, sub, need=need)
                self.remember_row(checked, key, keys, sub)
                rows.append(checked)
        elif is_object(value):
            self.check_repeated(value, loc)
            given = frozenset({key.name}) if key is not None else frozenset()
            for name, row in value.items():
                if self.full:
                    break
                sub = loc.key(name)
                stored = self.key_from_text(name, key.type, sub.as_key()) if key else _INVALID
                checked = self.table_row(row, rec, sub, given=given)
                if key is not None and isinstance(checked, dict) and stored is not _INVALID:
                    own = checked.get(key.name, _INVALID)
                    if key.name not in checked:
                        checked = {key.name: stored, **checked}
                    elif own is not _INVALID and frozen(own) != frozen(stored):
                        self.report("WS605", sub.field(key.name),
                                    f"the row is stored under {_show(stored)} but its "
                                    f"{key.name} is {_show(own)}", at_pair=True)
                self.remember_row(checked, key, keys, sub)
                rows.append(checked)
        else:
            way = f", or an object keyed by {key.name}" if key is not None else ""
            return self.mismatch(loc, f"{rec.name} rows (an array{way})", value)
        return rows

    def table_row(self, row: object, rec: RecordInfo, loc: _Loc, *,
                  need: frozenset[str] = frozenset(),
                  given: frozenset[str] = frozenset()) -> object:
        if not is_object(row):
            if row is _TOO_DEEP:
                return self.too_deep(loc)
            return self.mismatch(loc, f"a row of {rec.name} (an object)", row)
        return self.fields(row, rec, loc, need=need, given=given)

    def remember_row(self, row: object, key: FieldInfo | None, keys: dict[object, _Loc],
                     loc: _Loc) -> None:
        """Note a row's key; a key seen before is WS605."""
        if key is None or not isinstance(row, dict):
            return
        value = row.get(key.name, _INVALID)
        if value is _INVALID:
            return
        seen = frozen(value)
        first = keys.get(seen)
        if first is None:
            keys[seen] = loc
            return
        self.report("WS605", loc.field(key.name), f"duplicate key {_show(value)}: "
                    f"{first.text} has the same key", at_pair=True,
                    related=[(first, "the first row with this key")])

    def key_from_text(self, text: str, typ: t.Type, loc: _Loc) -> object:
        """An object key (always text in data) as a value of ``typ``."""
        base = t.strip_optional(typ)
        if base == t.JSON:
            key = load_json_key(text)  # all-digit text is an int key, as the runtime reads it
            if isinstance(key, int):
                return key
        if isinstance(base, t.Prim) and base.name == "int":
            try:
                number = load_int_key(text)
            except Misfit:
                return self.report("WS601", loc, f"int keys are decimal integers in data, "
                                   f"found {_quote(text)}")
            return self.check(number, typ, loc)
        enum = self.world.enums.get(base.name) if isinstance(base, t.Named) else None
        if enum is not None and self.spans is not None and text in enum.members:
            return self.check(_BareName(text), typ, loc)  # inline keys may name members
        return self.check(text, typ, loc)

    def fields(self, value: dict[str, object], rec: RecordInfo, loc: _Loc, *,
               need: frozenset[str] = frozenset(), given: frozenset[str] = frozenset(),
               extra: frozenset[str] = frozenset()) -> dict[str, object]:
        """The fields of a record or row: unknown ones are WS602, missing ones WS603.

        ``need`` names fields required even with a default (a row's key),
        ``given`` fields that count as present, ``extra`` keys that are not
        fields but allowed (a union's tag).
        """
        self.check_repeated(value, loc)
        value = self.unalias(value, rec, loc)
        unknown, missing = object_keys(value, {
            f.name: (f.required_in_data or f.name in need) and f.name not in given
            for f in rec.fields.values()}, extra)
        out: dict[str, object] = {}
        fast = self.fast_paths(rec)
        shallow = loc.depth < MAX_DEPTH  # else check() reports the fields as too deep
        refused = frozenset(unknown)
        for name, item in value.items():
            if self.full:
                break
            if name in refused:
                self.report("WS602", loc.field(name), f"{rec.name} has no field {_quote(name)}",
                            hints=did_you_mean(name, rec.fields), at_pair=True)
                continue
            info = rec.fields.get(name)
            if info is None:  # one of ``extra``
                out[name] = _plain(item)
                continue
            if item is None and info.default is not None and name not in need:
                out[name] = None  # null means the default, which the runtime fills in
                continue
            typ = info.type
            normalise = fast.get(name) if shallow and type(item) is not _BareName else None
            if normalise is not None:
                try:
                    out[name] = normalise(item)  # what check() would return, without its location
                    continue
                except Misfit:
                    pass
            checked = self.check(item, typ, loc.field(name))
            if checked is not None or not info.may_be_absent:
                out[name] = checked  # an absent field (null or left out) is not in the JSON
        if missing:
            noun = "field" if len(missing) == 1 else "fields"
            self.report("WS603", loc, f"{rec.name} is missing {noun} "
                        f"{_show_list(repr(m) for m in missing)}")
        return out

    def unalias(self, value: dict[str, object], rec: RecordInfo, loc: _Loc
                ) -> dict[str, object]:
        """``value`` with the original's keys (``from "..."``) renamed to the field names; a
        field given under both names is WS602."""
        aliases = {f.node.alias: f.name for f in rec.fields.values() if f.node.alias}
        if not aliases or not any(alias in value for alias in aliases):
            return value
        out, twice = unaliased(value, aliases)
        for key, name in twice:
            self.report("WS602", loc.field(key), f"{rec.name}'s field {_quote(name)} is "
                        f"given twice (as {_quote(name)} and as its alias)", at_pair=True)
        return out

    # types -------------------------------------------------------------------
    def prim(self, value: object, typ: t.Prim, loc: _Loc) -> object:
        if typ.name == "json":
            result = self.json_value(value, loc)
        else:
            scalar = SCALARS.get(typ.name)
            if scalar is None:
                return _plain(value)
            if isinstance(value, _BareName):  # a bare word is an enum member, never text
                return self.mismatch(loc, _EXPECTED[typ.name], value)
            try:
                result = scalar.export(scalar.load(value))
            except Misfit as misfit:
                return _worded_misfit(self, misfit, typ.name, loc)
        if result is not _INVALID and typ.refinement is not None:
            self.refine(result, typ.refinement, loc)
        return result

    def optional(self, value: object, typ: t.Optional, loc: _Loc) -> object:
        return None if value is None else self.check(value, typ.inner, loc)

    def none(self, value: object, typ: t.NoneType, loc: _Loc) -> object:
        return None if value is None else self.mismatch(loc, "none", value)

    def list_of(self, value: object, typ: t.ListOf, loc: _Loc) -> object:
        if not is_array(value):
            return self.mismatch(loc, f"an array ({t.show(typ)})", value)
        element = typ.element
        shallow = loc.depth < MAX_DEPTH  # else check() reports the elements as too deep
        normalise = _fast_path(element) if shallow else None
        out: list[object] = []
        for i, item in enumerate(value):
            if normalise is not None and type(item) is not _BareName:
                try:
                    out.append(normalise(item))
                    continue
                except Misfit:
                    pass
            out.append(self.check(item, element, loc.index(i)))
        if typ.refinement is not None:
            self.refine(out, typ.refinement, loc)
        return out

    def set_of(self, value: object, typ: t.SetOf, loc: _Loc) -> object:
        if not is_array(value):
            return self.mismatch(loc, f"an array ({t.show(typ)})", value)
        out: list[object] = []

        def checked() -> Iterator[tuple[int, object]]:
            for i, item in enumerate(value):
                out.append(self.check(item, typ.element, loc.index(i)))
                if out[i] is not _INVALID:
                    yield i, frozen(out[i])

        for i, first in repeats(checked()):  # each reported as soon as it is seen
            self.report("WS601", loc.index(i), f"{_show(out[i])} repeats "
                        f"{loc.index(first).text}; a set holds each element once",
                        related=[(loc.index(first), "the first occurrence")])
        if typ.refinement is not None:
            self.refine(out, typ.refinement, loc)
        return out

    def map_of(self, value: object, typ: t.MapOf, loc: _Loc) -> object:
        if not is_object(value):
            return self.mismatch(loc, f"an object ({t.show(typ)})", value)
        self.check_repeated(value, loc)
        out: dict[object, object] = {}
        shallow = loc.depth < MAX_DEPTH  # else check() reports the entries as too deep
        normalise = _fast_path(typ.value) if shallow else None
        text_keys = load_str if shallow and _fast_path(typ.key) is _STR_PATH else None
        for name, item in value.items():
            if self.full:
                break
            key = _fast_value(name, text_keys)
            if key is _INVALID:
                key = self.key_from_text(name, typ.key, loc.key(name).as_key())
            checked = _fast_value(item, normalise)
            if checked is _INVALID:
                checked = self.check(item, typ.value, loc.key(name))
            if key is not _INVALID:
                out[key] = checked
        if typ.refinement is not None:
            self.refine(out, typ.refinement, loc)
        return out

    def named(self, value: object, typ: t.Named, loc: _Loc) -> object:
        checker = _NAMED_CHECKERS.get(typ.kind)
        return checker(self, value, typ, loc) if checker is not None else _plain(value)

    def enum(self, value: object, typ: t.Named, loc: _Loc) -> object:
        info = self.world.enums.get(typ.name)
        if info is None:
            return _plain(value)
        values = {m.value: m for m in info.members.values()}
        if isinstance(value, _BareName):
            member = info.members.get(value)
            if member is not None:
                return member.value
            return self.report("WS207", loc, f"{info.name} has no member '{value}'",
                               hints=did_you_mean(value, info.members))
        try:
            return load_member(value, values).value
        except Misfit as misfit:
            if misfit.reason is Reason.WRONG_TYPE:
                return self.mismatch(loc, f"{info.name} ({_show_list(map(_quote, values))})",
                                     value)
        assert isinstance(value, str)
        hints = did_you_mean(value, values)
        named = info.members.get(value)
        if named is not None:
            hints = [f"{named.name} is written {_quote(named.value)} in data"]
        return self.report("WS207", loc, f"{_quote(value)} is not in {info.name}; expected one "
                           f"of {_show_list(map(_quote, values))}", hints=hints)

    def record(self, value: object, typ: t.Named, loc: _Loc) -> object:
        rec = self.world.records.get(typ.name)
        if rec is None:
            return _plain(value)
        if not is_object(value):
            return self.mismatch(loc, f"{rec.name} (an object)", value)
        return self.fields(value, rec, loc)

    def reference(self, value: object, typ: t.Named, loc: _Loc) -> object:
        """An entity used as a field type: the key of a row in its table."""
        rec = self.world.records.get(typ.name)
        key = rec.key if rec is not None else None
        if key is None:
            return _plain(value)
        if isinstance(value, (dict, list)):
            return self.report("WS601", loc, f"expected a key of {typ.name} "
                               f"({t.show(key.type)}), found {_show(value)}",
                               hints=["a reference holds the row's key; put the row itself "
                                      "in its table"])
        checked = self.check(value, key.type, loc)
        if checked is not _INVALID:
            self.refs.append(_Ref(typ.name, checked, loc))
        return checked

    def union(self, value: object, typ: t.Named, loc: _Loc) -> object:
        info = self.world.unions.get(typ.name)
        if info is None:
            return _plain(value)
        tags = _show_list(info.variants)
        if not is_object(value):
            return self.mismatch(loc, f"{info.name} (an object with a {info.tag_field!r} "
                                 f"tag: {tags})", value)
        tag_loc = loc.field(info.tag_field)
        try:
            tag = union_tag(value, info.tag_field, info.variants)
        except Misfit as misfit:
            if misfit.reason is Reason.NO_TAG:
                return self.report("WS603", loc, f"{info.name} needs its tag field "
                                   f"{info.tag_field!r} (one of {tags})")
            if misfit.reason is Reason.WRONG_TYPE:
                return self.mismatch(tag_loc, f"a tag of {info.name} ({tags})", misfit.value)
            return self.report("WS207", tag_loc, f"{_quote(str(misfit.value))} is not a "
                               f"variant of {info.name}; the tags are {tags}",
                               hints=did_you_mean(str(misfit.value), info.variants))
        rec = self.world.records.get(info.variants[tag])
        if rec is None:
            return _plain(value)
        out = self.fields(value, rec, loc, extra=frozenset({info.tag_field}))
        if info.tag_field not in rec.fields:
            out[info.tag_field] = str(tag)
        return out

    def refine(self, value: object, ref: t.Refinement, loc: _Loc) -> None:
        """Check a range (numbers), a length range (text, collections) and a pattern."""
        try:
            if ref.low is not None or ref.high is not None:
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    check_within(value, ref.low, ref.high)
                elif isinstance(value, (str, list, dict)):
                    check_length_within(value, ref.low, ref.high)
            if ref.pattern is not None and isinstance(value, str):
                check_matches(value, ref.pattern)
        except Misfit as misfit:
            self.report("WS601", loc, _REFINEMENT_WORDS[misfit.reason](value, ref))
        except ToolError:
            return  # not an RE2 pattern: WS312, reported on the schema

    def unicode(self, text: str, loc: _Loc) -> object:
        """``text`` itself, or WS617 when it holds a lone surrogate (not Unicode text)."""
        try:
            return load_str(text)
        except Misfit as misfit:
            return self.surrogate(text, misfit.detail, loc)

    def surrogate(self, text: str, at: int, loc: _Loc) -> object:
        """WS617 for text holding a lone surrogate at index ``at``."""
        escaped = json.dumps(text[at])[1:-1]
        return self.report("WS617", loc, f"the text holds a lone surrogate ({escaped} at "
                           f"character {at}), which is not valid Unicode",
                           hints=["a surrogate is half of a UTF-16 pair; write the whole "
                                  "character, or \\u escapes of both halves"])

    def json_value(self, value: object, loc: _Loc) -> object:
        """Any JSON value, copied; bare names and non-finite numbers are not JSON."""
        if value is _TOO_DEEP or loc.depth > MAX_DEPTH:
            return self.too_deep(loc)
        if isinstance(value, dict):
            self.check_repeated(value, loc)
            for k in value:
                self.unicode(k, loc.key(k).as_key())
            return {k: self.json_value(v, loc.key(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json_value(v, loc.index(i)) for i, v in enumerate(value)]
        if isinstance(value, _BareName):
            return self.mismatch(loc, _EXPECTED["json"], value)
        try:
            return load_json_leaf(value)
        except Misfit as misfit:
            return _worded_misfit(self, misfit, "json", loc)


# ------------------------------------------------------------ scalars, worded
# What fits a scalar is the runtime's decision (``worldspec.runtime.shapes``): a misfit comes
# back as data, and these tables word it as the checker always has.

#: builtin type name -> what a value of another type is told it should have been
_EXPECTED: dict[str, str] = {
    "str": "str", "int": "int", "float": "float", "number": "number", "bool": "bool",
    "date": 'a date ("YYYY-MM-DD")', "datetime": 'a datetime ("YYYY-MM-DDTHH:MM:SS")',
    "duration": "a duration (a number of seconds)", "json": "a JSON value",
}

#: builtin type name -> what a NaN or an infinity is told it should have been
_EXPECTED_FINITE: dict[str, str] = {
    "float": "a finite float", "number": "a finite number",
    "duration": "a finite number of seconds", "json": "a finite number",
}

#: builtin type name -> why text is not a value of it (the text is shown before)
_BAD_TEXT: dict[str, str] = {
    "date": 'is not a date ("YYYY-MM-DD")',
    "datetime": 'is not an ISO datetime ("YYYY-MM-DDTHH:MM:SS")',
}

_OFFSET = "has a UTC offset; datetimes are naive (the world's local time)"


# How the checker reports a scalar's misfit: by its reason, given the builtin type's name.
_Report = Callable[["_Validator", Misfit, str, "_Loc"], object]

#: reason -> the problem reported (each returns :data:`_INVALID`)
_SCALAR_REPORTS: dict[Reason, _Report] = {
    Reason.WRONG_TYPE: lambda v, m, name, loc: v.mismatch(loc, _EXPECTED[name], m.value),
    Reason.NOT_FINITE: lambda v, m, name, loc: v.mismatch(loc, _EXPECTED_FINITE[name],
                                                          m.value),
    Reason.SURROGATE: lambda v, m, name, loc: v.surrogate(str(m.value), m.detail, loc),
    Reason.TOO_LARGE: lambda v, m, name, loc: v.report(
        "WS601", loc, f"{_show(m.value)} is too large for a float"),
    Reason.TOO_LONG: lambda v, m, name, loc: v.report(
        "WS601", loc, f"{_show(m.value)} seconds is too long for a duration"),
    Reason.OFFSET: lambda v, m, name, loc: v.report(
        "WS601", loc, f"{_quote(str(m.value))} {_OFFSET}", hints=["drop the offset or the 'Z'"]),
    Reason.BAD_TEXT: lambda v, m, name, loc: v.report(
        "WS601", loc, f"{_quote(str(m.value))} {_BAD_TEXT[name]}"),
}


def _worded_misfit(v: _Validator, misfit: Misfit, name: str, loc: _Loc) -> object:
    """Report why a value does not fit the builtin type ``name``; :data:`_INVALID`."""
    return _SCALAR_REPORTS[misfit.reason](v, misfit, name, loc)


def _text_problem(load: Callable[[object], object], name: str, text: str) -> str | None:
    try:
        load(text)
    except Misfit as misfit:
        return _OFFSET if misfit.reason is Reason.OFFSET else _BAD_TEXT[name]
    return None


def date_text_problem(text: str) -> str | None:
    """Why ``text`` is not a date (``YYYY-MM-DD``, ISO's extended form only), or None: the
    runtime's rule (``shapes.load_date``), for a ``date("...")`` literal."""
    return _text_problem(load_date, "date", text)


def datetime_text_problem(text: str) -> str | None:
    """Why ``text`` is not a datetime of data, a config clock or a ``datetime("...")``
    literal, or None: ``YYYY-MM-DDTHH:MM[:SS[.ffffff]]`` (``T`` or a space), no UTC offset.

    The runtime's rule (``shapes.load_datetime``): the world's clock is naive, so an offset
    is refused rather than dropped or converted.
    """
    return _text_problem(load_datetime, "datetime", text)


_Normaliser = Callable[[object], object]
_STR_PATH: Final = SCALARS["str"].normalise


def _fast_value(value: object, normalise: _Normaliser | None) -> object:
    """``value`` by the fast path ``normalise`` (:func:`_fast_path`), or :data:`_INVALID`
    for the general check to decide and report."""
    if normalise is None or type(value) is _BareName:
        return _INVALID
    try:
        return normalise(value)
    except Misfit:
        return _INVALID


def _fast_path(typ: t.Type) -> _Normaliser | None:
    """The runtime's normaliser of ``typ`` when it is an unrefined scalar, else None.

    The common case of a data file (text for a ``str``, an int for an ``int``) is taken
    with it alone, without the general check and the value's location; a value it refuses
    (:class:`Misfit`), or a bare name, goes to the general check, which decides the same
    way and reports."""
    if type(typ) is not t.Prim or typ.refinement is not None:
        return None
    scalar = SCALARS.get(typ.name)
    return None if scalar is None else scalar.normalise


# The second parameter is the specific type class each checker is registered for.
_TypeChecker = Callable[[_Validator, object, Any, _Loc], object]

#: semantic type class -> checker; types absent here (unknown, table, sequence) pass as given.
_TYPE_CHECKERS: dict[type[t.Type], _TypeChecker] = {
    t.Prim: _Validator.prim,
    t.Optional: _Validator.optional,
    t.NoneType: _Validator.none,
    t.ListOf: _Validator.list_of,
    t.SetOf: _Validator.set_of,
    t.MapOf: _Validator.map_of,
    t.Named: _Validator.named,
}

#: kind of a named type -> checker.
_NAMED_CHECKERS: dict[str, _TypeChecker] = {
    "enum": _Validator.enum,
    "record": _Validator.record,
    "entity": _Validator.reference,
    "union": _Validator.union,
}

#: kind of a state item -> checker of its data.
_STATE_CHECKERS: dict[str, Callable[[_Validator, object, StateInfo, _Loc], object]] = {
    "table": _Validator.state_table,
    "sequence": _Validator.state_sequence,
    "value": _Validator.state_value,
}


# ----------------------------------------------------------------- loading
@dataclass(frozen=True, slots=True)
class _Loaded:
    value: object
    spans: _SpanIndex | None


def _read_file(given: n.Given, source: str, spec_path: str,
               sink: DiagnosticSink) -> _Loaded | None:
    """Read and parse a ``given "file.json"``; problems are WS604 at the ``given``."""
    full = os.path.join(os.path.dirname(spec_path), source)

    def fail(why: str, hints: Iterable[str] = ()) -> None:
        sink.report("WS604", given.span, f"data file {_quote(source, None)} {why}",
                    hints=hints)

    try:
        mode = os.stat(full).st_mode
        if stat.S_ISDIR(mode):
            fail("is a directory, not a JSON file")
            return None
        if not stat.S_ISREG(mode):  # a pipe or a device could block or never end
            fail("is not a regular file")
            return None
        with open(full, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        fail(f"does not exist (looked for {_quote(os.path.normpath(full), None)})",
             ["paths are relative to the spec file"])
        return None
    except (OSError, ValueError) as exc:  # permissions, a NUL in the path, ...
        fail(f"cannot be read: {exc}")
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        fail(f"is not valid UTF-8 (bad byte at offset {exc.start})")
        return None
    try:
        value = json.loads(text, object_pairs_hook=_json_object_hook)
    except json.JSONDecodeError as exc:
        fail(f"is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}")
        return None
    except RecursionError:
        fail("is nested too deeply to read")
        return None
    except ValueError as exc:  # e.g. an integer with too many digits
        fail(f"is not valid JSON: {exc}")
        return None
    return _Loaded(value, None)


def _load(given: n.Given, spec_path: str, sink: DiagnosticSink) -> _Loaded | None:
    """A ``given``'s value (and, for inline data, its spans); None after WS604."""
    if isinstance(given.source, str):
        return _read_file(given, given.source, spec_path, sink)
    spans = _SpanIndex(given.span)
    spans.entries[()] = (given.source.span, None)
    return _Loaded(_convert(given.source, (), spans, 0), spans)


def _validate(validator: _Validator, value: object) -> dict[str, object]:
    try:
        return validator.check_data(value)
    except RecursionError:
        validator.too_deep(_Loc())
        return {}


# ------------------------------------------------------------------- entry
def check_given(given: n.Given, path: str, world: WorldModel, sink: DiagnosticSink) -> None:
    """Report every value of ``given`` that does not fit the schema, by JSON path.

    ``path`` is the spec file; a data file is looked up relative to its folder.
    References are checked against the tables this ``given`` itself defines
    (other ``given`` items of the task are merged by :func:`load_initial_data`).
    """
    loaded = _load(given, path, sink)
    if loaded is None:
        return
    validator = _Validator(world, given.span, loaded.spans)
    _validate(validator, loaded.value)
    validator.check_references(validator.tables, validator.refs)
    validator.flush(sink)


@dataclass(frozen=True, slots=True)
class _CheckedFile:
    """What checking one data file against a world gave (reused by every task naming it)."""

    value: dict[str, object]
    problems: tuple[_Problem, ...]
    tables: dict[str, dict[object, _Loc]]
    refs: tuple[_Ref, ...]


def _file_key(given: n.Given, path: str) -> tuple[str, int, int] | None:
    """(real path, mtime, size) of a ``given`` file, the key of what checking it gave; None
    for inline data or a file that cannot be inspected (``_read_file`` reports it)."""
    if not isinstance(given.source, str):
        return None
    full = os.path.join(os.path.dirname(path), given.source)
    try:
        info = os.stat(full)
        return (os.path.realpath(full), info.st_mtime_ns, info.st_size)
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class _MergedFiles:
    """What one sequence of data files gave a task: the merged value, and each file's
    problems once its references were checked (reused by every task naming those files)."""

    value: dict[str, object]
    problems: tuple[tuple[_Problem, ...], ...]


def _checked_file(given: n.Given, path: str, world: WorldModel, sink: DiagnosticSink
                  ) -> tuple[_Validator, dict[str, object]] | None:
    """A ``given``'s validator (problems, tables, references) and its normalised value.

    A data file is read and checked once per world and file version: its problems all sit at
    the ``given`` (a file has no inner spans), so a later task gets the same result at its
    own ``given``. The normalised value is shared between those tasks and never changed.
    """
    key = _file_key(given, path)
    if key is not None:
        cached = world.data_files.get(key)
        if isinstance(cached, _CheckedFile):
            validator = _Validator(world, given.span, None)
            validator.problems = list(cached.problems)
            validator.tables = cached.tables
            validator.refs = list(cached.refs)
            return validator, cached.value
    loaded = _load(given, path, sink)
    if loaded is None:
        return None
    validator = _Validator(world, given.span, loaded.spans)
    value = _validate(validator, loaded.value)
    if key is not None:
        world.data_files[key] = _CheckedFile(value, tuple(validator.problems),
                                             validator.tables, tuple(validator.refs))
    return validator, value


def load_initial_data(task: n.TaskDecl, path: str, world: WorldModel,
                      sink: DiagnosticSink) -> dict[str, object] | None:
    """The task's initial data: its ``given`` items merged in order, checked and normalised.

    A later ``given`` replaces the top-level keys of an earlier one. The result
    maps state names (a state item's alias where it has one, as loaded) to plain
    values (tables as lists of row dicts, references as keys, enums as their
    serialised strings); it is None when anything was reported. References are
    checked against the tables of the merged data.
    """
    keys = tuple(_file_key(given, path) for given in task.givens)
    files_key = ("merged", *keys) if keys and None not in keys else None
    merged_before = world.data_files.get(files_key) if files_key is not None else None
    if isinstance(merged_before, _MergedFiles):
        # The same files as an earlier task: the same value (one object, so what is derived
        # from it is derived once) and the same problems, reported at this task's ``given``s.
        failed = False
        for given, problems in zip(task.givens, merged_before.problems, strict=True):
            validator = _Validator(world, given.span, None)
            validator.problems = list(problems)
            failed = validator.flush(sink) or failed
        return None if failed else merged_before.value
    merged: dict[str, object] = {}
    origin: dict[str, _Validator] = {}  # by state name (the data's keys may be aliases)
    names = {key: state.name for key, state in _load_keys(world).items()}
    validators: list[_Validator] = []
    failed = False
    for given in task.givens:
        checked = _checked_file(given, path, world, sink)
        if checked is None:
            failed = True
            continue
        validator, value_map = checked
        validators.append(validator)
        for key, value in value_map.items():
            merged[key] = value
            origin[names.get(key, key)] = validator
    tables = {name: v.tables[name] for name, v in origin.items() if name in v.tables}
    for validator in validators:
        live = [r for r in validator.refs
                if origin.get(names.get(r.loc.state, r.loc.state)) is validator]
        validator.check_references(tables, live)
        failed = validator.flush(sink) or failed
    if files_key is not None and len(validators) == len(task.givens):
        world.data_files[files_key] = _MergedFiles(
            merged, tuple(tuple(v.problems) for v in validators))
    return None if failed else merged


def check_data(world: WorldModel, data: object) -> tuple[dict[str, object] | None, list[str]]:
    """Plain JSON ``data`` (keys are state names, or their aliases) checked against ``world``,
    without a spec.

    The normalised data (None when anything is wrong) and the problems as ``$.path:
    message`` texts: what a ``given`` file holding ``data`` would give. The differential
    test of value acceptance compares this with what the generated runtime accepts.
    """
    validator = _Validator(world, Span(world.file, 1, 1, 1, 1), None)
    value = _validate(validator, data)
    validator.check_references(validator.tables, validator.refs)
    if validator.problems:
        return None, [p.text for p in validator.problems]
    return value, []
