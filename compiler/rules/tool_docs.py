"""Every tool needs a description for the agent."""

from __future__ import annotations

from typing import ClassVar

from worldspec.compiler.rules import RuleContext

__all__ = ["ToolDocs"]


class ToolDocs:
    """Warn about tools without a doc string (WS507)."""

    codes: ClassVar[tuple[str, ...]] = ("WS507",)

    def check(self, ctx: RuleContext) -> None:
        for tool in ctx.world.tools.values():
            if not (tool.doc or "").strip():
                ctx.sink.report("WS507", tool.node.name.span, f"tool '{tool.name}' has no "
                                "description", hints=["add a doc string after the signature: "
                                                      "the agent reads it"])
