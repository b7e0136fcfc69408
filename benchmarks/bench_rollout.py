"""Rollout overhead: what the runner adds per step on top of the environment itself.

Model time is excluded: the "model" is an in-process script that answers at once with the
next call of the task's reference solution (one call per assistant message, then a final
answer), so what is timed is the environment and the runner's bookkeeping. Four ways to play
the same solutions, per world (the generated packages of the examples):

1. ``bare``: ``episode.call(name, arguments_json)`` for each call, after a reset: the floor;
   ``bare+score`` adds the ``episode.score()`` any reward needs (checks, frame diff), which
   is most of what a session adds on worlds whose tools are cheap.
2. ``session``: a :class:`~worldspec.rollout.session.Session` (start, one ``act`` per call,
   the final answer, which scores): tool messages, raw results, a state hash and the state
   diff of every state-changing call, and the score.
3. ``session, no diffs``: the same without per-step diffs (what a trainer's step API may do).
4. ``runner``: :func:`~worldspec.rollout.runner.run_rollout` with the scripted model (the
   record built, timings and usage kept), without and then with the record appended to an
   fsynced journal: everything ``worldspec rollout`` does but HTTP.

Figures are microseconds per step (one tool call), the median over rounds, and the ratio to
``bare``. The journal's column adds one ``fsync`` per rollout, which depends on the disk.

Run from the repository root::

    python benchmarks/bench_rollout.py            # table
    python benchmarks/bench_rollout.py --json     # one JSON document on stdout
    python benchmarks/bench_rollout.py --quick    # a few rounds: a smoke test
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from worldspec.rollout.records import Journal  # noqa: E402
from worldspec.rollout.runner import (  # noqa: E402
    RolloutSettings,
    WorldSource,
    plan_rollouts,
    run_rollout,
)
from worldspec.rollout.session import Session  # noqa: E402
from worldspec.runtime.episode import Episode  # noqa: E402
from worldspec.services.loading import load_world  # noqa: E402
from worldspec.services.model_client import Usage  # noqa: E402

WORLDS = ("mobile_messaging", "online_shop", "clinic_scheduling")


def _solutions(world: type[Episode]) -> dict[str, list[tuple[str, str]]]:
    return {name: [(n, json.dumps(dict(a))) for n, a in spec.solution]
            for name, spec in world.TASKS.items() if spec.solution}


class ScriptedModel:
    """A zero-latency agent: the next call of the solution, then a final answer."""

    def __init__(self, world: type[Episode]) -> None:
        self.by_text = {spec.instruction.strip(): name for name, spec in world.TASKS.items()}
        self.solutions = _solutions(world)

    async def respond(self, messages: list[dict[str, Any]], tools: Any, *, api: str = "chat",
                      usage: Usage | None = None, seed: int | None = None) -> dict[str, Any]:
        task = self.by_text[messages[1]["content"]]
        done = sum(1 for m in messages if m["role"] == "tool")
        calls = self.solutions[task]
        if done >= len(calls):
            return {"role": "assistant", "content": "Done."}
        name, arguments = calls[done]
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{done}", "type": "function",
             "function": {"name": name, "arguments": arguments}}]}


def bare(world: type[Episode], solutions: dict[str, list[tuple[str, str]]], *,
         score: bool = False) -> int:
    steps = 0
    for task, calls in solutions.items():
        episode = world(task=task)
        for name, arguments in calls:
            episode.call(name, arguments)
        if score:
            episode.score()
        steps += len(calls)
    return steps


def session(world: type[Episode], solutions: dict[str, list[tuple[str, str]]], *,
            diffs: bool = True) -> int:
    steps = 0
    for task, calls in solutions.items():
        s = Session(world, task, record_diffs=diffs)
        s.start()
        for index, (name, arguments) in enumerate(calls):
            s.act({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{index}", "type": "function",
                 "function": {"name": name, "arguments": arguments}}]})
        s.act({"role": "assistant", "content": "Done."})
        steps += len(calls)
    return steps


def runner(world: type[Episode], solutions: dict[str, list[tuple[str, str]]],
           folder: Path | None, source: WorldSource) -> int:
    settings = RolloutSettings(model="scripted")
    jobs = plan_rollouts([source], [(0, t) for t in solutions], 1, settings)
    model: Any = ScriptedModel(world)
    journal = Journal(folder / "journal.jsonl") if folder is not None else None

    async def go() -> int:
        steps = 0
        for job in jobs:
            record = await run_rollout(job, settings, model)
            assert record["reward"] == 1.0, (job.task, record["checks"])
            if journal is not None:
                journal.append(record)
            steps += len(record["steps"])
        return steps

    return asyncio.run(go())


def measure(play: Callable[[], int], rounds: int) -> tuple[float, int]:
    """Median microseconds per step over ``rounds`` (after one warm-up), and steps."""
    steps = play()
    times = []
    for _ in range(rounds):
        started = time.perf_counter_ns()
        play()
        times.append((time.perf_counter_ns() - started) / 1000 / steps)
    return statistics.median(times), steps


def measure_world(name: str, rounds: int, folder: Path) -> dict[str, Any]:
    """The row of one generated world: every way of playing its solutions."""
    world = load_world(ROOT / "generated" / name)
    solutions = _solutions(world)
    source = WorldSource.of(world, "bench")  # hashed once per batch, as the CLI does
    base, steps = measure(lambda: bare(world, solutions), rounds)
    row: dict[str, Any] = {"world": world.WORLD, "tasks": len(solutions), "steps": steps,
                           "bare_us": round(base, 2)}
    ways: dict[str, Callable[[], int]] = {
        "bare_score_us": lambda: bare(world, solutions, score=True),
        "session_us": lambda: session(world, solutions),
        "session_no_diffs_us": lambda: session(world, solutions, diffs=False),
        "runner_us": lambda: runner(world, solutions, None, source),
        "runner_journal_us": lambda: runner(world, solutions, folder, source),
    }
    for label, play in ways.items():
        value, _ = measure(play, rounds)
        row[label] = round(value, 2)
        row[label.replace("_us", "_ratio")] = round(value / base, 2)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 15")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 15
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure_world(name, rounds, Path(tmp)) for name in WORLDS]
    if args.json:
        print(json.dumps({"rounds": rounds, "rows": rows}, indent=2))
        return 0
    print(f"per step (one tool call), median of {rounds} rounds, microseconds; "
          "ratio to the bare episode.call loop")
    header = (f"{'world':<18}{'steps':>6}{'bare':>8}{'bare+score':>17}{'session':>17}"
              f"{'no diffs':>17}{'runner':>17}{'runner+journal':>18}")
    print(header)
    for row in rows:
        cells = "".join(f"{row[k + '_us']:>10.1f} ({row[k + '_ratio']:>4.1f}x)"
                        for k in ("bare_score", "session", "session_no_diffs", "runner",
                                  "runner_journal"))
        print(f"{row['world']:<18}{row['steps']:>6}{row['bare_us']:>8.1f}{cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
