"""The runtime the generated environments import: episodes, values, helpers."""

from __future__ import annotations

from worldspec.runtime.episode import Episode, Snapshot, TaskSpec, ToolSpec
from worldspec.runtime.errors import ArgumentError, ToolError

__all__ = ["ArgumentError", "Episode", "Snapshot", "TaskSpec", "ToolError", "ToolSpec"]
