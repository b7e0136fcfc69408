"""``worldspec serve``: a world as an MCP server, driven by the MCP SDK's (2.x) own client.

Over stdio (one process, one episode) and over streamable HTTP on 127.0.0.1 (``/mcp``: one
episode; ``/episodes/{id}/mcp``: each episode the control surface creates), in the 2026-07-28
revision (``discover``) and the 2025 one (``initialize``): tools listed with the world's strict
schemas, calls answered in the world's result convention with failures as tool errors,
protocol errors for unknown tools and resources, the harness's resources (episode, score,
state, tasks, reset) and control surface (create, reset, score, state, delete), episodes that
do not see each other, bounded episodes, idle expiry, oversized bodies and quiet disconnects.
Every server is a subprocess started by the test and stopped by it, bounded in time.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

if os.environ.get("CI") == "true":
    import mcp  # noqa: F401  (CI installs the serve extra: these tests must run there)
else:
    pytest.importorskip("mcp")

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from serve_support import served_over_http

from worldspec.serve.http import listening_socket
from worldspec.services.loading import load_package
from worldspec.services.prompts import agent_system_prompt

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "generated" / "mobile_messaging"
TASK = "reply_to_priya"
LOGIN = {"phone": "+14155550101", "password": "sunflower42"}
World: Any = load_package(PACKAGE).World


def _run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout=90))


async def _read(session: ClientSession, uri: str) -> Any:
    result = await session.read_resource(uri)
    text = getattr(result.contents[0], "text", None)
    assert isinstance(text, str)
    return json.loads(text)


def _text(result: Any) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    text: str = result.content[0].text
    return text


@asynccontextmanager
async def _stdio(*extra: str, modern: bool = True) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "worldspec", "serve", str(PACKAGE), "--task", TASK, *extra],
        cwd=str(ROOT))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            if modern:
                await session.discover()
                assert session.protocol_version == "2026-07-28"
            else:
                await session.initialize()
            yield session


# ------------------------------------------------------------------------ stdio
def test_tools_are_the_worlds_tools_with_their_strict_schemas() -> None:
    async def go() -> None:
        async with _stdio() as session:
            assert session.instructions == agent_system_prompt(World, TASK, conversational=False)
            listed = (await session.list_tools()).tools
            expected = World(task=TASK).tools("chat")
            assert [t.name for t in listed] == [d["function"]["name"] for d in expected]
            for tool, definition in zip(listed, expected, strict=True):
                assert tool.description == definition["function"]["description"]
                assert tool.input_schema == definition["function"]["parameters"]
    _run(go())


def test_calls_answer_as_episode_call_does_and_failures_are_tool_errors() -> None:
    local = World(task=TASK)

    async def go() -> None:
        async with _stdio() as session:
            ok = await session.call_tool("login", LOGIN)
            assert ok.is_error is False
            assert json.loads(_text(ok)) == local.call("login", LOGIN)
            before = (await _read(session, "worldspec://episode"))["state_hash"]
            # a precondition fails: a tool error with the world's message, nothing changed
            bad = await session.call_tool("login", {"phone": "+10000000000", "password": "x"})
            expected = local.call("login", {"phone": "+10000000000", "password": "x"})
            assert bad.is_error is True and local.failed(expected)
            assert json.loads(_text(bad)) == expected
            # arguments that do not fit: the world's dispatcher answers, nothing changed
            mistyped = await session.call_tool("login", {"phone": 5, "password": []})
            extra = await session.call_tool("logout", {"nosuch": 1})
            assert mistyped.is_error is True and extra.is_error is True
            assert "error" in json.loads(_text(mistyped))
            after = await _read(session, "worldspec://episode")
            assert after["state_hash"] == before == local.state_hash()
            assert after["calls"] == 4
    _run(go())


def test_an_unknown_tool_is_a_protocol_error_and_the_server_stays_up() -> None:
    """Over the 2025 revision (``initialize``), which the SDK still speaks."""
    async def go() -> None:
        async with _stdio(modern=False) as session:
            assert session.protocol_version != "2026-07-28"
            with pytest.raises(MCPError) as caught:
                await session.call_tool("drop_all_tables", {})
            assert caught.value.error.code == -32602
            assert "drop_all_tables" in caught.value.error.message
            with pytest.raises(MCPError) as missing:
                await session.read_resource("worldspec://nosuch")
            assert missing.value.error.code == -32002
            assert (await session.call_tool("login", LOGIN)).is_error is False
    _run(go())


def test_the_harness_reads_the_score_and_resets_the_episode() -> None:
    solution = World.TASKS[TASK].solution

    async def go() -> None:
        async with _stdio() as session:
            start = await _read(session, "worldspec://episode")
            assert start["task"] == TASK and start["calls"] == 0
            assert (await _read(session, "worldspec://episode/score"))["reward"] < 1.0
            for name, arguments in solution:
                assert (await session.call_tool(name, dict(arguments))).is_error is False
            score = await _read(session, "worldspec://episode/score")
            assert score["reward"] == 1.0 and score["frame"]["ok"] is True
            assert all(c["passed"] for c in score["checks"])
            state = await _read(session, "worldspec://episode/state")
            assert state["current_user"] == "U001"
            tasks = await _read(session, "worldspec://tasks")
            assert [t["name"] for t in tasks] == list(World.TASKS)
            # reset: back to the task's initial state
            again = await _read(session, f"worldspec://episode/reset?task={TASK}")
            assert again["state_hash"] == start["state_hash"] and again["calls"] == 0
            # a bad reset is refused and leaves the episode as it was
            for query in ("task=nosuch", "seed=abc", "data=%7Bbroken", "colour=red"):
                with pytest.raises(MCPError) as refused:
                    await _read(session, f"worldspec://episode/reset?{query}")
                assert refused.value.error.code == -32602
            assert (await _read(session, "worldspec://episode"))["state_hash"] == \
                start["state_hash"]
            # given data and a seed
            data = {"users": [{"id": "U9", "name": "Ann", "phone": "+15550000009",
                               "email": None, "password": "password9", "presence": "online"}]}
            fresh = await _read(
                session, f"worldspec://episode/reset?data={quote(json.dumps(data))}&seed=5")
            assert fresh["task"] is None and fresh["seed"] == 5
            assert fresh["state_hash"] == World(data=data, seed=5).state_hash()
            with pytest.raises(MCPError):
                await _read(session, "worldspec://episode/score")  # no task to score
    _run(go())


def test_serve_refuses_bad_input_with_a_clear_message() -> None:
    cases = [
        ([str(PACKAGE), "--task", "nosuch"], "has no task 'nosuch'"),
        ([str(ROOT / "nosuch.world")], "does not exist"),
        ([str(PACKAGE), "--port", "70000", "--transport", "http"], "--port"),
        ([str(PACKAGE), "--max-episodes", "0"], "--max-episodes"),
    ]
    for args, message in cases:
        out = subprocess.run([sys.executable, "-m", "worldspec", "serve", *args],
                             capture_output=True, text=True, cwd=ROOT, timeout=60,
                             stdin=subprocess.DEVNULL)
        assert out.returncode == 2, (args, out.stderr)
        assert message in out.stderr and "Traceback" not in out.stderr


# ------------------------------------------------------------------------- http
@contextmanager
def _http_server(*extra: str) -> Iterator[str]:
    with served_over_http([str(PACKAGE), "--task", TASK, *extra]) as url:
        yield url


_ACCEPT = {"Accept": "application/json, text/event-stream"}
_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}


@asynccontextmanager
async def _http_session(url: str, *, modern: bool = True) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write), \
            ClientSession(read, write) as session:
        if modern:
            await session.discover()
        else:
            await session.initialize()
        yield session


async def _create(base: str, **body: Any) -> dict[str, Any]:
    async with httpx.AsyncClient() as control:
        created = await control.post(f"{base}/episodes", json=body)
    assert created.status_code == 201, created.text
    answer: dict[str, Any] = created.json()
    return answer


def test_http_episodes_are_handles_the_harness_controls() -> None:
    """Two episodes created through the control surface: each has its own endpoint and
    state, the agent's tools carry no episode argument, the harness scores, resets and
    deletes them; ``/mcp`` is a third, default episode; both revisions reach them."""
    with _http_server() as url:
        base = url.removesuffix("/mcp")

        async def go() -> None:
            a_made = await _create(base, task=TASK)
            b_made = await _create(base, task=TASK, seed=3)
            assert a_made["id"] != b_made["id"] and a_made["calls"] == 0
            assert a_made["mcp"] == f"/episodes/{a_made['id']}/mcp"
            assert a_made["instructions"].startswith("You are")
            async with _http_session(base + a_made["mcp"]) as a, \
                    _http_session(base + b_made["mcp"], modern=False) as b, \
                    _http_session(url) as default:
                assert a.protocol_version == "2026-07-28" != b.protocol_version
                listed = (await a.list_tools()).tools
                assert all("episode" not in t.input_schema.get("properties", {})
                           for t in listed)
                initial = (await _read(b, "worldspec://episode"))["state_hash"]
                results = await asyncio.gather(a.call_tool("login", LOGIN), b.list_tools())
                assert results[0].is_error is False
                a_info, b_info, d_info = await asyncio.gather(
                    _read(a, "worldspec://episode"), _read(b, "worldspec://episode"),
                    _read(default, "worldspec://episode"))
                assert (a_info["calls"], b_info["calls"], d_info["calls"]) == (1, 0, 0)
                assert a_info["state_hash"] != initial == b_info["state_hash"]
                for name, arguments in World.TASKS[TASK].solution[1:]:
                    assert (await a.call_tool(name, dict(arguments))).is_error is False
            async with httpx.AsyncClient(base_url=base) as control:
                a_id, b_id = a_made["id"], b_made["id"]
                assert (await control.post(f"/episodes/{a_id}/score", json={})).json()[
                    "reward"] == 1.0
                b_score = await control.post(f"/episodes/{b_id}/score", json={})
                assert b_score.json()["reward"] < 1.0
                assert (await control.get(f"/episodes/{a_id}/state")).json()[
                    "current_user"] == "U001"
                assert (await control.get(f"/episodes/{a_id}")).json()["calls"] == \
                    len(World.TASKS[TASK].solution)
                listing = (await control.get("/episodes")).json()
                assert sorted(listing["episodes"]) == sorted([a_id, b_id])
                again = await control.post(f"/episodes/{a_id}/reset", json={"task": TASK})
                assert again.json()["calls"] == 0 and again.json()["state_hash"] == initial
                tasks = (await control.get("/tasks")).json()
                assert [t["name"] for t in tasks] == list(World.TASKS)
                # refusals: clear JSON errors, the episode as it was
                for body, fragment in (({"task": "nosuch"}, "no task 'nosuch'"),
                                       ({"seed": "abc"}, "seed must be an integer"),
                                       ({"colour": "red"}, "unknown field(s): colour")):
                    refused = await control.post(f"/episodes/{a_id}/reset", json=body)
                    assert refused.status_code == 400 and fragment in refused.json()["error"]
                broken = await control.post(f"/episodes/{a_id}/reset", content=b"{broken",
                                            headers={"Content-Type": "application/json"})
                assert broken.status_code == 400 and "not valid JSON" in broken.json()["error"]
                bad_replies = await control.post(f"/episodes/{a_id}/score",
                                                 json={"replies": [1]})
                assert bad_replies.status_code == 400
                assert (await control.get(f"/episodes/{a_id}")).json()["calls"] == 0
                # the default episode is reset and scored, never deleted
                assert (await control.get("/episodes/default")).json()["mcp"] == "/mcp"
                assert (await control.delete("/episodes/default")).status_code == 400
                # deleted: its control routes and its endpoint answer 404
                assert (await control.delete(f"/episodes/{a_id}")).status_code == 204
                assert (await control.get(f"/episodes/{a_id}")).status_code == 404
                gone = await control.post(a_made["mcp"], json=_INITIALIZE, headers=_ACCEPT)
                assert gone.status_code == 404
                assert (await control.delete(f"/episodes/{a_id}")).status_code == 404
                assert (await control.get(f"/episodes/{b_id}")).json()["calls"] == 0
        _run(go())


def test_http_bounds_episodes_bodies_and_idle_time() -> None:
    with _http_server("--max-episodes", "2", "--max-body", "4096",
                      "--idle-timeout", "1.5") as url:
        base = url.removesuffix("/mcp")

        async def go() -> None:
            async with _http_session(url) as a:
                await a.call_tool("login", LOGIN)
                before = (await _read(a, "worldspec://episode"))["state_hash"]
                # an oversized body is refused before it is parsed, on MCP and control routes
                async with httpx.AsyncClient() as raw:
                    big = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "login", "arguments": {"phone": "9" * 10_000}}}
                    answer = await raw.post(url, json=big, headers=_ACCEPT)
                    assert answer.status_code == 413
                    huge = await raw.post(f"{base}/episodes", json={"data": {"x": "9" * 9000}})
                    assert huge.status_code == 413
                assert (await _read(a, "worldspec://episode"))["state_hash"] == before
                # two episodes open: a third is refused, the first two are unaffected
                first, second = await _create(base), await _create(base)
                async with httpx.AsyncClient() as raw:
                    third = await raw.post(f"{base}/episodes", json={})
                    assert third.status_code == 503 and "2 episodes" in third.json()["error"]
                async with _http_session(base + second["mcp"]) as b:
                    assert (await b.list_tools()).tools
                assert (await _read(a, "worldspec://episode"))["calls"] == 1
            # idle episodes expire: their ids answer 404 and make room again
            await asyncio.sleep(3)
            async with httpx.AsyncClient() as raw:
                for made in (first, second):
                    assert (await raw.get(f"{base}/episodes/{made['id']}")).status_code == 404
                    stale = await raw.post(base + made["mcp"], json=_INITIALIZE,
                                           headers=_ACCEPT)
                    assert stale.status_code == 404
                assert (await raw.post(f"{base}/episodes", json={})).status_code == 201
            # the default episode never expires
            async with _http_session(url) as again:
                assert (await _read(again, "worldspec://episode"))["calls"] == 1
            # an idle 2025 session is closed: its id answers 404
            async with httpx.AsyncClient() as raw:
                opened = await raw.post(url, json=_INITIALIZE, headers=_ACCEPT)
                assert opened.status_code == 200
                session_id = opened.headers["mcp-session-id"]
                await asyncio.sleep(4)
                stale = await raw.post(url, headers={**_ACCEPT, "mcp-session-id": session_id},
                                       json={"jsonrpc": "2.0", "id": 2, "method": "ping"})
                assert stale.status_code == 404
        _run(go())


def test_http_refuses_foreign_hosts_on_loopback() -> None:
    with _http_server() as url:
        base = url.removesuffix("/mcp")
        foreign = {"Host": "evil.example", "Accept": "application/json, text/event-stream"}
        answer = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                            headers=foreign, timeout=30)
        assert answer.status_code in (400, 403, 421)
        made = httpx.post(f"{base}/episodes", json={}, headers=foreign, timeout=30)
        assert made.status_code in (400, 403, 421)
        assert httpx.post(f"{base}/episodes", json={}, timeout=30).status_code == 201


def test_the_sdk_client_example_in_the_serving_docs_runs(
        capsys: pytest.CaptureFixture[str]) -> None:
    """docs/serving.md's SDK 2.x client example, against a real server on a free port."""
    text = (ROOT / "docs" / "serving.md").read_text(encoding="utf-8")
    section = text.split("### Episodes are handles the harness controls", 1)[1]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert 'BASE = "http://127.0.0.1:8000"' in block and "discover()" in block
    with _http_server() as url:
        base = url.removesuffix("/mcp")
        runnable = block.replace('"http://127.0.0.1:8000"', repr(base))
        exec(compile(runnable, "docs/serving.md", "exec"), {"__name__": "docs_example"})
        with httpx.Client(base_url=base, timeout=30) as control:
            assert control.get("/episodes").json()["episodes"] == []  # the example deleted it
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith(f"{len(World.TOOLS)} tools; ")
    assert "U001" in printed[0]  # the world's login result
    reward = float(printed[1].removeprefix("reward "))
    assert 0.0 <= reward < 1.0  # logged in, nothing sent: the task is not done


def _nodelay_of_accepted(listener: socket.socket) -> int:
    """TCP_NODELAY of a connection asyncio accepts on ``listener`` (as uvicorn does)."""
    async def go() -> int:
        seen: list[int] = []

        async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(accepted, sock=listener)
        _, writer = await asyncio.open_connection(*listener.getsockname()[:2])
        while not seen:
            await asyncio.sleep(0.01)
        writer.close()
        server.close()
        await server.wait_closed()
        return seen[0]
    result: int = _run(go())
    return result


def test_http_connections_send_without_delay() -> None:
    """The server's connections set TCP_NODELAY: a response's head and body never wait on
    the client's delayed ACK (~40 ms a call without it)."""
    assert _nodelay_of_accepted(listening_socket("127.0.0.1", 0)) != 0
    # what it was: a listener made without proto gives connections Nagle's algorithm
    plain = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    plain.bind(("127.0.0.1", 0))
    plain.listen(8)
    assert _nodelay_of_accepted(plain) == 0
    # and end to end: a keep-alive client's calls take nowhere near the delayed ACK's 40 ms
    with _http_server() as url, httpx.Client(timeout=30) as client:
        base = url.removesuffix("/mcp")
        latencies = []
        for _ in range(30):
            start = time.perf_counter()
            assert client.get(f"{base}/episodes").status_code == 200
            latencies.append(time.perf_counter() - start)
        assert sorted(latencies)[len(latencies) // 2] < 0.02, latencies


def test_http_client_disconnects_log_no_traceback() -> None:
    """Clients of both revisions that come and go, one dropping its connection mid-call:
    the server's stderr stays free of tracebacks."""
    process = subprocess.Popen(
        [sys.executable, "-m", "worldspec", "serve", str(PACKAGE), "--task", TASK,
         "--transport", "http", "--port", "0"],
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    try:
        line = process.stderr.readline()
        assert " on http://" in line, line
        url = line.split(" on ", 1)[1].split(" ", 1)[0]

        async def go() -> None:
            for modern in (True, False, True, False):
                async with _http_session(url, modern=modern) as session:
                    await session.call_tool("login", LOGIN)
            async with _http_session(url, modern=False) as session:
                call = asyncio.ensure_future(session.list_tools())
                await asyncio.sleep(0.01)
                call.cancel()
        _run(go())
        time.sleep(1)
    finally:
        process.terminate()
        _, rest = process.communicate(timeout=20)
    assert "Traceback" not in rest and "Error" not in rest, rest


def test_a_serving_process_loads_no_compiler() -> None:
    code = (
        "import json, sys\n"
        "from worldspec.services.loading import load_world\n"
        "from worldspec.serve.mcp_server import build_server\n"
        "from worldspec.serve.episodes import EpisodeTable\n"
        "from worldspec.serve.http import http_app\n"
        f"world = load_world({str(PACKAGE)!r})\n"
        f"episodes = EpisodeTable(world, {TASK!r})\n"
        f"http_app(build_server(world, task={TASK!r}, episodes=episodes), episodes)\n"
        "print(json.dumps(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout)
    banned = ("worldspec.dsl", "worldspec.compiler", "worldspec.llm_frontend", "lark",
              "jinja2", "openai")
    assert [m for m in loaded if m.split(".")[0] in banned or
            any(m.startswith(b + ".") or m == b for b in banned)] == []


def test_worldspec_serve_itself_loads_no_compiler() -> None:
    """The command a user runs: ``worldspec serve PACKAGE`` over stdio, stdin closed at once
    (the session ends), then what the process had loaded."""
    code = (
        "import json, sys\n"
        "from worldspec.cli import entry_point\n"
        f"status = entry_point(['serve', {str(PACKAGE)!r}, '--task', {TASK!r}])\n"
        "print(json.dumps([status, sorted(sys.modules)]), file=sys.stderr)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL)
    status, loaded = json.loads(out.stderr.strip().splitlines()[-1])
    assert status == 0, out.stderr
    banned = ("worldspec.dsl", "worldspec.compiler", "worldspec.cli.check",
              "worldspec.llm_frontend", "lark", "jinja2", "openai")
    assert [m for m in loaded if any(m == b or m.startswith(b + ".") for b in banned)] == []


ANSWER_SHOP = '''world Shop "A shop."

entity Order "An order." {
  key id: str
  total: float
}

state {
  orders: table Order
}

tool get_order(order: Order "The order.") -> Order "Read an order." {
  return order
}

task tell_total in Shop {
  given { orders: [{id: "W1", total: 1234.56}] }
  instruction "What does order W1 cost?"
  check told: reply.contains("$1,234.56")
  only changes nothing
  solution { get_order(order: "W1") reply "Your total is $1,234.56." }
}
'''


def test_the_harness_passes_the_agents_replies_to_answer_checks(tmp_path: Path) -> None:
    spec = tmp_path / "shop.world"
    spec.write_text(ANSWER_SHOP, encoding="utf-8")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "worldspec", "serve", str(spec), "--task", "tell_total"], cwd=str(ROOT))

    async def go() -> None:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as session:
                await session.discover()
                await session.call_tool("get_order", {"order": "W1"})
                silent = await _read(session, "worldspec://episode/score")
                said = quote(json.dumps(["Let me see.", "It is $1,234.56 in total."]))
                told = await _read(session, f"worldspec://episode/score?replies={said}")
                assert (silent["reward"], told["reward"]) == (0.0, 1.0)
                for query in ("replies=%5B1%5D", "replies=nope", "colour=red"):
                    with pytest.raises(MCPError) as refused:
                        await _read(session, f"worldspec://episode/score?{query}")
                    assert refused.value.error.code == -32602
    _run(go())
