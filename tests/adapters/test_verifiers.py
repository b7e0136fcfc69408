"""The verifiers adapter, against the real ``verifiers`` (0.4, the v1 stack) and the scripted
local model: its rewards are our own scores, played through verifiers' own rollout machinery
(``Env.serving``, ``run_slot``, the interception server that records the trace) and through
its ``vf-eval`` command, run as docs/serving.md writes it (with the ``messaging-world``
environment package of ``environments/`` installed). Skipped without verifiers (run
``scripts/test_extra.sh verifiers``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from adapter_support import PACKAGE, ROOT, framework, scripted_agent, solution
from llm_server import RecordedRequest, ScriptedLLMServer

from worldspec.rl import TextEnv
from worldspec.rollout.prompts import STOP_MARKER
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_world

vf = framework("verifiers", "verifiers.v1")
adapter = framework("verifiers", "worldspec.adapters.verifiers")


@pytest.fixture(scope="module")
def world() -> type[Episode]:
    return load_world(PACKAGE)


PLANS = {
    "perfect": lambda w, t: solution(w, t),
    # the last call is missing: one check of three fails
    "partial": lambda w, t: solution(w, t)[:-1],
    # the work is done, then a contact outside the frame is changed: zero
    "sloppy": lambda w, t: [*solution(w, t),
                            ("set_favorite_contact", {"contact": "CT101", "favorite": False})],
}


def evaluate(env: Any, url: str) -> list[Any]:
    """Every task of the env's taskset once, as ``vf-eval`` runs them in-process."""
    ctx = vf.ModelContext(model="scripted-model", client=vf.EvalClientConfig(
        base_url=url, api_key_var="WORLDSPEC_TEST_KEY"))

    async def go() -> list[Any]:
        episodes = []
        async with env.serving():
            for task in env.taskset:
                (slot,) = env.slots(task, 1)
                episodes.append(await env.run_slot(slot, ctx))
        return episodes

    return asyncio.run(go())


def our_reward(world: type[Episode], task: str, plan: list[tuple[str, Any]]) -> float:
    """What our own step API scores for the same calls and final answer."""
    env = TextEnv(world)
    env.reset(task)
    for index, (name, arguments) in enumerate(plan):
        env.step({"role": "assistant", "tool_calls": [{"id": f"call_{index}", "function": {
            "name": name, "arguments": json.dumps(arguments)}}]})
    return env.step({"role": "assistant",
                     "content": "Done: everything you asked for is taken care of."}).reward


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLDSPEC_TEST_KEY", "test-key")


@pytest.mark.parametrize("plan_name", ["perfect", "partial", "sloppy"])
def test_the_rubric_gives_our_own_score(world: type[Episode], llm_server: ScriptedLLMServer,
                                        plan_name: str) -> None:
    plan = PLANS[plan_name]
    llm_server.responder = scripted_agent(world, lambda t: plan(world, t))
    env = adapter.load_environment(PACKAGE, tasks=["tidy_archive"])
    (episode,) = evaluate(env, llm_server.url)
    assert episode.ok, episode.errors
    (trace,) = episode.traces
    expected = {"perfect": 1.0, "partial": pytest.approx(2 / 3), "sloppy": 0.0}[plan_name]
    assert trace.reward == expected == our_reward(world, "tidy_archive",
                                                   plan(world, "tidy_archive"))
    assert trace.metrics["frame_ok"] == (0.0 if plan_name == "sloppy" else 1.0)
    assert trace.metrics["check_hana_read"] == (0.0 if plan_name == "partial" else 1.0)
    played = trace.info["worldspec"]
    assert played["termination"] == "answered" and played["reward"] == trace.reward
    assert [c[0] for c in played["calls"]] == [n for n, _ in plan(world, "tidy_archive")]
    # the trace verifiers recorded holds the conversation: tools offered, tool results
    roles = [m.role for m in trace.messages]
    assert roles[0] == "system" and roles.count("tool") == len(played["calls"])
    assert trace.num_turns == len(played["calls"]) + 1


def test_a_world_taskset_yields_its_tasks_and_refuses_unknown_ones(
        world: type[Episode]) -> None:
    env = adapter.load_environment(PACKAGE)
    names = [task.data.task for task in env.taskset]
    assert names == list(world.TASKS)
    first = next(iter(env.taskset))
    assert first.data.prompt == world.TASKS[names[0]].instruction.strip()
    with pytest.raises(ValueError, match="has no task nope"):
        list(adapter.load_environment(PACKAGE, tasks=["nope"]).taskset)
    with pytest.raises(ValueError, match="needs user_model"):
        list(adapter.load_environment(PACKAGE, conversational=True).taskset)


def test_a_conversational_task_asks_the_simulated_user(
        world: type[Episode], llm_server: ScriptedLLMServer) -> None:
    text = world.TASKS["tidy_archive"].instruction.strip()

    def user(request: RecordedRequest) -> str:
        heard = sum(1 for m in request.messages if m.get("role") == "user")
        return text if heard == 1 else f"Thanks!\n{STOP_MARKER}"

    llm_server.responder = scripted_agent(world, lambda t: solution(world, t), user=user)
    env = adapter.load_environment(PACKAGE, tasks=["tidy_archive"], conversational=True,
                                   user_model="user-model", user_base_url=llm_server.url)
    (episode,) = evaluate(env, llm_server.url)
    (trace,) = episode.traces
    assert trace.reward == 1.0 and trace.info["worldspec"]["termination"] == "user_stop"
    user_requests = [r for r in llm_server.chat_requests if not r.body.get("tools")]
    assert [r.body["model"] for r in user_requests] == ["user-model", "user-model"]
    assert all("CONV106" not in r.text for r in user_requests)  # no tool traffic, no state


def documented_vf_eval() -> list[str]:
    """The ``vf-eval`` command of docs/serving.md, word for word."""
    text = (ROOT / "docs" / "serving.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
                 if b.startswith("vf-eval "))
    return shlex.split(block.replace("\\\n", " "))


def test_vf_eval_runs_as_documented(world: type[Episode], llm_server: ScriptedLLMServer,
                                    tmp_path: Path) -> None:
    """The real ``vf-eval``, from the repository root as docs/serving.md writes it (no
    PYTHONPATH: the installed ``messaging-world`` environment package is found by its id), on
    two tasks that share one check of their three or four: ``check_replied`` is a metric on
    both rollouts, the checks only one of them has are in ``info``, never averaged."""
    command = documented_vf_eval()
    assert command[:2] == ["vf-eval", "messaging-world"]
    # the model and endpoint the docs name become the scripted server's
    values = {"-m": "scripted-model", "--client.base-url": llm_server.url,
              "--client.api-key-var": "WORLDSPEC_TEST_KEY"}
    for flag, value in values.items():
        command[command.index(flag) + 1] = value
    tasks = ["reply_to_priya", "hana_q4_follow_up"]
    llm_server.responder = scripted_agent(world, lambda t: PLANS["partial"](world, t))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(Path(sys.executable).with_name("vf-eval")), *command[1:],
         "--env.taskset.tasks", json.dumps(tasks), "--no-rich", "-o", str(tmp_path / "out")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    (traces,) = list((tmp_path / "out").rglob("traces.jsonl"))
    by_task = {trace["task"]["data"]["task"]: trace
               for line in traces.read_text(encoding="utf-8").splitlines()
               for trace in json.loads(line)["traces"]}
    assert set(by_task) == set(tasks)
    for task, trace in by_task.items():
        plan = PLANS["partial"](world, task)
        assert trace["rewards"]["world_reward"]["score"] == pytest.approx(
            our_reward(world, task, plan))
        verdicts = trace["info"]["worldspec"]["checks"]
        assert list(verdicts) == [c.name for c in world.TASKS[task].checks]
        check_metrics = {k for k in trace["metrics"] if k.startswith("check_")}
        assert check_metrics == {"check_replied"}
        assert trace["metrics"]["check_replied"] == (1.0 if verdicts["replied"] else 0.0)
    # the partial plan leaves out Priya's reply but not Hana's: the check's mean is 1/2,
    # over the two rollouts that have it
    assert [by_task[t]["metrics"]["check_replied"] for t in tasks] == [0.0, 1.0]
    assert not by_task["reply_to_priya"]["info"]["worldspec"]["checks"]["replied"]


def test_metrics_name_only_the_checks_every_task_has(world: type[Episode]) -> None:
    assert adapter.shared_checks(world, ["reply_to_priya", "hana_q4_follow_up"]) == ["replied"]
    assert adapter.shared_checks(world, ["reply_to_priya", "tidy_archive"]) == []
    assert adapter.shared_checks(world, ["tidy_archive"]) == [
        "archived", "hana_restored", "hana_read"]
    (task,) = list(adapter.load_environment(PACKAGE, tasks=["tidy_archive"]).taskset)
    assert task.data.metric_checks == ["archived", "hana_restored", "hana_read"]
    both = list(adapter.load_environment(
        PACKAGE, tasks=["tidy_archive", "reply_to_priya"]).taskset)
    assert [t.data.metric_checks for t in both] == [[], []]


@pytest.mark.parametrize("conversational", [False, True], ids=["one_shot", "conversational"])
def test_the_task_rows_prompt_is_what_the_harness_shows_the_model(
        world: type[Episode], llm_server: ScriptedLLMServer, tmp_path: Path,
        conversational: bool) -> None:
    """The row's ``system_prompt`` and ``prompt`` are the opening every front end builds
    (here with an external policy), and the model's first request opens with them."""
    from worldspec.adapters.verifiers_prompt import verifiers_prompt
    from worldspec.services.prompts import opening_messages

    policy = "Archive only what the user names.\n"
    (tmp_path / "policy.md").write_text(policy, encoding="utf-8")
    text = world.TASKS["tidy_archive"].instruction.strip()

    def user(request: RecordedRequest) -> str:
        heard = sum(1 for m in request.messages if m.get("role") == "user")
        return text if heard == 1 else f"Thanks!\n{STOP_MARKER}"

    llm_server.responder = scripted_agent(world, lambda t: solution(world, t), user=user)
    env = adapter.load_environment(PACKAGE, tasks=["tidy_archive"],
                                   conversational=conversational, user_model="user-model",
                                   user_base_url=llm_server.url,
                                   policy_file=tmp_path / "policy.md")
    (task,) = list(env.taskset)
    data = task.data
    rest = ([{"role": "user", "content": data.prompt}] if isinstance(data.prompt, str)
            else [{"role": m.role, "content": m.content} for m in data.prompt])
    row = [{"role": "system", "content": data.system_prompt}, *rest]
    expected = opening_messages(world, "tidy_archive", conversational=conversational,
                                policy=policy)
    assert row == expected == verifiers_prompt(world, "tidy_archive",
                                               conversational=conversational,
                                               policy=policy).messages()
    assert policy in data.system_prompt and world.POLICY.strip() not in data.system_prompt
    evaluate(env, llm_server.url)
    first = next(r for r in llm_server.chat_requests if r.body.get("tools"))
    assert first.messages[:2] == expected
