"""What the prompts of ``worldspec port`` tell the model: the module-level names a method
uses (their source, or that an imported value is unknown), base classes, the initial data, a
parameter hiding a state item (`state.x`), what the differential test compares, that a
repair request is a new conversation holding the current text of the tools it is about, and
whole values (bounded per value, never cut mid-token); and the layout for prompt caching."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from worldspec.port.prompts import (
    PORTING_NOTES,
    VALUE_RULE,
    PortContext,
    bounded,
    bounded_json,
    difference_feedback,
    method_compile_feedback,
    module_names_text,
    translate_method_messages,
)
from worldspec.port.skeleton import emit_skeleton, imported_definition, module_finder, read_class

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


def _messages(method: str, source: str = SOURCE, class_name: str = "Market",
              data: dict[str, Any] | None = None) -> list[dict[str, str]]:
    info = read_class(source, class_name, "market.py")
    skeleton = emit_skeleton(info, source_name="market.py")
    found = next(m for m in info.methods if m.name == method)
    return [dict(m) for m in translate_method_messages(
        PortContext.of(info, data), world_text=skeleton.text, method=found,
        state=list(info.attributes))]


def _request(method: str, source: str = SOURCE, class_name: str = "Market",
             data: dict[str, Any] | None = None) -> str:
    return "\n".join(m["content"] for m in _messages(method, source, class_name, data))


def _own_part(method: str, source: str = SOURCE, class_name: str = "Market") -> str:
    """What the request says about this method alone (after the stable part)."""
    return _request(method, source, class_name).split(f"Port the method `{method}`", 1)[1]


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


def test_each_method_is_told_which_of_the_names_shown_it_uses() -> None:
    assert "The method `count` (with the methods it calls) uses no module-level names." \
        in _own_part("count")
    assert "uses these module-level names, shown above: `EXTRA`, `json`." in _own_part("buy")
    assert "`CURRENT_TIME`" not in _own_part("buy")


def test_the_constants_of_the_private_helpers_a_method_calls_are_shown() -> None:
    text = _request("stamp")
    assert 'STAMP = "T"' in text and "UNUSED = 5" not in text
    assert "shown above: `STAMP`." in _own_part("stamp")
    assert "`STAMP`" not in _own_part("count")


HELPERS = '''
import math
from decimal import Decimal
import mpmath as mp

RATE = Decimal("0.07")
SCALE = 100
FACTOR = SCALE * 2
UNUSED = 1


def round_money(x):
    return float(Decimal(str(x)).quantize(Decimal("0.01")))


class Point:
    """A helper class of the same file."""

    def __init__(self, x, y):
        self.x, self.y = x, y


class Shop:
    def __init__(self):
        self.total = 0.0

    def distance(self, x: float, y: float) -> dict:
        """How far a point is."""
        p = Point(x, y)
        return {"d": math.sqrt(p.x ** 2 + p.y ** 2)}

    def taxed(self, prices: list) -> dict:
        """Prices with tax, in a comprehension and a nested function."""
        def tax(p):
            return round_money(p * (1 + float(RATE)))
        return {"taxed": [tax(p) for p in prices]}

    def scaled(self) -> dict:
        """A value from a public helper that reads a derived constant."""
        return {"v": self.helper()}

    def helper(self) -> float:
        """Public, called on self."""
        return mp.mpf(FACTOR) / 3
'''


def test_names_used_through_attributes_nested_code_and_self_calls_are_found() -> None:
    info = read_class(HELPERS, "Shop", "shop.py")
    used = {m.name: [d.name for d in m.module_names] for m in info.methods}
    assert used["distance"] == ["math", "Point"]  # ``math.sqrt``: an imported module
    assert used["taxed"] == ["Decimal", "RATE", "round_money"]  # nested fn, comprehension;
    # round_money's own names (Decimal) come along
    assert used["scaled"] == ["mp", "SCALE", "FACTOR"]  # self.helper(), FACTOR's SCALE
    text = _request("taxed", HELPERS, "Shop")
    assert "- `Decimal`: `from decimal import Decimal`" in text
    assert 'RATE = Decimal("0.07")' in text and "def round_money(x):" in text
    assert "- `mp`: `import mpmath as mp`" in _request("scaled", HELPERS, "Shop")
    assert "class Point:" in text  # every name of the class is in the stable part
    assert "UNUSED = 1" not in text
    for method in ("distance", "taxed", "scaled"):
        assert "uses no module-level names" not in _request(method, HELPERS, "Shop")


def test_names_the_constructor_reads_are_shown_and_type_hints_are_not_names() -> None:
    source = ("from copy import deepcopy\nfrom typing import Any, Dict\n\n"
              "DEFAULT_STATE = {\"n\": 0}\n\n\nclass C:\n"
              "    def __init__(self) -> None:\n"
              "        self.state: Dict[str, Any] = deepcopy(DEFAULT_STATE)\n\n"
              "    def get(self, key: str) -> Any:\n        \"\"\"A value.\"\"\"\n"
              "        return self.state[key]\n")
    text = _request("get", source, "C")
    assert "The class uses these names" in text and 'DEFAULT_STATE = {"n": 0}' in text
    assert "- `deepcopy`: `from copy import deepcopy`" in text
    assert "`Dict`" not in text and "`Any`" not in text  # only in type hints
    assert "The method `get` (with the methods it calls) uses no module-level names." in text
    plain = read_class(source.replace("deepcopy(DEFAULT_STATE)", "{}"), "C", "c.py")
    assert plain.module_names == []  # typing names in hints alone are not read


def test_a_long_constant_is_shown_bounded_and_a_long_helper_class_whole() -> None:
    """A long literal is data: its value, bounded item by item with a marker, never code cut
    mid-way; a helper class is code the model must reproduce (its ``__repr__`` is what
    compare sees of its objects), so it is shown whole."""
    rows = ", ".join(f'"k{i}": {{"price": {i}.5, "name": "item {i}"}}' for i in range(300))
    methods = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(120))
    source = (f"CATALOGUE = {{{rows}}}\n\n\nclass Node:\n{methods}"
              "    def __repr__(self):\n        return 'Node()'\n\n\n"
              "class Shop:\n    def get(self, key: str) -> dict:\n"
              "        \"\"\"An item.\"\"\"\n"
              "        return {\"item\": CATALOGUE[key], \"node\": repr(Node())}\n")
    assert len(f"CATALOGUE = {{{rows}}}") > 1500 and len(methods) > 1500
    text = _request("get", source, "Shop")
    assert "cut: the rest of this definition" not in text
    assert "CATALOGUE = {'k0': {'price': 0.5, 'name': 'item 0'}" in text
    assert "'…': '270 more keys'" in text and "(a long value is shortened, marked `…`)" in text
    assert "    def m119(self):" in text and "return 'Node()'" in text


INHERITED = '''
LIMIT = 3


class Base:
    """Shared tools."""

    def __init__(self):
        self.count = 0

    def bump(self) -> dict:
        """Add one, up to LIMIT."""
        if self.count >= LIMIT:
            return {"error": "full"}
        self.count += 1
        return {"count": self.count}

    def name(self) -> dict:
        """The base's name."""
        return {"name": "base"}


class Child(Base):
    def __init__(self):
        super().__init__()
        self.label = "c"

    def name(self) -> dict:
        """The child's name."""
        return {"name": self.label}
'''


def test_a_base_class_in_the_same_file_gives_its_tools_state_and_source() -> None:
    info = read_class(INHERITED, "Child", "child.py")
    assert [m.name for m in info.methods] == ["bump", "name"]
    assert next(m for m in info.methods if m.name == "name").doc == "The child's name."
    assert list(info.attributes) == ["count", "label"]
    skeleton = emit_skeleton(info, source_name="child.py")
    assert "tool bump() -> json" in skeleton.text and "  count: " in skeleton.text
    text = _request("bump", INHERITED, "Child")
    assert "Its base class `Base` (in the same file)" in text and "class Base:" in text
    assert "LIMIT = 3" in text and text.count("class Base:") == 1


def test_an_imported_base_class_is_read_when_its_module_is_found() -> None:
    child = "from .base import Base\n\n\nclass Child(Base):\n    pass\n"
    base = INHERITED.split("class Child")[0]
    asked: list[str] = []

    def find(name: str) -> str | None:
        asked.append(name)
        return base if name == ".base" else None

    info = read_class(child, "Child", "child.py", module_source=find)
    assert asked == [".base"] and [m.name for m in info.methods] == ["bump", "name"]
    assert info.bases[0][:2] == ("Base", "from .base import Base")
    assert [m.name for m in read_class(child, "Child", "child.py").methods] == []  # not found


def test_the_initial_data_is_shown_bounded() -> None:
    data = {"items": {f"I{i}": {"id": f"I{i}", "note": "word " * 300} for i in range(100)}}
    text = _request("count", data=data)
    shown = text.split("Its initial data", 1)[1].split("```json\n", 1)[1].split("\n```", 1)[0]
    assert len(shown) < 4500
    parsed = json.loads(shown)  # still JSON: cut only at value boundaries
    assert parsed["items"]["…"].endswith("more keys") and "I0" in parsed["items"]
    note = parsed["items"]["I0"]["note"]
    assert note.endswith("more characters]") and note.split(" … [")[0].endswith("word")
    assert "It is built without initial data." in _request("count")


def test_bounded_cuts_only_whole_values_and_marks_each_cut() -> None:
    assert bounded([1, 2, 3], items=2) == [1, 2, "… 1 more items"]
    assert bounded({"a": 1, "b": 2}, items=1) == {"a": 1, "…": "1 more keys"}
    assert bounded("alpha beta gamma delta", chars=12) == "alpha beta … [12 more characters]"
    assert bounded("short", chars=12) == "short" and bounded(1.0) == 1.0
    assert json.loads(bounded_json({"k": list(range(1000))}, 200))["k"][-1].startswith("…")


def test_two_requests_of_one_port_share_their_long_stable_part_first() -> None:
    info = read_class(SOURCE, "Market", "market.py")
    context = PortContext.of(info, {"stocks": {"AAPL": 1.5}})
    world = emit_skeleton(info, source_name="market.py").text
    first = translate_method_messages(context, world_text=world, method=info.methods[0])
    ported = world.replace('fail "not ported yet: tomorrow"', 'return {"time": "x"}')
    second = translate_method_messages(context, world_text=ported, method=info.methods[1])
    a = "".join(m["content"] for m in first)
    b = "".join(m["content"] for m in second)
    common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                  min(len(a), len(b)))
    assert first[0] == second[0]  # the system prompt
    assert common >= 0.9 * len(b), (common, len(b))
    assert a[:common].endswith("The world so far") or "The world so far" in a[:common]
    assert context.text() in a[:common]  # class, names and data all before what changes
    repair = difference_feedback(context, world_text=ported, differences=[])
    assert "".join(m["content"] for m in repair).startswith(a[:a.index("The world so far")])


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
    assert VALUE_RULE in text and "(1 vs 1.0)" in VALUE_RULE
    assert "`const`" in text and "`on load { ... }` block" in text


def test_a_repair_request_is_a_new_conversation_with_the_tools_current_text() -> None:
    info = read_class(SOURCE, "Market", "market.py")
    world = emit_skeleton(info, source_name="market.py").text
    messages = difference_feedback(
        PortContext.of(info, None), world_text=world,
        differences=[{"kind": "result", "tool": "count", "message": "differ", "calls": []}])
    user = messages[-1]["content"]
    assert "This request starts a new conversation" in user
    assert "The current text of `count`:\n\n```world\ntool count() -> json" in user
    assert 'fail "not ported yet: count"\n}\n```' in user
    assert "CURRENT_TIME = datetime(2024, 9, 1, 10, 30)" in user
    assert VALUE_RULE in user  # the comparison rule, in the repair request itself
    compile_repair = method_compile_feedback([], "count")
    assert "your latest reply only, not earlier repair rounds" in compile_repair


def test_a_difference_goes_back_whole_each_value_bounded_alone() -> None:
    info = read_class(SOURCE, "Market", "market.py")
    world = emit_skeleton(info, source_name="market.py").text
    long_text = "token " * 1000
    calls = [{"call": "count()", "tool": "count", "arguments": {},
              "original": {"n": 1, "log": long_text, "rows": list(range(100))},
              "world": {"n": 2}}]
    user = difference_feedback(
        PortContext.of(info, None), world_text=world,
        differences=[{"kind": "result", "tool": "count", "message": "m", "calls": calls}]
    )[-1]["content"]
    sent = json.loads(user.split("```json\n", 1)[1].split("\n```", 1)[0])
    original = sent[0]["calls"][0]["original"]
    assert original["n"] == 1 and sent[0]["calls"][0]["world"] == {"n": 2}
    assert original["log"].split(" … [")[0].endswith("token")  # cut between words
    assert original["log"].endswith("more characters]")
    assert original["rows"][:30] == list(range(30)) and original["rows"][30] == "… 70 more items"


# ------------------------------------------------ names imported from a module beside the class
SIBLING = '''
raise SystemExit("this module must be read, never run")

TICKERS = ["AAPL"] + ["X"] * 3
LONG_NOTE = @TEXT@
SHORT = "word " * 4
RATES = {"EUR": 1.1, "JPY": 0.0068}
CODES = ("A", "B")
TAGS = {"b", "a"}


def cents(amount):
    return round(amount * 100)


TICKERS = sorted(TICKERS)
'''.replace("@TEXT@", repr("word " * 400))

ENV = '''
from .long_context import LONG_NOTE, cents as to_cents
from long_context import RATES, TICKERS
from pkg.long_context import CODES, TAGS
from elsewhere import UNSEEN


class Env:
    def __init__(self):
        self.log = []

    def note(self) -> dict:
        """Notes."""
        return {"note": LONG_NOTE, "c": to_cents(1.5), "r": RATES, "t": TICKERS,
                "codes": CODES, "tags": TAGS, "u": UNSEEN}
'''


def test_a_name_imported_from_a_module_beside_the_class_shows_its_value_or_source(
        tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "long_context.py").write_text(SIBLING, encoding="utf-8")
    (package / "env.py").write_text(ENV, encoding="utf-8")
    info = read_class(ENV, "Env", "env.py", module_source=module_finder(package / "env.py"))
    text = module_names_text(info.module_names, "The class")
    assert "from .long_context import LONG_NOTE\n# where it is:\nLONG_NOTE = 'word word" in text
    note = text.split("LONG_NOTE = ", 1)[1].split("\n", 1)[0]
    assert note.endswith("more characters]'") and len(note) < 700  # bounded, whole words
    assert "RATES = {'EUR': 1.1, 'JPY': 0.0068}" in text  # `from long_context`: a sibling
    assert "CODES = ('A', 'B')" in text and "TAGS = {'a', 'b'}" in text  # tuple, set kept
    assert "def cents(amount):\n    return round(amount * 100)" in text  # a function
    assert "TICKERS = sorted(TICKERS)" in text  # not a literal: its source; the last one wins
    assert imported_definition(SIBLING, "SHORT") == (False, None, 'SHORT = "word " * 4')
    assert "- `UNSEEN`: `from elsewhere import UNSEEN`" in text  # no module found: unknown
    assert "(their values are not in this file, so unknown here" in text


def test_without_the_module_file_an_imported_name_is_only_its_import(tmp_path: Path) -> None:
    (tmp_path / "env.py").write_text(ENV, encoding="utf-8")
    info = read_class(ENV, "Env", "env.py", module_source=module_finder(tmp_path / "env.py"))
    text = module_names_text(info.module_names, "The class")
    assert "# where it is" not in text and "- `RATES`: `from long_context import RATES`" in text


def test_an_imported_definition_is_read_with_ast_only() -> None:
    assert imported_definition(SIBLING, "RATES") == (True, {"EUR": 1.1, "JPY": 0.0068}, "")
    assert imported_definition(SIBLING, "TICKERS") == (False, None, "TICKERS = sorted(TICKERS)")
    assert imported_definition(SIBLING, "missing") is None
    assert imported_definition("def (:\n", "x") is None


# ------------------------------------------------ the porting notes of the system prompt
def _system_prompt() -> str:
    info = read_class(SOURCE, "Market", "market.py")
    world = emit_skeleton(info, source_name="market.py").text
    return translate_method_messages(PortContext.of(info, None), world_text=world,
                                     method=info.methods[0])[0]["content"]


def test_the_porting_notes_follow_the_rules_in_the_stable_system_prompt() -> None:
    system = _system_prompt()
    assert system.endswith(PORTING_NOTES)
    assert system.index("Rules of a faithful port:") < system.index("How the differential test")
    assert len(PORTING_NOTES.splitlines()) <= 30
    repair = difference_feedback(PortContext.of(read_class(SOURCE, "Market", "m.py"), None),
                                 world_text="", differences=[])
    assert repair[0]["content"] == system  # byte for byte the same in every request


def test_the_porting_notes_state_the_test_as_the_code_runs_it() -> None:
    from worldspec.port.compare import CompareOptions
    from worldspec.port.sandbox import Limits, Sandbox

    assert f"(`--invalid`, {CompareOptions().invalid})" in PORTING_NOTES
    assert "About one call in ten" in PORTING_NOTES and CompareOptions().invalid == 0.1
    env = Sandbox(Path(__file__), "Unused", limits=Limits())._environment()  # starts nothing
    assert env["PYTHONHASHSEED"] == "0" and "PYTHONHASHSEED is 0" in PORTING_NOTES
    assert env["TZ"] == "UTC" and "TZ is UTC" in PORTING_NOTES


def _episode(text: str) -> Any:
    from worldspec.compiler.api import check_source
    from worldspec.services.loading import load_result

    result = check_source(text, "idioms.world")
    assert result.ok, [d.message for d in result.diagnostics]
    return next(iter(load_result(result).worlds.values()))()


IDIOMS = '''
world Idioms "The porting notes' idioms."

config { results: bfcl }

record Item {
  name: str
  qty: int
}

state {
  items: map[str, Item] = {"a": Item(name: "a", qty: 1)}
  rows: list[Item] = [Item(name: "b", qty: 2)]
  tags: set[str] = set(["z"])
}

tool bump(key: str) -> json "Through the path, and through a copy." {
  require key in items else repr(key)
  items[key].qty = items[key].qty + 1
  rows[0].qty = rows[0].qty + 10
  let r = items[key]
  r.qty = 100
  append key to tags
  return {"q": items[key].qty, "copy": r.qty, "in": key in tags}
}

tool order() -> json "Two keys." {
  let xs = [Item(name: "y", qty: 1), Item(name: "x", qty: 2), Item(name: "a", qty: 2)]
  return [x.name for x in SORT]
}
'''


def test_the_porting_idioms_compile_and_do_what_the_notes_say() -> None:
    sort = "sorted(sorted(xs, key: x => x.name), key: x => x.qty, reverse: true)"
    assert f"`{sort}`" in PORTING_NOTES and "`require key in m else repr(key)`" in PORTING_NOTES
    episode = _episode(IDIOMS.replace("SORT", sort))
    assert episode.call("bump", {"key": "a"}) == {"q": 2, "copy": 100, "in": True}
    assert episode.export_state()["rows"][0]["qty"] == 12  # written through the path
    assert episode.export_state()["items"]["a"]["qty"] == 2  # the copy's change is not
    assert episode.call("bump", {"key": "q"}) is not None and \
        episode.last_error.message == repr("q") == str(KeyError("q"))
    xs = [("y", 1), ("x", 2), ("a", 2)]
    python = [n for n, _ in sorted(xs, key=lambda x: (-x[1], x[0]))]
    assert episode.call("order", {}) == python == ["a", "x", "y"]


def test_what_the_notes_rule_out_is_refused_by_the_compiler() -> None:
    from worldspec.compiler.api import check_source

    base = IDIOMS.replace("SORT", "xs")
    calls_a_tool = base.replace('return [x.name for x in xs]', 'return bump("a")')
    truthy = base.replace("require key in items", "require not len(key)")
    tuple_key = base.replace("for x in xs]", "for x in sorted(xs, key: x => [x.qty, x.name])]")
    assert check_source(base, "ok.world").ok
    for text, code in ((calls_a_tool, "WS206"), (truthy, "WS302"), (tuple_key, "WS304")):
        assert code in [d.code for d in check_source(text, "bad.world").errors]
    assert "A tool cannot call another tool" in PORTING_NOTES
    assert "Conditions are `bool`" in PORTING_NOTES and "two stable sorts" in PORTING_NOTES
