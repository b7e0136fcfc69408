"""Tests of :mod:`worldspec.runtime.shapes`, the one value validator.

Each loader says yes (the value the world keeps) or no (a :class:`Misfit` with its reason),
and the two readers of a misfit word the same refusal their own way: the runtime for the
agent (``want_*``, byte for byte the messages tool calls have always failed with) and the
checker for a task's data (``argument_problems``, the diagnostics' texts).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from worldspec.compiler import types as t
from worldspec.compiler.api import check_source
from worldspec.compiler.data_check import (
    argument_problems,
    date_text_problem,
    datetime_text_problem,
)
from worldspec.compiler.model import WorldModel
from worldspec.runtime import shapes
from worldspec.runtime import values as v
from worldspec.runtime.errors import ArgumentError, ToolError, WrongTypeError
from worldspec.runtime.shapes import SCALARS, Misfit, Reason

WORLD = """
world Shop "A shop, for the value validator's tests."
enum Size { small, extra_large = "extra large" }
state { last: str = "" }
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> WorldModel:
    spec = Path(tmp_path_factory.mktemp("shapes")) / "shop.world"
    result = check_source(WORLD, str(spec))
    assert result.ok, [d.message for d in result.diagnostics]
    return result.model.worlds["Shop"]


# ------------------------------------------------------------------ loaders
@pytest.mark.parametrize(("name", "given", "kept"), [
    ("str", "Ann", "Ann"), ("str", "Zoë 😀", "Zoë 😀"),
    ("int", 42, 42), ("int", -(10 ** 30), -(10 ** 30)),
    ("float", 3, 3.0), ("float", 0.25, 0.25),
    ("number", 3, 3), ("number", 3.0, 3.0),
    ("bool", False, False),
    ("date", "2024-02-29", dt.date(2024, 2, 29)),
    ("datetime", "2024-03-01 09:30", dt.datetime(2024, 3, 1, 9, 30)),
    ("datetime", "2024-03-01T09:30:15.25", dt.datetime(2024, 3, 1, 9, 30, 15, 250000)),
    ("duration", 90, dt.timedelta(seconds=90)), ("duration", 1.5, dt.timedelta(seconds=1.5)),
])
def test_a_value_that_fits_is_loaded_as_the_world_keeps_it(name: str, given: object,
                                                           kept: object) -> None:
    loaded = SCALARS[name].load(given)
    assert loaded == kept
    assert type(loaded) is type(kept)


@pytest.mark.parametrize(("name", "given", "reason", "detail"), [
    ("str", 42, Reason.WRONG_TYPE, None),
    ("str", "Bo\ud800", Reason.SURROGATE, 2),
    ("int", 3.0, Reason.WRONG_TYPE, None), ("int", True, Reason.WRONG_TYPE, None),
    ("float", "1.5", Reason.WRONG_TYPE, None), ("float", 10 ** 400, Reason.TOO_LARGE, None),
    ("float", float("nan"), Reason.NOT_FINITE, None),
    ("number", float("inf"), Reason.NOT_FINITE, None), ("number", False, Reason.WRONG_TYPE, None),
    ("bool", 1, Reason.WRONG_TYPE, None),
    ("date", "2024-02-30", Reason.BAD_TEXT, None), ("date", "2024-W01-1", Reason.BAD_TEXT, None),
    ("date", 20240101, Reason.WRONG_TYPE, None),
    ("datetime", "2024-03-01T09:30:00Z", Reason.OFFSET, "2024-03-01T09:30:00Z"),
    ("datetime", "2024-03-01", Reason.BAD_TEXT, None),
    ("duration", 10 ** 20, Reason.TOO_LONG, None),
    ("duration", float("-inf"), Reason.NOT_FINITE, None),
    ("duration", "PT1H", Reason.WRONG_TYPE, None),
])
def test_a_value_that_does_not_fit_says_why_as_data(name: str, given: object, reason: Reason,
                                                    detail: object) -> None:
    with pytest.raises(Misfit) as refused:
        SCALARS[name].load(given)
    assert (refused.value.reason, refused.value.detail) == (reason, detail)
    assert refused.value.value is given


@pytest.mark.parametrize(("name", "given", "normalised"), [
    ("float", 3, 3.0), ("date", "2024-02-29", "2024-02-29"),
    ("datetime", "2024-03-01 09:30", "2024-03-01T09:30:00"),
    ("duration", 1.0, 1), ("duration", 0.0000015, 0.000002), ("str", "Ann", "Ann"),
])
def test_a_task_s_data_is_normalised_to_the_json_of_the_loaded_value(
        name: str, given: object, normalised: object) -> None:
    assert SCALARS[name].normalise(given) == normalised
    assert type(SCALARS[name].normalise(given)) is type(normalised)


def test_keys_members_and_json_leaves() -> None:
    assert shapes.load_int_key("-12") == -12
    assert shapes.load_json_key("0012") == 12
    assert shapes.load_json_key("12a") == "12a"
    assert shapes.load_member("extra large", {"extra large": "XL"}) == "XL"
    assert shapes.load_json_leaf(None) is None
    for bad, reason in [(lambda: shapes.load_int_key("012"), Reason.BAD_KEY),
                        (lambda: shapes.load_int_key("+3"), Reason.BAD_KEY),
                        (lambda: shapes.load_member("extra_large", {"extra large": 1}),
                         Reason.NOT_MEMBER),
                        (lambda: shapes.load_member(3, {"extra large": 1}), Reason.WRONG_TYPE),
                        (lambda: shapes.load_json_leaf(float("nan")), Reason.NOT_FINITE),
                        (lambda: shapes.load_json_leaf(object()), Reason.WRONG_TYPE)]:
        with pytest.raises(Misfit) as refused:
            bad()
        assert refused.value.reason is reason


def test_refinements() -> None:
    assert shapes.check_within(100, 0, 100) == 100
    assert shapes.check_length_within("abc", 1, 3) == "abc"
    assert shapes.check_matches("AB12", "^[A-Z]{2}[0-9]+$") == "AB12"
    for bad, reason, detail in [
            (lambda: shapes.check_within(101, 0, 100), Reason.OUT_OF_RANGE, (0, 100)),
            (lambda: shapes.check_length_within("", 1, None), Reason.BAD_LENGTH, (0, 1, None)),
            (lambda: shapes.check_matches("ab12", "^[A-Z]{2}[0-9]+$"), Reason.NO_MATCH,
             "^[A-Z]{2}[0-9]+$")]:
        with pytest.raises(Misfit) as refused:
            bad()
        assert (refused.value.reason, refused.value.detail) == (reason, detail)


def test_a_pattern_re2_cannot_compile_is_a_failed_call_not_a_traceback() -> None:
    with pytest.raises(ToolError, match=r"^/a\\1/ is not an RE2 pattern: "):
        shapes.check_matches("aa", "a\\1")
    with pytest.raises(ToolError, match=r"is not an RE2 pattern: .*surrogates not allowed"):
        shapes.check_matches("a", "a\ud800")


# ------------------------------------------------------ one misfit, two wordings
#: (type, value, the runtime's refusal (its class and message at path "x"), the checker's)
WORDINGS: list[tuple[t.Type, Any, type[ArgumentError], str, str]] = [
    (t.STR, 42, WrongTypeError, "x: expected a string, got 42", "x: expected str, found 42"),
    (t.STR, "Bo\udfff", ArgumentError,
     "x: the text holds a lone surrogate (\\udfff at character 2), which is not valid Unicode",
     "x: the text holds a lone surrogate (\\udfff at character 2), which is not valid Unicode"),
    (t.INT, 3.0, WrongTypeError, "x: expected an integer, got 3.0", "x: expected int, found 3.0"),
    (t.FLOAT, 10 ** 400, WrongTypeError, f"x: 1{'0' * 59} is too large for a float",
     "x: an integer of 401 digits is too large for a float"),
    (t.FLOAT, float("nan"), WrongTypeError, "x: expected a number, got NaN",
     "x: expected a finite float, found NaN"),
    (t.Prim("number"), float("inf"), WrongTypeError, "x: expected a number, got Infinity",
     "x: expected a finite number, found Infinity"),
    (t.BOOL, 1, WrongTypeError, "x: expected true or false, got 1",
     "x: expected bool, found 1"),
    (t.DATE, "2024-02-30", ArgumentError, 'x: expected a date (YYYY-MM-DD), got "2024-02-30"',
     'x: "2024-02-30" is not a date ("YYYY-MM-DD")'),
    (t.DATETIME, "2024-03-01T09:30Z", ArgumentError,
     "x: \"2024-03-01T09:30Z\" has a UTC offset; datetimes are naive (the world's local "
     "time): drop the offset or the 'Z'",
     "x: \"2024-03-01T09:30Z\" has a UTC offset; datetimes are naive (the world's local time)"),
    (t.DATETIME, "9:30", ArgumentError,
     'x: expected a datetime (YYYY-MM-DDTHH:MM:SS), got "9:30"',
     'x: "9:30" is not an ISO datetime ("YYYY-MM-DDTHH:MM:SS")'),
    (t.DURATION, 10 ** 20, ArgumentError,
     "x: 100000000000000000000 seconds is too long for a duration",
     "x: 100000000000000000000 seconds is too long for a duration"),
    (t.DURATION, float("-inf"), WrongTypeError, "x: expected a duration in seconds, got "
     "-Infinity", "x: expected a finite number of seconds, found -Infinity"),
    (t.JSON, float("nan"), ArgumentError, "x: expected a finite number, got NaN",
     "x: expected a finite number, found NaN"),
    (t.Prim("int", t.Refinement(0, 100)), 101, ArgumentError,
     "x: 101 is out of range 0..100", "x: 101 is outside the range (0..100)"),
    (t.Prim("str", t.Refinement(1, 3)), "abcd", ArgumentError,
     "x: length 4 is out of range 1..3", "x: length 4 is outside the length range (1..3)"),
    (t.Prim("str", t.Refinement(pattern="^[A-Z]{2}$")), "ab", ArgumentError,
     'x: "ab" does not match /^[A-Z]{2}$/', 'x: "ab" does not match /^[A-Z]{2}$/'),
    (t.MapOf(t.INT, t.INT), {"012": 1}, ArgumentError,
     "x[\"012\"]: expected an integer key (decimal digits, no sign but '-', no leading "
     "zeros), got \"012\"", 'x["012"] (the key): int keys are decimal integers in data, '
     'found "012"'),
    (t.Named("enum", "Size"), "extra_large", ArgumentError,
     'x: expected one of "small", "extra large", got "extra_large"',
     'x: "extra_large" is not in Size; expected one of "small", "extra large"'),
    (t.Named("enum", "Size"), 2, WrongTypeError,
     'x: expected one of "small", "extra large", got 2',
     'x: expected Size ("small", "extra large"), found 2'),
]

#: type name -> a value of it that fits (the refused one corrected)
FITTING: dict[str, Any] = {
    "str": "Bo", "int": 100, "float": 1.5, "number": 2, "bool": True, "date": "2024-02-29",
    "datetime": "2024-03-01T09:30", "duration": 60, "json": 1.5, "map": {"12": 1},
    "enum": "extra large", "pattern": "AB",
}


def _fitting(typ: t.Type) -> Any:
    if isinstance(typ, t.MapOf):
        return FITTING["map"]
    if isinstance(typ, t.Named):
        return FITTING["enum"]
    assert isinstance(typ, t.Prim)
    if typ.refinement is not None and typ.refinement.pattern is not None:
        return FITTING["pattern"]
    return FITTING[typ.name][:3] if typ.name == "str" else FITTING[typ.name]


def _run_time(typ: t.Type, value: Any) -> Any:
    """What a generated loader of ``typ`` calls, at the path ``x``."""
    import enum

    size = enum.Enum("Size", {"small": "small", "extra_large": "extra large"})
    if isinstance(typ, t.MapOf):
        return v.want_map(value, "x", v.want_int, v.want_int, int_keys=True)
    if isinstance(typ, t.Named):
        return v.want_enum(value, "x", size)
    assert isinstance(typ, t.Prim)
    loaders = {"str": v.want_str, "int": v.want_int, "float": v.want_float,
               "number": v.want_number, "bool": v.want_bool, "date": v.want_date,
               "datetime": v.want_datetime, "duration": v.want_duration, "json": v.want_json}
    loaded = loaders[typ.name](value, "x")
    ref = typ.refinement
    if ref is not None and (ref.low is not None or ref.high is not None):
        check = v.check_range if typ.name == "int" else v.check_length
        loaded = check(loaded, "x", ref.low, ref.high)  # type: ignore[arg-type]
    if ref is not None and ref.pattern is not None:
        loaded = v.check_pattern(loaded, "x", ref.pattern)
    return loaded


@pytest.mark.parametrize(("typ", "value", "kind", "run_time", "check_time"), WORDINGS)
def test_one_misfit_is_worded_by_the_runtime_and_by_the_checker(
        shop: WorldModel, typ: t.Type, value: Any, kind: type[ArgumentError], run_time: str,
        check_time: str) -> None:
    with pytest.raises(ArgumentError) as refused:
        _run_time(typ, value)
    assert type(refused.value) is kind  # `arguments: dynamic` passes on a WrongTypeError only
    assert refused.value.message == run_time
    assert argument_problems(value, typ, shop, "x") == [check_time]


@pytest.mark.parametrize(("typ", "value"), [(row[0], row[1]) for row in WORDINGS])
def test_what_is_refused_at_both_ends_is_accepted_once_corrected(
        shop: WorldModel, typ: t.Type, value: Any) -> None:
    """The other way round: a value of the same type that fits passes both readers."""
    fixed = _fitting(typ)
    assert repr(fixed) != repr(value)
    _run_time(typ, fixed)
    assert argument_problems(fixed, typ, shop, "x") == []


def test_every_reason_is_worded_by_both_readers() -> None:
    """Each reason a shape can give has a case above (so both wordings are pinned), but for
    the few met only inside compound values (covered by tests/test_data_check.py)."""
    covered: set[Reason] = set()
    for typ, value, *_ in WORDINGS:
        try:
            if isinstance(typ, t.MapOf):
                shapes.load_int_key(next(iter(value)))
            elif isinstance(typ, t.Named):
                shapes.load_member(value, {"small": 1, "extra large": 2})
            else:
                assert isinstance(typ, t.Prim)
                if typ.name == "json":
                    shapes.load_json_leaf(value)
                else:
                    loaded = SCALARS[typ.name].load(value)
                    ref = typ.refinement
                    assert ref is not None
                    if ref.pattern is not None:
                        shapes.check_matches(loaded, ref.pattern)
                    elif typ.name == "int":
                        shapes.check_within(loaded, ref.low, ref.high)
                    else:
                        shapes.check_length_within(loaded, ref.low, ref.high)
        except Misfit as misfit:
            covered.add(misfit.reason)
    with pytest.raises(Misfit) as untagged:  # a union's value is an object with its tag
        shapes.union_tag({"amount": 3}, "source", ("card", "gift"))
    covered.add(untagged.value.reason)
    assert covered == set(Reason)


def test_the_structure_rules_are_decided_once_and_worded_by_both_readers() -> None:
    """An array, an object, a set's repeats, a record's unknown and missing fields, a field
    given under its name and its alias, and a union's tag: each rule is one function of the
    runtime's validator that says yes and no, which the run-time loaders and the checker's
    walk both call and word their own way."""
    assert shapes.is_array([1]) and shapes.is_array((1,)) and not shapes.is_array({"a": 1})
    assert shapes.is_object({}) and not shapes.is_object([]) and not shapes.is_object("{}")
    assert list(shapes.repeats(enumerate(["a", "b", "c"]))) == []
    assert list(shapes.repeats(enumerate(["a", "b", "a", "a"]))) == [(2, 0), (3, 0)]
    fields = {"id": True, "name": True, "note": False}
    assert shapes.object_keys({"id": 1, "name": "A"}, fields) == ([], [])
    assert shapes.object_keys({"id": 1, "nmae": "A", "x": 2}, fields) == (["nmae", "x"],
                                                                         ["name"])
    assert shapes.object_keys({"id": 1, "name": None, "tag": "t"}, fields, ("tag",)) == ([], [])
    assert shapes.unaliased({"ID": 1, "name": "A"}, {"ID": "id"}) == ({"id": 1, "name": "A"},
                                                                      [])
    # the alias given beside the name: the alias is the one left out
    assert shapes.unaliased({"ID": 1, "id": 2}, {"ID": "id"}) == ({"id": 2}, [("ID", "id")])
    assert shapes.union_tag({"source": "card"}, "source", ("card", "gift")) == "card"
    for value, reason in [({"source": 3}, Reason.WRONG_TYPE), ({"source": "cash"},
                                                                 Reason.NOT_MEMBER)]:
        with pytest.raises(Misfit) as refused:
            shapes.union_tag(value, "source", ("card", "gift"))
        assert refused.value.reason is reason
    # the runtime's words (the first misfit of a value)...
    with pytest.raises(ArgumentError, match=r"^\$\.tags\[2\]: \"a\" repeats \$\.tags\[0\]"):
        v.want_set(["a", "b", "a"], "$.tags", v.want_str)
    with pytest.raises(ArgumentError, match=r'^\$\.user: unknown field "nmae"$'):
        v.want_object({"id": 1, "nmae": "A"}, "$.user", fields)
    with pytest.raises(ArgumentError, match=r'^\$\.user: missing field "name"$'):
        v.want_object({"id": 1}, "$.user", fields)
    with pytest.raises(ArgumentError, match=r'^\$\.user: field "id" is given twice'):
        v.unalias({"ID": 1, "id": 2}, "$.user", {"ID": "id"})
    assert v.want_object({"id": 1, "name": "A"}, "$.user", fields) == {"id": 1, "name": "A"}
    assert v.want_set(["a", "b"], "$.tags", v.want_str) == ("a", "b")


def test_the_checker_s_date_words_are_the_runtime_s_verdicts() -> None:
    assert date_text_problem("2024-02-29") is None
    assert date_text_problem("2023-02-29") == 'is not a date ("YYYY-MM-DD")'
    assert datetime_text_problem("2024-01-01T09:00:00") is None
    assert datetime_text_problem("2024-01-01T09:00:00+01:00") == (
        "has a UTC offset; datetimes are naive (the world's local time)")
    assert datetime_text_problem("2024-01-01") == (
        'is not an ISO datetime ("YYYY-MM-DDTHH:MM:SS")')
