"""Semantic types.

Types are small frozen values compared structurally; named types (enums,
records, entities, unions) compare by name and are looked up in the world
model for their members. Refinements (ranges, lengths, patterns) ride along
on a type but never affect compatibility: they are checked at run time
wherever a value enters a parameter, a field or the state.

``UNKNOWN`` is the type of anything that already produced an error; every
operation on it is allowed and yields ``UNKNOWN`` again, which is how one
mistake does not cascade into many diagnostics.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

__all__ = [
    "Type", "Refinement", "Prim", "Optional", "ListOf", "SetOf", "MapOf", "Named", "Table",
    "Sequence", "NoneType", "Unknown", "EmptyList", "EmptyMap",
    "STR", "INT", "FLOAT", "NUMBER", "BOOL", "DATE", "DATETIME", "DURATION", "JSON", "NONE",
    "UNKNOWN", "SEQUENCE", "PRIMITIVES", "is_numeric", "numeric_result", "is_unknown",
    "strip_optional", "make_optional", "assignable", "converts_to_json", "comparable",
    "join_types", "show", "referenced_entity",
]


@dataclass(frozen=True, slots=True)
class Refinement:
    """A range (numeric value, or length of a string or collection) and/or a pattern."""

    low: int | float | None = None
    high: int | float | None = None
    pattern: str | None = None


class Type:
    """Base class of semantic types."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Prim(Type):
    """A builtin scalar type: str int float number bool date datetime duration json.

    ``number`` is Python's int-or-float: each value keeps which one it is (``3`` stays an int,
    ``3.0`` a float) through arithmetic, storage and results, as in Python."""

    name: str
    refinement: Refinement | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Prim) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("prim", self.name))


@dataclass(frozen=True, slots=True)
class Optional(Type):
    """``T?``."""

    inner: Type


@dataclass(frozen=True, slots=True)
class ListOf(Type):
    """``list[T]``."""

    element: Type
    refinement: Refinement | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ListOf) and other.element == self.element

    def __hash__(self) -> int:
        return hash(("list", self.element))


@dataclass(frozen=True, slots=True)
class SetOf(Type):
    """``set[T]``."""

    element: Type
    refinement: Refinement | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SetOf) and other.element == self.element

    def __hash__(self) -> int:
        return hash(("set", self.element))


@dataclass(frozen=True, slots=True)
class MapOf(Type):
    """``map[K, V]``."""

    key: Type
    value: Type
    refinement: Refinement | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MapOf) and (other.key, other.value) == (self.key, self.value)

    def __hash__(self) -> int:
        return hash(("map", self.key, self.value))


@dataclass(frozen=True, slots=True)
class Named(Type):
    """A declared type: ``kind`` is enum, record, entity or union.

    ``whole_row`` marks ``row[E]``: an entity that a tool's result shows as the object of its
    row's fields where it would otherwise show only the key (in lists, maps and record
    fields). It is an ``E`` in every other respect, so it takes no part in comparison."""

    kind: str
    name: str
    whole_row: bool = field(default=False, compare=False)


@dataclass(frozen=True, slots=True)
class Table(Type):
    """``table E``: the rows of entity ``E`` keyed by its key."""

    entity: str


@dataclass(frozen=True, slots=True)
class Sequence(Type):
    """An id generator (only usable through ``next``)."""


@dataclass(frozen=True, slots=True)
class NoneType(Type):
    """The type of the literal ``none``; assignable to every optional."""


@dataclass(frozen=True, slots=True)
class Unknown(Type):
    """The type of an erroneous expression; compatible with everything."""


@dataclass(frozen=True, slots=True)
class EmptyList(Type):
    """The type of ``[]`` before context decides its element type."""


@dataclass(frozen=True, slots=True)
class EmptyMap(Type):
    """The type of ``{}`` before context decides its key and value types."""


STR = Prim("str")
INT = Prim("int")
FLOAT = Prim("float")
NUMBER = Prim("number")
BOOL = Prim("bool")
DATE = Prim("date")
DATETIME = Prim("datetime")
DURATION = Prim("duration")
JSON = Prim("json")
NONE = NoneType()
UNKNOWN = Unknown()
SEQUENCE = Sequence()

#: Builtin type names usable in specs -> type.
PRIMITIVES: dict[str, Type] = {
    "str": STR, "int": INT, "float": FLOAT, "number": NUMBER, "bool": BOOL, "date": DATE,
    "datetime": DATETIME, "duration": DURATION, "json": JSON,
}


def is_unknown(t: Type) -> bool:
    return isinstance(t, Unknown)


def is_numeric(t: Type) -> bool:
    return t == INT or t == FLOAT or t == NUMBER


def numeric_result(left: Type, right: Type) -> Type:
    """The type of ``left op right`` for two numeric types (``+ - * // % **``), as Python's
    int and float combine: int with int is an int, anything with a float is a float, and a
    ``number`` with an int or a number stays a ``number`` (it is whichever Python gives)."""
    if left == right == INT:
        return INT
    if FLOAT in (left, right):
        return FLOAT
    return NUMBER


def strip_optional(t: Type) -> Type:
    return t.inner if isinstance(t, Optional) else t


def make_optional(t: Type) -> Type:
    if isinstance(t, (Optional, NoneType, Unknown)) or t == JSON:
        return t
    return Optional(t)


def assignable(target: Type, value: Type,
               unions: Mapping[str, Collection[str]] | None = None) -> bool:
    """Whether a value of type ``value`` may be stored where ``target`` is expected.

    ``int`` widens to ``float``; ``int`` and ``float`` fit ``number`` (and a ``number`` fits
    ``float``, becoming one); ``none`` fits every optional; ``T`` fits ``T?``;
    anything fits ``json`` except tables and sequences; a variant record fits
    its union (``unions`` maps a union's name to its variant record names).
    """
    if isinstance(target, Unknown) or isinstance(value, Unknown):
        return True
    if target == value:
        return True
    if isinstance(target, Optional):
        if isinstance(value, NoneType):
            return True
        inner = value.inner if isinstance(value, Optional) else value
        return assignable(target.inner, inner, unions)
    if isinstance(value, Optional) or isinstance(value, NoneType):
        return target == JSON
    if target == FLOAT and value in (INT, NUMBER):
        return True
    if target == NUMBER and value in (INT, FLOAT):
        return True
    if target == JSON:
        return not isinstance(value, (Table, Sequence))
    if isinstance(value, EmptyList):
        return isinstance(target, (ListOf, SetOf))
    if isinstance(value, EmptyMap):
        return isinstance(target, MapOf)
    if isinstance(target, ListOf) and isinstance(value, ListOf):
        return assignable(target.element, value.element, unions)
    if isinstance(target, SetOf) and isinstance(value, SetOf):
        return assignable(target.element, value.element, unions)
    if isinstance(target, MapOf) and isinstance(value, MapOf):
        return assignable(target.key, value.key, unions) and assignable(
            target.value, value.value, unions)
    if (isinstance(target, Named) and target.kind == "union" and isinstance(value, Named)
            and unions is not None):
        return value.name in unions.get(target.name, ())
    return False


def widens_int(target: Type, value: Type) -> bool:
    """Whether storing ``value`` as ``target`` turns ints into floats: ``int`` as ``float``,
    ``int?`` as ``float?``, ``list[int]`` as ``list[float]`` (the cases the code generator
    converts)."""
    target, value = strip_optional(target), strip_optional(value)
    if target == FLOAT:
        return value in (INT, NUMBER)
    if isinstance(target, ListOf) and isinstance(value, ListOf):
        return widens_int(target.element, value.element)
    return False


def converts_to_json(target: Type, value: Type) -> bool:
    """Whether storing ``value`` as ``json`` must turn it into plain JSON first: records,
    unions, enum members, dates, durations and collections (a row becomes its key, as
    wherever a row is stored; ``to_json(row)`` gives its fields). Strings, numbers, bools,
    ``none`` and ``json`` are JSON already."""
    if target != JSON:
        return False
    value = strip_optional(value)
    if isinstance(value, Prim):
        return value.name in ("date", "datetime", "duration")
    return isinstance(value, (ListOf, SetOf, MapOf, Named))


def comparable(a: Type, b: Type, unions: Mapping[str, Collection[str]] | None = None) -> bool:
    """Whether ``a == b`` makes sense (the types overlap)."""
    if assignable(a, b, unions) or assignable(b, a, unions):
        return True
    sa, sb = strip_optional(a), strip_optional(b)
    return assignable(sa, sb, unions) or assignable(sb, sa, unions)


def join_types(a: Type, b: Type,
               unions: Mapping[str, Collection[str]] | None = None) -> Type | None:
    """The type of ``if c then a else b``: the wider of the two, or None."""
    if isinstance(a, Unknown):
        return b
    if isinstance(b, Unknown):
        return a
    if isinstance(a, NoneType):
        return make_optional(b)
    if isinstance(b, NoneType):
        return make_optional(a)
    if assignable(a, b, unions):
        return a
    if assignable(b, a, unions):
        return b
    return None


def referenced_entity(t: Type) -> str | None:
    """The entity a stored value refers to by key: ``E``, ``E?``, ``list[E]``, ``map[K, E]``."""
    base = strip_optional(t)
    while isinstance(base, (ListOf, SetOf)):
        base = strip_optional(base.element)
    if isinstance(base, MapOf):
        base = strip_optional(base.value)
    if isinstance(base, Named) and base.kind == "entity":
        return base.name
    return None


def show(t: Type) -> str:
    """The type as a user would write it."""
    if isinstance(t, Prim):
        return t.name
    if isinstance(t, Optional):
        return show(t.inner) + "?"
    if isinstance(t, ListOf):
        return f"list[{show(t.element)}]"
    if isinstance(t, SetOf):
        return f"set[{show(t.element)}]"
    if isinstance(t, MapOf):
        return f"map[{show(t.key)}, {show(t.value)}]"
    if isinstance(t, Named):
        return f"row[{t.name}]" if t.whole_row else t.name
    if isinstance(t, Table):
        return f"table {t.entity}"
    if isinstance(t, Sequence):
        return "sequence"
    if isinstance(t, NoneType):
        return "none"
    if isinstance(t, EmptyList):
        return "list"
    if isinstance(t, EmptyMap):
        return "map"
    return "unknown"
