"""JSON schemas of tools: the rules that make them, the vocabulary a generated world writes
them with, and the OpenAI tool definitions (Chat Completions and Responses formats, strict
mode) made of them.

One place decides what a schema looks like: the compiler's type tables
(``compiler/codegen/pytypes.py``) build each type's schema with these functions, the
runtime's argument types (:mod:`worldspec.runtime.arguments`) build a parameter's with the
same ones, and a generated world writes a schema the registry shows more than once as a
module constant of calls of them, never as one long literal::

    _SCHEMA_Address = js.closed({'street': js.STRING, 'zip': js.nullable(js.STRING)})

A record's or a row's result is its class (``returns=js.array(Order)``): :func:`result_of`
builds its schema once from the class's fields, each field's from its annotation
(:func:`hinted`) or from its own ``schema=`` where the annotation says less (a refinement:
the compiler writes ``schema=`` exactly there, so the schema is its type tables').

Each function returns a new plain dict, its keys in the order written here, so that a
schema compares and serialises as the literal it stands for; the scalars' constants are
shared and never changed.
"""

from __future__ import annotations

import datetime as dt
import enum
import types
import typing
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final, Union

if TYPE_CHECKING:
    from worldspec.runtime.episode import ToolSpec

__all__ = [
    "tool_definitions", "parameters_schema", "STRING", "INTEGER", "NUMBER", "BOOLEAN", "NULL",
    "JSON_ANY", "SCALARS", "scalar", "refined", "array", "nullable", "any_of", "closed",
    "mapping", "members", "text_in", "result_of", "hinted", "schema_of", "SchemaOf",
]

Schema = dict[str, Any]
#: a schema, or a record's or row's class standing for its result's schema (:func:`result_of`)
SchemaOf = Schema | type

STRING: Final[Schema] = {"type": "string"}
INTEGER: Final[Schema] = {"type": "integer"}
NUMBER: Final[Schema] = {"type": "number"}
BOOLEAN: Final[Schema] = {"type": "boolean"}
NULL: Final[Schema] = {"type": "null"}
#: any JSON value (``json``)
JSON_ANY: Final[Schema] = {
    "type": ["string", "number", "integer", "boolean", "object", "array", "null"]}

#: the schema of each builtin scalar type, by its name in the language
SCALARS: Final[dict[str, Schema]] = {
    "str": STRING, "int": INTEGER, "float": NUMBER, "number": NUMBER, "bool": BOOLEAN,
    "date": {"type": "string", "format": "date"},
    "datetime": {"type": "string", "format": "date-time"},
    "duration": {"type": "number", "description": "seconds"},
    "json": JSON_ANY,
}
#: the scalar types whose refinement is a range of values (not a length)
_NUMERIC = ("int", "float", "number")


def scalar(name: str, low: float | None = None, high: float | None = None,
           pattern: str | None = None) -> Schema:
    """A builtin scalar type's schema, with its refinement: a range of values for a number,
    of lengths for text; a pattern."""
    out = dict(SCALARS[name])
    if name in _NUMERIC:
        return refined(out, minimum=low, maximum=high, pattern=pattern)
    return refined(out, minLength=low, maxLength=high, pattern=pattern)


def refined(schema: Schema, **limits: Any) -> Schema:
    """``schema`` with each of ``limits`` that is not None (in their order)."""
    return {**schema, **{key: value for key, value in limits.items() if value is not None}}


def array(items: SchemaOf, *, unique: bool = False, min_items: int | None = None,
          max_items: int | None = None) -> Schema:
    """A JSON array of ``items`` (``unique``: a set)."""
    return refined({"type": "array", "items": schema_of(items)},
                   uniqueItems=True if unique else None, minItems=min_items, maxItems=max_items)


def nullable(schema: SchemaOf) -> Schema:
    """``schema`` or null."""
    return {"anyOf": [schema_of(schema), NULL]}


def any_of(*options: SchemaOf) -> Schema:
    """One of ``options``."""
    return {"anyOf": [schema_of(option) for option in options]}


def closed(properties: dict[str, SchemaOf], optional: tuple[str, ...] = ()) -> Schema:
    """An object of exactly ``properties``, each required but those ``optional``."""
    return {"type": "object",
            "properties": {name: schema_of(value) for name, value in properties.items()},
            "required": [name for name in properties if name not in optional],
            "additionalProperties": False}


def mapping(values: SchemaOf, *, min_properties: int | None = None,
            max_properties: int | None = None) -> Schema:
    """An object of any keys, each value ``values``."""
    return refined({"type": "object", "additionalProperties": schema_of(values)},
                   minProperties=min_properties, maxProperties=max_properties)


def schema_of(schema: SchemaOf) -> Schema:
    """``schema`` itself, or a record's or row's class as its result's schema."""
    return result_of(schema) if isinstance(schema, type) else schema


# ------------------------------------------------------------- a class's result schema
#: the result schema of each record or row class asked for, built once
_RESULTS: weakref.WeakKeyDictionary[type, Schema] = weakref.WeakKeyDictionary()
#: the result schema of a field of each builtin scalar annotation (as ``export`` writes it:
#: a date as its ISO text)
_HINTED: Final[dict[Any, Schema]] = {
    str: STRING, int: INTEGER, float: NUMBER, bool: BOOLEAN, int | float: NUMBER,
    dt.date: STRING, dt.datetime: STRING, dt.timedelta: SCALARS["duration"],
}


def result_of(cls: type) -> Schema:
    """The schema of a record's or row's ``export``, built once from its fields'
    declarations: each field's own ``schema=`` where it has one, else the schema its
    annotation says (:func:`hinted`); a field left out when none (``omit_none``) optional.

    The compiler writes ``schema=`` exactly where the annotation says less than the type
    (a refinement, a set, a union...), so this is the schema its type tables decide."""
    cached = _RESULTS.get(cls)
    if cached is not None:
        return cached
    fields = getattr(cls, "DECLARED_FIELDS", None)
    if fields is None:
        raise TypeError(f"{cls.__name__} is no record or row class: it has no result schema")
    hints = typing.get_type_hints(cls)
    made = _RESULTS[cls] = closed(
        {f.json: f.schema if f.schema is not None else hinted(hints[f.name]) for f in fields},
        optional=tuple(f.json for f in fields if f.omit_none))
    return made


def hinted(hint: Any) -> Schema:
    """The result schema of a field annotated ``hint``: a builtin scalar's, an enum's
    members, a tuple's as an array, a dict's as an object, an optional's or null, a record's
    or row's class its :func:`result_of`."""
    plain = _HINTED.get(hint)
    if plain is not None:
        return plain
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType) and type(None) in args:
        rest = tuple(arg for arg in args if arg is not type(None))
        return nullable(hinted(rest[0] if len(rest) == 1 else Union[rest]))
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return array(hinted(args[0]))
    if origin is dict and len(args) == 2:
        return mapping(hinted(args[1]))
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return members(hint)
    if isinstance(hint, type) and hasattr(hint, "DECLARED_FIELDS"):
        return result_of(hint)
    raise TypeError(f"no result schema for a field annotated {hint!r}: declare it with "
                    f"field(..., schema=...)")


def members(enum_class: type[enum.Enum]) -> Schema:
    """Text that is one of an enum's members (their values, in declaration order)."""
    return text_in(*(member.value for member in enum_class))


def text_in(*values: str) -> Schema:
    """Text that is one of ``values``."""
    return {"type": "string", "enum": list(values)}


def parameters_schema(spec: ToolSpec) -> dict[str, Any]:
    """The JSON schema of a tool's arguments: every property required, nothing extra."""
    return {
        "type": "object",
        "properties": {p.name: p.schema for p in spec.params},
        "required": [p.name for p in spec.params],
        "additionalProperties": False,
    }


def tool_definitions(specs: Iterable[ToolSpec], format: str = "chat") -> list[dict[str, Any]]:
    """Tool definitions in the shape the OpenAI API takes (``chat`` or ``responses``)."""
    out: list[dict[str, Any]] = []
    for spec in specs:
        body = {"name": spec.name, "description": spec.doc,
                "parameters": parameters_schema(spec), "strict": True}
        if format == "chat":
            out.append({"type": "function", "function": body})
        elif format == "responses":
            out.append({"type": "function", **body})
        else:
            raise ValueError(f"unknown tool format {format!r}: use 'chat' or 'responses'")
    return out
