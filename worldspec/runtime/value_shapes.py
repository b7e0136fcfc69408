"""What a stored value is made of, declared once: the shape a field's declaration names.

A generated record or row declares each field by its value's shape, and the runtime derives
from that one description what the field needs: its loader (the walk of plain JSON data that
checks it, at the value's JSON path), its exporter, its JSON text maker, whether its text
may be kept (the value is immutable all the way down) and, for a refined scalar, the JSON
schema its annotation cannot say::

    class OrderItem(Record):
        name: str = field(sh.refined(sh.TEXT, 1, 120))
        options: dict[str, str] = field(sh.map(sh.TEXT, sh.TEXT))
        status: Status = field(sh.enum(Status), fill=lambda ep: _E6_Status_open)
        lines: tuple[Line, ...] = field(sh.list(sh.record(Line)))

A shape is a builtin scalar (:data:`TEXT`, :data:`INT`, :data:`FLOAT`, :data:`NUMBER`,
:data:`BOOL`, :data:`DATE`, :data:`DATETIME`, :data:`DURATION`, :data:`JSON`) or made of
others: :func:`refined` (a range of values or lengths, a pattern), :func:`optional`,
:func:`list`, :func:`set`, :func:`map`, :func:`enum` (a member by its text),
:func:`record` (a record class, whose own fields load it) and :func:`union` (a union of
records told apart by a tag: its :class:`~worldspec.runtime.contract.TaggedUnion`). A row
reference is stored as its key: its shape is the key's.

Every check is the one validator's (:mod:`worldspec.runtime.values`, on
:mod:`worldspec.runtime.shapes`): a shape composes its checks once, when it is made, into
the function that walks a value (no per-value dispatch), so loading costs what the lambdas
written out per field did. A field may still say ``export=``/``text=`` where a world's
argument rules make a stored value looser than its shape (``arguments: dynamic``).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any, Final

from worldspec.runtime import schema as js
from worldspec.runtime import values as v
from worldspec.runtime.contract import enum_text, enum_value, optional_text
from worldspec.runtime.shapes import SCALARS

__all__ = [
    "Shape", "TEXT", "INT", "FLOAT", "NUMBER", "BOOL", "DATE", "DATETIME", "DURATION", "JSON",
    "refined", "optional", "list", "set", "map", "enum", "record", "union",
]

#: ``(value, path) -> stored value``, checked
Load = Callable[[Any, str], Any]
#: ``(value, path, episode) -> stored value``, checked (a record's defaults need the episode)
LoadInEpisode = Callable[[Any, str, Any], Any]


class Shape:
    """A value's shape, and what the runtime derives from it (see the module's doc).

    ``load`` is set where loading needs no episode, else ``load_ep``; ``export`` is None
    where a stored value is plain JSON as it is, ``text`` None where nothing is quicker than
    encoding the export; ``text_takes_none``: ``text`` gives ``null`` for None."""

    __slots__ = ("export", "keeps_text", "kind", "load", "load_ep", "schema", "text",
                 "text_takes_none")

    def __init__(self, kind: str, *, load: Load | None = None,
                 load_ep: LoadInEpisode | None = None,
                 export: Callable[[Any], Any] | None = None,
                 text: Callable[[Any], str] | None = None, text_takes_none: bool = False,
                 keeps_text: bool = True, schema: dict[str, Any] | None = None) -> None:
        self.kind = kind
        self.load = load
        self.load_ep = load_ep
        self.export = export
        self.text = text
        self.text_takes_none = text_takes_none
        self.keeps_text = keeps_text
        #: the schema of an exported value where a field's annotation says less (a refined
        #: scalar's limits), else None
        self.schema = schema

    def item(self, ep: Any) -> Load:
        """``load(value, path)`` of an element, a key or a value inside a container."""
        if self.load is not None:
            return self.load
        load_ep = self.load_ep
        assert load_ep is not None
        return lambda value, path: load_ep(value, path, ep)

    def __repr__(self) -> str:
        return f"Shape({self.kind!r})"


def _scalar(name: str, load: Load, text: Callable[[Any], str] | None = None, *,
            takes_none: bool = False) -> Shape:
    scalar = SCALARS[name]
    export = None if scalar.export is scalar.load or name not in ("date", "datetime",
                                                                  "duration") \
        else scalar.export
    return Shape(name, load=load, export=export, text=text, text_takes_none=takes_none)


TEXT: Final = _scalar("str", v.want_str, v.str_text)
INT: Final = _scalar("int", v.want_int, v.int_text, takes_none=True)
FLOAT: Final = _scalar("float", v.want_float, v.float_text, takes_none=True)
NUMBER: Final = _scalar("number", v.want_number, v.number_text, takes_none=True)
BOOL: Final = _scalar("bool", v.want_bool)
DATE: Final = _scalar("date", v.want_date)
DATETIME: Final = _scalar("datetime", v.want_datetime)
DURATION: Final = _scalar("duration", v.want_duration)
#: any JSON value, deep-copied in and out (plain lists and dicts: its text is never kept)
JSON: Final = Shape("json", load=v.want_json, export=v.copy_json, keeps_text=False)

#: the kinds whose refinement is a range of values (not of lengths)
_NUMERIC = ("int", "float", "number")


def _made(inner: Shape, kind: str, walk: LoadInEpisode, **derived: Any) -> Shape:
    """A shape made of ``inner``, walked by ``walk(value, path, episode)``: without the
    episode where ``inner`` loads without one."""
    if inner.load is not None:
        return Shape(kind, load=lambda value, path: walk(value, path, None), **derived)
    return Shape(kind, load_ep=walk, **derived)


def refined(inner: Shape, low: float | None = None, high: float | None = None,
            pattern: str | None = None) -> Shape:
    """``inner`` refined: values (numbers) or lengths (text, lists, sets, maps) from ``low``
    to ``high`` (either end open when None), text matching ``pattern`` as a whole."""
    check: Callable[[Any, str, Any, Any], Any] = \
        v.check_range if inner.kind in _NUMERIC else v.check_length
    within = low is not None or high is not None
    schema = js.scalar(inner.kind, low, high, pattern) if inner.kind in SCALARS else None
    derived: dict[str, Any] = {
        "export": inner.export, "text": inner.text, "text_takes_none": inner.text_takes_none,
        "keeps_text": inner.keeps_text, "schema": schema}
    load = inner.load
    if load is not None:  # the checks composed once, as the lambda written out would
        if within and pattern is not None:
            def walk(value: Any, path: str) -> Any:
                return v.check_pattern(check(load(value, path), path, low, high), path,
                                       pattern)
        elif pattern is not None:
            def walk(value: Any, path: str) -> Any:
                return v.check_pattern(load(value, path), path, pattern)
        else:
            def walk(value: Any, path: str) -> Any:
                return check(load(value, path), path, low, high)
        return Shape(inner.kind, load=walk, **derived)
    load_ep = inner.load_ep
    assert load_ep is not None

    def walk_in_episode(value: Any, path: str, ep: Any) -> Any:
        found = load_ep(value, path, ep)
        if within:
            found = check(found, path, low, high)
        return found if pattern is None else v.check_pattern(found, path, pattern)
    return Shape(inner.kind, load_ep=walk_in_episode, **derived)


def optional(inner: Shape) -> Shape:
    """``T?``: null (None) or a value of ``inner``."""
    export = inner.export
    text = inner.text
    if text is not None and not inner.text_takes_none:
        text = optional_text(text)
    derived: dict[str, Any] = {
        "text": text, "text_takes_none": text is not None, "keeps_text": inner.keeps_text,
        "schema": None if inner.schema is None else js.nullable(inner.schema),
        "export": None if export is None else
        (lambda value: None if value is None else export(value))}
    if inner.load is not None:
        load = inner.load
        return Shape("optional", load=lambda value, path: v.want_optional(value, path, load),
                     **derived)
    return _made(inner, "optional", lambda value, path, ep: v.want_optional(
        value, path, inner.item(ep)), **derived)


def _sequence(kind: str, inner: Shape, want: Callable[[Any, str, Load], Any]) -> Shape:
    export = inner.export
    derived: dict[str, Any] = {"keeps_text": inner.keeps_text, "text_takes_none": True}
    if export is None:
        derived["export"] = builtins.list
    elif inner.kind == "record":  # the method itself: no call of a function around it
        derived["export"] = lambda value: [x.export() for x in value]
    else:
        derived["export"] = lambda value: [export(x) for x in value]
    if inner.kind == "str":
        derived["text"] = v.str_list_text
    elif inner.kind == "record" and inner.keeps_text:
        derived["text"] = v.records_text
    else:
        derived["text_takes_none"] = False
    if inner is TEXT and want is v.want_list:  # checked in C where it is ASCII text
        return Shape(kind, load=v.want_str_list, **derived)
    if inner.load is not None:
        load = inner.load
        return Shape(kind, load=lambda value, path: want(value, path, load), **derived)
    return _made(inner, kind, lambda value, path, ep: want(value, path, inner.item(ep)),
                 **derived)


def list(inner: Shape) -> Shape:
    """``list[T]``: a JSON array, stored as a tuple."""
    return _sequence("list", inner, v.want_list)


def set(inner: Shape) -> Shape:
    """``set[T]``: a JSON array without repeats, stored as a tuple."""
    return _sequence("set", inner, v.want_set)


def map(key: Shape, value: Shape) -> Shape:
    """``map[K, V]``: a JSON object (an ``int`` key is decimal text, a ``json`` key text or
    an integer)."""
    int_keys, json_keys = key.kind == "int", key.kind == "json"
    keep = key.keeps_text and value.keeps_text
    derived: dict[str, Any] = {"keeps_text": keep, "text_takes_none": True}
    export = value.export
    if key.kind == "str" and export is None:
        derived["export"] = dict
        if keep:
            derived["text"] = v.map_text  # never changed in place: kept by identity
    elif key.kind == "str" and value.kind == "record":
        derived["export"] = lambda stored: {k: x.export() for k, x in stored.items()}
        if value.keeps_text:
            derived["text"] = v.record_map_text
    else:
        derived["export"] = _map_exporter(key, value)
        if key.kind == "str" and value.kind == "union" and value.text is not None:
            derived["text"] = _texts_joined(value.text)
    if "text" not in derived:
        derived["text_takes_none"] = False
    key_load, value_load = key.load, value.load
    if key_load is not None and value_load is not None:
        return Shape("map", load=lambda given, path: v.want_map(
            given, path, key_load, value_load, int_keys=int_keys, json_keys=json_keys),
            **derived)
    return Shape("map", load_ep=lambda given, path, ep: v.want_map(
        given, path, key.item(ep), value.item(ep), int_keys=int_keys, json_keys=json_keys),
        **derived)


def _map_exporter(key: Shape, value: Shape) -> Callable[[Any], Any]:
    """The exporter of a map: its keys as JSON writes object keys (a ``json`` key as its
    text), its values exported."""
    key_export = v.key_text if key.kind == "json" else (key.export or _same)
    value_export = value.export or _same
    return lambda stored: {key_export(k): value_export(x) for k, x in stored.items()}


def _texts_joined(text: Callable[[Any], str]) -> Callable[[Any], str]:
    """The JSON text of a map of text keys, from its values' texts."""
    str_text = v.str_text
    return lambda stored: "{" + ", ".join(
        [str_text(k) + ": " + text(x) for k, x in stored.items()]) + "}"


def _same(value: Any) -> Any:
    return value


def enum(cls: type[Any]) -> Shape:
    """A member of enum class ``cls``, by its text."""
    return Shape("enum", load=lambda value, path: v.want_enum(value, path, cls),
                 export=enum_value, text=enum_text(cls), text_takes_none=True)


def record(cls: Any) -> Shape:
    """A value of record class ``cls``, loaded by its own fields (the episode computes their
    defaults); its JSON text is kept where its fields' values are immutable."""
    keeps = all(f.keeps_text for f in cls.FIELD_TABLE.fields)
    load = cls.load
    return Shape("record", load_ep=lambda value, path, ep: load(value, path, ep),
                 export=lambda stored: stored.export(),
                 text=v.record_text if keeps else None, text_takes_none=keeps,
                 keeps_text=keeps)


def union(declared: Any) -> Shape:
    """A value of a union of records (``declared``: its
    :class:`~worldspec.runtime.contract.TaggedUnion`), written with its tag: its text is
    made from its member's kept text where every member keeps one and none has a field
    named like the tag (whose value would replace the tag's in the export)."""
    members = tuple(declared.tags)
    keeps = all(all(f.keeps_text for f in cls.FIELD_TABLE.fields) for cls in members)
    has_text = keeps and all(declared.field not in cls.FIELD_TABLE.json_names
                             for cls in members)
    load = declared.load
    return Shape("union", load_ep=lambda value, path, ep: load(value, path, ep),
                 export=declared.export, text=declared.text if has_text else None,
                 keeps_text=keeps)
