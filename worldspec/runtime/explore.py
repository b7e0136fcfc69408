"""Property exploration of a compiled world: random tool-call sequences, checked and shrunk.

The explorer drives an episode with seeded random calls drawn from the
tools' own JSON schemas (and from keys and values already in the state),
and after every call checks the properties every world must have:

- a call that fails leaves the state exactly as it was (same state hash);
- a read-only tool changes nothing;
- every invariant and reference holds (checked in full, not incrementally);
- arguments the schema accepts are never rejected as malformed, and
  arguments it rejects always are (the schema and the dispatcher agree);
- a successful result matches the tool's declared result schema;
- replaying the same calls on a fresh episode gives the same state hash.

It also reports tools that never succeed and tools whose calls break an
invariant (the spec lacks a precondition). Every finding comes with the
shortest call sequence that reproduces it (delta debugging).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from worldspec.runtime.episode import Episode, ToolSpec
from worldspec.runtime.properties import check_call
from worldspec.runtime.sampling import Pools, sample

__all__ = ["Call", "Finding", "Report", "explore", "shrink", "format_call"]

Call = tuple[str, dict[str, Any]]


@dataclass
class Finding:
    """A property that failed, with the shortest call sequence found that shows it."""

    kind: str
    tool: str
    message: str
    calls: list[Call]
    where: str = ""
    #: "problem" (a property broke) or "note" (worth a look: random calls never got a tool
    #: past its preconditions, which may be a precondition that can never hold)
    severity: str = "problem"

    def key(self) -> tuple[str, str]:
        return (self.kind, self.tool)


@dataclass
class Report:
    """What exploring one world found."""

    world: str
    examples: int = 0
    calls: int = 0
    seconds: float = 0.0
    per_tool: Counter[str] = field(default_factory=Counter)
    succeeded: Counter[str] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "problem"]

    @property
    def calls_per_second(self) -> float:
        return self.calls / self.seconds if self.seconds > 0 else 0.0


def format_call(call: Call) -> str:
    """``send_message(recipient: "U001", body: "hi")`` — a call in spec terms."""
    import json

    name, args = call
    inner = ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return f"{name}({inner})"


def _pools(episode: Episode) -> Pools:
    strings: list[str] = []
    numbers: list[float] = []

    def walk(value: Any, depth: int) -> None:
        if depth > 6 or len(strings) > 400:
            return
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            numbers.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item, depth + 1)
        elif isinstance(value, list):
            for item in value:
                walk(item, depth + 1)

    walk(episode.export_state(), 0)
    return Pools(sorted(set(strings)), sorted(set(numbers)))


def _arguments(spec: ToolSpec, episode: Episode, rng: random.Random, pools: Pools
               ) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for param in spec.params:
        table = param.table
        if table and rng.random() < 0.85:
            keys = episode.tables[table].keys()
            if keys:
                args[param.name] = rng.choice(keys)
                continue
        args[param.name] = sample(param.schema, rng, pools)
    return args


def _malformed(spec: ToolSpec, args: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Arguments the schema rejects: a missing, extra or wrongly typed argument."""
    broken = dict(args)
    required = [p for p in spec.params if p.required]
    roll = rng.random()
    if required and roll < 0.4:
        del broken[rng.choice(required).name]
    elif spec.params and roll < 0.8:
        param = rng.choice(spec.params)
        broken[param.name] = rng.choice([[], {"x": 1}, 3.5, True, "x" * 3]
                                        if param.schema.get("type") != "string" else [[], 7])
    else:
        broken["unexpected_argument"] = 1
    return broken


def _run(world: type[Episode], start: Mapping[str, Any], calls: Sequence[Call],
         seed: int) -> tuple[Episode, Finding | None]:
    """Replay ``calls`` from ``start`` checking every property; the first failure wins."""
    episode = world(data=start, seed=seed)
    done: list[Call] = []
    for name, args in calls:
        spec = world.TOOLS.get(name)
        if spec is None:
            continue
        before = episode.state_hash()
        episode.call(name, args)
        done.append((name, args))
        broken = check_call(episode, spec, args, before)
        if broken is not None:
            return episode, Finding(broken.kind, broken.tool, broken.message, list(done),
                                    broken.where)
    return episode, None


def shrink(world: type[Episode], start: Mapping[str, Any], finding: Finding,
           seed: int, budget: int = 400) -> Finding:
    """The shortest sub-sequence of ``finding.calls`` that still shows the same finding."""
    calls = list(finding.calls)
    best = finding

    def reproduces(candidate: list[Call]) -> Finding | None:
        _, found = _run(world, start, candidate, seed)
        return found if found is not None and found.key() == finding.key() else None

    changed = True
    tries = 0
    while changed and tries < budget:
        changed = False
        chunk = max(1, len(calls) // 2)
        while chunk >= 1 and tries < budget:
            i = 0
            while i < len(calls) and tries < budget:
                candidate = calls[:i] + calls[i + chunk:]
                tries += 1
                found = reproduces(candidate) if candidate else None
                if found is not None:
                    calls = found.calls
                    best = found
                    changed = True
                else:
                    i += chunk
            chunk //= 2
    return best


def explore(world: type[Episode], *, max_examples: int = 100, steps: int = 40, seed: int = 0,
            starts: Sequence[Mapping[str, Any]] | None = None,
            on_finding: Callable[[Finding], None] | None = None) -> Report:
    """Explore ``world`` with random call sequences from each start state."""
    if starts is None:
        starts = [task.data for task in world.TASKS.values()] + [{}]
    report = Report(world.WORLD)
    found: dict[tuple[str, str], Finding] = {}
    errors: dict[str, Counter[str]] = {name: Counter() for name in world.TOOLS}
    tools = list(world.TOOLS.values())
    clock = time.perf_counter()
    for example in range(max_examples):
        if not tools:
            break
        rng = random.Random(seed * 1_000_003 + example)
        start = starts[example % len(starts)]
        episode = world(data=start, seed=seed)
        calls: list[Call] = []
        pools = _pools(episode)
        failed: Finding | None = None
        for step in range(steps):
            if step % 16 == 15:
                pools = _pools(episode)
            spec = rng.choice(tools)
            args = _arguments(spec, episode, rng, pools)
            if rng.random() < 0.1:
                args = _malformed(spec, args, rng)
            calls.append((spec.name, args))
            report.calls += 1
            report.per_tool[spec.name] += 1
            before = episode.state_hash()
            episode.call(spec.name, args)
            error = episode.last_error
            if error is None:
                report.succeeded[spec.name] += 1
            else:
                errors[spec.name][error.message] += 1
            full = step % 5 == 4 or step == steps - 1
            if check_call(episode, spec, args, before, full_invariants=full) is not None:
                _, failed = _run(world, start, calls, seed)
                break
        if failed is None:
            replay = world(data=start, seed=seed)
            for name, args in calls:
                replay.call(name, args)
            if replay.state_hash() != episode.state_hash():
                failed = Finding("replay differs", calls[-1][0] if calls else "",
                                 "replaying the same calls gave another state", calls)
        report.examples += 1
        if failed is not None and failed.key() not in found:
            small = shrink(world, start, failed, seed)
            found[small.key()] = small
            if on_finding is not None:
                on_finding(small)
    for name, spec in world.TOOLS.items():
        if report.per_tool[name] >= 20 and report.succeeded[name] == 0:
            common = errors[name].most_common(1)
            message = common[0][0] if common else "?"
            found[("never succeeds", name)] = Finding(
                "never succeeds", name,
                f"{name} failed all {report.per_tool[name]} calls, most often with: {message}",
                [], spec.where, severity="note")
    report.seconds = time.perf_counter() - clock
    report.findings = sorted(found.values(), key=lambda f: (f.kind, f.tool))
    return report
