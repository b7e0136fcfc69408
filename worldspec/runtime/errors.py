"""Failures a tool call can end in."""

from __future__ import annotations

__all__ = ["ToolError", "ArgumentError", "InvariantError"]


class ToolError(Exception):
    """A tool call failed: a precondition, a missing row, a broken constraint or invariant.

    The message is what the agent sees (shaped by the world's result convention).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ArgumentError(ToolError):
    """The arguments of a call do not fit the tool's parameters."""


class InvariantError(ToolError):
    """A call would leave the state breaking an invariant or a reference.

    ``where`` names the spec location of the rule (``file.world:line``).
    """

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.where = where
