"""The differential test (``worldspec compare``): the original class, sandboxed, and a world
driven with the same random call sequences; differences shrunk to their shortest sequence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from port_replies import BUGGY_TAKE, GET_ITEM, RESTOCK, TAKE

from worldspec.cli.main import main as cli_main
from worldspec.compiler.api import check_source
from worldspec.port.compare import CompareOptions, Original, compare
from worldspec.port.sandbox import Limits
from worldspec.port.skeleton import emit_skeleton, read_class
from worldspec.port.translate import splice
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_result

CLASSES = Path(__file__).resolve().parent / "port_classes"
INVENTORY = CLASSES / "inventory.py"
DATA = json.loads((CLASSES / "inventory.json").read_text(encoding="utf-8"))
OPTIONS = CompareOptions(examples=60, steps=12, limits=Limits(call_timeout=5.0))


def inventory_world(*tools: str) -> str:
    info = read_class(INVENTORY.read_text(encoding="utf-8"))
    text = emit_skeleton(info, DATA).text
    for tool in tools:
        text = splice(text, tool)
    return text


def load(text: str) -> type[Episode]:
    result = check_source(text, "world.world")
    assert result.ok, [d.message for d in result.diagnostics]
    return next(iter(load_result(result).worlds.values()))


def original(**kwargs: Any) -> Original:
    return Original(INVENTORY, "InventoryEnv", DATA, **kwargs)


def test_a_faithful_port_agrees() -> None:
    report = compare(load(inventory_world(GET_ITEM, TAKE, RESTOCK)), original(), OPTIONS)
    assert report.agrees, report.render_text()
    assert report.examples >= 60 and report.calls > 100
    assert report.tools == ["get_item", "take", "restock"]


def test_a_planted_difference_is_found_and_shrunk() -> None:
    report = compare(load(inventory_world(GET_ITEM, BUGGY_TAKE, RESTOCK)), original(), OPTIONS)
    assert not report.agrees
    found = report.differences[0]
    assert (found.kind, found.tool) == ("result", "take")
    assert 1 <= len(found.calls) <= 3, found.render()
    last = found.calls[-1]
    assert last.call[0] == "take" and last.original["success"] is True
    assert last.world["success"] is False and last.world["error"].startswith("Only ")


def test_the_skeleton_itself_differs_in_every_tool() -> None:
    report = compare(load(inventory_world()), original(), OPTIONS)
    tools = {d.tool for d in report.differences}
    assert len(tools) == 3 and all(d.calls and len(d.calls) == 1 for d in report.differences)
    assert "not ported yet" in report.differences[0].message


def test_initial_states_are_compared_first() -> None:
    report = compare(load(inventory_world(GET_ITEM, TAKE, RESTOCK)),
                     Original(INVENTORY, "InventoryEnv", {**DATA, "attempts": 2},
                              ignore=()), OPTIONS)
    assert report.agrees  # the same data on both sides
    extra = inventory_world(GET_ITEM, TAKE, RESTOCK).replace("attempts: int = 0",
                                                             "attempts: int = 0\n  x: int = 1")
    world = load(extra)
    report = compare(world, original(), OPTIONS)
    assert [d.kind for d in report.differences] == ["initial state"]
    assert "only in the world: x" in report.differences[0].message
    assert compare(world, original(ignore=("x",)), OPTIONS).agrees


UNHASHABLE = '''
fn unhashable(value: json) -> str? "Python's TypeError for a list or dict used as a key." {
  let kind = type_name(value)
  if kind == "list" or kind == "dict" {
    return f"unhashable type: '{kind}'"
  }
  return none
}
'''


def test_wrong_types_are_drawn_and_other_texts_are_noted() -> None:
    options = CompareOptions(examples=80, steps=8, invalid=0.5, limits=Limits(call_timeout=5.0))
    report = compare(load(inventory_world(GET_ITEM, TAKE, RESTOCK)), original(), options)
    assert report.agrees, report.render_text()
    # get_item's original answers `Item 7 not found` (or raises for a list): the world's
    # schema refuses the value with its own text, which the report notes, with an example
    count, example = report.refused_otherwise["get_item(item_id)"]
    assert count >= 1 and example.call[0] == "get_item"
    assert not isinstance(example.call[1]["item_id"], str)
    assert "get_item(item_id)" in report.to_json()["refused_otherwise"]
    assert "refused by both with other texts" in report.render_text()
    # the original's texts as the parameter's `else` message: nothing left to note there
    ported = GET_ITEM.replace(
        'item_id: str "The id of the item, e.g. \\"A1\\"."',
        'item_id: str "The id." else unhashable(item_id) ?? f"Item {item_id} not found"')
    assert ported != GET_ITEM
    # and the original's failure shape and argument texts (null is a value), so that the
    # texts compare
    text = inventory_world(ported, TAKE, RESTOCK).replace(
        "config { results: bfcl }",
        'config { results: custom  arguments: python }\n'
        'results {\n  success: value\n  failure: {"success": false, "error": message}\n}')
    assert "results: custom" in text
    world = load(text + UNHASHABLE)
    report = compare(world, original(), options)
    assert report.agrees, report.render_text()
    assert "get_item(item_id)" not in report.refused_otherwise, report.render_text()


RUNAWAY_WORLD = '''world Runaway "Calls that answer."
config { results: bfcl }
state { calls: int = 0 }
tool ping() -> json "Answer." { calls += 1
  return {"pong": calls} }
tool spin() -> json "Answer at once." { return {} }
'''


def test_a_runaway_original_is_stopped_and_reported() -> None:
    options = CompareOptions(examples=20, steps=5, limits=Limits(call_timeout=3.0))
    report = compare(load(RUNAWAY_WORLD), Original(CLASSES / "runaway.py", "Runaway", load=None),
                     options)
    stopped = [d for d in report.differences if d.kind == "original stopped"]
    assert stopped and stopped[0].tool == "spin"
    assert "did not answer within 3 s" in stopped[0].message
    assert report.missing_in_world == ["connect", "environment", "hog", "spawn"]


def test_an_original_that_cannot_be_loaded_is_reported() -> None:
    report = compare(load(RUNAWAY_WORLD), Original(CLASSES / "notes_api.py", "NotesAPI"),
                     OPTIONS)
    assert not report.agrees and "importing this module is forbidden" in report.load_error


def test_compare_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = tmp_path / "good.world", tmp_path / "bad.world"
    good.write_text(inventory_world(GET_ITEM, TAKE, RESTOCK), encoding="utf-8")
    bad.write_text(inventory_world(GET_ITEM, BUGGY_TAKE, RESTOCK), encoding="utf-8")
    common = ["--init-data", str(CLASSES / "inventory.json"), "--examples", "40"]
    assert cli_main(["compare", str(INVENTORY), str(good), *common]) == 0
    assert "agree" in capsys.readouterr().out
    assert cli_main(["compare", str(INVENTORY), str(bad), *common, "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert not report["agrees"] and report["differences"][0]["tool"] == "take"
    assert report["differences"][0]["calls"][-1]["call"].startswith("take(")


@pytest.mark.parametrize(("extra", "message"), [
    (["--examples", "0"], "--examples must be at least 1"),
    (["--init-data", "nope.json"], "--init-data: 'nope.json' does not exist"),
    (["--class", "Nope"], "no top-level class Nope"),
])
def test_compare_command_bad_arguments(tmp_path: Path, extra: list[str], message: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    world = tmp_path / "w.world"
    world.write_text(inventory_world(), encoding="utf-8")
    assert cli_main(["compare", str(INVENTORY), str(world), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_compare_command_with_a_broken_world(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    world = tmp_path / "w.world"
    world.write_text("world W \"w\"\nstate { x: int = \"a\" }\n", encoding="utf-8")
    assert cli_main(["compare", str(INVENTORY), str(world)]) == 1
    assert "error" in capsys.readouterr().err


def test_bfcl_message_api_agrees_with_its_conformance_spec() -> None:
    # skipped alone (not the whole module) where bfcl-eval is not installed
    message_api = pytest.importorskip(
        "bfcl_eval.eval_checker.multi_turn_eval.func_source_code.message_api")
    from worldspec.services.loading import load_world

    spec = Path(__file__).resolve().parents[1] / "examples" / "bfcl" / "message_api.world"
    report = compare(load_world(spec), Original(Path(message_api.__file__), "MessageAPI", {},
                                                seed_key="random_seed"), OPTIONS)
    assert report.agrees, report.render_text()
    assert len(report.tools) == 10
