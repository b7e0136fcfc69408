"""Golden tests for every diagnostic code, and focused tests for the tricky cases.

Each code ``WSnnn`` of :data:`dsl.catalog.CATALOG` has a small bad spec
``tests/golden/WSnnn.world`` that triggers that code and nothing else, and the
exact terminal text ``tests/golden/WSnnn.txt`` that checking it prints. WS100
(a file that cannot be read) has no spec: the test writes a non-UTF-8 file.
``tests/golden/multi_*.world`` show several independent mistakes in one file,
each reported once and without cascades; ``tests/golden/imports/`` holds the
files the import goldens import. A new catalog code without a golden fails
here with a clear message; a retired code (``retired`` in the catalog) has no golden.

Regenerate the expected text after a deliberate change with

    WORLDSPEC_UPDATE_GOLDEN=1 pytest tests/test_golden.py

and review every changed ``.txt`` by eye: the message must be clear, the caret
under the right token, the hints sensible.

The focused tests below the goldens follow graphql-core's ``assert_errors``
style: a snippet, and the exact diagnostics it must produce. Known checker
bugs are regression tests.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from textwrap import dedent
from typing import Any, NotRequired, TypedDict

import pytest

from worldspec.compiler.api import CheckResult, check_source, check_specs
from worldspec.dsl.catalog import CATALOG
from worldspec.dsl.diagnostics import Diagnostic, Severity
from worldspec.dsl.render import render_text
from worldspec.services.validation import check_paths as check_with_tasks

REPO = Path(__file__).resolve().parent.parent
#: Relative to the repository root, so diagnostics show relative paths.
GOLDEN = Path("tests") / "golden"
UPDATE = os.environ.get("WORLDSPEC_UPDATE_GOLDEN") == "1"
REGENERATE = "WORLDSPEC_UPDATE_GOLDEN=1 pytest tests/test_golden.py"

#: Codes whose golden is built in a temporary folder instead of a ``.world`` file.
GENERATED = frozenset({"WS100"})

#: Goldens that are not named after one code, and the codes each must report, in order.
EXTRA_GOLDENS: dict[str, list[str]] = {
    "WS211_matches_solution": ["WS211"],
    "multi_data": ["WS601", "WS605", "WS605", "WS602", "WS603"],
    "multi_no_cascade": ["WS202", "WS301", "WS205"],
    "multi_syntax": ["WS101", "WS109"],
    "multi_recovery": ["WS101", "WS109", "WS110", "WS113", "WS101"],
}


# ------------------------------------------------------------------ helpers
def render(result: CheckResult) -> str:
    """The diagnostics of ``result`` as the terminal shows them, without colour."""
    sources = {path: f.text for path, f in result.program.files.items()}
    return render_text(result.diagnostics, sources, color=False)


def compare_with_golden(actual: str, expected_file: Path) -> None:
    """Assert ``actual`` equals the file's text, or rewrite the file when updating."""
    if UPDATE:
        expected_file.write_text(actual, encoding="utf-8")
        return
    if not expected_file.exists():
        pytest.fail(f"{expected_file} is missing; generate it with `{REGENERATE}` "
                    "and review it")
    assert actual == expected_file.read_text(encoding="utf-8")


def check_unreadable_file(folder: Path, monkeypatch: pytest.MonkeyPatch) -> CheckResult:
    """Check a spec file that is not UTF-8 (WS100), with a path relative to ``folder``."""
    monkeypatch.chdir(folder)
    Path("WS100.world").write_bytes('world Café "A café."\n'.encode("latin-1"))
    return check_specs(["WS100.world"])


def check_golden(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Check the golden spec of ``code`` from the repository root."""
    if code in GENERATED:
        return check_unreadable_file(tmp_path, monkeypatch)
    monkeypatch.chdir(REPO)
    spec = GOLDEN / f"{code}.world"
    if not spec.exists():
        pytest.fail(f"{code} has no golden test: add {spec}, a small realistic spec that "
                    f"triggers {code} once and nothing else, then run `{REGENERATE}`")
    # the full check: the compiler's, then the tasks run (WS61x)
    return check_with_tasks([spec])


def codes_of(result: Any) -> list[str]:
    return [d.code for d in result.diagnostics]


# ------------------------------------------------------------------ goldens
#: Codes the checker still reports: each has a golden. A retired code has none (nothing
#: triggers it); its catalog entry stays, with the reason it was retired.
REPORTED = sorted(code for code, entry in CATALOG.items() if not entry.retired)


@pytest.mark.parametrize("code", REPORTED)
def test_golden(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = check_golden(code, tmp_path, monkeypatch)
    assert code in codes_of(result), f"{code}'s golden does not trigger {code}"
    assert codes_of(result) == [code], f"{code}'s golden should trigger {code} only"
    compare_with_golden(render(result), REPO / GOLDEN / f"{code}.txt")


@pytest.mark.parametrize("code", REPORTED)
def test_golden_severity_comes_from_the_catalog(code: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    result = check_golden(code, tmp_path, monkeypatch)
    expected = Severity(CATALOG[code].severity)
    assert {d.severity for d in result.diagnostics} == {expected}
    assert result.ok is (expected is not Severity.ERROR)


@pytest.mark.parametrize("code", ["WS407", "WS408", "WS507", "WS609"])
def test_warnings_are_warnings(code: str, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    assert CATALOG[code].severity == "warning"
    result = check_golden(code, tmp_path, monkeypatch)
    assert [d.severity for d in result.diagnostics] == [Severity.WARNING]
    assert result.ok
    assert render(result).startswith(f"warning[{code}]: ")


@pytest.mark.parametrize("name", sorted(EXTRA_GOLDENS))
def test_extra_golden(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = check_specs([GOLDEN / f"{name}.world"])
    assert codes_of(result) == EXTRA_GOLDENS[name]
    compare_with_golden(render(result), REPO / GOLDEN / f"{name}.txt")


def test_golden_folder_has_no_strays() -> None:
    """Every spec has its expected text and every expected text its spec or code."""
    folder = REPO / GOLDEN
    specs = {p.stem for p in folder.glob("*.world")}
    texts = {p.stem for p in folder.glob("*.txt")}
    known = set(REPORTED) | set(EXTRA_GOLDENS)
    assert specs - known == set(), "name each golden after its code or list it in EXTRA_GOLDENS"
    assert texts - specs - GENERATED == set(), "expected text without a spec"
    if not UPDATE:
        assert specs - texts == set(), f"spec without expected text; run `{REGENERATE}`"


# ---------------------------------------------------- focused: assert_errors
#: A small world every focused snippet is appended to.
PRELUDE = dedent("""\
    world Shop "An online shop."
    enum OrderStatus { pending, shipped, delivered, cancelled }
    enum Color { red, green }
    record Address "A postal address." { street: str  city: str }
    entity Customer "A shopper." {
      key id: str
      name: str
      address: Address? = none
      referrer: Customer? = none
    }
    entity Order "An order." {
      key id: str
      buyer: Customer
      status: OrderStatus = pending
      history: list[OrderStatus] = []
      total: float = 0.0
    }
    state {
      customers: table Customer
      orders: table Order
      current: Customer? = none
    }
    """)
PRELUDE_LINES = PRELUDE.count("\n")


class Expected(TypedDict):
    """One expected diagnostic; ``hints`` and ``related`` are compared only when given."""

    code: str
    message: str
    locations: list[tuple[int, int]]
    hints: NotRequired[list[str]]
    related: NotRequired[list[tuple[str, tuple[int, int]]]]


def _shape(d: Diagnostic, expected: Expected) -> dict[str, object]:
    """``d`` in the shape of ``expected``; lines count from the snippet's first line."""

    def at(line: int, column: int) -> tuple[int, int]:
        return (line - PRELUDE_LINES, column)

    shaped: dict[str, object] = {
        "code": d.code,
        "message": d.message,
        "locations": [at(d.span.line, d.span.column)],
    }
    if "hints" in expected:
        shaped["hints"] = list(d.hints)
    if "related" in expected:
        shaped["related"] = [(r.message, at(r.span.line, r.span.column)) for r in d.related]
    return shaped


def check_snippet(snippet: str) -> CheckResult:
    return check_source(PRELUDE + dedent(snippet).lstrip("\n"), "snippet.world")


def assert_errors(snippet: str, expected: list[Expected]) -> None:
    """The snippet (after :data:`PRELUDE`) reports exactly ``expected``, in order."""
    result = check_snippet(snippet)
    actual = [_shape(d, e) for d, e in zip(result.diagnostics, expected, strict=False)]
    if len(result.diagnostics) != len(expected):
        actual = [_shape(d, {"code": "", "message": "", "locations": []})
                  for d in result.diagnostics]
    assert actual == expected


def assert_valid(snippet: str) -> None:
    """The snippet (after :data:`PRELUDE`) has no diagnostics at all."""
    result = check_snippet(snippet)
    assert [(d.code, d.message) for d in result.diagnostics] == []


def test_prelude_is_valid() -> None:
    assert_valid("")


# ----------------------------------------------------------- did you mean
def test_unknown_name_suggests_a_state_item() -> None:
    assert_errors("""
        tool whoami() -> str "The signed-in customer's name." {
          require current != none else "Not signed in."
          return curent.name
        }
        """, [{"code": "WS201", "message": "unknown name 'curent'", "locations": [(3, 10)],
               "hints": ["did you mean 'current'?"]}])


def test_unknown_name_suggests_a_local() -> None:
    # The misspelt local is also unused; like rustc, both are reported.
    assert_errors("""
        tool count_all() -> int "How many orders there are." {
          let order_count = count(orders)
          return ordr_count
        }
        """, [{"code": "WS408", "message": "'order_count' is never used", "locations": [(2, 7)]},
              {"code": "WS201", "message": "unknown name 'ordr_count'", "locations": [(3, 10)],
               "hints": ["did you mean 'order_count'?"]}])


def test_unknown_name_suggests_a_member_of_the_expected_enum() -> None:
    assert_errors("""
        tool ship(order: Order "The order.") "Ship an order." {
          order.status = shiped
        }
        """, [{"code": "WS201", "message": "unknown name 'shiped'", "locations": [(2, 18)],
               "hints": ["did you mean 'shipped'?"]}])


def test_unknown_name_without_a_close_name_has_no_hint() -> None:
    assert_errors("""
        tool t() -> int "Nothing useful." { return zebra }
        """, [{"code": "WS201", "message": "unknown name 'zebra'", "locations": [(1, 44)],
               "hints": []}])


def test_unknown_type_suggests_a_declared_type() -> None:
    assert_errors("""
        record Receipt "A receipt." { order: Ordr }
        """, [{"code": "WS202", "message": "unknown type 'Ordr'", "locations": [(1, 38)],
               "hints": ["did you mean 'Order'?"]}])


def test_unknown_type_suggests_a_builtin_type() -> None:
    assert_errors("""
        record Receipt "A receipt." { printed_at: datetme }
        """, [{"code": "WS202", "message": "unknown type 'datetme'", "locations": [(1, 43)],
               "hints": ["did you mean 'datetime' or 'date'?"]}])


def test_unknown_field_suggests_a_field() -> None:
    assert_errors("""
        tool total_of(order: Order "The order.") -> float "What an order costs." {
          return order.totl
        }
        """, [{"code": "WS205", "message": "Order has no field 'totl'", "locations": [(2, 16)],
               "hints": ["did you mean 'total'?"]}])


def test_unknown_method_suggests_a_method() -> None:
    assert_errors("""
        tool shout(c: Customer "Who.") -> str "A customer's name in capitals." {
          return c.name.uper()
        }
        """, [{"code": "WS205", "message": "str has no method 'uper'", "locations": [(2, 17)],
               "hints": ["did you mean 'upper' or 'isupper'?"]}])


def test_unknown_method_without_a_close_name_lists_the_methods() -> None:
    assert_errors("""
        tool first(c: Customer "Who.") -> bool "Whether the customer has orders." {
          return orders.exists(c.id)
        }
        """, [{"code": "WS205", "message": "table Order has no method 'exists'",
               "locations": [(2, 17)], "hints": ["table Order has: get, keys"]}])


def test_unknown_function_suggests_a_builtin() -> None:
    assert_errors("""
        tool n() -> int "How many customers." { return lenght(customers) }
        """, [{"code": "WS206", "message": "unknown function 'lenght'", "locations": [(1, 48)],
               "hints": ["did you mean 'len'?"]}])


def test_unknown_function_suggests_a_helper() -> None:
    assert_errors("""
        fn full_address(a: Address) -> str { return f"{a.street}, {a.city}" }
        tool where(c: Customer "Who.") -> str "Where a customer lives." {
          require c.address != none else "No address."
          return full_adress(c.address)
        }
        """, [{"code": "WS206", "message": "unknown function 'full_adress'",
               "locations": [(4, 10)], "hints": ["did you mean 'full_address'?"]}])


def test_unknown_solution_tool_suggests_a_tool() -> None:
    assert_errors("""
        tool ship(order: Order "The order.") "Ship an order." { order.status = shipped }
        task t in Shop {
          instruction "Ship order O1."
          check shipped: orders["O1"].status == shipped
          solution { shp(order: "O1") }
        }
        """, [{"code": "WS206", "message": "world Shop has no tool 'shp'",
               "locations": [(5, 14)], "hints": ["did you mean 'ship'?"]}])


def test_unknown_enum_member_suggests_a_member() -> None:
    assert_errors("""
        tool ship(order: Order "The order.") "Ship an order." {
          order.status = OrderStatus.shiped
        }
        """, [{"code": "WS207", "message": "enum OrderStatus has no member 'shiped'",
               "locations": [(2, 30)], "hints": ["did you mean 'shipped'?"]}])


def test_unknown_case_suggests_a_member() -> None:
    assert_errors("""
        tool label(order: Order "The order.") -> str "A label for an order's status." {
          match order.status {
            case pending { return "new" }
            case canceled { return "gone" }
            else { return "moving" }
          }
        }
        """, [{"code": "WS207", "message": "enum OrderStatus has no member 'canceled'",
               "locations": [(4, 10)], "hints": ["did you mean 'cancelled'?"]}])


# ------------------------------------------------------------ related spans
def test_duplicate_type_points_at_the_first_definition() -> None:
    result = check_snippet("""
        record Address "Again." { zip: str }
        """)
    [d] = result.diagnostics
    assert (d.code, d.message, d.span.line, d.span.column) == (
        "WS203", "type 'Address' is defined twice", PRELUDE_LINES + 1, 8)
    first = PRELUDE.splitlines().index('record Address "A postal address." { street: str  '
                                       'city: str }') + 1
    assert [(r.message, r.span.line, r.span.column) for r in d.related] == [
        ("first defined here", first, 8)]


def test_state_item_named_like_a_type_points_at_the_type() -> None:
    source = PRELUDE.replace("current: Customer? = none", "Address: int = 0")
    result = check_source(source, "snippet.world")
    [d] = result.diagnostics
    assert (d.code, d.message) == ("WS203", "name 'Address' is defined twice")
    assert [(r.message, r.span.line) for r in d.related] == [("first defined here", 4)]


def test_duplicate_tool_points_at_the_first_definition() -> None:
    assert_errors("""
        tool ping() -> str "Answer." { return "pong" }
        tool ping() -> str "Answer again." { return "pong" }
        """, [{"code": "WS203", "message": "tool 'ping' is defined twice",
               "locations": [(2, 6)], "related": [("first defined here", (1, 6))]}])


def test_duplicate_invariant_points_at_the_first_definition() -> None:
    assert_errors("""
        invariant paid: all o in orders: o.total >= 0.0
        invariant paid: all o in orders: o.total < 1000000.0
        """, [{"code": "WS203", "message": "invariant 'paid' is defined twice",
               "locations": [(2, 11)], "related": [("first defined here", (1, 11))]}])


def test_duplicate_task_points_at_the_first_definition() -> None:
    assert_errors("""
        task t in Shop { instruction "Do nothing." check ok: len(orders) == 0 }
        task t in Shop { instruction "Do nothing again." check ok: len(orders) == 0 }
        """, [{"code": "WS203", "message": "task 't' is defined twice in world Shop",
               "locations": [(2, 6)], "related": [("first defined here", (1, 6))]}])


def test_duplicate_across_an_import_points_into_the_imported_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("types.world").write_text('record Address "A postal address." { city: str }\n',
                                   encoding="utf-8")
    Path("shop.world").write_text(dedent("""\
        import "types.world"
        world Shop "An online shop."
        record Address "A street address." { street: str }
        state { warehouse: Address? = none }
        """), encoding="utf-8")
    result = check_specs(["shop.world"])
    [d] = result.diagnostics
    assert (d.code, d.message) == ("WS203", "type 'Address' is defined twice")
    assert (d.span.file, d.span.line, d.span.column) == ("shop.world", 3, 8)
    assert [(r.message, r.span.file, r.span.line, r.span.column) for r in d.related] == [
        ("first defined here", "types.world", 1, 8)]


@pytest.mark.parametrize(("snippet", "message", "location", "first"), [
    ("record Point { x: int  y: int  x: int }", "field 'x' is defined twice", (1, 32), (1, 16)),
    ("enum Size { small, large, small }", "enum member 'small' is defined twice", (1, 27),
     (1, 13)),
    ('tool t(a: int "A.", a: int "A again.") "Twice." { }', "parameter 'a' is defined twice",
     (1, 21), (1, 8)),
    ("task t in Shop { instruction \"Look.\" check a: true check a: true }",
     "check 'a' is defined twice", (1, 58), (1, 44)),
])
def test_duplicate_member_points_at_the_first_one(
        snippet: str, message: str, location: tuple[int, int], first: tuple[int, int]) -> None:
    assert_errors(snippet, [{"code": "WS204", "message": message, "locations": [location],
                             "related": [("first defined here", first)]}])


def test_duplicate_config_key_points_at_the_first_one() -> None:
    source = PRELUDE.replace('world Shop "An online shop."\n',
                             'world Shop "An online shop."\nconfig { tick: 1  tick: 2 }\n')
    result = check_source(source, "snippet.world")
    [d] = result.diagnostics
    assert (d.code, d.message, d.span.line, d.span.column) == (
        "WS204", "config key 'tick' is defined twice", 2, 19)
    assert [(r.message, r.span.line, r.span.column) for r in d.related] == [
        ("first defined here", 2, 10)]


def test_duplicate_enum_value_points_at_the_first_use() -> None:
    assert_errors("""
        enum Size { small = "S", smallish = "S" }
        """, [{"code": "WS204", "message": "enum value 'S' is used twice",
               "locations": [(1, 26)], "related": [("first used here", (1, 13))]}])


def test_duplicate_local_points_at_the_first_binding() -> None:
    assert_errors("""
        tool t() -> int "Twice." {
          let n = count(orders)
          for n in [1, 2] { }
          return n
        }
        """, [{"code": "WS210", "message": "'n' is already defined", "locations": [(3, 7)],
               "related": [("first defined here", (2, 7))]}])


def test_duplicate_case_points_at_the_first_case() -> None:
    assert_errors("""
        tool t(order: Order "The order.") -> int "Twice." {
          match order.status {
            case pending { return 1 }
            case pending { return 2 }
            else { return 3 }
          }
        }
        """, [{"code": "WS406", "message": "'pending' is matched twice", "locations": [(4, 10)],
               "related": [("first matched here", (3, 10))]}])


# ------------------------------------------------------- optional narrowing
NARROWED = [
    pytest.param("""
        require current != none else "Not signed in."
        return current.name
        """, id="after-require"),
    pytest.param("""
        if current != none { return current.name }
        return ""
        """, id="inside-if"),
    pytest.param("""
        if current == none { return "" }
        return current.name
        """, id="after-if-none-return"),
    pytest.param("""
        if current == none { fail "Not signed in." }
        return current.name
        """, id="after-if-none-fail"),
    pytest.param("""
        if current == none { return "" } else { return current.name }
        """, id="else-of-if-none"),
    pytest.param("""
        if not (current == none) { return current.name }
        return ""
        """, id="inside-if-not-none"),
    pytest.param("""
        return if current != none and current.name != "" then current.name else "nobody"
        """, id="right-of-and"),
    pytest.param("""
        return if current == none or current.name == "" then "nobody" else current.name
        """, id="right-of-or-none-and-else-branch"),
    pytest.param("""
        require current != none and current.referrer != none else "No referrer."
        return current.referrer.name
        """, id="field-path"),
    pytest.param("""
        return [c.referrer.name for c in customers if c.referrer != none][0]
        """, id="comprehension-filter"),
    pytest.param("""
        let names = [c.name for c in customers]
        require current != none else "Not signed in."
        let me = current
        current = none
        return me.name + names[0]
        """, id="local-copy-stays-narrowed"),
    pytest.param("""
        for c in customers {
          let r = c.referrer
          if r == none { continue }
          return r.name
        }
        return ""
        """, id="after-if-none-continue"),
    pytest.param("""
        for c in customers {
          if current == none { break }
          return current.name
        }
        return ""
        """, id="after-if-none-break"),
    pytest.param("""
        let i = 0
        while i < 3 {
          i += 1
          let r = customers.get("C1")
          if r == none { continue } else if r.name == "" { break }
          return r.name
        }
        return ""
        """, id="after-if-none-continue-in-while"),
]

NOT_NARROWED = [
    pytest.param("""
        return current.name
        """, (1, 8), id="unchecked"),
    pytest.param("""
        if current != none { }
        return current.name
        """, (2, 8), id="after-if-without-exit"),
    pytest.param("""
        return if current != none or current.name == "" then "x" else "y"
        """, (1, 30), id="right-of-or"),
    pytest.param("""
        return if current.name == "" and current != none then "x" else "y"
        """, (1, 11), id="left-of-and"),
    pytest.param("""
        return if current == none then current.name else "y"
        """, (1, 32), id="then-of-if-none"),
    pytest.param("""
        require current != none else "Not signed in."
        current = none
        return current.name
        """, (3, 8), id="after-reassignment"),
    pytest.param("""
        for o in orders { require current != none else "Not signed in." }
        return current.name
        """, (2, 8), id="require-inside-a-loop"),
    pytest.param("""
        require current != none else "Not signed in."
        return current.referrer.name
        """, (2, 8), id="other-path"),
    pytest.param("""
        for c in customers { if current == none { break } }
        return current.name
        """, (2, 8), id="break-narrows-only-inside-the-loop"),
    pytest.param("""
        for c in customers {
          if current != none { continue }
          return current.name
        }
        return ""
        """, (3, 10), id="after-if-not-none-continue"),
]


def in_tool(body: str) -> str:
    """``body`` as the body of a tool returning str; body line k is snippet line k + 1."""
    return ('tool whoami() -> str "The signed-in customer\'s name." {\n'
            + dedent(body).strip() + "\n}\n")


@pytest.mark.parametrize("body", NARROWED)
def test_narrowed_optional_is_not_reported(body: str) -> None:
    assert_valid(in_tool(body))


@pytest.mark.parametrize(("body", "location"), NOT_NARROWED)
def test_unnarrowed_optional_is_reported(body: str, location: tuple[int, int]) -> None:
    result = check_snippet(in_tool(body))
    found = [(d.code, d.span.line - PRELUDE_LINES - 1, d.span.column) for d in result.diagnostics]
    assert found == [("WS305", *location)]


def test_unnarrowed_optional_message_and_hint() -> None:
    assert_errors("""
        tool whoami() -> str "The signed-in customer's name." { return current.name }
        """, [{"code": "WS305", "message": "'name' is read from a value that may be none "
               "(Customer?)", "locations": [(1, 64)],
               "hints": ['check it first: `require x != none else "..."`, or use `??`']}])


@pytest.mark.parametrize(("body", "message"), [
    ("return current.name.upper()", "'name' is read from a value that may be none (Customer?)"),
    ("for o in current.referrer { }", "'referrer' is read from a value that may be none "
     "(Customer?)"),
    ("let a = current.address\nreturn a.city", "'city' is read from a value that may be none "
     "(Address?)"),
])
def test_every_use_of_an_optional_is_checked(body: str, message: str) -> None:
    result = check_snippet(in_tool(body + '\nreturn ""'))
    assert message in [d.message for d in result.diagnostics if d.code == "WS305"]


# --------------------------------------------------------- bare enum members
ENUM_EXPECTED = [
    pytest.param('entity Parcel "A parcel." { key id: str  status: OrderStatus = shipped }',
                 id="field-default"),
    pytest.param('tool t(status: OrderStatus = pending "Filter.") "Default." { }',
                 id="parameter-default"),
    pytest.param('tool t(o: Order "O.") "Assign." { o.status = shipped }', id="assignment"),
    pytest.param('tool t(o: Order "O.") -> bool "Compare." { return o.status == shipped }',
                 id="comparison"),
    pytest.param('tool t(o: Order "O.") -> bool "Compare." { return o.status != cancelled }',
                 id="inequality"),
    pytest.param('fn is_open(s: OrderStatus) -> bool { return s != cancelled }\n'
                 'tool t() -> bool "Call." { return is_open(pending) }', id="argument"),
    pytest.param('tool t() -> OrderStatus "Return." { return delivered }', id="return"),
    pytest.param('tool t(o: Order "O.") "Append." { append shipped to o.history }',
                 id="append"),
    pytest.param('tool t(o: Order "O.") -> bool "In." { return shipped in o.history }',
                 id="membership"),
    pytest.param('tool t(o: Order "O.") "List." { o.history = [pending, shipped] }',
                 id="list-literal"),
    pytest.param('tool t() -> OrderStatus "Let." { let s: OrderStatus = pending\nreturn s }',
                 id="typed-let"),
    pytest.param('record Line "A line." { status: OrderStatus }\n'
                 'tool t() -> Line "Build." { return Line(status: pending) }',
                 id="constructor-field"),
    pytest.param('task t in Shop { instruction "Look." '
                 'check none_shipped: all o in orders: o.status != shipped }', id="check"),
]


@pytest.mark.parametrize("snippet", ENUM_EXPECTED)
def test_bare_enum_member_where_the_enum_is_expected(snippet: str) -> None:
    assert_valid(snippet)


@pytest.mark.parametrize(("snippet", "name"), [
    pytest.param('tool t() "Let." { let _s = pending }', "pending", id="untyped-let"),
    pytest.param('tool t() -> int "Len." { return len(pending) }', "pending", id="builtin-arg"),
    pytest.param('tool t(o: Order "O.") "Other enum." { o.status = red }', "red",
                 id="member-of-another-enum"),
    pytest.param('tool t() -> str "Text." { return shipped }', "shipped", id="str-expected"),
    pytest.param('tool t(o: Order "O.") -> bool "Left." { return shipped == o.status }',
                 "shipped", id="left-of-comparison"),
])
def test_bare_enum_member_elsewhere_is_unknown(snippet: str, name: str) -> None:
    result = check_snippet(snippet)
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("WS201", f"unknown name '{name}'")]


def test_qualified_enum_member_works_everywhere() -> None:
    assert_valid("""
        tool t(o: Order "O.") -> bool "Qualified." {
          let s = OrderStatus.shipped
          return s == o.status and OrderStatus.pending != o.status
        }
        """)


# ------------------------------------------------------------ flow: WS401/2
def test_exhaustive_match_without_else_returns_on_every_path() -> None:
    assert_valid("""
        tool label(o: Order "O.") -> str "A label." {
          match o.status {
            case pending { return "new" }
            case shipped { return "moving" }
            case delivered { return "done" }
            case cancelled { fail "Cancelled orders have no label." }
          }
        }
        """)


def test_code_after_an_exhaustive_match_is_unreachable() -> None:
    assert_errors("""
        tool label(o: Order "O.") -> str "A label." {
          match o.status {
            case pending { return "new" }
            case shipped { return "moving" }
            case delivered { return "done" }
            case cancelled { return "gone" }
          }
          return "?"
        }
        """, [{"code": "WS401", "message": "unreachable code", "locations": [(8, 3)],
               "related": [("the block always ends here", (2, 3))]}])


def test_partial_match_without_else_can_fall_through() -> None:
    result = check_snippet("""
        tool label(o: Order "O.") -> str "A label." {
          match o.status {
            case pending { return "new" }
          }
        }
        """)
    assert [d.code for d in result.diagnostics] == ["WS402", "WS407"]


# ----------------------------------------------------------- fixed bugs
def test_positional_constructor_argument_is_one_error() -> None:
    assert_errors("""
        tool t(street: str "Street.") -> Address "Build." {
          return Address(street, city: "Austin")
        }
        """, [{"code": "WS303", "message": "Address(...) takes named arguments: "
               "Address(street: ...)", "locations": [(2, 18)]}])


def test_misspelled_solution_argument_is_one_error() -> None:
    result = check_snippet("""
        tool ship(order: Order "The order.") "Ship an order." { order.status = shipped }
        task t in Shop {
          instruction "Ship order O1."
          check shipped: orders["O1"].status == shipped
          solution { ship(ordr: "O1") }
        }
        """)
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("WS606", "tool ship has no parameter 'ordr'")]


def test_task_without_instruction_message() -> None:
    result = check_snippet("""
        task t in Shop { check none: len(orders) == 0 }
        """)
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("WS609", "task 't' has no instruction")]


def test_lambda_passed_to_count_is_ws311() -> None:
    result = check_snippet("""
        tool t() -> int "Count." { return count(orders, o => o.total > 10.0) }
        """)
    assert [d.code for d in result.diagnostics] == ["WS311"]


def test_lambda_passed_to_a_helper_names_the_helper() -> None:
    result = check_snippet("""
        fn double(x: int) -> int { return x * 2 }
        tool t() -> int "Call." { return double(v => v) }
        """)
    [d] = result.diagnostics
    assert d.code == "WS311"
    assert "double()" in d.message


def test_misspelled_case_is_one_diagnostic() -> None:
    result = check_snippet("""
        tool t(o: Order "O.") "Misspelled case." {
          match o.status {
            case pending { o.total = 0.0 }
            case shiped { o.total = 1.0 }
            case delivered { o.total = 2.0 }
            case cancelled { o.total = 3.0 }
          }
        }
        """)
    assert [d.code for d in result.diagnostics] == ["WS207"]


def test_bare_member_compared_with_an_erroneous_value_is_not_reported() -> None:
    result = check_snippet("""
        tool t(o: Order "O.") -> bool "Cascade." {
          return o.statu == shipped
        }
        """)
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("WS205", "Order has no field 'statu'")]


def test_bare_member_without_an_expected_enum_hints_the_qualified_name() -> None:
    result = check_snippet("""
        tool t() "Let." { let _s = pending }
        """)
    [d] = result.diagnostics
    assert (d.code, d.message) == ("WS201", "unknown name 'pending'")
    assert any("OrderStatus.pending" in hint for hint in d.hints)


def test_append_to_a_table_is_one_error() -> None:
    result = check_snippet("""
        tool t(c: Customer "C.") "Append." { append c to customers }
        """)
    assert [d.code for d in result.diagnostics] == ["WS405"]


def test_duplicate_state_item_is_a_duplicate_member() -> None:
    source = PRELUDE.replace("current: Customer? = none", "orders: table Order")
    result = check_source(source, "snippet.world")
    assert [d.code for d in result.diagnostics] == ["WS204"]


def test_unknown_enum_member_in_data_is_ws207() -> None:
    result = check_snippet("""
        task t in Shop {
          given {
            customers: [{id: "C1", name: "Ann"}],
            orders: [{id: "O1", buyer: "C1", status: shiped}],
          }
          instruction "Look."
          check ok: len(orders) == 1
        }
        """)
    assert [d.code for d in result.diagnostics] == ["WS207"]


def check_importer(folder: Path, monkeypatch: pytest.MonkeyPatch, target: str) -> CheckResult:
    """Check ``shop.world`` in ``folder``, which imports ``target``."""
    monkeypatch.chdir(folder)
    Path("shop.world").write_text(f'import "{target}"\nworld Shop "An online shop."\n'
                                  'state { open: bool = true }\n', encoding="utf-8")
    return check_specs(["shop.world"])


def test_missing_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = check_importer(tmp_path, monkeypatch, "types.world")
    [d] = result.diagnostics
    assert (d.code, d.message, d.span.line, d.span.column) == (
        "WS106", "cannot import 'types.world': 'types.world' does not exist", 1, 1)


def test_missing_import_has_no_redundant_note(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    [d] = check_importer(tmp_path, monkeypatch, "types.world").diagnostics
    assert d.related == ()


def test_self_import_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    [d] = check_importer(tmp_path, monkeypatch, "shop.world").diagnostics
    assert (d.code, d.span.line) == ("WS106", 1)


def test_self_import_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    [d] = check_importer(tmp_path, monkeypatch, "shop.world").diagnostics
    assert "itself" in d.message
    assert not any("both" in hint for hint in d.hints)


def test_rules_run_on_library_files() -> None:
    result = check_source(dedent("""\
        fn sign(x: int) -> int {
          if x > 0 { return 1 }
        }
        """), "library.world")
    assert [d.code for d in result.diagnostics] == ["WS402"]


@pytest.mark.parametrize("expression", [
    pytest.param(" and ".join(["true"] * 400), id="long-and-chain"),
    pytest.param(" + ".join(['"a"'] * 600) + ' == ""', id="long-concatenation"),
    pytest.param("not " * 400 + "true", id="many-nots"),
    pytest.param("if true then " * 300 + "true" + " else false" * 300, id="nested-if"),
])
def test_very_long_expressions_do_not_crash(expression: str) -> None:
    limit = sys.getrecursionlimit()
    result = check_snippet(f'fn f() -> bool {{ return {expression} }}')
    assert sys.getrecursionlimit() == limit
    assert [d.code for d in result.diagnostics] in ([], ["WS105"])


def test_json_literals_take_any_json_values() -> None:
    """Where `json` is expected, list and map literals may mix value types."""
    result = check_source(dedent('''\
        world J "JSON results."
        state { n: int = 1 }
        tool status() -> json "A status." {
          return {"ok": true, "id": "U" + str(n), "tags": [1, "a", none]}
        }
        tool bad() -> json "A bad key." {
          return {1: "x"}
        }
        '''), "j.world")
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("WS301", "JSON object key: expected str, found int")]


# ----------------------------------------------- several syntax errors at once
THREE_BROKEN_DECLARATIONS = """\
world Library "A small lending library."

entity Book "A book on the shelf." {
  key id: str
  title str
}

state {
  books: table Book
}

tool lend(book: Book "The book.") -> int "Lend a book." {
  let due = 0 if book.title == "" else 14
  return due
}

tool titles() -> list[str] "All titles." {
  return [b.title for b in books if]
}
"""


def test_three_syntax_errors_in_three_declarations_cost_one_round(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 17: a syntax error must not hide the next ones (N errors, one repair round)."""
    from worldspec.cli.main import main

    spec = tmp_path / "library.world"
    spec.write_text(THREE_BROKEN_DECLARATIONS, encoding="utf-8")
    expected = [("WS101", 5), ("WS110", 13), ("WS101", 18)]
    result = check_specs([spec])
    assert [(d.code, d.span.line) for d in result.diagnostics] == expected
    assert main(["check", "--format", "json", str(spec)]) == 1
    import json

    reported = json.loads(capsys.readouterr().out)
    assert [(d["code"], d["line"]) for d in reported] == expected
