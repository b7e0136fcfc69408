"""OpenAI tool definitions (Chat Completions and Responses formats), strict mode."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from worldspec.runtime.episode import ToolSpec

__all__ = ["tool_definitions", "parameters_schema"]


def parameters_schema(spec: ToolSpec) -> dict[str, Any]:
    """The JSON schema of a tool's arguments: every property required, nothing extra."""
    return {
        "type": "object",
        "properties": {p.name: p.schema for p in spec.params},
        "required": [p.name for p in spec.params],
        "additionalProperties": False,
    }


def tool_definitions(specs: Iterable[ToolSpec], format: str = "chat") -> list[dict[str, Any]]:
    """Tool definitions in the shape the OpenAI API takes (``chat`` or ``responses``)."""
    out: list[dict[str, Any]] = []
    for spec in specs:
        body = {"name": spec.name, "description": spec.doc,
                "parameters": parameters_schema(spec), "strict": True}
        if format == "chat":
            out.append({"type": "function", "function": body})
        elif format == "responses":
            out.append({"type": "function", **body})
        else:
            raise ValueError(f"unknown tool format {format!r}: use 'chat' or 'responses'")
    return out
