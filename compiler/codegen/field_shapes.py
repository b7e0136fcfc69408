"""A field's value shape, as a generated declaration names it (``field(sh.map(sh.TEXT,
sh.TEXT))``), and what the runtime derives from it (:mod:`worldspec.runtime.value_shapes`).

A table over the semantic types, as the other type tables: a type is its shape's expression,
and this module also says which text maker and which schema the runtime derives from that
shape, so that a declaration writes ``text=`` or ``schema=`` only where the field's differ
(a world whose stored values may be of any JSON type, ``arguments: dynamic``). A type whose
shape would name something not yet defined where the class body runs (a record declared
later, or the class itself; a union whose ``TaggedUnion``, which follows its last member
class, is not declared yet) has no shape: its field declares its loader as a function.
"""

from __future__ import annotations

import copy
import json

from worldspec.compiler import types as t
from worldspec.compiler.codegen.names import union_object
from worldspec.compiler.codegen.pytypes import TypeTables
from worldspec.runtime import schema as js

__all__ = ["FieldShapes"]

#: builtin type name -> its shape's constant
_SCALAR_SHAPES = {
    "str": "sh.TEXT", "int": "sh.INT", "float": "sh.FLOAT", "number": "sh.NUMBER",
    "bool": "sh.BOOL", "date": "sh.DATE", "datetime": "sh.DATETIME", "duration": "sh.DURATION",
    "json": "sh.JSON",
}
#: builtin type name -> the text maker its shape derives, and whether it gives ``null``
_SCALAR_TEXTS: dict[str, tuple[str | None, bool]] = {
    "str": ("v.str_text", False), "int": ("v.int_text", True),
    "float": ("v.float_text", True), "number": ("v.number_text", True),
}
#: the scalars whose refinement's schema a shape derives (their export is themselves)
_SCHEMA_SCALARS = ("str", "int", "float", "number")


class FieldShapes:
    """The shapes of a world's fields (``defined``: the records whose classes are defined
    where a class body runs, in declaration order: see :meth:`code`)."""

    def __init__(self, tables: TypeTables) -> None:
        self.tables = tables
        #: the type tables of a world without ``arguments: dynamic``: what a shape derives
        self.typed = copy.copy(tables)
        self.typed.dynamic = False

    def code(self, typ: t.Type, defined: frozenset[str]) -> str | None:
        """The expression of a stored value's shape, or None where it names a union or a
        record not in ``defined``."""
        if isinstance(typ, t.Prim):
            shape = _SCALAR_SHAPES[typ.name]
            return shape if typ.name == "json" else self._refined(typ, shape)
        if isinstance(typ, t.Optional):
            inner = self.code(typ.inner, defined)
            return None if inner is None else f"sh.optional({inner})"
        if isinstance(typ, (t.ListOf, t.SetOf)):
            inner = self.code(typ.element, defined)
            kind = "list" if isinstance(typ, t.ListOf) else "set"
            return None if inner is None else self._refined(typ, f"sh.{kind}({inner})")
        if isinstance(typ, t.MapOf):
            key, value = self.code(typ.key, defined), self.code(typ.value, defined)
            if key is None or value is None:
                return None
            return self._refined(typ, f"sh.map({key}, {value})")
        if isinstance(typ, t.Named):
            if typ.kind == "entity":  # stored as its key
                return self.code(self.tables.key_type(typ.name), defined)
            if typ.kind == "enum":
                return f"sh.enum({self.tables.class_name(typ.name)})"
            if typ.kind == "record" and typ.name in defined:
                return f"sh.record({self.tables.class_name(typ.name)})"
            if typ.kind == "union" and self.union_defined(typ.name, defined):
                return f"sh.union({union_object(typ.name)})"
        return None

    def union_defined(self, name: str, defined: frozenset[str]) -> bool:
        """Whether union ``name``'s ``TaggedUnion`` is declared where a class body runs
        (it follows the last of its members: see the generator's ``class_view``)."""
        members = self.tables.world.unions[name].variants.values()
        return bool(members) and all(member in defined for member in members)

    def _refined(self, typ: t.Type, shape: str) -> str:
        ref = getattr(typ, "refinement", None)
        if ref is None:
            return shape
        limits = [repr(ref.low), repr(ref.high)]
        while limits and limits[-1] == "None":
            limits.pop()
        if ref.pattern is not None:
            limits.append(f"pattern={ref.pattern!r}")
        return f"sh.refined({', '.join([shape, *limits])})"

    # ------------------------------------------------ what the runtime derives
    def text(self, typ: t.Type) -> tuple[str | None, bool]:
        """The text maker a shape derives (``value_shapes``), and whether it gives ``null``
        for None."""
        if isinstance(typ, t.Named) and typ.kind == "entity":
            return self.text(self.tables.key_type(typ.name))
        if isinstance(typ, t.Prim):
            return _SCALAR_TEXTS.get(typ.name, (None, False))
        if isinstance(typ, t.Named) and typ.kind == "enum":
            return f"enum_text({self.tables.class_name(typ.name)})", True
        if isinstance(typ, t.Named) and typ.kind == "record":
            keeps = self.tables.immutable(typ)
            return ("v.record_text" if keeps else None), keeps
        if isinstance(typ, t.Named) and typ.kind == "union":  # its members' texts
            return self.typed.text_maker(typ), False
        if isinstance(typ, t.Optional):
            inner, takes_none = self.text(typ.inner)
            if inner is None or takes_none:
                return inner, inner is not None
            return f"optional_text({inner})", True
        if isinstance(typ, (t.ListOf, t.SetOf)):
            element = self._stored(typ.element)
            if isinstance(element, t.Prim) and element.name == "str":
                return "v.str_list_text", True
            if isinstance(element, t.Named) and element.kind == "record" and \
                    self.tables.immutable(element):
                return "v.records_text", True
            return None, False
        if isinstance(typ, t.MapOf) and self._stored(typ.key) == t.STR:
            value = self._stored(typ.value)
            if self.typed.exports_as_is(value):
                return ("v.map_text", True) if self.tables.immutable(typ) else (None, False)
            if isinstance(value, t.Named) and value.kind == "record" and \
                    self.tables.immutable(value):
                return "v.record_map_text", True
            if isinstance(value, t.Named) and value.kind == "union" and \
                    self.tables.union_has_text(value.name):  # its members' texts joined
                return self.typed.text_maker(typ), True
        return None, False

    def _stored(self, typ: t.Type) -> t.Type:
        """An entity as its key's type, refinements aside (what a shape's kind says)."""
        if isinstance(typ, t.Named) and typ.kind == "entity":
            typ = self.tables.key_type(typ.name)
        if isinstance(typ, t.Prim) and typ.refinement is not None:
            return t.Prim(typ.name)
        return typ

    def schema(self, typ: t.Type) -> str | None:
        """The JSON text of the schema a shape derives (a refined scalar's, or null or
        one), or None."""
        if isinstance(typ, t.Named) and typ.kind == "entity":
            return self.schema(self.tables.key_type(typ.name))
        if isinstance(typ, t.Optional):
            inner = self.schema(typ.inner)
            return None if inner is None else json.dumps(js.nullable(json.loads(inner)))
        ref = getattr(typ, "refinement", None)
        if isinstance(typ, t.Prim) and typ.name in _SCHEMA_SCALARS and ref is not None:
            return json.dumps(js.scalar(typ.name, ref.low, ref.high, ref.pattern))
        return None
