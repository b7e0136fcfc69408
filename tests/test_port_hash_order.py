"""Values whose order the original leaves to the string hash seed (a set of names joined into a
text, the list of a set kept as state) are compared up to order, only there: the original runs
again under other hash seeds to tell (``worldspec.port.hash_order``)."""

from __future__ import annotations

from pathlib import Path

from worldspec.compiler.api import check_source
from worldspec.port.compare import CompareOptions, Original, compare
from worldspec.port.hash_order import HASH_ORDER_NOTE, agree_up_to_order, tokens
from worldspec.port.sandbox import Limits, Sandbox
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_result

CLASSES = Path(__file__).resolve().parent / "port_classes"
HASH_ORDER = CLASSES / "hash_order.py"
OPTIONS = CompareOptions(examples=60, steps=8, limits=Limits(call_timeout=5.0))

SETTINGS = """
world Settings "Settings by name."

config {
  results: bfcl
}

record Status {
  status: str
}

state {
  values: map[str, int] = {"volume": 5, "brightness": 3} "The settings."
}

tool update(changes: map[str, int] "The new values by name.") -> Status
  "Change settings; every name must be a known setting."
{
  let unknown = sorted([name for name in changes if name not in values])
  require len(unknown) == 0 else "Unknown settings: " + ", ".join(NAMES)
  for name in changes {
    values[name] = changes[name]
  }
  return Status(status: "updated")
}
"""

#: the unknown names, sorted: an order the original (a set) never promises
SORTED = SETTINGS.replace("NAMES", "unknown")
#: one name left out where there are several: the items differ, not only their order
ONE_MISSING = SETTINGS.replace("NAMES", "if len(unknown) > 1 then unknown[1:] else unknown")

TAGS = """
world Tags "Tags, each kept once."

config {
  results: bfcl
}

record Count {
  count: int
}

state {
  tags: list[str] = [] "The tags."
}

tool add_tags(names: list[str] "The tags to add.") -> Count
  "Add tags; each tag is kept once."
{
  let merged = tags
  for name in names {
    if name not in merged {
      merged = merged + [name]
    }
  }
  tags = sorted(merged)
  return Count(count: len(tags))
}
"""


def load(text: str) -> type[Episode]:
    result = check_source(text, "world.world")
    assert result.ok, [d.message for d in result.diagnostics]
    return next(iter(load_result(result).worlds.values()))


def error_text(hash_seed: int) -> str:
    with Sandbox(HASH_ORDER, "Settings", load=None, hash_seed=hash_seed) as sandbox:
        sandbox.reset()
        outcome = sandbox.call("update", {"changes": {n: 1 for n in "abcdefg"}})
    assert isinstance(outcome.result, dict)
    return str(outcome.result["error"])


def test_the_sandbox_runs_the_original_under_the_hash_seed_it_is_given() -> None:
    first = error_text(0)
    assert error_text(0) == first  # the same seed, the same order (a fresh interpreter)
    others = {error_text(seed) for seed in (1, 2, 3)}
    assert others - {first}, "seven names in a set kept their order under four hash seeds"
    assert all(tokens(text) == tokens(first) for text in others)


def test_up_to_order_means_the_same_tokens_or_items_each_as_often() -> None:
    assert agree_up_to_order("Unknown settings: b, a", "Unknown settings: a, b")
    assert not agree_up_to_order("Unknown settings: b, a", "Unknown settings: a, c")
    assert not agree_up_to_order("Unknown settings: a, a", "Unknown settings: a")
    assert not agree_up_to_order("Unknown settings: b, a", "Unknown settings: a b")
    assert agree_up_to_order("Invalid class: {'first', 'business'}",
                             "Invalid class: {'business', 'first'}")  # a set's repr
    assert not agree_up_to_order("{'first', 'business'}", "{'business', first}")
    assert agree_up_to_order({"error": "x: b, a"}, {"error": "x: a, b"})
    assert agree_up_to_order(["b", "a"], ["a", "b"])
    assert not agree_up_to_order(["b", "a"], ["a", "a"])
    assert not agree_up_to_order([1, 2], [2.0, 1.0])  # the items still by the exact rule
    assert not agree_up_to_order({"1": ["a"]}, {1: ["a"]})


def test_a_world_that_sorts_what_the_original_takes_from_a_set_agrees() -> None:
    report = compare(load(SORTED), Original(HASH_ORDER, "Settings"), OPTIONS)
    assert report.agrees, report.render_text()
    assert report.hash_ordered > 0
    assert (f"{report.hash_ordered:,} call(s) whose order the original leaves to the hash "
            "seed, compared up to order") in report.render_text()
    assert report.to_json()["hash_ordered"] == report.hash_ordered


def test_a_world_whose_names_differ_differs_with_the_note() -> None:
    report = compare(load(ONE_MISSING), Original(HASH_ORDER, "Settings"), OPTIONS)
    assert not report.agrees
    found = report.differences[0]
    assert (found.kind, found.tool) == ("result", "update")
    assert found.order_left_to_hash and HASH_ORDER_NOTE in found.message
    assert found.to_json()["order_left_to_hash"] is True
    assert len(found.calls) == 1 and len(found.calls[0].call[1]["changes"]) >= 2


def test_where_the_original_determines_the_order_a_sorting_world_differs() -> None:
    report = compare(load(SORTED), Original(HASH_ORDER, "OrderedSettings"), OPTIONS)
    assert not report.agrees
    found = report.differences[0]
    assert (found.kind, found.tool) == ("result", "update")
    assert not found.order_left_to_hash and HASH_ORDER_NOTE not in found.message
    assert report.hash_ordered == 0
    original, world = found.calls[-1].original["error"], found.calls[-1].world["error"]
    assert original != world and tokens(original) == tokens(world)  # only the order differs


def test_state_kept_in_an_order_the_hash_seed_decides_is_compared_up_to_order() -> None:
    report = compare(load(TAGS), Original(HASH_ORDER, "Tags"), OPTIONS)
    assert report.agrees, report.render_text()
    assert report.hash_ordered > 0
