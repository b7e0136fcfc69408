"""JSON schemas of tools: the rules that make them, the vocabulary a generated world writes
them with, and the OpenAI tool definitions (Chat Completions and Responses formats, strict
mode) made of them.

One place decides what a schema looks like: the compiler's type tables
(``compiler/codegen/pytypes.py``) build each type's schema with these functions, the
runtime's argument types (:mod:`worldspec.runtime.arguments`) build a parameter's with the
same ones, and a generated world writes a schema the registry shows more than once as a
module constant of calls of them, never as one long literal::

    _RESULT_Address = js.closed({'street': js.STRING, 'zip': js.nullable(js.STRING)})
    _RESULT_Order = js.closed({'id': js.STRING, 'status': js.members(OrderStatus),
                               'lines': js.array(_RESULT_Line), 'note': js.STRING},
                              optional=('note',))

Each function returns a new plain dict, its keys in the order written here, so that a
schema compares and serialises as the literal it stands for; the scalars' constants are
shared and never changed.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from worldspec.runtime.episode import ToolSpec

__all__ = [
    "tool_definitions", "parameters_schema", "STRING", "INTEGER", "NUMBER", "BOOLEAN", "NULL",
    "JSON_ANY", "SCALARS", "scalar", "refined", "array", "nullable", "any_of", "closed",
    "mapping", "members", "text_in",
]

Schema = dict[str, Any]

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


def array(items: Schema, *, unique: bool = False, min_items: int | None = None,
          max_items: int | None = None) -> Schema:
    """A JSON array of ``items`` (``unique``: a set)."""
    return refined({"type": "array", "items": items}, uniqueItems=True if unique else None,
                   minItems=min_items, maxItems=max_items)


def nullable(schema: Schema) -> Schema:
    """``schema`` or null."""
    return {"anyOf": [schema, NULL]}


def any_of(*options: Schema) -> Schema:
    """One of ``options``."""
    return {"anyOf": list(options)}


def closed(properties: dict[str, Schema], optional: tuple[str, ...] = ()) -> Schema:
    """An object of exactly ``properties``, each required but those ``optional``."""
    return {"type": "object", "properties": properties,
            "required": [name for name in properties if name not in optional],
            "additionalProperties": False}


def mapping(values: Schema, *, min_properties: int | None = None,
            max_properties: int | None = None) -> Schema:
    """An object of any keys, each value ``values``."""
    return refined({"type": "object", "additionalProperties": values},
                   minProperties=min_properties, maxProperties=max_properties)


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
