"""A whole row (``row[E]``) is only something a tool's result shows."""

from __future__ import annotations

from typing import ClassVar

from worldspec.compiler import types as t
from worldspec.compiler.rules import RuleContext
from worldspec.compiler.shown import whole_row_inside
from worldspec.dsl.nodes import Span

__all__ = ["WholeRowPlaces"]


class WholeRowPlaces:
    """Refuse ``row[E]`` where a value is stored or sent: state, entity fields, parameters,
    consts (WS325)."""

    codes: ClassVar[tuple[str, ...]] = ("WS325",)

    def check(self, ctx: RuleContext) -> None:
        world = ctx.world
        places: list[tuple[str, t.Type, Span]] = []
        for item in world.state.values():
            if item.kind == "value":
                places.append((f"state '{item.name}' is stored", item.type, item.node.kind.span))
        for record in world.records.values():
            if record.kind == "entity" and record.file == world.file:
                places += [(f"field {record.name}.{f.name} is stored in a table", f.type,
                            f.node.type.span) for f in record.fields.values()]
        callables = [*world.tools.values(),
                     *(fn for fn in world.fns.values() if fn.file == world.file)]
        for tool in callables:
            what = "helper" if tool.is_fn else "tool"
            places += [(f"parameter '{p.name}' of {what} '{tool.name}' is sent as keys", p.type,
                        p.node.type.span) for p in tool.params]
        for const in world.consts.values():
            if const.declared is not None and const.file == world.file and \
                    const.node.type is not None:
                places.append((f"const '{const.name}' is stored", const.declared,
                               const.node.type.span))
        for where, typ, span in places:
            inside = whole_row_inside(typ, world)
            if inside is None:
                continue
            through = "" if inside.startswith("row[") else f" (through {inside})"
            ctx.sink.report("WS325", span, f"{where}, so it cannot hold a whole row{through}",
                            hints=["row[E] is for what a tool returns: keep E here, and "
                                   "return row[E] where the result should show the row"])
