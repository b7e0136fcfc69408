"""Invariants may not depend on the clock."""

from __future__ import annotations

from typing import ClassVar

from worldspec.compiler.rules import RuleContext
from worldspec.dsl import nodes as n

__all__ = ["InvariantClock"]


class InvariantClock:
    """An invariant that reads `now` changes truth without any tool call (WS505)."""

    codes: ClassVar[tuple[str, ...]] = ("WS505",)

    def check(self, ctx: RuleContext) -> None:
        for inv in ctx.world.invariants.values():
            for node in n.walk(inv.condition):
                if isinstance(node, n.NameRef) and node.name == "now":
                    res = ctx.program.resolutions.get(id(node))
                    if res is not None and res.kind == "builtin":
                        ctx.sink.report("WS505", node.span, f"invariant '{inv.name}' reads the "
                                        "clock (`now`)", hints=["check time rules as `require` "
                                                                "preconditions in the tools"])
