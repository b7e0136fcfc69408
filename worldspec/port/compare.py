"""The differential test: an original Python class against a compiled world, call for call.

Both sides start from the same data: the original in a :class:`~worldspec.port.sandbox.Sandbox`
(built by its load method, see :class:`Original`), the world as ``World(data=..., seed=...)``.
Hypothesis runs the examples, each one call sequence drawn from a seed it draws (the calls
themselves come from a plain ``random.Random``, uniformly over tools and values: hypothesis'
own draws lean so hard on first choices and boundaries that whole tools went untried). Both
sides get the same sequence: a tool of the world, then arguments drawn from the tool's JSON
schema and from the values already in either state (row keys, strings, numbers), and now and
then arguments the schema refuses (a missing or an unexpected argument, or one parameter
given a value of a JSON type its schema refuses).
After every call the two are compared:

- **the result**: the original's return value must equal the world's result as the
  world's result convention shapes it (``{"success": ..., "data": ...}``, BFCL's bare
  result or ``{"error": ...}``, tau2's text). An exception in the original must be a failed
  call of the world with exactly the exception's text as its message;
- **the public state**: ``vars(obj)`` without ``_`` names must equal the world's public
  state (:func:`world_state`), state item by state item. A table is compared with a dict of
  dicts keyed by row key (the key field left out of each row when the original's rows lack
  it) or with a list of rows.

Values are compared exactly (:mod:`worldspec.port.exact`): an int and a float differ (1 vs
1.0), tuples and lists differ, sets are compared as sets, dict keys keep their type ("1" and
1 are different keys); a value with no JSON form (an object) is compared by its repr().
Only where the original itself does not determine a value's order is it compared up to
order (:mod:`worldspec.port.hash_order`): when a result or a state item differs, but agrees
up to order, the original runs the sequence again under other hash seeds
(``PYTHONHASHSEED``); if its value at that call changes, the call agrees (counted in
:attr:`CompareReport.hash_ordered`) and the sequence goes on. A difference that remains
where the original's value changes with the hash seed says so (the items differ, not only
their order). This costs only at differences: a sequence that agrees exactly runs once.

To a world, ``null`` for an argument with a default means the default; the test leaves such
an argument out rather than sending ``null`` (the original would see ``None``). Arguments the
world's schema refuses must be refused by the world; the original agrees when
it raises, returns a failure or cannot bind them. When it accepts them anyway (or refuses
them after changing its state) the world is stricter than the original there: a *note*, not
a difference, and the sequence ends. Where both refuse a value of the wrong type for one
parameter, but with other texts, that is a note as well (``refused_otherwise``): the text a
parameter's ``else`` message could give. A world with ``config { arguments: dynamic }`` takes
values of any JSON type, as the original does: such calls are compared as any other.

Every difference is shrunk by delta debugging (replaying ever shorter sub-sequences on both
sides) to the shortest call sequence that still shows it; up to
``max_differences`` distinct ones (by kind and tool) are collected, each from its own search.
The sequences run for each of ``seed_count`` test seeds on each initial data set
(:meth:`Original.data_sets`). A comparison *agrees* when all of them found nothing, the
initial states are equal and both sides have the same tools, and, where ``confirm`` asks for
it, ``confirm`` more sequences per data set with a fresh seed found nothing either.

The original is untrusted: a call that does not return in time, or that exhausts memory or
CPU, stops its child process; that is reported as a difference of kind ``original
stopped`` (not shrunk, so that a runaway call is not run again and again) and the search
ends there: the sequence that stopped it is the report.
"""

from __future__ import annotations

import copy
import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from worldspec.port import PORT_CONFIRM
from worldspec.port.exact import agree, encoded, shown, world_value
from worldspec.port.hash_order import HASH_ORDER_NOTE, HASH_SEEDS, agree_up_to_order
from worldspec.port.sandbox import (
    ISOLATION,
    CallOutcome,
    Limits,
    Sandbox,
    SandboxError,
    SandboxStopped,
)
from worldspec.runtime.episode import Episode, ParamSpec, ToolSpec

__all__ = ["PORT_CONFIRM", "RECURSION_TEXT", "CallRecord", "CompareOptions", "CompareReport",
           "Difference", "Original", "compare", "comparable_state", "error_text", "format_call",
           "world_result", "world_state"]


Call = tuple[str, dict[str, Any]]


def format_call(call: Call) -> str:
    """``send_message(receiver_id: "USR002", message: "hi")``."""
    name, args = call
    inner = ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return f"{name}({inner})"


@dataclass(frozen=True)
class Original:
    """The class under test and how it is built.

    ``load`` is ``"auto"`` (``_load_scenario(data)`` when the class has it, else
    ``cls(data)`` when the constructor takes an argument, else each key set as an
    attribute), a method name (called with the data), ``"__init__"``, ``"attributes"`` or
    ``None`` (``cls()`` and nothing else). ``seed_key`` names a key of the data that is the
    world's episode seed rather than state (BFCL's ``random_seed``).
    """

    file: Path
    class_name: str
    data: Mapping[str, Any] | None = None
    load: str | None = "auto"
    seed_key: str | None = None
    #: state names left out of the comparison on both sides
    ignore: tuple[str, ...] = ()
    #: every initial data set to compare on, each ``(its file's name, the data)``; when
    #: given, ``data`` is not used (each is taken in turn)
    init_data_files: tuple[tuple[str, Mapping[str, Any]], ...] = ()

    def data_sets(self) -> list[tuple[str, Mapping[str, Any] | None]]:
        """``(name, data)`` of each initial data set the comparison runs on."""
        if self.init_data_files:
            return list(self.init_data_files)
        return [("", self.data)]

    #: the interpreter that runs it (one with its dependencies), or None: worldspec's own
    python: str | None = None
    #: the root of the package it belongs to, or None: found from its ``__init__.py`` folders
    package_root: Path | None = None

    def sandbox(self, limits: Limits, trusted: bool, data: Any = None,
                hash_seed: int = 0) -> Sandbox:
        """A sandbox for it (``data``: other initial data than its own; ``hash_seed``: the
        interpreter's ``PYTHONHASHSEED``)."""
        chosen = self.data if data is None else data
        return Sandbox(self.file, self.class_name, load=self.load,
                       data=copy.deepcopy(dict(chosen)) if chosen is not None else None,
                       limits=limits, trusted=trusted, python=self.python,
                       package_root=self.package_root, hash_seed=hash_seed)

    def world_data(self) -> tuple[dict[str, Any], int | None]:
        """The world's initial data and seed from the original's data."""
        data = copy.deepcopy(dict(self.data or {}))
        seed = data.pop(self.seed_key, None) if self.seed_key else None
        for name in self.ignore:
            data.pop(name, None)
        return data, seed if isinstance(seed, int) and not isinstance(seed, bool) else None


@dataclass(frozen=True)
class CompareOptions:
    """How hard to look."""

    #: random sequences per test seed and initial data set
    examples: int = 100
    steps: int = 20
    #: the first test seed; ``seed_count`` seeds from it are used (``seed``, ``seed + 1``, ...)
    seed: int = 0
    seed_count: int = 3
    #: once every sequence agreed, this many more with a fresh seed (``seed + seed_count``),
    #: per initial data set, before the comparison agrees (0: no confirmation)
    confirm: int = 0
    #: the share of calls with arguments the schema refuses
    invalid: float = 0.1
    max_differences: int = 3
    limits: Limits = field(default_factory=Limits)
    #: run the original without the operating-system sandbox (its code is trusted); without
    #: it, a machine that cannot confine the original refuses to run it
    trusted_original: bool = False

    @classmethod
    def for_port(cls) -> CompareOptions:
        """The options ``worldspec port`` accepts a world with: confirmed on
        :data:`PORT_CONFIRM` fresh sequences."""
        return cls(confirm=PORT_CONFIRM)

    def seeds(self) -> list[int]:
        return [self.seed + i for i in range(max(1, self.seed_count))]

    def confirm_seed(self) -> int:
        """The confirmation's seed: one the first stage did not use."""
        return self.seed + max(1, self.seed_count)


@dataclass(frozen=True)
class CallRecord:
    """One call of a difference's sequence, with what each side answered."""

    call: Call
    original: Any
    world: Any

    def to_json(self) -> dict[str, Any]:
        return {"call": format_call(self.call), "tool": self.call[0],
                "arguments": self.call[1], "original": encoded(self.original),
                "world": encoded(self.world)}


@dataclass
class Difference:
    """Where the two disagree, with the shortest call sequence found that shows it."""

    kind: str
    tool: str
    message: str
    calls: list[CallRecord] = field(default_factory=list)
    #: the initial data set it shows on (its file's name; "" when there is one, unnamed)
    data_file: str = ""
    #: found by the confirmation on fresh sequences, after every first sequence agreed
    in_confirmation: bool = False
    #: the original's order of the differing value varies with the hash seed (its items
    #: differ even up to order: see :mod:`worldspec.port.hash_order`)
    order_left_to_hash: bool = False
    #: the value that differs at the last call (``("result", "")`` or ``("state", name)``)
    #: and the original's value there, where the two could be compared up to order
    spot: tuple[str, str] | None = field(default=None, repr=False, compare=False)
    reference: Any = field(default=None, repr=False, compare=False)

    def key(self) -> tuple[str, str]:
        return (self.kind, self.tool)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "tool": self.tool, "message": self.message,
                "data_file": self.data_file, "in_confirmation": self.in_confirmation,
                "order_left_to_hash": self.order_left_to_hash,
                "calls": [c.to_json() for c in self.calls]}

    def render(self) -> str:
        where = f" (data {self.data_file})" if self.data_file else ""
        found = " (found by the confirmation)" if self.in_confirmation else ""
        lines = [f"{self.kind} in {self.tool or '(start)'}{where}{found}: {self.message}"]
        lines += [f"    {i}. {format_call(c.call)}" for i, c in enumerate(self.calls, 1)]
        return "\n".join(lines)


@dataclass
class CompareReport:
    """What the differential test found."""

    world: str
    class_name: str
    tools: list[str] = field(default_factory=list)
    #: public methods of the class that the world has no tool for, and the reverse
    missing_in_world: list[str] = field(default_factory=list)
    missing_in_original: list[str] = field(default_factory=list)
    examples: int = 0
    calls: int = 0
    seconds: float = 0.0
    differences: list[Difference] = field(default_factory=list)
    #: per tool, calls with arguments the world refuses by its schema that the original took
    #: (or refused after changing its state): each ended its sequence
    lenient: dict[str, int] = field(default_factory=dict)
    #: per ``tool(parameter)``, calls with a value of the wrong type for that one parameter
    #: that both sides refused, but with different texts (how many, and the first one seen)
    refused_otherwise: dict[str, tuple[int, CallRecord]] = field(default_factory=dict)
    #: the original could not be loaded at all (the comparison did not run)
    load_error: str = ""
    #: the test seeds and the initial data sets (their files' names) the sequences ran with
    seeds: list[int] = field(default_factory=list)
    data_files: list[str] = field(default_factory=list)
    #: the confirmation asked for (fresh sequences per data set), its seed, and the fresh
    #: sequences it ran (all of them: the confirmation passed)
    confirm: int = 0
    confirm_seed: int | None = None
    confirmed: int = 0
    #: how the call sequences are kept apart on the original's side
    isolation: str = ISOLATION
    #: calls whose value differed only in an order the original leaves to the hash seed
    #: (compared up to order, and agreeing so: see :mod:`worldspec.port.hash_order`)
    hash_ordered: int = 0

    @property
    def agrees(self) -> bool:
        return not (self.differences or self.missing_in_world or self.missing_in_original
                    or self.load_error) and (self.confirm == 0 or self.confirmed > 0)

    def agrees_so_far(self) -> bool:
        """Whether nothing differs (the confirmation aside)."""
        return not (self.differences or self.missing_in_world or self.missing_in_original
                    or self.load_error)

    def coverage(self) -> str:
        """``compared 300 sequence(s): seed(s) 0, 1, 2, each on 1 data set``."""
        files = len(self.data_files) or 1
        text = (f"compared {self.examples:,} sequence(s): seed(s) "
                f"{', '.join(map(str, self.seeds))}, each on {files} data set(s)")
        if self.confirmed and self.agrees:
            text += (f"; confirmed on {self.confirmed:,} fresh sequences (seed "
                     f"{self.confirm_seed}, on {files} data set(s))")
        elif self.confirmed:
            text += (f"; the confirmation (seed {self.confirm_seed}) found a difference in "
                     f"{self.confirmed:,} fresh sequence(s)")
        elif self.confirm:
            text += "; not confirmed (the first sequences did not agree)"
        return text

    def to_json(self) -> dict[str, Any]:
        return {"world": self.world, "class": self.class_name, "agrees": self.agrees,
                "tools": self.tools, "missing_in_world": self.missing_in_world,
                "missing_in_original": self.missing_in_original, "examples": self.examples,
                "calls": self.calls, "seconds": round(self.seconds, 3),
                "seeds": self.seeds, "data_files": self.data_files, "confirm": self.confirm,
                "confirm_seed": self.confirm_seed, "confirmed": self.confirmed,
                "coverage": self.coverage(),
                "differences": [d.to_json() for d in self.differences],
                "lenient_original": dict(sorted(self.lenient.items())),
                "refused_otherwise": {
                    name: {"calls": count, "example": record.to_json()}
                    for name, (count, record) in sorted(self.refused_otherwise.items())},
                "load_error": self.load_error, "isolation": self.isolation,
                "hash_ordered": self.hash_ordered}

    def render_text(self) -> str:
        if self.load_error:
            return f"compare {self.class_name} with {self.world}: {self.load_error}\n"
        verdict = "agree" if self.agrees else "differ"
        lines = [f"compare {self.class_name} with {self.world}: {verdict} — {len(self.tools)} "
                 f"tool(s), {self.examples + self.confirmed:,} sequence(s), {self.calls:,} "
                 f"call(s) compared in {self.seconds:.1f} s",
                 f"  {self.coverage()}", f"  isolation: {self.isolation}"]
        if self.missing_in_world:
            lines.append(f"  methods without a tool: {', '.join(self.missing_in_world)}")
        if self.missing_in_original:
            lines.append(f"  tools without a method: {', '.join(self.missing_in_original)}")
        for difference in self.differences:
            lines.append("  " + difference.render().replace("\n", "\n  "))
        if self.hash_ordered:
            lines.append(f"  note: {self.hash_ordered:,} call(s) whose order the original "
                         "leaves to the hash seed, compared up to order")
        for tool, count in sorted(self.lenient.items()):
            lines.append(f"  note: {tool}: {count} call(s) with arguments the world's schema "
                         "refuses were taken by the original, or changed its state")
        for name, (count, record) in sorted(self.refused_otherwise.items()):
            lines.append(f"  note: {name}: {count} call(s) with a value of the wrong type were "
                         f"refused by both with other texts, e.g. {format_call(record.call)}: "
                         f"the original {_short(record.original, 160)}, the world "
                         f"{_short(record.world, 160)}")
        return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ state
def _plain(value: Any) -> Any:
    """The world's value as JSON data (the values arguments are drawn from)."""
    return json.loads(json.dumps(value, ensure_ascii=False))


def world_state(episode: Episode) -> dict[str, Any]:
    """The world's public state as it holds it (:func:`~worldspec.port.exact.world_value`):
    the names ``export_state()`` gives, tables as lists of rows, maps with typed keys."""
    out: dict[str, Any] = {}
    for name, exported in episode.export_state().items():
        if name in episode.tables:
            out[name] = [world_value(row) for row in episode.tables[name].rows.values()]
        elif name in getattr(episode.state, "FIELDS", ()):
            out[name] = world_value(getattr(episode.state, name))
        else:
            out[name] = exported
    return out


def comparable_state(world: type[Episode], episode: Episode, theirs: Mapping[str, Any],
                     sets: frozenset[str], ignore: tuple[str, ...] = ()) -> dict[str, Any]:
    """The world's state in the original's terms (see the module docstring): a table as a
    dict of rows by row key where the original keeps a dict (the key field left out of each
    row when the original's rows lack it)."""
    out: dict[str, Any] = {}
    for name, value in world_state(episode).items():
        if name in ignore:
            continue
        their_value = theirs.get(name)
        if name in world.TABLES and isinstance(their_value, dict) and isinstance(value, list):
            key_field = _key_field(episode, name)
            rows: dict[Any, Any] = {}
            for key, row in zip(episode.tables[name].rows, value, strict=False):
                key = world_value(key)
                their_row = their_value.get(key) if _hashable(key) else None
                if isinstance(row, dict) and isinstance(their_row, dict) \
                        and key_field not in their_row:
                    row = {k: v for k, v in row.items() if k != key_field}
                rows[key] = row
            value = rows
        out[name] = value
    return out


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _key_field(episode: Episode, table: str) -> str | None:
    """The JSON name of a table's key field (None for an empty table: nothing to drop)."""
    for row in episode.tables[table].rows.values():
        attribute = getattr(type(row), "KEY", "")
        for entry in getattr(type(row), "JSON_FIELDS", ()):
            if entry[0] == attribute:
                return str(entry[1])
        break
    return None


def _state_problem(theirs: Mapping[str, Any], ours: Mapping[str, Any],
                   ignore: tuple[str, ...]) -> str | None:
    found = _state_difference(theirs, ours, ignore)
    return found[1] if found is not None else None


def _state_difference(theirs: Mapping[str, Any], ours: Mapping[str, Any],
                      ignore: tuple[str, ...],
                      excused: Callable[[str], bool] = lambda name: False
                      ) -> tuple[str, str] | None:
    """The first state item that differs and what differs (``""``: the names), or None;
    ``excused(name)`` may excuse an item whose values are not equal (asked only then)."""
    their_names = {k for k in theirs if k not in ignore}
    if their_names != set(ours):
        only_theirs = sorted(their_names - set(ours))
        only_ours = sorted(set(ours) - their_names)
        parts = []
        if only_theirs:
            parts.append(f"only in the original: {', '.join(only_theirs)}")
        if only_ours:
            parts.append(f"only in the world: {', '.join(only_ours)}")
        return "", "state names differ (" + "; ".join(parts) + ")"
    for name in sorted(ours):
        if not agree(theirs[name], ours[name]) and not excused(name):
            return name, (f"{name}: the original has {_short(theirs[name])}, the world "
                          f"{_short(ours[name])}")
    return None


def _short(value: Any, limit: int = 300) -> str:
    text = shown(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def world_result(episode: Episode, result: Any) -> Any:
    """A world's call result as the world holds it: a success of the bfcl or envscaler
    convention is its raw value (maps with typed keys); any other result is as returned."""
    cls = type(episode)
    if episode.last_error is not None or cls._success is not Episode._success \
            or cls.RESULTS not in ("bfcl", "envscaler"):
        return result
    value = world_value(episode._last_raw)
    return {"success": True, "data": value} if cls.RESULTS == "envscaler" else value


# --------------------------------------------------------------- strategies
def _pool(*states: Any) -> tuple[list[str], list[int], list[float]]:
    strings: set[str] = set()
    ints: set[int] = set()
    floats: set[float] = set()

    def walk(value: Any, depth: int) -> None:
        if depth > 6 or len(strings) > 300:
            return
        if isinstance(value, str):
            strings.add(value)
        elif isinstance(value, bool):
            return
        elif isinstance(value, int):
            ints.add(value)
        elif isinstance(value, float):
            floats.add(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(key, depth + 1)
                walk(item, depth + 1)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for item in value:
                walk(item, depth + 1)

    for state in states:
        walk(state, 0)
    return sorted(strings), sorted(ints), sorted(floats)


def _argument(param: ParamSpec, seen: tuple[list[str], list[int], list[float]],
              episode: Episode, rng: Any) -> Any:
    """An argument for ``param``: mostly a key or a value already in either state that fits
    the schema, else a fresh value from the schema (boundaries included)."""
    from worldspec.testing.sampling import Pools, sample

    strings, ints, floats = seen
    if param.table and rng.random() < 0.8:
        keys = episode.tables[param.table].keys()
        if keys:
            return rng.choice(keys)
    if rng.random() < 0.6:
        candidates = [v for v in [*strings, *ints, *(i + 1 for i in ints), *floats]
                      if _fits(v, param.schema)]
        if candidates:
            return rng.choice(candidates)
    return sample(param.schema, rng, Pools(strings, [*ints, *floats]))


def _fits(value: Any, schema: dict[str, Any]) -> bool:
    """Whether the schema takes ``value``, with JSON's types as the runtime reads them: a
    float is never an integer (``3.0`` is refused where an ``int`` is expected)."""
    from worldspec.testing.sampling import validate

    if isinstance(value, float) and _only_integers(schema):
        return False
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        if not all(_fits(v, schema["items"]) for v in value):
            return False
    return validate(value, schema)


def _only_integers(schema: dict[str, Any]) -> bool:
    if "anyOf" in schema:
        return all(_only_integers(o) or o.get("type") == "null" for o in schema["anyOf"])
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return "integer" in kinds and "number" not in kinds


#: values of every JSON type, for an argument of the wrong type
_WRONG_TYPES: tuple[Any, ...] = (7, 2.5, "x", True, None, [1], {"a": 1})


def _invalid(spec: ToolSpec, args: dict[str, Any], roll: int, rng: Any) -> dict[str, Any]:
    broken = dict(args)
    required = [p for p in spec.params if p.required]
    if roll == 0 and required:
        del broken[required[0].name]
    elif roll == 1 and spec.params:
        # one parameter, any of them, gets a value of a JSON type its schema refuses
        param = rng.choice(spec.params)
        wrong = [v for v in _WRONG_TYPES if not _fits(v, param.schema)]
        if wrong:
            broken[param.name] = rng.choice(wrong)
        else:
            broken["unexpected_argument"] = 1
    else:
        broken["unexpected_argument"] = 1
    return broken


# --------------------------------------------------------------- one search
class _Found(Exception):
    """A difference, raised inside a hypothesis example."""

    def __init__(self, difference: Difference) -> None:
        super().__init__(difference.message)
        self.difference = difference


@dataclass
class _Search:
    world: type[Episode]
    original: Original
    sandbox: Sandbox
    options: CompareOptions
    report: CompareReport
    tools: list[ToolSpec]
    known: set[tuple[str, str]]
    #: the hypothesis seed of this search
    seed: int = 0
    #: a search of the confirmation stage (its sequences count as confirmed)
    confirming: bool = False
    #: runs the original under other hash seeds (None: values are compared exactly only)
    probe: _HashProbe | None = None
    #: set once the original was stopped: every later example fails at once with it
    stopped: Difference | None = None
    last: Difference | None = None
    #: replaying a difference's calls to shrink it (its calls are not counted again)
    replaying: bool = False

    def run_example(self, data: Any) -> None:
        from hypothesis import strategies as st

        # hypothesis draws the seed of the sequence; the calls are drawn from a plain
        # Random, uniformly, so that every tool and argument is as likely as the next
        # (hypothesis' own draws lean hard on boundaries and first choices)
        rng = random.Random(data.draw(st.integers(0, 2**64 - 1), label="seed"))
        if self.stopped is not None:
            raise _Found(self.stopped)
        episode, theirs, _ = self._start()
        if self.confirming:
            self.report.confirmed += 1
        else:
            self.report.examples += 1
        done: list[CallRecord] = []
        for _ in range(rng.randint(1, self.options.steps)):
            spec = rng.choice(self.tools)
            seen = _pool(theirs, _plain(episode.export_state()))
            args: dict[str, Any] = {}
            for param in spec.params:
                if not param.required and rng.random() < 1 / 6:
                    continue
                value = _argument(param, seen, episode, rng)
                if value is None and not param.required:
                    continue  # to a world, null is "left out": leave it out for both
                args[param.name] = value
            if rng.random() < self.options.invalid:
                args = _invalid(spec, args, rng.randint(0, 2), rng)
            step = self._step(episode, (spec.name, args), done)
            if step is None:
                return
            theirs = step[0]

    def replay(self, calls: list[Call]) -> Difference | None:
        """The first difference ``calls`` show from the start, or None (for shrinking)."""
        self.replaying = True
        try:
            episode, _, _ = self._start()
            done: list[CallRecord] = []
            for call in calls:
                if call[0] not in self.world.TOOLS or self._step(episode, call, done) is None:
                    return None
        except (_Found, _Known):
            return self.last
        finally:
            self.replaying = False
        return None

    def note_hash_order(self, difference: Difference) -> None:
        """Say so in ``difference`` when the original's value that differs varies with the
        hash seed (its order is not compared: the items themselves differ)."""
        if difference.spot is None or self.probe is None or not difference.calls:
            return
        calls = [record.call for record in difference.calls]
        if self.probe.varies(calls, difference.spot, difference.reference):
            difference.order_left_to_hash = True
            difference.message += f" ({HASH_ORDER_NOTE})"

    def _left_to_hash(self, done: list[CallRecord], spot: tuple[str, str], reference: Any,
                      values: tuple[Any, Any] | None) -> bool:
        """Whether a value that differs at the last call of ``done`` is one whose order the
        original leaves to the hash seed, and the world's agrees with it up to order (not
        asked where a difference of this kind in this tool is reported already: the
        sequence ends there anyway)."""
        kind = "result" if spot == _RESULT else "state"
        if values is None or self.probe is None or (kind, done[-1].call[0]) in self.known \
                or not agree_up_to_order(*values):
            return False
        return self.probe.varies([record.call for record in done], spot, reference)

    def _start(self) -> tuple[Episode, dict[str, Any], frozenset[str]]:
        world_data, seed = self.original.world_data()
        try:
            loaded = self.sandbox.reset()
        except SandboxStopped as exc:
            self._stop(Difference("original stopped", "", exc.reason), [])
        return self.world(data=world_data, seed=seed), loaded.state, loaded.sets

    def _step(self, episode: Episode, call: Call, done: list[CallRecord]
              ) -> tuple[dict[str, Any], frozenset[str]] | None:
        """One call on both sides, compared; the original's state after it, or None when
        the sequence must end (the original took arguments the world refuses)."""
        name, args = call
        spec = self.world.TOOLS[name]
        try:
            outcome = self.sandbox.call(name, copy.deepcopy(args))
        except SandboxStopped as exc:
            self._stop(Difference("original stopped", name, exc.reason), done,
                       CallRecord(call, exc.reason, None))
        result = world_result(episode, episode.call(name, copy.deepcopy(args)))
        self.report.calls += 1
        done.append(CallRecord(call, _original_view(outcome), result))
        if not self._schema_accepts(spec, args, self.world.ARGUMENTS == "dynamic"):
            if not self._refused(outcome):
                self.report.lenient[name] = self.report.lenient.get(name, 0) + 1
                return None  # the states may part here by design: the sequence ends
            if episode.last_error is None:
                self._differ(Difference("result", name, "the world accepted arguments its "
                                        "own schema refuses"), done)
            ours = comparable_state(self.world, episode, outcome.state, outcome.sets,
                                    self.original.ignore)
            if _state_problem(outcome.state, ours, self.original.ignore) is not None:
                # the original changed its state on a call it refused, the world (by its
                # schema, before any statement) did not: by design, so the sequence ends
                self.report.lenient[name] = self.report.lenient.get(name, 0) + 1
                return None
            self._note_text(spec, args, episode, outcome, result, done[-1])
            return outcome.state, outcome.sets
        excused = False
        problem = self._result_problem(episode, outcome, result)
        if problem is not None:
            values = _result_values(episode, outcome, result)
            view = _original_view(outcome)
            if not self._left_to_hash(done, _RESULT, view, values):
                self._differ(Difference("result", name, problem,
                                        spot=_RESULT if values is not None else None,
                                        reference=view), done)
            excused = True
        ours = comparable_state(self.world, episode, outcome.state, outcome.sets,
                                self.original.ignore)

        def state_excused(item: str) -> bool:
            nonlocal excused
            spot = ("state", item)
            theirs = outcome.state[item]
            if self._left_to_hash(done, spot, theirs, (theirs, ours[item])):
                excused = True
                return True
            return False

        state = _state_difference(outcome.state, ours, self.original.ignore, state_excused)
        if state is not None:
            item, text = state
            self._differ(Difference("state", name, text,
                                    spot=("state", item) if item else None,
                                    reference=outcome.state.get(item)), done)
        if excused and not self.replaying:
            self.report.hash_ordered += 1
        return outcome.state, outcome.sets

    def _note_text(self, spec: ToolSpec, args: dict[str, Any], episode: Episode,
                   outcome: CallOutcome, result: Any, record: CallRecord) -> None:
        """Count a refused call whose one wrongly typed argument got another text than the
        original's (the text a parameter's ``else`` message could give)."""
        names = {p.name for p in spec.params}
        if outcome.unbound or set(args) - names \
                or any(p.required and p.name not in args for p in spec.params):
            return
        wrong = [p.name for p in spec.params if p.name in args and not _fits(args[p.name],
                                                                              p.schema)]
        if len(wrong) != 1 or self._result_problem(episode, outcome, result) is None:
            return
        key = f"{spec.name}({wrong[0]})"
        count, first = self.report.refused_otherwise.get(key, (0, record))
        self.report.refused_otherwise[key] = (count + 1, first)

    @staticmethod
    def _schema_accepts(spec: ToolSpec, args: dict[str, Any], dynamic: bool = False) -> bool:
        """Whether the world takes ``args`` by its schema: the names, and unless the world
        takes values of any JSON type (``arguments: dynamic``: such a call is compared as
        any other, result and state), the types."""
        names = {p.name for p in spec.params}
        if set(args) - names or any(p.required and p.name not in args for p in spec.params):
            return False
        return dynamic or all(_fits(args[p.name], p.schema) for p in spec.params if p.name in args)

    @staticmethod
    def _refused(outcome: CallOutcome) -> bool:
        """Whether the original refused a call: it raised, or answered with an error (a
        dict with ``"error"`` or ``"success": false``, or text starting with ``Error``)."""
        if outcome.raised:
            return True
        result = outcome.result
        if isinstance(result, dict):
            return result.get("success") is False or "error" in result
        return isinstance(result, str) and result.lower().startswith("error")

    @staticmethod
    def _result_problem(episode: Episode, outcome: CallOutcome, result: Any) -> str | None:
        error = episode.last_error
        if outcome.unbound:
            if error is None:
                return (f"the original cannot take these arguments ({outcome.error}) but the "
                        f"world's call succeeded with {_short(result)}")
            return None
        if outcome.raised:
            if error is None:
                return (f"the original raised {outcome.exception or 'an exception'}: "
                        f"{outcome.error!r}; the world's call succeeded with {_short(result)}")
            if error_text(error.message) != error_text(outcome.error):
                return (f"the original raised {outcome.error!r}; the world failed with "
                        f"{error.message!r}")
            return None
        if not agree(outcome.result, result):
            return (f"the original returned {_short(outcome.result)}, the world "
                    f"{_short(result)}")
        return None

    def _differ(self, difference: Difference, done: list[CallRecord]) -> None:
        difference.calls = list(done)
        self.last = difference
        if difference.key() in self.known:
            raise _Known()
        raise _Found(difference)

    def _stop(self, difference: Difference, done: list[CallRecord],
              last: CallRecord | None = None) -> Any:
        difference.calls = [*done, *([last] if last else [])]
        self.stopped = difference
        self.last = difference
        raise _Found(difference)


#: the common start of CPython's texts for a :class:`RecursionError`
RECURSION_TEXT = "maximum recursion depth exceeded"


def error_text(text: str) -> str:
    """An error text as the comparison reads it: exactly, except that CPython's
    :class:`RecursionError` texts are one text. The interpreter appends where it noticed the
    limit (" while calling a Python object", " in comparison", " while getting the repr of an
    object"): that follows its own call path, which a program does not determine (the same
    sequence can end either way after an earlier call), so only the common start is kept."""
    return RECURSION_TEXT if text.startswith(RECURSION_TEXT) else text


class _Known(Exception):
    """A difference already reported: the example ends without failing."""


#: the spot of a call's result (see :attr:`Difference.spot`)
_RESULT = ("result", "")


def _result_values(episode: Episode, outcome: CallOutcome, result: Any
                   ) -> tuple[Any, Any] | None:
    """The original's answer and the world's where both answered alike (both returned, or
    the original raised and the world failed: their texts), or None."""
    if outcome.unbound:
        return None
    if outcome.raised:
        error = episode.last_error
        return (outcome.error, error.message) if error is not None else None
    return outcome.result, result


def _spot_value(outcome: CallOutcome, spot: tuple[str, str]) -> Any:
    kind, name = spot
    return _original_view(outcome) if kind == "result" else outcome.state.get(name)


class _HashProbe:
    """The original run again under other hash seeds (:data:`HASH_SEEDS`), one sandbox a
    seed, started when first needed: does a value at the last call of a sequence change with
    the seed? Asked only where a value differs; each answer is kept. A sandbox goes on from
    the calls it ran last when the sequence asked about continues them (a sequence whose
    every call differs in order is run once under a seed, not once per call)."""

    def __init__(self, original: Original, options: CompareOptions) -> None:
        self.original = original
        self.options = options
        self.sandboxes: dict[int, Sandbox] = {}
        #: per seed, the calls its sandbox ran since its reset and the last one's outcome
        self.ran: dict[int, tuple[list[str], CallOutcome]] = {}
        self.answers: dict[str, bool] = {}

    def varies(self, calls: list[Call], spot: tuple[str, str], reference: Any) -> bool:
        """Whether the original's value at ``spot`` after ``calls`` is other than
        ``reference`` (its value under the sandbox's own seed) under some other seed."""
        key = json.dumps([spot, [_call_key(call) for call in calls]], ensure_ascii=False)
        if key not in self.answers:
            expected = shown(reference)
            self.answers[key] = any(
                value is not _NOTHING and shown(value) != expected
                for value in (self._value(seed, calls, spot) for seed in HASH_SEEDS))
        return self.answers[key]

    def _value(self, seed: int, calls: list[Call], spot: tuple[str, str]) -> Any:
        """The value at ``spot`` after ``calls`` under hash seed ``seed``; ``_NOTHING`` when
        the original could not run them there."""
        sandbox = self.sandboxes.get(seed)
        if sandbox is None:
            sandbox = self.original.sandbox(self.options.limits,
                                            self.options.trusted_original, hash_seed=seed)
            self.sandboxes[seed] = sandbox
        keys = [_call_key(call) for call in calls]
        ran, outcome = self.ran.pop(seed, ([], None))
        if not calls:
            return _NOTHING
        try:
            if ran != keys[:len(ran)] or not ran:
                sandbox.reset()
                ran, outcome = [], None
            for name, args in calls[len(ran):]:
                outcome = sandbox.call(name, copy.deepcopy(args))
        except (SandboxError, SandboxStopped):
            return _NOTHING
        if outcome is None:
            return _NOTHING
        self.ran[seed] = (keys, outcome)
        return _spot_value(outcome, spot)

    def close(self) -> None:
        for sandbox in self.sandboxes.values():
            sandbox.close()
        self.sandboxes.clear()


#: no value (the original could not run a sequence under another hash seed)
_NOTHING = object()


def _call_key(call: Call) -> str:
    """A call as text that tells ``1``, ``1.0`` and ``true`` apart."""
    name, args = call
    return json.dumps([name, encoded(args)], sort_keys=True, ensure_ascii=False)


def _original_view(outcome: CallOutcome) -> Any:
    if outcome.unbound:
        return {"cannot bind": outcome.error}
    if outcome.raised:
        return {"raised": outcome.exception or "Exception", "message": outcome.error}
    return outcome.result


def _search(state: _Search) -> Difference | None:
    from hypothesis import HealthCheck, Phase, Verbosity, errors, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    def example(data: Any) -> None:
        try:
            state.run_example(data)
        except _Known:
            return

    test = settings(max_examples=state.options.examples, deadline=None, database=None,
                    derandomize=False, report_multiple_bugs=False, verbosity=Verbosity.quiet,
                    suppress_health_check=list(HealthCheck),
                    phases=[Phase.generate])(given(st.data())(example))
    test = hypothesis_seed(state.seed)(test)
    state.last = None
    try:
        test()
    except (_Found, errors.Flaky):  # Flaky: the original behaved differently on a replay
        found = state.last
        if found is None or found.kind == "original stopped":
            return found
        shrunk = _shrink(state, found)
        state.note_hash_order(shrunk)
        return shrunk
    return None


def _shrink(state: _Search, found: Difference, budget: int = 200) -> Difference:
    """Delta debugging: drop calls while the same kind of
    difference in the same tool still shows."""
    best = found
    calls = [c.call for c in found.calls]
    chunk = max(1, len(calls) // 2)
    tries = 0
    while chunk >= 1 and tries < budget:
        i = 0
        while i < len(calls) and tries < budget:
            candidate = calls[:i] + calls[i + chunk:]
            tries += 1
            again = state.replay(candidate) if candidate else None
            if again is not None and again.key() == found.key():
                calls = [c.call for c in again.calls]
                best = again
            else:
                i += chunk
        chunk //= 2
    state.last = best
    return best


# --------------------------------------------------------------------- api
def compare(world: type[Episode], original: Original, options: CompareOptions = CompareOptions(),
            *, on_difference: Callable[[Difference], None] | None = None) -> CompareReport:
    """Run the differential test of ``original`` against ``world``: ``options.examples``
    sequences for each test seed and each initial data set; when all of them agree, and
    ``options.confirm`` asks for it, as many fresh sequences per data set with a seed not
    used before. The comparison agrees only when all of them did."""
    report = CompareReport(world.WORLD, original.class_name, seeds=options.seeds(),
                           data_files=[name for name, _ in original.data_sets() if name],
                           confirm=max(0, options.confirm))
    started = time.perf_counter()
    known: set[tuple[str, str]] = set()

    def found(difference: Difference) -> None:
        report.differences.append(difference)
        known.add(difference.key())
        if on_difference is not None:
            on_difference(difference)

    try:
        stages = [(options.seeds(), False)]
        if report.confirm:
            report.confirm_seed = options.confirm_seed()
            stages.append(([report.confirm_seed], True))
        for seeds, confirming in stages:
            if confirming and not report.agrees_so_far():
                break
            stage = replace(options, examples=report.confirm) if confirming else options
            for name, data in original.data_sets():
                one = replace(original, data=data, init_data_files=())
                if not _compare_data(world, one, name, stage, seeds, confirming, report,
                                     known, found):
                    return report
    finally:
        report.seconds = time.perf_counter() - started
    return report


def _compare_data(world: type[Episode], original: Original, name: str,
                  options: CompareOptions, seeds: list[int], confirming: bool,
                  report: CompareReport, known: set[tuple[str, str]],
                  found: Callable[[Difference], None]) -> bool:
    """Compare on one initial data set, for each seed; False when the comparison must end
    (the original could not be loaded, the initial states differ, the original was stopped,
    or enough differences were found)."""
    sandbox = original.sandbox(options.limits, options.trusted_original)
    probe = _HashProbe(original, options)
    where = f" (data {name})" if name else ""
    try:
        try:
            loaded = sandbox.reset()
        except (SandboxError, SandboxStopped) as exc:
            report.load_error = f"the original could not be loaded{where}: {exc}"
            return False
        methods = set(loaded.methods) - {original.load}  # the load method is not a tool
        report.missing_in_world = sorted(methods - set(world.TOOLS))
        report.missing_in_original = sorted(set(world.TOOLS) - methods)
        tools = [spec for spec in world.TOOLS.values() if spec.name in methods]
        report.tools = [spec.name for spec in tools]
        world_data, seed = original.world_data()
        try:
            episode = world(data=world_data, seed=seed)
        except Exception as exc:
            report.load_error = (f"the world cannot load the original's data{where}: "
                                 f"{type(exc).__name__}: {exc}")
            return False
        initial = _state_problem(loaded.state, comparable_state(
            world, episode, loaded.state, loaded.sets, original.ignore), original.ignore)
        if initial is not None:
            found(Difference("initial state", "", initial, data_file=name,
                             in_confirmation=confirming))
            return False
        if not tools:
            return True
        for test_seed in seeds:
            while len(report.differences) < options.max_differences:
                search = _Search(world, original, sandbox, options, report, tools, known,
                                 seed=test_seed, confirming=confirming, probe=probe)
                difference = _search(search)
                if difference is None:
                    break
                difference.data_file = name
                difference.in_confirmation = confirming
                found(difference)
                if difference.kind == "original stopped":
                    return False
            if len(report.differences) >= options.max_differences:
                return False
        return True
    finally:
        sandbox.close()
        probe.close()
