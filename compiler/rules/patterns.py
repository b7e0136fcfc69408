"""Patterns must compile in RE2, the linear-time engine that checks them at run time.

The runtime matches ``matching /.../`` patterns with RE2 (``google-re2``) because
Python's backtracking ``re`` can take exponential time (``/^(a+)+$/`` on 31 characters
took 37 s). RE2 has no backreferences, lookaround, ``\\Z`` or repetition counts over
1000, so a pattern that uses them is reported here, at its span, instead of failing at
the first call. The parser has already checked that Python's ``re`` compiles the pattern
(WS103): the property-test generators walk it with Python's parser (docs/language.md,
"Patterns"). Whether a text matches is decided by the runtime's matcher
(``worldspec.runtime.shapes.pattern_matcher``), for a task's data too.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, ClassVar

from worldspec.compiler.rules import RuleContext
from worldspec.dsl import nodes as n

__all__ = ["Patterns", "re2_problem"]


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> tuple[Any, str | None]:
    """RE2's compiled ``pattern`` and None, or None and why RE2 refuses it."""
    re2: Any = importlib.import_module("re2")  # google-re2 ships no type information
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refusal to stderr
    try:
        return re2.compile(pattern, options), None
    except UnicodeEncodeError:
        return None, "the pattern is not valid Unicode (it holds a lone surrogate)"
    except re2.error as exc:
        reason = exc.args[0] if exc.args else str(exc)
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        return None, str(reason)


def re2_problem(pattern: str) -> str | None:
    """Why RE2 cannot compile ``pattern`` (its own words), or None when it can."""
    return _compiled(pattern)[1]


#: What to write instead of a construct RE2 lacks, by a word of RE2's message.
_ADVICE: dict[str, str] = {
    "perl operator": "RE2 has no lookahead or lookbehind: match the text itself, or check "
                     "the rest in a `require`",
    "escape sequence": "RE2 has no backreferences (\\1) and writes the end of the text "
                       "as $ or \\z, not \\Z",
    "repetition": "RE2 repeats at most 1000 times: use a length range such as str(..5000)",
}


def _patterns(world: Any) -> Iterator[n.RegexConstraint]:
    """Every ``matching`` constraint written in a declaration the world uses, once."""
    seen: set[int] = set()
    infos = [*world.records.values(), *world.aliases.values(), *world.state.values(),
             *world.tools.values(), *world.fns.values()]
    for info in infos:
        for node in n.walk(info.node):
            if isinstance(node, n.RegexConstraint) and id(node) not in seen:
                seen.add(id(node))
                yield node


class Patterns:
    """A pattern RE2 cannot compile (backreferences, lookaround, ``\\Z``) is WS312."""

    codes: ClassVar[tuple[str, ...]] = ("WS312",)

    def check(self, ctx: RuleContext) -> None:
        for node in _patterns(ctx.world):
            problem = re2_problem(node.pattern)
            if problem is None:
                continue
            hints = [advice for word, advice in _ADVICE.items() if word in problem]
            ctx.sink.report("WS312", node.span, f"/{node.pattern}/ is not an RE2 pattern: "
                            f"{problem}", hints=hints)
