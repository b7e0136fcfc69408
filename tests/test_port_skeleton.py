"""The skeleton step of ``worldspec port``: a class read with libcst (never imported), a spec
skeleton that checks clean, without any model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldspec.cli.main import main as cli_main
from worldspec.compiler.api import check_source
from worldspec.port.skeleton import PortInputError, emit_skeleton, read_class

CLASSES = Path(__file__).resolve().parent / "port_classes"
INVENTORY = CLASSES / "inventory.py"
NOTES = CLASSES / "notes_api.py"


def _skeleton(path: Path, name: str | None = None, data: dict[str, object] | None = None
              ) -> str:
    info = read_class(path.read_text(encoding="utf-8"), name, path.name)
    text = emit_skeleton(info, data, source_name=path.name).text
    result = check_source(text, "skeleton.world")
    assert result.ok, [d.message for d in result.diagnostics]
    return text


def test_dict_of_dicts_with_their_keys_become_an_entity_table() -> None:
    data = json.loads((CLASSES / "inventory.json").read_text(encoding="utf-8"))
    text = _skeleton(INVENTORY, "InventoryEnv", data)
    assert "entity Item {\n  key id: str\n  name: str\n  stock: int\n}" in text
    assert "items: table Item" in text
    assert "log: list[str] = []" in text and "attempts: int = 0" in text


def test_one_tool_per_public_method_with_types_defaults_and_parameter_docs() -> None:
    text = _skeleton(INVENTORY)
    assert "tool take(\n  item_id: str \"The id of the item.\",\n" \
           "  count: int = 1 \"How many to take; at least 1.\",\n) -> json" in text
    assert '"Take items out of stock. Every attempt is counted, even a failed one."' in text
    assert 'item_id: str "The id of the item, e.g. \\"A1\\"."' in text
    assert "Returns" not in text  # the Returns section is not part of the description
    assert text.count("\ntool ") == 3


def test_a_change_of_state_before_an_error_result_picks_the_bfcl_convention() -> None:
    info = read_class(INVENTORY.read_text(encoding="utf-8"))
    skeleton = emit_skeleton(info)
    assert info.convention == "bfcl" and "config { results: bfcl }" in skeleton.text
    assert any("take changes state and then returns an error" in n for n in skeleton.notes)
    assert [m.name for m in info.methods if m.error_after_change] == ["take"]


def test_wrapped_results_without_that_pick_envscaler() -> None:
    source = '''
class Counter:
    """A counter."""
    def __init__(self):
        self.value: int = 0

    def bump(self, by: int = 1) -> dict:
        """Add to the counter."""
        if by < 0:
            return {"success": False, "error": "by must not be negative"}
        self.value += by
        return {"success": True, "data": self.value}
'''
    info = read_class(source)
    assert info.convention == "envscaler"
    text = emit_skeleton(info).text
    assert "config { results: envscaler }" in text and "value: int = 0" in text


def test_the_class_is_read_not_imported() -> None:
    """notes_api.py raises at import: reading it works all the same."""
    text = _skeleton(NOTES)
    assert "world NotesAPI" in text and "_secret" not in text
    assert 'text: str "What the note says."' in text
    assert 'tags: list[str]? = none "Labels to file it under."' in text
    assert "limit: int = 10" in text
    assert "next_id: int = 1" in text and "owner: str? = none" in text
    assert "# raises exceptions" in text


def test_bad_input_is_a_clear_error() -> None:
    with pytest.raises(PortInputError, match=r"broken.py:1:\d+: not valid Python"):
        read_class("class (:\n", None, "broken.py")
    with pytest.raises(PortInputError, match=r"no top-level class Nope \(classes: Runaway\)"):
        read_class((CLASSES / "runaway.py").read_text(encoding="utf-8"), "Nope", "runaway.py")
    with pytest.raises(PortInputError, match="defines 0 classes"):
        read_class("x = 1\n", None, "empty.py")


bfcl_message_api = pytest.importorskip(
    "bfcl_eval.eval_checker.multi_turn_eval.func_source_code.message_api")


def test_bfcl_message_api_skeleton_keeps_its_defaults() -> None:
    text = _skeleton(Path(bfcl_message_api.__file__), "MessageAPI")
    assert "user_count: int = 4" in text and "current_user: str? = none" in text
    assert '"Alice": "USR001"' in text
    assert text.count("\ntool ") == 10


def test_skeleton_only_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "inventory.world"
    status = cli_main(["port", str(INVENTORY), "--skeleton-only", "-o", str(out),
                       "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert status == 0 and out.is_file()
    assert report["tools"] == ["get_item", "take", "restock"] and report["results"] == "bfcl"
    assert check_source(out.read_text(encoding="utf-8"), str(out)).ok


@pytest.mark.parametrize(("argv", "message"), [
    (["port", "missing.py", "--skeleton-only"], "'missing.py' does not exist"),
    (["port", str(CLASSES / "inventory.json"), "--skeleton-only"], "is not a Python file"),
    (["port", str(INVENTORY), "--class", "Nope", "--skeleton-only"], "no top-level class"),
    (["port", str(INVENTORY), "--init-data", str(INVENTORY), "--skeleton-only"],
     "is not valid JSON"),
    (["port"], "give either FILE.py or --batch DIR"),
])
def test_bad_arguments_exit_2_with_one_line(argv: list[str], message: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_without_the_port_extra_the_commands_say_what_to_install(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "libcst" else real(name, *a))
    assert cli_main(["compare", str(INVENTORY), "x.world"]) == 2
    assert ("libcst is not installed: pip install '.[port]' in a worldspec clone"
            in capsys.readouterr().err)


def test_a_seeded_random_becomes_the_worlds_seed() -> None:
    text = _skeleton(Path(bfcl_message_api.__file__), "MessageAPI")
    assert "config { results: bfcl  seed: 200191 }" in text


def test_bfcl_trading_bot_skeleton_starts_as_the_original_does() -> None:
    from worldspec.port.compare import CompareOptions, Original, compare
    from worldspec.services.loading import load_result

    trading_bot = pytest.importorskip(
        "bfcl_eval.eval_checker.multi_turn_eval.func_source_code.trading_bot")
    path = Path(trading_bot.__file__)
    text = _skeleton(path, "TradingBot")
    assert "long_context: bool = false" in text and "seed: 1053520" in text
    assert "orders: map[int, Order] = {12345: Order(id: 12345" in text
    world = next(iter(load_result(check_source(text, "tb.world")).worlds.values()))
    report = compare(world, Original(path, "TradingBot", {}), CompareOptions(examples=5))
    assert report.differences and report.differences[0].kind == "result"  # not the start
