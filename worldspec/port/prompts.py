"""The prompts of ``worldspec port``: translate one method, repair it, remove a difference.

Pure functions of their inputs, like :mod:`llm_frontend.prompts`: the same request always
gets the same messages (so the request journal can replay an interrupted run). Each carries
the condensed language reference, the rules of a faithful port, the original class's source
and the world as it stands.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from worldspec.llm_frontend.client import Message
from worldspec.llm_frontend.reference_text import LANGUAGE_REFERENCE

__all__ = ["difference_feedback", "method_compile_feedback", "translate_method_messages"]

_ROLE = ("You port Python tool environments to WorldSpec, a small typed language for the "
         "stateful tool environments LLM agents are trained and evaluated in. A compiler checks "
         "what you write, and a differential test runs the original class and your world side "
         "by side with random calls and compares every result and the state after each call.")

_RULES = """\
Rules of a faithful port:
- Behave exactly like the Python method for every input: the same result (the same keys,
  values and error texts, character for character), the same state changes, in the same
  order. Keep the Python's quirks; do not fix its bugs.
- Keep every state name and parameter name as the skeleton has them: they are the Python
  attribute and parameter names, and the differential test matches them by name.
- Results under `config { results: bfcl }`: a tool's result is returned as it is. Declare
  `-> json` and return the dict the Python returns as a map literal
  (`return {"user_id": user_map[user]}`). Where the Python returns an error dict, return that
  dict too (`return {"error": f"User '{user}' not found."}`): a call that returns keeps the
  changes it made, as the Python does.
- `fail "text"` ends the call as failed and undoes all its changes; write it only where the
  Python raises an exception, with exactly the exception's text as the message
  (`raise ValueError("Invalid amount")` is `fail "Invalid amount"`).
- Under `config { results: envscaler }` a tool's value `x` becomes `{"success": true,
  "data": x}` and `fail "e"` becomes `{"success": false, "error": "e"}`.
- Dicts are `map[K, V]` (ordered, like Python's), lists are `list[T]`; `json` holds any JSON
  value and mixes types in literals.
- Reply with one ```world code block holding the complete `tool` declaration of the method,
  and any `fn`, `record`, `enum` or `type` declarations it needs (new ones, or changed ones
  in full). To change the state, include the whole `state { ... }` block; to change the
  config (the result convention, the episode `seed` a Python `random.Random(seed)` needs),
  the whole `config { ... }` block. Nothing else: no `world` header, no other tools.
- Randomness: `random_int(lo, hi)` draws like Python's `Random.randint` on the episode's
  RNG, seeded by `config { seed: N }`; use it where the Python draws from `Random(N)`."""


def _system() -> str:
    return f"{_ROLE}\n\n{LANGUAGE_REFERENCE}\n\n{_RULES}"


def _context(class_source: str, class_name: str, world_text: str) -> str:
    return (f"The original Python class `{class_name}`:\n\n```python\n{class_source.rstrip()}\n"
            f"```\n\nThe world so far (tools not yet ported fail with `not ported yet`):\n\n"
            f"```world\n{world_text.rstrip()}\n```")


def translate_method_messages(*, class_source: str, class_name: str, world_text: str,
                              method: str, method_source: str) -> list[Message]:
    """Ask for the WorldSpec ``tool`` of one Python method."""
    user = (f"{_context(class_source, class_name, world_text)}\n\nPort the method `{method}`:"
            f"\n\n```python\n{method_source.rstrip()}\n```\n\nReply with the complete `tool "
            f"{method}` declaration (and the declarations it needs) in one ```world block.")
    return [{"role": "system", "content": _system()}, {"role": "user", "content": user}]


def method_compile_feedback(problems: Sequence[dict[str, Any]], method: str) -> str:
    """The repair request when the world with the new tool does not check clean."""
    return ("With your declarations in place, the compiler rejects the world. Its diagnostics, "
            "as JSON (line and column refer to the whole world; `source` is that line):\n\n"
            f"```json\n{json.dumps(list(problems), indent=1, ensure_ascii=False)}\n```\n\n"
            f"Fix every error and reply with the corrected `tool {method}` (and whatever else "
            "you change) in one ```world block.")


def difference_feedback(*, class_source: str, class_name: str, world_text: str,
                        differences: Sequence[dict[str, Any]]) -> list[Message]:
    """Ask to remove what the differential test found (each with its shortest sequence)."""
    tools = sorted({str(d.get("tool")) for d in differences if d.get("tool")})
    named = ", ".join(f"`{t}`" for t in tools) or "the tools involved"
    user = (f"{_context(class_source, class_name, world_text)}\n\nThe world checks clean, but "
            "the differential test ran the original class and the world with the same calls "
            "and they disagree. Each difference comes with the shortest call sequence found "
            "that shows it, and what each side answered to each call (`original`: the "
            "Python's return value, or the exception it raised; `world`: the world's "
            f"result):\n\n```json\n{json.dumps(list(differences), indent=1, ensure_ascii=False)}"
            f"\n```\n\nChange {named} so that the world answers exactly as the original, and "
            "reply with the corrected declarations in one ```world block.")
    return [{"role": "system", "content": _system()}, {"role": "user", "content": user}]
