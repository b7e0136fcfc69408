"""The OpenEnv adapter, against the real ``openenv`` (0.10): a world server started on
127.0.0.1 by the test (``python -m worldspec.adapters.openenv``), driven by OpenEnv's own
clients (its WebSocket ``EnvClient``, ``GenericEnvClient`` and ``MCPToolClient`` for the tools
on ``/mcp``) and by a plain HTTP client (urllib). Rewards, verdicts and messages are those of
our step API. Skipped without openenv (run ``scripts/test_extra.sh openenv``).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from adapter_support import PACKAGE, ROOT, framework, scripted_agent, solution
from llm_server import RecordedRequest, ScriptedLLMServer
from process_support import end_process

from worldspec.rl import TextEnv
from worldspec.rollout.prompts import STOP_MARKER
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_world

framework("openenv", "openenv.core")
openenv_core = framework("openenv", "openenv.core")
adapter = framework("openenv", "worldspec.adapters.openenv")


@pytest.fixture(scope="module")
def world() -> type[Episode]:
    return load_world(PACKAGE)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(*extra: str) -> Iterator[str]:
    """A world server in a subprocess; its base URL once ``/health`` answers (30 s at most)."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT),
                                                        os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen([sys.executable, "-m", "worldspec.adapters.openenv",
                                str(PACKAGE), "--port", str(port), *extra],
                               cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=1) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    pytest.fail(f"the server did not start: {process.communicate()[1]}")
                time.sleep(0.1)
        yield url
    finally:
        end_process(process, timeout=10)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    yield from _serve()


def call(index: int, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": f"call_{index}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


async def play(url: str, task: str, plan: list[tuple[str, Any]]) -> tuple[list[Any], Any]:
    """Reset on ``task``, one call per step, then a final answer; the results and state."""
    async with adapter.WorldEnvClient(base_url=url, message_timeout_s=30) as env:
        results = [await env.reset(task=task, seed=3)]
        for index, (name, arguments) in enumerate(plan):
            results.append(await env.step(adapter.WorldAction(
                tool_calls=[call(index, name, arguments)])))
        results.append(await env.step(adapter.WorldAction(content="All done.")))
        return results, await env.state()


def ours(world: type[Episode], task: str, plan: list[tuple[str, Any]]) -> list[Any]:
    """The same episode through the in-process step API."""
    env = TextEnv(world)
    env.reset(task, seed=3)
    steps = [env.step({"role": "assistant", "content": None,
                       "tool_calls": [call(i, n, a)]}) for i, (n, a) in enumerate(plan)]
    return [*steps, env.step({"role": "assistant", "content": "All done."})]


@pytest.mark.parametrize("damage", [False, True])
def test_a_world_served_over_openenv_steps_and_scores_as_the_step_api(
        world: type[Episode], server: str, damage: bool) -> None:
    plan = solution(world, "tidy_archive")
    if damage:
        plan.append(("set_favorite_contact", {"contact": "CT101", "favorite": False}))
    results, state = asyncio.run(play(server, "tidy_archive", plan))
    opening = results[0].observation
    assert [m["role"] for m in opening.messages] == ["system", "user"]
    assert [t["function"]["name"] for t in opening.tools] == list(world.TOOLS)
    assert opening.info["env_seed"] == 3 and not results[0].done
    expected = ours(world, "tidy_archive", plan)
    for got, want in zip(results[1:], expected, strict=True):
        assert got.observation.messages == want.messages
        assert (got.reward, got.done) == (want.reward, want.done)
        assert got.observation.info == want.info
    final = results[-1]
    assert final.done and final.reward == (0.0 if damage else 1.0)
    assert final.observation.info["frame"]["ok"] is (not damage)
    assert state.task == "tidy_archive" and state.step_count == len(plan) + 1
    assert state.termination == "answered" and state.reward == final.reward


def test_sessions_are_isolated_and_a_bad_reset_is_an_error_not_a_crash(
        world: type[Episode], server: str) -> None:
    async def go() -> tuple[Any, Any, str]:
        async with adapter.WorldEnvClient(base_url=server) as a, \
                adapter.WorldEnvClient(base_url=server) as b:
            await a.reset(task="tidy_archive")
            await b.reset(task="tidy_archive")
            for index, (name, arguments) in enumerate(solution(world, "tidy_archive")):
                await a.step(adapter.WorldAction(tool_calls=[call(index, name, arguments)]))
            done_a = await a.step(adapter.WorldAction(content="ok"))
            done_b = await b.step(adapter.WorldAction(content="ok"))
            try:
                await b.reset(task="no_such_task")
                error = ""
            except Exception as exc:  # the client raises the server's error message
                error = str(exc)
            return done_a, done_b, error

    done_a, done_b, error = asyncio.run(go())
    assert done_a.reward == 1.0 and done_b.reward < 1.0
    assert "no_such_task" in error
    with urllib.request.urlopen(f"{server}/schema", timeout=5) as answer:
        schema = json.loads(answer.read())
    assert "tool_calls" in schema["action"]["properties"]


def test_a_conversational_world_asks_the_simulated_user(
        world: type[Episode], llm_server: ScriptedLLMServer) -> None:
    text = world.TASKS["tidy_archive"].instruction.strip()

    def user(request: RecordedRequest) -> str:
        heard = sum(1 for m in request.messages if m.get("role") == "user")
        return text if heard == 1 else f"Thanks!\n{STOP_MARKER}"

    llm_server.responder = scripted_agent(world, lambda t: [], user=user)
    for url in _serve("--conversational", "--user-model", "user-model", "--user-base-url",
                      llm_server.url):
        async def go(url: str = url) -> list[Any]:
            async with adapter.WorldEnvClient(base_url=url) as env:
                first = await env.reset(task="tidy_archive")
                calls = [call(i, n, a) for i, (n, a) in
                         enumerate(solution(world, "tidy_archive"))]
                middle = await env.step(adapter.WorldAction(tool_calls=calls))
                last = await env.step(adapter.WorldAction(content="All set."))
                return [first, middle, last]

        first, middle, last = asyncio.run(go())
    assert [m["role"] for m in first.observation.messages] == ["system", "assistant", "user"]
    assert first.observation.messages[-1]["content"] == text
    assert [m["role"] for m in middle.observation.messages] == ["tool"] * 5
    assert last.done and last.reward == 1.0
    assert last.observation.info["termination"] == "user_stop"
    assert last.observation.messages == [{"role": "user", "content": "Thanks!"}]


def test_serving_a_generated_package_never_loads_the_compiler() -> None:
    code = ("import sys\n"
            "from worldspec.adapters.openenv import create_world_app\n"
            "from worldspec.services.loading import load_world\n"
            f"create_world_app(load_world({str(PACKAGE)!r}))\n"
            "print([m for m in sys.modules if m.startswith(('worldspec.compiler', "
            "'worldspec.dsl', 'lark'))])\n")  # jinja2 is OpenEnv's own (its web UI)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("conversational", [False, True], ids=["one_shot", "conversational"])
def test_the_opening_is_the_one_every_front_end_builds(
        world: type[Episode], llm_server: ScriptedLLMServer, tmp_path: Any,
        conversational: bool) -> None:
    """Served with ``--policy`` and ``--system-prompt``, a reset opens with the step API's
    messages for the same options, which are those of the shared builder."""
    from worldspec.services.prompts import opening_messages

    policy, template = "Archive only what the user names.\n", "$world: $setting\n$policy_text"
    (tmp_path / "policy.md").write_text(policy, encoding="utf-8")
    (tmp_path / "template.txt").write_text(template, encoding="utf-8")
    text = world.TASKS["tidy_archive"].instruction.strip()
    llm_server.responder = lambda request: text
    extra = ["--policy", str(tmp_path / "policy.md"),
             "--system-prompt", str(tmp_path / "template.txt")]
    if conversational:
        extra += ["--conversational", "--user-model", "user-model", "--user-base-url",
                  llm_server.url]
    for url in _serve(*extra):
        async def go(url: str = url) -> Any:
            async with adapter.WorldEnvClient(base_url=url) as env:
                return await env.reset(task="tidy_archive")

        opened = asyncio.run(go()).observation.messages
    expected = opening_messages(world, "tidy_archive", conversational=conversational,
                                policy=policy, template=template)
    assert opened[:2] == expected
    assert policy in opened[0]["content"] and world.POLICY.strip() not in opened[0]["content"]
    if not conversational:
        assert TextEnv(world, policy=policy, system_template=template).reset(
            "tidy_archive")[0] == opened


# ----------------------------------------------------------------- plain HTTP
def post(url: str, body: Any) -> tuple[int, Any]:
    """A JSON POST with urllib: the status and the decoded answer (errors included)."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())


@pytest.mark.parametrize("damage", [False, True])
def test_plain_http_resets_then_steps_one_episode_to_its_score(
        world: type[Episode], damage: bool) -> None:
    """``POST /reset`` then ``POST /step``s reach one episode (OpenEnv's own routes build a
    fresh environment per request); ``GET /state`` has the episode id and the reward."""
    plan = solution(world, "tidy_archive")
    if damage:
        plan.append(("set_favorite_contact", {"contact": "CT101", "favorite": False}))
    for url in _serve():
        status, early = post(f"{url}/step", {"action": {"content": "hi"}})
        assert status == 409 and "POST /reset first" in early["detail"]
        status, opened = post(f"{url}/reset", {"task": "tidy_archive", "seed": 3,
                                               "episode_id": "ep-7"})
        assert status == 200 and not opened["done"]
        assert [m["role"] for m in opened["observation"]["messages"]] == ["system", "user"]
        answers = [post(f"{url}/step", {"action": {"tool_calls": [call(i, n, a)]}})
                   for i, (n, a) in enumerate(plan)]
        answers.append(post(f"{url}/step", {"action": {"content": "All done."}}))
        state = get(f"{url}/state")
        status, late = post(f"{url}/step", {"action": {"content": "again"}})
        status_bad, bad = post(f"{url}/reset", {"task": "no_such_task"})
    assert all(status == 200 for status, _ in answers)
    expected = ours(world, "tidy_archive", plan)
    for (_, got), want in zip(answers, expected, strict=True):
        assert got["observation"]["messages"] == want.messages
        assert (got["reward"], got["done"]) == (want.reward, want.done)
    assert answers[-1][1]["reward"] == (0.0 if damage else 1.0)
    assert state["episode_id"] == "ep-7" and state["task"] == "tidy_archive"
    assert state["step_count"] == len(plan) + 1 and state["reward"] == answers[-1][1]["reward"]
    assert status == 409 and "episode is over" in late["detail"]
    assert status_bad == 400 and "no_such_task" in bad["detail"]


# ------------------------------------------------------------------- the MCP tools
def test_the_worlds_tools_are_on_openenvs_mcp_path(world: type[Episode], server: str) -> None:
    """``tools/list`` over plain HTTP lists the world's tools with their schemas, as
    OpenEnv's MCP environments list theirs."""
    status, answer = post(f"{server}/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                                            "params": {}})
    assert status == 200, answer
    listed = {tool["name"]: tool for tool in answer["result"]["tools"]}
    assert list(listed) == list(world.TOOLS)
    chat = {d["function"]["name"]: d["function"] for d in world().tools("chat")}
    for name, tool in listed.items():
        assert tool["inputSchema"] == chat[name]["parameters"]
        assert tool["description"] == chat[name]["description"]
    status, answer = post(f"{server}/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                            "params": {"name": "list_contacts",
                                                       "arguments": {}}})
    assert "no episode yet" in answer["error"]["message"]  # no session: says how


@pytest.mark.parametrize("damage", [False, True])
def test_openenvs_mcp_client_plays_an_episode_by_tool_calls(
        world: type[Episode], server: str, damage: bool) -> None:
    """OpenEnv's ``MCPToolClient``: reset over ``/ws`` and tools over ``/mcp`` on one
    session; a failing call raises the world's error; the final answer scores the calls."""
    plan = solution(world, "tidy_archive")
    if damage:
        plan.append(("set_favorite_contact", {"contact": "CT101", "favorite": False}))

    async def go() -> tuple[list[Any], str, Any, Any]:
        async with openenv_core.MCPToolClient(base_url=server, message_timeout_s=30) as env:
            await env.reset(task="tidy_archive", seed=3)
            names = [tool.name for tool in await env.list_tools()]
            results = [await env.call_tool(name, **arguments) for name, arguments in plan]
            try:
                await env.call_tool("set_favorite_contact", contact="CT999", favorite=True)
                failure = ""
            except RuntimeError as exc:
                failure = str(exc)
            final = await env.step(adapter.WorldAction(content="All done."))
            return [names, *results], failure, final, await env.state()

    results, failure, final, state = asyncio.run(go())
    assert results[0] == list(world.TOOLS)
    episode = world(task="tidy_archive", seed=3)
    for (name, arguments), got in zip(plan, results[1:], strict=True):
        expected = episode.call(name, arguments)  # the world's result, as ``call`` gives it
        assert got == expected and not episode.failed(expected)
    assert "CT999" in failure and "set_favorite_contact" in failure
    assert final.done and final.reward == (0.0 if damage else 1.0)
    assert state.episode_id and state.step_count == len(plan) + 2


def test_state_carries_the_episode_id_given_or_made(server: str) -> None:
    async def go() -> tuple[Any, Any, Any]:
        async with adapter.WorldEnvClient(base_url=server) as env:
            await env.reset(task="tidy_archive", episode_id="given-1")
            given = await env.state()
            opened = await env.reset(task="tidy_archive")
            return given, await env.state(), opened

    given, made, opened = asyncio.run(go())
    assert given.episode_id == "given-1"
    assert made.episode_id and made.episode_id != "given-1"
    assert opened.observation.info["episode_id"] == made.episode_id


def test_openenvs_generic_client_needs_no_worldspec_classes(server: str) -> None:
    """``GenericEnvClient`` (dict actions) drives the world as any OpenEnv environment."""
    async def go() -> tuple[Any, Any, Any]:
        async with openenv_core.GenericEnvClient(base_url=server) as env:
            opened = await env.reset(task="tidy_archive")
            stepped = await env.step({"content": "Nothing to do."})
            return opened, stepped, await env.state()

    opened, stepped, state = asyncio.run(go())
    assert opened.observation["messages"][0]["role"] == "system"
    assert stepped.done and stepped.reward == 0.0
    assert state["episode_id"] and state["termination"] == "answered"


def test_a_world_with_a_tool_openenv_reserves_is_refused_clearly(
        world: type[Episode]) -> None:
    clashing = type("Clashing", (world,), {"TOOLS": {**world.TOOLS,
                                                     "reset": next(iter(world.TOOLS.values()))}})
    with pytest.raises(ValueError, match="reserves"):
        adapter.create_world_app(clashing)
    assert adapter.create_world_app(world) is not None
