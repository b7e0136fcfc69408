"""``worldspec serve``: a world as an MCP server, driven by the MCP SDK's own client.

Over stdio (one process, one session) and over streamable HTTP on 127.0.0.1 (one episode
per ``Mcp-Session-Id``): tools listed with the world's strict schemas, calls answered in the
world's result convention with failures as tool errors, protocol errors for unknown tools
and resources, the harness's resources (episode, score, state, tasks, reset), sessions that
do not see each other, bounded sessions, idle expiry and oversized bodies. Every server is
a subprocess started by the test and stopped by it, bounded in time.
"""

from __future__ import annotations

import asyncio
import json
import os
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
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl

from worldspec.services.loading import load_package

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "generated" / "mobile_messaging"
TASK = "reply_to_priya"
LOGIN = {"phone": "+14155550101", "password": "sunflower42"}
World: Any = load_package(PACKAGE).World


def _run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout=90))


async def _read(session: ClientSession, uri: str) -> Any:
    result = await session.read_resource(AnyUrl(uri))
    text = getattr(result.contents[0], "text", None)
    assert isinstance(text, str)
    return json.loads(text)


def _text(result: Any) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    text: str = result.content[0].text
    return text


@asynccontextmanager
async def _stdio(*extra: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "worldspec", "serve", str(PACKAGE), "--task", TASK, *extra],
        cwd=str(ROOT))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session


# ------------------------------------------------------------------------ stdio
def test_tools_are_the_worlds_tools_with_their_strict_schemas() -> None:
    async def go() -> None:
        async with _stdio() as session:
            listed = (await session.list_tools()).tools
            expected = World(task=TASK).tools("chat")
            assert [t.name for t in listed] == [d["function"]["name"] for d in expected]
            for tool, definition in zip(listed, expected, strict=True):
                assert tool.description == definition["function"]["description"]
                assert tool.inputSchema == definition["function"]["parameters"]
    _run(go())


def test_calls_answer_as_episode_call_does_and_failures_are_tool_errors() -> None:
    local = World(task=TASK)

    async def go() -> None:
        async with _stdio() as session:
            ok = await session.call_tool("login", LOGIN)
            assert ok.isError is False
            assert json.loads(_text(ok)) == local.call("login", LOGIN)
            before = (await _read(session, "worldspec://episode"))["state_hash"]
            # a precondition fails: a tool error with the world's message, nothing changed
            bad = await session.call_tool("login", {"phone": "+10000000000", "password": "x"})
            expected = local.call("login", {"phone": "+10000000000", "password": "x"})
            assert bad.isError is True and local.failed(expected)
            assert json.loads(_text(bad)) == expected
            # arguments that do not fit: the world's dispatcher answers, nothing changed
            mistyped = await session.call_tool("login", {"phone": 5, "password": []})
            extra = await session.call_tool("logout", {"nosuch": 1})
            assert mistyped.isError is True and extra.isError is True
            assert "error" in json.loads(_text(mistyped))
            after = await _read(session, "worldspec://episode")
            assert after["state_hash"] == before == local.state_hash()
            assert after["calls"] == 4
    _run(go())


def test_an_unknown_tool_is_a_protocol_error_and_the_server_stays_up() -> None:
    async def go() -> None:
        async with _stdio() as session:
            with pytest.raises(McpError) as caught:
                await session.call_tool("drop_all_tables", {})
            assert caught.value.error.code == -32602
            assert "drop_all_tables" in caught.value.error.message
            with pytest.raises(McpError) as missing:
                await session.read_resource(AnyUrl("worldspec://nosuch"))
            assert missing.value.error.code == -32002
            assert (await session.call_tool("login", LOGIN)).isError is False
    _run(go())


def test_the_harness_reads_the_score_and_resets_the_episode() -> None:
    solution = World.TASKS[TASK].solution

    async def go() -> None:
        async with _stdio() as session:
            start = await _read(session, "worldspec://episode")
            assert start["task"] == TASK and start["calls"] == 0
            assert (await _read(session, "worldspec://episode/score"))["reward"] < 1.0
            for name, arguments in solution:
                assert (await session.call_tool(name, dict(arguments))).isError is False
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
                with pytest.raises(McpError) as refused:
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
            with pytest.raises(McpError):
                await _read(session, "worldspec://episode/score")  # no task to score
    _run(go())


def test_serve_refuses_bad_input_with_a_clear_message() -> None:
    cases = [
        ([str(PACKAGE), "--task", "nosuch"], "has no task 'nosuch'"),
        ([str(ROOT / "nosuch.world")], "does not exist"),
        ([str(PACKAGE), "--port", "70000", "--transport", "http"], "--port"),
        ([str(PACKAGE), "--max-sessions", "0"], "--max-sessions"),
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
    process = subprocess.Popen(
        [sys.executable, "-m", "worldspec", "serve", str(PACKAGE), "--task", TASK,
         "--transport", "http", "--port", "0", *extra],
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 60
        line = ""
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            if " on http://" in line or not line:
                break
        assert " on http://" in line, f"server did not start: {line!r}"
        yield line.split(" on ", 1)[1].split(" ", 1)[0]
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


_ACCEPT = {"Accept": "application/json, text/event-stream"}
_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}


@asynccontextmanager
async def _http_session(url: str) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write, _), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


def test_http_sessions_each_have_their_own_episode() -> None:
    with _http_server() as url:
        assert url.endswith("/mcp")

        async def go() -> None:
            async with _http_session(url) as a, _http_session(url) as b:
                initial = (await _read(b, "worldspec://episode"))["state_hash"]
                results = await asyncio.gather(a.call_tool("login", LOGIN),
                                               b.list_tools())
                assert results[0].isError is False
                a_info, b_info = await asyncio.gather(_read(a, "worldspec://episode"),
                                                      _read(b, "worldspec://episode"))
                assert a_info["calls"] == 1 and b_info["calls"] == 0
                assert a_info["state_hash"] != initial == b_info["state_hash"]
                for name, arguments in World.TASKS[TASK].solution[1:]:
                    assert (await a.call_tool(name, dict(arguments))).isError is False
                assert (await _read(a, "worldspec://episode/score"))["reward"] == 1.0
                assert (await _read(b, "worldspec://episode/score"))["reward"] < 1.0
        _run(go())


def test_http_bounds_sessions_bodies_and_idle_time() -> None:
    with _http_server("--max-sessions", "2", "--max-body", "4096",
                      "--idle-timeout", "1.5") as url:

        async def go() -> None:
            async with _http_session(url) as a:
                await a.call_tool("login", LOGIN)
                before = (await _read(a, "worldspec://episode"))["state_hash"]
                # an oversized body is refused before it is parsed
                async with httpx.AsyncClient() as raw:
                    big = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "login", "arguments": {"phone": "9" * 10_000}}}
                    answer = await raw.post(url, json=big, headers=_ACCEPT)
                    assert answer.status_code == 413
                assert (await _read(a, "worldspec://episode"))["state_hash"] == before
                # two sessions open: a third is refused, the first two are unaffected
                async with _http_session(url) as b, httpx.AsyncClient() as raw:
                    third = await raw.post(url, json=_INITIALIZE, headers=_ACCEPT)
                    assert third.status_code == 503
                    assert (await b.list_tools()).tools
                assert (await _read(a, "worldspec://episode"))["calls"] == 1
            # an idle session is closed: its id answers 404
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
        answer = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                            headers={"Host": "evil.example",
                                     "Accept": "application/json, text/event-stream"},
                            timeout=30)
        assert answer.status_code in (400, 403, 421)


def test_a_serving_process_loads_no_compiler() -> None:
    code = (
        "import json, sys\n"
        "from worldspec.services.loading import load_world\n"
        "from worldspec.serve.mcp_server import build_server\n"
        "from worldspec.serve.http import http_app\n"
        f"http_app(build_server(load_world({str(PACKAGE)!r}), task={TASK!r}))\n"
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
                await session.initialize()
                await session.call_tool("get_order", {"order": "W1"})
                silent = await _read(session, "worldspec://episode/score")
                said = quote(json.dumps(["Let me see.", "It is $1,234.56 in total."]))
                told = await _read(session, f"worldspec://episode/score?replies={said}")
                assert (silent["reward"], told["reward"]) == (0.0, 1.0)
                for query in ("replies=%5B1%5D", "replies=nope", "colour=red"):
                    with pytest.raises(McpError) as refused:
                        await _read(session, f"worldspec://episode/score?{query}")
                    assert refused.value.error.code == -32602
    _run(go())
