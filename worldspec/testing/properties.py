"""The properties every world must have, checked after each call.

Shared by the fast explorer (:mod:`worldspec.testing.explore`) and the
hypothesis state machine (:mod:`worldspec.testing.hypothesis_suite`), so
both check exactly the same things and describe failures the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from worldspec.runtime.episode import Episode, ToolSpec
from worldspec.runtime.errors import ArgumentError, InternalError, InvariantError, KeptError
from worldspec.testing.sampling import validate

__all__ = ["Violation", "schema_accepts", "check_call"]


@dataclass(frozen=True)
class Violation:
    """A property a call broke: its kind, the tool, a message and the spec location."""

    kind: str
    tool: str
    message: str
    where: str = ""


def schema_accepts(spec: ToolSpec, args: Mapping[str, Any], types: bool = True) -> bool:
    """Whether the tool's JSON schema accepts ``args`` (missing optionals allowed); with
    ``types=False`` only the argument names are checked."""
    names = {p.name for p in spec.params}
    if any(name not in names for name in args):
        return False
    for param in spec.params:
        if param.name not in args:
            if param.required:
                return False
            continue
        if types and not validate(args[param.name], param.schema):
            return False
    return True


def check_call(episode: Episode, spec: ToolSpec, args: Mapping[str, Any],
               hash_before: str, *, full_invariants: bool = True) -> Violation | None:
    """The first property the call just made broke, or None.

    ``full_invariants`` re-checks every invariant over the whole state; the call
    itself already checked them on what it changed, so exploration may do the
    full check only every few calls (a hit is replayed with full checks anyway).
    """
    error = episode.last_error
    accepted = schema_accepts(spec, args)
    name = spec.name
    where = spec.where
    if error is not None:
        # `fail keep` is a failure that keeps its changes by the spec's explicit choice: the
        # state may differ, but it must still keep every invariant (checked below as for a
        # success); any other failure must leave the state as it was.
        if isinstance(error, KeptError):
            problem = episode.invariant_problem() if full_invariants else None
            if problem is not None:
                return Violation("invariant broken", name, problem.message,
                                 problem.where or where)
            return None
        if episode.state_hash() != hash_before:
            return Violation("failed call changed state", name,
                             f"{name} failed ({error.message}) but the state changed", where)
        if isinstance(error, InternalError):  # rolled back, but a bug all the same
            return Violation("internal error", name, f"{name} failed on an unexpected "
                             f"{error.kind}: {error.detail}", where)
        if isinstance(error, InvariantError):
            return Violation("invariant broken", name,
                             f"{name} breaks a rule: {error.message}", error.where or where)
        if accepted and isinstance(error, ArgumentError):
            return Violation("schema accepts what the tool rejects", name,
                             f"arguments valid for the schema were rejected: {error.message}",
                             where)
        return None
    # `arguments: dynamic`: a value of another JSON type is taken, as Python takes it; only
    # wrong names must be refused, and once such a value was taken, results (and the state)
    # may hold values outside the declared types
    dynamic = type(episode).ARGUMENTS == "dynamic"
    if not accepted and not (dynamic and schema_accepts(spec, args, types=False)):
        return Violation("tool accepts what its schema rejects", name,
                         "arguments outside the tool's schema were accepted", where)
    if spec.read_only and episode.state_hash() != hash_before:
        return Violation("read-only tool changed state", name,
                         f"{name} changes nothing by its spec, but the state changed", where)
    if spec.returns is not None and not (dynamic and episode.took_other_types) and \
            not validate(episode.last_value, spec.returns):
        shown = repr(episode.last_value)
        shown = shown if len(shown) <= 120 else shown[:117] + "..."
        return Violation("result does not match its type", name,
                         f"{name} returned {shown}, which its declared type does not allow",
                         where)
    problem = episode.invariant_problem() if full_invariants else None
    if problem is not None:
        return Violation("invariant broken", name, problem.message, problem.where or where)
    return None
