"""Typed expressions to Python source.

The checker has already typed every expression (``ProgramModel.expr_types``)
and resolved every name (``ProgramModel.resolutions``); this module only
translates. Two representations matter: an expression of entity type
computes the *row*, while fields and containers store the *key*. ``value``
gives the former, ``key`` the latter, and ``stored`` converts any value to
what a field or container holds.

Expressions are built as objects (``compiler.codegen.pycode``), printed by one printer;
every string from the spec is a literal there (``repr``) — never spliced into code.

What can run long or grow draws from the call's budget (``worldspec.runtime.budget``):
iterations through :meth:`ExprCompiler.elements` (``charge=True``: ``rt.each``, one step per
element), growing ``int`` arithmetic through ``rt.bounded``, built strings through
``self.built``, grown lists through ``rt.each``. Values that cannot grow stay unwrapped, so the
common case costs nothing extra.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from worldspec.compiler import types as t
from worldspec.compiler.builtins import DRAWS
from worldspec.compiler.codegen.names import (
    const_name,
    enum_member,
    member_constant,
    py_name,
    union_object,
)
from worldspec.compiler.codegen.pycode import (
    Attr,
    BinOp,
    BoolOp,
    Call,
    Compare,
    Comprehension,
    Const,
    DictOf,
    Expr,
    FormattedValue,
    FString,
    IfExp,
    Index,
    Lambda,
    ListOf,
    Name,
    Neg,
    Not,
    SliceOf,
    TupleOf,
    call,
    is_charged,
    negated,
    rt,
)
from worldspec.compiler.codegen.pytypes import TypeTables
from worldspec.compiler.model import ProgramModel, WorldModel
from worldspec.dsl import nodes as n

__all__ = ["ExprCompiler", "Env"]

#: Interpolated types whose text is short whatever the value (with numbers and enums).
_SHORT_TYPES = (t.BOOL, t.DATE, t.DATETIME, t.DURATION)
#: Types whose values' ``str()`` is the language's text of them (see ``formats_as_text``).
_FORMATS_AS_TEXT = (t.STR, t.INT, t.FLOAT, t.NUMBER, t.BOOL, t.DATE, t.DATETIME, t.DURATION)
#: An order comparison -> its opposite, on values of a totally ordered type.
_ORDER_OPPOSITES = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}
#: Types whose values are totally ordered by Python's comparisons (no NaN, no none).
_TOTALLY_ORDERED = frozenset({t.INT, t.STR, t.DATE, t.DATETIME, t.DURATION})
#: A format width up to this keeps an f-string short; a wider one is charged as text.
_SHORT_WIDTH = 64
#: the numbers of a format spec (spec text, not generated code)
_NUMBERS = re.compile(r"[0-9]+")


#: ``arguments: dynamic``: the operators whose Python meaning on a value of another type can
#: do work the language's own never does (repeat a text, format one), through a helper that
#: judges that work first
_PYTHON_OPERATORS = {"*": "python_times", "%": "python_remainder"}


@dataclass
class Env:
    """Where the generated code runs: the episode's name, and the initial episode's."""

    ep: str = "self"
    init: str = "init"
    #: the task whose check is compiled (for ``matches_solution()``)
    task: str | None = None
    #: the agent's messages, in a check (``reply`` / ``replies``)
    replies: str = "replies"
    #: spec local name -> Python name (locals and parameters)
    locals: dict[str, str] = field(default_factory=dict)
    #: Python names of optional locals that a ``require x != none`` before has narrowed for
    #: mypy too: read without a guard (not inside a lambda or a comprehension's body, where
    #: mypy may not keep the narrowing)
    present: set[str] = field(default_factory=set)

    @property
    def episode(self) -> Name:
        return Name(self.ep)

    def inner(self, bound: dict[str, str] | None = None) -> Env:
        """The environment of a lambda's or a comprehension's body, with ``bound`` added
        (and no narrowing)."""
        return Env(ep=self.ep, init=self.init, task=self.task, replies=self.replies,
                   locals={**self.locals, **(bound or {})})


class ExprCompiler:
    """Translates checked expressions of one world."""

    def __init__(self, world: WorldModel, program: ProgramModel, tables: TypeTables) -> None:
        self.world = world
        self.program = program
        self.tables = tables
        self._fresh = 0
        self._recursive: set[str] | None = None
        #: attributes read by ``[x.attr for x in xs]``: the module defines ``_GET_attr``
        self.getters: dict[str, str | None] = {}
        #: how many ``next()`` calls (each advancing a sequence) were compiled so far
        self.sequences_advanced = 0

    # ------------------------------------------------------------ helpers
    def type_of(self, expr: n.Node) -> t.Type:
        return self.program.type_of(expr) or t.UNKNOWN

    def fresh(self, base: str) -> str:
        self._fresh += 1
        return f"_{base}{self._fresh}"

    def table_for(self, entity: str, env: Env) -> Expr:
        table = self.world.table_of(entity)
        name = table.name if table else entity.lower()
        return Attr(env.episode, f"t_{name}")

    def is_entity(self, typ: t.Type) -> bool:
        base = t.strip_optional(typ)
        return isinstance(base, t.Named) and base.kind == "entity"

    def row_from_key(self, key: Expr, typ: t.Type, env: Env) -> Expr:
        """Look a stored key up: ``typ`` is the entity type (maybe optional)."""
        base = t.strip_optional(typ)
        assert isinstance(base, t.Named)
        table = self.table_for(base.name, env)
        if isinstance(typ, t.Optional):
            return call(Attr(table, "ref"), key)
        return Index(table, key)  # `Table.__getitem__`: the row, or the call fails

    def stored(self, expr: n.Expr, env: Env, target: t.Type | None = None) -> Expr:
        """The value of ``expr`` as a field or container stores it (entities as keys)."""
        typ = target if target is not None else self.type_of(expr)
        if self.is_entity(typ) or self.is_entity(self.type_of(expr)):
            return self.key(expr, env)
        return self.value(expr, env, target)

    def key(self, expr: n.Expr, env: Env) -> Expr:
        """The key of an entity-typed expression (or a key-typed one, as is)."""
        typ = self.type_of(expr)
        if not self.is_entity(typ):
            return self.value(expr, env)
        # A reference read stays a key: no lookup needed.
        if isinstance(expr, n.Attribute) and not self._is_enum_member(expr):
            obj_type = t.strip_optional(self.type_of(expr.obj))
            if isinstance(obj_type, t.Named) and obj_type.kind in ("record", "entity"):
                return Attr(self.value(expr.obj, env), py_name(expr.name.name))
        if isinstance(expr, n.NameRef):
            res = self.program.resolutions.get(id(expr))
            if res is not None and res.kind == "state":
                return Attr(Attr(env.episode, "state"), py_name(expr.name))
        if isinstance(expr, n.Index):
            container = t.strip_optional(self.type_of(expr.obj))
            if isinstance(container, t.Table):
                return self.value(expr.index, env)  # the key it is looked up by
            # lists and maps of entities store keys: the element itself is the key
            index = self.stored(expr.index, env) if isinstance(container, t.MapOf) \
                else self.value(expr.index, env)
            return Index(self.value(expr.obj, env), index)
        src = self.raw(expr, env)
        if isinstance(typ, t.Optional):
            return rt("key_of", src)
        return self._key_attribute(src, typ)

    def _key_attribute(self, row: Expr, typ: t.Type) -> Expr:
        """A row's key as its key field (``station.code``: typed as the field is), or, for
        an entity without one, ``row.key()``."""
        entity = self.world.records.get(typ.name) if isinstance(typ, t.Named) else None
        key = entity.key if entity is not None else None
        return Attr(row, py_name(key.name)) if key is not None else call(Attr(row, "key"))

    def _row_local(self, expr: n.Expr) -> bool:
        """Whether ``expr`` is a local or parameter holding a row (none exactly when its key
        is): tested as it is, without taking its key."""
        if not isinstance(expr, n.NameRef):
            return False
        res = self.program.resolutions.get(id(expr))
        return res is not None and res.kind in ("local", "param")

    def _is_enum_member(self, expr: n.Attribute) -> bool:
        return isinstance(expr.obj, n.NameRef) and self.program.resolutions.get(
            id(expr.obj), None) is not None and self.program.resolutions[id(expr.obj)].kind == \
            "enum"

    def present(self, src: Expr, typ: t.Type, env: Env | None = None) -> Expr:
        """``src`` (declared optional) where the spec proved it is not none."""
        base = t.strip_optional(typ)
        if isinstance(src, Name):  # a local: tested inline, without a call
            if env is not None and src.id in env.present:
                return src  # mypy has narrowed it too
            return IfExp(src, Compare(src, "is not", Const(None)), rt("absent"))
        if isinstance(base, t.Named) and base.kind == "union":
            return call(Attr(Name(union_object(base.name)), "some"), src)
        return rt("present", src)

    def elements(self, expr: n.Expr, env: Env, charge: bool = False, deletes: bool = False
                 ) -> Expr:
        """An iterable of the values of a collection (rows for entities, keys for maps);
        with ``charge``, the iteration pays one step per element first. ``deletes``: the
        iteration deletes rows (a loop's body), so a list of entities is looked up key by
        key as it goes (a row deleted before its turn fails the call)."""
        typ = t.strip_optional(self.type_of(expr))
        rows = None if deletes else self.selected_rows(expr, env)
        if rows is not None:
            return self.each(rows, env) if charge else rows
        src = self.value(expr, env)
        if charge and not is_charged(src, env.ep):  # not paid for already
            src = self.each(src, env)
        if isinstance(typ, (t.ListOf, t.SetOf)) and self.is_entity(typ.element):
            table = self.table_for(t.strip_optional(typ.element).name, env)  # type: ignore[attr-defined]
            return rt("rows", table, src)
        if isinstance(typ, t.MapOf) and self.is_entity(typ.key):
            return rt("rows", self.table_for(typ.key.name, env), src)  # type: ignore[attr-defined]
        return src

    def selected_rows(self, expr: n.Expr, env: Env) -> Expr | None:
        """The rows ``[x for x in xs if c]`` selects, when ``expr`` is such a comprehension
        of entities: a list of the rows themselves, where its value (a list of keys, as
        lists of entities hold them) would be looked up again, key by key, by whatever
        iterates it. Every row it holds was just read from its table (by iterating the
        table, or by looking a key up), and nothing in between can change the table: the
        rows are those the lookups would find. ``sorted(xs, key: ...)`` of entities is the
        same: the rows sorted (``sorted(rows, key=...)``), not their keys looked up again.
        None for any other expression."""
        if self._sorts_entities(expr) and id(expr) not in self.program.widened:
            src = self.value(expr, env)
            if isinstance(src, Call) and src.func == Attr(Name("rt"), "sorted_keys"):
                return Call(Name("sorted"), src.args, src.keywords)
            return None
        if not (isinstance(expr, n.Comprehension) and isinstance(expr.element, n.NameRef)
                and expr.element.name == expr.var.name and id(expr) not in self.program.widened
                and id(expr.element) not in self.program.widened):
            return None
        typ = t.strip_optional(self.type_of(expr))
        if not (isinstance(typ, t.ListOf) and self.is_entity(typ.element)
                and not isinstance(typ.element, t.Optional)):
            return None
        name, inner = self._bind(expr.var, env)
        cond = self.value(expr.condition, inner) if expr.condition is not None else None
        return Comprehension("list", self.value(expr.element, inner), name,
                             self.elements(expr.iterable, env, charge=True), cond)

    def _sorts_entities(self, expr: n.Expr) -> bool:
        """Whether ``expr`` is a call of the builtin ``sorted`` on entities (not optional)."""
        if not (isinstance(expr, n.Call) and isinstance(expr.func, n.NameRef)
                and expr.func.name == "sorted"):
            return False
        res = self.program.resolutions.get(id(expr.func))
        typ = t.strip_optional(self.type_of(expr))
        return (res is None or res.kind not in ("fn", "record")) and \
            isinstance(typ, t.ListOf) and self.is_entity(typ.element) and \
            not isinstance(typ.element, t.Optional)

    def checked(self, typ: t.Type, src: Expr, label: str) -> Expr:
        """``src``, a value computed to be stored where ``typ`` is declared, through the
        checks of the type's refinement if it has one (the type tables write them)."""
        if not self.tables.has_refinement(typ):
            return src
        if isinstance(typ, t.Optional):
            return rt("if_present", src, Lambda(("x",), self._refined(typ.inner, Name("x"),
                                                                      label)))
        return self._refined(typ, src, label)

    def _refined(self, typ: t.Type, src: Expr, label: str) -> Expr:
        for fn, constants in self.tables.refinement_checks(typ):
            src = call(fn, src, Const(label), *map(Const, constants))
        return src

    def each(self, src: Expr, env: Env) -> Expr:
        """``src``, a collection about to be processed, after paying a step per element."""
        return rt("each", env.episode, src)

    # --------------------------------------------------------- expressions
    def value(self, expr: n.Node, env: Env, expected: t.Type | None = None) -> Expr:
        """The expression computing the value of ``expr``."""
        result = self.raw(expr, env)
        target = self.program.widened.get(id(expr))
        if target == t.JSON:
            typ = self.type_of(expr)
            if self.is_entity(typ):  # a row stored as json is its key, as stored anywhere
                return rt("key_of", result) if isinstance(typ, t.Optional) else \
                    self._key_attribute(result, typ)
            return call("v.export_value", result)
        if target is not None:
            return self.widen(result, target)
        return result

    def raw(self, expr: n.Node, env: Env) -> Expr:
        """The expression computing ``expr`` as its own type (no widening)."""
        method = getattr(self, "x_" + type(expr).__name__)
        result: Expr = method(expr, env)
        return result

    def widen(self, src: Expr, target: t.Type) -> Expr:
        """``src`` (ints) as the floats ``target`` holds: ``float``, ``float?``, lists of them."""
        base = t.strip_optional(target)
        if base == t.FLOAT:
            return rt("as_float", src)
        if isinstance(base, t.ListOf):
            item = self.fresh("item")

            def items(of: Expr) -> Expr:
                return call("tuple", Comprehension("gen", self.widen(Name(item), base.element),
                                                   item, of))
            if isinstance(target, t.Optional):
                xs = self.fresh("xs")
                return rt("if_present", src, Lambda((xs,), items(Name(xs))))
            return items(src)
        return src

    def x_IntLit(self, e: n.IntLit, env: Env) -> Expr:
        return Const(e.value)

    def x_FloatLit(self, e: n.FloatLit, env: Env) -> Expr:
        return Const(e.value)

    def x_StrLit(self, e: n.StrLit, env: Env) -> Expr:
        return Const(e.value)

    def x_BoolLit(self, e: n.BoolLit, env: Env) -> Expr:
        return Const(bool(e.value))

    def x_NoneLit(self, e: n.NoneLit, env: Env) -> Expr:
        return Const(None)

    def x_FStr(self, e: n.FStr, env: Env) -> Expr:
        parts: list[str | FormattedValue] = []
        for part in e.parts:
            if isinstance(part, str):
                parts.append(part)
                continue
            inner = self.value(part.expr, env)
            if not part.spec and not self.formats_as_text(part.expr):
                inner = rt("text", inner)
            parts.append(FormattedValue(inner, part.spec or ""))
        if all(isinstance(part, str) for part in parts):
            return Const("".join(part for part in parts if isinstance(part, str)))
        src = FString(tuple(parts))
        return self.built(src, env) if self._may_be_long(e) else src

    def formats_as_text(self, expr: n.Expr) -> bool:
        """Whether an f-string's ``{value}`` (Python's ``format(value, '')``, which is
        ``str(value)`` for these) gives the language's text of ``expr`` without
        ``rt.text``: a text, a number, a bool, a date, a time, a duration or an enum member
        (a ``StrEnum``: its value), held as its declared type. Not in a world with
        ``arguments: dynamic`` (a parameter may hold any JSON value there), nor for a value
        widened where it is used, a row (its key is its text) or a collection."""
        if self.tables.dynamic or id(expr) in self.program.widened:
            return False
        typ = t.strip_optional(self.type_of(expr))
        return typ in _FORMATS_AS_TEXT or (isinstance(typ, t.Named) and typ.kind == "enum")

    def _may_be_long(self, e: n.FStr) -> bool:
        """Whether an f-string can be long: it interpolates text or a collection, or pads
        to a wide width (numbers, dates, enums and short widths keep it short)."""
        for part in e.parts:
            if isinstance(part, str):
                continue
            if part.spec and any(len(d) > 3 or int(d) > _SHORT_WIDTH
                                 for d in _NUMBERS.findall(part.spec)):
                return True
            if not self.is_short(part.expr):
                return True
        return False

    def built(self, src: Expr, env: Env) -> Expr:
        """A string the call builds: its length is checked and charged to the text budget."""
        return call(Attr(env.episode, "built"), src)

    def x_NameRef(self, e: n.NameRef, env: Env) -> Expr:
        res = self.program.resolutions.get(id(e))
        if res is None:
            return Name(py_name(e.name))
        if res.kind in ("local", "param"):
            src = Name(env.locals.get(e.name, py_name(e.name)))
            narrowed = id(e) in self.program.narrowed
            return self.present(src, self.type_of(e), env) if narrowed else src
        if res.kind == "state":
            return self._state(e.name, env.ep, env, id(e) in self.program.narrowed)
        if res.kind == "builtin" and e.name == "now":
            return Attr(env.episode, "clock")
        if res.kind == "const":
            return Name(const_name(e.name))
        if res.kind == "enum_member":
            return Name(member_constant(self.tables.class_name(res.owner or ''),
                                        enum_member(e.name)))
        if res.kind == "initial":
            return Name(env.init)
        if res.kind == "conversation":
            said = Name(env.replies)
            return said if e.name == "replies" else \
                IfExp(Index(said, Const(-1)), said, Const(""))
        return Name(py_name(e.name))

    def _state(self, name: str, owner: str, env: Env, narrowed: bool = False) -> Expr:
        info = self.world.state[name]
        if info.kind == "table":
            return Attr(Name(owner), f"t_{name}")
        src: Expr = Attr(Attr(Name(owner), "state"), py_name(name))
        typ = t.strip_optional(info.type) if narrowed else info.type
        if self.is_entity(typ):
            inner = Env(ep=owner, init=env.init, locals=env.locals)
            if narrowed:
                src = rt("present", src)
            return self.row_from_key(src, typ, inner)
        return self.present(src, typ) if narrowed else src

    def x_Attribute(self, e: n.Attribute, env: Env) -> Expr:
        if isinstance(e.obj, n.NameRef):
            res = self.program.resolutions.get(id(e.obj))
            if res is not None and res.kind == "enum":
                return Name(member_constant(self.tables.class_name(e.obj.name),
                                            enum_member(e.name.name)))
            if res is not None and res.kind == "initial":
                return self._state(e.name.name, env.init, env, id(e) in self.program.narrowed)
        obj_type = t.strip_optional(self.type_of(e.obj))
        obj = self.value(e.obj, env)
        name = e.name.name
        if isinstance(obj_type, t.Named) and obj_type.kind == "union":
            info = self.world.unions[obj_type.name]
            if name == info.tag_field:
                return call(Attr(Name(union_object(obj_type.name)), "tag"), obj)
        src: Expr = Attr(obj, py_name(name))
        typ = self.type_of(e)
        narrowed = id(e) in self.program.narrowed
        if narrowed:
            src = self.present(src, typ) if not self.is_entity(typ) else rt("present", src)
        if self.is_entity(typ):
            return self.row_from_key(src, typ, env)
        return src

    def x_Index(self, e: n.Index, env: Env) -> Expr:
        obj_type = t.strip_optional(self.type_of(e.obj))
        obj = self.value(e.obj, env)
        if isinstance(obj_type, t.Table):  # `Table.__getitem__`: the row, or the call fails
            return Index(obj, self._row_key(e.index, obj_type.entity, env))
        if isinstance(obj_type, t.MapOf):
            index = self.stored(e.index, env)
        else:
            index = self.value(e.index, env)
        src = Index(obj, index)
        typ = self.type_of(e)
        if self.is_entity(typ):
            return self.row_from_key(src, typ, env)
        return src

    def _row_key(self, index: n.Expr, entity: str, env: Env) -> Expr:
        """The key a table of ``entity`` is indexed by: ``variants[line.variant.id]`` is
        ``t_variants[line.variant]``, the key the reference holds (looking its row up for its
        key, in the same table, fails exactly where the lookup by the key does). A row at
        hand (a local, a parameter) gives its key field, as it gives any other field."""
        if isinstance(index, n.Attribute) and id(index) not in self.program.narrowed and \
                isinstance(index.obj, (n.Attribute, n.Index)):
            ref = self.type_of(index.obj)
            info = self.world.records.get(entity)
            if isinstance(ref, t.Named) and ref.kind == "entity" and ref.name == entity and \
                    info is not None and info.key is not None and \
                    index.name.name == info.key.name:
                return self.key(index.obj, env)
        return self.value(index, env)

    def x_Slice(self, e: n.Slice, env: Env) -> Expr:
        bounds = SliceOf(*(None if b is None else self.value(b, env)
                           for b in (e.start, e.stop, e.step)))
        src = Index(self.value(e.obj, env), bounds)
        if t.strip_optional(self.type_of(e)) == t.STR:
            return self.built(src, env)  # a new string: charged to the text budget
        return self.each(src, env)  # a new list: a step per element

    def x_Unary(self, e: n.Unary, env: Env) -> Expr:
        return Neg(self.value(e.operand, env))

    def x_Not(self, e: n.Not, env: Env) -> Expr:
        return Not(self.value(e.operand, env))

    def x_BoolOp(self, e: n.BoolOp, env: Env) -> Expr:
        left = self.value(e.left, env)
        tested = self.none_tested(e.left, "==" if e.op == "or" else "!=", env)
        if tested is None or tested in env.present:
            return BoolOp(e.op, (left, self.value(e.right, env)))
        # `x is None or ...x...`, `x is not None and ...x...`: mypy narrows `x` on the right
        # as the checker did, so it is read plain there (not inside a lambda or a
        # comprehension's body, which get environments of their own)
        env.present.add(tested)
        try:
            right = self.value(e.right, env)
        finally:
            env.present.discard(tested)
        return BoolOp(e.op, (left, right))

    def none_tested(self, test: n.Expr, op: str, env: Env) -> str | None:
        """The Python name of the local or parameter ``test`` compares with none by ``op``
        (``x == none`` / ``x != none``)."""
        if not (isinstance(test, n.Compare) and test.op == op and
                isinstance(test.right, n.NoneLit) and isinstance(test.left, n.NameRef)):
            return None
        res = self.program.resolutions.get(id(test.left))
        if res is None or res.kind not in ("local", "param"):
            return None
        return env.locals.get(test.left.name, py_name(test.left.name))

    def x_Binary(self, e: n.Binary, env: Env) -> Expr:
        result = self.type_of(e)
        if e.op == "**":
            fn = "python_power" if self.tables.dynamic else \
                "number_power" if result == t.NUMBER else "power"
            return rt(fn, self.value(e.left, env), self.value(e.right, env))
        if e.op == "+" and (result == t.STR or isinstance(result, t.ListOf)):
            # a chain a + b + c is charged once, for the whole result
            # (the operands of `e` itself, even when `e` is widened where it goes)
            operands = [self.value(x, env) for x in [*self._chain(e.left, result), e.right]]
            if self.tables.dynamic:  # Python's + on whatever the operands hold
                return self.python_sum(operands, result, env)
            return self.arithmetic("+", operands[0], operands[1], result, False, env,
                                   chain=operands)
        literal = isinstance(e.left, n.IntLit) or isinstance(e.right, n.IntLit)
        return self.arithmetic(e.op, self.value(e.left, env), self.value(e.right, env),
                               result, literal, env)

    def python_sum(self, operands: list[Expr], result: t.Type, env: Env) -> Expr:
        """``a + b + ...`` of values declared texts or lists, in a world with ``arguments:
        dynamic``: Python's ``+`` on the values the operands hold, charged as what it
        gives (lists through ``rt.python_concat``, which keeps tuples for lists)."""
        if isinstance(result, t.ListOf):
            src = operands[0]
            for operand in operands[1:]:
                src = rt("python_concat", src, operand)
            return self.each(src, env)
        return rt("python_grown", env.episode, _sum(operands))

    def _chain(self, e: n.Expr, result: t.Type) -> list[n.Expr]:
        """The operands of a left-nested ``+`` chain of strings (or lists) of one type."""
        if isinstance(e, n.Binary) and e.op == "+" and self.type_of(e) == result and \
                id(e) not in self.program.widened:
            return [*self._chain(e.left, result), e.right]
        return [e]

    def is_short(self, expr: n.Expr) -> bool:
        """Whether the text of ``expr``'s value is short whatever it is (a number, a date, an
        enum member, a bool): a string built from such values needs no charge."""
        typ = t.strip_optional(self.type_of(expr))
        return t.is_numeric(typ) or typ in _SHORT_TYPES or (
            isinstance(typ, t.Named) and typ.kind == "enum")

    def recursive(self, fn: str) -> bool:
        """Whether helper ``fn`` can call itself (directly or through others): only such calls
        pay a step each, since a call tree without recursion is bounded by the program."""
        if self._recursive is None:
            calls: dict[str, set[str]] = {}
            for name, info in self.world.fns.items():
                roots: list[n.Node] = [info.node.body]
                roots += [p.default for p in info.params if p.default is not None]
                calls[name] = {node.func.name for root in roots for node in n.walk(root)
                               if isinstance(node, n.Call) and isinstance(node.func, n.NameRef)
                               and node.func.name in self.world.fns}
            found: set[str] = set()
            for start in calls:
                seen: set[str] = set()
                todo = list(calls[start])
                while todo:
                    name = todo.pop()
                    if name == start:
                        found.add(start)
                        break
                    if name not in seen:
                        seen.add(name)
                        todo.extend(calls.get(name, ()))
            self._recursive = found
        return fn in self._recursive

    def arithmetic(self, op: str, left: Expr, right: Expr, result: t.Type, literal: bool,
                   env: Env, chain: list[Expr] | None = None) -> Expr:
        """``left op right`` (``+ - * / // %``; or a whole ``chain`` of ``+``), charged where
        the result can grow: an int from ``*`` (or ``+``/``-`` of two computed ints: adding a
        literal cannot run away) is bounded in bits, a string is charged as text, a list by
        its elements. With ``arguments: dynamic``, ``*``, ``%`` and ``+`` of texts or lists
        are Python's on whatever the operands hold (:data:`_PYTHON_OPERATORS`,
        :meth:`python_sum`); augmented assignments (``x *= y``) come here too."""
        if self.tables.dynamic and chain is None:  # Python's operators, on any JSON value
            if op in _PYTHON_OPERATORS:
                return rt(_PYTHON_OPERATORS[op], left, right)
            if op == "+" and (result == t.STR or isinstance(result, t.ListOf)):
                return self.python_sum([left, right], result, env)
        # lists are tuples, so `+` concatenates them as the language says
        src = _sum(chain) if chain is not None else BinOp(left, op, right)
        if result == t.INT and (op == "*" or (op in ("+", "-") and not literal)):
            return rt("bounded", src)
        if result == t.NUMBER and (op == "*" or (op in ("+", "-") and not literal)):
            return rt("bounded_number", src)
        if result == t.STR and op == "+":
            return self.built(src, env)
        if isinstance(result, t.ListOf) and op == "+":
            return self.each(src, env)
        return src

    def compare_operands(self, e: n.Compare, env: Env) -> tuple[Expr, str, Expr] | None:
        """A comparison (not a membership test) as ``(left, operator, right)``, so that
        ``left operator right`` computes it: entities compare by key, and ``== none`` is
        ``is None`` (the other side first). ``None`` for ``in`` / ``not in``."""
        op = e.op
        if op in ("in", "not in"):
            return None
        lt, rt_ = self.type_of(e.left), self.type_of(e.right)
        if op in ("==", "!="):
            if isinstance(e.right, n.NoneLit) or isinstance(e.left, n.NoneLit):
                other = e.left if isinstance(e.right, n.NoneLit) else e.right
                src = self.key(other, env) if self.is_entity(self.type_of(other)) and \
                    not self._row_local(other) else self.value(other, env)
                return src, "is" if op == "==" else "is not", Const(None)
            if self.is_entity(lt) or self.is_entity(rt_):
                return self.key(e.left, env), op, self.key(e.right, env)
            if (lt == t.JSON) != (rt_ == t.JSON):
                return self.json_side(e.left, env), op, self.json_side(e.right, env)
        return self.value(e.left, env), op, self.value(e.right, env)

    def x_Compare(self, e: n.Compare, env: Env) -> Expr:
        sides = self.compare_operands(e, env)
        if sides is not None:
            left, op, right = sides
            return Compare(left, op, right)
        op = e.op
        lt, rt_ = self.type_of(e.left), self.type_of(e.right)
        if op in ("in", "not in"):
            # tables test keys, collections of entities hold keys: the left side is a key
            item = self.key(e.left, env) if self.is_entity(lt) else self.value(e.left, env)
            container = self.value(e.right, env)
            if rt_ == t.JSON:
                if not self.is_entity(lt):
                    item = self.json_side(e.left, env)
                if self.tables.dynamic:  # Python's `in`, and its errors, on what `j` holds
                    return Compare(item, op, container)
                found = rt("json_contains", container, item)
                return found if op == "in" else Not(found)
            if self.tables.dynamic and isinstance(t.strip_optional(lt), (t.ListOf, t.MapOf)):
                item = rt("python_value", item)  # a list, not a tuple: hashed as Python does
            if isinstance(t.strip_optional(rt_), (t.ListOf, t.SetOf)) and \
                    not is_charged(container, env.ep):
                container = self.each(container, env)  # a scan: a step per element
            return Compare(item, op, container)
        raise AssertionError(f"unknown comparison {op!r}")

    def negation(self, expr: n.Expr, env: Env) -> Expr:
        """A test that holds exactly when ``expr`` does not (``require``'s failure): an
        order comparison of two values of one totally ordered type (ints, texts, dates,
        times, durations, as declared in a world without ``arguments: dynamic``) is the
        opposite comparison, ``a >= b`` for ``not (a < b)``; anything else is
        :func:`~worldspec.compiler.codegen.pycode.negated` (floats keep ``not``: a NaN is
        neither smaller nor larger)."""
        if isinstance(expr, n.Compare) and expr.op in _ORDER_OPPOSITES and \
                not self.tables.dynamic and self._totally_ordered(expr.left, expr.right):
            sides = self.compare_operands(expr, env)
            assert sides is not None
            left, op, right = sides
            return Compare(left, _ORDER_OPPOSITES[op], right)
        return negated(self.value(expr, env))

    def _totally_ordered(self, *operands: n.Expr) -> bool:
        types = {self.type_of(x) for x in operands}
        return len(types) == 1 and types <= _TOTALLY_ORDERED and \
            not any(id(x) in self.program.widened for x in operands)

    def json_side(self, expr: n.Expr, env: Env) -> Expr:
        """An operand of ``==`` with a ``json`` value on the other side, as JSON holds it: a
        list (a tuple here), a map or a record of the language becomes the lists and
        objects a JSON value is made of, so ``j == xs`` is Python's list equality
        (``[] == []``, ``[1] == [1.0]``); a scalar stays as it is."""
        src = self.value(expr, env)
        typ = t.strip_optional(self.type_of(expr))
        composite = isinstance(typ, (t.ListOf, t.SetOf, t.MapOf, t.EmptyList)) or (
            isinstance(typ, t.Named) and typ.kind == "record")
        return call("v.export_value", src) if composite else src

    def x_Coalesce(self, e: n.Coalesce, env: Env) -> Expr:
        left = self.value(e.left, env)
        if isinstance(e.left, n.NameRef) and isinstance(left, Name) and left.id in env.present:
            return left  # a local the test around it proved present (mypy narrowed it too)
        if self._draws(e.left) or not isinstance(e.left, (n.NameRef, n.Attribute)):
            # evaluate the left side once (a call or a lookup cannot be narrowed by mypy
            # when repeated) and the default only when needed; a default that may be none
            # too (`a.get(k) ?? b.get(k)`) needs the helper typed for it
            helper = "coalesce_optional" if isinstance(self.type_of(e.right), t.Optional) \
                else "coalesce"
            return rt(helper, left, Lambda((), self.value(e.right, env.inner())))
        right = self.value(e.right, env)
        return IfExp(left, Compare(left, "is not", Const(None)), right)

    def _draws(self, expr: n.Node) -> bool:
        for node in n.walk(expr):
            if isinstance(node, n.Call) and isinstance(node.func, n.NameRef) and \
                    node.func.name in DRAWS:
                return True
        return False

    def x_Conditional(self, e: n.Conditional, env: Env) -> Expr:
        return IfExp(self.value(e.then, env), self.value(e.condition, env),
                     self.value(e.orelse, env))

    def _bind(self, var: n.Ident, env: Env) -> tuple[str, Env]:
        name = self.fresh(py_name(var.name).rstrip("_") or "v")
        return name, env.inner({var.name: name})

    def x_Quantifier(self, e: n.Quantifier, env: Env) -> Expr:
        name, inner = self._bind(e.var, env)
        fn = "all" if e.kind == "all" else "any"
        return call(fn, Comprehension("gen", self.value(e.body, inner), name,
                                      self.elements(e.iterable, env, charge=True)))

    def x_Comprehension(self, e: n.Comprehension, env: Env) -> Expr:
        name, inner = self._bind(e.var, env)
        element = self.stored(e.element, inner)
        cond = self.value(e.condition, inner) if e.condition is not None else None
        elements = self.elements(e.iterable, env, charge=True)
        if isinstance(element, Attr) and element.obj == Name(name) and cond is None:
            # one attribute of each element: read in C (an element without it raises the
            # AttributeError the comprehension would)
            self._getter(element.name, self.type_of(e.element))
            return call("tuple", call("map", Name(f"_GET_{element.name}"), elements))
        # a list comprehension, then a tuple: a generator resumes once per element
        return call("tuple", Comprehension("list", element, name, elements, cond))

    def _getter(self, attribute: str, typ: t.Type) -> None:
        """Note that the module needs ``_GET_<attribute>``, typed as the class it reads where
        every read of that attribute reads one class (``float``, ``Address``)."""
        kind: str | None = self.tables.annotation(typ)
        if kind is None or not kind.isidentifier() or kind == "Any":
            kind = None
        if attribute in self.getters and self.getters[attribute] != kind:
            kind = None
        self.getters[attribute] = kind

    def x_ListLit(self, e: n.ListLit, env: Env) -> Expr:
        items = tuple(self.stored(item, env) for item in e.items)
        typ = self.type_of(e)
        if typ == t.JSON:  # a JSON array is a list, as loaded data holds it (`[]` too)
            return ListOf(items)
        src = TupleOf(items)
        if items and isinstance(typ, t.SetOf):
            return call("v.unique", src)
        return src

    def x_MapLit(self, e: n.MapLit, env: Env) -> Expr:
        return DictOf(tuple((self.stored(x.key, env), self.stored(x.value, env))
                            for x in e.entries))

    def x_Call(self, e: n.Call, env: Env) -> Expr:
        from worldspec.compiler.codegen.calls import compile_call

        return compile_call(self, e, env)

    def lambda_(self, lam: n.Lambda, env: Env) -> Lambda:
        name, inner = self._bind(lam.param, env)
        return Lambda((name,), self.value(lam.body, inner))


def _sum(operands: list[Expr]) -> Expr:
    """``a + b + ...``, left to right."""
    src = operands[0]
    for operand in operands[1:]:
        src = BinOp(src, "+", operand)
    return src
