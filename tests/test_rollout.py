"""``worldspec rollout``: sessions, the runner, records, rewards, resume, replay and export.

Models are played by the scripted local server (tests/llm_server.py): an *agent* responder
answers requests that carry tools with tool calls taken from a task's reference solution (or
a damaged copy of it), a *user* responder answers the simulated user's requests (no tools).
Nothing here needs a network or an API key; ``pytest -m live`` runs one rollout against a
real endpoint (``WORLDSPEC_LIVE_BASE_URL``, ``WORLDSPEC_LIVE_MODEL``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llm_server import RecordedRequest, Reply, ScriptedLLMServer

from worldspec.cli.main import main
from worldspec.rollout.agent import AgentClient, chat_to_responses_input
from worldspec.rollout.export import select_rollouts, sft_rows
from worldspec.rollout.prompts import GREETING, STOP_MARKER
from worldspec.rollout.records import FORMAT, Journal, RecordError, RolloutRecord, read_records
from worldspec.rollout.runner import (
    RolloutSettings,
    WorldSource,
    plan_rollouts,
    run_batch,
    select_tasks,
)
from worldspec.rollout.session import Session
from worldspec.rollout.summary import Run, pass_hat_k, summarise
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_world
from worldspec.services.model_client import LLMClient, LLMConfig
from worldspec.services.prompts import agent_system_prompt

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "generated" / "mobile_messaging"


@pytest.fixture(scope="module")
def world() -> type[Episode]:
    return load_world(PACKAGE)


def call(name: str, arguments: Any, call_id: str | None = None) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id or f"c_{name}_{time.monotonic_ns()}", "type": "function",
            "function": {"name": name, "arguments": text}}


def solution_calls(world: type[Episode], task: str) -> list[tuple[str, dict[str, Any]]]:
    return [(name, dict(arguments)) for name, arguments in world.TASKS[task].solution]


# --------------------------------------------------------------- scripted models
Plan = Callable[[str], list[tuple[str, Any]]]


def _seen(request: RecordedRequest) -> tuple[str, int, bool]:
    """(first user text, tool results so far, has tools) of a chat or Responses request."""
    if request.path.endswith("/responses"):
        items = request.body.get("input", [])
        users = [i["content"] for i in items if i.get("role") == "user"]
        done = sum(1 for i in items if i.get("type") == "function_call_output")
    else:
        users = [m["content"] for m in request.messages if m.get("role") == "user"]
        done = sum(1 for m in request.messages if m.get("role") == "tool")
    return (users[0] if users else ""), done, bool(request.body.get("tools"))


def scripted_agent(world: type[Episode], plan: Plan | None = None, *, per_turn: int = 1,
                   user: Callable[[RecordedRequest], Reply | str] | None = None
                   ) -> Callable[[RecordedRequest], Reply | str]:
    """A responder that plays an agent following ``plan(task)`` (default: the reference
    solution), ``per_turn`` calls per assistant message, then answers "Done."; requests
    without tools go to ``user`` (the simulated user)."""
    by_text = {spec.instruction.strip(): name for name, spec in world.TASKS.items()}
    chosen = plan or (lambda task: list(solution_calls(world, task)))

    def respond(request: RecordedRequest) -> Reply | str:
        first, done, has_tools = _seen(request)
        if not has_tools:
            assert user is not None, "a user request without a scripted user"
            return user(request)
        calls = chosen(by_text[first])
        if done >= len(calls):
            return "Done: everything you asked for is taken care of."
        batch = calls[done:done + per_turn]
        return Reply(tool_calls=[{"name": n, "arguments": a if isinstance(a, str)
                                  else json.dumps(a)} for n, a in batch])

    return respond


def instruction_user(world: type[Episode], task: str, *, stop_after: int = 1
                     ) -> Callable[[RecordedRequest], Reply | str]:
    """A simulated user who states the task's instruction, then stops after ``stop_after``
    of the agent's answers."""
    text = world.TASKS[task].instruction.strip()

    def respond(request: RecordedRequest) -> str:
        answers = sum(1 for m in request.messages if m.get("role") == "user")
        if answers == 1:  # only the greeting so far
            return text
        if answers > stop_after:
            return f"Thank you, that is all.\n{STOP_MARKER}"
        return "Please go on."

    return respond


def settings(**changes: Any) -> RolloutSettings:
    return dataclasses.replace(RolloutSettings(model="scripted-model"), **changes)


def run(world: type[Episode], server: ScriptedLLMServer, tasks: list[str], *, samples: int = 1,
        journal: Path, config: LLMConfig, concurrency: int = 2,
        **changes: Any) -> list[dict[str, Any]]:
    """Run a batch in-process; the records, in plan order."""
    chosen = settings(**changes)
    source = WorldSource.of(world, "generated/mobile_messaging")
    jobs = plan_rollouts([source], [(0, t) for t in tasks], samples, chosen)

    user_config = dataclasses.replace(config, model=chosen.user_model or config.model)

    async def go() -> Any:
        async with AgentClient(config) as agent, LLMClient(user_config) as user:
            return await run_batch(jobs, chosen, agent, user if chosen.conversational else None,
                                   journal=Journal.open(journal), concurrency=concurrency)

    return list(asyncio.run(go()).records)


# ----------------------------------------------------------------------- session
def test_a_session_plays_the_reference_solution_to_reward_one(world: type[Episode]) -> None:
    session = Session(world, "tidy_archive")
    opening = session.start()
    assert [m["role"] for m in opening] == ["system", "user"]
    assert opening[1]["content"] == world.TASKS["tidy_archive"].instruction.strip()
    assert "The current time is 2024-03-01T09:00:00" in opening[0]["content"]
    for name, arguments in solution_calls(world, "tidy_archive"):
        turn = session.act({"role": "assistant", "content": None,
                            "tool_calls": [call(name, arguments)]})
        assert turn.waiting == "agent" and len(turn.messages) == 1
        assert turn.messages[0]["role"] == "tool"
    turn = session.act({"role": "assistant", "content": "All done."})
    assert turn.done and turn.reward == 1.0
    assert session.termination == "answered" and session.replies == ["All done."]
    assert session.score is not None and session.score.frame_ok
    writes = [s for s in session.steps if s.diff]
    assert {s.name for s in writes} == {"archive_conversation", "unarchive_conversation",
                                        "mark_conversation_read"}
    assert writes[0].diff[0]["path"] == 'conversations["CONV106"].archived_by'
    assert all(not s.diff for s in session.steps if s.name == "list_conversations")


def test_parallel_tool_calls_run_in_order_in_one_turn(world: type[Episode]) -> None:
    session = Session(world, "tidy_archive")
    session.start()
    calls = [call(n, a, f"id{i}") for i, (n, a) in enumerate(solution_calls(world,
                                                                            "tidy_archive"))]
    turn = session.act({"role": "assistant", "content": "", "tool_calls": calls})
    assert [m["tool_call_id"] for m in turn.messages] == [f"id{i}" for i in range(len(calls))]
    assert [s.index for s in session.steps] == list(range(len(calls)))
    assert session.act({"role": "assistant", "content": "ok"}).reward == 1.0


@pytest.mark.parametrize(("name", "arguments", "expected"), [
    ("no_such_tool", "{}", 'Unknown tool "no_such_tool".'),
    ("login", '{"phone": "+1415', "Arguments are not valid JSON"),
    ("login", "[1, 2]", "Arguments must be a JSON object."),
    ("login", "{}", 'Missing required argument "phone".'),
    ("login", '{"phone": 5, "password": "x"}', "phone"),
    ("", "{}", "Unknown tool"),
])
def test_bad_tool_calls_come_back_as_tool_results(world: type[Episode], name: str,
                                                  arguments: str, expected: str) -> None:
    session = Session(world, "reply_to_priya")
    session.start()
    before = session.episode.state_hash()
    turn = session.act({"role": "assistant", "content": None,
                        "tool_calls": [call(name, arguments, "bad")]})
    result = json.loads(turn.messages[0]["content"])
    assert result["success"] is False and expected in result["error"]
    assert session.steps[0].failed and session.steps[0].arguments == arguments
    assert session.episode.state_hash() == before and turn.waiting == "agent"


def test_a_tool_call_without_function_or_id_is_still_answered(world: type[Episode]) -> None:
    session = Session(world, "reply_to_priya")
    session.start()
    turn = session.act({"role": "assistant", "tool_calls": [{"type": "function"},
                                                            "not a call"]})
    assert len(turn.messages) == 1 and turn.messages[0]["tool_call_id"] == "call_1_0"
    assert json.loads(turn.messages[0]["content"])["success"] is False


def test_max_steps_ends_a_session_that_never_answers(world: type[Episode]) -> None:
    session = Session(world, "reply_to_priya", max_steps=3)
    session.start()
    for _ in range(3):
        turn = session.act({"role": "assistant",
                            "tool_calls": [call("list_conversations", {})]})
    assert turn.done and session.termination == "max_steps" and turn.reward == 0.0


def test_a_conversation_goes_greeting_user_agent_and_stops_on_the_marker(
        world: type[Episode]) -> None:
    session = Session(world, "tidy_archive", conversational=True)
    opening = session.start()
    assert opening[-1] == {"role": "assistant", "content": GREETING}
    assert session.waiting == "user"
    with pytest.raises(RuntimeError, match="waits for user"):
        session.act({"role": "assistant", "content": "hi"})
    session.user("Please tidy my archive.")
    assert session.act({"role": "assistant", "content": "Which chats?"}).waiting == "user"
    turn = session.user(f"Never mind. {STOP_MARKER}")
    assert turn.done and session.termination == "user_stop"
    assert session.messages[-1] == {"role": "user", "content": "Never mind."}
    assert turn.reward == 0.0 and session.user_turns == 2


def test_max_turns_ends_a_conversation(world: type[Episode]) -> None:
    session = Session(world, "tidy_archive", conversational=True, max_turns=2)
    session.start()
    for _ in range(2):
        session.user("hello?")
        turn = session.act({"role": "assistant", "content": "How can I help?"})
    assert turn.done and session.termination == "max_turns"


def test_the_system_prompt_carries_the_policy_clock_and_setting(world: type[Episode]) -> None:
    governed = type("Governed", (world,), {"POLICY": "Never delete a message."})
    one_shot = agent_system_prompt(governed, "tidy_archive", conversational=False)
    chat = agent_system_prompt(governed, "tidy_archive", conversational=True)
    assert "Never delete a message." in one_shot and "The current time is" in one_shot
    assert "nobody will answer questions" in one_shot and "chatting with a user" in chat
    custom = agent_system_prompt(governed, "t", conversational=False,
                                 template='{"json": true} $world at $clock $unknown_name')
    assert custom == '{"json": true} MobileMessaging at 2024-03-01T09:00:00 $unknown_name'
    # the spec's own policy (messaging.world has one) reaches the prompt
    assert world.POLICY and world.POLICY.strip() in agent_system_prompt(
        world, "tidy_archive", conversational=False)
    plain = type("Plain", (world,), {"POLICY": ""})  # a world without a policy: no gap
    assert "\n\nThe current time" in agent_system_prompt(plain, "tidy_archive",
                                                         conversational=False)
    # an external policy replaces the world's; $policy_text keeps it byte for byte
    external = agent_system_prompt(governed, "tidy_archive", conversational=False,
                                   policy="Only archive.\n")
    assert "Only archive." in external and "Never delete a message." not in external
    exact = agent_system_prompt(governed, "t", conversational=True, policy="  A\nB\n\n",
                                template="<policy>\n$policy_text\n</policy>")
    assert exact == "<policy>\n  A\nB\n\n\n</policy>"


def test_chat_history_becomes_responses_items() -> None:
    instructions, items = chat_to_responses_input([
        {"role": "system", "content": "be good"}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call("f", {"a": 1}, "x")]},
        {"role": "tool", "tool_call_id": "x", "content": "42"},
        {"role": "assistant", "content": "done"}])
    assert instructions == "be good"
    assert items == [{"role": "user", "content": "hi"},
                     {"type": "function_call", "call_id": "x", "name": "f",
                      "arguments": '{"a": 1}'},
                     {"type": "function_call_output", "call_id": "x", "output": "42"},
                     {"role": "assistant", "content": "done"}]


# ------------------------------------------------------------------------ runner
TASKS = ["tidy_archive", "reply_to_priya", "clean_up_contacts"]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_perfect_agent_scores_one_on_every_task_and_sample(
        world: type[Episode], llm_server: ScriptedLLMServer, llm_config: LLMConfig,
        tmp_path: Path, api: str) -> None:
    llm_server.responder = scripted_agent(world, per_turn=2)
    records = run(world, llm_server, TASKS, samples=2, journal=tmp_path / "j.jsonl",
                  config=llm_config, api=api)
    assert [(r["task"], r["sample"]) for r in records] == [(t, s) for t in TASKS
                                                           for s in range(2)]
    assert all(r["status"] == "finished" and r["reward"] == 1.0 for r in records)
    assert all(r["termination"] == "answered" for r in records)
    assert len({r["key"] for r in records}) == 6 and len({r["seed"] for r in records}) == 6
    record = records[0]
    assert record["format"] == FORMAT and record["api"] == api
    assert record["tools"] == world(task="tidy_archive").tools("chat")
    assert record["world_sha256"] == WorldSource.of(world, "x").sha256
    assert record["usage"]["agent"]["requests"] == record["agent_messages"] == 4
    assert record["usage"]["agent"]["prompt_tokens"] == 44
    assert record["replies"] == ["Done: everything you asked for is taken care of."]
    assert [s["name"] for s in record["steps"]] == [n for n, _ in solution_calls(
        world, "tidy_archive")]
    sent = llm_server.responses_requests if api == "responses" else llm_server.chat_requests
    assert len(sent) == sum(r["agent_messages"] for r in records)
    if api == "responses":
        assert sent[0].body["tools"] == world(task="tidy_archive").tools("responses")
        assert "instructions" in sent[0].body
    runs, _ = summarise(records)
    assert runs[Run("MobileMessaging", "one-shot", "scripted-model")].pass_k == {1: 1.0, 2: 1.0}


def test_collateral_damage_zeroes_the_reward_and_partial_work_earns_partial_credit(
        world: type[Episode], llm_server: ScriptedLLMServer, llm_config: LLMConfig,
        tmp_path: Path) -> None:
    def sloppy(task: str) -> list[tuple[str, Any]]:
        calls: list[tuple[str, Any]] = list(solution_calls(world, task))
        if task == "tidy_archive":  # every check passes, and a contact is changed on the way
            return [*calls, ("set_favorite_contact", {"contact": "CT101", "favorite": False})]
        return calls[:4]  # reply_to_priya: log in and read; no resend and no reply

    llm_server.responder = scripted_agent(world, sloppy)
    damage, partial = run(world, llm_server, ["tidy_archive", "reply_to_priya"],
                          journal=tmp_path / "j.jsonl", config=llm_config)
    assert damage["reward"] == 0.0 and damage["checks_reward"] == 1.0
    assert all(c["passed"] for c in damage["checks"])
    assert damage["frame"] == {"ok": False, "violations": ['contacts["CT101"].favorite'],
                               "changes": [{"path": 'contacts["CT101"].favorite',
                                            "old": True, "new": False}]}
    assert 0.0 < partial["reward"] < 1.0 and partial["frame"]["ok"]
    assert partial["reward"] == partial["checks_reward"] == 0.25
    assert [c["name"] for c in partial["checks"] if c["passed"]] == ["priya_read"]


def test_malformed_and_unknown_calls_from_the_model_are_tool_results(
        world: type[Episode], llm_server: ScriptedLLMServer, llm_config: LLMConfig,
        tmp_path: Path) -> None:
    def clumsy(task: str) -> list[tuple[str, Any]]:
        return [("list_conversations", "{not json"), ("summon_dragon", {}),
                ("archive_conversation", {}), *solution_calls(world, task)]

    llm_server.responder = scripted_agent(world, clumsy, per_turn=3)
    (record,) = run(world, llm_server, ["tidy_archive"], journal=tmp_path / "j.jsonl",
                    config=llm_config)
    assert record["status"] == "finished" and record["reward"] == 1.0
    failed = [s for s in record["steps"] if s["failed"]]
    assert [s["name"] for s in failed] == ["list_conversations", "summon_dragon",
                                           "archive_conversation"]
    assert failed[0]["arguments"] == "{not json"
    assert "not valid JSON" in failed[0]["result"]["error"]
    tool_messages = [m for m in record["messages"] if m["role"] == "tool"]
    assert 'Unknown tool \\"summon_dragon\\"' in tool_messages[1]["content"]


def test_rate_limits_and_server_errors_are_retried_and_counted(
        world: type[Episode], llm_server: ScriptedLLMServer, llm_config: LLMConfig,
        tmp_path: Path) -> None:
    agent = scripted_agent(world)
    failures = [Reply(status=429, headers={"retry-after": "0"}), Reply(status=503),
                Reply(status=500)]

    def flaky(request: RecordedRequest) -> Reply | str:
        return failures.pop(0) if failures else agent(request)

    llm_server.responder = flaky
    (record,) = run(world, llm_server, ["tidy_archive"], journal=tmp_path / "j.jsonl",
                    config=llm_config)
    assert record["status"] == "finished" and record["reward"] == 1.0
    assert record["usage"]["agent"]["retries"] == 3


def test_a_model_that_keeps_failing_gives_an_error_record_that_a_resume_redoes(
        world: type[Episode], llm_server: ScriptedLLMServer, llm_config: LLMConfig,
        tmp_path: Path) -> None:
    agent = scripted_agent(world)
    state = {"down": True}

    def outage(request: RecordedRequest) -> Reply | str:
        done = _seen(request)[1]
        if state["down"] and done >= 2:
            return Reply(delay=1.0)  # longer than the timeout: every attempt times out
        return agent(request)

    llm_server.responder = outage
    config = dataclasses.replace(llm_config, timeout=0.2, max_retries=1)
    journal = tmp_path / "j.jsonl"
    (failed,) = run(world, llm_server, ["tidy_archive"], journal=journal, config=config)
    assert failed["status"] == "error" and failed["termination"] == "error"
    assert "no answer within 0.2 s" in failed["error"]
    assert len(failed["steps"]) == 2  # the trajectory so far is kept
    state["down"] = False
    (again,) = run(world, llm_server, ["tidy_archive"], journal=journal, config=config)
    assert again["status"] == "finished" and again["reward"] == 1.0
    assert again["key"] == failed["key"]
    assert [r["status"] for r in read_records(journal, finished_only=False)] == ["finished"]


def test_a_simulated_user_talks_until_it_stops_and_never_sees_tools_or_state(
        world: type[Episode], llm_server: ScriptedLLMServer, llm_config: LLMConfig,
        tmp_path: Path) -> None:
    llm_server.responder = scripted_agent(world, per_turn=5,
                                          user=instruction_user(world, "tidy_archive"))
    (record,) = run(world, llm_server, ["tidy_archive"], journal=tmp_path / "j.jsonl",
                    config=llm_config, conversational=True, user_model="user-model")
    assert record["status"] == "finished" and record["reward"] == 1.0
    assert record["termination"] == "user_stop" and record["user_turns"] == 2
    roles = [m["role"] for m in record["messages"]]
    assert roles[:3] == ["system", "assistant", "user"] and roles[-1] == "user"
    assert record["models"] == {"agent": "scripted-model", "user": "user-model"}
    user_requests = [r for r in llm_server.chat_requests if not r.body.get("tools")]
    assert len(user_requests) == 2 and record["usage"]["user"]["requests"] == 2
    spec = world.TASKS["tidy_archive"]
    for request in user_requests:
        assert request.body["model"] == "user-model"
        assert "CONV106" not in request.text  # no state, no tool traffic
        assert "archive_conversation" not in request.text
        assert spec.instruction.strip() in request.system
    assert user_requests[0].messages[1] == {"role": "user", "content": GREETING}


def test_a_user_who_stops_early_leaves_the_task_undone(
        world: type[Episode], llm_server: ScriptedLLMServer, llm_config: LLMConfig,
        tmp_path: Path) -> None:
    def impatient(request: RecordedRequest) -> str:
        return f"Forget it. {STOP_MARKER}"

    llm_server.responder = scripted_agent(world, user=impatient)
    (record,) = run(world, llm_server, ["tidy_archive"], journal=tmp_path / "j.jsonl",
                    config=llm_config, conversational=True)
    assert record["termination"] == "user_stop" and record["reward"] == 0.0
    assert record["agent_messages"] == 0 and record["steps"] == []
    assert record["messages"][-1] == {"role": "user", "content": "Forget it."}


def test_the_same_rollout_is_reproducible(world: type[Episode], llm_server: ScriptedLLMServer,
                                          llm_config: LLMConfig, tmp_path: Path) -> None:
    llm_server.responder = scripted_agent(world)
    first = run(world, llm_server, ["reply_to_priya"], journal=tmp_path / "a.jsonl",
                config=llm_config)
    second = run(world, llm_server, ["reply_to_priya"], journal=tmp_path / "b.jsonl",
                 config=llm_config)

    def strip(record: dict[str, Any]) -> Any:
        return ([{k: v for k, v in s.items() if k not in ("call_id", "seconds")}
                 for s in record["steps"]], record["reward"], record["seed"], record["key"])

    assert strip(first[0]) == strip(second[0])
    seeds = [r.body.get("seed") for r in llm_server.chat_requests]
    assert len(set(seeds)) == 1 and seeds[0] == first[0]["seed"]


def test_pass_hat_k_is_taus_estimator() -> None:
    assert pass_hat_k(2, 4, 1) == 0.5
    assert pass_hat_k(2, 4, 2) == pytest.approx(1 / 6)
    assert pass_hat_k(1, 4, 2) == 0.0 and pass_hat_k(4, 4, 4) == 1.0
    with pytest.raises(ValueError):
        pass_hat_k(1, 2, 3)
    records = [{"world": "W", "task": t, "status": "finished", "reward": r, "sample": i,
                "agent_messages": 2, "steps": [], "usage": {"total_tokens": 10}}
               for t, rewards in (("a", [1, 1, 0, 0]), ("b", [1, 1, 1, 1]))
               for i, r in enumerate(rewards)]
    records.append({"world": "W", "task": "a", "status": "error", "usage": {}})
    runs, tasks = summarise(records)
    (run,) = runs  # records that name no model or setting: one run, one-shot, model "?"
    assert run == Run("W", "one-shot", "?")
    assert tasks[run]["a"].pass_k[2] == pytest.approx(1 / 6) and tasks[run]["a"].errors == 1
    assert runs[run].pass_k[2] == pytest.approx((1 / 6 + 1) / 2)
    assert runs[run].mean_reward == 0.75 and runs[run].tokens == 80


def test_task_selection_by_name_split_and_tag(world: type[Episode]) -> None:
    assert select_tasks(world, names=["tidy_archive"]) == ["tidy_archive"]
    assert "reply_to_priya" in select_tasks(world, tag="delivery")
    assert "tidy_archive" not in select_tasks(world, tag="delivery")
    assert select_tasks(world, split="no-such-split") == []


# --------------------------------------------------------- records, replay, export
@pytest.fixture
def runs(world: type[Episode], llm_server: ScriptedLLMServer, tmp_path: Path,
         capsys: pytest.CaptureFixture[str]) -> Path:
    """A runs folder made through the command line: two tasks x 2 samples, one sloppy (its
    standard output is kept beside it, in ``stdout.txt``)."""
    perfect = scripted_agent(world)
    sloppy = scripted_agent(world, lambda task: [
        *solution_calls(world, task),
        ("set_favorite_contact", {"contact": "CT101", "favorite": False})])

    def mixed(request: RecordedRequest) -> Reply | str:
        # the second sample of tidy_archive damages a contact
        is_second = request.body.get("seed") == second_seed["tidy_archive"]
        return sloppy(request) if is_second else perfect(request)

    source = WorldSource.of(world, "generated/mobile_messaging")
    jobs = plan_rollouts([source], [(0, "tidy_archive")], 2, settings())
    second_seed = {"tidy_archive": jobs[1].seed}
    llm_server.responder = mixed
    out = tmp_path / "runs"
    assert main(["rollout", str(PACKAGE), "--task", "tidy_archive", "--task",
                 "reply_to_priya", "-n", "2", "--base-url", llm_server.url, "--model",
                 "scripted-model", "-o", str(out), "--progress", "never"]) == 0
    (tmp_path / "stdout.txt").write_text(capsys.readouterr().out, encoding="utf-8")
    return out


def test_the_command_line_writes_records_and_a_summary(runs: Path) -> None:
    out = (runs.parent / "stdout.txt").read_text(encoding="utf-8")
    assert "4 rollout(s), 0 error(s)" in out
    assert "tidy_archive: 2 rollout(s), mean reward 0.500, pass rate 0.500, pass^1 0.500, " \
           "pass^2 0.000" in out
    summary = json.loads((runs / "summary.json").read_text())
    (only,) = summary["runs"]
    assert (only["world"], only["setting"], only["model"]) == \
        ("MobileMessaging", "one-shot", "scripted-model")
    task = only["tasks"]["tidy_archive"]
    assert task["pass_k"] == {"1": 0.5, "2": 0.0} and task["rollouts"] == 2
    records = list(read_records(runs))
    assert len(records) == 4 and {r["world_path"] for r in records} == {str(PACKAGE)}
    # a finished rollout's record holds every field of the schema, and nothing else
    schema = RolloutRecord.__required_keys__ | RolloutRecord.__optional_keys__
    assert [sorted(r) for r in records] == [sorted(schema)] * 4


def test_run_calls_replays_a_record_exactly(runs: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    for record in read_records(runs):
        one = tmp_path / f"{record['task']}-{record['sample']}.json"
        one.write_text(json.dumps(record) + "\n", encoding="utf-8")
        status = main(["run", "examples/messaging", "--task", record["task"], "--calls",
                       str(one), "--format", "json"])
        replay = json.loads(capsys.readouterr().out)
        assert replay["reward"] == record["reward"]
        assert replay["checks"] == record["checks"] and replay["frame"] == record["frame"]
        assert [c["result"] for c in replay["calls"]] == [s["result"] for s in record["steps"]]
        assert status == (0 if record["reward"] == 1.0 else 1)


def test_export_writes_sft_rows_that_datasets_loads(runs: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    every, best = tmp_path / "all.jsonl", tmp_path / "best.jsonl"
    assert main(["export", "--trajectories", str(runs), "-o", str(every)]) == 0
    assert main(["export", "--trajectories", str(runs), "--best-of", "--min-reward", "0",
                 "-o", str(best)]) == 0
    rows = [json.loads(line) for line in every.read_text().splitlines()]
    assert len(rows) == 3  # the damaging sample (reward 0) is left out
    assert {(r["task"], r["sample"]) for r in rows} == {("tidy_archive", 0),
                                                        ("reply_to_priya", 0),
                                                        ("reply_to_priya", 1)}
    best_rows = [json.loads(line) for line in best.read_text().splitlines()]
    assert [(r["task"], r["sample"], r["reward"]) for r in best_rows] == [
        ("reply_to_priya", 0, 1.0), ("tidy_archive", 0, 1.0)]
    loaded = datasets.load_dataset("json", data_files=str(every), split="train")
    assert loaded.num_rows == 3
    row = loaded[0]
    assert row["messages"][0]["role"] == "system"
    calls = [m["tool_calls"] for m in row["messages"] if m["tool_calls"]]
    assert all(isinstance(c["function"]["arguments"], str) for cs in calls for c in cs)
    json.loads(calls[0][0]["function"]["arguments"])
    assert json.loads(row["tools"])[0]["type"] == "function"


def test_select_rollouts_keeps_the_best_then_lowest_sample() -> None:
    records = [{"world": "W", "task": "t", "status": "finished", "reward": r, "sample": i}
               for i, r in enumerate([0.5, 1.0, 1.0])]
    records.append({"world": "W", "task": "t", "status": "error", "reward": 1.0, "sample": 9})
    assert [r["sample"] for r in select_rollouts(records, best_of=True, min_reward=0)] == [1]
    assert [r["sample"] for r in select_rollouts(records, min_reward=0.5)] == [0, 1, 2]
    assert select_rollouts(records, best_of=True, min_reward=1.5) == []
    assert sft_rows([]) == []


# ------------------------------------------------------------- journal, resume, kill
def test_a_torn_last_line_is_skipped_and_closed_before_the_next_append(tmp_path: Path
                                                                       ) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path)
    journal.append({"format": FORMAT, "key": "a", "status": "finished"})
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"format": "worldspec.rollout/1", "key": "b", "sta')
    again = Journal.open(path)
    assert list(again.records) == ["a"] and again.skipped_lines == 1
    again.append({"format": FORMAT, "key": "c", "status": "finished"})
    reread = Journal.open(path)
    assert list(reread.records) == ["a", "c"] and reread.skipped_lines == 1
    path.write_text(json.dumps({"format": "worldspec.rollout/99", "key": "x"}) + "\n")
    with pytest.raises(RecordError, match=r"worldspec\.rollout/99"):
        Journal.open(path)


KILL_DRIVER = """
import sys
from worldspec.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_kill_9_mid_batch_then_resume_loses_nothing_and_repeats_nothing(
        world: type[Episode], llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    agent = scripted_agent(world)

    def slow(request: RecordedRequest) -> Reply | str:
        answer = agent(request)
        reply = Reply(content=answer) if isinstance(answer, str) else answer
        reply.delay = 0.05
        return reply

    llm_server.responder = slow
    out = tmp_path / "runs"
    journal = out / "rollouts.jsonl"
    args = ["rollout", str(PACKAGE), "--task", "tidy_archive", "--task", "clean_up_contacts",
            "-n", "4", "--base-url", llm_server.url, "--model", "scripted-model", "-o",
            str(out), "--concurrency", "2", "--progress", "never"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", KILL_DRIVER, *args], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if journal.is_file() and len(journal.read_text().splitlines()) >= 3:
                break
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    written = [line for line in journal.read_text().splitlines() if line.strip()]
    if written and not journal.read_text().endswith("\n"):
        written.pop()  # the kill tore the line being written (a long write stops at a page)
    before = [json.loads(line) for line in written]
    assert 3 <= len(before) < 8, "the kill came too late to interrupt the batch"
    with open(journal, "a", encoding="utf-8") as handle:
        handle.write('{"format": "worldspec.rollout/1", "key": "torn')  # a kill mid-write
    requests_before = len(llm_server.chat_requests)
    assert main(args) == 0
    lines = [line for line in journal.read_text().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines[:len(before)] + lines[len(before) + 1:]]
    keys = [r["key"] for r in records]
    assert len(keys) == len(set(keys)) == 8  # every rollout once, none twice
    assert all(r["status"] == "finished" and r["reward"] == 1.0 for r in records)
    assert keys[:len(before)] == [r["key"] for r in before]  # finished ones kept, not redone
    redone = len(llm_server.chat_requests) - requests_before
    per_rollout = {r["key"]: r["agent_messages"] for r in records}
    assert redone == sum(per_rollout[k] for k in keys[len(before):])


# ------------------------------------------------------------------ command line
def test_rollout_usage_errors_are_one_line_messages(
        llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("WORLDSPEC_MODEL", raising=False)
    base = ["rollout", str(PACKAGE), "-o", str(tmp_path / "r")]
    endpoint = ["--base-url", llm_server.url, "--model", "m"]
    cases = [
        (base, "no model endpoint configured"),
        (base + endpoint + ["--task", "nope"], "no task 'nope'"),
        (base + endpoint + ["--tag", "nope"], "no task matches the selection"),
        (base + endpoint + ["--system-prompt", str(tmp_path / "missing.txt")],
         "cannot read the prompt template"),
        (base + endpoint + ["--policy", str(tmp_path)], "cannot read the policy file"),
        (["export", "--trajectories", str(tmp_path), "--policy", "policy.md"],
         "--policy: a trajectory keeps the prompt its rollout was given"),
        (["export", "examples/messaging", "--policy", str(tmp_path / "missing.md")],
         "cannot read the policy file"),
        (["rollout", str(tmp_path / "nowhere"), *endpoint], "does not exist"),
        (["view", str(tmp_path / "nowhere")], "does not exist"),
        (["export", "--trajectories", str(tmp_path), "examples"], "not both"),
        (["export"], "nothing to export"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (argv, err)
    assert llm_server.requests == []


def test_rollout_compiles_specs_too(world: type[Episode], llm_server: ScriptedLLMServer,
                                    tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    llm_server.responder = scripted_agent(world)
    assert main(["rollout", "examples/messaging", "--task", "tidy_archive", "--base-url",
                 llm_server.url, "--model", "m", "-o", str(tmp_path), "--format",
                 "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    (only,) = summary["runs"]
    assert only["world"] == "MobileMessaging" and only["mean_reward"] == 1.0
    (record,) = read_records(tmp_path)
    assert record["world_sha256"] == WorldSource.of(world, "x").sha256  # same compiled world


def test_a_rollout_worker_on_a_generated_package_never_loads_the_compiler() -> None:
    code = (
        "import sys\n"
        "from worldspec.services.loading import load_world\n"
        "import worldspec.rollout.runner, worldspec.rollout.export, worldspec.rollout.view\n"
        "from worldspec.rollout.session import Session\n"
        f"World = load_world({str(PACKAGE)!r})\n"
        "s = Session(World, 'tidy_archive'); s.start()\n"
        "s.act({'role': 'assistant', 'content': 'done'})\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('lark', 'jinja2') or\n"
        "       m.startswith(('worldspec.compiler', 'worldspec.dsl', 'worldspec.cli'))]\n"
        "print(bad)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------------- live
LIVE_URL = os.environ.get("WORLDSPEC_LIVE_BASE_URL")


@pytest.mark.live
@pytest.mark.skipif(not LIVE_URL, reason="set WORLDSPEC_LIVE_BASE_URL (and "
                    "WORLDSPEC_LIVE_MODEL, OPENAI_API_KEY) to run against a real model")
def test_live_one_rollout_against_a_real_endpoint(tmp_path: Path) -> None:
    model = os.environ.get("WORLDSPEC_LIVE_MODEL")
    assert main(["rollout", str(PACKAGE), "--task", "tidy_archive", "--base-url",
                 str(LIVE_URL), *(["--model", model] if model else []),
                 "-o", str(tmp_path), "--max-steps", "15"]) in (0, 1)
    (record,) = read_records(tmp_path, finished_only=False)
    assert record["status"] == "finished", record.get("error")
    assert 0.0 <= record["reward"] <= 1.0 and record["messages"][0]["role"] == "system"


# -------------------------------------------------------------------- benchmark
def test_the_rollout_benchmark_runs_and_reports_every_way() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_rollout.py"),
                           "--quick", "--json"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert {r["world"] for r in report["rows"]} == {"MobileMessaging", "OnlineShop",
                                                     "ClinicScheduling"}
    for row in report["rows"]:
        assert row["steps"] > 0
        for way in ("bare", "bare_score", "session", "session_no_diffs", "runner",
                    "runner_journal"):
            assert row[f"{way}_us"] > 0


# ------------------------------------------------------------------ world hash
def test_world_sha256_changes_with_behaviour_not_only_with_schemas(tmp_path: Path) -> None:
    from llm_scripts import counter_world

    from worldspec.services.dataset import world_sha256
    from worldspec.services.loading import compile_worlds

    hashes, schemas = [], []
    for index, guarded in enumerate((True, False, True)):
        spec = tmp_path / f"v{index}" / "counter.world"
        spec.parent.mkdir()
        spec.write_text(counter_world(guarded=guarded), encoding="utf-8")
        counter = compile_worlds([spec]).worlds["Counter"]
        hashes.append(world_sha256(counter))
        schemas.append(counter().tools("chat"))
    assert schemas[0] == schemas[1]  # the same names and schemas ...
    assert hashes[0] != hashes[1]  # ... but a different tool body
    assert hashes[0] == hashes[2]  # and the same spec hashes the same wherever it is built


def test_run_calls_on_a_whole_journal_says_to_pick_one_record(
        runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = runs / "rollouts.jsonl"
    assert main(["run", "examples/messaging", "--task", "tidy_archive", "--calls",
                 str(journal)]) == 2
    assert "holds 4 rollout records; replay one of them" in capsys.readouterr().err


def test_the_progress_line_shows_done_mean_reward_and_tokens(
        world: type[Episode], llm_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.responder = scripted_agent(world)
    assert main(["rollout", str(PACKAGE), "--task", "tidy_archive", "-n", "2", "--base-url",
                 llm_server.url, "--model", "m", "-o", str(tmp_path), "--progress",
                 "always"]) == 0
    err = capsys.readouterr().err
    assert "\rrollouts 0/2 done" not in err  # nothing drawn before the first one ends
    assert "\rrollouts 1/2 done, mean reward 1.000, 108 tokens" in err
    assert "\rrollouts 2/2 done, mean reward 1.000, 216 tokens" in err and err.endswith("\n")


@pytest.mark.parametrize("task", ["tidy_archive", "paris_trip_group", "clean_up_contacts",
                                  "hana_q4_follow_up"])
def test_each_step_diff_and_hash_are_what_that_call_left(world: type[Episode], task: str) -> None:
    calls = [("list_conversations", {}), ("archive_conversation", {"conversation": "NOPE"}),
             *solution_calls(world, task),
             ("archive_conversation", {"conversation": "CONV101"}),
             ("unarchive_conversation", {"conversation": "CONV101"}),  # changed back
             ("archive_conversation", {"conversation": "CONV101"})]
    session = Session(world, task)
    session.start()
    reference = world(task=task)
    for name, arguments in calls:
        session.act({"role": "assistant", "tool_calls": [call(name, arguments)]})
        before = reference.copy()
        reference.call(name, dict(arguments))
        expected = reference.diff(before)
        got = list(session.steps[-1].diff)

        def key(change: Any) -> str:
            return json.dumps(change, sort_keys=True)

        assert sorted(map(key, got)) == sorted(map(key, expected)), (name, got, expected)
        assert session.steps[-1].state_hash == reference.state_hash()


def test_rollout_on_a_spec_with_errors_exits_1(llm_server: ScriptedLLMServer, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.world"
    broken.write_text('world Broken "x"\nstate { n: nope }\n', encoding="utf-8")
    assert main(["rollout", str(broken), "--base-url", llm_server.url, "--model", "m",
                 "-o", str(tmp_path / "r")]) == 1
    err = capsys.readouterr().err
    assert "cannot run rollouts: the specs have errors" in err and "Traceback" not in err
    assert llm_server.requests == []


def test_the_simulated_user_sees_the_agent_as_user_and_itself_as_assistant(
        world: type[Episode]) -> None:
    from worldspec.rollout.user import SimulatedUser

    spec = world.TASKS["tidy_archive"]
    user = SimulatedUser.for_task(world, spec)
    assert spec.instruction.strip() in user.messages[0]["content"]
    assert STOP_MARKER in user.messages[0]["content"]
    first = user.hear({"role": "assistant", "content": GREETING})
    assert first[1:] == [{"role": "user", "content": GREETING}]
    assert user.said("Archive my spam chat.") == "Archive my spam chat."
    second = user.hear({"role": "assistant", "content": None, "tool_calls": [call("x", {})]})
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[-1]["content"] == ""  # tool traffic never reaches the user


def test_the_session_example_in_the_docs_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    text = (ROOT / "docs" / "rollouts.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
                if "Session(" in b]
    monkeypatch.chdir(ROOT)
    namespace: dict[str, Any] = {}
    exec(compile(block, "docs/rollouts.md", "exec"), namespace)  # the documented example
    turn = namespace["turn"]
    assert turn.done and namespace["session"].termination == "answered"
    assert namespace["messages"][1]["role"] == "user"


def test_sft_rows_are_uniform_even_from_hand_edited_records() -> None:
    (row,) = sft_rows([{"world": "W", "task": "t", "sample": 0, "reward": 1.0, "messages": [
        {"role": "user", "content": None},
        {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}},
                                             "junk"]}]}])
    assert row["messages"] == [
        {"role": "user", "content": "", "tool_calls": None, "tool_call_id": None},
        {"role": "assistant", "content": "", "tool_call_id": None, "tool_calls": [
            {"id": "", "type": "function", "function": {"name": "f",
                                                        "arguments": '{"a": 1}'}}]}]
    assert row["tools"] == "[]"
