"""The runtime's fast paths say what the slow ones say.

A call whose arguments' names fit is checked by counting them and reading each (no set
compared), a text's JSON encoding is looked up once made, and value classes keep their
fields out of a real ``__dict__`` so that reading them is specialised: each must give the
very results, failures and texts of the way it replaced.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any

import pytest

from worldspec.runtime import values as v
from worldspec.runtime.episode import Episode, ParamSpec, ToolSpec
from worldspec.services.loading import compile_worlds

PAIRS = """
world Pairs "Two numbers at a time."

tool ipow(a: int "Base.", b: int "Exponent.") -> int "An integer power." {
  return a ** b
}

tool shout(word: str "A word.") -> str "The word, loud." {
  return word.upper()
}
"""


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> Episode:
    root = tmp_path_factory.mktemp("pairs")
    spec = root / "pairs.world"
    spec.write_text(PAIRS, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORLDSPEC_CACHE", str(root / "cache"))
        world = compile_worlds([Path(spec)]).worlds["Pairs"]
    return world()


@pytest.mark.parametrize(("tool", "args", "expected"), [
    # as many arguments as names, one of them misnamed: the name is what is wrong, even
    # where another argument's value would be refused as well
    ("ipow", {"a": "two", "c": 10}, 'Unexpected argument "c" (expected: a, b).'),
    ("ipow", {"c": 10, "a": "two"}, 'Unexpected argument "c" (expected: a, b).'),
    ("shout", {"words": 7}, 'Unexpected argument "words" (expected: word).'),
    # too many, too few, a null one
    ("ipow", {"a": 2, "b": 3, "c": 4}, 'Unexpected argument "c" (expected: a, b).'),
    ("ipow", {"a": "two"}, 'Missing required argument "b".'),
    ("ipow", {"a": 2, "b": None}, 'Missing required argument "b".'),
    # the names fit: the values are judged
    ("ipow", {"a": "two", "b": 10}, 'a: expected an integer, got "two"'),
    ("shout", {"word": 7}, "word: expected a string, got 7"),
])
def test_a_call_whose_names_do_not_fit_fails_on_the_names_first(
        pairs: Episode, tool: str, args: dict[str, Any], expected: str) -> None:
    result = pairs.call(tool, args)
    assert result == {"success": False, "error": expected}


@pytest.mark.parametrize(("tool", "args", "expected"), [
    ("ipow", {"a": 2, "b": 10}, 1024),
    ("ipow", {"b": 3, "a": -3}, -27),  # in any order
    ("shout", {"word": "hey"}, "HEY"),
    ("shout", {"word": "h\u00e9"}, "H\u00c9"),  # no ASCII text: through the loader
])
def test_a_call_whose_names_fit_runs(pairs: Episode, tool: str, args: dict[str, Any],
                                     expected: Any) -> None:
    assert pairs.call(tool, args) == {"success": True, "data": expected}


class Colour(enum.StrEnum):
    red = "red"
    dark = "dark \"red\""


@pytest.mark.parametrize("text", [
    "plain", "", 'with "quotes" and \\ backslash', "caf\u00e9 \u2603 \U0001f600", "line\nbreak",
    "x" * 300,  # longer than what is kept: encoded every time
    Colour.red, Colour.dark,
])
def test_str_text_is_json_dumps_met_first_or_again(text: str) -> None:
    assert v.str_text(text) == json.dumps(text)
    assert v.str_text(text) == json.dumps(text)  # again: the kept encoding
    assert v.str_text(str(text)) == json.dumps(str(text))  # an equal plain text


@pytest.mark.parametrize("value", [7, 1.5, None, True, ["a"], {"a": 1}, ("a",)])
def test_str_text_refuses_what_is_no_text(value: Any) -> None:
    with pytest.raises(TypeError):
        v.str_text(value)
    with pytest.raises(TypeError):  # and nothing of it was kept
        v.str_text(value)


def test_str_text_keeps_a_bounded_number_of_texts() -> None:
    for i in range(3 * v._STR_TEXTS_MAX):
        assert v.str_text(f"id_{i}") == f'"id_{i}"'
    kept = v.str_text.__self__  # type: ignore[attr-defined]
    assert 0 < len(kept) <= v._STR_TEXTS_MAX
    assert all(len(text) <= v._STR_TEXT_LONGEST for text in kept)


def test_a_value_class_keeps_its_fields_in_no_real_dict() -> None:
    param = ParamSpec("order_id", {"type": "string"}, True, "The order.")
    spec = ToolSpec("cancel", "Cancel an order.", (param,), False, lambda ep, args: None)
    assert spec.checks is True  # __post_init__ still ran: a writing tool checks
    assert (spec.name, spec.params, spec.where, spec.shows) == \
        ("cancel", (param,), "", None)
    assert spec == ToolSpec("cancel", "Cancel an order.", (param,), False, spec.invoke)
    with pytest.raises(AttributeError, match="cannot assign to field 'name'"):
        spec.name = "other"  # type: ignore[misc]
    assert vars(spec) == {"name": "cancel", "doc": "Cancel an order.", "params": (param,),
                          "read_only": False, "invoke": spec.invoke, "where": "",
                          "returns": None, "checks": True, "shows": None}


def _arity_spec() -> str:
    """Records of one to nine fields (nine: past the templates, joined another way), of
    text, numbers, a flag, a list and an optional text."""
    kinds = ["str", "int", "float", "bool", "list[str]", "str?", "float", "int", "str"]
    records = []
    for count in range(1, 10):
        fields = [f"  f{i}: {kinds[i]}" for i in range(count)]
        records.append(f'record R{count} "A record of {count}." {{\n' + "\n".join(fields)
                       + "\n}")
    return 'world Arities "Records of every size."\n\n' + "\n\n".join(records) + "\n"


def _arity_values(count: int) -> list[Any]:
    return ['a "quoted" caf\u00e9', 7, 2.5, True, ("x", "y"), None, -0.0, 0, "z"][:count]


@pytest.mark.parametrize("count", range(1, 10))
def test_a_records_kept_text_of_any_size_is_json_dumps_of_its_export(
        tmp_path_factory: pytest.TempPathFactory, count: int) -> None:
    root = tmp_path_factory.mktemp("arities")
    spec = root / "arities.world"
    spec.write_text(_arity_spec(), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORLDSPEC_CACHE", str(root / "cache"))
        world = compile_worlds([Path(spec)]).worlds["Arities"]
    module = __import__(world.__module__, fromlist=[f"R{count}"])
    record = getattr(module, f"R{count}")(*_arity_values(count))
    text = record._json_text()
    assert text == json.dumps(record.export())
    assert text.startswith('{"f0": "a \\"quoted\\" caf\\u00e9"')  # the key, then the text
    assert record._json_text() is text  # kept
