"""A tool or helper with a return type must return on every path."""

from __future__ import annotations

from typing import ClassVar

from worldspec.compiler.rules import RuleContext
from worldspec.compiler.rules.flow import block_exits, match_coverage

__all__ = ["MissingReturn"]


class MissingReturn:
    """Report bodies that can fall off the end while a value is declared (WS402)."""

    codes: ClassVar[tuple[str, ...]] = ("WS402",)

    def check(self, ctx: RuleContext) -> None:
        covers = match_coverage(ctx)
        for info in [*ctx.world.tools.values(), *ctx.world.fns.values()]:
            if info.returns is None or block_exits(info.node.body, covers):
                continue
            kind = "helper" if info.is_fn else "tool"
            ctx.sink.report("WS402", info.node.name.span,
                            f"{kind} '{info.name}' can end without returning a value",
                            hints=["end every path with `return` or `fail`"])
