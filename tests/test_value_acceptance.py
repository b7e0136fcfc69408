"""Compile-time and run-time acceptance of values agree, value for value.

Whether a JSON value fits a declared type is decided once, by the runtime's shapes
(``worldspec/runtime/shapes.py``: every scalar, enum member, map key, ``json`` leaf and
refinement). Two walks call them: the compiler's data check (``compiler/data_check.py``,
which checks a task's ``given`` when the spec is checked, reports every problem at its span,
and normalises the data), and the generated loaders (their ``want_*`` calls of
``worldspec/runtime/values.py``, which check tool arguments and load initial data, and
stop at the first problem). This differential test keeps the two walks one truth: for
every kind of type (scalars, ``number`` (int or float, kept), dates, durations, enums,
constrained strings and numbers, optionals, lists, sets, maps with each key kind, records
with defaults, unions, json, table rows) hypothesis draws JSON values, most of them near
the type's edge, and asserts:

- the compiler accepts the value exactly when the runtime does;
- when both accept, the compiler's normalised value is the runtime's value exported
  back to JSON (an int given for a float is the float, a datetime is its ISO text);
  for records, whose defaults only the runtime fills in, loading the normalised value
  gives the same state as loading the value itself.

Rules about whole tables rather than values (a table given as an object keyed by row key,
duplicate row keys, references to missing rows, sequence counters) are the data check's
alone so far: the generated loaders do not repeat them, and this test leaves them out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worldspec.compiler.api import check_source
from worldspec.compiler.data_check import check_data
from worldspec.compiler.model import WorldModel
from worldspec.runtime.episode import Episode
from worldspec.runtime.errors import ArgumentError
from worldspec.services.loading import load_result

REPO = Path(__file__).resolve().parents[1]

WORLD = r"""
world Values "Every kind of value, for the differential test of value acceptance."

enum Color { red, dark_blue = "dark blue" }

type Code = str matching /^[A-Z]{2}[0-9]+$/
type Word = str matching /^\w+\s?\d*$/
type Short = str(1..3)
type Pct = int(0..100)
type Ratio = float(0.0..1.0)

record Point { x: int  y: float = 0.0  label: str?  raw: json  nick?: str }
record Cat { name: str  lives: int(0..9) }
record Dog { name: str  good: bool = true }
union Pet by kind { cat: Cat, dog: Dog }

entity Item { key id: str  qty: int  price: float  when: date? }

state {
  items: table Item
  s: str = ""
  i: int = 0
  f: float = 0.0
  num: number = 0
  nums: map[str, number] = {}
  b: bool = false
  d: date = date("2024-01-01")
  t: datetime = datetime("2024-01-01T00:00:00")
  dur: duration = seconds(0)
  j: json = {}
  color: Color = red
  code: Code = "AB1"
  word: Word = "a"
  short: Short = "a"
  pct: Pct = 0
  ratio: Ratio = 0.0
  oi: int? = none
  ints: list[int] = []
  floats: list[float](..3) = []
  tags: set[str] = []
  counts: map[str, int] = {}
  names: map[int, str] = {}
  mixed_keys: map[json, int] = {}
  by_color: map[Color, float] = {}
  point: Point? = none
  points: list[Point] = []
  pet: Pet? = none
  times: map[str, datetime?] = {}
}
"""

# ------------------------------------------------------------- the values
_any_char = st.characters(blacklist_categories=())  # lone surrogates included
text = st.text(_any_char, max_size=6) | st.sampled_from(["\ud800", "a\udfff", "é", "١٢"])
numbers = (st.integers() | st.floats() | st.integers(-2 ** 1100, 2 ** 1100)
           | st.integers(-10 ** 6, 10 ** 6).map(float)
           | st.sampled_from([0.5, 1e-7, 1e20, 1e300, -0.0, 86400.0 * 1e9]))
junk = st.recursive(st.none() | st.booleans() | numbers | text,
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(text, inner, max_size=3), max_leaves=6)


@st.composite
def datetime_texts(draw: st.DrawFn) -> str:
    """ISO-looking datetimes in every spelling: separators, precisions, offsets."""
    moment = draw(st.datetimes())
    spec = draw(st.sampled_from(["hours", "minutes", "seconds", "milliseconds",
                                 "microseconds", "auto"]))
    textual = moment.isoformat(sep=draw(st.sampled_from(["T", " ", "t"])), timespec=spec)
    return textual + draw(st.sampled_from(["", "", "", "Z", "+05:00", "-00:00", "+0530"]))


dates = (st.dates().map(lambda d: d.isoformat())
         | st.sampled_from(["20240101", "2024-W01-1", "2024-1-1", "2024-02-30", "2024-001",
                            " 2024-01-01", "2024-01-01T00:00:00", "\u0662024-01-01"]))
datetimes = (datetime_texts()
             | st.sampled_from(["2024-01-01", "20240101T101010", "2024-01-01T10",
                                "2024-01-01T24:00:00", "2024-01-01T10:00:00.1234567"]))
colors = st.sampled_from(["red", "dark blue", "dark_blue", "Red", "blue"])
int_keys = st.integers().map(str) | st.sampled_from(["01", "-0", " 2", "+4", "1_0", "\u0661",
                                                     "9" * 4001, "3.0"])
point = st.fixed_dictionaries(
    {"x": st.integers() | numbers},
    optional={"y": st.none() | numbers, "label": st.none() | text, "raw": junk,
              "z": st.integers(), "nick": st.none() | text | numbers})
pet = st.fixed_dictionaries(
    {"kind": st.sampled_from(["cat", "dog", "fish"]), "name": text},
    optional={"lives": st.integers(-1, 10) | numbers, "good": st.booleans() | st.none()})
row = st.fixed_dictionaries(
    {"id": text, "qty": st.integers() | numbers, "price": numbers},
    optional={"when": st.none() | dates})


def near(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Values of the type's shape (mostly), and anything else now and then."""
    return strategy | junk


#: state item -> (values to try, whether the normalised value equals the export exactly)
CASES: dict[str, tuple[st.SearchStrategy[Any], bool]] = {
    "s": (near(text), True),
    "i": (near(numbers | st.booleans()), True),
    "f": (near(numbers), True),
    "num": (near(numbers | st.booleans()), True),
    "nums": (near(st.dictionaries(text, numbers | st.booleans(), max_size=3)), True),
    "b": (near(st.booleans() | st.integers(0, 1)), True),
    "d": (near(dates), True),
    "t": (near(datetimes), True),
    "dur": (near(numbers | st.booleans()), True),
    "j": (junk, True),
    "color": (near(colors), True),
    "code": (near(st.from_regex(r"[A-Z]{2}[0-9]+", fullmatch=True) | text
                  | st.sampled_from(["AB\u0661", "AB1\n"])), True),
    "word": (near(st.from_regex(r"^\w+\s?\d*$", fullmatch=True)
                  | st.sampled_from(["a\v1", "a\x0b", "\u00e9", "a \u0661", "a\u00a01"])),
             True),
    "short": (near(text), True),
    "pct": (near(st.integers(-5, 105) | numbers), True),
    "ratio": (near(st.floats(-0.5, 1.5) | st.integers(-1, 2)), True),
    "oi": (near(st.none() | st.integers() | numbers), True),
    "ints": (near(st.lists(st.integers() | numbers, max_size=4)), True),
    "floats": (near(st.lists(numbers, max_size=5)), True),
    "tags": (near(st.lists(st.sampled_from(["a", "b", "c"]) | text, max_size=4)), True),
    "counts": (near(st.dictionaries(text, st.integers() | numbers, max_size=3)), True),
    "names": (near(st.dictionaries(int_keys, text, max_size=3)), True),
    "mixed_keys": (near(st.dictionaries(int_keys | text, st.integers(), max_size=3)), False),
    "by_color": (near(st.dictionaries(colors, numbers, max_size=3)), True),
    "point": (near(st.none() | point), False),
    "points": (near(st.lists(point, max_size=3)), False),
    "pet": (near(st.none() | pet), False),
    "times": (near(st.dictionaries(text, st.none() | datetimes, max_size=3)), True),
    "items": (near(st.lists(row, max_size=3, unique_by=lambda r: repr(r["id"]))), False),
}


# ------------------------------------------------------------- the two sides
@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> tuple[WorldModel, type[Episode]]:
    """The world's model (compile time) and its generated episode class (run time)."""
    root = tmp_path_factory.mktemp("values")
    spec = root / "values.world"
    spec.write_text(WORLD, encoding="utf-8")
    result = check_source(WORLD, str(spec))
    assert result.ok, [d.message for d in result.diagnostics]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORLDSPEC_CACHE", str(root / "cache"))
        world = load_result(result).worlds["Values"]
    return result.model.worlds["Values"], world


def run_time(world: type[Episode], data: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The state the runtime loads from ``data`` as JSON, or why it refused."""
    try:
        return world(data=data).export_state(), ""
    except ValueError as exc:  # data that does not fit: the loader's ArgumentError is the cause
        assert isinstance(exc.__cause__, ArgumentError), exc
        return None, str(exc.__cause__)


def text_of(value: Any) -> str:
    """JSON text that tells 1 from 1.0 and true from 1 (a strict equality for the test)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_compile_time_and_run_time_accept_the_same_values(
        sides: tuple[WorldModel, type[Episode]], name: str) -> None:
    model, world = sides
    values, exact = CASES[name]

    @settings(max_examples=200, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(values)
    def agree(value: Any) -> None:
        data = {name: value}
        normalised, problems = check_data(model, data)
        loaded, refusal = run_time(world, data)
        assert (normalised is not None) == (loaded is not None), (
            f"compile time: {problems or 'accepted'}; run time: {refusal or 'accepted'}")
        if normalised is None or loaded is None:
            return
        assert name in normalised
        if exact:
            assert text_of(normalised[name]) == text_of(loaded[name])
        again, refusal = run_time(world, normalised)
        assert again is not None, refusal
        assert text_of(again[name]) == text_of(loaded[name])

    agree()


def test_the_cases_cover_every_state_item(sides: tuple[WorldModel, type[Episode]]) -> None:
    assert sorted(sides[0].state) == sorted(CASES)



# ------------------------------------------------------------- the bugs, one by one
LEDGER = r"""
world Ledger "Accounts with due dates."
config { clock: "2024-03-01T09:00:00" }
entity Account { key id: str  name: str  count: int = 0  due: datetime = now }
state { accounts: table Account }
tool rename(account: Account, name: str) -> Account "Rename an account." {
  account.name = name
  return account
}
tool add(account: Account, n: int) -> int "Add to the count." {
  account.count += n
  return account.count
}
tool overdue(account: Account, at: datetime) -> bool "Whether the account is due at a time." {
  return at > account.due
}
tool parse(text: str) -> bool "Whether a text is a datetime after the clock." {
  return datetime(text) > now
}
"""
ROWS = {"accounts": [{"id": "A1", "name": "Ann"}]}


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> type[Episode]:
    root = tmp_path_factory.mktemp("ledger")
    result = check_source(LEDGER, str(root / "ledger.world"))
    assert result.ok, [d.message for d in result.diagnostics]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORLDSPEC_CACHE", str(root / "cache"))
        return load_result(result).worlds["Ledger"]


def failure(episode: Episode) -> str:
    assert episode.last_error is not None, "the call should have failed"
    return episode.last_error.message


@pytest.mark.parametrize("at", ["2024-01-01T00:00:00Z", "2024-01-01T00:00:00+05:00"])
def test_a_datetime_argument_with_an_offset_fails_the_call_clearly(
        ledger: type[Episode], at: str) -> None:
    episode = ledger(data=ROWS)
    episode.call("overdue", {"account": "A1", "at": at})
    assert failure(episode) == (f'at: "{at}" has a UTC offset; datetimes are naive '
                                "(the world's local time): drop the offset or the 'Z'")
    episode.call("overdue", {"account": "A1", "at": "2024-03-02 10:00"})
    assert episode.last_error is None and episode.last_value is True


def test_datetime_of_text_with_an_offset_fails_the_call(ledger: type[Episode]) -> None:
    episode = ledger(data=ROWS)
    episode.call("parse", {"text": "2030-01-01T00:00:00Z"})
    assert failure(episode) == '"2030-01-01T00:00:00Z" has a UTC offset; datetimes are naive.'


def test_data_with_an_offset_is_refused_at_load_time(ledger: type[Episode]) -> None:
    with pytest.raises(ValueError, match=r"accounts\[0\]\.due: .* has a UTC offset"):
        ledger(data={"accounts": [{"id": "A1", "name": "Ann", "due": "2024-01-01T00:00Z"}]})


@pytest.mark.parametrize("clock", ["2024-01-01T00:00:00+05:00", "2024-01-01T00:00:00Z"])
def test_a_world_clock_with_an_offset_is_an_error_at_check_time(clock: str) -> None:
    result = check_source(LEDGER.replace("2024-03-01T09:00:00", clock), "ledger.world")
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("WS503", 'clock must be a naive ISO datetime string such as "2024-01-01T09:00:00": '
                  f"'{clock}' has a UTC offset; datetimes are naive (the world's local time)")]


def test_a_datetime_literal_with_an_offset_is_an_error_at_check_time() -> None:
    spec = LEDGER + 'fn later() -> bool { return now < datetime("2030-01-01T00:00:00Z") }\n'
    result = check_source(spec, "ledger.world")
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("WS301", "'2030-01-01T00:00:00Z' has a UTC offset; datetimes are naive (the world's "
                  "local time)")]


@pytest.mark.parametrize("arguments", [{"account": "A1", "n": 3.0}, '{"account": "A1", "n": 3.0}'])
def test_an_integral_float_is_not_an_int(ledger: type[Episode], arguments: Any) -> None:
    episode = ledger(data=ROWS)
    episode.call("add", arguments)
    assert failure(episode) == "n: expected an integer, got 3.0"
    episode.call("add", {"account": "A1", "n": 3})
    assert episode.last_value == 3


@pytest.mark.parametrize("arguments", [{"account": "A1", "name": "Bo\ud800"},
                                       '{"account": "A1", "name": "Bo\\udfff"}'])
def test_a_lone_surrogate_in_an_argument_fails_the_call_and_the_state_still_hashes(
        ledger: type[Episode], arguments: Any) -> None:
    episode = ledger(data=ROWS)
    before = episode.state_hash()
    episode.call("rename", arguments)
    assert failure(episode).startswith("name: the text holds a lone surrogate (\\ud")
    assert failure(episode).endswith(" at character 2), which is not valid Unicode")
    assert episode.state_hash() == before
    episode.call("rename", {"account": "A1", "name": "Bo \U0001f600"})  # a whole pair is fine
    assert episode.last_error is None
    assert episode.state_hash() != before


def test_a_lone_surrogate_in_initial_data_is_refused_at_load_time(
        ledger: type[Episode]) -> None:
    with pytest.raises(ValueError, match=r": \$\.accounts\[0\]\.name: the text holds a lone "):
        ledger(data={"accounts": [{"id": "A1", "name": "\ud800"}]})


# ------------------------------------------------------------------ patterns
_RUN_LIMITED = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
"""


def run_limited(code: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter under a memory limit and a timeout, from the repo."""
    return subprocess.run([sys.executable, "-c", _RUN_LIMITED + code], capture_output=True,
                          text=True, cwd=REPO, timeout=timeout)


def test_a_backtracking_pattern_is_checked_in_linear_time() -> None:
    """``^(a+)+$`` took 37 s on 31 characters with Python's ``re``; RE2 never backtracks."""
    out = run_limited(r"""
from worldspec.runtime.errors import ArgumentError
from worldspec.runtime.values import check_pattern
text = "a" * 100_000
assert check_pattern(text, "$", "^(a+)+$") == text
try:
    check_pattern(text + "b", "$.name", "^(a+)+$")
except ArgumentError as exc:
    print(exc)
""")
    assert out.returncode == 0, out.stderr
    assert out.stdout == f'$.name: "{"a" * 40}...{"a" * 19}b" does not match /^(a+)+$/\n'


def test_a_backtracking_pattern_in_an_argument_fails_the_call_quickly(tmp_path: Path) -> None:
    spec = tmp_path / "names.world"
    spec.write_text('world Names "Names."\nstate { last: str = "" }\n'
                    'tool keep(name: str matching /^(a+)+$/) "Keep a name." { last = name }\n',
                    encoding="utf-8")
    out = run_limited(f"""
import os
os.environ["WORLDSPEC_CACHE"] = {str(tmp_path / "cache")!r}
from worldspec.services.loading import compile_worlds
episode = compile_worlds([{str(spec)!r}]).worlds["Names"]()
episode.call("keep", {{"name": "a" * 100_000 + "b"}})
print(episode.last_error.message[-24:])
""")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "does not match /^(a+)+$/\n"


def test_re2_is_imported_at_the_first_pattern_check_only() -> None:
    out = run_limited("""
import sys
import worldspec.runtime.values as v
print("re2" in sys.modules)
v.check_pattern("AB1", "$", "^[A-Z]{2}[0-9]$")
print("re2" in sys.modules)
""")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.parametrize(("pattern", "text", "accepted"), [
    (r"^\d+$", "123", True), (r"^\d+$", "\u0661\u0662", False),   # Arabic-Indic digits
    (r"^\w+$", "abc_1", True), (r"^\w+$", "caf\u00e9", False),
    (r"^a\sb$", "a b", True), (r"^a\sb$", "a\u00a0b", False), (r"^a\sb$", "a\vb", False),
    (r"^[A-Z]{2}$", "AB\n", False), (r"(?i)^abc$", "ABC", True),
])
def test_the_pattern_dialect_is_re2s_at_check_time_and_at_run_time(
        sides: tuple[WorldModel, type[Episode]], pattern: str, text: str,
        accepted: bool) -> None:
    """``\\d``, ``\\w`` and ``\\s`` are ASCII, as RE2 has them, on both sides."""
    from worldspec.compiler import types as t
    from worldspec.compiler.data_check import argument_problems
    from worldspec.runtime.values import check_pattern

    typ = t.Prim("str", t.Refinement(pattern=pattern))
    problems = argument_problems(text, typ, sides[0], "code")
    assert problems == ([] if accepted else
                        [f"code: {json.dumps(text, ensure_ascii=False)} does not match "
                         f"/{pattern}/"])
    try:
        check_pattern(text, "code", pattern)
    except ArgumentError as refused:
        assert not accepted
        assert refused.message == f"code: {json.dumps(text)} does not match /{pattern}/"
    else:
        assert accepted


@pytest.mark.parametrize("pattern", [r"^\d{3}-\w+\s?[a-z]*$", r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$",
                                     r"^#W[0-9]{7}$", r"(?i)^[a-f0-9]{4}\S$", r"^a\sb$"])
def test_sampled_and_generated_strings_are_ones_the_runtime_accepts(pattern: str) -> None:
    """The samplers (tool-call fuzzing, the property tests) build strings with Python's
    regex parser; what they produce must pass the runtime's RE2 check, or every property
    run would report false failures."""
    import random

    from worldspec.runtime.values import pattern_matcher
    from worldspec.testing.hypothesis_suite import from_schema
    from worldspec.testing.sampling import sample, validate

    matches = pattern_matcher(pattern)
    schema = {"type": "string", "pattern": pattern}
    rng = random.Random(7)
    for _ in range(200):
        text = sample(schema, rng)
        assert validate(text, schema) is matches(text)

    @settings(max_examples=100, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(from_schema(schema))
    def generated(text: str) -> None:
        assert matches(text), text

    generated()


def test_the_samplers_validate_formats_by_the_runtimes_rules() -> None:
    from worldspec.testing.sampling import validate

    schema = {"type": "string", "format": "date-time"}
    assert validate("2024-01-01T10:00:00", schema)
    assert not validate("2024-01-01T10:00:00Z", schema)
    assert not validate("20240101T100000", schema)
    assert not validate("2024-W01-1", {"type": "string", "format": "date"})


def test_a_pattern_re2_cannot_compile_fails_a_call_clearly_at_run_time() -> None:
    """The checker reports such a pattern (WS312); a hand-made world that skipped it gets a
    failed call that says why, not a traceback."""
    from worldspec.runtime.errors import ToolError
    from worldspec.runtime.values import check_pattern

    with pytest.raises(ToolError) as caught:
        check_pattern("aa", "$.x", "^(a)\\1$")
    assert caught.value.message == "/^(a)\\1$/ is not an RE2 pattern: invalid escape sequence: \\1"
