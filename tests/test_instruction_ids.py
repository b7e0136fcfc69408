"""Validation's warnings on what a task says and checks: an id in the instruction that no table
holds (WS615) and a check that already holds at the start (WS613).

WS615 must fire on a real unknown id written like the world's keys (``#W9999999`` among
``#W0000001``..., ``L099`` among ``L001``..., room ``199`` among rooms ``101``...), and stay
silent on the numbers an instruction is full of: dates, times, amounts, ordinals, ranges,
thousands separators, phone numbers. WS613 must fire on a check that is free reward, and
stay silent on a check that guards the rows the task's own work must leave alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from worldspec.services.instruction_ids import key_shape, words_like_keys
from worldspec.services.validation import check_paths

SHOP = '''world Shop "A shop."

entity Order "An order." {
  key id: str
  total: float
  cancelled: bool = false
}

entity Loan "A loan of a book." {
  key id: str
  returned: bool = false
}

entity Room "A hotel room." {
  key number: str
  clean: bool = true
}

state {
  orders: table Order
  loans: table Loan
  rooms: table Room
  notes: list[str] = []
}

tool cancel_order(order: Order "The order.") "Cancel an order." {
  require not order.cancelled else "Already cancelled."
  order.cancelled = true
}

tool return_loan(loan: Loan "The loan.") "Close a loan." {
  loan.returned = true
}

tool clean_room(room: Room "The room.") "Clean a room." {
  room.clean = true
}

tool note(text: str "A note.") "Write a note down." {
  append text to notes
}
'''

DATA = '''  given {
    orders: [{id: "#W0000001", total: 1250.0}, {id: "#W0000002", total: 40.5}],
    loans: [{id: "L001"}, {id: "L002"}],
    rooms: [{number: "101", clean: false}, {number: "102"}],
  }
'''


def task(instruction: str, name: str = "t") -> str:
    return f'''
task {name} in Shop {{
{DATA}  instruction "{instruction}"
  check done: orders["#W0000001"].cancelled
  solution {{ cancel_order(order: "#W0000001") }}
}}
'''


def warnings(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    spec = tmp_path / "shop.world"
    spec.write_text(text, encoding="utf-8")
    validated = check_paths([spec])
    assert validated.ok, [d.message for d in validated.errors]
    return [(d.code, d.message) for d in validated.diagnostics if d.severity == "warning"]


# ------------------------------------------------------------------ WS615, silent
@pytest.mark.parametrize("instruction", [
    # an ordinal, a range of days, thousands separators, amounts with decimals and symbols
    "I'm moving on August 1st, so cancel order #W0000001 (the one for July 20-22).",
    "Cancel #W0000001: the van shows 27,800 km and the bill of 1,250.00 is wrong.",
    "Cancel order #W0000001, it cost $1250 and I was charged 250.00 EUR twice.",
    # dates in ISO form and with month names, times of day, a year
    "Cancel #W0000001; it was placed 2026-06-15T10:30 and should ship by June 15, 2026.",
    "Cancel #W0000001 before 10:30 or at the latest 3 pm on 21st of March 2026.",
    # a phone number, an e-mail address, a percentage
    "Cancel #W0000001. Call me on +39 347 123 4567 or mail ana.101@example.com; 15% off.",
    # what the data holds, and the numbers of rooms that exist
    "Cancel #W0000001 and #W0000002, close loans L001 and L002, and clean rooms 101 and 102.",
])
def test_numbers_that_are_no_ids_are_not_ws615(tmp_path: Path, instruction: str) -> None:
    assert warnings(tmp_path, SHOP + task(instruction)) == []


# ------------------------------------------------------------------ WS615, fires
@pytest.mark.parametrize(("instruction", "unknown"), [
    ("Cancel #W0000001, and my other order #W9999999 too.", "#W9999999"),
    ("Cancel #W0000001 and close my loan L099, placed on June 15, 2026.", "L099"),
    ("Cancel #W0000001 and clean room 199 by 3 pm, the bill was $1,250.00.", "199"),
])
def test_an_unknown_id_like_the_keys_is_ws615(tmp_path: Path, instruction: str,
                                             unknown: str) -> None:
    assert warnings(tmp_path, SHOP + task(instruction)) == [
        ("WS615", f"the instruction names '{unknown}', which no table holds")]


@pytest.mark.parametrize(("instruction", "warned"), [
    # values the task holds: a total in its data, a note its solution writes
    ("Cancel #W0000003, the one of 405 in total, and note down 'ref 303'.", []),
    # a number like the rooms' that the task holds nowhere
    ("Cancel #W0000003, the one of 406 in total, and note down 'ref 303'.", ["406"]),
])
def test_values_the_task_holds_are_no_unknown_ids(tmp_path: Path, instruction: str,
                                                  warned: list[str]) -> None:
    """A bare number in a world whose rooms are 101... is a value to tell, not an id, when
    the task itself holds it (its data, checks or solution); one it holds nowhere warns."""
    text = f'''
task told in Shop {{
  given {{
    orders: [{{id: "#W0000003", total: 405.0}}],
    rooms: [{{number: "101"}}],
  }}
  instruction "{instruction}"
  check done: orders["#W0000003"].cancelled and notes == ["ref 303"]
  solution {{ cancel_order(order: "#W0000003") note(text: "ref 303") }}
}}
'''
    assert warnings(tmp_path, SHOP + text) == [
        ("WS615", f"the instruction names '{word}', which no table holds") for word in warned]


def test_words_like_keys_leaves_the_spans_out_then_matches_shapes() -> None:
    shapes = {key_shape(k) for k in ("#W0000001", "L001", "101", "4444-DEF")}
    assert shapes == {"#W", "L", "999", "9999-AAA"}
    text = ("Order #W0000123, loan L099, room 205, plate 1234-ABC; 2031-02-28, July 20-22, "
            "the 1st, 27,800 km, 150.00, 2026, 5000, +44 207 946 0958.")
    assert words_like_keys(text, shapes) == ["#W0000123", "L099", "205", "1234-ABC"]
    assert words_like_keys(text, set()) == []


# ------------------------------------------------------------------ WS613
GUARDED = '''
task cancel_one in Shop {
DATA  instruction "Cancel order #W0000001, and only that one."
  check done: orders["#W0000001"].cancelled
  check other_kept "#W0000002 stays open.": not orders["#W0000002"].cancelled
  only changes orders.cancelled
  solution { cancel_order(order: "#W0000001") }
}
'''.replace("DATA", DATA)


def test_a_check_guarding_rows_the_task_works_on_is_not_ws613(tmp_path: Path) -> None:
    assert warnings(tmp_path, SHOP + GUARDED) == []


def test_a_check_on_state_the_task_leaves_alone_is_ws613(tmp_path: Path) -> None:
    free = GUARDED.replace('check other_kept "#W0000002 stays open.": '
                           'not orders["#W0000002"].cancelled',
                           'check loan_open: not loans["L001"].returned')
    assert warnings(tmp_path, SHOP + free) == [
        ("WS613", "check 'loan_open' already holds before the agent does anything")]
