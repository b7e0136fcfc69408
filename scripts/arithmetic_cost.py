"""Measure ``arithmetic()``'s cost model against this machine: for each kind of big-int
operation, the time CPython takes over the time the model charges, and the slowest
expressions that pass the guards (each a whole call of tau2's ``calculate``).

    python scripts/arithmetic_cost.py
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from worldspec.runtime import arithmetic as arith
from worldspec.runtime.errors import LimitError, ToolError
from worldspec.services.loading import compile_worlds

SPEC = Path(__file__).resolve().parent.parent / "examples" / "tau2" / "retail.world"


def best(fn: Callable[[], Any], rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def ratios() -> None:
    """Measured ns over charged ns, per operation and size (1 or less: the model is safe)."""
    worst = 0.0
    cases: list[tuple[str, Callable[[Any, Any], Any], int, int]] = []
    for bits in (3_000, 30_000, 100_000, 300_000):
        cases += [("*", operator.mul, 3 ** (bits * 100 // 158), 7 ** (bits * 100 // 281)),
                  ("*", operator.mul, 3 ** (bits * 100 // 158), 12345 ** 20),
                  ("//", operator.floordiv, 3 ** (bits * 100 // 158), 7 ** (bits * 50 // 281)),
                  ("%", operator.mod, 3 ** (bits * 100 // 158), 12345 ** 20),
                  ("+", operator.add, 3 ** (bits * 100 // 158), 1),
                  ("/", operator.truediv, 3 ** (bits * 100 // 158),
                   3 ** (bits * 100 // 158) // 3 + 1)]
    for exponent in (10_000, 100_000, 300_000):
        cases += [("**", operator.pow, 3, exponent), ("**", operator.pow, 12345, exponent // 8)]
    for exponent in (100_000, 1_000_000, 2_000_000):
        cases += [("**", operator.pow, 2, exponent), ("**", operator.pow, -32, exponent // 5),
                  ("**", operator.pow, 1, 2 ** (exponent // 2) - 1)]
    for name, op, left, right in cases:
        charged = arith._cost(op, left, right)
        measured = best(lambda op=op, left=left, right=right: op(left, right)) * 1e9
        worst = max(worst, measured / charged)
        print(f"{left.bit_length():>9} {name:2} {right.bit_length():>9} bits: "
              f"{measured / 1e6:8.3f} ms measured, {charged / 1e6:8.3f} ms charged, "
              f"ratio {measured / charged:.2f}")
    print(f"worst ratio {worst:.2f}")


#: expressions of a size k: the largest k that passes the guards is the slowest of its kind
SLOW: list[Callable[[int], str]] = [
    lambda k: f"2**{k} // 2**{k - 10}", lambda k: f"3**{k} // 3**{k - 10}",
    lambda k: f"3**{k} * 3**{k} // 7", lambda k: f"3**{2 * k} // 3**{k}",
    lambda k: f"7**{k} // 3**{k}", lambda k: f"({'+'.join([f'2**{k} // 3'] * 3)}) // 7",
    lambda k: "+".join([f"3**{k} * 3**{k}"] * 40), lambda k: "+".join([f"3**{k} // 7"] * 40),
    lambda k: f"({', '.join([f'2**{k} + 1'] * 500)})", lambda k: f"(*(1,) * {k},)",
    lambda k: f"(1,) * {k} + (1,) * {k}", lambda k: "-" * k + "1",
    lambda k: f"(-1) ** (2**{k} - 1)", lambda k: f"0 ** 2**{k} + 1 ** 2**{k}",
    lambda k: "+".join(["1"] * k), lambda k: "*".join(["9" * 4300] * k),
    lambda k: "(" + "1," * k + ")", lambda k: "2(" + "*()," * k + ")",
    lambda k: "(" + "1j+" * k + "1)", lambda k: "+".join(["(" + "-" * k + "1)"] * 7),
    lambda k: "(" + "-1," * k + ")", lambda k: "((" + "(1, 1) + " * k + "(1,)))",
]


def slowest() -> None:
    world = compile_worlds([SPEC]).worlds["Tau2Retail"]
    episode = world(data={"products": [], "users": [], "orders": []})

    def passes(text: str) -> bool:
        episode._steps = 1_000_000
        try:
            arith.arithmetic_float(episode, text)
        except LimitError:
            return False
        except ToolError:
            return True
        return True

    worst = 0.0
    for template in SLOW:
        growth = len(template(1001)) - len(template(1000))  # characters per unit of k
        low, high = 1, (1 << 24) if growth == 0 else arith.MAX_LENGTH // growth + 1
        while low < high:  # the largest k that passes
            middle = (low + high + 1) // 2
            if len(template(middle)) <= arith.MAX_LENGTH and passes(template(middle)):
                low = middle
            else:
                high = middle - 1
        text = template(low)

        def run(text: str = text) -> None:
            episode._steps = 1_000_000
            try:
                arith.arithmetic_float(episode, text)
            except ToolError:
                pass

        seconds = best(run)
        worst = max(worst, seconds)
        print(f"{seconds * 1000:7.2f} ms  {text[:60]!r}")
    print(f"slowest call that passes the guards: {worst * 1000:.1f} ms")


if __name__ == "__main__":
    import sys
    if "--slow" not in sys.argv:
        ratios()
    slowest()
