"""Conversions between runtime values and plain JSON, and canonical JSON text.

Generated loaders and exporters call these helpers; each one checks its
input and raises :class:`~worldspec.runtime.errors.ArgumentError` with the
JSON path of a bad value, so bad initial data and bad tool arguments give
the same precise messages.

The rules of what fits a type are stated once in docs/language.md ("Values in data and
arguments"); the compiler's data check (``compiler/data_check.py``) applies the same rules
to a task's data at check time, and ``tests/test_value_acceptance.py`` keeps the two in
step value for value. In short: an ``int`` is a JSON integer (``3.0`` is not one); text is
valid Unicode (no lone surrogates, which cannot be encoded as UTF-8 and would break the
state hash); dates and datetimes are ISO text without a UTC offset, since the world's clock
is naive; a duration is a finite number of seconds that fits a ``timedelta``; a
``map[int, V]`` key is a decimal integer; patterns are matched by RE2, in linear time.
"""

from __future__ import annotations

import datetime as dt
import enum
import importlib
import json
import json.encoder
import math
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, Final, TypeVar

from worldspec.runtime.errors import ArgumentError, ToolError, WrongTypeError

__all__ = [
    "canonical_json", "want_str", "want_int", "want_float", "want_number", "want_bool", "want_date",
    "want_datetime", "want_duration", "want_list", "want_set", "want_map", "want_object",
    "want_optional", "want_enum", "check_range", "check_length", "check_pattern",
    "export_value", "unique", "type_name", "want_json", "copy_json", "json_text",
    "lone_surrogate", "escape_surrogates", "pattern_matcher", "MAX_INT_DIGITS", "unalias",
    "str_text",
    "int_text", "float_text", "number_text", "want_str_list", "JUST_STR", "map_text",
    "state_aliases", "quote", "record_text", "records_text", "record_map_text", "str_list_text",
    "key_text",
]

T = TypeVar("T")


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


#: The most digits an integer is shown with, or read from a ``map[int, V]`` key (below
#: Python's int/str conversion limit, so no conversion ever raises).
MAX_INT_DIGITS: Final = 4000
_SURROGATE = re.compile("[\ud800-\udfff]")
_DECIMAL = re.compile(r"0|-?[1-9][0-9]*")
_DATE_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME_TEXT = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?"
    r"(Z|[+-][0-9]{2}(?::?[0-9]{2}(?::?[0-9]{2}(?:\.[0-9]{1,6})?)?)?)?")


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


def lone_surrogate(text: str) -> int | None:
    """Where ``text`` holds a lone surrogate (``"\\ud800"``), or None: such text is not
    Unicode, cannot be written as UTF-8, and would make hashing the state fail."""
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return None if found is None else found.start()


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


def want_str(value: object, path: str) -> str:
    if isinstance(value, str):
        if value.isascii():
            return value
        at = lone_surrogate(value)
        if at is None:
            return value
        raise _surrogate(path, value, at)
    raise _bad(path, "a string", value)


def want_int(value: object, path: str) -> int:
    """A JSON integer: ``3.0`` is a number, not an integer (as in JSON schema's
    ``"integer"``, which is what the tool schemas tell the agent)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _bad(path, "an integer", value)


def want_float(value: object, path: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            result = float(value)
        except OverflowError:
            # of the type Python would compute with, but not one a float holds: as a value
            # of another type, ``arguments: dynamic`` passes it on (``float()`` then fails)
            raise WrongTypeError(f"{path}: {_shown(value)} is too large for a float") from None
        if math.isfinite(result):
            return result
    raise _bad(path, "a number", value)


def want_number(value: object, path: str) -> int | float:
    """A JSON number kept as it is: an integer stays an int, ``3.0`` stays a float (Python's
    int-or-float, the ``number`` type); a float must be finite."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise _bad(path, "a number", value)


def want_bool(value: object, path: str) -> bool:
    if isinstance(value, bool):
        return value
    raise _bad(path, "true or false", value)


def want_date(value: object, path: str) -> dt.date:
    """A date, or its text ``YYYY-MM-DD`` (ISO's extended form only: no week dates)."""
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if isinstance(value, str) and _DATE_TEXT.fullmatch(value):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise _bad(path, "a date (YYYY-MM-DD)", value, not isinstance(value, str))


def want_datetime(value: object, path: str) -> dt.datetime:
    """A naive datetime, or its text ``YYYY-MM-DDTHH:MM[:SS[.ffffff]]`` (``T`` or a space).

    A UTC offset (``Z``, ``+05:00``) is refused rather than dropped or converted: the
    world's clock is naive, an aware value could not be compared with it, and silently
    shifting a time would change what the data says.
    """
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            return value
        raise _offset(path, value.isoformat())
    if isinstance(value, str):
        form = _DATETIME_TEXT.fullmatch(value)
        if form is not None:
            if form.group(1) is not None:
                raise _offset(path, value)
            try:
                return dt.datetime.fromisoformat(value)
            except ValueError:
                pass
    raise _bad(path, "a datetime (YYYY-MM-DDTHH:MM:SS)", value, not isinstance(value, str))


def _offset(path: str, text: str) -> ArgumentError:
    return ArgumentError(f"{path}: {json_text(text)} has a UTC offset; datetimes are naive "
                         "(the world's local time): drop the offset or the 'Z'")


def want_duration(value: object, path: str) -> dt.timedelta:
    """A length of time, or its number of seconds (finite, within ``timedelta``'s range)."""
    if isinstance(value, dt.timedelta):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, int) or math.isfinite(value):
            try:
                return dt.timedelta(seconds=value)
            except OverflowError:
                raise ArgumentError(f"{path}: {_shown(value)} seconds is too long for a "
                                    "duration") from None
    raise _bad(path, "a duration in seconds", value)


def want_list(value: object, path: str, item: Callable[[object, str], T]) -> tuple[T, ...]:
    if isinstance(value, (list, tuple)):
        return tuple(item(v, f"{path}[{i}]") for i, v in enumerate(value))
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
        first: dict[object, int] = {}
        for i, element in enumerate(items):
            if element in first:
                raise ArgumentError(f"{path}[{i}]: {_shown(export_value(element))} repeats "
                                    f"{path}[{first[element]}]; a set holds each element once")
            first[element] = i
    return distinct


def want_map(value: object, path: str, key: Callable[[object, str], Any],
             item: Callable[[object, str], T], int_keys: bool = False,
             json_keys: bool = False) -> dict[Any, T]:
    """A JSON object as a map. ``int_keys``: each key is decimal text, read as an int.
    ``json_keys`` (``map[json, V]``, int and str keys mixed as a Python dict may have them):
    all-digit text is read as an int, any other key stays text."""
    if not isinstance(value, dict):
        raise _bad(path, "an object", value)
    out: dict[Any, T] = {}
    for k, v in value.items():
        raw: object = k
        if json_keys and isinstance(k, str) and k.isascii() and k.isdigit() and \
                len(k) <= MAX_INT_DIGITS:
            raw = int(k)
        elif int_keys and isinstance(k, str):
            if len(k) > MAX_INT_DIGITS or not _DECIMAL.fullmatch(k):
                raise _bad(f"{path}[{json.dumps(k)}]", "an integer key (decimal digits, no "
                           "sign but '-', no leading zeros)", k, False)
            raw = int(k)
        out[key(raw, f"{path}[{json.dumps(k)}]")] = item(v, f"{path}[{json.dumps(k)}]")
    return out


def unalias(value: object, path: str, aliases: Mapping[str, str]) -> object:
    """An object with each alias key (the original's name of a field, ``from "..."``)
    renamed to its field; giving a field under both names is refused."""
    if not isinstance(value, dict) or not any(alias in value for alias in aliases):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = aliases.get(key, key)
        if name in out or (name != key and name in value):
            raise ArgumentError(f"{path}: field {json.dumps(name)} is given twice (also as "
                                f"{json.dumps(key if name != key else _alias_of(name, aliases))})")
        out[name] = item
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
    if not isinstance(value, dict):
        raise _bad(path, "an object", value)
    for name in value:
        if name not in fields:
            raise ArgumentError(f"{path}: unknown field {json.dumps(name)}")
    for name, required in fields.items():
        if required and name not in value:
            raise ArgumentError(f"{path}: missing field {json.dumps(name)}")
    return value


def want_json(value: object, path: str) -> Any:
    """A JSON value, deep-copied: the caller's (or the task's) objects are never shared."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, str):
        return want_str(value, path)
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise _bad(path, "a finite number", value, False)
    if isinstance(value, (list, tuple)):
        return [want_json(x, f"{path}[{i}]") for i, x in enumerate(value)]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, x in value.items():
            if not isinstance(k, str):
                raise ArgumentError(f"{path}: object keys must be strings")
            at = lone_surrogate(k)
            if at is not None:
                raise _surrogate(f"{path}[{json.dumps(k)}] (the key)", k, at)
            out[k] = want_json(x, f"{path}[{json.dumps(k)}]")
        return out
    raise _bad(path, "a JSON value", value)


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
    members = _members(enum_cls)
    if isinstance(value, str) and value in members:
        return members[value]  # type: ignore[no-any-return]
    allowed = ", ".join(json.dumps(v) for v in members)
    raise _bad(path, f"one of {allowed}", value, not isinstance(value, str))


def check_range(value: Any, path: str, low: float | None, high: float | None) -> Any:
    if (low is not None and value < low) or (high is not None and value > high):
        raise ArgumentError(f"{path}: {value!r} is out of range {_range(low, high)}")
    return value


def check_length(value: Any, path: str, low: int | None, high: int | None) -> Any:
    size = len(value)
    if (low is not None and size < low) or (high is not None and size > high):
        raise ArgumentError(f"{path}: length {size} is out of range {_range(low, high)}")
    return value


def _range(low: float | None, high: float | None) -> str:
    return f"{'' if low is None else low}..{'' if high is None else high}"


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
    rejects patterns RE2 cannot compile (WS312).

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
    except re2.error as exc:  # only a world that skipped the checker gets here (WS312)
        reason = exc.args[0] if exc.args else exc
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


def check_pattern(value: str, path: str, pattern: str) -> str:
    if not pattern_matcher(pattern)(value):
        shown = value if len(value) <= 80 else value[:40] + "..." + value[-20:]
        raise ArgumentError(f"{path}: {json.dumps(shown)} does not match /{pattern}/")
    return value


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
str_text: Callable[[str], str] = json.encoder.encode_basestring_ascii

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
        try:
            return f"[{', '.join([x._json or x._json_text() for x in value])}]"
        except AttributeError:
            pass
    return json_text(export_value(value))


def record_map_text(value: Any) -> str:
    """:func:`records_text` of a stored map of records keyed by text: ``{"key": record}``
    (a key that is no text, with ``arguments: dynamic``, as ``json.dumps`` writes it)."""
    if type(value) is dict:
        try:
            return "{" + ", ".join([str_text(k) + ": " + (x._json or x._json_text())
                                    for k, x in value.items()]) + "}"
        except (AttributeError, TypeError):
            pass
    return json_text(export_value(value))


def number_text(value: float) -> str:
    """``json.dumps(value)`` of a ``number`` (an int or a float)."""
    if type(value) is int:
        return _int_repr(value)
    return float_text(value)
