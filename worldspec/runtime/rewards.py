"""How a task's checks combine into its reward: one row per mode of ``reward`` in a spec.

A world chooses with ``config { reward: MODE }``, a task overrides it with the item
``reward MODE``. :meth:`Episode.score` combines the outcomes of the checks with the mode's
function. The compiler, which never loads the runtime, validates the names against its own
copy of them (``worldspec.compiler.model.REWARD_MODES``, with the modes that count weights);
``tests/test_reward_modes.py`` keeps the two in step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["DEFAULT_REWARD", "REWARD_MODES", "RewardMode", "combine_checks"]

#: one check's outcome as the combination sees it: (holds, weight)
Outcome = tuple[bool, float]


def _weighted(outcomes: Sequence[Outcome]) -> float:
    """The weighted share of the checks that hold."""
    total = sum(weight for _, weight in outcomes) or 1.0
    return sum(weight for holds, weight in outcomes if holds) / total


def _mean(outcomes: Sequence[Outcome]) -> float:
    """The share of the checks that hold, every check counting the same."""
    return sum(1 for holds, _ in outcomes if holds) / len(outcomes)


def _all(outcomes: Sequence[Outcome]) -> float:
    """1 when every check holds, else 0: the product of 0/1 components (tau2's reward)."""
    return 1.0 if all(holds for holds, _ in outcomes) else 0.0


class RewardMode:
    """One way of combining checks: its name, its function and why one would choose it."""

    __slots__ = ("combine", "counts_frame", "counts_weights", "name", "reason")

    def __init__(self, name: str, combine: Callable[[Sequence[Outcome]], float], *,
                 counts_weights: bool, counts_frame: bool, reason: str) -> None:
        self.name = name
        self.combine = combine
        #: whether a check's ``weight`` changes the result (a weight is pointless otherwise)
        self.counts_weights = counts_weights
        #: whether the frame is one of the components, whatever ``frame_zeroes`` says
        self.counts_frame = counts_frame
        self.reason = reason


REWARD_MODES: dict[str, RewardMode] = {mode.name: mode for mode in (
    RewardMode("weighted", _weighted, counts_weights=True, counts_frame=False,
               reason="partial credit where some checks matter more than others"),
    RewardMode("mean", _mean, counts_weights=False, counts_frame=False,
               reason="partial credit, every check counting the same"),
    RewardMode("all", _all, counts_weights=False, counts_frame=True,
               reason="all-or-nothing: the task is done or it is not, as tau2-bench grades"),
)}

DEFAULT_REWARD = "weighted"


def combine_checks(mode: str, outcomes: Sequence[Outcome]) -> float:
    """The checks' reward under ``mode`` (0 for a task without checks: nothing was shown).

    An unknown mode raises ``ValueError`` naming the modes: the compiler never emits one,
    so only a hand-built task or a caller's argument can hold it.
    """
    found = REWARD_MODES.get(mode)
    if found is None:
        raise ValueError(f"unknown reward mode {mode!r}; the modes are "
                         f"{', '.join(REWARD_MODES)}")
    return found.combine(outcomes) if outcomes else 0.0
