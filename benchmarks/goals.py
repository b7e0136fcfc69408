"""Every performance goal in one run: start-up, import, checking, task validation, exploration,
memory and tool calls, each with its goal, the peer measured in the same run where there is
one, and whether it is met.

The figures come from ``bench_startup.py`` (whole processes timed from outside) and
``bench_runtime.py`` (in-process timings against BFCL's code and tau2's recipes), run one after
the other in child processes, so the two never share the machine. The goals are those of
the design brief and of the performance issue; the README's performance table is taken
from this script's output.

    python benchmarks/goals.py            # the table (three to four minutes)
    python benchmarks/goals.py --quick    # fewer rounds: a smoke test
    python benchmarks/goals.py --json     # one JSON document
    python benchmarks/goals.py --strict   # exit 1 when a goal is missed
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

#: start-up rows: a prefix of bench_startup's ``what`` -> the label printed here
STARTUP_ROWS = (
    ("worldspec --version", "`worldspec --version`, whole process"),
    ("worldspec --help", "`worldspec --help`, whole process"),
    ("worldspec check, one small world (", "`worldspec check` of one small world, whole process"),
    ("import a generated world", "import a generated world (slowest; `import` alone)"),
    ("check a generated 10,000-line spec", "check a generated 10,000-line spec (warm median)"),
    ("worldspec tasks, tau2 retail", "`worldspec tasks`, tau2 retail's 114 tasks"),
    ("worldspec tasks, 50 tasks", "`worldspec tasks`, 50 tasks over a 3.4 MB database"),
)

#: tool-call rows of bench_runtime: comparison label -> label printed here
CALL_ROWS = (
    ("MessageAPI: call vs BFCL eval only", "BFCL `send_message` vs BFCL's bare `eval` of the call"),
    ("modify_pending_order_address vs tau2 call", "tau2 retail `modify_pending_order_address`"),
    ("cancel_pending_order vs tau2 call", "tau2 retail `cancel_pending_order`"),
    ("modify_pending_order_items vs tau2 call", "tau2 retail `modify_pending_order_items`"),
    ("modify_pending_order_payment vs tau2 call", "tau2 retail `modify_pending_order_payment`"),
    ("modify_user_address vs tau2 call", "tau2 retail `modify_user_address`"),
    ("exchange_delivered_order_items vs tau2 call",
     "tau2 retail `exchange_delivered_order_items`"),
    ("return_delivered_order_items vs tau2 call", "tau2 retail `return_delivered_order_items`"),
)


@dataclass(frozen=True)
class Row:
    what: str
    measured: str
    goal: str
    peer: str
    met: bool | None


def _run_json(script: str, args: Iterable[str]) -> dict[str, Any]:
    command = [sys.executable, str(HERE / script), "--json", *args]
    print(f"running {script} {' '.join(args)}".rstrip(), file=sys.stderr, flush=True)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{script} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _ms(value: float) -> str:
    return f"{value:,.0f} ms" if value >= 100 else f"{value:,.1f} ms"


def startup_rows(report: Mapping[str, Any]) -> list[Row]:
    rows = list(report["rows"])
    floor = next((r for r in rows if r["what"].startswith("python -c pass")), None)
    out = []
    for prefix, label in STARTUP_ROWS:
        row = next((r for r in rows if r["what"].startswith(prefix)), None)
        if row is None:
            out.append(Row(label, "not measured", "", "", None))
            continue
        peer = ""
        if floor is not None and prefix.startswith("worldspec --"):
            peer = f"bare `python -c pass` {_ms(floor['median_ms'])}"
        goal = f"≤ {row['goal_ms']:,} ms" if row.get("goal_ms") is not None else ""
        measured = f"{_ms(row['median_ms'])} median, {_ms(row['min_ms'])} min"
        out.append(Row(label, measured, goal, peer, row.get("met")))
    return out


def runtime_rows(report: Mapping[str, Any]) -> list[Row]:
    out = []
    comparisons = {c["label"]: c for c in report["comparisons"]}
    timings = {t["key"]: t for t in report["timings"]}
    #: per retail tool, the brief's absolute figure (44 µs / 5) beside the measured peer's
    brief = {f"{r['tool']} vs tau2 call": r for r in report.get("retail_tools", [])}
    for key, label in CALL_ROWS:
        c = comparisons.get(key)
        if c is None:
            out.append(Row(label, "not measured", "", "", None))
            continue
        ours = timings.get(c["ours"], {})
        best = ours.get("min_ns")
        measured = f"{c['ours_median_ns'] / 1000:.1f} µs median"
        if best is not None:
            measured += f", {best / 1000:.1f} µs best batch"
        measured_peer = c.get("peer_source") == "measured"
        # a constant from the brief carries its figure in its label
        peer = f"{c['peer']} {c['peer_ns'] / 1000:.1f} µs" if measured_peer else c["peer"]
        goal = f"≥ {c['goal']:g}x the peer" if c.get("goal") is not None else ""
        if c.get("goal") is not None and not measured_peer:
            goal += f" (≤ {c['peer_ns'] / 1000 / c['goal']:.1f} µs)"
        elif key in brief and brief[key].get("brief_goal_us") is not None:
            b = brief[key]
            goal += (f" (≤ {c['peer_ns'] / 1000 / c['goal']:.1f} µs here; the brief's "
                     f"≤ {b['brief_goal_us']:g} µs: {'met' if b['met_brief'] else 'not met'})")
        out.append(Row(label, f"{measured}; {c['ratio']:.2f}x", goal, peer, c.get("met")))
    for e in report.get("explore", []):
        out.append(Row(
            "`worldspec test` on the tau2 retail tasks (3.4 MB data each)",
            f"{e['calls_per_second']:,} calls/s wall, {e['calls_per_cpu_second']:,} per CPU s",
            f"≥ {e['goal']:,.0f} calls/s",
            f"empty world {e['empty_world_calls_per_second']:,} calls/s; before {e['before']:g}",
            e.get("met")))
    for m in report.get("memory", []):
        out.append(Row(
            f"memory of {m['episodes']:,} concurrent copies of a loaded retail episode",
            f"{m['mb_per_episode']:.2f} MB each", f"≤ {m['goal_mb']} MB",
            f"one `copy.deepcopy(db)` {m['deepcopy_mb']:.2f} MB", m.get("met")))
    return out


def render(rows: list[Row]) -> str:
    heads = ("what", "measured", "goal", "peer (same run)", "met")
    cells = [(r.what, r.measured, r.goal, r.peer,
              "-" if r.met is None else ("yes" if r.met else "NO")) for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(cell, widths, strict=True)) for cell in cells]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds: a smoke test")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a goal is missed")
    args = parser.parse_args(argv)
    quick = ["--quick"] if args.quick else []
    startup = _run_json("bench_startup.py", quick)
    runtime = _run_json("bench_runtime.py", quick)
    rows = startup_rows(startup) + runtime_rows(runtime)
    missed = [r.what for r in rows if r.met is False]
    if args.json:
        print(json.dumps({"rows": [asdict(r) for r in rows], "missed": missed,
                          "machine": runtime.get("machine"),
                          "load_average": os.getloadavg()}, indent=1))
    else:
        print(render(rows))
        for note in runtime.get("notes", []):  # the machine's speed, and how tau2 was run
            if note.startswith(("Machine speed", "tau2:", "tau2's code")):
                print(f"\n{note}")
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"\nload average at the end: {load}; missed: {len(missed)}"
              + (f" ({'; '.join(missed)})" if missed else ""))
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
