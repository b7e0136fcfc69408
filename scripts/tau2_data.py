"""Where tau2-bench retail's data is: a tau2-bench checkout, or this project's peers folder.

One setting decides it for ``scripts/tau2_tasks.py``, the τ² tests and
``benchmarks/conformance.py``:

- ``$WORLDSPEC_TAU2_CHECKOUT``: a tau2-bench clone in its own layout; the data is read from
  ``data/tau2/domains/retail/`` (``db.json``, ``tasks.json``, ``split_tasks.json``,
  ``policy.md``), as tau2 itself reads it;
- otherwise the peers folder, ``$WORLDSPEC_PEERS/tau2-retail`` (default ``../shared/peers``
  from the repository root), which holds the same four files (identical blobs) and the gold
  replays, ``gold/<task id>.json``, recorded by running tau2's own code.

A checkout has no gold replays: they are never part of tau2-bench. What needs them (the
call-by-call conformance replay, the gold hash checks) reads them from the peers folder
whichever folder the data comes from, and says so when they are absent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CHECKOUT_DATA", "CHECKOUT_VARIABLE", "DATA_FILES", "Tau2Retail", "locate_tau2",
           "peers_folder"]

ROOT = Path(__file__).resolve().parent.parent

#: The environment variable naming a tau2-bench checkout.
CHECKOUT_VARIABLE = "WORLDSPEC_TAU2_CHECKOUT"
#: Where a tau2-bench checkout keeps the retail domain's data.
CHECKOUT_DATA = Path("data") / "tau2" / "domains" / "retail"
#: The data files both layouts hold.
DATA_FILES = ("db.json", "tasks.json", "split_tasks.json", "policy.md")


@dataclass(frozen=True, slots=True)
class Tau2Retail:
    """tau2-bench retail's data folder, and the gold replays' folder (the peers folder's)."""

    data: Path
    gold: Path
    origin: str

    @property
    def db(self) -> Path:
        return self.data / "db.json"

    @property
    def tasks(self) -> Path:
        return self.data / "tasks.json"

    @property
    def policy(self) -> Path:
        return self.data / "policy.md"

    def has_data(self) -> bool:
        """Whether every data file is there."""
        return all((self.data / name).is_file() for name in DATA_FILES)

    def has_gold(self) -> bool:
        return self.gold.is_dir() and any(self.gold.glob("*.json"))

    def missing(self) -> str:
        """What to set when the data is not there."""
        return (f"tau2 retail data not found at {self.data} ({self.origin}): set "
                f"{CHECKOUT_VARIABLE} to a tau2-bench checkout, or WORLDSPEC_PEERS to the "
                "peers folder")


def peers_folder() -> Path:
    """``$WORLDSPEC_PEERS`` (relative to the repository root), default ``../shared/peers``."""
    return (ROOT / os.environ.get("WORLDSPEC_PEERS", "../shared/peers")).resolve()


def locate_tau2(checkout: Path | None = None, peers: Path | None = None) -> Tau2Retail:
    """The retail data of ``checkout`` (a tau2-bench clone), else of ``peers`` (a peers
    folder holding ``tau2-retail/``), else of ``$WORLDSPEC_TAU2_CHECKOUT``, else of
    ``$WORLDSPEC_PEERS``. A folder that is itself a retail data folder (``db.json`` and
    ``tasks.json`` in it) is taken as it is. The gold is always the peers folder's."""
    peer_material = (peers.resolve() if peers is not None else peers_folder()) / "tau2-retail"
    gold = peer_material / "gold"
    if checkout is None and peers is None and os.environ.get(CHECKOUT_VARIABLE):
        checkout = ROOT / os.environ[CHECKOUT_VARIABLE]
    if checkout is not None:
        folder = checkout.resolve()
        if not (folder / "tasks.json").is_file():
            folder = folder / CHECKOUT_DATA
        return Tau2Retail(folder, gold, f"the tau2-bench checkout {checkout}")
    return Tau2Retail(peer_material, gold, "the peers folder")
