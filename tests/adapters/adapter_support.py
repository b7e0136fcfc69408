"""What the adapter tests share: importing the framework, or skipping when it is absent.

verifiers and trl install into the main venv with the other extras (``make install``): under
CI their tests run in the main test run, and a missing framework is a failure, never a skip.
OpenEnv (which pins the MCP SDK 1.x) runs in a venv of its own, ``scripts/test_extra.sh
openenv``, with ``CI=true WORLDSPEC_EXTRA=openenv``. Outside CI an absent framework skips.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from llm_server import RecordedRequest, Reply

from worldspec.runtime.episode import Episode

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "generated" / "mobile_messaging"
Plan = Callable[[str], list[tuple[str, Any]]]

__all__ = ["PACKAGE", "ROOT", "framework", "scripted_agent", "solution"]


#: the extras `make install` puts in the main venv: under CI their tests never skip
MAIN_VENV_EXTRAS = ("verifiers", "trl")


def framework(extra: str, module: str) -> ModuleType:
    """Import ``module`` of the extra ``extra``; skip without it, unless CI runs that extra."""
    required = (os.environ.get("CI", "").lower() == "true"
                and (os.environ.get("WORLDSPEC_EXTRA", "") == extra or extra in MAIN_VENV_EXTRAS))
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if required:
            pytest.fail(f"CI runs the {extra!r} extra but {module} does not import: {exc}")
        pytest.skip(f"{module} is not installed (pip install '.[{extra}]')",
                    allow_module_level=True)


def solution(world: type[Episode], task: str) -> list[tuple[str, Any]]:
    return [(name, dict(arguments)) for name, arguments in world.TASKS[task].solution]


def scripted_agent(world: type[Episode], plan: Plan,
                   user: Callable[[RecordedRequest], str] | None = None
                   ) -> Callable[[RecordedRequest], Reply | str]:
    """One call of ``plan(task)`` per message, fixed ids, then a final answer; requests
    without tools are the simulated user's."""
    by_text = {spec.instruction.strip(): name for name, spec in world.TASKS.items()}

    def respond(request: RecordedRequest) -> Reply | str:
        if not request.body.get("tools"):
            assert user is not None, "a user request without a scripted user"
            return user(request)
        texts = [str(m.get("content")) for m in request.messages if m.get("role") == "user"]
        task = next(by_text[t.strip()] for t in texts if t.strip() in by_text)
        done = sum(1 for m in request.messages if m.get("role") == "tool")
        calls = plan(task)
        if done >= len(calls):
            return "Done: everything you asked for is taken care of."
        name, arguments = calls[done]
        return Reply(tool_calls=[{"id": f"call_{done}", "name": name, "arguments":
                                  arguments if isinstance(arguments, str)
                                  else json.dumps(arguments)}])

    return respond
