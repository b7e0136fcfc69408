"""A local that ``require x != none`` narrowed is read without a guard where mypy narrows it too.

The spec's checker knows such a read is never none; the generated code used to test it again
(``(x if x is not None else rt.absent())``) on every read, for mypy. After ``if not (x is not
None): raise`` mypy narrows ``x`` itself, up to an assignment, so the read is plain there; in a
loop that assigns the local, in a lambda and after the block that narrowed it, the guard stays.
The package must pass ``mypy --strict`` and every tool must compute what the spec says.
"""

from __future__ import annotations

from pathlib import Path

from mypy_support import mypy_strict
from spec_support import compile_text, generated_source

from worldspec.compiler.api import check_specs
from worldspec.compiler.build import generate_all, write_packages

SPEC = """\
world Narrow "Reads of optional locals narrowed by require."

config { results: envscaler }

record Point "A point." { x: int  y: int }

state {
  points: map[str, Point] = {"a": Point(x: 1, y: 2), "b": Point(x: 10, y: 20)}
}

tool plain(id: str) -> int "Narrowed once, read twice." {
  let p = points.get(id)
  require p != none and id != "" else "no point"
  return p.x + p.y
}

tool looped(id: str, other: str) -> int "Narrowed, then assigned in a loop." {
  let p = points.get(id)
  require p != none else "no point"
  let total = p.x
  for k in [1, 2] {
    p = points.get(other)
    require p != none else "no other point"
    total += p.x
  }
  require p != none else "gone"
  return total + p.y
}

tool branched(id: str, flag: bool) -> int "Narrowed in a branch only." {
  let p = points.get(id)
  if flag {
    require p != none else "no point"
    return p.x
  }
  return if p != none then p.y else -1
}

tool sorted_by(id: str) -> list[str] "Read inside a lambda." {
  let p = points.get(id)
  require p != none else "no point"
  return sorted(["b", "a"], key: k => p.x)
}

tool problem_free(problem: str?) -> str "A message that exists where the require fails." {
  require problem == none else problem ?? ""
  return "fine"
}

tool problem_or_flag(problem: str?, flag: bool) -> str "A require that proves nothing." {
  require problem == none or flag else problem ?? "flag down"
  return "fine"
}

tool labelled(label: str?) -> str "Present on the right of `or`." {
  return if label == none or (label ?? "").strip() == "" then "none" else "some"
}
"""


def _body(source: str, tool: str) -> str:
    start = source.index(f"def tool_{tool}(")
    end = source.find("\n\n", start)  # the blank line after the method
    return source[start:end]


def test_a_narrowed_local_is_read_plain_and_the_tools_compute_the_same(tmp_path: Path) -> None:
    world = compile_text(tmp_path, "narrow.world", SPEC, "Narrow")
    source = generated_source(world)
    plain = _body(source, "plain")
    assert "rt.absent()" not in plain and "return rt.bounded(p.x + p.y)" in plain
    # narrowed again in the loop that assigns it: plain there too
    looped = _body(source, "looped")
    assert "total: int = p.x" in looped and "(total + p.x)" in looped
    assert "rt.absent()" not in looped
    # narrowed by a conditional, not by require: the guard stays
    assert "(p if p is not None else rt.absent()).y" in _body(source, "branched")
    # the lambda's read keeps its guard
    assert "lambda" in _body(source, "sorted_by") and "rt.absent()" in _body(source, "sorted_by")
    ep = world()
    assert ep.call("plain", {"id": "a"}) == {"success": True, "data": 3}
    assert ep.call("plain", {"id": "z"}) == {"success": False, "error": "no point"}
    assert ep.call("looped", {"id": "a", "other": "b"}) == \
        {"success": True, "data": 1 + 10 + 10 + 20}
    assert ep.call("looped", {"id": "a", "other": "z"}) == \
        {"success": False, "error": "no other point"}
    assert ep.call("branched", {"id": "a", "flag": True}) == {"success": True, "data": 1}
    assert ep.call("branched", {"id": "z", "flag": False}) == {"success": True, "data": -1}
    assert ep.call("branched", {"id": "b", "flag": False}) == {"success": True, "data": 20}
    assert ep.call("sorted_by", {"id": "a"}) == {"success": True, "data": ["b", "a"]}


def test_a_local_proved_present_needs_no_default(tmp_path: Path) -> None:
    """``x ?? d`` where the test around it proved ``x`` present (the message of ``require x ==
    none``, the right of ``x == none or ...``) is ``x``; where it proved nothing (``require x
    == none or flag``), the default stays."""
    world = compile_text(tmp_path, "narrow.world", SPEC, "Narrow")
    source = generated_source(world)
    assert "raise ToolError(problem)" in _body(source, "problem_free")
    assert "problem if problem is not None else 'flag down'" in \
        _body(source, "problem_or_flag")
    assert "label is None or self.built(label.strip()) == ''" in _body(source, "labelled")
    ep = world()
    assert ep.call("problem_free", {"problem": "Closed."}) == \
        {"success": False, "error": "Closed."}
    assert ep.call("problem_free", {}) == {"success": True, "data": "fine"}
    assert ep.call("problem_or_flag", {"problem": None, "flag": False}) == \
        {"success": True, "data": "fine"}
    assert ep.call("problem_or_flag", {"problem": "Late.", "flag": True}) == \
        {"success": True, "data": "fine"}
    assert ep.call("problem_or_flag", {"problem": "Late.", "flag": False}) == \
        {"success": False, "error": "Late."}
    assert ep.call("labelled", {"label": " "}) == {"success": True, "data": "none"}
    assert ep.call("labelled", {"label": "x"}) == {"success": True, "data": "some"}


def test_the_package_with_plain_reads_passes_mypy_strict(tmp_path: Path) -> None:
    spec = tmp_path / "narrow.world"
    spec.write_text(SPEC, encoding="utf-8")
    result = check_specs([spec])
    assert result.ok, [d.message for d in result.diagnostics]
    write_packages(generate_all(result), tmp_path / "out")
    mypy = mypy_strict(tmp_path / "out", tmp_path / "mypy-cache")
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
