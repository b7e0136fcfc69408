"""``worldspec serve`` over streamable HTTP runs tool calls off the event loop.

A long call (one the per-call budget allows: a few seconds of ``strptime``) in one episode
must not stall another episode, whose call answers while the long one still runs; within one
episode calls stay one at a time (the episode is never used by two threads). Episodes are
created through the control surface (``POST /episodes``); the clients speak the 2026-07-28
revision (``discover``). The server is a
subprocess driven by the MCP SDK's own client, bounded in time; the assertions are about
order (which answer came first), not about durations.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

if os.environ.get("CI") == "true":
    import mcp  # noqa: F401  (CI installs the serve extra: these tests must run there)
else:
    pytest.importorskip("mcp")

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from serve_support import served_over_http

SLOW = """\
world Slow "One slow tool and one fast one."

config { results: envscaler }

state { calls: int = 0 }

tool spin(rounds: int) -> int "Parse a date again and again: slow, but within the budget." {
  let i = 0
  while i < rounds {
    let d = strptime("2024-03-05 10:20", "%Y-%m-%d %H:%M")
    i += 1
  }
  calls += 1
  return i
}

tool ping() -> int "Count a call: how many this episode has made." {
  calls += 1
  return calls
}
"""
#: rounds of the slow call: seconds of work (about 10 microseconds a round)
ROUNDS = 300_000


def _http_server(spec: Path, cache: Path) -> AbstractContextManager[str]:
    return served_over_http([str(spec)], env={"WORLDSPEC_CACHE": str(cache)}, start_timeout=120)


@asynccontextmanager
async def _session(url: str) -> AsyncIterator[ClientSession]:
    """An SDK client on a new episode's endpoint."""
    base = url.removesuffix("/mcp")
    async with httpx.AsyncClient() as control:
        created = await control.post(f"{base}/episodes", json={})
        assert created.status_code == 201, created.text
    async with streamable_http_client(base + created.json()["mcp"]) as (read, write), \
            ClientSession(read, write) as session:
        await session.discover()
        yield session


def _run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout=120))


def _data(result: Any) -> Any:
    import json

    assert result.is_error is False, result
    return json.loads(result.content[0].text)["data"]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("slow")
    spec = root / "slow.world"
    spec.write_text(SLOW, encoding="utf-8")
    with _http_server(spec, root / "cache") as served:
        yield served


def test_a_long_call_in_one_episode_does_not_stall_another(url: str) -> None:
    """Episode b's quick call answers while episode a's long call is still running."""

    async def go() -> list[str]:
        finished: list[str] = []
        async with _session(url) as a, _session(url) as b:
            async def slow() -> None:
                assert _data(await a.call_tool("spin", {"rounds": ROUNDS})) == ROUNDS
                finished.append("slow")

            async def quick() -> None:
                await asyncio.sleep(0.5)  # the slow call is under way by now
                assert _data(await b.call_tool("ping", {})) == 1
                finished.append("quick")

            await asyncio.gather(slow(), quick())
        return finished

    assert _run(go()) == ["quick", "slow"]


def test_one_episode_runs_its_calls_one_at_a_time(url: str) -> None:
    """Two calls sent at once to one episode: the second runs after the first has ended
    (it counts the first's call, which counts itself only once its loop is done), never
    beside it on the same episode. Each call is its own HTTP request (2026-07-28), so the
    answers may arrive in either order: what shows the order is what the quick call saw."""

    async def go() -> list[tuple[str, Any]]:
        finished: list[tuple[str, Any]] = []
        async with _session(url) as a:
            async def slow() -> None:
                finished.append(("slow", _data(await a.call_tool("spin", {"rounds": ROUNDS}))))

            async def quick() -> None:
                await asyncio.sleep(0.5)
                finished.append(("quick", _data(await a.call_tool("ping", {}))))

            await asyncio.gather(slow(), quick())
        return finished

    assert sorted(_run(go())) == [("quick", 2), ("slow", ROUNDS)]
