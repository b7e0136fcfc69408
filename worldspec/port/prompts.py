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
from worldspec.port.skeleton import ModuleName

__all__ = ["difference_feedback", "method_compile_feedback", "module_names_text",
           "shadowing_text", "tool_text", "translate_method_messages"]

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
- A parameter named like a state item hides it in the body: there the bare name is the
  parameter. Keep the parameter's name (the agent sees it) and write `state.x` for the state
  item `x` (parameter `stocks`, state `stocks`: `state.stocks[symbol]`).
- What the differential test compares: after every call, the result, and the public state:
  every attribute of the original without a leading `_` (`vars(obj)`, as JSON) against the
  world's state item of the same name (`export_state()`). The names must be the same (none
  missing, none extra) and each value the same JSON: a `map` or a record is compared as a dict
  (records by field name), a `table` as the dict of dicts keyed by row key (or as a list of
  rows), a `set` in any order, lists in order, `1` and `1.0` differ. So a changed state shape
  is accepted only where its JSON stays the same (`map[str, json]` to `map[str, Order]`, a
  dict of dicts to a `table`); renaming, splitting or adding public state items is a
  difference. State the original does not show (its `_` attributes, a helper you need) must
  be `private` (`private cache: map[str, int] = {}`): private items are not compared.
- Loading: where the original reads an attribute from another key of its data
  (`self.engine_state = scenario.get("engineState", "stopped")`), keep the attribute's name and
  give the key: `engine_state: str from "engineState" = "stopped"` (data then gives it under
  `engineState` only).
- Randomness: `random_int(lo, hi)` draws like Python's `Random.randint` on the episode's
  RNG, seeded by `config { seed: N }`; use it where the Python draws from `Random(N)`."""


def _system() -> str:
    return f"{_ROLE}\n\n{LANGUAGE_REFERENCE}\n\n{_RULES}"


def _context(class_source: str, class_name: str, world_text: str) -> str:
    return (f"The original Python class `{class_name}`:\n\n```python\n{class_source.rstrip()}\n"
            f"```\n\nThe world so far (tools not yet ported fail with `not ported yet`):\n\n"
            f"```world\n{world_text.rstrip()}\n```")


def module_names_text(names: Sequence[ModuleName], what: str) -> str:
    """What the model must know of the module-level names ``what`` uses (outside the class,
    so not in the class's source): each definition, or that its value is unknown here."""
    if not names:
        return (f"{what} uses no module-level names (constants, imports or functions outside "
                "the class).")
    defined = [d for d in names if d.kind != "import"]
    imported = [d for d in names if d.kind == "import"]
    parts = [f"{what} uses these names defined outside the class, at the module's top level "
             "(not in the class's source above):"]
    if defined:
        seen: list[str] = []
        for d in defined:
            if d.code not in seen:
                seen.append(d.code)
        parts.append("```python\n" + "\n".join(seen) + "\n```")
    if imported:
        lines = "\n".join(f"- `{d.name}`: `{d.code}`" for d in imported)
        parts.append("Imported from other modules (their values are not in this file, so "
                     f"unknown here; a standard-library name is what Python's is):\n{lines}")
    return "\n\n".join(parts)


def shadowing_text(params: Sequence[str], state: Sequence[str], method: str) -> str:
    """Which of the method's parameters hide a state item of the same name, if any."""
    hidden = [p for p in params if p in set(state)]
    if not hidden:
        return ""
    named = ", ".join(f"`{p}`" for p in hidden)
    first = hidden[0]
    return (f"In `{method}`, the parameter(s) {named} have the names of state items: in the "
            f"tool's body the bare name is the parameter; write `state.{first}` (and so on) "
            "for the state item. Keep the parameter names.")


def translate_method_messages(*, class_source: str, class_name: str, world_text: str,
                              method: str, method_source: str,
                              module_names: Sequence[ModuleName] = (),
                              params: Sequence[str] = (), state: Sequence[str] = ()
                              ) -> list[Message]:
    """Ask for the WorldSpec ``tool`` of one Python method."""
    extra = [module_names_text(module_names, f"The method `{method}` (with the private "
                                             "methods it calls)"),
             shadowing_text(params, state, method)]
    user = (f"{_context(class_source, class_name, world_text)}\n\nPort the method `{method}`:"
            f"\n\n```python\n{method_source.rstrip()}\n```\n\n"
            + "".join(f"{x}\n\n" for x in extra if x)
            + f"Reply with the complete `tool {method}` declaration (and the declarations it "
              "needs) in one ```world block.")
    return [{"role": "system", "content": _system()}, {"role": "user", "content": user}]


def method_compile_feedback(problems: Sequence[dict[str, Any]], method: str) -> str:
    """The repair request when the world with the new tool does not check clean."""
    return ("With your declarations in place, the compiler rejects the world. Its diagnostics, "
            "as JSON (line and column refer to the whole world; `source` is that line):\n\n"
            f"```json\n{json.dumps(list(problems), indent=1, ensure_ascii=False)}\n```\n\n"
            f"Fix every error and reply with the corrected `tool {method}` (and whatever else "
            "you change) in one ```world block. (This conversation holds the first request and "
            "your latest reply only, not earlier repair rounds.)")


def tool_text(world_text: str, tool: str) -> str | None:
    """The current declaration of ``tool`` in ``world_text`` (None when it has none)."""
    from worldspec.dsl import nodes as n
    from worldspec.dsl.diagnostics import DiagnosticSink
    from worldspec.dsl.parser import parse_module

    parsed = parse_module(world_text, "world.world", DiagnosticSink())
    for decl in parsed.module.decls:
        if isinstance(decl, n.ToolDecl) and decl.name.name == tool:
            return world_text[decl.span.start:decl.span.end]
    return None


def difference_feedback(*, class_source: str, class_name: str, world_text: str,
                        differences: Sequence[dict[str, Any]],
                        module_names: Sequence[ModuleName] = ()) -> list[Message]:
    """Ask to remove what the differential test found (each with its shortest sequence)."""
    tools = sorted({str(d.get("tool")) for d in differences if d.get("tool")})
    named = ", ".join(f"`{t}`" for t in tools) or "the tools involved"
    current = [(t, tool_text(world_text, t)) for t in tools]
    shown = "".join(f"The current text of `{t}`:\n\n```world\n{text.rstrip()}\n```\n\n"
                    for t, text in current if text)
    user = (f"{_context(class_source, class_name, world_text)}\n\n"
            "This request starts a new conversation: the earlier translation requests, your "
            "replies and earlier repair rounds are not included. The world above is the "
            "current text of every declaration.\n\n" + shown
            + (module_names_text(module_names, "The class") + "\n\n" if module_names else "")
            + "The world checks clean, but "
            "the differential test ran the original class and the world with the same calls "
            "and they disagree. Each difference comes with the shortest call sequence found "
            "that shows it, and what each side answered to each call (`original`: the "
            "Python's return value, or the exception it raised; `world`: the world's "
            f"result):\n\n```json\n{json.dumps(list(differences), indent=1, ensure_ascii=False)}"
            f"\n```\n\nChange {named} so that the world answers exactly as the original, and "
            "reply with the corrected declarations in one ```world block.")
    return [{"role": "system", "content": _system()}, {"role": "user", "content": user}]
