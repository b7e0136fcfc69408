"""What the prompts of ``worldspec port`` tell the model: the module-level names a method
uses (their source, or that an imported value is unknown), a parameter hiding a state item
(`state.x`), what the differential test compares, and that a repair request is a new
conversation holding the current text of the tools it is about."""

from __future__ import annotations

from worldspec.port.prompts import (
    difference_feedback,
    method_compile_feedback,
    translate_method_messages,
)
from worldspec.port.skeleton import emit_skeleton, read_class

SOURCE = '''
from datetime import datetime, timedelta
from market.long_context import WATCH_LIST_EXTENSION as EXTRA
import json

CURRENT_TIME = datetime(2024, 9, 1, 10, 30)
LIMIT, FLOOR = 10, 1
UNUSED = 5
STAMP = "T"


class Market:
    def __init__(self):
        self.stocks = {"AAPL": 1.5}
        self.watch = []

    def tomorrow(self) -> dict:
        """When tomorrow starts."""
        return {"time": str(CURRENT_TIME + timedelta(days=1)), "max": LIMIT}

    def buy(self, stocks: list) -> dict:
        """Watch some stocks."""
        self.watch = [s for s in stocks if s in self.stocks] + EXTRA
        return {"watch": self.watch, "dump": json.dumps(self.watch)}

    def count(self) -> dict:
        """How many are watched."""
        return {"n": len(self.watch)}

    def stamp(self) -> dict:
        """A stamp, from a helper."""
        return {"stamp": self._stamp()}

    def _stamp(self) -> str:
        return STAMP + str(len(self.watch))
'''


def _request(method: str) -> str:
    info = read_class(SOURCE, "Market", "market.py")
    skeleton = emit_skeleton(info, source_name="market.py")
    found = next(m for m in info.methods if m.name == method)
    messages = translate_method_messages(
        class_source=info.source, class_name=info.name, world_text=skeleton.text,
        method=method, method_source=found.source, module_names=found.module_names,
        params=[p.name for p in found.params], state=list(info.attributes))
    return "\n".join(m["content"] for m in messages)


def test_a_method_gets_the_source_of_the_module_constants_it_uses() -> None:
    text = _request("tomorrow")
    assert "CURRENT_TIME = datetime(2024, 9, 1, 10, 30)" in text
    assert "LIMIT, FLOOR = 10, 1" in text
    assert "UNUSED = 5" not in text
    assert "- `timedelta`: `from datetime import timedelta`" in text
    assert "unknown here" in text


def test_imported_values_are_named_with_their_origin_and_said_to_be_unknown() -> None:
    text = _request("buy")
    assert "- `EXTRA`: `from market.long_context import WATCH_LIST_EXTENSION as EXTRA`" in text
    assert "- `json`: `import json`" in text
    assert "their values are not in this file, so unknown here" in text
    assert "CURRENT_TIME =" not in text


def test_a_method_without_module_names_says_so() -> None:
    assert "The method `count` (with the private methods it calls) uses no module-level " \
        "names" in _request("count")


def test_the_constants_of_the_private_helpers_a_method_calls_are_shown() -> None:
    text = _request("stamp")
    assert 'STAMP = "T"' in text and "UNUSED = 5" not in text
    assert 'STAMP = "T"' not in _request("count")


def test_a_parameter_named_like_a_state_item_gets_the_state_x_advice() -> None:
    text = _request("buy")
    assert "In `buy`, the parameter(s) `stocks` have the names of state items" in text
    assert "write `state.stocks`" in text
    assert "In `count`" not in _request("count")


def test_the_rules_say_what_the_differential_test_compares() -> None:
    text = _request("count")
    assert "every attribute of the original without a leading `_`" in text
    assert "a changed state shape\n  is accepted only where its JSON stays the same" in text
    assert "must\n  be `private`" in text and "private items are not compared" in text


def test_a_repair_request_is_a_new_conversation_with_the_tools_current_text() -> None:
    info = read_class(SOURCE, "Market", "market.py")
    world = emit_skeleton(info, source_name="market.py").text
    messages = difference_feedback(
        class_source=info.source, class_name=info.name, world_text=world,
        differences=[{"kind": "result", "tool": "count", "message": "differ", "calls": []}],
        module_names=info.methods[0].module_names)
    user = messages[-1]["content"]
    assert "This request starts a new conversation" in user
    assert "The current text of `count`:\n\n```world\ntool count() -> json" in user
    assert 'fail "not ported yet: count"\n}\n```' in user
    assert "CURRENT_TIME = datetime(2024, 9, 1, 10, 30)" in user
    compile_repair = method_compile_feedback([], "count")
    assert "your latest reply only, not earlier repair rounds" in compile_repair
