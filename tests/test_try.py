"""``attempt(x)`` and ``error_of(x)``: Python's ``try``/``except`` as expressions, and strings
iterated by character.

A failure inside ``x`` (a builtin's, a ``require`` or ``fail`` in a helper fn) becomes a value;
the call's guards (steps, sizes, nesting) still fail the whole call; draws are refused inside.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mypy_support import mypy_strict

from worldspec.compiler.api import check_source
from worldspec.dsl.formatter import format_source
from worldspec.lsp.features import builtin_hover
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_result

WORLD = r'''
world Attempts "Failures caught as values."

config { seed: 3 }

state {
  calls: int = 0
}

fn positive(n: int) -> int "n, if it is positive." {
  require n > 0 else f"{n} is not positive"
  return n
}

fn refused(n: int) -> int "Always fails." {
  fail f"no {n}"
}

fn spin() -> int "Runs out of steps." {
  let i = 0
  while true {
    i += 1
  }
  return i
}

fn deep(n: int) -> int "Nests n calls." {
  return if n == 0 then 0 else deep(n - 1) + 1
}

tool read(text: str "Text.") -> json "What attempt and error_of make of it." {
  calls += 1
  return {
    "int": attempt(int(text)),
    "int_error": error_of(int(text)),
    "float": attempt(float(text)) ?? -1.0,
    "day": attempt(strptime(text, "%Y-%m-%d")) != none,
    "day_error": error_of(strptime(text, "%Y-%m-%d")),
    "positive": error_of(positive(attempt(int(text)) ?? 0)),
    "refused": error_of(refused(1)),
    "ok": error_of(len(text)),
    "slice": attempt(text[::0]),
  }
}

tool parse_day(text: str "A day.") -> str "The weekday, or why not." {
  let day = attempt(strptime(text, "%Y-%m-%d"))
  if day == none {
    return error_of(strptime(text, "%Y-%m-%d")) ?? "?"
  }
  return day.strftime("%A")
}

tool guard(kind: str "Which guard.", n: int = 0 "A size.") -> str? "A guard inside attempt." {
  calls += 1
  if kind == "steps" {
    return error_of(spin())
  }
  if kind == "power" {
    return error_of(2 ** n)
  }
  if kind == "range" {
    return error_of(range(n))
  }
  if kind == "arithmetic" {
    return error_of(arithmetic("9**9**9"))
  }
  return error_of(deep(n))
}

tool chars(text: str "Text.") -> json "A string's characters." {
  let n = 0
  for c in text {
    if c.isdigit() {
      n += 1
    }
  }
  return {
    "list": list(text),
    "upper": [c.upper() for c in text if c != " "],
    "digits": n,
    "all_alpha": all c in text: c.isalpha(),
  }
}
'''


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> type[Episode]:
    root = tmp_path_factory.mktemp("attempts")
    result = check_source(WORLD, str(root / "attempts.world"))
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORLDSPEC_CACHE", str(root / "cache"))
        return load_result(result).worlds["Attempts"]


def call(world: type[Episode], tool: str, **arguments: Any) -> tuple[bool, Any, int]:
    """(ok, value or failure message, the state's count) of one call on a fresh episode."""
    episode = world()
    episode.call(tool, arguments)
    count = episode.export_state()["calls"]
    if episode.last_error is not None:
        return False, episode.last_error.message, count
    return True, episode.last_value, count


def test_attempt_gives_the_value_and_error_of_none_when_nothing_fails(
        world: type[Episode]) -> None:
    ok, value, count = call(world, "read", text="2024-02-03")
    assert ok and count == 1
    assert value["int"] is None
    assert value["int_error"] == "invalid literal for int() with base 10: '2024-02-03'"
    assert value["float"] == -1.0 and value["day"] is True and value["day_error"] is None
    assert value["positive"] == "0 is not positive"  # a require in a fn, caught
    assert value["refused"] == "no 1"                # a fail in a fn, caught
    assert value["ok"] is None and value["slice"] is None  # a zero step fails as Python's
    ok, value, _ = call(world, "read", text=" 12 ")
    assert ok and value["int"] == 12 and value["int_error"] is None and value["float"] == 12.0
    assert value["positive"] is None and value["day"] is False
    assert value["day_error"] == "time data ' 12 ' does not match format '%Y-%m-%d'"


def test_a_port_of_try_except_strptime(world: type[Episode]) -> None:
    assert call(world, "parse_day", text="2024-09-02")[:2] == (True, "Monday")
    assert call(world, "parse_day", text="2024-02-30")[:2] == (True,
                                                             "day is out of range for month")


@pytest.mark.parametrize(("kind", "n", "message"), [
    ("steps", 0, "The call used more than 1,000,000 steps."),
    ("power", 10_000, "2 ** 10000 is too large."),
    ("range", 200_000, "range(0, 200000) is longer than 100,000 elements."),
    ("arithmetic", 0, "An integer in the expression would have more than 8,388,608 bits."),
    ("deep", 100_000, "The call nests too deeply."),
])
def test_guards_are_not_caught_they_fail_the_call(world: type[Episode], kind: str, n: int,
                                                   message: str) -> None:
    assert call(world, "guard", kind=kind, n=n) == (False, message, 0)  # and it is undone


def test_a_failure_that_is_not_a_guard_is_caught_there(world: type[Episode]) -> None:
    assert call(world, "guard", kind="deep", n=5) == (True, None, 1)
    assert call(world, "guard", kind="power", n=-1) == (
        True, "2 ** -1: a negative power of an int; use a float.", 1)


@settings(max_examples=200, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.one_of(
    st.dates(min_value=dt.date(1, 1, 1)).map(lambda d: d.strftime("%Y-%m-%d")),
    st.text(alphabet="0123456789-٢٠٤ x", max_size=12),
    st.sampled_from(["2024-2-3", "2024-02- 3", "2023-02-29", "2024-02-29", "0000-01-01",
                     "٢٠٢٤-01-01", "2024-13-01", "2024-1-31x"]),
))
def test_attempt_of_strptime_accepts_exactly_what_python_does(world: type[Episode],
                                                               text: str) -> None:
    try:
        expected = dt.datetime.strptime(text, "%Y-%m-%d").strftime("%A")
    except ValueError as exc:
        expected = str(exc)
    assert call(world, "parse_day", text=text)[:2] == (True, expected)


def test_a_string_iterates_by_character_as_in_python(world: type[Episode]) -> None:
    ok, value, _ = call(world, "chars", text="a1 b2")
    assert ok
    assert value == {"list": list("a1 b2"), "upper": ["A", "1", "B", "2"], "digits": 2,
                     "all_alpha": False}
    assert call(world, "chars", text="")[1] == {"list": [], "upper": [], "digits": 0,
                                                "all_alpha": True}


def _codes(source: str) -> list[str]:
    return [d.code for d in check_source(source, "t.world").diagnostics]


HEAD = 'world T "t"\nstate { n: int = 0  ids: sequence "I{:03}" }\n'


@pytest.mark.parametrize(("body", "code"), [
    ("return attempt(random_int(1, 6)) ?? 0", "WS324"),
    ("return len(error_of(str(next(ids)) + \"x\") ?? \"\")", "WS324"),
    ("let x = attempt(none)\nreturn 0", "WS324"),
    ("return attempt() ?? 0", "WS303"),
    ("return attempt(1, 2) ?? 0", "WS303"),
    ("return attempt(n) + 1", "WS304"),  # an int? in arithmetic
    ("let s: str = error_of(int(\"1\"))\nreturn 0", "WS301"),
    ("for c in 3 { }\nreturn 0", "WS304"),
    ("return len(list(5))", "WS301"),
])
def test_the_checker_refuses_nonsense(body: str, code: str) -> None:
    source = HEAD + f'tool t() -> int "t" {{\n  {body}\n}}\n'
    assert code in _codes(source)


def test_the_forms_type_as_optionals() -> None:
    ok = HEAD + '''tool t(s: str "s") -> int "t" {
  let v: int? = attempt(int(s))
  let e: str? = error_of(int(s))
  let d = attempt(strptime(s, "%Y"))
  if d == none { return 0 }
  return d.year + (v ?? 0) + len(e ?? "")
}
'''
    assert _codes(ok) == []


def test_the_formatter_keeps_them() -> None:
    out = format_source(WORLD)
    assert out is not None
    assert format_source(out) == out
    assert "attempt(strptime(text, \"%Y-%m-%d\")) != none" in out
    assert "for c in text {" in out


def test_hover_explains_them() -> None:
    attempt = builtin_hover("attempt", after_dot=False)
    error_of = builtin_hover("error_of", after_dot=False)
    assert attempt is not None and "attempt(x)" in attempt and "none when evaluating" in attempt
    assert error_of is not None and "error_of(x)" in error_of and "text" in error_of


def test_generated_code_is_mypy_strict_clean(tmp_path: Path) -> None:
    from worldspec.compiler.build import generate_all, write_packages

    def generate() -> dict[str, str]:
        result = check_source(WORLD, str(tmp_path / "attempts.world"))
        return {rel: text for package in generate_all(result).packages
                for rel, text in package.files.items()}

    files = generate()
    assert files == generate()  # byte-deterministic
    text = "\n".join(files.values())
    assert "rt.attempt(lambda: " in text and "rt.error_of(lambda: " in text
    result = check_source(WORLD, str(tmp_path / "attempts.world"))
    out = tmp_path / "out"
    write_packages(generate_all(result), out)
    mypy = mypy_strict(out, tmp_path / "mypy-cache")
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
