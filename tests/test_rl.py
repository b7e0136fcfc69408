"""``worldspec.rl``: the step API gives the rollout runner's trajectories, rewards and verdicts.

The models are the scripted local server (tests/llm_server.py): an agent that plays a task's
reference solution (or a damaged copy of it) with deterministic call ids, and, in
conversations, a user who states the task and then stops. The same scripted agent is played
through ``worldspec rollout`` and through ``TextEnv.step`` (the policy asking the same server
through the same client); the two trajectories must be the same, field for field.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llm_server import RecordedRequest, Reply, ScriptedLLMServer

from worldspec.cli.main import main
from worldspec.rl import TRAJECTORY_FIELDS, StepResult, TextEnv
from worldspec.rollout.agent import AgentClient
from worldspec.rollout.prompts import GREETING, STOP_MARKER
from worldspec.rollout.records import read_records
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_world
from worldspec.services.model_client import LLMClient, LLMConfig

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "generated" / "mobile_messaging"
Responder = Callable[[RecordedRequest], "Reply | str"]


@pytest.fixture(scope="module")
def world() -> type[Episode]:
    return load_world(PACKAGE)


def solution(world: type[Episode], task: str) -> list[tuple[str, Any]]:
    return [(name, dict(arguments)) for name, arguments in world.TASKS[task].solution]


def sloppy(world: type[Episode], task: str) -> list[tuple[str, Any]]:
    """The solution, a malformed call and an unknown tool, then damage outside the frame."""
    return [*solution(world, task), ("login", '{"phone": "+1415'), ("no_such_tool", "{}"),
            ("set_favorite_contact", {"contact": "CT101", "favorite": False})]


def scripted_agent(world: type[Episode], plan: Callable[[str], list[tuple[str, Any]]], *,
                   per_turn: int = 1, user: Responder | None = None) -> Responder:
    """An agent following ``plan(task)``, ``per_turn`` calls a message, call ids fixed by
    position (so two runs of it write the same messages), then a final answer; requests
    without tools go to ``user``."""
    by_text = {spec.instruction.strip(): name for name, spec in world.TASKS.items()}

    def respond(request: RecordedRequest) -> Reply | str:
        if not request.body.get("tools"):
            assert user is not None, "a user request without a scripted user"
            return user(request)
        texts = [str(m.get("content")) for m in request.messages if m.get("role") == "user"]
        task = next(by_text[t.strip()] for t in texts if t.strip() in by_text)
        done = sum(1 for m in request.messages if m.get("role") == "tool")
        calls = plan(task)
        if done >= len(calls):
            return "Done: everything you asked for is taken care of."
        return Reply(content="On it." if done == 0 else "", tool_calls=[
            {"id": f"call_{task}_{done + i}", "name": n,
             "arguments": a if isinstance(a, str) else json.dumps(a)}
            for i, (n, a) in enumerate(calls[done:done + per_turn])])

    return respond


def instruction_user(world: type[Episode], task: str) -> Responder:
    """A user who states the instruction, answers once more, then stops."""
    text = world.TASKS[task].instruction.strip()

    def respond(request: RecordedRequest) -> str:
        heard = sum(1 for m in request.messages if m.get("role") == "user")
        if heard == 1:
            return text
        return "Please go on." if heard == 2 else f"Thanks, that is all.\n{STOP_MARKER}"

    return respond


def rollout_record(server: ScriptedLLMServer, task: str, out: Path, *extra: str
                   ) -> dict[str, Any]:
    """One record made by the command line, ``worldspec rollout``."""
    assert main(["rollout", str(PACKAGE), "--task", task, "--base-url", server.url,
                 "--model", "scripted-model", "-o", str(out), "--progress", "never",
                 *extra]) == 0
    (record,) = list(read_records(out))
    assert record["status"] == "finished", record.get("error")
    return record


def play(env: TextEnv, config: LLMConfig, task: str) -> tuple[list[StepResult], list[Any]]:
    """A policy that asks the scripted server for each message, driving ``env.astep`` (or the
    sync ``step`` when the environment is one-shot); the results and the opening."""

    async def go() -> tuple[list[StepResult], list[Any]]:
        results: list[StepResult] = []
        async with AgentClient(config) as agent:
            if env.conversational:
                messages, tools = await env.areset(task)
            else:
                messages, tools = env.reset(task)
            opening = list(messages)
            while True:
                reply = await agent.respond(messages, tools)
                step = await env.astep(reply) if env.conversational else env.step(reply)
                results.append(step)
                messages = [*messages, reply, *step.messages]
                if step.done:
                    return results, opening

    return asyncio.run(go())


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """The session-decided fields, without the wall-clock seconds of each call."""
    kept = {k: record[k] for k in TRAJECTORY_FIELDS}
    kept["steps"] = [{k: v for k, v in s.items() if k != "seconds"} for s in kept["steps"]]
    return kept


# ------------------------------------------------------------ same as rollout
@pytest.mark.parametrize(("task", "plan_name", "per_turn"), [
    ("tidy_archive", "solution", 1),
    ("reply_to_priya", "solution", 3),
    ("tidy_archive", "sloppy", 2),
])
def test_step_gives_the_same_trajectory_as_worldspec_rollout(
        world: type[Episode], llm_server: ScriptedLLMServer, llm_config: LLMConfig,
        tmp_path: Path, task: str, plan_name: str, per_turn: int) -> None:
    plan = solution if plan_name == "solution" else sloppy
    llm_server.responder = scripted_agent(world, lambda t: plan(world, t), per_turn=per_turn)
    record = rollout_record(llm_server, task, tmp_path / "runs")
    env = TextEnv(world)
    results, _ = play(env, llm_config, task)
    mine = env.trajectory()
    assert comparable(mine) == comparable(record)
    assert results[-1].reward == record["reward"]
    assert results[-1].info["checks"] == record["checks"]
    assert results[-1].info["frame"] == record["frame"]
    assert results[-1].info["termination"] == record["termination"] == "answered"
    assert all(r.reward == 0.0 and not r.done for r in results[:-1])
    if plan_name == "solution":
        assert record["reward"] == 1.0
    else:  # the work is done but a contact outside the frame was changed: zero
        assert record["reward"] == 0.0 and record["checks_reward"] == 1.0
        assert not record["frame"]["ok"]
        failed = [s for r in results for s in r.info["tool_steps"] if s["failed"]]
        assert [s["name"] for s in failed] == ["login", "no_such_tool"]


def test_a_conversation_through_astep_is_the_conversation_rollout_records(
        world: type[Episode], llm_server: ScriptedLLMServer, llm_config: LLMConfig,
        tmp_path: Path) -> None:
    task = "tidy_archive"
    llm_server.responder = scripted_agent(world, lambda t: solution(world, t), per_turn=5,
                                          user=instruction_user(world, task))
    record = rollout_record(llm_server, task, tmp_path / "runs", "--conversational")
    user_requests_before = [r for r in llm_server.chat_requests if not r.body.get("tools")]

    async def go() -> tuple[list[StepResult], list[Any]]:
        async with LLMClient(llm_config) as user:
            env = TextEnv(world, conversational=True, user=user)
            out = await _play_async(env, llm_config, task)
            trajectories.append(env.trajectory())
            return out

    trajectories: list[dict[str, Any]] = []
    results, opening = asyncio.run(go())
    assert [m["role"] for m in opening] == ["system", "assistant", "user"]
    assert opening[1]["content"] == GREETING
    assert comparable(trajectories[0]) == comparable(record)
    assert record["termination"] == "user_stop" and record["user_turns"] == 3
    assert results[-1].done and results[-1].reward == 1.0
    # the user's last words come back without the stop marker, and the episode ends there
    assert results[-1].messages == [{"role": "user", "content": "Thanks, that is all."}]
    said = [m["content"] for r in results for m in r.messages if m["role"] == "user"]
    assert said == ["Please go on.", "Thanks, that is all."]
    # the user model was asked the same things on both paths
    user_requests = [r for r in llm_server.chat_requests if not r.body.get("tools")]
    mine = user_requests[len(user_requests_before):]
    assert [r.messages for r in mine] == [r.messages for r in user_requests_before]


async def _play_async(env: TextEnv, config: LLMConfig, task: str
                      ) -> tuple[list[StepResult], list[Any]]:
    results: list[StepResult] = []
    async with AgentClient(config) as agent:
        messages, tools = await env.areset(task)
        opening = list(messages)
        while True:
            reply = await agent.respond(messages, tools)
            step = await env.astep(reply)
            results.append(step)
            messages = [*messages, reply, *step.messages]
            if step.done:
                return results, opening


# ------------------------------------------------------------- the step API
def test_reset_returns_the_prompt_and_strict_tools_and_step_unpacks(
        world: type[Episode]) -> None:
    env = TextEnv(world)
    messages, tools = env.reset("tidy_archive", seed=5)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert tools == world(task="tidy_archive").tools("chat")
    assert env.session.env_seed == 5
    name, arguments = solution(world, "tidy_archive")[0]
    new, reward, done, info = env.step({"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function",
         "function": {"name": name, "arguments": json.dumps(arguments)}}]})
    assert [m["role"] for m in new] == ["tool"] and new[0]["tool_call_id"] == "a"
    assert (reward, done, info["waiting"]) == (0.0, False, "agent")
    assert info["tool_steps"][0]["name"] == name and not info["tool_steps"][0]["failed"]


def test_several_calls_in_one_message_run_in_order_and_the_answer_scores(
        world: type[Episode]) -> None:
    env = TextEnv(world, record_diffs=False)
    env.reset("tidy_archive")
    calls = [{"id": f"c{i}", "type": "function",
              "function": {"name": n, "arguments": json.dumps(a)}}
             for i, (n, a) in enumerate(solution(world, "tidy_archive"))]
    step = env.step({"role": "assistant", "content": "", "tool_calls": calls})
    assert [m["tool_call_id"] for m in step.messages] == [c["id"] for c in calls]
    assert all(not s.diff for s in env.session.steps)  # diffs off
    final = env.step({"role": "assistant", "content": "All done."})
    assert final.done and final.reward == 1.0 and final.messages == []
    assert final.info["termination"] == "answered" and final.info["frame"]["ok"]
    assert {c["name"] for c in final.info["checks"]} == {
        c.name for c in world.TASKS["tidy_archive"].checks}
    assert all(c["passed"] for c in final.info["checks"])


def test_max_steps_ends_an_episode_that_never_answers(world: type[Episode]) -> None:
    env = TextEnv(world, max_steps=2)
    env.reset("tidy_archive")
    look = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "x", "type": "function",
         "function": {"name": "list_conversations", "arguments": "{}"}}]}
    assert not env.step(look).done
    last = env.step(look)
    assert last.done and last.info["termination"] == "max_steps" and last.reward == 0.0


def test_a_new_reset_starts_a_fresh_episode(world: type[Episode]) -> None:
    env = TextEnv(world)
    env.reset("tidy_archive")
    for name, arguments in solution(world, "tidy_archive"):
        env.step({"role": "assistant", "tool_calls": [
            {"id": "i", "function": {"name": name, "arguments": json.dumps(arguments)}}]})
    assert env.step({"role": "assistant", "content": "ok"}).reward == 1.0
    env.reset("tidy_archive")
    assert env.step({"role": "assistant", "content": "nothing to do"}).reward < 1.0


def test_misuse_gets_a_clear_error(world: type[Episode], llm_config: LLMConfig) -> None:
    env = TextEnv(world)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step({"role": "assistant", "content": "hi"})
    with pytest.raises(KeyError, match="has no task 'nope'"):
        env.reset("nope")
    env.reset("tidy_archive")
    with pytest.raises(TypeError, match="takes an assistant message"):
        env.step("hello")  # type: ignore[arg-type]
    env.step({"role": "assistant", "content": "bye"})
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step({"role": "assistant", "content": "again"})
    with pytest.raises(ValueError, match="needs user=LLMClient"):
        TextEnv(world, conversational=True)
    chat = TextEnv(world, conversational=True, user=LLMClient(llm_config))
    with pytest.raises(TypeError, match=r"await env\.areset"):
        chat.reset("tidy_archive")


def test_a_user_model_that_fails_ends_the_episode_with_error(
        world: type[Episode], llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    llm_server.push(Reply(status=400, error="no such model"))

    async def go() -> tuple[list[dict[str, Any]], TextEnv]:
        async with LLMClient(llm_config) as user:
            env = TextEnv(world, conversational=True, user=user)
            messages, _ = await env.areset("tidy_archive")
            return messages, env

    messages, env = asyncio.run(go())
    assert env.done and env.session.termination == "error"
    assert [m["role"] for m in messages] == ["system", "assistant"]


def test_from_path_loads_a_generated_package_without_the_compiler() -> None:
    code = (
        "import json, sys\n"
        "from worldspec.rl import TextEnv\n"
        f"env = TextEnv.from_path({str(PACKAGE)!r})\n"
        "env.reset('tidy_archive')\n"
        "step = env.step({'role': 'assistant', 'content': 'done'})\n"
        "bad = [m for m in sys.modules if m.startswith(('worldspec.compiler', "
        "'worldspec.dsl', 'worldspec.cli', 'lark', 'jinja2'))]\n"
        "print(json.dumps([bad, step.done]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [[], True]


def test_the_step_benchmark_runs_and_reports_every_way() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_rl.py"),
                           "--quick", "--json"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert {r["world"] for r in report["rows"]} == {"MobileMessaging", "OnlineShop",
                                                     "ClinicScheduling"}
    for row in report["rows"]:
        assert row["steps"] > 0 and row["bare_us"] > 0
        for way in ("step", "step_no_diffs"):
            assert row[f"{way}_us"] > 0 and row[f"{way}_overhead_us"] == pytest.approx(
                row[f"{way}_us"] - row["bare_us"], abs=0.02)


def test_the_step_api_example_in_the_serving_docs_runs(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    text = (ROOT / "docs" / "serving.md").read_text(encoding="utf-8")
    section = text.split("## A custom trainer", 1)[1]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(ROOT)
    scope: dict[str, Any] = {}
    exec(compile(block, "docs/serving.md", "exec"), scope)
    assert scope["done"] and scope["info"]["termination"] == "answered"
    assert scope["record"]["steps"][0]["name"] == "list_conversations"
    assert capsys.readouterr().out.startswith(f"{scope['reward']} answered [")
