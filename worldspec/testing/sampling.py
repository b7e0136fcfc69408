"""Random JSON values from the tool schemas, and a validator for those schemas.

Both cover exactly the subset of JSON Schema the code generator emits
(``type``, ``enum``, ``properties``/``required``/``additionalProperties``,
``items``, ``anyOf``, ``minimum``/``maximum``, ``minLength``/``maxLength``,
``minItems``/``maxItems``, ``uniqueItems``, ``pattern``). Generation is
seeded and fast (plain :class:`random.Random`), and leans on boundaries:
range ends, empty and maximal lengths, existing keys and values.

What counts as valid is the runtime's own rule, not a look-alike: the one value validator
(:mod:`worldspec.runtime.shapes`) decides. Patterns are matched with its RE2 matcher
(``\\d``, ``\\w`` and ``\\s`` are ASCII), ``date``/``date-time`` strings are what a
``date``/``datetime`` parameter accepts (naive ISO text), an ``integer`` is a JSON integer
(``3.0`` is not one), a ``string`` is valid Unicode. A sample that only Python's ``re``
would accept would be a false finding of the property tests.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from worldspec.runtime.shapes import (
    Misfit,
    check_length_within,
    check_within,
    frozen,
    is_array,
    is_object,
    load_bool,
    load_date,
    load_datetime,
    load_int,
    load_number,
    load_str,
    object_keys,
    pattern_matcher,
    repeats,
)

__all__ = ["sample", "validate", "sample_regex", "Pools"]

_PRINTABLE = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.@+#"
_ODD = ["", " ", "x" * 3, "é", "名前", "😀", "a\nb", "\"'", "\\", "{}", "0", "-1", "null"]


class Pools:
    """Values to draw realistic strings and numbers from.

    Two layers: the values of a start state (``strings``, ``numbers``), collected once and
    shared by every sequence explored from it (:meth:`fork`), and the *fresh* values a
    sequence's successful calls returned or wrote (:meth:`add`), newest last, of which only
    the latest :attr:`FRESH` are kept. A draw takes a fresh value about half the time there is
    one that fits, so a value the last call produced (an id a read returned, a status a write
    set) is soon used as an argument, as an agent would.
    """

    #: how many fresh values of each kind are kept
    FRESH = 48

    def __init__(self, strings: Sequence[str] = (), numbers: Sequence[float] = ()) -> None:
        self.strings = list(strings)
        self.numbers = list(numbers)
        self._fitting: dict[tuple[Any, ...], list[str]] = {}
        self._fitting_numbers: dict[tuple[float, float, bool], list[float]] = {}
        self.fresh_strings: list[str] = []
        self.fresh_numbers: list[float] = []
        #: per schema key: (the fresh strings it was computed from, those that fit)
        self._fresh_fitting: dict[tuple[Any, ...], tuple[tuple[str, ...], list[str]]] = {}
        #: the world's own words (the enum values its schemas name), which a free-text
        #: parameter compared with them in a precondition needs (a reason, a status)
        self.hints: list[str] = []

    def fork(self) -> Pools:
        """A pool with the same state values (and their per-schema caches), no fresh ones."""
        other = Pools.__new__(Pools)
        other.strings = self.strings
        other.numbers = self.numbers
        other._fitting = self._fitting
        other._fitting_numbers = self._fitting_numbers
        other.fresh_strings = []
        other.fresh_numbers = []
        other._fresh_fitting = {}
        other.hints = self.hints
        return other

    def add(self, strings: Sequence[str], numbers: Sequence[float]) -> None:
        """Remember values a call just produced, as the freshest (the last one wins)."""
        if strings:
            self.fresh_strings = _newest(self.fresh_strings, strings, self.FRESH)
        if numbers:
            self.fresh_numbers = _newest(self.fresh_numbers, numbers, self.FRESH)

    def fitting(self, fmt: str | None, pattern: str | None, lo: int, hi: int) -> list[str]:
        """The state's strings that a string schema accepts (computed once per schema)."""
        key = (fmt, pattern, lo, hi)
        found = self._fitting.get(key)
        if found is None:
            found = [s for s in self.strings if _fits(s, fmt, pattern, lo, hi)]
            self._fitting[key] = found
        return found

    def fresh_fitting(self, fmt: str | None, pattern: str | None, lo: int, hi: int
                      ) -> list[str]:
        """The fresh strings that a string schema accepts."""
        key = (fmt, pattern, lo, hi)
        fresh = tuple(self.fresh_strings)
        cached = self._fresh_fitting.get(key)
        if cached is not None and cached[0] == fresh:
            return cached[1]
        found = [s for s in fresh if _fits(s, fmt, pattern, lo, hi)]
        self._fresh_fitting[key] = (fresh, found)
        return found

    def pick_string(self, rng: random.Random, fmt: str | None, pattern: str | None,
                    lo: int, hi: int) -> str | None:
        """A fresh string that fits, about half the time there is one; else None."""
        if self.fresh_strings and rng.random() < 0.5:
            fresh = self.fresh_fitting(fmt, pattern, lo, hi)
            if fresh:
                return rng.choice(fresh)
        return None

    def fitting_numbers(self, lo: float, hi: float, integer: bool) -> list[float]:
        """The state's numbers in ``[lo, hi]`` (integral ones only if ``integer``)."""
        key = (lo, hi, integer)
        found = self._fitting_numbers.get(key)
        if found is None:
            found = [x for x in self.numbers
                     if lo <= x <= hi and (not integer or float(x).is_integer())]
            self._fitting_numbers[key] = found
        return found

    def fresh_numbers_in(self, lo: float, hi: float, integer: bool) -> list[float]:
        return [x for x in self.fresh_numbers
                if lo <= x <= hi and (not integer or float(x).is_integer())]


def _newest(kept: list[Any], new: Sequence[Any], limit: int) -> list[Any]:
    """``kept`` then ``new``, each value once at its latest position, the last ``limit``."""
    newer = set(new)
    merged = dict.fromkeys([x for x in kept if x not in newer])
    merged.update(dict.fromkeys(new))
    out = list(merged)
    return out[-limit:]


def _fits(text: str, fmt: str | None, pattern: str | None, lo: int, hi: int) -> bool:
    return (lo <= len(text) <= hi and (pattern is None or _fullmatch(pattern, text))
            and (fmt is None or _FORMATS[fmt](text)))


def sample(schema: dict[str, Any], rng: random.Random, pools: Pools | None = None,
           depth: int = 0) -> Any:
    """A random value that satisfies ``schema`` (almost always: patterns are best effort)."""
    pools = pools or Pools()
    if "anyOf" in schema:
        options = schema["anyOf"]
        nullable = [o for o in options if o.get("type") == "null"]
        others = [o for o in options if o.get("type") != "null"]
        if nullable and (not others or rng.random() < 0.2):
            return None
        return sample(rng.choice(others), rng, pools, depth + 1)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice([k for k in kind if k not in ("object", "array")] or kind)
    maker = _MAKERS.get(kind or "")
    if maker is None:
        return None
    return maker(schema, rng, pools, depth)


def _integer(schema: dict[str, Any], rng: random.Random, pools: Pools, depth: int) -> int:
    low = schema.get("minimum")
    high = schema.get("maximum")
    lo = math.ceil(low) if low is not None else -5
    hi = math.floor(high) if high is not None else max(lo, 0) + 100
    if lo > hi:
        return int(lo)
    fresh = pools.fresh_numbers_in(lo, hi, True) if pools.fresh_numbers else []
    if fresh and rng.random() < 0.5:
        return int(rng.choice(fresh))
    if rng.random() < 0.6:
        stored = pools.fitting_numbers(lo, hi, True)
        edges = (lo, hi, min(max(0, lo), hi), min(max(1, lo), hi))
        index = rng.randrange(len(edges) + len(stored))
        return int(edges[index] if index < len(edges) else stored[index - len(edges)])
    return rng.randint(int(lo), int(hi))


def _number(schema: dict[str, Any], rng: random.Random, pools: Pools, depth: int) -> float:
    low = schema.get("minimum")
    high = schema.get("maximum")
    lo = float(low) if low is not None else -10.0
    hi = float(high) if high is not None else lo + 1000.0
    if rng.random() < 0.5:
        choice = rng.choice([lo, hi, min(max(0.0, lo), hi), round(rng.uniform(lo, hi), 2)])
        return float(choice)
    pool = pools.fresh_numbers_in(lo, hi, False) if pools.fresh_numbers else []
    if not pool or rng.random() < 0.5:
        pool = pools.fitting_numbers(lo, hi, False)
    if pool and rng.random() < 0.5:
        return float(rng.choice(pool))
    return round(rng.uniform(lo, hi), rng.choice([0, 1, 2, 4]))


def _string(schema: dict[str, Any], rng: random.Random, pools: Pools, depth: int) -> str:
    fmt = schema.get("format")
    if fmt in _FORMATS:
        fresh = pools.pick_string(rng, fmt, None, 0, 1 << 30)
        if fresh is not None:
            return fresh
        fitting = pools.fitting(fmt, None, 0, 1 << 30)
        if fitting and rng.random() < 0.6:
            return rng.choice(fitting)
        day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(-400, 400))
        if fmt == "date":
            return day.isoformat()
        return dt.datetime.combine(day, dt.time(rng.randint(0, 23), rng.choice([0, 15, 30])))\
            .isoformat()
    lo = int(schema.get("minLength", 0))
    hi = int(schema.get("maxLength", max(lo, 12)))  # for made-up text
    longest = int(schema.get("maxLength", 1 << 30))  # for values taken from the state
    pattern = schema.get("pattern")
    if pools.hints and pattern is None and rng.random() < 0.25:
        words = [w for w in pools.hints if lo <= len(w) <= longest]
        if words:
            return rng.choice(words)
    fresh = pools.pick_string(rng, None, pattern, lo, longest)
    if fresh is not None:
        return fresh
    if pattern is not None:
        fitting = pools.fitting(None, pattern, lo, longest)
        if fitting and rng.random() < 0.5:
            return rng.choice(fitting)
        for _ in range(8):
            text = sample_regex(pattern, rng)
            if lo <= len(text) <= hi and _fullmatch(pattern, text):
                return text
        return fitting[0] if fitting else sample_regex(pattern, rng)
    fitting = pools.fitting(None, None, lo, longest)
    roll = rng.random()
    if fitting and roll < 0.55:
        return rng.choice(fitting)
    if roll < 0.7:
        odd = [s for s in _ODD if lo <= len(s) <= hi]
        if odd:
            return rng.choice(odd)
    size = rng.choice([lo, min(hi, lo + 1), min(hi, max(lo, 5)), rng.randint(lo, min(hi, 40))])
    return "".join(rng.choice(_PRINTABLE) for _ in range(size))


def _accepted_by(load: Callable[[Any], object]) -> Callable[[Any], bool]:
    """A test that a value is accepted by ``load``, a loader of the one value validator."""

    def test(value: Any) -> bool:
        try:
            load(value)
        except Misfit:
            return False
        return True

    return test


#: JSON schema ``format`` -> test; both what the dispatcher accepts.
_FORMATS: dict[str, Callable[[Any], bool]] = {
    "date": _accepted_by(load_date),
    "date-time": _accepted_by(load_datetime)}


def _boolean(schema: dict[str, Any], rng: random.Random, pools: Pools, depth: int) -> bool:
    return rng.random() < 0.5


def _null(schema: dict[str, Any], rng: random.Random, pools: Pools, depth: int) -> None:
    return None


def _array(schema: dict[str, Any], rng: random.Random, pools: Pools, depth: int) -> list[Any]:
    lo = int(schema.get("minItems", 0))
    hi = int(schema.get("maxItems", lo + 3))
    size = rng.randint(lo, max(lo, min(hi, lo + 3))) if depth < 4 else lo
    items = schema.get("items", {})
    out: list[Any] = []
    for _ in range(size * 3):
        if len(out) >= size:
            break
        value = sample(items, rng, pools, depth + 1)
        if schema.get("uniqueItems") and value in out:
            continue
        out.append(value)
    return out


def _object(schema: dict[str, Any], rng: random.Random, pools: Pools,
            depth: int) -> dict[str, Any]:
    props = schema.get("properties")
    if props is not None:
        return {name: sample(sub, rng, pools, depth + 1) for name, sub in props.items()}
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict) and depth < 4:
        keys = list(pools.strings[:40]) or ["a", "b"]
        lo = int(schema.get("minProperties", 0))
        hi = int(schema.get("maxProperties", lo + 2))
        size = rng.randint(lo, max(lo, min(hi, lo + 2)))
        out: dict[str, Any] = {}
        for _ in range(size * 4):
            if len(out) >= size:
                break
            out[rng.choice(keys) if rng.random() < 0.8 else _random_text(rng, 1, 6)] = \
                sample(extra, rng, pools, depth + 1)
        return out
    return {}


def _random_text(rng: random.Random, lo: int, hi: int) -> str:
    return "".join(rng.choice(_PRINTABLE) for _ in range(rng.randint(lo, hi)))


_MAKERS: dict[str, Callable[[dict[str, Any], random.Random, Pools, int], Any]] = {
    "integer": _integer, "number": _number, "string": _string, "boolean": _boolean,
    "null": _null, "array": _array, "object": _object,
}


def _fullmatch(pattern: str, text: str) -> bool:
    """Whether the runtime accepts ``text`` for ``pattern`` (RE2, as ``check_pattern``)."""
    return pattern_matcher(pattern)(text)


# ------------------------------------------------------------------ regex
def sample_regex(pattern: str, rng: random.Random) -> str:
    """A string produced by walking the parsed pattern (best effort for exotic syntax)."""
    parsed = _parsed(pattern)
    if parsed is None:
        return ""
    out: list[str] = []
    _emit(parsed, rng, out, 0)
    return "".join(out)


@lru_cache(maxsize=256)
def _parsed(pattern: str) -> list[Any] | None:
    sre_parse = _regex_module("_parser")  # the stdlib's own regex parser (Python 3.11+)
    try:
        return list(sre_parse.parse(pattern))
    except re.error:
        return None


def _regex_module(name: str) -> Any:
    """``re._parser`` / ``re._constants``: private but stable, and without type stubs."""
    import importlib

    return importlib.import_module(f"re.{name}")


def _emit(items: list[Any], rng: random.Random, out: list[str], depth: int) -> None:
    c = _regex_module("_constants")

    for op, arg in items:
        if depth > 20:
            return
        if op == c.LITERAL:
            out.append(chr(arg))
        elif op == c.ANY:
            out.append(rng.choice(_PRINTABLE.strip()))
        elif op == c.IN:
            out.append(_from_class(arg, rng))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            lo, hi, sub = arg
            hi = min(hi, lo + 3) if hi != c.MAXREPEAT else lo + 3
            for _ in range(rng.randint(lo, hi)):
                _emit(list(sub), rng, out, depth + 1)
        elif op == c.SUBPATTERN:
            _emit(list(arg[-1]), rng, out, depth + 1)
        elif op == c.BRANCH:
            _emit(list(rng.choice(arg[1])), rng, out, depth + 1)
        elif op == c.CATEGORY:
            out.append(_from_category(arg, rng))
        # AT (anchors), ASSERT and the rest produce no characters


def _from_class(items: list[Any], rng: random.Random) -> str:
    c = _regex_module("_constants")

    choices: list[str] = []
    negate = False
    for op, arg in items:
        if op == c.NEGATE:
            negate = True
        elif op == c.LITERAL:
            choices.append(chr(arg))
        elif op == c.RANGE:
            lo, hi = arg
            choices.extend(chr(x) for x in range(lo, min(hi, lo + 200) + 1))
        elif op == c.CATEGORY:
            choices.append(_from_category(arg, rng))
    if negate:
        pool = [ch for ch in _PRINTABLE if ch not in choices]
        return rng.choice(pool) if pool else "~"
    return rng.choice(choices) if choices else "a"


def _from_category(category: Any, rng: random.Random) -> str:
    name = str(category)
    if "DIGIT" in name:
        return rng.choice("0123456789") if "NOT" not in name else "a"
    if "SPACE" in name:
        return " " if "NOT" not in name else "a"
    if "WORD" in name:
        return rng.choice("abcXYZ_09") if "NOT" not in name else "-"
    return "a"


# --------------------------------------------------------------- validate
def validate(value: Any, schema: dict[str, Any]) -> bool:
    """Whether ``value`` satisfies ``schema`` (the subset the generator emits)."""
    if "anyOf" in schema:
        return any(validate(value, option) for option in schema["anyOf"])
    if "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    if kind is None:
        return True
    kinds = kind if isinstance(kind, list) else [kind]
    if not any(_is(value, k) for k in kinds):
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool) and \
            not _within(check_within, value, schema.get("minimum"), schema.get("maximum")):
        return False
    if isinstance(value, str):
        if not _within(check_length_within, value, schema.get("minLength"),
                     schema.get("maxLength")):
            return False
        if "pattern" in schema and not _fullmatch(schema["pattern"], value):
            return False
        fmt = schema.get("format")
        if fmt in _FORMATS and not _FORMATS[fmt](value):
            return False
    if is_array(value):
        if not _within(check_length_within, value, schema.get("minItems"), schema.get("maxItems")):
            return False
        if schema.get("uniqueItems") and \
                next(repeats((i, frozen(x)) for i, x in enumerate(value)), None) is not None:
            return False
        items = schema.get("items")
        if items is not None and not all(validate(v, items) for v in value):
            return False
    if is_object(value):
        if not _within(check_length_within, value, schema.get("minProperties"),
                     schema.get("maxProperties")):
            return False
        props = schema.get("properties", {})
        required = set(schema.get("required", ()))
        extra = schema.get("additionalProperties", True)
        unknown, missing = object_keys(value, {name: name in required
                                               for name in (*props, *required)})
        if missing or (unknown and extra is False):
            return False
        for name, item in value.items():
            if name in props:
                if not validate(item, props[name]):
                    return False
            elif isinstance(extra, dict) and not validate(item, extra):
                return False
    return True


def _within(check: Callable[[Any, Any, Any], object], value: Any, low: Any, high: Any
            ) -> bool:
    """Whether ``value`` is within ``low..high`` by ``check``, a refinement of the one value
    validator (either end open when None)."""
    if low is None and high is None:
        return True
    try:
        check(value, low, high)
    except Misfit:
        return False
    return True


#: JSON schema ``type`` -> whether a value is of it: the scalars as the runtime loads them
_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "null": lambda value: value is None,
    "boolean": _accepted_by(load_bool),
    "integer": _accepted_by(load_int),
    "number": _accepted_by(load_number),
    "string": _accepted_by(load_str),
    "array": is_array,
    "object": is_object,
}


def _is(value: Any, kind: str) -> bool:
    test = _JSON_TYPES.get(kind)
    return test is not None and test(value)
