"""Type tables for code generation: Python annotation, loader, exporter and JSON schema.

Each function is a table over the semantic type classes; adding a type is a
row in each. "Stored" values are what fields and containers hold (entities
as their keys); "values" are what expressions compute (entities as rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from worldspec.compiler import types as t
from worldspec.compiler.codegen.names import CLASS_RESERVED, py_name, union_object
from worldspec.compiler.model import WorldModel
from worldspec.runtime import schema as js

__all__ = ["TextMaker", "TypeTables"]

_PRIM_ANNOTATION = {
    "str": "str", "int": "int", "float": "float", "number": "int | float", "bool": "bool",
    "date": "dt.date",
    "datetime": "dt.datetime", "duration": "dt.timedelta", "json": "Any",
}
_PRIM_LOADER = {
    "str": "v.want_str", "int": "v.want_int", "float": "v.want_float",
    "number": "v.want_number", "bool": "v.want_bool",
    "date": "v.want_date", "datetime": "v.want_datetime", "duration": "v.want_duration",
}
#: the primitive types whose refinement is a range of values (not a length)
_NUMERIC = ("int", "float", "number")


@dataclass(frozen=True)
class TextMaker:
    """A field's text maker (an expression of a function, or None for the export's text)
    and whether it is right for a value of any type or raises for one of another type than
    declared (a record may then take it with ``arguments: dynamic``)."""

    code: str | None
    any_value_or_raises: bool
    #: whether it gives ``null`` for ``None`` (so an optional value needs no guard)
    takes_none: bool = False


def _text_prim(typ: t.Type) -> str | None:
    """The name of a primitive type, or of an entity's key type that is text."""
    return typ.name if isinstance(typ, t.Prim) else None


def _by_key(typ: t.Type) -> bool:
    """Whether a result shows a value of ``typ`` inside it by key: an entity not ``row[E]``."""
    return isinstance(typ, t.Named) and typ.kind == "entity" and not typ.whole_row


class TypeTables:
    """The per-world type tables (named types need the world to be resolved)."""

    def __init__(self, world: WorldModel) -> None:
        self.world = world
        #: ``config { arguments: dynamic }``: a stored value may be a JSON value of another
        #: type than declared (an argument taken as it is), so what exports and writes
        #: stored values works for any JSON value
        self.dynamic = world.config.arguments == "dynamic"
        #: type name -> class name. The fields of a record or an entity are names of its
        #: class's body, where they would hide a class of the same name from the field
        #: declarations after them: such a class steps aside (one more ``_``, until no
        #: name is taken).
        fields = {py_name(f) for rec in world.records.values() for f in rec.fields}
        self._classes: dict[str, str] = {}
        taken: set[str] = set()
        for name in (*world.enums, *world.records, *world.unions, world.name):
            if name not in self._classes:
                safe = self._plain_class_name(name)
                while safe in fields or safe in taken:
                    safe += "_"
                self._classes[name] = safe
                taken.add(safe)

    # -------------------------------------------------------------- names
    def class_name(self, name: str) -> str:
        """The Python class of a declared type: never a local name of the generated code."""
        return self._classes.get(name) or self._plain_class_name(name)

    @staticmethod
    def _plain_class_name(name: str) -> str:
        safe = py_name(name)
        return safe + "_" if safe in CLASS_RESERVED else safe

    def module_names(self) -> frozenset[str]:
        """The classes the generated module defines: locals and parameters must not shadow them."""
        w = self.world
        return frozenset(self.class_name(x) for x in (*w.enums, *w.records, *w.unions, w.name))

    def key_type(self, entity: str) -> t.Type:
        rec = self.world.records.get(entity)
        key = rec.key if rec else None
        return key.type if key else t.STR

    def stored(self, typ: t.Type) -> t.Type:
        """The stored form of a type: entities become their key type."""
        if isinstance(typ, t.Named) and typ.kind == "entity":
            return self.key_type(typ.name)
        if isinstance(typ, t.Optional):
            return t.Optional(self.stored(typ.inner))
        return typ

    # --------------------------------------------------------- annotations
    def annotation(self, typ: t.Type, stored: bool = True) -> str:
        """The Python annotation of a value (``stored``: entities as keys)."""
        if isinstance(typ, t.Prim):
            return _PRIM_ANNOTATION[typ.name]
        if isinstance(typ, t.Optional):
            return f"{self.annotation(typ.inner, stored)} | None"
        if isinstance(typ, (t.ListOf, t.SetOf)):
            return f"tuple[{self.annotation(typ.element)}, ...]"
        if isinstance(typ, t.MapOf):
            return f"dict[{self.annotation(typ.key)}, {self.annotation(typ.value)}]"
        if isinstance(typ, t.Named):
            if typ.kind == "entity" and stored:
                return self.annotation(self.key_type(typ.name))
            return self.class_name(typ.name)
        if isinstance(typ, t.Table):
            return f"Table[{self.class_name(typ.entity)}]"
        if isinstance(typ, t.Sequence):
            return "int"
        return "Any"

    # -------------------------------------------------------------- loaders
    def loader(self, typ: t.Type, src: str, path: str) -> str:
        """An expression turning plain JSON ``src`` into the stored value, checked."""
        if isinstance(typ, t.Prim):
            if typ.name == "json":
                return f"v.want_json({src}, {path})"
            code = f"{_PRIM_LOADER[typ.name]}({src}, {path})"
            return self.refine(typ, code, path)
        if isinstance(typ, t.Optional):
            return f"v.want_optional({src}, {path}, {self.load_fn(typ.inner)})"
        if isinstance(typ, t.ListOf):
            return self.refine(typ, f"v.want_list({src}, {path}, {self.load_fn(typ.element)})",
                               path)
        if isinstance(typ, t.SetOf):
            return self.refine(typ, f"v.want_set({src}, {path}, {self.load_fn(typ.element)})",
                               path)
        if isinstance(typ, t.MapOf):
            int_keys = ", int_keys=True" if typ.key == t.INT else (
                ", json_keys=True" if typ.key == t.JSON else "")
            return self.refine(typ, f"v.want_map({src}, {path}, {self.load_fn(typ.key)}, "
                               f"{self.load_fn(typ.value)}{int_keys})", path)
        if isinstance(typ, t.Named):
            if typ.kind == "enum":
                return f"v.want_enum({src}, {path}, {self.class_name(typ.name)})"
            if typ.kind == "entity":
                return self.loader(self.key_type(typ.name), src, path)
            if typ.kind == "union":
                return f"{union_object(typ.name)}.load({src}, {path}, ep)"
            return f"{self.class_name(typ.name)}.load({src}, {path}, ep)"
        return src

    def field_loader(self, typ: t.Type) -> str:
        """A ``(value, path) -> stored`` function for a field's declaration: a primitive's
        loader itself where the type has no refinement, else a lambda of :meth:`loader`."""
        if isinstance(typ, t.Named) and typ.kind == "entity":  # its key
            return self.field_loader(self.key_type(typ.name))
        if isinstance(typ, t.Prim) and typ.refinement is None:
            return "v.want_json" if typ.name == "json" else _PRIM_LOADER[typ.name]
        return f"lambda x, p: {self.loader(typ, 'x', 'p')}"

    def loads_with_episode(self, typ: t.Type) -> bool:
        """Whether loading a value of ``typ`` needs the episode (a record's or a union's
        loader takes it, for defaults its fields compute)."""
        if isinstance(typ, t.Optional):
            return self.loads_with_episode(typ.inner)
        if isinstance(typ, (t.ListOf, t.SetOf)):
            return self.loads_with_episode(typ.element)
        if isinstance(typ, t.MapOf):
            return self.loads_with_episode(typ.key) or self.loads_with_episode(typ.value)
        return isinstance(typ, t.Named) and typ.kind in ("record", "union")

    def load_fn(self, typ: t.Type) -> str:
        """A ``(value, path) -> stored`` callable for element loaders."""
        if isinstance(typ, t.Named) and typ.kind == "entity":  # its key
            return self.load_fn(self.key_type(typ.name))
        if isinstance(typ, t.Prim) and typ.refinement is None and typ.name != "json":
            return _PRIM_LOADER[typ.name]  # the loader itself, no lambda around it
        body = self.loader(typ, "x", "p")
        return f"(lambda x, p: {body})" if body != "x" else "(lambda x, p: x)"

    def refinement_checks(self, typ: t.Type) -> list[tuple[str, tuple[object, ...]]]:
        """The checks of the type's refinement, innermost first: each a validator's name and
        the constants it takes after the value and its path."""
        ref = getattr(typ, "refinement", None)
        if ref is None:
            return []
        out: list[tuple[str, tuple[object, ...]]] = []
        if ref.low is not None or ref.high is not None:
            fn = "v.check_range" if isinstance(typ, t.Prim) and typ.name in _NUMERIC \
                else "v.check_length"
            out.append((fn, (ref.low, ref.high)))
        if ref.pattern is not None:
            out.append(("v.check_pattern", (ref.pattern,)))
        return out

    def refine(self, typ: t.Type, code: str, path: str) -> str:
        """Wrap ``code`` with the checks of the type's refinement, if any."""
        for fn, constants in self.refinement_checks(typ):
            code = f"{fn}({', '.join([code, path, *map(repr, constants)])})"
        return code

    def has_refinement(self, typ: t.Type) -> bool:
        inner = t.strip_optional(typ)
        return getattr(inner, "refinement", None) is not None

    def checked(self, typ: t.Type, code: str, path: str) -> str:
        """Refinement checks for a value computed by a tool before it is stored."""
        if isinstance(typ, t.Optional):
            if not self.has_refinement(typ.inner):
                return code
            return f"rt.if_present({code}, lambda x: {self.refine(typ.inner, 'x', path)})"
        return self.refine(typ, code, path)

    # ------------------------------------------------------------ exporters
    def exporter(self, typ: t.Type, src: str) -> str:
        """An expression turning a stored value ``src`` into plain JSON."""
        if self.dynamic and self._loose(typ):
            return f"v.export_value({src})"  # any JSON value, or one of the type
        if isinstance(typ, t.Prim):
            if typ.name in ("date", "datetime"):
                return f"{src}.isoformat()"
            if typ.name == "duration":
                return f"rt.seconds({src})"
            if typ.name == "json":
                return f"v.copy_json({src})"
            return src
        if isinstance(typ, t.Optional):
            inner = self.exporter(typ.inner, "x")
            if inner == "x":
                return src
            return f"rt.if_present({src}, lambda x: {inner})"
        if isinstance(typ, (t.ListOf, t.SetOf)):
            inner = self.exporter(typ.element, "x")
            return f"[{inner} for x in {src}]" if inner != "x" else f"list({src})"
        if isinstance(typ, t.MapOf):
            # a json key (an int or a str) is written as text, as JSON writes object keys
            key = "rt.text(k)" if typ.key == t.JSON else self.exporter(typ.key, "k")
            val = self.exporter(typ.value, "x")
            return f"{{{key}: {val} for k, x in {src}.items()}}"
        if isinstance(typ, t.Named):
            if typ.kind in ("enum", "entity"):
                # an enum member's ``_value_`` is its ``value`` without the property lookup
                # (a Python-level descriptor call on every export)
                return src if typ.kind == "entity" else f"{src}._value_"
            if typ.kind == "union":
                return f"{union_object(typ.name)}.export({src})"
            return f"{src}.export()"
        return src

    def export_kind(self, typ: t.Type) -> str | None:
        """How a stored value of ``typ`` exports where one function does it: ``list`` (a
        tuple of plain JSON values), ``dict`` (a map of text to plain JSON values); ``None``
        otherwise."""
        if self.exports_loosely(typ):
            return None
        if isinstance(typ, (t.ListOf, t.SetOf)) and self.exports_as_is(typ.element):
            return "list"
        if isinstance(typ, t.MapOf) and typ.key == t.STR and self.exports_as_is(typ.value):
            return "dict"
        return None

    def exports_loosely(self, typ: t.Type) -> bool:
        """Whether :meth:`exporter` gives the generic exporter's ``v.export_value`` (right
        for any JSON value: ``arguments: dynamic``)."""
        return self.dynamic and self._loose(typ)

    def exports_as_is(self, typ: t.Type) -> bool:
        """Whether a stored value of ``typ`` is plain JSON as it is (:meth:`exporter` gives
        the value itself)."""
        if self.dynamic and self._loose(typ):
            return False
        if isinstance(typ, t.Prim):
            return typ.name not in ("date", "datetime", "duration", "json")
        if isinstance(typ, t.Optional):
            return self.exports_as_is(typ.inner)
        if isinstance(typ, (t.ListOf, t.SetOf, t.MapOf)):
            return False
        if isinstance(typ, t.Named):
            return typ.kind == "entity"
        return True

    def _loose(self, typ: t.Type) -> bool:
        """Whether a stored value of ``typ`` exports other than as itself or by a function
        of its own (a union's tag), so that with ``arguments: dynamic`` the generic exporter
        (``v.export_value``, right for any JSON value too) takes over."""
        base = t.strip_optional(typ)
        if isinstance(base, t.Prim):
            return base.name in ("date", "datetime", "duration")
        if isinstance(base, t.Named):
            return base.kind in ("enum", "record")
        # a union's members export with their tag only by the union's own exporter, which
        # the generic one cannot know: a collection holding one keeps its typed exporter
        # (as a union-typed value itself does)
        return isinstance(base, (t.ListOf, t.SetOf, t.MapOf)) and not self._holds_union(base)

    @staticmethod
    def _json_as_stored(typ: t.Type) -> bool:
        """Whether a stored value of ``typ`` is JSON data as it is (texts, numbers, truth
        values, json, and tuples and text-keyed maps of those), so that ``json_text`` of
        it is the text of its export: of a value of the type, and of any JSON value an
        argument passed on with ``arguments: dynamic``."""
        base = t.strip_optional(typ)
        if isinstance(base, t.Prim):
            return base.name in ("str", "int", "float", "bool", "number", "json")
        if isinstance(base, (t.ListOf, t.SetOf)):
            return TypeTables._json_as_stored(base.element)
        if isinstance(base, t.MapOf):
            return base.key == t.STR and TypeTables._json_as_stored(base.value)
        return False

    def _holds_union(self, typ: t.Type) -> bool:
        """Whether a value of ``typ`` may hold a union member (at any depth of collections)."""
        base = t.strip_optional(typ)
        if isinstance(base, (t.ListOf, t.SetOf)):
            return self._holds_union(base.element)
        if isinstance(base, t.MapOf):
            return self._holds_union(base.key) or self._holds_union(base.value)
        return isinstance(base, t.Named) and base.kind == "union"

    def text(self, typ: t.Type, src: str, depth: int = 0) -> str | None:
        """An expression giving ``json.dumps`` of the export of stored value ``src`` (a
        name or an attribute read: it may be read twice), built from the JSON texts the
        records it holds cache; ``None`` where no record is held (``json.dumps`` of the
        exported value is as fast) or the type has no text of its own.

        With ``arguments: dynamic`` a stored value may be a JSON value of another type (an
        argument passed on as it is): the typed text is taken when the value has the type's
        shape (the records and union members it must hold, :meth:`shape`), and
        ``json_text`` of its export otherwise. A record's own text is right whatever its
        fields hold (its fields' texts are the generic ones in this mode)."""
        if not self.dynamic:
            return self._text(typ, src, depth)
        typed = self._text(typ, src, depth)
        if typed is not None and self._records_text(t.strip_optional(typ)):
            return typed  # right for a value of any type: no guard
        base = t.strip_optional(typ)
        if isinstance(base, t.Named) and base.kind == "record" and typed is not None:
            record = f"v.record_text({src})"  # a record's text, or any value's
            return record if base is typ else f"('null' if {src} is None else {record})"
        guard = None if typed is None else self.shape(typ, src, depth)
        if typed is None or guard is None:
            return None
        return f"({typed} if {guard} else v.json_text({self.exporter(typ, src)}))"

    def shape(self, typ: t.Type, src: str, depth: int = 0) -> str | None:
        """A test that ``src`` has the shape of ``typ`` as far as its text depends on it:
        a record is of its class, a union member of one of the union's, a list a tuple of
        such (``None`` where the test would cost more than the generic text saves)."""
        if isinstance(typ, t.Optional):
            inner = self.shape(typ.inner, src, depth)
            return None if inner is None else f"({src} is None or {inner})"
        if isinstance(typ, (t.ListOf, t.SetOf)) and isinstance(typ.element, t.Named):
            x = f"x{depth}"
            item = self.shape(typ.element, x, depth + 1)
            return None if item is None else \
                f"(type({src}) is tuple and all([{item} for {x} in {src}]))"
        if isinstance(typ, t.MapOf) and typ.key == t.STR:
            k, x = f"k{depth}", f"x{depth}"
            item = self.shape(typ.value, x, depth + 1)
            return None if item is None else \
                f"(type({src}) is dict and all([type({k}) is str and {item} " \
                f"for {k}, {x} in {src}.items()]))"
        if isinstance(typ, t.Named):
            if typ.kind == "record":
                return f"type({src}) is {self.class_name(typ.name)}"
            if typ.kind == "union":
                return f"type({src}) in {union_object(typ.name)}.tags"
        return None

    def _records_text(self, typ: t.Type) -> bool:
        """Whether :meth:`_text` of a value of ``typ`` is the runtime's text of a list or a
        map of records (``v.records_text``, ``v.record_map_text``), right for any value."""
        if isinstance(typ, (t.ListOf, t.SetOf)):
            element = typ.element
        elif isinstance(typ, t.MapOf) and typ.key == t.STR:
            element = typ.value
        else:
            return False
        return isinstance(element, t.Named) and element.kind == "record" and \
            self.has_text(element.name)

    def _text(self, typ: t.Type, src: str, depth: int = 0) -> str | None:
        """:meth:`text` of a value known to have its type's shape."""
        if not self._holds_text(typ):
            return None
        if isinstance(typ, t.Optional):
            inner = self._text(typ.inner, src, depth)
            if inner is not None and self._records_text(typ.inner):
                return inner  # of None too: 'null'
            return None if inner is None else f"('null' if {src} is None else {inner})"
        if isinstance(typ, (t.ListOf, t.SetOf)):
            x = f"x{depth}"
            item = self._text(typ.element, x, depth + 1)
            if item is None:
                return None
            element = typ.element
            if isinstance(element, t.Named) and element.kind == "union":
                return f"'[' + ', '.join(map({union_object(element.name)}.text, {src})) + ']'"
            if isinstance(element, t.Named) and element.kind == "record":
                # records: their kept texts joined, a call only for one not made yet
                return f"v.records_text({src})"
            return f"'[' + ', '.join([{item} for {x} in {src}]) + ']'"
        if isinstance(typ, t.MapOf):
            k, x = f"k{depth}", f"x{depth}"
            item = self._text(typ.value, x, depth + 1)
            if item is None or typ.key != t.STR:
                return None
            if isinstance(typ.value, t.Named) and typ.value.kind == "record":
                return f"v.record_map_text({src})"
            return (f"'{{' + ', '.join([v.str_text({k}) + ': ' + {item} "
                    f"for {k}, {x} in {src}.items()]) + '}}'")
        if isinstance(typ, t.Named):
            if typ.kind == "union":
                return f"{union_object(typ.name)}.text({src})"
            if typ.kind == "record":
                return f"{src}._json_text()"
        return None

    # ------------------------------------------------------ field text makers
    def text_maker(self, typ: t.Type) -> str | None:
        """A function (an expression) giving ``json.dumps`` of the export of a stored value
        of ``typ``, for a field's declaration (``field(text=...)``), where something is
        quicker than encoding the export; ``None`` where nothing is (the runtime encodes the
        export then). Decided from the type."""
        if self.dynamic:
            return self._loose_text_maker(typ)
        return self._typed_text_maker(typ).code

    def record_text_maker(self, typ: t.Type) -> str | None:
        """:meth:`text_maker` for a field of a record, whose text is made once and kept:
        with ``arguments: dynamic``, the typed maker where it is right for a value of any
        type or raises for one of another type (the record's text is then that of its
        export), the loose one otherwise."""
        typed = self._typed_text_maker(typ)
        if not self.dynamic or (typed.code is not None and typed.any_value_or_raises):
            return typed.code
        return self._loose_text_maker(typ)

    def _typed_text_maker(self, typ: t.Type) -> TextMaker:
        """The text maker of a value known to be of ``typ`` (a world without ``arguments:
        dynamic``)."""
        base = typ.inner if isinstance(typ, t.Optional) else typ
        if isinstance(base, t.Named) and base.kind == "enum":  # None's text too: null
            return TextMaker(f"enum_text({self.class_name(base.name)})", True, True)
        if isinstance(typ, t.Optional):
            inner = self._typed_text_maker(typ.inner)
            if inner.code is None or inner.takes_none:
                return inner  # of None too: 'null'
            return TextMaker(f"optional_text({inner.code})", inner.any_value_or_raises)
        if self._holds_text(typ):
            return self._kept_text_maker(typ)
        if isinstance(typ, t.Named) and typ.kind == "entity":
            return self._typed_text_maker(self.key_type(typ.name))
        if isinstance(typ, (t.ListOf, t.SetOf)) and _text_prim(typ.element) == "str":
            return TextMaker("v.str_list_text", True, True)
        if isinstance(typ, t.Prim) and typ.name == "str":
            return TextMaker("v.str_text", True)  # raises TypeError for another value
        if isinstance(typ, t.Prim) and typ.name in _NUMERIC:
            return TextMaker(f"v.{typ.name}_text", True, True)
        if isinstance(typ, t.MapOf) and self._plain(typ) and self.immutable(typ):
            return TextMaker("v.map_text", True, True)  # never changed in place: kept by identity
        return TextMaker(None, False)

    def _kept_text_maker(self, typ: t.Type) -> TextMaker:
        """The text maker of a value holding records that keep their texts."""
        if isinstance(typ, t.Named) and typ.kind == "record":
            return TextMaker("v.record_text", True, True)
        element = typ.element if isinstance(typ, (t.ListOf, t.SetOf)) else None
        if isinstance(element, t.Named) and element.kind == "record":
            return TextMaker("v.records_text", True, True)
        if isinstance(typ, t.MapOf) and isinstance(typ.value, t.Named) and \
                typ.value.kind == "record":
            return TextMaker("v.record_map_text", True, True)
        if isinstance(typ, t.Named) and typ.kind == "union":
            # a function of the value: the union's functions follow the classes declaring it
            return TextMaker(f"lambda value: {union_object(typ.name)}.text(value)", False)
        return TextMaker(f"lambda value: {self._text(typ, 'value')}", False)

    def _loose_text_maker(self, typ: t.Type) -> str | None:
        """The text maker of a stored value that may be a JSON value of another type than
        declared (``arguments: dynamic``)."""
        base = t.strip_optional(typ)
        if self._holds_text(typ):
            kept = self._kept_text_maker(base)
            if kept.takes_none:  # right for any value: no guard
                return kept.code
            found = self.text(typ, "value")
            return None if found is None else f"lambda value: {found}"
        if isinstance(base, t.Named) and base.kind == "enum":
            # a member's text from the enum's table; any other value's (none too) its own
            return f"enum_text({self.class_name(base.name)}, loose=True)"
        if isinstance(base, t.Prim) and base.name in _NUMERIC:
            return f"v.{base.name}_text"  # any other value (none too): its json_text
        if isinstance(base, (t.ListOf, t.SetOf)) and _text_prim(base.element) == "str":
            return "v.str_list_text"
        if isinstance(base, t.MapOf) and self._plain(base) and self._json_as_stored(base) \
                and self.immutable(base):
            return "v.map_text"
        return None  # the JSON text of the value's export, whatever value it is

    def _plain(self, typ: t.Type) -> bool:
        """Whether a stored list or map is plain JSON as it is (its exporter only copies):
        elements and values that export as themselves, keys that are text."""
        if isinstance(typ, (t.ListOf, t.SetOf)):
            return self.exporter(typ.element, "x") == "x"
        if isinstance(typ, t.MapOf):
            return typ.key == t.STR and self.exporter(typ.value, "x") == "x"
        return False

    def _holds_text(self, typ: t.Type) -> bool:
        """Whether a stored value of ``typ`` holds a record whose JSON text it may cache
        (an immutable record, or an immutable union whose variants do not hold the tag)."""
        if isinstance(typ, t.Optional):
            return self._holds_text(typ.inner)
        if isinstance(typ, (t.ListOf, t.SetOf)):
            return self._holds_text(typ.element)
        if isinstance(typ, t.MapOf):
            return typ.key == t.STR and self._holds_text(typ.value)
        if isinstance(typ, t.Named):
            if typ.kind == "record":
                return self.has_text(typ.name)
            if typ.kind == "union":
                return self.union_has_text(typ.name)
        return False

    def has_text(self, record: str) -> bool:
        """Whether the record class caches its JSON text (``_json_text()``): it is
        immutable all the way down."""
        rec = self.world.records.get(record)
        return rec is not None and rec.kind == "record" and \
            self.immutable(t.Named("record", record))

    def union_has_text(self, union: str) -> bool:
        """Whether a union's value has a text built from its variant's (``TaggedUnion.text``): every
        variant caches its text and none has a field named like the tag (whose value would
        replace the tag's in ``export()``)."""
        info = self.world.unions.get(union)
        if info is None:
            return False
        for rec_name in info.variants.values():
            rec = self.world.records.get(rec_name)
            if rec is None or not self.has_text(rec_name) or info.tag_field in rec.fields:
                return False
        return True

    def immutable(self, typ: t.Type, seen: frozenset[str] = frozenset()) -> bool:
        """Whether a stored value of ``typ`` never changes once made, all the way down, so
        that its JSON text may be cached by the value's identity (``docs/runtime.md``):
        scalars, enum members, entity keys, tuples (lists and sets), frozen records and
        unions of them, and maps (a change always builds a new dict: ``{**m, k: x}``,
        ``rt.without_key``). ``json`` values are plain lists and dicts: not counted."""
        if isinstance(typ, t.Prim):
            return typ.name != "json"
        if isinstance(typ, t.Optional):
            return self.immutable(typ.inner, seen)
        if isinstance(typ, (t.ListOf, t.SetOf)):
            return self.immutable(typ.element, seen)
        if isinstance(typ, t.MapOf):
            return self.immutable(typ.key, seen) and self.immutable(typ.value, seen)
        if isinstance(typ, t.Named):
            if typ.kind in ("enum", "entity"):
                return True
            if typ.name in seen:  # a recursive record: decided where it started
                return True
            inner = seen | {typ.name}
            if typ.kind == "union":
                union = self.world.unions.get(typ.name)
                return union is not None and all(
                    self.immutable(t.Named("record", r), inner)
                    for r in union.variants.values())
            rec = self.world.records.get(typ.name)
            return rec is not None and rec.kind == "record" and all(
                self.immutable(f.type, inner) for f in rec.fields.values())
        return False

    # --------------------------------------------------------------- schemas
    def schema(self, typ: t.Type) -> dict[str, Any]:
        """The strict-mode JSON schema of what the agent sends for ``typ`` (made by the
        runtime's schema functions, which the runtime's argument types use too)."""
        ref = getattr(typ, "refinement", None)
        low, high = (ref.low, ref.high) if ref is not None else (None, None)
        if isinstance(typ, t.Prim):
            if typ.name == "json":
                return dict(js.JSON_ANY)
            return js.scalar(typ.name, low, high, ref.pattern if ref is not None else None)
        if isinstance(typ, t.Optional):
            return js.nullable(self.schema(typ.inner))
        if isinstance(typ, (t.ListOf, t.SetOf)):
            return js.array(self.schema(typ.element), unique=isinstance(typ, t.SetOf),
                            min_items=low, max_items=high)
        if isinstance(typ, t.MapOf):
            return js.mapping(self.schema(typ.value), min_properties=low, max_properties=high)
        if isinstance(typ, t.Named):
            if typ.kind == "enum":
                members = self.world.enums[typ.name].members.values()
                return js.text_in(*(m.value for m in members))
            if typ.kind == "entity":
                return self.schema(self.key_type(typ.name))
            if typ.kind == "record":
                return self.record_schema(typ.name, None)
            if typ.kind == "union":
                union = self.world.unions[typ.name]
                return js.any_of(*(self.record_schema(rec, (union.tag_field, tag))
                                   for tag, rec in union.variants.items()))
        return {}

    def result_schema(self, typ: t.Type) -> dict[str, Any]:
        """The JSON schema of a value as ``export`` writes it (what a tool returns).

        Unlike :meth:`schema` (what the agent sends), an entity is its whole row and
        a record always has every field; references inside are keys.
        """
        if isinstance(typ, t.Optional):
            return {"anyOf": [self.result_schema(typ.inner), {"type": "null"}]}
        if isinstance(typ, (t.ListOf, t.SetOf)):
            out = self.schema(typ)
            out["items"] = self.schema(typ.element) if _by_key(typ.element) \
                else self.result_schema(typ.element)
            return out
        if isinstance(typ, t.MapOf):
            return {"type": "object", "additionalProperties": self.schema(typ.value)
                    if _by_key(typ.value) else self.result_schema(typ.value)}
        if isinstance(typ, t.Named) and typ.kind in ("entity", "record"):
            rec = self.world.records[typ.name]
            props = {}
            for f in rec.fields.values():
                by_key = _by_key(t.strip_optional(f.type))
                field_schema = self.schema(f.type) if by_key else self.result_schema(f.type)
                props[f.name] = field_schema
            # a field that may be absent is left out of the JSON when it is none
            required = [f.name for f in rec.fields.values() if not f.may_be_absent]
            return {"type": "object", "properties": props, "required": required,
                    "additionalProperties": False}
        if isinstance(typ, t.Named) and typ.kind == "union":
            union = self.world.unions[typ.name]
            options = []
            for tag, rec_name in union.variants.items():
                option = self.result_schema(t.Named("record", rec_name))
                option["properties"] = {union.tag_field: {"type": "string", "enum": [tag]},
                                        **option["properties"]}
                option["required"] = [union.tag_field, *option["required"]]
                options.append(option)
            return {"anyOf": options}
        if typ == t.JSON:
            return {}
        if isinstance(typ, t.Prim) and typ.name in ("date", "datetime"):
            return {"type": "string"}
        return self.schema(typ)

    def shows(self, typ: t.Type, seen: frozenset[str] = frozenset()) -> tuple[Any, ...] | None:
        """Where a result of type ``typ`` shows whole rows (``row[E]``), as the shape
        ``Episode.shown`` reads: None where it shows none. The entity a result is (``-> E``)
        is shown whole already, by its own ``export``."""
        base = t.strip_optional(typ)
        if isinstance(base, (t.ListOf, t.SetOf, t.MapOf)):
            inner = self.shows(base.value if isinstance(base, t.MapOf) else base.element, seen)
            kind = "map" if isinstance(base, t.MapOf) else "list"
            return None if inner is None else (kind, inner)
        if not isinstance(base, t.Named) or base.name in seen:
            return None
        if base.kind == "entity":
            table = self.world.table_of(base.name)
            return ("row", table.name) if base.whole_row and table is not None else None
        if base.kind == "record":
            fields = tuple((f.name, py_name(f.name), shape)
                           for f in self.world.records[base.name].fields.values()
                           if (shape := self.shows(f.type, seen | {base.name})) is not None)
            return ("record", fields) if fields else None
        if base.kind == "union":
            union = self.world.unions[base.name]
            variants = tuple((tag, shape[1]) for tag, rec in union.variants.items()
                             if (shape := self.shows(t.Named("record", rec), seen)) is not None)
            return ("union", union.tag_field, variants) if variants else None
        return None

    def record_schema(self, name: str, tag: tuple[str, str] | None) -> dict[str, Any]:
        rec = self.world.records[name]
        props: dict[str, Any] = {}
        if tag is not None:
            props[tag[0]] = {"type": "string", "enum": [tag[1]]}
        for f in rec.fields.values():
            if tag is not None and f.name == tag[0]:
                continue
            schema = self.schema(f.type)
            if f.default is not None and not isinstance(f.type, t.Optional):
                schema = {"anyOf": [schema, {"type": "null"}]}
            props[f.name] = schema
        return {"type": "object", "properties": props, "required": list(props),
                "additionalProperties": False}
