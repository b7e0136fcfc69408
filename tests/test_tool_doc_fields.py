"""WS515: a lookup's description names fields that its result shows by key only."""

from __future__ import annotations

import pytest

from worldspec.compiler.api import check_source
from worldspec.compiler.rules.tool_doc_fields import field_mention

HEAD = """world Library "A library."
entity Member "A card holder." { key id: str  name: str }
entity Loan "A loan." {
  key id: str
  member: Member
  due_on: date
  late_fee: float
  renewed: bool
}
record MemberInfo "A member and their loans." { member: Member  name: str  loans: list[Loan] }
state { members: table Member  loans: table Loan }
"""


def warnings(tool: str) -> list[str]:
    result = check_source(HEAD + tool)
    assert result.ok, [d.message for d in result.diagnostics]
    return [d.message for d in result.diagnostics if d.code == "WS515"]


def test_a_doc_naming_a_field_only_reachable_by_key_is_flagged() -> None:
    assert warnings("""
tool list_loans(member: Member "The card.") -> list[Loan]
  "List a member's loans with their due dates and late fees."
{ return [l for l in loans if l.member == member] }
""") == ["the description of tool 'list_loans' mentions 'due_on', 'late_fee', which its "
         "result (list[Loan]) does not contain: it shows Loan by key only"]


def test_through_a_record_field_too() -> None:
    assert len(warnings("""
tool get_member(member: Member "The card.") -> MemberInfo
  "Show a member's name and the due dates of their loans."
{
  let mine = [l for l in loans if l.member == member]
  return MemberInfo(member: member, name: member.name, loans: mine)
}
""")) == 1


@pytest.mark.parametrize("tool", [
    # the result is the row itself
    """tool get_loan(loan: Loan "The loan.") -> Loan "Show a loan with its due date."
{ return loan }""",
    # whole rows in a list
    """tool list_loans(member: Member "The card.") -> list[row[Loan]]
  "List a member's loans with their due dates."
{ return [l for l in loans if l.member == member] }""",
    # a record field the result has (`name`), besides keys
    """tool get_member(member: Member "The card.") -> MemberInfo "Show a member's name and loans."
{ return MemberInfo(member: member, name: member.name, loans: []) }""",
    # a yes/no field used as an adjective choosing the rows, not promised
    """tool renewed_loans() -> list[Loan] "List the renewed loans."
{ return [l for l in loans if l.renewed] }""",
    # the field is what the agent sends (its parameter's doc names it)
    """tool loans_due(due: date "The due date to look for.") -> list[Loan] "Find loans by due date."
{ return [l for l in loans if l.due_on == due] }""",
    # a tool that acts: its doc names fields as conditions and effects
    """tool renew(loan: Loan "The loan.") -> list[Loan] "Push the due date back a week."
{ loan.due_on = loan.due_on + days(7)  return [loan] }""",
])
def test_no_warning_where_the_doc_keeps_its_promise(tool: str) -> None:
    assert warnings(tool) == []


def test_a_yes_no_field_after_whether_is_a_promise() -> None:
    assert len(warnings("""
tool list_loans() -> list[Loan] "List loans and whether each was renewed."
{ return [l for l in loans] }
""")) == 1


@pytest.mark.parametrize("name, says, mentions", [
    ("due_on", "with their due dates", True),
    ("due_on", "due on", True),
    ("due_on", "overdue loans", False),
    ("late_fee", "late fees", True),
    ("late_fee", "late-fee", True),
    ("late_fee", "fee", False),
    ("copy", "copies", True),
    ("placed_at", "placed time", True),
    ("name", "renamed", False),
])
def test_field_mentions_are_loose_but_whole_words(name: str, says: str, mentions: bool) -> None:
    assert (field_mention(name).search(says) is not None) is mentions


@pytest.mark.parametrize(("doc", "flagged"), [
    # the result's own field names the words: a loan's late fee is no member's `fee`
    ('"Show a member\'s name, loans and the late fee they owe in all."', []),
    # the words of a type's name: a "member info" is no promise of a member's `info`
    ('"Show the member info of a card holder: name and loans."', []),
    # a member's field the result never shows is still a promise
    ('"Show a member\'s name, loans and their home branch."', ["branch"]),
])
def test_words_inside_what_the_result_shows_are_no_promise(doc: str,
                                                            flagged: list[str]) -> None:
    """A mention of a keyed row's field inside a mention of the result's own field ("late
    fee" for late_fee) or of a type's name is not a promise of that row's field."""
    head = HEAD.replace('name: str }', 'name: str  fee: float  info: str  branch: str }', 1) \
        .replace("name: str  loans: list[Loan] }", "name: str  loans: list[Loan]  "
                 "late_fee: float }")
    result = check_source(head + f"""
tool get_member(member: Member "The card.") -> MemberInfo
  {doc}
{{ return MemberInfo(member: member, name: member.name, loans: [], late_fee: 0.0) }}
""")
    assert result.ok, [d.message for d in result.diagnostics]
    found = [d.message for d in result.diagnostics if d.code == "WS515"]
    assert found == [f"the description of tool 'get_member' mentions '{f}', which its result "
                     "(MemberInfo) does not contain: it shows Loan and Member by key only"
                     for f in flagged]
