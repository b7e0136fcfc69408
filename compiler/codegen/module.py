"""One world -> one Python package: view models computed here, laid out by a template.

The template (``codegen_templates/world.py.jinja``) stays logic-light: this
module hands it finished code blocks and names. Output is byte-identical for
identical input: everything is ordered by declaration, every literal is
emitted with ``repr`` or ``json``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import jinja2

from worldspec.compiler import types as t
from worldspec.compiler.codegen.calls import GIVEN_ARGUMENTS
from worldspec.compiler.codegen.checks import explained_condition, is_bool, names_read
from worldspec.compiler.codegen.exprs import Env, ExprCompiler
from worldspec.compiler.codegen.field_shapes import FieldShapes
from worldspec.compiler.codegen.invariants import local_invariant, pair_invariant
from worldspec.compiler.codegen.names import (
    CONTRACT_IMPORTS,
    OPTIONAL_IMPORTS,
    PACKAGE_TEXT,
    TASK_REGISTRY,
    UNION_CLASS,
    const_name,
    enum_member,
    file_label,
    member_constant,
    py_name,
    snake_case,
    union_object,
)
from worldspec.compiler.codegen.pycode import (
    Assign,
    Attr,
    Const,
    DictOf,
    Expr,
    ExprStmt,
    For,
    FunctionDef,
    If,
    Name,
    Not,
    Pass,
    Raise,
    Return,
    Stmt,
    TupleOf,
    call,
    print_block,
    rt,
    text_literal,
)
from worldspec.compiler.codegen.pytypes import TypeTables
from worldspec.compiler.codegen.registry import RegistryWriter, ResultClasses, SchemaWriter
from worldspec.compiler.codegen.stmts import StatementCompiler, anchor_of
from worldspec.compiler.constants import constant_value
from worldspec.compiler.model import (
    DEFAULT_REWARD,
    FieldInfo,
    ProgramModel,
    RecordInfo,
    ToolInfo,
    WorldModel,
)
from worldspec.dsl import nodes as n
from worldspec.runtime.contract import data_path
from worldspec.runtime.tasks import CHECK_PREFIX, PARAMETERS

__all__ = ["GeneratedPackage", "generate_world", "GENERATOR_VERSION"]

GENERATOR_VERSION = "0.1.0"
#: the file of a generated package that holds the world's policy
_POLICY_FILE = "policy.md"
_INDENT = "    "
#: the longest line the generator aims at (a longer literal stays whole)
_LINE = 99


@dataclass
class GeneratedPackage:
    """The files of one generated world package, path -> text."""

    name: str
    world: str
    files: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class MemberView:
    """An enum member: its Python name and its value (a literal)."""

    name: str
    value: str


@dataclass(frozen=True)
class EnumView:
    """An enum class, and its members as module constants (``constants``: the names, a
    line's worth each)."""

    name: str
    doc: str
    members: list[MemberView]
    constants: list[str]


@dataclass(frozen=True)
class FieldView:
    """A field's declaration: ``head`` (``name: annotation = field(``) and the arguments
    of ``field`` with the closing parenthesis: on the same line when they fit (one line),
    else on the lines below."""

    head: str
    lines: list[str]
    same_line: bool


@dataclass(frozen=True)
class ClassView:
    """A record (base ``Record``) or an entity (base ``Row``, with its ``entity`` name
    where it differs from the class's) and its fields."""

    name: str
    base: str
    doc: str
    entity: str
    fields: list[FieldView]
    #: the unions declared right after the class (it is their last member)
    unions: list[str] = field(default_factory=list)


def _template() -> jinja2.Template:
    import importlib.resources as resources

    try:
        text = resources.files("worldspec.codegen_templates").joinpath("world.py.jinja").read_text(
            encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        from pathlib import Path

        text = (Path(__file__).resolve().parents[2] / "codegen_templates" /
                "world.py.jinja").read_text(encoding="utf-8")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)
    env.policies["json.dumps_kwargs"] = {"ensure_ascii": True, "sort_keys": False}
    return env.from_string(text)


#: exporters that are functions of their own, by :meth:`TypeTables.export_kind`
_EXPORTERS = {"list": "list", "dict": "dict"}


def _tuple_display(items: list[str]) -> str:
    """A tuple display of ``items`` (expressions): ``()``, ``(a,)``, ``(a, b)``."""
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _doc_text(text: str) -> str:
    """A docstring's literal; ``repr`` keeps any text inert."""
    return repr(text.strip())


def _wrapped(names: list[str], width: int) -> list[str]:
    """``names`` joined with commas, as lines of at most ``width`` characters (a line
    holds one name at least)."""
    lines: list[str] = []
    for name in names:
        if lines and len(lines[-1]) + len(name) + 2 <= width:
            lines[-1] += ", " + name
        else:
            lines.append(name)
    return lines


def _declaration(head: str, args: list[str]) -> FieldView:
    """A class body's declaration ``head`` (``name: annotation = field(``) with its
    arguments: on the same line when they fit, else as many on a line as fit below."""
    if len(_INDENT + head) + len(", ".join(args)) + 1 <= _LINE:
        return FieldView(head, [", ".join(args) + ")"], True)
    lines = _wrapped(args, _LINE - 2 * len(_INDENT) - 1)
    return FieldView(head, [line + ("," if i < len(lines) - 1 else ")")
                            for i, line in enumerate(lines)], False)


def _indent(lines: list[str], level: int) -> list[str]:
    return [(_INDENT * level + line) if line else "" for line in lines]


class WorldGenerator:
    """Builds the view model of one world."""

    def __init__(self, world: WorldModel, program: ProgramModel, sources: dict[str, str]) -> None:
        self.world = world
        self.program = program
        self.sources = sources
        self.tables = TypeTables(world)
        self.x = ExprCompiler(world, program, self.tables)
        #: a field's schema, written whole (a class body runs before the module's constants)
        self._field_schemas = SchemaWriter(world, self.tables, [], classes=False)
        self._results = ResultClasses(self.tables)
        self._shapes = FieldShapes(self.tables)
        self.class_name = self.tables.class_name(world.name)
        self.data_files: dict[str, str] = {}
        #: id(task data) -> its data file name, for tasks that share one data object
        self._data_names: dict[int, str] = {}
        #: per tool: whether its calls must check the invariants (see ``_needs_check``)
        self._checks: dict[str, bool] = {}
        #: (task, check) -> the spec text of each comparison its function explains
        self._explains: dict[tuple[str, str], list[str]] = {}
        #: (task, check) -> the parameters its function takes (of ``tasks.PARAMETERS``)
        self._takes: dict[tuple[str, str], list[str]] = {}

    # -------------------------------------------------------------- types
    def enum_view(self, name: str) -> EnumView:
        info = self.world.enums[name]
        cls = self.tables.class_name(name)
        members = [MemberView(enum_member(m.name), repr(m.value)) for m in info.members.values()]
        # each member as a module constant: reading one is a global lookup, not the enum
        # class's attribute lookup (several times slower)
        constants = [member_constant(cls, m.name) for m in members]
        return EnumView(cls, _doc_text(info.doc or f"The {name} enum."), members,
                        _wrapped(constants, _LINE - len(f" = {cls}.__members__.values()")))

    def class_view(self, rec: RecordInfo) -> ClassView:
        """A record or an entity: its fields, declared (the runtime builds the methods)."""
        cls = self.tables.class_name(rec.name)
        entity = rec.kind != "record"
        doc = rec.doc or (f"A row of {rec.name}." if entity else f"The {rec.name} record.")
        # the records whose classes a field's shape may name: those declared before
        declared = list(self.world.records)
        defined = frozenset(declared[:declared.index(rec.name)])
        fields = [self.field_view(rec, f, defined) for f in rec.fields.values()]
        unions = [self.union_block(name) for name in self.world.unions
                  if self._last_member(name) == rec.name]
        return ClassView(cls, "Row" if entity else "Record", _doc_text(doc),
                         repr(rec.name) if entity and rec.name != cls else "", fields, unions)

    def _last_member(self, union: str) -> str | None:
        """The member of ``union`` declared last (its ``TaggedUnion`` follows its class),
        or None for a union of no member."""
        members = set(self.world.unions[union].variants.values())
        declared = [name for name in self.world.records if name in members]
        return declared[-1] if declared else None

    def field_view(self, rec: RecordInfo, f: FieldInfo, defined: frozenset[str]) -> FieldView:
        """One field's declaration: ``name: annotation = field(shape, ...)``, saying besides
        its shape only what the runtime does not derive from it (``value_shapes``); a field
        of no shape (:meth:`FieldShapes.code`) gives its loader and the rest."""
        attr = py_name(f.name)
        shape = self._shapes.code(f.type, defined)
        args = [] if shape is None else [shape]
        if attr != f.name:
            args.append(repr(f.name))
        if rec.key is not None and rec.kind != "record" and rec.key.name == f.name:
            args.append("key=True")
        if shape is None:
            args.append(self._loader_argument(f.type))
        if f.default is not None:
            args.append(f"fill=lambda ep: {self.x.stored(f.default, Env(ep='ep'), f.type)}")
        elif isinstance(f.type, t.Optional):
            args.append("optional=True")
        export = self.exporter_fn(f.type)
        if export != (None if shape is None else self.exporter_fn(f.type, self._shapes.typed)):
            args.append(f"export={export}")
        if f.may_be_absent:  # an absent field is left out of the JSON
            args.append("omit_none=True")
        text = self.tables.text_maker(f.type) if rec.kind != "record" else \
            self.tables.record_text_maker(f.type)
        # a shape's text maker is right for every value of a world without ``arguments:
        # dynamic``; in one with, a stored value may be of another JSON type
        if shape is None or self.tables.dynamic:
            if text != (None if shape is None else self._shapes.text(f.type)[0]):
                args.append(f"text={text}")
        if shape is None and not self.tables.immutable(f.type):
            args.append("keeps_text=False")
        if f.node.alias is not None:  # the original's key (`from "..."`)
            args.append(f"from_key={f.node.alias!r}")
        schema = self._results.field_schema(f.type) if self._results.derivable(rec.name) \
            else None
        derived = None if shape is None else self._shapes.schema(f.type)
        if schema is not None and json.dumps(schema) != derived:
            # what its annotation does not say (a refinement...), nor its shape
            args.append(f"schema={self._field_schemas.expr(schema).flat()}")
        return _declaration(f"{attr}: {self.tables.annotation(f.type)} = field(", args)

    def exporter_fn(self, typ: t.Type, tables: TypeTables | None = None) -> str | None:
        """A function exporting a stored value of ``typ`` as plain JSON, or ``None`` where
        the value is plain JSON already (by ``tables``: the world's, by default)."""
        tables = tables or self.tables
        base = t.strip_optional(typ)
        if isinstance(base, t.Named) and base.kind == "enum" and base is typ and \
                not tables.dynamic:
            return "enum_value"
        if tables.exports_as_is(typ):
            return None
        if tables.exports_loosely(typ):
            return "v.export_value"
        kind = tables.export_kind(typ)
        if kind is not None:  # a function of its own, without a lambda around it
            return _EXPORTERS[kind]
        return f"lambda value: {tables.exporter(typ, 'value')}"

    def union_block(self, name: str) -> str:
        """A union, declared: its type (the members' classes) and its ``TaggedUnion`` (the tag
        field, each tag's class), from which the runtime loads, exports and writes its
        values (``worldspec.runtime.contract``)."""
        info = self.world.unions[name]
        cls = self.tables.class_name(name)
        members = [self.tables.class_name(r) for r in info.variants.values()]
        members_by_tag = DictOf(tuple((Const(tag), Name(self.tables.class_name(r)))
                                      for tag, r in info.variants.items()))
        declared = Assign(Name(union_object(name)),
                          call(UNION_CLASS, Const(info.tag_field), members_by_tag),
                          annotation=f"{UNION_CLASS}[{cls}]")
        return "\n".join([f"{cls}: TypeAlias = " + (" | ".join(members) if members else "Any"),
                          *print_block([declared], 0)])

    # -------------------------------------------------------------- state
    def state_fields(self) -> list[FieldView]:
        """The state items other than tables, declared: ``name: annotation =
        state_item(zero, json name where it differs, export=..., load=...)``; the runtime
        loads them from the data (``_State.load``)."""
        out = []
        for s in self.world.state.values():
            if s.kind == "table":
                continue
            typ = s.type if s.kind == "value" else t.INT
            args = ["0" if s.kind == "sequence" else _zero(typ)]
            if py_name(s.name) != s.name:
                args.append(repr(s.name))
            export = self.exporter_fn(typ)
            if export is not None:
                args.append(f"export={export}")
            args.append(self._loader_argument(typ))
            if s.node.alias is not None:  # the original's key (`from "..."`)
                args.append(f"from_key={s.node.alias!r}")
            out.append(_declaration(f"{py_name(s.name)}: {self.tables.annotation(typ)} = "
                                    "state_item(", args))
        return out

    def _loader_argument(self, typ: t.Type) -> str:
        """A declaration's loader: ``load=`` a function of the value and its path, or
        ``load_ep=`` one that also takes the episode (a record's, a union's)."""
        if self.tables.loads_with_episode(typ):
            return f"load_ep=lambda x, p, ep: {self.tables.loader(typ, 'x', 'p')}"
        return f"load={self.tables.field_loader(typ)}"

    def state_defaults(self) -> list[str]:
        """``_new_state``'s assignments of the state items' defaults, computed from the episode
        being made (``self``), a line each (a default is often a literal of data, which would
        take a line per element split)."""
        return [f"state.{py_name(s.name)} = {self.x.stored(s.default, Env(ep='self'), s.type)}"
                for s in self.world.state.values() if s.kind == "value" and s.default is not None]

    def load_lines(self) -> list[str]:
        """``_load``'s body (the template writes each line two levels in): each table's rows
        loaded, and the state items the data gives, in declaration order (a run of items at
        a time, loaded by the runtime from their declarations)."""
        episode, data = Name("self"), Name("data")
        out: list[Stmt] = []
        aliases = {s.name: s.node.alias for s in self.world.state.values()
                   if s.node.alias is not None}
        if aliases:  # an aliased item loads from its alias only; both given is refused
            out.append(ExprStmt(call("v.state_aliases", data, Const(aliases))))
        items = [s for s in self.world.state.values() if s.kind != "table"]
        run: list[str] = []

        def load_run() -> None:
            named = [] if len(run) == len(items) else [Const(name) for name in run]
            out.append(ExprStmt(call(Attr(Attr(episode, "state"), "load"), data, episode,
                                     *named)))
            run.clear()
        for s in self.world.state.values():
            if s.kind != "table":
                run.append(py_name(s.name))
                continue
            if run:
                load_run()
            rows = call(Attr(data, "get"), Const(s.load_key), TupleOf(()))
            out.append(ExprStmt(call(Attr(Attr(episode, f"t_{s.name}"), "load_rows"),
                                     Name(self.tables.class_name(s.entity or "")), rows,
                                     Const(data_path(s.load_key)), episode)))
        if run:
            load_run()
        if self.world.load_node is not None:
            out.append(ExprStmt(call(Attr(episode, "on_load"))))
        return [line[len(_INDENT) * 2:] for line in print_block(out or [Pass()], 2)]

    def on_load_method(self, node: n.LoadDecl) -> str:
        """``on load { ... }`` as the world's method ``on_load``, run at the end of ``_load``
        with a fresh budget."""
        body = StatementCompiler(self.x, Env(ep="self"), indent=1, once=True)
        body.block(node.body.body)
        anchor = f"  # {file_label(node.span.file)}:{node.span.line}"
        lines = [f"def on_load(self) -> None:{anchor}",
                 f"{_INDENT}rt.refill(self)", *body.lines]
        return "\n".join(_indent(lines, 1))

    def invariant_lines(self) -> list[str]:
        """``_check_invariants``'s body, for the template, which writes each line two levels
        in (printed there, so that the lines wrap at the width they have)."""
        statements = self.invariant_statements()
        lines = print_block(statements, 2) if statements else []
        return [line[len(_INDENT) * 2:] for line in lines]

    def invariant_statements(self) -> list[Stmt]:
        """``_check_invariants``'s body: each invariant on the rows the call changed where it
        is local to a row or a pair of rows, in full otherwise; then the references."""
        out: list[Stmt] = []
        env = Env(ep="self")
        episode = Name("self")
        for inv in self.world.invariants.values():
            message = inv.doc or f"Invariant {inv.name} does not hold."
            where = f"{file_label(inv.node.span.file)}:{inv.node.span.line}"
            local = local_invariant(inv.condition, self.world, self.program)
            pair = pair_invariant(inv.condition, self.world, self.program) \
                if local is None else None
            fail = Raise(call("InvariantError", Const(message), Const(where)))

            def changed(table: str) -> Expr:
                return rt("changed_rows", episode, Attr(episode, f"t_{table}"))
            if local is not None:
                name = self.x.fresh("row")
                inner = Env(ep="self", locals={local.var: name})
                test = Not(self.x.value(local.body, inner))
                out.append(For(name, changed(local.table), [If(test, [fail])], anchor=where))
            elif pair is not None:
                # every pair with a changed row on either side
                a, b = self.x.fresh("row"), self.x.fresh("row")
                test = Not(self.x.value(pair.body, Env(ep="self", locals={pair.a: a,
                                                                         pair.b: b})))
                pairs = rt("changed_pairs", episode, Attr(episode, f"t_{pair.table_a}"),
                           Attr(episode, f"t_{pair.table_b}"))
                out.append(For(f"{a}, {b}", pairs, [If(test, [fail])], anchor=where))
            else:
                out.append(If(Not(self.x.value(inv.condition, env)), [fail], anchor=where))
        return out + self.reference_statements()

    def reference_statements(self) -> list[Stmt]:
        """Referential integrity: every stored key points at an existing row."""
        out: list[Stmt] = []
        episode = Name("self")
        for s in self.world.state.values():
            if s.kind == "table" and s.entity:
                rec = self.world.records[s.entity]
                refs = [(f, _entity_in(f.type)) for f in rec.fields.values()]
                refs = [(f, e) for f, e in refs if e is not None]
                refs = [(f, e) for f, e in refs if self.world.table_of(e or "") is not None]
                if refs:
                    # a reference breaks when its row is inserted or the field set (deleting
                    # the row it names is checked below), so only those rows are checked
                    row = self.x.fresh("row")
                    fields = TupleOf(tuple(Const(py_name(f.name)) for f, _ in refs))
                    checks: list[Stmt] = []
                    for f, entity in refs:
                        target = self.world.table_of(entity or "")
                        if target is None:
                            continue
                        checks.append(ExprStmt(rt(
                            "check_refs", Attr(episode, f"t_{target.name}"),
                            Attr(Name(row), py_name(f.name)), Const(f"{s.entity}.{f.name}"))))
                    out.append(For(row, rt("changed_rows", episode,
                                           Attr(episode, f"t_{s.name}"), fields), checks))
            elif s.kind == "value" and _entity_in(s.type) is not None:
                target = self.world.table_of(_entity_in(s.type) or "")
                if target is not None:
                    out.append(ExprStmt(rt("check_refs", Attr(episode, f"t_{target.name}"),
                                           Attr(Attr(episode, "state"), py_name(s.name)),
                                           Const(s.name))))
        # deleted rows must not be referenced: checked after a call that deleted a row (the
        # flag is set by every deletion), table by table
        deleted: list[Stmt] = []
        for s in self.world.state.values():
            if s.kind != "table" or not s.entity:
                continue
            users: list[Expr] = []
            for other in self.world.state.values():
                if other.kind == "table" and other.entity:
                    for f in self.world.records[other.entity].fields.values():
                        if _entity_in(f.type) == s.entity:
                            users.append(TupleOf((Attr(episode, f"t_{other.name}"),
                                                  Const(py_name(f.name)))))
                elif other.kind == "value" and _entity_in(other.type) == s.entity:
                    users.append(TupleOf((Const(None), Const(py_name(other.name)))))
            if users:
                deleted.append(ExprStmt(rt("check_deleted", episode,
                                           Attr(episode, f"t_{s.name}"), TupleOf(tuple(users)))))
        if deleted:
            out.append(If(Attr(episode, "deleted_rows"), deleted))
        return out

    # -------------------------------------------------------------- tools
    def tool_method(self, info: ToolInfo) -> str:
        return "\n".join(print_block([self.tool_function(info)], 1))

    def tool_function(self, info: ToolInfo) -> FunctionDef:
        """A tool's or a function's method (a tool's without its ``@tool(...)``
        declaration, which the registry writes once every tool is compiled)."""
        prefix = "fn_" if info.is_fn else "tool_"
        env = Env(ep="self")
        params = ["self"]
        taken = self.tables.module_names()
        for p in info.params:
            pname = py_name(p.name)
            if pname in taken:  # a parameter named like a class must not shadow it
                pname = self.x.fresh(pname.lstrip("_"))
            env.locals[p.name] = pname
            params.append(f"{pname}: {self.tables.annotation(p.type, stored=False)}")
        if self._uses_given(info):
            env.locals[GIVEN_ARGUMENTS] = self.x.fresh("given")
            params.append(f"{env.locals[GIVEN_ARGUMENTS]}: frozenset[str]")
        returns = self.tables.annotation(info.returns, stored=False) if info.returns else "None"
        body = StatementCompiler(self.x, env, indent=1, once=not info.is_fn)
        body.block(info.node.body.body)
        if not info.is_fn:
            self._checks[info.name] = self._needs_check(body)
        # a tool's description is its registry entry's ``doc=`` (``python -OO`` drops
        # docstrings); a function's docstring is only for the reader
        doc = (info.doc or "").strip() or None if info.is_fn else None
        return FunctionDef(f"{prefix}{py_name(info.name)}", params, returns, body.body,
                           doc=doc, anchor=anchor_of(info.node))

    def _needs_check(self, body: StatementCompiler) -> bool:
        """Whether a call of the tool whose body is ``body`` must check the invariants
        afterwards: always when the world declares any, else only when the call may break a
        reference (it sets a field that holds keys, changes a state item, inserts or deletes a
        row; ``next()`` changes a state item from inside an expression)."""
        if self.world.invariants or body.other_writes or body.sequences_advanced:
            return True
        for entity, name in body.row_writes:
            rec = self.world.records.get(entity)
            info = rec.fields.get(name) if rec is not None else None
            if info is None or _entity_in(info.type) is not None:
                return True
        return False

    def _uses_given(self, info: ToolInfo) -> bool:
        return not info.is_fn and (self.world.name, info.name) in self.program.uses_given

    # -------------------------------------------------------------- tasks
    def check_fn(self, task: str, check: n.Check) -> str:
        """The world's method ``_check_<task>__<check>(self, init, replies)``: the check's
        condition on the final episode (``self``), returning a verdict where it can say what
        it compared (the spec text of what it compares goes to the task's JSON, see
        :meth:`task_entry`). It takes the initial episode and the agent's replies only where
        the condition reads them; the registry calls it as ``test(episode, initial,
        replies)`` would be called, with what it takes."""
        env = Env(ep="self", init="init", task=task)
        texts: list[str] = []
        explained = explained_condition(self.x, check.condition, env, texts)
        self._explains[task, check.name.name] = texts
        if explained is None:
            value = self.x.value(check.condition, env)
            returns, value = ("bool", value if is_bool(value) else call("bool", value))
        else:
            returns, value = "rt.Verdict | bool", explained
        read = names_read(value)
        given = {"ep": env.ep, "init": env.init, "replies": env.replies}
        takes = [name for name in PARAMETERS
                 if name == "ep" or read is None or given[name] in read]
        self._takes[task, check.name.name] = takes
        parameters = {"ep": "self", "init": f"{env.init}: Self",
                      "replies": f"{env.replies}: tuple[str, ...]"}
        fn = FunctionDef(_check_fn_name(task, check.name.name),
                         [parameters[name] for name in takes], returns,
                         [Return(value)], anchor=anchor_of(check))
        return "\n".join(print_block([fn], 1))

    def task_entry(self, name: str) -> dict[str, Any]:
        """A task as the JSON data of the package's ``tasks.json`` (read back by
        ``worldspec.runtime.tasks``): the fields of its ``TaskSpec``, its initial data by
        file name, each check's function by name; keyword fields at their defaults left out."""
        info = self.world.tasks[name]
        node = info.node
        checks = []
        for c in node.checks:
            check: dict[str, Any] = {"name": c.name.name, "weight": float(c.weight or 1),
                                     "doc": c.doc or "", "test": _check_fn_name(name, c.name.name)}
            texts = self._explains.get((name, c.name.name))
            if texts:
                check["explains"] = texts
            takes = self._takes.get((name, c.name.name), list(PARAMETERS))
            if tuple(takes) != PARAMETERS:
                check["takes"] = takes
            checks.append(check)
        frame = node.frame
        calls = []
        if node.solution is not None:
            for call_node in node.solution.calls:
                args = {a.name.name: constant_value(a.value, self.world, self.program)
                        for a in call_node.args if a.name is not None and
                        not isinstance(a.value, n.Lambda)}
                calls.append([call_node.tool.name, args])
        data = info.initial_data or {}
        data_name = self._data_names.get(id(data))
        if data_name is None:
            text = json.dumps(data, sort_keys=False, ensure_ascii=False, separators=(",", ":"))
            data_name = f"data/{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
            self.data_files[data_name] = text + "\n"
            self._data_names[id(data)] = data_name

        def text_of(kind: type) -> str | None:
            found = next((i for i in node.items if isinstance(i, kind)), None)
            return getattr(found, "text", None) if found is not None else None

        tags = next((i for i in node.items if isinstance(i, n.Tags)), None)
        split = next((i for i in node.items if isinstance(i, n.Split)), None)
        seed = next((i for i in node.items if isinstance(i, n.Seed)), None)
        keywords = {"seed": seed.value if seed else None, "persona": text_of(n.Persona),
                    "known": text_of(n.Known), "unknown": text_of(n.Unknown),
                    "tags": [x.name for x in tags.names] if tags else [],
                    "split": split.name.name if split else None, "doc": node.doc,
                    "replies": [r.text for r in node.solution.replies]
                    if node.solution is not None else [],
                    "reward": next((i.mode.name for i in node.items if isinstance(i, n.Reward)),
                                   None)}
        entry: dict[str, Any] = {
            "name": name, "instruction": node.instruction or "", "data": data_name,
            "checks": checks,
            "frame": None if frame is None else [
                ".".join(part.name for part in target.path) for target in frame.targets],
            "solution": calls}
        # the keyword fields that are not their defaults
        entry.update((key, value) for key, value in keywords.items() if value not in (None, []))
        return entry

    def tasks_file(self) -> str:
        """``tasks.json``: every task of the world (:meth:`task_entry`), in declaration order,
        as deterministic bytes (ASCII: any text the spec holds stays inert)."""
        return json.dumps([self.task_entry(task) for task in self.world.tasks], indent=1,
                          ensure_ascii=True) + "\n"

    def result_methods(self, node: n.ResultsDecl) -> list[str]:
        """A custom result convention: ``_success``, ``_failure`` and ``failed`` built from
        the world's shapes (``failed`` matches a result against the failure shape)."""
        shapes = {shape.name.name: shape.value for shape in node.shapes}
        success = self.x.value(shapes["success"], Env(ep="self", locals={"value": "value"}),
                               t.JSON)
        failure = self.x.value(shapes["failure"], Env(ep="self", locals={"message": "message"}),
                               t.JSON)
        value = Name("value")
        methods = [
            FunctionDef("_success", ["self", "value: Any"], "Any",
                        [Assign(value, call("v.export_value", value)), Return(success)]),
            FunctionDef("_failure", ["self", "message: str"], "Any", [Return(failure)]),
            FunctionDef("failed", ["self", "result: Any"], "bool", [Return(rt(
                "fits_shape", Name("result"),
                call(Attr(Name("self"), "_failure"), Attr(Name("rt"), "HOLE"))))]),
        ]
        return ["\n".join(print_block([method], 1)) for method in methods]

    # ------------------------------------------------------------ module
    def table_entries(self) -> FieldView:
        """The world's ``TABLES`` (table -> entity) declared: its dict display on the line of
        ``TABLES: ... = {`` when it fits, else as many entries on a line as fit below."""
        entries = [f"{json.dumps(s.name)}: {json.dumps(s.entity)}"
                   for s in self.world.state.values() if s.kind == "table"]
        head = "TABLES: ClassVar[dict[str, str]] = {"
        if len(_INDENT + head) + len(", ".join(entries)) + 1 <= _LINE:
            return FieldView(head, [", ".join(entries) + "}"], True)
        return FieldView(head, _wrapped(entries, _LINE - 2 * len(_INDENT) - 1), False)

    def contract_imports(self) -> list[str]:
        """The module's ``from worldspec.runtime.X import ...`` lines: the contract's names
        (``names.CONTRACT_IMPORTS``), with those for unions and tasks where the world has
        them, in the order of their modules."""
        needed = {"union": bool(self.world.unions), "tasks": bool(self.world.tasks),
                  "policy": self._policy_file()}
        optional: dict[str, list[str]] = {}  # one line per module: tasks and policy share one
        for need, (module, names) in OPTIONAL_IMPORTS.items():
            if needed[need]:
                optional.setdefault(module, []).extend(names)
        lines = [*CONTRACT_IMPORTS, *((module, tuple(sorted(names, key=str.lower)))
                                      for module, names in optional.items())]
        return [f"from {module} import {', '.join(names)}"
                for module, names in sorted(lines, key=lambda line: line[0])]

    def _policy_file(self) -> bool:
        """Whether the world's policy is a file of its package, ``policy.md`` (read on first
        use, as tau2-bench keeps its own beside its code): every policy but one holding a
        ``\\r`` (the runtime reads the file's line ends as ``\\n``), which stays a literal."""
        return bool(self.world.policy) and "\r" not in self.world.policy

    def policy_declaration(self) -> str:
        """``POLICY``'s declaration in the class body: the file of the package that holds it,
        or its literal (see :meth:`_policy_file`); ``""`` without a policy."""
        if self._policy_file():
            self.data_files[_POLICY_FILE] = self.world.policy
            return f"POLICY = {PACKAGE_TEXT}(__name__, {json.dumps(_POLICY_FILE)})"
        if self.world.policy:
            return f"POLICY: ClassVar[str] = {text_literal(self.world.policy, _INDENT)}"
        return ""

    def render(self) -> str:
        w = self.world
        enums = [self.enum_view(name) for name in w.enums]
        classes = [self.class_view(rec) for rec in w.records.values()]
        # a union follows its last member class (a field's shape after it may name it)
        unions = [self.union_block(name) for name in w.unions
                  if self._last_member(name) is None]
        methods = [self.tool_method(fn) for fn in w.fns.values()]
        # a tool's method is printed once the registry has written its declaration
        tool_functions = {name: self.tool_function(tool) for name, tool in w.tools.items()}
        after_tools: list[str] = []
        if w.load_node is not None:
            after_tools.append(self.on_load_method(w.load_node))
        if w.config.results == "custom" and w.results_node is not None:
            after_tools += self.result_methods(w.results_node)
        # the tasks' checks, methods of the world after its tools
        after_tools += [self.check_fn(task, c) for task, info in w.tasks.items()
                        for c in info.node.checks]
        exports = [self.class_name, *[self.tables.class_name(x) for x in w.enums],
                   *[self.tables.class_name(x) for x in w.records],
                   *[self.tables.class_name(x) for x in w.unions]]
        # Paths relative to the world's file: the hash (and so the output) must not depend on
        # the working directory the compiler was started from.
        base = os.path.dirname(w.file)
        relative = {PurePath(os.path.relpath(path, base)).as_posix(): text
                    for path, text in self.sources.items()}
        spec_hash = hashlib.sha256("".join(
            f"{path}\0{text}\0" for path, text in sorted(relative.items())).encode()
        ).hexdigest()
        consts = []
        for const in w.consts.values():
            typ = const.type or t.UNKNOWN
            value = self.x.value(const.node.value, Env(ep="None"), typ)
            anchor = f"{file_label(const.node.span.file)}:{const.node.span.line}"
            consts.append(f"{const_name(const.name)}: {self.tables.annotation(typ, stored=False)} "
                          f"= {value}  # {anchor}")
        registry = RegistryWriter(w, self.tables, self.x, self.class_name).registry(
            self._checks, {name for name, info in w.tools.items() if self._uses_given(info)})
        for name, function in tool_functions.items():
            # the declaration names the spec's place (``where=``): no anchor comment beside it
            function.decorators, function.anchor = (registry.declarations[name],), None
            methods.append("\n".join(print_block([function], 1)))
        methods += after_tools
        if w.tasks:  # after the check functions: they give each check's explained texts
            self.data_files["tasks.json"] = self.tasks_file()
        state_defaults, load_lines = self.state_defaults(), self.load_lines()
        invariant_lines = self.invariant_lines()
        # last: every expression is compiled, so every attribute a comprehension reads is known
        getters = [f"_GET_{attr} = rt.getter({attr!r}, {kind})" if kind is not None else
                   f"_GET_{attr} = rt.attrgetter({attr!r})"
                   for attr, kind in sorted(self.x.getters.items())]
        return _template().render(
            consts=consts,
            getters=getters,
            version=GENERATOR_VERSION,
            sources=", ".join(sorted(file_label(p) for p in self.sources)),
            spec_hash=spec_hash,
            world_name=w.name,
            # repr keeps any doc text inert (quotes, backslashes, NUL, line separators)
            module_doc=repr(f"{w.name}: {(w.doc or w.name).strip()}"),
            # the description a prompt shows (a constant: `python -OO` drops docstrings)
            description=text_literal((w.doc or "").strip(), _INDENT,
                                     len("DESCRIPTION: ClassVar[str] = ")),
            exports=[line + "," for line in _wrapped(
                [json.dumps(name) for name in sorted(set(exports))], _LINE - len(_INDENT) - 1)],
            enums=enums,
            classes=classes,
            unions=unions,
            state_fields=self.state_fields(),
            class_name=self.class_name,
            results=w.config.results, clock=w.config.clock, tick=w.config.tick,
            seed=w.config.seed,
            unknown_tool=repr(w.config.unknown_tool) if w.config.unknown_tool else "",
            reward=repr(w.config.reward) if w.config.reward != DEFAULT_REWARD else "",
            dynamic=w.config.arguments == "dynamic",
            policy=self.policy_declaration(),
            private=repr(tuple(s.name for s in w.state.values() if s.node.private)) if any(
                s.node.private for s in w.state.values()) else "",
            table_entries=self.table_entries(),
            tables=[{"name": s.name, "entity": s.entity,
                     "cls": self.tables.class_name(s.entity or "")}
                    for s in w.state.values() if s.kind == "table"],
            state_defaults=state_defaults,
            load_lines=load_lines,
            invariant_lines=invariant_lines,
            methods=methods,
            registry_constants=registry.constants,
            registry=registry.statement,
            task_registry=TASK_REGISTRY if w.tasks else "",
            imports=self.contract_imports(),
        )


def _check_fn_name(task: str, check: str) -> str:
    """``_check_<task>__<check>``, with the task's length at the end when a name holds ``__``
    (so that task ``a__b`` check ``c`` and task ``a`` check ``b__c`` stay apart)."""
    t_name, c_name = py_name(task), py_name(check)
    if "__" in t_name or "__" in c_name:
        return f"{CHECK_PREFIX}{t_name}__{c_name}_{len(t_name)}"
    return f"{CHECK_PREFIX}{t_name}__{c_name}"


_entity_in = t.referenced_entity


def _zero(typ: t.Type) -> str:
    if isinstance(typ, (t.Optional, t.NoneType)) or typ == t.JSON:
        return "None"
    if isinstance(typ, (t.ListOf, t.SetOf)):
        return "()"
    if isinstance(typ, t.MapOf):
        return "{}"
    if isinstance(typ, t.Prim):
        return {"str": "''", "int": "0", "float": "0.0", "number": "0", "bool": "False",
                "date": "dt.date(1970, 1, 1)", "datetime": "dt.datetime(1970, 1, 1)",
                "duration": "dt.timedelta()"}.get(typ.name, "None")
    return "None"  # a value of the type is set before it is read (its default, loaded data)


def _literal(value: Any) -> str:
    """A deterministic Python literal for JSON-like data."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_literal(x)}" for k, x in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(x) for x in value) + "]"
    return repr(value)


def generate_world(world: WorldModel, program: ProgramModel,
                   sources: dict[str, str]) -> GeneratedPackage:
    """Generate the package of one checked world."""
    gen = WorldGenerator(world, program, sources)
    package = GeneratedPackage(name=snake_case(world.name), world=world.name)
    module = gen.render()
    package.files["world.py"] = module
    package.files["__init__.py"] = (
        f"# Generated by worldspec {GENERATOR_VERSION}. Do not edit.\n"
        f'"""The {world.name} world, compiled from its spec."""\n\n'
        f"from .world import {gen.class_name} as World\n"
        f"from .world import {gen.class_name}\n\n"
        f"__all__ = [{gen.class_name!r}, 'World']\n"
    )
    package.files["test_world.py"] = (
        f"# Generated by worldspec {GENERATOR_VERSION}. Do not edit.\n"
        f'"""Property tests of the {world.name} world (hypothesis; run with pytest)."""\n\n'
        "from worldspec.testing.hypothesis_suite import world_state_machine\n\n"
        f"from .world import {gen.class_name}\n\n"
        f"Test{gen.class_name} = world_state_machine({gen.class_name}).TestCase\n"
    )
    package.files.update(gen.data_files)
    return package


