"""The tool registry a world declares: the runtime loads each call's arguments from what its
``param(...)`` declarations say (no generated function loads them), and derives each tool's
JSON schemas with the functions the compiler's type tables use.

Both ways throughout: good arguments reach the tool as the types say, and bad ones (missing,
unknown, null, of the wrong type, out of range, a key no row has) fail with the message the
value checks give; in ``arguments: dynamic`` a value of another JSON type reaches the tool.
The two invokers the runtime builds (one for a tool whose parameters are all required, one
for any tool) must agree on every argument."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from spec_support import compile_text, generated_source

from tests.example_specs import example_specs
from worldspec.compiler.api import check_specs
from worldspec.compiler.codegen.pytypes import TypeTables
from worldspec.compiler.model import WorldModel
from worldspec.runtime import arguments as arg
from worldspec.runtime import schema as js
from worldspec.runtime.episode import Episode, ToolSpec
from worldspec.runtime.errors import ToolError
from worldspec.runtime.values import want_int, want_str
from worldspec.services.loading import load_result

ROOT = Path(__file__).resolve().parent.parent

SPEC = """\
world Reg "Arguments as the registry loads them."

config { results: bfcl  arguments: ARGS }

enum Color { red, green }

entity Order "An order." {
  key id: str
  total: int
}

state {
  orders: table Order
}

tool all_required(
  name: str "A name.",
  tags: list[str] "Some tags.",
  order: Order "An order id." else f"No order {order}.",
  count: int(1..5) "How many.",
  color: Color "A colour.",
) -> str "Every parameter required." {
  return f"{name}|{len(tags)}|{order.id}|{count}|{color}"
}

tool one_optional(
  name: str "A name.",
  tags: list[str] "Some tags.",
  order: Order "An order id." else f"No order {order}.",
  count: int(1..5) "How many.",
  color: Color "A colour.",
  note: str? = none "Not used.",
) -> str "The same, and one optional parameter." {
  return f"{name}|{len(tags)}|{order.id}|{count}|{color}"
}
"""

DATA = {"orders": [{"id": "W1", "total": 3}]}
GOOD = {"name": "Ann", "tags": ["a", "b"], "order": "W1", "count": 2, "color": "red"}

#: one argument changed from GOOD: what each case gives the tool
VARIANTS: list[tuple[str, Any]] = [
    ("name", "Zoë"), ("name", "\ud800"), ("name", 5), ("name", None), ("name", ["x"]),
    ("tags", []), ("tags", ["a", 1]), ("tags", "ab"), ("tags", ["ü"]), ("tags", None),
    ("order", "W9"), ("order", 7), ("order", ["W1"]), ("order", "Wü"),
    ("count", 0), ("count", 6), ("count", "2"), ("count", 2.0), ("count", True),
    ("color", "blue"), ("color", 1), ("color", "green"),
]


def _world(tmp_path: Path, rules: str) -> type[Episode]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    return compile_text(tmp_path, "reg.world", SPEC.replace("ARGS", rules), "Reg")


def _cases() -> list[dict[str, Any]]:
    return [GOOD] + [{**GOOD, name: value} for name, value in VARIANTS] + \
        [{k: v for k, v in GOOD.items() if k != "color"}, {**GOOD, "colour": "red"}]


@pytest.mark.parametrize("rules", ["worldspec", "python", "dynamic"])
def test_both_invokers_load_every_argument_alike(tmp_path: Path, rules: str) -> None:
    """The invoker of a tool whose parameters are all required (which checks text inline)
    and the general one (a tool with an optional parameter) give the same result or the
    same failure for every argument, good and bad, in each argument mode."""
    world = _world(tmp_path, rules)
    ep = world(data=DATA)
    differ = []
    for args in _cases():
        first, second = ep.call("all_required", args), ep.call("one_optional", args)
        if isinstance(first, dict) and "error" in first and ("colour" in args or
                                                              "color" not in args):
            # the names' check lists each tool's own parameters
            assert "error" in second, (rules, args)
            continue
        if first != second:
            differ.append((args, first, second))
    assert differ == []


def test_good_arguments_reach_the_tool_as_their_types_say(tmp_path: Path) -> None:
    ep = _world(tmp_path, "worldspec")(data=DATA)
    assert ep.call("all_required", GOOD) == "Ann|2|W1|2|red"
    assert ep.call("all_required", {**GOOD, "name": "Zoë", "color": "green"}) == \
        "Zoë|2|W1|2|green"
    assert ep.call("one_optional", {**GOOD, "note": None}) == "Ann|2|W1|2|red"


def test_bad_arguments_fail_with_the_value_checks_messages(tmp_path: Path) -> None:
    ep = _world(tmp_path, "worldspec")(data=DATA)

    def refusal(check: Any, value: Any, path: str) -> str:
        with pytest.raises(ToolError) as refused:
            check(value, path)
        return str(refused.value)

    assert ep.call("all_required", {**GOOD, "name": 5}) == {"error": refusal(want_str, 5,
                                                                              "name")}
    assert ep.call("all_required", {**GOOD, "count": "2"}) == \
        {"error": refusal(want_int, "2", "count")}
    # the spec's own message for a key no row has
    assert ep.call("all_required", {**GOOD, "order": "W9"}) == {"error": "No order W9."}
    out = ep.call("all_required", {**GOOD, "count": 9})
    assert "count" in out["error"] and "5" in out["error"]
    # a null for a required parameter is a missing argument; an unknown name is refused
    assert "name" in ep.call("all_required", {**GOOD, "name": None})["error"]
    assert "colour" in ep.call("all_required", {**GOOD, "colour": "red"})["error"]


def test_dynamic_arguments_pass_other_json_types_on(tmp_path: Path) -> None:
    """``arguments: dynamic``: text of another JSON type reaches the tool as it is; a key of
    another type finds no row (the spec's message), an unhashable one fails with Python's
    text; a world without the mode refuses the same values."""
    dynamic = _world(tmp_path / "d", "dynamic")(data=DATA)
    assert dynamic.call("all_required", {**GOOD, "name": 5}) == "5|2|W1|2|red"
    assert dynamic.took_other_types
    assert dynamic.call("all_required", {**GOOD, "order": 7}) == {"error": "No order 7."}
    assert dynamic.call("all_required", {**GOOD, "order": ["W1"]}) == \
        {"error": "unhashable type: 'list'"}
    plain = _world(tmp_path / "p", "worldspec")(data=DATA)
    assert "error" in plain.call("all_required", {**GOOD, "name": 5})
    assert not plain.took_other_types


def test_the_registry_is_declared_not_written_out(tmp_path: Path) -> None:
    """No generated function loads arguments; each description is written once, in the
    registry (the tool's method has no docstring to drift from it)."""
    world = _world(tmp_path, "worldspec")
    source = generated_source(world)
    assert "_invoke_" not in source and "def _invoke" not in source
    assert source.count("Every parameter required.") == 1
    assert world.TOOLS["all_required"].doc == "Every parameter required."
    assert vars(world)["tool_all_required"].__doc__ is None
    assert source.count("'An order id.'") == 1  # the parameter both tools share, once
    # each declaration decorates its method and names the spec's place (no anchor comment)
    assert "    @tool('Every parameter required.', _PARAM_name," in source
    assert "where='reg.world:16'" in source and "@tool(  #" not in source
    assert source.count("@tool(") == 2 and "\nReg.TOOLS = tools(Reg)\n" in source


class _Desk:
    """Two tools and a helper, declared by hand as a generated world declares them."""

    @arg.tool("Count.", arg.param("n", arg.INT, "How many."), where="desk.world:3",
              read_only=True)
    def tool_count(self, n: int) -> int:
        return n

    def fn_helper(self) -> int:
        return 1

    @arg.tool("Say it.", name="say-it")
    def tool_say(self) -> str:
        return "hi"


def test_tools_collects_what_the_methods_declare_in_the_class_order() -> None:
    registry = arg.tools(_Desk)
    assert list(registry) == ["count", "say-it"]
    count = registry["count"]
    assert (count.doc, count.where, count.read_only) == ("Count.", "desk.world:3", True)
    assert [p.name for p in count.params] == ["n"]
    assert registry["say-it"].params == () and not registry["say-it"].read_only
    found = arg.declaration(_Desk.tool_count)
    assert found is not None and found.name == "count" and found.method is _Desk.tool_count
    assert arg.declaration(_Desk.fn_helper) is None and arg.declaration(len) is None
    assert _Desk().tool_count(2) == 2  # the method itself is left as it is
    with pytest.raises(ValueError, match="unknown argument rules 'loose'"):
        arg.tools(_Desk, arguments="loose")


#: prints, under the interpreter's flags, whether docstrings are kept and each generated
#: world's tool definitions (argv: the generated worlds' folders)
_DEFINITIONS = """
import json, sys
from worldspec.runtime.schema import tool_definitions
from worldspec.services.loading import load_package
from worldspec.services.prompts import world_doc
loaded = [load_package(p).World for p in sys.argv[1:]]
worlds = {w.WORLD: tool_definitions(w.TOOLS.values()) for w in loaded}
described = {w.WORLD: world_doc(w) for w in loaded}
print(json.dumps({"docstrings": tool_definitions.__doc__ is not None, "worlds": worlds,
                  "described": described}))
"""


def _definitions(*flags: str) -> dict[str, Any]:
    folders = sorted(str(p) for p in (ROOT / "generated").iterdir() if (p / "world.py").is_file())
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, *flags, "-c", _DEFINITIONS, *folders], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    assert len(out["worlds"]) > 15
    return out


def test_tool_descriptions_survive_python_oo() -> None:
    """``python -OO`` drops every docstring (the check that says no: the runtime's own are
    gone), yet every generated world's tool definitions are the same as without it, each
    tool's description its spec's doc."""
    plain, stripped = _definitions(), _definitions("-OO")
    assert plain["docstrings"] and not stripped["docstrings"]
    assert stripped["worlds"] == plain["worlds"]
    models, _ = _examples()
    described = [(models[world].tools[d["function"]["name"]].doc or "",
                  d["function"]["description"])
                 for world, defs in stripped["worlds"].items() if world in models for d in defs]
    assert [doc for doc, description in described if doc != description] == []
    assert sum(bool(description) for _, description in described) > 200
    # and each world's description, which the agent's system prompt shows
    assert stripped["described"] == plain["described"]
    assert all(stripped["described"][name] == (model.doc or name).strip().splitlines()[0]
               for name, model in models.items() if name in stripped["described"])


# ------------------------------------------------------------------------------ schemas
def _examples() -> tuple[dict[str, WorldModel], dict[str, type[Episode]]]:
    files = [str(p) for p in example_specs()]
    result = check_specs(files)
    assert result.ok
    return result.model.worlds, load_result(result).worlds


def _expected_params(world: WorldModel, tables: TypeTables, tool: str) -> list[Any]:
    python = world.config.arguments in ("python", "dynamic")
    out = []
    for p in world.tools[tool].params:
        schema = tables.schema(p.type)
        if p.default is not None and not python and schema.get("anyOf", [{}])[-1] != js.NULL:
            schema = js.nullable(schema)  # null means the default
        if p.doc:
            schema = {**schema, "description": p.doc}
        out.append(schema)
    return out


def test_every_examples_schemas_are_the_type_tables() -> None:
    """For every example world, each parameter's and each result's schema, as the runtime
    derives it from the declarations, is (byte for byte, key order included) what the
    compiler's type tables decide for the same type."""
    models, worlds = _examples()
    assert len(worlds) > 15
    compared = 0
    for name, model in models.items():
        tables = TypeTables(model)
        specs: dict[str, ToolSpec] = worlds[name].TOOLS
        assert list(specs) == list(model.tools)
        for tool, spec in specs.items():
            info = model.tools[tool]
            got = [p.schema for p in spec.params]
            assert json.dumps(got) == json.dumps(_expected_params(model, tables, tool)), tool
            expected = tables.result_schema(info.returns) if info.returns else None
            assert json.dumps(spec.returns) == json.dumps(expected), (name, tool)
            assert spec.doc == (info.doc or "")
            compared += 1
    assert compared > 200


RESULTS_SPEC = """\
world Res "Results whose schemas the classes derive."

enum Size { small, large }

type ItemId = str matching /^I[0-9]+$/

entity Item "An item." {
  key id: ItemId
  name: str(1..40)
  size: Size
  added: date
  weight: float(0.0..)
  tags: set[str] = []
  note: str? = none
}

record Line "A line." {
  item: Item
  count: int(1..9)
  extras: map[str, int]
}

record Basket "A basket." {
  lines: list[Line]
  biggest: Line?
}

record Shown "Items shown whole." {
  items: list[row[Item]]
}

state {
  items: table Item
}

tool get_item(item: Item "An item id.") -> row[Item] "One item." {
  return item
}

tool basket(item: Item "An item id.") -> Basket "A basket of one line." {
  let line = Line(item: item, count: 1, extras: {})
  return Basket(lines: [line], biggest: line)
}

tool shown() -> Shown "Every item." {
  return Shown(items: [i for i in items])
}
"""


def test_a_records_class_stands_for_its_result_schema(tmp_path: Path) -> None:
    """A record's or a row's class stands for its result's schema where its fields say it
    (their annotations, their shapes' refinements, and ``schema=`` where a set says more): the
    registry names the class, and the runtime builds the schema the type tables decide.
    A record holding whole rows (which its annotation, a key, cannot say) is spelled out."""
    world = compile_text(tmp_path, "res.world", RESULTS_SPEC, "Res")
    source = generated_source(world)
    assert re.search(r"returns=Item\b", source) and re.search(r"returns=Basket\b", source)
    assert "returns=Shown," not in source and "returns=js.closed({" in source
    # the refinement, on its field: its shape, from which the runtime derives its schema
    assert "sh.refined(sh.TEXT, 1, 40)" in source and "schema=js.scalar(" not in source
    model = check_specs([str(tmp_path / "res.world")]).model.worlds["Res"]
    tables = TypeTables(model)
    for name, info in model.tools.items():
        assert info.returns is not None
        assert json.dumps(world.TOOLS[name].returns) == \
            json.dumps(tables.result_schema(info.returns)), name
    item = world.TOOLS["get_item"].returns
    assert item is not None and item["required"] == ["id", "name", "size", "added", "weight",
                                                     "tags", "note"]
    assert item["properties"]["tags"] == {"type": "array", "items": {"type": "string"},
                                          "uniqueItems": True}


def test_a_schema_no_annotation_says_is_refused_clearly() -> None:
    """What no annotation can say (any JSON value, a class that is no record) fails with a
    message naming the fix, not with a wrong schema."""
    assert js.hinted(dict[str, int | None]) == js.mapping(js.nullable(js.INTEGER))
    with pytest.raises(TypeError, match="declare it with field"):
        js.hinted(Any)
    with pytest.raises(TypeError, match="no record or row class"):
        js.result_of(Path)


def test_a_parameters_schema_is_its_argument_types() -> None:
    assert arg.refined(arg.TEXT, 1, 80).schema == \
        {"type": "string", "minLength": 1, "maxLength": 80}
    assert arg.set_of(arg.refined(arg.INT, 0)).schema == \
        {"type": "array", "items": {"type": "integer", "minimum": 0}, "uniqueItems": True}
    assert arg.optional(arg.map_of(arg.TEXT, arg.DATE)).schema == {"anyOf": [
        {"type": "object", "additionalProperties": {"type": "string", "format": "date"}},
        {"type": "null"}]}
    # and what it loads: a refinement refuses, a good value passes
    assert arg.refined(arg.INT, 1, 5).load(3, "n", None) == 3
    with pytest.raises(ToolError):
        arg.refined(arg.INT, 1, 5).load(6, "n", None)


DESK = """\
world Desk "Rows the registry shares, and defaults."

config { results: bfcl }

enum Level { low, high }

entity Ticket "A ticket." {
  key id: str
  level: Level
  hits: int
}

entity Agent "An agent." {
  key id: str
  name: str
}

state {
  tickets: table Ticket
  agents: table Agent
  step: int = 3
}

tool bump(
  ticket: Ticket "The ticket." else f"No ticket {ticket}.",
  by: int = 1 "How much.",
  level: Level = high "The level.",
  note: str = "" "A note.",
  start: int = step + 1 "Where to start.",
) -> str "Bump a ticket." {
  ticket.hits += by
  ticket.level = level
  return f"{ticket.hits}|{note}|{start}"
}

tool close(ticket: Ticket "A ticket id." else f"No ticket {ticket}.") -> str "Close a ticket." {
  delete ticket from tickets
  return ticket.id
}

tool assign(
  ticket: Ticket? "Maybe a ticket." else f"No ticket {ticket}.",
  agent: Agent "An agent." else "No such agent.",
) -> str "Assign." {
  return agent.name
}

tool peek(ticket: Ticket "A ticket id.") -> int "Read a ticket." {
  return ticket.hits
}
"""
DESK_DATA = {"tickets": [{"id": "T1", "level": "low", "hits": 1}],
             "agents": [{"id": "A1", "name": "Ann"}]}


def test_a_row_and_its_message_are_declared_once(tmp_path: Path) -> None:
    """Three parameters (one optional) take a ticket with the same message: one ``_ROW_``
    constant says the table and the message, each parameter names it; the agent's constant
    message is the text itself, no function. Every parameter still refuses a key no row has
    with its message; a parameter of a table without a message keeps the runtime's."""
    world = compile_text(tmp_path, "desk.world", DESK, "Desk")
    source = generated_source(world)
    assert source.count("f'No ticket {key}.'") == 1
    assert "_ROW_tickets = arg.row('tickets', not_found=lambda ep, key: " in source
    assert source.count("_ROW_tickets") == 4
    assert "param('ticket', arg.optional(_ROW_tickets), 'Maybe a ticket.')" in source
    assert "_ROW_agents = arg.row('agents', not_found='No such agent.')" in source
    ep = world(data=DESK_DATA)
    assert ep.call("bump", {"ticket": "T9"}) == {"error": "No ticket T9."}
    assert ep.call("close", {"ticket": "T9"}) == {"error": "No ticket T9."}
    assert ep.call("assign", {"ticket": "T9", "agent": "A1"}) == {"error": "No ticket T9."}
    assert ep.call("assign", {"agent": "A9"}) == {"error": "No such agent."}
    assert "param('ticket', arg.row('tickets'), 'A ticket id.')" in source
    assert ep.call("peek", {"ticket": "T9"}) == {"error": 'Ticket "T9" not found.'}
    assert ep.call("peek", {"ticket": "T1"}) == 1
    with pytest.raises(ToolError, match=r"^Gone\.$"):  # a text is the message, whatever the key
        arg.row("tickets", not_found="Gone.").lookup(ep, "T9")
    assert ep.call("assign", {"ticket": "T1", "agent": "A1"}) == "Ann"


def test_a_constant_default_is_a_value_and_a_computed_one_a_function(tmp_path: Path) -> None:
    """``default=1``, ``default=''``, an enum member's constant: held as they are;
    ``step + 1`` reads the state, so the episode computes it at each call."""
    world = compile_text(tmp_path, "desk.world", DESK, "Desk")
    source = generated_source(world)
    assert "param('by', arg.INT, 'How much.', default=1)" in source
    assert "param('note', arg.TEXT, 'A note.', default='')" in source
    assert "default=_E5_Level_high)" in source
    assert "default_from=lambda ep: ep.state.step + 1" in source
    assert "default=lambda" not in source
    ep = world(data=DESK_DATA)
    assert ep.call("bump", {"ticket": "T1"}) == "2||4"
    assert ep.export_state()["tickets"] == [{"id": "T1", "level": "high", "hits": 2}]
    assert ep.call("bump", {"ticket": "T1", "by": 2, "note": "n", "start": 0}) == "4|n|0"


def test_param_takes_a_default_value_or_a_function_of_the_episode() -> None:
    by_value = arg.param("n", arg.INT, "A number.", default=0)
    computed = arg.param("n", arg.INT, "A number.", default_from=lambda ep: ep * 2)
    none = arg.param("n", arg.INT, "A number.")
    assert by_value.default is not None and by_value.default(21) == 0
    assert computed.default is not None and computed.default(21) == 42
    assert none.default is None  # no default: the argument is required
    with pytest.raises(TypeError, match="say default= or default_from=, not both"):
        arg.param("n", arg.INT, "A number.", default=0, default_from=lambda ep: 1)
