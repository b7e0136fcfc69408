"""One budget per call: every construct that can run long or grow a value draws from it.

An environment must never hang and never exhaust memory, whatever the spec's loops do and
whatever the agent sends. So ``Episode.call`` (and ``score``, ``invariant_problem``) start
each call with a full budget, and the generated code charges it:

- **steps**: one per ``while`` round and per call of a helper that can recurse, and one per
  element that a ``for`` loop, comprehension, quantifier, aggregate, ``sorted``, ``join``,
  ``in`` on a list or a list, set or map copy processes -- charged in bulk (``len(xs)`` once,
  before the work), so the fast path pays one subtraction per construct, not per element;
- **integer size**: a result of ``*``, ``**``, or ``+``/``-`` of two computed ints has at most
  :data:`MAX_INT_BITS` bits;
- **text**: a string the call builds by concatenation, an f-string, ``format``, ``zfill``,
  ``replace``, ``join`` or ``random_digits`` is at most :data:`MAX_STRING` characters long
  (checked *before* building when the size is known up front), and all of them together at
  most :data:`MAX_TEXT` characters.

A spent part raises :class:`LimitError` (a :class:`ToolError` that ``attempt()`` does not
catch) with a message naming it, so ``call`` rolls the call back and reports it through the
world's result convention like any other failure.

The remaining amounts live on the episode (``_steps``, ``_text``: plain ints, so charging is
an attribute subtraction); :func:`refill` resets them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sized
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from worldspec.runtime.errors import LimitError

if TYPE_CHECKING:
    from worldspec.runtime.episode import Episode

__all__ = [
    "FULL", "MAX_STEPS", "MAX_INT_BITS", "MAX_STRING", "MAX_TEXT", "STEPS_MESSAGE", "INT_MESSAGE",
    "STRING_MESSAGE", "TEXT_MESSAGE", "refill", "each", "step", "out_of_steps", "bounded",
    "built", "width", "replace", "join", "check_spec",
]

S = TypeVar("S", bound=Sized)
F = TypeVar("F", bound=Callable[..., Any])

#: steps one call may take (loop rounds, helper calls, elements processed)
MAX_STEPS = 1_000_000
#: bits an integer result of ``*``, ``**``, ``+`` or ``-`` may have
MAX_INT_BITS = 4096
#: characters one string built by a call may have
MAX_STRING = 1_000_000
#: characters all the strings one call builds may have together
MAX_TEXT = 10_000_000

#: a full budget, as ``(steps, text)``: ``call()`` starts with ``ep._steps, ep._text = FULL``
FULL = (MAX_STEPS, MAX_TEXT)

STEPS_MESSAGE = f"The call used more than {MAX_STEPS:,} steps."
INT_MESSAGE = f"An integer would have more than {MAX_INT_BITS:,} bits."
STRING_MESSAGE = f"A string would be longer than {MAX_STRING:,} characters."
TEXT_MESSAGE = f"The call built more than {MAX_TEXT:,} characters of text."


def refill(ep: Episode) -> None:
    """Give ``ep`` a full budget: at the start of every call (and score, invariant check)."""
    ep._steps = MAX_STEPS
    ep._text = MAX_TEXT


def out_of_steps() -> NoReturn:
    raise LimitError(STEPS_MESSAGE)


def each(ep: Episode, items: S) -> S:
    """``items``, after charging one step per element (the work about to be done on them).
    A value without a length (a scalar argument of a world with ``arguments: dynamic``) is
    charged one step and passed on, so that Python's own operation on it fails with Python's
    text (``'int' object is not iterable``)."""
    try:
        ep._steps -= len(items)
    except TypeError:
        ep._steps -= 1
    if ep._steps < 0:
        out_of_steps()
    return items


def step(ep: Episode, fn: F) -> F:
    """``fn``, after charging one step: a helper call (recursion would be unbounded)."""
    ep._steps -= 1
    if ep._steps < 0:
        out_of_steps()
    return fn


def bounded(value: int) -> int:
    """An integer result, if it has at most :data:`MAX_INT_BITS` bits (any other value, which
    only an argument of another type than declared gives, passes)."""
    if type(value) is int and value.bit_length() > MAX_INT_BITS:
        raise LimitError(INT_MESSAGE)
    return value


def width(size: int) -> int:
    """A string length about to be built (a ``zfill`` width, a digit count): checked first."""
    if size > MAX_STRING:
        raise LimitError(STRING_MESSAGE)
    return size


def built(ep: Episode, text: str) -> str:
    """A string the call just built, charged to the text budget."""
    size = len(text)
    if size > MAX_STRING:
        raise LimitError(STRING_MESSAGE)
    ep._text -= size
    if ep._text < 0:
        raise LimitError(TEXT_MESSAGE)
    return text


def replace(text: str, old: str, new: str) -> str:
    """``text.replace(old, new)``, refusing a result over the limit before building it."""
    if len(new) > len(old):
        hits = len(text) + 1 if not old else text.count(old)
        width(len(text) + hits * (len(new) - len(old)))
    return text.replace(old, new)


def join(sep: str, items: tuple[str, ...]) -> str:
    """``sep.join(items)``, refusing a result over the limit before building it."""
    width(sum(map(len, items)) + len(sep) * max(0, len(items) - 1))
    return sep.join(items)


#: the numbers of a format spec: a width or a precision (a digit used as fill is one digit)
_SPEC_NUMBERS = re.compile(r"[0-9]+")


def check_spec(spec: str) -> str:
    """A format spec computed at run time, if its width and precision are at most
    :data:`MAX_STRING` (a literal spec is judged by the checker, WS410)."""
    for number in _SPEC_NUMBERS.findall(spec):
        if len(number) > 7 or int(number) > MAX_STRING:
            raise LimitError(STRING_MESSAGE)
    return spec
