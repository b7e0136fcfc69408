"""Scale-out: throughput of the local asyncio backend against Ray with 1 and 2 workers.

Two workloads, each run three ways with the same ``--concurrency K`` per worker:

- ``rollouts``: ``worldspec rollout``'s runner on the messaging world's tasks, the agent
  played by the scripted OpenAI-compatible server (tests/llm_server.py) answering every
  request after a fixed ``--latency`` with the next call of the task's reference solution;
- ``synth world``: ``worldspec synth world --input`` on distinct descriptions, each answered
  with a small valid world after the same latency; the driver compiles nothing, each worker
  checks, compiles and property-tests the world it was sent.

``local`` is one event loop (K items in flight); ``ray 1`` one Ray actor with K in flight,
``ray 2`` two actors with K each. ``items/s`` is over the whole batch (actors started, worlds
shipped and loaded, journal written by the driver), the best of ``--rounds``. Each way also
runs a quarter-size batch, which splits the time into a fixed ``start-up`` and a ``steady``
rate (``seconds = start-up + items / steady``); ``overhead/item`` is the steady time per item
beyond local's, at the same items in flight per worker. Starting the local Ray cluster is
timed apart (once per process, not per batch).

Run from the repository root (needs ``pip install 'worldspec[ray]'``)::

    python benchmarks/bench_scale.py               # table
    python benchmarks/bench_scale.py --json        # one JSON document on stdout
    python benchmarks/bench_scale.py --quick       # few items, one round: a smoke test
    python benchmarks/bench_scale.py --address HOST:PORT   # on an existing cluster
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for entry in (ROOT, ROOT / "tests"):  # run as a script from anywhere; the scripted server
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

from llm_scripts import fenced, world_named  # noqa: E402
from llm_server import RecordedRequest, Reply, ScriptedLLMServer  # noqa: E402

from worldspec.cli.main import main as cli_main  # noqa: E402
from worldspec.rollout.records import Journal  # noqa: E402
from worldspec.rollout.runner import (  # noqa: E402
    RolloutSettings,
    WorldSource,
    plan_rollouts,
    run_batch,
)
from worldspec.runtime.episode import Episode  # noqa: E402
from worldspec.services.executors import Executor, LocalExecutor, RayExecutor  # noqa: E402
from worldspec.services.loading import load_world  # noqa: E402
from worldspec.services.model_client import LLMConfig  # noqa: E402

PACKAGE = ROOT / "generated" / "mobile_messaging"
WAYS = ("local", "ray 1", "ray 2")


def agent_script(world: type[Episode], latency: float) -> Callable[[RecordedRequest], Reply]:
    """The reference solution, one call per message, then a final answer; each after
    ``latency`` seconds."""
    by_text = {spec.instruction.strip(): name for name, spec in world.TASKS.items()}

    def respond(request: RecordedRequest) -> Reply:
        first = next(m["content"] for m in request.messages if m.get("role") == "user")
        done = sum(1 for m in request.messages if m.get("role") == "tool")
        calls = list(world.TASKS[by_text[first.strip()]].solution)
        if done >= len(calls):
            return Reply(content="Done.", delay=latency)
        name, arguments = calls[done]
        return Reply(tool_calls=[{"id": f"c{done}", "name": name,
                                  "arguments": json.dumps(dict(arguments))}], delay=latency)

    return respond


def executor_of(way: str, concurrency: int) -> Executor:
    if way == "local":
        return LocalExecutor(concurrency=concurrency)
    return RayExecutor(workers=int(way.split()[1]), concurrency=concurrency)


def time_rollouts(way: str, server: ScriptedLLMServer, world: type[Episode], items: int,
                  concurrency: int) -> tuple[float, int]:
    """Seconds for a batch of ``items`` rollouts, and how many requests it made."""
    settings = RolloutSettings(model="scripted")
    config = LLMConfig(base_url=server.url, model="scripted", api_key="none",
                       concurrency=concurrency)
    tasks = [(0, name) for name in world.TASKS]
    samples = -(-items // len(tasks))
    jobs = plan_rollouts([WorldSource.of(world, str(PACKAGE))], tasks, samples,
                         settings)[:items]
    with tempfile.TemporaryDirectory() as folder:
        journal = Journal.open(Path(folder) / "rollouts.jsonl")
        before = len(server.chat_requests)
        started = time.perf_counter()
        summary = asyncio.run(run_batch(jobs, settings, config, None, journal=journal,
                                        executor=executor_of(way, concurrency)))
        seconds = time.perf_counter() - started
    if summary.errors:
        raise SystemExit(f"{way}: {summary.errors} rollout(s) failed")
    return seconds, len(server.chat_requests) - before


def time_synth(way: str, server: ScriptedLLMServer, items: int, concurrency: int,
               round_number: int) -> float:
    """Seconds for ``synth world --input`` on ``items`` new descriptions."""
    with tempfile.TemporaryDirectory() as folder:
        descriptions = Path(folder) / "in.jsonl"
        descriptions.write_text("".join(
            json.dumps({"description": f"A counter number {round_number * 1000 + i}."}) + "\n"
            for i in range(items)))
        argv = ["synth", "world", "--input", str(descriptions), "-o", str(Path(folder) / "out"),
                "--no-plan", "--test-examples", "10", "--test-steps", "10", "--base-url",
                server.url, "--model", "scripted", "--progress", "never",
                "--concurrency", str(concurrency)]
        if way != "local":
            argv += ["--backend", "ray", "--workers", way.split()[1]]
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            status = cli_main(argv)
        seconds = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"{way}: synth world exited {status}")
    return seconds


def measure(items: int, synth_items: int, concurrency: int, latency: float,
            rounds: int, address: str | None = None) -> dict[str, Any]:
    import ray

    started = time.perf_counter()
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 _node_ip_address="127.0.0.1",  # this machine only
                 runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    init_seconds = time.perf_counter() - started
    world = load_world(PACKAGE)
    rows: list[dict[str, Any]] = []
    small = max(1, items // 4)
    small_synth = max(1, synth_items // 4)
    try:
        with ScriptedLLMServer() as server:
            server.responder = agent_script(world, latency)
            for way in WAYS:
                few = min(time_rollouts(way, server, world, small, concurrency)[0]
                          for _ in range(rounds))
                best, requests = min(time_rollouts(way, server, world, items, concurrency)
                                     for _ in range(rounds))
                rows.append(_row("rollouts", way, small, few, items, best) |
                            {"requests": requests})
            server.responder = lambda r: Reply(content=fenced(world_named(r.last_user)),
                                               delay=latency)
            for way in WAYS:
                few = min(time_synth(way, server, small_synth, concurrency, 100 + n)
                          for n in range(rounds))
                best = min(time_synth(way, server, synth_items, concurrency, n)
                           for n in range(rounds))
                rows.append(_row("synth world", way, small_synth, few, synth_items, best))
    finally:
        ray.shutdown()
    for workload in ("rollouts", "synth world"):
        by_way = {r["way"]: r for r in rows if r["workload"] == workload}
        local = by_way["local"]
        for row in by_way.values():
            row["speedup"] = round(local["seconds"] / row["seconds"], 2)
            rates = (row["steady_items_per_s"], local["steady_items_per_s"])
            row["overhead_ms_per_item"] = None if None in rates else \
                round((1 / rates[0] - 1 / rates[1]) * 1000, 1)
    return {"concurrency": concurrency, "latency_s": latency, "rounds": rounds,
            "ray_init_s": round(init_seconds, 2), "rows": rows}


def _row(workload: str, way: str, small: int, few: float, items: int,
         best: float) -> dict[str, Any]:
    """A batch's figures: the whole batch, and its fixed and per-item parts, from two sizes
    (``seconds = startup + items / steady rate``)."""
    row: dict[str, Any] = {"workload": workload, "way": way, "items": items,
                           "seconds": round(best, 3), "items_per_s": round(items / best, 2),
                           "startup_s": None, "steady_items_per_s": None}
    if best > few:  # else the noise of a loaded machine hides the per-item part
        per_item = (best - few) / max(1, items - small)
        row["startup_s"] = round(max(0.0, few - small * per_item), 2)
        row["steady_items_per_s"] = round(1 / per_item, 2)
    return row


def render(report: dict[str, Any]) -> str:
    lines = [f"concurrency {report['concurrency']} per worker, model latency "
             f"{report['latency_s'] * 1000:.0f} ms, best of {report['rounds']}; local Ray "
             f"cluster started in {report['ray_init_s']:.1f} s (not counted)",
             f"{'workload':<12} {'way':<6} {'items':>5} {'seconds':>8} {'items/s':>8} "
             f"{'vs local':>8} {'start-up':>9} {'steady/s':>9} {'overhead/item':>14}"]
    for row in report["rows"]:
        startup = "-" if row["startup_s"] is None else f"{row['startup_s']:.2f}s"
        steady = "-" if row["steady_items_per_s"] is None else \
            f"{row['steady_items_per_s']:.2f}"
        overhead = "-" if row["overhead_ms_per_item"] is None else \
            f"{row['overhead_ms_per_item']:.1f} ms"
        lines.append(f"{row['workload']:<12} {row['way']:<6} {row['items']:>5} "
                     f"{row['seconds']:>8.2f} {row['items_per_s']:>8.2f} "
                     f"{row['speedup']:>7.2f}x {startup:>9} {steady:>9} {overhead:>14}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--quick", action="store_true", help="few items, one round")
    parser.add_argument("--concurrency", type=int, default=4, help="items in flight per worker")
    parser.add_argument("--latency", type=float, default=0.05,
                        help="seconds the scripted model takes per request (default 0.05)")
    parser.add_argument("--address", help="join this Ray cluster instead of starting one")
    args = parser.parse_args(argv)
    try:
        import ray  # noqa: F401
    except ImportError:
        print("bench_scale needs Ray: pip install 'worldspec[ray]'", file=sys.stderr)
        return 2
    if args.quick:
        report = measure(4, 2, args.concurrency, args.latency, 1, args.address)
    else:
        report = measure(48, 12, args.concurrency, args.latency, 2, args.address)
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
