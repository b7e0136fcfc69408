"""tau2-bench's own retail environment, timed in a process of its own for ``bench_runtime.py``.

tau2-bench needs Python 3.12 or newer and brings dependencies of its own, so it does not go
into WorldSpec's environment: ``bench_runtime.py`` starts this script with the Python named
by ``$WORLDSPEC_TAU2_PYTHON`` (one in which ``import tau2`` works) and talks to it over
stdin/stdout, one JSON document a line. Only the standard library and tau2 are imported.

The environment is built as tau2's retail domain builds it (``RetailDB`` from ``db.json``,
``RetailTools``, ``Environment``), logging set as tau2's runner sets it (its default level,
``ERROR``), and each call goes through ``Environment.get_response`` with a ``ToolCall`` made
beforehand: the path one agent tool call takes in a tau2 simulation.

Requests, and what is answered::

    {"op": "define", "key": K, "tool": NAME, "calls": [ARGUMENTS, ...]}  -> {"ok": true}
    {"op": "batch", "key": K, "reset": BOOL, "contents": BOOL}
        -> {"ns": NANOSECONDS, "calls": N, "errors": E[, "contents": [TEXT, ...]]}
    {"op": "quit"}

A batch makes every call of its key once, in order; with ``reset`` the orders and users its
calls name (and the orders' users) are first put back as loaded (untimed): the retail tools
change nothing else. Only the ``get_response`` calls are timed, with the garbage
collector paused, as ``bench_runtime.py`` times its own batches. ``contents`` returns each
response's content, for checking that both sides answer alike.

    python benchmarks/tau2_peer.py PATH/TO/db.json     # normally started by bench_runtime.py
"""

from __future__ import annotations

import gc
import json
import sys
import time
from typing import Any


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tau2")
    except PackageNotFoundError:
        return "unknown"


def serve(db_path: str) -> int:
    from loguru import logger
    from tau2.data_model.message import ToolCall
    from tau2.domains.retail.data_model import RetailDB
    from tau2.domains.retail.tools import RetailTools
    from tau2.environment.environment import Environment

    # As tau2's runner configures it: one sink at its default level, ERROR.
    logger.remove()
    logger.add(sys.stderr, level="ERROR")

    pristine = RetailDB.load(db_path)
    db = pristine.model_copy(deep=True)
    env = Environment(domain_name="retail", policy="", tools=RetailTools(db))

    def reset(orders: set[str], users: set[str]) -> None:
        """Put back the orders and users a batch can change (the tools change no others)."""
        for order_id in orders:
            db.orders[order_id] = pristine.orders[order_id].model_copy(deep=True)
        for user_id in users:
            db.users[user_id] = pristine.users[user_id].model_copy(deep=True)

    cases: dict[str, list[Any]] = {}
    touched: dict[str, tuple[set[str], set[str]]] = {}
    out = sys.stdout
    out.write(json.dumps({"ready": True, "tau2": _version(),
                          "python": sys.version.split()[0]}) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        op = request.get("op")
        if op == "quit":
            break
        if op == "define":
            cases[request["key"]] = [ToolCall(id=f"call_{i}", name=request["tool"],
                                              arguments=arguments)
                                     for i, arguments in enumerate(request["calls"])]
            orders = {a["order_id"] for a in request["calls"]
                      if a.get("order_id") in pristine.orders}
            users = {a["user_id"] for a in request["calls"] if a.get("user_id") in pristine.users}
            users |= {pristine.orders[k].user_id for k in orders}
            touched[request["key"]] = orders, users
            answer: dict[str, Any] = {"ok": True}
        elif op == "batch":
            if request.get("reset"):
                reset(*touched[request["key"]])
            messages = cases[request["key"]]
            get_response = env.get_response
            gc.disable()
            try:
                start = time.perf_counter_ns()
                responses = [get_response(message) for message in messages]
                elapsed = time.perf_counter_ns() - start
            finally:
                gc.enable()
            answer = {"ns": elapsed, "calls": len(messages),
                      "errors": sum(1 for r in responses if r.error)}
            if request.get("contents"):
                answer["contents"] = [r.content for r in responses]
        else:
            answer = {"error": f"unknown op {op!r}"}
        out.write(json.dumps(answer) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: tau2_peer.py PATH/TO/db.json")
    sys.exit(serve(sys.argv[1]))
