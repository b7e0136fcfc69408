"""Write a task-validation workload: many tasks over one multi-megabyte database.

The world is the example shop (``examples/shop/shop.world``); the database is its
``data/seed.json`` grown with generated customers and delivered orders (deterministic:
the same arguments write the same bytes) to about ``--megabytes`` MB; the tasks are the
example's own tasks, each copied ``--tasks`` / 8 times under new names, every copy naming
the big database in its ``given``. The seed's rows are kept as they are, so every copy is
valid, and validating them reads one large file many times over::

    python benchmarks/gen_tasks.py                      # 50 tasks over 3.4 MB, in build/bench_tasks
    worldspec tasks build/bench_tasks
    python benchmarks/gen_tasks.py --tasks 200 --megabytes 10 -o /tmp/big

From Python: ``from gen_tasks import write_workload; write_workload(folder, 50, 3.4)``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHOP = ROOT / "examples" / "shop"
DEFAULT_OUT = ROOT / "build" / "bench_tasks"

__all__ = ["grow_database", "write_workload"]

_CITIES = (("Austin", "TX", "787"), ("Seattle", "WA", "981"), ("Denver", "CO", "802"),
           ("Boston", "MA", "021"), ("Chicago", "IL", "606"), ("Miami", "FL", "331"))
_NAMES = ("Ava", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea")
_SURNAMES = ("Stone", "Rivera", "Okafor", "Lund", "Moreau", "Sato", "Kowal", "Diaz", "Brandt")


def _address(rng: random.Random, number: int) -> dict[str, str]:
    city, state, zip_head = rng.choice(_CITIES)
    return {"address1": f"{number} {rng.choice(_SURNAMES)} Street", "address2": "",
            "city": city, "state_code": state, "zip": f"{zip_head}{rng.randrange(100):02d}",
            "country": "USA"}


def grow_database(seed: dict[str, Any], megabytes: float, rng_seed: int = 7) -> dict[str, Any]:
    """``seed`` plus generated customers, each with a card and delivered orders, until the
    JSON text is about ``megabytes`` MB. Generated ids (``C1000``..., ``#W8000000``...) never
    meet the seed's or the ones the world's sequences hand out."""
    rng = random.Random(rng_seed)
    data = json.loads(json.dumps(seed))
    variants = data["variants"]
    products = {p["id"]: p["name"] for p in data["products"]}
    target = int(megabytes * 1_000_000)
    size = len(json.dumps(data))
    customer = 1000
    order = 8_000_000
    while size < target:
        first, last = rng.choice(_NAMES), rng.choice(_SURNAMES)
        card = f"credit_card_{5_000_000 + customer}"
        row = {"id": f"C{customer}", "name": f"{first} {last}",
               "email": f"{first.lower()}.{last.lower()}.{customer}@example.com",
               "address": _address(rng, customer % 900 + 1),
               "payment_methods": {card: {"source": "credit_card", "id": card,
                                          "brand": rng.choice(("visa", "mastercard")),
                                          "last_four": f"{customer % 10_000:04d}"}}}
        data["customers"].append(row)
        size += len(json.dumps(row)) + 2
        for _ in range(rng.randrange(1, 6)):
            chosen = rng.sample(variants, rng.randrange(1, 4))
            items = [{"variant": v["id"], "name": products[v["product"]],
                      "options": v["options"], "price": v["price"],
                      "quantity": rng.randrange(1, 3)} for v in chosen]
            total = round(sum(i["price"] * i["quantity"] for i in items), 2)
            month, day_of_month, hour = rng.randrange(1, 5), rng.randrange(1, 28), rng.randrange(10)
            day = f"2024-0{month}-{day_of_month:02d}T1{hour}:00:00"
            entry = {"id": f"#W{order}", "customer": row["id"], "address": row["address"],
                     "items": items, "status": "delivered", "payment_method_id": card,
                     "transactions": [{"kind": "charge", "amount": total, "method_id": card,
                                       "at": day}],
                     "tracking": f"{order:012d}", "cancel_reason": None, "created_at": day}
            data["orders"].append(entry)
            size += len(json.dumps(entry)) + 2
            order += 1
        customer += 1
    return data


def _tasks_text(count: int, world_import: str, database: str) -> str:
    """The example's tasks, copied until there are ``count``, each ``given`` the database."""
    source = (SHOP / "tasks.world").read_text(encoding="utf-8")
    body = source[source.index("\ntask ") + 1:]
    blocks = ["task " + b for b in re.split(r"(?m)^task ", body) if b.strip()]
    out = [f"# {count} tasks over one large database: written by benchmarks/gen_tasks.py.",
           f'\nimport "{world_import}"\n']
    for index in range(count):
        block = blocks[index % len(blocks)]
        block = re.sub(r"^task (\w+)", rf"task \g<1>_{index}", block)
        block = re.sub(r'given "[^"]*"', f'given "{database}"', block)
        out.append(block.rstrip() + "\n")
    return "\n".join(out)


def write_workload(folder: Path, tasks: int, megabytes: float) -> tuple[Path, int]:
    """Write ``db.json`` and ``tasks.world`` into ``folder``; the tasks file and the
    database's size in bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    seed = json.loads((SHOP / "data" / "seed.json").read_text(encoding="utf-8"))
    text = json.dumps(grow_database(seed, megabytes)) + "\n"
    (folder / "db.json").write_text(text, encoding="utf-8")
    world = os.path.relpath(SHOP / "shop.world", folder).replace(os.sep, "/")
    spec = folder / "tasks.world"
    spec.write_text(_tasks_text(tasks, world, "db.json"), encoding="utf-8")
    return spec, len(text.encode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=50, help="how many tasks (default 50)")
    parser.add_argument("--megabytes", type=float, default=3.4,
                        help="the database's size in MB (default 3.4)")
    parser.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT,
                        help="the folder to write (default build/bench_tasks)")
    args = parser.parse_args(argv)
    spec, size = write_workload(args.out, args.tasks, args.megabytes)
    print(f"wrote {args.tasks} tasks to {spec} over a {size / 1e6:.1f} MB database")
    return 0


if __name__ == "__main__":
    sys.exit(main())
