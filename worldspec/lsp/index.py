"""Every definition and reference of a checked unit, for hover, navigation and rename.

The index is built from the syntax trees of a :class:`~worldspec.compiler.api.CheckResult`
and the checker's side tables (expression types, name resolutions): a symbol is identified by
where it is defined (file and offset of its name), so two units that both import a file agree
on its symbols, which is what finding references across files relies on.

Local names (parameters, ``let``, loop, quantifier, lambda and ``case ... as`` bindings) are
scoped here as the type checker scopes them: a name is looked up innermost first, before state
and declarations.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from worldspec.compiler import types as t
from worldspec.compiler.api import CheckResult
from worldspec.compiler.model import ProgramModel, WorldModel
from worldspec.dsl import nodes as n

__all__ = ["Kind", "Symbol", "Occurrence", "Index", "build_index", "SymbolKey", "TYPE_KINDS"]


class Kind(StrEnum):
    """What a symbol is."""

    WORLD = "world"
    ENUM = "enum"
    MEMBER = "member"
    RECORD = "record"
    ENTITY = "entity"
    FIELD = "field"
    UNION = "union"
    ALIAS = "type"
    STATE = "state"
    INVARIANT = "invariant"
    TOOL = "tool"
    FN = "fn"
    PARAM = "param"
    LOCAL = "local"
    TASK = "task"
    CHECK = "check"


#: kinds that name a type (one namespace with worlds: a world name may not be a type name)
TYPE_KINDS = frozenset({Kind.ENUM, Kind.RECORD, Kind.ENTITY, Kind.UNION, Kind.ALIAS})

#: (file, offset of the defining name)
SymbolKey = tuple[str, int]


@dataclass(eq=False)
class Symbol:
    """A declared name: where it is defined and what it is."""

    kind: Kind
    name: str
    span: n.Span                 # the defining identifier
    decl: n.Node                 # the whole declaration (outline ranges, hover)
    container: Symbol | None = None
    doc: str | None = None
    #: the local's or parameter's region of visibility (locals only)
    scope: tuple[int, int] | None = None
    children: list[Symbol] = field(default_factory=list)

    @property
    def key(self) -> SymbolKey:
        return (self.span.file, self.span.start)

    @property
    def qualified(self) -> str:
        return f"{self.container.name}.{self.name}" if self.container else self.name


@dataclass(frozen=True, slots=True)
class Occurrence:
    """A name in the text: its span, the symbol it names, and whether it defines it."""

    span: n.Span
    symbol: Symbol
    is_definition: bool
    #: the expression node the name is (a NameRef or an Attribute), for its type
    node: n.Node | None = None


@dataclass
class Index:
    """The symbols and name occurrences of one unit (a document and its imports)."""

    result: CheckResult
    symbols: dict[SymbolKey, Symbol] = field(default_factory=dict)
    types: dict[str, Symbol] = field(default_factory=dict)
    worlds: dict[str, Symbol] = field(default_factory=dict)
    fields: dict[tuple[str, str], Symbol] = field(default_factory=dict)
    members: dict[tuple[str, str], Symbol] = field(default_factory=dict)
    state: dict[str, Symbol] = field(default_factory=dict)
    tools: dict[str, Symbol] = field(default_factory=dict)
    fns: dict[str, Symbol] = field(default_factory=dict)
    tasks: dict[str, Symbol] = field(default_factory=dict)
    #: top-level symbols per file, in source order (the outline)
    top_level: dict[str, list[Symbol]] = field(default_factory=dict)
    #: occurrences per file, sorted by start offset
    occurrences: dict[str, list[Occurrence]] = field(default_factory=dict)
    _starts: dict[str, list[int]] = field(default_factory=dict)

    @property
    def model(self) -> ProgramModel:
        return self.result.model

    def occurrence_at(self, file: str, offset: int) -> Occurrence | None:
        """The name under ``offset`` (its end counts too: the cursor just after a name)."""
        occs = self.occurrences.get(file, [])
        starts = self._starts.get(file, [])
        i = bisect.bisect_right(starts, offset) - 1
        for j in (i, i - 1):
            if 0 <= j < len(occs) and occs[j].span.start <= offset <= occs[j].span.end:
                return occs[j]
        return None

    def references(self, key: SymbolKey) -> Iterator[Occurrence]:
        """Every occurrence (definition included) of the symbol defined at ``key``."""
        for occs in self.occurrences.values():
            for occ in occs:
                if occ.symbol.key == key:
                    yield occ

    def locals_at(self, file: str, offset: int) -> list[Symbol]:
        """Parameters and locals visible at ``offset``, innermost last."""
        out = [s for s in self.symbols.values()
               if s.kind in (Kind.LOCAL, Kind.PARAM) and s.scope is not None
               and s.span.file == file and s.scope[0] <= offset <= s.scope[1]]
        return sorted(out, key=lambda s: s.span.start)

    def world_of(self, file: str) -> WorldModel | None:
        """The world a file's declarations belong to (its own, or the one it imports)."""
        worlds = self.model.worlds
        own = [w for w in worlds.values() if w.file == file]
        if own:
            return own[0]
        deps = self.result.program.imports.get(file, [])
        for dep in deps:
            found = self.world_of(dep)
            if found is not None:
                return found
        return next(iter(worlds.values()), None)

    def expression_ending_at(self, file: str, offset: int) -> n.Node | None:
        """The largest expression of ``file`` whose text ends exactly at ``offset``."""
        source = self.result.program.files.get(file)
        if source is None:
            return None
        best: n.Node | None = None
        for node in n.walk(source.module):
            if node.span.end == offset and _is_expression(node) and (
                    best is None or node.span.start < best.span.start):
                best = node
        return best


_EXPRESSIONS = (n.NameRef, n.Attribute, n.Index, n.Call, n.StrLit, n.FStr, n.ListLit, n.MapLit,
                n.IntLit, n.FloatLit, n.Comprehension)


def _is_expression(node: n.Node) -> bool:
    return isinstance(node, _EXPRESSIONS)


# ------------------------------------------------------------------ building
def build_index(result: CheckResult) -> Index:
    """Index every file of ``result``'s program."""
    index = Index(result=result)
    files = result.program.files
    for path, source in files.items():
        index.top_level[path] = list(_Definitions(index, path).module(source.module))
    for path, source in files.items():
        _References(index, path, source.text).module(source.module)
    for path, occs in index.occurrences.items():
        occs.sort(key=lambda o: (o.span.start, -o.span.end))
        index._starts[path] = [o.span.start for o in occs]
    return index


def _add(index: Index, occ: Occurrence) -> None:
    index.occurrences.setdefault(occ.span.file, []).append(occ)


class _Definitions:
    """Pass 1: the declared names of one file (no bodies)."""

    def __init__(self, index: Index, path: str) -> None:
        self.index = index
        self.path = path

    def define(self, kind: Kind, ident: n.Ident, decl: n.Node, *, container: Symbol | None = None,
               doc: str | None = None) -> Symbol:
        sym = Symbol(kind, ident.name, ident.span, decl, container, doc)
        self.index.symbols[sym.key] = sym
        if container is not None:
            container.children.append(sym)
        _add(self.index, Occurrence(ident.span, sym, True))
        return sym

    def module(self, module: n.Module) -> Iterator[Symbol]:
        ix = self.index
        for decl in module.decls:
            if isinstance(decl, n.WorldDecl):
                sym = self.define(Kind.WORLD, decl.name, decl, doc=decl.doc)
                ix.worlds.setdefault(sym.name, sym)
                yield sym
            elif isinstance(decl, n.EnumDecl):
                sym = self.define(Kind.ENUM, decl.name, decl, doc=decl.doc)
                ix.types.setdefault(sym.name, sym)
                for member in decl.members:
                    m = self.define(Kind.MEMBER, member.name, member, container=sym,
                                    doc=member.doc)
                    ix.members.setdefault((sym.name, m.name), m)
                yield sym
            elif isinstance(decl, (n.RecordDecl, n.EntityDecl)):
                kind = Kind.ENTITY if isinstance(decl, n.EntityDecl) else Kind.RECORD
                sym = self.define(kind, decl.name, decl, doc=decl.doc)
                ix.types.setdefault(sym.name, sym)
                for f in decl.fields:
                    fs = self.define(Kind.FIELD, f.name, f, container=sym, doc=f.doc)
                    ix.fields.setdefault((sym.name, fs.name), fs)
                yield sym
            elif isinstance(decl, (n.UnionDecl, n.AliasDecl)):
                kind = Kind.UNION if isinstance(decl, n.UnionDecl) else Kind.ALIAS
                sym = self.define(kind, decl.name, decl, doc=decl.doc)
                ix.types.setdefault(sym.name, sym)
                yield sym
            elif isinstance(decl, n.StateDecl):
                for item in decl.items:
                    sym = self.define(Kind.STATE, item.name, item, doc=item.doc)
                    ix.state.setdefault(sym.name, sym)
                    yield sym
            elif isinstance(decl, n.InvariantDecl):
                yield self.define(Kind.INVARIANT, decl.name, decl, doc=decl.doc)
            elif isinstance(decl, (n.ToolDecl, n.FnDecl)):
                kind = Kind.TOOL if isinstance(decl, n.ToolDecl) else Kind.FN
                sym = self.define(kind, decl.name, decl, doc=decl.doc)
                (ix.tools if kind is Kind.TOOL else ix.fns).setdefault(sym.name, sym)
                body = (decl.span.start, decl.span.end)
                for p in decl.params:
                    ps = self.define(Kind.PARAM, p.name, p, container=sym, doc=p.doc)
                    ps.scope = body
                yield sym
            elif isinstance(decl, n.TaskDecl):
                sym = self.define(Kind.TASK, decl.name, decl, doc=decl.doc)
                ix.tasks.setdefault(sym.name, sym)
                for check in decl.checks:
                    self.define(Kind.CHECK, check.name, check, container=sym, doc=check.doc)
                yield sym


Frame = dict[str, Symbol]


class _References:
    """Pass 2: every name used in one file's declarations, resolved."""

    def __init__(self, index: Index, path: str, text: str) -> None:
        self.index = index
        self.path = path
        self.text = text
        self.model = index.model
        self.frames: list[Frame] = []
        self.callable: Symbol | None = None

    # -- helpers
    def ref(self, span: n.Span, sym: Symbol | None, node: n.Node | None = None) -> None:
        if sym is not None and span.end > span.start:
            _add(self.index, Occurrence(span, sym, False, node))

    def lookup_local(self, name: str) -> Symbol | None:
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        return None

    def bind(self, ident: n.Ident, decl: n.Node, visible: tuple[int, int],
             doc: str | None = None) -> None:
        sym = Symbol(Kind.LOCAL, ident.name, ident.span, decl, self.callable, doc,
                     scope=visible)
        self.index.symbols[sym.key] = sym
        _add(self.index, Occurrence(ident.span, sym, True, decl))
        self.frames[-1][ident.name] = sym

    def record_of(self, typ: t.Type | None) -> str | None:
        """The record or entity a value of ``typ`` is (through ``?``)."""
        if typ is None:
            return None
        base = t.strip_optional(typ)
        if isinstance(base, t.Named) and base.kind in ("record", "entity"):
            return base.name
        return None

    # -- declarations
    def module(self, module: n.Module) -> None:
        for decl in module.decls:
            self.frames = [{}]
            self.callable = None
            self.decl(decl)

    def decl(self, decl: n.Decl) -> None:
        ix = self.index
        if isinstance(decl, (n.ToolDecl, n.FnDecl)):
            self.callable = ix.symbols.get((decl.name.span.file, decl.name.span.start))
            frame: Frame = {}
            for p in decl.params:
                self.type_expr(p.type)
                if p.default is not None:
                    self.expr(p.default)
                psym = ix.symbols.get((p.name.span.file, p.name.span.start))
                if psym is not None:
                    frame[p.name.name] = psym
            self.frames.append(frame)
            for p in decl.params:
                if p.not_found is not None:
                    self.expr(p.not_found)
            if decl.returns is not None:
                self.type_expr(decl.returns)
            self.block(decl.body)
        elif isinstance(decl, (n.RecordDecl, n.EntityDecl)):
            for f in decl.fields:
                self.type_expr(f.type)
                if f.default is not None:
                    self.expr(f.default)
        elif isinstance(decl, n.UnionDecl):
            for v in decl.variants:
                self.ref(v.record.span, ix.types.get(v.record.name))
        elif isinstance(decl, n.AliasDecl):
            self.type_expr(decl.type)
        elif isinstance(decl, n.StateDecl):
            for item in decl.items:
                if isinstance(item.kind, n.TableKind):
                    self.ref(item.kind.entity.span, ix.types.get(item.kind.entity.name))
                elif isinstance(item.kind, n.TypeExpr):
                    self.type_expr(item.kind)
                if item.default is not None:
                    self.expr(item.default)
        elif isinstance(decl, n.InvariantDecl):
            self.expr(decl.condition)
        elif isinstance(decl, n.TaskDecl):
            self.task(decl)

    def type_expr(self, texpr: n.TypeExpr) -> None:
        self.ref(texpr.name.span, self.index.types.get(texpr.name.name))
        for arg in texpr.args:
            self.type_expr(arg)

    def task(self, task: n.TaskDecl) -> None:
        ix = self.index
        self.ref(task.world.span, ix.worlds.get(task.world.name))
        for item in task.items:
            if isinstance(item, n.Check):
                self.expr(item.condition)
            elif isinstance(item, n.Solution):
                for call in item.calls:
                    tool = ix.tools.get(call.tool.name)
                    self.ref(call.tool.span, tool)
                    self.arguments(call.args, tool)
            elif isinstance(item, n.Frame):
                for target in item.targets:
                    self.frame_target(target)
            elif isinstance(item, n.Given) and isinstance(item.source, n.DataObject):
                self.given(item.source)

    def frame_target(self, target: n.FrameTarget) -> None:
        if not target.path:
            return
        head = self.index.state.get(target.path[0].name)
        self.ref(target.path[0].span, head)
        if head is not None and len(target.path) > 1 and isinstance(head.decl, n.StateItem) \
                and isinstance(head.decl.kind, n.TableKind):
            entity = head.decl.kind.entity.name
            self.ref(target.path[1].span, self.index.fields.get((entity, target.path[1].name)))

    def data_key(self, pair: n.DataPair) -> n.Span | None:
        """The span of a data pair's key (bare or quoted), found in the text."""
        start = pair.span.start
        if self.text.startswith('"', start):
            start += 1
        if not self.text.startswith(pair.key, start):
            return None
        s = pair.span
        end = start + len(pair.key)
        column = s.column + (start - s.start)
        return n.Span(s.file, s.line, column, s.line, column + len(pair.key), start, end)

    def given(self, data: n.DataObject) -> None:
        for pair in data.pairs:
            span = self.data_key(pair)
            state = self.index.state.get(pair.key)
            if span is not None:
                self.ref(span, state)
            if state is None or not isinstance(state.decl, n.StateItem):
                continue
            kind = state.decl.kind
            if isinstance(kind, n.TableKind) and isinstance(pair.value, n.DataArray):
                for row in pair.value.items:
                    if isinstance(row, n.DataObject):
                        self.row(row, kind.entity.name)

    def row(self, row: n.DataObject, record: str) -> None:
        for pair in row.pairs:
            span = self.data_key(pair)
            if span is not None:
                self.ref(span, self.index.fields.get((record, pair.key)))

    # -- statements
    def block(self, block: n.Block) -> None:
        self.frames.append({})
        for stmt in block.body:
            self.stmt(stmt, block)
        self.frames.pop()

    def stmt(self, stmt: n.Stmt, block: n.Block) -> None:
        if isinstance(stmt, n.Let):
            if stmt.type is not None:
                self.type_expr(stmt.type)
            self.expr(stmt.value)
            self.bind(stmt.name, stmt, (stmt.span.end, block.span.end))
        elif isinstance(stmt, n.For):
            self.expr(stmt.iterable)
            self.frames.append({})
            self.bind(stmt.var, stmt, (stmt.body.span.start, stmt.body.span.end))
            self.block(stmt.body)
            self.frames.pop()
        elif isinstance(stmt, n.If):
            self.expr(stmt.condition)
            self.block(stmt.then)
            if isinstance(stmt.orelse, n.Block):
                self.block(stmt.orelse)
            elif isinstance(stmt.orelse, n.If):
                self.stmt(stmt.orelse, block)
        elif isinstance(stmt, n.While):
            self.expr(stmt.condition)
            self.block(stmt.body)
        elif isinstance(stmt, n.Match):
            self.match(stmt)
        else:
            for child in n.iter_children(stmt):
                self.expr(child)

    def match(self, stmt: n.Match) -> None:
        self.expr(stmt.subject)
        subject = self.model.type_of(stmt.subject)
        base = t.strip_optional(subject) if subject is not None else None
        for case in stmt.cases:
            if isinstance(base, t.Named) and base.kind == "enum":
                self.ref(case.tag.span, self.index.members.get((base.name, case.tag.name)))
            self.frames.append({})
            if case.binding is not None:
                self.bind(case.binding, case, (case.body.span.start, case.body.span.end))
            self.block(case.body)
            self.frames.pop()
        if stmt.orelse is not None:
            self.block(stmt.orelse)

    # -- expressions
    def arguments(self, args: tuple[n.Arg, ...], target: Symbol | None) -> None:
        """Named arguments name the parameters of a tool or fn, or the fields of a record."""
        for arg in args:
            if arg.name is not None and target is not None:
                if target.kind in (Kind.RECORD, Kind.ENTITY):
                    self.ref(arg.name.span, self.index.fields.get((target.name, arg.name.name)))
                else:
                    named = next((c for c in target.children
                                  if c.kind is Kind.PARAM and c.name == arg.name.name), None)
                    self.ref(arg.name.span, named)
            self.expr(arg.value)

    def expr(self, e: n.Node) -> None:
        ix = self.index
        if isinstance(e, n.NameRef):
            self.name(e)
        elif isinstance(e, n.Attribute):
            self.attribute(e)
        elif isinstance(e, n.Call):
            self.expr(e.func)
            target: Symbol | None = None
            if isinstance(e.func, n.NameRef) and self.lookup_local(e.func.name) is None:
                target = ix.fns.get(e.func.name) or ix.types.get(e.func.name)
            self.arguments(e.args, target)
        elif isinstance(e, n.Lambda):
            self.frames.append({})
            self.bind(e.param, e, (e.body.span.start, e.body.span.end))
            self.expr(e.body)
            self.frames.pop()
        elif isinstance(e, n.Quantifier):
            self.expr(e.iterable)
            self.frames.append({})
            self.bind(e.var, e, (e.body.span.start, e.body.span.end))
            self.expr(e.body)
            self.frames.pop()
        elif isinstance(e, n.Comprehension):
            self.expr(e.iterable)
            self.frames.append({})
            self.bind(e.var, e, (e.element.span.start, e.span.end))
            self.expr(e.element)
            if e.condition is not None:
                self.expr(e.condition)
            self.frames.pop()
        elif isinstance(e, n.TypeExpr):
            self.type_expr(e)
        else:
            for child in n.iter_children(e):
                self.expr(child)

    def name(self, e: n.NameRef) -> None:
        ix = self.index
        local = self.lookup_local(e.name)
        if local is not None:
            self.ref(e.span, local, e)
            return
        res = self.model.resolutions.get(id(e))
        kind = res.kind if res is not None else None
        if kind == "enum_member" and res is not None and res.owner is not None:
            self.ref(e.span, ix.members.get((res.owner, e.name)), e)
        elif kind in ("state", None) and e.name in ix.state:
            self.ref(e.span, ix.state[e.name], e)
        elif kind in ("fn", None) and e.name in ix.fns:
            self.ref(e.span, ix.fns[e.name], e)
        elif kind in ("enum", "record", "world_type", None) and e.name in ix.types:
            self.ref(e.span, ix.types[e.name], e)

    def attribute(self, e: n.Attribute) -> None:
        ix = self.index
        obj = e.obj
        if isinstance(obj, n.NameRef) and self.lookup_local(obj.name) is None and (
                obj.name not in ix.state) and (
                (enum := ix.types.get(obj.name)) is not None and enum.kind is Kind.ENUM):
            self.ref(obj.span, enum, obj)
            self.ref(e.name.span, ix.members.get((obj.name, e.name.name)), e)
            return
        if isinstance(obj, n.NameRef) and obj.name == "initial" and \
                self.lookup_local("initial") is None:
            self.ref(e.name.span, ix.state.get(e.name.name), e)
            return
        self.expr(obj)
        record = self.record_of(self.model.type_of(obj))
        if record is not None:
            self.ref(e.name.span, ix.fields.get((record, e.name.name)), e)
