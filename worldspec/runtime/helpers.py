"""Small helpers the generated code calls (imported there as ``rt``).

Each raises :class:`ToolError` with a readable message where the spec's
operation can fail at run time, so the failure reaches the agent through
the world's result convention instead of as a Python exception.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import operator
import os
import random
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast, overload

from worldspec.runtime.arithmetic import arithmetic, arithmetic_float
from worldspec.runtime.budget import (
    CHARS_PER_STEP,
    INT_MESSAGE,
    MAX_INT_BITS,
    MAX_STEPS,
    MAX_STRING,
    MAX_TEXT,
    STEPS_MESSAGE,
    STRING_MESSAGE,
    TEXT_MESSAGE,
    bounded,
    built,
    charge_size,
    check_spec,
    each,
    join,
    out_of_steps,
    pieces,
    read,
    refill,
    replace,
    step,
    width,
)
from worldspec.runtime.episode import RUNTIME_FAILURES, describe_failure
from worldspec.runtime.errors import (
    ArgumentError,
    InvariantError,
    KeptError,
    LimitError,
    ToolError,
    WrongTypeError,
)
from worldspec.runtime.records import Record, replace_fields
from worldspec.runtime.shapes import is_array, is_object
from worldspec.runtime.values import (
    add,
    escape_surrogates,
    quote,
    type_name,
    want_date,
    want_datetime,
    want_json,
    want_str,
    want_str_list,
    without,
    without_key,
)
from worldspec.runtime.verdicts import Verdict, compared, expect

if TYPE_CHECKING:
    from worldspec.runtime.episode import Episode, Row, Table

__all__ = [
    # the per-call budget (worldspec.runtime.budget), re-exported for the generated code
    "MAX_STEPS", "MAX_INT_BITS", "MAX_STRING", "MAX_TEXT", "STEPS_MESSAGE", "INT_MESSAGE",
    "STRING_MESSAGE", "TEXT_MESSAGE", "CHARS_PER_STEP", "each", "step", "out_of_steps",
    "bounded", "built", "pieces", "charge_size", "read", "width", "replace", "join",
    "check_spec", "refill",
    "Exported", "MAX_POWER_BITS", "power", "number_power", "bounded_number", "to_number",
    "python_type", "python_repr", "json_get", "json_keys", "json_values", "json_contains",
    "from_json",
    "as_float",
    "int_range", "present", "absent", "text", "to_int", "to_float", "parse_date", "strptime",
    "parse_datetime",
    "key_of", "rows",
    "minimum", "maximum", "choice", "random_digits", "coalesce", "coalesce_optional", "set_at",
    "add", "without",
    "without_key", "if_present", "seconds", "rows_of", "check_arguments",
    "check_arguments_python", "KeptError", "fitting", "HOLE", "fits_shape",
    "lookup", "quote", "check_refs", "check_deleted", "changed_rows", "changed_pairs",
    "package_data", "package_text", "json_set",
    "arithmetic", "arithmetic_float",
    # generated records (worldspec.runtime.records)
    "Record", "replace_fields",
    # checks that say what they compared (worldspec.runtime.verdicts)
    "Verdict", "compared", "expect",
]

T = TypeVar("T")
U = TypeVar("U")


def text(value: Any) -> str:
    """``str()`` with Python semantics, except rows (their key) and enum members (their value).

    A list prints as Python prints a list, ``[1, 'a']``, though the runtime holds it as a
    tuple, and so does a set (held as a tuple too); a map prints as a dict, ``{'k': False}``,
    and a record as ``Point(x=1, y=[2, 3])``. Inside them each value is Python's ``repr()``
    of it, with the same exceptions: an enum member is its value (``'open'``), a row its key.
    """
    if isinstance(value, str):
        return str.__str__(value)
    key = getattr(value, "KEY", None)
    if key:
        return text(getattr(value, key))
    if not isinstance(value, (tuple, list, dict, Record)):
        return str(value)

    def shown(inner: Any) -> str:
        if isinstance(inner, str):
            return repr(str.__str__(inner))
        if isinstance(inner, (tuple, list)):
            return "[" + ", ".join(map(shown, inner)) + "]"
        if isinstance(inner, dict):
            return "{" + ", ".join(f"{shown(k)}: {shown(v)}" for k, v in inner.items()) + "}"
        if isinstance(inner, Record):
            fields = (f"{name}={shown(getattr(inner, name))}" for name in inner.__match_args__)
            return f"{type(inner).__qualname__}({', '.join(fields)})"
        row_key = getattr(inner, "KEY", None)
        return shown(getattr(inner, row_key)) if row_key else repr(inner)

    return shown(value)


def to_int(value: Any) -> int:
    """``int(x)``: Python's ``int()``, failing with its text
    (``invalid literal for int() with base 10: 'x'``, ``cannot convert float NaN to integer``)."""
    try:
        return int(value)
    except (ValueError, OverflowError) as exc:
        raise ToolError(str(exc)) from None


def to_float(value: Any) -> float:
    """``float(x)``: Python's ``float()``, failing with its text
    (``could not convert string to float: 'x'``, ``int too large to convert to float``)."""
    try:
        return float(value)
    except (ValueError, OverflowError) as exc:
        raise ToolError(str(exc)) from None


def parse_date(value: str) -> dt.date:
    """``date(text)``: the rule of dates in data and arguments (``want_date``)."""
    try:
        return want_date(value, "date()")
    except ArgumentError:
        raise ToolError(f"{quote(value)} is not a date (YYYY-MM-DD).") from None


def parse_datetime(value: str) -> dt.datetime:
    """``datetime(text)``: naive ISO text, as in data and arguments (``want_datetime``)."""
    try:
        return want_datetime(value, "datetime()")
    except ArgumentError as exc:
        if "offset" in exc.message:
            raise ToolError(f"{quote(value)} has a UTC offset; datetimes are naive.") from None
        raise ToolError(f"{quote(value)} is not a datetime (YYYY-MM-DDTHH:MM:SS).") from None


def strptime(text: str, fmt: str) -> dt.datetime:
    """``strptime(text, format)``: Python's ``datetime.strptime``, failing the call with
    Python's own message (``time data '2024-13-01' does not match format '%Y-%m-%d'``);
    a datetime read with a UTC offset is refused, datetimes being naive."""
    try:
        found = dt.datetime.strptime(text, fmt)
    except ValueError as exc:
        raise ToolError(str(exc)) from None
    if found.tzinfo is not None:
        raise ToolError(f"{quote(text)} has a UTC offset; datetimes are naive.")
    return found


class Exported:
    """A tool result already turned into plain JSON data by the generated code."""

    __slots__ = ("data",)

    def __init__(self, data: Any) -> None:
        self.data = data

    def export(self) -> Any:
        return self.data


#: The longest list ``range`` may build (a runaway range fails the call instead).
MAX_RANGE = 100_000

#: the most bits an ``int ** int`` result may have: the budget's integer size
MAX_POWER_BITS = MAX_INT_BITS


@overload
def power(base: int, exponent: int) -> int: ...
@overload
def power(base: float, exponent: float) -> float: ...
def power(base: float, exponent: float) -> float:
    """``base ** exponent``: an int for ints (a negative exponent or a result of more than
    :data:`MAX_POWER_BITS` bits fails the call), a float otherwise (overflow and complex
    results fail the call)."""
    if type(base) is int and type(exponent) is int:
        if exponent < 0:
            raise ToolError(f"{base} ** {exponent}: a negative power of an int; use a float.")
        if abs(base) > 1 and exponent * (abs(base).bit_length()) > MAX_POWER_BITS:
            raise LimitError(f"{base} ** {exponent} is too large.")
        exact: int = base ** exponent
        return exact
    try:
        result: float | complex = float(base) ** float(exponent)
    except ZeroDivisionError:
        raise ToolError(f"{base} ** {exponent}: zero to a negative power.") from None
    except OverflowError:
        raise ToolError(f"{base} ** {exponent} is too large.") from None
    if isinstance(result, complex):
        raise ToolError(f"{base} ** {exponent} is not a real number.")
    return result


def number_power(base: float, exponent: float) -> float:
    """``base ** exponent`` on ``number`` values, as Python computes it: an int for an int
    base and a non-negative int exponent (bounded like :func:`power`), else a float (an int
    to a negative int power too: ``2 ** -1`` is ``0.5``)."""
    if type(base) is int and type(exponent) is int and exponent < 0:
        return power(float(base), float(exponent))
    return power(base, exponent)


def bounded_number(value: float) -> float:
    """A ``number`` result: an int must have at most :data:`MAX_INT_BITS` bits."""
    if type(value) is int:
        return bounded(value)
    return value


def to_number(value: Any) -> int | float:
    """``number(x)``: an int stays an int and a float a float (a bool is not a number);
    text is read as Python's ``int()`` reads it, else as ``float()`` does (finite only)."""
    if isinstance(value, bool) or value is None:
        raise ToolError(f"Cannot convert {quote(value)} to a number.")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
        try:
            result = float(value)
        except ValueError:
            raise ToolError(f"Cannot convert {quote(value)} to a number.") from None
        if math.isfinite(result):
            return result
    raise ToolError(f"Cannot convert {quote(value)} to a number.")


def python_type(value: Any) -> str:
    """``type_name(x)``: Python's name of the type of a json value, a number or a scalar."""
    if type(value) is str:  # the common case: a text checked to be one
        return "str"
    if value is None:
        return "NoneType"
    if isinstance(value, (list, tuple)):
        return "list"
    return type(value).__name__


def python_repr(value: Any) -> str:
    """``repr(x)``: Python's own ``repr`` of the value as Python holds it (a list value is
    a list, not the tuple it is stored as)."""
    return repr(_as_python(value))


def _as_python(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_as_python(x) for x in value]
    if isinstance(value, dict):
        return {_as_python(k): _as_python(x) for k, x in value.items()}
    return value


def _json_kind(value: Any) -> str:
    return {"NoneType": "null", "dict": "object", "list": "array", "str": "a string",
            "bool": "a bool"}.get(python_type(value), "a number")


def _object(value: Any, what: str) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    raise ToolError(f"{what} needs a JSON object, not {_json_kind(value)}.")


def json_get(value: Any, key: Any) -> Any:
    """``j.get(k)``: the member of a JSON object, or none when it has no such key."""
    return _object(value, "get()").get(key)


def json_keys(value: Any) -> tuple[str, ...]:
    """``j.keys()``: the keys of a JSON object, in order."""
    return tuple(_object(value, "keys()"))


def json_values(value: Any) -> tuple[Any, ...]:
    """``j.values()``: the members of a JSON object, in order."""
    return tuple(_object(value, "values()").values())


def json_contains(value: Any, item: Any) -> bool:
    """``j.contains(x)`` (and ``x in j``): a key of an object, an element of an array, a
    substring of a string, as Python's ``in``; anything else fails the call."""
    if isinstance(value, (dict, list)):
        return item in value
    if isinstance(value, str) and isinstance(item, str):
        return item in value
    raise ToolError(f"'in' needs a JSON object, array or string, not {_json_kind(value)}.")


def from_json(load: Callable[[Any, str, Any], T], value: Any, ep: Any) -> T:
    """``from_json(j)``: ``j`` checked and loaded as the expected type is from data."""
    return load(value, "value", ep)


@overload
def as_float(value: float) -> float: ...
@overload
def as_float(value: float | None) -> float | None: ...
def as_float(value: float | None) -> float | None:
    """An ``int`` stored where the spec declares a ``float`` becomes one (``none`` stays)."""
    return None if value is None else to_float(value)


def int_range(low: int, high: int) -> tuple[int, ...]:
    """``range(low, high)`` as a list value; very long ranges fail the call."""
    if high - low > MAX_RANGE:
        raise LimitError(f"range({low}, {high}) is longer than {MAX_RANGE:,} elements.")
    return tuple(range(low, high))


def present(value: T | None) -> T:
    """A value the spec proved not to be none (by a check earlier in the tool).

    Should the proof ever be wrong, the call fails (and is rolled back) instead of raising
    out of ``call()``; unlike ``assert``, this also holds under ``python -O``.
    """
    if value is None:
        raise ToolError("A value that must be present is none.")
    return value


def absent() -> NoReturn:
    """What :func:`present` raises, for the generated code's inline form of it
    (``(x if x is not None else rt.absent())``)."""
    raise ToolError("A value that must be present is none.")


def key_of(value: Any) -> Any:
    """The key of a row (``None`` stays ``None``)."""
    return None if value is None else value.key()


def rows(table: Table[Any], keys: Iterable[Any]) -> Iterator[Any]:
    """The rows for stored keys, in order."""
    return (table.row(k) for k in tuple(keys))


def minimum(items: Iterable[T], key: Callable[[T], Any] | None = None) -> T:
    values = list(items)
    if not values:
        raise ToolError("min() of an empty collection.")
    return min(values, key=key) if key is not None else min(values)  # type: ignore[type-var]


def maximum(items: Iterable[T], key: Callable[[T], Any] | None = None) -> T:
    values = list(items)
    if not values:
        raise ToolError("max() of an empty collection.")
    return max(values, key=key) if key is not None else max(values)  # type: ignore[type-var]


def choice(rng: random.Random, items: tuple[T, ...]) -> T:
    if not items:
        raise ToolError("random_choice() of an empty collection.")
    return rng.choice(items)


def random_digits(rng: random.Random, count: int) -> str:
    return "".join(str(rng.randrange(10)) for _ in range(max(0, count)))


def coalesce(value: T | None, default: Callable[[], T]) -> T:
    return value if value is not None else default()


def coalesce_optional(value: T | None, default: Callable[[], T | None]) -> T | None:
    """``value ?? default`` where the default may be none as well."""
    return value if value is not None else default()


def set_at(items: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    """A copy of ``items`` with one element replaced (Python indexing)."""
    if type(items) is tuple and type(index) is int:  # the common case: one copy each way
        copy = list(items)
        try:
            copy[index] = value
        except IndexError:
            raise ToolError(f"Index {index} is out of range for a list of {len(items)}.") \
                from None
        return tuple(copy)
    size = len(items)  # another JSON value than declared (arguments: dynamic), as Python does
    if not -size <= index < size:
        raise ToolError(f"Index {index} is out of range for a list of {size}.")
    position = index % size
    return (*items[:position], value, *items[position + 1:])


def json_set(container: Any, index: Any, value: Any) -> Any:
    """A copy of a JSON object (or array) with one member set: ``j["k"] = e`` on ``json``."""
    if isinstance(container, dict):
        if not isinstance(index, str):
            raise ToolError(f"A JSON object's keys are strings, not {quote(index)}.")
        return {**container, index: value}
    if isinstance(container, list) and isinstance(index, int) and not isinstance(index, bool):
        return list(set_at(tuple(container), index, value))
    raise ToolError(f"Cannot set {quote(index)} in a JSON {type_name(container)}.")


def if_present(value: T | None, fn: Callable[[T], U]) -> U | None:
    return None if value is None else fn(value)


def seconds(value: dt.timedelta) -> int | float:
    total = value.total_seconds()
    return int(total) if total.is_integer() else total


def rows_of(data: object) -> Iterable[object]:
    """Table data as a list of rows (a list, or an object keyed by row key)."""
    if is_object(data):
        return list(data.values())
    if is_array(data):
        return data
    raise ArgumentError("a table must be given as a list of rows")


def check_arguments(args: Mapping[str, Any], allowed: tuple[str, ...],
                    required: tuple[str, ...], nullable: tuple[str, ...] = ()) -> None:
    """Only known arguments, and every required one given. A required argument given as null
    counts as missing, except one in ``nullable`` (a ``json`` parameter: null is a value)."""
    for name in args:
        if name not in allowed:
            expected = ", ".join(allowed) or "no arguments"
            raise ArgumentError(f"Unexpected argument {json.dumps(name)} (expected: {expected}).")
    for name in required:
        if name not in args or (args[name] is None and name not in nullable):
            raise ArgumentError(f"Missing required argument {json.dumps(name)}.")


def check_arguments_python(args: Mapping[str, Any], allowed: tuple[str, ...],
                           required: tuple[str, ...], function: str) -> None:
    """:func:`check_arguments` with the messages of the ``TypeError`` Python raises when
    ``function(**args)`` gets an unexpected or lacks a required keyword argument (``config {
    arguments: python }``). As in Python, an explicit null is a value, not a missing argument:
    the parameter's type then decides."""
    for name in args:
        if name not in allowed:
            raise ArgumentError(f"{function}() got an unexpected keyword argument "
                                f"'{escape_surrogates(str(name))}'")
    missing = [name for name in required if name not in args]
    if missing:
        quoted = [f"'{name}'" for name in missing]
        listed = quoted[0] if len(quoted) == 1 else \
            " and ".join(quoted) if len(quoted) == 2 else \
            ", ".join(quoted[:-1]) + ", and " + quoted[-1]
        plural = "argument" if len(missing) == 1 else "arguments"
        raise ArgumentError(f"{function}() missing {len(missing)} required positional "
                            f"{plural}: {listed}")


def fitting(load: Callable[[], T], given: Any, message: Callable[[Any], str | None]) -> T:
    """An argument loaded by ``load``; one that does not fit the parameter's type fails with
    the parameter's own message (its ``else``), built from the JSON value ``given``, or with
    the runtime's message where the parameter's is none."""
    try:
        return load()
    except ArgumentError:
        own = message(given)
        if own is None:
            raise
        raise ArgumentError(own) from None


def foreign(ep: Episode, refused: ToolError, given: Any, path: str) -> Any:
    """``config { arguments: dynamic }``: an argument its loader refused for its JSON type
    (``refused`` is a :class:`WrongTypeError`), passed on as the JSON value it is, as Python
    would (a copy: the caller's objects are never shared). Any other refusal stands: a value
    of the right type that is not one of the parameter's (a text that is no enum member, a
    broken refinement), or the parameter's own ``else`` message."""
    if type(refused) is not WrongTypeError:
        raise refused
    value = want_json(given, path)
    ep.took_other_types = True
    return value


def foreign_list(ep: Episode, refused: ToolError, given: Any, path: str) -> Any:
    """:func:`foreign` for a list parameter: a JSON array whose elements are of another type
    becomes a list as the world keeps lists (a tuple), so that ``+`` and the list builtins
    work on it as Python's list operations on the original's list do."""
    value = foreign(ep, refused, given, path)
    return tuple(value) if type(value) is list else value


def str_or_foreign(ep: Episode, given: Any, path: str) -> Any:
    """A text argument's slow path in ``arguments: dynamic``: the text (``want_str``), or a
    value of another JSON type passed on (:func:`foreign`)."""
    try:
        return want_str(given, path)
    except WrongTypeError as exc:
        return foreign(ep, exc, given, path)


def str_list_or_foreign(ep: Episode, given: Any, path: str) -> Any:
    """A list-of-text argument's slow path in ``arguments: dynamic``: the list
    (``want_str_list``), or a value of another JSON type passed on (:func:`foreign_list`)."""
    try:
        return want_str_list(given, path)
    except WrongTypeError as exc:
        return foreign_list(ep, exc, given, path)


#: What a tool body of a world with ``arguments: dynamic`` may raise on a value of another
#: type than declared (``5 .lower()``, ``"x" <= 0``, ``hash([1])``): the call fails with
#: Python's own text (:func:`python_failure`)
PYTHON_FAILURES = (*RUNTIME_FAILURES, AttributeError)


def python_failure(exc: BaseException) -> ToolError:
    """The failure of a call whose body raised ``exc`` (one of :data:`PYTHON_FAILURES`), with
    ``str(exc)`` as its text, as the harnesses of BFCL and tau2 report a Python original's
    exception (``'<=' not supported between instances of 'str' and 'int'``, ``'x'`` for a
    missing key)."""
    return ToolError(str(exc) or describe_failure(exc))


def size(items: Any) -> int:
    """``len(items)``, or 1 for a value without a length (in a world with ``arguments:
    dynamic``, a number given for a list): the steps a loop over it is charged."""
    try:
        return len(items)
    except TypeError:
        return 1


def python_error_of(compute: Callable[[], object]) -> str | None:
    """:func:`error_of` in a world with ``arguments: dynamic``: a Python error's text is
    Python's own (:func:`python_failure`), as the call would fail with it."""
    try:
        compute()
    except PYTHON_FAILURES as exc:
        return python_failure(exc).message
    except ToolError as exc:
        text = _failure_text(exc)
        if text is None:
            raise
        return text
    return None


# ------------------------------------------------------------------ Python's operators
# In a world with ``arguments: dynamic`` a tool body may hold a value of any JSON type where
# it declares another, and its operators are Python's: these helpers give Python's result
# (value and type) or Python's exception (whose text the call fails with), on the values as
# the world holds them (a declared list is a tuple: Python's original had a list). Each is
# typed as its left operand, the type the checker gives the operation on operands of their
# declared types; on a value of another type it gives what Python gives, as the mode says.

def python_value(value: Any) -> Any:
    """``value`` as the Python original would hold it: the tuples the world keeps lists in
    become lists, at every depth, so ``[] in {}`` raises ``unhashable type: 'list'`` and an
    error names a ``list``, not a ``tuple``."""
    if type(value) is tuple:
        return [python_value(x) for x in value]
    if type(value) is dict:
        return {k: python_value(x) for k, x in value.items()}
    return value


def python_power(base: T, exponent: Any) -> T:
    """``base ** exponent`` as Python computes it: an int for ints (bools too: ``True ** 2``
    is ``1``) and a non-negative exponent, a float for an int to a negative power, Python's
    ``TypeError`` for values that are no numbers (``"2" ** 2``) and Python's errors for zero
    to a negative power and float overflow. The guards of the language's ``**`` stay: an
    int result over :data:`MAX_POWER_BITS` bits, and a complex result (no JSON value),
    fail the call."""
    held: Any = base
    if type(held) in (int, bool) and type(exponent) in (int, bool) and exponent >= 0:
        if abs(held) > 1 and exponent * abs(held).bit_length() > MAX_POWER_BITS:
            raise LimitError(f"{held} ** {exponent} is too large.")
    result = held ** exponent
    if isinstance(result, complex):
        raise ToolError(f"{held} ** {exponent} is not a real number.")
    return cast(T, result)


def python_concat(left: T, right: Any) -> T:
    """``left + right`` where the world declares lists: Python's ``+`` on the original's
    lists (a list result is kept as the world keeps lists, a tuple), and on whatever other
    values the operands hold (``"a" + "b"``, or Python's ``can only concatenate list (not
    "str") to list``)."""
    held: Any = left
    if type(held) is tuple and type(right) is tuple:
        return held + right  # type: ignore[return-value]  # (no cast(): a call on the hot path)
    result = python_value(held) + python_value(right)
    return cast(T, tuple(result) if type(result) is list else result)


_SEQUENCES = (str, tuple, list)
#: the widths and precisions of ``%`` formatting (``"%10.2f"``): each may build a long text
_FORMAT_SIZES = re.compile(r"%[-#0 +]*([0-9]*)(?:\.([0-9]*))?")


def python_times(left: T, right: Any) -> T:
    """``left * right`` as Python computes it (``"ab" * 2``, ``True * 3``, Python's ``can't
    multiply sequence by non-int of type 'str'``), refusing before the work a repeated text
    over :data:`MAX_STRING` characters or a repeated list over the call's steps, and an int
    result over the budget's bits (as ``*`` on ints is)."""
    held: Any = left
    _repetition(held, right)
    result = held * right
    return cast(T, bounded(result) if type(result) is int else result)


def _repetition(left: Any, right: Any) -> None:
    """Refuse, before the work, ``left * right`` repeating a text past :data:`MAX_STRING`
    characters or a list past the call's steps; a count past an index (or a text past one)
    Python refuses at once, with its own text."""
    if type(left) in _SEQUENCES or type(right) in _SEQUENCES:
        items, times = (left, right) if type(left) in _SEQUENCES else (right, left)
        size = len(items) * times if type(times) in (int, bool) and times <= sys.maxsize else 0
        if size > MAX_STRING and not (type(items) is str and size > sys.maxsize):
            if type(items) is str:
                raise LimitError(STRING_MESSAGE)
            out_of_steps()


#: Python's augmented assignments: ``x += y`` extends a list with any iterable
#: (``xs += "ab"`` adds ``"a"`` and ``"b"``), and names ``+=`` in its errors
_IN_PLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv}


#: the least int of more than :data:`MAX_INT_BITS` bits
_INT_BOUND = 1 << MAX_INT_BITS


def python_augmented(ep: Episode, op: str, target: T, value: Any) -> T:
    """``target op= value`` (``+= -= *= /=``) as Python computes it on what they hold: a list
    (kept as a tuple) is extended in place by ``+=`` with any iterable, anything else is
    Python's ``target op value`` with ``op=`` in its error texts (``unsupported operand
    type(s) for +=: 'int' and 'list'``). The result is charged as ``+`` and ``*`` are."""
    if type(target) is int and type(value) is int:  # the common case: a counter
        number: Any = target + value if op == "+" else _IN_PLACE[op](target, value)  # type: ignore[operator]
        if -_INT_BOUND < number < _INT_BOUND:  # bounded(), inline: two comparisons
            return number  # type: ignore[no-any-return]  # (no cast(): a call on the hot path)
        if type(number) is int:  # (``/`` gives a float)
            raise LimitError(INT_MESSAGE)
        return number  # type: ignore[no-any-return]
    held: Any = python_value(target) if type(target) is tuple else target
    if op == "*":
        _repetition(held, value)
    result = _IN_PLACE[op](held, python_value(value))
    if type(result) is int:
        return cast(T, bounded(result))
    if type(result) is list and type(target) is not list:
        return cast(T, each(ep, tuple(result)))
    if type(result) in (str, list):
        return cast(T, built(ep, result) if type(result) is str else each(ep, result))
    return cast(T, result)


def python_remainder(left: T, right: Any) -> T:
    """``left % right`` as Python computes it: a number's remainder, or for a text Python's
    ``%`` formatting (``"%s!" % 5``), refusing before the work a width or a precision over
    :data:`MAX_STRING` characters."""
    held: Any = left
    if type(held) is str:
        for width, precision in _FORMAT_SIZES.findall(held):
            if max(len(width), len(precision)) > 7 or \
                    max(int(width or 0), int(precision or 0)) > MAX_STRING:
                raise LimitError(STRING_MESSAGE)
    return cast(T, held % right)


def python_grown(ep: Episode, value: T) -> T:
    """The result of ``+`` on values declared text: charged as the text it is (``built``),
    or per element for a list; a number (Python's ``+`` on values of other types) as it
    is."""
    held: Any = value
    if type(held) is str:
        built(ep, held)
    elif type(held) in (tuple, list):
        each(ep, held)
    return value


#: The message a custom failure shape is built with to recognise failures (``failed()``):
#: text no tool message holds.
HOLE = "\x00worldspec:message\x00"


def fits_shape(result: Any, shape: Any) -> bool:
    """Whether ``result`` has the failure ``shape`` (built with :data:`HOLE` as the message):
    the same keys, the same constants (``false`` is not ``0``), any text where the message
    stands, and around it, in a text, the same prefix and suffix."""
    if isinstance(shape, str):
        if HOLE not in shape:
            return result == shape and isinstance(result, str)
        before, _, after = shape.partition(HOLE)
        return isinstance(result, str) and len(result) >= len(before) + len(after) and \
            result.startswith(before) and result.endswith(after)
    if isinstance(shape, dict):
        return isinstance(result, dict) and result.keys() == shape.keys() and \
            all(fits_shape(result[k], shape[k]) for k in shape)
    if isinstance(shape, (list, tuple)):
        return isinstance(result, (list, tuple)) and len(result) == len(shape) and \
            all(fits_shape(r, s) for r, s in zip(result, shape, strict=True))
    return type(result) is type(shape) and result == shape


def lookup(table: Table[Any], key: Any, message: Callable[[Any], str]) -> Any:
    """The row of an entity parameter, or the parameter's 'not found' failure."""
    found = table.rows.get(key)
    if found is None:
        raise ToolError(message(key))
    return found


def check_refs(table: Table[Any], stored: Any, where: str) -> None:
    """Every key in ``stored`` (a key, None, or a collection of keys) names a row."""
    if stored is None:
        return
    if isinstance(stored, (tuple, list)):
        for key in stored:
            check_refs(table, key, where)
        return
    if isinstance(stored, dict):
        for key in stored.values():
            check_refs(table, key, where)
        return
    if stored not in table.rows:
        raise InvariantError(f"{where} refers to {table.entity} {quote(stored)}, which does not "
                             "exist.", where)


def changed_rows(ep: Episode, table: Table[Any],
                 fields: tuple[str, ...] | None = None) -> Sequence[Any]:
    """Rows of ``table`` inserted or changed by the current call (every row in a full check).

    With ``fields``, a changed row counts only if one of those fields was set: what a check
    that reads nothing else of the row needs (a reference check reads its reference field).
    """
    if ep._full_check:
        return tuple(table.rows.values())
    mark = ep._call_mark
    undo = ep._undo
    if len(undo) <= mark:
        return ()
    entity = table.entity
    rows = table.rows
    out: list[Row] = []
    seen: set[int] | None = None  # made at the first row found (most calls find none)
    for entry in undo[mark:] if mark else undo:
        kind = entry[0]
        if kind == 0:  # a field set (of a row, or a state item)
            if fields is not None and entry[2] not in fields:
                continue
            candidate = entry[1]
            if getattr(candidate, "ENTITY", None) != entity or \
                    rows.get(candidate.key()) is not candidate:
                continue
        elif kind == 1 and entry[1] is table:  # a row inserted (and not deleted since)
            candidate = rows.get(entry[2])
            if candidate is None:
                continue
        else:
            continue
        if seen is None:
            seen = {id(candidate)}
        elif id(candidate) in seen:
            continue
        else:
            seen.add(id(candidate))
        out.append(candidate)
    return out


def changed_pairs(ep: Episode, table_a: Table[Any], table_b: Table[Any]
                  ) -> Iterator[tuple[Any, Any]]:
    """The pairs ``(a, b)`` of rows of ``table_a`` and ``table_b`` with a row the current call
    changed on either side (every pair, twice, in a full check): each changed row of
    ``table_a`` with every row of ``table_b``, then every row of ``table_a`` with each changed
    row of ``table_b``, in that order. What a pairwise invariant needs to be checked on."""
    for a in changed_rows(ep, table_a):
        for b in table_b:
            yield a, b
    for b in changed_rows(ep, table_b):
        for a in table_a:
            yield a, b


def check_deleted(ep: Episode, table: Table[Any],
                  users: tuple[tuple[Table[Any] | None, str], ...]) -> None:
    """A row deleted by the current call must not be referenced any more."""
    if not ep.deleted_rows:  # the call deleted nothing (the flag is set by every deletion)
        return
    deleted = [e[2] for e in ep._undo[ep._call_mark:] if e[0] == 2 and e[1] is table
               and e[2] not in table.rows]
    if not deleted:
        return
    gone = set(deleted)
    for other, attribute in users:
        holders: Iterable[Any] = other.rows.values() if other is not None else (ep.state,)
        for holder in holders:
            value = getattr(holder, attribute)
            keys = value if isinstance(value, (tuple, list)) else (
                value.values() if isinstance(value, dict) else (value,))
            for key in keys:
                if key in gone:
                    raise InvariantError(f"{table.entity} {quote(key)} is still referenced and "
                                    "cannot be deleted.")


@cache
def package_text(package: str | None, name: str) -> str:
    """A text file shipped in a generated package (``name`` relative to it, ``/``-separated),
    read once: by the package's own loader where it has one (a directory or a zip archive),
    as importlib.resources would, without importing it (that costs a world's import ~10 ms)."""
    module = sys.modules.get(package or "")
    get_data = getattr(getattr(getattr(module, "__spec__", None), "loader", None), "get_data",
                       None)
    where = getattr(module, "__file__", None)
    if isinstance(where, str) and get_data is not None:
        path = os.path.join(os.path.dirname(where), *name.split("/"))
        return bytes(get_data(path)).decode("utf-8")
    from importlib import resources

    return resources.files(package or "").joinpath(name).read_text(encoding="utf-8")


@cache
def _data(package: str, name: str) -> Any:
    return json.loads(package_text(package, name))


def package_data(package: str | None, name: str) -> Any:
    """A JSON data file shipped in a generated package (parsed once, shared)."""
    return _data(package or "", name)


# ------------------------------------------------ attempt() and error_of(): try/except

#: what a call fails with: a ToolError, and the Python errors it describes as failures
_FAILURES = (ToolError, *RUNTIME_FAILURES)

_A = TypeVar("_A")


def _failure_text(exc: BaseException) -> str | None:
    """The text a call would fail with for ``exc``, or None when ``exc`` is not a failure
    of the expression but of the call: a guard (:class:`LimitError`), ``fail keep``."""
    if isinstance(exc, (LimitError, KeptError)):
        return None
    if isinstance(exc, ToolError):
        return exc.message
    return describe_failure(exc)


def attempt(compute: Callable[[], _A]) -> _A | None:
    """``attempt(x)``: the value of ``x``, or None when evaluating it fails as a call
    would fail; the call's guards (steps, sizes, nesting) go on failing the call."""
    try:
        return compute()
    except _FAILURES as exc:
        if _failure_text(exc) is None:
            raise
        return None


def error_of(compute: Callable[[], object]) -> str | None:
    """``error_of(x)``: the text evaluating ``x`` fails with (what the call would have
    failed with), or None when it does not fail; guards are not caught, as for attempt."""
    try:
        compute()
    except _FAILURES as exc:
        text = _failure_text(exc)
        if text is None:
            raise
        return text
    return None


#: ``operator.attrgetter``: generated ``_GET_<attribute>`` read one attribute of every element
#: of a collection in C (``tuple(map(_GET_id, xs))`` for ``[x.id for x in xs]``)
attrgetter = operator.attrgetter


def getter(name: str, kind: type[T]) -> Callable[[Any], T]:
    """``attrgetter(name)`` typed as reading a ``kind`` (every element it reads holds one),
    so that what is made of what it reads keeps its type: ``rt.getter('amount', float)``."""
    return operator.attrgetter(name)


__all__ += ["attempt", "error_of", "foreign", "PYTHON_FAILURES", "python_failure", "attrgetter",
            "getter",
            "python_error_of", "size", "foreign_list", "str_or_foreign", "str_list_or_foreign",
            "python_value", "python_power", "python_concat", "python_grown", "python_times",
            "python_remainder", "python_augmented", "sorted_keys"]


def sorted_keys(rows: Iterable[Any], key: Callable[[Any], Any] | None = None,
                reverse: bool = False) -> tuple[Any, ...]:
    """The keys of ``rows`` in the order of ``sorted(rows, key=key, reverse=reverse)``: a
    sorted list of entities, which holds their keys (``sorted(orders, key: o => o.placed)``)."""
    return tuple(map(key_of, sorted(rows, key=key, reverse=reverse)))
