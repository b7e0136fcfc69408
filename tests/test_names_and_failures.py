"""Names and state, results and failure (issue 16).

- ``state.x`` always names the state item ``x``, also where a parameter or local has that
  name; a local or parameter that shadows a state item is a warning (WS214) unless the body
  tells the two apart with ``state.x``; ``state.nope`` is WS215.
- Tool names are free of the generated environment's methods: tools named ``reset``,
  ``diff``, ``copy``, ``call``, ``state`` are dispatched through ``TOOLS`` and the episode's
  own methods still work.
- ``fail keep "..."`` fails the call but keeps what it changed (and its draws), unless an
  invariant breaks; ``failed()`` says it failed and the property checks accept it.
- ``config { arguments: python }`` gives Python's TypeError texts for missing and unexpected
  arguments; a parameter's ``else`` message replaces the message for a value of the wrong type.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from worldspec.compiler.api import check_source
from worldspec.runtime.episode import Episode
from worldspec.runtime.errors import KeptError
from worldspec.services.loading import compile_worlds
from worldspec.testing.properties import check_call


def compile_spec(root: Path, text: str, world: str) -> type[Episode]:
    spec = root / "spec.world"
    spec.write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORLDSPEC_CACHE", str(root / "cache"))
        return compile_worlds([spec]).worlds[world]


def diagnostics(text: str) -> list[tuple[str, str]]:
    result = check_source(text, "spec.world")
    return [(d.code, d.message) for d in result.diagnostics]


# ---------------------------------------------------------------- qualified state names

LOGIN = """\
world Login "A login."

config { results: bfcl }

state {
  username: str? = none
  logins: int = 0
}

invariant few "At most three logins.": logins <= 3

tool login(username: str "Who logs in.") -> bool "Log in." {
  if state.username == username {
    return false
  }
  state.username = username
  state.logins += 1
  return true
}

tool whoami() -> str? "Who is logged in." {
  return state.username
}
"""


def test_qualified_state_is_read_and_assigned_beside_a_parameter(tmp_path: Path) -> None:
    assert diagnostics(LOGIN) == []
    world = compile_spec(tmp_path, LOGIN, "Login")
    ep = world()
    assert ep.call("login", {"username": "ann"}) is True
    assert ep.call("login", {"username": "ann"}) is False
    assert ep.call("login", {"username": "bob"}) is True
    assert ep.export_state() == {"username": "bob", "logins": 2}
    assert ep.call("whoami") == "bob"


def test_a_shadowing_parameter_is_a_warning_naming_the_qualified_form() -> None:
    text = LOGIN.replace("state.username == username", "username == username")
    text = text.replace("state.username = username\n", "")
    found = diagnostics(text)
    assert found == [("WS214", "parameter 'username' shadows the state item 'username': here "
                      "'username' means the parameter")]


def test_shadowing_locals_and_loop_variables_are_warned_too() -> None:
    text = LOGIN.replace('tool whoami() -> str? "Who is logged in." {\n  return state.username',
                         'tool whoami() -> str? "Who is logged in." {\n'
                         '  let logins = 1\n  for username in ["a"] { }\n'
                         '  return state.username + str(logins)')
    codes = [code for code, _ in diagnostics(text)]
    assert codes.count("WS214") == 1  # `username` is read as state.username: only `logins`


def test_a_parameter_named_like_a_builtin_says_it_hides_it() -> None:
    """A parameter ``days`` makes ``days(...)`` a call of the parameter: the message names
    both, and the builtin stays callable once the parameter is renamed."""
    text = LOGIN.replace('tool whoami() -> str? "Who is logged in." {\n  return state.username',
                         'tool whoami(days: int "how many") -> str? "Who is logged in." {\n'
                         '  return str(days(1) + days)')
    assert diagnostics(text) == [("WS206", "the parameter 'days' hides the builtin function "
                                  "days()")]
    assert diagnostics(text.replace("days", "n").replace("n(1)", "days(1).days")) == []
    # a value that hides nothing is just not a function
    assert diagnostics(text.replace("days(1)", "logins(1)")) == [
        ("WS206", "'logins' is a value, not a function")]


def test_unknown_qualified_state_is_ws215() -> None:
    found = diagnostics(LOGIN.replace("return state.username", "return state.usrname"))
    assert ("WS215", "the world has no state item 'usrname'") in found


def test_a_parameter_may_be_called_state() -> None:
    text = LOGIN.replace('tool whoami() -> str? "Who is logged in." {\n  return state.username',
                         'tool whoami(state: str "A US state.") -> str? "Who is logged in." {\n'
                         '  return if state == "CA" then state.username else none')
    assert diagnostics(text) == []


# ---------------------------------------------------------------- tool names are free

FREE = """\
world Free "Tools named like the environment's methods."

config { results: bfcl }

state { hits: int = 0 }

tool reset() -> int "Count a reset." { hits += 1  return hits }
tool diff(a: int "a", b: int "b") -> int "a - b." { return a - b }
tool copy() -> str "Copy." { return "copied" }
tool call(name: str "n") -> str "Call." { return name }
tool state() -> int "The hits." { return hits }
tool score() -> int "Score." { return 7 }
"""


def test_tools_named_like_environment_methods(tmp_path: Path) -> None:
    assert diagnostics(FREE) == []
    world = compile_spec(tmp_path, FREE, "Free")
    ep = world()
    assert ep.call("reset") == 1 and ep.call("reset") == 2
    assert ep.call("diff", {"a": 5, "b": 2}) == 3
    assert ep.call("copy") == "copied" and ep.call("call", {"name": "x"}) == "x"
    assert ep.call("state") == 2 and ep.call("score") == 7
    assert sorted(t["function"]["name"] for t in ep.tools()) == [
        "call", "copy", "diff", "reset", "score", "state"]
    # the episode's own methods are untouched
    other = ep.copy()
    assert ep.diff(other) == [] and other.export_state() == {"hits": 2}
    ep.reset()
    assert ep.export_state() == {"hits": 0}


# ---------------------------------------------------------------- fail keep

KEEP = """\
world Keep "A counter that fails and keeps."

config { results: bfcl }

state {
  attempts: int = 0
  last: int = 0
}

invariant bounded "At most five attempts.": attempts <= 5

tool guess(n: int "The guess.") -> int "Guess; a wrong guess still counts." {
  attempts += 1
  last = random_int(1, 1000)
  if n != 3 {
    fail keep f"Wrong guess {n}."
  }
  return attempts
}

tool plain(n: int "n") -> int "Fails and keeps nothing." {
  attempts += 1
  fail f"No {n}."
}
"""


def test_fail_keep_keeps_the_changes_and_counts_as_a_failure(tmp_path: Path) -> None:
    assert diagnostics(KEEP) == []
    world = compile_spec(tmp_path, KEEP, "Keep")
    ep = world()
    before = ep.state_hash()
    result = ep.call("guess", {"n": 1})
    assert result == {"error": "Wrong guess 1."} and ep.failed(result)
    assert isinstance(ep.last_error, KeptError)
    assert ep.export_state()["attempts"] == 1 and ep.state_hash() != before
    spec = world.TOOLS["guess"]
    # the property checks accept a kept failure that keeps the rules
    assert check_call(ep, spec, {"n": 1}, before) is None
    assert ep.call("plain", {"n": 1}) == {"error": "No 1."}
    assert ep.export_state()["attempts"] == 1  # plain `fail` stays atomic


def test_fail_keep_draws_stay_drawn(tmp_path: Path) -> None:
    world = compile_spec(tmp_path, KEEP, "Keep")
    ep = world(seed=5)
    ep.call("guess", {"n": 1})
    first = ep.export_state()["last"]
    ep.call("guess", {"n": 1})
    assert ep.export_state()["last"] != first or first == 0


def test_fail_keep_is_undone_when_an_invariant_breaks(tmp_path: Path) -> None:
    world = compile_spec(tmp_path, KEEP, "Keep")
    ep = world(data={"attempts": 5})
    before = ep.export_state()
    assert ep.call("guess", {"n": 1}) == {"error": "At most five attempts."}
    assert ep.export_state() == before


def test_fail_keep_formats_and_round_trips() -> None:
    from worldspec.dsl.formatter import format_source

    formatted = format_source(KEEP, "spec.world")
    assert 'fail keep f"Wrong guess {n}."' in formatted
    assert format_source(formatted, "spec.world") == formatted


# ---------------------------------------------------------------- argument errors

ARGS = """\
world Shop "A shop."

config { results: tau2  arguments: python  class_name: "ShopTools" }

tool find(email: str "The email." else f"'{str(email)}' is not an email",
          limit: int = 3 "At most.") -> str "Find." {
  return email.lower()
}

tool ping() -> str "Ping." { return "pong" }
"""


@pytest.mark.parametrize(("name", "arguments", "expected"), [
    ("find", {}, "Error: ShopTools.find() missing 1 required positional argument: 'email'"),
    ("find", {"email": "A", "x": 1},
     "Error: ShopTools.find() got an unexpected keyword argument 'x'"),
    ("ping", {"x": 1}, "Error: ShopTools.ping() got an unexpected keyword argument 'x'"),
    ("find", {"email": 5}, "Error: '5' is not an email"),
    ("find", {"email": "A"}, "a"),
])
def test_python_argument_errors(tmp_path: Path, name: str, arguments: dict[str, Any],
                                expected: str) -> None:
    world = compile_spec(tmp_path, ARGS, "Shop")
    assert world().call(name, arguments) == expected


FALLBACK = """\
world Lookup "A lookup."

config { results: bfcl }

state { names: map[str, str] = {"a": "b"} }

fn unhashable(value: json) -> str? "Python's TypeError for a list or dict key, else none." {
  let kind = type_name(value)
  if kind == "list" or kind == "dict" {
    return f"unhashable type: '{kind}'"
  }
  return none
}

tool find(name: str "A name." else unhashable(name)) -> str "Find." {
  return names.get(name) ?? "none"
}

tool get(name: str "A name." else unhashable(name) ?? f"No name {name} ({type_name(name)}).")
  -> str "Get."
{
  return names.get(name) ?? "none"
}
"""


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("find", [1], "unhashable type: 'list'"),
    ("find", {"k": 1}, "unhashable type: 'dict'"),
    ("find", 7, "name: expected a string, got 7"),  # none: the runtime's own message
    ("find", 2.5, "name: expected a string, got 2.5"),
    ("get", [1], "unhashable type: 'list'"),
    ("get", 7, "No name 7 (int)."),
    ("get", True, "No name True (bool)."),
    ("get", 2.5, "No name 2.5 (float)."),
])
def test_an_else_message_that_is_none_keeps_the_runtimes_message(
        tmp_path: Path, name: str, value: Any, expected: str) -> None:
    world = compile_spec(tmp_path, FALLBACK, "Lookup")
    episode = world()
    assert episode.call(name, {"name": value}) == {"error": expected}
    assert episode.call(name, {"name": "a"}) == "b"


def test_an_else_message_must_be_text_or_none() -> None:
    found = diagnostics(FALLBACK.replace('else unhashable(name))', 'else 3)'))
    assert ("WS301", "the parameter's 'else' message: expected str or str?, found int") in found
    entity = diagnostics('world W "w."\nentity U { key id: str }\nstate { us: table U }\n'
                         'tool f(u: U "A user." else none) -> str "F." { return u.id }\n')
    assert any(code == "WS301" and "'not found' message" in message for code, message in entity)


UNKNOWN = """\
world Shop "A shop."

config { results: tau2  unknown_tool: "Tool '{name}' not found." }

tool ping() -> str "Ping." { return "pong" }
"""


def test_unknown_tool_text_is_the_worlds_choice(tmp_path: Path) -> None:
    episode = compile_spec(tmp_path, UNKNOWN, "Shop")()
    assert episode.call("pong", {}) == "Error: Tool 'pong' not found."
    assert episode.failed(episode.call("pong", {}))
    assert episode.call("ping", {}) == "pong"
    (tmp_path / "plain").mkdir()
    plain = compile_spec(tmp_path / "plain", UNKNOWN.replace(
        "  unknown_tool: \"Tool '{name}' not found.\"", ""), "Shop")()
    assert plain.call("pong", {}) == 'Error: Unknown tool "pong".'


@pytest.mark.parametrize("value", ['""', '"Tool {tool} missing"', '"}{name}"', "3", "tool"])
def test_unknown_tool_text_is_checked(value: str) -> None:
    found = diagnostics(UNKNOWN.replace('"Tool \'{name}\' not found."', value))
    assert any(code == "WS503" and message.startswith("unknown_tool must be a non-empty string")
               for code, message in found), found


class _C:
    def f(self, a: Any, b: Any, c: Any) -> None:
        pass


def test_python_messages_name_missing_arguments_as_python_lists_them() -> None:
    from worldspec.runtime.errors import ArgumentError
    from worldspec.runtime.helpers import check_arguments_python

    def message(args: dict[str, Any], required: tuple[str, ...]) -> str:
        with pytest.raises(ArgumentError) as caught:
            check_arguments_python(args, ("a", "b", "c"), required, "_C.f")
        return caught.value.message

    def python(args: dict[str, Any]) -> str:
        with pytest.raises(TypeError) as caught:
            _C().f(**args)
        return str(caught.value)

    for args in ({}, {"a": 1}, {"a": 1, "b": 2}, {"a": 1, "z": 2}):
        assert message(args, ("a", "b", "c")) == python(args)


def test_argument_style_and_class_name_are_checked() -> None:
    found = diagnostics(ARGS.replace("arguments: python", "arguments: pyhton")
                        .replace('"ShopTools"', '"Shop Tools"'))
    assert ("WS503", "arguments must be worldspec, python or dynamic") in found
    assert any(code == "WS503" and "class_name" in message for code, message in found)


# ---------------------------------------------------------------- custom results and const

CUSTOM = """\
world Trade "A trading desk."

config { results: custom }

results {
  success: {"status": true, "data": value}
  failure: {"status": false, "message": message}
}

enum Side { buy, sell }

const SYMBOLS = {"Apple": "AAPL", "Google": "GOOG"}
const SECTORS: map[str, list[str]] = {"Tech": ["AAPL", "GOOG"], "Auto": []}
const DEFAULT_SIDE: Side = buy

state { trades: int = 0 }

tool symbol(name: str "A company.") -> str "Its symbol." {
  require name in SYMBOLS else f"No company {name}."
  return SYMBOLS[name]
}

tool sector(name: str "A sector.") -> list[str] "Its symbols." {
  return SECTORS.get(name) ?? []
}

tool trade(side: Side = DEFAULT_SIDE "Buy or sell.") -> Side "Trade." {
  trades += 1
  return side
}
"""


def test_custom_results_shape_success_and_failure(tmp_path: Path) -> None:
    assert diagnostics(CUSTOM) == []
    world = compile_spec(tmp_path, CUSTOM, "Trade")
    ep = world()
    ok = ep.call("symbol", {"name": "Apple"})
    assert ok == {"status": True, "data": "AAPL"} and not ep.failed(ok)
    bad = ep.call("symbol", {"name": "IBM"})
    assert bad == {"status": False, "message": "No company IBM."} and ep.failed(bad)
    assert ep.failed(ep.call("symbol", {}))
    assert ep.call("sector", {"name": "Tech"}) == {"status": True, "data": ["AAPL", "GOOG"]}
    assert ep.call("trade") == {"status": True, "data": "buy"}
    # failed() matches the shape: the same keys and constants, any text as the message
    assert ep.failed({"status": False, "message": ""})
    assert not ep.failed({"status": 0, "message": "x"})
    assert not ep.failed({"status": False, "message": "x", "more": 1})
    assert not ep.failed({"status": False, "message": 3})


def test_custom_text_failures(tmp_path: Path) -> None:
    text = CUSTOM.replace('failure: {"status": false, "message": message}',
                          'failure: f"Error: {message}!"')
    world = compile_spec(tmp_path, text, "Trade")
    ep = world()
    bad = ep.call("symbol", {"name": "IBM"})
    assert bad == "Error: No company IBM.!" and ep.failed(bad)
    assert not ep.failed("Error: no bang") and not ep.failed({"status": True, "data": "x"})


@pytest.mark.parametrize(("change", "code"), [
    (('config { results: custom }', 'config { results: bfcl }'), "WS510"),
    (('results {\n  success', 'results_ {\n  success'), "syntax"),
    (('failure: {"status": false, "message": message}', 'failure: {"status": false}'),
     "WS512"),
    (('failure: {"status": false, "message": message}',
      'failure: {"status": false, "message": message, "n": trades}'), "WS512"),
    (('success: {"status": true, "data": value}', 'win: value'), "WS511"),
    (('const SYMBOLS = {', 'const SYMBOLS = {"x": str(1), '), "WS217"),
    (('const DEFAULT_SIDE: Side = buy', 'const DEFAULT_SIDE: Side = "buy"'), "WS301"),
])
def test_custom_results_and_const_diagnostics(change: tuple[str, str], code: str) -> None:
    text = CUSTOM.replace(*change)
    assert text != CUSTOM
    result = check_source(text, "spec.world")
    codes = {d.code for d in result.diagnostics}
    assert code in codes or (code == "syntax" and result.diagnostics), codes


def test_custom_without_results_block() -> None:
    text = CUSTOM[:CUSTOM.index("results {")] + CUSTOM[CUSTOM.index("enum Side"):]
    assert "WS510" in {code for code, _ in diagnostics(text)}


def test_results_and_const_format_round_trip() -> None:
    from worldspec.dsl.formatter import format_source

    formatted = format_source(CUSTOM, "spec.world")
    assert format_source(formatted, "spec.world") == formatted
    assert 'const SECTORS: map[str, list[str]] = {"Tech": ["AAPL", "GOOG"], "Auto": []}' \
        in formatted
    assert '  failure: {"status": false, "message": message}' in formatted


# ---------------------------------------------------------------- solution arguments as JSON

AIR = """\
world Air "Flights."

enum Cabin { economy, business, first_class = "first class" }

record Address {
  street: str
  zip: str matching /^[0-9]{5}$/
  country: str = "USA"
}

state { bookings: list[str] = [] }

tool book(cabin: Cabin "The cabin.", on: date "The day.", to: Address "Where to.",
          at: datetime? = none "When.", tags: set[str] = [] "Tags.") -> int "Book." {
  append f"{cabin} {on} {to.zip} {at ?? now} {len(tags)}" to bookings
  return len(bookings)
}

task as_json in Air {
  instruction "Book first class for 2024-05-01 at 10:00 to 1 Main, 78701, with the tags a and b."
  check booked: bookings == ["first class 2024-05-01 78701 2024-05-01 10:00:00 2"]
  solution {
    book(cabin: "first class", on: "2024-05-01", at: "2024-05-01T10:00",
         to: {"street": "1 Main", "zip": "78701"}, tags: ["a", "b"])
  }
}

task typed in Air {
  instruction "Book economy for 2024-05-01 to x, 12345."
  check booked: bookings == ["economy 2024-05-01 12345 2024-01-01 00:00:00 0"]
  solution {
    book(cabin: Cabin.economy, on: date("2024-05-01"), to: Address(street: "x", zip: "12345"))
  }
}
"""


def test_solution_arguments_accept_the_json_an_agent_sends(tmp_path: Path) -> None:
    from worldspec.services.validation import check_paths

    spec = tmp_path / "air.world"
    spec.write_text(AIR, encoding="utf-8")
    result = check_paths([str(spec)])
    assert [d.code for d in result.diagnostics] == []
    assert all(v.valid for v in result.tasks), [v.problems for v in result.tasks]


@pytest.mark.parametrize(("argument", "message"), [
    ('cabin: "econmy"', 'book(): cabin: "econmy" is not in Cabin; expected one of "economy", '
                        '"business", "first class"'),
    ('on: "2024-02-30"', 'book(): on: "2024-02-30" is not a date ("YYYY-MM-DD")'),
    ('to: {"street": "1 Main", "zip": "7870"}', 'book(): to.zip: "7870" does not match '
                                                '/^[0-9]{5}$/'),
    ('tags: ["a", "a"]', 'book(): tags[1]: "a" repeats tags[0]; a set holds each element once'),
])
def test_bad_json_solution_arguments_say_why(argument: str, message: str) -> None:
    name = argument.split(":")[0]
    start = AIR.index("    book(cabin")
    end = AIR.index("\n  }\n", start)
    good = {"cabin": '"economy"', "on": '"2024-05-01"',
            "to": '{"street": "1 Main", "zip": "78701"}', "tags": '["a", "b"]'}
    args = ", ".join(argument if key == name else f"{key}: {value}"
                     for key, value in good.items())
    text = AIR[:start] + f"    book({args})" + AIR[end:]
    found = [(d.code, d.message) for d in check_source(text, "air.world").diagnostics
             if d.code == "WS606"]
    assert found == [("WS606", message)]


# ---------------------------------------------------------------- private state

PRIVATE = """\
world Cache "A lookup with a private cache."

state {
  lookups: int = 0
  private cache: map[str, int] = {} "What the original keeps in _cache."
}

tool length(word: str "A word.") -> int "Its length, cached." {
  lookups += 1
  if word not in cache {
    cache[word] = len(word)
  }
  return cache[word]
}
"""


def test_private_state_is_stored_hashed_and_diffed_but_not_exported(tmp_path: Path) -> None:
    assert diagnostics(PRIVATE) == []
    world = compile_spec(tmp_path, PRIVATE, "Cache")
    ep = world()
    start = ep.copy()
    assert ep.call("length", {"word": "abc"}) == {"success": True, "data": 3}
    assert ep.export_state() == {"lookups": 1}
    assert ep.export_state(private=True) == {"lookups": 1, "cache": {"abc": 3}}
    assert ep.diff(start) == [
        {"path": "lookups", "old": 0, "new": 1},
        {"path": "cache", "old": {}, "new": {"abc": 3}, "private": True}]
    other = world(data={"lookups": 1})
    assert other.export_state() == ep.export_state()
    assert other.state_hash() != ep.state_hash()  # the private cache is hashed
    loaded = world(data={"lookups": 1, "cache": {"abc": 3}})
    assert loaded.state_hash() == ep.state_hash()


def test_private_tables_are_accepted_and_private_formats() -> None:
    from worldspec.dsl.formatter import format_source

    assert "  private cache: map[str, int] = {}" in format_source(PRIVATE, "spec.world")
    text = PRIVATE.replace('world Cache "A lookup with a private cache."\n',
                           'world Cache "A lookup."\nentity W { key id: str }\n')
    text = text.replace("  lookups: int = 0\n", "  lookups: int = 0\n  private ws: table W\n")
    assert diagnostics(text) == []  # WS513 is retired: tables may be private (see
    # tests/test_private_tables.py)
    assert "  private ws: table W" in format_source(text, "spec.world")


# ---------------------------------------------------------------- field aliases for loading

PEOPLE = """\
world People "People in the original's JSON shape."

record Address {
  street: str from "streetName"
  zip: str
}

entity User {
  key id: str from "userId"
  first_name: str from "firstName"
  last_name: str from "lastName" = ""
  address: Address? = none
}

state { users: table User }

tool full_name(user: User "The user.") -> str "The full name." {
  return user.first_name + " " + user.last_name
}

task named in People {
  given {
    users: [{userId: "U1", firstName: "Ann", lastName: "Lee",
             address: {streetName: "1 Main St", zip: "78701"}},
            {id: "U2", first_name: "Bo"}],
  }
  instruction "What is U1's name?"
  check loaded: users["U1"].address != none and users["U2"].last_name == ""
  check told: reply.contains("Ann Lee")
  only changes nothing
  solution {
    full_name(user: "U1")
    reply "Ann Lee."
  }
}
"""


def test_aliases_load_the_originals_keys_and_export_the_fields(tmp_path: Path) -> None:
    assert diagnostics(PEOPLE) == []
    world = compile_spec(tmp_path, PEOPLE, "People")
    ep = world(task="named")
    assert ep.export_state()["users"][0] == {
        "id": "U1", "first_name": "Ann", "last_name": "Lee",
        "address": {"street": "1 Main St", "zip": "78701"}}
    assert ep.call("full_name", {"user": "U1"}) == {"success": True, "data": "Ann Lee"}
    again = world(data=ep.export_state())  # exported state loads back
    assert again.state_hash() == ep.state_hash()
    with pytest.raises(ValueError, match='field "first_name" is given twice'):
        world(data={"users": [{"userId": "X", "firstName": "A", "first_name": "B"}]})


def test_a_field_given_under_both_names_is_ws602() -> None:
    text = PEOPLE.replace('{id: "U2", first_name: "Bo"}',
                          '{id: "U2", first_name: "Bo", firstName: "Bob"}')
    assert ("WS602", """$.users[1].firstName: User's field "first_name" is given twice (as """
            """"first_name" and as its alias)""") in diagnostics(text)


def test_aliases_format() -> None:
    from worldspec.dsl.formatter import format_source

    assert '  first_name: str from "firstName"\n' in format_source(PEOPLE, "spec.world")


# ---------------------------------------------------------------- on load

ON_LOAD = """\
world Orders "Orders given in the original's nested shape."

entity Order {
  key id: str
  customer: str
  total: float
}

state {
  private raw: map[str, json] = {} "The original's orders, as it receives them."
  orders: table Order
  revenue: float = 0.0 "Derived on load."
}

on load {
  for id in raw {
    let order = raw[id]
    require order["total"] != none else f"Order {id} has no total."
    insert Order(id: id, customer: str(order["customer"]), total: float(str(order["total"])))
      into orders
  }
  state.revenue = sum([o.total for o in orders])
}

tool revenue() -> float "The revenue." {
  return state.revenue
}
"""


def test_on_load_turns_given_data_into_rows_and_derived_values(tmp_path: Path) -> None:
    assert diagnostics(ON_LOAD) == []
    world = compile_spec(tmp_path, ON_LOAD, "Orders")
    ep = world(data={"raw": {"A1": {"customer": "ann", "total": 10},
                             "A2": {"customer": "bo", "total": 2.5}}})
    assert ep.export_state() == {
        "orders": [{"id": "A1", "customer": "ann", "total": 10.0},
                   {"id": "A2", "customer": "bo", "total": 2.5}], "revenue": 12.5}
    assert ep.call("revenue") == {"success": True, "data": 12.5}
    before = ep.export_state(private=True)
    with pytest.raises(ValueError, match="Order A1 has no total"):
        ep.reset(data={"raw": {"A1": {"customer": "ann", "total": None}}})
    assert ep.export_state(private=True) == before  # atomic: the failed load changed nothing
    ep.reset()
    assert ep.export_state() == {"orders": [], "revenue": 0.0}


def test_on_load_is_type_checked_and_may_not_draw() -> None:
    found = diagnostics(ON_LOAD.replace("state.revenue = sum",
                                        "state.revenue = random_int(1, 2) + sum"))
    assert found == [("WS403", "random_int() draws from the episode's generators, which on "
                      "load (loading is deterministic) may not do")]
    assert "WS301" in {code for code, _ in diagnostics(ON_LOAD.replace(
        "state.revenue = sum([o.total for o in orders])", 'state.revenue = "x"'))}


def test_on_load_formats() -> None:
    from worldspec.dsl.formatter import format_source

    formatted = format_source(ON_LOAD, "spec.world")
    assert "\non load {\n  for id in raw {\n" in formatted
    assert format_source(formatted, "spec.world") == formatted


def test_assigning_either_spelling_of_a_state_item_forgets_its_narrowing() -> None:
    text = """\
world N "Narrowing."

record U { name: str }

state { cur: U? = none }

tool f() -> str "Bare, then qualified." {
  require cur != none else "no"
  state.cur = none
  return cur.name
}

tool g() -> str "Qualified, then bare." {
  require state.cur != none else "no"
  cur = none
  return state.cur.name
}

tool h() -> str "Qualified throughout." {
  require state.cur != none else "no"
  return state.cur.name
}
"""
    assert [code for code, _ in diagnostics(text)] == ["WS305", "WS305"]


def test_the_porting_example_of_the_language_reference_runs(tmp_path: Path) -> None:
    """docs/language.md's porting world, every construct of this module at once."""
    import re

    docs = (Path(__file__).resolve().parents[1] / "docs" / "language.md").read_text("utf-8")
    [text] = [b for b in re.findall(r"```\n(world .*?)```", docs, flags=re.DOTALL)
              if b.startswith("world Bank")]
    world = compile_spec(tmp_path, text, "Bank")
    ep = world(data={"accounts": [{"accountId": "A1", "ownerName": "Ann", "opened": 5.0}]})
    assert ep.export_state() == {"accounts": [{"id": "A1", "owner": "Ann", "opened": 5.0}],
                                 "balance": 5.0, "plan": "basic"}
    assert ep.call("deposit", {"balance": 10}) == {"status": True, "data": 13.5}
    refused = ep.call("deposit", {"balance": -1})
    assert refused == {"status": False, "message": "Deposits must be positive."}
    assert ep.failed(refused)
    assert ep.call("deposit", {}) == {"status": False, "message": (
        "BankAPI.deposit() missing 1 required positional argument: 'balance'")}
    assert ep.call("deposit", {"balance": "x"}) == {"status": False,
                                                    "message": "'x' is not a number"}
    assert ep.export_state(private=True)["attempts"] == 2


def test_an_enum_member_named_like_a_conversation_name_is_the_member_outside_checks(
        tmp_path: Path) -> None:
    """`replies` exists only in task checks; elsewhere, where an enum with a member of that
    name is expected, a bare `replies` is that member (found by the names battery, whose
    chunks put such a member first as a state default)."""
    text = ('world Talk "Talk."\n'
            'enum Pick { replies, other }\n'
            'state { pick: Pick = replies }\n'
            'tool choose(p: Pick "The pick.") -> Pick "Choose." {\n'
            '  pick = p\n'
            '  return pick\n'
            '}\n')
    assert [d.code for d in check_source(text, "talk.world").diagnostics] == []
    world = compile_spec(tmp_path, text, "Talk")
    assert world().export_state()["pick"] == "replies"
    wrong = text.replace("state { pick: Pick = replies }", "state { pick: str = replies }")
    assert "WS212" in [d.code for d in check_source(wrong, "talk.world").diagnostics]


def test_an_optional_entity_parameter_with_a_default_says_to_drop_it() -> None:
    """`guest: Guest? = none` is refused (an optional entity parameter is already none when
    left out); the message says to drop the default instead of suggesting what was written."""
    text = ('world Desk "Desk."\n'
            'entity Guest { key id: str }\n'
            'state { guests: table Guest }\n'
            'tool find(guest: Guest? = none "The guest.") -> bool "Find." {\n'
            '  return guest != none\n'
            '}\n')
    [d] = check_source(text, "desk.world").diagnostics
    assert d.code == "WS301" and "drop `= ...` after 'guest: Guest?'" in d.message
    fixed = text.replace("Guest? = none", "Guest?")
    assert list(check_source(fixed, "desk.world").diagnostics) == []


# ---------------------------------------------------------------- state aliases for loading

CAR = """\
world Car "A car whose original loads its state under other keys."

entity Door {
  key id: str
  locked: bool = false
}

state {
  engine_state: str from "engineState" = "stopped" "Running or stopped."
  doors: table Door from "Doors"
  private brake_force: float from "brakePedalForce" = 0.0
  speed: int = 0
}

tool start() -> str "Start the engine." {
  require brake_force > 0.0 else "Press the brake first."
  engine_state = "running"
  return engine_state
}

task started in Car {
  given {engineState: "stopped", brakePedalForce: 1.5, Doors: [{id: "driver"}]}
  instruction "Start the car."
  check running: engine_state == "running" and len(doors) == 1
  only changes engine_state
  solution { start() }
}
"""


def test_a_state_alias_loads_and_the_name_is_kept_elsewhere(tmp_path: Path) -> None:
    assert diagnostics(CAR) == []
    world = compile_spec(tmp_path, CAR, "Car")
    ep = world(task="started")
    assert ep.export_state() == {"doors": [{"id": "driver", "locked": False}],
                                 "engine_state": "stopped", "speed": 0}
    assert ep.export_state(private=True)["brake_force"] == 1.5
    before = ep._clone()
    assert ep.call("start", {}) == {"success": True, "data": "running"}
    assert ep.diff(before) == [{"path": "engine_state", "old": "stopped", "new": "running"}]
    assert ep.score().reward == 1.0
    # the alias replaces the name for loading: the name alone is not loaded (as the
    # original ignores it), and both given is refused
    assert world(data={"engine_state": "running", "doors": [{"id": "x"}]}).export_state() == {
        "doors": [], "engine_state": "stopped", "speed": 0}
    with pytest.raises(ValueError, match=(
            r'data does not fit world Car: \$\.engine_state: state "engine_state" is given '
            r'twice \(as "engine_state" and as its alias "engineState"\); it loads from '
            r'"engineState" only')):
        world(data={"engine_state": "running", "engineState": "running"})
    with pytest.raises(ValueError, match=r'\$\.Doors\[0\]: '):
        world(data={"Doors": [{"key": "x"}]})


def test_given_data_under_a_state_items_name_is_ws602() -> None:
    both = CAR.replace('given {engineState: "stopped",',
                       'given {engineState: "stopped", engine_state: "running",')
    assert diagnostics(both) == [(
        "WS602", '$.engine_state: state "engine_state" is given twice (as "engine_state" and '
                 'as its alias "engineState"); it loads from "engineState" only')]
    alone = CAR.replace("Doors: [", "doors: [")
    assert diagnostics(alone) == [(
        "WS602", '$.doors: state "doors" loads from the key "Doors", not from its name')]


@pytest.mark.parametrize(("item", "message"), [
    ('  speed: int from "" = 0\n', "state 'speed' loads from a blank key"),
    ('  speed: int from "speed" = 0\n', "state 'speed' loads from its own name"),
    ('  speed: int from "engine_state" = 0\n',
     "state 'speed' loads from \"engine_state\", the name of state 'engine_state'"),
    ('  speed: int from "Doors" = 0\n', "state 'speed' and state 'doors' both load from \"Doors\""),
])
def test_a_clashing_state_alias_is_ws514(item: str, message: str) -> None:
    assert diagnostics(CAR.replace("  speed: int = 0\n", item)) == [("WS514", message)]


def test_state_aliases_format() -> None:
    from worldspec.dsl.formatter import format_source

    text = CAR.replace('  engine_state: str from "engineState" = "stopped"',
                       '  engine_state  :  str   from   "engineState"  =  "stopped"')
    formatted = format_source(text, "car.world")
    assert formatted == CAR
    assert format_source(formatted, "car.world") == formatted


# ---------------------------------------------------------------- null for a defaulted parameter

DEFAULTS = """\
world Defaults "Parameters with defaults."

config { arguments: ARGS }

tool set_mode(mode: str? = "auto" "The mode.", speed: int = 50 "The speed.") -> str "Set." {
  return f"{mode} {speed}"
}
"""


@pytest.mark.parametrize("rules", ["python", "worldspec"])
def test_null_for_a_defaulted_parameter(tmp_path: Path, rules: str) -> None:
    """By default null means the default; with `arguments: python` it is a value, as in
    Python: an optional type takes it, another type refuses it, and the schema says so."""
    world = compile_spec(tmp_path, DEFAULTS.replace("ARGS", rules), "Defaults")
    ep = world()

    def value(arguments: dict[str, Any]) -> Any:
        result = ep.call("set_mode", arguments)
        return None if ep.failed(result) else ep.last_value

    assert value({}) == "auto 50"
    schema = {t["function"]["name"]: t["function"]["parameters"] for t in ep.tools()}["set_mode"]
    speed = schema["properties"]["speed"]
    if rules == "python":
        assert value({"mode": None}) == "None 50"
        assert value({"speed": None}) is None
        assert "null" not in json.dumps(speed)
    else:
        assert value({"mode": None, "speed": None}) == "auto 50"
        assert "null" in json.dumps(speed)
