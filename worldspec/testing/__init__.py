"""The tools that test a generated world: sampling, the explorer, the per-call properties and
the hypothesis state machine. No world imports them at run time; they sit on the runtime."""

from __future__ import annotations

__all__: list[str] = []
