"""Statements to Python source lines, each anchored to its spec line.

Changes to state go through the episode's undo-logged helpers (``_set``,
``_insert``, ``_delete``, ``_next``). Records, lists and maps are values:
assigning into one rebuilds it (``rt.replace_fields``, ``rt.set_at``) and
stores the new value where the old one was.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Container

from worldspec.compiler import types as t
from worldspec.compiler.codegen.exprs import Env, ExprCompiler
from worldspec.compiler.codegen.names import enum_member, file_label, py_name
from worldspec.dsl import nodes as n

__all__ = ["StatementCompiler"]


#: a local or a chain of attribute reads (read twice at no cost)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")

#: ``rt.each(ep, x)`` of a local or a chain of attribute reads (read twice at no cost)
_CHARGED_READ = re.compile(rf"rt\.each\(([A-Za-z_]\w*), ({_DOTTED.pattern})\)")


def _charged_value(src: str, ep: str) -> str | None:
    """``X`` where expression ``src`` is ``rt.each(ep, X)`` as a whole, else None."""
    if not (src.startswith(f"rt.each({ep}, ") and src.endswith(")")):
        return None
    try:
        tree = ast.parse(src, mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(tree, ast.Call) and len(tree.args) == 2 and not tree.keywords
            and isinstance(tree.func, ast.Attribute) and tree.func.attr == "each"
            and isinstance(tree.func.value, ast.Name) and tree.func.value.id == "rt"
            and isinstance(tree.args[0], ast.Name) and tree.args[0].id == ep):
        return None
    return ast.get_source_segment(src, tree.args[1])


def _makes_tuple(src: str) -> bool:
    """Whether expression ``src`` gives a tuple whenever it gives a value at all: a tuple
    display added to something (``x + (y,)``: a list or text there raises first)."""
    try:
        tree = ast.parse(src, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.Add) and (
        isinstance(tree.left, ast.Tuple) or isinstance(tree.right, ast.Tuple))


def _one_statement(text: str) -> ast.stmt | None:
    """The one Python statement of generated line ``text`` (a block header such as ``if c:``
    with a body to parse), or None if the line is not one statement."""
    try:
        tree = ast.parse(text + "\n    pass" if text.endswith(":") else text).body
    except SyntaxError:
        return None
    return tree[0] if len(tree) == 1 else None


def _replaced(text: str, cuts: list[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, new)`` span (ast's offsets, in bytes of UTF-8) made
    ``new``, cut from the end so that the offsets before stay right."""
    data = text.encode()
    for start, end, new in sorted(cuts, reverse=True):
        data = data[:start] + new.encode() + data[end:]
    return data.decode()


def _unconditional(node: ast.AST) -> list[ast.AST]:
    """The children of ``node`` that Python evaluates whenever it evaluates ``node`` (not a
    branch of ``a if c else b``, the right side of ``and``/``or``, a comparison after the
    first, a lambda's or a comprehension's body, a block header's body)."""
    if isinstance(node, ast.BoolOp):
        return [node.values[0]]
    if isinstance(node, ast.IfExp):
        return [node.test]
    if isinstance(node, ast.Compare):
        return [node.left, node.comparators[0]]
    if isinstance(node, ast.Lambda):
        return []
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        return [node.generators[0].iter]
    if isinstance(node, ast.If):
        return [node.test]
    if isinstance(node, ast.For):
        return [node.iter]
    return list(ast.iter_child_nodes(node))


def _hoistable(text: str, ep: str, known: Container[str]
               ) -> tuple[str, list[str]] | None:
    """A one-line statement ``text`` without its ``rt.each(ep, x)`` of ``known`` locals ``x``
    that it evaluates whenever it runs, and those locals in the order met (None if none).
    Only a statement, an ``if`` or a ``for`` header: nothing can go before an ``elif``, and a
    ``while`` header is evaluated again each round."""
    if (not text.startswith(("if ", "for ")) and text.endswith(":")) or \
            text.startswith(("elif ", "while ")):
        return None
    statement = _one_statement(text)
    found: list[tuple[int, int, str]] = []
    todo: list[ast.AST] = [] if statement is None else [statement]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "each" and isinstance(node.func.value, ast.Name) and \
                node.func.value.id == "rt" and len(node.args) == 2 and not node.keywords and \
                isinstance(node.args[0], ast.Name) and node.args[0].id == ep and \
                isinstance(node.args[1], ast.Name) and node.args[1].id in known:
            found.append((node.col_offset, node.end_col_offset or 0, node.args[1].id))
            continue
        todo.extend(_unconditional(node))
    if not found:
        return None
    return _replaced(text, found), [name for _, _, name in sorted(found)]


def _guarded(node: ast.IfExp, names: Container[str]) -> str | None:
    """``x`` where ``node`` is ``x if x is not None else rt.absent()`` of one of ``names``."""
    if not (isinstance(node.body, ast.Name) and node.body.id in names
            and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == node.body.id
            and len(node.test.ops) == 1 and isinstance(node.test.ops[0], ast.IsNot)
            and isinstance(node.test.comparators[0], ast.Constant)
            and node.test.comparators[0].value is None
            and isinstance(node.orelse, ast.Call) and not node.orelse.args
            and isinstance(node.orelse.func, ast.Attribute)
            and node.orelse.func.attr == "absent"):
        return None
    return node.body.id


def _without_guards(text: str, names: Container[str]) -> str:
    """One-line statement ``text`` with its ``(x if x is not None else rt.absent())`` of
    ``names`` (locals mypy has narrowed to not none) read as ``x``, but inside a lambda or a
    comprehension's body, where mypy may not keep the narrowing."""
    statement = _one_statement(text)
    cuts: list[tuple[int, int, str]] = []
    todo: list[ast.AST] = [] if statement is None else [statement]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.IfExp) and (name := _guarded(node, names)) is not None:
            # with the parentheses the guard is always written in
            cuts.append((node.col_offset - 1, (node.end_col_offset or 0) + 1, name))
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            todo.append(node.generators[0].iter)
        elif not isinstance(node, ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return _replaced(text, cuts)


def _assigned(body: tuple[n.Stmt, ...]) -> set[str]:
    """The spec names of the locals and parameters assigned anywhere in ``body``."""
    return {node.target.name for stmt in body for node in n.walk(stmt)
            if isinstance(node, (n.Assign, n.AugAssign)) and isinstance(node.target, n.NameRef)}


def _conjuncts(cond: n.Expr) -> list[n.Expr]:
    if isinstance(cond, n.BoolOp) and cond.op == "and":
        return [*_conjuncts(cond.left), *_conjuncts(cond.right)]
    return [cond]


class StatementCompiler:
    """Emits the body of one tool or helper."""

    def __init__(self, exprs: ExprCompiler, env: Env, indent: int = 2, once: bool = False
                 ) -> None:
        self.x = exprs
        self.env = env
        #: Python name -> type of the parameters and ``let`` locals whose charges can be
        #: drawn before a statement (:meth:`know`; one type per name)
        self.types: dict[str, t.Type] = {}
        #: Python names of optional locals that a ``require x != none`` before, in this
        #: block or one around it, has narrowed for mypy too: read without a guard
        self.present: set[str] = set()
        #: the body runs once per call (a tool's, not a helper's): its statements outside
        #: loops run once, so the copies they make need no charge
        self.once = once
        #: how many loops enclose the statement being compiled
        self.loops = 0
        self.lines: list[str] = []
        self.depth = indent
        #: Python names bound so far in this function: each binding gets its own name,
        #: so a name reused with another type in a sibling block stays well typed.
        self.used: set[str] = set(env.locals.values())
        #: Classes of the module: a local named like one would shadow it.
        self.taken = exprs.tables.module_names()
        #: the row fields the body sets, as (entity, field name)
        self.row_writes: set[tuple[str, str]] = set()
        #: whether the body changes state other than row fields (a state item, a row
        #: inserted or deleted)
        self.other_writes = False
        #: while a run of statements setting fields of one row is compiled (``field_run``):
        #: the row's local, whose field writes then only store
        self.run_row: str | None = None

    def anchor(self, node: n.Node) -> str:
        return f"  # {file_label(node.span.file)}:{node.span.line}"

    def emit(self, text: str, node: n.Node | None = None) -> None:
        if "rt.each(" in text:
            hoisted = _hoistable(text, self.env.ep, self.types)
            if hoisted is not None:
                # the statement's charges for locals it processes whenever it runs: drawn
                # together before it runs, without a call each
                text, names = hoisted
                self.charge(" + ".join(self.len_source(x, self.types[x]) for x in names), node)
        if self.present and "rt.absent()" in text:
            text = _without_guards(text, self.present)
        suffix = self.anchor(node) if node is not None else ""
        self.lines.append("    " * self.depth + text + suffix)

    def block(self, body: tuple[n.Stmt, ...]) -> None:
        before = len(self.lines)
        saved = dict(self.env.locals)
        present = set(self.present)
        i = 0
        while i < len(body):
            run = self.fields_of_one_row(body, i)
            if len(run) > 1:
                self.field_run(run)
                i += len(run)
            else:
                getattr(self, "s_" + type(body[i]).__name__)(body[i])
                i += 1
        self.env.locals = saved
        # what the block narrowed ends with it; what it assigned is no longer narrowed
        self.present &= present
        if len(self.lines) == before:
            self.emit("pass")

    def _row_field(self, stmt: n.Stmt) -> tuple[str, str, str] | None:
        """(entity, row local, field) of a statement ``r.f = x`` or ``r.f op= x`` setting a
        field of the row held by local (or parameter) ``r``, else None."""
        if not isinstance(stmt, (n.Assign, n.AugAssign)):
            return None
        target = stmt.target
        if not (isinstance(target, n.Attribute) and isinstance(target.obj, n.NameRef)):
            return None
        typ = t.strip_optional(self.x.type_of(target.obj))
        if not (isinstance(typ, t.Named) and typ.kind == "entity"):
            return None
        row = self.x.value(target.obj, self.env)
        if not row.isidentifier():
            return None
        return typ.name, row, target.name.name

    def fields_of_one_row(self, body: tuple[n.Stmt, ...], start: int) -> tuple[n.Stmt, ...]:
        """The statements from ``start`` on that set fields of one and the same row."""
        first = self._row_field(body[start])
        if first is None:
            return body[start:start + 1]
        end = start + 1
        while end < len(body):
            found = self._row_field(body[end])
            if found is None or found[:2] != first[:2]:
                break
            end += 1
        return body[start:end]

    def field_run(self, run: tuple[n.Stmt, ...]) -> None:
        """Statements setting fields of one row, one after the other: one undo entry for
        them all (kind 3: the fields' values, digest, text, fragments and stale bits of
        before), then each value computed and stored in turn, then the fields' fragments
        marked stale and the digests cleared once. A value that fails leaves the entry,
        which puts back what the fields held (the ones not yet set: what they hold)."""
        found = [f for f in map(self._row_field, run) if f is not None]
        entity, row = found[0][0], found[0][1]
        names = list(dict.fromkeys(field for _, _, field in found))  # each once, in order
        fields = list(self.x.world.records[entity].fields)
        bits = sum(1 << fields.index(name) for name in names)
        attrs = tuple(py_name(name) for name in names)
        ep = self.env.ep
        olds = "".join(f"{row}.{attr}, " for attr in attrs)
        self.emit(f"{ep}._undo.append((3, {row}, {attrs!r}, ({olds}), {row}._digest, "
                  f"{row}._text, {row}._frags, {row}._stale))", run[0])
        self.run_row = row
        try:
            for stmt in run:
                getattr(self, "s_" + type(stmt).__name__)(stmt)
        finally:
            self.run_row = None
        self.emit(f"{row}._stale |= {bits}", run[-1])
        self.emit(f"{row}._digest = {row}._text = None", run[-1])
        self.invalidate_tables(entity, run[-1])

    def nested(self, body: tuple[n.Stmt, ...]) -> None:
        self.depth += 1
        self.block(body)
        self.depth -= 1

    # --------------------------------------------------------------- locals
    def local(self, ident: n.Ident) -> str:
        name = py_name(ident.name)
        if name in self.used or name in self.taken:
            name = self.x.fresh(name.lstrip("_"))
        self.used.add(name)
        self.env.locals[ident.name] = name
        return name

    # ----------------------------------------------------------- statements
    def s_Let(self, s: n.Let) -> None:
        declared = self.x.type_of(s)
        value = self.x.value(s.value, self.env, declared)
        name = self.local(s.name)
        self.know(name, declared)
        annotation = self.x.tables.annotation(declared, stored=False)
        self.emit(f"{name}: {annotation} = {value}", s)

    def s_Assign(self, s: n.Assign) -> None:
        target_type = self.x.type_of(s.target)
        if self.is_local(s.target):
            # a local holds what its `let` bound: an entity's row, not the key a field stores
            value = self.x.value(s.value, self.env, target_type)
        else:
            value = self.x.stored(s.value, self.env, target_type)
        self.assign(s.target, value, s)

    def is_local(self, target: n.Expr) -> bool:
        res = self.x.program.resolutions.get(id(target))
        return isinstance(target, n.NameRef) and res is not None and res.kind == "local"

    def s_AugAssign(self, s: n.AugAssign) -> None:
        current = self.x.value(s.target, self.env)
        if self.x.tables.dynamic:  # Python's `op=` on whatever the target and value hold
            self.assign(s.target, f"rt.python_augmented({self.env.ep}, {s.op[0]!r}, {current}, "
                        f"{self.x.value(s.value, self.env)})", s)
            return
        value = self.x.arithmetic(s.op, current, self.x.value(s.value, self.env),
                                  self.x.type_of(s.target), isinstance(s.value, n.IntLit),
                                  self.env)
        self.assign(s.target, value, s)

    def assign(self, target: n.Expr, value: str, node: n.Node) -> None:
        """Store ``value`` (already in stored form) at ``target``."""
        typ = self.x.type_of(target)
        if isinstance(target, n.NameRef):
            res = self.x.program.resolutions.get(id(target))
            if res is not None and res.kind == "state":
                self.other_writes = True
                value = self.x.tables.checked(typ, value, repr(target.name))
                self.emit(f"{self.env.ep}._set({self.env.ep}.state, "
                          f"{py_name(target.name)!r}, {value})", node)
            else:
                local = self.env.locals.get(target.name, py_name(target.name))
                self.emit(f"{local} = {value}", node)
                self.present.discard(local)
            return
        if isinstance(target, n.Attribute):
            obj_type = t.strip_optional(self.x.type_of(target.obj))
            field = py_name(target.name.name)
            owner = obj_type.name if isinstance(obj_type, t.Named) else "?"
            value = self.x.tables.checked(typ, value, repr(f"{owner}.{target.name.name}"))
            if isinstance(obj_type, t.Named) and obj_type.kind == "entity":
                self.row_writes.add((obj_type.name, target.name.name))
                self.set_row(obj_type.name, target.name.name,
                             self.x.value(target.obj, self.env), value, node)
            else:
                rebuilt = (f"rt.replace_fields({self.x.value(target.obj, self.env)}, "
                           f"{field}={value})")
                self.assign(target.obj, rebuilt, node)
            return
        if isinstance(target, n.Index):
            obj_type = t.strip_optional(self.x.type_of(target.obj))
            obj = self.x.value(target.obj, self.env)
            if isinstance(obj_type, t.MapOf):
                key = self.x.stored(target.index, self.env)
                rebuilt = f"{{**{obj}, {key}: {value}}}"
            elif obj_type == t.JSON:
                rebuilt = f"rt.json_set({obj}, {self.x.value(target.index, self.env)}, {value})"
            else:
                rebuilt = f"rt.set_at({obj}, {self.x.value(target.index, self.env)}, {value})"
            self.assign(target.obj, self.copied(target.obj, obj, rebuilt, node), node)
            return
        raise AssertionError(f"cannot assign to {type(target).__name__}")

    def set_row(self, entity: str, name: str, obj: str, value: str, node: n.Node) -> None:
        """``ep._set_row(obj, field, value)``, inline: the row is computed (into a local
        unless it is one), the undo entry logged with the row's digest, text, text fragments
        and their stale bits (``Row._put_back``), then the value computed and set, its
        fragment marked stale, and the digests of the entity's tables cleared. A value
        that fails leaves an undo entry that puts back what is there: harmless."""
        ep = self.env.ep
        field = py_name(name)
        fields = list(self.x.world.records[entity].fields)
        bit = 1 << fields.index(name)
        row = obj if obj.isidentifier() else self.x.fresh("row")
        if row != obj:
            self.emit(f"{row} = {obj}", node)
        charged = _charged_value(value, ep)
        if charged is not None:  # the value's charge, paid by two statements, not rt.each
            value = self.x.fresh("new")
            self.emit(f"{value} = {charged}", node)
            self.charge_len(value, node, of=self.x.world.records[entity].fields[name].type,
                            made_tuple=_makes_tuple(charged))
        if row == self.run_row:  # in a run of writes to this row: logged and marked once
            self.emit(f"{row}.{field} = {value}", node)
            return
        self.emit(f"{ep}._undo.append((0, {row}, {field!r}, {row}.{field}, {row}._digest, "
                  f"{row}._text, {row}._frags, {row}._stale))", node)
        self.emit(f"{row}.{field} = {value}", node)
        self.emit(f"{row}._stale |= {bit}", node)
        self.emit(f"{row}._digest = {row}._text = None", node)
        self.invalidate_tables(entity, node)

    def invalidate_tables(self, entity: str, node: n.Node) -> None:
        """A row of ``entity`` changed: the digests of the tables holding its rows are stale."""
        for state in self.x.world.state.values():
            if state.kind == "table" and state.entity == entity:
                self.emit(f"{self.env.ep}.t_{state.name}._digest = None", node)

    def s_If(self, s: n.If, keyword: str = "if") -> None:
        self.emit(f"{keyword} {self.x.value(s.condition, self.env)}:", s)
        self.nested(s.then.body)
        if isinstance(s.orelse, n.If):
            self.s_If(s.orelse, "elif")
        elif isinstance(s.orelse, n.Block):
            self.emit("else:")
            self.nested(s.orelse.body)

    def copied(self, target: n.Expr, current: str, rebuilt: str, node: n.Node) -> str:
        """``rebuilt``: the list, set or map at ``target`` (now ``current``) copied with one
        change, which costs a step per element, paid before the statement (inline, as a
        ``while`` round pays: cheaper than a call); where reading ``target`` twice would draw
        twice, the copy pays through ``rt.each`` instead."""
        if self.once and not self.loops:
            return rebuilt
        if self.x._draws(target):
            return f"rt.each({self.env.ep}, {rebuilt})"
        self.charge_len(current, node, of=self.x.type_of(target))
        return rebuilt

    def charge_len(self, value: str, node: n.Node, of: t.Type,
                   made_tuple: bool = False) -> None:
        """Pay a step per element of ``value`` (a local or an attribute chain) of type
        ``of`` (see :meth:`len_source`)."""
        self.charge(self.len_source(value, of, made_tuple), node)

    def len_source(self, value: str, of: t.Type, made_tuple: bool = False) -> str:
        """The steps of processing ``value`` (a local or an attribute chain) of type ``of``.
        With ``arguments: dynamic`` the value may be another JSON value than declared: one
        without a length (a number for a list) costs one step, and the loop over it fails
        with Python's text (``rt.size``); a tuple (what a list or set is unless another value
        was given) is measured without the call, a table always, and so is a tuple just made
        (``made_tuple``)."""
        kind = t.strip_optional(of)
        if not self.x.tables.dynamic or made_tuple or isinstance(kind, t.Table):
            return f"len({value})"
        if isinstance(kind, (t.ListOf, t.SetOf)) and _DOTTED.fullmatch(value):
            return f"(len({value}) if type({value}) is tuple else rt.size({value}))"
        return f"rt.size({value})"

    def know(self, name: str, typ: t.Type) -> None:
        """Python local ``name`` holds a value of ``typ``: a collection whose charges can be
        drawn before the statement (not a json value, which may have no length, nor an
        optional one, which mypy may not see narrowed)."""
        if isinstance(typ, (t.ListOf, t.SetOf, t.MapOf)) or typ == t.STR:  # not optional
            self.types[name] = typ
        else:
            self.types.pop(name, None)

    def charge(self, steps: str, node: n.Node | None = None) -> None:
        """Pay ``steps`` from the call's budget; a spent budget fails the call (the check is
        one expression, so a statement's charge stays anchored to its spec line)."""
        ep = self.env.ep
        self.emit(f"{ep}._steps -= {steps}", node)
        self.emit(f"{ep}._steps >= 0 or rt.out_of_steps()", node)

    def s_For(self, s: n.For) -> None:
        """One step per element, charged when the loop starts (the collection is copied)."""
        iterable = self.x.elements(s.iterable, self.env, charge=True)
        charged = _CHARGED_READ.fullmatch(iterable)
        if charged is not None and charged.group(1) == self.env.ep:
            # a local or a field read: charged by two statements, without a call
            iterable = charged.group(2)
            self.charge_len(iterable, s, of=self.x.type_of(s.iterable))
        self.loop_widens(s.body.body)
        saved = dict(self.env.locals)
        name = self.local(s.var)
        self.emit(f"for {name} in {iterable}:", s)
        self.loops += 1
        self.nested(s.body.body)
        self.loops -= 1
        self.env.locals = saved

    def loop_widens(self, body: tuple[n.Stmt, ...]) -> None:
        """A local the loop's body assigns is not narrowed anywhere in the loop (mypy checks
        the body again with the types its assignments give)."""
        self.present -= {self.env.locals[x] for x in _assigned(body) if x in self.env.locals}

    def s_While(self, s: n.While) -> None:
        """One step per round from the call's budget: a call whose loops run away (however
        nested) fails instead of hanging."""
        self.loop_widens(s.body.body)
        self.emit(f"while {self.x.value(s.condition, self.env)}:", s)
        self.depth += 1
        self.charge("1")
        saved = dict(self.env.locals)
        self.loops += 1
        self.block(s.body.body)
        self.loops -= 1
        self.env.locals = saved
        self.depth -= 1

    def s_Match(self, s: n.Match) -> None:
        subject = self.x.fresh("subject")
        self.emit(f"{subject} = {self.x.value(s.subject, self.env)}", s)
        typ = t.strip_optional(self.x.type_of(s.subject))
        keyword = "if"
        for case in s.cases:
            if isinstance(typ, t.Named) and typ.kind == "union":
                record = self.x.world.unions[typ.name].variants.get(case.tag.name, "")
                test = f"isinstance({subject}, {self.x.tables.class_name(record)})"
            elif isinstance(typ, t.Named):
                # the class attribute, not the module constant: mypy narrows on it, and
                # knows a match over every member returns
                test = f"{subject} == {self.x.tables.class_name(typ.name)}." \
                       f"{enum_member(case.tag.name)}"
            else:
                test = "False"
            self.emit(f"{keyword} {test}:", case)
            keyword = "elif"
            saved = dict(self.env.locals)
            self.depth += 1
            if case.binding is not None:
                self.emit(f"{self.local(case.binding)} = {subject}")
            self.block(case.body.body)
            self.depth -= 1
            self.env.locals = saved
        if s.orelse is not None:
            if s.cases:
                self.emit("else:")
                self.nested(s.orelse.body)
            else:
                self.block(s.orelse.body)

    def s_Require(self, s: n.Require) -> None:
        self.emit(f"if not {self.x.value(s.condition, self.env)}:", s)
        self.depth += 1
        self.emit(f"raise ToolError({self.x.value(s.message, self.env)})")
        self.depth -= 1
        for part in _conjuncts(s.condition):  # mypy narrows `x` after `if not (x is not None)`
            if isinstance(part, n.Compare) and part.op == "!=" and \
                    isinstance(part.right, n.NoneLit) and isinstance(part.left, n.NameRef):
                res = self.x.program.resolutions.get(id(part.left))
                if res is not None and res.kind in ("local", "param") and \
                        part.left.name in self.env.locals:
                    self.present.add(self.env.locals[part.left.name])

    def s_Fail(self, s: n.Fail) -> None:
        error = "rt.KeptError" if s.keep else "ToolError"
        self.emit(f"raise {error}({self.x.value(s.message, self.env)})", s)

    def s_Break(self, s: n.Break) -> None:
        self.emit("break", s)

    def s_Continue(self, s: n.Continue) -> None:
        self.emit("continue", s)

    def s_Return(self, s: n.Return) -> None:
        if s.value is None:
            self.emit("return None", s)
        else:
            self.emit(f"return {self.x.value(s.value, self.env)}", s)

    def _table(self, expr: n.Expr) -> str:
        return self.x.value(expr, self.env)

    def s_Insert(self, s: n.Insert) -> None:
        self.other_writes = True
        self.emit(f"{self.env.ep}._insert({self._table(s.table)}, "
                  f"{self.x.value(s.value, self.env)})", s)

    def s_Delete(self, s: n.Delete) -> None:
        self.other_writes = True
        self.emit(f"{self.env.ep}._delete({self._table(s.table)}, "
                  f"{self.x.key(s.value, self.env)})", s)

    def s_Append(self, s: n.Append) -> None:
        typ = t.strip_optional(self.x.type_of(s.target))
        current = self.x.value(s.target, self.env)
        item = self.x.stored(s.value, self.env)
        if isinstance(typ, t.SetOf):
            value = f"rt.add({current}, {item})"
        else:
            value = f"({current} + ({item},))"
        self.assign(s.target, self.copied(s.target, current, value, s), s)

    def s_Remove(self, s: n.Remove) -> None:
        typ = t.strip_optional(self.x.type_of(s.target))
        current = self.x.value(s.target, self.env)
        item = self.x.stored(s.value, self.env)
        if isinstance(typ, t.MapOf):
            value = f"rt.without_key({current}, {item})"
        else:
            value = f"rt.without({current}, {item})"
        self.assign(s.target, self.copied(s.target, current, value, s), s)
