"""The acceptance gate of ``synth world``: seed data, exploration from it, per-tool coverage.

A world is accepted only when random calls starting from its sample tasks' data break no
property *and* reach every state-changing tool. The scripted server plays the model; the
compiler, the sample-task validation and the explorer run for real.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from llm_scripts import PLAN_JSON, counter_world, fenced, parking_world
from llm_server import RecordedRequest, ScriptedLLMServer

from worldspec.cli.main import main as cli_main
from worldspec.llm_frontend.synth_world import (
    WorldOptions,
    WorldOutcome,
    judge_world,
    synthesize_world,
    uncovered_tools,
)
from worldspec.services.model_client import LLMClient, LLMConfig

FAST = WorldOptions(max_rounds=2, test_examples=15, test_steps=12, plan=False)


def run_world(config: LLMConfig, options: WorldOptions = FAST) -> WorldOutcome:
    async def go() -> WorldOutcome:
        async with LLMClient(config) as client:
            return await synthesize_world(client, "a parking garage", options)
    return asyncio.run(go())


def test_a_planted_bug_is_caught_from_the_seed_data(llm_server: ScriptedLLMServer,
                                                    llm_config: LLMConfig) -> None:
    """Moving a vehicle into an occupied spot breaks the world's invariant: the gate finds it
    from the sample task's data, sends it back with the calls that show it, and accepts the
    repaired world."""
    llm_server.push(fenced(parking_world(guarded=False)), fenced(parking_world()))
    outcome = run_world(llm_config)
    assert outcome.accepted and outcome.rounds == 1
    assert [h.stage for h in outcome.history] == ["properties", "ok"]
    feedback = llm_server.chat_requests[1].last_user
    assert "invariant broken" in feedback and "move_vehicle" in feedback
    assert "A spot holds at most one vehicle." in feedback
    assert uncovered_tools(outcome.coverage) == []
    assert all(outcome.coverage[t]["succeeded"] > 0 for t in ("park", "move_vehicle", "leave"))
    assert outcome.sample_tasks == ("park_and_move",)


def test_the_planted_bug_is_not_caught_without_seed_data() -> None:
    """Why the gate needs data: from an empty garage no call reaches move_vehicle, so the
    bug would pass the property tests; the coverage gate refuses that world instead."""
    verdict = judge_world(parking_world(guarded=False, sample=False),
                          WorldOptions(test_examples=15, test_steps=12, sample_tasks=0))
    assert verdict.stage == "coverage"
    assert {p["tool"] for p in verdict.problems} == {"park", "move_vehicle", "leave"}
    assert "an empty state" in verdict.problems[0]["message"]


def test_write_tools_that_never_succeed_are_repair_feedback(llm_server: ScriptedLLMServer,
                                                            llm_config: LLMConfig) -> None:
    llm_server.push(fenced(parking_world(open_garage=False)), fenced(parking_world()))
    outcome = run_world(llm_config)
    assert outcome.accepted and [h.stage for h in outcome.history] == ["coverage", "ok"]
    feedback = llm_server.chat_requests[1].last_user
    assert "never succeeded" in feedback and "The garage is closed" in feedback
    problems = json.loads(feedback.split("```json\n")[1].split("\n```")[0])
    assert sorted(p["tool"] for p in problems) == ["leave", "move_vehicle"]
    assert "park" not in {p["tool"] for p in problems}  # it succeeded


def test_the_vacuous_gate_never_accepts(llm_server: ScriptedLLMServer,
                                        llm_config: LLMConfig) -> None:
    """A model that keeps writing a world whose write tools never succeed is rejected with
    the reason, the last draft and its problems; it is never accepted."""
    llm_server.responder = lambda r: fenced(parking_world(sample=False))
    outcome = run_world(llm_config, WorldOptions(max_rounds=2, test_examples=10, test_steps=10,
                                                 plan=False, sample_tasks=0))
    assert not outcome.accepted
    assert outcome.reason == "write tools never succeed after 2 repair rounds"
    assert outcome.detail == "leave, move_vehicle, park"
    assert outcome.text is not None and outcome.stage == "coverage"
    assert {p["tool"] for p in outcome.problems} == {"leave", "move_vehicle", "park"}
    assert len(llm_server.chat_requests) == 3


def test_a_world_without_sample_tasks_is_sent_back(llm_server: ScriptedLLMServer,
                                                   llm_config: LLMConfig) -> None:
    llm_server.push(fenced(counter_world(sample=False)), fenced(counter_world()))
    outcome = run_world(llm_config)
    assert outcome.accepted and [h.stage for h in outcome.history] == ["structure", "ok"]
    assert "at least 1 sample task(s)" in llm_server.chat_requests[1].last_user
    assert "sample task" in llm_server.chat_requests[0].system


def test_sample_tasks_that_do_not_validate_are_sent_back(llm_server: ScriptedLLMServer,
                                                         llm_config: LLMConfig) -> None:
    wrong = counter_world().replace("check four: total == 4", "check four: total == 5")
    llm_server.push(fenced(wrong), fenced(counter_world()))
    outcome = run_world(llm_config)
    assert outcome.accepted and [h.stage for h in outcome.history] == ["validation", "ok"]
    assert '"code": "WS611"' in llm_server.chat_requests[1].last_user


def test_the_plan_asks_for_typed_fields_and_seed_data(llm_server: ScriptedLLMServer,
                                                      llm_config: LLMConfig) -> None:
    llm_server.push(PLAN_JSON, fenced(counter_world()))
    outcome = run_world(llm_config, WorldOptions(test_examples=10, test_steps=10))
    assert outcome.accepted
    plan = llm_server.chat_requests[0]
    assert "customer: Customer" in plan.system and "`date`" in plan.system
    assert "never a `str` holding an id" in plan.system and "seed data" in plan.last_user


def test_the_summary_shows_per_tool_coverage(llm_server: ScriptedLLMServer, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.responder = lambda r: fenced(parking_world())
    out = tmp_path / "garage.world"
    args = ["synth", "world", "a parking garage", "-o", str(out), "--no-plan",
            "--test-examples", "15", "--test-steps", "12", "--base-url", llm_server.url,
            "--model", "m"]
    assert cli_main(args) == 0
    text = capsys.readouterr().out
    assert f"accepted Garage (a parking garage) after 0 repair round(s) -> {out}" in text
    assert "coverage: 3/3 write tools reached; find_free_spots " in text
    assert "move_vehicle* " in text
    assert out.stat().st_mode & 0o777 == 0o644
    assert cli_main([*args, "--format", "json"]) == 0
    item = json.loads(capsys.readouterr().out)["items_detail"][0]
    assert item["coverage"]["park"]["succeeded"] > 0 and item["coverage"]["park"]["changes_state"]


def test_a_rejected_world_keeps_its_last_draft_and_can_be_retried(
        llm_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    attempts: list[RecordedRequest] = []

    def answer(request: RecordedRequest) -> str:
        attempts.append(request)
        return fenced(parking_world(open_garage=False) if len(attempts) <= 2
                      else parking_world())

    llm_server.responder = answer
    out = tmp_path / "garage.world"
    args = ["synth", "world", "a parking garage", "-o", str(out), "--no-plan", "--max-rounds",
            "1", "--test-examples", "10", "--test-steps", "10", "--base-url", llm_server.url,
            "--model", "m", "--journal", str(tmp_path / "journal.jsonl")]
    assert cli_main(args) == 1
    text = capsys.readouterr().out
    assert "rejected a parking garage: write tools never succeed after 1 repair rounds" in text
    drafts = list(tmp_path.glob("garage-*.world.rejected"))
    assert len(drafts) == 1 and not out.exists()
    assert f"last draft and its problems kept in {drafts[0]}" in text
    problems = json.loads(Path(str(drafts[0]).replace(".world.rejected", ".problems.json"))
                          .read_text(encoding="utf-8"))
    assert problems["stage"] == "coverage" and problems["problems"][0]["tool"] == "leave"
    # a plain rerun trusts the rejection; --retry-rejected works on it again
    assert cli_main(args) == 1 and len(attempts) == 2
    capsys.readouterr()
    assert cli_main([*args, "--retry-rejected"]) == 0 and out.is_file()
    assert len(attempts) == 3


def test_a_tool_only_a_solution_can_reach_counts_and_opens_the_rest() -> None:
    """Random calls never guess the one-time code, so sign_in succeeds only in the sample
    solution (property-checked there); exploring from the states that solution passes
    through reaches take_item, which needs someone signed in."""
    from llm_scripts import VAULT_WORLD

    verdict = judge_world(VAULT_WORLD, WorldOptions(test_examples=15, test_steps=12))
    assert verdict.stage == "ok", verdict.problems
    sign_in, take = verdict.coverage["sign_in"], verdict.coverage["take_item"]
    assert sign_in["succeeded"] == 0 and sign_in["in_solutions"] == 1
    assert take["succeeded"] > 0
