"""What fits a type: the one value validator, for run time and check time alike.

Every rule of docs/language.md ("Values in data and arguments") is decided here, once: a
scalar's loader (:data:`SCALARS`, by builtin type name) takes a JSON value and returns the
value the world keeps (``"2024-01-01"`` becomes a ``date``), or raises :class:`Misfit`
saying *why* it does not fit, as data rather than words (:class:`Reason`, the value, a
detail). The same goes for an enum member, a map key, a refinement (range, length,
pattern) and the leaves of a ``json`` value, and for the rules of structures: what an
array and an object are (:func:`is_array`, :func:`is_object`), a set's repeats
(:func:`repeats`, of :func:`frozen` stand-ins where values are plain JSON), the unknown
and missing fields of an object given for a record (:func:`object_keys`), a field given
under its name and its alias (:func:`unaliased`) and a union's tag (:func:`union_tag`).

Three readers walk values with these rules, each its own way, and none decides anything:

- the runtime (:mod:`worldspec.runtime.values`): the ``want_*`` functions generated loaders
  and tool invokers call are views of these loaders that turn a misfit into the
  :class:`~worldspec.runtime.errors.ArgumentError` an agent sees
  (``amount: expected an integer, got "3"``);
- the checker (``compiler/data_check.py``): a task's ``given`` data is checked by the same
  loaders and rules, and a misfit becomes a diagnostic at the value's span (``WS601
  $.amount: expected int, found "3"``); its walk goes on past a misfit, to report each;
- the explorer (``worldspec/testing/sampling.py``): whether an argument it drew or a
  result a tool returned fits its JSON schema is decided by the same loaders and rules.

Standard library only (a generated world imports it); RE2 is imported at the first
pattern check (:func:`pattern_matcher`).
"""

from __future__ import annotations

import datetime as dt
import enum
import importlib
import math
import re
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any, Final, TypeGuard, TypeVar

from worldspec.runtime.errors import ToolError

__all__ = [
    "Reason", "Misfit", "Scalar", "SCALARS", "load_str", "load_int", "load_float",
    "load_number", "load_bool", "load_date", "load_datetime", "load_duration", "load_member",
    "load_int_key", "load_json_key", "load_json_leaf", "check_within", "check_length_within",
    "check_matches", "lone_surrogate", "pattern_matcher", "MAX_INT_DIGITS", "is_array",
    "is_object", "frozen", "repeats", "object_keys", "unaliased", "union_tag",
]

T = TypeVar("T")

#: The most digits an integer is shown with, or read from a ``map[int, V]`` key (below
#: Python's int/str conversion limit, so no conversion ever raises).
MAX_INT_DIGITS: Final = 4000


class Reason(enum.Enum):
    """Why a value does not fit its type."""

    #: of another JSON type (a number for a ``str``, ``3.0`` for an ``int``)
    WRONG_TYPE = "wrong type"
    #: a NaN or an infinity where a finite number is wanted
    NOT_FINITE = "not finite"
    #: an integer too large for a float
    TOO_LARGE = "too large"
    #: a number of seconds too large for a duration
    TOO_LONG = "too long"
    #: text that is not a date or datetime
    BAD_TEXT = "bad text"
    #: a datetime with a UTC offset (datetimes are naive)
    OFFSET = "offset"
    #: text holding a lone surrogate (detail: its index)
    SURROGATE = "surrogate"
    #: text that is not one of an enum's serialised members
    NOT_MEMBER = "not member"
    #: an object key that is not a decimal integer, for a ``map[int, V]``
    BAD_KEY = "bad key"
    #: a number outside its range (detail: ``(low, high)``)
    OUT_OF_RANGE = "out of range"
    #: a text or collection whose length is outside its range (detail: ``(size, low, high)``)
    BAD_LENGTH = "bad length"
    #: text that does not match its pattern (detail: the pattern)
    NO_MATCH = "no match"
    #: an object without a union's tag field (detail: the tag field's name)
    NO_TAG = "no tag"


class Misfit(Exception):
    """A value that does not fit its type: the reason, the value, and a detail that the
    reason describes (never words: each reader words a misfit its own way)."""

    def __init__(self, reason: Reason, value: object, detail: Any = None) -> None:
        super().__init__(reason, value, detail)
        self.reason = reason
        self.value = value
        self.detail = detail


# --------------------------------------------------------------------- text
_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> int | None:
    """Where ``text`` holds a lone surrogate (``"\\ud800"``), or None: such text is not
    Unicode, cannot be written as UTF-8, and would make hashing the state fail."""
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return None if found is None else found.start()


def load_str(value: object) -> str:
    """Text that is valid Unicode (no lone surrogate)."""
    if isinstance(value, str):
        if value.isascii():
            return value
        at = lone_surrogate(value)
        if at is None:
            return value
        raise Misfit(Reason.SURROGATE, value, at)
    raise Misfit(Reason.WRONG_TYPE, value)


# ------------------------------------------------------------------ numbers
def load_int(value: object) -> int:
    """A JSON integer: ``3.0`` is a number, not an integer (as in JSON schema's
    ``"integer"``, which is what the tool schemas tell the agent)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise Misfit(Reason.WRONG_TYPE, value)


def load_float(value: object) -> float:
    """A finite number, an integer widened."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            result = float(value)
        except OverflowError:
            raise Misfit(Reason.TOO_LARGE, value) from None
        if math.isfinite(result):
            return result
        raise Misfit(Reason.NOT_FINITE, value)
    raise Misfit(Reason.WRONG_TYPE, value)


def load_number(value: object) -> int | float:
    """A JSON number kept as it is: an integer stays an int, ``3.0`` stays a float (Python's
    int-or-float, the ``number`` type); a float must be finite."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise Misfit(Reason.NOT_FINITE, value)
    raise Misfit(Reason.WRONG_TYPE, value)


def load_bool(value: object) -> bool:
    """``true`` or ``false`` (not ``0`` or ``1``)."""
    if isinstance(value, bool):
        return value
    raise Misfit(Reason.WRONG_TYPE, value)


# --------------------------------------------------------------------- time
_DATE_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME_TEXT = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?"
    r"(Z|[+-][0-9]{2}(?::?[0-9]{2}(?::?[0-9]{2}(?:\.[0-9]{1,6})?)?)?)?")


def load_date(value: object) -> dt.date:
    """A date, or its text ``YYYY-MM-DD`` (ISO's extended form only: no week dates)."""
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if isinstance(value, str):
        if _DATE_TEXT.fullmatch(value):
            try:
                return dt.date.fromisoformat(value)
            except ValueError:
                pass
        raise Misfit(Reason.BAD_TEXT, value)
    raise Misfit(Reason.WRONG_TYPE, value)


def load_datetime(value: object) -> dt.datetime:
    """A naive datetime, or its text ``YYYY-MM-DDTHH:MM[:SS[.ffffff]]`` (``T`` or a space).

    A UTC offset (``Z``, ``+05:00``) is refused (detail: the text) rather than dropped or
    converted: the world's clock is naive, an aware value could not be compared with it,
    and silently shifting a time would change what the data says.
    """
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            return value
        raise Misfit(Reason.OFFSET, value, value.isoformat())
    if isinstance(value, str):
        form = _DATETIME_TEXT.fullmatch(value)
        if form is not None:
            if form.group(1) is not None:
                raise Misfit(Reason.OFFSET, value, value)
            try:
                return dt.datetime.fromisoformat(value)
            except ValueError:
                pass
        raise Misfit(Reason.BAD_TEXT, value)
    raise Misfit(Reason.WRONG_TYPE, value)


def load_duration(value: object) -> dt.timedelta:
    """A length of time, or its number of seconds (finite, within ``timedelta``'s range)."""
    if isinstance(value, dt.timedelta):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, int) or math.isfinite(value):
            try:
                return dt.timedelta(seconds=value)
            except OverflowError:
                raise Misfit(Reason.TOO_LONG, value) from None
        raise Misfit(Reason.NOT_FINITE, value)
    raise Misfit(Reason.WRONG_TYPE, value)


# ----------------------------------------------------------------- scalars
def _same(value: Any) -> Any:
    return value


def _iso(value: Any) -> Any:
    return value.isoformat()


def _seconds(value: Any) -> Any:
    seconds = value.total_seconds()
    return int(seconds) if seconds.is_integer() else seconds


class Scalar:
    """A builtin scalar type: its loader, and how a loaded value is written as JSON (what
    a task's data is normalised to: a date as its ISO text, a duration as its seconds).

    A plain class: ``dataclasses`` would load ``inspect`` and ``ast`` into every world."""

    __slots__ = ("export", "load", "name", "normalise")

    def __init__(self, name: str, load: Callable[[object], Any],
                 export: Callable[[Any], Any] | None = None) -> None:
        self.name = name
        self.load = load
        self.export: Callable[[Any], Any] = export or _same
        #: a JSON value loaded and written back as JSON (``"2024-01-01T10:00"`` becomes
        #: ``"2024-01-01T10:00:00"``); raises :class:`Misfit`. The loader itself where a
        #: loaded value is its own JSON (text, numbers, booleans).
        self.normalise: Callable[[object], Any] = load if export is None else \
            (lambda value: self.export(self.load(value)))

    def __repr__(self) -> str:
        return f"Scalar({self.name!r})"


#: builtin type name -> its scalar shape (``json`` is not a scalar: :func:`load_json_leaf`)
SCALARS: Final[Mapping[str, Scalar]] = {
    "str": Scalar("str", load_str),
    "int": Scalar("int", load_int),
    "float": Scalar("float", load_float),
    "number": Scalar("number", load_number),
    "bool": Scalar("bool", load_bool),
    "date": Scalar("date", load_date, _iso),
    "datetime": Scalar("datetime", load_datetime, _iso),
    "duration": Scalar("duration", load_duration, _seconds),
}


# ------------------------------------------------------------ enums, keys, json
def load_member(value: object, members: Mapping[str, T]) -> T:
    """The member whose serialised text ``value`` is (``members``: text -> member)."""
    if isinstance(value, str):
        found = members.get(value)
        if found is not None:
            return found
        raise Misfit(Reason.NOT_MEMBER, value)
    raise Misfit(Reason.WRONG_TYPE, value)


_DECIMAL = re.compile(r"0|-?[1-9][0-9]*")


def load_int_key(text: str) -> int:
    """An object key of a ``map[int, V]``: decimal text (no sign but ``-``, no leading zeros)."""
    if len(text) > MAX_INT_DIGITS or not _DECIMAL.fullmatch(text):
        raise Misfit(Reason.BAD_KEY, text)
    return int(text)


def load_json_key(text: str) -> int | str:
    """An object key of a ``map[json, V]`` (int and text keys mixed, as a Python dict may
    have them): all-digit ASCII text is an int, any other key stays text."""
    if text.isascii() and text.isdigit() and len(text) <= MAX_INT_DIGITS:
        return int(text)
    return text


def load_json_leaf(value: object) -> object:
    """A JSON value that is no array or object: null, a boolean, an integer, a finite
    number or valid text (arrays and objects are walked by the caller, which builds paths)."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, str):
        return load_str(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise Misfit(Reason.NOT_FINITE, value)
    raise Misfit(Reason.WRONG_TYPE, value)


# -------------------------------------------------------------- structures
# What an array, a set, an object given for a record and a union's value must be, decided
# here for both walkers: the run-time loaders stop at the first misfit, the checker's walk
# goes on and reports each (with the value's span); neither decides these again.
def is_array(value: object) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    """Whether ``value`` is a JSON array (a tuple from Python callers): what a list's or a
    set's value must be."""
    return isinstance(value, (list, tuple))


def is_object(value: object) -> TypeGuard[dict[str, Any]]:
    """Whether ``value`` is a JSON object: what a map's, a record's or a union's value must
    be."""
    return isinstance(value, dict)


#: how deep :func:`frozen` goes (the checker's nesting limit: data deeper is refused)
FROZEN_DEPTH: Final = 100


def frozen(value: object, depth: int = 0) -> Hashable:
    """A hashable stand-in for a JSON value, equal exactly where two values are the same
    JSON (``true`` is not ``1``): how a set's elements given as data, or an array that
    ``uniqueItems`` holds, are told apart (a loaded value is hashable as it is)."""
    if depth > FROZEN_DEPTH:
        return ("deep",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, dict):
        return ("map", tuple((frozen(k), frozen(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(frozen(v, depth + 1) for v in value))
    if isinstance(value, str):
        return str(value)
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return value  # hashable: hash() took it


def repeats(items: Iterable[tuple[int, Hashable]]) -> Iterator[tuple[int, int]]:
    """The elements of a set that repeat an earlier one, as (index, the first one's index),
    from ``(index, element)`` pairs, each as soon as it is seen: a set holds each element
    once, and a repeat is refused rather than dropped, so that nothing is lost silently."""
    first: dict[Hashable, int] = {}
    for index, element in items:
        seen = first.setdefault(element, index)
        if seen != index:
            yield index, seen


def object_keys(value: Mapping[str, object], fields: Mapping[str, bool],
                extra: Collection[str] = ()) -> tuple[list[str], list[str]]:
    """An object given for a record: its keys that name no field (nor one of ``extra``, a
    union's tag), and the required fields it lacks (``fields``: name -> required), each in
    order. A field given as null counts as given (null means its default, or none)."""
    if value.keys() <= fields.keys():  # compared in C: the common case
        unknown = []
    else:
        unknown = [name for name in value if name not in fields and name not in extra]
    return unknown, [name for name, required in fields.items()
                     if required and name not in value]


def unaliased(value: Mapping[str, T], aliases: Mapping[str, str]
              ) -> tuple[dict[str, T], list[tuple[str, str]]]:
    """An object with each alias key (the original's name of a field, ``from "..."``)
    renamed to its field, and the keys that give a field already given under its other
    name, as (key, field): those are left out (which value was meant is not known)."""
    out: dict[str, T] = {}
    twice: list[tuple[str, str]] = []
    for key, item in value.items():
        name = aliases.get(key, key)
        if name in out or (name != key and name in value):
            twice.append((key, name))
        else:
            out[name] = item
    return out, twice


def union_tag(value: Mapping[str, object], field: str, tags: Collection[str]) -> str:
    """The tag of a union's value given as an object: text in its ``field`` naming one of
    the union's ``tags``."""
    tag = value.get(field, _ABSENT)
    if tag is _ABSENT:
        raise Misfit(Reason.NO_TAG, value, field)
    if not isinstance(tag, str):
        raise Misfit(Reason.WRONG_TYPE, tag)
    if tag not in tags:
        raise Misfit(Reason.NOT_MEMBER, tag)
    return tag


_ABSENT: Final = object()


# ------------------------------------------------------------- refinements
def check_within(value: Any, low: float | None, high: float | None) -> Any:
    """A number within ``low..high`` (either end open when None)."""
    if (low is not None and value < low) or (high is not None and value > high):
        raise Misfit(Reason.OUT_OF_RANGE, value, (low, high))
    return value


def check_length_within(value: Any, low: float | None, high: float | None) -> Any:
    """A text or collection whose length is within ``low..high``."""
    size = len(value)
    if (low is not None and size < low) or (high is not None and size > high):
        raise Misfit(Reason.BAD_LENGTH, value, (size, low, high))
    return value


#: Texts up to this long have their verdict remembered per pattern (ids, codes and emails
#: recur from call to call), at most :data:`_REMEMBERED` of them.
_SHORT_TEXT: Final = 256
_REMEMBERED: Final = 4096


@lru_cache(maxsize=512)
def pattern_matcher(pattern: str) -> Callable[[str], bool]:
    """Whether a whole text matches ``pattern``, decided by RE2 in time linear in the text.

    Python's ``re`` backtracks: ``/^(a+)+$/`` takes exponential time on a string of ``a``s
    ending in ``b``, so one tool argument could stall an episode. RE2 never backtracks. It
    is imported here, at the first pattern check, so that importing a generated world still
    loads nothing but the standard library. The dialect (``\\d``, ``\\w``, ``\\s`` are ASCII;
    no backreferences or lookaround) is described in docs/language.md; the compiler
    rejects patterns RE2 cannot compile (WS312), and a world that skipped the checker gets
    a :class:`~worldspec.runtime.errors.ToolError` saying why.

    The wrapper's ``fullmatch`` on a ``str`` maps byte offsets back to characters, which
    costs twenty times a match; only whether it matches is needed here, so the compiled
    regexp is asked directly (anchored at both ends, without captures) when the wrapper
    exposes it, and verdicts on short texts are remembered.
    """
    re2: Any = importlib.import_module("re2")  # google-re2, untyped: kept behind this function
    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    try:
        compiled = re2.compile(pattern, options)
    except (re2.error, UnicodeEncodeError) as exc:
        reason = exc.args[0] if exc.args and isinstance(exc, re2.error) else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ToolError(f"/{pattern}/ is not an RE2 pattern: {reason}") from None
    regexp = getattr(compiled, "_regexp", None)
    anchor = getattr(getattr(re2, "_Anchor", None), "ANCHOR_BOTH", None)
    if regexp is not None and anchor is not None:
        match = regexp.Match
        missing = re2._NULL_SPAN

        def decide(text: str) -> bool:
            encoded = text.encode("utf-8")
            return bool(match(anchor, encoded, 0, len(encoded))[0] != missing)
    else:  # another wrapper version: the public API, slower but the same verdicts
        fullmatch = compiled.fullmatch

        def decide(text: str) -> bool:
            return fullmatch(text) is not None

    remembered: dict[str, bool] = {}

    def matches(text: str) -> bool:
        known = remembered.get(text)
        if known is not None:
            return known
        verdict = decide(text)
        if len(text) <= _SHORT_TEXT:
            if len(remembered) >= _REMEMBERED:
                remembered.clear()
            remembered[text] = verdict
        return verdict

    return matches


def check_matches(text: str, pattern: str) -> str:
    """Text that matches ``pattern`` as a whole (RE2's dialect); a pattern RE2 cannot
    compile raises :class:`~worldspec.runtime.errors.ToolError`."""
    if not pattern_matcher(pattern)(text):
        raise Misfit(Reason.NO_MATCH, text, pattern)
    return text
