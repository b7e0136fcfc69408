"""Entities that are referenced, passed or stored need exactly one key of a key type."""

from __future__ import annotations

from typing import ClassVar

from worldspec.compiler import types as t
from worldspec.compiler.rules import RuleContext
from worldspec.dsl.diagnostics import Related

__all__ = ["EntityKeys", "entity_uses"]


def entity_uses(ctx: RuleContext) -> dict[str, list[tuple[str, object]]]:
    """Entity name -> where it is used by key: (description, span)."""
    uses: dict[str, list[tuple[str, object]]] = {}

    def note(typ: t.Type, what: str, span: object) -> None:
        entity = t.referenced_entity(typ)
        if entity is not None:
            uses.setdefault(entity, []).append((what, span))

    world = ctx.world
    for rec in world.records.values():
        for f in rec.fields.values():
            note(f.type, f"referenced by {rec.name}.{f.name}", f.node.type.span)
    for tool in world.tools.values():
        for p in tool.params:
            note(p.type, f"a parameter of tool {tool.name}", p.node.type.span)
    for state in world.state.values():
        if state.kind == "table" and state.entity:
            uses.setdefault(state.entity, []).append((f"stored in table {state.name}",
                                                      state.node.span))
        else:
            note(state.type, f"referenced by state {state.name}", state.node.span)
    return uses


class EntityKeys:
    """Each entity used by key has one key field of type str, int or an enum (WS501)."""

    codes: ClassVar[tuple[str, ...]] = ("WS501",)

    def check(self, ctx: RuleContext) -> None:
        for name, places in sorted(entity_uses(ctx).items()):
            rec = ctx.world.records.get(name)
            if rec is None:
                continue
            keys = [f for f in rec.fields.values() if f.is_key]
            what, span = places[0]
            related = [Related(span, what)]  # type: ignore[arg-type]
            if not keys:
                ctx.sink.report("WS501", rec.node.name.span, f"entity {name} has no key field",
                                hints=["mark one field with `key`, e.g. `key id: str`"],
                                related=related)
            elif len(keys) > 1:
                ctx.sink.report("WS501", keys[1].node.span, f"entity {name} has several keys",
                                related=[Related(keys[0].node.span, "first key")])
            else:
                key = keys[0]
                ok = key.type in (t.STR, t.INT) or (isinstance(key.type, t.Named)
                                                    and key.type.kind == "enum")
                if not ok and not t.is_unknown(key.type):
                    ctx.sink.report("WS501", key.node.type.span, f"the key of {name} must be "
                                    f"str, int or an enum, not {t.show(key.type)}")
