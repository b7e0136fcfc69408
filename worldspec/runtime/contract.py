"""The contract between generated worlds and the runtime: how a world declares its classes.

This module is the contract (with :mod:`worldspec.runtime.arguments` for the tools, which
needs the episode's classes): generated code imports its names and declares its classes with
them, and the runtime builds from what they declare. The compiler never loads the runtime
(``tests/test_layering.py``), so code generation writes these names as the contract's
``__all__`` spells them, and ``compiler/codegen/names.py`` (``GENERATED_NAMES``) keeps every
one of them from being a spec name (``tests/test_generated_names.py``).
A generated record or entity class is a class line, a docstring and one line per field::

    class User(Row):
        'A registered account.'

        id_: str = field(sh.TEXT, 'id', key=True)
        presence: Presence = field(sh.enum(Presence), fill=lambda ep: Presence.offline)

and the class's metaclass (:class:`RowType` for entities, :class:`RecordType` for records)
turns the :class:`Field` declarations into ``__slots__`` and builds the methods once, when the
class is defined, as closures over the fields (no source is compiled): ``__init__``,
``export``, ``load``, ``clone`` (rows), ``__eq__``/``__hash__``/``__repr__`` and the kept
JSON text (records). Both metaclasses are :func:`typing.dataclass_transform`\\ s with
:func:`field` as field specifier, so that mypy sees each class's constructor as declared.

A field is declared by its value's shape (:mod:`worldspec.runtime.value_shapes`, imported as
``sh``), from which :func:`field` takes its loader, exporter, text maker, ``keeps_text`` and
a refinement's schema, unless the declaration gives them. What a :class:`Field` says:

- ``json``: the field's name in JSON, where it differs from the attribute (``id`` for
  ``id_``);
- ``load``: ``(value, path) -> stored value``, checking plain JSON data (``load_ep``:
  ``(value, path, episode) -> stored value``, where loading needs the episode);
- ``fill``: ``(episode) -> value`` for a field the data leaves out or gives as null (the
  spec's default); ``optional``: a field the data may leave out, then ``None``;
- ``export``: ``stored value -> plain JSON`` where the stored value is not JSON already;
  ``omit_none``: a field left out of the export while it holds ``None``;
- ``text``: ``stored value -> json.dumps(export(value))`` where something is quicker than
  encoding the export (a record's kept text, an enum member's text); ``keeps_text``: whether
  the stored value is immutable all the way down (its text may be cached by identity);
- ``from_key``: the original's key for the field (``from "..."``), renamed when loading;
- ``key``: the entity's key field.

Unions: a union of records told apart by a tag field is declared once, by its tags and
member classes, and the runtime gives what loading, exporting and writing its values need::

    PaymentMethod: TypeAlias = CreditCard | GiftCard
    _UNION_PaymentMethod: TaggedUnion[PaymentMethod] = TaggedUnion(
        'source', {'credit_card': CreditCard, 'gift_card': GiftCard})

(``load``, ``export``, ``text``, ``tag``, ``holds``, ``some``: see :class:`TaggedUnion`).

Enums: :func:`enum_text` gives an enum member's JSON text from a table the runtime builds
once per enum class; :data:`enum_value` exports a member.
"""

from __future__ import annotations

import enum
import json
import types
from collections.abc import Callable, Mapping
from operator import attrgetter
from typing import Any, Generic, TypeVar

from worldspec.runtime.errors import ArgumentError, ToolError
from worldspec.runtime.shapes import Misfit, is_object, union_tag
from worldspec.runtime.values import export_value, json_text, str_text, unalias, want_object

__all__ = [
    "Field", "field", "DERIVED", "FieldTable", "Loader", "declared_fields", "enum_text",
    "enum_value", "optional_text", "slot_setters", "StateItem", "state_item", "declared_items",
    "attribute_copier", "attribute_filler", "record_maker", "kept_text", "TaggedUnion",
    "load_union", "data_path",
]

E = TypeVar("E", bound=enum.Enum)
U = TypeVar("U")

#: ``(value, path, episode) -> stored value``
Loader = Callable[[Any, str, Any], Any]


class Field:
    """One declared field of a generated record or entity class (see the module's doc)."""

    __slots__ = ("export", "fill", "from_key", "json", "keeps_text", "key", "load", "load_ep",
                 "name", "omit_none", "optional", "schema", "text")

    def __init__(self, json: str | None, load: Callable[[Any, str], Any] | None,
                 load_ep: Loader | None, fill: Callable[[Any], Any] | None,
                 optional: bool, omit_none: bool, export: Callable[[Any], Any] | None,
                 text: Callable[[Any], str] | None, keeps_text: bool, from_key: str | None,
                 key: bool, schema: dict[str, Any] | None = None) -> None:
        #: the attribute (set when the class is made)
        self.name = ""
        self.json = json or ""
        self.load = load
        self.load_ep = load_ep
        self.fill = fill
        self.optional = optional
        self.omit_none = omit_none
        self.export = export
        self.text = text
        self.keeps_text = keeps_text
        self.from_key = from_key
        self.key = key
        #: the schema of the field's exported value where its annotation says less (see
        #: :func:`worldspec.runtime.schema.result_of`)
        self.schema = schema

    @property
    def required(self) -> bool:
        """Whether the data must give the field."""
        return self.fill is None and not self.optional


class _Derived:
    """What a field's declaration leaves to its shape (``export=``, ``text=``...)."""

    def __repr__(self) -> str:
        return "DERIVED"


#: an argument of :func:`field` left to the field's shape
DERIVED: Any = _Derived()


def field(shape: Any = None, json: str | None = None, /, *,
          load: Callable[[Any, str], Any] | None = None, load_ep: Loader | None = None,
          fill: Callable[[Any], Any] | None = None, optional: bool = False,
          omit_none: bool = False, export: Callable[[Any], Any] | None = DERIVED,
          text: Callable[[Any], str] | None = DERIVED, keeps_text: bool = DERIVED,
          from_key: str | None = None, key: bool = False,
          schema: dict[str, Any] | None = DERIVED) -> Any:
    """Declare a field of a generated record or entity class (see the module's doc).

    ``shape`` (a :class:`~worldspec.runtime.value_shapes.Shape`) is what its value is made
    of: its loader, exporter, text maker, whether its text may be kept and a refinement's
    schema are derived from it, and ``export=``, ``text=``, ``keeps_text=``, ``schema=`` say
    only where a field's differ. Without a shape (``field('id', load=...)``: the first
    argument is then the field's JSON name), the field gives its loader, ``load(value,
    path)`` or ``load_ep(value, path, episode)`` where loading needs the episode, and the
    rest; ``schema`` is the JSON schema of its exported value where the annotation says less
    (a refinement, a set, a union)."""
    if isinstance(shape, str) or shape is None:  # no shape: the JSON name comes first
        if json is not None:
            raise TypeError("field() takes a shape, then the JSON name")
        shape, json = None, shape
    else:
        if load is not None or load_ep is not None:
            raise TypeError("field() takes a shape or a loader, not both")
        load, load_ep = shape.load, shape.load_ep
    if (load is None) == (load_ep is None):
        raise TypeError("field() needs one loader: a shape, load= or load_ep=")

    def given(value: Any, derived: str, otherwise: Any) -> Any:
        if value is not DERIVED:
            return value
        return otherwise if shape is None else getattr(shape, derived)

    return Field(json, load, load_ep, fill, optional, omit_none, given(export, "export", None),
                 given(text, "text", None), given(keeps_text, "keeps_text", True), from_key,
                 key, given(schema, "schema", None))


class StateItem:
    """One declared item of a world's state other than its tables (see :func:`state_item`)."""

    __slots__ = ("export", "from_key", "json", "load", "load_ep", "name", "zero")

    def __init__(self, zero: Any, json: str | None, export: Callable[[Any], Any] | None,
                 load: Callable[[Any, str], Any] | None = None, load_ep: Loader | None = None,
                 from_key: str | None = None) -> None:
        self.name = ""
        self.zero = zero
        self.json = json or ""
        self.export = export
        self.load = load
        self.load_ep = load_ep
        self.from_key = from_key

    def loaded(self, data: Mapping[str, Any], ep: Any) -> tuple[bool, Any]:
        """Whether ``data`` gives the item (under its key: its alias where it has one), and
        the value it gives, checked by the item's loader."""
        key = self.from_key or self.json
        if key not in data:
            return False, None
        path = data_path(key)
        if self.load_ep is not None:
            return True, self.load_ep(data[key], path, ep)
        if self.load is None:
            raise TypeError(f"state item {self.name!r} declares no loader")
        return True, self.load(data[key], path)


def state_item(zero: Any, json: str | None = None, /, *,
               export: Callable[[Any], Any] | None = None,
               load: Callable[[Any, str], Any] | None = None, load_ep: Loader | None = None,
               from_key: str | None = None) -> Any:
    """Declare a state item of a world's ``_State`` class: its value before any is set
    (``zero``; a map is copied per state), its name in JSON where it differs from the
    attribute, its exporter where its value is not plain JSON, its loader (``load(value,
    path)``, or ``load_ep(value, path, episode)`` where loading needs the episode) and the
    original's key it loads from (``from_key``, the spec's ``from "..."``)."""
    return StateItem(zero, json, export, load, load_ep, from_key)


def data_path(key: str) -> str:
    """The JSON path of a top-level key of loaded data (``$.users``, ``$["a b"]``): where an
    error in the value under it is said to be."""
    if key.isidentifier() and key.isascii():
        return "$." + key
    return f"$[{json.dumps(key, ensure_ascii=False)}]"


def declared_items(namespace: Mapping[str, Any]) -> tuple[StateItem, ...]:
    """The :class:`StateItem` declarations of a class body, in order, with their names set."""
    found = []
    for name in namespace.get("__annotations__", {}):
        declared = namespace.get(name)
        if isinstance(declared, StateItem):
            declared.name = name
            declared.json = declared.json or name
            found.append(declared)
    return tuple(found)


# ---------------------------------------------------------------------------- enums

#: per enum class, each member's JSON text and ``None``'s
_ENUM_TEXTS: dict[type, dict[Any, str]] = {}


def enum_text(cls: type[E], *, loose: bool = False) -> Callable[[Any], str]:
    """The JSON text of a member of enum ``cls`` (or of ``None``: ``null``), from a table
    built once per class; a value that is neither raises KeyError, or, when ``loose`` (a
    stored value may be any JSON value: ``arguments: dynamic``), gets the text of its
    export."""
    table = _ENUM_TEXTS.get(cls)
    if table is None:
        table = {None: "null"}
        for member in cls.__members__.values():
            table[member] = json.dumps(member.value)
        _ENUM_TEXTS[cls] = table
    if not loose:
        return table.__getitem__
    members = table

    def text(value: Any) -> str:
        if value is None or type(value) is cls:
            return members[value]
        return json_text(export_value(value))
    return text


#: an enum member's value (``_value_``: the attribute, without the ``value`` property's call)
enum_value: Callable[[Any], Any] = attrgetter("_value_")


def optional_text(text: Callable[[Any], str]) -> Callable[[Any], str]:
    """``text`` of a value that may be ``None`` (whose text is ``null``)."""
    def maker(value: Any) -> str:
        return "null" if value is None else text(value)
    return maker


# ----------------------------------------------------------------- the field table

class FieldTable:
    """What a class's declared fields give its methods, computed once when it is defined."""

    __slots__ = ("export_some", "fields", "get", "json_names", "load", "names", "omitted",
                 "text")

    def __init__(self, fields: tuple[Field, ...]) -> None:
        self.fields = fields
        self.names = tuple(f.name for f in fields)
        self.json_names = tuple(f.json for f in fields)
        #: the fields' values, as a tuple
        self.get: Callable[[Any], tuple[Any, ...]]
        if len(fields) > 1:
            self.get = attrgetter(*self.names)
        elif fields:
            single = attrgetter(self.names[0])
            self.get = lambda obj: (single(obj),)
        else:
            self.get = lambda obj: ()
        #: exports the fields with an exporter, in place of their stored values
        some = tuple((f.json, f.export, f.name) for f in fields
                     if f.export is not None and not f.omit_none)
        self.export_some = _exporter(some)
        #: the fields left out of the export while they hold none, with their exporters
        self.omitted = tuple((f.json, f.export) for f in fields if f.omit_none)
        self.load = _loader(fields)
        self.text = _text_of(fields, self)

    def export(self, obj: Any) -> dict[str, Any]:
        """The object's fields as plain JSON data, under their JSON names: the values as
        they are (in C), then those with an exporter exported (:func:`_exporter`), and
        those left out when none removed."""
        out = dict(zip(self.json_names, self.get(obj), strict=True))
        if self.export_some is not None:
            self.export_some(out, obj)
        for name, export in self.omitted:
            value = out[name]
            if value is None:
                del out[name]
            elif export is not None:
                out[name] = export(value)
        return out


# the templates of :func:`_exporter`, by how many fields they export: keys ``K<i>``,
# exporters ``E<i>`` (their globals) and attributes ``a<i>`` are replaced
def _export_eight(out: dict[str, Any], obj: Any) -> None:
    out[K0] = E0(obj.a0)  # type: ignore[name-defined]  # noqa: F821
    out[K1] = E1(obj.a1)  # type: ignore[name-defined]  # noqa: F821
    out[K2] = E2(obj.a2)  # type: ignore[name-defined]  # noqa: F821
    out[K3] = E3(obj.a3)  # type: ignore[name-defined]  # noqa: F821
    out[K4] = E4(obj.a4)  # type: ignore[name-defined]  # noqa: F821
    out[K5] = E5(obj.a5)  # type: ignore[name-defined]  # noqa: F821
    out[K6] = E6(obj.a6)  # type: ignore[name-defined]  # noqa: F821
    out[K7] = E7(obj.a7)  # type: ignore[name-defined]  # noqa: F821


def _export_four(out: dict[str, Any], obj: Any) -> None:
    out[K0] = E0(obj.a0)  # type: ignore[name-defined]  # noqa: F821
    out[K1] = E1(obj.a1)  # type: ignore[name-defined]  # noqa: F821
    out[K2] = E2(obj.a2)  # type: ignore[name-defined]  # noqa: F821
    out[K3] = E3(obj.a3)  # type: ignore[name-defined]  # noqa: F821


def _export_two(out: dict[str, Any], obj: Any) -> None:
    out[K0] = E0(obj.a0)  # type: ignore[name-defined]  # noqa: F821
    out[K1] = E1(obj.a1)  # type: ignore[name-defined]  # noqa: F821


def _export_one(out: dict[str, Any], obj: Any) -> None:
    out[K0] = E0(obj.a0)  # type: ignore[name-defined]  # noqa: F821


#: the export templates, largest first
_EXPORT = ((8, _export_eight), (4, _export_four), (2, _export_two), (1, _export_one))


def _exporter(exported: tuple[tuple[str, Callable[[Any], Any], str], ...]
              ) -> Callable[[dict[str, Any], Any], None] | None:
    """``export_some(out, obj)``: ``out[key] = export(obj.attr)`` for each (key, exporter,
    attribute) of ``exported``, as the statements written out would: functions made of the
    templates of :data:`_EXPORT`, the largest that fit first, their keys and exporters their
    globals, their attributes renamed (see :func:`attribute_copier`); ``None`` when there
    are none."""
    if not exported:
        return None
    parts = []
    start = 0
    while start < len(exported):
        size, template = next((size, template) for size, template in _EXPORT
                              if size <= len(exported) - start)
        chunk = exported[start:start + size]
        code = template.__code__
        names = list(code.co_names)
        scope: dict[str, Any] = {}
        for i, (key, export, attr) in enumerate(chunk):
            names[names.index(f"a{i}")] = attr
            scope[f"K{i}"], scope[f"E{i}"] = key, export
        code = code.replace(co_names=tuple(names), co_name=f"export_{chunk[0][2]}")
        parts.append(types.FunctionType(code, scope, code.co_name))
        start += size
    if len(parts) == 1:
        return parts[0]
    chunks = tuple(parts)

    def export_some(out: dict[str, Any], obj: Any) -> None:
        for part in chunks:
            part(out, obj)
    return export_some


def _loader(fields: tuple[Field, ...]) -> Callable[[object, str, Any], tuple[Any, ...]]:
    """``(data, path, episode) -> values``: the fields' values loaded from a JSON object."""
    required = {f.json: f.required for f in fields}
    aliases = {f.from_key: f.json for f in fields if f.from_key is not None}
    steps = tuple((f.json, "." + f.json, f.load, f.load_ep, f.fill, f.optional)
                  for f in fields)

    def load(data: object, path: str, ep: Any) -> tuple[Any, ...]:
        if aliases:  # the original's keys (`from "..."`) become the field names first
            data = unalias(data, path, aliases)
        d = want_object(data, path, required)
        values = []
        for name, suffix, load_one, load_in_episode, fill, optional in steps:
            raw = d.get(name)
            if raw is None and (fill is not None or (optional and name not in d)):
                values.append(None if fill is None else fill(ep))
            elif load_one is not None:
                values.append(load_one(raw, path + suffix))
            else:
                values.append(load_in_episode(raw, path + suffix, ep))  # type: ignore[misc]
        return tuple(values)

    return load


#: how many attributes one function made of a template handles
_CHUNK = 8


def _text_of(fields: tuple[Field, ...], table: FieldTable
             ) -> Callable[[Any], str] | None:
    """``json.dumps`` of a record's export, made from its fields' texts (``None`` where the
    export leaves a field out when it is none: the export's text is made then)."""
    del table
    if not fields or any(f.omit_none for f in fields):
        return None
    pieces = [(("{" if i == 0 else ", ") + json.dumps(f.json) + ": ", f.text or _encoded(f.export),
               f.name) for i, f in enumerate(fields)]
    parts = []
    for start in range(0, len(pieces), len(_JOINED)):
        chunk = pieces[start:start + len(_JOINED)]
        last = start + len(chunk) == len(pieces)
        parts.append(_text_part(tuple(chunk), "}" if last else ""))
    if len(parts) == 1:
        return parts[0]
    chunks = tuple(parts)
    return lambda obj: "".join([part(obj) for part in chunks])


# the templates of :func:`_text_part`, by the number of fields they join: the heads
# ``H<i>``, the text makers ``M<i>`` and the tail ``T`` are their globals, the attributes
# ``a<i>`` are renamed (these are no names of this module: each function made of a
# template has globals of its own)
def _joined_one(obj: Any) -> str:
    return "".join((H0, M0(obj.a0), T))  # type: ignore[name-defined]  # noqa: F821


def _joined_two(obj: Any) -> str:
    return "".join((H0, M0(obj.a0), H1, M1(obj.a1), T))  # type: ignore[name-defined]  # noqa: F821


def _joined_three(obj: Any) -> str:
    return "".join((H0, M0(obj.a0), H1, M1(obj.a1), H2, M2(obj.a2),  # type: ignore[name-defined]  # noqa: F821
                    T))  # type: ignore[name-defined]  # noqa: F821


def _joined_four(obj: Any) -> str:
    return "".join((H0, M0(obj.a0), H1, M1(obj.a1), H2, M2(obj.a2),  # type: ignore[name-defined]  # noqa: F821
                    H3, M3(obj.a3), T))  # type: ignore[name-defined]  # noqa: F821


def _joined_five(obj: Any) -> str:
    return "".join((H0, M0(obj.a0), H1, M1(obj.a1), H2, M2(obj.a2),  # type: ignore[name-defined]  # noqa: F821
                    H3, M3(obj.a3), H4, M4(obj.a4), T))  # type: ignore[name-defined]  # noqa: F821


def _joined_six(obj: Any) -> str:
    return "".join((H0, M0(obj.a0), H1, M1(obj.a1), H2, M2(obj.a2),  # type: ignore[name-defined]  # noqa: F821
                    H3, M3(obj.a3), H4, M4(obj.a4), H5, M5(obj.a5), T))  # type: ignore[name-defined]  # noqa: F821


def _joined_seven(obj: Any) -> str:
    return "".join((H0, M0(obj.a0), H1, M1(obj.a1), H2, M2(obj.a2),  # type: ignore[name-defined]  # noqa: F821
                    H3, M3(obj.a3), H4, M4(obj.a4), H5, M5(obj.a5),  # type: ignore[name-defined]  # noqa: F821
                    H6, M6(obj.a6), T))  # type: ignore[name-defined]  # noqa: F821


def _joined_eight(obj: Any) -> str:
    return "".join((H0, M0(obj.a0), H1, M1(obj.a1), H2, M2(obj.a2),  # type: ignore[name-defined]  # noqa: F821
                    H3, M3(obj.a3), H4, M4(obj.a4), H5, M5(obj.a5),  # type: ignore[name-defined]  # noqa: F821
                    H6, M6(obj.a6), H7, M7(obj.a7), T))  # type: ignore[name-defined]  # noqa: F821


#: the text templates, by the number of fields they join less one
_JOINED = (_joined_one, _joined_two, _joined_three, _joined_four, _joined_five, _joined_six,
           _joined_seven, _joined_eight)


def _text_part(pieces: tuple[tuple[str, Callable[[Any], str], str], ...], tail: str
               ) -> Callable[[Any], str]:
    """Fields' keys and texts joined, then ``tail``, as the expression written out would
    join them: the template of :data:`_JOINED` for as many fields, with each field's
    attribute in its code and its key (``H<i>``), text maker (``M<i>``) and the tail
    (``T``) as the function's globals (see :func:`attribute_copier`)."""
    template = _JOINED[len(pieces) - 1].__code__
    names = list(template.co_names)
    scope: dict[str, Any] = {"T": tail}
    for i, (head, make, attr) in enumerate(pieces):
        names[names.index(f"a{i}")] = attr
        scope[f"H{i}"], scope[f"M{i}"] = head, make
    code = template.replace(co_names=tuple(names), co_name=f"text_of_{pieces[0][2]}")
    return types.FunctionType(code, scope, code.co_name)


# the templates of :func:`kept_text`, by the number of fields: a record's ``_json_text``
# method in one function (what the method calling the text maker of :func:`_text_of` does
# in two frames), its text one f-string; the text makers ``M<i>``, ``EXPORTED`` (the
# export's text) and ``KEEP`` (the setter of the record's ``_json`` slot) are its globals,
# the attributes ``a<i>`` are renamed, and the literal texts ``"<H<i>>"`` (the keys) and
# ``"<T>"`` (the tail) become the record's own in its constants: the f-string then joins
# constants and the fields' texts, with no name read and no formatting of a key
def _kept_one(self):  # type: ignore[no-untyped-def]
    text = self._json
    if text is None:
        try:
            text = f"<H0>{M0(self.a0)}<T>"  # type: ignore[name-defined]  # noqa: F821
        except (TypeError, KeyError, AttributeError):
            text = EXPORTED(self)  # type: ignore[name-defined]  # noqa: F821
        KEEP(self, text)  # type: ignore[name-defined]  # noqa: F821
    return text


def _kept_two(self):  # type: ignore[no-untyped-def]
    text = self._json
    if text is None:
        try:
            text = f"<H0>{M0(self.a0)}<H1>{M1(self.a1)}<T>"  # type: ignore[name-defined]  # noqa: F821
        except (TypeError, KeyError, AttributeError):
            text = EXPORTED(self)  # type: ignore[name-defined]  # noqa: F821
        KEEP(self, text)  # type: ignore[name-defined]  # noqa: F821
    return text


def _kept_three(self):  # type: ignore[no-untyped-def]
    text = self._json
    if text is None:
        try:
            text = f"<H0>{M0(self.a0)}<H1>{M1(self.a1)}<H2>{M2(self.a2)}<T>"  # type: ignore[name-defined]  # noqa: F821
        except (TypeError, KeyError, AttributeError):
            text = EXPORTED(self)  # type: ignore[name-defined]  # noqa: F821
        KEEP(self, text)  # type: ignore[name-defined]  # noqa: F821
    return text


def _kept_four(self):  # type: ignore[no-untyped-def]
    text = self._json
    if text is None:
        try:
            text = (f"<H0>{M0(self.a0)}<H1>{M1(self.a1)}<H2>{M2(self.a2)}"  # type: ignore[name-defined]  # noqa: F821
                    f"<H3>{M3(self.a3)}<T>")  # type: ignore[name-defined]  # noqa: F821
        except (TypeError, KeyError, AttributeError):
            text = EXPORTED(self)  # type: ignore[name-defined]  # noqa: F821
        KEEP(self, text)  # type: ignore[name-defined]  # noqa: F821
    return text


def _kept_five(self):  # type: ignore[no-untyped-def]
    text = self._json
    if text is None:
        try:
            text = (f"<H0>{M0(self.a0)}<H1>{M1(self.a1)}<H2>{M2(self.a2)}"  # type: ignore[name-defined]  # noqa: F821
                    f"<H3>{M3(self.a3)}<H4>{M4(self.a4)}<T>")  # type: ignore[name-defined]  # noqa: F821
        except (TypeError, KeyError, AttributeError):
            text = EXPORTED(self)  # type: ignore[name-defined]  # noqa: F821
        KEEP(self, text)  # type: ignore[name-defined]  # noqa: F821
    return text


def _kept_six(self):  # type: ignore[no-untyped-def]
    text = self._json
    if text is None:
        try:
            text = (f"<H0>{M0(self.a0)}<H1>{M1(self.a1)}<H2>{M2(self.a2)}"  # type: ignore[name-defined]  # noqa: F821
                    f"<H3>{M3(self.a3)}<H4>{M4(self.a4)}<H5>{M5(self.a5)}<T>")  # type: ignore[name-defined]  # noqa: F821
        except (TypeError, KeyError, AttributeError):
            text = EXPORTED(self)  # type: ignore[name-defined]  # noqa: F821
        KEEP(self, text)  # type: ignore[name-defined]  # noqa: F821
    return text


def _kept_seven(self):  # type: ignore[no-untyped-def]
    text = self._json
    if text is None:
        try:
            text = (f"<H0>{M0(self.a0)}<H1>{M1(self.a1)}<H2>{M2(self.a2)}"  # type: ignore[name-defined]  # noqa: F821
                    f"<H3>{M3(self.a3)}<H4>{M4(self.a4)}<H5>{M5(self.a5)}"  # type: ignore[name-defined]  # noqa: F821
                    f"<H6>{M6(self.a6)}<T>")  # type: ignore[name-defined]  # noqa: F821
        except (TypeError, KeyError, AttributeError):
            text = EXPORTED(self)  # type: ignore[name-defined]  # noqa: F821
        KEEP(self, text)  # type: ignore[name-defined]  # noqa: F821
    return text


def _kept_eight(self):  # type: ignore[no-untyped-def]
    text = self._json
    if text is None:
        try:
            text = (f"<H0>{M0(self.a0)}<H1>{M1(self.a1)}<H2>{M2(self.a2)}"  # type: ignore[name-defined]  # noqa: F821
                    f"<H3>{M3(self.a3)}<H4>{M4(self.a4)}<H5>{M5(self.a5)}"  # type: ignore[name-defined]  # noqa: F821
                    f"<H6>{M6(self.a6)}<H7>{M7(self.a7)}<T>")  # type: ignore[name-defined]  # noqa: F821
        except (TypeError, KeyError, AttributeError):
            text = EXPORTED(self)  # type: ignore[name-defined]  # noqa: F821
        KEEP(self, text)  # type: ignore[name-defined]  # noqa: F821
    return text


#: the kept-text templates, by the number of fields less one
_KEPT = (_kept_one, _kept_two, _kept_three, _kept_four, _kept_five, _kept_six, _kept_seven,
         _kept_eight)


def kept_text(fields: tuple[Field, ...], keep: Callable[[Any, str], None],
              exported: Callable[[Any], str], qualname: str) -> Callable[[Any], str] | None:
    """A record class's ``_json_text`` method: the record's JSON text (``json.dumps`` of its
    export), made from its fields' texts the first time and kept in its ``_json`` slot
    (set by ``keep``; a field holding a value of another type than declared, with
    ``arguments: dynamic``, gets ``exported(record)`` instead), as the method written out
    for these fields would: a template of :data:`_KEPT` (see :func:`_text_part`). ``None``
    for a record of no field or more than eight, or one whose export leaves a field out
    when it is none (:func:`_text_of` serves those)."""
    if not fields or len(fields) > len(_KEPT) or any(f.omit_none for f in fields):
        return None
    template = _KEPT[len(fields) - 1].__code__
    renamed = {f"a{i}": f.name for i, f in enumerate(fields)}
    texts = {"<T>": "}"}
    scope: dict[str, Any] = {"EXPORTED": exported, "KEEP": keep}
    for i, f in enumerate(fields):
        texts[f"<H{i}>"] = ("{" if i == 0 else ", ") + json.dumps(f.json) + ": "
        scope[f"M{i}"] = f.text or _encoded(f.export)
    code = template.replace(co_names=tuple(renamed.get(n, n) for n in template.co_names),
                            co_consts=tuple(texts.get(c, c) if type(c) is str else c
                                            for c in template.co_consts),
                            co_name="_json_text", co_qualname=f"{qualname}._json_text")
    return types.FunctionType(code, scope, code.co_name)


def _encoded(export: Callable[[Any], Any] | None) -> Callable[[Any], str]:
    """``json_text`` of a value's export."""
    if export is None:
        return json_text
    return lambda value: json_text(export(value))


def declared_fields(namespace: dict[str, Any]) -> tuple[Field, ...]:
    """The :class:`Field` declarations of a class body, in order, with their names set; the
    class keeps them as ``DECLARED_FIELDS`` (its result schema is built from them: see
    :func:`worldspec.runtime.schema.result_of`)."""
    found = []
    for name in namespace.get("__annotations__", {}):
        declared = namespace.get(name)
        if isinstance(declared, Field):
            declared.name = name
            declared.json = declared.json or name
            found.append(declared)
    namespace["DECLARED_FIELDS"] = tuple(found)
    return tuple(found)



def slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Callable[[Any, Any], None], ...]:
    """The setters of the slots ``names`` of ``cls`` (or of a base class), in that order:
    they set a slot without the class's ``__setattr__`` (a frozen record's refuses)."""
    found = []
    for name in names:
        owner = next(klass for klass in cls.__mro__ if name in vars(klass))
        found.append(vars(owner)[name].__set__)
    return tuple(found)


# ------------------------------------------------------------- copying attributes

# the templates of :func:`attribute_copier`: their attribute names are replaced
def _copy_sixteen(source: Any, target: Any) -> None:
    target.a0 = source.a0
    target.a1 = source.a1
    target.a2 = source.a2
    target.a3 = source.a3
    target.a4 = source.a4
    target.a5 = source.a5
    target.a6 = source.a6
    target.a7 = source.a7
    target.a8 = source.a8
    target.a9 = source.a9
    target.a10 = source.a10
    target.a11 = source.a11
    target.a12 = source.a12
    target.a13 = source.a13
    target.a14 = source.a14
    target.a15 = source.a15


def _copy_eight(source: Any, target: Any) -> None:
    target.a0 = source.a0
    target.a1 = source.a1
    target.a2 = source.a2
    target.a3 = source.a3
    target.a4 = source.a4
    target.a5 = source.a5
    target.a6 = source.a6
    target.a7 = source.a7


def _copy_four(source: Any, target: Any) -> None:
    target.a0 = source.a0
    target.a1 = source.a1
    target.a2 = source.a2
    target.a3 = source.a3


def _copy_two(source: Any, target: Any) -> None:
    target.a0 = source.a0
    target.a1 = source.a1


def _copy_one(source: Any, target: Any) -> None:
    target.a0 = source.a0


#: the copy templates, largest first, by how many attributes they copy
_COPY = ((16, _copy_sixteen), (8, _copy_eight), (4, _copy_four), (2, _copy_two),
         (1, _copy_one))


def attribute_copier(names: tuple[str, ...]) -> Callable[[Any, Any], None]:
    """``copy(source, target)``: sets each attribute ``names`` of ``target`` to that of
    ``source``, as fast as the statements ``target.x = source.x`` written out.

    Setting an attribute by a name known only at run time (``setattr``, a slot's setter)
    costs several times a store whose name is in the code, and a row's ``clone`` (every
    reset by copy, every snapshot) is that and nothing else. So the runtime keeps templates
    of 16, 8, 4, 2 and 1 such statements (:data:`_COPY`) and makes functions of them, the
    largest that fit first, by renaming the attributes in their code objects
    (``CodeType.replace``: no source is compiled)."""
    parts = []
    start = 0
    while start < len(names):  # the largest template that fits, then the next
        size, template = next((size, template) for size, template in _COPY
                              if size <= len(names) - start)
        chunk = names[start:start + size]
        code = template.__code__.replace(co_names=chunk, co_name=f"copy_{chunk[0]}")
        parts.append(types.FunctionType(code, {}, code.co_name))
        start += size
    if not parts:
        return lambda source, target: None
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        first, second = parts

        def copy_two(source: Any, target: Any) -> None:
            first(source, target)
            second(source, target)
        return copy_two
    chunks = tuple(parts)

    def copy(source: Any, target: Any) -> None:
        for part in chunks:
            part(source, target)
    return copy


# ------------------------------------------------------------------ filling slots
# the templates of :func:`attribute_filler`, by the number of attributes they set
def _fill_one(obj: Any, values: tuple[Any, ...]) -> None:
    (obj.a0,) = values


def _fill_two(obj: Any, values: tuple[Any, ...]) -> None:
    obj.a0, obj.a1 = values


def _fill_three(obj: Any, values: tuple[Any, ...]) -> None:
    obj.a0, obj.a1, obj.a2 = values


def _fill_four(obj: Any, values: tuple[Any, ...]) -> None:
    obj.a0, obj.a1, obj.a2, obj.a3 = values


def _fill_five(obj: Any, values: tuple[Any, ...]) -> None:
    obj.a0, obj.a1, obj.a2, obj.a3, obj.a4 = values


def _fill_six(obj: Any, values: tuple[Any, ...]) -> None:
    obj.a0, obj.a1, obj.a2, obj.a3, obj.a4, obj.a5 = values


def _fill_seven(obj: Any, values: tuple[Any, ...]) -> None:
    obj.a0, obj.a1, obj.a2, obj.a3, obj.a4, obj.a5, obj.a6 = values


def _fill_eight(obj: Any, values: tuple[Any, ...]) -> None:
    obj.a0, obj.a1, obj.a2, obj.a3, obj.a4, obj.a5, obj.a6, obj.a7 = values


_FILL = (_fill_one, _fill_two, _fill_three, _fill_four, _fill_five, _fill_six, _fill_seven,
         _fill_eight)


def attribute_filler(names: tuple[str, ...]) -> Callable[[Any, tuple[Any, ...]], None]:
    """``fill(obj, values)``: sets the attributes ``names`` of ``obj`` to ``values`` (as
    many), as fast as ``obj.x, obj.y = values`` written out: a template of that statement
    with its attributes renamed (see :func:`attribute_copier`), per eight names."""
    parts = []
    for start in range(0, len(names), _CHUNK):
        chunk = names[start:start + _CHUNK]
        code = _FILL[len(chunk) - 1].__code__.replace(co_names=chunk,
                                                       co_name=f"fill_{chunk[0]}")
        parts.append((start, start + len(chunk), types.FunctionType(code, {}, code.co_name)))
    if not parts:
        return lambda obj, values: None
    if len(parts) == 1:
        return parts[0][2]
    chunks = tuple(parts)

    def fill(obj: Any, values: tuple[Any, ...]) -> None:
        for start, end, part in chunks:
            part(obj, values[start:end])
    return fill


# ----------------------------------------------------------------- making records
# the templates of :func:`record_maker`, by the number of fields: ``MADE`` is a class of
# the record's slots without the frozen ``__setattr__`` (called, not ``object.__new__``'d:
# a class's call goes straight to ``object``'s C ``__new__``, where ``object.__new__`` as a
# function checks the class's bases first), ``_json`` the record's kept text
# (set first: renamed to the first field where the record keeps none); ``cls`` becomes the
# record's class once its slots are filled
def _make_one(cls, v0):  # type: ignore[no-untyped-def]
    record = MADE()  # type: ignore[name-defined]  # noqa: F821
    record._json = None
    record.a0 = v0
    record.__class__ = cls
    return record


def _make_two(cls, v0, v1):  # type: ignore[no-untyped-def]
    record = MADE()  # type: ignore[name-defined]  # noqa: F821
    record._json = None
    record.a0, record.a1 = v0, v1
    record.__class__ = cls
    return record


def _make_three(cls, v0, v1, v2):  # type: ignore[no-untyped-def]
    record = MADE()  # type: ignore[name-defined]  # noqa: F821
    record._json = None
    record.a0, record.a1, record.a2 = v0, v1, v2
    record.__class__ = cls
    return record


def _make_four(cls, v0, v1, v2, v3):  # type: ignore[no-untyped-def]
    record = MADE()  # type: ignore[name-defined]  # noqa: F821
    record._json = None
    record.a0, record.a1, record.a2, record.a3 = v0, v1, v2, v3
    record.__class__ = cls
    return record


def _make_five(cls, v0, v1, v2, v3, v4):  # type: ignore[no-untyped-def]
    record = MADE()  # type: ignore[name-defined]  # noqa: F821
    record._json = None
    record.a0, record.a1, record.a2, record.a3, record.a4 = v0, v1, v2, v3, v4
    record.__class__ = cls
    return record


def _make_six(cls, v0, v1, v2, v3, v4, v5):  # type: ignore[no-untyped-def]
    record = MADE()  # type: ignore[name-defined]  # noqa: F821
    record._json = None
    record.a0, record.a1, record.a2, record.a3, record.a4, record.a5 = v0, v1, v2, v3, v4, v5
    record.__class__ = cls
    return record


def _make_seven(cls, v0, v1, v2, v3, v4, v5, v6):  # type: ignore[no-untyped-def]
    record = MADE()  # type: ignore[name-defined]  # noqa: F821
    record._json = None
    record.a0, record.a1, record.a2, record.a3, record.a4, record.a5, record.a6 = \
        v0, v1, v2, v3, v4, v5, v6
    record.__class__ = cls
    return record


def _make_eight(cls, v0, v1, v2, v3, v4, v5, v6, v7):  # type: ignore[no-untyped-def]
    record = MADE()  # type: ignore[name-defined]  # noqa: F821
    record._json = None
    record.a0, record.a1, record.a2, record.a3, record.a4, record.a5, record.a6, record.a7 = \
        v0, v1, v2, v3, v4, v5, v6, v7
    record.__class__ = cls
    return record


_MAKE = (_make_one, _make_two, _make_three, _make_four, _make_five, _make_six, _make_seven,
         _make_eight)


def record_maker(names: tuple[str, ...], made: type, keeps_text: bool, qualname: str
                 ) -> Callable[..., Any] | None:
    """A record class's ``__new__(cls, <one parameter per field>)``, as fast as the function
    written out, or ``None`` for a record of more than eight fields: a template of
    :data:`_MAKE` with its parameters named after the fields (so keyword arguments bind as
    they would to a dataclass's ``__init__``, with the same errors: ``qualname`` names it)
    and its attributes renamed (see :func:`attribute_copier`)."""
    if not names or len(names) > len(_MAKE):
        return None
    code = _MAKE[len(names) - 1].__code__
    stored = {"_json": "_json" if keeps_text else names[0]}
    stored.update({f"a{i}": name for i, name in enumerate(names)})
    # the class and the record being made: names no field has (none starts with "_")
    code = code.replace(
        co_names=tuple(stored.get(name, name) for name in code.co_names),
        co_varnames=("_cls", *names, *("_" + name for name in code.co_varnames[len(names) + 1:])),
        co_name="__init__", co_qualname=qualname)
    return types.FunctionType(code, {"MADE": made}, "__init__")


def load_union(data: object, path: str, ep: Any, tag: str,
               variants: Mapping[str, Callable[[object, str, Any], Any]]) -> Any:
    """A value of a tagged union from plain JSON data: the object's ``tag`` field names the
    variant whose loader reads the rest (or the whole object, for a variant that holds the
    tag as a field of its own)."""
    if not is_object(data):
        raise ArgumentError(f"{path}: expected an object")
    try:
        loader = variants[union_tag(data, tag, variants)]
    except Misfit:
        allowed = ", ".join(json.dumps(x) for x in variants)
        raise ArgumentError(f"{path}.{tag}: expected one of {allowed}") from None
    rest = {k: x for k, x in data.items() if k != tag}
    try:
        return loader(rest, path, ep)
    except ArgumentError as without_tag:  # the variant may hold the tag as a field
        try:
            return loader(data, path, ep)
        except ArgumentError:
            raise without_tag from None


class TaggedUnion(Generic[U]):
    """A union of record classes told apart by a tag field, declared by its tag field and
    its members (tag -> class); a value is a member's instance, exported with its tag first.

    - ``load(data, path, ep)``: the value from plain JSON data (:func:`load_union`);
    - ``export(value)``: ``{tag field: tag, **value.export()}``;
    - ``text(value)``: ``json.dumps(export(value))``, from the member's kept text;
    - ``tag(value)``: the value's tag (what reading the tag field gives); ``holds(value)``:
      whether ``value`` is an instance of a member (exactly);
    - ``some(value)``: a value that must be present (a failure, when it is none).
    """

    __slots__ = ("field", "heads", "loaders", "tags")

    def __init__(self, field: str, members: Mapping[str, type[Any]]) -> None:
        self.field = field
        #: member class -> its tag
        self.tags: dict[type, str] = {cls: tag for tag, cls in members.items()}
        self.loaders: dict[str, Callable[[object, str, Any], Any]] = {
            tag: cls.load for tag, cls in members.items()}
        #: member class -> the start of its values' text: ``{"tag field": "tag"``
        self.heads = {cls: "{" + json.dumps(field) + ": " + str_text(tag)
                      for tag, cls in members.items()}

    def load(self, data: object, path: str, ep: Any) -> U:
        value: U = load_union(data, path, ep, self.field, self.loaders)
        return value

    def export(self, value: Any) -> dict[str, Any]:
        return {self.field: self.tags[type(value)], **value.export()}

    def text(self, value: Any) -> str:
        body: str = value._json_text()
        head = self.heads[type(value)]
        return head + "}" if body == "{}" else head + ", " + body[1:]

    def tag(self, value: Any) -> str:
        return self.tags[type(value)]

    def holds(self, value: object) -> bool:
        return type(value) in self.tags

    def some(self, value: U | None) -> U:
        if value is None:
            raise ToolError("A value that must be present is none.")
        return value

    def __repr__(self) -> str:
        members = ", ".join(f"{tag!r}: {cls.__name__}" for cls, tag in self.tags.items())
        return f"TaggedUnion({self.field!r}, {{{members}}})"
