"""Statements after a return, fail, break or continue can never run."""

from __future__ import annotations

from typing import ClassVar

from worldspec.compiler.rules import RuleContext
from worldspec.compiler.rules.flow import Coverage, always_exits, match_coverage
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import Related

__all__ = ["UnreachableCode"]


class UnreachableCode:
    """Report the first statement of a block that follows an exiting statement (WS401)."""

    codes: ClassVar[tuple[str, ...]] = ("WS401",)

    def check(self, ctx: RuleContext) -> None:
        covers = match_coverage(ctx)
        for tool in [*ctx.world.tools.values(), *ctx.world.fns.values()]:
            if tool.file == ctx.world.file or tool.is_fn:
                for node in n.walk(tool.node.body):
                    if isinstance(node, n.Block):
                        self._block(ctx, node, covers)

    def _block(self, ctx: RuleContext, block: n.Block, covers: Coverage) -> None:
        exit_stmt: n.Stmt | None = None
        for stmt in block.body:
            if exit_stmt is not None:
                ctx.sink.report("WS401", stmt.span, "unreachable code",
                                related=[Related(exit_stmt.span, "the block always ends here")])
                return
            if isinstance(stmt, (n.Break, n.Continue)) or always_exits(stmt, covers):
                exit_stmt = stmt
