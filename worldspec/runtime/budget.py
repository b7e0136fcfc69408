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
- **size read**: a builtin or method that reads a text (``count``, ``find``, ``contains``,
  ``startswith``, ``isdigit``..., ``byte_length``, ``int``, ``float``, ``date``,
  ``strptime``...) pays one step per :data:`CHARS_PER_STEP` characters it reads
  (:func:`charge_size`, through :func:`read`), so the time a step stands for is bounded
  whatever the texts' lengths;
- **text**: a string the call builds by concatenation, an f-string, ``format``, ``zfill``,
  ``replace``, ``join``, ``random_digits``, ``lower``/``upper``/``title``/``capitalize``,
  ``strip``, ``split``, a slice... is at most :data:`MAX_STRING` characters long (checked
  *before* building when the size is known up front, and checked on the result otherwise:
  ``upper()`` of 600,000 ``ß`` is 1,200,000 characters), and all of them together at most
  :data:`MAX_TEXT` characters.

So what one call can build is bounded: at most :data:`MAX_TEXT` characters of text and, since
every element of a collection the call builds is a step, at most :data:`MAX_STEPS` elements
(cells) of collections.

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
    "STRING_MESSAGE", "TEXT_MESSAGE", "MEMORY_MESSAGE", "CHARS_PER_STEP", "refill", "each", "step",
    "out_of_steps", "bounded", "built", "pieces", "charge_size", "read", "width", "replace",
    "join", "check_spec",
]

S = TypeVar("S", bound=Sized)
V = TypeVar("V")
F = TypeVar("F", bound=Callable[..., Any])

#: steps one call may take (loop rounds, helper calls, elements processed)
MAX_STEPS = 1_000_000
#: bits an integer result of ``*``, ``**``, ``+`` or ``-`` may have
MAX_INT_BITS = 4096
#: characters one string built by a call may have
MAX_STRING = 1_000_000
#: characters all the strings one call builds may have together
MAX_TEXT = 10_000_000

#: characters a builtin reads per step of the budget (a text of 1,000,000 characters costs
#: 15,625 steps to read: a call may read 64,000,000 characters in all)
CHARS_PER_STEP = 64

#: a full budget, as ``(steps, text)``: ``call()`` starts with ``ep._steps, ep._text = FULL``
FULL = (MAX_STEPS, MAX_TEXT)

STEPS_MESSAGE = f"The call used more than {MAX_STEPS:,} steps."
INT_MESSAGE = f"An integer would have more than {MAX_INT_BITS:,} bits."
STRING_MESSAGE = f"A string would be longer than {MAX_STRING:,} characters."
TEXT_MESSAGE = f"The call built more than {MAX_TEXT:,} characters of text."
#: what a call that ran out of memory all the same (the process's own limit) fails with
MEMORY_MESSAGE = "The call ran out of memory."


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
        left = ep._steps - len(items)
    except TypeError:
        left = ep._steps - 1
    ep._steps = left
    if left < 0:
        out_of_steps()
    return items


def charge_size(ep: Episode, size: int) -> None:
    """Charge the work of reading ``size`` characters: one step per :data:`CHARS_PER_STEP`
    (a shorter text is free: the step of the construct around it pays for it)."""
    ep._steps -= size // CHARS_PER_STEP
    if ep._steps < 0:
        out_of_steps()


def read(ep: Episode, value: V) -> V:
    """``value``, a text a builtin is about to read, after charging its size
    (:func:`charge_size`). A value without a length (an argument of another type than
    declared, in a world with ``arguments: dynamic``) passes free, so that Python's own
    operation on it fails with Python's text."""
    try:
        size = len(value)  # type: ignore[arg-type]
    except TypeError:
        return value
    ep._steps -= size // CHARS_PER_STEP  # charge_size, inline: it runs on every read
    if ep._steps < 0:
        out_of_steps()
    return value


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


def pieces(ep: Episode, parts: tuple[str, ...]) -> tuple[str, ...]:
    """``parts``, the new strings a call just built at once (``split``, ``splitlines``,
    ``list`` of a text): one step per piece, and their characters to the text budget."""
    each(ep, parts)
    size = sum(map(len, parts))
    ep._text -= size
    if ep._text < 0:
        raise LimitError(TEXT_MESSAGE)
    return parts


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
