"""What a tool's result shows of the world's rows, read from a declared type.

A result renders an entity at its top (``-> Loan``) and every ``row[E]`` as the object of the
row's fields; any other entity inside it (in a list, a map, a record field) is only its key.
Two questions follow from that, answered here for every stage that asks them: where a type
holds a whole row (a value stored or sent by an agent cannot: it is a key there), and which
field names a rendered result contains.
"""

from __future__ import annotations

from dataclasses import dataclass

from worldspec.compiler import types as t
from worldspec.compiler.model import RecordInfo, WorldModel

__all__ = ["whole_row_inside", "ResultContents", "result_contents"]


def whole_row_inside(typ: t.Type, world: WorldModel,
                     seen: frozenset[str] = frozenset()) -> str | None:
    """Where ``typ`` holds a ``row[E]``, as the user would name it (``row[Loan]``, or
    ``MemberInfo.open_loans`` when a record field holds it), or None where it holds none."""
    base = t.strip_optional(typ)
    if isinstance(base, (t.ListOf, t.SetOf)):
        return whole_row_inside(base.element, world, seen)
    if isinstance(base, t.MapOf):
        return whole_row_inside(base.value, world, seen)
    if not isinstance(base, t.Named) or base.name in seen:
        return None
    if base.kind == "entity":
        return t.show(base) if base.whole_row else None
    for record in _records_of(base, world):
        for field in record.fields.values():
            inside = whole_row_inside(field.type, world, seen | {base.name})
            if inside is not None:
                return f"{record.name}.{field.name}" if inside.startswith("row[") else inside
    return None


@dataclass(frozen=True)
class ResultContents:
    """What a rendered result contains: field names, and the entities it shows by key only."""

    fields: frozenset[str]
    keyed_entities: frozenset[str]


def result_contents(typ: t.Type, world: WorldModel) -> ResultContents:
    """What a result of type ``typ`` contains when rendered: the fields of its records, of the
    entity at its top and of its whole rows, recursively; an entity shown by key contributes
    its key field's name alone (and is listed among the keyed entities)."""
    fields: set[str] = set()
    keyed: set[str] = set()
    _collect(typ, world, True, fields, keyed, set())
    return ResultContents(frozenset(fields), frozenset(keyed))


def _collect(typ: t.Type, world: WorldModel, top: bool, fields: set[str], keyed: set[str],
             seen: set[tuple[str, bool]]) -> None:
    base = t.strip_optional(typ)
    if isinstance(base, (t.ListOf, t.SetOf)):
        _collect(base.element, world, False, fields, keyed, seen)
    elif isinstance(base, t.MapOf):
        _collect(base.value, world, False, fields, keyed, seen)
    elif isinstance(base, t.Named) and base.kind != "enum":
        whole = base.kind != "entity" or top or base.whole_row
        if (base.name, whole) in seen:
            return
        seen.add((base.name, whole))
        for record in _records_of(base, world):
            if not whole:
                keyed.add(record.name)
                key = record.key
                fields.update([key.name] if key is not None else [])
                continue
            fields.update(record.fields)
            for field in record.fields.values():
                _collect(field.type, world, False, fields, keyed, seen)
        if base.kind == "union" and base.name in world.unions:
            fields.add(world.unions[base.name].tag_field)


def _records_of(named: t.Named, world: WorldModel) -> list[RecordInfo]:
    """The records a named type renders as: itself, or a union's variants."""
    if named.kind == "union":
        union = world.unions.get(named.name)
        variants = union.variants.values() if union is not None else ()
        return [world.records[r] for r in variants if r in world.records]
    record = world.records.get(named.name)
    return [record] if record is not None else []

