"""Conformance report: our specs against the peers' own environments, call by call.

    python benchmarks/conformance.py                 # table
    python benchmarks/conformance.py --format json
        # [{"peer", "items", "calls", "identical", "differing"}]

The comparisons are the ones the conformance tests make (their helpers are
reused, so the report and the tests cannot disagree): τ² retail replays every
gold task (result text, error flag, DB hash after each write and at the end) on
tau2's ``db.json`` from a tau2-bench checkout (``$WORLDSPEC_TAU2_CHECKOUT``) or the
peer material, with the gold replays of the peer material (``scripts/tau2_data.py``);
BFCL (MessageAPI, TicketAPI, TradingBot, TravelAPI, VehicleControlAPI) replays
every base entry's ground truth on the original class and on ours (result text
after each call, public state after each turn). A peer whose material is missing
is reported as such, not skipped silently.
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
sys.path.insert(0, str(ROOT / "tests"))  # the tests' shared harnesses (bfcl_support)
sys.path.insert(0, str(ROOT / "scripts"))  # tau2_data: where tau2's data is


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
    if not mod.RETAIL.db.is_file():
        row["note"] = f"not run: {mod.RETAIL.missing()}"
        return row
    if not mod.GOLD_IDS:
        row["note"] = (f"not run: no gold replays at {mod.GOLD} (the peer material's: a "
                       "tau2-bench checkout has none; set WORLDSPEC_PEERS)")
        return row
    from worldspec.services.loading import compile_worlds

    db = json.loads(mod.RETAIL.db.read_text(encoding="utf-8"))
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


#: BFCL classes re-expressed: (row label, test module holding the peer).
BFCL_PEERS = (("BFCL MessageAPI", "test_conformance_bfcl"),
              ("BFCL TicketAPI", "test_conformance_bfcl_ticket"),
              ("BFCL TradingBot", "test_conformance_bfcl_trading"),
              ("BFCL TravelAPI", "test_conformance_bfcl_travel"),
              ("BFCL VehicleControlAPI", "test_conformance_bfcl_vehicle"))


def bfcl_row(label: str, module: str) -> dict[str, Any]:
    row: dict[str, Any] = {"peer": label, "items": 0, "calls": 0,
                           "identical": 0, "differing": 0, "note": ""}
    try:
        mod = _module(module)
    except BaseException as exc:
        row["note"] = f"not run: {exc}"
        return row
    if not mod.ENTRIES:
        row["note"] = "not run: BFCL's base entries were not found"
        return row
    from worldspec.services.loading import compile_worlds

    peer = mod.PEER
    world = compile_worlds([peer.spec]).worlds[peer.class_name]
    for entry, turns in mod.ENTRIES:
        replay = peer.replay(world, entry, turns)
        row["items"] += 1
        row["calls"] += replay.calls
        row["identical"] += replay.identical
        row["differing"] += replay.calls - replay.identical
        states = [p for p in replay.problems if p.startswith(("initial state", "after turn"))]
        if states:
            row["note"] += f"{entry['id']}: state differs; "
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--format", choices=("table", "json"), default="table")
    args = parser.parse_args()
    rows = [tau2_row()] + [bfcl_row(label, module) for label, module in BFCL_PEERS]
    if args.format == "json":
        print(json.dumps([{k: r[k] for k in ("peer", "items", "calls", "identical",
                                              "differing")} for r in rows], indent=2))
    else:
        print(f"{'peer':<22} {'items':>6} {'calls':>6} {'identical':>10} {'differing':>10}")
        for r in rows:
            print(f"{r['peer']:<22} {r['items']:>6} {r['calls']:>6} {r['identical']:>10} "
                  f"{r['differing']:>10}" + (f"  ({r['note'].strip()})" if r["note"] else ""))
    return 0 if all(r["differing"] == 0 and not r["note"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
