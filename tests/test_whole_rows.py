"""``row[E]``: a tool's result shows whole rows inside lists, maps and records.

The spec ``tests/rows/lending.world`` returns loans as ``row[Loan]`` in a list, a map and a
record; the tests check what the checker accepts and refuses, the JSON a call gives and its
schema, when the rows are read (as the call ends), the formatter and ``mypy --strict`` on the
generated package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mypy_support import mypy_strict
from spec_support import compile_text

from worldspec.compiler import types as t
from worldspec.compiler.api import check_source
from worldspec.compiler.build import generate_all, write_packages
from worldspec.dsl.formatter import format_source
from worldspec.runtime.episode import Episode
from worldspec.runtime.errors import ToolError
from worldspec.testing.sampling import validate

SPEC = Path(__file__).parent / "rows" / "lending.world"
DATA: dict[str, Any] = {
    "members": [{"id": "M1", "name": "Ana"}, {"id": "M2", "name": "Ben"}],
    "loans": [
        {"id": "L1", "member": "M1", "title": "Dune", "due_on": "2026-01-02"},
        {"id": "L2", "member": "M1", "title": "Emma", "due_on": "2026-01-05", "late_fee": 1.5},
        {"id": "L3", "member": "M2", "title": "Ulysses", "due_on": "2026-02-01"},
    ],
}
DUNE = {"id": "L1", "member": "M1", "title": "Dune", "due_on": "2026-01-02", "late_fee": 0.0}
EMMA = {"id": "L2", "member": "M1", "title": "Emma", "due_on": "2026-01-05", "late_fee": 1.5}

HEAD = """world Lending "A small lending desk."
entity Member "A card holder." { key id: str  name: str }
entity Loan "A loan." { key id: str  member: Member  title: str  due_on: date }
record MemberInfo "A member and their loans." { member: Member  loans: list[row[Loan]] }
state { members: table Member  loans: table Loan }
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> type[Episode]:
    return compile_text(tmp_path_factory.mktemp("rows"), "lending.world",
                        SPEC.read_text(encoding="utf-8"), "Lending")


def episode(world: type[Episode]) -> Episode:
    return world(data=DATA)


def data_of(result: Any) -> Any:
    assert result["success"] is True, result
    return result["data"]


def codes(text: str) -> list[str]:
    return [d.code for d in check_source(text).diagnostics]


# ----------------------------------------------------------------- checking
def test_the_spec_checks_clean() -> None:
    result = check_source(SPEC.read_text(encoding="utf-8"), str(SPEC))
    assert result.diagnostics == (), [d.message for d in result.diagnostics]


def test_a_row_is_its_entity_for_the_checker() -> None:
    world = check_source(HEAD).model.worlds["Lending"]
    field = world.records["MemberInfo"].fields["loans"].type
    assert isinstance(field, t.ListOf) and isinstance(field.element, t.Named)
    assert field.element.whole_row and field.element == t.Named("entity", "Loan")
    assert t.assignable(field, t.ListOf(t.Named("entity", "Loan")))
    assert t.assignable(t.ListOf(t.Named("entity", "Loan")), field)
    assert t.show(field) == "list[row[Loan]]"
    # fields of a row are readable, rows compare by key, a row goes where a Loan goes
    assert codes(HEAD + """
tool titles(info: Member "A member.") -> list[str] "Titles of a member's loans." {
  let shown = MemberInfo(member: info, loans: [l for l in loans if l.member == info])
  let first: Loan? = if len(shown.loans) > 0 then shown.loans[0] else none
  return [l.title for l in shown.loans if first == none or l != first]
}
""") == []


@pytest.mark.parametrize("extra, where", [
    ('tool t() -> row[MemberInfo] "x" { fail "no" }', "takes an entity, not MemberInfo"),
    ('tool t() -> list[row[Loan?]] "x" { return [] }', "takes an entity, not Loan?"),
    ('tool t() -> row[str] "x" { return "a" }', "takes an entity, not str"),
    ('tool t(loan: row[Loan] "A loan.") "x" { }', "parameter 'loan' of tool 't'"),
    ('fn f(infos: list[MemberInfo]) -> int { return len(infos) }',
     "through MemberInfo.loans"),
    ('entity Shelf "x" { key id: str  loans: list[row[Loan]] }', "field Shelf.loans is stored"),
    ('const FIRST: row[Loan]? = none', "const 'FIRST' is stored"),
])
def test_a_row_where_nothing_is_shown_is_refused(extra: str, where: str) -> None:
    result = check_source(HEAD + extra + "\n")
    found = [d for d in result.diagnostics if d.code == "WS325"]
    assert len(found) == 1 and where in found[0].message, \
        [(d.code, d.message) for d in result.diagnostics]


def test_state_holding_a_record_of_rows_is_refused() -> None:
    text = HEAD.replace("state { members: table Member  loans: table Loan }",
                        "state { members: table Member  loans: table Loan\n"
                        "  last: MemberInfo? = none }")
    messages = [d.message for d in check_source(text).diagnostics if d.code == "WS325"]
    assert messages == ["state 'last' is stored, so it cannot hold a whole row "
                        "(through MemberInfo.loans)"]


def test_row_is_a_builtin_type_name() -> None:
    assert "WS208" in codes('record row "x" { a: int }')


def test_the_formatter_keeps_row_types() -> None:
    text = SPEC.read_text(encoding="utf-8")
    assert format_source(text) == text
    assert "-> list[row[Loan]]" in text and "open_loans: list[row[Loan]]" in text


# ------------------------------------------------------------------ results
def test_a_list_of_rows_shows_each_row(world: type[Episode]) -> None:
    ep = episode(world)
    assert data_of(ep.call("list_loans", {"member": "M1"})) == [DUNE, EMMA]
    assert ep.last_value == [DUNE, EMMA]


def test_a_map_of_rows_shows_each_row(world: type[Episode]) -> None:
    shown = data_of(episode(world).call("loans_by_id", {}))
    assert shown["L1"] == DUNE and shown["L2"] == EMMA and set(shown) == {"L1", "L2", "L3"}


def test_a_record_shows_its_row_fields_and_keys_elsewhere(world: type[Episode]) -> None:
    ep = episode(world)
    assert data_of(ep.call("get_member", {"member": "M1"})) == {
        "member": "M1", "open_loans": [DUNE, EMMA], "newest": EMMA}
    ep.call("return_all", {"member": "M1"})
    assert data_of(ep.call("get_member", {"member": "M1"})) == {
        "member": "M1", "open_loans": [], "newest": None}


def test_rows_deleted_by_the_call_show_what_they_were(world: type[Episode]) -> None:
    ep = episode(world)
    assert data_of(ep.call("return_all", {"member": "M1"})) == [DUNE, EMMA]
    assert [r["id"] for r in ep.export_state()["loans"]] == ["L3"]


def test_a_key_no_row_has_is_a_clear_error(world: type[Episode]) -> None:
    # a call cannot leave a key behind whose row is gone (the integrity check fails it
    # first), so only a shape applied by hand can meet one
    ep = episode(world)
    data_of(ep.call("star", {"loan": "L1"}))
    assert ep.call("forget", {"loan": "L1"}) == {
        "success": False, "error": 'starred refers to Loan "L1", which does not exist.'}
    assert ep.shown(("list", ("row", "loans")), ("L1",)) == [DUNE]
    with pytest.raises(ToolError, match=r'^Loan "L9" no longer exists, so the result '
                       r'cannot show it\.$'):
        ep.shown(("row", "loans"), "L9")


def test_results_fit_their_schema(world: type[Episode]) -> None:
    ep = episode(world)
    for tool, args in [("list_loans", {"member": "M1"}), ("loans_by_id", {}),
                       ("get_member", {"member": "M1"}), ("get_member", {"member": "M2"}),
                       ("return_all", {"member": "M2"})]:
        data_of(ep.call(tool, args))
        schema = world.TOOLS[tool].returns
        assert schema is not None and validate(ep.last_value, schema), (tool, ep.last_value)
    items = world.TOOLS["list_loans"].returns["items"]  # type: ignore[index]
    assert items["properties"]["due_on"] == {"type": "string"}
    assert items["properties"]["member"]["type"] == "string"  # a reference in a row: a key


def test_a_world_without_rows_shows_keys_and_has_no_shape(world: type[Episode]) -> None:
    assert world.TOOLS["star"].shows is None
    assert world.TOOLS["list_loans"].shows == ("list", ("row", "loans"))


def test_the_generated_package_passes_mypy_strict(tmp_path: Path) -> None:
    result = check_source(SPEC.read_text(encoding="utf-8"), str(SPEC))
    write_packages(generate_all(result), tmp_path / "out")
    run = mypy_strict(tmp_path / "out", tmp_path / "cache")
    assert run.returncode == 0, run.stdout + run.stderr
