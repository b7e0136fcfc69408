"""Statements after a return or fail can never run."""

from __future__ import annotations

from typing import ClassVar

from compiler.rules import RuleContext
from compiler.rules.flow import always_exits
from dsl import nodes as n
from dsl.diagnostics import Related

__all__ = ["UnreachableCode"]


class UnreachableCode:
    """Report the first statement of a block that follows an exiting statement (WS401)."""

    codes: ClassVar[tuple[str, ...]] = ("WS401",)

    def check(self, ctx: RuleContext) -> None:
        for tool in [*ctx.world.tools.values(), *ctx.world.fns.values()]:
            if tool.file == ctx.world.file or tool.is_fn:
                self._block(ctx, tool.node.body)

    def _block(self, ctx: RuleContext, block: n.Block) -> None:
        exit_stmt: n.Stmt | None = None
        for stmt in block.body:
            if exit_stmt is not None:
                ctx.sink.report("WS401", stmt.span, "unreachable code",
                                related=[Related(exit_stmt.span, "the block always ends here")])
                break
            if always_exits(stmt):
                exit_stmt = stmt
        for stmt in block.body:
            for child in n.walk(stmt):
                if isinstance(child, n.Block) and child is not block:
                    self._direct(ctx, child)

    def _direct(self, ctx: RuleContext, block: n.Block) -> None:
        exit_stmt: n.Stmt | None = None
        for stmt in block.body:
            if exit_stmt is not None:
                ctx.sink.report("WS401", stmt.span, "unreachable code",
                                related=[Related(exit_stmt.span, "the block always ends here")])
                return
            if always_exits(stmt):
                exit_stmt = stmt
