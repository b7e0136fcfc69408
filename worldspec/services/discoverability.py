"""Discoverability: a reference solution names only what the agent was shown before the call.

A task is solvable only when an agent could reach its reference solution from what it is
shown. So every argument value of a solution call that *names* something must appear, before
that call, in the instruction, the simulated user's persona or ``known`` information (never
``unknown``), the world's policy, the tool definitions the agent gets (names, descriptions,
parameter docs, enum values), or a result an earlier call of the solution returned (its text,
and the strings, keys and numbers inside it when it is JSON).

What names something: an entity-typed parameter's key (a string or a number), and any string,
also nested in lists, sets, maps, records and ``json`` values. What an agent computes or says
in its own words names nothing: numbers that are not entity keys, booleans, dates, datetimes
and durations, enum members (the schema lists them), and ``freeform`` parameters and record
fields (``body: str freeform "The message text."``).

A value is shown by a text when it occurs there case-insensitively, whitespace-normalised
and token-bounded (a token is a run of letters and digits): ``"L002"`` is not shown by
``"L0021"``, and ``"Fatima"`` is shown by the user id ``"fatima_taylor_3452"``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from worldspec.compiler.model import ParamInfo, ToolInfo, WorldModel
from worldspec.compiler.types import ListOf, MapOf, Named, Optional, Prim, SetOf, Type
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink

__all__ = ["NamedValue", "ShownText", "named_values", "normalised", "report_unseen_arguments",
           "shown_pieces", "unseen_values"]


@dataclass(frozen=True, slots=True)
class NamedValue:
    """A value inside an argument that names something, and where: ``items[0].sku``."""

    path: str
    value: str | int
    #: whether the value is text the agent could have written in its own words (a plain
    #: string, not an entity key): then marking it ``freeform`` is one possible fix
    text: bool


def normalised(text: str) -> str:
    """A text as shown-ness compares it: runs of whitespace as one space, case folded."""
    return " ".join(text.split()).casefold()


class ShownText:
    """Everything shown to the agent so far, searchable for token-bounded values.

    The tool definitions are kept apart: their descriptions hold examples ("the card number,
    e.g. M001") that may happen to name a row of the task's data, and an agent that sends an
    example's id is guessing. So the definitions show what they define (tool and parameter
    names, enum values, formats) but never a row key: :meth:`shows` looks a key up only in
    the rest.
    """

    def __init__(self, texts: Sequence[str] = ()) -> None:
        self._texts: list[str] = [t for t in (normalised(x) for x in texts) if t]
        self._definitions: list[str] = []
        self._joined: str | None = None
        self._joined_definitions: str | None = None

    def copy(self) -> ShownText:
        shown = ShownText()
        shown._texts = list(self._texts)
        shown._definitions = list(self._definitions)
        shown._joined_definitions = self._joined_definitions
        return shown

    def add_value(self, value: Any) -> None:
        """Show a value: a text, and every string, key and number inside JSON data."""
        self._texts.extend(t for t in (normalised(p) for p in shown_pieces(value)) if t)
        self._joined = None

    def add_definitions(self, value: Any) -> None:
        """Show the tool definitions (searched for everything but row keys)."""
        self._definitions.extend(t for t in (normalised(p) for p in shown_pieces(value)) if t)
        self._joined_definitions = None

    def shows(self, value: str | int, *, row_key: bool = False) -> bool:
        """Whether ``value`` occurs in what was shown, as a whole token sequence; a
        ``row_key`` only outside the tool definitions."""
        wanted = normalised(str(value))
        if not wanted:
            return True
        if self._joined is None:
            self._joined = "\n".join(self._texts)
        if _occurs(wanted, self._joined):
            return True
        if row_key:
            return False
        if self._joined_definitions is None:
            self._joined_definitions = "\n".join(self._definitions)
        return _occurs(wanted, self._joined_definitions)


def _occurs(wanted: str, text: str) -> bool:
    """Whether ``wanted`` occurs in ``text`` token-bounded (a plain substring test first: most
    values looked up were never shown, and it is much cheaper than the pattern)."""
    if wanted not in text:
        return False
    head = r"(?<![^\W_])" if re.match(r"[^\W_]", wanted) else ""
    tail = r"(?![^\W_])" if re.search(r"[^\W_]$", wanted) else ""
    return re.search(head + re.escape(wanted) + tail, text) is not None


def shown_pieces(value: Any) -> Iterator[str]:
    """The texts a value shows an agent: a string itself (and the strings, keys and numbers of
    the JSON it holds), a collection's keys and elements, a number's text."""
    if isinstance(value, str):
        yield value
        decoded = _json(value)
        if decoded is not None:
            yield from shown_pieces(decoded)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        yield str(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from shown_pieces(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from shown_pieces(item)


def _json(text: str) -> Any:
    """The JSON value a text holds when it is a JSON object, array or string, else None."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[\"":
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return None


# ------------------------------------------------------------- what an argument names

_Walker = Callable[["_Walk", Any, Any, str], Iterator[NamedValue]]


@dataclass(frozen=True, slots=True)
class _Walk:
    world: WorldModel

    def values(self, value: Any, typ: Type, path: str) -> Iterator[NamedValue]:
        if value is None:
            return
        walker = _WALKERS.get(type(typ))
        if walker is not None:
            yield from walker(self, value, typ, path)


def _prim(walk: _Walk, value: Any, typ: Prim, path: str) -> Iterator[NamedValue]:
    if typ.name == "str" and isinstance(value, str) and value.strip():
        yield NamedValue(path, value, text=True)
    elif typ.name == "json":
        yield from _json_strings(value, path)
    # numbers, bools, dates, datetimes, durations: computed or stated in the agent's words


def _json_strings(value: Any, path: str) -> Iterator[NamedValue]:
    if isinstance(value, str):
        if value.strip():
            yield NamedValue(path, value, text=True)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _json_strings(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _json_strings(item, f"{path}[{i}]")


def _optional(walk: _Walk, value: Any, typ: Optional, path: str) -> Iterator[NamedValue]:
    yield from walk.values(value, typ.inner, path)


def _elements(walk: _Walk, value: Any, typ: ListOf | SetOf, path: str) -> Iterator[NamedValue]:
    if isinstance(value, list | tuple | set | frozenset):
        for i, item in enumerate(value):
            yield from walk.values(item, typ.element, f"{path}[{i}]")


def _map(walk: _Walk, value: Any, typ: MapOf, path: str) -> Iterator[NamedValue]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from walk.values(key, typ.key, f"{path} key")
            yield from walk.values(item, typ.value, f"{path}[{json.dumps(key)}]")


def _named(walk: _Walk, value: Any, typ: Named, path: str) -> Iterator[NamedValue]:
    kind = _NAMED_KINDS.get(typ.kind)
    if kind is not None:
        yield from kind(walk, value, typ, path)


def _entity_key(walk: _Walk, value: Any, typ: Named, path: str) -> Iterator[NamedValue]:
    if isinstance(value, str | int) and not isinstance(value, bool):
        if not (isinstance(value, str) and not value.strip()):
            yield NamedValue(path, value, text=False)


def _record(walk: _Walk, value: Any, typ: Named, path: str,
            skip: str | None = None) -> Iterator[NamedValue]:
    record = walk.world.records.get(typ.name)
    if record is None or not isinstance(value, Mapping):
        return
    for name, item in value.items():
        info = record.fields.get(str(name))
        if info is None or name == skip or info.node.freeform:
            continue
        yield from walk.values(item, info.type, f"{path}.{name}")


def _union(walk: _Walk, value: Any, typ: Named, path: str) -> Iterator[NamedValue]:
    union = walk.world.unions.get(typ.name)
    if union is None or not isinstance(value, Mapping):
        return
    variant = union.variants.get(str(value.get(union.tag_field)))
    if variant is not None:  # the tag is one of the schema's listed values
        yield from _record(walk, value, Named("record", variant), path, skip=union.tag_field)


_WALKERS: dict[type, _Walker] = {
    Prim: _prim, Optional: _optional, ListOf: _elements, SetOf: _elements, MapOf: _map,
    Named: _named,
}

#: what a declared type's value names: an entity its key, records and unions their fields;
#: an enum member nothing (the tool schema lists the members)
_NAMED_KINDS: dict[str, _Walker] = {"entity": _entity_key, "record": _record, "union": _union}


def named_values(param: ParamInfo, value: Any, world: WorldModel) -> list[NamedValue]:
    """What an argument's value names, or nothing for a ``freeform`` parameter."""
    if param.node.freeform:
        return []
    return list(_Walk(world).values(value, param.type, param.name))


# ------------------------------------------------------------------ the diagnostic

_HINTS = (
    "return it from a read tool the solution calls earlier (a field of its result)",
    "or add a read tool that shows it (a search or a list) and call it first",
    "or name it in the instruction or in the task's `known` information",
)
_FREEFORM_HINT = ("or, if the agent writes this text in its own words, mark the parameter "
                  "(or record field) `freeform`")


def unseen_values(param: ParamInfo, arguments: Mapping[str, Any], world: WorldModel,
                  shown: ShownText, row_keys: Set[str] = frozenset()) -> list[NamedValue]:
    """What ``param``'s argument in ``arguments`` names that ``shown`` does not hold (none
    when the call leaves the parameter out). An entity key, or a string equal to one of
    ``row_keys`` (the keys of the task's rows), is a row key: the tool definitions' examples
    do not show it."""
    if param.name not in arguments:
        return []
    return [v for v in named_values(param, arguments[param.name], world)
            if not shown.shows(v.value, row_key=not v.text or str(v.value) in row_keys)]


def report_unseen_arguments(call: n.SolutionCall, tool: ToolInfo, arguments: Mapping[str, Any],
                            world: WorldModel, shown: ShownText, sink: DiagnosticSink,
                            row_keys: Set[str] = frozenset()) -> None:
    """Report (WS624) each argument of ``call`` that names a value ``shown`` does not hold.

    An entity key, or a string equal to one of ``row_keys`` (the keys of the task's rows), is
    a row key: the tool definitions' examples do not show it."""
    nodes = _argument_nodes(call, tool)
    for param in tool.params:
        unseen = unseen_values(param, arguments, world, shown, row_keys)
        if not unseen:
            continue
        values = ", ".join(
            (f"{v.path}: " if v.path != param.name else "") + json.dumps(v.value,
                                                                         ensure_ascii=False)
            for v in unseen)
        one = len(unseen) == 1
        sink.report("WS624", nodes.get(param.name, call).span,
                    f"solution call {tool.name}() passes {param.name}: {values}, "
                    f"{'a value' if one else 'values'} the agent was never shown before the "
                    "call",
                    hints=[*_HINTS, *([_FREEFORM_HINT] if any(v.text for v in unseen) else [])])


def _argument_nodes(call: n.SolutionCall, tool: ToolInfo) -> dict[str, n.Node]:
    """Each argument's value node, by parameter name (positional ones by place)."""
    found: dict[str, n.Node] = {}
    for i, arg in enumerate(call.args):
        if arg.name is not None:
            found[arg.name.name] = arg.value
        elif i < len(tool.params):
            found[tool.params[i].name] = arg.value
    return found
