"""Tool calls read from a file: a JSONL list of calls or an OpenAI chat transcript.

Shared by ``worldspec run --calls`` and the trajectory impact of ``worldspec
diff``; rollout records are transcripts, so they replay through here too.
"""

from __future__ import annotations

import json
from typing import Any

from worldspec.services.files import read_text_file

__all__ = ["read_calls", "read_replies", "transcript_calls"]


#: the largest file of calls or transcript read (a recorded rollout is far smaller; a bigger
#: file fails with a message instead of exhausting memory while it is parsed)
MAX_CALLS_BYTES = 16_000_000


def read_calls(path: str) -> list[tuple[str, Any]]:
    """Tool calls from a JSONL file of calls, or from an OpenAI chat transcript.

    A transcript is a JSON array of messages, an object with ``messages``, or
    JSONL with one message per line; the calls are the ``tool_calls`` of the
    assistant messages, in order (``function.arguments`` as the JSON text the
    model produced).
    """
    text = read_text_file(path, limit=MAX_CALLS_BYTES)
    stripped = text.lstrip()
    if stripped.startswith("[") or (stripped.startswith("{") and "\n{" not in stripped.strip()):
        try:
            whole = json.loads(text)
        except ValueError:
            whole = None
        except RecursionError:  # nested deeper than the parser can go: not calls
            raise ValueError(f"{path}: JSON nested too deeply") from None
        if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
            return transcript_calls(whole["messages"], path)
        if isinstance(whole, list):
            return transcript_calls(whole, path)
        if isinstance(whole, dict):
            return _plain_calls([whole], path)
    items: list[Any] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: not JSON: {exc}") from None
        except RecursionError:
            raise ValueError(f"{path}:{number}: JSON nested too deeply") from None
    if items and all(isinstance(i, dict) and "role" in i for i in items):
        return transcript_calls(items, path)
    if items and all(isinstance(i, dict) and isinstance(i.get("messages"), list)
                     for i in items):  # rollout records: replay one at a time
        if len(items) == 1:
            return transcript_calls(items[0]["messages"], path)
        raise ValueError(f"{path} holds {len(items)} rollout records; replay one of them "
                         f"(for example the third: sed -n 3p {path} > one.json)")
    return _plain_calls(items, path)


def _plain_calls(items: list[Any], path: str) -> list[tuple[str, Any]]:
    calls: list[tuple[str, Any]] = []
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ValueError(f"{path}:{number}: expected an object with a \"name\"")
        calls.append((item["name"], item.get("arguments", {})))
    return calls


def transcript_calls(messages: list[Any], path: str) -> list[tuple[str, Any]]:
    """The tool calls of the assistant messages of a chat transcript, in order (``path``
    names the transcript in errors)."""
    calls: list[tuple[str, Any]] = []
    for number, message in enumerate(messages, 1):
        if not isinstance(message, dict):
            raise ValueError(f"{path}: message {number} is not an object")
        if message.get("role") != "assistant":
            continue
        tool_calls = message.get("tool_calls") or []
        if not isinstance(tool_calls, list):
            raise ValueError(f"{path}: message {number} has tool_calls that are not a list")
        for call in tool_calls:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise ValueError(f"{path}: message {number} has a tool call without a "
                                 "function name")
            calls.append((function["name"], function.get("arguments") or "{}"))
    return calls


def read_replies(path: str) -> list[str]:
    """The text the agent told the user in an OpenAI chat transcript, one entry per
    assistant message that has text (what answer checks read); none for a file of calls.

    ``content`` is a string, or a list of parts whose ``text`` parts are joined.
    """
    text = read_text_file(path, limit=MAX_CALLS_BYTES)
    try:
        whole = json.loads(text)
    except (ValueError, RecursionError):
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
        messages: list[Any] = whole["messages"]
    elif isinstance(whole, list):
        messages = whole
    else:
        messages = []
        for line in text.splitlines():
            try:
                messages.append(json.loads(line) if line.strip() else None)
            except (ValueError, RecursionError):
                return []  # not a transcript: read_calls reports the problem
    replies: list[str] = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part["text"] for part in content if isinstance(part, dict)
                              and part.get("type") == "text" and isinstance(part.get("text"), str))
        if isinstance(content, str) and content.strip():
            replies.append(content)
    return replies
