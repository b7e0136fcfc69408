"""`worldspec test` finds the bugs planted in tests/buggy and shrinks them to a few calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldspec.cli.main import main
from worldspec.runtime.explore import explore
from worldspec.services.loading import compile_worlds

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
    root = Path(__file__).resolve().parents[1] / "examples"
    status = main(["test", str(root), "--max-examples", "10", "--steps", "20",
                   "--format", "json"])
    reports = json.loads(capsys.readouterr().out)
    findings = [(r["world"], f["kind"], f["tool"], f["message"]) for r in reports
                for f in r["findings"] if f["severity"] == "problem"]
    assert findings == []
    assert status == 0
