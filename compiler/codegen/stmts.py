"""Statements to Python source lines, each anchored to its spec line.

Changes to state go through the episode's write API, one call per statement
(``set_field``, ``set_state``, ``insert``, ``delete``; ``next_id`` in expressions), which
logs each change for undo. Records, lists and maps are values:
assigning into one rebuilds it (``rt.replace_fields``, ``rt.set_at``) and
stores the new value where the old one was.
"""

from __future__ import annotations

import ast
from collections.abc import Container

from worldspec.compiler import types as t
from worldspec.compiler.codegen.exprs import Env, ExprCompiler
from worldspec.compiler.codegen.names import enum_member, file_label, py_name
from worldspec.dsl import nodes as n

__all__ = ["StatementCompiler"]


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
        #: sequences advanced (``next()``) by expressions compiled before the body
        self._sequences_before = exprs.sequences_advanced

    @property
    def sequences_advanced(self) -> bool:
        """Whether the body advances a sequence (``next()``, a change to a state item)."""
        return self.x.sequences_advanced > self._sequences_before

    def anchor(self, node: n.Node) -> str:
        return f"  # {file_label(node.span.file)}:{node.span.line}"

    def emit(self, text: str, node: n.Node | None = None) -> None:
        if self.present and "rt.absent()" in text:
            text = _without_guards(text, self.present)
        suffix = self.anchor(node) if node is not None else ""
        self.lines.append("    " * self.depth + text + suffix)

    def block(self, body: tuple[n.Stmt, ...]) -> None:
        before = len(self.lines)
        saved = dict(self.env.locals)
        present = set(self.present)
        for stmt in body:
            getattr(self, "s_" + type(stmt).__name__)(stmt)
        self.env.locals = saved
        # what the block narrowed ends with it; what it assigned is no longer narrowed
        self.present &= present
        if len(self.lines) == before:
            self.emit("pass")

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
                self.emit(f"{self.env.ep}.set_state({py_name(target.name)!r}, {value})", node)
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
            obj = self.copied(target.obj, self.x.value(target.obj, self.env))
            if isinstance(obj_type, t.MapOf):
                key = self.x.stored(target.index, self.env)
                rebuilt = f"{{**{obj}, {key}: {value}}}"
            elif obj_type == t.JSON:
                rebuilt = f"rt.json_set({obj}, {self.x.value(target.index, self.env)}, {value})"
            else:
                rebuilt = f"rt.set_at({obj}, {self.x.value(target.index, self.env)}, {value})"
            self.assign(target.obj, rebuilt, node)
            return
        raise AssertionError(f"cannot assign to {type(target).__name__}")

    def set_row(self, entity: str, name: str, obj: str, value: str, node: n.Node) -> None:
        """``ep.set_field(row, field, value)``: one call, the runtime logs the undo entry and
        clears the row's caches and its tables' digests."""
        self.emit(f"{self.env.ep}.set_field({obj}, {py_name(name)!r}, {value})", node)

    def s_If(self, s: n.If, keyword: str = "if") -> None:
        self.emit(f"{keyword} {self.x.value(s.condition, self.env)}:", s)
        self.nested(s.then.body)
        if isinstance(s.orelse, n.If):
            self.s_If(s.orelse, "elif")
        elif isinstance(s.orelse, n.Block):
            self.emit("else:")
            self.nested(s.orelse.body)

    def copied(self, target: n.Expr, current: str) -> str:
        """``current``, the list, set or map at ``target``, to be copied with one change: the
        copy costs a step per element, paid before it is made (``rt.each``), but by a
        statement that runs once per call (the body of a tool, outside loops)."""
        if self.once and not self.loops:
            return current
        return f"rt.each({self.env.ep}, {current})"

    def charge(self, steps: str, node: n.Node | None = None) -> None:
        """Pay ``steps`` from the call's budget; a spent budget fails the call (the check is
        one expression, so a statement's charge stays anchored to its spec line)."""
        self.emit(f"{self.env.ep}.charge({steps})", node)

    def s_For(self, s: n.For) -> None:
        """One step per element, charged when the loop starts (the collection is copied)."""
        iterable = self.x.elements(s.iterable, self.env, charge=True)
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
        self.emit(f"{self.env.ep}.insert({self._table(s.table)}, "
                  f"{self.x.value(s.value, self.env)})", s)

    def s_Delete(self, s: n.Delete) -> None:
        self.other_writes = True
        self.emit(f"{self.env.ep}.delete({self._table(s.table)}, "
                  f"{self.x.key(s.value, self.env)})", s)

    def s_Append(self, s: n.Append) -> None:
        typ = t.strip_optional(self.x.type_of(s.target))
        current = self.copied(s.target, self.x.value(s.target, self.env))
        item = self.x.stored(s.value, self.env)
        if isinstance(typ, t.SetOf):
            value = f"rt.add({current}, {item})"
        else:
            value = f"({current} + ({item},))"
        self.assign(s.target, value, s)

    def s_Remove(self, s: n.Remove) -> None:
        typ = t.strip_optional(self.x.type_of(s.target))
        current = self.copied(s.target, self.x.value(s.target, self.env))
        item = self.x.stored(s.value, self.env)
        if isinstance(typ, t.MapOf):
            value = f"rt.without_key({current}, {item})"
        else:
            value = f"rt.without({current}, {item})"
        self.assign(s.target, value, s)
