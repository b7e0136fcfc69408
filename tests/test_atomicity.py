"""``call()`` never raises on a model's input and never leaves a half-changed state.

- Locals of every type, declared, reassigned (also in branches and loops), then used: an
  entity-typed local once got the key instead of the row on reassignment, so the call raised
  ``AttributeError`` after a write it did not roll back (issue 12).
- Whatever a tool body or an invariant check raises, the call is rolled back (undo log, RNG,
  clock) and comes back as a failed result; ``KeyboardInterrupt`` and ``SystemExit`` roll back
  too and go on. Exercised with a hand-written ``Episode`` subclass whose tool changes rows,
  state and the RNG, then raises each kind of exception.
- A clock that cannot advance fails the call (rolled back), and the checker reports a clock or
  tick that would overflow (WS508, WS509).
- Misusing the Python API (wrong types, unknown tasks, foreign snapshots and episodes) raises a
  ``TypeError``/``ValueError``/``KeyError`` that names the method, what it expected and what it
  got; a model's bad input (an unknown tool, malformed JSON) stays a failed result. A reset to
  data that does not fit changes nothing.
- The initial state a score compares against is rebuilt with fresh digests and the reset's
  RNG, so ``matches_solution()`` holds for the exact solution, also one that draws.
- Narrowing (`x != none`) does not outlive an assignment in a branch or a loop: such reads
  compiled to ``rt.present(x)`` and failed at run time.
- A tool that really runs out of memory (subprocess under ``RLIMIT_AS``), any sequence of
  failing and succeeding calls (hypothesis), and the property checks that must still report
  an internal error.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mypy_support import mypy_strict

from worldspec.compiler.api import check_source, check_specs
from worldspec.compiler.build import generate_all, write_packages
from worldspec.runtime.episode import Episode, ToolSpec
from worldspec.runtime.errors import InternalError, ToolError
from worldspec.services.loading import compile_worlds
from worldspec.testing.properties import Violation, check_call

REPO = Path(__file__).resolve().parents[1]


def compile_spec(root: Path, text: str, world: str) -> type[Episode]:
    """Compile one spec written to ``root`` (cache in ``root`` too) and return its world."""
    spec = root / "spec.world"
    spec.write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORLDSPEC_CACHE", str(root / "cache"))
        return compile_worlds([spec]).worlds[world]


# ---------------------------------------------------------------- locals of every type
LOCALS = """\
world Locals "Locals of every type: declared, reassigned (also in branches and loops), then used."

enum Color { red, green, blue }

record Point { x: int  y: int }
record Circle { id: str  r: int }
record Square { id: str  side: int }
union Shape by kind { circle: Circle, square: Square }

entity Node "A node of a chain." {
  key id: int
  name: str
  next: Node? = none
}

record Visit { node: Node  note: str }

state {
  nodes: table Node
  visits: int = 0
  last: Node? = none
  favourites: list[Node] = []
}

tool int_local() -> int "An int." {
  visits += 1
  let n = 1
  n = 5
  n += 1
  return n
}

tool float_local() -> float "An int widened to a float." {
  visits += 1
  let f: float = 1
  f = 2
  f += 0.5
  return f
}

tool str_local() -> str "A string." {
  visits += 1
  let s = "a"
  s = s + "b"
  return s
}

tool bool_local() -> bool "A bool." {
  visits += 1
  let b = false
  b = not b
  return b
}

tool optional_local() -> int "An optional int, narrowed by the assignment." {
  visits += 1
  let o: int? = none
  o = 3
  return o + 1
}

tool enum_local() -> Color "An enum." {
  visits += 1
  let c = Color.red
  c = blue
  return c
}

tool record_local() -> Point "A record, replaced then changed in place." {
  visits += 1
  let p = Point(x: 1, y: 2)
  p = Point(x: 3, y: 4)
  p.x = 5
  return p
}

tool union_local() -> str "A union, reassigned to another variant." {
  visits += 1
  let sh: Shape = Circle(id: "c", r: 1)
  sh = Square(id: "s", side: 2)
  let out = "?"
  match sh {
    case circle as c { out = f"circle {c.r}" }
    case square as q { out = f"square {q.side}" }
  }
  return out
}

tool entity_local() -> str "An entity: the local holds the row." {
  visits += 1
  let here = nodes[1]
  here = nodes[2]
  return here.name
}

tool entity_write() -> str "Writes through a reassigned entity local reach that row." {
  visits += 1
  let here = nodes[1]
  here = nodes[2]
  here.name = "renamed"
  return nodes[2].name
}

tool entity_insert() -> int "A new row in a reassigned local is inserted." {
  visits += 1
  let fresh = Node(id: 8, name: "eight")
  fresh = Node(id: 9, name: "nine")
  insert fresh into nodes
  return len(nodes)
}

tool entity_reference() -> int "A reassigned entity local stored as a reference." {
  visits += 1
  let target = nodes[1]
  target = nodes[3]
  nodes[1].next = target
  let got = nodes[1].next
  require got != none else "no reference"
  return got.id
}

tool entity_branch(flag: bool) -> str "An entity reassigned in if/else." {
  visits += 1
  let here = nodes[1]
  if flag {
    here = nodes[2]
  } else {
    here = nodes[3]
  }
  return here.name
}

tool entity_for() -> str "An entity reassigned in a for loop." {
  visits += 1
  let best = nodes[1]
  for node in nodes {
    if node.id > best.id {
      best = node
    }
  }
  return best.name
}

tool entity_while() -> str "An entity reassigned in a while loop." {
  visits += 1
  let cur = nodes[1]
  let steps = 0
  while steps < 2 {
    cur = nodes[cur.id + 1]
    steps += 1
  }
  return cur.name
}

tool optional_entity_local() -> str "An optional entity: none, then a row." {
  visits += 1
  let o: Node? = none
  o = nodes[2]
  return o.name
}

tool optional_entity_chain() -> list[str] "An optional entity walked along references." {
  visits += 1
  let names: list[str] = []
  let cur: Node? = nodes[1]
  let steps = 0
  while steps < 5 {
    if cur != none {
      append cur.name to names
      cur = cur.next
    }
    steps += 1
  }
  return names
}

tool optional_entity_get(id: int) -> str "An optional entity from a lookup that may miss." {
  visits += 1
  let o: Node? = nodes[1]
  o = nodes.get(id)
  if o == none {
    return "missing"
  }
  return o.name
}

tool entity_list_local() -> list[str] "A list of entities." {
  visits += 1
  let xs = [nodes[1]]
  xs = [nodes[2], nodes[1]]
  append nodes[3] to xs
  xs[0] = nodes[3]
  return [x.name for x in xs]
}

tool entity_set_local() -> list[str] "A set of entities." {
  visits += 1
  let ss = set([nodes[1]])
  ss = set([nodes[2]])
  append nodes[2] to ss
  append nodes[3] to ss
  return [x.name for x in ss]
}

tool entity_map_local() -> list[str] "A map with entity values." {
  visits += 1
  let m: map[str, Node] = {"a": nodes[1]}
  m = {"b": nodes[2]}
  m["c"] = nodes[3]
  return [m[k].name for k in m.keys()]
}

tool entity_key_map_local() -> int "A map keyed by entity keys, filled through entity locals." {
  visits += 1
  let counts: map[int, int] = {}
  let here = nodes[1]
  here = nodes[2]
  counts[here.id] = 2
  return sum(counts.values())
}

tool record_with_entity_local() -> str "A record holding a reference." {
  visits += 1
  let v = Visit(node: nodes[1], note: "x")
  v = Visit(node: nodes[2], note: "y")
  v.node = nodes[3]
  return f"{v.node.name} {v.note}"
}

tool json_local() -> json "A json value of another shape." {
  visits += 1
  let j: json = {"a": 1}
  j = [1, "x"]
  j[0] = 2
  return j
}

tool datetime_local() -> datetime "A datetime moved by a duration." {
  visits += 1
  let d = now
  d = d + days(1)
  return d
}

tool sorted_local() -> list[str] "Entities sorted by a key, reassigned." {
  visits += 1
  let xs = [nodes[2], nodes[1], nodes[3]]
  xs = sorted(xs, key: x => x.name, reverse: true)
  return [x.name for x in xs]
}

tool min_max_local() -> str "An entity from min, then from max." {
  visits += 1
  let xs = [nodes[2], nodes[1], nodes[3]]
  let m = min(xs, key: x => x.name)
  m = max(xs, key: x => x.name)
  return m.name
}

tool choice_local() -> str "An entity drawn from a list of entities." {
  visits += 1
  let xs = [nodes[2], nodes[2]]
  let c = random_choice(xs)
  c = random_choice(xs)
  return c.name
}

tool map_get_local() -> str "An optional entity from a map lookup." {
  visits += 1
  let m: map[str, Node] = {"a": nodes[1]}
  let got = m.get("b")
  got = m.get("a")
  require got != none else "not found"
  return got.name
}

tool coalesce_local() -> str "Entities from ?? and if-then-else." {
  visits += 1
  let o: Node? = none
  let n = o ?? nodes[1]
  n = o ?? nodes[2]
  let c = if n.id == 2 then nodes[1] else nodes[3]
  c = if n.id == 2 then nodes[3] else nodes[1]
  return f"{n.name} {c.name}"
}

tool state_entity_local() -> str "Entities read from state into locals." {
  visits += 1
  last = nodes[3]
  favourites = [nodes[2]]
  let l = nodes[1]
  l = last
  let f = nodes[1]
  f = favourites[0]
  return f"{l.name} {f.name}"
}

tool fn_local() -> str "An entity returned by a helper." {
  visits += 1
  let here = nodes[1]
  here = following(here)
  return here.name
}

fn following(node: Node) -> Node { return nodes[node.id + 1] }

tool match_branch_local(color: Color) -> str "Locals reassigned in match cases." {
  visits += 1
  let here = nodes[1]
  let maybe: Node? = none
  let p = Point(x: 0, y: 0)
  match color {
    case red { here = nodes[2] }
    case green {
      maybe = nodes[3]
      p = Point(x: 1, y: 1)
    }
    else { here = nodes[3] }
  }
  return f"{here.name} {(maybe ?? here).name} {p.x}"
}

tool nested_loop_local() -> str "Locals reassigned in nested loops, with break and continue." {
  visits += 1
  let best: Node? = none
  let p = Point(x: 0, y: 0)
  let seen: list[Node] = []
  let total: float = 0
  for a in nodes {
    for b in nodes {
      if b.id <= a.id {
        continue
      }
      p = Point(x: p.x + a.id, y: p.y + b.id)
      total += 1
      seen = seen + [b]
      if best == none or b.id > best.id {
        best = b
      }
      if b.id == 3 {
        break
      }
    }
  }
  require best != none else "no pair"
  return f"{best.name} {p.x} {p.y} {total} {len(seen)} {seen[0].name}"
}


task chain in Locals "Three nodes in a chain." {
  given { nodes: [{id: 1, name: "a", next: 2}, {id: 2, name: "b", next: 3}, {id: 3, name: "c"}] }
  instruction "Nothing to do."
  check called: visits == 1
  solution { int_local() }
}
"""

#: tool, arguments, the data it returns (envscaler convention)
LOCAL_CALLS: list[tuple[str, dict[str, Any], Any]] = [
    ("int_local", {}, 6),
    ("float_local", {}, 2.5),
    ("str_local", {}, "ab"),
    ("bool_local", {}, True),
    ("optional_local", {}, 4),
    ("enum_local", {}, "blue"),
    ("record_local", {}, {"x": 5, "y": 4}),
    ("union_local", {}, "square 2"),
    ("entity_local", {}, "b"),
    ("entity_write", {}, "renamed"),
    ("entity_insert", {}, 4),
    ("entity_reference", {}, 3),
    ("entity_branch", {"flag": True}, "b"),
    ("entity_branch", {"flag": False}, "c"),
    ("entity_for", {}, "c"),
    ("entity_while", {}, "c"),
    ("optional_entity_local", {}, "b"),
    ("optional_entity_chain", {}, ["a", "b", "c"]),
    ("optional_entity_get", {"id": 2}, "b"),
    ("optional_entity_get", {"id": 7}, "missing"),
    ("entity_list_local", {}, ["c", "a", "c"]),
    ("entity_set_local", {}, ["b", "c"]),
    ("entity_map_local", {}, ["b", "c"]),
    ("entity_key_map_local", {}, 2),
    ("record_with_entity_local", {}, "c y"),
    ("json_local", {}, [2, "x"]),
    ("datetime_local", {}, "2024-01-02T00:00:00"),
    ("sorted_local", {}, ["c", "b", "a"]),
    ("min_max_local", {}, "c"),
    ("choice_local", {}, "b"),
    ("map_get_local", {}, "a"),
    ("coalesce_local", {}, "b c"),
    ("state_entity_local", {}, "c b"),
    ("fn_local", {}, "b"),
    ("match_branch_local", {"color": "red"}, "b b 0"),
    ("match_branch_local", {"color": "green"}, "a c 1"),
    ("match_branch_local", {"color": "blue"}, "c c 0"),
    ("nested_loop_local", {}, "c 4 8 3.0 3 b"),
]


@pytest.fixture(scope="module")
def locals_world(tmp_path_factory: pytest.TempPathFactory) -> type[Episode]:
    return compile_spec(tmp_path_factory.mktemp("locals"), LOCALS, "Locals")


def test_locals_spec_checks_clean(tmp_path: Path) -> None:
    spec = tmp_path / "locals.world"
    spec.write_text(LOCALS, encoding="utf-8")
    result = check_specs([spec])
    assert result.diagnostics == (), [f"{d.span}: {d.message}" for d in result.diagnostics]


def test_every_local_tool_is_exercised(locals_world: type[Episode]) -> None:
    assert {tool for tool, _, _ in LOCAL_CALLS} == set(locals_world.TOOLS)


@pytest.mark.parametrize(("tool", "arguments", "expected"), LOCAL_CALLS,
                         ids=[f"{tool}-{i}" for i, (tool, _, _) in enumerate(LOCAL_CALLS)])
def test_locals_declared_reassigned_then_used(locals_world: type[Episode], tool: str,
                                              arguments: dict[str, Any], expected: Any) -> None:
    episode = locals_world(task="chain")
    result = episode.call(tool, arguments)
    assert result == {"success": True, "data": expected}
    assert type(result["data"]) is type(expected)  # 2.5 stays a float, [..] a list
    assert episode.state.visits == 1  # type: ignore[attr-defined]


def test_writes_through_reassigned_entity_locals_reach_the_rows(
        locals_world: type[Episode]) -> None:
    episode = locals_world(task="chain")
    assert not episode.failed(episode.call("entity_write"))
    assert not episode.failed(episode.call("entity_insert"))
    assert not episode.failed(episode.call("entity_reference"))
    rows = {row["id"]: row for row in episode.export_state()["nodes"]}
    assert rows[2]["name"] == "renamed" and rows[1]["name"] == "a"
    assert rows[9] == {"id": 9, "name": "nine", "next": None} and 8 not in rows
    assert rows[1]["next"] == 3


def test_locals_package_passes_mypy_strict(tmp_path: Path) -> None:
    """mypy would have caught the bug: ``here: Node = ...`` then ``here = 2``."""
    spec = tmp_path / "locals.world"
    spec.write_text(LOCALS, encoding="utf-8")
    result = check_specs([spec])
    assert result.ok
    write_packages(generate_all(result), tmp_path / "out")
    mypy = mypy_strict(tmp_path / "out", tmp_path / "mypy-cache")
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr


# ------------------------------------------------------------- whatever a tool raises
COUNTER = """\
world Counter "A bumpser that adds rows and draws numbers."

config { results: @RESULTS@  clock: "2024-01-01T09:00:00"  tick: 60  seed: 3 }

entity Item "A row." {
  key id: str
  n: int = 0
}

entity Note "A row the reference solution never touches." {
  key id: str
}

state {
  items: table Item
  notes: table Note
  bumps: int = 0
  lucky: int = 0
}

invariant few_items "At most 50 items.": len(items) <= 50

tool bump() -> int "Count one, change a row, add a row and draw a number." {
  bumps += 1
  items["A"].n += 1
  insert Item(id: f"I{bumps}") into items
  lucky = random_int(1, 1000000)
  return bumps
}

tool note(id: str) -> str "Add a note." {
  insert Note(id: id) into notes
  return id
}

task gold in Counter "Bump once, and do nothing else." {
  given { items: [{id: "A"}] }
  instruction "Bump the counter, and do nothing else."
  check gold_state: matches_solution()
  solution { bump() }
}

task start in Counter "Bump once." {
  given { items: [{id: "A"}] }
  instruction "Bump the bumpser."
  check bumped: bumps == 1
  solution { bump() }
}
"""

CONVENTIONS = ("envscaler", "bfcl", "tau2")


@pytest.fixture(scope="module")
def counters(tmp_path_factory: pytest.TempPathFactory) -> dict[str, type[Episode]]:
    """The Counter world compiled once per result convention."""
    return {convention: compile_spec(tmp_path_factory.mktemp(convention),
                                     COUNTER.replace("@RESULTS@", convention), "Counter")
            for convention in CONVENTIONS}


class _Boom(Exception):
    """An exception type no tool expects."""


#: exceptions a tool body can end in, none of them a ToolError
RAISED: dict[str, Callable[[], BaseException]] = {
    "AttributeError": lambda: AttributeError("'int' object has no attribute 'name'"),
    "MemoryError": MemoryError,
    "OverflowError": lambda: OverflowError("int too large to convert to float"),
    "RecursionError": lambda: RecursionError("maximum recursion depth exceeded"),
    "ZeroDivisionError": lambda: ZeroDivisionError("division by zero"),
    "KeyError": lambda: KeyError("k"),
    "IndexError": lambda: IndexError("tuple index out of range"),
    "TypeError": lambda: TypeError("unsupported operand"),
    "UnicodeEncodeError": lambda: UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates"),
    "AssertionError": AssertionError,
    "RuntimeError": lambda: RuntimeError("generator raised StopIteration"),
    "StopIteration": StopIteration,
    "LookupError": LookupError,
    "NotImplementedError": NotImplementedError,
    "_Boom": lambda: _Boom("a future codegen bug"),
}

#: the message each comes back with; every other kind is an internal error
EXPECTED_MESSAGES = {
    "OverflowError": "int too large to convert to float",  # Python's texts
    "RecursionError": "The call nests too deeply.",
    "MemoryError": "The call ran out of memory.",
    "ZeroDivisionError": "division by zero",
    "KeyError": 'Key "k" not found.',
    "IndexError": "tuple index out of range",
    "TypeError": "Invalid value: unsupported operand",
    "UnicodeEncodeError": "Invalid value: 'utf-8' codec can't encode character '\\ud800' in "
                          "position 0: surrogates",
}

INTERRUPTS: dict[str, Callable[[], BaseException]] = {
    "KeyboardInterrupt": KeyboardInterrupt,
    "SystemExit": lambda: SystemExit(3),
    "GeneratorExit": GeneratorExit,
}


def crashing(world: type[Episode]) -> type[Episode]:
    """``world`` with a tool ``crash`` that changes rows, state, the RNG, then raises
    ``arguments["kind"]``, and with invariant checks that raise ``INVARIANT_RAISES``."""

    def crash(episode: Episode, arguments: Mapping[str, Any]) -> Any:
        world.TOOLS["bump"].invoke(episode, {})
        kind = arguments["kind"]
        raise (RAISED | INTERRUPTS)[kind]()

    class Crashing(world):  # type: ignore[valid-type, misc]
        TOOLS: ClassVar[dict[str, ToolSpec]] = {**world.TOOLS,
                 "crash": ToolSpec("crash", "Change everything, then raise.", (),
                                   read_only=False, invoke=crash)}
        INVARIANT_RAISES: str | None = None

        def _check_invariants(self) -> None:
            super()._check_invariants()
            if self.INVARIANT_RAISES is not None:
                raise (RAISED | INTERRUPTS)[self.INVARIANT_RAISES]()

    return Crashing


def fingerprint(episode: Episode) -> tuple[Any, ...]:
    """Everything a call may change: rows, state, clock, RNG, undo log length."""
    return (episode.state_hash(), episode.export_state(), episode.clock,
            episode.rng.getstate(), len(episode._undo))


def failure_message(episode: Episode, result: Any) -> str:
    """The message of a failed result, checking the convention's exact shape."""
    assert episode.failed(result), result
    if episode.RESULTS == "envscaler":
        assert set(result) == {"success", "error"}
        text = result["error"]
    elif episode.RESULTS == "bfcl":
        text = result["error"]
    else:
        assert isinstance(result, str)
        text = result[len("Error: "):]
    assert isinstance(text, str)
    return text


def assert_still_works(episode: Episode) -> None:
    """The episode goes on as if the failed call had never happened."""
    fresh = type(episode)(task="start")
    assert not episode.failed(episode.call("bump"))
    assert not fresh.failed(fresh.call("bump"))
    assert episode.state_hash() == fresh.state_hash()
    assert episode.clock == fresh.clock and episode.rng.getstate() == fresh.rng.getstate()
    assert episode.score().reward == 1.0
    episode.reset(task="start")
    assert episode.state_hash() == type(episode)(task="start").state_hash()


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("kind", sorted(RAISED))
def test_any_exception_in_a_tool_rolls_back_and_fails(
        counters: dict[str, type[Episode]], convention: str, kind: str) -> None:
    episode = crashing(counters[convention])(task="start")
    before = fingerprint(episode)
    result = episode.call("crash", {"kind": kind})
    assert fingerprint(episode) == before
    text = failure_message(episode, result)
    if kind in EXPECTED_MESSAGES:
        assert text == EXPECTED_MESSAGES[kind]
        assert type(episode.last_error) is ToolError
    else:
        assert text == (f"Internal error ({kind}): the tool failed unexpectedly; "
                        "nothing was changed.")
        error = episode.last_error
        assert isinstance(error, InternalError)
        assert (error.kind, error.tool) == (kind, "crash")
        assert error.message == text
    assert episode.last_value is None
    assert_still_works(episode)


@pytest.mark.parametrize("kind", sorted(RAISED))
def test_any_exception_in_an_invariant_check_rolls_back_and_fails(
        counters: dict[str, type[Episode]], kind: str) -> None:
    world = crashing(counters["envscaler"])
    episode = world(task="start")
    before = fingerprint(episode)
    episode.INVARIANT_RAISES = kind  # type: ignore[attr-defined]
    result = episode.call("bump")
    assert fingerprint(episode) == before
    assert episode.failed(result)
    assert isinstance(episode.last_error, InternalError) == (kind not in EXPECTED_MESSAGES)
    episode.INVARIANT_RAISES = None  # type: ignore[attr-defined]
    assert_still_works(episode)


@pytest.mark.parametrize("kind", sorted(INTERRUPTS))
@pytest.mark.parametrize("where", ["tool", "invariant"])
def test_interrupts_roll_back_and_are_raised_again(
        counters: dict[str, type[Episode]], kind: str, where: str) -> None:
    episode = crashing(counters["tau2"])(task="start")
    before = fingerprint(episode)
    with pytest.raises(type(INTERRUPTS[kind]())):
        if where == "tool":
            episode.call("crash", {"kind": kind})
        else:
            episode.INVARIANT_RAISES = kind  # type: ignore[attr-defined]
            episode.call("bump")
    assert fingerprint(episode) == before
    episode.INVARIANT_RAISES = None  # type: ignore[attr-defined]
    assert_still_works(episode)


def test_a_result_that_cannot_be_shaped_rolls_back(
        counters: dict[str, type[Episode]]) -> None:
    """Shaping the result is part of the call: if it raises, nothing was changed."""

    world = counters["tau2"]

    class Unshapeable(world):  # type: ignore[valid-type, misc]
        def _success(self, value: Any) -> Any:
            raise AttributeError("no export")

    episode = Unshapeable(task="start")
    before = fingerprint(episode)
    assert episode.failed(episode.call("bump"))
    assert isinstance(episode.last_error, InternalError)
    assert fingerprint(episode) == before


def test_failed_calls_do_not_tick_the_clock(counters: dict[str, type[Episode]]) -> None:
    episode = crashing(counters["envscaler"])(task="start")
    start = episode.clock
    episode.call("crash", {"kind": "AttributeError"})
    episode.call("nope")
    episode.call("bump", "{bad")
    assert episode.clock == start
    episode.call("bump")
    assert episode.clock == start + dt.timedelta(seconds=60)


# ------------------------------------------------------------ a clock at the end of time
@pytest.mark.parametrize(("clock", "tick", "good_calls"), [
    ("9999-12-31T23:58:00", 60, 1),
    ("9999-12-31T23:59:59", 1, 0),
    ("2024-01-01T00:00:00", 10 ** 12, 0),  # more seconds than a timedelta holds
    ("2024-01-01T00:00:00", 86_400 * 2_900_000, 1),
])
def test_a_clock_that_cannot_advance_fails_the_call(
        counters: dict[str, type[Episode]], clock: str, tick: int, good_calls: int) -> None:
    world = counters["bfcl"]

    class EndOfTime(world):  # type: ignore[valid-type, misc]
        CLOCK = clock
        TICK = tick

    episode = EndOfTime(task="start")
    for _ in range(good_calls):
        assert not episode.failed(episode.call("bump"))
    before = fingerprint(episode)
    result = episode.call("bump")
    assert fingerprint(episode) == before
    assert failure_message(episode, result) == (
        f"The clock cannot advance {tick} s past {episode.clock.isoformat()}: it would pass "
        "the last representable time (9999-12-31).")
    assert episode.call("get_nothing") == {"error": 'Unknown tool "get_nothing".'}


def config_codes(config: str) -> list[str]:
    """The diagnostic codes of a small world with this config block."""
    result = check_source(f'world Health "A health check."\n\nconfig {{ {config} }}\n\n'
                          'state {\n  pings: int = 0\n}\n')
    return [d.code for d in result.diagnostics]


#: the last clock that can still tick a second 100,000 times
LAST_CLOCK = (dt.datetime.max - dt.timedelta(seconds=100_000)).replace(microsecond=0)


@pytest.mark.parametrize(("config", "codes"), [
    ('clock: "9999-12-31T23:59:59"  tick: 1', ["WS508"]),
    ('clock: "9999-12-31T23:59:59"', []),  # a clock that never ticks never runs out
    ('clock: "9999-12-31T23:59:59"  tick: 0', []),
    (f'clock: "{LAST_CLOCK.isoformat()}"  tick: 1', []),
    (f'clock: "{(LAST_CLOCK + dt.timedelta(seconds=1)).isoformat()}"  tick: 1', ["WS508"]),
    ('clock: "9800-01-01T00:00:00"  tick: 86400', ["WS508"]),
    ('clock: "2024-01-01T00:00:00"  tick: 86400', []),
    ("tick: 86400", []),
    ("tick: 86401", ["WS509"]),
    ("tick: 100000000000", ["WS509"]),
    ('clock: "9999-12-31T23:59:59"  tick: 100000000000', ["WS509"]),
    ("tick: -1", ["WS503"]),  # not a valid tick at all: reported once, as before
    ('clock: "soon"  tick: 1', ["WS503"]),
])
def test_a_clock_that_would_run_out_is_reported_at_check_time(
        config: str, codes: list[str]) -> None:
    assert config_codes(config) == codes


def test_the_clock_rule_points_at_the_value_at_fault() -> None:
    result = check_source('world Health "A health check."\n'
                          'config { clock: "9999-12-31T23:00:00"  tick: 60 }\n'
                          'state {\n  pings: int = 0\n}\n')
    [clock] = result.diagnostics
    assert (clock.code, clock.span.line, clock.span.column) == ("WS508", 2, 17)
    assert clock.message == ("a clock starting at 9999-12-31T23:00:00 and ticking 60 s per "
                             "call runs out of time (year 9999) after 59 calls; it must last "
                             "100,000")
    result = check_source('world Health "A health check."\n'
                          'config { tick: 90000 }\nstate {\n  pings: int = 0\n}\n')
    [tick] = result.diagnostics
    assert (tick.code, tick.span.line, tick.span.column) == ("WS509", 2, 16)


# ------------------------------------------------------------------------ API misuse
#: (method call, exception type, the exact message); the episode is a Counter at "start"
MISUSE: list[tuple[str, Callable[[Episode], Any], type[Exception], str]] = [
    ("call-name-list", lambda ep: ep.call(["bump"]), TypeError,  # type: ignore[arg-type]
     "Counter.call(): name must be a tool name (str), got list ['bump']"),
    ("call-name-none", lambda ep: ep.call(None), TypeError,  # type: ignore[arg-type]
     "Counter.call(): name must be a tool name (str), got NoneType None"),
    ("call-name-bytes", lambda ep: ep.call(b"bump"), TypeError,  # type: ignore[arg-type]
     "Counter.call(): name must be a tool name (str), got bytes b'bump'"),
    ("call-arguments-set", lambda ep: ep.call("bump", {"a"}), TypeError,  # type: ignore[arg-type]
     "Counter.call(): arguments must be a mapping of argument names to values, JSON text or "
     "None, got set {'a'}"),
    ("call-arguments-tuple", lambda ep: ep.call("bump", ("a", 1)),  # type: ignore[arg-type]
     TypeError, "Counter.call(): arguments must be a mapping of argument names to values, "
     "JSON text or None, got tuple ('a', 1)"),
    ("call-arguments-bytes", lambda ep: ep.call("bump", b"{}"),  # type: ignore[arg-type]
     TypeError, "Counter.call(): arguments must be a mapping of argument names to values, "
     "JSON text or None, got bytes b'{}'"),
    ("reset-task-unknown", lambda ep: ep.reset(task="strat"), KeyError,
     "Counter.reset(): world Counter has no task 'strat'; did you mean 'start'? "
     "(tasks: 'gold', 'start')"),
    ("reset-task-far", lambda ep: ep.reset(task="zzz"), KeyError,
     "Counter.reset(): world Counter has no task 'zzz' (tasks: 'gold', 'start')"),
    ("reset-task-int", lambda ep: ep.reset(task=1), TypeError,  # type: ignore[arg-type]
     "Counter.reset(): task must be a task name (str) or None, got int 1"),
    ("reset-data-list", lambda ep: ep.reset(data=[1]), TypeError,  # type: ignore[arg-type]
     "Counter.reset(): data must be a mapping of initial data or None, got list [1]"),
    ("reset-seed-str", lambda ep: ep.reset(seed="7"), TypeError,  # type: ignore[arg-type]
     "Counter.reset(): seed must be an int or None, got str '7'"),
    ("reset-seed-bool", lambda ep: ep.reset(seed=True), TypeError,
     "Counter.reset(): seed must be an int or None, got bool True"),
    ("score-unknown", lambda ep: ep.score("nosuch"), KeyError,
     "Counter.score(): world Counter has no task 'nosuch' (tasks: 'gold', 'start')"),
    ("score-close", lambda ep: ep.score("starts"), KeyError,
     "Counter.score(): world Counter has no task 'starts'; did you mean 'start'? "
     "(tasks: 'gold', 'start')"),
    ("score-task-int", lambda ep: ep.score(3), TypeError,  # type: ignore[arg-type]
     "Counter.score(): task must be a task name (str) or None, got int 3"),
    ("score-initial-dict", lambda ep: ep.score(initial={}), TypeError,  # type: ignore[arg-type]
     "Counter.score(): initial must be an Episode, got dict {}"),
    ("restore-dict", lambda ep: ep.restore({}), TypeError,  # type: ignore[arg-type]
     "Counter.restore(): expected a Snapshot from snapshot(), got dict {}"),
    ("diff-str", lambda ep: ep.diff("before"), TypeError,  # type: ignore[arg-type]
     "Counter.diff(): other must be an Episode, got str 'before'"),
]


@pytest.mark.parametrize(("call", "error", "expected"), [m[1:] for m in MISUSE],
                         ids=[m[0] for m in MISUSE])
def test_api_misuse_raises_a_clear_error_and_changes_nothing(
        counters: dict[str, type[Episode]], call: Callable[[Episode], Any],
        error: type[Exception], expected: str) -> None:
    episode = counters["envscaler"](task="start")
    episode.call("bump")
    before = fingerprint(episode)
    with pytest.raises(error) as caught:
        call(episode)
    assert caught.value.args == (expected,)
    assert fingerprint(episode) == before
    assert not episode.failed(episode.call("bump"))


def test_a_long_argument_is_cut_short_in_the_message(
        counters: dict[str, type[Episode]]) -> None:
    with pytest.raises(TypeError) as caught:
        counters["bfcl"]().call(["x" * 500])  # type: ignore[arg-type]
    message = caught.value.args[0]
    assert message.startswith("Counter.call(): name must be a tool name (str), got list ['xxx")
    assert message.endswith("...") and len(message) < 140


def test_a_constructor_with_an_unknown_task_says_so(counters: dict[str, type[Episode]]) -> None:
    with pytest.raises(KeyError, match="has no task 'strat'; did you mean 'start'"):
        counters["tau2"](task="strat")


def test_score_without_a_task_is_a_value_error(counters: dict[str, type[Episode]]) -> None:
    with pytest.raises(ValueError) as caught:
        counters["envscaler"]().score()
    assert caught.value.args == ("Counter.score(): no task to score: the episode was not "
                                 "reset to a task; pass one of 'gold', 'start'",)


def test_snapshots_and_episodes_of_another_world_are_refused(
        counters: dict[str, type[Episode]], locals_world: type[Episode]) -> None:
    counter = counters["envscaler"](task="start")
    counter.call("bump")
    other = locals_world(task="chain")
    before, other_before = fingerprint(counter), fingerprint(other)
    with pytest.raises(ValueError, match=r"^Locals\.restore\(\): the snapshot was taken from "
                       r"world Counter \(.*\.Counter\), not from world Locals \(.*\.Locals\)$"):
        other.restore(counter.snapshot())
    with pytest.raises(ValueError, match=r"^Counter\.diff\(\): other is an episode of world "
                       r"Locals \(.*\), not of world Counter$"):
        counter.diff(other)
    with pytest.raises(ValueError, match=r"^Counter\.score\(\): initial is an episode of "
                       r"world Locals"):
        counter.score(initial=other)
    assert fingerprint(counter) == before and fingerprint(other) == other_before


def test_a_snapshot_of_another_class_of_the_same_world_is_refused(
        counters: dict[str, type[Episode]]) -> None:
    """Two builds of a world (here: two result conventions) hold rows of different classes."""
    tau2, bfcl = counters["tau2"](task="start"), counters["bfcl"](task="start")
    with pytest.raises(ValueError, match=r"^Counter\.restore\(\): the snapshot was taken from "
                       r"world Counter \(_worldspec_\w+_counter\.world\.Counter\)"):
        bfcl.restore(tau2.snapshot())
    assert bfcl.diff(tau2) == []  # the same world: comparing them is fine
    snap = bfcl.snapshot()
    bfcl.call("bump")
    bfcl.restore(snap)
    assert bfcl.state_hash() == tau2.state_hash()


def test_a_model_s_bad_input_stays_a_failed_result(counters: dict[str, type[Episode]]) -> None:
    """Unknown tools, malformed JSON and decoded JSON that is not an object are the model's
    mistakes: failed results the agent can read, never exceptions."""
    episode = counters["envscaler"](task="start")
    before = fingerprint(episode)
    calls: list[tuple[str, Any]] = [("nope", None), ("bump", "{bad"), ("bump", "[1]"),
                                    ("bump", [1]), ("bump", 3), ("bump", 2.5), ("bump", True),
                                    ("", {})]
    for name, arguments in calls:
        result = episode.call(name, arguments)
        assert episode.failed(result), (name, arguments)
    assert fingerprint(episode) == before
    # after a success, a failed call of each kind leaves no value of the last success behind
    for name, arguments in calls:
        assert not episode.failed(episode.call("bump", {}))
        assert (episode.last_error, episode.last_value) == (None, episode.state.bumps)
        assert episode.failed(episode.call(name, arguments)), (name, arguments)
        assert episode.last_value is None and episode.last_error is not None


@pytest.mark.parametrize(("data", "problem"), [
    ({"items": [{"id": "B"}, {"id": 5}]}, "$.items[1].id: expected a string, got 5"),
    ({"items": 3}, "a table must be given as a list of rows"),
    ({"items": [{"id": "B"}], "bumps": "x"}, '$.bumps: expected an integer, got "x"'),
])
def test_a_reset_to_data_that_does_not_fit_changes_nothing(
        counters: dict[str, type[Episode]], data: dict[str, Any], problem: str) -> None:
    """A failed reset once left the episode half loaded, and a later reset to the task it
    came from rolled back nothing (the undo log was gone): the task started wrong."""
    episode = counters["envscaler"](task="start")
    episode.call("bump")
    before = fingerprint(episode)
    with pytest.raises(ValueError) as caught:
        episode.reset(data=data)
    assert caught.value.args == (
        f"Counter.reset(): data does not fit world Counter: {problem}",)
    assert fingerprint(episode) == before
    assert episode.initial_state().state_hash() == counters["envscaler"](
        task="start").state_hash()
    episode.reset(task="start")
    assert_still_works(episode)
    with pytest.raises(ValueError, match=r"^Counter\.reset\(\): data does not fit"):
        counters["envscaler"](data=data)


def test_the_initial_state_is_rebuilt_with_fresh_digests(
        counters: dict[str, type[Episode]]) -> None:
    """Rebuilding the initial state kept the table digests of the current state, so once the
    state had been hashed, ``matches_solution()`` compared a stale hash: a note the solution
    never writes went unnoticed."""
    world = counters["envscaler"]
    episode = world(task="gold")
    episode.call("bump")
    episode.call("note", {"id": "extra"})
    episode.state_hash()
    assert episode.initial_state().state_hash() == world(task="gold").state_hash()
    assert episode.score().reward == 0.0
    exact = world(task="gold")
    exact.call("bump")
    exact.state_hash()
    assert exact.score().reward == 1.0


def test_the_initial_state_draws_from_the_seed_of_the_reset(
        counters: dict[str, type[Episode]]) -> None:
    """The rebuilt initial state kept the current RNG, so replaying a solution that draws
    (``bump`` draws ``lucky``) gave another state: the exact solution scored 0."""
    world = counters["tau2"]
    for seed in (None, 11):
        episode = world(task="gold", seed=seed)
        assert episode.initial_state().rng.getstate() == episode.rng.getstate()
        episode.call("bump")
        assert episode.initial_state().rng.getstate() == world(task="gold",
                                                              seed=seed).rng.getstate()
        assert episode.score().reward == 1.0
        assert episode.copy().score().reward == 1.0
        snap = episode.snapshot()
        episode.call("bump")
        episode.restore(snap)
        assert episode.score().reward == 1.0


# ------------------------------------------ narrowing does not outlive what invalidates it
NARROWING = """\
world Narrow "Narrowing after branches and loops."

enum Color { red, blue }

entity Node "A node." {
  key id: int
  name: str
}

state {
  nodes: table Node
}

tool probe(flag: bool, c: Color) -> str "Read a node that may be none." {
  let o: Node? = nodes.get(1)
  require o != none else "no node"
  @BODY@
}
"""


@pytest.mark.parametrize(("body", "codes"), [
    # once accepted: a branch that falls through assigned none, yet `o` stayed narrowed
    ("if flag { o = none }\n  return o.name", ["WS305"]),
    ("if flag { o = nodes[2] } else { o = none }\n  return o.name", ["WS305"]),
    ("if flag { return \"x\" } else if c == red { o = none }\n  return o.name", ["WS305"]),
    ("match c {\n    case red { o = none }\n    else { }\n  }\n  return o.name", ["WS305"]),
    ("for n in nodes {\n    require o.name != \"\" else \"empty\"\n    o = none\n  }\n"
     "  return \"x\"", ["WS305"]),
    ("for n in nodes {\n    o = none\n  }\n  return o.name", ["WS305"]),
    ("while o.name != \"\" {\n    o = none\n  }\n  return \"x\"", ["WS305"]),
    # still accepted: every path that reaches the read keeps `o` known (the first was
    # rejected: what one case assigned leaked into the next)
    ("match c {\n    case red { o = none }\n    case blue { return o.name }\n  }\n"
     "  return \"x\"", []),
    ("if flag { o = nodes[2] }\n  return o.name", []),
    ("if flag { o = none\n    return \"x\" }\n  return o.name", []),
    ("if flag { o = nodes[2] } else { o = nodes[3] }\n  return o.name", []),
    ("match c {\n    case red { o = nodes[2] }\n    case blue { o = nodes[3] }\n  }\n"
     "  return o.name", []),
    ("match c {\n    case red { o = none\n      return \"x\" }\n    else { }\n  }\n"
     "  return o.name", []),
    ("for n in nodes {\n    require o.name != \"\" else \"empty\"\n  }\n  return o.name", []),
    ("for n in nodes {\n    let p: Node? = none\n    p = n\n"
     "    require p.name != \"\" else \"empty\"\n  }\n  return o.name", []),
])
def test_narrowing_does_not_outlive_an_assignment_in_a_branch_or_loop(
        body: str, codes: list[str]) -> None:
    """Such a read compiled to ``rt.present(o)`` and failed at run time instead."""
    result = check_source(NARROWING.replace("@BODY@", body))
    assert [d.code for d in result.diagnostics] == codes, [
        f"{d.span}: {d.message}" for d in result.diagnostics]


# ---------------------------------------------------------- memory really running out
MEMORY_SCRIPT = """\
import json, resource, sys
from pathlib import Path
from worldspec.services.loading import compile_worlds

root = Path(sys.argv[1])
spec = root / "grow.world"
spec.write_text('''world Grow "A tool that grows a string until memory runs out."

state {
  calls: int = 0
  text: str = ""
}

tool grow() -> int "Double a string forever." {
  calls += 1
  text = "started"
  let s = "x"
  while true {
    s = s + s
  }
  return len(s)
}

tool ping() -> int "Count a call." {
  calls += 1
  return calls
}
''', encoding="utf-8")
world = compile_worlds([spec]).worlds["Grow"]
episode = world()
before = episode.state_hash()
limit = 256 * 1024 ** 2  # 256 MiB of address space on top of what is mapped now
with open("/proc/self/statm") as statm:
    mapped = int(statm.read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (mapped + limit, mapped + limit))
result = episode.call("grow")
print(json.dumps({"failed": episode.failed(result), "result": result,
                  "unchanged": episode.state_hash() == before,
                  "error": type(episode.last_error).__name__,
                  "after": episode.call("ping")}))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and /proc/self/statm")
def test_a_tool_that_runs_out_of_memory_fails_and_changes_nothing(tmp_path: Path) -> None:
    """In a subprocess with a memory limit: the doubling string ends in ``MemoryError`` (or a
    size budget), the call fails, nothing it changed stays, and the episode goes on."""
    run = subprocess.run(
        [sys.executable, "-c", MEMORY_SCRIPT, str(tmp_path)], cwd=REPO,
        env={**os.environ, "WORLDSPEC_CACHE": str(tmp_path / "cache"),
             "PYTHONPATH": str(REPO)},
        capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    assert outcome["failed"] and outcome["unchanged"], outcome
    assert outcome["after"] == {"success": True, "data": 1}


#: A call made when the process has (almost) no memory left: the arguments' JSON text cannot
#: even be decoded, or the tool's many small texts fill what is left.
NO_MEMORY_SCRIPT = """\
import json, resource, sys
from pathlib import Path
from worldspec.services.loading import compile_worlds

root, margin, how = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
spec = root / "hog.world"
spec.write_text('''world Hog "A tool that fills memory with many small texts."

config { results: envscaler }

state { calls: int = 0 }

tool hog() -> int "900,000 short texts, kept in lists." {
  calls += 1
  let xs = [[f"{i}-{j}" for j in range(900)] for i in range(1000)]
  return len(xs)
}

tool ping() -> int "Count a call." {
  calls += 1
  return calls
}
''', encoding="utf-8")
episode = compile_worlds([spec]).worlds["Hog"]()
episode.call("ping")
before = episode.state_hash()
arguments = '{"pad": "' + "x" * 8_000_000 + '"}'
with open("/proc/self/statm") as statm:
    mapped = int(statm.read().split()[0]) * resource.getpagesize()
hard = resource.getrlimit(resource.RLIMIT_AS)[1]
resource.setrlimit(resource.RLIMIT_AS, (mapped + margin, hard))
try:
    result = episode.call("hog") if how == "tool" else episode.call("ping", arguments)
except MemoryError:
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    print(json.dumps({"raised": "MemoryError"}))
    raise SystemExit(0)
unchanged = episode.state_hash() == before
resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
print(json.dumps({"result": result, "unchanged": unchanged, "after": episode.call("ping")}))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and /proc/self/statm")
@pytest.mark.parametrize("how", ["arguments", "tool"])
@pytest.mark.parametrize("margin", [0, 1 << 20])
def test_a_call_at_no_free_memory_fails_and_changes_nothing(tmp_path: Path, how: str,
                                                            margin: int) -> None:
    """With no memory left beyond what the process holds (or 1 MiB), decoding the arguments'
    JSON text or the tool's own work runs out: ``call`` still returns a failed result (it
    used to raise ``MemoryError`` for the arguments), nothing changed, and the episode goes on
    once memory is back."""
    run = subprocess.run(
        [sys.executable, "-c", NO_MEMORY_SCRIPT, str(tmp_path), str(margin), how], cwd=REPO,
        env={**os.environ, "WORLDSPEC_CACHE": str(tmp_path / "cache"),
             "PYTHONPATH": str(REPO)},
        capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    assert outcome == {"result": {"success": False, "error": "The call ran out of memory."},
                       "unchanged": True, "after": {"success": True, "data": 2}}


# ------------------------------------------------------------ any sequence of calls
OPERATIONS = st.one_of(
    st.just(("bump", {})),
    st.builds(lambda i: ("note", {"id": f"N{i}"}), st.integers(0, 3)),
    st.builds(lambda kind: ("crash", {"kind": kind}), st.sampled_from(sorted(RAISED))),
    st.just(("bump", "{not json")),
    st.just(("no_such_tool", {})),
)


@settings(max_examples=40, deadline=None)
@given(operations=st.lists(OPERATIONS, max_size=12))
def test_failed_calls_leave_no_trace_in_any_sequence(
        counters: dict[str, type[Episode]], operations: list[tuple[str, Any]]) -> None:
    """An episode that also makes failing calls ends exactly like one that makes only the
    calls that succeed: same state, clock, RNG, initial state and score."""
    world = crashing(counters["envscaler"])
    episode, shadow = world(task="gold"), world(task="gold")
    for name, arguments in operations:
        if not episode.failed(episode.call(name, arguments)):
            assert not shadow.failed(shadow.call(name, arguments))
        assert fingerprint(episode) == fingerprint(shadow)
    assert episode.initial_state().state_hash() == shadow.initial_state().state_hash()
    assert episode.score() == shadow.score()


def test_property_checks_still_report_an_internal_error(
        counters: dict[str, type[Episode]]) -> None:
    """``call`` no longer raises on a bug, so the world's property tests (``worldspec test``,
    exploration) must say that a call failed on one instead of passing it as a failure."""
    episode = crashing(counters["envscaler"])(task="start")
    before = episode.state_hash()
    episode.call("crash", {"kind": "AttributeError"})
    violation = check_call(episode, episode.TOOLS["crash"], {"kind": "AttributeError"}, before)
    assert violation == Violation("internal error", "crash", "crash failed on an unexpected "
                                  "AttributeError: 'int' object has no attribute 'name'")
    episode.call("crash", {"kind": "ZeroDivisionError"})  # the language's own failure
    assert check_call(episode, episode.TOOLS["crash"], {"kind": "ZeroDivisionError"},
                      before) is None
