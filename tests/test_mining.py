"""Task mining without a model: candidates from the explorer's successful calls validate, and
checks derived from a wrong diff, a frame that misses a change, or an instruction that does
not tell what no read shows, do not."""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from pathlib import Path

import pytest

from worldspec.compiler import types as t
from worldspec.compiler.api import check_specs
from worldspec.compiler.model import WorldModel
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_result
from worldspec.services.mining import (
    DIFFICULTY_BANDS,
    Change,
    MinedTask,
    clock_bound,
    derive_checks,
    derive_frame,
    linked_writes,
    literal,
    mine_tasks,
    solution_difficulty,
    validate_mined,
)
from worldspec.testing.mining import careless_failures, draw_write_runs

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "examples" / "corpus" / "worlds" / "library_loans" / "public_library.world"
CHAT = ROOT / "examples" / "corpus" / "worlds" / "team_chat" / "team_chat.world"


@lru_cache(maxsize=4)
def _world(path: Path) -> tuple[WorldModel, type[Episode]]:
    result = check_specs([path])
    assert result.ok, result.errors[:3]
    [model] = result.model.worlds.values()
    return model, load_result(result).worlds[model.name]


def _mined(path: Path, seed: int, runs: int = 12) -> list[MinedTask]:
    model, world = _world(path)
    found: list[MinedTask] = []
    for name, spec in world.TASKS.items():
        found += mine_tasks(model, world, spec.data, start=name, seed=seed, runs=runs)
    return found


def _codes(report: object) -> set[str]:
    assert report is not None, "the task did not compile"
    return {d.code for d in report.problems}  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_mined_candidate_validates(seed: int) -> None:
    candidates = _mined(LIBRARY, seed)
    assert len(candidates) >= 10
    reports = validate_mined(LIBRARY, {c.name: c.text() for c in candidates})
    invalid = {name: sorted(_codes(r)) for name, r in reports.items()
               if r is None or not r.valid}
    assert not invalid
    # the frame names exactly what changed, and every candidate changes something
    for candidate in candidates:
        assert candidate.checks and candidate.changes
        assert set(candidate.frame) == set(derive_frame(candidate.changes))
        assert candidate.difficulty.calls == len(candidate.solution)
        assert candidate.difficulty.reads == len(candidate.solution) - len(candidate.writes)


def test_the_goal_is_the_episode_diff_of_the_solution() -> None:
    """Replaying a candidate's solution from its data changes exactly the paths of its goal
    (the episode's own diff), and a solution cut short does not."""
    _, world = _world(LIBRARY)
    candidates = _mined(LIBRARY, 4)
    for candidate in candidates:
        initial, final = world(data=candidate.data), world(data=candidate.data)
        for name, args in candidate.solution:
            final.call(name, dict(args))
            assert final.last_error is None
        goal = {path for change in candidate.changes for path in change.paths}
        assert {change["path"] for change in final.diff(initial)} == goal
    longer = next(c for c in candidates if len(c.writes) > 1)
    cut = world(data=longer.data)
    for name, args in longer.solution[:-1]:
        cut.call(name, dict(args))
    goal = {path for change in longer.changes for path in change.paths}
    assert {change["path"] for change in cut.diff(world(data=longer.data))} != goal


def test_candidates_are_distinct_and_deterministic() -> None:
    first = _mined(LIBRARY, 3)
    again = _mined(LIBRARY, 3)
    assert [c.name for c in first] == [c.name for c in again]
    keys = [(c.start, c.dedup_key) for c in first]
    assert len(keys) == len(set(keys))


def test_checks_from_a_wrong_diff_fail_validation() -> None:
    """The checks are as specific as the diff: a check of a value the solution did not
    write is false after it (WS611), and the true one passes."""
    model, _ = _world(LIBRARY)
    candidate = next(c for c in _mined(LIBRARY, 0)
                     if any(ch.kind == "set" and isinstance(v, float)
                            for ch in c.changes for v in ch.fields.values()))
    wrong_changes = [dataclasses.replace(ch, fields={
        k: (v + 1.5 if isinstance(v, float) else v) for k, v in ch.fields.items()})
        if ch.kind == "set" else ch for ch in candidate.changes]
    wrong = dataclasses.replace(candidate, name=candidate.name + "_wrong",
                                checks=tuple(derive_checks(wrong_changes, model)))
    reports = validate_mined(LIBRARY, {candidate.name: candidate.text(),
                                       wrong.name: wrong.text()})
    assert reports[candidate.name] is not None and reports[candidate.name].valid
    assert "WS611" in _codes(reports[wrong.name])


def test_a_frame_missing_a_change_fails_validation() -> None:
    candidate = next(c for c in _mined(LIBRARY, 1) if len(c.frame) >= 2)
    narrow = dataclasses.replace(candidate, name=candidate.name + "_narrow",
                                 frame=candidate.frame[1:])
    reports = validate_mined(LIBRARY, {candidate.name: candidate.text(),
                                       narrow.name: narrow.text()})
    assert reports[candidate.name] is not None and reports[candidate.name].valid
    assert "WS612" in _codes(reports[narrow.name])


def test_an_instruction_that_does_not_tell_what_no_read_shows_fails() -> None:
    """Values no read shows are told by the instruction; without them the solution passes
    a value the agent was never shown (WS624)."""
    candidate = next(c for c in _mined(CHAT, 0, runs=30) if c.told)
    silent = dataclasses.replace(candidate, name=candidate.name + "_silent")
    reports = validate_mined(CHAT, {
        candidate.name: candidate.text(),
        silent.name: silent.text("Please do what the team asked for.")})
    assert reports[candidate.name] is not None and reports[candidate.name].valid
    assert "WS624" in _codes(reports[silent.name])


def test_reads_show_keys_so_the_instruction_tells_none() -> None:
    """In the library every row can be found by a read (a list, or a search by a member's
    name), so no candidate's instruction has to tell a row key, and those whose writes name
    a key of the start state read before their first write."""
    _, world = _world(LIBRARY)
    candidates = _mined(LIBRARY, 0)
    for candidate in candidates:
        keys = {str(k) for table in world(data=candidate.data).tables.values()
                for k in table.rows}
        assert not keys & set(candidate.told), candidate.told
        named = {str(v) for _, args in candidate.writes for v in args.values()} & keys
        if named:
            assert candidate.solution[0] not in candidate.writes
    assert any(c.difficulty.reads for c in candidates)


def test_literals_follow_the_declared_types() -> None:
    model, _ = _world(LIBRARY)
    assert literal("2026-05-20", t.DATE, model) == 'date("2026-05-20")'
    assert literal(None, t.Optional(t.DATE), model) == "none"
    assert literal("active", t.Named("enum", "HoldStatus"), model) == "HoldStatus.active"
    assert literal("nope", t.Named("enum", "HoldStatus"), model) is None
    assert literal("M003", t.Named("entity", "Member"), model) == '"M003"'
    assert literal(3, t.FLOAT, model) == "3.0"
    assert literal(2.5, t.INT, model) is None
    assert literal({"a": 1}, t.JSON, model) is None


def test_derived_checks_cover_sets_inserts_and_deletes() -> None:
    model, _ = _world(LIBRARY)
    changes = [
        Change("set", "loans", "L002", {"returned_on": "2026-05-20"}, {"returned_on": None}),
        Change("insert", "holds", "H003", {"id": "H003", "book": "9780441172719",
                                           "member": "M001", "status": "active",
                                           "placed_at": "2026-05-20T10:00:00"}),
        Change("delete", "holds", "H001", {"id": "H001"}),
        Change("state", "hold_ids", fields={"value": 3}, old={"value": 2}),
    ]
    conditions = [c.condition for c in derive_checks(changes, model)]
    assert conditions == [
        'loans["L002"].returned_on == date("2026-05-20")',
        'exists r in holds: r.book == "9780441172719" and r.member == "M001" and '
        'r.status == HoldStatus.active and r.placed_at == datetime("2026-05-20T10:00:00")',
        'not (exists r in holds: r.id == "H001")',
    ]
    assert derive_frame(changes) == ("hold_ids", "holds", "loans.returned_on")
    # a time stamp of the run moves with every extra call: left to the frame, not checked
    during = derive_checks(changes, model, ("2026-05-20T10:00:00", "2026-05-20T10:03:00"))
    assert "placed_at" not in during[1].condition and "r.member" in during[1].condition
    before = derive_checks(changes, model, ("2026-05-20T10:01:00", "2026-05-20T10:03:00"))
    assert "placed_at" in before[1].condition


def test_careless_failures_count_failing_draws() -> None:
    _, world = _world(LIBRARY)
    data = world.TASKS["late_return_and_new_loan"].data
    # returning a copy: most copies drawn are not on loan
    assert careless_failures(world, data, ["return_copy"], seed=0) > 0
    assert careless_failures(world, data, [], seed=0) == 0
    runs = list(draw_write_runs(world, data, seed=0, runs=10))
    assert runs and all(1 <= len(r.calls) <= 4 for r in runs)
    assert all(not world.TOOLS[name].read_only for r in runs for name in r.tools)


def test_a_task_is_scored_by_its_solution_easy_to_hard() -> None:
    """A written task gets a mined task's difficulty from its reference solution: one read
    and one write is easy; the same start with more calls over more tools scores higher."""
    _, world = _world(LIBRARY)
    data = world.TASKS["late_return_and_new_loan"].data
    one = solution_difficulty(world, data, [("find_members", {"query": "Ana"}),
                                            ("return_copy", {"copy": "C0003"})])
    assert (one.calls, one.tools, one.reads) == (2, 2, 1) and one.band == "easy"
    long = solution_difficulty(world, data, [
        ("find_members", {"query": "Ana"}), ("search_books", {"query": "Dune"}),
        ("list_copies", {"isbn": "9780441172719"}), ("return_copy", {"copy": "C0003"}),
        ("borrow_copy", {"member": "M003", "copy": "C0003"}),
        ("pay_fees", {"member": "M002", "amount": 1.0})])
    assert (long.calls, long.tools, long.reads) == (6, 6, 3)
    assert long.careless_failures > one.careless_failures and long.band == "hard"
    assert long.to_json()["band"] == "hard" and long.score > one.score
    bands = [name for name, _ in DIFFICULTY_BANDS]
    assert bands == ["easy", "medium", "hard"]
    limits = [below for _, below in DIFFICULTY_BANDS]
    assert limits == sorted(limits) and len(set(limits)) == len(limits)


def test_linked_writes_make_one_errand() -> None:
    holds = [Change("insert", "holds", "H003", {"id": "H003"})]
    assert linked_writes([("place_hold", {"member": "M001", "book": "9780441172719"}),
                    ("cancel_hold", {"hold": "H003"})], holds)
    assert linked_writes([("return_copy", {"copy": "C0003"}),
                    ("borrow_copy", {"member": "M003", "copy": "C0003"})], [])
    assert not linked_writes([("return_copy", {"copy": "C0003"}),
                        ("pay_fees", {"member": "M002", "amount": 1.0})], [])
    candidates = _mined(LIBRARY, 0)
    assert any(c.linked and len(c.writes) > 1 for c in candidates)
    assert any(not c.linked for c in candidates)
    # the goal in words leaves out the sequences that number new rows
    inserting = next(c for c in candidates if any(ch.kind == "insert" for ch in c.changes))
    assert not any(line.startswith(("hold_ids", "loan_ids")) for line in inserting.goal_words())
    assert {"hold_ids", "loan_ids"} & set(inserting.frame)


FOOD_BANK = ROOT / "examples" / "corpus" / "worlds" / "food_bank" / "food_bank_desk.world"


def test_rows_inside_records_and_lists_are_written_so_they_compile() -> None:
    """A row inside a call's list or object argument is its key in the JSON the agent sends
    ({"item": "FD-001", ...}), and inside a check's record or list literal the row itself
    (items["FD-001"]): candidates of the food bank, whose orders hold lines naming items,
    validate. A record literal with a key where its row belongs does not compile."""
    model, _ = _world(FOOD_BANK)
    texts = {c.name: c.text() for c in _mined(FOOD_BANK, 0, runs=30)}
    nested = {name: text for name, text in texts.items() if '{"item": ' in text}
    assert nested, "no candidate passes an order line"
    reports = validate_mined(FOOD_BANK, nested)
    assert all(r is not None and r.valid for r in reports.values()), \
        {n: r and [d.message for d in r.problems] for n, r in reports.items()}
    record = t.Named("record", "OrderRequest")
    assert literal({"item": "FD-001", "quantity": 2}, record, model) == \
        'OrderRequest(item: items["FD-001"], quantity: 2)'
    [name] = list(nested)[:1]
    broken = nested[name].replace("check ", 'check typed_key: OrderRequest(item: "FD-001", '
                                  "quantity: 2).quantity == 2\n  check ", 1)
    assert validate_mined(FOOD_BANK, {name: broken})[name] is None


PANTRY = """
world Pantry "Orders of items by the line."

entity Item {
  key id: str
}

record Line {
  item: Item
  quantity: int
}

state {
  items: table Item
  ordered: list[Line] = []
}

tool order(lines: list[Line] "The lines.") -> int "Order the lines." {
  for line in lines {
    append line to ordered
  }
  return len(ordered)
}

task two_of_f1 in Pantry {
  instruction "Order two of item F1."
  given { items: [{"id": "F1"}] }
  check ordered_two: len(ordered) == 1 and ordered[0].quantity == 2
  solution { order(lines: LINES) }
}
"""


@pytest.mark.parametrize(("lines", "constant"), [
    ('[{"item": "F1", "quantity": 2}]', True),
    ('[Line(item: items["F1"], quantity: 2)]', False),
])
def test_a_solution_argument_that_is_not_a_constant_is_an_error_not_a_crash(
        tmp_path: Path, lines: str, constant: bool) -> None:
    """A solution sends what an agent would: a row looked up in a table inside a call's
    argument is reported (WS606), where it used to crash code generation; the same line as
    the JSON the agent sends checks clean."""
    spec = tmp_path / "pantry.world"
    spec.write_text(PANTRY.replace("LINES", lines), encoding="utf-8")
    result = check_specs([spec])
    found = [(d.code, d.message) for d in result.errors]
    assert (found == []) is constant, found
    assert constant or any(code == "WS606" and "not a constant" in message
                           for code, message in found), found
    if constant:
        load_result(result)  # and it compiles


TICKETS = ROOT / "examples" / "corpus" / "worlds" / "event_tickets" / "concert_ticket_office.world"
PERMITS = ROOT / "examples" / "corpus" / "worlds" / "building_permits" / "permit_office.world"


def _changing(candidates: list[MinedTask], name: str) -> list[MinedTask]:
    return [c for c in candidates
            if any(name in change.fields and change.kind != "delete" for change in c.changes)]


def test_a_deadline_the_clock_sets_is_left_to_the_frame() -> None:
    """``hold_expires_at: now + minutes(15)`` lies past the run's last moment, yet moves with
    every call the agent makes: no check pins it, the frame names its table, the rest of the
    new order is still checked, and the tasks validate."""
    held = _changing(_mined(TICKETS, 0, runs=30), "hold_expires_at")
    assert held
    for candidate in held:
        conditions = " ".join(c.condition for c in candidate.checks)
        assert "hold_expires_at" not in conditions
        assert "orders" in candidate.frame
        assert "r.customer ==" in conditions or 'orders["' in conditions
    reports = validate_mined(TICKETS, {c.name: c.text() for c in held})
    assert all(r is not None and r.valid for r in reports.values()), reports


def test_a_record_stamped_by_the_clock_keeps_its_other_parts_checked() -> None:
    """An application's ``decision`` (who decided, the note, when) is set by the call: its
    ``at`` moves with the clock and is left out, its ``by`` and ``note`` are still checked."""
    decided = [c for c in _changing(_mined(PERMITS, 0, runs=30), "decision")
               if any(change.fields.get("decision") for change in c.changes)]
    assert decided
    for candidate in decided:
        conditions = [c.condition for c in candidate.checks]
        pinned = [c for c in conditions if ".at ==" in c or "decision == Decision(" in c]
        assert not pinned, pinned
        assert any(").note == " in c and ").by == staff[" in c for c in conditions), conditions
    reports = validate_mined(PERMITS, {c.name: c.text() for c in decided})
    assert all(r is not None and r.valid for r in reports.values()), reports


def test_a_clock_that_does_not_tick_moves_nothing() -> None:
    """The same solution from a world whose clock stands still sets the same values whenever
    it runs: the deadline is checked there."""
    model, world = _world(TICKETS)
    still = type("StillTickets", (world,), {"TICK": 0})
    [candidate] = _changing(_mined(TICKETS, 0, runs=30), "hold_expires_at")[:1]
    assert clock_bound(world, candidate.data, candidate.solution, candidate.changes)
    assert not clock_bound(still, candidate.data, candidate.solution, candidate.changes)
    checks = derive_checks(candidate.changes, model)
    assert any("hold_expires_at ==" in c.condition for c in checks)
