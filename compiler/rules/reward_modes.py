"""Reward modes are known, and a check's weight only stands where the mode counts it."""

from __future__ import annotations

from typing import ClassVar

from worldspec.compiler.model import REWARD_MODES, WEIGHED_REWARD_MODES
from worldspec.compiler.rules import RuleContext
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import Related, did_you_mean

__all__ = ["RewardModes"]


class RewardModes:
    """Report unknown reward modes (WS626), a task's second mode (WS204) and weights the
    task's mode ignores (WS625)."""

    codes: ClassVar[tuple[str, ...]] = ("WS204", "WS626", "WS625")

    def check(self, ctx: RuleContext) -> None:
        config = ctx.world.config
        if config.reward_span is not None:
            self._known(ctx, config.reward, config.reward_span)
        for task in ctx.world.tasks.values():
            items = [i for i in task.node.items if isinstance(i, n.Reward)]
            for extra in items[1:]:
                ctx.sink.report("WS204", extra.span, "the task's reward mode is declared twice",
                                related=[Related(items[0].span, "first declared here")])
            mode = items[0].mode.name if items else config.reward
            if items and not self._known(ctx, mode, items[0].mode.span):
                continue
            if mode not in REWARD_MODES or mode in WEIGHED_REWARD_MODES:
                continue
            whose = "the task's" if items else "the world's"
            for check in task.node.checks:
                if check.weight is not None:
                    ctx.sink.report("WS625", check.span, f"check '{check.name.name}' has a "
                                    f"weight, but {whose} reward mode '{mode}' counts every "
                                    "check the same", hints=["drop the weight, or declare "
                                                             "`reward weighted` in the task"])

    @staticmethod
    def _known(ctx: RuleContext, mode: str, span: n.Span) -> bool:
        """Whether ``mode`` names a reward mode; reports WS626 when it does not."""
        if mode in REWARD_MODES:
            return True
        shown = f"'{mode}'" if mode else "a value that is not a name"
        ctx.sink.report("WS626", span, f"unknown reward mode {shown}",
                        hints=did_you_mean(mode, REWARD_MODES) or
                        [f"the modes: {', '.join(REWARD_MODES)}"])
        return False
