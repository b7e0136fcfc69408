"""Looking an entity up by key needs exactly one table of it."""

from __future__ import annotations

from typing import ClassVar

from worldspec.compiler.rules import RuleContext
from worldspec.compiler.rules.entity_keys import entity_uses
from worldspec.dsl.diagnostics import Related

__all__ = ["EntityTables"]


class EntityTables:
    """Each entity used as a reference or parameter has one table in the state (WS502)."""

    codes: ClassVar[tuple[str, ...]] = ("WS502",)

    def check(self, ctx: RuleContext) -> None:
        world = ctx.world
        if not world.name:
            return
        for name, places in sorted(entity_uses(ctx).items()):
            lookups = [(w, s) for w, s in places if not w.startswith("stored in")]
            if not lookups:
                continue
            tables = [s for s in world.state.values() if s.kind == "table" and s.entity == name]
            what, span = lookups[0]
            if not tables:
                ctx.sink.report("WS502", span, f"{name} is looked up by key ({what}) but the "  # type: ignore[arg-type]
                                "state has no table of it",
                                hints=[f"add `{name.lower()}s: table {name}` to the state"])
            elif len(tables) > 1:
                ctx.sink.report("WS502", tables[1].node.span, f"{name} is looked up by key "
                                f"({what}) but has several tables",
                                related=[Related(tables[0].node.span, "first table")])
