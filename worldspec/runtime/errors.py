"""Failures a tool call can end in."""

from __future__ import annotations

__all__ = ["ToolError", "ArgumentError", "WrongTypeError", "InvariantError", "InternalError",
           "KeptError", "LimitError"]


class ToolError(Exception):
    """A tool call failed: a precondition, a missing row, a broken constraint or invariant.

    The message is what the agent sees (shaped by the world's result convention).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class KeptError(ToolError):
    """A call failed by ``fail keep``: a failure whose changes so far are kept (the one
    explicit exception to atomicity; the state must still keep every invariant)."""


class LimitError(ToolError):
    """A call passed one of the runtime's guards (its step budget, an int, string or text
    size, a range or ``arithmetic()`` bound, nesting): a failure of the call as a whole,
    which ``attempt()`` and ``error_of()`` do not catch (Python would have gone on)."""


class ArgumentError(ToolError):
    """The arguments of a call do not fit the tool's parameters."""


class WrongTypeError(ArgumentError):
    """An argument (or an element or field of it) is of another JSON type than its
    parameter's (an int for a ``str``). With ``config { arguments: dynamic }`` such a value is
    not refused: the tool gets it as it is, as a Python original would."""


class InvariantError(ToolError):
    """A call would leave the state breaking an invariant or a reference.

    ``where`` names the spec location of the rule (``file.world:line``).
    """

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.where = where


class InternalError(ToolError):
    """A tool call failed on an exception the world does not expect (a bug in the world or
    the compiler, memory running out): the call was rolled back like any failed call.

    The agent sees only that the tool failed and which kind of exception it was, not the
    internals; ``kind`` names the exception type (``"AttributeError"``), ``detail`` holds its
    text and ``tool`` the tool that raised it, for whoever debugs the world.
    """

    def __init__(self, kind: str, detail: str = "", tool: str = "") -> None:
        super().__init__(f"Internal error ({kind}): the tool failed unexpectedly; "
                         "nothing was changed.")
        self.kind = kind
        self.detail = detail
        self.tool = tool
