"""Statements to Python statements (``compiler.codegen.pycode``), each anchored to its spec
line.

Changes to state go through the episode's write API, one call per statement
(``set_field``, ``append``/``add``/``remove`` on a row's collection, ``set_state``,
``insert``, ``delete``; ``next_id`` in expressions), which logs each change for undo.
Records, lists and maps are values: assigning into one rebuilds it (``rt.replace_fields``,
``rt.set_at``) and stores the new value where the old one was.
"""

from __future__ import annotations

from worldspec.compiler import types as t
from worldspec.compiler.builtins import DRAWS
from worldspec.compiler.codegen.exprs import Env, ExprCompiler
from worldspec.compiler.codegen.names import enum_member, file_label, py_name
from worldspec.compiler.codegen.pycode import (
    Assign,
    Attr,
    AugAssign,
    BinOp,
    Break,
    Call,
    Const,
    Continue,
    DictOf,
    Expr,
    ExprStmt,
    For,
    If,
    Match,
    MatchCase,
    Name,
    Raise,
    Return,
    Stmt,
    TupleOf,
    While,
    call,
    is_dotted,
    print_block,
    rt,
)
from worldspec.dsl import nodes as n
from worldspec.runtime.budget import MAX_INT_BITS, MAX_STEPS

__all__ = ["StatementCompiler", "anchor_of"]


def anchor_of(node: n.Node) -> str:
    """Where ``node`` is in the spec, as the comment at the end of its code says it."""
    return f"{file_label(node.span.file)}:{node.span.line}"


def _assigned(body: tuple[n.Stmt, ...]) -> set[str]:
    """The spec names of the locals and parameters assigned anywhere in ``body``."""
    return {node.target.name for stmt in body for node in n.walk(stmt)
            if isinstance(node, (n.Assign, n.AugAssign)) and isinstance(node.target, n.NameRef)}


#: a counter's literals have at most this many bits (see :func:`_counters`)
_COUNTER_LITERAL_BITS = MAX_INT_BITS - 64


def _int_literal(value: n.Expr) -> bool:
    """Whether ``value`` is an int literal (maybe negated) well inside the int bound."""
    if isinstance(value, n.Unary) and value.op == "-":
        value = value.operand
    return isinstance(value, n.IntLit) and not isinstance(value.value, bool) and \
        value.value.bit_length() <= _COUNTER_LITERAL_BITS


def _counters(body: tuple[n.Stmt, ...]) -> set[str]:
    """The spec names of the locals of a function ``body`` that only ever hold an int: each
    is bound only by ``let`` of an int literal and changed only by ``+=`` / ``-=`` of int
    literals (no other binding of the name anywhere in the body).

    Such a counter is ``i += 1`` even with ``arguments: dynamic`` (Python's ``+=`` on two
    ints is the language's), with no bound check: it cannot pass ``MAX_INT_BITS``. A local
    lives in one call of its function, where a statement runs once plus once per round of
    the loops around it, each round a step of the tool call's budget (``MAX_STEPS``): after
    ``N`` statements of the body each ran that often, ``|i| <= |start| + N * (MAX_STEPS +
    1) * max|literal|``, under ``2 ** (MAX_INT_BITS - 64 + 21 + log2 N)``: within the bound
    for any body of fewer than ``2 ** 40`` statements."""
    counters: set[str] = set()
    others: set[str] = set()
    for stmt in body:
        for node in n.walk(stmt):
            if isinstance(node, n.Let):
                (counters if _int_literal(node.value) else others).add(node.name.name)
            elif isinstance(node, (n.Assign, n.AugAssign)) and \
                    isinstance(node.target, n.NameRef):
                if not (isinstance(node, n.AugAssign) and node.op in ("+", "-") and
                        _int_literal(node.value)):
                    others.add(node.target.name)
            elif isinstance(node, n.For):
                others.add(node.var.name)
            elif isinstance(node, n.MatchCase) and node.binding is not None:
                others.add(node.binding.name)
    assert MAX_STEPS < 2 ** 21  # the bound above
    return counters - others


def _conjuncts(cond: n.Expr) -> list[n.Expr]:
    if isinstance(cond, n.BoolOp) and cond.op == "and":
        return [*_conjuncts(cond.left), *_conjuncts(cond.right)]
    return [cond]


class StatementCompiler:
    """Builds the body of one tool or helper: :attr:`body`, printed by :attr:`lines`."""

    def __init__(self, exprs: ExprCompiler, env: Env, indent: int = 2, once: bool = False
                 ) -> None:
        self.x = exprs
        self.env = env
        #: the body runs once per call (a tool's, not a helper's): its statements outside
        #: loops run once, so the copies they make need no charge
        self.once = once
        #: how many loops enclose the statement being compiled
        self.loops = 0
        #: the statements of the body; :attr:`open` is the block being filled
        self.body: list[Stmt] = []
        self.open = self.body
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
        #: the spec names of the body's int counters (:func:`_counters`), found when the
        #: body's first block is compiled
        self.counters: set[str] | None = None

    @property
    def sequences_advanced(self) -> bool:
        """Whether the body advances a sequence (``next()``, a change to a state item)."""
        return self.x.sequences_advanced > self._sequences_before

    @property
    def lines(self) -> list[str]:
        """The body's Python lines, at the compiler's indentation."""
        return print_block(self.body, self.depth)

    @property
    def ep(self) -> Name:
        return self.env.episode

    def emit(self, stmt: Stmt, node: n.Node | None = None) -> None:
        if node is not None:
            stmt.anchor = anchor_of(node)
        self.open.append(stmt)

    def block(self, body: tuple[n.Stmt, ...]) -> None:
        if self.counters is None:  # the function's whole body
            self.counters = _counters(body)
        saved = dict(self.env.locals)
        present = set(self.env.present)
        i = 0
        while i < len(body):
            run = self.fields_of_one_row(body, i)
            if len(run) > 1:
                self.set_fields(run)
            else:
                getattr(self, "s_" + type(body[i]).__name__)(body[i])
            i += len(run)
        self.env.locals = saved
        # what the block narrowed ends with it; what it assigned is no longer narrowed
        self.env.present &= present

    def _field_write(self, stmt: n.Stmt) -> tuple[str, str, str] | None:
        """(entity, row local, field) of a statement ``r.f = x`` setting a field of the row
        held by a local or parameter ``r``, else None."""
        if not (isinstance(stmt, n.Assign) and isinstance(stmt.target, n.Attribute)
                and isinstance(stmt.target.obj, n.NameRef)):
            return None
        typ = t.strip_optional(self.x.type_of(stmt.target.obj))
        res = self.x.program.resolutions.get(id(stmt.target.obj))
        if not (isinstance(typ, t.Named) and typ.kind == "entity" and res is not None
                and res.kind in ("local", "param")):
            return None
        return typ.name, stmt.target.obj.name, stmt.target.name.name

    def _reads_no_row(self, value: n.Expr) -> bool:
        """Whether computing ``value`` reads nothing a write to a row can change: no row
        (any expression giving one: two locals may hold one row), no state, no helper (which
        may read either), nothing drawn."""
        for node in n.walk(value):
            if self.x.is_entity(self.x.type_of(node)):
                return False
            if isinstance(node, n.NameRef):
                res = self.x.program.resolutions.get(id(node))
                if res is None or res.kind in ("state", "initial", "fn") or (
                        res.kind == "builtin" and node.name in DRAWS):
                    return False
        return True

    def fields_of_one_row(self, body: tuple[n.Stmt, ...], start: int) -> tuple[n.Stmt, ...]:
        """The statements from ``start`` on that set distinct fields of one row, each value
        after the first reading nothing those writes change (so computing them all before
        storing any gives what one after the other gives)."""
        first = self._field_write(body[start])
        if first is None:
            return body[start:start + 1]
        fields = {first[2]}
        end = start + 1
        while end < len(body):
            found = self._field_write(body[end])
            stmt = body[end]
            if found is None or found[:2] != first[:2] or found[2] in fields or \
                    not isinstance(stmt, n.Assign) or not self._reads_no_row(stmt.value):
                break
            fields.add(found[2])
            end += 1
        return body[start:end]

    def set_fields(self, run: tuple[n.Stmt, ...]) -> None:
        """Statements setting fields of one row one after the other: one call
        (``ep.set_fields(row, (field, ...), value, ...)``), the caches cleared once."""
        values: list[tuple[str, Expr]] = []
        row: Expr | None = None
        for stmt in run:
            assert isinstance(stmt, n.Assign) and isinstance(stmt.target, n.Attribute)
            entity = t.strip_optional(self.x.type_of(stmt.target.obj))
            assert isinstance(entity, t.Named)
            name = stmt.target.name.name
            self.row_writes.add((entity.name, name))
            value = self.x.stored(stmt.value, self.env, self.x.type_of(stmt.target))
            values.append((py_name(name), self.x.checked(self.x.type_of(stmt.target), value,
                                                         f"{entity.name}.{name}")))
            row = self.x.value(stmt.target.obj, self.env)
        assert row is not None
        names = TupleOf(tuple(Const(name) for name, _ in values))
        self.emit(ExprStmt(Call(Attr(self.ep, "set_fields"),
                                (row, names, *(value for _, value in values)))), run[0])

    def nested(self, body: tuple[n.Stmt, ...], first: list[Stmt] | None = None) -> list[Stmt]:
        """The statements of block ``body`` (after ``first``)."""
        outer, self.open = self.open, list(first or [])
        try:
            self.block(body)
            return self.open
        finally:
            self.open = outer

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
        self.emit(Assign(Name(name), value, annotation), s)

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
        if isinstance(s.target, n.NameRef) and isinstance(current, Name) and \
                self.is_local(s.target) and s.target.name in (self.counters or set()):
            self.emit(AugAssign(current, s.op[0], self.x.value(s.value, self.env)), s)
            return
        if self.x.tables.dynamic:  # Python's `op=` on whatever the target and value hold
            self.assign(s.target, rt("python_augmented", self.ep, Const(s.op[0]), current,
                                     self.x.value(s.value, self.env)), s)
            return
        typ = self.x.type_of(s.target)
        value = self.x.arithmetic(s.op, current, self.x.value(s.value, self.env), typ,
                                  isinstance(s.value, n.IntLit), self.env)
        if isinstance(value, BinOp) and value.left == current and isinstance(current, Name) \
                and self.is_local(s.target) and typ in (t.INT, t.FLOAT, t.NUMBER):
            # a number is immutable: `x op= y` is `x = x op y`
            self.emit(AugAssign(current, value.op, value.right), s)
            return
        self.assign(s.target, value, s)

    def assign(self, target: n.Expr, value: Expr, node: n.Node) -> None:
        """Store ``value`` (already in stored form) at ``target``."""
        typ = self.x.type_of(target)
        if isinstance(target, n.NameRef):
            res = self.x.program.resolutions.get(id(target))
            if res is not None and res.kind == "state":
                self.other_writes = True
                value = self.x.checked(typ, value, target.name)
                self.emit(ExprStmt(call(Attr(self.ep, "set_state"), Const(py_name(target.name)),
                                        value)), node)
            else:
                local = self.env.locals.get(target.name, py_name(target.name))
                self.emit(Assign(Name(local), value), node)
                self.env.present.discard(local)
            return
        if isinstance(target, n.Attribute):
            obj_type = t.strip_optional(self.x.type_of(target.obj))
            field = py_name(target.name.name)
            owner = obj_type.name if isinstance(obj_type, t.Named) else "?"
            value = self.x.checked(typ, value, f"{owner}.{target.name.name}")
            obj = self.x.value(target.obj, self.env)
            if isinstance(obj_type, t.Named) and obj_type.kind == "entity":
                self.row_writes.add((obj_type.name, target.name.name))
                self.emit(ExprStmt(call(Attr(self.ep, "set_field"), obj, Const(field), value)),
                          node)
            else:
                replaced = Call(Attr(Name("rt"), "replace_fields"), (obj,), ((field, value),))
                self.assign(target.obj, replaced, node)
            return
        if isinstance(target, n.Index):
            obj_type = t.strip_optional(self.x.type_of(target.obj))
            current = self.copied(target.obj, self.x.value(target.obj, self.env))
            rebuilt: Expr
            if isinstance(obj_type, t.MapOf):
                key = self.x.stored(target.index, self.env)
                rebuilt = DictOf(((None, current), (key, value)))
            elif obj_type == t.JSON:
                rebuilt = rt("json_set", current, self.x.value(target.index, self.env), value)
            else:
                rebuilt = rt("set_at", current, self.x.value(target.index, self.env), value)
            self.assign(target.obj, rebuilt, node)
            return
        raise AssertionError(f"cannot assign to {type(target).__name__}")

    def s_If(self, s: n.If) -> None:
        self.emit(self._if(s), s)

    def _if(self, s: n.If) -> If:
        test = self.x.value(s.condition, self.env)
        then = self.narrowed_block(s.then.body, self.none_tested(s.condition, "!="))
        orelse: list[Stmt] = []
        if isinstance(s.orelse, n.If):
            elif_ = self._if(s.orelse)
            elif_.anchor = anchor_of(s.orelse)
            orelse = [elif_]
        elif isinstance(s.orelse, n.Block):
            lone = self.x.none_tested(s.condition, "==", self.env)
            orelse = self.narrowed_block(s.orelse.body, {lone} if lone else set())
        return If(test, then, orelse)

    def none_tested(self, condition: n.Expr, op: str) -> set[str]:
        """The Python names of the locals and parameters ``condition`` (its conjuncts)
        compares with none by ``op``."""
        names = {self.x.none_tested(part, op, self.env) for part in _conjuncts(condition)}
        return {name for name in names if name is not None}

    def narrowed_block(self, body: tuple[n.Stmt, ...], narrowed: set[str]) -> list[Stmt]:
        """The statements of a branch whose test proved the locals ``narrowed`` are not
        none: mypy narrows them there too (up to an assignment), so they are read plain."""
        added = narrowed - self.env.present
        self.env.present |= added
        try:
            return self.nested(body)
        finally:
            self.env.present -= added

    def copied(self, target: n.Expr, current: Expr) -> Expr:
        """``current``, the list, set or map at ``target``, to be copied with one change: the
        copy costs a step per element, paid before it is made (``rt.each``), but by a
        statement that runs once per call (the body of a tool, outside loops)."""
        if self.once and not self.loops:
            return current
        return self.x.each(current, self.env)

    def charge(self, steps: Expr, node: n.Node | None = None) -> None:
        """Pay ``steps`` from the call's budget; a spent budget fails the call."""
        self.emit(ExprStmt(call(Attr(self.ep, "charge"), steps)), node)

    def s_For(self, s: n.For) -> None:
        """One step per element, charged when the loop starts (the collection is copied)."""
        deletes = any(isinstance(node, n.Delete) for stmt in s.body.body for node in n.walk(stmt))
        iterable = self.x.elements(s.iterable, self.env, charge=True, deletes=deletes)
        self.loop_widens(s.body.body)
        saved = dict(self.env.locals)
        name = self.local(s.var)
        self.loops += 1
        body = self.nested(s.body.body)
        self.loops -= 1
        self.env.locals = saved
        self.emit(For(name, iterable, body), s)

    def loop_widens(self, body: tuple[n.Stmt, ...]) -> None:
        """A local the loop's body assigns is not narrowed anywhere in the loop (mypy checks
        the body again with the types its assignments give)."""
        self.env.present -= {self.env.locals[x] for x in _assigned(body)
                             if x in self.env.locals}

    def s_While(self, s: n.While) -> None:
        """One step per round from the call's budget: a call whose loops run away (however
        nested) fails instead of hanging."""
        self.loop_widens(s.body.body)
        test = self.x.value(s.condition, self.env)
        saved = dict(self.env.locals)
        self.loops += 1
        body = self.nested(s.body.body,
                           first=[ExprStmt(call(Attr(self.ep, "charge"), Const(1)))])
        self.loops -= 1
        self.env.locals = saved
        self.emit(While(test, body), s)

    def s_Match(self, s: n.Match) -> None:
        """An enum's ``match`` is Python's, each member a value pattern (``case
        OrderStatus.pending:``, the class attribute: mypy narrows on it and knows a match
        over every member returns), the ``else`` the wildcard ``case _:``. A union's is a
        chain of ``isinstance`` tests (``if isinstance(method, GiftCard): card = method``):
        the same test as a class pattern, which costs some 60 ns more per match on a row
        class (measured on tau2's writes); the subject is named once (``_subjectN``) unless
        it may be read again at no cost."""
        typ = t.strip_optional(self.x.type_of(s.subject))
        subject = self.x.value(s.subject, self.env)
        if isinstance(typ, t.Named) and typ.kind == "union":
            self.union_match(s, typ.name, subject)
            return
        if not isinstance(typ, t.Named):  # no case can match: only the `else` runs
            self.emit(Assign(Name(self.x.fresh("subject")), subject), s)
            if s.orelse is not None:
                self.block(s.orelse.body)
            return
        cases: list[MatchCase] = []
        for case in s.cases:
            pattern = f"{self.x.tables.class_name(typ.name)}.{enum_member(case.tag.name)}"
            saved = dict(self.env.locals)
            binding = self.local(case.binding) if case.binding is not None else None
            cases.append(MatchCase(pattern, self.nested(case.body.body), binding,
                                   anchor=anchor_of(case)))
            self.env.locals = saved
        orelse = self.nested(s.orelse.body) if s.orelse is not None else []
        if orelse:  # an empty `else {}` is no case at all
            cases.append(MatchCase("_", orelse))
        if cases:
            self.emit(Match(subject, cases), s)
        else:
            self.emit(ExprStmt(subject), s)

    def union_match(self, s: n.Match, union: str, subject: Expr) -> None:
        """``match`` over a union's variants, as ``if isinstance(...)`` / ``elif`` tests."""
        if not is_dotted(subject):
            named = Name(self.x.fresh("subject"))
            self.emit(Assign(named, subject), s)
            subject = named
            first_anchor = None
        else:
            first_anchor = anchor_of(s)
        chain: list[If] = []
        for case in s.cases:
            record = self.x.world.unions[union].variants.get(case.tag.name, "")
            test = call("isinstance", subject, Name(self.x.tables.class_name(record)))
            saved = dict(self.env.locals)
            first: list[Stmt] = []
            if case.binding is not None:
                first.append(Assign(Name(self.local(case.binding)), subject))
            branch = If(test, self.nested(case.body.body, first), anchor=anchor_of(case))
            self.env.locals = saved
            if chain:
                chain[-1].orelse = [branch]
            chain.append(branch)
        orelse = self.nested(s.orelse.body) if s.orelse is not None else []
        if chain:
            chain[-1].orelse = orelse
            if first_anchor is not None and chain[0].anchor is None:
                chain[0].anchor = first_anchor
            self.emit(chain[0])
        else:
            self.open.extend(orelse)

    def s_Require(self, s: n.Require) -> None:
        test = self.x.negation(s.condition, self.env)
        # `require x == none else ...x...`: the message runs where x is not none
        proved = self.x.none_tested(s.condition, "==", self.env)
        if proved is None or proved in self.env.present:
            failure = self.failure(s.message)
        else:
            self.env.present.add(proved)
            try:
                failure = self.failure(s.message)
            finally:
                self.env.present.discard(proved)
        self.emit(If(test, [failure]), s)
        for part in _conjuncts(s.condition):  # mypy narrows `x` after `if not (x is not None)`
            if isinstance(part, n.Compare) and part.op == "!=" and \
                    isinstance(part.right, n.NoneLit) and isinstance(part.left, n.NameRef):
                res = self.x.program.resolutions.get(id(part.left))
                if res is not None and res.kind in ("local", "param") and \
                        part.left.name in self.env.locals:
                    self.env.present.add(self.env.locals[part.left.name])

    def s_Fail(self, s: n.Fail) -> None:
        if s.keep:
            self.emit(Raise(call("rt.KeptError", self.x.value(s.message, self.env))), s)
        else:
            self.emit(self.failure(s.message), s)

    def failure(self, message: n.Expr) -> Stmt:
        """The call failing with ``message``: ``self.fail(f'...')`` where the message is a
        string the call builds (the episode charges it to the text budget, as
        ``self.built`` would), ``raise ToolError('...')`` where it cannot be long."""
        text = self.x.value(message, self.env)
        if isinstance(text, Call) and isinstance(text.func, Attr) and \
                text.func.name == "built" and len(text.args) == 1 and not text.keywords:
            return ExprStmt(call(Attr(text.func.obj, "fail"), text.args[0]))
        return Raise(call("ToolError", text))

    def s_Break(self, s: n.Break) -> None:
        self.emit(Break(), s)

    def s_Continue(self, s: n.Continue) -> None:
        self.emit(Continue(), s)

    def s_Return(self, s: n.Return) -> None:
        self.emit(Return(None if s.value is None else self.x.value(s.value, self.env)), s)

    def s_Insert(self, s: n.Insert) -> None:
        self.other_writes = True
        self.emit(ExprStmt(call(Attr(self.ep, "insert"), self.x.value(s.table, self.env),
                                self.x.value(s.value, self.env))), s)

    def s_Delete(self, s: n.Delete) -> None:
        self.other_writes = True
        self.emit(ExprStmt(call(Attr(self.ep, "delete"), self.x.value(s.table, self.env),
                                self.x.key(s.value, self.env))), s)

    def s_Append(self, s: n.Append) -> None:
        typ = t.strip_optional(self.x.type_of(s.target))
        item = self.x.stored(s.value, self.env)
        if self.row_collection(s.target, "add" if isinstance(typ, t.SetOf) else "append", item,
                               s):
            return
        current = self.copied(s.target, self.x.value(s.target, self.env))
        value: Expr
        if isinstance(typ, t.SetOf):
            value = rt("add", current, item)
        else:
            value = BinOp(current, "+", TupleOf((item,)))
        self.assign(s.target, value, s)

    def s_Remove(self, s: n.Remove) -> None:
        typ = t.strip_optional(self.x.type_of(s.target))
        item = self.x.stored(s.value, self.env)
        if self.row_collection(s.target, "remove", item, s):
            return
        current = self.copied(s.target, self.x.value(s.target, self.env))
        helper = "without_key" if isinstance(typ, t.MapOf) else "without"
        self.assign(s.target, rt(helper, current, item), s)

    def row_collection(self, target: n.Expr, method: str, item: Expr, node: n.Node) -> bool:
        """``append``/``remove`` on a collection field of a row as the one call of the write
        API that says so (``self.append(order, 'transactions', item)``), where it is the
        field's whole change: a statement that runs once per call (in a loop, the copy pays
        its elements' steps), of a field declared without a refinement or an optional.
        False where the statement is to be written as the field's new value instead."""
        if not isinstance(target, n.Attribute) or self.loops or not self.once:
            return False
        typ = self.x.type_of(target)
        obj_type = t.strip_optional(self.x.type_of(target.obj))
        if isinstance(typ, t.Optional) or self.x.tables.has_refinement(typ) or \
                not (isinstance(obj_type, t.Named) and obj_type.kind == "entity"):
            return False
        self.row_writes.add((obj_type.name, target.name.name))
        self.emit(ExprStmt(call(Attr(self.ep, method), self.x.value(target.obj, self.env),
                                Const(py_name(target.name.name)), item)), node)
        return True
