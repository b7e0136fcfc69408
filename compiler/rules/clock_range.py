"""The world clock can tick for a whole long episode without overflowing."""

from __future__ import annotations

import datetime as dt
from typing import ClassVar

from worldspec.compiler.rules import RuleContext
from worldspec.dsl import nodes as n

__all__ = ["ClockRange", "MAX_TICK", "MIN_CALLS"]

#: the longest a tool call may take on the world clock, in seconds (a day)
MAX_TICK = 86_400
#: how many successful calls the clock must be able to tick through: far more than any
#: episode makes (real ones make tens to hundreds), so the run time never meets the end
MIN_CALLS = 100_000


class ClockRange:
    """A `tick` over a day (WS509), or a clock that would pass year 9999 within 100,000
    calls (WS508), is reported instead of failing every call once the clock runs out."""

    codes: ClassVar[tuple[str, ...]] = ("WS508", "WS509")

    def check(self, ctx: RuleContext) -> None:
        cfg = ctx.world.config
        if not cfg.tick:
            return
        spans = _config_spans(ctx)
        where = spans.get("tick") or spans.get("clock")
        if where is None:
            return  # the defaults are sound; a value that was not valid is WS503 already
        if cfg.tick > MAX_TICK:
            ctx.sink.report("WS509", where, f"tick is {cfg.tick:,} seconds; a call may take "
                            f"at most {MAX_TICK:,} (a day)",
                            hints=["tick is in seconds: 60 is a minute, 3600 an hour"])
            return
        start = dt.datetime.fromisoformat(cfg.clock)
        calls = (dt.datetime.max - start) // dt.timedelta(seconds=cfg.tick)
        if calls < MIN_CALLS:
            ctx.sink.report("WS508", spans.get("clock") or where,
                            f"a clock starting at {cfg.clock} and ticking {cfg.tick:,} s "
                            f"per call runs out of time (year 9999) after {calls:,} calls; "
                            f"it must last {MIN_CALLS:,}",
                            hints=["start the clock earlier, or use a smaller tick"])


def _config_spans(ctx: RuleContext) -> dict[str, n.Span]:
    """Where the first config block of the world's file writes each key's value."""
    for module in ctx.program.modules:
        if module.path != ctx.world.file:
            continue
        for decl in module.decls:
            if isinstance(decl, n.ConfigDecl):
                spans: dict[str, n.Span] = {}
                for item in decl.items:
                    spans.setdefault(item.name.name, item.value.span)
                return spans
    return {}
