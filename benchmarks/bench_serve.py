"""Serving benchmark: tool calls over MCP (streamable HTTP on loopback), beside a bare SDK server.

Starts ``worldspec serve`` on 127.0.0.1 with a free port and, as the reference, a bare MCP
SDK 2.x ``MCPServer`` with one ``echo`` tool served the same way (the same uvicorn, loopback
socket and transport settings), both at once; then opens 1 and then 16 clients of each with the
SDK's own client (``streamable_http_client``, ``discover``), every client calling tools as fast
as it can, for a bounded number of calls and a bounded time: on WorldSpec, each client plays
its own episode (made on the control surface, ``POST /episodes``) and alternates a read-only
tool and a writing one; on the bare server, each calls ``echo``. Each number of clients runs
``--rounds`` rounds, the bare server then WorldSpec's in each (both see the same load on a
shared machine), and each keeps its best round. Reports calls/s over all clients, the latency
of one call (median, 99th percentile) as the client sees it, the server's own CPU time per
call, and WorldSpec's calls/s as a ratio of the bare server's (above 1: WorldSpec is ahead),
beside ``Episode.call`` of the same tools in this process (what the server adds is the
protocol: JSON-RPC, HTTP, the SDK's machinery).

Only loopback is used; every loop stops by itself (``--calls`` per client, and
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

from benchmarks.processes import cpu_seconds  # noqa: E402
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


#: the bare server's one tool and the arguments every call passes it
ECHO = ("echo", {"text": "hello"})

#: how many clients play at once in each run
CLIENTS = (1, 16)


async def _worldspec_endpoint(url: str) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """An episode of its own (made by the harness on the control surface), logged in."""
    base = url.removesuffix("/mcp")
    async with httpx.AsyncClient() as control:
        created = await control.post(f"{base}/episodes", json={"task": TASK})
        created.raise_for_status()
    return base + created.json()["mcp"], [("login", LOGIN)]


async def _bare_endpoint(url: str) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    return url, []


async def _client(url: str, target: str, calls: int, deadline: float,
                  latencies: list[float]) -> int:
    done = 0
    endpoint, setup = await ENDPOINTS[target](url)
    plan = CALLS if target == "worldspec" else [ECHO]
    async with streamable_http_client(endpoint) as (read, write), \
            ClientSession(read, write) as session:
        await session.discover()
        for name, arguments in setup:
            await session.call_tool(name, arguments)
        while done < calls and time.monotonic() < deadline:
            name, arguments = plan[done % len(plan)]
            start = time.perf_counter()
            result = await session.call_tool(name, arguments)
            latencies.append(time.perf_counter() - start)
            if result.is_error:
                raise RuntimeError(f"{name} failed: {result.content}")
            done += 1
    return done


ENDPOINTS = {"worldspec": _worldspec_endpoint, "bare": _bare_endpoint}


async def mcp_calls(url: str, target: str, clients: int, calls: int,
                    seconds: float) -> dict[str, float]:
    """``clients`` SDK clients of ``target`` (worldspec or bare) calling at once."""
    latencies: list[float] = []
    start = time.perf_counter()
    deadline = time.monotonic() + seconds
    counts = await asyncio.gather(*(_client(url, target, calls, deadline, latencies)
                                    for _ in range(clients)))
    elapsed = time.perf_counter() - start
    return {"sessions": clients, "calls": sum(counts), "seconds": elapsed,
            "calls_per_s": sum(counts) / elapsed,
            "p50_ms": statistics.median(latencies) * 1e3,
            "p99_ms": _percentile(latencies, 0.99) * 1e3}


def serve_bare() -> None:
    """The reference: a bare SDK ``MCPServer`` with an ``echo`` tool, served as ``worldspec
    serve`` serves (uvicorn on a loopback socket from :func:`listening_socket`); prints its URL
    on stderr as ``worldspec serve`` does."""
    import uvicorn
    from mcp.server.mcpserver import MCPServer

    from worldspec.serve.http import listening_socket

    server = MCPServer("bare-echo")

    @server.tool()
    def echo(text: str) -> str:
        """Answers the text it was given."""
        return text

    sock = listening_socket("127.0.0.1", 0)
    app = server.streamable_http_app(host="127.0.0.1")
    print(f"bare MCPServer on http://127.0.0.1:{sock.getsockname()[1]}/mcp", file=sys.stderr,
          flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")).run(sockets=[sock])


SERVERS = {
    "worldspec": [sys.executable, "-m", "worldspec", "serve", str(PACKAGE), "--task", TASK,
                  "--transport", "http", "--port", "0", "--max-episodes", "64"],
    "bare": [sys.executable, str(Path(__file__).resolve()), "--serve-bare"],
}


def start_server(target: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        SERVERS[target], cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if " on http://" in line:
            return process, line.split(" on ", 1)[1].split(" ", 1)[0].strip()
        if not line:
            break
    process.kill()
    raise SystemExit(f"the {target} server did not start")


def _run_once(process: subprocess.Popen[str], url: str, target: str, clients: int,
              calls: int, seconds: float) -> dict[str, float]:
    """One run, with the server's own CPU time per call (the clients share the machine's
    cores, so calls/s is partly their cost; CPU per call is the server's alone)."""
    before = cpu_seconds(process.pid)
    run = asyncio.run(mcp_calls(url, target, clients, calls, seconds))
    after = cpu_seconds(process.pid)
    if before is not None and after is not None:
        # the clients' set-up (discover, a login) is counted too: a few calls each
        run["server_cpu_ms_per_call"] = (after - before) * 1e3 / run["calls"]
    return run


def measure(calls: int, seconds: float, rounds: int) -> dict[str, Any]:
    """Both servers up at once; for each number of clients, ``rounds`` rounds that run the
    bare server and then WorldSpec's, so that both see the same load on a shared machine. Each
    keeps its best round (most calls/s): other processes only ever slow a run down."""
    servers = {target: start_server(target) for target in ("bare", "worldspec")}
    try:
        best: dict[str, list[dict[str, float]]] = {target: [] for target in servers}
        for clients in CLIENTS:
            tried: dict[str, list[dict[str, float]]] = {target: [] for target in servers}
            for _ in range(rounds):
                for target, (process, url) in servers.items():
                    tried[target].append(_run_once(process, url, target, clients, calls,
                                                   seconds))
            for target, runs in tried.items():
                best[target].append({**max(runs, key=lambda r: r["calls_per_s"]),
                                     "rounds": len(runs)})
        return {"urls": {target: url for target, (_, url) in servers.items()}, "runs": best}
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait(timeout=20)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per client at most")
    parser.add_argument("--seconds", type=float, default=20.0, help="time per run at most")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds per number of clients, each server's best kept")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: 100 calls, 5 s, one round")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--serve-bare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        serve_bare()
        return 0
    if args.quick:
        args.calls, args.seconds, args.rounds = 100, 5.0, 1
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    bare = bare_calls(max(2000, args.calls))
    measured = measure(args.calls, args.seconds, args.rounds)
    reference, runs = measured["runs"]["bare"], measured["runs"]["worldspec"]
    reference_url, url = measured["urls"]["bare"], measured["urls"]["worldspec"]
    ratios = [{"sessions": ours["sessions"],
               "calls_per_s_ratio": ours["calls_per_s"] / theirs["calls_per_s"]}
              for ours, theirs in zip(runs, reference, strict=True)]
    report = {"bare_episode_call": bare, "mcp_http": runs, "url": url,
              "bare_mcpserver": reference, "bare_mcpserver_url": reference_url,
              "vs_bare_mcpserver": ratios}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"bare Episode.call                   {bare['calls_per_s']:>8,.0f} calls/s   "
          f"p50 {bare['p50_us']:7.1f} us   p99 {bare['p99_us']:7.1f} us")
    for label, rows in (("bare MCPServer echo", reference), ("worldspec serve    ", runs)):
        for run in rows:
            cpu = run.get("server_cpu_ms_per_call")
            shown = f"   server CPU {cpu:5.2f} ms/call" if cpu is not None else ""
            print(f"{label}, {run['sessions']:>2} client(s) {run['calls_per_s']:>8,.0f} "
                  f"calls/s   p50 {run['p50_ms']:7.2f} ms   p99 {run['p99_ms']:7.2f} ms   "
                  f"({run['calls']} calls in {run['seconds']:.1f} s){shown}")
    for ratio in ratios:
        print(f"worldspec / bare MCPServer, {ratio['sessions']:>2} client(s): "
              f"{ratio['calls_per_s_ratio']:.2f}x calls/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
