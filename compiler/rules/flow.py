"""Shared control-flow facts for the flow rules: does a statement always exit?"""

from __future__ import annotations

from dsl import nodes as n

__all__ = ["always_exits"]


def always_exits(stmt: n.Stmt) -> bool:
    """True when every path through ``stmt`` ends in ``return`` or ``fail``."""
    if isinstance(stmt, (n.Return, n.Fail)):
        return True
    if isinstance(stmt, n.If):
        if stmt.orelse is None:
            return False
        other = always_exits(stmt.orelse) if isinstance(stmt.orelse, n.If) else \
            block_exits(stmt.orelse)
        return block_exits(stmt.then) and other
    if isinstance(stmt, n.Match):
        if not stmt.cases and stmt.orelse is None:
            return False
        cases = all(block_exits(c.body) for c in stmt.cases)
        if stmt.orelse is None:
            return False
        return cases and block_exits(stmt.orelse)
    return False


def block_exits(block: n.Block) -> bool:
    return any(always_exits(s) for s in block.body)
