"""WorldSpec's reward on τ² retail trajectories equals τ²-bench's own evaluator's.

``tests/fixtures/tau2_trajectories.json`` holds scripted trajectories (OpenAI-style messages:
user turns, assistant text, assistant tool calls, tool results) with the verdicts τ²'s own
code gave them: tool results from τ²'s retail environment, rewards from its
``evaluate_simulation`` with reward basis DB + COMMUNICATE (DB alone for the DB-only tasks).
``scripts/tau2_reward_fixture.py`` made it from a tau2-bench checkout; nothing of τ² is in the
repository. τ²'s reward is the product of its 0/1 components, which the port declares with
``reward: all``; under the old composition (the weighted share of the checks) the rewards
disagree wherever some but not all components hold.

Each trajectory is replayed as a user would: ``worldspec run TASKS --task T --calls FILE``,
which takes the tool calls of the transcript and the assistant's texts as the replies. The
tasks come from the peer material (``$WORLDSPEC_PEERS/tau2-retail``) through
``scripts/tau2_tasks.py``; without it the tests skip, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_tau2_tasks import peer_tasks, tasks_file, world  # noqa: F401  (shared fixtures)

from worldspec.cli.main import main

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "tau2_trajectories.json"
RECORDED: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
TRAJECTORIES: dict[str, dict[str, Any]] = {t["name"]: t for t in RECORDED["trajectories"]}


def _replies(trajectory: dict[str, Any]) -> list[str]:
    return [m["content"] for m in trajectory["messages"]
            if m["role"] == "assistant" and m.get("content")]


def _run(tasks_file: Path, trajectory: dict[str, Any], tmp_path: Path,  # noqa: F811
         capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """``worldspec run`` on the trajectory's transcript: the score as JSON."""
    transcript = tmp_path / f"{trajectory['name']}.json"
    transcript.write_text(json.dumps({"messages": trajectory["messages"]}), encoding="utf-8")
    status = main(["run", str(tasks_file), "--task", f"retail_{trajectory['task']}",
                   "--calls", str(transcript), "--format", "json"])
    scored: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert status == (0 if scored["reward"] == 1.0 else 1)
    return scored


def test_the_fixture_covers_the_cases_and_holds_tau2s_products() -> None:
    """The recorded verdicts are what they claim: products of τ²'s components, on the cases
    the comparison needs (one wrong DB with every fact told, one missing fact with the DB
    right, a DB-only task, a failed call in the middle)."""
    assert RECORDED["tau2"]["commit"] and RECORDED["tau2"]["version"]
    for t in TRAJECTORIES.values():
        verdict = t["tau2"]
        communicate = 1.0 if verdict["communicate"] is None else verdict["communicate"]
        assert verdict["reward"] == verdict["db"] * communicate, t["name"]
    assert TRAJECTORIES["38_wrong_reason"]["tau2"] == {"db": 0.0, "communicate": 1.0,
                                                       "reward": 0.0}
    assert TRAJECTORIES["62_fact_missing"]["tau2"] == {"db": 1.0, "communicate": 0.0,
                                                       "reward": 0.0}
    assert TRAJECTORIES["33_db_only"]["reward_basis"] == ["DB"]
    failed = [m for m in TRAJECTORIES["34_failed_call"]["messages"] if m.get("error")]
    assert len(failed) == 1 and TRAJECTORIES["34_failed_call"]["tau2"]["reward"] == 1.0


@pytest.mark.parametrize("name", sorted(TRAJECTORIES))
def test_worldspec_reward_equals_tau2s(name: str, tasks_file: Path, tmp_path: Path,  # noqa: F811
                                       capsys: pytest.CaptureFixture[str]) -> None:
    trajectory = TRAJECTORIES[name]
    scored = _run(tasks_file, trajectory, tmp_path, capsys)
    assert scored["reward"] == trajectory["tau2"]["reward"], scored
    assert scored["passed"] is (trajectory["tau2"]["reward"] == 1.0)
    db = next(c for c in scored["checks"] if c["name"] == "db")
    assert db["passed"] is (trajectory["tau2"]["db"] == 1.0)
    told = [c["passed"] for c in scored["checks"] if c["name"].startswith("told_")]
    if trajectory["tau2"]["communicate"] is not None:
        assert all(told) is (trajectory["tau2"]["communicate"] == 1.0)


@pytest.mark.parametrize("name", sorted(TRAJECTORIES))
def test_the_tool_results_are_tau2s(name: str, world: Any) -> None:  # noqa: F811
    """Replayed on the port, every call gives the text and the error flag τ²'s environment
    recorded (so the trajectory is the same one on both sides)."""
    trajectory = TRAJECTORIES[name]
    episode = world(task=f"retail_{trajectory['task']}")
    results = {m["tool_call_id"]: m for m in trajectory["messages"] if m["role"] == "tool"}
    for message in trajectory["messages"]:
        for call in message.get("tool_calls") or ():
            result = episode.call(call["function"]["name"], call["function"]["arguments"])
            recorded = results[call["id"]]
            assert (result, episode.failed(result)) == (recorded["content"], recorded["error"])


def test_the_old_composition_disagrees_and_reward_all_agrees(world: Any) -> None:  # noqa: F811
    """Before ``reward: all`` (the weighted share of checks) 4 of the 6 rewards agreed with
    τ²'s: the wrong-reason cancellation earned 2/3 (db fails, both facts told) where τ² gives
    0. With it, all 6 agree; pass/fail agreed either way."""
    weighted, combined = {}, {}
    for name, trajectory in TRAJECTORIES.items():
        episode = world(task=f"retail_{trajectory['task']}")
        for message in trajectory["messages"]:
            for call in message.get("tool_calls") or ():
                episode.call(call["function"]["name"], call["function"]["arguments"])
        said = _replies(trajectory)
        weighted[name] = episode.score(replies=said, reward="weighted")
        combined[name] = episode.score(replies=said)
        assert weighted[name].passed is combined[name].passed
        assert combined[name].passed is (trajectory["tau2"]["reward"] == 1.0)
    tau2 = {name: t["tau2"]["reward"] for name, t in TRAJECTORIES.items()}
    assert weighted["38_wrong_reason"].reward == pytest.approx(2 / 3)
    assert combined["38_wrong_reason"].reward == 0.0
    assert sum(weighted[n].reward == tau2[n] for n in tau2) == 4
    assert sum(combined[n].reward == tau2[n] for n in tau2) == len(tau2) == 6
