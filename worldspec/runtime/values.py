"""Conversions between runtime values and plain JSON, and canonical JSON text.

Generated loaders and exporters call these helpers; each one checks its
input and raises :class:`~worldspec.runtime.errors.ArgumentError` with the
JSON path of a bad value, so bad initial data and bad tool arguments give
the same precise messages.

What fits a type is decided in one place, :mod:`worldspec.runtime.shapes` (the rules are
stated in docs/language.md, "Values in data and arguments"): each ``want_*`` here is a
view of a shape's loader that words its refusal for the agent, and the compiler's data
check (``compiler/data_check.py``) calls the same loaders on a task's data at check time.
In short: an ``int`` is a JSON integer (``3.0`` is not one); text is valid Unicode (no
lone surrogates, which cannot be encoded as UTF-8 and would break the state hash); dates
and datetimes are ISO text without a UTC offset, since the world's clock is naive; a
duration is a finite number of seconds that fits a ``timedelta``; a ``map[int, V]`` key is
a decimal integer; patterns are matched by RE2, in linear time.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import json.encoder
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from worldspec.runtime.errors import ArgumentError, ToolError, WrongTypeError
from worldspec.runtime.shapes import (
    MAX_INT_DIGITS,
    Misfit,
    Reason,
    check_length_within,
    check_matches,
    check_within,
    is_array,
    is_object,
    load_bool,
    load_date,
    load_datetime,
    load_duration,
    load_float,
    load_int,
    load_int_key,
    load_json_key,
    load_json_leaf,
    load_member,
    load_number,
    load_str,
    lone_surrogate,
    object_keys,
    pattern_matcher,
    repeats,
    unaliased,
)

__all__ = [
    "canonical_json", "want_str", "want_int", "want_float", "want_number", "want_bool", "want_date",
    "want_datetime", "want_duration", "want_list", "want_set", "want_map", "want_object",
    "want_optional", "want_enum", "check_range", "check_length", "check_pattern",
    "export_value", "unique", "type_name", "want_json", "copy_json", "json_text",
    "lone_surrogate", "escape_surrogates", "pattern_matcher", "MAX_INT_DIGITS", "unalias",
    "str_text",
    "int_text", "float_text", "number_text", "want_str_list", "JUST_STR", "map_text",
    "state_aliases", "quote", "record_text", "records_text", "record_map_text", "str_list_text",
    "key_text", "add", "without", "without_key",
]

T = TypeVar("T")
U = TypeVar("U")


def type_name(value: object) -> str:
    """The JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


_SURROGATE = re.compile("[\ud800-\udfff]")


def _shown(value: object) -> str:
    """A value as short JSON-ish text for messages (never raises, even for huge ints)."""
    if isinstance(value, int) and not isinstance(value, bool) and \
            value.bit_length() > 3 * MAX_INT_DIGITS:
        return f"an integer of about {int(value.bit_length() * math.log10(2))} digits"
    if isinstance(value, (dict, list, tuple)):
        return type_name(value)
    try:
        return json.dumps(value, default=str)[:60]
    except ValueError:  # an int with more digits than str() converts
        return "an integer of over 4300 digits"


def _bad(path: str, expected: str, value: object, wrong_type: bool = True) -> ArgumentError:
    """A value that does not fit: of another JSON type (a :class:`WrongTypeError`), or, with
    ``wrong_type=False``, of the right type but not a value of the parameter's (a text that is
    not an enum member, a date or an integer key)."""
    kind = WrongTypeError if wrong_type else ArgumentError
    return kind(f"{path}: expected {expected}, got {_shown(value)}")


def _surrogate_escape(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def escape_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``\\ud800``, six characters),
    so that it can be written as UTF-8. In JSON text the escape reads back as the same
    surrogate; elsewhere (a message, an HTML page) it shows what the text held."""
    if text.isascii():
        return text
    return _SURROGATE.sub(_surrogate_escape, text)


def _surrogate(path: str, text: str, at: int) -> ArgumentError:
    return ArgumentError(f"{path}: the text holds a lone surrogate "
                         f"({json_text(text[at])[1:-1]} at character {at}), which is not "
                         "valid Unicode")


def _offset(path: str, text: str) -> ArgumentError:
    return ArgumentError(f"{path}: {json_text(text)} has a UTC offset; datetimes are naive "
                         "(the world's local time): drop the offset or the 'Z'")


# How the runtime words a misfit (``shapes.Misfit``) for the agent: by its reason, given the
# path of the value and what its type expects (``"an integer"``).
_Wording = Callable[[str, str, Misfit], ArgumentError]

#: reason -> the error a call fails with
_WORDINGS: dict[Reason, _Wording] = {
    Reason.WRONG_TYPE: lambda path, expected, m: _bad(path, expected, m.value),
    Reason.NOT_FINITE: lambda path, expected, m: _bad(path, expected, m.value),
    Reason.BAD_TEXT: lambda path, expected, m: _bad(path, expected, m.value, False),
    Reason.NOT_MEMBER: lambda path, expected, m: _bad(path, expected, m.value, False),
    Reason.BAD_KEY: lambda path, expected, m: _bad(path, expected, m.value, False),
    # of the type Python would compute with, but not one a float holds: as a value of
    # another type, ``arguments: dynamic`` passes it on (``float()`` then fails)
    Reason.TOO_LARGE: lambda path, expected, m: WrongTypeError(
        f"{path}: {_shown(m.value)} is too large for a float"),
    Reason.TOO_LONG: lambda path, expected, m: ArgumentError(
        f"{path}: {_shown(m.value)} seconds is too long for a duration"),
    Reason.OFFSET: lambda path, expected, m: _offset(path, m.detail),
    Reason.SURROGATE: lambda path, expected, m: _surrogate(path, str(m.value), m.detail),
    Reason.OUT_OF_RANGE: lambda path, expected, m: ArgumentError(
        f"{path}: {m.value!r} is out of range {_range(*m.detail)}"),
    Reason.BAD_LENGTH: lambda path, expected, m: ArgumentError(
        f"{path}: length {m.detail[0]} is out of range {_range(*m.detail[1:])}"),
    Reason.NO_MATCH: lambda path, expected, m: _no_match(path, str(m.value), m.detail),
}


def _refusal(misfit: Misfit, path: str, expected: str = "") -> ArgumentError:
    """The error a call fails with for a value at ``path`` that does not fit."""
    return _WORDINGS[misfit.reason](path, expected, misfit)


def _no_match(path: str, value: str, pattern: str) -> ArgumentError:
    shown = value if len(value) <= 80 else value[:40] + "..." + value[-20:]
    return ArgumentError(f"{path}: {json.dumps(shown)} does not match /{pattern}/")


# Each ``want_*`` below is the shape's loader (``worldspec.runtime.shapes``) with the
# runtime's words for a refusal: what fits is decided there, for the checker too.

def want_str(value: object, path: str) -> str:
    """Valid Unicode text (:func:`~worldspec.runtime.shapes.load_str`)."""
    try:
        return load_str(value)
    except Misfit as misfit:
        raise _refusal(misfit, path, "a string") from None


def want_int(value: object, path: str) -> int:
    """A JSON integer: ``3.0`` is a number, not an integer (as in JSON schema's
    ``"integer"``, which is what the tool schemas tell the agent)."""
    try:
        return load_int(value)
    except Misfit as misfit:
        raise _refusal(misfit, path, "an integer") from None


def want_float(value: object, path: str) -> float:
    """A finite number, an integer widened."""
    try:
        return load_float(value)
    except Misfit as misfit:
        raise _refusal(misfit, path, "a number") from None


def want_number(value: object, path: str) -> int | float:
    """A JSON number kept as it is: an integer stays an int, ``3.0`` stays a float (Python's
    int-or-float, the ``number`` type); a float must be finite."""
    try:
        return load_number(value)
    except Misfit as misfit:
        raise _refusal(misfit, path, "a number") from None


def want_bool(value: object, path: str) -> bool:
    """``true`` or ``false``."""
    try:
        return load_bool(value)
    except Misfit as misfit:
        raise _refusal(misfit, path, "true or false") from None


def want_date(value: object, path: str) -> dt.date:
    """A date, or its text ``YYYY-MM-DD`` (ISO's extended form only: no week dates)."""
    try:
        return load_date(value)
    except Misfit as misfit:
        raise _refusal(misfit, path, "a date (YYYY-MM-DD)") from None


def want_datetime(value: object, path: str) -> dt.datetime:
    """A naive datetime, or its text ``YYYY-MM-DDTHH:MM[:SS[.ffffff]]`` (``T`` or a space);
    a UTC offset is refused (:func:`~worldspec.runtime.shapes.load_datetime`)."""
    try:
        return load_datetime(value)
    except Misfit as misfit:
        raise _refusal(misfit, path, "a datetime (YYYY-MM-DDTHH:MM:SS)") from None


def want_duration(value: object, path: str) -> dt.timedelta:
    """A length of time, or its number of seconds (finite, within ``timedelta``'s range)."""
    try:
        return load_duration(value)
    except Misfit as misfit:
        raise _refusal(misfit, path, "a duration in seconds") from None


def want_list(value: object, path: str, item: Callable[[object, str], T]) -> tuple[T, ...]:
    """An array, each element loaded by ``item`` at its own path."""
    if is_array(value):
        # a list made whole, then frozen: faster than a generator feeding ``tuple()``
        return tuple([item(v, f"{path}[{i}]") for i, v in enumerate(value)])
    raise _bad(path, "an array", value)


_JUST_STR = frozenset({str})
#: the types a list of plain text holds (generated invokers test lists of text against it)
JUST_STR: frozenset[type] = _JUST_STR


def want_str_list(value: object, path: str) -> tuple[str, ...]:
    """``want_list(value, path, want_str)``, with a fast path for a list of ASCII text (the
    common case: checked in C, without a path built per element)."""
    kind = type(value)
    if kind is list or kind is tuple:
        items: tuple[Any, ...] = tuple(value)  # type: ignore[arg-type]
        if not items or (_JUST_STR.issuperset(map(type, items)) and "".join(items).isascii()):
            return items
    return want_list(value, path, want_str)


def want_set(value: object, path: str, item: Callable[[object, str], T]) -> tuple[T, ...]:
    """An array without repeats (the tool schemas say ``uniqueItems``): a repeat is refused
    rather than dropped, as in task data, so a caller never loses an element silently."""
    items = want_list(value, path, item)
    distinct = unique(items)
    if len(distinct) != len(items):
        i, first = next(repeats(enumerate(items)))
        raise ArgumentError(f"{path}[{i}]: {_shown(export_value(items[i]))} repeats "
                            f"{path}[{first}]; a set holds each element once")
    return distinct


def want_map(value: object, path: str, key: Callable[[object, str], Any],
             item: Callable[[object, str], T], int_keys: bool = False,
             json_keys: bool = False) -> dict[Any, T]:
    """A JSON object as a map. ``int_keys``: each key is decimal text, read as an int.
    ``json_keys`` (``map[json, V]``, int and str keys mixed as a Python dict may have them):
    all-digit text is read as an int, any other key stays text."""
    if not is_object(value):
        raise _bad(path, "an object", value)
    out: dict[Any, T] = {}
    for k, v in value.items():
        raw: object = k
        if json_keys and isinstance(k, str):
            raw = load_json_key(k)
        elif int_keys and isinstance(k, str):
            try:
                raw = load_int_key(k)
            except Misfit as misfit:
                raise _refusal(misfit, f"{path}[{json.dumps(k)}]", "an integer key (decimal "
                               "digits, no sign but '-', no leading zeros)") from None
        out[key(raw, f"{path}[{json.dumps(k)}]")] = item(v, f"{path}[{json.dumps(k)}]")
    return out


def unalias(value: object, path: str, aliases: Mapping[str, str]) -> object:
    """An object with each alias key (the original's name of a field, ``from "..."``)
    renamed to its field; giving a field under both names is refused."""
    if not isinstance(value, dict) or not any(alias in value for alias in aliases):
        return value
    out, twice = unaliased(value, aliases)
    if twice:
        key, name = twice[0]
        raise ArgumentError(f"{path}: field {json.dumps(name)} is given twice (also as "
                            f"{json.dumps(key if name != key else _alias_of(name, aliases))})")
    return out


def _alias_of(name: str, aliases: Mapping[str, str]) -> str:
    return next(alias for alias, field in aliases.items() if field == name)


def state_aliases(data: Mapping[str, Any], aliases: Mapping[str, str]) -> None:
    """Refuse data giving a state item both under its name and under its alias (``from
    "..."``, in ``aliases`` by name): the item loads from the alias only, so the value under
    the name would be lost. The name alone is ignored, as every key the world does not load."""
    for name, alias in aliases.items():
        if name in data and alias in data:
            raise ArgumentError(f"$.{name}: state {json.dumps(name)} is given twice (as "
                                f"{json.dumps(name)} and as its alias {json.dumps(alias)}); it "
                                f"loads from {json.dumps(alias)} only")


def want_object(value: object, path: str, fields: Mapping[str, bool]) -> dict[str, Any]:
    """A JSON object whose keys are among ``fields`` (name -> required)."""
    if not is_object(value):
        raise _bad(path, "an object", value)
    unknown, missing = object_keys(value, fields)
    if unknown:
        raise ArgumentError(f"{path}: unknown field {json.dumps(unknown[0])}")
    if missing:
        raise ArgumentError(f"{path}: missing field {json.dumps(missing[0])}")
    return value


#: how a misfit of a ``json`` leaf is worded: what the value should have been, and whether
#: it is of another JSON type (a NaN is a number, just not a finite one)
_JSON_LEAF_WORDS: dict[Reason, tuple[str, bool]] = {
    Reason.WRONG_TYPE: ("a JSON value", True),
    Reason.NOT_FINITE: ("a finite number", False),
}


def want_json(value: object, path: str) -> Any:
    """A JSON value, deep-copied: the caller's (or the task's) objects are never shared."""
    if isinstance(value, (list, tuple)):
        return [want_json(x, f"{path}[{i}]") for i, x in enumerate(value)]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, x in value.items():
            if not isinstance(k, str):
                raise ArgumentError(f"{path}: object keys must be strings")
            try:
                load_str(k)
            except Misfit as misfit:
                raise _refusal(misfit, f"{path}[{json.dumps(k)}] (the key)") from None
            out[k] = want_json(x, f"{path}[{json.dumps(k)}]")
        return out
    try:
        return load_json_leaf(value)
    except Misfit as misfit:
        if misfit.reason is Reason.SURROGATE:
            raise _refusal(misfit, path) from None
        expected, wrong_type = _JSON_LEAF_WORDS[misfit.reason]
        raise _bad(path, expected, value, wrong_type) from None


def copy_json(value: Any) -> Any:
    """A deep copy of a stored JSON value, so exported data never aliases the state."""
    if isinstance(value, list):
        return [copy_json(x) for x in value]
    if isinstance(value, dict):
        return {k: copy_json(x) for k, x in value.items()}
    return value


def want_optional(value: object, path: str, inner: Callable[[object, str], T]) -> T | None:
    if value is None:
        return None
    return inner(value, path)


_MEMBERS: dict[type, dict[str, Any]] = {}


def _members(enum_cls: type) -> dict[str, Any]:
    found = _MEMBERS.get(enum_cls)
    if found is None:
        found = _MEMBERS[enum_cls] = {m.value: m for m in enum_cls}  # type: ignore[attr-defined]
    return found


def want_enum(value: object, path: str, enum_cls: type[T]) -> T:
    """The member of ``enum_cls`` whose serialised text ``value`` is."""
    members = _members(enum_cls)
    try:
        return load_member(value, members)  # type: ignore[no-any-return]
    except Misfit as misfit:
        allowed = ", ".join(json.dumps(v) for v in members)
        raise _refusal(misfit, path, f"one of {allowed}") from None


def check_range(value: Any, path: str, low: float | None, high: float | None) -> Any:
    """A number within ``low..high`` (:func:`~worldspec.runtime.shapes.check_within`)."""
    try:
        return check_within(value, low, high)
    except Misfit as misfit:
        raise _refusal(misfit, path) from None


def check_length(value: Any, path: str, low: int | None, high: int | None) -> Any:
    """A text or collection of ``low..high`` elements."""
    try:
        return check_length_within(value, low, high)
    except Misfit as misfit:
        raise _refusal(misfit, path) from None


def _range(low: float | None, high: float | None) -> str:
    return f"{'' if low is None else low}..{'' if high is None else high}"


def check_pattern(value: str, path: str, pattern: str) -> str:
    """Text matching ``pattern`` as a whole, decided by RE2 in linear time
    (:func:`~worldspec.runtime.shapes.pattern_matcher`)."""
    try:
        return check_matches(value, pattern)
    except Misfit as misfit:
        raise _refusal(misfit, path) from None


def unique(items: tuple[T, ...]) -> tuple[T, ...]:
    """Distinct items, first occurrence first (sets keep insertion order)."""
    return tuple(dict.fromkeys(items))


def export_value(value: Any) -> Any:
    """A runtime value as plain JSON data (records via their ``export`` method)."""
    if isinstance(value, enum.Enum):
        return value.value
    if value is None or isinstance(value, (bool, int, str, float)):
        return value
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        seconds = value.total_seconds()
        return int(seconds) if seconds.is_integer() else seconds
    if isinstance(value, (tuple, list)):
        return [export_value(v) for v in value]
    if isinstance(value, dict):
        return {key_text(k): export_value(v) for k, v in value.items()}
    export = getattr(value, "export", None)
    if export is not None:
        return export()
    raise TypeError(f"cannot export {type(value).__name__}")



#: object keys JSON writes other than ``str()`` does (a map of a world with ``arguments:
#: dynamic`` may be keyed by any JSON scalar an argument gave)
_JSON_KEYS: dict[Any, str] = {True: "true", False: "false", None: "null"}


def key_text(key: Any) -> str:
    """A map key as JSON writes it: text as it is, other keys as ``json.dumps`` writes them."""
    if type(key) is str:
        return key
    if key is True or key is False or key is None:
        return _JSON_KEYS[key]
    return str(export_value(key))


def quote(value: Any) -> str:
    """A value (a row key, an argument) in a message or a diff path: its JSON text with
    non-ASCII characters kept (a lone surrogate escaped, as it cannot be written as UTF-8),
    or its ``repr`` when it has none."""
    try:
        return escape_surrogates(json.dumps(export_value(value), ensure_ascii=False))
    except (TypeError, ValueError):
        return repr(value)

def add(items: tuple[T, ...], value: T) -> tuple[T, ...]:
    """A set (a tuple) with ``value`` in it: unchanged where it is in it already."""
    return items if value in items else (*items, value)


def without(items: tuple[T, ...], value: T) -> tuple[T, ...]:
    """A copy without the first occurrence of ``value``; a tool failure where there is none."""
    if value not in items:
        raise ToolError(f"{quote(value)} is not in the collection.")
    position = items.index(value)
    return items[:position] + items[position + 1:]


def without_key(mapping: dict[T, U], key: T) -> dict[T, U]:
    """A copy without ``key``; a tool failure where there is none."""
    if key not in mapping:
        raise ToolError(f"Key {quote(key)} not found.")
    return {k: x for k, x in mapping.items() if k != key}


def _encoder(*, ascii_only: bool, canonical: bool) -> Callable[[Any], str]:
    """``json.dumps`` with fixed options as a reusable function: the same text, without
    building a new encoder per call.

    ``json.dumps`` builds CPython's C encoder (``json.encoder.c_make_encoder``) afresh on
    every call, which costs more than encoding a short value; here it is built once. The
    only option that differs is the circular-reference check, which needs a fresh marker
    table per call: runtime values are trees (tuples, frozen records, maps and JSON values
    copied on the way in), so a cycle cannot occur, and it would raise ``RecursionError``
    instead of ``ValueError``. Without the C encoder, a ``JSONEncoder`` with the same
    options is used as is.
    """
    options = json.JSONEncoder(ensure_ascii=ascii_only, allow_nan=not canonical,
                               sort_keys=canonical,
                               separators=(",", ":") if canonical else None)
    make: Any = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return options.encode
    strings = json.encoder.encode_basestring_ascii if ascii_only else \
        json.encoder.encode_basestring
    encode = make(None, options.default, strings, None, options.key_separator,
                  options.item_separator, options.sort_keys, options.skipkeys,
                  options.allow_nan)

    def dumps(value: Any) -> str:
        if type(value) is str:
            return strings(value)
        if value is None:
            return "null"
        return "".join(encode(value, 0))

    return dumps


#: ``json.dumps(value)`` with its default options (ASCII only, ``", "`` and ``": "``)
json_text: Callable[[Any], str] = _encoder(ascii_only=True, canonical=False)

#: ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
#: allow_nan=False)``
_canonical: Callable[[Any], str] = _encoder(ascii_only=False, canonical=True)


def canonical_json(value: Any) -> str:
    """Deterministic JSON text: sorted keys, no spaces, non-ASCII kept."""
    return _canonical(value)


#: ``json.dumps(text)`` of a ``str``: the very function ``json.dumps`` encodes text with (C)
_encode_str: Callable[[str], str] = json.encoder.encode_basestring_ascii
#: texts kept by :data:`str_text` at most at once (then it starts afresh), and the longest
#: text kept (a longer one is encoded every time: kept, it would hold memory for little gain)
_STR_TEXTS_MAX = 4096
_STR_TEXT_LONGEST = 256


class _StrTexts(dict[str, str]):
    """``json.dumps`` of recent short texts, by the text. A text met before costs one lookup
    in C (``__getitem__`` of the dict, bound as :data:`str_text`), less than encoding it
    again: record texts encode the same ids and names over and over. Equal texts have the
    same encoding, whatever ``str`` subclass (an enum member) either is; a value that is no
    text raises ``TypeError``, as the encoder does (unhashable: from the lookup)."""

    __slots__ = ()

    def __missing__(self, value: str) -> str:
        text = _encode_str(value)  # a value that is no text raises TypeError here
        if len(value) <= _STR_TEXT_LONGEST:
            if len(self) >= _STR_TEXTS_MAX:
                self.clear()
            self[value] = text
        return text


str_text: Callable[[str], str] = _StrTexts().__getitem__

_int_repr = int.__repr__
_float_repr = float.__repr__


def str_list_text(value: Any) -> str:
    """``json.dumps(value)`` of a stored list (a tuple) of text: the texts' quoted forms
    joined. Anything else (``None`` of an optional list, or with ``arguments: dynamic`` a JSON
    value of another type or a list holding one) gets its JSON text."""
    if type(value) is tuple:
        try:
            return f"[{', '.join(map(str_text, value))}]"
        except TypeError:  # an element that is no text
            pass
    return json_text(value)


def int_text(value: int) -> str:
    """``json.dumps(value)`` of an ``int``."""
    if type(value) is int:
        return _int_repr(value)
    return json_text(value)


#: the shortest repr of recent floats (``repr`` runs dtoa: dearer than the rest of a record's
#: text); zero is never kept, ``0.0`` and ``-0.0`` being equal keys with two texts
_FLOAT_TEXTS: dict[float, str] = {}
_FLOAT_TEXTS_MAX = 4096


def float_text(value: float) -> str:
    """``json.dumps(value)`` of a ``float`` (``NaN``, ``Infinity`` as json.dumps writes them)."""
    if type(value) is float:
        text = _FLOAT_TEXTS.get(value)
        if text is not None:
            return text
        if value - value == 0.0:  # finite
            text = _float_repr(value)
            if value:
                if len(_FLOAT_TEXTS) >= _FLOAT_TEXTS_MAX:
                    _FLOAT_TEXTS.clear()
                _FLOAT_TEXTS[value] = text
            return text
    return json_text(value)


#: JSON texts of maps by identity: the map (kept, so its id stays its own) and its text.
#: Stored maps are never changed in place (a change builds a new dict), so a map's text
#: holds for as long as the map lives; only maps of plain values come here (``map_text``).
_MAP_TEXTS: dict[int, tuple[dict[Any, Any], str]] = {}
_MAP_TEXTS_MAX = 4096


def map_text(value: dict[Any, Any]) -> str:
    """``json.dumps(value)`` of a stored map of plain JSON values, made once per map (a
    record made from another's fields shares its maps: its text reuses theirs). A value that
    is no dict (``None`` of an optional map, or with ``arguments: dynamic`` a JSON value of
    another type) gets its JSON text, not kept."""
    found = _MAP_TEXTS.get(id(value))
    if found is not None and found[0] is value:
        return found[1]
    text = json_text(value)
    if type(value) is dict:
        if len(_MAP_TEXTS) >= _MAP_TEXTS_MAX:
            _MAP_TEXTS.clear()
        _MAP_TEXTS[id(value)] = (value, text)
    return text


# The texts of stored values holding records. A generated record class whose text can be
# kept (it is immutable all the way down) keeps it in its ``_json`` slot, ``None`` until its
# ``_json_text()`` makes it; that text is ``json.dumps`` of ``export_value`` of the record,
# whatever its fields hold. No other value has a ``_json`` attribute (no spec name becomes a
# ``_``-name: not a field, not an enum member), so a value that is not such a record -- with
# ``arguments: dynamic``, a JSON value an argument gave where a record or a list of them is
# declared -- raises AttributeError and gets the JSON text of its export instead.

def record_text(value: Any) -> str:
    """``json.dumps(export_value(value))`` of a stored record: its kept text (made once)."""
    try:
        text: str = value._json or value._json_text()
    except AttributeError:
        return json_text(export_value(value))
    return text


def records_text(value: Any) -> str:
    """``json.dumps(export_value(value))`` of a stored list (a tuple) of records: their kept
    texts joined, without a call for a record whose text is made already. Anything else
    (``None`` of an optional list; with ``arguments: dynamic``, another JSON value, or a
    list holding one) gets the JSON text of its export."""
    if type(value) is tuple:
        # a loop, not a list comprehension: in Python 3.11 that is a function called
        texts = []
        try:
            for x in value:
                texts.append(x._json or x._json_text())
        except AttributeError:
            pass
        else:
            return f"[{', '.join(texts)}]"
    return json_text(export_value(value))


def record_map_text(value: Any) -> str:
    """:func:`records_text` of a stored map of records keyed by text: ``{"key": record}``
    (a key that is no text, with ``arguments: dynamic``, as ``json.dumps`` writes it)."""
    if type(value) is dict:
        texts = []
        try:
            for k, x in value.items():
                texts.append(f"{str_text(k)}: {x._json or x._json_text()}")
        except (AttributeError, TypeError):
            pass
        else:
            return f"{{{', '.join(texts)}}}"
    return json_text(export_value(value))


def number_text(value: float) -> str:
    """``json.dumps(value)`` of a ``number`` (an int or a float)."""
    if type(value) is int:
        return _int_repr(value)
    return float_text(value)
