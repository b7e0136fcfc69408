"""The reasoning a model may write before its answer, and its removal.

Reasoning models put their thoughts in ``<think>...</think>`` blocks ahead of the answer.
Whatever reads an answer (the model client's JSON extraction, the ``.world`` code of a reply)
reads it without them. Here, apart from the model client, so that reading a reply needs no
HTTP client.
"""

from __future__ import annotations

import re

__all__ = ["strip_reasoning"]

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def strip_reasoning(text: str) -> str:
    """``text`` without ``<think>...</think>`` blocks (and an unclosed one at the start)."""
    cleaned = _THINK.sub("", text)
    if cleaned.lstrip().lower().startswith("<think>"):
        end = cleaned.lower().rfind("</think>")
        cleaned = cleaned[end + len("</think>"):] if end >= 0 else ""
    return cleaned.strip()
