"""Serving benchmark: tool calls over MCP (streamable HTTP on loopback) against a bare call.

Starts ``worldspec serve`` on 127.0.0.1 with a free port, opens 1 and then 16 MCP sessions
with the SDK's own client, and has every session call a read-only tool and a writing one in
turn as fast as it can, for a bounded number of calls and a bounded time. Reports calls/s
over all sessions and the latency of one call (median, 99th percentile) as the client sees
it, beside ``Episode.call`` of the same tools in this process (what the server adds is the
protocol: JSON-RPC, HTTP, the SDK's session machinery).

Only loopback is used; every loop stops by itself (``--calls`` per session count, and
``--seconds`` per run).

    python benchmarks/bench_serve.py                  # table
    python benchmarks/bench_serve.py --json           # one JSON document on stdout
    python benchmarks/bench_serve.py --quick          # a smoke test (a few seconds)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from worldspec.services.loading import load_package  # noqa: E402

PACKAGE = ROOT / "generated" / "mobile_messaging"
TASK = "reply_to_priya"
LOGIN = {"phone": "+14155550101", "password": "sunflower42"}
#: (tool, arguments): a read and a write (the write marks a message read: repeatable)
CALLS = [("get_current_user", {}), ("mark_message_read", {"message": "MSG101"})]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bare_calls(count: int) -> dict[str, float]:
    world: Any = load_package(PACKAGE).World
    episode = world(task=TASK)
    episode.call("login", LOGIN)
    latencies = []
    for i in range(count):
        name, arguments = CALLS[i % len(CALLS)]
        start = time.perf_counter()
        result = episode.call(name, arguments)
        latencies.append(time.perf_counter() - start)
        assert not episode.failed(result), result
    return {"calls_per_s": len(latencies) / sum(latencies),
            "p50_us": statistics.median(latencies) * 1e6,
            "p99_us": _percentile(latencies, 0.99) * 1e6}


async def _session(url: str, calls: int, deadline: float, latencies: list[float]) -> int:
    done = 0
    base = url.removesuffix("/mcp")
    async with httpx.AsyncClient() as control:  # one episode per client, made by the harness
        created = await control.post(f"{base}/episodes", json={"task": TASK})
        endpoint = base + created.json()["mcp"]
    async with streamable_http_client(endpoint) as (read, write), \
            ClientSession(read, write) as session:
        await session.discover()
        await session.call_tool("login", LOGIN)
        while done < calls and time.monotonic() < deadline:
            name, arguments = CALLS[done % len(CALLS)]
            start = time.perf_counter()
            result = await session.call_tool(name, arguments)
            latencies.append(time.perf_counter() - start)
            if result.is_error:
                raise RuntimeError(f"{name} failed: {result.content}")
            done += 1
    return done


async def mcp_calls(url: str, sessions: int, calls: int, seconds: float) -> dict[str, float]:
    latencies: list[float] = []
    start = time.perf_counter()
    deadline = time.monotonic() + seconds
    counts = await asyncio.gather(*(_session(url, calls, deadline, latencies)
                                    for _ in range(sessions)))
    elapsed = time.perf_counter() - start
    return {"sessions": sessions, "calls": sum(counts), "seconds": elapsed,
            "calls_per_s": sum(counts) / elapsed,
            "p50_ms": statistics.median(latencies) * 1e3,
            "p99_ms": _percentile(latencies, 0.99) * 1e3}


def start_server() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "worldspec", "serve", str(PACKAGE), "--task", TASK,
         "--transport", "http", "--port", "0", "--max-episodes", "64"],
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if " on http://" in line:
            return process, line.split(" on ", 1)[1].split(" ", 1)[0]
        if not line:
            break
    process.kill()
    raise SystemExit("the server did not start")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per session at most")
    parser.add_argument("--seconds", type=float, default=20.0, help="time per run at most")
    parser.add_argument("--quick", action="store_true", help="a smoke test: 100 calls, 5 s")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    args = parser.parse_args()
    if args.quick:
        args.calls, args.seconds = 100, 5.0
    bare = bare_calls(max(2000, args.calls))
    process, url = start_server()
    try:
        runs = [asyncio.run(mcp_calls(url, n, args.calls, args.seconds)) for n in (1, 16)]
    finally:
        process.terminate()
        process.wait(timeout=20)
    report = {"bare_episode_call": bare, "mcp_http": runs, "url": url}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"bare Episode.call           {bare['calls_per_s']:>10,.0f} calls/s   "
          f"p50 {bare['p50_us']:7.1f} us   p99 {bare['p99_us']:7.1f} us")
    for run in runs:
        print(f"MCP over HTTP, {run['sessions']:>2} session(s) {run['calls_per_s']:>10,.0f} "
              f"calls/s   p50 {run['p50_ms']:7.2f} ms   p99 {run['p99_ms']:7.2f} ms   "
              f"({run['calls']} calls in {run['seconds']:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
