"""Task mining benchmark: distinct valid candidate tasks per corpus world in N seconds, no model.

For each world of ``examples/corpus/worlds/`` (or those named), the miner
(:func:`worldspec.services.mining.mine_starts`) draws runs of state-changing calls from
each of the world's task start states for ``--seconds`` seconds, and every distinct
candidate is then validated as ``worldspec tasks`` validates (discoverability included).
Rows: the world, its start states, the candidates found, how many validate, the seconds
mining and validating took, and the valid candidates per start state (EnvScaler reports
about 37 scenarios per world; the corpus has 8.8 model-written tasks per world).

Run from the repository root::

    python benchmarks/bench_mining.py                                  # every corpus world, 5 s
    python benchmarks/bench_mining.py --seconds 2 library_loans team_chat
    python benchmarks/bench_mining.py --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from worldspec.compiler.api import check_specs  # noqa: E402
from worldspec.services.loading import load_result  # noqa: E402
from worldspec.services.mining import mine_starts, validate_mined  # noqa: E402

CORPUS = ROOT / "examples" / "corpus" / "worlds"


def world_file(folder: Path) -> Path:
    """The world file of a corpus folder (the one that is not its tasks file)."""
    return next(p for p in sorted(folder.glob("*.world")) if p.name != "tasks.world")


def measure(folder: Path, seconds: float) -> dict[str, Any]:
    path = world_file(folder)
    result = check_specs([path])
    [model] = result.model.worlds.values()
    world = load_result(result).worlds[model.name]
    starts = {name: spec.data for name, spec in world.TASKS.items()}
    clock = time.perf_counter()
    candidates = mine_starts(model, world, starts, runs=50, seconds=seconds)
    mined = time.perf_counter() - clock
    clock = time.perf_counter()
    reports = validate_mined(path, {c.name: c.text() for c in candidates})
    checked = time.perf_counter() - clock
    valid = sum(1 for r in reports.values() if r is not None and r.valid)
    distinct_starts = len({json.dumps(d, sort_keys=True, default=str) for d in starts.values()})
    return {"world": folder.name, "starts": distinct_starts, "candidates": len(candidates),
            "valid": valid, "mine_s": round(mined, 2), "validate_s": round(checked, 2),
            "valid_per_start": round(valid / distinct_starts, 1) if distinct_starts else 0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("worlds", nargs="*", help="corpus world folders (default: all)")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    folders = [CORPUS / name for name in args.worlds] if args.worlds else \
        sorted(p for p in CORPUS.iterdir() if p.is_dir())
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        print(f"no such corpus world: {', '.join(missing)}", file=sys.stderr)
        return 2
    rows = [measure(folder, args.seconds) for folder in folders]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"| world | starts | candidates in {args.seconds:g} s | valid | mine s | "
          "validate s | valid per start |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['world']} | {row['starts']} | {row['candidates']} | {row['valid']} | "
              f"{row['mine_s']} | {row['validate_s']} | {row['valid_per_start']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
