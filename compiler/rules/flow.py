"""Shared control-flow facts for the flow rules: does a statement always exit?

A ``match`` without ``else`` exits when every case exits *and* the cases
cover every member of the enum (or every variant of the union) it matches
on. Only the typed model knows the subject's type, so callers pass a
:data:`Coverage` predicate; :func:`match_coverage` builds the usual one.
"""

from __future__ import annotations

from collections.abc import Callable

from worldspec.compiler import types as t
from worldspec.compiler.rules import RuleContext
from worldspec.dsl import nodes as n

__all__ = ["Coverage", "always_exits", "block_exits", "match_coverage"]

#: Whether the cases of a ``match`` (which has no ``else``) cover every possible value.
Coverage = Callable[[n.Match], bool]


def _never_covered(match: n.Match) -> bool:
    return False


def match_coverage(ctx: RuleContext) -> Coverage:
    """A coverage predicate that reads the subject's type from the typed model.

    When the subject's type is unknown (an error was reported for it) or a case
    names a member the type lacks (WS207 was reported), the match is taken as
    covered, so one mistake does not also become a missing return (WS402).
    """

    def covers(match: n.Match) -> bool:
        subject = ctx.program.type_of(match.subject)
        if subject is None:
            return True
        base = t.strip_optional(subject)
        tags: set[str] | None = None
        if isinstance(base, t.Named) and base.kind == "enum":
            info = ctx.world.enums.get(base.name)
            tags = set(info.members) if info is not None else None
        elif isinstance(base, t.Named) and base.kind == "union":
            union = ctx.world.unions.get(base.name)
            tags = set(union.variants) if union is not None else None
        if tags is None:
            return True
        named = {case.tag.name for case in match.cases}
        return bool(named - tags) or tags <= named

    return covers


def always_exits(stmt: n.Stmt, covers: Coverage = _never_covered) -> bool:
    """True when every path through ``stmt`` ends in ``return`` or ``fail``."""
    if isinstance(stmt, (n.Return, n.Fail)):
        return True
    if isinstance(stmt, n.If):
        if stmt.orelse is None:
            return False
        other = always_exits(stmt.orelse, covers) if isinstance(stmt.orelse, n.If) else \
            block_exits(stmt.orelse, covers)
        return block_exits(stmt.then, covers) and other
    if isinstance(stmt, n.Match):
        if not stmt.cases and stmt.orelse is None:
            return False
        cases = all(block_exits(c.body, covers) for c in stmt.cases)
        if stmt.orelse is None:
            return cases and covers(stmt)
        return cases and block_exits(stmt.orelse, covers)
    return False


def block_exits(block: n.Block, covers: Coverage = _never_covered) -> bool:
    """True when some statement of ``block`` always exits (so the block does)."""
    return any(always_exits(s, covers) for s in block.body)
