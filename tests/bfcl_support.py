"""The harness of the BFCL conformance tests: one BFCL class against its re-expression.

BFCL's multi-turn executor loads a class with ``_load_scenario(initial_config[cls])``, runs
the calls a model makes, records each result as text (a ``str`` as is, a ``dict`` as
``json.dumps``, anything else ``str()``; an exception as ``Error during execution: ...``)
and, after every turn, compares the public attributes (``vars()`` without ``_`` names).
:class:`Peer` does the same to the original class and to our compiled world and compares
both: result text after every call, public state after every turn (or call).

A tool here cannot raise. Where the original raises, our call must fail with exactly the
exception's text; it is then rendered as BFCL renders the exception. Nothing else is
translated: a failure where the original returned normally is rendered as our error dict and
must equal the original's text as it is.

Call strings are parsed with ``ast`` (never evaluated).
"""

from __future__ import annotations

import ast
import copy
import inspect
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "ANSWERS", "BASE", "Outcome", "Peer", "Replay", "bfcl_text", "bind", "entries",
    "local_time_zone", "parse_call", "public_methods",
]

try:
    import bfcl_eval

    DATA: Path | None = Path(bfcl_eval.__file__).resolve().parent / "data"
except ImportError:  # the tests skip; the report says why
    DATA = None

BASE = DATA / "BFCL_v4_multi_turn_base.json" if DATA else None
ANSWERS = DATA / "possible_answer" / "BFCL_v4_multi_turn_base.json" if DATA else None

Entry = tuple[dict[str, Any], list[list[str]]]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def entries(class_name: str) -> list[Entry]:
    """Every base entry that involves ``class_name``, with its ground-truth calls per turn."""
    if BASE is None or ANSWERS is None or not BASE.is_file() or not ANSWERS.is_file():
        return []
    answers = {row["id"]: row["ground_truth"] for row in _jsonl(ANSWERS)}
    return [(row, answers[row["id"]]) for row in _jsonl(BASE)
            if class_name in row["involved_classes"] and row["id"] in answers]


def public_methods(cls: type) -> frozenset[str]:
    return frozenset(name for name, _ in inspect.getmembers(cls, inspect.isfunction)
                     if not name.startswith("_"))


def parse_call(text: str) -> tuple[str, list[Any], dict[str, Any]]:
    """``f(a, k=v)`` -> (name, positional, keywords), literals only."""
    node = ast.parse(text.strip(), mode="eval").body
    assert isinstance(node, ast.Call), text
    func = node.func
    if isinstance(func, ast.Attribute):
        name = func.attr
    else:
        assert isinstance(func, ast.Name), text
        name = func.id
    args = [ast.literal_eval(a) for a in node.args]
    kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
    return name, args, kwargs


def bind(cls: type, name: str, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Positional arguments become keywords, by the original method's signature."""
    signature = inspect.signature(getattr(cls, name))
    bound = signature.bind(None, *args, **kwargs)
    return {k: v for k, v in bound.arguments.items() if k != "self"}


def bfcl_text(value: Any) -> str:
    """A result as BFCL's multi-turn executor records it."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


@contextmanager
def local_time_zone(name: str) -> Iterator[None]:
    """Run with the process's local time zone set to ``name``; the previous one comes back."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = name
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()


@dataclass(frozen=True)
class Outcome:
    """What one call of the original gave: BFCL's text, and whether the method raised."""

    text: str
    raised: bool


@dataclass
class Replay:
    """One entry's ground truth replayed on both sides."""

    calls: int = 0
    identical: int = 0
    problems: list[str] = field(default_factory=list)


def _identity(state: dict[str, Any]) -> dict[str, Any]:
    return state


@dataclass(frozen=True)
class Peer:
    """A BFCL class, the spec that re-expresses it, and how the two are compared."""

    class_name: str
    cls: type
    spec: Path
    #: the episode seed when the scenario has no ``random_seed`` (BFCL's default), if any
    default_seed: int | None = None
    #: the local time zone the original runs in (it reads the local clock's rules), if any
    time_zone: str | None = None
    #: initial data from BFCL's scenario, where a state needs a documented conversion
    prepare: Callable[[dict[str, Any]], dict[str, Any]] = _identity
    #: the public state of each side in comparable terms, where a documented normalisation is
    #: needed
    normalise_original: Callable[[dict[str, Any]], dict[str, Any]] = _identity
    normalise_ours: Callable[[dict[str, Any]], dict[str, Any]] = _identity

    @property
    def methods(self) -> frozenset[str]:
        return public_methods(self.cls)

    def entries(self) -> list[Entry]:
        return entries(self.class_name)

    def config(self, entry: dict[str, Any]) -> dict[str, Any]:
        found: dict[str, Any] = entry["initial_config"].get(self.class_name, {})
        return found

    # ------------------------------------------------------------ the two sides
    def original(self, config: dict[str, Any]) -> Any:
        api = self.cls()
        api._load_scenario(copy.deepcopy(config))
        return api

    def ours(self, world: Any, config: dict[str, Any]) -> Any:
        """Our episode from BFCL's initial_config: state names and defaults are BFCL's, so
        the config loads as-is; ``random_seed`` becomes the episode seed."""
        data = self.prepare({k: copy.deepcopy(v) for k, v in config.items()
                             if k != "random_seed"})
        return world(data=data, seed=config.get("random_seed", self.default_seed))

    @contextmanager
    def _clock(self) -> Iterator[None]:
        if self.time_zone is None:
            yield
            return
        with local_time_zone(self.time_zone):
            yield

    def call_original(self, api: Any, name: str, kwargs: dict[str, Any]) -> Outcome:
        with self._clock():
            try:
                return Outcome(bfcl_text(getattr(api, name)(**copy.deepcopy(kwargs))), False)
            except Exception as exc:  # as BFCL's executor does
                return Outcome(f"Error during execution: {exc}", True)

    @staticmethod
    def our_text(episode: Any, result: Any, original: Outcome) -> str:
        """Our result as BFCL would record it (see the module docstring on exceptions)."""
        if original.raised and episode.last_error is not None:
            return f"Error during execution: {episode.last_error.message}"
        return bfcl_text(result)

    def call_both(self, api: Any, episode: Any, name: str, kwargs: dict[str, Any]
                  ) -> tuple[Outcome, str]:
        """Call ``name`` on both; (the original's outcome, our text)."""
        expected = self.call_original(api, name, kwargs)
        result = episode.call(name, copy.deepcopy(kwargs))
        return expected, self.our_text(episode, result, expected)

    # ------------------------------------------------------------------ state
    def state_original(self, api: Any) -> dict[str, Any]:
        return self.normalise_original({k: v for k, v in vars(api).items()
                                        if not k.startswith("_")})

    def state_ours(self, episode: Any) -> dict[str, Any]:
        return self.normalise_ours(episode.export_state())

    def state_problem(self, api: Any, episode: Any) -> str | None:
        """Why the public states differ, or None: equal as Python values and as JSON text
        (which also holds key order, list order, and int against float)."""
        theirs, mine = self.state_original(api), self.state_ours(episode)
        if set(theirs) != set(mine):
            return f"state names differ: {sorted(theirs)} != {sorted(mine)}"
        for name in mine:
            if theirs[name] != mine[name] or json.dumps(theirs[name]) != json.dumps(mine[name]):
                return f"{name}: {json.dumps(theirs[name])[:300]} != {json.dumps(mine[name])[:300]}"
        return None

    def assert_same_state(self, api: Any, episode: Any) -> None:
        problem = self.state_problem(api, episode)
        assert problem is None, problem

    # ----------------------------------------------------------------- replay
    def replay(self, world: Any, entry: dict[str, Any], turns: list[list[str]]) -> Replay:
        """The entry's ground truth on both sides: every call's text, the state per turn."""
        config = self.config(entry)
        api, episode = self.original(config), self.ours(world, config)
        out = Replay()
        problem = self.state_problem(api, episode)
        if problem is not None:
            out.problems.append(f"initial state: {problem}")
        for number, turn in enumerate(turns):
            for text in turn:
                name, args, kwargs = parse_call(text)
                if name not in self.methods:
                    continue
                arguments = bind(self.cls, name, args, kwargs)
                expected, got = self.call_both(api, episode, name, arguments)
                out.calls += 1
                if got == expected.text:
                    out.identical += 1
                else:
                    out.problems.append(f"turn {number}: {text}: {expected.text!r} != {got!r}")
            problem = self.state_problem(api, episode)
            if problem is not None:
                out.problems.append(f"after turn {number}: {problem}")
        return out

    def run_calls(self, world: Any, config: dict[str, Any],
                  calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[Outcome, Any]]:
        """Run ``calls`` on both from ``config``, asserting identical text and public state
        after every call; the original's outcomes with our episode after each call's error."""
        api, episode = self.original(config), self.ours(world, config)
        self.assert_same_state(api, episode)
        seen: list[tuple[Outcome, Any]] = []
        for name, kwargs in calls:
            expected, got = self.call_both(api, episode, name, kwargs)
            assert got == expected.text, (name, kwargs, expected.text, got)
            self.assert_same_state(api, episode)
            seen.append((expected, episode.last_error))
        return seen
