"""The prompts of ``worldspec port``: translate one method, repair it, remove a difference.

Pure functions of their inputs, like ``synth``'s prompts: the same request always
gets the same messages (so the request journal can replay an interrupted run).

Every request of one port is laid out for a provider's prompt cache: the long part that
stays the same comes first, byte for byte the same in every request of the port (the system
prompt with the condensed language reference and the rules of a faithful port; then the
:class:`PortContext`: the class's source, its base classes, the module-level names it uses
with their source, its initial data); what changes comes last (the world so far, the method
or the differences).

Values shown to the model (initial data, what each side answered) are bounded per value by
:func:`bounded`: a long list or map keeps its first items and a long text its first words,
each followed by a marker saying how much was left out, so nothing is cut mid-token.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from worldspec.port.skeleton import CUT_MARKER, ClassInfo, MethodInfo, ModuleName
from worldspec.services.language_reference_text import LANGUAGE_REFERENCE
from worldspec.services.model_client import Message

__all__ = ["PORTING_NOTES", "VALUE_RULE", "PortContext", "bounded", "bounded_json",
           "difference_feedback", "method_compile_feedback", "module_names_text",
           "shadowing_text", "tool_text", "translate_method_messages"]

#: how values are compared (the words the differential test's report uses too)
VALUE_RULE = ("Values are compared exactly: an int and a float differ (1 vs 1.0), tuples and "
              "lists differ, sets are compared as sets, dict keys keep their type (\"1\" and 1 "
              "are different keys); a value with no JSON form (an object) is compared by its "
              "repr().")

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
  and any `fn`, `record`, `entity`, `enum`, `type` or `const` declarations it needs (new
  ones, or changed ones in full), and an `on load { ... }` block where state is derived from
  the data when it is loaded (an original whose constructor builds dicts or objects from its
  data). To change the state (add `private` items, say), include the whole `state { ... }`
  block; to change the config (the result convention, the episode `seed` a Python
  `random.Random(seed)` needs), the whole `config { ... }` block. A declaration replaces the
  world's of the same name (the `on load` block replaces the world's). Nothing else: no
  `world` header, no other tools.
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
- {value_rule}
- Loading: where the original reads an attribute from another key of its data
  (`self.engine_state = scenario.get("engineState", "stopped")`), keep the attribute's name and
  give the key: `engine_state: str from "engineState" = "stopped"` (data then gives it under
  `engineState` only).
- Randomness: `random_int(lo, hi)` draws like Python's `Random.randint` on the episode's
  RNG, seeded by `config { seed: N }`; use it where the Python draws from `Random(N)`."""


#: facts of the differential test and porting idioms, each checked against the code and the
#: compiler (tests/test_port_prompts.py compiles the idioms)
PORTING_NOTES = """\
How the differential test runs:
- Arguments come from the world's parameter types: mostly keys and values found in either
  state, else fresh values (boundaries too), so a `number` or `float` parameter gets ints as
  well as floats. An optional parameter is sometimes left out, never sent as null.
- About one call in ten (`--invalid`, 0.1) is broken: its first required argument left out,
  one argument of a JSON type its type refuses, or an extra argument. The world refuses it
  by its schema before the body runs (write no type checks for it); where the original
  takes such a call, the sequence just ends there.
- Every sequence starts in a fresh process: module state and mutable defaults start over.
  PYTHONHASHSEED is 0 and TZ is UTC; a set's order is arbitrary, not something to chase.
  The original's `datetime.now()` is the real clock, the world's `now` the episode clock.
- An exception the original raises is shown as its text, `str(e)`: for a `KeyError` that is
  the key's repr (`'q'`), so `require key in m else repr(key)` (the world's own `m[key]`
  fails with another text, `Key "q" not found.`).
- A tool cannot call another tool: share code in a `fn` (it reads state, changes nothing)
  or repeat the statements.
Porting idioms:
- `m[k].f = v`, `xs[i].f = v` and `m[k]["x"] = v` write into the state, but `let r = m[k]`
  is a copy (a Python alias is not): change the path, or store the copy back (`m[k] = r`).
- Conditions are `bool`: Python's `if not x` is `x == ""`, `len(xs) == 0`, `n == 0` or
  `x == none`, whichever `x` is.
- Sort by two keys with two stable sorts, the second key first: Python's
  `sorted(xs, key=lambda x: (-x.qty, x.name))` is
  `sorted(sorted(xs, key: x => x.name), key: x => x.qty, reverse: true)`.
- A Python set of strings is `set[str]` (`set(["a"])`, `append x to s`, `x in s`,
  `sorted(s)`)."""


def _system() -> str:
    rules = _RULES.replace("{value_rule}", VALUE_RULE)
    return f"{_ROLE}\n\n{LANGUAGE_REFERENCE}\n\n{rules}\n\n{PORTING_NOTES}"


# ------------------------------------------------------------------ bounding values
#: per value shown to the model: items of a list or map, characters of a text
VALUE_ITEMS = 30
VALUE_CHARS = 600


def bounded(value: Any, *, items: int = VALUE_ITEMS, chars: int = VALUE_CHARS,
            depth: int = 0) -> Any:
    """``value`` with each list or map cut to its first ``items`` entries and each text to
    its first ``chars`` characters (at a word boundary), each cut followed by a marker that
    says how much was left out: ``"… 12 more items"``, a key ``"…"``, ``"… [40 more
    characters]"``. Only whole values are left out, never part of a token. A tuple stays a
    tuple; a set keeps its items ordered by repr (JSON shows it as a list)."""
    if depth > 12:
        return "… [nested deeper, left out]"
    if isinstance(value, str):
        if len(value) <= chars:
            return value
        cut = value.rfind(" ", 0, chars)
        cut = cut if cut > chars // 2 else chars
        return value[:cut] + f" … [{len(value) - cut} more characters]"
    if isinstance(value, (list, tuple, set, frozenset)):
        ordered = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        kept = [bounded(v, items=items, chars=chars, depth=depth + 1)
                for v in list(ordered)[:items]]
        if len(value) > items:
            kept.append(f"… {len(value) - items} more items")
        if isinstance(value, tuple):
            return tuple(kept)
        if isinstance(value, (set, frozenset)):
            return _ShownSet(kept, frozen=isinstance(value, frozenset))
        return kept
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for number, (key, inner) in enumerate(value.items()):
            if number == items:
                out["…"] = f"{len(value) - items} more keys"
                break
            out[key] = bounded(inner, items=items, chars=chars, depth=depth + 1)
        return out
    return value


class _ShownSet(list[Any]):
    """A set's items in a fixed order (by repr, not the hash order, which changes from run to
    run): JSON shows it as a list, repr() as the set (``{'a', 'b'}``)."""

    def __init__(self, items: list[Any], *, frozen: bool) -> None:
        super().__init__(items)
        self.frozen = frozen

    def __repr__(self) -> str:
        inner = "{" + ", ".join(repr(v) for v in self) + "}" if self else ""
        if self.frozen:
            return f"frozenset({inner})"
        return inner or "set()"


def bounded_json(value: Any, limit: int) -> str:
    """``value`` as JSON of at most about ``limit`` characters: bounded per value
    (:func:`bounded`), tighter and tighter until it fits."""
    items, chars = VALUE_ITEMS, VALUE_CHARS
    while True:
        text = json.dumps(bounded(value, items=items, chars=chars), ensure_ascii=False,
                          default=repr)
        if len(text) <= limit or (items <= 1 and chars <= 40):
            return text
        items, chars = max(1, items // 2), max(40, chars // 2)


# ------------------------------------------------------------------ the stable part
#: the initial data shown in the stable part of every request, at most (characters)
DATA_LIMIT = 4000


@dataclass(frozen=True)
class PortContext:
    """What every request of one port begins with, byte for byte the same: the class, its
    base classes, the module-level names its methods use, its initial data."""

    class_name: str
    class_source: str
    #: (name, the import that brought it or "", source) of each base class read
    bases: tuple[tuple[str, str, str], ...] = ()
    module_names: tuple[ModuleName, ...] = ()
    data: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, info: ClassInfo, data: Mapping[str, Any] | None) -> PortContext:
        """The context of a class as :func:`~worldspec.port.skeleton.read_class` read it."""
        names = info.module_names or list(
            {d.name: d for m in info.methods for d in m.module_names}.values())
        return cls(info.name, info.source, tuple(info.bases), tuple(names), data)

    def text(self) -> str:
        parts = [f"The original Python class `{self.class_name}`:\n\n```python\n"
                 f"{self.class_source.rstrip()}\n```"]
        for name, origin, source in self.bases:
            where = f" (`{origin}`)" if origin else " (in the same file)"
            parts.append(f"Its base class `{name}`{where}: its public methods are tools of "
                         f"the class too, unless the class overrides them:\n\n```python\n"
                         f"{source.rstrip()}\n```")
        if self.module_names:
            parts.append(module_names_text(self.module_names, "The class"))
        else:
            parts.append("The class uses no module-level names (constants, imports or "
                         "functions outside the class).")
        if self.data is not None:
            parts.append("Its initial data (given to the class when it is built, and loaded "
                         "into the world as its initial state; long values are shortened, "
                         "marked `…`):\n\n```json\n"
                         f"{bounded_json(dict(self.data), DATA_LIMIT)}\n```")
        else:
            parts.append("It is built without initial data.")
        return "\n\n".join(parts)


def _world(world_text: str) -> str:
    return ("The world so far (tools not yet ported fail with `not ported yet`):\n\n"
            f"```world\n{world_text.rstrip()}\n```")


def module_names_text(names: Sequence[ModuleName], what: str) -> str:
    """What the model must know of the module-level names ``what`` uses (outside the class,
    so not in the class's source): each definition, or its import line (its value is in
    another module)."""
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
            # a literal too long to show whole: its value, bounded as data is (never cut code)
            cut = d.has_value and d.code.endswith(CUT_MARKER)
            shown = f"{d.name} = {_bounded_repr(d.value)}" if cut else d.code
            if shown not in seen:
                seen.append(shown)
        parts.append("```python\n" + "\n".join(seen) + "\n```"
                     + ("\n(a long value is shortened, marked `…`)"
                        if any("…" in text for text in seen) else ""))
    found = [d for d in imported if d.has_value or d.definition]
    unknown = [d for d in imported if not (d.has_value or d.definition)]
    if found:
        parts.append("Imported from modules beside the class's file, with their definitions "
                     "there (a long value is shortened, marked `…`):\n\n```python\n"
                     + "\n\n".join(_imported_text(d) for d in found) + "\n```")
    if unknown:
        lines = "\n".join(f"- `{d.name}`: `{d.code}`" for d in unknown)
        parts.append("Imported from other modules (their values are not in this file, so "
                     f"unknown here; a standard-library name is what Python's is):\n{lines}")
    return "\n\n".join(parts)


#: the longest text of one imported value shown to the model (characters, about)
IMPORTED_VALUE_LIMIT = 3000


def _imported_text(name: ModuleName) -> str:
    """An imported name's import line and its definition in its module: the value, bounded
    as other data is (:func:`bounded`), or the source."""
    if not name.has_value:
        return f"{name.code}\n# where it is:\n{name.definition}"
    return f"{name.code}\n# where it is:\n{name.name} = {_bounded_repr(name.value)}"


def _bounded_repr(value: Any) -> str:
    """``repr`` of a module-level value, bounded as data is (:func:`bounded`), tighter and
    tighter until it is at most about :data:`IMPORTED_VALUE_LIMIT` characters."""
    items, chars = VALUE_ITEMS, VALUE_CHARS
    while True:
        text = repr(bounded(value, items=items, chars=chars))
        if len(text) <= IMPORTED_VALUE_LIMIT or (items <= 1 and chars <= 40):
            return text
        items, chars = max(1, items // 2), max(40, chars // 2)


def _method_names_text(method: MethodInfo) -> str:
    """Which of the module-level names shown above the method uses (by name)."""
    if not method.module_names:
        return (f"The method `{method.name}` (with the methods it calls) uses no module-level "
                "names.")
    named = ", ".join(f"`{d.name}`" for d in method.module_names)
    return (f"The method `{method.name}` (with the methods it calls) uses these module-level "
            f"names, shown above: {named}.")


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


def translate_method_messages(context: PortContext, *, world_text: str, method: MethodInfo,
                              state: Sequence[str] = ()) -> list[Message]:
    """Ask for the WorldSpec ``tool`` of one Python method: the stable context first, then
    the world so far and the method."""
    extra = [_method_names_text(method),
             shadowing_text([p.name for p in method.params], state, method.name)]
    user = (f"{context.text()}\n\n{_world(world_text)}\n\nPort the method `{method.name}`:"
            f"\n\n```python\n{method.source.strip(chr(10)).rstrip()}\n```\n\n"
            + "".join(f"{x}\n\n" for x in extra if x)
            + f"Reply with the complete `tool {method.name}` declaration (and the "
              "declarations it needs) in one ```world block.")
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


#: the longest text of one value in a difference sent back (each value is bounded alone)
DIFFERENCE_VALUE_CHARS = 2000


def _bounded_difference(difference: Mapping[str, Any]) -> dict[str, Any]:
    """A difference with each value of its calls bounded on its own (:func:`bounded`)."""
    out = dict(difference)
    calls = difference.get("calls")
    if isinstance(calls, list):
        out["calls"] = [
            {k: bounded(v, chars=DIFFERENCE_VALUE_CHARS) if k in ("arguments", "original",
                                                                   "world") else v
             for k, v in call.items()} if isinstance(call, Mapping) else call
            for call in calls]
    return out


def difference_feedback(context: PortContext, *, world_text: str,
                        differences: Sequence[dict[str, Any]]) -> list[Message]:
    """Ask to remove what the differential test found (each with its shortest sequence):
    the stable context first, then the world, the tools' current text and the differences."""
    tools = sorted({str(d.get("tool")) for d in differences if d.get("tool")})
    named = ", ".join(f"`{t}`" for t in tools) or "the tools involved"
    current = [(t, tool_text(world_text, t)) for t in tools]
    shown = "".join(f"The current text of `{t}`:\n\n```world\n{text.rstrip()}\n```\n\n"
                    for t, text in current if text)
    sent = [_bounded_difference(d) for d in differences]
    user = (f"{context.text()}\n\n{_world(world_text)}\n\n"
            "This request starts a new conversation: the earlier translation requests, your "
            "replies and earlier repair rounds are not included. The world above is the "
            "current text of every declaration.\n\n" + shown
            + "The world checks clean, but "
            "the differential test ran the original class and the world with the same calls "
            "and they disagree. Each difference comes with the shortest call sequence found "
            "that shows it, and what each side answered to each call (`original`: the "
            "Python's return value, or the exception it raised; `world`: the world's "
            "result; a long value is shortened, marked `…`, only where whole items or words "
            f"are left out). {VALUE_RULE}\n\n```json\n"
            f"{json.dumps(sent, indent=1, ensure_ascii=False, default=repr)}"
            f"\n```\n\nChange {named} so that the world answers exactly as the original, and "
            "reply with the corrected declarations in one ```world block.")
    return [{"role": "system", "content": _system()}, {"role": "user", "content": user}]
