"""What an f-string (and ``str()``) prints for each kind of value: Python's ``f"{x}"`` text.

The runtime holds a list (and a set) as a tuple; interpolated, it still prints as Python
prints a list, ``[1, 'a']``, never as the tuple ``(1, 'a')``. Inside a list, map or record
each value is Python's ``repr()`` of it, except that an enum member is its value and a row
its key, as at the top level (where text prints unquoted, as Python's ``str()`` does).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from spec_support import compile_text

from worldspec.runtime.episode import Episode

SPEC = """\
world Shown "What f-strings print."

enum Color { red, green }

record Size "A size." {
  label: str
  widths: list[int]
  color: Color
}

entity Item "An item." {
  key id: str
  tags: list[str]
  colors: set[Color]
  stock: map[str, int]
  size: Size
  parts: list[Item]
  grid: list[list[int]]
  made: date
}

state {
  items: table Item
  total: int = 3
  ratio: float = 0.5
  open: bool = true
  note: str? = none
  raw: json = none
}

tool show(item: Item "The item.", what: str "Which value.") -> str "Print one value." {
  if what == "tags" { return f"{item.tags}" }
  if what == "colors" { return f"{item.colors}" }
  if what == "stock" { return f"{item.stock}" }
  if what == "size" { return f"{item.size}" }
  if what == "parts" { return f"{item.parts}" }
  if what == "grid" { return f"{item.grid}" }
  if what == "literal" { return f"{[1, 2]} and {[item]}" }
  if what == "item" { return f"{item}" }
  if what == "color" { return f"{item.size.color}" }
  if what == "label" { return f"{item.size.label}" }
  if what == "made" { return f"{item.made}" }
  if what == "scalars" { return f"{total} {ratio} {open} {note}" }
  if what == "raw" { return str(raw) }
  return "?"
}

tool keep(value: json "Any JSON value.") -> bool "Keep a JSON value." {
  raw = value
  return true
}
"""

DATA = {"items": [
    {"id": "I1", "tags": ["a", "it's"], "colors": ["green", "red"], "stock": {"s": 1, "m": 0},
     "size": {"label": "small", "widths": [2, 3], "color": "red"}, "parts": ["I2"],
     "grid": [[1], []], "made": "2024-03-01"},
    {"id": "I2", "tags": [], "colors": [], "stock": {}, "parts": [], "grid": [],
     "size": {"label": "big", "widths": [], "color": "green"}, "made": "2024-03-02"},
]}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> type[Episode]:
    return compile_text(tmp_path_factory.mktemp("shown"), "shown.world", SPEC, "Shown")


def shown(world: type[Episode], what: str, item: str = "I1") -> Any:
    answer = world(data=DATA).call("show", {"item": item, "what": what})
    assert answer["success"], answer
    return answer["data"]


@pytest.mark.parametrize(("what", "python"), [
    ("tags", ["a", "it's"]),
    ("stock", {"s": 1, "m": 0}),
    ("grid", [[1], []]),
])
def test_lists_and_maps_print_as_python_prints_them(world: type[Episode], what: str,
                                                    python: Any) -> None:
    assert shown(world, what) == f"{python}"


def test_a_list_literal_prints_as_a_list_not_a_tuple(world: type[Episode]) -> None:
    assert shown(world, "literal") == "[1, 2] and ['I1']"


def test_sets_enums_rows_and_records_inside_a_value(world: type[Episode]) -> None:
    assert shown(world, "colors") == "['green', 'red']"  # a set: its members, as stored
    assert shown(world, "parts") == "['I2']"  # rows: their keys
    assert shown(world, "size") == "Size(label='small', widths=[2, 3], color='red')"
    assert shown(world, "tags", "I2") == "[]" and shown(world, "stock", "I2") == "{}"
    assert shown(world, "size", "I2") == "Size(label='big', widths=[], color='green')"


def test_what_is_not_a_collection_prints_as_before(world: type[Episode]) -> None:
    """Text unquoted, an enum member as its value, a row as its key, a date as ISO text,
    scalars as Python's str(): nothing here turns into a repr."""
    assert shown(world, "label") == "small"
    assert shown(world, "color") == "red"
    assert shown(world, "item") == "I1"
    assert shown(world, "made") == str(dt.date(2024, 3, 1)) == "2024-03-01"
    assert shown(world, "scalars") == f"{3} {0.5} {True} {None}"


@pytest.mark.parametrize("value", [[1, "a", None, True, 2.5], {"k": [False, {"n": []}]}, "x", 7])
def test_str_of_json_is_pythons(world: type[Episode], value: Any) -> None:
    episode = world(data=DATA)
    assert episode.call("keep", {"value": value})["success"]
    assert episode.call("show", {"item": "I1", "what": "raw"})["data"] == str(value)
