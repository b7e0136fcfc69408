"""A status line on a terminal, rewritten in place: what long batches show while they run.

Shared by the rollout runner and the synthesis batches; each says what its line holds
(:meth:`StatusLine.line`). When the stream is not a terminal nothing is written, so logs and
pipes get only the final summary.
"""

from __future__ import annotations

from typing import TextIO

__all__ = ["StatusLine"]


class StatusLine:
    """One line rewritten in place (``\\r``), padded over a longer previous one."""

    def __init__(self, stream: TextIO, *, enabled: bool | None = None) -> None:
        self.stream = stream
        if enabled is None:
            try:
                enabled = stream.isatty()
            except (AttributeError, ValueError, OSError):
                enabled = False
        self.enabled = enabled
        self._width = 0

    def line(self) -> str:
        """The text of the line now."""
        raise NotImplementedError

    def draw(self) -> None:
        if not self.enabled:
            return
        text = self.line()
        pad = " " * max(0, self._width - len(text))
        self._width = len(text)
        self.stream.write(f"\r{text}{pad}")
        self.stream.flush()

    def close(self) -> None:
        """End the line, so what is printed next starts on a line of its own."""
        if self.enabled and self._width:
            self.stream.write("\n")
            self.stream.flush()
