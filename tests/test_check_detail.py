"""A failed check says what it compared; a passed one says nothing more.

The score's breakdown (``CheckOutcome.detail``, ``Score.to_json()``) carries, for a failed
check, both sides of a top-level comparison (or of the first failing comparison of an ``and``
chain), and for ``matches_solution()`` the first path where the state differs from the
reference solution's with the expected and found values. A broken frame keeps the values of
what broke it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from worldspec.runtime.episode import Episode
from worldspec.runtime.tasks import CheckTest
from worldspec.runtime.verdicts import Verdict, compared, expect, explained, state_difference
from worldspec.services.loading import load_world

LEDGER = """
world Ledger "Accounts and transfers."

entity Account "An account." {
  key id: str
  balance: int = 0
  frozen: bool = false
}

state {
  accounts: table Account
  note: str? = none
}

tool deposit(account: Account "Where to.", amount: int "How much.") "Deposit money." {
  require amount > 0 else "amount must be positive"
  account.balance += amount
}

tool freeze(account: Account "Which.") "Freeze an account." {
  account.frozen = true
}

tool write_note(text: str "What to write.") "Leave a note." {
  note = text
}

task top_up in Ledger {
  given { accounts: [{id: "A1", balance: 5}, {id: "A2"}] }
  instruction "Put 10 on A1 and 3 on A2."
  check a1 "A1 holds 15.": accounts["A1"].balance == 15
  check both: accounts["A1"].balance >= 15 and accounts["A2"].balance == 3
  check some_money: (exists a in accounts: a.balance > 100) or accounts["A2"].balance == 3
  check a2_low: accounts["A2"].balance < 4
  check no_note: note == none
  check same_outcome: matches_solution()
  only changes accounts.balance
  solution {
    deposit(account: "A1", amount: 10)
    deposit(account: "A2", amount: 3)
  }
}
"""


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> type[Episode]:
    spec = tmp_path_factory.mktemp("ledger") / "ledger.world"
    spec.write_text(LEDGER, encoding="utf-8")
    return load_world(spec)


def _checks(episode: Episode) -> dict[str, dict[str, Any]]:
    scored = episode.score().to_json()
    json.dumps(scored)  # the whole breakdown is JSON data
    return {c["name"]: c for c in scored["checks"]}


def test_passed_checks_carry_no_detail(ledger: type[Episode]) -> None:
    episode = ledger(task="top_up")
    for name, arguments in ledger.TASKS["top_up"].solution:
        episode.call(name, dict(arguments))
    checks = _checks(episode)
    assert all(c["passed"] for c in checks.values())
    assert [c for c in checks.values() if "detail" in c] == []
    assert episode.score().checks[0].detail is None


def test_a_failed_comparison_shows_both_sides(ledger: type[Episode]) -> None:
    episode = ledger(task="top_up")
    episode.call("deposit", {"account": "A1", "amount": 4})
    checks = _checks(episode)
    assert checks["a1"]["message"] == "A1 holds 15."
    assert checks["a1"]["detail"] == {
        "kind": "compare", "expression": 'accounts["A1"].balance == 15', "op": "==",
        "left": 9, "right": 15}
    # an `and` chain: the first conjunct that fails explains the check
    assert checks["both"]["detail"]["expression"] == 'accounts["A1"].balance >= 15'
    assert checks["both"]["detail"]["left"] == 9
    episode.call("deposit", {"account": "A1", "amount": 6})
    checks = _checks(episode)
    assert checks["a1"]["passed"] and "detail" not in checks["a1"]
    assert checks["both"]["detail"] == {
        "kind": "compare", "expression": 'accounts["A2"].balance == 3', "op": "==",
        "left": 0, "right": 3}


def test_other_shapes_fail_without_detail(ledger: type[Episode]) -> None:
    """An `or`, a quantifier: the check fails with its message and nothing invented."""
    episode = ledger(task="top_up")
    checks = _checks(episode)
    assert not checks["some_money"]["passed"] and "detail" not in checks["some_money"]
    episode.call("deposit", {"account": "A2", "amount": 9})
    checks = _checks(episode)
    assert checks["a2_low"]["detail"] == {
        "kind": "compare", "expression": 'accounts["A2"].balance < 4', "op": "<",
        "left": 9, "right": 4}


def test_matches_solution_names_the_first_differing_path(ledger: type[Episode]) -> None:
    episode = ledger(task="top_up")
    episode.call("deposit", {"account": "A1", "amount": 10})
    episode.call("deposit", {"account": "A2", "amount": 2})
    detail = _checks(episode)["same_outcome"]["detail"]
    assert detail == {"kind": "state", "path": 'accounts["A2"].balance', "expected": 3,
                      "found": 2, "differences": 1}
    episode.call("deposit", {"account": "A2", "amount": 1})
    assert "detail" not in _checks(episode)["same_outcome"]
    # the episode the reference was replayed from is left as it was
    assert episode.initial_state().tables["accounts"].rows["A1"].balance == 5


def test_a_broken_frame_keeps_the_values_of_what_broke_it(ledger: type[Episode]) -> None:
    episode = ledger(task="top_up")
    episode.call("deposit", {"account": "A1", "amount": 10})
    assert episode.score().to_json()["frame"] == {"ok": True, "violations": []}
    episode.call("freeze", {"account": "A2"})
    episode.call("write_note", {"text": "hi"})
    frame = episode.score().to_json()["frame"]
    assert frame["ok"] is False
    assert frame["changes"] == [
        {"path": "note", "old": None, "new": "hi"},
        {"path": 'accounts["A2"].frozen', "old": False, "new": True}]
    assert frame["violations"] == [c["path"] for c in frame["changes"]]
    # `== none` compares as `is None`, and reads as the spec wrote it
    assert _checks(episode)["no_note"]["detail"] == {
        "kind": "compare", "expression": "note == none", "op": "==", "left": "hi",
        "right": None}


def test_the_generated_check_reads_as_the_comparison(ledger: type[Episode]) -> None:
    import inspect
    import sys

    source = inspect.getsource(sys.modules[ledger.__module__])
    assert "        return rt.expect(self.t_accounts['A1'].balance, '==', 15)\n" in source
    # the second comparison of an `and` names its text by position; the texts are data
    assert "and rt.expect(self.t_accounts['A2'].balance, '==', 3, part=1)" in \
        " ".join(source.split()).replace("( ", "(").replace(" )", ")")  # as the printer wraps it
    checks = {c.name: c.test for c in ledger.TASKS["top_up"].checks}
    assert isinstance(checks["a1"], CheckTest)
    assert checks["a1"].texts == ('accounts["A1"].balance == 15',)
    assert checks["both"].texts == ('accounts["A1"].balance >= 15',
                                    'accounts["A2"].balance == 3')
    assert checks["some_money"].texts == ()  # nothing in it to explain
    # a check's function takes what its condition reads: the final state, the initial one
    assert [checks[name].takes for name in ("a1", "some_money", "same_outcome")] == [
        ("ep",), ("ep",), ("ep", "init")]
    # a method of the world: the final episode is its `self`
    assert "    def _check_top_up__a1(self) -> rt.Verdict | bool:" in source
    assert "        return self.solution_verdict(init, 'top_up')\n" in source
    # an `or` is compiled as it always was
    some_money = source[source.index("    def _check_top_up__some_money(self) -> bool:  "
                                     "# ledger.world:33\n"):]
    assert "\n        return bool(\n" in some_money.split("\n\n")[0]


def test_verdict_helpers() -> None:
    assert bool(compared(1, "==", 1, "x == 1")) and compared(1, "==", 1, "x == 1").detail is None
    failed = compared(None, "is not", None, "x != none")
    assert not failed and failed.detail == {"kind": "compare", "expression": "x != none",
                                            "op": "!=", "left": None, "right": None}
    assert state_difference([]) is None
    assert repr(Verdict(True)) == "Verdict(True, None)"


def test_a_comparison_named_by_position_reads_as_one_given_its_text() -> None:
    texts = ("x == 1", "y > 2")
    assert bool(expect(1, "==", 1)) and expect(1, "==", 1).detail is None
    first, second = expect(2, "==", 1), expect(None, "is not", None, part=1)
    assert first.detail == {"kind": "compare", "part": 0, "op": "==", "left": 2, "right": 1}
    for verdict, (left, op, right), text in ((first, (2, "==", 1), "x == 1"),
                                             (second, (None, "is not", None), "y > 2")):
        told = explained(verdict, texts)
        assert isinstance(told, Verdict) and not told and told.detail is not None
        # the detail `compared` gives with the text spelled out, keys in the same order
        assert list(told.detail.items()) == list(
            (compared(left, op, right, text).detail or {}).items())
    # what names no position passes through as it is
    assert explained(True, texts) is True and explained(False, texts) is False
    passed = expect(1, "<", 2)
    assert explained(passed, texts) is passed
    state = Verdict(False, {"kind": "state", "path": "x"})
    assert explained(state, texts) is state


def test_the_record_of_a_rollout_keeps_the_detail(tmp_path: Path, ledger: type[Episode]
                                                  ) -> None:
    """What a session scores is what a rollout record holds (``score.to_json()``)."""
    from worldspec.rollout.session import Session

    session = Session(ledger, "top_up")
    session.start()
    session.act({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {
            "name": "deposit", "arguments": '{"account": "A1", "amount": 3}'}}]})
    session.act({"role": "assistant", "content": "Done."})
    assert session.score is not None
    checks = {c["name"]: c for c in session.score.to_json()["checks"]}
    assert checks["a1"]["detail"]["left"] == 8
