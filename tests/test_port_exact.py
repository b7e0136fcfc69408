"""The exact comparison of ``worldspec compare``: the original's values cross from the
sandbox with their types (tuples, sets, typed dict keys, objects by repr), and each verdict
holds both ways on real classes (tests/port_classes/typed_values.py) and real worlds."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from worldspec.compiler.api import check_source
from worldspec.port.compare import CompareOptions, CompareReport, Original, compare, world_state
from worldspec.port.exact import Repr, agree, decoded, encoded, shown
from worldspec.port.sandbox import Sandbox
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_result

CLASSES = Path(__file__).resolve().parent / "port_classes"
TYPED = CLASSES / "typed_values.py"
FAST = CompareOptions(examples=20, steps=6, seed_count=2)


def load(text: str) -> type[Episode]:
    result = check_source(text, "world.world")
    assert result.ok, [d.message for d in result.diagnostics]
    return next(iter(load_result(result).worlds.values()))


def run(world: str, class_name: str, data: dict[str, Any] | None = None,
        options: CompareOptions = FAST) -> CompareReport:
    return compare(load(world), Original(TYPED, class_name, data), options)


SLOTS = '''world Slots "Notes under int slots and text keys."
config { results: bfcl }
state { notes: map[json, str] = {} }
tool put(slot: int "The slot.", note: str "The note.") -> json "Keep a note." {
  notes[slot] = note
  return {"slot": slot, "notes": len(notes)}
}
tool label(name: str "The key.", note: str "The note.") -> json "Keep a note." {
  notes[name] = note
  return {"name": name, "notes": len(notes)}
}
tool get(slot: int "The slot.") -> str? "The note." { return notes.get(slot) }
'''
#: the int slot kept as its text: JSON alone shows the same object
SLOTS_AS_TEXT = SLOTS.replace("notes[slot] = note", "notes[str(slot)] = note").replace(
    "notes.get(slot)", "notes.get(str(slot))")


def test_the_child_sends_values_with_their_types() -> None:
    with Sandbox(TYPED, "Kinds", load=None) as box:
        box.reset()
        value = box.call("everything", {}).result
    assert value["1"] == "text key" and value[1] == "int key"
    assert type(value[2.5]) is tuple and value[2.5] == (1, [2.0, True])
    assert type(value[2.5][1][0]) is float and value[2.5][1][1] is True
    assert value["$ref"] is None and value[(0, "a")] == frozenset({3})
    assert type(value["set"]) is set and value["set"] == {1, "b"}
    assert math.isnan(value["nan"]) and value["point"] == Repr("Point(x=1, y=2)")
    assert value["nested"] == {"$tuple": [1]}  # a dict of the class, not a tag
    # the report's JSON form reads back to the same value
    again = decoded(json.loads(json.dumps(encoded(value))))
    assert again.keys() == value.keys() and again[(0, "a")] == frozenset({3})
    assert shown(value[2.5]) == "(1, [2.0, true])"


@pytest.mark.parametrize(("original", "world", "same"), [
    (1, 1, True), (1, 1.0, False), (1.0, 1, False), (True, 1, False), (3.0, 3.0, True),
    ((1, 2), [1, 2], False), ([1, 2], [1, 2], True), ([1, 2], [2, 1], False),
    ({1, 2}, [2, 1], True), ({1, 2}, [1, 2, 2], False), ({1, 2}, [1, 3], False),
    ({"1": "a", 1: "b"}, {"1": "a", 1: "b"}, True), ({"1": "a", 1: "b"}, {"1": "b"}, False),
    ({1: "b"}, {"1": "b"}, False), ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),
    (Repr("Point(x=1, y=2)"), "Point(x=1, y=2)", True), (Repr("Point(x=1, y=2)"),
                                                        {"x": 1, "y": 2}, False),
    (Repr("(1.2246467991473532e-16+2j)"), "(1.2246467991473532e-16+2j)", True),
    (Repr("(1.2246467991473532e-16+2j)"), 2.0, False), (float("nan"), float("nan"), True),
    (54.04627646748664, 54.046276467486635, False),
])
def test_the_rule(original: Any, world: Any, same: bool) -> None:
    assert agree(original, world) is same


def test_a_dict_with_1_and_text_1_as_keys_is_compared_whole() -> None:
    world = load(SLOTS)
    episode = world(data={})
    with Sandbox(TYPED, "Slots", load="auto", data={}) as box:
        box.reset()
        for name, args in (("put", {"slot": 1, "note": "int"}),
                           ("label", {"name": "1", "note": "text"})):
            outcome = box.call(name, args)
            assert agree(outcome.result, episode.call(name, args))
    assert outcome.state["notes"] == {1: "int", "1": "text"}
    assert agree(outcome.state, world_state(episode))
    lossy = load(SLOTS_AS_TEXT)(data={})  # one key "1", the int's note overwritten
    for name, args in (("put", {"slot": 1, "note": "int"}),
                       ("label", {"name": "1", "note": "text"})):
        lossy.call(name, args)
    assert not agree(outcome.state, world_state(lossy))


def test_int_slots_beside_text_keys_agree_and_a_world_keeping_them_as_text_differs() -> None:
    data = {"notes": {"a": "alpha"}}
    report = run(SLOTS, "Slots", data)
    assert report.agrees, report.render_text()
    report = run(SLOTS_AS_TEXT, "Slots", data)
    assert not report.agrees
    found = report.differences[0]
    assert (found.kind, found.tool) == ("state", "put")
    assert 'the original has {"a": "alpha", ' in found.message
    # the int key in the report's JSON keeps its type; the world's key is text
    record = found.calls[-1].to_json()
    assert record["call"].startswith("put(") and "$dict" not in json.dumps(record["world"])


def test_a_world_that_turns_loaded_text_keys_into_ints_fails() -> None:
    # the world's map[json, ...] reads the data's key "1" as the int 1: the original keeps
    # the text, and after put(1, ...) holds both; JSON alone would show one key "1" each
    report = run(SLOTS, "Slots", {"notes": {"1": "loaded"}})
    assert [d.kind for d in report.differences] == ["initial state"]
    assert report.differences[0].message == \
        'notes: the original has {"1": "loaded"}, the world {1: "loaded"}'


SHAPES = '''world Shapes "Points and pairs."
config { results: bfcl }
tool point(x: int "Across.", y: int "Up.") -> str "A point." { return f"Point(x={x}, y={y})" }
tool pair(x: int "The first.", y: int "The second.") -> list[int] "A pair." { return [x, y] }
'''


def test_objects_are_compared_by_repr_and_tuples_differ_from_lists() -> None:
    report = run(SHAPES, "Shapes")
    assert {d.tool for d in report.differences} == {"pair"}, report.render_text()
    found = report.differences[0]
    assert found.kind == "result" and "the original returned (" in found.message
    record = found.calls[-1].to_json()
    assert record["original"] == {"$tuple": record["world"]}
    as_record = SHAPES.replace('-> str "A point." { return f"Point(x={x}, y={y})" }',
                               '-> json "A point." { return {"x": x, "y": y} }')
    report = run(as_record, "Shapes")
    assert {d.tool for d in report.differences} == {"point", "pair"}
    point = next(d for d in report.differences if d.tool == "point")
    assert "the original returned Point(x=" in point.message


ROOTS = '''world Roots "Roots."
config { results: bfcl }
state { values: list[int] = [] }
tool by_sqrt() -> list[float] "sqrt." { return [v ** 0.5 for v in values] }
tool by_power() -> list[float] "power." { return [v ** 0.5 for v in values] }
tool root(x: int "The number.") -> float "root." { return x ** 0.5 }
'''


def test_the_last_bit_of_a_root_and_a_complex_power_differ() -> None:
    # math.sqrt(2921) and 2921 ** 0.5 differ in the last bit; (-5) ** 0.5 is complex
    report = run(ROOTS, "Roots", {"values": [2921, 16]})
    found = {d.tool: d for d in report.differences}
    assert set(found) == {"by_sqrt", "root"}, report.render_text()  # by_power agrees
    assert "54.04627646748664" in found["by_sqrt"].message
    assert "54.046276467486635" in found["by_sqrt"].message
    assert "j)" in found["root"].message and "is not a real number" in found["root"].message


def test_an_int_loaded_into_a_float_state_item_differs() -> None:
    as_floats = ROOTS.replace("values: list[int]", "values: list[float]")
    report = run(as_floats, "Roots", {"values": [2921, 16]})
    assert [d.kind for d in report.differences] == ["initial state"]
    assert "the original has [2921, 16], the world [2921.0, 16.0]" in \
        report.differences[0].message


# ------------------------------------------------------ seeds, data sets, confirmation
INVENTORY = CLASSES / "inventory.py"
INVENTORY_DATA = json.loads((CLASSES / "inventory.json").read_text(encoding="utf-8"))


def test_every_seed_runs_on_every_data_set_and_the_report_says_so() -> None:
    data_sets = (("letters.json", {"notes": {"a": "alpha"}}), ("empty.json", {}))
    report = compare(load(SLOTS), Original(TYPED, "Slots", init_data_files=data_sets),
                     CompareOptions(examples=10, steps=4, seed=5, seed_count=2))
    assert report.agrees, report.render_text()
    assert report.examples == 40 and report.seeds == [5, 6]
    assert report.data_files == ["letters.json", "empty.json"]
    assert "compared 40 sequence(s): seed(s) 5, 6, each on 2 data set(s)" in \
        report.render_text()
    assert report.to_json()["seeds"] == [5, 6] and report.to_json()["confirmed"] == 0
    # a data set the world cannot take as the original does, second: found, and named
    digits = (*data_sets, ("digits.json", {"notes": {"1": "loaded"}}))
    report = compare(load(SLOTS), Original(TYPED, "Slots", init_data_files=digits),
                     CompareOptions(examples=10, steps=4, seed_count=2))
    assert not report.agrees and report.examples == 40
    found = report.differences[0]
    assert (found.kind, found.data_file) == ("initial state", "digits.json")
    assert "initial state in (start) (data digits.json):" in report.render_text()


def test_an_agreement_is_confirmed_on_fresh_sequences() -> None:
    report = run(SLOTS, "Slots", {"notes": {"a": "alpha"}},
                 CompareOptions(examples=10, steps=5, seed_count=2, confirm=1000))
    assert report.agrees, report.render_text()
    assert (report.examples, report.confirmed, report.confirm_seed) == (20, 1000, 2)
    assert "confirmed on 1,000 fresh sequences (seed 2, on 1 data set(s))" in \
        report.render_text()


def test_the_confirmation_finds_what_the_first_sequences_missed() -> None:
    from port_replies import BUGGY_TAKE, GET_ITEM, RESTOCK, TAKE
    from test_port_compare import inventory_world

    original = Original(INVENTORY, "InventoryEnv", INVENTORY_DATA)
    # one sequence of 4 calls misses the planted `<=` (it needs take to empty the stock)
    few = CompareOptions(examples=1, steps=4, seed_count=1)
    buggy = load(inventory_world(GET_ITEM, BUGGY_TAKE, RESTOCK))
    assert compare(buggy, original, few).agrees
    report = compare(buggy, original, CompareOptions(examples=1, steps=4, seed_count=1,
                                                     confirm=150))
    assert not report.agrees
    found = report.differences[0]
    assert (found.tool, found.in_confirmation) == ("take", True)
    assert 1 <= len(found.calls) <= 3  # shrunk
    assert "(found by the confirmation)" in report.render_text()
    assert "the confirmation (seed 1) found a difference" in report.render_text()
    faithful = load(inventory_world(GET_ITEM, TAKE, RESTOCK))
    assert compare(faithful, original, CompareOptions(examples=1, steps=4, seed_count=1,
                                                      confirm=150)).agrees


def test_compare_command_seeds_and_confirmation(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from worldspec.cli.main import main as cli_main

    world, data = tmp_path / "slots.world", tmp_path / "letters.json"
    world.write_text(SLOTS, encoding="utf-8")
    data.write_text(json.dumps({"notes": {"a": "alpha"}}), encoding="utf-8")
    argv = ["compare", str(TYPED), "--class", "Slots", str(world), "--init-data", str(data),
            "--examples", "5", "--steps", "4", "--test-seed", "10", "--test-seeds", "2",
            "--confirm", "30", "--format", "json"]
    assert cli_main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["agrees"] and report["seeds"] == [10, 11] and report["examples"] == 10
    assert (report["confirm"], report["confirm_seed"], report["confirmed"]) == (30, 12, 30)
    assert report["coverage"].endswith("confirmed on 30 fresh sequences (seed 12, on 1 "
                                       "data set(s))")
    for bad, message in ((["--test-seeds", "0"], "--test-seeds must be at least 1"),
                         (["--confirm", "-1"], "--confirm must be at least 0")):
        assert cli_main(["compare", str(TYPED), "--class", "Slots", str(world), *bad]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err


def test_deeply_nested_tuples_are_cut_within_the_protocol_depth() -> None:
    with Sandbox(TYPED, "Kinds", load=None) as box:
        box.reset()
        value = box.call("nested", {"levels": 80}).result
    depth = 0
    while isinstance(value, tuple):
        value, depth = value[0], depth + 1
    assert value == Repr("<nested too deeply>") and 25 <= depth <= 40
