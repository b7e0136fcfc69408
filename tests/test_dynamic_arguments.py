"""``config { arguments: dynamic }``: a value of another JSON type than a parameter's reaches
the tool as it is, as it would reach a Python original; what Python's operators raise on it
fails the call with Python's own text, atomically; stored, it exports and hashes as JSON.
A world without the mode still refuses such a value with the runtime's message."""

from __future__ import annotations

import copy
import operator
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from spec_support import compile_text

from worldspec.compiler.api import check_source
from worldspec.runtime.budget import INT_MESSAGE, MAX_INT_BITS, STEPS_MESSAGE, STRING_MESSAGE
from worldspec.runtime.episode import Episode

SPEC = """\
world Dyn "Arguments as Python takes them."

config { results: bfcl  arguments: ARGS  class_name: "DynAPI" }

record Tagged "A text with tags." {
  text: str
  tags: list[str]
}

entity Note "A stored note." {
  key id: int
  text: str
  tags: list[str]
  when: date?
}

state {
  balance: number = 10
  last: str? = none
  texts: list[str] = []
  users: map[str, str] = {"alice": "U1"}
  notes: table Note
  tagged: list[Tagged] = []
}

tool fund(amount: number "How much.") -> number "Fund the account." {
  balance += 1
  require amount > 0 else "Funding amount must be positive."
  balance += amount
  return balance
}

tool note(text: str "The text.", tags: list[str] = [] "Its tags.", when: date? = none) -> str
  "Store a note."
{
  last = text
  append text to texts
  insert Note(id: len(texts), text: text, tags: tags, when: when) into notes
  append Tagged(text: text, tags: tags) to tagged
  return f"noted {text}"
}

tool shout(text: str "The text.") -> str "Shout it." {
  last = "shouted"
  return text.upper()
}

tool user_id(user: str "A user name.") -> str "A user's id." {
  let id = users.get(user)
  require id != none else f"User '{user}' not found."
  return id ?? ""
}

tool tally(items: list[str] "Things.") -> int "Count the non-empty things." {
  let n = 0
  for item in items {
    if item != "" {
      n += 1
    }
  }
  return n
}

tool read(id: Note "A note's id.") -> str "A note's text." {
  return id.text
}

tool texts_of(items: list[Tagged] "Tagged texts.") -> list[str] "Their texts." {
  return [t.text for t in items]
}
"""


def _world(root: Path, args: str) -> type[Episode]:
    return compile_text(root, "dyn.world", SPEC.replace("ARGS", args), "Dyn")


@pytest.fixture(scope="module")
def dyn(tmp_path_factory: pytest.TempPathFactory) -> type[Episode]:
    return _world(tmp_path_factory.mktemp("dynamic"), "dynamic")


def test_the_spec_checks_in_both_modes() -> None:
    for args in ("dynamic", "python"):
        result = check_source(SPEC.replace("ARGS", args), "dyn.world")
        assert [d.code for d in result.diagnostics if d.severity == "error"] == []


def test_a_bad_mode_is_ws503() -> None:
    result = check_source(SPEC.replace("ARGS", "loose"), "dyn.world")
    assert ("WS503", "arguments must be worldspec, python or dynamic") in \
        [(d.code, d.message) for d in result.diagnostics]


def test_python_type_error_text_and_rollback(dyn: type[Episode]) -> None:
    ep = dyn()
    before = ep.state_hash()
    result = ep.call("fund", {"amount": "x"})
    assert result == {"error": "'>' not supported between instances of 'str' and 'int'"}
    assert ep.export_state()["balance"] == 10  # the `balance += 1` before it is undone
    assert ep.state_hash() == before
    assert ep.call("fund", {"amount": True}) == 12  # True is 1 to Python
    assert ep.call("fund", {"amount": 2}) == 15


def test_attribute_and_key_errors_have_pythons_text(dyn: type[Episode]) -> None:
    ep = dyn()
    assert ep.call("shout", {"text": 5}) == {"error": "'int' object has no attribute 'upper'"}
    assert ep.export_state()["last"] is None
    assert ep.call("user_id", {"user": [1]}) == {"error": "unhashable type: 'list'"}
    assert ep.call("user_id", {"user": 7}) == {"error": "User '7' not found."}
    assert ep.call("tally", {"items": 7}) == {"error": "'int' object is not iterable"}
    assert ep.call("tally", {"items": "ab"}) == 2  # a text is iterable: its characters
    # one attribute of each element, read in C: Python's texts for what has none
    assert ep.call("texts_of", {"items": [{"text": "a", "tags": []}]}) == ["a"]
    assert ep.call("texts_of", {"items": [{"text": "a", "tags": []}, 5]}) == \
        {"error": "'dict' object has no attribute 'text'"}
    assert ep.call("texts_of", {"items": [5]}) == {"error": "'int' object has no attribute 'text'"}
    assert ep.call("texts_of", {"items": 7}) == {"error": "'int' object is not iterable"}


def test_stored_values_export_and_hash_as_json(dyn: type[Episode]) -> None:
    ep = dyn()
    assert ep.call("note", {"text": 5, "tags": "ab", "when": 3}) == "noted 5"
    assert ep.call("note", {"text": {"a": [1, None]}, "tags": [1, "b"]}) == \
        "noted {'a': [1, None]}"
    state = ep.export_state()
    assert state["last"] == {"a": [1, None]}
    assert state["texts"] == [5, {"a": [1, None]}]
    assert state["notes"] == [
        {"id": 1, "text": 5, "tags": "ab", "when": 3},
        {"id": 2, "text": {"a": [1, None]}, "tags": [1, "b"], "when": None}]
    assert state["tagged"] == [{"text": 5, "tags": "ab"},
                               {"text": {"a": [1, None]}, "tags": [1, "b"]}]
    # the hash differs from the same calls with texts, and survives copy and undo
    other = dyn()
    other.call("note", {"text": "5", "tags": ["a", "b"]})
    assert other.state_hash() != ep.state_hash()
    copy = ep.copy()
    assert copy.export_state() == state and copy.state_hash() == ep.state_hash()
    assert ep.diff(dyn())  # a diff over foreign values works
    ep.reset()
    assert ep.export_state()["texts"] == [] and ep.state_hash() == dyn().state_hash()


def test_the_callers_objects_are_not_shared(dyn: type[Episode]) -> None:
    ep = dyn()
    text = {"a": [1]}
    ep.call("note", {"text": text})
    text["a"].append(2)
    assert ep.export_state()["last"] == {"a": [1]}


def test_f_strings_give_pythons_text(dyn: type[Episode]) -> None:
    ep = dyn()
    for value, shown in ((True, "True"), (None, "None"), (2.5, "2.5"), ([1, "a"], "[1, 'a']"),
                         ({"k": False}, "{'k': False}")):
        assert ep.call("note", {"text": value}) == f"noted {shown}"


def test_entity_keys_of_another_type(dyn: type[Episode]) -> None:
    ep = dyn()
    ep.call("note", {"text": "hello"})
    assert ep.call("read", {"id": 1}) == "hello"
    assert ep.call("read", {"id": True}) == "hello"  # True == 1 finds the row, as a dict does
    assert ep.call("read", {"id": "1"}) == {"error": "Note \"1\" not found."}
    assert ep.call("read", {"id": [1]}) == {"error": "unhashable type: 'list'"}


def test_missing_and_unexpected_arguments_keep_pythons_type_errors(dyn: type[Episode]) -> None:
    ep = dyn()
    assert ep.call("fund", {}) == \
        {"error": "DynAPI.fund() missing 1 required positional argument: 'amount'"}
    assert ep.call("fund", {"amount": 1, "x": 2}) == \
        {"error": "DynAPI.fund() got an unexpected keyword argument 'x'"}
    # a value of the right type that is no value of the parameter's is still refused
    assert ep.call("note", {"text": "a", "when": "2024-13-01"}) == \
        {"error": 'when: expected a date (YYYY-MM-DD), got "2024-13-01"'}


def test_the_mode_is_on_the_class_and_the_schema_keeps_the_types(dyn: type[Episode]) -> None:
    assert dyn.ARGUMENTS == "dynamic"
    fund = next(t for t in dyn().tools() if t["function"]["name"] == "fund")
    assert fund["function"]["parameters"]["properties"]["amount"]["type"] == "number"


def test_a_world_not_in_the_mode_still_refuses(tmp_path: Path) -> None:
    world = _world(tmp_path, "python")
    assert world.ARGUMENTS == "worldspec"
    ep = world()
    assert ep.call("fund", {"amount": "x"}) == {"error": 'amount: expected a number, got "x"'}
    assert ep.call("shout", {"text": 5}) == {"error": "text: expected a string, got 5"}
    assert ep.export_state()["balance"] == 10


def test_a_list_of_other_elements_stays_a_list(dyn: type[Episode]) -> None:
    ep = dyn()
    assert ep.call("tally", {"items": [1, "", None]}) == 2  # 1 != "" and None != ""
    ep.call("note", {"text": "t", "tags": [1, [2]]})
    assert ep.export_state()["notes"][0]["tags"] == [1, [2]]


def test_property_checks_take_other_types_in_the_mode(dyn: type[Episode]) -> None:
    from worldspec.testing.properties import check_call

    ep = dyn()
    spec = dyn.TOOLS["note"]
    before = ep.state_hash()
    assert not ep.took_other_types
    ep.call("note", {"text": 5})
    assert ep.took_other_types
    assert check_call(ep, spec, {"text": 5}, before) is None
    before = ep.state_hash()
    ep.call("note", {"text": "t", "nope": 1})  # a wrong name is still refused
    assert check_call(ep, spec, {"text": "t", "nope": 1}, before) is None
    assert ep.last_error is not None


def test_worldspec_test_finds_nothing(tmp_path: Path) -> None:
    from worldspec.testing.explore import explore

    world = _world(tmp_path, "dynamic")
    report = explore(world, max_examples=30, steps=20, seed=3)
    assert [f for f in report.findings if f.severity != "note"] == []
    assert report.calls > 300


def test_a_copy_keeps_and_a_reset_clears_the_mark_of_other_types(dyn: type[Episode]) -> None:
    ep = dyn()
    ep.call("note", {"text": 5})
    twin = ep.copy()
    assert twin.took_other_types and twin.export_state() == ep.export_state()
    ep.reset()
    assert not ep.took_other_types and ep.export_state() == dyn().export_state()
    assert twin.took_other_types  # the copy is its own episode


UNION_SPEC = """\
world Tags "Union members in collections."

config { results: bfcl  arguments: dynamic  class_name: "TagsAPI" }

record Card { id: str }
record Cash { amount: number }
union Method by source { card: Card, cash: Cash }

state {
  methods: map[str, Method] = {}
  history: list[Method] = []
  last: Method? = none
}

tool pay(id: str "An id.", amount: number "How much.") -> int "Record two payments." {
  methods[id] = Card(id: id)
  append Cash(amount: amount) to history
  last = Card(id: id)
  return len(history)
}
"""


def test_collections_of_union_members_export_their_tags(tmp_path: Path) -> None:
    """A union member exports with its tag in a collection as alone, also in the mode (the
    generic exporter of the mode cannot know the tag, so such a collection keeps its own)."""
    world = compile_text(tmp_path, "tags.world", UNION_SPEC, "Tags")
    ep = world()
    assert ep.call("pay", {"id": "c1", "amount": "x"}) == 1
    state = ep.export_state()
    assert state["methods"] == {"c1": {"source": "card", "id": "c1"}}
    assert state["history"] == [{"source": "cash", "amount": "x"}]
    assert state["last"] == {"source": "card", "id": "c1"}


BOXES = """\
world Boxes "Rows whose fields may hold other-typed values."

config { results: tau2  arguments: dynamic }

enum Kind { small, large }

record Part "A part." {
  name: str
  size: int
}

entity Box "A box." {
  key id: str
  kind: Kind
  part: Part
  parts: list[Part]
  labels: map[str, Part]
  notes: list[str]
}

state { boxes: table Box }

tool put(id: str "Its id.", kind: Kind "Its kind.", part: Part "A part.",
         parts: list[Part] "Parts.", notes: list[str] "Notes.") -> Box "Store a box." {
  insert Box(id: id, kind: kind, part: part, parts: parts, labels: {"a": part},
             notes: notes) into boxes
  return boxes[id]
}

tool relabel(id: Box "A box.", kind: Kind "Its kind.") -> Box "Change its kind." {
  id.kind = kind
  return id
}
"""


def test_a_row_holding_other_typed_values_has_the_text_of_its_export(tmp_path: Path) -> None:
    """The typed texts (cached record texts, enum tables) are taken only for values of the
    type's shape; a value of another JSON type in the same field gets its JSON text."""
    import json

    world = compile_text(tmp_path, "boxes.world", BOXES, "Boxes")
    ep = world()
    typed = {"id": "b1", "kind": "small", "part": {"name": "p", "size": 1},
             "parts": [{"name": "q", "size": 2}], "notes": ["n"]}
    other = {"id": "b2", "kind": 7, "part": "not a part", "parts": [1, {"x": True}],
             "notes": [None, 2.5]}
    for args in (typed, other):
        content = ep.call("put", args)
        row = next(r for r in ep.export_state()["boxes"] if r["id"] == args["id"])
        assert json.loads(content) == row and content == json.dumps(row)
    assert json.loads(ep.call("put", other | {"id": "b3"}))["part"] == "not a part"
    for kind in ("large", 3, [1]):  # the row's text made again after a change of one field
        content = ep.call("relabel", {"id": "b1", "kind": kind})
        row = next(r for r in ep.export_state()["boxes"] if r["id"] == "b1")
        assert content == json.dumps(row) and row["kind"] == kind


CRATES = """\
world Crates "Record, list and map fields given other-typed values."

config { results: tau2  arguments: dynamic }

record Part "A part." {
  name: str
  opts: map[str, str]
}

entity Crate "A crate." {
  key id: str
  parts: list[Part]
  spare: list[Part]?
  opts: map[str, str]
  weight: number?
  tags: list[str]?
}

state { crates: table Crate }

tool put(id: str "Its id.", parts: list[Part] "Parts.", opts: map[str, str] "Options.",
         weight: number? = none "Its weight.", tags: list[str]? = none "Tags.") -> Crate
  "Store a crate."
{
  insert Crate(id: id, parts: parts, spare: none, opts: opts, weight: weight, tags: tags)
    into crates
  return crates[id]
}

tool add(id: Crate "A crate.", part: Part "A part.") -> Crate "Add a part, and keep it spare." {
  append part to id.parts
  id.spare = [part]
  return id
}

tool make(id: Crate "A crate.", name: str "Its name.", opts: map[str, str] "Its options.")
  -> Crate "Add a part made here (its fields as given)."
{
  append Part(name: name, opts: opts) to id.parts
  id.opts = opts
  id.weight = 2.5
  id.tags = [name]
  return id
}
"""


def test_collections_of_records_given_other_values_have_the_text_of_their_export(
        tmp_path: Path) -> None:
    """A list of records holding another value (or being one), a map of plain values that is
    no dict, optional numbers and lists of text of other types: each result is the row's
    ``json.dumps`` after every change, the texts kept for records and maps included."""
    import json

    world = compile_text(tmp_path, "crates.world", CRATES, "Crates")
    ep = world()
    part = {"name": "p", "opts": {"c": "red"}}

    def exact(content: str, crate: str) -> dict[str, object]:
        row = next(r for r in ep.export_state()["crates"] if r["id"] == crate)
        assert content == json.dumps(row), (content, row)
        return row

    exact(ep.call("put", {"id": "c1", "parts": [part], "opts": {"a": "b"}}), "c1")
    exact(ep.call("put", {"id": "c2", "parts": "none", "opts": [1], "weight": "9",
                          "tags": ["t", 3]}), "c2")
    exact(ep.call("put", {"id": "c3", "parts": [part, 5], "opts": {"a": 1}, "weight": 4,
                          "tags": "t"}), "c3")
    row = exact(ep.call("add", {"id": "c1", "part": "not a part"}), "c1")
    assert row["parts"] == [part, "not a part"] and row["spare"] == ["not a part"]
    exact(ep.call("add", {"id": "c1", "part": part}), "c1")
    for opts in ({"x": "y"}, "no map", {"x": [1, {"y": None}]}, None, 7):
        row = exact(ep.call("make", {"id": "c1", "name": "m", "opts": opts}), "c1")
        assert row["parts"][-1] == {"name": "m", "opts": opts} and row["opts"] == opts
    for name in (1.5, None):  # a record's text field of another type
        row = exact(ep.call("make", {"id": "c3", "name": name, "opts": {"k": "v"}}), "c3")
        assert row["tags"] == [name] and row["weight"] == 2.5
    ep.reset()
    assert ep.export_state()["crates"] == []


PIECES = """\
world Pieces "Records whose typed fields are given other-typed values."

config { results: tau2  arguments: dynamic }

enum Size { small, large = "large (xl)" }

record Inner "A record in a record." { label: str }

record Piece "A piece." {
  size: Size
  inner: Inner
  spare: Inner?
  count: int
  code: str
}

entity Bin "A bin." {
  key id: str
  pieces: list[Piece]
}

state { bins: table Bin }

tool put(id: str "Its id.", size: Size "A size.", inner: Inner "A record.", count: int "A count.",
         code: str "A code.") -> Bin "Store a bin holding one piece made of what was sent." {
  insert Bin(id: id, pieces: [Piece(size: size, inner: inner, spare: inner, count: count,
                                    code: code)]) into bins
  return bins[id]
}
"""


def test_a_record_tries_its_typed_text_and_falls_back_to_its_exports(tmp_path: Path) -> None:
    """A record's text is made from its fields' typed texts without a guard each: a field
    holding a value of another type makes one of them raise (a text's quoting, an enum's
    table, a record's own text), and the record's text is then that of its export."""
    import json

    world = compile_text(tmp_path, "pieces.world", PIECES, "Pieces")
    ep = world()
    typed = {"size": "large (xl)", "inner": {"label": "a"}, "count": 2, "code": "c"}
    others: list[dict[str, object]] = [
        {"size": 3}, {"size": None}, {"size": ["small"]}, {"size": {"k": 1}},
        {"inner": "no record"}, {"inner": None}, {"inner": [1, 2]},
        {"count": "two"}, {"count": 2.5}, {"code": 7}, {"code": None}, {"code": ["c"]},
        {"size": 1.5, "inner": 0, "count": None, "code": True},
    ]
    for i, change in enumerate([{}, *others]):
        args = {**typed, **change, "id": f"b{i}"}
        content = ep.call("put", args)
        assert not ep.failed(content), (args, content)
        row = next(r for r in ep.export_state()["bins"] if r["id"] == args["id"])
        assert content == json.dumps(row), (args, content)
        piece = row["pieces"][0]
        assert {k: piece[k] for k in typed} == {k: args[k] for k in typed}


# ------------------------------------------------------------------ Python's operators
# With `arguments: dynamic` a value of any JSON type reaches a tool body declared for another,
# and every operator must then do what Python's does: the same result (value and type), or
# the call fails with Python's own text. One tool per operator and pair of declared types the
# checker accepts (`tool add_int_str(a: int, b: str) -> json { return a + b }` is refused at
# check time, so no such tool exists); hypothesis draws the arguments from every JSON type and
# Python itself computes what each call must give.

DECLARED = {"number": "number", "int": "int", "float": "float", "str": "str", "bool": "bool",
            "list": "list[json]", "map": "map[str, json]", "json": "json"}
BINARY = {"add": ("+", operator.add), "sub": ("-", operator.sub), "mul": ("*", operator.mul),
          "div": ("/", operator.truediv), "floordiv": ("//", operator.floordiv),
          "mod": ("%", operator.mod), "pow": ("**", operator.pow), "eq": ("==", operator.eq),
          "ne": ("!=", operator.ne), "lt": ("<", operator.lt), "le": ("<=", operator.le),
          "gt": (">", operator.gt), "ge": (">=", operator.ge),
          "in": ("in", lambda a, b: a in b)}
UNARY = {"neg": ("-", operator.neg), "not": ("not ", operator.not_)}
#: the operators with an augmented assignment (`x += y`), tested as `aug_<name>` tools
AUGMENTED = ("add", "sub", "mul", "div")
IN_PLACE = {"add": operator.iadd, "sub": operator.isub, "mul": operator.imul,
            "div": operator.itruediv}


def _operator_tools() -> dict[tuple[str, str, str], str]:
    """(operator, left type, right type) -> tool text, for every pair the checker accepts
    (the right type is "" for a unary operator)."""
    tools = {(name, left, right): f'tool {name}_{left}_{right}(a: {DECLARED[left]}, b: '
             f'{DECLARED[right]}) -> json "a {op} b" {{ return a {op} b }}\n'
             for name, (op, _) in BINARY.items() for left in DECLARED for right in DECLARED}
    tools |= {(name, left, ""): f'tool {name}_{left}(a: {DECLARED[left]}) -> json "{op}a" '
              f'{{ return {op}a }}\n' for name, (op, _) in UNARY.items() for left in DECLARED}
    tools |= {(f"aug_{name}", left, right): f'tool aug_{name}_{left}_{right}(a: '
              f'{DECLARED[left]}, b: {DECLARED[right]}) -> json "a {op}= b" {{\n  let x = a\n'
              f'  x {op}= b\n  return x\n}}\n'
              for name, (op, _) in BINARY.items() if name in AUGMENTED
              for left in DECLARED for right in DECLARED}
    while True:  # drop the tools the checker refuses, until it refuses none
        text = OPERATORS_HEAD + "".join(tools.values())
        result = check_source(text, "operators.world")
        refused = {d.span.start for d in result.diagnostics if d.severity == "error"}
        if not refused:
            return tools
        kept, at = {}, len(OPERATORS_HEAD)
        for key, tool in tools.items():
            if not any(at <= start < at + len(tool) for start in refused):
                kept[key] = tool
            at += len(tool)
        tools = kept


OPERATORS_HEAD = """\
world Operators "Every operator on every declared type, on values of any JSON type."

config { results: bfcl  arguments: dynamic  class_name: "OperatorsAPI" }

"""
OPERATOR_TOOLS = _operator_tools()


@pytest.fixture(scope="module")
def operators(tmp_path_factory: pytest.TempPathFactory) -> type[Episode]:
    return compile_text(tmp_path_factory.mktemp("operators"), "operators.world",
                        OPERATORS_HEAD + "".join(OPERATOR_TOOLS.values()), "Operators")


texts = st.sampled_from(["", "a", "ab", "2", "1.5", "-0", "%s", "%d!", "%(a)s", "%5.1f"])
json_values = st.recursive(
    st.none() | st.booleans() | st.sampled_from([0, 1, -1, 2, 3, 10 ** 20, -(2 ** 70)])
    | st.integers(-1000, 1000) | st.sampled_from([0.0, -0.0, 0.5, -2.5, 1e300, 3.0])
    | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from("ab"), inner,
                                                                max_size=2),
    max_leaves=4)


def received(value: Any, declared: str) -> Any:
    """The value a tool body holds for an argument: a `float` parameter makes an int a float
    (the language's rule for `float`); any other value of any type is passed as it is."""
    return float(value) if declared == "float" and type(value) is int else value


def the_guard(name: str, a: Any, b: Any) -> str | None:
    """The budget's refusal where Python would work longer than a call may (a power of more
    than 4,096 bits, a product of more, a text or a list repeated past 1,000,000), or hold
    what JSON cannot (a complex power), judged as the runtime judges it before the work."""
    ints = (int, bool)
    if name == "pow" and type(a) in ints and type(b) in ints and b >= 0 and abs(a) > 1 and \
            b * abs(a).bit_length() > MAX_INT_BITS:
        return f"{a} ** {b} is too large."
    if name == "mul":
        items, times = (a, b) if isinstance(a, (str, list)) else (b, a)
        if isinstance(items, (str, list)) and type(times) in ints and \
                1_000_000 < len(items) * times and times <= sys.maxsize and \
                not (isinstance(items, str) and len(items) * times > sys.maxsize):
            return STRING_MESSAGE if isinstance(items, str) else STEPS_MESSAGE
        if type(a) in ints and type(b) in ints and abs(a * b).bit_length() > MAX_INT_BITS:
            return INT_MESSAGE
    return None


def pythons(name: str, compute: Any, *operands: Any) -> tuple[Any, ...]:
    """What Python gives: ("ok", its result, exactly), or ("error", its exception's text)."""
    guard = the_guard(name, *operands) if len(operands) == 2 else None
    if guard is not None:
        return ("error", guard)
    try:
        result = compute(*operands)
    except Exception as exc:  # whatever Python raises is what the call must fail with
        return ("error", str(exc))
    if isinstance(result, complex):
        return ("error", f"{operands[0]} ** {operands[1]} is not a real number.")
    return ("ok", exact(result))


def exact(value: Any) -> Any:
    """A value with each number's type kept and -0.0 told from 0.0 (and nan from itself)."""
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, (list, tuple)):
        return [exact(x) for x in value]
    if isinstance(value, dict):
        return {k: exact(x) for k, x in value.items()}
    return (type(value).__name__, value)


def worlds(episode: Episode, tool: str, arguments: dict[str, Any]) -> tuple[Any, ...]:
    episode.call(tool, arguments)
    if episode.last_error is not None:
        return ("error", episode.last_error.message)
    return ("ok", exact(episode.last_value))


def _pairs(name: str) -> list[tuple[str, str]]:
    return sorted((left, right) for (op, left, right) in OPERATOR_TOOLS if op == name)


@pytest.mark.parametrize("name", [*BINARY, *(f"aug_{name}" for name in AUGMENTED)])
@given(data=st.data(), a=json_values, b=json_values)
def test_binary_operators_are_pythons_on_values_of_any_type(
        operators: type[Episode], name: str, data: st.DataObject, a: Any, b: Any) -> None:
    left, right = data.draw(st.sampled_from(_pairs(name)), label="declared")
    plain = name.removeprefix("aug_")
    compute = IN_PLACE[plain] if name.startswith("aug_") else BINARY[name][1]
    expected = pythons(plain, compute, copy.deepcopy(received(a, left)), received(b, right))
    assert worlds(operators(), f"{name}_{left}_{right}", {"a": a, "b": b}) == expected


@pytest.mark.parametrize("name", list(UNARY))
@given(data=st.data(), a=json_values)
def test_unary_operators_are_pythons_on_values_of_any_type(
        operators: type[Episode], name: str, data: st.DataObject, a: Any) -> None:
    left, _ = data.draw(st.sampled_from(_pairs(name)), label="declared")
    expected = pythons(name, UNARY[name][1], received(a, left))
    assert worlds(operators(), f"{name}_{left}", {"a": a}) == expected


def test_every_operator_is_tested_on_numbers_texts_and_lists() -> None:
    """The checker's verdicts keep the property tests meaningful: each operator exists for
    the declared types it is written for (a failure here means the generation above lost
    its tools, not that Python changed)."""
    for name in BINARY:
        assert _pairs(name), name
    assert ("number", "number") in _pairs("pow") and ("str", "str") in _pairs("add")
    assert ("list", "list") in _pairs("add") and ("json", "json") in _pairs("in")
    assert ("json", "list") in _pairs("eq") and _pairs("neg") and _pairs("not")
    assert ("str", "str") in _pairs("aug_add") and ("number", "number") in _pairs("aug_mul")


@pytest.mark.parametrize(("tool", "arguments", "expected"), [
    # Python's TypeError, not float()'s conversion; a bool is an int to Python
    ("pow_number_number", {"a": "2", "b": 2},
     ("error", "unsupported operand type(s) for ** or pow(): 'str' and 'int'")),
    ("pow_number_number", {"a": True, "b": 2}, ("ok", ("int", 1))),
    ("pow_int_int", {"a": 2, "b": -1}, ("ok", ("float", "0.5"))),
    ("pow_int_int", {"a": 0, "b": -1}, ("error", "0.0 cannot be raised to a negative power")),
    ("pow_float_float", {"a": 1e300, "b": 2.0},
     ("error", "(34, 'Numerical result out of range')")),
    # a list is a list to Python's messages, and unhashable
    ("add_list_list", {"a": [1], "b": "x"},
     ("error", 'can only concatenate list (not "str") to list')),
    ("in_list_list", {"a": [], "b": {}}, ("error", "unhashable type: 'list'")),
    ("in_json_json", {"a": 1, "b": "abc"},
     ("error", "'in <string>' requires string as left operand, not int")),
    ("add_str_str", {"a": 2, "b": True}, ("ok", ("int", 3))),
    ("mul_number_number", {"a": "ab", "b": 3}, ("ok", ("str", "ababab"))),
    ("mod_number_number", {"a": "%s!", "b": [1]}, ("ok", ("str", "[1]!"))),
    # inf and nan are no JSON: refused as arguments, but a result may be one, as Python's
    ("mul_number_number", {"a": 1e300, "b": 1e300}, ("ok", ("float", "inf"))),
    ("add_number_number", {"a": float("inf"), "b": 1},
     ("error", "a: expected a finite number, got Infinity")),
    ("add_str_str", {"a": float("nan"), "b": "x"},
     ("error", "a: expected a finite number, got NaN")),
    # the budget judges the work first
    ("mul_number_number", {"a": "ab", "b": 10 ** 7}, ("error", STRING_MESSAGE)),
    ("mod_number_number", {"a": "%2000000d", "b": 1}, ("error", STRING_MESSAGE)),
    ("aug_mul_number_number", {"a": "ab", "b": 10 ** 7}, ("error", STRING_MESSAGE)),
    ("aug_add_str_str", {"a": 2, "b": True}, ("ok", ("int", 3))),
    # `+=` extends a list with any iterable, and names itself in Python's errors
    ("aug_add_list_list", {"a": [1], "b": "xy"}, ("ok", [("int", 1), ("str", "x"), ("str", "y")])),
    ("aug_add_list_list", {"a": [1], "b": 5}, ("error", "'int' object is not iterable")),
    ("aug_add_str_str", {"a": 1, "b": [1]},
     ("error", "unsupported operand type(s) for +=: 'int' and 'list'")),
    ("pow_int_int", {"a": 3, "b": 10 ** 6}, ("error", "3 ** 1000000 is too large.")),
])
def test_operators_on_values_of_other_types(operators: type[Episode], tool: str,
                                            arguments: dict[str, Any],
                                            expected: tuple[Any, ...]) -> None:
    assert worlds(operators(), tool, arguments) == expected


def test_a_world_not_in_the_mode_keeps_the_languages_power(tmp_path: Path) -> None:
    spec = OPERATORS_HEAD.replace("dynamic", "python") + OPERATOR_TOOLS[("pow", "int", "int")]
    world = compile_text(tmp_path, "operators.world", spec, "Operators")
    assert world().call("pow_int_int", {"a": 2, "b": -1}) == \
        {"error": "2 ** -1: a negative power of an int; use a float."}
    assert world().call("pow_int_int", {"a": 2, "b": 10}) == 1024
