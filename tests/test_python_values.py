"""Values with Python's semantics, tested against CPython itself.

One world holds a tool per operation (``number`` arithmetic, slicing, the string methods,
``repr``, ``strptime``/``strftime``, the float draws, json querying and conversion);
hypothesis draws the inputs and each result (or failure message) must be the one Python
gives for the same operation.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worldspec.compiler.api import check_source
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_result

WORLD = r'''
world Pythonic "Operations that promise Python's semantics."

config { clock: "2024-09-01T10:30:00"  seed: 7 }

record Point { x: int  y: float  tags: list[str]  note?: str }
entity Account { key id: str  owner: str  balance: number = 0  point: Point? }

state {
  accounts: table Account
  total: number = 0
  settings: map[str, json] = {"limit": 10, "name": "main", "ratio": 0.5, "tags": ["a", 1]}
  raw: json = {"a": {"price": 1.5, "n": 3}, "b": [1, 2.0, "x"]}
}

tool arith(a: number, b: number, op: str) -> number "a op b." {
  if op == "+" { return a + b }
  if op == "-" { return a - b }
  if op == "*" { return a * b }
  if op == "//" { return a // b }
  if op == "%" { return a % b }
  if op == "**" { return a ** b }
  fail "unknown op"
}
tool divide(a: number, b: number) -> float "a / b." { return a / b }
tool compare(a: number, b: number) -> list[bool] "a < b, a == b, a > b." {
  return [a < b, a == b, a > b]
}
tool deposit(amount: number) -> number "Add to the total." {
  total += amount
  return total
}
tool as_number(text: str) -> number "number(text)." { return number(text) }
tool as_int(text: str) -> int "int(text)." { return int(text) }
tool as_float(text: str) -> float "float(text)." { return float(text) }
tool cut(s: str, a: int?, b: int?, c: int?) -> str "s[a:b:c] with the bounds given." {
  if a != none and b != none and c != none { return s[a:b:c] }
  if a != none and b != none { return s[a:b] }
  if a != none { return s[a:] }
  if b != none { return s[:b] }
  return s[:]
}
tool cut_list(xs: list[int], a: int, b: int) -> list[int] "xs[a:b]." { return xs[a:b] }
tool count_in(xs: list[str], x: str) -> list[json] "xs.count(x), xs.contains(x)." {
  return [xs.count(x), xs.contains(x)]
}
tool text_ops(s: str, chars: str) -> json "String methods." {
  return {"strip": s.strip(chars), "lstrip": s.lstrip(chars), "rstrip": s.rstrip(chars),
          "strip_ws": s.strip(), "split": s.split(), "splitlines": s.splitlines(),
          "isdigit": s.isdigit(), "isalpha": s.isalpha(), "isalnum": s.isalnum(),
          "isspace": s.isspace(), "find": s.find(chars), "rfind": s.rfind(chars),
          "bytes": s.byte_length(), "repr": repr(s), "upper": s.upper()}
}
tool split_on(s: str, sep: str, n: int) -> json "s.split(sep) and s.split(sep, n)." {
  return {"all": s.split(sep), "some": s.split(sep, maxsplit: n)}
}
tool replace_in(s: str, old: str, new: str) -> str "s.replace(old, new)." {
  return s.replace(old, new)
}
tool repr_of(value: json) -> str "repr(value)." { return repr(value) }
tool type_of(value: json) -> str "type(value).__name__." { return type_name(value) }
tool json_equal(x: json, y: json) -> list[bool] "x == y as Python's: also against literals." {
  let empty: list[int] = []
  let one: list[float] = [1.0]
  return [x == y, x != y, x == [], [] == x, x != {}, x == {"k": []}, x == empty, one == x]
}
tool parse(text: str, format: str) -> str "strptime(text, format), as ISO text." {
  return strptime(text, format).isoformat()
}
tool render(when: datetime, format: str) -> str "when.strftime(format)." {
  return when.strftime(format)
}
tool since(when: datetime) -> json "now - when as Python's timedelta fields." {
  let gap = now - when
  return {"days": gap.days, "seconds": gap.seconds, "micro": gap.microseconds,
          "total": gap.total_seconds()}
}
tool draws(a: float, b: float) -> list[float] "random_float, random_uniform, random_gauss." {
  return [random_float(), random_uniform(a, b), random_gauss(a, b)]
}
tool query(key: str) -> json "Reading json." {
  let found: list[str] = []
  for k in raw.keys() {
    append k to found
  }
  let prices: map[str, number] = from_json(raw["a"])
  return {"keys": found, "has": key in raw, "get": raw.get(key), "prices": prices,
          "values": raw.values(), "first": raw["b"][0], "contains": raw.contains(key)}
}
tool load_point(value: json) -> Point "from_json(value) as a Point." { return from_json(value) }
tool export(account: Account) -> json "The row, the record and a date as json." {
  let row = to_json(account)
  let stored: json = account.point
  settings["when"] = now
  return {"row": row, "point": stored, "key": account, "when": settings["when"]}
}
tool set_owner(account: Account, owner: str? "null clears it; left out, it stays.") -> str?
  "Set or clear an account's note."
{
  if given(owner) {
    account.owner = owner ?? ""
  }
  return if given(owner) then "given" else "not given"
}
tool int_float(i: int, f: float) -> list[json] "i.bit_length() and f.is_integer()." {
  return [i.bit_length(), f.is_integer()]
}
tool mixed() -> map[str, json] "A mixed literal where map[str, json] is expected." {
  settings = {"a": 1, "b": "two", "c": [3.0, "four"], "d": none, "e": {"f": true}}
  return settings
}
'''


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> type[Episode]:
    root = tmp_path_factory.mktemp("pythonic")
    result = check_source(WORLD, str(root / "pythonic.world"))
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORLDSPEC_CACHE", str(root / "cache"))
        return load_result(result).worlds["Pythonic"]


def call(world: type[Episode], tool: str, **arguments: Any) -> tuple[bool, Any]:
    """(ok, value or failure message) of one call on a fresh episode."""
    episode = world(data={"accounts": [{"id": "A1", "owner": "Ann", "balance": 3,
                                        "point": {"x": 1, "y": 2, "tags": ["t"]}}]})
    episode.call(tool, arguments)
    if episode.last_error is not None:
        return False, episode.last_error.message
    return True, episode.last_value


def exact(value: Any) -> Any:
    """A value with the type of each number kept, for comparisons that tell 1 from 1.0."""
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    if isinstance(value, (list, tuple)):
        return [exact(x) for x in value]
    if isinstance(value, dict):
        return {k: exact(x) for k, x in value.items()}
    return (type(value).__name__, value)


SETTINGS = settings(max_examples=150, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))
small = st.integers(-10 ** 6, 10 ** 6)
numbers = small | st.floats(-1e6, 1e6, allow_nan=False) | st.sampled_from([0, 0.0, -0.0, 1, 3])


# ------------------------------------------------------------------ number
@SETTINGS
@given(numbers, numbers, st.sampled_from(["+", "-", "*", "//", "%"]))
def test_number_arithmetic_is_pythons(world: type[Episode], a: Any, b: Any, op: str) -> None:
    ok, value = call(world, "arith", a=a, b=b, op=op)
    try:
        expected = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                    "//": lambda: a // b, "%": lambda: a % b}[op]()
    except ZeroDivisionError as exc:  # Python's text: division by zero, float modulo, ...
        assert not ok and value == str(exc)
        return
    assert ok, value
    assert exact(value) == exact(expected)


@SETTINGS
@given(st.integers(-50, 50) | st.floats(-5, 5), st.integers(-8, 8) | st.floats(-3, 3))
def test_number_power_is_pythons(world: type[Episode], a: Any, b: Any) -> None:
    ok, value = call(world, "arith", a=a, b=b, op="**")
    try:
        expected = a ** b
    except (ZeroDivisionError, OverflowError):
        assert not ok
        return
    if isinstance(expected, complex):
        assert not ok and "not a real number" in value
        return
    assert ok, value
    assert exact(value) == exact(expected)


@SETTINGS
@given(numbers, numbers)
def test_true_division_and_comparison_across_int_and_float(world: type[Episode], a: Any,
                                                           b: Any) -> None:
    ok, value = call(world, "divide", a=a, b=b)
    if b == 0:  # Python's texts: "division by zero", "float division by zero"
        with pytest.raises(ZeroDivisionError) as python:
            a / b
        assert not ok and value == str(python.value)
    else:
        assert ok and exact(value) == exact(a / b)
    assert call(world, "compare", a=a, b=b) == (True, [a < b, a == b, a > b])


def test_a_number_keeps_int_or_float_through_storage_and_results(
        world: type[Episode]) -> None:
    episode = world()
    episode.call("deposit", {"amount": 3})
    assert exact(episode.last_value) == ("int", 3)
    assert exact(episode.export_state()["total"]) == ("int", 3)
    episode.call("deposit", '{"amount": 3.0}')
    assert exact(episode.last_value) == ("float", 6.0)
    assert exact(episode.export_state()["total"]) == ("float", 6.0)
    ok, message = call(world, "deposit", amount=True)
    assert not ok and message == "amount: expected a number, got true"
    assert call(world, "as_number", text="12") == (True, 12)
    assert exact(call(world, "as_number", text="1.5")[1]) == ("float", 1.5)
    assert call(world, "as_number", text="x") == (False, 'Cannot convert "x" to a number.')


def test_int_and_float_of_text_fail_with_pythons_texts(world: type[Episode]) -> None:
    """``int()`` and ``float()`` are Python's, their failures too (ports reproduce the
    ``ValueError`` an original raises)."""
    assert call(world, "as_int", text=" 12 ") == (True, 12)
    assert call(world, "as_int", text="1_000") == (True, 1000)
    for text in ("²", "1.5", "x", ""):
        with pytest.raises(ValueError) as python:
            int(text)
        assert call(world, "as_int", text=text) == (False, str(python.value))
        with pytest.raises(ValueError) as python:
            float(text + "x")
        assert call(world, "as_float", text=text + "x") == (False, str(python.value))


@SETTINGS
@given(st.integers(), st.floats(allow_nan=False, allow_infinity=False))
def test_int_and_float_methods_are_pythons(world: type[Episode], i: int, f: float) -> None:
    assert call(world, "int_float", i=i, f=f) == (True, [i.bit_length(), f.is_integer()])


# ------------------------------------------------------------------ strings
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["  a b\tc\n", "a\r\nb\x0bc\x1cd\u2028", "\uff11\uff12\uff13", "٣", "ǅ", "abcabc", "", "x'\"y"])
bounds = st.none() | st.integers(-15, 15)


@SETTINGS
@given(texts, bounds, bounds, st.none() | st.integers(-4, 4).filter(bool))
def test_slicing_is_pythons(world: type[Episode], s: str, a: int | None, b: int | None,
                            c: int | None) -> None:
    if c is not None and (a is None or b is None):
        c = None
    expected = s[a:b:c] if c is not None else s[a:b]
    assert call(world, "cut", s=s, a=a, b=b, c=c) == (True, expected)
    xs = [ord(ch) for ch in s]
    lo, hi = a or 0, b or 0
    assert call(world, "cut_list", xs=xs, a=lo, b=hi) == (True, xs[lo:hi])


@SETTINGS
@given(st.lists(st.sampled_from(["a", "b", "ab", ""]), max_size=6),
       st.sampled_from(["a", "b", "ab", "", "c"]))
def test_list_count_is_pythons(world: type[Episode], xs: list[str], x: str) -> None:
    assert call(world, "count_in", xs=xs, x=x) == (True, [xs.count(x), x in xs])


def test_a_zero_slice_step_fails_the_call(world: type[Episode]) -> None:
    ok, message = call(world, "cut", s="abc", a=0, b=2, c=0)
    assert not ok and "slice step cannot be zero" in message


@SETTINGS
@given(texts, st.text("ab \n", max_size=3))
def test_string_methods_are_pythons(world: type[Episode], s: str, chars: str) -> None:
    ok, value = call(world, "text_ops", s=s, chars=chars)
    assert ok, value
    assert value == {
        "strip": s.strip(chars), "lstrip": s.lstrip(chars), "rstrip": s.rstrip(chars),
        "strip_ws": s.strip(), "split": s.split(), "splitlines": s.splitlines(),
        "isdigit": s.isdigit(), "isalpha": s.isalpha(), "isalnum": s.isalnum(),
        "isspace": s.isspace(), "find": s.find(chars), "rfind": s.rfind(chars),
        "bytes": len(s.encode("utf-8")), "repr": repr(s), "upper": s.upper()}


@SETTINGS
@given(texts, st.text("ab,", min_size=1, max_size=2), st.integers(-1, 3), texts)
def test_split_and_replace_are_pythons(world: type[Episode], s: str, sep: str, n: int,
                                       new: str) -> None:
    assert call(world, "split_on", s=s, sep=sep, n=n) == (
        True, {"all": s.split(sep), "some": s.split(sep, n)})
    assert call(world, "replace_in", s=s, old=sep, new=new) == (True, s.replace(sep, new))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                          allow_infinity=False) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8)


@SETTINGS
@given(json_values)
def test_repr_and_type_name_are_pythons(world: type[Episode], value: Any) -> None:
    assert call(world, "repr_of", value=value) == (True, repr(value))
    name = "NoneType" if value is None else type(value).__name__
    assert call(world, "type_of", value=value) == (True, name)


def loosened(value: Any) -> Any:
    """An equal value of other types, as Python's == sees it (1 == 1.0 == True)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and abs(value) < 2 ** 53:
        return float(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    if isinstance(value, list):
        return [loosened(x) for x in value]
    if isinstance(value, dict):
        return {k: loosened(x) for k, x in value.items()}
    return value


@SETTINGS
@given(json_values.flatmap(lambda a: st.tuples(
    st.just(a), st.sampled_from([a, loosened(a), [], {}, [a], {"k": a}]) | json_values)))
def test_json_equality_is_pythons(world: type[Episode], pair: tuple[Any, Any]) -> None:
    x, y = pair
    assert call(world, "json_equal", x=x, y=y) == (True, [
        x == y, x != y, x == [], [] == x, x != {}, x == {"k": []}, x == [], [1.0] == x])


def test_json_empty_list_and_map_are_equal_to_themselves_not_each_other(
        world: type[Episode]) -> None:
    assert call(world, "json_equal", x=[], y=[]) == (
        True, [True, False, True, True, True, False, True, False])
    assert call(world, "json_equal", x={}, y=[]) == (
        True, [False, True, False, False, False, False, False, False])
    assert call(world, "json_equal", x=[True], y=[1.0]) == (
        True, [True, False, False, False, True, False, False, True])
    assert call(world, "json_equal", x={"k": []}, y={"k": ()}) == (
        True, [True, False, False, False, True, True, False, False])
    assert call(world, "json_equal", x=["1"], y=[1]) == (
        True, [False, True, False, False, True, False, False, False])


# ------------------------------------------------------------------ dates
formats = st.sampled_from(["%Y-%m-%d", "%Y-%m-%d %H:%M:%S", "%d/%m/%y", "%H:%M", "%Y%m%d",
                           "%B %d, %Y", "%I:%M %p", "%j", "%Y-%m-%dT%H:%M:%S.%f"])
date_texts = (st.datetimes(min_value=dt.datetime(1, 1, 1)).flatmap(
    lambda d: formats.map(lambda f: d.strftime(f)))
    | st.sampled_from(["2024-13-01", "2024-02-30", "2024-2-3", "2024-02-03x", "0000-01-01",
                       " 2024-01-01", "2024-01- 1", "", "12:60", "1:05 PM"]))


@SETTINGS
@given(date_texts, formats)
def test_strptime_is_pythons_with_its_error_texts(world: type[Episode], text: str,
                                                  fmt: str) -> None:
    try:
        expected: tuple[bool, str] = (True, dt.datetime.strptime(text, fmt).isoformat())
    except ValueError as exc:
        expected = (False, str(exc))
    assert call(world, "parse", text=text, format=fmt) == expected


@SETTINGS
@given(st.datetimes(min_value=dt.datetime(1000, 1, 1)), formats)
def test_strftime_and_durations_are_pythons(world: type[Episode], when: dt.datetime,
                                            fmt: str) -> None:
    assert call(world, "render", when=when.isoformat(), format=fmt) == (True, when.strftime(fmt))
    gap = dt.datetime(2024, 9, 1, 10, 30) - when
    assert call(world, "since", when=when.isoformat()) == (True, {
        "days": gap.days, "seconds": gap.seconds, "micro": gap.microseconds,
        "total": gap.total_seconds()})


# ------------------------------------------------------------------ randomness
@SETTINGS
@given(st.integers(0, 2 ** 32), st.floats(-100, 100), st.floats(0, 100))
def test_float_draws_are_pythons_random_for_the_same_seed(world: type[Episode], seed: int,
                                                          a: float, b: float) -> None:
    episode = world(seed=seed)
    episode.call("draws", {"a": a, "b": b})
    episode.call("draws", {"a": a, "b": b})
    python = random.Random(seed)
    expected = []
    for _ in range(2):
        expected = [python.random(), python.uniform(a, b), python.gauss(a, b)]
    assert episode.last_value == expected


# ------------------------------------------------------------------ json
def test_json_values_can_be_queried_and_converted(world: type[Episode]) -> None:
    assert call(world, "query", key="a") == (True, {
        "keys": ["a", "b"], "has": True, "get": {"price": 1.5, "n": 3},
        "prices": {"price": 1.5, "n": 3}, "values": [{"price": 1.5, "n": 3}, [1, 2.0, "x"]],
        "first": 1, "contains": True})
    assert call(world, "query", key="zz")[1]["get"] is None
    assert call(world, "load_point", value={"x": 1, "y": 2, "tags": []}) == (
        True, {"x": 1, "y": 2.0, "tags": []})
    assert call(world, "load_point", value={"x": "1", "y": 2, "tags": []}) == (
        False, 'value.x: expected an integer, got "1"')


def test_rows_records_and_dates_become_json(world: type[Episode]) -> None:
    point = {"x": 1, "y": 2.0, "tags": ["t"]}
    assert call(world, "export", account="A1") == (True, {
        "row": {"id": "A1", "owner": "Ann", "balance": 3, "point": point}, "point": point,
        "key": "A1", "when": "2024-09-01T10:30:00"})
    ok, value = call(world, "mixed")
    assert ok and value == {"a": 1, "b": "two", "c": [3.0, "four"], "d": None,
                            "e": {"f": True}}


def test_given_tells_an_explicit_null_from_an_argument_left_out(world: type[Episode]) -> None:
    episode = world(data={"accounts": [{"id": "A1", "owner": "Ann"}]})
    episode.call("set_owner", {"account": "A1"})
    assert episode.last_value == "not given"
    assert episode.export_state()["accounts"][0]["owner"] == "Ann"
    episode.call("set_owner", '{"account": "A1", "owner": null}')
    assert episode.last_value == "given"
    assert episode.export_state()["accounts"][0]["owner"] == ""


def test_an_absent_field_is_left_out_of_the_json_not_null(world: type[Episode]) -> None:
    assert call(world, "load_point", value={"x": 1, "y": 2, "tags": [], "note": None}) == (
        True, {"x": 1, "y": 2.0, "tags": []})
    assert call(world, "load_point", value={"x": 1, "y": 2, "tags": [], "note": "n"}) == (
        True, {"x": 1, "y": 2.0, "tags": [], "note": "n"})
    episode = world(data={"accounts": [{"id": "A1", "owner": "Ann",
                                        "point": {"x": 1, "y": 2, "tags": []}}]})
    assert episode.export_state()["accounts"][0]["point"] == {"x": 1, "y": 2.0, "tags": []}


def test_a_result_may_leave_an_absent_field_out(world: type[Episode]) -> None:
    """The result schema (what the property tests hold each result to) does not require a
    field that may be absent: a record without it is a result of its type."""
    from worldspec.testing.sampling import validate

    returns = world.TOOLS["load_point"].returns
    assert returns is not None and returns["required"] == ["x", "y", "tags"]
    assert validate({"x": 1, "y": 2.0, "tags": []}, returns)
    assert validate({"x": 1, "y": 2.0, "tags": [], "note": "n"}, returns)
    assert not validate({"x": 1, "tags": []}, returns)


def test_only_a_plain_record_field_may_be_absent() -> None:
    assert diagnostics("record R { a?: str? }\n") == [
        ("WS323", "'a?' may be absent, so it cannot also be null (str?): none is how an "
                  "absent field reads")]
    assert diagnostics("entity E { key id: str  a?: str }\n") == [
        ("WS323", "'a?' may be absent, which only record fields may be; a row of E has every "
                  "field (make it optional: a: T?)")]


# ------------------------------------------------------------------ diagnostics
def diagnostics(body: str) -> list[tuple[str, str]]:
    source = ('world W "w"\nentity U { key id: str }\nstate { users: table U  j: json = {} }\n'
              + body)
    return [(d.code, d.message) for d in check_source(source, "w.world").diagnostics]


def test_from_json_needs_a_type_and_cannot_build_a_row() -> None:
    assert diagnostics('fn f() -> bool { let x = from_json(j)\n return x == none }\n') == [
        ("WS320", "from_json() takes its type from where the value goes")]
    assert diagnostics('fn f() -> U { return from_json(j) }\n') == [
        ("WS320", "from_json() cannot build a row (U): rows live in tables")]


def test_an_unusable_strptime_format_is_reported() -> None:
    assert diagnostics('fn f(s: str) -> datetime { return strptime(s, "%Y-%Q") }\n') == [
        ("WS321", "strptime format '%Y-%Q': 'Q' is a bad directive in format '%Y-%Q'")]
    assert diagnostics('fn f(s: str) -> datetime { return strptime(s, "%Y %z") }\n') == [
        ("WS321", "strptime format '%Y %z' reads a UTC offset or time zone; datetimes are "
                  "naive (the world's local time)")]


def test_given_needs_an_optional_parameter_of_the_tool() -> None:
    assert diagnostics('tool t(p: str) -> bool "t" { return given(p) }\n') == [
        ("WS322", "'p' is required, so it is always given")]
    assert diagnostics('fn f(p: str? = none) -> bool { return given(p) }\n') == [
        ("WS322", "given(p) asks whether a tool's caller sent an argument; it exists only "
                  "in tool bodies")]
    assert diagnostics('tool t(p: str?) -> bool "t" { let q = 1\n return given(q) }\n') == [
        ("WS322", "given() takes a parameter of this tool by name")]


def test_slicing_something_else_is_reported() -> None:
    assert diagnostics('fn f(n: int) -> int { return n[1:] }\n') == [
        ("WS304", "cannot slice a value of type int")]


def test_the_world_is_a_valid_example(tmp_path: Path) -> None:
    assert check_source(WORLD, str(tmp_path / "p.world")).ok
