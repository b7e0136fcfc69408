"""Rollout records as supervised fine-tuning data, in the Hugging Face ``messages`` + ``tools``
convention.

One row per kept rollout: ``messages`` (the OpenAI-format conversation: system, user,
assistant turns with ``tool_calls`` whose ``function.arguments`` are JSON *text*, and ``tool``
results as text), ``tools`` (the world's tool definitions, as JSON text so that every row has
the same column types whatever the world: ``json.loads(row["tools"])`` gives the list a chat
template takes), ``setting`` (``one-shot`` or ``conversational``: the setting the system
prompt, the first message, was built for; :mod:`worldspec.services.prompts` builds it for
rollouts and task rows alike), and ``world``, ``task``, ``sample``, ``reward``, ``passed``,
``world_sha256``. The file loads with ``datasets.load_dataset("json", data_files=FILE)``.

Which rollouts are kept: every finished one with a reward of at least ``min_reward`` (default
1: the successes), or with ``best_of`` the single best sample of each task (highest reward,
then the lowest sample index) when it reaches ``min_reward``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from worldspec.rollout.records import RolloutRecord, record_passed
from worldspec.services.prompts import setting_name

__all__ = ["COLUMNS", "sft_rows", "select_rollouts"]

#: The columns of every row, in order.
COLUMNS = ("messages", "tools", "setting", "world", "task", "sample", "reward", "passed",
           "world_sha256")


def select_rollouts(records: Iterable[RolloutRecord], *, best_of: bool = False,
                    min_reward: float = 1.0) -> list[RolloutRecord]:
    """The finished records to keep, in (world, task, sample) order."""
    finished = [r for r in records if r.get("status") == "finished"
                and float(r.get("reward") or 0.0) >= min_reward - 1e-9]
    if best_of:
        best: dict[tuple[str, str], RolloutRecord] = {}
        for record in finished:
            group = (str(record.get("world")), str(record.get("task")))
            held = best.get(group)
            if held is None or _rank(record) > _rank(held):
                best[group] = record
        finished = list(best.values())
    return sorted(finished, key=lambda r: (str(r.get("world")), str(r.get("task")),
                                           int(r.get("sample") or 0)))


def _rank(record: RolloutRecord) -> tuple[float, int]:
    return float(record.get("reward") or 0.0), -int(record.get("sample") or 0)


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    """One message with the same keys on every row (``None`` where a role has no such key)."""
    calls = [c for c in message.get("tool_calls") or [] if isinstance(c, Mapping)]
    content = message.get("content")
    return {"role": message.get("role"),
            "content": content if isinstance(content, str) else "",
            "tool_calls": [_call(c) for c in calls] or None,
            "tool_call_id": message.get("tool_call_id")}


def _call(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function")
    function = function if isinstance(function, Mapping) else {}
    arguments = function.get("arguments", "")
    return {"id": str(call.get("id", "")), "type": "function",
            "function": {"name": str(function.get("name", "")),
                         "arguments": arguments if isinstance(arguments, str)
                         else json.dumps(arguments, ensure_ascii=False)}}


def _setting(record: RolloutRecord) -> str:
    """The record's setting (records written before it was recorded have ``conversational``)."""
    recorded = record.get("setting")
    return str(recorded) if recorded else setting_name(bool(record.get("conversational")))


def sft_rows(records: Iterable[RolloutRecord]) -> list[dict[str, Any]]:
    """One training row per record, columns as :data:`COLUMNS`."""
    return [{"messages": [_message(m) for m in record.get("messages", [])],
             "tools": json.dumps(record.get("tools", []), ensure_ascii=False, sort_keys=True),
             "setting": _setting(record),
             "world": record.get("world"), "task": record.get("task"),
             "sample": int(record.get("sample") or 0),
             "reward": float(record.get("reward") or 0.0),
             "passed": record_passed(record),
             "world_sha256": record.get("world_sha256")}
            for record in records]
