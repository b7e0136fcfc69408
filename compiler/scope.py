"""Lexical scopes and flow facts used while type-checking a body."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from worldspec.compiler.types import Type
from worldspec.dsl import nodes as n

__all__ = ["Local", "Scope", "Context", "RESERVED_NAMES"]

LocalKind = Literal["local", "param", "loop", "binding", "lambda", "quantifier"]

#: Methods and attributes of the generated environment: tools may not take these names.
RESERVED_NAMES = frozenset({
    "reset", "call", "tools", "snapshot", "restore", "state_hash", "diff", "score",
    "export_state", "load_state", "state", "clock", "rng", "world", "episode",
})


@dataclass
class Local:
    """A local name: its type, where it was bound, and whether it was read."""

    name: str
    type: Type
    kind: LocalKind
    node: n.Node
    used: bool = False

    @property
    def assignable(self) -> bool:
        return self.kind == "local"


@dataclass
class Context:
    """What the body being checked may do."""

    where: Literal["tool", "fn", "invariant", "check", "default", "solution", "data", "load"]
    returns: Type | None = None
    tool_name: str | None = None

    @property
    def may_change_state(self) -> bool:
        return self.where in ("tool", "load")

    @property
    def may_draw(self) -> bool:
        """``next()`` and random draws: allowed in tools and defaults only."""
        return self.where in ("tool", "default")


@dataclass
class Scope:
    """A stack of local frames plus the paths known not to be none."""

    frames: list[dict[str, Local]] = field(default_factory=lambda: [{}])
    narrowed: set[str] = field(default_factory=set)
    all_locals: list[Local] = field(default_factory=list)

    def lookup(self, name: str) -> Local | None:
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        return None

    def define(self, local: Local) -> Local | None:
        """Bind ``local``; returns the earlier binding of the name if there is one."""
        previous = self.lookup(local.name)
        self.frames[-1][local.name] = local
        self.all_locals.append(local)
        return previous

    def push(self) -> None:
        self.frames.append({})

    def pop(self) -> None:
        self.frames.pop()

    def forget(self, path: str) -> None:
        """An assignment to ``path`` invalidates what was known about it and below it.

        A state item has two spellings, ``x`` and ``state.x``: what is known about either is
        forgotten (forgetting too much is safe; a local ``x`` beside the state item ``x`` only
        loses its narrowing)."""
        paths = [path, path.removeprefix("state.") if path.startswith("state.") else
                 "state." + path]
        for known in list(self.narrowed):
            if any(known == p or known.startswith(p + ".") or known.startswith(p + "[")
                   for p in paths):
                self.narrowed.discard(known)
