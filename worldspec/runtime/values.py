"""Conversions between runtime values and plain JSON, and canonical JSON text.

Generated loaders and exporters call these helpers; each one checks its
input and raises :class:`~worldspec.runtime.errors.ArgumentError` with the
JSON path of a bad value, so bad initial data and bad tool arguments give
the same precise messages.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import json.encoder
import math
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, TypeVar

from worldspec.runtime.errors import ArgumentError

__all__ = [
    "canonical_json", "want_str", "want_int", "want_float", "want_bool", "want_date",
    "want_datetime", "want_duration", "want_list", "want_set", "want_map", "want_object",
    "want_optional", "want_enum", "check_range", "check_length", "check_pattern",
    "export_value", "unique", "type_name", "want_json", "copy_json", "json_text",
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


def _bad(path: str, expected: str, value: object) -> ArgumentError:
    shown = json.dumps(value, default=str)[:60] if not isinstance(value, (dict, list)) else \
        type_name(value)
    return ArgumentError(f"{path}: expected {expected}, got {shown}")


def want_str(value: object, path: str) -> str:
    if isinstance(value, str):
        return value
    raise _bad(path, "a string", value)


def want_int(value: object, path: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    raise _bad(path, "an integer", value)


def want_float(value: object, path: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        result = float(value)
        if math.isfinite(result):
            return result
    raise _bad(path, "a number", value)


def want_bool(value: object, path: str) -> bool:
    if isinstance(value, bool):
        return value
    raise _bad(path, "true or false", value)


def want_date(value: object, path: str) -> dt.date:
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise _bad(path, "a date (YYYY-MM-DD)", value)


def want_datetime(value: object, path: str) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, str):
        try:
            result = dt.datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            return result.replace(tzinfo=None) if result.tzinfo is None else result
    raise _bad(path, "a datetime (YYYY-MM-DDTHH:MM:SS)", value)


def want_duration(value: object, path: str) -> dt.timedelta:
    if isinstance(value, dt.timedelta):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return dt.timedelta(seconds=value)
    raise _bad(path, "a duration in seconds", value)


def want_list(value: object, path: str, item: Callable[[object, str], T]) -> tuple[T, ...]:
    if isinstance(value, (list, tuple)):
        return tuple(item(v, f"{path}[{i}]") for i, v in enumerate(value))
    raise _bad(path, "an array", value)


def want_set(value: object, path: str, item: Callable[[object, str], T]) -> tuple[T, ...]:
    items = want_list(value, path, item)
    return unique(items)


def want_map(value: object, path: str, key: Callable[[object, str], Any],
             item: Callable[[object, str], T], int_keys: bool = False) -> dict[Any, T]:
    if not isinstance(value, dict):
        raise _bad(path, "an object", value)
    out: dict[Any, T] = {}
    for k, v in value.items():
        raw: object = k
        if int_keys and isinstance(k, str):
            try:
                raw = int(k)
            except ValueError:
                raise _bad(f"{path}[{json.dumps(k)}]", "an integer key", k) from None
        out[key(raw, f"{path}[{json.dumps(k)}]")] = item(v, f"{path}[{json.dumps(k)}]")
    return out


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
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise _bad(path, "a finite number", value)
    if isinstance(value, (list, tuple)):
        return [want_json(x, f"{path}[{i}]") for i, x in enumerate(value)]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, x in value.items():
            if not isinstance(k, str):
                raise ArgumentError(f"{path}: object keys must be strings")
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
    raise _bad(path, f"one of {allowed}", value)


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


@lru_cache(maxsize=512)
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def check_pattern(value: str, path: str, pattern: str) -> str:
    if _pattern(pattern).fullmatch(value) is None:
        raise ArgumentError(f"{path}: {json.dumps(value)} does not match /{pattern}/")
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
        return {str(export_value(k)): export_value(v) for k, v in value.items()}
    export = getattr(value, "export", None)
    if export is not None:
        return export()
    raise TypeError(f"cannot export {type(value).__name__}")


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
