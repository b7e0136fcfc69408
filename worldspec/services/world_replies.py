"""What a model writes back when asked for ``.world`` text, and the turn that asks again.

Every front end that has a model write WorldSpec (``synth``'s worlds and tasks, ``port``'s
methods) reads the reply the same way and repairs it the same way, so those pieces live
here, below them all:

- :func:`extract_world_code` takes the ``.world`` text out of a reply (a fenced block, or
  the bare text); nothing else of the reply is used.
- :func:`repair_messages` is the conversation for the next attempt: the original request,
  the model's last reply and what was wrong with it. Only the latest attempt is kept, so a
  long repair does not grow the prompt.
- :func:`missing_code_feedback` is what was wrong when the reply holds no code at all.

All are pure functions of their inputs: the same reply always gets the same messages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from worldspec.services.reasoning import strip_reasoning

if TYPE_CHECKING:
    from worldspec.services.model_client import Message

__all__ = ["extract_world_code", "missing_code_feedback", "repair_messages"]


def repair_messages(base: Sequence[Message], previous: str, feedback: str) -> list[Message]:
    """``base`` (the original request), the model's last reply, and what was wrong with it."""
    return [*base, {"role": "assistant", "content": previous},
            {"role": "user", "content": feedback}]


def missing_code_feedback(what: str) -> str:
    """The repair request for a reply that holds no ``.world`` text (``what``: ``task`` ...)."""
    return (f"Your reply holds no {what}. Reply with the complete {what} in one ```world code "
            "block and nothing else.")


_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$",
                    re.DOTALL | re.MULTILINE)
_OPEN_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*)\Z",
                         re.DOTALL | re.MULTILINE)
_CODE_START = re.compile(r"^\s*(#|world\s|task\s|import\s|entity\s|enum\s|record\s|type\s)")
_WORLD_TAGS = ("world", "worldspec", "ws")


def extract_world_code(reply: str) -> str | None:
    """The ``.world`` text of a model reply, or ``None`` when it holds none.

    Prefers a fenced block tagged ``world`` (the largest, if several), then an
    untagged or otherwise tagged block that looks like WorldSpec, then a fence
    the model forgot to close, then the whole reply if it starts like code.
    Reasoning blocks (``<think>...</think>``) are ignored.
    """
    text = strip_reasoning(reply)
    blocks = [(m.group(2).lower(), m.group(3)) for m in _FENCE.finditer(text)]
    tagged = [body for tag, body in blocks if tag in _WORLD_TAGS and body.strip()]
    if tagged:
        return _finish(max(tagged, key=len))
    looking = [body for _, body in blocks if _looks_like_world(body)]
    if looking:
        return _finish(max(looking, key=len))
    unclosed = _OPEN_FENCE.search(text)
    if unclosed is not None and _looks_like_world(unclosed.group(3)):
        return _finish(unclosed.group(3))
    if not blocks and _looks_like_world(text):
        return _finish(text)
    return None


def _looks_like_world(text: str) -> bool:
    return bool(re.search(r"^\s*(world|task)\s+[A-Za-z_]", text, re.MULTILINE)) and \
        bool(_CODE_START.match(text))


def _finish(code: str) -> str:
    return code.strip("\n").rstrip() + "\n"
