"""The contract between generated worlds and the runtime (``worldspec.runtime.contract``).

A generated record or entity class declares its fields with ``field(...)``; the runtime
builds its slots and methods once, when the class is defined. These tests declare classes
the way generated code does and check what the runtime made of them, against what the
generated methods did before (``json.dumps`` of the export, dataclass-like construction).
"""

from __future__ import annotations

import copy
import datetime as dt
import enum
import json
import pickle
import re
from pathlib import Path
from typing import Any

import pytest

from worldspec.runtime import values as v
from worldspec.runtime.contract import (
    TaggedUnion,
    attribute_copier,
    attribute_filler,
    data_path,
    enum_text,
    enum_value,
    field,
    optional_text,
    state_item,
)
from worldspec.runtime.episode import Row, StateBase
from worldspec.runtime.errors import ArgumentError, ToolError
from worldspec.runtime.records import Record

ROOT = Path(__file__).resolve().parents[1]


class Size(enum.StrEnum):
    small = "small"
    large = "large"


class Box(Record):
    """A record whose fields are all immutable: it keeps its JSON text."""

    label: str = field(load=v.want_str, text=v.str_text)
    size: Size = field(load=lambda x, p: v.want_enum(x, p, Size), export=enum_value,
                       text=enum_text(Size))
    weight: float = field(load=v.want_float, fill=lambda ep: 1.5, text=v.float_text)


class Note(Record):
    """A record holding json: it keeps no text."""

    text: str = field(load=v.want_str, text=v.str_text)
    extra: Any = field(load=v.want_json, keeps_text=False)


class Wide(Record):
    """A record of more fields than one made-to-measure constructor takes."""

    f0: int = field(load=v.want_int)
    f1: int = field(load=v.want_int)
    f2: int = field(load=v.want_int)
    f3: int = field(load=v.want_int)
    f4: int = field(load=v.want_int)
    f5: int = field(load=v.want_int)
    f6: int = field(load=v.want_int)
    f7: int = field(load=v.want_int)
    f8: int = field(load=v.want_int)
    f9: int = field(load=v.want_int)


class Odd(Record):
    """A record whose fields are named like the locals of the function that makes it."""

    cls: str = field(load=v.want_str, text=v.str_text)
    record: int = field(load=v.want_int, text=v.int_text)


class Parcel(Row):
    """An entity row: a key from the data's ``id``, a default, an optional field left out
    of the export when none, a field loaded from the original's key, a record."""

    id_: str = field("id", key=True, load=v.want_str, text=v.str_text)
    box: Box = field(load_ep=lambda x, p, ep: Box.load(x, p, ep), export=lambda b: b.export(),
                     text=v.record_text)
    sent: dt.date = field(load=v.want_date, fill=lambda ep: dt.date(2024, 1, 2),
                          export=lambda d: d.isoformat())
    note: str | None = field(load=lambda x, p: v.want_optional(x, p, v.want_str),
                             optional=True, omit_none=True,
                             text=optional_text(v.str_text))
    carrier: str = field(load=v.want_str, from_key="shipper", text=v.str_text)


class Shelf(Row):
    """A row whose text is made of one fragment per field."""

    code: str = field(key=True, load=v.want_str, text=v.str_text)
    boxes: Any = field(load=v.want_json, keeps_text=False)


DATA = {"id": "P1", "box": {"label": "b", "size": "large"}, "shipper": "ACME"}


# ------------------------------------------------------------------------- records
def test_a_declared_record_is_made_as_a_frozen_dataclass_would_be() -> None:
    a, b = Box("b", Size.large, 2.0), Box(label="b", size=Size.large, weight=2.0)
    assert a == b and hash(a) == hash(b) and a != Box("b", Size.small, 2.0)
    assert repr(a) == "Box(label='b', size=<Size.large: 'large'>, weight=2.0)"
    assert Box.__match_args__ == ("label", "size", "weight")
    assert type(a) is Box and pickle.loads(pickle.dumps(a)) == a and copy.deepcopy(a) == a
    with pytest.raises(AttributeError, match="cannot assign to field 'label'"):
        a.label = "c"  # type: ignore[misc]
    with pytest.raises(TypeError, match=r"Box.__init__\(\) missing 1 required positional "
                                        r"argument: 'weight'"):
        Box("b", Size.large)  # type: ignore[call-arg]


def test_a_records_fields_may_be_named_like_the_makers_locals() -> None:
    odd = Odd(cls="c", record=2)
    assert (odd.cls, odd.record) == ("c", 2) and odd == Odd("c", 2)
    assert odd._json_text() == '{"cls": "c", "record": 2}'


def test_a_record_keeps_its_text_only_when_every_field_is_immutable() -> None:
    box = Box("b", Size.large, 2.0)
    assert box._json is None
    text = box._json_text()
    assert text == json.dumps(box.export()) and box._json is text
    note = Note("n", {"k": [1]})
    assert not hasattr(note, "_json")  # values.record_text relies on it
    assert note._json_text() == json.dumps({"text": "n", "extra": {"k": [1]}})


def test_a_record_of_many_fields_is_made_and_shown_in_order() -> None:
    wide = Wide(*range(10))
    assert [getattr(wide, f"f{i}") for i in range(10)] == list(range(10))
    assert wide == Wide(**{f"f{i}": i for i in range(10)})
    assert wide._json_text() == json.dumps({f"f{i}": i for i in range(10)})
    assert Wide.load({f"f{i}": i for i in range(10)}, "$", None) == wide


def test_a_record_loads_its_defaults_and_refuses_bad_data_with_a_path() -> None:
    assert Box.load({"label": "b", "size": "small"}, "$.box", None) == \
        Box("b", Size.small, 1.5)
    with pytest.raises(ArgumentError, match=r"\$\.box\.size"):
        Box.load({"label": "b", "size": "huge"}, "$.box", None)
    with pytest.raises(ArgumentError, match='missing field "label"'):
        Box.load({"size": "small"}, "$.box", None)


# ---------------------------------------------------------------------------- rows
def test_a_declared_row_has_its_fields_as_slots_and_its_key() -> None:
    assert Parcel.__slots__ == ("id_", "box", "sent", "note", "carrier")
    assert (Parcel.KEY, Parcel.ENTITY) == ("id_", "Parcel")
    assert Parcel.FIELD_TABLE.json_names == ("id", "box", "sent", "note", "carrier")
    # a field left out of the export when none: the row's text is the export's, made anew
    assert "JSON_FIELDS" not in vars(Parcel)
    assert Shelf.JSON_FIELDS == (("code", "code", None, True), ("boxes", "boxes", None, False))
    assert (Shelf.KEY, Shelf.ENTITY) == ("code", "Shelf")


def test_a_row_loads_defaults_optional_fields_and_the_originals_keys() -> None:
    row = Parcel.load(DATA, "$.parcels[0]", None)
    assert (row.key(), row.box, row.sent, row.note, row.carrier) == \
        ("P1", Box("b", Size.large, 1.5), dt.date(2024, 1, 2), None, "ACME")
    assert row.export() == {"id": "P1", "box": {"label": "b", "size": "large", "weight": 1.5},
                            "sent": "2024-01-02", "carrier": "ACME"}
    noted = Parcel.load({**DATA, "note": "fragile"}, "$", None)
    assert noted.export()["note"] == "fragile"
    with pytest.raises(ArgumentError, match=r"\$\.parcels\[0\]\.sent"):
        Parcel.load({**DATA, "sent": "yesterday"}, "$.parcels[0]", None)


def test_a_rows_text_is_the_json_of_its_export() -> None:
    for data in (DATA, {**DATA, "note": "fragile \u00e9"}):
        row = Parcel.load(data, "$", None)
        assert row._result_text() == json.dumps(row.export())


def test_a_row_is_made_by_keywords_and_says_which_are_wrong() -> None:
    box = Box("b", Size.small, 1.0)
    row = Parcel(id_="P2", box=box, sent=dt.date(2024, 5, 1), note=None, carrier="X")
    assert row.export()["id"] == "P2" and row._digest is None and row._stale == 0
    with pytest.raises(TypeError, match=r"Parcel.__init__\(\) missing 2 required keyword-only "
                                        r"arguments: 'note' and 'carrier'"):
        Parcel(id_="P2", box=box, sent=dt.date(2024, 5, 1))  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'weight'"):
        Parcel(id_="P2", box=box, sent=dt.date(2024, 5, 1), note=None, carrier="X",
               weight=1)  # type: ignore[call-arg]


def test_a_clone_has_the_same_values_and_caches_but_is_another_row() -> None:
    row = Parcel.load(DATA, "$", None)
    text, digest = row._result_text(), row.digest()
    other = row.clone()
    assert other is not row and other.export() == row.export()
    assert (other._text, other._digest, other._frags) == (text, digest, row._frags)
    assert other._cparts is None
    other.carrier = "Other"
    assert row.carrier == "ACME"


# --------------------------------------------------------------------------- state
class State(StateBase):
    """A world's state other than its tables, declared."""

    counter: int = state_item(0)
    current: str | None = state_item(None, "current-user")
    seen: dict[str, dt.date] = state_item({}, export=lambda m: {k: d.isoformat()
                                                                for k, d in m.items()})


def test_a_declared_state_starts_at_its_zeros_and_exports_under_its_names() -> None:
    state = State()
    assert vars(State)["__slots__"] == ("counter", "current", "seen")
    assert vars(State)["FIELDS"] == ("counter", "current-user", "seen")
    assert state.export() == {"counter": 0, "current-user": None, "seen": {}}
    state.seen = {"a": dt.date(2024, 1, 2)}
    state.counter = 3
    assert state.export() == {"counter": 3, "current-user": None, "seen": {"a": "2024-01-02"}}
    assert State().seen == {} and State().seen is not State().seen  # a map per state
    copy_ = state.clone()
    assert type(copy_) is State and copy_.export() == state.export()
    copy_.counter = 4
    assert state.counter == 3


class LoadedState(StateBase):
    """State items declared with their loaders, one from the original's key."""

    counter: int = state_item(0, load=v.want_int)
    box: Box | None = state_item(None, load_ep=lambda x, p, ep: Box.load(x, p, ep))
    owner: str = state_item("", load=v.want_str, from_key="ownerName")


def test_a_state_loads_the_items_the_data_gives_by_their_declared_loaders() -> None:
    state = LoadedState()
    state.load({"counter": 7, "box": {"label": "a", "size": "small"}, "ownerName": "Ann",
                "owner": "ignored"}, None)
    assert (state.counter, state.box, state.owner) == (7, Box("a", Size.small, 1.5), "Ann")
    named = LoadedState()
    named.load({"counter": 7, "ownerName": "Ann"}, None, "counter")  # only the items named
    assert (named.counter, named.box, named.owner) == (7, None, "")
    with pytest.raises(ArgumentError, match=r'^\$\.counter: expected an integer, got "7"$'):
        LoadedState().load({"counter": "7"}, None)
    with pytest.raises(ArgumentError, match=r"^\$\.ownerName: "):  # where the data gave it
        LoadedState().load({"ownerName": 3}, None)
    assert [data_path(key) for key in ("users", "user map", "é")] == [
        "$.users", '$["user map"]', '$["é"]']


# -------------------------------------------------------------------------- unions
class Crate(Record):
    """Another member of a union."""

    label: str = field(load=v.want_str, text=v.str_text)


PACKING: TaggedUnion[Box | Crate] = TaggedUnion("kind", {"box": Box, "crate": Crate})


def test_a_declared_union_loads_exports_and_writes_its_members_with_their_tag() -> None:
    box = PACKING.load({"kind": "box", "label": "a", "size": "large"}, "$.p", None)
    crate = PACKING.load({"kind": "crate", "label": "b"}, "$.p", None)
    assert box == Box("a", Size.large, 1.5) and crate == Crate("b")
    assert [PACKING.tag(box), PACKING.tag(crate)] == ["box", "crate"]
    assert PACKING.export(crate) == {"kind": "crate", "label": "b"}
    for value in (box, crate):
        assert PACKING.text(value) == json.dumps(PACKING.export(value))
    assert PACKING.holds(box) and not PACKING.holds(Note("x", None))
    assert PACKING.some(crate) is crate
    with pytest.raises(ToolError, match="must be present"):
        PACKING.some(None)
    with pytest.raises(ArgumentError, match=r'^\$\.p\.kind: expected one of "box", "crate"$'):
        PACKING.load({"kind": "barrel", "label": "c"}, "$.p", None)
    with pytest.raises(ArgumentError, match=r"^\$\.p: expected an object$"):
        PACKING.load(["box"], "$.p", None)


# --------------------------------------------------------------------------- enums
def test_an_enums_text_comes_from_its_table() -> None:
    text = enum_text(Size)
    assert (text(Size.small), text(None)) == ('"small"', "null")
    with pytest.raises(KeyError):
        text(3)
    loose = enum_text(Size, loose=True)
    assert (loose(Size.large), loose(None), loose([1, "a"])) == ('"large"', "null", '[1, "a"]')


# ---------------------------------------------------------------- the fast builders
@pytest.mark.parametrize("count", [1, 7, 8, 9, 16, 17, 40])
def test_the_copier_and_the_filler_set_every_attribute(count: int) -> None:
    names = tuple(f"a_{i}" for i in range(count))
    cls = type("Many", (), {"__slots__": names})
    source, target, filled = cls(), cls(), cls()
    for i, name in enumerate(names):
        setattr(source, name, i)
    attribute_copier(names)(source, target)
    attribute_filler(names)(filled, tuple(range(count)))
    assert [getattr(target, n) for n in names] == [getattr(filled, n) for n in names] == \
        list(range(count))


def test_a_field_needs_exactly_one_loader() -> None:
    with pytest.raises(TypeError, match="needs one loader"):
        field()
    with pytest.raises(TypeError, match="needs one loader"):
        field(load=v.want_str, load_ep=lambda x, p, ep: x)
    assert field(load=v.want_str).required and not field(load=v.want_str, optional=True).required


# ------------------------------------------------------------------ generated code
#: what the generator wrote per class before the classes were declared (runtime internals)
_INTERNALS = re.compile(r"\b(?:_new_[A-Z]|_SET_|_Made_|_Slots_|_T\d+_)\w*|JSON_FIELDS|_JSON_TEXT|"
                        r"def _json_text\(|object\.__new__")


def test_generated_classes_name_no_runtime_internals() -> None:
    """The checked-in worlds declare their classes; a world written as before would not."""
    offending = {path.parent.name: _INTERNALS.findall(path.read_text(encoding="utf-8"))
                 for path in sorted((ROOT / "generated").glob("*/world.py"))}
    assert {name: found for name, found in offending.items() if found} == {}
    before = "_SET_Box: tuple[Any, ...] = rt.slot_setters(_Slots_Box, ('label',))"
    assert _INTERNALS.findall(before) == ["_SET_Box", "_Slots_Box"]


def test_the_contracts_names_generated_code_imports_are_exported_and_reserved() -> None:
    """What a generated world imports from the runtime's modules is theirs to give, and no
    spec name can take it: the import lines are the compiler's one list of the contract
    (``names.CONTRACT_IMPORTS``, made from the runtime's exports), never spelled apart."""
    import importlib

    from worldspec.compiler.codegen.names import (
        CONTRACT_IMPORTS,
        GENERATED_NAMES,
        OPTIONAL_IMPORTS,
    )

    listed: dict[str, set[str]] = {}  # module -> the names the contract takes from it
    for module, names in (*CONTRACT_IMPORTS, *OPTIONAL_IMPORTS.values()):
        assert set(names) <= set(importlib.import_module(module).__all__), module
        assert set(names) <= GENERATED_NAMES, module
        listed.setdefault(module, set()).update(names)
    seen: dict[str, set[str]] = {}
    for path in sorted((ROOT / "generated").glob("*/world.py")):
        lines = re.findall(r"^from (worldspec\.runtime\.\w+) import (.+)$",
                           path.read_text(encoding="utf-8"), flags=re.MULTILINE)
        for module, imported in lines:
            names = set(imported.split(", "))
            assert names <= listed.get(module, set()), (path.parent.name, module, names)
            seen.setdefault(module, set()).update(names)
    assert seen == listed  # every name of the contract is used by some example world
