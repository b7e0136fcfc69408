"""``calculate`` of ``examples/tau2/retail.world`` against the real original.

tau2's calculate refuses characters other than digits, ``+ - * / ( ) .`` and the space, then
returns ``str(round(float(eval(expression, {"__builtins__": None}, {})), 2))``, or
``Error: <str(exception)>`` when Python raises. The oracle is exactly that code, run by the
same Python in a child process (``tests/python_oracle.py``: a memory limit, and a deadline
per expression, since ``9**9**9`` makes the original run for hours). Every expression must get
the original's answer, character for character, except where the spec's ``arithmetic()``
stops at a documented guard (an int of more than 8,388,608 bits, a text of more than 20,000
characters, the call's step budget, which big-int work draws from by its estimated time):
there the original hangs or works longer than a call may, and the test checks that lifting
the guard gives the original's answer (so the guard was the only difference; this re-run
happens only where the original answered within the oracle's deadline and memory limit).
``pytest -s`` prints how many expressions were compared, and how.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from python_oracle import Oracle

from worldspec.runtime import arithmetic as arith
from worldspec.runtime.budget import STEPS_MESSAGE
from worldspec.runtime.episode import Episode
from worldspec.services.loading import compile_worlds

SPEC = Path(__file__).resolve().parent.parent / "examples" / "tau2" / "retail.world"
GUARDS = {f"Error: {arith.BITS_MESSAGE}", f"Error: {arith.LENGTH_MESSAGE}",
          f"Error: {arith.DIGITS_MESSAGE}", f"Error: {STEPS_MESSAGE}"}


@pytest.fixture(scope="module")
def episode() -> Episode:
    world = compile_worlds([SPEC]).worlds["Tau2Retail"]
    return world(data={"products": [], "users": [], "orders": []})


#: how the expressions compared: equal, beyond the guard, original hangs
OUTCOMES: Counter[str] = Counter()


@pytest.fixture(scope="module")
def oracle() -> Iterator[Oracle]:
    python = Oracle()
    yield python
    python.close()
    print(f"\ncalculate against the original: {sum(OUTCOMES.values())} expressions, "
          + ", ".join(f"{n} {how}" for how, n in sorted(OUTCOMES.items())))


def spec_calculate(ep: Episode, expression: str) -> str:
    result = ep.call("calculate", {"expression": expression})
    assert isinstance(result, str)
    return result


def check(ep: Episode, oracle: Oracle, expression: str) -> None:
    """The spec answers as the original does, or stops at a documented guard where lifting
    the guard gives the original's answer."""
    OUTCOMES[_compare(ep, oracle, expression)] += 1


def _compare(ep: Episode, oracle: Oracle, expression: str) -> str:
    ours = spec_calculate(ep, expression)
    expected = oracle.calculate(expression)
    if expected == ours:
        return "equal"
    assert ours in GUARDS, (expression, ours, expected)
    if expected is None:
        return "original hangs"
    with pytest.MonkeyPatch.context() as mp:  # without the guards: Python's own answer
        mp.setattr(arith, "MAX_BITS", 1 << 40)
        mp.setattr(arith, "MAX_LENGTH", 1 << 40)
        mp.setattr(arith, "MAX_DIGITS", 1 << 40)
        mp.setattr(arith, "MAX_TUPLE", 1 << 40)
        mp.setattr(arith, "NS_PER_STEP", 1 << 60)
        assert spec_calculate(ep, expression) == expected, expression
    return "beyond the guard"


LONG = "9" * 400
# TOOLS.md §4.1, extra_probes.json, CPython's corner cases
TABLE = [
    # TOOLS.md examples and extra_probes.json
    "2 + 2", "10 / 3", "2**10", "7 // 2", "-0.001", "10**20", "3131.1 + 4777.75 + 367.38",
    "135.24 - 153.23", "1/0", "(1", "", "01 + 1", "abc", "0.1 + 0.2", "1e5", "2.675",
    "1234567.891", "3 * (2 + 1.5)", "1/3*3",
    # blanks: eval drops leading spaces and tabs (a tab is refused by the alphabet here)
    "   ", " 1", "  1 + 2  ", "\t1", "1\t",
    # number forms
    "00", "000.5", "01.5", "0.", "1.", ".5", "001.55.(2", "1.2.3", ".", "..", "...",
    "...(2)", "1..2", "1 .2", "1. 2", "1" * 4300, "1" * 4301, "1" * 4301 + ".0",
    "1" * 5000 + ".5", "9" * 5000,
    # ** grouping and unary minus
    "2 ** 3 ** 2", "(2 ** 3) ** 2", "-2**2", "(-2)**2", "2**-1", "2**-1**2", "-2**-2**-1",
    "- - 2 ** 2", "+2**+2", "2 ** -3 * 4", "-8 ** (1/3)", "0 ** 0", "0.0 ** 0", "(-1) ** -3",
    # exact ints, floats at their limits
    "10**400", "10**400 // 10**398", "2**5000/2**4999", "2**5000 // 2**4990",
    "2**14000", "10**4299 * 9", "10**4300", "2**20000", "2**1024 - 2**970",
    "2**1024 - 2**970 - 1", "(2**1024 - 2**970) / 1", "2**2000 / 3",
    "2**2000 + 0.5", "2**60000 // 2**59990", "2**65535 // 2**65530", "(-2) ** 4096",
    "1 ** 100000000", "(-1) ** 100000001", "0 ** 100000000", "10 ** -400", "1.5 ** -3000",
    "2.0 ** 1024", "10.0 ** 309", "0.1 ** -309", "(-10.0) ** 309", "1.0000001 ** 10000000000",
    LONG + ".0", LONG + ".0 - " + LONG + ".0", "(" + LONG + ".0) // 1", "1 // " + LONG + ".0",
    # Python's errors
    "0**-1", "1//0", "1.0//0", "1 // 0.0", "1 / -0.0", "0.0 ** -1", "-0.0 ** -1",
    "2**2000 / 0", "2**2000 / 0.0", "(0 * -1.0) ** -0.5",
    # complex values: Python computes them, and float() refuses the result
    "(-8)**0.5", "(-8.0) ** (1/3)", "(-1) ** 0.5 // 1", "1 // (-1) ** 0.5", "(-1) ** 0.5 / 0",
    "(-1) ** 0.5 + 1 / 0", "(-1) ** 0.5 * 0 + 1", "0 ** (-1) ** 0.5", "(-1) ** 0.5 + 2 ** 2000",
    "(-10.0) ** 400.5", "2 ** (-1) ** 0.5", "((-1) ** 0.5) ** 2000",
    # syntax errors
    "1 +", "-", "* 2", "2 * * 3", "2 *** 3", "2 // / 3", "1 2", "(1 +", "1 + )", ")", "(1 + )",
    "(1 2)", "(1 2", "1 2 )", "(1) 2", "(1 2 +)", "(1 + 2 3) + 4", "((1) 2)", "* 01",
    "1 2 01", "(((", "1 (", "1 ((2)", "(*3)", "(*())", "*()", "2(**(), *())",
    # tuples and calls: valid syntax that fails to run, in Python's order
    "()", "()*3", "() * 10**100", "()+()", "1 + ()", "-()", "() ** 2", "(())", "2(3)",
    "(1)(2)", "2()", "2.5(1)", "2(1/0)", "-2(3)", "2 ** 3(4)", "(-1) ** 0.5 (2)", "()()",
    "2(3)(1/0)", "(1/0)(2/0)", "2(*3)", "2(*())", "2(**3)", "2(**())", "2(*3)(4)",
    "2(*(), **())", "2(*3, **())", "2(*()*3)", "(2**100)(*3)", "(10**5000)(*3)", "2(1 ((2)))",
    # nesting: the parser's limits are Python's
    "(" * 150 + "1" + ")" * 150, "(" * 200 + "1" + ")" * 200, "(" * 201 + "1" + ")" * 201,
    "(" * 250 + "1" + ")" * 250, "-" * 2000 + "1", "-" * 10000 + "1", "-" * 20000 + "1",
    "+".join(["1"] * 2000), "+".join(["1"] * 3500), "**".join(["1"] * 3000),
    # big ints near and past the old 65,536-bit guard: the original's answers
    "2**65535 // 2**65534", "2**65536 // 2**65535", "2**70000 // 2**69990",
    "2**100000 - 2**100000 + 1", "(10**5000)/(10**4999)", "2**20000 * 0 + 1", "2**20000 / 3",
    "2**20000 - 2**20000", "2**100000 // (2**99990 + 1)", "3**40000 // 3**39998",
    "(2**1000000) // (2**999990)", "2**1000000 / 3**100000", "2**100000 * 1.5",
    "-(2**100000) // 2**99999", "2**200000 - 1", "(3**30000) * (3**30000) // 3**59999",
    # beyond the guard: the original hangs, or works longer than a call may
    "9**9**9", "2**2**20", "10**10**10 // 1", "3**300000 // 3**299999", "2**9000000 // 2",
]


@pytest.mark.parametrize("expression", TABLE)
def test_table(episode: Episode, oracle: Oracle, expression: str) -> None:
    check(episode, oracle, expression)


def test_tools_md_examples(episode: Episode) -> None:
    """The texts TOOLS.md §4.1 spells out, independently of the oracle."""
    expected = {"2 + 2": "4.0", "10 / 3": "3.33", "2**10": "1024.0", "7 // 2": "3.0",
                "-0.001": "-0.0", "10**20": "1e+20", "3131.1 + 4777.75 + 367.38": "8276.23",
                "135.24 - 153.23": "-17.99", "1/0": "Error: division by zero",
                "(1": "Error: '(' was never closed (<string>, line 1)",
                "": "Error: invalid syntax (<string>, line 0)",
                "01 + 1": "Error: leading zeros in decimal integer literals are not permitted; "
                          "use an 0o prefix for octal integers (<string>, line 1)"}
    for expression, text in expected.items():
        assert spec_calculate(episode, expression) == text, expression


def test_the_guard_fails_at_once(episode: Episode, oracle: Oracle) -> None:
    """Where the original runs for hours, the spec fails at once with the guard's text."""
    assert oracle.calculate("9**9**9") is None  # the original did not answer in time
    assert spec_calculate(episode, "9**9**9") == \
        "Error: An integer in the expression would have more than 8,388,608 bits."
    assert spec_calculate(episode, "2**70000 // 2**69990") == "1024.0"
    assert spec_calculate(episode, "2**20000") == "Error: int too large to convert to float"
    assert spec_calculate(episode, "2**8388608 // 2") == f"Error: {arith.BITS_MESSAGE}"
    assert spec_calculate(episode, "3**300000 // 3**299999") == f"Error: {STEPS_MESSAGE}"


# ---------------------------------------------------------------- generated expressions

ALPHABET = "0123456789+-*/(). "
NUMBERS = st.sampled_from(["0", "1", "2", "3", "7", "9", "10", "12", "99", "100", "255",
                           "12345678901234567890", "0.5", "1.5", ".25", "3.", "2.675", "0.1",
                           "007", "0.0", "1" * 30, "9" * 320 + ".0"])
BLANKS = st.sampled_from(["", "", "", " ", "  "])
EXPONENTS = st.sampled_from(["0", "1", "2", "3", "5", "10", "64", "0.5", "1.5", "-1",
                             "-2", "- 0.5", "(1/3)", "(2 ** 2)", "-(1 + 1)", "(0)", "-1.5"])


def _expressions() -> st.SearchStrategy[str]:
    """Valid-looking expressions: numbers, the operators, unary signs, parentheses, powers
    with small exponents (so the original ends quickly), calls and empty tuples."""
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binary = st.tuples(inner, BLANKS, st.sampled_from(["+", "-", "*", "/", "//"]), BLANKS,
                           inner).map("".join)
        power = st.tuples(inner, BLANKS, st.just("**"), BLANKS, EXPONENTS).map("".join)
        unary = st.tuples(st.sampled_from(["-", "+", "- ", "--"]), inner).map("".join)
        parens = st.tuples(st.just("("), BLANKS, inner, BLANKS, st.just(")")).map("".join)
        call = st.tuples(inner, st.just("("), inner, st.just(")")).map("".join)
        starred = st.tuples(inner, st.sampled_from(["(*", "(**"]), inner, st.just(")")).map(
            "".join)
        return st.one_of(binary, binary, power, unary, parens, call, starred)
    leaves = st.one_of(NUMBERS, st.just("()"), st.just("..."))
    return st.recursive(leaves, extend, max_leaves=8)


TOKENS = st.sampled_from(["0", "1", "2", "9", "00", "01", "10", ".", "5.", ".5", "1.5", "+", "-",
                          "*", "/", "//", "**", "(", ")", " ", " ", "3", "()", "..."])


@given(expression=_expressions())
def test_generated_expressions(episode: Episode, oracle: Oracle, expression: str) -> None:
    check(episode, oracle, expression)


@given(tokens=st.lists(TOKENS, max_size=14))
def test_token_soup(episode: Episode, oracle: Oracle, tokens: list[str]) -> None:
    """Strings of the alphabet's tokens, most of them not valid Python."""
    check(episode, oracle, "".join(tokens))


@given(expression=st.text(alphabet=ALPHABET, max_size=24))
def test_random_characters(episode: Episode, oracle: Oracle, expression: str) -> None:
    check(episode, oracle, expression)


@given(expression=st.text(max_size=6))
def test_any_text(episode: Episode, oracle: Oracle, expression: str) -> None:
    """Outside the alphabet the original refuses; inside it, it answers as above."""
    check(episode, oracle, expression)


BIG = st.sampled_from(["2**70000", "2**100000", "3**20000", "10**5000", "7**9000", "2**65536",
                       "(2**100000 + 1)", "(-2)**70001", "9" * 400, "12345", "7", "0", "1.5"])


def _big_expressions() -> st.SearchStrategy[str]:
    """Big ints past the old 65,536-bit guard, combined by the operators: the original
    answers each within milliseconds (or hangs past the oracle's deadline, or fails)."""
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        ops = st.sampled_from(["+", "-", "*", "/", "//"])
        return st.one_of(st.tuples(inner, ops, inner).map(lambda p: f"({p[0]} {p[1]} {p[2]})"),
                         st.tuples(inner, st.sampled_from(["2", "-1"])).map(
                             lambda p: f"({p[0]}) ** {p[1]}"))
    return st.recursive(BIG, extend, max_leaves=4)


@pytest.fixture(scope="module")
def quick_oracle() -> Iterator[Oracle]:
    """The original with a short deadline: what it does not answer in half a second is
    past any call's bound anyway (and must then be past a guard of ours)."""
    python = Oracle(timeout=0.5)
    yield python
    python.close()
    print(f"\nbig ints against the original: {sum(BIG_OUTCOMES.values())} expressions, "
          + ", ".join(f"{n} {how}" for how, n in sorted(BIG_OUTCOMES.items())))


BIG_OUTCOMES: Counter[str] = Counter()


@given(expression=_big_expressions())
def test_generated_big_int_expressions(episode: Episode, quick_oracle: Oracle,
                                       expression: str) -> None:
    BIG_OUTCOMES[_compare(episode, quick_oracle, expression)] += 1
