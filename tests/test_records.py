"""Records and the runtime's value classes behave as the dataclasses they replace.

``worldspec.runtime.records`` makes them without :mod:`dataclasses` (so that a world imports
quickly): ``value_class`` is ``@dataclass`` for the runtime's own classes, and a generated
record declares its fields and the runtime builds what ``@dataclass(frozen=True, slots=True)``
made. Each test builds the
same class both ways and compares what each does.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from generated.tau2_retail.world import Address, UserName, Variant
from worldspec.runtime.episode import Score, TaskSpec, ToolSpec
from worldspec.runtime.records import Record, replace_fields, value_class


@dataclasses.dataclass(frozen=True)
class FrozenDC:
    """A frozen dataclass."""

    name: str
    read_only: bool
    where: str = ""
    checks: bool | None = None

    def __post_init__(self) -> None:
        if self.checks is None:
            object.__setattr__(self, "checks", not self.read_only)


@value_class(frozen=True)
class FrozenVC:
    """The same class, made by value_class."""

    name: str
    read_only: bool
    where: str = ""
    checks: bool | None = None

    def __post_init__(self) -> None:
        if self.checks is None:
            object.__setattr__(self, "checks", not self.read_only)


@dataclasses.dataclass
class PlainDC:
    source: dict[str, Any]


@value_class
class PlainVC:
    source: dict[str, Any]


PAIRS = {"frozen": (FrozenDC, FrozenVC), "plain": (PlainDC, PlainVC)}


def _outcome(action: Callable[[], Any]) -> tuple[str, str]:
    """What ``action`` gave (its repr), or the type and text of what it raised; the class
    names of the two builds are made alike."""
    try:
        result: Any = action()
    except Exception as exc:
        return type(exc).__name__, str(exc).replace("VC", "DC")
    return "ok", repr(result).replace("VC", "DC")


def _frozen_case(cls: Any) -> list[Any]:
    a, same, other = cls("a", True), cls(name="a", read_only=True), cls("a", False, where="x")
    return [
        repr(a), repr(other), a == same, a == other, a == 5, a != same,
        hash(a) == hash(same), cls.__match_args__, cls.where, vars(a),
        copy.deepcopy(a) == a, pickle.loads(pickle.dumps(a)) == a, repr(copy.copy(other)),
        cls.__init__.__qualname__, cls.__repr__.__qualname__,
    ]


FROZEN_ACTIONS: list[Callable[[Any], Any]] = [
    _frozen_case,
    lambda cls: cls(),
    lambda cls: cls("a"),
    lambda cls: cls("a", True, "w", None, 5),
    lambda cls: cls("a", True, name="b"),
    lambda cls: cls("a", True, bogus=1),
    lambda cls: setattr(cls("a", True), "name", "b"),
    lambda cls: setattr(cls("a", True), "other", "b"),
    lambda cls: delattr(cls("a", True), "name"),
]


@pytest.mark.parametrize("index", range(len(FROZEN_ACTIONS)))
def test_a_frozen_value_class_does_what_the_frozen_dataclass_does(index: int) -> None:
    action = FROZEN_ACTIONS[index]
    assert _outcome(lambda: action(FrozenVC)) == _outcome(lambda: action(FrozenDC))


def test_a_value_class_that_is_not_frozen_does_what_the_dataclass_does() -> None:
    def case(cls: Any) -> list[Any]:
        value = cls({"a": 1})
        value.source = {"b": 2}
        return [repr(value), value == cls({"b": 2}), cls.__hash__, _outcome(lambda: hash(value)),
                _outcome(lambda: cls()), _outcome(lambda: cls({}, {}))]

    assert _outcome(lambda: case(PlainVC)) == _outcome(lambda: case(PlainDC))


def test_a_value_class_that_holds_itself_shows_dots() -> None:
    loop_vc, loop_dc = PlainVC({}), PlainDC({})
    loop_vc.source["me"] = loop_vc
    loop_dc.source["me"] = loop_dc
    assert repr(loop_vc).replace("VC", "DC") == repr(loop_dc) == "PlainDC(source={'me': ...})"


def test_a_value_class_refuses_a_field_without_default_after_one_with() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        @value_class
        class Wrong:
            a: int = 0
            b: int  # type: ignore[misc]


def test_the_runtimes_value_classes_keep_their_defaults_and_post_init() -> None:
    def invoke(ep: Any, args: Any) -> None:
        return None

    tool = ToolSpec("t", "Doc.", (), False, invoke)
    assert (tool.where, tool.returns, tool.checks) == ("", None, True)
    assert ToolSpec("t", "Doc.", (), True, invoke).checks is False
    assert hash(tool) == hash(ToolSpec("t", "Doc.", (), False, invoke, checks=True))
    task = TaskSpec("x", "Do it.", {}, (), None, ())
    assert (task.seed, task.tags, task.replies) == (None, (), ())
    assert task == TaskSpec("x", "Do it.", {}, (), None, (), tags=())
    score = Score(1.0, (), True, ())
    assert repr(score) == ("Score(reward=1.0, checks=(), frame_ok=True, frame_violations=(), "
                           "checks_reward=None, frame_changes=())")
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'reward'"):
        score.reward = 0.0  # type: ignore[misc]


# ------------------------------------------------------------ generated records
@dataclasses.dataclass(frozen=True, slots=True)
class AddressDC:
    """What ``record Address`` was generated as before (without its JSON-text slot)."""

    address1: str
    address2: str
    city: str
    country: str
    state_: str
    zip_: str


FIELDS = ("1 Main St", "", "Austin", "USA", "TX", "78701")


def _record_case(cls: Any) -> list[Any]:
    a, same, other = cls(*FIELDS), cls(*FIELDS), cls(*FIELDS[:2], "Dallas", *FIELDS[3:])
    match a:
        case cls(address1, _, city):
            matched = (address1, city)
    return [
        repr(a), a == same, a == other, a != other, a == FIELDS, hash(a) == hash(same),
        hash(a) == hash(FIELDS), cls.__match_args__, matched,
        copy.deepcopy(a) == a, copy.copy(a) == a, pickle.loads(pickle.dumps(a)) == a,
        repr(pickle.loads(pickle.dumps(other))), {a: 1}[same], hasattr(a, "__dict__"),
        _outcome(lambda: setattr(a, "city", "x")), _outcome(lambda: delattr(a, "city")), a.city,
    ]


def test_a_generated_record_does_what_its_frozen_dataclass_did() -> None:
    mine, theirs = _record_case(Address), _record_case(AddressDC)
    assert [str(x).replace("AddressDC", "Address") for x in theirs] == [str(x) for x in mine]


def test_a_generated_record_refuses_an_attribute_that_is_no_field() -> None:
    """Where the slotted frozen dataclass of Python 3.11 failed with a ``TypeError`` of its
    own ``super()`` call (its ``__setattr__`` names the class it replaced), a record says
    what a frozen value says."""
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'nope'"):
        Address(*FIELDS).nope = "x"


def test_a_generated_record_keeps_its_text_apart_from_its_value() -> None:
    """The record's JSON text (a slot of its own) is no field: made once, left out of
    equality, hash and repr, and copied by ``copy`` and ``pickle`` with the fields."""
    a, b = Variant("v1", {"color": "red"}, True, 9.5), Variant("v1", {"color": "red"}, True, 9.5)
    text = a._json_text()
    assert text == '{"item_id": "v1", "options": {"color": "red"}, "available": true, ' \
                   '"price": 9.5}'
    assert a._json is text and b._json is None and a == b
    assert "_json" not in repr(a) and Variant.__mro__[1].__slots__[-1] == "_json"
    assert pickle.loads(pickle.dumps(a))._json == text
    assert copy.deepcopy(a)._json == text
    with pytest.raises(TypeError, match="unhashable type: 'dict'"):
        hash(a)  # a map field, as with the dataclass


def test_a_record_loaded_is_the_one_its_class_makes() -> None:
    """``load`` (what a world's data goes through) makes the record its class call makes:
    equal, with the same hash, repr and text, as frozen; bad data is refused with its path."""
    loaded = Variant.load({"item_id": "v1", "options": {"color": "red"}, "available": True,
                           "price": 9.5}, "$.v", None)
    built = Variant("v1", {"color": "red"}, True, 9.5)
    assert type(loaded) is Variant and loaded == built and repr(loaded) == repr(built)
    assert loaded._json is None and loaded._json_text() == built._json_text()
    assert type(copy.deepcopy(loaded)) is Variant and pickle.loads(pickle.dumps(loaded)) == built
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'price'"):
        loaded.price = 1.0  # type: ignore[misc]
    assert loaded.price == 9.5
    with pytest.raises(Exception, match=r"\$\.v\.price"):
        Variant.load({"item_id": "v1", "options": {}, "available": True, "price": "x"},
                     "$.v", None)


@pytest.mark.parametrize("call", [
    lambda cls: cls(*FIELDS[:5]),
    lambda cls: cls(*FIELDS[:3]),
    lambda cls: cls(*FIELDS, "extra"),
    lambda cls: cls(*FIELDS[:5], city="Dallas"),
    lambda cls: cls(*FIELDS[:5], nope="x"),
    lambda cls: cls(*FIELDS[:5], zip_="1"),
    lambda cls: cls(address1="a", address2="", city="c", country="d", state_="e", zip_="f"),
])
def test_a_generated_records_arguments_bind_as_the_dataclasss(call: Any) -> None:
    """Keyword and positional arguments, too few, too many, twice or unknown: what the
    record's ``__init__`` does is what the dataclass's did (its errors' texts included)."""
    theirs = _outcome(lambda: call(AddressDC))
    assert tuple(x.replace("AddressDC", "Address") for x in theirs) == \
        _outcome(lambda: call(Address))


def test_replace_fields_is_dataclasses_replace() -> None:
    name = UserName("Ann", "Lee")
    name._json_text()
    changed = replace_fields(name, last_name="Kim")
    assert (changed, name) == (UserName("Ann", "Kim"), UserName("Ann", "Lee"))
    assert changed._json is None and changed._json_text() == \
        '{"first_name": "Ann", "last_name": "Kim"}'
    with pytest.raises(TypeError, match="unexpected keyword argument 'middle'"):
        replace_fields(name, middle="X")
    theirs = dataclasses.replace(AddressDC(*FIELDS), city="Dallas")
    assert repr(replace_fields(Address(*FIELDS), city="Dallas")) == \
        repr(theirs).replace("AddressDC", "Address")


def test_a_record_is_frozen_by_its_base() -> None:
    assert issubclass(Address, Record) and Record.__slots__ == ()
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'first_name'"):
        del UserName("Ann", "Lee").first_name
