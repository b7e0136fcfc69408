"""Tasks: validation listing, transcript replay, and dataset export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldspec.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
MESSAGING = ROOT / "examples" / "messaging"
#: the hand-written examples (``make test`` validates and exports the corpus's 2,000 tasks
#: itself: ``worldspec tasks examples/corpus``)
HAND_WRITTEN = [str(p) for p in sorted((ROOT / "examples").iterdir())
                if p.is_dir() and p.name != "corpus"]

BROKEN = '''world Shop "An online shop."

entity Order "An order." {
  key id: str
  cancelled: bool = false
}

state {
  orders: table Order
}

tool cancel_order(order: Order "The order.") "Cancel an order." {
  require not order.cancelled else "Already cancelled."
  order.cancelled = true
}

task good in Shop {
  given { orders: [{id: "O1"}] }
  instruction "Cancel order O1."
  check cancelled: orders["O1"].cancelled
  solution { cancel_order(order: "O1") }
  split test
}

task bad in Shop {
  given { orders: [{id: "O1", cancelled: true}] }
  instruction "Cancel order O1."
  check cancelled: orders["O1"].cancelled
  solution { cancel_order(order: "O1") }
}
'''


def test_tasks_json_lists_every_task_with_its_status(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "shop.world"
    spec.write_text(BROKEN, encoding="utf-8")
    assert main(["tasks", str(spec), "--format", "json"]) == 1
    listing = json.loads(capsys.readouterr().out)
    by_task = {item["task"]: item for item in listing}
    assert set(by_task) == {"good", "bad"}
    for item in listing:
        assert set(item) == {"world", "task", "file", "line", "status", "valid", "reason",
                             "problems"}
        assert item["world"] == "Shop" and item["file"].endswith("shop.world")
    assert by_task["good"]["valid"] is True and by_task["good"]["problems"] == []
    assert by_task["good"]["status"] == "valid"
    bad = by_task["bad"]
    assert bad["valid"] is False and bad["line"] == 25 and bad["status"] == "invalid"
    codes = [p["code"] for p in bad["problems"]]
    # the check already holds at the start, so doing nothing scores 1; the solution fails
    assert codes == ["WS614", "WS610"]
    assert "Already cancelled." in bad["problems"][1]["message"]


def test_check_reports_task_problems(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "shop.world"
    spec.write_text(BROKEN, encoding="utf-8")
    assert main(["check", str(spec), "--format", "json"]) == 1
    codes = [d["code"] for d in json.loads(capsys.readouterr().out)]
    assert codes == ["WS614", "WS610"]


def _many_tasks(count: int, typo_in: int) -> str:
    """A shop with ``count`` tasks: even ones valid, odd ones failing validation (the order
    is already cancelled), and task ``typo_in`` with a type error in its check."""
    world = BROKEN[:BROKEN.index("task good")]
    tasks = []
    for i in range(count):
        cancelled = "true" if i % 2 else "false"
        field = "cancelld" if i == typo_in else "cancelled"
        tasks.append(f'task t{i:02d} in Shop {{\n'
                     f'  given {{ orders: [{{id: "O1", cancelled: {cancelled}}}] }}\n'
                     f'  instruction "Cancel order O1."\n'
                     f'  check cancelled: orders["O1"].{field}\n'
                     f'  solution {{ cancel_order(order: "O1") }}\n}}\n')
    return world + "\n".join(tasks)


def test_a_type_error_in_one_task_does_not_mark_the_others_valid(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "shop.world"
    spec.write_text(_many_tasks(50, typo_in=0), encoding="utf-8")
    assert main(["tasks", str(spec), "--format", "json"]) == 1
    listing = {item["task"]: item for item in json.loads(capsys.readouterr().out)}
    assert len(listing) == 50
    assert listing["t00"]["status"] == "invalid"
    assert [p["code"] for p in listing["t00"]["problems"]] == ["WS205"]
    for i in range(1, 50):
        item = listing[f"t{i:02d}"]
        # the other tasks are still run: the odd ones fail, the even ones pass
        expected = "invalid" if i % 2 else "valid"
        assert (item["status"], item["valid"]) == (expected, expected == "valid"), item
        if i % 2:
            assert [p["code"] for p in item["problems"]] == ["WS614", "WS610"]
    assert main(["tasks", str(spec)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "24 of 50 task(s) valid, 26 invalid"
    assert out.count("INVALID ") == 26 and out.count("ok      ") == 24
    # check reports the same problems: the type error and what running the others found
    assert main(["check", str(spec), "--format", "json"]) == 1
    codes = [d["code"] for d in json.loads(capsys.readouterr().out)]
    assert codes.count("WS205") == 1 and codes.count("WS610") == 25


def test_tasks_of_a_world_with_errors_are_not_validated_and_say_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "shop.world"
    spec.write_text(_many_tasks(4, typo_in=-1).replace("order.cancelled = true",
                                                        "order.cancelld = true"),
                    encoding="utf-8")
    assert main(["tasks", str(spec), "--format", "json"]) == 1
    listing = json.loads(capsys.readouterr().out)
    assert len(listing) == 4
    for item in listing:
        assert (item["status"], item["valid"], item["problems"]) == \
            ("not-validated", False, [])
        assert item["reason"].startswith("not validated: the specs have 1 error outside "
                                         "tasks (first: ")
        assert "shop.world:14: WS205" in item["reason"]
    assert main(["tasks", str(spec)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "0 of 4 task(s) valid, 4 not validated"
    assert sum(line.startswith("NOT RUN Shop.t0") for line in out) == 4
    assert not any(line.startswith("ok ") for line in out)


def test_examples_tasks_are_all_valid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", *HAND_WRITTEN, "--format", "json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert len(listing) >= 15 and all(item["valid"] for item in listing)


def _transcript() -> list[dict[str, object]]:
    def call(i: int, name: str, args: dict[str, object]) -> dict[str, object]:
        return {"id": f"call_{i}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}

    return [
        {"role": "system", "content": "You operate the messaging app."},
        {"role": "user", "content": "Reply to Priya."},
        {"role": "assistant", "content": None, "tool_calls": [
            call(1, "login", {"phone": "+14155550101", "password": "sunflower42"})]},
        {"role": "tool", "tool_call_id": "call_1", "content": "{}"},
        {"role": "assistant", "content": None, "tool_calls": [
            call(2, "mark_conversation_read", {"conversation": "CONV102"}),
            call(3, "retry_failed_messages", {})]},
        {"role": "tool", "tool_call_id": "call_2", "content": "{}"},
        {"role": "tool", "tool_call_id": "call_3", "content": "{}"},
        {"role": "assistant", "content": "Done."},
    ]


@pytest.mark.parametrize("shape", ["array", "object", "jsonl"])
def test_run_replays_an_openai_chat_transcript(shape: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    messages = _transcript()
    path = tmp_path / "transcript.json"
    if shape == "array":
        path.write_text(json.dumps(messages), encoding="utf-8")
    elif shape == "object":
        path.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    status = main(["run", str(MESSAGING), "--task", "reply_to_priya", "--calls", str(path),
                   "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in report["calls"]] == ["login", "mark_conversation_read",
                                                     "retry_failed_messages"]
    assert not any(c["failed"] for c in report["calls"])
    # the reply was never sent, so the score is partial, with the breakdown per check
    assert status == 1 and 0 < report["reward"] < 1
    passed = {c["name"]: c["passed"] for c in report["checks"]}
    assert passed["priya_read"] is True and passed["replied"] is False


def test_export_rows_have_the_training_shape(tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    assert main(["export", *HAND_WRITTEN, "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 15
    for row in rows:
        assert row["prompt"][0]["role"] == "system" and row["prompt"][1]["role"] == "user"
        tools = json.loads(row["tools"])
        assert tools and all(t["type"] == "function" for t in tools)
        assert row["split"] in ("train", "test")
        assert isinstance(json.loads(row["initial_state"]), dict)
    assert len({(r["world"], r["task_id"]) for r in rows}) == len(rows)


def test_export_unknown_split_names_the_splits(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rows.jsonl"
    assert main(["export", str(MESSAGING), "--split", "nosuch", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--split: no task is in split 'nosuch' (the splits are: test, train)" in err
    assert not out.exists()
    assert main(["export", str(MESSAGING), "--split", "tset"]) == 2
    assert "did you mean 'test'?" in capsys.readouterr().err
    assert main(["export", str(MESSAGING), "--split", "test", "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows and {r["split"] for r in rows} == {"test"}


@pytest.mark.parametrize("target", ["folder", "file/sub", ""])
def test_export_to_an_impossible_file_is_a_usage_error(
        target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("keep me", encoding="utf-8")
    assert main(["export", str(MESSAGING), "-o", target]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("worldspec: error: -o: ")
    assert (tmp_path / "file").read_text(encoding="utf-8") == "keep me"
    assert list((tmp_path / "folder").iterdir()) == []


def test_export_of_specs_without_tasks_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(ROOT / "examples" / "bfcl")]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "nothing exported: the specs define no tasks" in err


def test_exported_rows_rebuild_and_score(tmp_path: Path) -> None:
    from worldspec.services.loading import load_world

    out = tmp_path / "tasks.jsonl"
    assert main(["export", str(MESSAGING), "-o", str(out)]) == 0
    row = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    world = load_world(MESSAGING)
    episode = world(data=json.loads(row["initial_state"]))
    for call in json.loads(row["solution"]):
        assert not episode.failed(episode.call(call["name"], call["arguments"]))
    assert episode.score(row["task_id"]).reward == 1.0


def test_export_loads_with_huggingface_datasets(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    out = tmp_path / "tasks.jsonl"
    assert main(["export", *HAND_WRITTEN, "-o", str(out)]) == 0
    table = datasets.load_dataset("json", data_files=str(out), split="train",
                                  cache_dir=str(tmp_path / "cache"))
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert table.num_rows == len(rows) >= 15
    assert {"prompt", "tools", "world", "task_id", "split"} <= set(table.column_names)
    # the round trip keeps every value (nested structs included)
    for loaded, row in zip(table.to_list(), rows, strict=True):
        for column in ("world", "task_id", "split", "prompt", "tools", "initial_state",
                       "solution"):
            assert loaded[column] == row[column], column


def test_all_or_nothing_and_error_status(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "shop.world"
    spec.write_text(BROKEN.replace('check cancelled: orders["O1"].cancelled\n  solution',
                                   'check cancelled: orders["O1"].cancelled\n'
                                   '  check ghost: orders["O9"].cancelled\n  solution', 1),
                    encoding="utf-8")
    calls = tmp_path / "calls.jsonl"
    calls.write_text('{"name": "cancel_order", "arguments": {"order": "O1"}}\n',
                     encoding="utf-8")
    args = ["run", str(spec), "--task", "good", "--calls", str(calls), "--format", "json"]
    assert main(args) == 1
    partial = json.loads(capsys.readouterr().out)
    assert partial["reward"] == 0.5
    status = {c["name"]: (c["status"], c["message"]) for c in partial["checks"]}
    assert status["cancelled"] == ("passed", "")
    assert status["ghost"][0] == "error" and 'Order "O9" not found.' in status["ghost"][1]
    assert main([*args, "--all-or-nothing"]) == 1
    assert json.loads(capsys.readouterr().out)["reward"] == 0.0


OUTCOME_SPEC = """
world Ledger "Accounts and transfers."

entity Account "An account." {
  key id: str
  balance: int = 0
}

state {
  accounts: table Account
}

tool deposit(account: Account "Where to.", amount: int "How much.") "Deposit money." {
  require amount > 0 else "amount must be positive"
  account.balance += amount
}

task top_up in Ledger {
  given { accounts: [{id: "A1", balance: 5}, {id: "A2"}] }
  instruction "Put 10 on A1 and 3 on A2."
  check same_outcome: matches_solution()
  solution {
    deposit(account: "A1", amount: 10)
    deposit(account: "A2", amount: 3)
  }
}
"""


def test_matches_solution_grades_the_outcome_not_the_path(tmp_path: Path) -> None:
    from worldspec.services.loading import load_world

    spec = tmp_path / "ledger.world"
    spec.write_text(OUTCOME_SPEC, encoding="utf-8")
    world = load_world(spec)
    episode = world(task="top_up")
    assert episode.score().reward == 0.0
    # another order of calls, and a failed call in between, reach the same state
    episode.call("deposit", {"account": "A2", "amount": 3})
    assert episode.failed(episode.call("deposit", {"account": "A1", "amount": -1}))
    episode.call("deposit", {"account": "A1", "amount": 10})
    assert episode.score().reward == 1.0
    # one more unit anywhere is another state
    episode.call("deposit", {"account": "A1", "amount": 1})
    assert episode.score().reward == 0.0
    # the reference is replayed from the episode's own start, not from the task data
    episode.reset(data={"accounts": [{"id": "A1"}, {"id": "A2", "balance": 7}]})
    episode.call("deposit", {"account": "A1", "amount": 10})
    episode.call("deposit", {"account": "A2", "amount": 3})
    assert episode.score("top_up").reward == 1.0
    assert episode.tables["accounts"].rows["A2"].balance == 10


def test_matches_solution_leaves_the_initial_state_as_it_was(tmp_path: Path) -> None:
    """The reference solution is replayed on the initial episode itself and rolled back:
    afterwards its state, undo log, RNG, clock and attributes are those it had before."""
    from worldspec.services.loading import load_world

    spec = tmp_path / "ledger.world"
    spec.write_text(OUTCOME_SPEC, encoding="utf-8")
    world = load_world(spec)
    episode = world(task="top_up")
    initial = episode.initial_state()
    initial.call("deposit", {"account": "A2", "amount": 1})  # an undo log of its own
    assert initial.failed(initial.call("deposit", {"account": "A1", "amount": 0}))
    before = (initial.state_hash(), len(initial._undo), initial.rng.getstate(), initial.clock,
              dict(vars(initial)))
    episode.call("deposit", {"account": "A1", "amount": 10})
    episode.call("deposit", {"account": "A2", "amount": 4})
    assert episode.score(initial=initial).reward == 1.0  # replayed from A2 = 1
    assert episode.score(initial=initial).reward == 1.0  # the hash is kept: not replayed
    after = (initial.state_hash(), len(initial._undo), initial.rng.getstate(), initial.clock,
             dict(vars(initial)))
    assert after == before
    assert initial.tables["accounts"].rows["A1"].balance == 5
    assert initial.tables["accounts"].rows["A2"].balance == 1
    assert initial.last_error is not None  # the failed call's error, not the replay's


def test_episodes_of_one_task_start_equal_and_stay_independent(tmp_path: Path) -> None:
    """Later episodes of a task start from a kept copy of its loaded data: they must equal
    an episode loaded from the same data afresh, and never share rows."""
    import copy

    from worldspec.services.loading import load_world

    spec = tmp_path / "ledger.world"
    spec.write_text(OUTCOME_SPEC, encoding="utf-8")
    world = load_world(spec)
    first = world(task="top_up")
    first.call("deposit", {"account": "A1", "amount": 10})
    second = world(task="top_up")
    fresh = world(data=copy.deepcopy(dict(world.TASKS["top_up"].data)))
    assert second.state_hash() == fresh.state_hash() != first.state_hash()
    assert second.tables["accounts"].rows["A1"].balance == 5
    second.call("deposit", {"account": "A2", "amount": 1})
    assert first.tables["accounts"].rows["A2"].balance == 0
    assert world(task="top_up").state_hash() == fresh.state_hash()


RESTRAINT = BROKEN[:BROKEN.index("task good")] + '''
task keep_it in Shop "The order was shipped: the right answer is to cancel nothing." {
  given { orders: [{id: "O1"}] }
  instruction "Cancel order O1, although it has shipped."
  check untouched: not orders["O1"].cancelled
  FRAME
  solution {}
}
'''


@pytest.mark.parametrize(("frame", "codes"), [
    ("only changes nothing", []),          # a restraint task: doing nothing is right
    ("only changes orders", ["WS614"]),    # changes are allowed: doing nothing is vacuous
    ("", ["WS614"]),
])
def test_a_restraint_task_is_valid_and_a_vacuous_one_is_not(
        frame: str, codes: list[str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "shop.world"
    spec.write_text(RESTRAINT.replace("FRAME", frame), encoding="utf-8")
    status = main(["check", str(spec), "--format", "json"])
    found = [d["code"] for d in json.loads(capsys.readouterr().out)
             if d["severity"] == "error"]
    assert (status, found) == (1 if codes else 0, codes)


def test_a_restraint_task_zeroes_the_reward_of_any_change(tmp_path: Path) -> None:
    from worldspec.services.loading import load_world

    spec = tmp_path / "shop.world"
    spec.write_text(RESTRAINT.replace("FRAME", "only changes nothing"), encoding="utf-8")
    world = load_world(spec)
    assert world(task="keep_it").score().reward == 1.0
    episode = world(task="keep_it")
    episode.call("cancel_order", {"order": "O1"})
    assert episode.score().reward == 0.0
