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
  got; a model's bad input (an unknown tool, malformed JSON) stays a failed result.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from worldspec.compiler.api import check_paths
from worldspec.compiler.build import generate_all, write_packages
from worldspec.runtime.episode import Episode
from worldspec.services.loading import compile_worlds

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
]


@pytest.fixture(scope="module")
def locals_world(tmp_path_factory: pytest.TempPathFactory) -> type[Episode]:
    return compile_spec(tmp_path_factory.mktemp("locals"), LOCALS, "Locals")


def test_locals_spec_checks_clean(tmp_path: Path) -> None:
    spec = tmp_path / "locals.world"
    spec.write_text(LOCALS, encoding="utf-8")
    result = check_paths([spec])
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
    result = check_paths([spec])
    assert result.ok
    write_packages(generate_all(result), tmp_path / "out")
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
         "--cache-dir", str(tmp_path / "mypy-cache"), str(tmp_path / "out")],
        cwd=REPO, capture_output=True, text=True, timeout=300)
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
