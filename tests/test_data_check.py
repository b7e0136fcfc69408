"""Tests of :mod:`compiler.data_check`: a task's ``given`` data against the world schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worldspec.compiler.api import CheckResult, check_source
from worldspec.compiler.data_check import (
    MAX_PROBLEMS,
    check_given,
    data_to_python,
    load_initial_data,
)
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import Diagnostic, DiagnosticSink

WORLD = """\
world Shop "A test shop."

enum Status { pending, shipped, return_requested = "return requested" }

type Sku = str matching /^SKU[0-9]{3}$/

record Address { street: str  city: str  zip: str(5..5)  country: str = "USA" }

record Card { id: str  last_four: str }
record Gift { id: str  balance: float }
union Payment by source { card: Card, gift: Gift }

entity User {
  key id: str
  name: str(1..20)
  age: int(0..150)
  email: str?
  address: Address?
  tags: set[str](..3) = []
  scores: map[str, int] = {}
}

entity Order {
  key id: str
  user: User
  status: Status = pending
  total: float
  placed: date
  at: datetime
  wait: duration = seconds(0)
  lines: list[Sku](1..)
  payment: Payment?
  extra: json
  notes: map[int, str] = {}
  counts: map[Status, int] = {}
  watchers: list[User] = []
}

entity Box { key n: int  label: str }

state {
  users: table User
  orders: table Order
  boxes: table Box
  order_ids: sequence "O{:03d}"
  current_user: User? = none
  flag: bool = false
  limits: map[str, float] = {}
}
"""

USER = '{id: "U1", name: "Ann", age: 30}'
ORDER_FIELDS = {"id": '"#W1"', "user": '"U1"', "total": "9.5", "placed": '"2024-05-01"',
                "at": '"2024-05-01T10:00:00"', "lines": '["SKU001"]', "extra": "none"}


def order(**changes: str) -> str:
    """An inline order row: the valid one with some fields replaced or added."""
    fields = {**ORDER_FIELDS, **changes}
    return "{" + ", ".join(f"{k}: {v}" for k, v in fields.items()) + "}"


ORDER = order()
ORDER_JSON = {"id": "#W1", "user": "U1", "total": 9.5, "placed": "2024-05-01",
              "at": "2024-05-01T10:00:00", "lines": ["SKU001"], "extra": None}


# ------------------------------------------------------------------ helpers
def spec_with(givens: str) -> str:
    """The world plus one task whose items start with ``givens``."""
    return (WORLD + "\ntask t in Shop {\n" + givens + "\n  instruction \"Do it.\"\n"
            "  check ok: true\n}\n")


def check(tmp_path: Path, givens: str, files: dict[str, str | bytes] | None = None
          ) -> CheckResult:
    """Check the world with a task; ``files`` are written next to the spec."""
    for name, content in (files or {}).items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return check_source(spec_with(givens), str(tmp_path / "shop.world"))


def data_diags(result: CheckResult) -> list[Diagnostic]:
    """Diagnostics about data: WS60x, and WS207 for members and tags the type lacks."""
    return [d for d in result.diagnostics if d.code.startswith("WS60") or d.code == "WS207"]


def only(result: CheckResult, code: str) -> Diagnostic:
    """The one diagnostic of the result, which must have ``code``."""
    found = data_diags(result)
    assert [d.code for d in found] == [code], [(d.code, d.message) for d in found]
    return found[0]


def line_of(givens: str, needle: str) -> int:
    """The 1-based line of ``needle`` in the spec built from ``givens``."""
    text = spec_with(givens)
    return text[:text.index(needle)].count("\n") + 1


def column_of(givens: str, needle: str) -> int:
    text = spec_with(givens)
    at = text.index(needle)
    return at - text.rfind("\n", 0, at)


def task_node(result: CheckResult) -> n.TaskDecl:
    return result.model.worlds["Shop"].tasks["t"].node


def load(result: CheckResult, tmp_path: Path) -> tuple[dict[str, object] | None, DiagnosticSink]:
    sink = DiagnosticSink()
    world = result.model.worlds["Shop"]
    return load_initial_data(task_node(result), str(tmp_path / "shop.world"), world, sink), sink


# ---------------------------------------------------------------- clean data
def test_clean_data_is_merged_and_normalised(tmp_path: Path) -> None:
    seed = {
        "users": [
            {"id": "U1", "name": "Ann", "age": 30, "tags": ["a", "b"], "scores": {"x": 1}},
            {"id": "U2", "name": "Bob", "age": 41, "email": None,
             "address": {"street": "1 Main St", "city": "Austin", "zip": "78701"}},
        ],
        "orders": {
            "#W1": {"user": "U1", "status": "return requested", "total": 10,
                    "placed": "2024-05-01", "at": "2024-05-01T10:00:00", "wait": 90.5,
                    "lines": ["SKU001", "SKU002"],
                    "payment": {"source": "gift", "id": "g1", "balance": 5},
                    "extra": {"any": [1, "two", None]}, "notes": {"3": "three", "-1": "neg"},
                    "counts": {"shipped": 2}, "watchers": ["U2"]},
        },
        "order_ids": 1,
        "current_user": "U2",
        "limits": {"daily": 100},
    }
    givens = ('  given "data/seed.json"\n'
              '  given { current_user: "U1", flag: true,\n'
              '          boxes: {"7": {label: "seven"}, "8": {n: 8, label: "eight"}},\n'
              '          users: [{id: "U1", name: "Ann", age: 30}, '
              '{id: "U2", name: "Bob", age: 41}] }\n'
              '  given { orders: [{id: "#W1", user: "U1", status: return_requested, total: 1,\n'
              '                    placed: "2024-05-01", at: "2024-05-01T10:00:00",\n'
              '                    lines: ["SKU001"], extra: none,\n'
              '                    counts: {shipped: 1, "return requested": 2},\n'
              '                    payment: {source: card, id: "c1", last_four: "4242"}}] }')
    result = check(tmp_path, givens, {"data/seed.json": json.dumps(seed)})
    assert data_diags(result) == []
    data, sink = load(result, tmp_path)
    assert sink.diagnostics == []
    assert data == {
        "users": [{"id": "U1", "name": "Ann", "age": 30}, {"id": "U2", "name": "Bob", "age": 41}],
        "orders": [{"id": "#W1", "user": "U1", "status": "return requested", "total": 1.0,
                    "placed": "2024-05-01", "at": "2024-05-01T10:00:00", "lines": ["SKU001"],
                    "extra": None, "counts": {"shipped": 1, "return requested": 2},
                    "payment": {"source": "card", "id": "c1", "last_four": "4242"}}],
        "order_ids": 1,
        "current_user": "U1",
        "limits": {"daily": 100.0},
        "flag": True,
        "boxes": [{"n": 7, "label": "seven"}, {"n": 8, "label": "eight"}],
    }
    assert list(data) == ["users", "orders", "order_ids", "current_user", "limits", "flag",
                          "boxes"]


def test_file_data_is_normalised(tmp_path: Path) -> None:
    seed = {
        "users": [{"id": "U1", "name": "Ann", "age": 30, "tags": ["a"], "scores": {"x": 1}}],
        "orders": {"#W1": {**{k: v for k, v in ORDER_JSON.items() if k != "id"},
                           "total": 3, "notes": {"3": "three", "-1": "neg"},
                           "payment": {"source": "gift", "id": "g1", "balance": 5},
                           "extra": {"any": [1, "two", None]}, "watchers": ["U1"]}},
    }
    result = check(tmp_path, '  given "seed.json"', {"seed.json": json.dumps(seed)})
    assert data_diags(result) == []
    data, _ = load(result, tmp_path)
    assert data == {
        "users": [{"id": "U1", "name": "Ann", "age": 30, "tags": ["a"], "scores": {"x": 1}}],
        "orders": [{"id": "#W1", "user": "U1", "total": 3.0, "placed": "2024-05-01",
                    "at": "2024-05-01T10:00:00", "lines": ["SKU001"],
                    "notes": {3: "three", -1: "neg"},
                    "payment": {"source": "gift", "id": "g1", "balance": 5.0},
                    "extra": {"any": [1, "two", None]}, "watchers": ["U1"]}],
    }
    orders = data["orders"]
    assert isinstance(orders, list)
    assert isinstance(orders[0]["total"], float)
    assert next(iter(orders[0])) == "id"  # the key is injected first


def test_task_without_given_loads_empty(tmp_path: Path) -> None:
    result = check(tmp_path, "")
    assert load(result, tmp_path)[0] == {}


def test_data_to_python() -> None:
    result = check_source(spec_with('  given { a: [1, -2.5, "x", true, none, sent], b: {c: {}}, '
                                    'b: 3 }'))
    node = task_node(result).givens[0].source
    assert isinstance(node, n.DataObject)
    value = data_to_python(node)
    assert value == {"a": [1, -2.5, "x", True, None, "sent"], "b": 3}
    assert type(value) is dict
    items = value["a"]
    assert isinstance(items, list)
    assert type(items[5]) is str


# ---------------------------------------------------------------- files (WS604)
def test_missing_file(tmp_path: Path) -> None:
    d = only(check(tmp_path, '  given "data/nope.json"'), "WS604")
    assert d.span.line == line_of('  given "data/nope.json"', "given")
    assert '"data/nope.json" does not exist' in d.message
    assert str(tmp_path / "data" / "nope.json") in d.message


def test_invalid_json_reports_line_and_column(tmp_path: Path) -> None:
    d = only(check(tmp_path, '  given "bad.json"', {"bad.json": '{\n  "users": [1,,]\n}'}),
             "WS604")
    assert "is not valid JSON" in d.message
    assert "line 2, column 15" in d.message


def test_file_not_utf8(tmp_path: Path) -> None:
    d = only(check(tmp_path, '  given "latin.json"', {"latin.json": b'{"users": "\xe9"}'}),
             "WS604")
    assert "not valid UTF-8" in d.message and "offset 11" in d.message


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    d = only(check(tmp_path, '  given "dir"'), "WS604")
    assert "is a directory" in d.message


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_device_is_not_a_data_file(tmp_path: Path) -> None:
    d = only(check(tmp_path, '  given "/dev/null"'), "WS604")
    assert d.message == 'data file "/dev/null" is not a regular file'


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    result = check(tmp_path, '  given "bom.json"', {"bom.json": b'\xef\xbb\xbf{"flag": true}'})
    assert data_diags(result) == []


# --------------------------------------------------------- unknown keys (WS602)
def test_unknown_state_with_suggestion(tmp_path: Path) -> None:
    givens = "  given { userz: [] }"
    d = only(check(tmp_path, givens), "WS602")
    assert d.message == "$.userz: world Shop has no state \"userz\""
    assert d.hints == ("did you mean 'users'?",)
    assert (d.span.line, d.span.column) == (line_of(givens, "userz"), column_of(givens, "userz"))


def test_unknown_field_points_at_the_pair(tmp_path: Path) -> None:
    givens = f'  given {{ users: [{USER},\n    {{id: "U2", name: "B", age: 1, nmae: "x"}}] }}'
    d = only(check(tmp_path, givens), "WS602")
    assert d.message == '$.users[1].nmae: User has no field "nmae"'
    assert d.hints == ("did you mean 'name'?",)
    assert (d.span.line, d.span.column) == (line_of(givens, "nmae"), column_of(givens, "nmae"))


def test_unknown_field_of_nested_record_in_file(tmp_path: Path) -> None:
    seed = {"users": [{"id": "U1", "name": "A", "age": 1,
                       "address": {"street": "s", "city": "c", "zip": "12345", "town": "t"}}]}
    givens = '  given "seed.json"'
    d = only(check(tmp_path, givens, {"seed.json": json.dumps(seed)}), "WS602")
    assert d.message == '$.users[0].address.town: Address has no field "town"'
    assert d.span.line == line_of(givens, "given")


# ------------------------------------------------------- missing fields (WS603)
def test_missing_required_field(tmp_path: Path) -> None:
    givens = '  given { users: [{id: "U1", name: "Ann"}] }'
    d = only(check(tmp_path, givens), "WS603")
    assert d.message == "$.users[0]: User is missing field 'age'"
    assert d.span.column == column_of(givens, '{id: "U1"')


def test_missing_fields_are_listed_together(tmp_path: Path) -> None:
    d = only(check(tmp_path, "  given { users: [{id: \"U1\"}] }"), "WS603")
    assert d.message == "$.users[0]: User is missing fields 'name', 'age'"


def test_rows_given_as_a_list_need_their_key(tmp_path: Path) -> None:
    d = only(check(tmp_path, '  given { users: [{name: "Ann", age: 3}] }'), "WS603")
    assert d.message == "$.users[0]: User is missing field 'id'"


def test_union_needs_its_tag(tmp_path: Path) -> None:
    row = order(payment='{id: "c1", last_four: "1"}')
    d = only(check(tmp_path, f"  given {{ users: [{USER}], orders: [{row}] }}"), "WS603")
    assert d.message == ("$.orders[0].payment: Payment needs its tag field 'source' "
                         "(one of card, gift)")


def test_defaults_and_optionals_may_be_left_out(tmp_path: Path) -> None:
    result = check(tmp_path, f"  given {{ users: [{USER}], orders: [{ORDER}] }}")
    assert data_diags(result) == []


# ----------------------------------------------------------- types (WS601)
TYPE_CASES = [
    # (users row fields or other state, expected message)
    ('users: [{id: "U1", name: 42, age: 1}]', "$.users[0].name: expected str, found 42"),
    ('users: [{id: "U1", name: "A", age: true}]', "$.users[0].age: expected int, found true"),
    ('users: [{id: "U1", name: "A", age: 1.5}]', "$.users[0].age: expected int, found 1.5"),
    ('users: [{id: "U1", name: Ann, age: 1}]',
     "$.users[0].name: expected str, found the bare name Ann"),
    ('users: [{id: "U1", name: "A", age: 1, email: 7}]',
     "$.users[0].email: expected str, found 7"),
    ('users: [{id: "U1", name: "A", age: 1, tags: "x"}]',
     "$.users[0].tags: expected an array (set[str]), found \"x\""),
    ('users: [{id: "U1", name: "A", age: 1, tags: ["a", "b", "a"]}]',
     '$.users[0].tags[2]: "a" repeats $.users[0].tags[0]; a set holds each element once'),
    ('users: [{id: "U1", name: "A", age: 1, scores: [1]}]',
     "$.users[0].scores: expected an object (map[str, int]), found an array"),
    ('users: [{id: "U1", name: "A", age: 1, scores: {x: "1"}}]',
     '$.users[0].scores["x"]: expected int, found "1"'),
    ('users: [{id: "U1", name: "A", age: 1, address: "Main St"}]',
     '$.users[0].address: expected Address (an object), found "Main St"'),
    ("flag: 1", "$.flag: expected bool, found 1"),
    ('flag: "true"', '$.flag: expected bool, found "true"'),
    ("limits: {daily: true}", '$.limits["daily"]: expected float, found true'),
    ("order_ids: -1", "$.order_ids: expected the current counter of sequence order_ids "
     "(an int >= 0), found -1"),
    ("order_ids: true", "$.order_ids: expected the current counter of sequence order_ids "
     "(an int >= 0), found true"),
    ("users: 3", "$.users: expected User rows (an array, or an object keyed by id), found 3"),
    ("users: [3]", "$.users[0]: expected a row of User (an object), found 3"),
    ('boxes: {"x": {label: "a"}}', '$.boxes["x"] (the key): int keys are decimal integers in '
     'data, found "x"'),
    ("current_user: {id: \"U1\"}", "$.current_user: expected a key of User (str), found "
     "an object"),
]


@pytest.mark.parametrize(("data", "message"), TYPE_CASES)
def test_type_mismatch(tmp_path: Path, data: str, message: str) -> None:
    givens = f"  given {{ {data} }}"
    d = only(check(tmp_path, givens), "WS601")
    assert d.message == message


ORDER_CASES = [
    ("placed", '"2024-13-01"', '$.orders[0].placed: "2024-13-01" is not a date ("YYYY-MM-DD")'),
    ("placed", '"20240501"', '$.orders[0].placed: "20240501" is not a date ("YYYY-MM-DD")'),
    ("placed", "20240501", '$.orders[0].placed: expected a date ("YYYY-MM-DD"), found 20240501'),
    ("at", '"yesterday"', '$.orders[0].at: "yesterday" is not an ISO datetime'),
    ("at", '"2024-05-01T10:00:00+02:00"', "has a UTC offset"),
    ("wait", '"1h"', '$.orders[0].wait: expected a duration (a number of seconds), found "1h"'),
    ("total", "none", "$.orders[0].total: expected float, found none"),
    ("status", "sent", "$.orders[0].status: Status has no member 'sent'"),
    ("status", '"shiped"', '$.orders[0].status: "shiped" is not in Status; expected one of '
     '"pending", "shipped", "return requested"'),
    ("status", "1", '$.orders[0].status: expected Status ("pending", "shipped", '
     '"return requested"), found 1'),
    ("payment", '{source: "paypal", id: "p"}', '$.orders[0].payment.source: "paypal" is not '
     "a variant of Payment; the tags are card, gift"),
    ("payment", '{source: "gift", id: "g", balance: "5"}',
     '$.orders[0].payment.balance: expected float, found "5"'),
    ("notes", '{"01": "x"}', '$.orders[0].notes["01"] (the key): int keys are decimal '
     'integers in data, found "01"'),
    ("counts", "{sent: 1}", '$.orders[0].counts["sent"] (the key): "sent" is not in Status'),
    ("extra", "[1, oops]", "$.orders[0].extra[1]: expected a JSON value, found the bare name "
     "oops"),
    ("lines", '["SKU001", 7]', "$.orders[0].lines[1]: expected str, found 7"),
]


@pytest.mark.parametrize(("name", "value", "message"), ORDER_CASES)
def test_order_field_mismatch(tmp_path: Path, name: str, value: str, message: str) -> None:
    row = order(**{name: value})
    result = check(tmp_path, f"  given {{ users: [{USER}], orders: [{row}] }}")
    # an enum member or union tag the type lacks is WS207; other mismatches WS601
    code = "WS207" if any(w in message for w in ("member", "variant", "is not in")) \
        else "WS601"
    d = only(result, code)
    assert message in d.message


def test_enum_name_with_a_different_serialised_value_gets_a_hint(tmp_path: Path) -> None:
    row = order(status='"return_requested"')
    d = only(check(tmp_path, f"  given {{ users: [{USER}], orders: [{row}] }}"), "WS207")
    assert d.hints == ('return_requested is written "return requested" in data',)


def test_enum_typo_gets_a_suggestion(tmp_path: Path) -> None:
    row = order(status='"shiped"')
    d = only(check(tmp_path, f"  given {{ users: [{USER}], orders: [{row}] }}"), "WS207")
    assert d.hints == ("did you mean 'shipped'?",)


def test_json_file_enum_values_are_strings_not_names(tmp_path: Path) -> None:
    seed = {"users": [{"id": "U1", "name": "A", "age": 1}],
            "orders": [{**ORDER_JSON, "status": "return requested", "counts": {"shipped": 1}}]}
    result = check(tmp_path, '  given "s.json"', {"s.json": json.dumps(seed)})
    assert data_diags(result) == []


def test_top_level_must_be_an_object(tmp_path: Path) -> None:
    d = only(check(tmp_path, '  given "a.json"', {"a.json": "[1, 2]"}), "WS601")
    assert d.message == "$: expected an object whose keys are state names, found an array"


def test_repeated_key_in_inline_object(tmp_path: Path) -> None:
    givens = "  given { flag: true, flag: false }"
    d = only(check(tmp_path, givens), "WS601")
    assert d.message.startswith("$.flag: this key is given twice")
    assert d.span.column == column_of(givens, "flag: false")


def test_repeated_key_in_json_file(tmp_path: Path) -> None:
    d = only(check(tmp_path, '  given "a.json"', {"a.json": '{"flag": true, "flag": false}'}),
             "WS601")
    assert d.message.startswith("$.flag: this key is given twice")


# ----------------------------------------------------------- refinements
REFINEMENT_CASES = [
    ('{id: "U1", name: "A", age: 151}', "$.users[0].age: 151 is outside the range (0..150)"),
    ('{id: "U1", name: "A", age: -1}', "$.users[0].age: -1 is outside the range (0..150)"),
    ('{id: "U1", name: "", age: 1}', "$.users[0].name: length 0 is outside the length range "
     "(1..20)"),
    ('{id: "U1", name: "A", age: 1, tags: ["a", "b", "c", "d"]}',
     "$.users[0].tags: length 4 is outside the length range (..3)"),
    ('{id: "U1", name: "A", age: 1, address: {street: "s", city: "c", zip: "123"}}',
     "$.users[0].address.zip: length 3 is outside the length range (5..5)"),
]


@pytest.mark.parametrize(("row", "message"), REFINEMENT_CASES)
def test_refinement_violation(tmp_path: Path, row: str, message: str) -> None:
    d = only(check(tmp_path, f"  given {{ users: [{row}] }}"), "WS601")
    assert d.message == message


def test_pattern_violation_names_the_pattern(tmp_path: Path) -> None:
    row = order(lines='["SKU001", "sku-2"]')
    d = only(check(tmp_path, f"  given {{ users: [{USER}], orders: [{row}] }}"), "WS601")
    assert d.message == '$.orders[0].lines[1]: "sku-2" does not match /^SKU[0-9]{3}$/'


def test_list_length_range(tmp_path: Path) -> None:
    row = order(lines="[]")
    d = only(check(tmp_path, f"  given {{ users: [{USER}], orders: [{row}] }}"), "WS601")
    assert d.message == "$.orders[0].lines: length 0 is outside the length range (1..)"


# ---------------------------------------------------- keys and references (WS605)
def test_duplicate_row_keys(tmp_path: Path) -> None:
    givens = f'  given {{ users: [{USER},\n    {{id: "U1", name: "B", age: 2}}] }}'
    d = only(check(tmp_path, givens), "WS605")
    assert d.message == '$.users[1].id: duplicate key "U1": $.users[0] has the same key'
    assert d.span.line == line_of(givens, '{id: "U1", name: "B"')
    assert d.related[0].span.line == line_of(givens, USER)


def test_duplicate_row_keys_in_file(tmp_path: Path) -> None:
    seed = {"boxes": [{"n": 1, "label": "a"}, {"n": 1, "label": "b"}]}
    d = only(check(tmp_path, '  given "b.json"', {"b.json": json.dumps(seed)}), "WS605")
    assert d.message == "$.boxes[1].n: duplicate key 1: $.boxes[0] has the same key"


def test_row_stored_under_another_key(tmp_path: Path) -> None:
    row = order(id='"#W2"')
    givens = f'  given {{ users: [{USER}], orders: {{"#W1": {row}}} }}'
    d = only(check(tmp_path, givens), "WS605")
    assert d.message == ('$.orders["#W1"].id: the row is stored under "#W1" but its id is '
                         '"#W2"')


def test_path_of_a_table_given_as_an_object(tmp_path: Path) -> None:
    row = order(status="lost")
    d = only(check(tmp_path, f'  given {{ users: [{USER}], orders: {{"#W1": {row}}} }}'),
             "WS207")
    assert d.message == '$.orders["#W1"].status: Status has no member \'lost\''


def test_dangling_reference(tmp_path: Path) -> None:
    row = order(user='"U404"')
    givens = f"  given {{ users: [{USER}], orders: [{row}] }}"
    d = only(check(tmp_path, givens), "WS605")
    assert d.message == '$.orders[0].user: no User with key "U404"'
    assert d.span.column == column_of(givens, '"U404"')


def test_dangling_reference_in_a_nested_list_and_in_value_state(tmp_path: Path) -> None:
    seed = {"users": [{"id": "U1", "name": "A", "age": 1}],
            "orders": [{**ORDER_JSON, "watchers": ["U1", "U2"]}], "current_user": "U9"}
    result = check(tmp_path, '  given "r.json"', {"r.json": json.dumps(seed)})
    d = only(result, "WS605")
    assert d.message == '$.orders[0].watchers[1]: no User with key "U2"'
    assert d.hints == ('also $.current_user: no User with key "U9"',)


def test_reference_key_type_is_checked(tmp_path: Path) -> None:
    row = order(user="1")
    d = only(check(tmp_path, f"  given {{ users: [{USER}], orders: [{row}] }}"), "WS601")
    assert d.message == "$.orders[0].user: expected str, found 1"


def test_references_to_tables_not_given_are_not_checked(tmp_path: Path) -> None:
    result = check(tmp_path, '  given { current_user: "U404" }')
    assert data_diags(result) == []
    assert load(result, tmp_path)[0] == {"current_user": "U404"}


def test_references_across_givens_are_checked_after_merging(tmp_path: Path) -> None:
    seed = {"users": [{"id": "U1", "name": "A", "age": 1}]}
    givens = '  given "u.json"\n  given { current_user: "U2" }'
    result = check(tmp_path, givens, {"u.json": json.dumps(seed)})
    # the checker validates the merged data, so the dangling reference is found
    assert [d.code for d in data_diags(result)] == ["WS605"]
    data, sink = load(result, tmp_path)
    assert data is None
    assert [(d.code, d.message, d.span.line) for d in sink.diagnostics] == [
        ("WS605", '$.current_user: no User with key "U2"', line_of(givens, '"U2"'))]


def test_overridden_data_is_not_checked_for_references(tmp_path: Path) -> None:
    givens = ('  given { users: [{id: "U1", name: "A", age: 1}], current_user: "U1" }\n'
              '  given { users: [{id: "U2", name: "B", age: 2}], current_user: "U2" }')
    result = check(tmp_path, givens)
    data, sink = load(result, tmp_path)
    assert sink.diagnostics == []
    assert data == {"users": [{"id": "U2", "name": "B", "age": 2}], "current_user": "U2"}


def test_load_returns_none_on_any_error(tmp_path: Path) -> None:
    result = check(tmp_path, '  given { flag: 1 }\n  given "missing.json"')
    data, sink = load(result, tmp_path)
    assert data is None
    assert sorted(d.code for d in sink.diagnostics) == ["WS601", "WS604"]


# ---------------------------------------------------------------- spans
def test_inline_spans_point_at_the_element(tmp_path: Path) -> None:
    givens = '  given { users: [{id: "U1", name: "A", age: 1, tags: ["a", 5]}] }'
    d = only(check(tmp_path, givens), "WS601")
    assert d.message == "$.users[0].tags[1]: expected str, found 5"
    assert (d.span.line, d.span.column, d.span.end_column) == (
        line_of(givens, "5]"), column_of(givens, "5]"), column_of(givens, "5]") + 1)


def test_file_problems_point_at_the_given_and_are_grouped(tmp_path: Path) -> None:
    seed = {"users": [{"id": "U1", "name": "A", "age": 1},
                      {"id": "U2", "name": "B", "age": 2},
                      {"id": "U3", "name": 42, "age": 3, "phone": "1"}],
            "flag": "no", "limits": {"a": "b"}}
    givens = '  given { order_ids: 1 }\n  given "g.json"'
    result = check(tmp_path, givens, {"g.json": json.dumps(seed)})
    found = data_diags(result)
    assert [d.code for d in found] == ["WS601", "WS602"]
    wrong, unknown = found
    assert all(d.span.line == line_of(givens, '"g.json"') for d in found)
    assert wrong.message == "$.users[2].name: expected str, found 42"
    assert wrong.hints == ('also $.flag: expected bool, found "no"',
                           'also $.limits["a"]: expected float, found "b"')
    assert unknown.message == '$.users[2].phone: User has no field "phone"'


# ----------------------------------------------------------------- robustness
def test_problems_stop_after_the_limit(tmp_path: Path) -> None:
    seed = {"users": [{"id": f"U{i}", "name": i, "age": 1} for i in range(200)]}
    result = check(tmp_path, '  given "many.json"', {"many.json": json.dumps(seed)})
    d = only(result, "WS601")
    assert len(d.hints) == MAX_PROBLEMS  # 49 "also" lines and the note
    assert d.hints[-1] == f"stopped after {MAX_PROBLEMS} problems in this data"


def test_deep_nesting_in_a_file(tmp_path: Path) -> None:
    deep = '{"limits": ' + "[" * 100_000 + "]" * 100_000 + "}"
    result = check(tmp_path, '  given "deep.json"', {"deep.json": deep})
    assert [d.code for d in data_diags(result)] in (["WS604"], ["WS601"])


def test_moderately_deep_json_value(tmp_path: Path) -> None:
    extra: object = 1
    for _ in range(500):
        extra = [extra]
    seed = {"users": [{"id": "U1", "name": "A", "age": 1}], "orders": [{**ORDER_JSON,
                                                                         "extra": extra}]}
    d = only(check(tmp_path, '  given "d.json"', {"d.json": json.dumps(seed)}), "WS601")
    assert "nested deeper than" in d.message


def test_deep_inline_data(tmp_path: Path) -> None:
    givens = "  given { limits: " + "[" * 150 + "]" * 150 + " }"
    result = check(tmp_path, givens)
    assert [d.code for d in data_diags(result)] == ["WS601"]


def test_huge_and_non_finite_numbers(tmp_path: Path) -> None:
    huge = '{"order_ids": ' + "9" * 5000 + "}"
    d = only(check(tmp_path, '  given "h.json"', {"h.json": huge}), "WS604")
    assert "not valid JSON" in d.message
    d = only(check(tmp_path, '  given "n.json"', {"n.json": '{"limits": {"a": NaN}}'}), "WS601")
    assert d.message == '$.limits["a"]: expected a finite float, found NaN'
    d = only(check(tmp_path, '  given "i.json"', {"i.json": '{"limits": {"a": 1e999}}'}),
             "WS601")
    assert "found Infinity" in d.message
    big = 10 ** 400
    d = only(check(tmp_path, '  given "b.json"', {"b.json": json.dumps({"limits": {"a": big}})}),
             "WS601")
    assert "too large for a float" in d.message


def test_weird_unicode(tmp_path: Path) -> None:
    seed = '{"users": [{"id": "\\ud800", "name": "\\u0000\\u202e", "age": 1, "\\udfff": 1}]}'
    d = only(check(tmp_path, '  given "u.json"', {"u.json": seed}), "WS602")
    assert d.message == '$.users[0]["\\udfff"]: User has no field "\\udfff"'
    d.message.encode("utf-8")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                               max_size=4),
    max_leaves=20,
)
state_keys = st.sampled_from(["users", "orders", "boxes", "order_ids", "current_user", "flag",
                              "limits", "nope"])


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.dictionaries(state_keys, json_values | st.lists(
    st.dictionaries(st.sampled_from(["id", "n", "user", "name", "age", "label", "lines",
                                     "status", "watchers", "x"]), json_values, max_size=6),
    max_size=3), max_size=5))
def test_never_raises_for_any_json(tmp_path: Path, data: dict[str, object]) -> None:
    result = check_source(spec_with('  given "f.json"'), str(tmp_path / "shop.world"))
    world = result.model.worlds["Shop"]
    (tmp_path / "f.json").write_text(json.dumps(data), encoding="utf-8")
    sink = DiagnosticSink()
    given_item = task_node(result).givens[0]
    check_given(given_item, str(tmp_path / "shop.world"), world, sink)
    loaded = load_initial_data(task_node(result), str(tmp_path / "shop.world"), world,
                               DiagnosticSink())
    assert (loaded is None) == sink.has_errors()
    for d in sink.diagnostics:
        assert d.code in {"WS207", "WS601", "WS602", "WS603", "WS605"}
        assert d.message.startswith("$")


# ------------------------------------------------- lone surrogates, the value rules
def test_a_lone_surrogate_in_a_data_file_is_ws617_with_its_json_path(tmp_path: Path) -> None:
    data = '{"users": [{"id": "U1", "name": "Ann", "age": 3, "scores": {"a\\udc00": 1}}]}'
    result = check(tmp_path, 'given "seed.json"', {"seed.json": data})
    [d] = [x for x in result.diagnostics if x.code == "WS617"]
    assert len(result.diagnostics) == 1
    assert d.message == ('$.users[0].scores["a\\udc00"] (the key): the text holds a lone '
                         "surrogate (\\udc00 at character 1), which is not valid Unicode")


def test_a_lone_surrogate_in_json_data_is_ws617(tmp_path: Path) -> None:
    row = json.dumps({**ORDER_JSON, "extra": {"note": ["ok", "bad\ud83d"]}})
    result = check(tmp_path, 'given "seed.json"',
                   {"seed.json": '{"users": [{"id": "U1", "name": "A", "age": 1}], '
                                 f'"orders": [{row}]}}'})
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("WS617", '$.orders[0].extra["note"][1]: the text holds a lone surrogate (\\ud83d at '
                  "character 3), which is not valid Unicode")]


def test_check_reports_a_lone_surrogate_in_a_data_file_instead_of_crashing(
        tmp_path: Path) -> None:
    """It used to pass the data check, break the state hash when the task ran, and make
    ``worldspec check --format json`` exit 3 (an internal error)."""
    import subprocess
    import sys

    (tmp_path / "shop.world").write_text(spec_with('given "seed.json"'), encoding="utf-8")
    (tmp_path / "seed.json").write_text('{"users": [{"id": "U1", "name": "A\\ud800", '
                                        '"age": 1}]}', encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "worldspec", "check", "--format", "json",
                          str(tmp_path / "shop.world")], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert out.returncode == 1, out.stderr
    assert "WS617" in out.stdout and "$.users[0].name" in out.stdout


@pytest.mark.parametrize(("field", "value", "message"), [
    ("total", "3", None),
    ("placed", '"20240501"', '$.orders[0].placed: "20240501" is not a date ("YYYY-MM-DD")'),
    ("at", '"2024-05-01T10:00:00Z"', '$.orders[0].at: "2024-05-01T10:00:00Z" has a UTC '
                                    "offset; datetimes are naive (the world's local time)"),
    ("wait", "1e20", "$.orders[0].wait: 1e+20 seconds is too long for a duration"),
    ("wait", "none", None),
    ("notes", '{"01": "x"}', '$.orders[0].notes["01"] (the key): int keys are decimal '
                             'integers in data, found "01"'),
])
def test_the_value_rules_at_check_time(tmp_path: Path, field: str, value: str,
                                       message: str | None) -> None:
    result = check(tmp_path, f"given {{ users: [{USER}], orders: [{order(**{field: value})}] }}")
    assert [d.message for d in data_diags(result)] == ([message] if message else [])


def test_data_is_normalised_as_the_runtime_exports_it(tmp_path: Path) -> None:
    row = order(at='"2024-05-01 10:00"', wait="90.0", total="3")
    result = check(tmp_path, f"given {{ users: [{USER}], orders: [{row}] }}")
    loaded, sink = load(result, tmp_path)
    assert loaded is not None, [d.message for d in sink.diagnostics]
    row = loaded["orders"][0]  # type: ignore[index]
    assert (row["at"], row["wait"], row["total"]) == ("2024-05-01T10:00:00", 90, 3.0)
    assert type(row["wait"]) is int and type(row["total"]) is float


_PATTERNS = {
    r"^(?=a)a$": "invalid perl operator: (?=",
    r"^a(?<!b)$": "invalid perl operator: (?<!",
    r"^a\Z": "invalid escape sequence: \\Z",
    r"^a{2000}$": "invalid repetition size: {2000}",
}


@pytest.mark.parametrize("pattern", sorted(_PATTERNS))
def test_a_pattern_re2_cannot_compile_is_ws312(pattern: str) -> None:
    spec = f'world W "w"\ntype T = str matching /{pattern}/\nstate {{ t: T? = none }}\n'
    result = check_source(spec, "w.world")
    assert [(d.code, d.message, d.span.line) for d in result.diagnostics] == [
        ("WS312", f"/{pattern}/ is not an RE2 pattern: {_PATTERNS[pattern]}", 2)]
    assert result.diagnostics[0].hints


def test_patterns_re2_compiles_are_fine_in_every_place() -> None:
    spec = ('world W "w"\nrecord R { a: str matching /^[a-z]+$/ }\n'
            'state { t: str matching /^\\w*$/ = "" }\n'
            'tool f(x: str matching /(?i)^x\\d{1,3}$/) -> str "F." {\n'
            '  let y: str matching /^.*$/ = x\n  return y\n}\n')
    result = check_source(spec, "w.world")
    assert list(result.diagnostics) == []


def test_ws312_finds_a_pattern_wherever_a_type_is_written() -> None:
    bad = "/^(a)\\1$/"
    spec = (f'world W "w"\nrecord R {{ a: str matching {bad} }}\n'
            f"state {{ t: str matching {bad} = \"aa\" }}\n"
            f'tool f(x: str matching {bad}) -> str "F." {{\n'
            f"  let y: str matching {bad} = x\n  return y\n}}\n")
    result = check_source(spec, "w.world")
    assert [(d.code, d.span.line) for d in result.diagnostics] == [
        ("WS312", 2), ("WS312", 3), ("WS312", 4), ("WS312", 5)]


# ------------------------------------------------------ state aliases (`from "..."`)
ALIASED = """\
world Shop "Tables loaded under the original's keys."

entity User { key id: str  name: str }
entity Order { key id: str  user: User }

state {
  users: table User from "Users"
  orders: table Order from "allOrders"
  flag: bool from "isOpen" = false
}

task t in Shop {
  given { Users: [{id: "U1", name: "Ann"}], isOpen: true }
  given { allOrders: [{id: "O1", user: "U1"}, {id: "O2", user: "U9"}] }
  instruction "Do it."
  check ok: true
}
"""


def test_aliased_state_is_checked_and_kept_under_its_alias(tmp_path: Path) -> None:
    """Data gives aliased items under their aliases, references across givens are checked
    against the aliased table, and the normalised data keeps the keys the runtime loads."""
    result = check_source(ALIASED, str(tmp_path / "shop.world"))
    found = [(d.code, d.message) for d in data_diags(result)]
    assert found == [("WS605", '$.allOrders[1].user: no User with key "U9"')]
    fixed = ALIASED.replace('"U9"', '"U1"')
    result = check_source(fixed, str(tmp_path / "shop.world"))
    assert data_diags(result) == []
    data, _ = load(result, tmp_path)
    assert data == {"Users": [{"id": "U1", "name": "Ann"}], "isOpen": True,
                    "allOrders": [{"id": "O1", "user": "U1"}, {"id": "O2", "user": "U1"}]}
    misnamed = check_source(fixed.replace("isOpen: true", "flag: true"),
                            str(tmp_path / "shop.world"))
    d = only(misnamed, "WS602")
    assert d.message == '$.flag: state "flag" loads from the key "isOpen", not from its name'
    assert list(d.hints) == ['give it as "isOpen"']
