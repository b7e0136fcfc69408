"""A world's tool registry as code: each tool's ``@tool(...)`` declaration and its schemas.

The runtime (:mod:`worldspec.runtime.arguments`, imported as ``arg``) loads each call's
arguments from what the declaration says, so no function of the generated module loads them:
a parameter says how its argument loads (``arg.TEXT``, ``arg.row('orders')``,
``arg.optional(arg.enum_of(Color))``, ``arg.refined(arg.INT, 1, 5)``: a table over the types,
as the type tables' loader is), its default, its own message; a tool's declaration decorates
its method and says its description (written here only, never as the method's docstring,
which ``python -OO`` drops), its result's schema, how a union result exports; after the
world's class, ``<World>.TOOLS = tools(<World>)`` collects them. A parameter several tools
declare alike is written once, as a module constant ``_PARAM_<name>``, and so is a row
(with the spec's not-found message) that several parameters take, ``_ROW_<table>``.

Schemas are what :class:`~worldspec.compiler.codegen.pytypes.TypeTables` decides, written
with the runtime's schema functions (:mod:`worldspec.runtime.schema`, imported as ``js``):
``js.closed({...})``, ``js.array(js.STRING)``, ``js.members(OrderStatus)``... A record's or
an entity's result is its class (``returns=js.array(Doctor)``), whose schema the runtime
builds from its fields (see :class:`ResultClasses`). Another named type's schema that the
registry shows more than once is written once, as a module constant (``_SCHEMA_<Class>`` for
what an agent sends, ``_RESULT_<Class>`` for what a tool returns), and named wherever it
appears. The constants come before the world's class, whose methods' declarations name them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from worldspec.compiler import types as t
from worldspec.compiler.codegen.exprs import Env, ExprCompiler
from worldspec.compiler.codegen.names import file_label, py_name
from worldspec.compiler.codegen.pycode import (
    Assign,
    Attr,
    Call,
    Const,
    DictOf,
    Expr,
    Lambda,
    ListOf,
    Name,
    Raw,
    TupleOf,
    call,
    print_block,
)
from worldspec.compiler.codegen.pytypes import TypeTables
from worldspec.compiler.model import ParamInfo, ToolInfo, WorldModel
from worldspec.runtime import schema as js

__all__ = ["Registry", "RegistryWriter", "ResultClasses", "SchemaWriter"]

#: the scalar schemas the runtime names (``js.STRING``...), by their JSON text
_SCALARS = {
    json.dumps(schema): name for name, schema in (
        ("STRING", {"type": "string"}), ("INTEGER", {"type": "integer"}),
        ("NUMBER", {"type": "number"}), ("BOOLEAN", {"type": "boolean"}),
        ("NULL", {"type": "null"}),
        ("JSON_ANY", {"type": ["string", "number", "integer", "boolean", "object", "array",
                               "null"]}))
}
#: the limits of an array's and an object's schema: the schema functions' keywords
_ARRAY_LIMITS = {"uniqueItems": "unique", "minItems": "min_items", "maxItems": "max_items"}
_MAP_LIMITS = {"minProperties": "min_properties", "maxProperties": "max_properties"}
#: a scalar's schema and its refinement's keys, by the scalar's name, for ``js.scalar``
_SCALAR_SCHEMAS = (
    ("str", {"type": "string"}, ("minLength", "maxLength")),
    ("int", {"type": "integer"}, ("minimum", "maximum")),
    ("float", {"type": "number"}, ("minimum", "maximum")),
    ("date", {"type": "string", "format": "date"}, ("minLength", "maxLength")),
    ("datetime", {"type": "string", "format": "date-time"}, ("minLength", "maxLength")),
    ("duration", {"type": "number", "description": "seconds"}, ("minimum", "maximum")),
)
_CLOSED_KEYS = ["type", "properties", "required", "additionalProperties"]


def _js(name: str) -> Expr:
    return Attr(Name("js"), name)


def _refined_scalar(schema: dict[str, Any]) -> Expr | None:
    """``js.scalar(name, low, high, pattern=...)`` where it writes ``schema`` exactly."""
    for name, base, (low_key, high_key) in _SCALAR_SCHEMAS:
        keys = list(schema)
        if keys[:len(base)] != list(base) or any(schema[k] != v for k, v in base.items()):
            continue
        limits = keys[len(base):]
        order = [k for k in (low_key, high_key, "pattern") if k in limits]
        if not limits or limits != order:
            continue
        args: list[Expr] = [Const(name)]
        if high_key in schema:
            args += [Const(schema.get(low_key)), Const(schema[high_key])]
        elif low_key in schema:
            args.append(Const(schema[low_key]))
        keywords = (("pattern", Const(schema["pattern"])),) if "pattern" in schema else ()
        return Call(_js("scalar"), tuple(args), keywords)
    return None


def _subtrees(schema: Any) -> Iterator[str]:
    """The JSON text of every object inside ``schema``, itself included."""
    if isinstance(schema, dict):
        yield json.dumps(schema)
        for value in schema.values():
            yield from _subtrees(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _subtrees(value)


def _hinted(tables: TypeTables, typ: t.Type) -> Any:
    """The result schema the runtime's ``js.hinted`` gives a field of type ``typ`` from its
    annotation (``TypeTables.annotation``), or None where it gives none: the annotation
    says no refinement, no set, no union."""
    if isinstance(typ, t.Prim):
        return None if typ.name == "json" else tables.result_schema(t.Prim(typ.name))
    if isinstance(typ, t.Optional):
        inner = _hinted(tables, typ.inner)
        return None if inner is None else js.nullable(inner)
    if isinstance(typ, t.ListOf):
        items = _hinted(tables, typ.element)
        return None if items is None else js.array(items)
    if isinstance(typ, t.MapOf):
        values = _hinted(tables, typ.value)
        return None if values is None else js.mapping(values)
    if isinstance(typ, t.Named) and typ.kind == "entity":  # annotated as its key
        return _hinted(tables, tables.key_type(typ.name))
    if isinstance(typ, t.Named) and typ.kind in ("enum", "record"):
        return tables.result_schema(typ)  # the record's class: its own fields' schemas
    return None


class ResultClasses:
    """Which records' and entities' classes stand for their result's schema (the runtime's
    ``js.result_of`` builds it from the fields' annotations and their ``schema=``), and the
    ``schema=`` each of their fields declares.

    A class stands for its schema where every field's ``schema=`` is plain (no object
    inside: a whole row, a union) and every record its fields' annotations name does too;
    elsewhere the registry spells the schema out and the fields declare none."""

    def __init__(self, tables: TypeTables) -> None:
        self.tables = tables
        self._derivable: dict[str, bool] = {}

    def field_schema(self, typ: t.Type) -> Any:
        """The schema a field of type ``typ`` must declare: what the type tables decide for
        it in its record's result, or None where its annotation says that already."""
        base = t.strip_optional(typ)
        by_key = isinstance(base, t.Named) and base.kind == "entity" and not base.whole_row
        decided = self.tables.schema(typ) if by_key else self.tables.result_schema(typ)
        hinted = _hinted(self.tables, typ)
        return None if json.dumps(hinted) == json.dumps(decided) else decided

    def derivable(self, name: str) -> bool:
        """Whether record or entity ``name``'s class stands for its result's schema."""
        known = self._derivable.get(name)
        if known is not None:
            return known
        self._derivable[name] = True  # a record naming itself: as the others decide
        fields = self.tables.world.records[name].fields.values()
        self._derivable[name] = found = all(
            self._plain(self.field_schema(f.type)) and
            all(self.derivable(n) for n in _records_named(self.tables, f.type))
            for f in fields)
        return found

    @staticmethod
    def _plain(schema: Any) -> bool:
        return schema is None or '"properties"' not in json.dumps(schema)


def _records_named(tables: TypeTables, typ: t.Type) -> Iterator[str]:
    """The records a field's annotation names (whose classes derive their schemas)."""
    if isinstance(typ, (t.Optional, t.ListOf, t.SetOf)):
        yield from _records_named(tables, typ.inner if isinstance(typ, t.Optional)
                                  else typ.element)
    elif isinstance(typ, t.MapOf):
        yield from _records_named(tables, typ.value)
    elif isinstance(typ, t.Named) and typ.kind == "record":
        yield typ.name


class SchemaWriter:
    """Schemas as calls of the runtime's vocabulary, a named type's that recurs as a module
    constant (see the module's doc); a record's or an entity's result as its class, whose
    result schema the runtime builds from its fields (``classes``)."""

    def __init__(self, world: WorldModel, tables: TypeTables, schemas: list[Any],
                 classes: bool = True) -> None:
        self.world = world
        self.tables = tables
        #: a record's or an entity's result schema (JSON text) -> its class
        self._classes: dict[str, str] = {}
        results = ResultClasses(tables)
        if classes:
            for name, rec in world.records.items():
                if not results.derivable(name):
                    continue
                kind = "entity" if rec.key is not None else "record"
                text = json.dumps(tables.result_schema(t.Named(kind, name)))
                self._classes.setdefault(text, tables.class_name(name))
        self._results = False
        #: enum values (JSON text) -> the enum's class, for ``js.members``
        self._enums: dict[str, str] = {}
        for name, info in world.enums.items():
            values = json.dumps([m.value for m in info.members.values()])
            self._enums.setdefault(values, tables.class_name(name))
        uses = Counter(text for schema in schemas for text in _subtrees(schema))
        #: a recurring named type's schema (JSON text) -> (constant, schema)
        self._named: dict[str, tuple[str, Any]] = {}
        for name, schema, prefix in self._named_schemas():
            text = json.dumps(schema)
            if uses[text] > 1 and text not in self._named:
                self._named[text] = (f"{prefix}{self.tables.class_name(name)}", schema)
        #: the constants' definitions, each after those it names
        self.definitions: list[Assign] = []
        self._defined: set[str] = set()

    def _named_schemas(self) -> Iterator[tuple[str, Any, str]]:
        w, tables = self.world, self.tables
        for name, rec in w.records.items():
            kind = "entity" if rec.key is not None else "record"
            yield name, tables.result_schema(t.Named(kind, name)), "_RESULT_"
            yield name, tables.schema(t.Named("record", name)), "_SCHEMA_"
        for name in w.unions:
            yield name, tables.result_schema(t.Named("union", name)), "_RESULT_"
            yield name, tables.schema(t.Named("union", name)), "_SCHEMA_"

    def result(self, schema: Any) -> Expr:
        """A result's ``schema`` as code: a record's or an entity's as its class."""
        self._results = True
        try:
            return self.expr(schema)
        finally:
            self._results = False

    def lines(self) -> list[str]:
        """The constants, one statement each (after every :meth:`expr`)."""
        return print_block(self.definitions, 0) if self.definitions else []

    def expr(self, schema: Any, inline: bool = False) -> Expr:
        """``schema`` as code (``inline``: itself, not its constant)."""
        if not isinstance(schema, dict):
            if isinstance(schema, list):
                return ListOf(tuple(self.expr(x) for x in schema))
            return Const(schema)
        text = json.dumps(schema)
        if text in _SCALARS:
            return _js(_SCALARS[text])
        if self._results and text in self._classes:
            return Name(self._classes[text])
        named = self._named.get(text)
        if named is not None and not inline:
            return self._constant(*named)
        keys = list(schema)
        if keys == ["anyOf"] and isinstance(schema["anyOf"], list):
            options = schema["anyOf"]
            if len(options) == 2 and options[1] == {"type": "null"}:
                return call(_js("nullable"), self.expr(options[0]))
            return call(_js("any_of"), *(self.expr(x) for x in options))
        if keys[:2] == ["type", "items"] and schema["type"] == "array" and \
                set(keys[2:]) <= set(_ARRAY_LIMITS):
            return Call(_js("array"), (self.expr(schema["items"]),),
                        tuple((_ARRAY_LIMITS[k], Const(schema[k])) for k in keys[2:]))
        if keys[:2] == ["type", "additionalProperties"] and schema["type"] == "object" and \
                isinstance(schema["additionalProperties"], dict) and \
                set(keys[2:]) <= set(_MAP_LIMITS):
            return Call(_js("mapping"), (self.expr(schema["additionalProperties"]),),
                        tuple((_MAP_LIMITS[k], Const(schema[k])) for k in keys[2:]))
        refined = _refined_scalar(schema)
        if refined is not None:
            return refined
        if keys == ["type", "enum"] and schema["type"] == "string" and \
                all(isinstance(x, str) for x in schema["enum"]):
            cls = self._enums.get(json.dumps(schema["enum"]))
            if cls is not None:
                return call(_js("members"), Name(cls))
            return call(_js("text_in"), *(Const(x) for x in schema["enum"]))
        closed = self._closed(schema)
        if closed is not None:
            return closed
        return DictOf(tuple((Const(k), self.expr(v)) for k, v in schema.items()))

    def _closed(self, schema: dict[str, Any]) -> Expr | None:
        """``js.closed(properties, optional=...)`` where it writes ``schema`` exactly."""
        if list(schema) != _CLOSED_KEYS or schema["type"] != "object" or \
                schema["additionalProperties"] is not False or \
                not isinstance(schema["properties"], dict):
            return None
        names = list(schema["properties"])
        optional = tuple(name for name in names if name not in schema["required"])
        if [name for name in names if name not in optional] != schema["required"]:
            return None
        properties = DictOf(tuple((Const(k), self.expr(v))
                                  for k, v in schema["properties"].items()))
        if not optional:
            return call(_js("closed"), properties)
        return Call(_js("closed"), (properties,),
                    (("optional", TupleOf(tuple(Const(x) for x in optional))),))

    def _constant(self, name: str, schema: Any) -> Expr:
        if name not in self._defined:
            self._defined.add(name)
            value = self.expr(schema, inline=True)  # defines the constants it names first
            self.definitions.append(Assign(Name(name), value))
        return Name(name)


#: the runtime's argument type of each builtin scalar (``arg.TEXT``...), by its name
_SCALAR_ARGUMENTS = {"str": "TEXT", "int": "INT", "float": "FLOAT", "number": "NUMBER",
                     "bool": "BOOL", "date": "DATE", "datetime": "DATETIME",
                     "duration": "DURATION", "json": "JSON"}


def _arg(name: str) -> Expr:
    return Attr(Name("arg"), name)


@dataclass(frozen=True, slots=True)
class Registry:
    """A world's tool registry as code: the module constants its declarations name (lines,
    before the world's class), each tool's declaration (the ``tool(...)`` call decorating
    its method, by the tool's name) and the statement making the registry (lines, after
    the class)."""

    constants: list[str]
    declarations: dict[str, Expr]
    statement: list[str]


class RegistryWriter:
    """The ``tools(...)`` registry of a world (see the module's doc)."""

    def __init__(self, world: WorldModel, tables: TypeTables, x: ExprCompiler,
                 class_name: str) -> None:
        self.world = world
        self.tables = tables
        self.x = x
        self.class_name = class_name
        schemas: list[Any] = []
        for info in world.tools.values():
            schemas += [tables.schema(p.type) for p in info.params]
            if info.returns is not None:
                schemas.append(tables.result_schema(info.returns))
        self.schemas = SchemaWriter(world, tables, schemas)
        self._param_constants: list[Assign] = []
        self._row_constants: list[Assign] = []

    def registry(self, checks: dict[str, bool], given: set[str]) -> Registry:
        """Each tool's ``@tool(...)`` declaration, the constants they name (the schemas, the
        rows and the parameters that several tools share) and ``<World>.TOOLS =
        tools(<World>)``. ``checks``: whether a call of each tool must check the invariants;
        ``given``: the tools whose method takes the names of the arguments given."""
        tools = list(self.world.tools.values())
        rows = self._shared_rows([p for info in tools for p in info.params])
        params = {(info.name, p.name): self.param(p, rows) for info in tools
                  for p in info.params}
        shared = self._shared(params)
        declarations = {
            info.name: self.tool(info, [shared.get(params[info.name, p.name].flat(),
                                                   params[info.name, p.name])
                                        for p in info.params],
                                 checks.get(info.name, True), info.name in given)
            for info in tools}
        rules = self.world.config.arguments
        keywords: list[tuple[str, Expr]] = []
        if rules in ("python", "dynamic"):
            keywords += [("arguments", Const(rules)), ("python_class", Const(
                self.world.config.class_name or self.world.name))]
        registry = Call(Name("tools"), (Name(self.class_name),), tuple(keywords))
        statement = Assign(Attr(Name(self.class_name), "TOOLS"), registry)
        constants = self.schemas.lines()
        for defined in (self._row_constants, self._param_constants):
            if defined:
                constants += print_block(defined, 0)
        return Registry(constants, declarations, print_block([statement], 0))

    def _shared_rows(self, params: list[ParamInfo]) -> dict[str, Expr]:
        """The rows that parameters take with the spec's not-found message, each a constant
        ``_ROW_<table>`` (one per table and message) named wherever it appears:
        ``param('doctor', _ROW_doctors, "The doctor's id.")``. So each message is written
        once, with its table, among the module's constants."""
        shared: dict[str, Expr] = {}
        taken: set[str] = set()
        for p in params:
            found = self._row(p)
            if found is None or p.not_found is None:
                continue
            table, row = found
            text = row.flat()
            if text in shared:
                continue
            name = f"_ROW_{py_name(table)}"
            while name in taken:
                name += "_"
            taken.add(name)
            shared[text] = Name(name)
            self._row_constants.append(Assign(Name(name), row))
        return shared

    def _shared(self, params: dict[tuple[str, str], Expr]) -> dict[str, Expr]:
        """The parameters declared alike by several tools (by their code), each a constant
        ``_PARAM_<name>`` named wherever it appears."""
        uses = Counter(expr.flat() for expr in params.values())
        shared: dict[str, Expr] = {}
        taken: set[str] = set()
        for (_, pname), expr in params.items():
            text = expr.flat()
            if uses[text] < 2 or text in shared:
                continue
            name = f"_PARAM_{py_name(pname)}"
            while name in taken:
                name += "_"
            taken.add(name)
            shared[text] = Name(name)
            self._param_constants.append(Assign(Name(name), expr))
        return shared

    def tool(self, info: ToolInfo, params: list[Expr], checks: bool, given: bool) -> Expr:
        """The ``tool(...)`` declaration of a tool (its method's decorator)."""
        args: list[Expr] = [Const(info.doc or ""), *params]
        keywords: list[tuple[str, Expr]] = []
        if info.read_only:
            keywords.append(("read_only", Const(True)))
        if py_name(info.name) != info.name:
            keywords.append(("name", Const(info.name)))
        if not (info.read_only or checks):
            keywords.append(("checks", Const(False)))
        keywords.append(("where", Const(f"{file_label(info.node.span.file)}:"
                                        f"{info.node.span.line}")))
        if info.returns is not None:
            keywords.append(("returns", self.schemas.result(
                self.tables.result_schema(info.returns))))
            shows = self.tables.shows(info.returns)
            if shows is not None:
                keywords.append(("shows", _data(shows)))
            if _has_union(info.returns):
                # a union value exports with its tag, which only the static type knows
                keywords.append(("export", Lambda(("value",), Raw(
                    self.tables.exporter(info.returns, "value"), atomic=False))))
        if given:
            keywords.append(("given", Const(True)))
        return Call(Name("tool"), tuple(args), tuple(keywords))

    def param(self, p: ParamInfo, rows: dict[str, Expr]) -> Expr:
        """The ``param(...)`` declaration of a tool's parameter (``rows``: the shared rows'
        constants, by the row's code)."""
        args: list[Expr] = [Const(p.name), self.argument(p, rows)]
        if p.doc:
            args.append(Const(p.doc))
        keywords: list[tuple[str, Expr]] = []
        optional = isinstance(p.type, t.Optional)
        if p.default is not None:
            default = self.x.value(p.default, Env(ep="ep"))
            # an optional parameter's default none is what it is without one
            if not (optional and isinstance(default, Const) and default.value is None):
                keywords.append(("default", default) if _constant(default, p.type) else
                                ("default_from", Lambda(("ep",), default)))
        if p.not_found is not None and self._row(p) is None:
            keywords.append(("not_found", self._message(p)))
        return Call(Name("param"), tuple(args), tuple(keywords))

    def _message(self, p: ParamInfo) -> Expr:
        """The parameter's own message: ``lambda ep, key: <message>``, or the text itself
        where it is a constant."""
        assert p.not_found is not None
        message = self.x.value(p.not_found, Env(ep="ep", locals={p.name: "key"}))
        if isinstance(message, Const) and isinstance(message.value, str):
            return message
        return Lambda(("ep", "key"), message)

    def argument(self, p: ParamInfo, rows: dict[str, Expr]) -> Expr:
        """The argument type of ``p``: how its argument loads (an entity: its row, with the
        parameter's not-found message; a shared row: its constant)."""
        found = self._row(p)
        if found is None:
            return self.argument_type(p.type)
        row = rows.get(found[1].flat(), found[1])
        return call(_arg("optional"), row) if isinstance(p.type, t.Optional) else row

    def _row(self, p: ParamInfo) -> tuple[str, Expr] | None:
        """An entity parameter's table and row, ``arg.row(table, key, not_found=...)``
        (``key``: where it is no plain text), or None for a parameter of another type."""
        base = t.strip_optional(p.type)
        if not (isinstance(base, t.Named) and base.kind == "entity"):
            return None
        table = self.world.table_of(base.name)
        name = table.name if table else base.name.lower()
        key = self.argument_type(self.tables.key_type(base.name))
        args: list[Expr] = [Const(name)]
        if key != _arg("TEXT"):
            args.append(key)
        keywords = (("not_found", self._message(p)),) if p.not_found is not None else ()
        return name, Call(_arg("row"), tuple(args), keywords)

    def argument_type(self, typ: t.Type) -> Expr:
        """The runtime's argument type for ``typ`` (a table over the types, as the type
        tables' loader is)."""
        ref = getattr(typ, "refinement", None)
        if isinstance(typ, t.Prim):
            out: Expr = _arg(_SCALAR_ARGUMENTS[typ.name])
        elif isinstance(typ, t.Optional):
            return call(_arg("optional"), self.argument_type(typ.inner))
        elif isinstance(typ, t.ListOf) and _plain_str(typ.element):
            out = _arg("TEXT_LIST")
        elif isinstance(typ, t.ListOf):
            out = call(_arg("list_of"), self.argument_type(typ.element))
        elif isinstance(typ, t.SetOf):
            out = call(_arg("set_of"), self.argument_type(typ.element))
        elif isinstance(typ, t.MapOf):
            out = call(_arg("map_of"), self.argument_type(typ.key),
                       self.argument_type(typ.value))
        elif isinstance(typ, t.Named) and typ.kind == "enum":
            return call(_arg("enum_of"), Name(self.tables.class_name(typ.name)))
        elif isinstance(typ, t.Named) and typ.kind == "entity":  # its key
            return self.argument_type(self.tables.key_type(typ.name))
        elif isinstance(typ, t.Named) and typ.kind in ("record", "union"):
            load = Name(f"_load_{typ.name}") if typ.kind == "union" else \
                Attr(Name(self.tables.class_name(typ.name)), "load")
            return call(_arg("record"), load, self.schemas.expr(self.tables.schema(typ)))
        else:
            raise AssertionError(f"no argument type for {typ}")
        if ref is None or (ref.low is None and ref.high is None and ref.pattern is None):
            return out
        limits = [Const(ref.low), Const(ref.high)] if ref.high is not None else \
            [Const(ref.low)] if ref.low is not None else []
        pattern = (("pattern", Const(ref.pattern)),) if ref.pattern is not None else ()
        return Call(_arg("refined"), (out, *limits), pattern)


def _constant(default: Expr, typ: t.Type) -> bool:
    """Whether a parameter's default is a constant the registry may hold as it is (a text, a
    number or a bool: not null, which would say "no default"; or an enum member's constant);
    any other default is computed by the episode at each call."""
    if isinstance(default, Const):
        return isinstance(default.value, (str, int, float))
    base = t.strip_optional(typ)
    return isinstance(default, Name) and isinstance(base, t.Named) and base.kind == "enum"


def _data(value: Any) -> Expr:
    """Tuples of literals as code the printer may split."""
    if isinstance(value, tuple):
        return TupleOf(tuple(_data(x) for x in value))
    return Const(value)


def _plain_str(typ: t.Type) -> bool:
    """``str`` without a refinement (``Prim`` equality ignores refinements)."""
    return isinstance(typ, t.Prim) and typ.name == "str" and typ.refinement is None


def _has_union(typ: t.Type) -> bool:
    base = t.strip_optional(typ)
    if isinstance(base, (t.ListOf, t.SetOf)):
        return _has_union(base.element)
    if isinstance(base, t.MapOf):
        return _has_union(base.value)
    return isinstance(base, t.Named) and base.kind == "union"
