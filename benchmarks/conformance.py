"""Conformance report: our specs against the peers' own environments, call by call.

    python benchmarks/conformance.py                 # table
    python benchmarks/conformance.py --format json
        # [{"peer", "items", "calls", "identical", "differing"}]

The comparisons are the ones the conformance tests make (their helpers are
reused, so the report and the tests cannot disagree): τ² retail replays every
gold task (result text, error flag, DB hash after each write and at the end);
BFCL replays every base entry's ground truth on the original class and on
ours (result text after each call, public state after each turn). A peer whose
material is missing is reported as such, not skipped silently.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "tests" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


def tau2_row() -> dict[str, Any]:
    row: dict[str, Any] = {"peer": "tau2-bench retail", "items": 0, "calls": 0,
                           "identical": 0, "differing": 0, "note": ""}
    try:
        mod = _module("test_conformance_tau2")
    except BaseException as exc:  # pytest.skip raises a BaseException subclass
        row["note"] = f"not run: {exc}"
        return row
    if not (mod.TAU2 / "db.json").is_file():
        row["note"] = f"not run: {mod.TAU2} not found"
        return row
    from worldspec.loading import compile_worlds

    db = json.loads((mod.TAU2 / "db.json").read_text(encoding="utf-8"))
    world = compile_worlds([mod.SPEC]).worlds["Tau2Retail"]
    episode = world(data=db)
    for task_id in mod.GOLD_IDS:
        gold = json.loads((mod.GOLD / f"{task_id}.json").read_text(encoding="utf-8"))
        episode.reset(data=db)
        identical, _problems = mod.replay_steps(episode, gold["steps"], f"task {task_id}",
                                               lambda s: s.get("db_hash_after"))
        final_ok = mod.fast_episode_hash(episode) == gold["final_db_hash"]
        row["items"] += 1
        row["calls"] += len(gold["steps"])
        row["identical"] += identical
        row["differing"] += len(gold["steps"]) - identical
        if not final_ok:
            row["note"] += f"task {task_id}: final hash differs; "
    return row


def bfcl_row() -> dict[str, Any]:
    row: dict[str, Any] = {"peer": "BFCL MessageAPI", "items": 0, "calls": 0,
                           "identical": 0, "differing": 0, "note": ""}
    try:
        mod = _module("test_conformance_bfcl")
    except BaseException as exc:
        row["note"] = f"not run: {exc}"
        return row
    from worldspec.loading import compile_worlds

    world = compile_worlds([mod.SPEC]).worlds["MessageAPI"]
    for entry, turns in mod.ENTRIES:
        config = entry["initial_config"].get("MessageAPI", {})
        api, episode = mod.original(config), mod.ours(world, config)
        row["items"] += 1
        for turn in turns:
            for text in turn:
                name, args, kwargs = mod.parse_call(text)
                if name not in mod.METHODS:
                    continue
                arguments = mod.bind(name, args, kwargs)
                same = mod.call_original(api, name, arguments) == \
                    mod.call_ours(episode, name, arguments)
                row["calls"] += 1
                row["identical" if same else "differing"] += 1
            if mod.public_state_original(api) != mod.public_state_ours(episode):
                row["note"] += f"{entry['id']}: state differs; "
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--format", choices=("table", "json"), default="table")
    args = parser.parse_args()
    rows = [tau2_row(), bfcl_row()]
    if args.format == "json":
        print(json.dumps([{k: r[k] for k in ("peer", "items", "calls", "identical",
                                              "differing")} for r in rows], indent=2))
    else:
        print(f"{'peer':<22} {'items':>6} {'calls':>6} {'identical':>10} {'differing':>10}")
        for r in rows:
            print(f"{r['peer']:<22} {r['items']:>6} {r['calls']:>6} {r['identical']:>10} "
                  f"{r['differing']:>10}" + (f"  ({r['note'].strip()})" if r["note"] else ""))
        print("not yet re-expressed: BFCL TicketAPI, BFCL TradingBot")
    return 0 if all(r["differing"] == 0 and not r["note"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
