"""A step API for RL trainers: a world as an in-process text environment (``worldspec.rl``).

A front end over :mod:`worldspec.rollout.session`: :class:`~worldspec.rl.env.TextEnv` gives
``reset(task, seed) -> (messages, tools)`` and ``step(assistant_message) -> (messages, reward,
done, info)`` (``areset``/``astep`` in a conversation with a simulated user), sharing the
rollout runner's turn logic so both produce the same trajectories. Loading a generated package
and stepping it never imports the compiler. See ``docs/serving.md``.
"""

from __future__ import annotations

from worldspec.rl.env import TRAJECTORY_FIELDS, StepResult, TextEnv

__all__ = ["TRAJECTORY_FIELDS", "StepResult", "TextEnv"]
