"""Check results that say what they compared.

A generated check returns ``bool``, or a :class:`Verdict` where it can tell *why* it came
out as it did: truthy exactly when the check holds, with a JSON-serialisable ``detail`` for
the grader's breakdown (``CheckOutcome.detail``). Two kinds come from here:

- ``compared``: a check whose condition is a comparison (``a == b``, ``a < b``, ...) at its
  top level, or a conjunct of such an ``and`` chain; ``detail`` holds the comparison as spec
  text and the values of both sides::

      {"kind": "compare", "expression": "orders[\\"O1\\"].status == shipped", "op": "==",
       "left": "pending", "right": "shipped"}

- ``state_difference``: ``matches_solution()``; ``detail`` holds the first path where the
  state differs from the one the reference solution leaves, with the expected and found
  values, and how many paths differ::

      {"kind": "state", "path": "orders[\\"O1\\"].status", "expected": "shipped",
       "found": "pending", "differences": 2}

An ``and`` chain of verdicts evaluates as Python's ``and`` does, so the first conjunct that
fails is the chain's value and its detail explains the whole check.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from worldspec.runtime.values import export_value

__all__ = ["COMPARISONS", "Verdict", "compared", "expect", "explained", "json_detail_value",
           "state_difference"]

#: The comparison operators a generated check may pass to :func:`compared`, as Python
#: evaluates them (``is`` / ``is not`` are how the code generator writes ``== none``).
COMPARISONS: Mapping[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge, "is": operator.is_, "is not": operator.is_not,
}


class Verdict:
    """A check's result with the reason: truthy exactly when the check holds."""

    __slots__ = ("detail", "holds")

    def __init__(self, holds: bool, detail: Mapping[str, Any] | None = None) -> None:
        self.holds = holds
        self.detail = detail

    def __bool__(self) -> bool:
        return self.holds

    def __repr__(self) -> str:
        return f"Verdict({self.holds!r}, {self.detail!r})"


def json_detail_value(value: Any) -> Any:
    """A runtime value as JSON data for a detail (its ``repr`` if it has no JSON form)."""
    try:
        return export_value(value)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def compared(left: Any, op: str, right: Any, expression: str) -> Verdict:
    """``left op right`` as a verdict; ``expression`` is the comparison as spec text."""
    holds = bool(COMPARISONS[op](left, right))
    if holds:
        return Verdict(True)
    spec_op = {"is": "==", "is not": "!="}.get(op, op)
    return Verdict(False, {"kind": "compare", "expression": expression, "op": spec_op,
                           "left": json_detail_value(left),
                           "right": json_detail_value(right)})


def expect(left: Any, op: str, right: Any, part: int = 0) -> Verdict:
    """``left op right`` as a verdict, as :func:`compared` gives it, for a check that keeps its
    comparisons' spec text as data: the detail names the comparison by ``part``, its position
    in the check's condition, and :func:`explained` puts the text in its place."""
    holds = bool(COMPARISONS[op](left, right))
    if holds:
        return Verdict(True)
    return Verdict(False, {"kind": "compare", "part": part,
                           "op": {"is": "==", "is not": "!="}.get(op, op),
                           "left": json_detail_value(left),
                           "right": json_detail_value(right)})


def explained(verdict: bool | Verdict, texts: Sequence[str]) -> bool | Verdict:
    """``verdict`` with the spec text of the comparison it names by position (``part``, see
    :func:`expect`) in place of the position: the detail :func:`compared` would give."""
    if not isinstance(verdict, Verdict) or verdict.detail is None or \
            "part" not in verdict.detail:
        return verdict
    detail = verdict.detail
    return Verdict(verdict.holds, {"kind": detail["kind"], "expression": texts[detail["part"]],
                                   **{key: value for key, value in detail.items()
                                      if key not in ("kind", "part")}})


def state_difference(changes: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The detail of a failed state comparison, from the differences between the state
    found and the one expected (``Episode.diff`` entries: ``old`` expected, ``new`` found);
    ``None`` when no path differs."""
    if not changes:
        return None
    first = changes[0]
    return {"kind": "state", "path": first["path"],
            "expected": json_detail_value(first.get("old")),
            "found": json_detail_value(first.get("new")), "differences": len(changes)}
