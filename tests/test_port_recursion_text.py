"""CPython's RecursionError texts are one text to ``worldspec compare``: which suffix the
interpreter adds (" while calling a Python object", " in comparison") follows its own call
path, not the program, so a world cannot be asked for it; every other error text is exact."""

from __future__ import annotations

from pathlib import Path

from worldspec.compiler.api import check_source
from worldspec.port.compare import RECURSION_TEXT, CompareOptions, Original, compare, error_text
from worldspec.port.sandbox import Limits
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_result

LINKED = Path(__file__).resolve().parent / "port_classes" / "linked.py"
OPTIONS = CompareOptions(examples=80, steps=8, limits=Limits(call_timeout=10.0))

LINKS = """
world Links "Folders that hold folders."

config {
  results: bfcl
}

state {
  looped: bool = false "Whether the root holds itself."
}

tool nest() -> json
  "Put the root folder inside itself."
{
  looped = true
  return {"nested": true}
}

tool size() -> json
  "How many folders the root holds, itself included."
{
  require not looped else TEXT
  return {"size": 1}
}
"""


def _load(text: str) -> type[Episode]:
    result = check_source(text, "links.world")
    assert result.ok, [d.message for d in result.diagnostics]
    return next(iter(load_result(result).worlds.values()))


def test_the_rule_keeps_every_text_but_the_recursion_suffix() -> None:
    assert error_text("maximum recursion depth exceeded while calling a Python object") \
        == error_text("maximum recursion depth exceeded") == RECURSION_TEXT
    assert error_text("maximum recursion depth exceeded in comparison") == RECURSION_TEXT
    assert error_text("Key 'x' not found") == "Key 'x' not found"
    assert error_text("recursion depth exceeded") == "recursion depth exceeded"


def test_a_world_failing_a_cycle_with_the_recursion_text_agrees() -> None:
    world = _load(LINKS.replace("TEXT", f'"{RECURSION_TEXT}"'))
    report = compare(world, Original(LINKED, "Links", ignore=("root",)), OPTIONS)
    assert report.agrees, report.render_text()
    assert report.calls > 100


def test_a_world_failing_a_cycle_with_another_text_differs() -> None:
    world = _load(LINKS.replace("TEXT", '"a cycle of links"'))
    report = compare(world, Original(LINKED, "Links", ignore=("root",)), OPTIONS)
    assert not report.agrees
    assert any("maximum recursion depth exceeded" in d.message and "a cycle of links"
               in d.message for d in report.differences), report.render_text()
