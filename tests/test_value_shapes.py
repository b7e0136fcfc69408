"""A field declared by its value's shape (``runtime/value_shapes.py``): the loader, exporter
and text the runtime derives from it behave as the functions a declaration wrote out before,
and code generation writes a shape, saying besides it only what differs."""

from __future__ import annotations

import datetime as dt
import enum
import json
from typing import Any

import pytest

from worldspec.compiler.api import check_specs
from worldspec.compiler.build import generate_all
from worldspec.runtime import value_shapes as sh
from worldspec.runtime import values as v
from worldspec.runtime.contract import TaggedUnion, field
from worldspec.runtime.errors import ArgumentError
from worldspec.runtime.records import Record


class Colour(enum.StrEnum):
    red = "red"
    light_blue = "light blue"


class Line(Record):
    sku: str = field(sh.refined(sh.TEXT, pattern="^[A-Z]{3}$"))
    quantity: int = field(sh.refined(sh.INT, 1, 10))
    at: dt.datetime = field(sh.DATETIME)


class Basket(Record):
    id_: str = field(sh.TEXT, "id")
    lines: tuple[Line, ...] = field(sh.refined(sh.list(sh.record(Line)), 1))
    tags: dict[str, str] = field(sh.map(sh.TEXT, sh.TEXT))
    colour: Colour | None = field(sh.optional(sh.enum(Colour)), optional=True)
    note: Any = field(sh.JSON)


class Card(Record):
    last_four: str = field(sh.TEXT)


class Voucher(Record):
    balance: float = field(sh.FLOAT)


PAYMENT: TaggedUnion[Card | Voucher] = TaggedUnion("source", {"card": Card, "voucher": Voucher})


class Wallet(Record):
    methods: dict[str, Card | Voucher] = field(sh.map(sh.TEXT, sh.union(PAYMENT)))


GOOD = {"id": "b1", "lines": [{"sku": "ABC", "quantity": 2, "at": "2024-05-01T10:00"}],
        "tags": {"gift": "yes"}, "colour": "light blue", "note": {"k": [1, 2.5, None]}}


def refusal(load: Any, value: object) -> str:
    with pytest.raises(ArgumentError) as caught:
        load(value, "$.x")
    return str(caught.value)


def test_a_record_of_shapes_loads_fitting_data_and_writes_it_back() -> None:
    basket = Basket.load(GOOD, "$", None)
    assert basket.lines[0].at == dt.datetime(2024, 5, 1, 10, 0)
    assert basket.colour is Colour.light_blue
    exported = {**GOOD, "lines": [{"sku": "ABC", "quantity": 2, "at": "2024-05-01T10:00:00"}]}
    assert basket.export() == exported
    assert basket._json_text() == json.dumps(exported)
    assert Basket.load({**GOOD, "colour": None}, "$", None).export()["colour"] is None


@pytest.mark.parametrize(("data", "message"), [
    ({**GOOD, "lines": []}, "$.lines: "),
    ({**GOOD, "lines": [{"sku": "abc", "quantity": 2, "at": "2024-05-01"}]}, "$.lines[0].sku: "),
    ({**GOOD, "lines": [{"sku": "ABC", "quantity": 11, "at": "2024-05-01"}]},
     "$.lines[0].quantity: "),
    ({**GOOD, "tags": {"gift": 1}}, '$.tags["gift"]: expected a string'),
    ({**GOOD, "colour": "blue"}, '$.colour: expected one of "red", "light blue"'),
])
def test_a_misfit_is_refused_at_its_path(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgumentError) as caught:
        Basket.load(data, "$", None)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(("shape", "written_out", "value"), [
    (sh.refined(sh.TEXT, 1, 3), lambda x, p: v.check_length(v.want_str(x, p), p, 1, 3), "abcd"),
    (sh.refined(sh.TEXT, 1, 3), lambda x, p: v.check_length(v.want_str(x, p), p, 1, 3), 7),
    (sh.refined(sh.TEXT, 2, None, pattern="^a+$"),
     lambda x, p: v.check_pattern(v.check_length(v.want_str(x, p), p, 2, None), p, "^a+$"), "ab"),
    (sh.refined(sh.FLOAT, 0.0), lambda x, p: v.check_range(v.want_float(x, p), p, 0.0, None),
     -1),
    (sh.map(sh.INT, sh.BOOL), lambda x, p: v.want_map(x, p, v.want_int, v.want_bool,
                                                       int_keys=True), {"01": True}),
    (sh.set(sh.TEXT), lambda x, p: v.want_set(x, p, v.want_str), ["a", "a"]),
    (sh.optional(sh.DATE), lambda x, p: v.want_optional(x, p, v.want_date), "2024-13-01"),
])
def test_a_shape_refuses_as_the_checks_written_out_do(shape: sh.Shape, written_out: Any,
                                                      value: object) -> None:
    assert shape.load is not None
    assert refusal(shape.load, value) == refusal(written_out, value)


def test_what_a_shape_derives_writes_the_export_s_json_text() -> None:
    cases: list[tuple[sh.Shape, Any]] = [
        (sh.list(sh.TEXT), ("a", "é")), (sh.map(sh.TEXT, sh.INT), {"a": 1}),
        (sh.optional(sh.FLOAT), None), (sh.optional(sh.FLOAT), 2.5),
        (sh.optional(sh.enum(Colour)), Colour.red), (sh.DURATION, dt.timedelta(seconds=90)),
        (sh.DATE, dt.date(2024, 1, 2)), (sh.map(sh.JSON, sh.TEXT), {1: "a", "b": "c"}),
    ]
    for shape, value in cases:
        exported = value if shape.export is None else shape.export(value)
        assert json.loads(json.dumps(exported)) == v.export_value(value)
        if shape.text is not None:
            assert shape.text(value) == json.dumps(exported)
    assert sh.DURATION.export is not None and sh.DURATION.export(dt.timedelta(seconds=90)) == 90
    assert sh.map(sh.JSON, sh.TEXT).export is not None
    assert sh.map(sh.JSON, sh.TEXT).export({1: "a"}) == {"1": "a"}


def test_a_union_loads_by_its_tag_and_writes_it_first() -> None:
    data = {"methods": {"c1": {"source": "card", "last_four": "1234"},
                        "v1": {"source": "voucher", "balance": 5}}}
    wallet = Wallet.load(data, "$", None)
    assert wallet.methods == {"c1": Card("1234"), "v1": Voucher(5.0)}
    exported = {"methods": {"c1": {"source": "card", "last_four": "1234"},
                            "v1": {"source": "voucher", "balance": 5.0}}}
    assert wallet.export() == exported
    assert wallet._json_text() == json.dumps(exported)
    with pytest.raises(ArgumentError) as caught:
        Wallet.load({"methods": {"c1": {"source": "cash"}}}, "$", None)
    assert str(caught.value).startswith('$.methods["c1"]')


def test_a_shape_tells_whether_a_value_keeps_its_text() -> None:
    assert sh.map(sh.TEXT, sh.list(sh.INT)).keeps_text
    assert not sh.list(sh.JSON).keeps_text
    assert sh.record(Basket).keeps_text is False  # its note is plain JSON
    assert sh.record(Line).keeps_text and sh.record(Line).text is v.record_text


def test_a_declaration_overrides_what_its_shape_derives() -> None:
    declared = field(sh.list(sh.TEXT), "items", export=v.export_value, text=None)
    assert (declared.json, declared.export, declared.text) == ("items", v.export_value, None)
    plain = field(sh.list(sh.TEXT))
    assert (plain.export, plain.text) == (list, v.str_list_text)
    refined = field(sh.refined(sh.TEXT, 1, 80))
    assert refined.schema == {"type": "string", "minLength": 1, "maxLength": 80}
    assert field(sh.TEXT).schema is None
    assert field(sh.optional(sh.refined(sh.INT, 0))).schema == \
        {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}
    assert field(sh.optional(sh.TEXT)).schema is None


def test_a_declaration_takes_one_loader() -> None:
    with pytest.raises(TypeError, match="a shape or a loader"):
        field(sh.TEXT, load=v.want_str)
    with pytest.raises(TypeError, match="needs one loader"):
        field("id")
    assert field("id", load=v.want_str).json == "id"


SPEC = """
world Shapes

enum Kind { a, b }

record Early {
  code: str matching /^[A-Z]+$/
  size: int(1..9)
}

record Holder {
  early: Early
  later: list[Later]
  tags: map[str, str]
  when: datetime?
}

record Later {
  n: int
}

record Cash {
  amount: float
}

record Cheque {
  number: str
}

union Tender by kind { cash: Cash, cheque: Cheque }

record Till {
  paid: list[Tender]
}

entity Box {
  key id: str
  holder: Holder
  kind: Kind = Kind.a
}

state {
  boxes: table Box
}
"""


def test_code_generation_declares_fields_by_shape(tmp_path: Any) -> None:
    spec = tmp_path / "shapes.world"
    spec.write_text(SPEC, encoding="utf-8")
    result = check_specs([spec])
    assert result.ok, [d.message for d in result.errors]
    world_py = next(text for package in generate_all(result).packages
                    for rel, text in package.files.items() if rel == "world.py")
    assert "code: str = field(sh.refined(sh.TEXT, pattern='^[A-Z]+$'))" in world_py
    assert "early: Early = field(sh.record(Early))" in world_py
    assert "tags: dict[str, str] = field(sh.map(sh.TEXT, sh.TEXT))" in world_py
    assert "when: dt.datetime | None = field(sh.optional(sh.DATETIME), optional=True)" \
        in world_py
    assert "kind: Kind = field(sh.enum(Kind), fill=lambda ep: " in world_py
    assert "id_: str = field(sh.TEXT, 'id', key=True)" in world_py
    assert "paid: tuple[Tender, ...] = field(sh.list(sh.union(_UNION_Tender)))" in world_py
    # a record declared after the class naming it: its field gives its loader
    assert "later: tuple[Later, ...] = field(\n        load_ep=" in world_py or \
        "later: tuple[Later, ...] = field(load_ep=" in world_py
