"""The runtime contract of generated worlds: ``call``, atomicity, isolation, reset/copy/
snapshot, hashing, ``diff``, ``score`` and the tool schemas.

Uses the committed packages of the examples (``generated/``) and a small ``Ledger`` world
compiled once per result convention, with tools built to fail at chosen points: after
changing state, on an invariant, on a duplicate key, on a referenced row, after drawing from
the RNG, and on a Python error.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worldspec.runtime import helpers as rt
from worldspec.runtime.episode import Episode
from worldspec.services.loading import compile_worlds, load_package

REPO = Path(__file__).resolve().parent.parent
PACKAGES = {"MobileMessaging": "mobile_messaging", "ClinicScheduling": "clinic_scheduling",
            "OnlineShop": "online_shop"}

LEDGER = """\
world Ledger "Accounts and transfers."

config { results: @RESULTS@  clock: "2024-01-01T09:00:00"  tick: 60  seed: 5 }

type Code = str matching /^[A-Z]{3}$/

entity Account {
  key id: str
  owner: str(1..20)
  balance: int(0..)
  tags: list[str] = []
}

entity Transfer {
  key id: str = next(transfer_ids)
  source: Account
  target: Account
  amount: int
  memo: str = ""
}

state {
  accounts: table Account
  transfers: table Transfer
  transfer_ids: sequence "T{:03d}"
  total_moved: int = 0
  lucky: int = 0
  labels: map[str, int] = {}
  notes: json = none
}

invariant small_transfers "No transfer moves more than 1000.":
  all t in transfers: t.amount <= 1000

tool open_account(id: str, owner: str(1..20), code: Code = "ABC",
                  balance: int(0..1000000) = 0, tags: list[str]? = none) -> Account
  "Open an account."
{
  let account = Account(id: id, owner: owner, balance: balance, tags: [code] + (tags ?? []))
  insert account into accounts
  return account
}

tool transfer(source: Account "Who pays.", target: Account else f"No account {target}.",
              amount: int(1..), memo: str = "") -> Transfer
  "Move money; fails at the very end when the memo is 'late'."
{
  source.balance -= amount
  target.balance += amount
  total_moved += amount
  labels[source.id] = amount
  let t = Transfer(source: source, target: target, amount: amount, memo: memo)
  insert t into transfers
  require memo != "late" else "Refused late, after every change."
  return t
}

tool close_account(account: Account) -> str "Delete an account." {
  delete account from accounts
  return account.id
}

tool duplicate(id: str) -> str "Insert a second account with an existing id." {
  total_moved += 1
  insert Account(id: id, owner: "dup", balance: 0) into accounts
  return id
}

tool draw(fail_after: bool = false) -> int "Draw a number; fail afterwards if asked." {
  lucky = random_int(1, 1000000)
  require not fail_after else "Drew and failed."
  return lucky
}

tool crash(n: int) -> int "Divide by n." {
  total_moved += 1
  return 10 // n
}

tool set_notes(value: json) -> json "Store any JSON." {
  notes = value
  return notes
}

tool get_notes() -> json "The stored JSON." { return notes }

tool balance(account: Account) -> int "An account's balance." { return account.balance }

task pay_bob in Ledger "Pay Bob 30." {
  given { accounts: [{id: "A", owner: "Ann", balance: 100},
                     {id: "B", owner: "Bob", balance: 5, tags: ["vip"]},
                     {id: "R", owner: "Rich", balance: 5000}],
          notes: {"history": [1, 2], "meta": {"k": "v"}} }
  instruction "Pay Bob 30 from Ann's account."
  check bob_paid "Bob has 35.": accounts["B"].balance == 35
  check ann_paid: accounts["A"].balance == initial.accounts["A"].balance - 30
  only changes accounts.balance, transfers, transfer_ids, total_moved, labels
  solution { transfer(source: "A", target: "B", amount: 30) }
}

task broken_check in Ledger "A task with a check that raises." {
  given { accounts: [{id: "A", owner: "Ann", balance: 100}] }
  instruction "Nothing to do."
  check reads_missing "Reads a row that does not exist.": accounts["ZZZ"].balance == 0
  check fine: len(accounts) == 1
  solution { balance(account: "A") }
}
"""

CONVENTIONS = ("envscaler", "bfcl", "tau2")


@pytest.fixture(scope="module")
def ledgers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, type[Episode]]:
    """The Ledger world compiled once per result convention."""
    root = tmp_path_factory.mktemp("ledger")
    out: dict[str, type[Episode]] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORLDSPEC_CACHE", str(root / "cache"))
        for convention in CONVENTIONS:
            spec = root / convention / "ledger.world"
            spec.parent.mkdir()
            spec.write_text(LEDGER.replace("@RESULTS@", convention), encoding="utf-8")
            out[convention] = compile_worlds([spec]).worlds["Ledger"]
    return out


@pytest.fixture(scope="module")
def ledger(ledgers: dict[str, type[Episode]]) -> type[Episode]:
    return ledgers["envscaler"]


@pytest.fixture(scope="module")
def examples() -> dict[str, type[Episode]]:
    return {world: load_package(REPO / "generated" / package).World
            for world, package in PACKAGES.items()}


def all_tasks(examples: dict[str, type[Episode]]) -> Iterator[tuple[type[Episode], str]]:
    for world in examples.values():
        for task in world.TASKS:
            yield world, task


def solve(episode: Episode, task: str | None = None) -> list[Any]:
    spec = episode.TASKS[task] if task else episode.task
    assert spec is not None
    results = []
    for name, args in spec.solution:
        result = episode.call(name, dict(args))
        assert not episode.failed(result), (spec.name, name, result)
        results.append(result)
    return results


def message(convention: str, result: Any) -> str:
    """The failure message of a result, checking the convention's exact shape."""
    if convention == "envscaler":
        assert isinstance(result, dict) and set(result) == {"success", "error"}, result
        assert result["success"] is False
        text = result["error"]
    elif convention == "bfcl":
        assert isinstance(result, dict) and set(result) == {"error"}, result
        text = result["error"]
    else:
        assert isinstance(result, str) and result.startswith("Error: "), result
        text = result[len("Error: "):]
    assert isinstance(text, str)
    return text


def fingerprint(episode: Episode) -> tuple[str, Any, dt.datetime, Any]:
    return (episode.state_hash(), episode.export_state(), episode.clock,
            episode.rng.getstate())


# ------------------------------------------------------------------- call()
BAD_CALLS: list[tuple[str, Any, str]] = [
    ("nope", {}, 'Unknown tool "nope".'),
    ("transfer", "{bad json", "Arguments are not valid JSON: "),
    ("transfer", '{"source": "A",}', "Arguments are not valid JSON: "),
    ("transfer", "[1, 2]", "Arguments must be a JSON object."),
    ("transfer", '"A"', "Arguments must be a JSON object."),
    ("transfer", "null", "Arguments must be a JSON object."),
    ("transfer", "3", "Arguments must be a JSON object."),
    ("transfer", ["A", "B", 1], "Arguments must be a JSON object."),
    ("transfer", {"source": "A", "target": "B"}, 'Missing required argument "amount".'),
    ("transfer", {"source": "A", "target": "B", "amount": None},
     'Missing required argument "amount".'),
    ("transfer", "", 'Missing required argument "source".'),
    ("transfer", {"source": "A", "target": "B", "amount": 1, "zzz": 1},
     'Unexpected argument "zzz" (expected: source, target, amount, memo).'),
    ("balance", {"account": "A", "extra": None},
     'Unexpected argument "extra" (expected: account).'),
    ("transfer", {"source": "A", "target": "B", "amount": "1"},
     'amount: expected an integer, got "1"'),
    ("transfer", {"source": "A", "target": "B", "amount": True},
     "amount: expected an integer, got true"),
    ("transfer", {"source": "A", "target": "B", "amount": 1.5},
     "amount: expected an integer, got 1.5"),
    ("transfer", {"source": ["A"], "target": "B", "amount": 1},
     "source: expected a string, got array"),
    ("transfer", {"source": "A", "target": "B", "amount": 1, "memo": 7},
     "memo: expected a string, got 7"),
    ("transfer", {"source": "A", "target": "B", "amount": 0}, "amount: 0 is out of range 1.."),
    ("open_account", {"id": "C", "owner": ""}, "owner: length 0 is out of range 1..20"),
    ("open_account", {"id": "C", "owner": "x" * 21}, "owner: length 21 is out of range 1..20"),
    ("open_account", {"id": "C", "owner": "x", "code": "abc"},
     'code: "abc" does not match /^[A-Z]{3}$/'),
    ("open_account", {"id": "C", "owner": "x", "balance": -1},
     "balance: -1 is out of range 0..1000000"),
    ("open_account", {"id": "C", "owner": "x", "balance": 1000001},
     "balance: 1000001 is out of range 0..1000000"),
    ("open_account", {"id": "C", "owner": "x", "tags": ["a", 2]},
     "tags[1]: expected a string, got 2"),
    ("transfer", {"source": "Q", "target": "B", "amount": 1}, 'Account "Q" not found.'),
    ("transfer", {"source": "A", "target": "Q\u00fc", "amount": 1}, "No account Q\u00fc."),
    ("close_account", {"account": "\u00dc"}, 'Account "\u00dc" not found.'),
    ("set_notes", '{"value": NaN}', "value: expected a finite number, got NaN"),
    ("set_notes", '{"value": [1, Infinity]}', "value[1]: expected a finite number"),
]


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize(("tool", "args", "expected"), BAD_CALLS,
                         ids=[f"{i}-{t}" for i, (t, _, _) in enumerate(BAD_CALLS)])
def test_bad_calls_fail_in_the_worlds_convention(
        ledgers: dict[str, type[Episode]], convention: str, tool: str, args: Any,
        expected: str) -> None:
    episode = ledgers[convention](task="pay_bob")
    before = fingerprint(episode)
    result = episode.call(tool, args)
    assert episode.failed(result)
    text = message(convention, result)
    if expected.endswith(": ") or expected.endswith("finite number"):
        assert text.startswith(expected), text
    else:
        assert text == expected
    assert fingerprint(episode) == before


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_success_shapes(ledgers: dict[str, type[Episode]], convention: str) -> None:
    episode = ledgers[convention](task="pay_bob")
    result = episode.call("balance", {"account": "B"})
    assert not episode.failed(result)
    expected = {"envscaler": {"success": True, "data": 5}, "bfcl": 5, "tau2": "5"}[convention]
    assert result == expected
    owner = episode.call("close_account", '{"account": "R"}')
    assert owner == {"envscaler": {"success": True, "data": "R"}, "bfcl": "R",
                     "tau2": "R"}[convention]


def test_deeply_nested_arguments_fail_cleanly(ledger: type[Episode]) -> None:
    episode = ledger(task="pay_bob")
    before = fingerprint(episode)
    deep = '{"value": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert episode.failed(episode.call("set_notes", deep))
    assert fingerprint(episode) == before


def test_custom_not_found_messages_in_the_examples(examples: dict[str, type[Episode]]) -> None:
    messaging = examples["MobileMessaging"](task="clean_up_contacts")
    assert messaging.call("remove_contact", {"contact": "CT999"}) == {
        "success": False, "error": "No contact with id CT999."}
    clinic = examples["ClinicScheduling"](task="julia_reschedule")
    assert clinic.call("check_in", {"appointment": "APT9"}) == {
        "error": "No appointment with id APT9."}
    shop = examples["OnlineShop"](task="cancel_and_reorder")
    assert shop.call("get_order_details", {"order": "#W1"}) == \
        'Error: order: "#W1" does not match /^#W[0-9]{7}$/'


# --------------------------------------------------------------- atomicity
ATOMIC_FAILURES: list[tuple[str, dict[str, Any], str]] = [
    ("transfer", {"source": "A", "target": "B", "amount": 30, "memo": "late"},
     "Refused late, after every change."),
    ("transfer", {"source": "R", "target": "B", "amount": 1001},
     "No transfer moves more than 1000."),
    ("transfer", {"source": "A", "target": "B", "amount": 71},
     "Account.balance: -1 is out of range 0.."),
    ("duplicate", {"id": "A"}, 'Account "A" already exists.'),
    ("crash", {"n": 0}, "integer division or modulo by zero"),  # Python's text of 10 // 0
]


@pytest.mark.parametrize(("tool", "args", "expected"), ATOMIC_FAILURES,
                         ids=[t[0] + str(i) for i, t in enumerate(ATOMIC_FAILURES)])
def test_a_failed_call_changes_nothing(ledger: type[Episode], tool: str, args: dict[str, Any],
                                       expected: str) -> None:
    episode = ledger(task="pay_bob")
    solve(episode)  # some history first: the undo log is not empty
    before = fingerprint(episode)
    rows = {name: dict(t.rows) for name, t in episode.tables.items()}
    result = episode.call(tool, args)
    assert message("envscaler", result) == expected
    assert fingerprint(episode) == before
    assert {name: dict(t.rows) for name, t in episode.tables.items()} == rows
    assert [list(t.rows) for t in episode.tables.values()] == [list(r) for r in rows.values()]
    # the state is still usable: the same successful call as before works
    assert not episode.failed(episode.call("transfer", {"source": "A", "target": "B",
                                                        "amount": 1}))
    assert episode.export_state()["transfers"][-1]["id"] == "T002"


def test_deleting_a_referenced_row_fails_and_keeps_its_place(ledger: type[Episode]) -> None:
    episode = ledger(task="pay_bob")
    solve(episode)
    before = fingerprint(episode)
    order = list(episode.tables["accounts"].rows)
    assert message("envscaler", episode.call("close_account", {"account": "A"})) == \
        'Account "A" is still referenced and cannot be deleted.'
    assert fingerprint(episode) == before
    assert list(episode.tables["accounts"].rows) == order
    # an unreferenced row can go
    assert episode.call("close_account", {"account": "R"}) == {"success": True, "data": "R"}


def test_a_failed_draw_restores_the_rng(ledger: type[Episode]) -> None:
    episode = ledger(task="pay_bob")
    before = fingerprint(episode)
    assert message("envscaler", episode.call("draw", {"fail_after": True})) == \
        "Drew and failed."
    assert fingerprint(episode) == before
    drawn = episode.call("draw")["data"]
    fresh = ledger(task="pay_bob")
    assert fresh.call("draw")["data"] == drawn  # the failed draw left no trace
    assert ledger(task="pay_bob", seed=99).call("draw") == ledger(task="pay_bob", seed=99).call(
        "draw")


def test_the_clock_ticks_only_on_success(ledger: type[Episode]) -> None:
    episode = ledger(task="pay_bob")
    start = episode.clock
    episode.call("crash", {"n": 0})
    assert episode.clock == start
    episode.call("balance", {"account": "A"})
    assert episode.clock == start + dt.timedelta(seconds=60)


TOOL_CALLS = st.one_of(
    st.builds(lambda s, t, a, m: ("transfer", {"source": s, "target": t, "amount": a,
                                               "memo": m}),
              st.sampled_from(["A", "B", "R", "X"]), st.sampled_from(["A", "B", "R", "X"]),
              st.integers(-5, 1500), st.sampled_from(["", "late"])),
    st.builds(lambda i: ("close_account", {"account": i}), st.sampled_from(["A", "B", "R"])),
    st.builds(lambda i: ("duplicate", {"id": i}), st.sampled_from(["A", "N"])),
    st.builds(lambda f: ("draw", {"fail_after": f}), st.booleans()),
    st.builds(lambda n: ("crash", {"n": n}), st.integers(-1, 1)),
    st.builds(lambda i, b: ("open_account", {"id": i, "owner": "o", "balance": b}),
              st.sampled_from(["A", "N", "M"]), st.integers(-1, 2000)),
)


@settings(max_examples=60)
@given(st.lists(TOOL_CALLS, max_size=12))
def test_random_calls_are_atomic_and_replayable(ledger: type[Episode],
                                                calls: list[tuple[str, dict[str, Any]]]) -> None:
    episode = ledger(task="pay_bob")
    for name, args in calls:
        before = fingerprint(episode)
        result = episode.call(name, args)
        if episode.failed(result):
            assert fingerprint(episode) == before, (name, args, result)
        assert all(t["amount"] <= 1000 for t in episode.export_state()["transfers"])
    replay = ledger(task="pay_bob")
    for name, args in calls:
        replay.call(name, args)
    assert replay.state_hash() == episode.state_hash()
    assert replay.export_state() == episode.export_state()
    episode.reset(task="pay_bob")
    assert episode.state_hash() == ledger(task="pay_bob").state_hash()


# ---------------------------------------------------------------- isolation
def test_episodes_share_no_mutable_state(examples: dict[str, type[Episode]]) -> None:
    for world, task in all_tasks(examples):
        one, two = world(task=task), world(task=task)
        initial_hash, initial = two.state_hash(), two.export_state()
        assert one.tables is not two.tables and one.state is not two.state
        for name in one.tables:
            assert not set(map(id, one.tables[name].rows.values())) & set(
                map(id, two.tables[name].rows.values()))
        solve(one)
        assert one.state_hash() != initial_hash, task
        assert two.state_hash() == initial_hash and two.export_state() == initial, task


def test_task_data_is_never_mutated(examples: dict[str, type[Episode]],
                                    ledger: type[Episode]) -> None:
    worlds = [*examples.values(), ledger]
    before = {(w.WORLD, t): copy.deepcopy(dict(w.TASKS[t].data)) for w in worlds
              for t in w.TASKS}
    tools_before = {w.WORLD: dict(w.TOOLS) for w in worlds}
    for world in worlds:
        for task in world.TASKS:
            episode = world(task=task)
            for name, args in world.TASKS[task].solution:
                episode.call(name, copy.deepcopy(dict(args)))
            episode.score()
            episode.copy().call(*world.TASKS[task].solution[0])
            # tamper with everything handed out: it must not reach the episode or the task
            exported = episode.export_state()
            for value in exported.values():
                if isinstance(value, list) and value and isinstance(value[0], dict):
                    value[0].clear()
                elif isinstance(value, dict):
                    value["tampered"] = True
    after = {(w.WORLD, t): dict(w.TASKS[t].data) for w in worlds for t in w.TASKS}
    assert after == before
    assert {w.WORLD: dict(w.TOOLS) for w in worlds} == tools_before


def test_json_values_are_never_shared(ledger: type[Episode]) -> None:
    task_notes = copy.deepcopy(ledger.TASKS["pay_bob"].data["notes"])
    episode = ledger(task="pay_bob")
    digest = episode.state_hash()
    episode.export_state()["notes"]["history"].append(99)  # exported data is a copy
    episode.call("get_notes")["data"]["meta"]["k"] = "changed"  # so is a result
    assert episode.state_hash() == digest
    assert episode.export_state()["notes"] == task_notes
    deep: dict[str, bool] = {"deep": True}
    mine: dict[str, list[Any]] = {"list": [1, deep]}
    episode.call("set_notes", {"value": mine})
    stored = episode.state_hash()
    deep["deep"] = False  # the caller's object is copied on the way in
    assert episode.state_hash() == stored
    assert episode.export_state()["notes"] == {"list": [1, {"deep": True}]}
    assert ledger.TASKS["pay_bob"].data["notes"] == task_notes
    assert ledger(task="pay_bob").export_state()["notes"] == task_notes


def test_copies_and_snapshots_are_independent(examples: dict[str, type[Episode]]) -> None:
    world = examples["MobileMessaging"]
    episode = world(task="tidy_archive")
    twin = episode.copy()
    solve(episode)
    assert twin.state_hash() == world(task="tidy_archive").state_hash()
    solve(twin)
    assert twin.state_hash() == episode.state_hash()


# ---------------------------------------------------- reset, copy, snapshot
def test_reset_is_reproducible(examples: dict[str, type[Episode]],
                               ledger: type[Episode]) -> None:
    for world, task in [*all_tasks(examples), (ledger, "pay_bob")]:
        first, second = world(task=task), world(task=task)
        assert first.state_hash() == second.state_hash()
        initial = (first.state_hash(), first.export_state(), first.clock, first.rng.getstate())
        solve(first)
        first.reset(task=task)  # the same data: rolled back through the undo log
        assert (first.state_hash(), first.export_state(), first.clock,
                first.rng.getstate()) == initial
        other = next(t for t in world.TASKS if t != task) if len(world.TASKS) > 1 else task
        first.reset(task=other)
        first.reset(task=task)  # other data in between: loaded afresh
        assert first.state_hash() == initial[0] and first.export_state() == initial[1]
        assert first.score().reward < 1.0


def test_reset_with_data_and_seed(ledger: type[Episode]) -> None:
    data = {"accounts": [{"id": "Z", "owner": "Zed", "balance": 1}]}
    episode = ledger(data=data, seed=1)
    assert [a["id"] for a in episode.export_state()["accounts"]] == ["Z"]
    assert episode.task is None
    drawn = episode.call("draw")["data"]
    episode.reset(data=data, seed=1)
    assert episode.call("draw")["data"] == drawn
    episode.reset()
    assert episode.export_state()["accounts"] == []
    with pytest.raises(KeyError):
        episode.reset(task="no_such_task")


def test_copy_and_snapshot_round_trip(examples: dict[str, type[Episode]]) -> None:
    for world, task in all_tasks(examples):
        episode = world(task=task)
        halfway = episode.TASKS[task].solution[: len(episode.TASKS[task].solution) // 2]
        for name, args in halfway:
            episode.call(name, dict(args))
        snap = episode.snapshot()
        twin = episode.copy()
        saved = fingerprint(episode)
        assert fingerprint(twin) == saved
        rest = episode.TASKS[task].solution[len(halfway):]
        for name, args in rest:
            episode.call(name, dict(args))
        finished = episode.state_hash()
        assert fingerprint(twin) == saved
        episode.restore(snap)
        assert fingerprint(episode) == saved
        for name, args in rest:
            episode.call(name, dict(args))
        assert episode.state_hash() == finished
        episode.restore(snap)  # the snapshot was not changed by the calls after restore
        assert fingerprint(episode) == saved


def test_copies_and_restored_episodes_score_like_the_original(
        examples: dict[str, type[Episode]]) -> None:
    for world, task in all_tasks(examples):
        episode = world(task=task)
        solve(episode)
        expected = episode.score()
        assert expected.reward == 1.0 and expected.frame_ok
        assert episode.copy().score() == expected
        assert episode.copy().copy().score() == expected
        snap = episode.snapshot()
        other = next(t for t in world.TASKS if t != task)
        episode.reset(task=other)
        episode.restore(snap)
        assert episode.task is not None and episode.task.name == task
        assert episode.score() == expected
        assert episode.initial_state().state_hash() == world(task=task).state_hash()


def test_failed_calls_after_restore_still_roll_back(ledger: type[Episode]) -> None:
    episode = ledger(task="pay_bob")
    snap = episode.snapshot()
    solve(episode)
    episode.restore(snap)
    before = fingerprint(episode)
    episode.call("transfer", {"source": "A", "target": "B", "amount": 30, "memo": "late"})
    assert fingerprint(episode) == before


def test_state_hash_is_stable_across_processes(examples: dict[str, type[Episode]]) -> None:
    here = {}
    for world, task in all_tasks(examples):
        episode = world(task=task)
        start = episode.state_hash()
        solve(episode)
        here[f"{world.WORLD}/{task}"] = [start, episode.state_hash()]
    script = textwrap.dedent("""
        import json, sys
        from worldspec.services.loading import load_package
        out = {}
        for package in sys.argv[1:]:
            world = load_package(package).World
            for task, spec in world.TASKS.items():
                episode = world(task=task)
                start = episode.state_hash()
                for name, args in spec.solution:
                    episode.call(name, dict(args))
                out[f"{world.WORLD}/{task}"] = [start, episode.state_hash()]
        print(json.dumps(out))
    """)
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    run = subprocess.run([sys.executable, "-c", script,
                          *(str(REPO / "generated" / p) for p in PACKAGES.values())],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == here


def test_state_hash_follows_every_change(ledger: type[Episode]) -> None:
    episode = ledger(task="pay_bob")
    seen = {episode.state_hash()}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("balance", {"account": "A"}),  # read-only: same hash
        ("transfer", {"source": "A", "target": "B", "amount": 1}),
        ("set_notes", {"value": {"a": 1}}),
        ("set_notes", {"value": {"a": 1.0}}),  # 1.0 is not 1 in the canonical JSON
        ("close_account", {"account": "R"}),
        ("open_account", {"id": "R", "owner": "Rich", "balance": 5000}),
    ]
    for name, args in calls:
        episode.call(name, args)
        seen.add(episode.state_hash())
    assert len(seen) == 6  # the read-only call added nothing; each change a new hash
    # row order is part of the state: R re-opened is now last
    assert [a["id"] for a in episode.export_state()["accounts"]] == ["A", "B", "R"]


# ---------------------------------------------------------------- diff, score
def test_diff_reports_fields_rows_and_state(ledger: type[Episode]) -> None:
    episode = ledger(task="pay_bob")
    start = episode.copy()
    solve(episode)
    episode.call("close_account", {"account": "R"})
    changes = {c["path"]: (c["old"], c["new"]) for c in episode.diff(start)}
    assert changes == {
        "transfer_ids": (0, 1),
        "total_moved": (0, 30),
        "labels": ({}, {"A": 30}),
        'accounts["A"].balance': (100, 70),
        'accounts["B"].balance': (5, 35),
        'transfers["T001"]': (None, {"id": "T001", "source": "A", "target": "B", "amount": 30,
                                     "memo": ""}),
        'accounts["R"]': ({"id": "R", "owner": "Rich", "balance": 5000, "tags": []}, None),
    }
    assert episode.diff(episode.copy()) == []
    assert {c["path"] for c in start.diff(episode)} == set(changes)


def test_solutions_score_one_and_initial_states_less(examples: dict[str, type[Episode]],
                                                     ledger: type[Episode]) -> None:
    for world, task in [*all_tasks(examples), (ledger, "pay_bob")]:
        episode = world(task=task)
        initial = episode.score()
        assert initial.reward < 1.0, task
        assert any(not c.passed and c.message for c in initial.checks)
        solve(episode)
        score = episode.score()
        assert score.reward == 1.0 and score.frame_ok, (task, score.to_json())
        assert all(c.passed and c.message == "" for c in score.checks)
        assert episode.score(all_or_nothing=True).reward == 1.0
        assert world(task=task).score(task).reward == initial.reward


def test_a_check_that_raises_fails_with_a_message(ledger: type[Episode]) -> None:
    episode = ledger(task="broken_check")
    solve(episode)
    score = episode.score()
    assert score.reward == 0.5
    broken = score.checks[0]
    assert (broken.name, broken.passed) == ("reads_missing", False)
    assert broken.message == 'error: Account "ZZZ" not found.'
    assert score.checks[1].passed
    assert episode.score(all_or_nothing=True).reward == 0.0
    assert score.to_json()["checks"][0]["message"] == broken.message


def test_frame_violations_are_reported(ledger: type[Episode]) -> None:
    episode = ledger(task="pay_bob")
    solve(episode)
    episode.call("set_notes", {"value": 1})
    episode.call("open_account", {"id": "N", "owner": "New"})
    score = episode.score()
    assert not score.frame_ok
    assert set(score.frame_violations) == {"notes", 'accounts["N"]'}
    # the checks pass, but collateral damage earns nothing: the broken frame zeroes the reward
    assert score.reward == 0.0 and score.checks_reward == 1.0
    assert all(c.passed for c in score.checks)
    assert score.to_json()["checks_reward"] == 1.0
    assert episode.score(all_or_nothing=True).reward == 0.0
    # a world (or a task) may choose to report the frame beside the checks' reward instead
    assert episode.score(frame_zeroes=False).reward == 1.0
    lenient = type("Lenient", (ledger,), {"FRAME_ZEROES": False})
    assert lenient.FRAME_ZEROES is False and ledger.FRAME_ZEROES is True


# ------------------------------------------------------------------ tools()
def walk_schemas(schema: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(schema, dict):
        yield path, schema
        for key, value in schema.items():
            yield from walk_schemas(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            yield from walk_schemas(value, f"{path}/{i}")


#: Maps have no strict-mode form (their keys are data); these are the known ones.
MAP_PARAMETERS = {"OnlineShop.place_order/properties/items", "Ledger.set_notes"}


def test_tool_definitions_are_strict(examples: dict[str, type[Episode]],
                                     ledger: type[Episode]) -> None:
    for world in [*examples.values(), ledger]:
        episode = world()
        chat, responses = episode.tools("chat"), episode.tools("responses")
        assert [t["function"]["name"] for t in chat] == list(world.TOOLS)
        for c, r in zip(chat, responses, strict=True):
            assert c["type"] == r["type"] == "function"
            assert {k: v for k, v in r.items() if k != "type"} == c["function"]
            function = c["function"]
            assert function["strict"] is True
            assert function["description"] == world.TOOLS[function["name"]].doc
            params = function["parameters"]
            assert params["type"] == "object"
            for where, schema in walk_schemas(params):
                if schema.get("type") == "object" and "properties" in schema:
                    assert schema["additionalProperties"] is False, where
                    assert schema["required"] == list(schema["properties"]), where
                elif schema.get("type") == "object":
                    assert f"{world.WORLD}.{function['name']}{where}" in MAP_PARAMETERS
            for spec in world.TOOLS[function["name"]].params:
                prop = params["properties"][spec.name]
                if not spec.required:  # optional: anyOf with null, so it can be sent as null
                    assert {"type": "null"} in prop["anyOf"], (function["name"], spec.name)
        with pytest.raises(ValueError):
            episode.tools("xml")


def strict_arguments(value: Any, schema: dict[str, Any]) -> Any:
    """What a strict-mode model sends: every property present, null where left out."""
    if "anyOf" in schema:
        if value is None:
            return None
        for option in schema["anyOf"]:
            if option.get("type") == "object" and isinstance(value, dict):
                return strict_arguments(value, option)
        return value
    if schema.get("type") == "object" and "properties" in schema and isinstance(value, dict):
        return {name: strict_arguments(value.get(name), sub)
                for name, sub in schema["properties"].items()}
    if schema.get("type") == "array" and isinstance(value, list):
        return [strict_arguments(v, schema["items"]) for v in value]
    return value


def test_solution_arguments_in_strict_form_are_accepted(
        examples: dict[str, type[Episode]]) -> None:
    """Every optional argument sent as null (as strict mode makes a model do) works the same."""
    for world, task in all_tasks(examples):
        sparse, strict = world(task=task), world(task=task)
        schemas = {t["name"]: t["parameters"] for t in sparse.tools("responses")}
        for name, args in world.TASKS[task].solution:
            full = strict_arguments(dict(args), schemas[name])
            assert set(full) == set(schemas[name]["properties"])
            assert strict.call(name, json.dumps(full)) == sparse.call(name, dict(args))
        assert strict.state_hash() == sparse.state_hash()


def test_schemas_accept_what_call_accepts(examples: dict[str, type[Episode]],
                                          ledger: type[Episode]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for world, task in [*all_tasks(examples), (ledger, "pay_bob")]:
        episode = world(task=task)
        schemas = {t["name"]: t["parameters"] for t in episode.tools("responses")}
        for name, args in world.TASKS[task].solution:
            full = strict_arguments(dict(args), schemas[name])
            jsonschema.validate(full, schemas[name])
            assert not episode.failed(episode.call(name, full))
    # and reject what call() rejects for the shape of its arguments
    schemas = {t["name"]: t["parameters"] for t in ledger().tools("responses")}
    rejected = 0
    for name, args, expected in BAD_CALLS:
        if name not in schemas or not isinstance(args, dict) or "not found" in expected or \
                expected.startswith("No account"):
            continue  # a missing row is not a matter of shape
        full = {**{k: None for k in schemas[name]["properties"]}, **args}
        assert ledger(task="pay_bob").failed(ledger(task="pay_bob").call(name, full))
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(full, schemas[name])
        rejected += 1
    assert rejected >= 15


WHILE_SPEC = """
world Draws "Draws without repeats."

state {
  seen: list[int] = []
}

tool draw_new() -> int "Draw a number from 1 to 3 that was not drawn before." {
  require len(seen) < 3 else "Every number was drawn."
  let x = random_int(1, 3)
  while x in seen {
    x = random_int(1, 3)
  }
  append x to seen
  return x
}

tool spin(limit: int "Rounds to count; below 0 never stops.") -> int "Count rounds." {
  let i = 0
  while i != limit {
    i += 1
    if i % 2 == 0 {
      continue
    }
  }
  return i
}
"""


def test_while_loops_repeat_and_runaway_loops_fail_the_call(tmp_path: Path) -> None:
    spec = tmp_path / "draws.world"
    spec.write_text(WHILE_SPEC, encoding="utf-8")
    world = compile_worlds([spec]).worlds["Draws"]
    ep = world(seed=5)
    drawn = [ep.call("draw_new", {})["data"] for _ in range(3)]
    assert sorted(drawn) == [1, 2, 3]
    assert ep.failed(ep.call("draw_new", {}))
    assert ep.call("spin", {"limit": 7}) == {"success": True, "data": 7}
    before = ep.state_hash()
    result = ep.call("spin", {"limit": -1})
    assert ep.failed(result) and result["error"] == "The call used more than 1,000,000 steps."
    assert ep.state_hash() == before


POWER_SPEC = """
world Powers "Powers."

tool ipow(a: int "Base.", b: int "Exponent.") -> int "An integer power." {
  return a ** b
}

tool fpow(a: float "Base.", b: float "Exponent.") -> float "A float power." {
  return a ** b
}

tool mixed(x: float "A number.") -> float "Powers with Python's grouping." {
  return -x ** 2 + 2.0 ** -1 + 2 ** 3 ** 2 + (-x) ** 2
}
"""


def test_power_follows_python_and_fails_cleanly(tmp_path: Path) -> None:
    spec = tmp_path / "powers.world"
    spec.write_text(POWER_SPEC, encoding="utf-8")
    ep = compile_worlds([spec]).worlds["Powers"]()
    assert ep.call("ipow", {"a": 2, "b": 10}) == {"success": True, "data": 1024}
    assert ep.call("ipow", {"a": -3, "b": 3}) == {"success": True, "data": -27}
    assert ep.call("fpow", {"a": 2.0, "b": 0.5})["data"] == 2.0 ** 0.5
    x = 3.0
    assert ep.call("mixed", {"x": x})["data"] == -x ** 2 + 2.0 ** -1 + 2 ** 3 ** 2 + (-x) ** 2
    for tool, args, words in [
        ("ipow", {"a": 2, "b": -1}, "negative power of an int"),
        ("ipow", {"a": 10, "b": 5000}, "too large"),
        ("fpow", {"a": 10.0, "b": 400.0}, "too large"),
        ("fpow", {"a": -8.0, "b": 0.5}, "not a real number"),
        ("fpow", {"a": 0.0, "b": -1.0}, "zero to a negative power"),
    ]:
        result = ep.call(tool, args)
        assert ep.failed(result) and words in result["error"], (tool, args, result)


WIDEN_SPEC = """
world Floats "An int stored as a float is a float."

record Price "A price." {
  amount: float
}

entity Account "An account." {
  key id: str
  balance: float = 0
  history: list[float] = []
  limit: float? = none
}

state {
  accounts: table Account
  total: float = 0
  last: float? = none
  rates: map[str, float] = {}
}

tool open(id: str "Id.", start: int "Starting balance.") -> Price "Open an account." {
  insert Account(id: id, balance: start, history: [start, 1], limit: 5) into accounts
  total = start
  last = start
  rates = {"base": 2}
  append 3 to accounts[id].history
  return Price(amount: start)
}

tool huge(n: int "Digits.") -> float "A big int as a float." {
  let x = 10 ** n
  let y: float = x
  return y
}
"""


def test_ints_stored_as_floats_become_floats(tmp_path: Path) -> None:
    spec = tmp_path / "floats.world"
    spec.write_text(WIDEN_SPEC, encoding="utf-8")
    ep = compile_worlds([spec]).worlds["Floats"]()
    result = ep.call("open", {"id": "a", "start": 4})
    assert result == {"success": True, "data": {"amount": 4.0}}
    assert type(result["data"]["amount"]) is float
    state = ep.export_state()
    account = state["accounts"][0]
    assert [type(x) for x in (account["balance"], account["limit"], state["total"],
                              state["last"], *account["history"], state["rates"]["base"])] \
        == [float] * 8
    assert json.dumps(state["accounts"][0]["history"]) == "[4.0, 1.0, 3.0]"
    assert ep.call("huge", {"n": 3}) == {"success": True, "data": 1000.0}
    failed = ep.call("huge", {"n": 400})
    assert ep.failed(failed) and failed["error"] == "int too large to convert to float"


INVARIANT_SPEC = """
world Rooms "Room bookings."

entity Booking "A booking." {
  key id: str
  room: str
  start: int
  end: int
  active: bool = true
}

state {
  bookings: table Booking
  max_length: int = 10
}

fn overlaps(a: Booking, b: Booking) -> bool {
  return a.start < b.end and b.start < a.end
}

fn too_long(b: Booking) -> bool {
  return b.end - b.start > max_length
}

invariant no_overlap "Two active bookings of a room never overlap.":
  all a in bookings: all b in bookings: a.id == b.id or not a.active or not b.active
    or a.room != b.room or not overlaps(a, b)

invariant ordered "A booking ends after it starts.":
  all b in bookings: b.start < b.end

invariant short "No booking is longer than max_length.":
  all b in bookings: not too_long(b)

tool book(id: str "Id.", room: str "Room.", start: int "Start.", end: int "End.") -> str "Book." {
  insert Booking(id: id, room: room, start: start, end: end) into bookings
  return id
}

tool move(id: str "Id.", start: int "New start.", end: int "New end.") -> str "Move a booking." {
  bookings[id].start = start
  bookings[id].end = end
  return id
}

tool set_max(n: int "New maximum.") -> int "Change the longest allowed booking." {
  max_length = n
  return n
}
"""


def test_incremental_invariants_catch_every_breaking_change(tmp_path: Path) -> None:
    """Pairwise and helper-calling invariants are checked on the changed rows only (see the
    generated code); a change on either side of a pair, or to state a helper reads, is still
    caught."""
    spec = tmp_path / "rooms.world"
    spec.write_text(INVARIANT_SPEC, encoding="utf-8")
    from worldspec.compiler.api import check_specs
    from worldspec.compiler.build import generate_all

    result = check_specs([spec])
    assert result.ok, [d.message for d in result.errors]
    package = generate_all(result).packages[0]
    source = package.files["world.py"]
    assert "for _row" in source and "in rt.changed_rows(self, self.t_bookings):" in source
    # the pair: each pair with a changed row on either side, in one loop
    assert "in rt.changed_pairs(self, self.t_bookings, self.t_bookings):" in source
    world = compile_worlds([spec]).worlds["Rooms"]
    ep = world()
    for args in ({"id": "B1", "room": "r1", "start": 0, "end": 5},
                 {"id": "B2", "room": "r1", "start": 5, "end": 9},
                 {"id": "B3", "room": "r2", "start": 0, "end": 9}):
        assert not ep.failed(ep.call("book", args))
    before = ep.state_hash()
    overlap_as_first = ep.call("book", {"id": "A0", "room": "r1", "start": 4, "end": 6})
    overlap_by_move = ep.call("move", {"id": "B2", "start": 3, "end": 8})
    backwards = ep.call("move", {"id": "B3", "start": 9, "end": 1})
    too_long = ep.call("book", {"id": "B4", "room": "r3", "start": 0, "end": 11})
    shrink_max = ep.call("set_max", {"n": 4})  # B3 (9 long) would break `short`
    for result, words in ((overlap_as_first, "never overlap"), (overlap_by_move, "never overlap"),
                          (backwards, "ends after it starts"), (too_long, "longer than"),
                          (shrink_max, "longer than")):
        assert ep.failed(result) and words in result["error"], result
    assert ep.state_hash() == before
    assert not ep.failed(ep.call("move", {"id": "B2", "start": 6, "end": 9}))
    # the pairs the check saw: the moved row with every row, on one side then on the other
    bookings = ep.tables["bookings"]
    moved, rows = bookings.row("B2"), list(bookings)
    assert list(rt.changed_pairs(ep, bookings, bookings)) == \
        [(moved, row) for row in rows] + [(row, moved) for row in rows]
    assert not ep.failed(ep.call("set_max", {"n": 50}))  # no row changed: no pair
    assert list(rt.changed_pairs(ep, bookings, bookings)) == []


PAIR_SPEC = """
world Hours "Opening hours."

entity Room "A room." {
  key id: str
  closes: int
}

entity Slot "A booked slot." {
  key id: str
  room: str
  end: int
}

state {
  rooms: table Room
  slots: table Slot
}

invariant within_hours "A slot ends by the time its room closes.":
  all r in rooms: all s in slots: s.room != r.id or s.end <= r.closes

tool close_at(room: str "Room id.", hour: int "Closing hour.") -> int "Change closing time." {
  rooms[room].closes = hour
  return hour
}

tool extend(slot: str "Slot id.", end: int "New end.") -> int "Extend a slot." {
  slots[slot].end = end
  return end
}
"""


def test_pair_invariants_check_changes_on_either_side(tmp_path: Path) -> None:
    spec = tmp_path / "hours.world"
    spec.write_text(PAIR_SPEC, encoding="utf-8")
    world = compile_worlds([spec]).worlds["Hours"]
    ep = world(data={"rooms": [{"id": "R1", "closes": 18}, {"id": "R2", "closes": 20}],
                     "slots": [{"id": "S1", "room": "R1", "end": 17},
                               {"id": "S2", "room": "R2", "end": 19}]})
    room_side = ep.call("close_at", {"room": "R1", "hour": 16})    # the outer variable changes
    slot_side = ep.call("extend", {"slot": "S2", "end": 21})       # the inner variable changes
    for result in (room_side, slot_side):
        assert ep.failed(result) and "ends by the time" in result["error"], result
    assert not ep.failed(ep.call("close_at", {"room": "R1", "hour": 17}))
    assert not ep.failed(ep.call("extend", {"slot": "S2", "end": 20}))


FRIENDS_SPEC = """
world Friends "Users and their friends."

entity User "A user." {
  key id: str
  active: bool = true
  friends: list[User] = []
}

state {
  users: table User
}

fn all_active(xs: list[User]) -> bool {
  return all f in xs: f.active
}

tool deactivate(user: User "Who.") -> bool "Deactivate a user." {
  user.active = false
  return true
}
"""

FRIENDS_INVARIANTS = (
    'invariant friends_active "A user\'s friends are active.":\n'
    "  all u in users: all f in u.friends: f.active\n",
    'invariant friends_active "A user\'s friends are active.":\n'
    "  all u in users: all_active(u.friends)\n",
)


@pytest.mark.parametrize("invariant", FRIENDS_INVARIANTS, ids=["quantifier", "helper"])
def test_invariants_reading_other_rows_are_checked_in_full(tmp_path: Path, invariant: str
                                                           ) -> None:
    """Reading a row through a bound entity variable is not row-local: changing the friend
    (another row) must still be caught."""
    spec = tmp_path / "friends.world"
    spec.write_text(FRIENDS_SPEC + "\n" + invariant, encoding="utf-8")
    data = {"users": [{"id": "a", "friends": ["b"]}, {"id": "b"}]}
    ep = compile_worlds([spec]).worlds["Friends"](data=data)
    result = ep.call("deactivate", {"user": "b"})
    assert ep.failed(result) and "friends are active" in result["error"], result


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(), max_size=6).map(tuple), st.integers(-8, 8), st.integers())
def test_set_at_replaces_as_python_indexing_does(items: tuple[int, ...], index: int,
                                                 value: int) -> None:
    """``rt.set_at`` (an element assignment: ``xs[i] = v`` on a list value) gives the tuple
    Python's list assignment gives, and an index out of range fails with its size."""
    from worldspec.runtime import helpers as rt
    from worldspec.runtime.errors import ToolError

    expected = list(items)
    try:
        expected[index] = value
    except IndexError:
        with pytest.raises(ToolError) as caught:
            rt.set_at(items, index, value)
        assert caught.value.message == \
            f"Index {index} is out of range for a list of {len(items)}."
        return
    assert rt.set_at(items, index, value) == tuple(expected)
    # another JSON value than declared (arguments: dynamic) is indexed as Python slices it
    assert rt.set_at("".join(map(str, range(len(items)))), index, "x") == tuple(
        "x" if i == index % len(items) else str(i) for i in range(len(items)))
