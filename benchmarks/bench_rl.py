"""Step-API overhead: what ``TextEnv.step`` adds per tool call over a bare ``episode.call`` loop.

Every task's reference solution of three example worlds (their generated packages) is played
three ways, one tool call per assistant message and then a final answer (which scores):

1. ``bare``: ``episode.call(name, arguments_json)`` for each call on a fresh episode: the floor;
2. ``step``: ``TextEnv.reset`` then ``TextEnv.step`` per call (tool messages, raw results,
   state hash and per-write state diff, the score at the end): what a trainer pays;
3. ``step, no diffs``: the same with ``record_diffs=False``.

Figures are microseconds per tool call (the fastest of the rounds), the overhead over ``bare``
in microseconds, and the ratio. No model is involved: the policy is a precomputed list of
messages.

Run from the repository root::

    python benchmarks/bench_rl.py            # table
    python benchmarks/bench_rl.py --json     # one JSON document on stdout
    python benchmarks/bench_rl.py --quick    # a few rounds: a smoke test
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from worldspec.rl import TextEnv  # noqa: E402
from worldspec.runtime.episode import Episode  # noqa: E402
from worldspec.services.loading import load_world  # noqa: E402

WORLDS = ("mobile_messaging", "online_shop", "clinic_scheduling")
Plan = dict[str, list[tuple[str, str]]]


def solutions(world: type[Episode]) -> Plan:
    return {name: [(n, json.dumps(dict(a))) for n, a in spec.solution]
            for name, spec in world.TASKS.items() if spec.solution}


def assistant_messages(plan: Plan) -> dict[str, list[dict[str, Any]]]:
    """The policy's messages per task, built once (not timed)."""
    return {task: [{"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a}}]}
        for i, (n, a) in enumerate(calls)] + [{"role": "assistant", "content": "Done."}]
        for task, calls in plan.items()}


def bare(world: type[Episode], plan: Plan) -> int:
    steps = 0
    for task, calls in plan.items():
        episode = world(task=task)
        for name, arguments in calls:
            episode.call(name, arguments)
        episode.score()
        steps += len(calls)
    return steps


def stepped(world: type[Episode], messages: dict[str, list[dict[str, Any]]], *,
            diffs: bool) -> int:
    env = TextEnv(world, record_diffs=diffs)
    steps = 0
    for task, replies in messages.items():
        env.reset(task)
        for reply in replies:
            result = env.step(reply)
        assert result.done and result.reward == 1.0, (task, result.info)
        steps += len(replies) - 1
    return steps


def measure(plays: dict[str, Callable[[], int]], rounds: int) -> dict[str, float]:
    """Microseconds per tool call of each way, the fastest of ``rounds`` (after a warm-up).

    The ways take turns within each round, so a burst of load from other processes on a
    shared machine hits all of them alike, and the minimum keeps the least disturbed run."""
    steps = {label: play() for label, play in plays.items()}
    best = {label: float("inf") for label in plays}
    for _ in range(rounds):
        for label, play in plays.items():
            started = time.perf_counter_ns()
            play()
            spent = (time.perf_counter_ns() - started) / 1000 / steps[label]
            best[label] = min(best[label], spent)
    return best


def measure_world(name: str, rounds: int) -> dict[str, Any]:
    world = load_world(ROOT / "generated" / name)
    plan = solutions(world)
    messages = assistant_messages(plan)
    figures = measure({
        "bare": lambda: bare(world, plan),
        "step": lambda: stepped(world, messages, diffs=True),
        "step_no_diffs": lambda: stepped(world, messages, diffs=False),
    }, rounds)
    base = figures["bare"]
    row: dict[str, Any] = {"world": world.WORLD, "tasks": len(plan),
                           "steps": sum(len(c) for c in plan.values()),
                           "bare_us": round(base, 2)}
    for label in ("step", "step_no_diffs"):
        value = figures[label]
        row[f"{label}_us"] = round(value, 2)
        row[f"{label}_overhead_us"] = round(value - base, 2)
        row[f"{label}_ratio"] = round(value / base, 2)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 15")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 15
    rows = [measure_world(name, rounds) for name in WORLDS]
    if args.json:
        print(json.dumps({"rounds": rounds, "rows": rows}, indent=2))
        return 0
    print(f"per tool call, fastest of {rounds} rounds, microseconds (overhead over the bare "
          "episode.call loop, ratio)")
    print(f"{'world':<18}{'calls':>6}{'bare':>8}{'step':>26}{'step, no diffs':>26}")
    for row in rows:
        cells = "".join(f"{row[k + '_us']:>9.1f} (+{row[k + '_overhead_us']:>5.1f}, "
                        f"{row[k + '_ratio']:>4.1f}x)" for k in ("step", "step_no_diffs"))
        print(f"{row['world']:<18}{row['steps']:>6}{row['bare_us']:>8.1f}{cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
