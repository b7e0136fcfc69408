"""`worldspec test` finds the bugs planted in tests/buggy and shrinks them to a few calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldspec.cli.main import main
from worldspec.services.loading import compile_worlds
from worldspec.testing.explore import explore

BUGGY = Path(__file__).resolve().parent / "buggy"

#: spec -> (finding kind, tool)
PLANTED = {
    "broken_invariant.world": ("invariant broken", "withdraw"),
    "never_holds.world": ("never succeeds", "unlock_bonus"),
    "always_fails.world": ("never succeeds", "export_notes"),
    "wrong_result.world": ("result does not match its type", "next_code"),
}


@pytest.mark.parametrize("spec", sorted(PLANTED))
def test_planted_bug_is_found_and_shrunk(spec: str) -> None:
    loaded = compile_worlds([BUGGY / spec])
    [world] = loaded.worlds.values()
    report = explore(world, max_examples=30, steps=30, seed=1)
    kinds = {(f.kind, f.tool): f for f in report.findings}
    assert PLANTED[spec] in kinds, [(f.kind, f.tool, f.message) for f in report.findings]
    finding = kinds[PLANTED[spec]]
    assert len(finding.calls) <= 3
    assert finding.message
    # nothing else is wrong with these specs
    assert len(report.findings) == 1


def test_a_failing_call_never_leaves_changes() -> None:
    """The tool changes state and then fails: the runtime undoes it, so the only
    finding is that it never succeeds, never that a failed call changed state."""
    loaded = compile_worlds([BUGGY / "failed_call_changes_state.world"])
    [world] = loaded.worlds.values()
    report = explore(world, max_examples=20, steps=30, seed=2)
    assert [(f.kind, f.tool) for f in report.findings] == [
        ("never succeeds", "bump_then_fail")]
    assert report.calls == 20 * 30
    assert report.succeeded["bump"] > 0


def test_cli_reports_and_saves_replayable_calls(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    spec = BUGGY / "broken_invariant.world"
    status = main(["test", str(spec), "--max-examples", "20", "--steps", "20",
                   "--failures", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 1
    assert "PROBLEM invariant broken: withdraw" in out
    assert "The balance cannot go below zero." in out
    [saved] = sorted(tmp_path.glob("*.jsonl"))
    calls = [json.loads(line) for line in saved.read_text().splitlines()]
    assert 1 <= len(calls) <= 3 and calls[-1]["name"] == "withdraw"


def test_same_seed_same_exploration() -> None:
    loaded = compile_worlds([BUGGY / "failed_call_changes_state.world"])
    [world] = loaded.worlds.values()
    a = explore(world, max_examples=5, steps=10, seed=7)
    b = explore(world, max_examples=5, steps=10, seed=7)
    assert a.per_tool == b.per_tool and a.succeeded == b.succeeded


def test_examples_explore_clean(capsys: pytest.CaptureFixture[str]) -> None:
    # the hand-written examples (``make test`` explores the corpus: ``worldspec test
    # examples/corpus``)
    root = Path(__file__).resolve().parents[1] / "examples"
    folders = [str(p) for p in sorted(root.iterdir()) if p.is_dir() and p.name != "corpus"]
    status = main(["test", *folders, "--max-examples", "10", "--steps", "20",
                   "--format", "json"])
    reports = json.loads(capsys.readouterr().out)
    findings = [(r["world"], f["kind"], f["tool"], f["message"]) for r in reports
                for f in r["findings"] if f["severity"] == "problem"]
    assert findings == []
    assert status == 0


def test_coverage_lists_every_tool_in_text_and_json(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    spec = BUGGY / "never_holds.world"
    [world] = compile_worlds([spec]).worlds.values()
    report = explore(world, max_examples=10, steps=20, seed=3)
    rows = report.coverage()
    assert [name for name, _, _ in rows] == list(world.TOOLS)
    assert all(calls == report.per_tool[name] and ok == report.succeeded[name]
               for name, calls, ok in rows)
    assert sum(calls for _, calls, _ in rows) == report.calls == 10 * 20
    main(["test", str(spec), "--max-examples", "10", "--steps", "20", "--seed", "3",
          "--failures", str(tmp_path)])
    out = capsys.readouterr().out
    assert "tool" in out and "calls" in out and "succeeded" in out and "share" in out
    assert "unlock_bonus" in out and "never succeeded" in out
    assert "NOTE never succeeds: unlock_bonus" in out  # the note stays
    main(["test", str(spec), "--max-examples", "10", "--steps", "20", "--seed", "3",
          "--format", "json", "--failures", str(tmp_path)])
    [document] = json.loads(capsys.readouterr().out)
    assert [(r["tool"], r["calls"], r["succeeded"]) for r in document["coverage"]] == rows


def test_a_reused_start_explores_as_fresh_loads_do() -> None:
    """Sequences from one start share one loaded episode, rolled back between them: they
    make the same calls with the same outcomes as sequences that each load the start anew
    (equal data in distinct mappings is loaded once per mapping)."""
    loaded = compile_worlds([BUGGY / "failed_call_changes_state.world"])
    [world] = loaded.worlds.values()
    shared: dict[str, object] = {}
    reused = explore(world, max_examples=8, steps=25, seed=5, starts=[shared] * 8)
    fresh = explore(world, max_examples=8, steps=25, seed=5, starts=[{} for _ in range(8)])
    assert reused.calls == fresh.calls == 8 * 25
    assert reused.per_tool == fresh.per_tool and reused.succeeded == fresh.succeeded
    assert reused.succeeded["bump"] > 0  # the sequences did change the shared episode
    assert [(f.kind, f.tool) for f in reused.findings] == \
        [(f.kind, f.tool) for f in fresh.findings]


def test_fresh_values_reach_arguments() -> None:
    """A value a call just returned is soon drawn as an argument (issue 17: write tools are
    reached), and pools keep only the newest fresh values."""
    import random

    from worldspec.testing.sampling import Pools, sample

    pools = Pools(["a", "b"], [1.0]).fork()
    pools.add(["order-77"], [42.0])
    rng = random.Random(0)
    drawn = [sample({"type": "string"}, rng, pools) for _ in range(200)]
    assert drawn.count("order-77") > 50
    numbers = [sample({"type": "integer", "minimum": 0, "maximum": 100}, rng, pools)
               for _ in range(200)]
    assert numbers.count(42) > 50
    pools.add([f"v{i}" for i in range(Pools.FRESH + 5)], [])
    assert len(pools.fresh_strings) == Pools.FRESH and pools.fresh_strings[-1] == \
        f"v{Pools.FRESH + 4}"
    assert "order-77" not in pools.fresh_strings


CLOCKED = """
world Chat "Channels and messages, stamped by the world's clock."

config { clock: "2026-03-10T09:00:00"  tick: 60 }

entity Channel {
  key id: str = next(channel_ids)
  created_at: datetime = now
}

entity Message {
  key id: str = next(message_ids)
  channel: Channel
  posted_at: datetime = now
}

state {
  channels: table Channel
  messages: table Message
  channel_ids: sequence "CH{:03d}"
  message_ids: sequence "MSG{:03d}"
}

invariant posted_after_creation "No message is older than its channel.":
  all m in messages: m.posted_at >= m.channel.created_at

tool create_channel() -> Channel "Open a channel." {
  let channel = Channel()
  insert channel into channels
  return channel
}

tool post_message(channel: Channel "The channel.") -> Message "Post in a channel." {
  let message = Message(channel: channel)
  insert message into messages
  return message
}

task open_and_post in Chat {
  instruction "Open two channels."
  check opened: len(channels) == 2
  solution { create_channel() create_channel() }
}
"""


def test_a_start_reached_by_calls_keeps_the_clock_they_left(tmp_path: Path) -> None:
    """A state a solution passed through, exported and loaded anew, runs at the configured
    time, before the channels its calls stamped minutes later: posting in the second breaks
    the rule, in a state no agent can reach. Reached by running the calls, it keeps their
    clock."""
    from worldspec.testing.explore import Reached

    path = tmp_path / "chat.world"
    path.write_text(CLOCKED, encoding="utf-8")
    [world] = compile_worlds([path]).worlds.values()
    after = world(task="open_and_post")
    for _ in range(2):
        after.call("create_channel", {})
        assert after.last_error is None
    exported = explore(world, max_examples=20, steps=6, starts=[after.export_state()])
    assert [f.kind for f in exported.problems] == ["invariant broken"]
    reached = explore(world, max_examples=20, steps=6,
                      starts=[Reached(world.TASKS["open_and_post"].data,
                                      (("create_channel", {}), ("create_channel", {})))])
    assert reached.problems == [], reached.problems
    assert reached.succeeded["post_message"] > 0


EXACT_AMOUNT = """
world Billing "Bills paid in full with their 20% tax: the amount must be the bill's."

entity Bill {
  key id: str
  amount: float
  paid: bool = false
}

state {
  bills: table Bill
}

tool pay_bill(bill: Bill "The bill." else "No such bill.",
              amount: float(0.01..100000.0) "The amount paid.") -> Bill "Pay a bill in full." {
  require not bill.paid else f"Bill {bill.id} is already paid."
  require abs(amount - bill.amount * 1.2) < 0.005 else MESSAGE
  bill.paid = true
  return bill
}
"""


@pytest.mark.parametrize(("message", "reached"), [
    ('f"Bill {bill.id} is for {bill.amount * 1.2:.2f} with tax; pay that amount."', True),
    ('"Pay the amount of the bill with its tax."', False),
])
def test_a_number_an_error_names_is_tried_again(tmp_path: Path, message: str,
                                                reached: bool) -> None:
    """The explorer reads a failed call's message as an agent would: a number it names (the
    amount a bill is for) is tried again in the call's number arguments, so a tool that takes
    an exact amount is reached; without such a message it is not."""
    spec = tmp_path / "billing.world"
    spec.write_text(EXACT_AMOUNT.replace("MESSAGE", message), encoding="utf-8")
    [world] = compile_worlds([spec]).worlds.values()
    bills = [{"id": "B1", "amount": 41.37}, {"id": "B2", "amount": 977.05}]
    report = explore(world, max_examples=20, steps=20, seed=0, starts=[{"bills": bills}])
    assert (report.succeeded["pay_bill"] > 0) is reached, report.succeeded


def test_the_schema_validator_decides_by_the_runtime_s_rules() -> None:
    """What the property tests call valid (an argument drawn, a result returned) is decided
    by the one value validator's rules: ranges and lengths, a set's repeats (JSON's ``true``
    is not ``1``), required and unknown properties; each both ways."""
    from worldspec.testing.sampling import validate

    number = {"type": "integer", "minimum": 1, "maximum": 5}
    assert validate(3, number) and not validate(0, number) and not validate(6, number)
    assert not validate(3.0, number) and not validate(True, number)
    text = {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-z]+$"}
    assert validate("ab", text) and not validate("a", text) and not validate("abcd", text)
    assert not validate("AB", text)
    tags = {"type": "array", "items": {}, "uniqueItems": True, "maxItems": 3}
    assert validate([1, True, "1"], tags) and not validate([1, 2, 1], tags)
    assert not validate([[1], [1]], tags) and not validate([1, 2, 3, 4], tags)
    user = {"type": "object", "properties": {"id": {"type": "string"}, "age": {"type": "integer"}},
            "required": ["id"], "additionalProperties": False}
    assert validate({"id": "U1"}, user) and validate({"id": "U1", "age": 3}, user)
    assert not validate({"age": 3}, user) and not validate({"id": "U1", "nmae": "x"}, user)
    assert not validate({"id": "U1", "age": "3"}, user)
    scores = {"type": "object", "additionalProperties": {"type": "number"}, "maxProperties": 2}
    assert validate({"a": 1, "b": 2.5}, scores) and not validate({"a": "x"}, scores)
    assert not validate({"a": 1, "b": 2, "c": 3}, scores)
