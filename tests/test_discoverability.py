"""Discoverability (WS624): a reference solution names only what the agent was shown first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldspec.cli.main import main
from worldspec.dsl.formatter import format_source
from worldspec.services.discoverability import ShownText
from worldspec.services.validation import TaskReport, check_paths

LIBRARY = '''world Library "A library desk: members borrow copies of books."

policy "Tell a member about a late fee before returning a copy."

type Barcode = str matching /^C[0-9]{4}$/

entity Member "A card holder." {
  key id: str
  name: str
  fees_due: float = 0.0
}

entity Copy "A physical copy." {
  key barcode: Barcode
  title: str
  on_loan: bool = false
}

entity Loan "A copy lent to a member." {
  key id: str
  copy: Copy
  member: Member
  open: bool = true
}

record Note "A note on a member's file." {
  author: str "Who writes it."
  text: str(1..500) freeform "What it says, in the writer's words."
}

state {
  members: table Member
  copies: table Copy
  loans: table Loan
  notes: list[str] = []
}

tool list_loans(member: Member "The card number.") -> list[str]
  "The ids of a member's open loans."
{
  return [l.id for l in loans if l.member == member and l.open]
}

tool get_loan(loan: Loan "The loan id.") -> Loan "A loan with the copy it lends." {
  return loan
}

tool return_copy(copy: Copy "The copy's barcode.") -> str "Check in a copy." {
  let open = [l for l in loans if l.copy == copy and l.open]
  require len(open) == 1 else f"Copy {copy.barcode} is not on loan."
  open[0].open = false
  copy.on_loan = false
  return f"Copy {copy.barcode} is back."
}

tool pay_fees(member: Member "The card number.", amount: float(0.01..100.0) "Dollars paid.")
  -> float "Record a payment; returns what is still owed."
{
  require amount <= member.fees_due else "More than is owed."
  member.fees_due = round(member.fees_due - amount, 2)
  return member.fees_due
}

tool add_note(member: Member "The card number.", text: str(1..500) "The note.") -> int
  "Add a note to a member's file."
{
  append text to notes
  return len(notes)
}

tool add_note_freeform(
  member: Member "The card number.",
  text: str(1..500) freeform "The note, in the librarian's words.",
) -> int "Add a note to a member's file."
{
  append text to notes
  return len(notes)
}

tool file_note(member: Member "The card number.", note: Note "The note.") -> int
  "File a signed note."
{
  append note.text to notes
  return len(notes)
}

TASKS
'''

GIVEN = '''given {
    members: [{id: "M001", name: "Ana Silva", fees_due: 7.5}],
    copies: [{barcode: "C0003", title: "Dune", on_loan: true},
             {barcode: "C0004", title: "Emma"}],
    loans: [{id: "L002", copy: "C0003", member: "M001"}],
  }'''


def _task(name: str, body: str, solution: str) -> str:
    return (f'task {name} in Library {{\n  {GIVEN}\n  {body}\n'
            f'  solution {{\n    {solution}\n  }}\n}}\n')


def _reports(tmp_path: Path, *tasks: str) -> dict[str, TaskReport]:
    spec = tmp_path / "library.world"
    spec.write_text(LIBRARY.replace("TASKS", "\n".join(tasks)), encoding="utf-8")
    result = check_paths([spec])
    assert not [d for d in result.result.diagnostics if d.severity.value == "error"], \
        result.result.diagnostics
    return {r.task: r for r in result.tasks}


def _unseen(report: TaskReport) -> list[str]:
    return [d.message for d in report.problems if d.code == "WS624"]


RETURN_DUNE = 'check back: not loans["L002"].open'


def test_an_id_returned_by_an_earlier_call_is_discoverable(tmp_path: Path) -> None:
    reports = _reports(tmp_path, _task(
        "via_loan", 'instruction "Ana Silva (M001) brings back Dune."\n  ' + RETURN_DUNE,
        'list_loans(member: "M001")\n    get_loan(loan: "L002")\n'
        '    return_copy(copy: "C0003")'))
    assert reports["via_loan"].valid, reports["via_loan"].problems


def test_an_id_never_shown_is_an_error_at_the_argument(tmp_path: Path) -> None:
    # the library pattern: list_loans shows loan ids only, so the barcode is a guess
    reports = _reports(tmp_path, _task(
        "guessed", 'instruction "Ana Silva (M001) brings back Dune."\n  ' + RETURN_DUNE,
        'list_loans(member: "M001")\n    return_copy(copy: "C0003")'))
    report = reports["guessed"]
    assert not report.valid
    [problem] = [d for d in report.problems if d.code == "WS624"]
    assert problem.severity.value == "error"
    assert problem.message == ('solution call return_copy() passes copy: "C0003", a value the '
                               'agent was never shown before the call')
    source = (tmp_path / "library.world").read_text(encoding="utf-8")
    assert source[problem.span.start:problem.span.end] == '"C0003"'
    hints = " ".join(problem.hints)
    assert "read tool" in hints and "instruction" in hints and "known" in hints
    assert "freeform" not in hints  # an entity's key is never the agent's own words


def test_an_id_shown_only_after_the_call_does_not_count(tmp_path: Path) -> None:
    reports = _reports(tmp_path, _task(
        "too_late", 'instruction "Ana Silva (M001) brings back Dune."\n  ' + RETURN_DUNE,
        'return_copy(copy: "C0003")\n    list_loans(member: "M001")\n'
        '    get_loan(loan: "L002")'))
    messages = _unseen(reports["too_late"])
    assert len(messages) == 2  # the barcode before any result, then the loan id: both
    assert 'copy: "C0003"' in messages[0] and 'loan: "L002"' in messages[1]


def test_an_id_named_in_the_instruction_is_discoverable(tmp_path: Path) -> None:
    reports = _reports(tmp_path, _task(
        "told", 'instruction "Ana (M001) brings back copy c0003 of Dune."\n  ' + RETURN_DUNE,
        'return_copy(copy: "C0003")'))
    assert reports["told"].valid, reports["told"].problems  # case does not matter


def test_known_counts_and_unknown_does_not(tmp_path: Path) -> None:
    known = _task("known", 'instruction "Return Ana\'s copy of Dune."\n  '
                  'persona "Ana Silva, a regular."\n  '
                  'known "Her card is M001 and the barcode on the book is C0003."\n  '
                  + RETURN_DUNE, 'return_copy(copy: "C0003")')
    unknown = _task("unknown", 'instruction "Return Ana\'s copy of Dune."\n  '
                    'persona "Ana Silva, a regular."\n  '
                    'unknown "The barcode C0003 and her card number M001."\n  '
                    + RETURN_DUNE, 'return_copy(copy: "C0003")')
    reports = _reports(tmp_path, known, unknown)
    assert reports["known"].valid, reports["known"].problems
    assert _unseen(reports["unknown"]) == [
        'solution call return_copy() passes copy: "C0003", a value the agent was never shown '
        'before the call']


def test_freeform_text_is_exempt_and_plain_text_is_not(tmp_path: Path) -> None:
    body = 'instruction "Note on Ana\'s (M001) file that she was kind about the late fee."\n' \
           '  check noted: len(notes) == 1'
    said = '"Member was gracious about the fee."'
    reports = _reports(
        tmp_path,
        _task("freeform", body, f'add_note_freeform(member: "M001", text: {said})'),
        _task("plain", body, f'add_note(member: "M001", text: {said})'),
        _task("record_field", body,
              f'file_note(member: "M001", note: Note(author: "Desk", text: {said}))'))
    assert reports["freeform"].valid, reports["freeform"].problems
    assert _unseen(reports["plain"]) == [
        f'solution call add_note() passes text: {said}, a value the agent was never shown '
        'before the call']
    [plain] = [d for d in reports["plain"].problems if d.code == "WS624"]
    assert any("`freeform`" in h for h in plain.hints)
    # a record's freeform field is exempt; its other strings still must be shown
    assert _unseen(reports["record_field"]) == [
        'solution call file_note() passes note: note.author: "Desk", a value the agent was '
        'never shown before the call']


def test_a_computed_amount_is_exempt(tmp_path: Path) -> None:
    reports = _reports(tmp_path, _task(
        "pay_half", 'instruction "Ana Silva (M001) pays half of what she owes."\n'
        '  check paid: members["M001"].fees_due == 3.75',
        'pay_fees(member: "M001", amount: 3.75)'))
    assert reports["pay_half"].valid, reports["pay_half"].problems


def test_a_token_bounded_near_miss_is_not_shown(tmp_path: Path) -> None:
    reports = _reports(tmp_path, _task(
        "near_miss", 'instruction "Ana Silva (M001) brings back copy C00031 of Dune."\n  '
        + RETURN_DUNE, 'return_copy(copy: "C0003")'))
    assert len(_unseen(reports["near_miss"])) == 1


def test_every_violation_of_a_task_is_reported(tmp_path: Path) -> None:
    reports = _reports(tmp_path, _task(
        "many", 'instruction "Ana brings back Dune and pays $1."\n  ' + RETURN_DUNE,
        'pay_fees(member: "M001", amount: 1.0)\n    return_copy(copy: "C0003")'))
    messages = _unseen(reports["many"])
    assert len(messages) == 2
    assert 'member: "M001"' in messages[0] and 'copy: "C0003"' in messages[1]


@pytest.mark.parametrize(("shown", "value", "expected"), [
    ('{"success": true, "data": ["L002", "L003"]}', "L002", True),
    ('{"success": true, "data": ["L0021"]}', "L002", False),
    ('{"name": "Zo\\u00eb Brandt"}', "zoë brandt", True),  # JSON strings as decoded text
    ("Reply to Priya:\n  Slides   attached tonight.", "slides attached tonight.", True),
    ("Order #W3391820 is pending.", "#W3391820", True),
    ("Order #W33918201 is pending.", "#W3391820", False),
    ("You are fatima_taylor_3452.", "Taylor", True),  # an underscore separates tokens
    ("You are fatima_taylor_3452.", "Taylo", False),
])
def test_shown_text_matching(shown: str, value: str, expected: bool) -> None:
    text = ShownText()
    text.add_value(shown)
    assert text.shows(value) is expected


def test_freeform_round_trips_through_the_formatter() -> None:
    source = LIBRARY.replace("TASKS", "")
    formatted = format_source(source, "library.world")
    assert "text: str(1..500) freeform \"What it says, in the writer's words.\"" in formatted
    assert "text: str(1..500) freeform \"The note, in the librarian's words.\"," in formatted
    assert format_source(formatted, "library.world") == formatted


def test_a_key_in_a_tool_docs_example_is_a_guess_but_a_format_is_shown(tmp_path: Path) -> None:
    # "e.g. C0003" in a parameter doc happens to name the task's row: sending it is a guess
    spec = LIBRARY.replace('return_copy(copy: Copy "The copy\'s barcode.")',
                           'return_copy(copy: Copy "The copy\'s barcode, e.g. C0003.")')
    spec = spec.replace('text: str(1..500) "The note.")',
                        'text: str(1..500) "The note: OVERDUE or LOST.")')
    path = tmp_path / "library.world"
    path.write_text(spec.replace("TASKS", "\n".join([
        _task("example_id", 'instruction "Ana Silva (M001) brings back Dune."\n  '
              + RETURN_DUNE, 'list_loans(member: "M001")\n    return_copy(copy: "C0003")'),
        _task("doc_word", 'instruction "Mark Ana Silva (M001) as overdue."\n  '
              'check noted: len(notes) == 1',
              'add_note(member: "M001", text: "OVERDUE")'),
    ])), encoding="utf-8")
    reports = {r.task: r for r in check_paths([path]).tasks}
    assert _unseen(reports["example_id"]) == [
        'solution call return_copy() passes copy: "C0003", a value the agent was never shown '
        'before the call']
    # a plain text the definitions offer (not a row's key) is shown by them
    assert reports["doc_word"].valid, reports["doc_word"].problems


GUESSED = Path(__file__).resolve().parent / "golden" / "WS624.world"


def test_worldspec_test_reports_undiscoverable_tasks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "library.world"
    spec.write_text(GUESSED.read_text(encoding="utf-8"), encoding="utf-8")
    failures = str(tmp_path / "failures")
    assert main(["test", str(spec), "--max-examples", "3", "--steps", "3",
                 "--failures", failures]) == 1
    text = capsys.readouterr().out
    assert "tasks: 0 of 1 valid" in text
    assert "PROBLEM invalid task: return_dune" in text
    assert 'error[WS624] line 46: solution call return_copy() passes copy: "C0003"' in text
    assert main(["test", str(spec), "--max-examples", "3", "--steps", "3", "--format", "json",
                 "--failures", failures]) == 1
    [world] = json.loads(capsys.readouterr().out)
    [task] = world["tasks"]
    assert task["task"] == "return_dune" and task["status"] == "invalid"
    assert [p["code"] for p in task["problems"]] == ["WS624"]
    # told the barcode, the same task is valid and the world tests clean
    spec.write_text(GUESSED.read_text(encoding="utf-8").replace(
        "bringing back Dune.", "bringing back Dune, copy C0003."), encoding="utf-8")
    assert main(["test", str(spec), "--max-examples", "3", "--steps", "3",
                 "--failures", failures]) == 0
    assert "tasks: 1 of 1 valid" in capsys.readouterr().out
