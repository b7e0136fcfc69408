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
invariant (the spec lacks a precondition), and counts calls and successes per
tool (:meth:`Report.coverage`). Every finding comes with the shortest call
sequence that reproduces it (delta debugging), replayed from its start state.

Each start state (a task's data, or the empty world) is loaded once per
exploration and every sequence from it starts from that episode rolled back by
its undo log, checked against the start's state hash (a mismatch, a change
made outside the log, loads it anew). Arguments are drawn from the values of
the start state, collected once, and from the values each successful call
returned or wrote (the fresh values of :class:`~worldspec.testing.sampling.Pools`),
so the state is never exported while exploring.
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from worldspec.runtime.episode import Episode, Row, Snapshot, StateBase, Table, ToolSpec
from worldspec.runtime.values import export_value
from worldspec.testing.properties import check_call
from worldspec.testing.sampling import Pools, sample

__all__ = ["Call", "Finding", "Reached", "Report", "Start", "draw_arguments", "explore",
           "format_call", "remember_results", "shrink", "start_pools"]

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
    #: every tool of the world, in declaration order (the rows of :meth:`coverage`)
    tools: list[str] = field(default_factory=list)

    def coverage(self) -> list[tuple[str, int, int]]:
        """``(tool, calls, succeeded)`` for every tool, called or not, in declaration
        order (tools the report does not list come last, by name)."""
        names = list(self.tools) + sorted(set(self.per_tool) - set(self.tools))
        return [(name, self.per_tool[name], self.succeeded[name]) for name in names]

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


#: at most this many strings, and as many numbers, are collected from a start state
_POOL_LIMIT = 50_000
#: at most this many strings, and as many numbers, are taken from one call's result and
#: the rows it changed
_FRESH_LIMIT = 200
#: of a collection in the non-table state that a call set, the values of this many last items
#: are taken
_TAIL = 8
#: at most this many start states are kept loaded at once (the least recently used goes)
_STARTS_KEPT = 16


def _walk(value: Any, strings: dict[str, None], numbers: dict[float, None], limit: int
          ) -> None:
    """Collect the distinct strings and numbers of plain JSON data (to depth 6, breadth
    first, until ``limit`` of each kind), in the order met."""
    level = [value]
    for _ in range(7):
        deeper: list[Any] = []
        for item in level:
            kind = type(item)
            if kind is str:
                if len(strings) < limit:
                    strings[item] = None
            elif kind is dict:
                deeper.extend(item.values())
            elif kind is list or kind is tuple:
                deeper.extend(item)
            elif (kind is int or kind is float) and len(numbers) < limit:
                numbers[item] = None
        if not deeper or (len(strings) >= limit and len(numbers) >= limit):
            return
        level = deeper


def _pools(episode: Episode, data: Mapping[str, Any] | None = None) -> Pools:
    """The values of a start state, collected once: from the data it was loaded from, which
    is plain JSON already, and the non-table state (its defaults); or, without ``data``, from
    the whole state exported."""
    strings: dict[str, None] = {}
    numbers: dict[float, None] = {}
    if data is None:
        _walk(episode.export_state(), strings, numbers, _POOL_LIMIT)
    else:
        _walk(episode.state.export(), strings, numbers, _POOL_LIMIT)
        _walk(dict(data), strings, numbers, _POOL_LIMIT)
    return Pools(sorted(strings), sorted(numbers))


def _changed(episode: Episode, mark: int) -> Iterable[Any]:
    """What the last call wrote, as plain data: the rows it changed or inserted and the new
    values of the state items it set (from its undo-log entries after ``mark``)."""
    seen: set[int] = set()
    for entry in episode._undo[mark:]:
        kind, target = entry[0], entry[1]
        if (kind == 0 or kind == 3) and isinstance(target, Row):  # fields of a row set
            if id(target) not in seen:
                seen.add(id(target))
                yield target.export()
        elif kind == 0 and isinstance(target, StateBase):
            yield export_value(_tail(getattr(target, entry[2])))
        elif kind == 1 and isinstance(target, Table):
            row = target.rows.get(entry[2])
            if row is not None and id(row) not in seen:
                seen.add(id(row))
                yield row.export()


def _tail(value: Any) -> Any:
    """The end of a collection a call set (where ``append`` and a new map key put what it
    added); any other value as it is."""
    if isinstance(value, tuple) and len(value) > _TAIL:
        return value[-_TAIL:]
    if isinstance(value, dict) and len(value) > _TAIL:
        return dict(list(value.items())[-_TAIL:])
    return value


def _refresh(pools: Pools, episode: Episode, mark: int) -> None:
    """Add what a successful call returned and wrote to the fresh values."""
    strings: dict[str, None] = {}
    numbers: dict[float, None] = {}
    _walk(episode.last_value, strings, numbers, _FRESH_LIMIT)
    for data in _changed(episode, mark):
        _walk(data, strings, numbers, _FRESH_LIMIT)
    pools.add(list(strings), list(numbers))


def _enum_words(world: type[Episode]) -> list[str]:
    """Every string an ``enum`` of the world's tool schemas (parameters and results) names."""
    words: set[str] = set()

    def walk(schema: Any) -> None:
        if isinstance(schema, dict):
            for value in schema.get("enum", ()):
                if isinstance(value, str):
                    words.add(value)
            for value in schema.values():
                walk(value)
        elif isinstance(schema, list):
            for value in schema:
                walk(value)

    for spec in world.TOOLS.values():
        for param in spec.params:
            walk(param.schema)
        walk(spec.returns)
    return sorted(words)


class _Keys:
    """The row keys of each table, as tuples to draw from, kept while no row comes or goes."""

    def __init__(self, episode: Episode) -> None:
        self.episode = episode
        self.keys: dict[str, tuple[Any, ...]] = {}

    def of(self, table: str) -> tuple[Any, ...]:
        found = self.keys.get(table)
        if found is None:
            found = self.keys[table] = self.episode.tables[table].keys()
        return found

    def after_call(self, mark: int) -> None:
        """Forget the keys of tables the last call inserted into or deleted from."""
        if self.keys:
            for entry in self.episode._undo[mark:]:
                if (entry[0] == 1 or entry[0] == 2) and isinstance(entry[1], Table):
                    self.keys.pop(entry[1].name, None)


def _arguments(spec: ToolSpec, episode: Episode, rng: random.Random, pools: Pools,
               keys: _Keys | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for param in spec.params:
        table = param.table
        if table and rng.random() < 0.85:
            rows = episode.tables[table].rows
            fresh = [s for s in pools.fresh_strings if s in rows] if pools.fresh_strings else []
            if fresh and rng.random() < 0.5:  # a key the last calls returned or wrote
                args[param.name] = rng.choice(fresh)
                continue
            choices = keys.of(table) if keys is not None else episode.tables[table].keys()
            if choices:
                args[param.name] = rng.choice(choices)
                continue
        args[param.name] = sample(param.schema, rng, pools)
    return args


def start_pools(world: type[Episode], episode: Episode, data: Mapping[str, Any]) -> Pools:
    """The values of a start state to draw arguments from, collected as the explorer does
    (with the world's enum words as hints); :meth:`Pools.fork` gives one per sequence."""
    pools = _pools(episode, data)
    pools.hints = _enum_words(world)
    return pools


def draw_arguments(spec: ToolSpec, episode: Episode, rng: random.Random, pools: Pools
                   ) -> dict[str, Any]:
    """Well-formed arguments for one call of ``spec``, drawn as the explorer draws them."""
    return _arguments(spec, episode, rng, pools)


#: a number as a tool's error message says it ("Bill B0002 is for 41.30; pay that amount.")
_NUMBER_IN_TEXT = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def hear_error(pools: Pools, message: str) -> list[float]:
    """Add the numbers a failed call's message names to the fresh values and return them,
    as an agent that reads the error tries again with them (the amount a bill is for)."""
    numbers = [float(x) for x in _NUMBER_IN_TEXT.findall(message)[:_FRESH_LIMIT]]
    if numbers:
        pools.add([], numbers)
    return numbers


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _corrected(args: Mapping[str, Any], numbers: Sequence[float], rng: random.Random
               ) -> dict[str, Any]:
    """A failed call's arguments again, each number replaced by one its error named (an
    integer where the argument was one and the number is whole)."""
    fixed = dict(args)
    for name, value in args.items():
        if _is_number(value):
            number = rng.choice(numbers)
            whole = isinstance(value, int) and float(number).is_integer()
            fixed[name] = int(number) if whole else number
    return fixed


def remember_results(pools: Pools, episode: Episode, mark: int) -> None:
    """Add what the last call returned and wrote (undo-log entries after ``mark``) to the
    fresh values of ``pools``, as the explorer does after a successful call."""
    _refresh(pools, episode, mark)


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


@dataclass(frozen=True)
class Reached:
    """A start state reached by calls: data, then these calls (say, a task's solution so far).

    An exported state has neither the world's clock nor its random generator, so an episode
    loaded from one runs at the configured time, before the rows those calls stamped with a
    later ``now`` — a state no agent can reach. A start given this way runs the calls instead,
    and the findings from it list them first, so each replays from ``data`` alone."""

    data: Mapping[str, Any]
    calls: tuple[Call, ...]


#: A start state: data to load, or data and the calls that lead on from it.
Start = Mapping[str, Any] | Reached


class _Start:
    """One start state, loaded once: the episode every sequence from it runs on, its state
    hash, whether its invariants hold, and the values in it."""

    def __init__(self, world: type[Episode], source: Start, seed: int) -> None:
        self.world = world
        self.source = source
        self.prefix: tuple[Call, ...] = source.calls if isinstance(source, Reached) else ()
        data = source.data if isinstance(source, Reached) else source
        self.data = data
        self.seed = seed
        self.episode = world(data=data, seed=seed)
        self.snap: Snapshot | None = None
        if self.prefix:
            for name, args in self.prefix:
                self.episode.call(name, dict(args))
            self.snap = self.episode.snapshot()
        self.hash = self.episode.state_hash()
        self.clean = self.episode.invariant_problem() is None
        self.pools = _pools(self.episode, data)
        self.pools.hints = _enum_words(world)

    def fresh(self) -> Episode:
        """The episode back in the start state: rolled back by its undo log, or loaded anew
        when that does not give the start's state hash (a change made outside the log)."""
        episode = self.episode
        if self.snap is not None:
            episode.restore(self.snap)
            return episode
        episode.reset(data=self.data, seed=self.seed)
        if episode.state_hash() != self.hash:
            episode = self.episode = self.world(data=self.data, seed=self.seed)
        return episode


def _run(start: _Start, calls: Sequence[Call]) -> tuple[Episode, Finding | None]:
    """Replay ``calls`` from the start state checking every property; the first failure
    wins."""
    episode = start.fresh()
    world = start.world
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


def shrink(world: type[Episode], start: Start, finding: Finding,
           seed: int, budget: int = 400) -> Finding:
    """The shortest sub-sequence of ``finding.calls`` that still shows the same finding (the
    calls after a :class:`Reached` start's own)."""
    return _shrink(_Start(world, start, seed), finding, budget)


def _shrink(start: _Start, finding: Finding, budget: int = 400) -> Finding:
    calls = list(finding.calls)
    best = finding

    def reproduces(candidate: list[Call]) -> Finding | None:
        _, found = _run(start, candidate)
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
            starts: Sequence[Start] | None = None,
            on_finding: Callable[[Finding], None] | None = None) -> Report:
    """Explore ``world`` with random call sequences from each start state."""
    if starts is None:
        starts = [task.data for task in world.TASKS.values()] + [{}]
    report = Report(world.WORLD, tools=list(world.TOOLS))
    found: dict[tuple[str, str], Finding] = {}
    errors: dict[str, Counter[str]] = {name: Counter() for name in world.TOOLS}
    tools = list(world.TOOLS.values())
    loaded: OrderedDict[int, _Start] = OrderedDict()  # by the identity of the start's data
    clock = time.perf_counter()
    for example in range(max_examples):
        if not tools:
            break
        rng = random.Random(seed * 1_000_003 + example)
        data = starts[example % len(starts)]
        start = loaded.get(id(data))
        if start is None or start.source is not data:
            start = loaded[id(data)] = _Start(world, data, seed)
            if len(loaded) > _STARTS_KEPT:
                loaded.popitem(last=False)
        loaded.move_to_end(id(data))
        episode = start.fresh()
        pools = start.pools.fork()
        keys = _Keys(episode)
        calls: list[Call] = []
        failed: Finding | None = None
        hit = False
        before = start.hash
        # the state (undo-log length and clock) whose invariants were last checked in full
        checked = (0, episode.clock) if start.clean else None
        retry: tuple[ToolSpec, dict[str, Any], list[float]] | None = None
        for step in range(steps):
            if retry is not None and rng.random() < 0.5:
                spec, args = retry[0], _corrected(retry[1], retry[2], rng)
            else:
                spec = rng.choice(tools)
                args = _arguments(spec, episode, rng, pools, keys)
                if rng.random() < 0.1:
                    args = _malformed(spec, args, rng)
            retry = None
            calls.append((spec.name, args))
            report.calls += 1
            report.per_tool[spec.name] += 1
            mark = len(episode._undo)
            episode.call(spec.name, args)
            error = episode.last_error
            if error is None:
                report.succeeded[spec.name] += 1
                if len(episode._undo) > mark:
                    keys.after_call(mark)
                _refresh(pools, episode, mark)
            else:
                errors[spec.name][error.message] += 1
                heard = hear_error(pools, error.message)
                if heard and any(_is_number(value) for value in args.values()):
                    retry = (spec, args, heard)
            # every few calls, every invariant over the whole state, unless nothing changed
            # since the last such check (a failed call changes nothing; a hit is replayed
            # with full checks anyway)
            state = (len(episode._undo), episode.clock)
            full = (step % 5 == 4 or step == steps - 1) and state != checked
            if check_call(episode, spec, args, before, full_invariants=full) is not None:
                hit = True
                _, failed = _run(start, calls)
                break
            if full:
                checked = state
            before = episode.state_hash()
        if not hit:
            final = before
            replay = start.fresh()
            for name, args in calls:
                replay.call(name, args)
            if replay.state_hash() != final:
                failed = Finding("replay differs", calls[-1][0] if calls else "",
                                 "replaying the same calls gave another state", calls)
        report.examples += 1
        if failed is not None and failed.key() not in found:
            small = _shrink(start, failed)
            if start.prefix:
                small = replace(small, calls=list(start.prefix) + small.calls)
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
