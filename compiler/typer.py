"""Type checking of expressions and statements.

One :class:`Typer` checks one body (a tool, a helper, an invariant, a check,
a default) against a :class:`~compiler.model.WorldModel`. It records the type
of every expression and what every name refers to in the program model, and
reports type and name errors into the sink. Erroneous expressions get the
type ``UNKNOWN``, which is accepted everywhere, so one mistake produces one
diagnostic.

Narrowing of optionals is flow-sensitive but simple: a *path* (``x``,
``x.f.g``) is known not to be none after ``require path != none``, inside
``if path != none { }``, after ``if path == none { return/fail }``, and on
the right-hand side of ``path != none and ...``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from worldspec.compiler import types as t
from worldspec.compiler.builtins import CONVERSATION, report_wide_spec
from worldspec.compiler.model import ProgramModel, Resolution, WorldModel
from worldspec.compiler.scope import Context, Local, LocalKind, Scope
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink, Related, did_you_mean

__all__ = ["Typer", "Facts", "path_of"]


@dataclass(frozen=True)
class Facts:
    """Paths proven not-none when a condition is true / when it is false."""

    when_true: frozenset[str] = frozenset()
    when_false: frozenset[str] = frozenset()


NO_FACTS = Facts()

#: Deeper expressions are reported (WS105) rather than checked.
MAX_EXPR_DEPTH = 200

#: How diagnostics name each kind of local.
_LOCAL_WORDS = {"param": "parameter", "loop": "loop variable", "local": "local",
                "binding": "case variable", "lambda": "lambda parameter",
                "quantifier": "quantifier variable"}

_ORDERED = {"int", "float", "number", "str", "date", "datetime", "duration"}


def path_of(expr: n.Node) -> str | None:
    """``x``, ``x.f.g`` for name/field chains; ``None`` for anything else."""
    if isinstance(expr, n.NameRef):
        return "state." + expr.name if expr.qualified else expr.name
    if isinstance(expr, n.Attribute):
        base = path_of(expr.obj)
        return f"{base}.{expr.name.name}" if base else None
    return None


class Typer:
    """Type-checks bodies within one world."""

    def __init__(self, world: WorldModel, program: ProgramModel, sink: DiagnosticSink,
                 context: Context) -> None:
        self.world = world
        self.program = program
        self.sink = sink
        self.context = context
        self.scope = Scope()
        self.changes_state = False
        self.attempting = 0  # inside attempt()/error_of(): a draw there is WS324
        self.depth = 0
        self.loops = 0
        self.too_deep = False
        self.unions = {u.name: frozenset(u.variants.values()) for u in world.unions.values()}
        self.qualified: set[str] = set()   # state items read as `state.x`

    # ------------------------------------------------------------ helpers
    def report(self, code: str, node: n.Node, message: str, *, hints: Iterable[str] = (),
               related: Iterable[Related] = ()) -> None:
        self.sink.report(code, node.span, message, hints=hints, related=related)

    def record(self, expr: n.Node, typ: t.Type) -> t.Type:
        self.program.expr_types[id(expr)] = typ
        return typ

    def assignable(self, target: t.Type, value: t.Type) -> bool:
        return t.assignable(target, value, self.unions)

    def expect(self, node: n.Node, target: t.Type, value: t.Type, what: str) -> None:
        if not self.assignable(target, value):
            self.report("WS301", node, f"{what}: expected {t.show(target)}, found {t.show(value)}")
        elif t.widens_int(target, value) or t.converts_to_json(target, value):
            self.program.widened[id(node)] = target

    def define(self, ident: n.Ident, typ: t.Type, kind: LocalKind) -> None:
        previous = self.scope.define(Local(ident.name, typ, kind, ident))
        if previous is not None:
            self.report("WS210", ident, f"'{ident.name}' is already defined",
                        related=[Related(previous.node.span, "first defined here")])

    def entity_key_type(self, entity: str) -> t.Type:
        info = self.world.records.get(entity)
        key = info.key if info else None
        return key.type if key else t.UNKNOWN

    def element_type(self, node: n.Node, typ: t.Type) -> t.Type:
        """The type of the items of an iterable."""
        if isinstance(typ, (t.ListOf, t.SetOf)):
            return typ.element
        if isinstance(typ, t.MapOf):
            return typ.key
        if isinstance(typ, t.Table):
            return t.Named("entity", typ.entity)
        if typ == t.JSON:
            return t.JSON
        if isinstance(typ, (t.Unknown, t.EmptyList, t.EmptyMap)):
            return t.UNKNOWN
        if typ == t.STR:  # a string's characters, each a str, as in Python
            return t.STR
        if isinstance(typ, t.Optional):
            self.report("WS305", node, f"cannot iterate over {t.show(typ)}: it may be none")
            return self.element_type(node, typ.inner)
        self.report("WS304", node, f"cannot iterate over {t.show(typ)}")
        return t.UNKNOWN

    def mark_change(self, node: n.Node, what: str) -> None:
        self.changes_state = True
        if not self.context.may_change_state:
            where = {"fn": "a helper fn", "invariant": "an invariant", "check": "a check",
                     "default": "a default value", "solution": "a solution", "load": "on load",
                     "data": "data"}.get(self.context.where, self.context.where)
            self.report("WS403", node, f"{what} changes the state, which {where} may not do")

    def is_stored(self, expr: n.Node) -> bool:
        """Whether changing ``expr`` in place changes world state."""
        if isinstance(expr, n.NameRef):
            res = self.program.resolutions.get(id(expr))
            if res is not None and res.kind == "state":
                return True
            base = t.strip_optional(self.program.type_of(expr) or t.UNKNOWN)
            return isinstance(base, t.Named) and base.kind == "entity"
        if isinstance(expr, (n.Attribute, n.Index)):
            inner = expr.obj
            inner_type = t.strip_optional(self.program.type_of(inner) or t.UNKNOWN)
            if isinstance(inner_type, t.Named) and inner_type.kind == "entity":
                return True
            return self.is_stored(inner)
        return False

    # ---------------------------------------------------------- conditions
    def condition(self, expr: n.Expr, what: str) -> Facts:
        """Type ``expr`` as a bool condition and return the facts it proves."""
        typ = self.expr(expr)
        if typ != t.BOOL and not t.is_unknown(typ):
            hint = []
            if isinstance(typ, t.Optional):
                hint = ["compare with none: `x != none`"]
            elif isinstance(typ, (t.ListOf, t.SetOf, t.MapOf, t.Table)) or typ == t.STR:
                hint = ["test the size: `len(x) > 0`"]
            self.report("WS302", expr, f"{what} must be a bool, found {t.show(typ)}", hints=hint)
        return self.facts(expr)

    def facts(self, expr: n.Expr, depth: int = 0) -> Facts:
        if depth > MAX_EXPR_DEPTH:
            return NO_FACTS  # the expression is reported as too deep elsewhere
        if isinstance(expr, n.Compare) and expr.op in ("==", "!="):
            target = None
            if isinstance(expr.right, n.NoneLit):
                target = path_of(expr.left)
            elif isinstance(expr.left, n.NoneLit):
                target = path_of(expr.right)
            if target:
                proven = frozenset({target})
                return Facts(proven, frozenset()) if expr.op == "!=" else Facts(frozenset(), proven)
        if isinstance(expr, n.BoolOp):
            left, right = self.facts(expr.left, depth + 1), self.facts(expr.right, depth + 1)
            if expr.op == "and":
                return Facts(left.when_true | right.when_true, left.when_false & right.when_false)
            return Facts(left.when_true & right.when_true, left.when_false | right.when_false)
        if isinstance(expr, n.Not):
            inner = self.facts(expr.operand, depth + 1)
            return Facts(inner.when_false, inner.when_true)
        return NO_FACTS

    def with_facts(self, proven: frozenset[str], fn: Callable[[], t.Type]) -> t.Type:
        added = proven - self.scope.narrowed
        self.scope.narrowed |= added
        try:
            return fn()
        finally:
            self.scope.narrowed -= added

    # --------------------------------------------------------- expressions
    def expr(self, expr: n.Node, expected: t.Type | None = None) -> t.Type:
        """Type an expression; ``expected`` guides bare enum members and empty literals."""
        method = getattr(self, "expr_" + type(expr).__name__, None)
        if method is None:  # a Lambda outside an argument position
            self.report("WS311", expr, "a lambda (x => ...) is only allowed as an argument of "
                        "sorted, min or max")
            return self.record(expr, t.UNKNOWN)
        if self.depth >= MAX_EXPR_DEPTH:
            if not self.too_deep:
                self.too_deep = True
                self.report("WS105", expr, f"expression nested more than {MAX_EXPR_DEPTH} "
                            "levels deep", hints=["split it into several `let` statements"])
            return self.record(expr, t.UNKNOWN)
        self.depth += 1
        try:
            typ: t.Type = method(expr, expected)
        finally:
            self.depth -= 1
        return self.record(expr, typ)

    def expr_IntLit(self, e: n.IntLit, expected: t.Type | None) -> t.Type:
        return t.INT

    def expr_FloatLit(self, e: n.FloatLit, expected: t.Type | None) -> t.Type:
        return t.FLOAT

    def expr_StrLit(self, e: n.StrLit, expected: t.Type | None) -> t.Type:
        return t.STR

    def expr_BoolLit(self, e: n.BoolLit, expected: t.Type | None) -> t.Type:
        return t.BOOL

    def expr_NoneLit(self, e: n.NoneLit, expected: t.Type | None) -> t.Type:
        return t.NONE

    def expr_FStr(self, e: n.FStr, expected: t.Type | None) -> t.Type:
        for part in e.parts:
            if isinstance(part, n.Interpolation):
                typ = self.expr(part.expr)
                if part.spec and part.spec[-1:] in ("f", "e", "g", "%", "d") and not (
                        t.is_numeric(t.strip_optional(typ)) or t.is_unknown(typ)):
                    self.report("WS304", part.expr,
                                f"format spec ':{part.spec}' needs a number, found {t.show(typ)}")
                if part.spec:
                    report_wide_spec(self, part.expr, part.spec)
        return t.STR

    def expr_NameRef(self, e: n.NameRef, expected: t.Type | None) -> t.Type:
        name = e.name
        if e.qualified:
            return self._qualified_state(e)
        local = self.scope.lookup(name)
        if local is not None:
            local.used = True
            self.program.resolutions[id(e)] = Resolution(
                "param" if local.kind == "param" else "local", name)
            return self._narrow(e, local.type)
        state = self.world.state.get(name)
        if state is not None:
            self.program.resolutions[id(e)] = Resolution("state", name)
            return self._narrow(e, state.type)
        const = self.world.consts.get(name)
        if const is not None:
            self.program.resolutions[id(e)] = Resolution("const", name)
            return const.type or const.declared or t.UNKNOWN
        if name == "now":
            self.program.resolutions[id(e)] = Resolution("builtin", name)
            return t.DATETIME
        if name == "initial":
            if self.context.where != "check":
                self.report("WS211", e, "'initial' (the state before the episode) exists "
                            "only in task checks")
            self.program.resolutions[id(e)] = Resolution("initial", name)
            return t.UNKNOWN
        # outside task checks the conversation names do not exist, so a bare enum member of
        # that name (where its enum is expected) is the member
        outside = self.context.where != "check"
        member = self._bare_member(name, expected) if name in CONVERSATION and outside else None
        if name in CONVERSATION and member is None:
            typ, what = CONVERSATION[name]
            if outside:
                self.report("WS212", e, f"'{name}' ({what}) exists only in task checks")
            self.program.resolutions[id(e)] = Resolution("conversation", name)
            return typ
        member = member or self._bare_member(name, expected)
        if member is not None:
            self.program.resolutions[id(e)] = Resolution("enum_member", name, member.name)
            return member
        if isinstance(expected, t.Unknown):
            return t.UNKNOWN  # compared with something already wrong: one error is enough
        if name in self.world.enums or name in self.world.records or name in self.world.unions:
            self.report("WS201", e, f"'{name}' is a type, not a value",
                        hints=[f"write {name}.member for an enum member or {name}(field: ...) "
                               "to build a record"])
            return t.UNKNOWN
        if name in self.world.fns:
            self.report("WS201", e, f"helper '{name}' must be called: {name}(...)")
            return t.UNKNOWN
        hints = did_you_mean(name, self._names_in_scope(expected))
        owners = [enum.name for enum in self.world.enums.values() if name in enum.members]
        if owners:
            hints = [f"write {' or '.join(f'{o}.{name}' for o in owners)}: a bare member is "
                     "only understood where that enum is expected"]
        self.report("WS201", e, f"unknown name '{name}'", hints=hints)
        return t.UNKNOWN

    def _qualified_state(self, e: n.NameRef) -> t.Type:
        """``state.x``: the state item ``x``, whatever local has that name."""
        self.qualified.add(e.name)
        local = self.scope.lookup("state")
        if local is not None:
            local.used = True
            base = t.strip_optional(local.type)
            info = self.world.records.get(base.name) if isinstance(base, t.Named) else None
            if info is not None and e.name in info.fields:
                self.report("WS216", e, f"'state.{e.name}' is the state item '{e.name}', not "
                            f"the field of the {_LOCAL_WORDS[local.kind]} 'state'",
                            hints=["bind the value to another name to read its field"])
        state = self.world.state.get(e.name)
        if state is None:
            self.report("WS215", e, f"the world has no state item '{e.name}'",
                        hints=did_you_mean(e.name, self.world.state))
            return t.UNKNOWN
        self.program.resolutions[id(e)] = Resolution("state", e.name)
        return self._narrow(e, state.type)

    def shadowing(self) -> None:
        """Warn about each local or parameter named like a state item (WS214), unless the
        body reads the state item as ``state.x`` (the author has told the two apart)."""
        for local in self.scope.all_locals:
            if local.name in self.world.state and local.name not in self.qualified:
                what = _LOCAL_WORDS[local.kind]
                kind = self.world.state[local.name].kind
                item = "table" if kind == "table" else "state item"
                self.report("WS214", local.node, f"{what} '{local.name}' shadows the {item} "
                            f"'{local.name}': here '{local.name}' means the {what}",
                            hints=[f"write state.{local.name} for the {item}"])

    def _names_in_scope(self, expected: t.Type | None) -> list[str]:
        names = [name for frame in self.scope.frames for name in frame]
        names += [*list(self.world.state), "now"]
        enum = t.strip_optional(expected) if expected else None
        if isinstance(enum, t.Named) and enum.kind == "enum" and enum.name in self.world.enums:
            names += list(self.world.enums[enum.name].members)
        return names

    def _bare_member(self, name: str, expected: t.Type | None) -> t.Named | None:
        target = t.strip_optional(expected) if expected is not None else None
        if isinstance(target, (t.ListOf, t.SetOf)):
            target = target.element
        if isinstance(target, t.Named) and target.kind == "enum":
            info = self.world.enums.get(target.name)
            if info is not None and name in info.members:
                return target
        return None

    def _narrow(self, e: n.Node, typ: t.Type) -> t.Type:
        if isinstance(typ, t.Optional):
            path = path_of(e)
            if path is not None and path in self.scope.narrowed:
                self.program.narrowed.add(id(e))
                return typ.inner
        return typ

    def expr_Attribute(self, e: n.Attribute, expected: t.Type | None) -> t.Type:
        # Enum.member
        if isinstance(e.obj, n.NameRef) and e.obj.name in self.world.enums and \
                self.scope.lookup(e.obj.name) is None and e.obj.name not in self.world.state:
            info = self.world.enums[e.obj.name]
            self.program.resolutions[id(e.obj)] = Resolution("enum", e.obj.name)
            if e.name.name not in info.members:
                self.report("WS207", e.name, f"enum {info.name} has no member '{e.name.name}'",
                            hints=did_you_mean(e.name.name, info.members))
                return t.UNKNOWN
            return t.Named("enum", info.name)
        if isinstance(e.obj, n.NameRef) and e.obj.name == "initial" and \
                self.scope.lookup("initial") is None:
            self.expr(e.obj)
            state = self.world.state.get(e.name.name)
            if state is None:
                self.report("WS201", e.name, f"unknown state '{e.name.name}'",
                            hints=did_you_mean(e.name.name, self.world.state))
                return t.UNKNOWN
            return state.type
        obj_type = self.expr(e.obj)
        return self._narrow(e, self.member_type(e, obj_type, e.name))

    def member_type(self, e: n.Node, obj_type: t.Type, name: n.Ident) -> t.Type:
        """The type of field ``name`` of a value of ``obj_type``."""
        if isinstance(obj_type, t.Unknown):
            return t.UNKNOWN
        if isinstance(obj_type, t.Optional):
            self.report("WS305", e, f"'{name.name}' is read from a value that may be none "
                        f"({t.show(obj_type)})",
                        hints=["check it first: `require x != none else \"...\"`, or use `??`"])
            obj_type = obj_type.inner
        if isinstance(obj_type, t.Named) and obj_type.kind in ("record", "entity"):
            info = self.world.records.get(obj_type.name)
            if info is None:
                return t.UNKNOWN
            f = info.fields.get(name.name)
            if f is None:
                self.report("WS205", name, f"{info.name} has no field '{name.name}'",
                            hints=did_you_mean(name.name, info.fields))
                return t.UNKNOWN
            return f.type
        if isinstance(obj_type, t.Named) and obj_type.kind == "union":
            return self._union_member(obj_type.name, name)
        if obj_type in (t.DATE, t.DATETIME):
            fields = ("year", "month", "day") if obj_type == t.DATE else (
                "year", "month", "day", "hour", "minute", "second", "microsecond")
            if name.name in fields:
                return t.INT
            self.report("WS205", name, f"{t.show(obj_type)} has no field '{name.name}'",
                        hints=did_you_mean(name.name, fields))
            return t.UNKNOWN
        if obj_type == t.DURATION:
            if name.name in ("days", "seconds", "microseconds"):
                return t.INT  # as Python's timedelta: days, then 0 <= seconds < 86400
            self.report("WS205", name, f"duration has no field '{name.name}'",
                        hints=did_you_mean(name.name, ("days", "seconds", "microseconds"))
                        or ["durations have days, seconds, microseconds and total_seconds()"])
            return t.UNKNOWN
        if obj_type == t.JSON:
            self.report("WS205", name,
                        f"json values have no fields; index them: x[\"{name.name}\"]")
            return t.UNKNOWN
        self.report("WS205", name, f"{t.show(obj_type)} has no field '{name.name}'")
        return t.UNKNOWN

    def _union_member(self, union: str, name: n.Ident) -> t.Type:
        info = self.world.unions.get(union)
        if info is None:
            return t.UNKNOWN
        if name.name == info.tag_field:
            return t.STR
        types: list[t.Type] = []
        for record in info.variants.values():
            rec = self.world.records.get(record)
            f = rec.fields.get(name.name) if rec else None
            if f is None:
                break
            types.append(f.type)
        else:
            if types and all(x == types[0] for x in types):
                return types[0]
        self.report("WS205", name, f"'{name.name}' is not a field of every {union} variant",
                    hints=[f"use `match` on the {union} to reach variant fields"])
        return t.UNKNOWN

    def expr_Index(self, e: n.Index, expected: t.Type | None) -> t.Type:
        obj_type = self.expr(e.obj)
        if isinstance(obj_type, t.Optional):
            self.report("WS305", e, f"indexing a value that may be none ({t.show(obj_type)})")
            obj_type = obj_type.inner
        if isinstance(obj_type, t.ListOf) or obj_type == t.STR:
            self.expect(e.index, t.INT, self.expr(e.index), "list index")
            return obj_type.element if isinstance(obj_type, t.ListOf) else t.STR
        if isinstance(obj_type, t.MapOf):
            self.expect(e.index, obj_type.key, self.expr(e.index, obj_type.key), "map key")
            return obj_type.value
        if isinstance(obj_type, t.Table):
            key = self.entity_key_type(obj_type.entity)
            self.expect(e.index, key, self.expr(e.index, key), f"{obj_type.entity} key")
            return t.Named("entity", obj_type.entity)
        if obj_type == t.JSON:
            idx = self.expr(e.index)
            if idx not in (t.STR, t.INT) and not t.is_unknown(idx):
                self.report("WS301", e.index, f"json index: expected str or int, found "
                            f"{t.show(idx)}")
            return t.JSON
        self.expr(e.index)
        if not isinstance(obj_type, (t.Unknown, t.EmptyList, t.EmptyMap)):
            self.report("WS304", e, f"cannot index a value of type {t.show(obj_type)}")
        return t.UNKNOWN

    def expr_Slice(self, e: n.Slice, expected: t.Type | None) -> t.Type:
        obj_type = self.expr(e.obj)
        for bound in (e.start, e.stop, e.step):
            if bound is not None:
                self.expect(bound, t.INT, self.expr(bound, t.INT), "slice bound")
        if isinstance(obj_type, t.Optional):
            self.report("WS305", e, f"slicing a value that may be none ({t.show(obj_type)})")
            obj_type = obj_type.inner
        if obj_type == t.STR or isinstance(obj_type, (t.ListOf, t.Unknown)):
            return obj_type
        self.report("WS304", e, f"cannot slice a value of type {t.show(obj_type)}",
                    hints=["slices take part of a str or a list: s[1:3], xs[:-1]"])
        return t.UNKNOWN

    def expr_Unary(self, e: n.Unary, expected: t.Type | None) -> t.Type:
        typ = self.expr(e.operand)
        if t.is_numeric(typ) or typ == t.DURATION or t.is_unknown(typ):
            return typ
        self.report("WS304", e, f"unary '-' needs a number, found {t.show(typ)}")
        return t.UNKNOWN

    def expr_Not(self, e: n.Not, expected: t.Type | None) -> t.Type:
        self.condition(e.operand, "the operand of 'not'")
        return t.BOOL

    def expr_BoolOp(self, e: n.BoolOp, expected: t.Type | None) -> t.Type:
        facts = self.condition(e.left, f"the left side of '{e.op}'")
        proven = facts.when_true if e.op == "and" else facts.when_false
        self.with_facts(proven, lambda: (self.condition(e.right, f"the right side of '{e.op}'"),
                                         t.BOOL)[1])
        return t.BOOL

    def expr_Binary(self, e: n.Binary, expected: t.Type | None) -> t.Type:
        left = self.expr(e.left, expected)
        right = self.expr(e.right, left if isinstance(left, (t.ListOf,)) else None)
        if t.is_unknown(left) or t.is_unknown(right):
            return t.UNKNOWN
        result = binary_result(e.op, left, right)
        if result is None:
            self.report("WS304", e, f"'{e.op}' is not defined for {t.show(left)} and "
                        f"{t.show(right)}")
            return t.UNKNOWN
        return result

    def expr_Compare(self, e: n.Compare, expected: t.Type | None) -> t.Type:
        if e.op in ("in", "not in"):
            right = self.expr(e.right)
            elem = self._membership_type(e, right)
            left = self.expr(e.left, elem)
            if elem is not None and not self.assignable(elem, left) and \
                    not self._entity_key_match(elem, left):
                self.report("WS304", e, f"'{e.op}' tests {t.show(right)} for {t.show(elem)}, "
                            f"found {t.show(left)}")
            return t.BOOL
        left = self.expr(e.left)
        right = self.expr(e.right, left)
        if t.is_unknown(left) or t.is_unknown(right):
            return t.BOOL
        if e.op in ("==", "!="):
            if not (t.comparable(left, right, self.unions) or self._entity_key_match(left, right)
                    or self._entity_key_match(right, left)):
                self.report("WS304", e, f"comparing {t.show(left)} with {t.show(right)} is "
                            "always " + ("false" if e.op == "==" else "true"))
            return t.BOOL
        sl, sr = t.strip_optional(left), t.strip_optional(right)
        if isinstance(left, t.Optional) or isinstance(right, t.Optional):
            self.report("WS305", e, f"'{e.op}' on a value that may be none")
        ok = (t.is_numeric(sl) and t.is_numeric(sr)) or (
            isinstance(sl, t.Prim) and sl == sr and sl.name in _ORDERED)
        if not ok:
            self.report("WS304", e, f"'{e.op}' cannot order {t.show(left)} and {t.show(right)}")
        return t.BOOL

    def _entity_key_match(self, a: t.Type, b: t.Type) -> bool:
        """``entity == key`` compares the entity's key."""
        sa, sb = t.strip_optional(a), t.strip_optional(b)
        if isinstance(sa, t.Named) and sa.kind == "entity":
            key = self.entity_key_type(sa.name)
            return t.assignable(key, sb)
        return False

    def _membership_type(self, e: n.Compare, container: t.Type) -> t.Type | None:
        if isinstance(container, (t.ListOf, t.SetOf)):
            return container.element
        if isinstance(container, t.MapOf):
            return container.key
        if isinstance(container, t.Table):
            return self.entity_key_type(container.entity)
        if container == t.STR:
            return t.STR
        if container == t.JSON or isinstance(container, (t.Unknown, t.EmptyList, t.EmptyMap)):
            return None
        self.report("WS304", e.right, f"'{e.op}' needs a list, set, map, table or string, found "
                    f"{t.show(container)}")
        return None

    def expr_Coalesce(self, e: n.Coalesce, expected: t.Type | None) -> t.Type:
        left = self.expr(e.left, expected)
        narrowed = path_of(e.left) in self.scope.narrowed
        if not isinstance(left, (t.Optional, t.Unknown, t.NoneType)) and left != t.JSON \
                and not narrowed:
            self.report("WS304", e, f"'??' needs an optional on the left, found {t.show(left)}")
        inner = t.strip_optional(left)
        right = self.expr(e.right, inner)
        joined = t.join_types(inner, right, self.unions)
        if joined is None:
            self.report("WS301", e.right, f"'??' default: expected {t.show(inner)}, found "
                        f"{t.show(right)}")
            return inner
        return joined

    def expr_Conditional(self, e: n.Conditional, expected: t.Type | None) -> t.Type:
        facts = self.condition(e.condition, "the condition")
        a = self.with_facts(facts.when_true, lambda: self.expr(e.then, expected))
        b = self.with_facts(facts.when_false, lambda: self.expr(e.orelse, expected or a))
        joined = t.join_types(a, b, self.unions)
        if joined is None:
            self.report("WS301", e, f"the branches have different types: {t.show(a)} and "
                        f"{t.show(b)}")
            return t.UNKNOWN
        return joined

    def _bind_and(self, var: n.Ident, elem: t.Type, kind: LocalKind,
                  fn: Callable[[], t.Type]) -> t.Type:
        self.scope.push()
        try:
            self.define(var, elem, kind)
            return fn()
        finally:
            self.scope.pop()

    def expr_Quantifier(self, e: n.Quantifier, expected: t.Type | None) -> t.Type:
        elem = self.element_type(e.iterable, self.expr(e.iterable))
        self._bind_and(e.var, elem, "quantifier",
                       lambda: (self.condition(e.body, f"the body of '{e.kind}'"), t.BOOL)[1])
        return t.BOOL

    def expr_Comprehension(self, e: n.Comprehension, expected: t.Type | None) -> t.Type:
        elem = self.element_type(e.iterable, self.expr(e.iterable))
        want = expected.element if isinstance(expected, (t.ListOf, t.SetOf)) else None

        def body() -> t.Type:
            proven: frozenset[str] = frozenset()
            if e.condition is not None:
                proven = self.condition(e.condition, "the filter").when_true
            return self.with_facts(proven, lambda: self.expr(e.element, want))

        return t.ListOf(self._bind_and(e.var, elem, "quantifier", body))

    def expr_ListLit(self, e: n.ListLit, expected: t.Type | None) -> t.Type:
        if expected == t.JSON:  # a JSON array: elements of any JSON-able type
            for item in e.items:
                self.expect(item, t.JSON, self.expr(item, t.JSON), "JSON array element")
            return t.JSON
        want = expected.element if isinstance(expected, (t.ListOf, t.SetOf)) else None
        if not e.items:
            return expected if isinstance(expected, t.ListOf) else t.EmptyList()
        if want is not None and not isinstance(want, t.Unknown) and isinstance(expected,
                                                                                t.ListOf):
            # the expected element type decides (a `list[json]` literal may mix types)
            for item in e.items:
                self.expect(item, want, self.expr(item, want), "list element")
            return expected
        joined: t.Type | None = None
        for item in e.items:
            typ = self.expr(item, want or joined)
            if want is not None and t.widens_int(want, typ):
                self.program.widened[id(item)] = want
            if joined is None:
                joined = typ
                continue
            merged = t.join_types(joined, typ, self.unions)
            if merged is None:
                self.report("WS301", item, f"list element: expected {t.show(joined)}, found "
                            f"{t.show(typ)}")
            else:
                joined = merged
        return t.ListOf(want if want is not None and joined is not None
                        and self.assignable(want, joined) else joined or t.UNKNOWN)

    def expr_MapLit(self, e: n.MapLit, expected: t.Type | None) -> t.Type:
        if expected == t.JSON:  # a JSON object: text keys, values of any JSON-able type
            for entry in e.entries:
                self.expect(entry.key, t.STR, self.expr(entry.key, t.STR), "JSON object key")
                self.expect(entry.value, t.JSON, self.expr(entry.value, t.JSON),
                            "JSON object value")
            return t.JSON
        if not e.entries:
            return expected if isinstance(expected, t.MapOf) else t.EmptyMap()
        want_k = expected.key if isinstance(expected, t.MapOf) else None
        want_v = expected.value if isinstance(expected, t.MapOf) else None
        key_t: t.Type | None = None
        val_t: t.Type | None = None
        if want_k is not None and want_v is not None and not any(
                isinstance(x, t.Unknown) for x in (want_k, want_v)):
            # the expected type decides: each entry must fit it (a `map[str, json]` literal
            # may mix value types, as JSON does)
            for entry in e.entries:
                self.expect(entry.key, want_k, self.expr(entry.key, want_k), "map key")
                self.expect(entry.value, want_v, self.expr(entry.value, want_v), "map value")
            return expected or t.UNKNOWN
        for entry in e.entries:
            k = self.expr(entry.key, want_k or key_t)
            v = self.expr(entry.value, want_v or val_t)
            if want_v is not None and t.widens_int(want_v, v):
                self.program.widened[id(entry.value)] = want_v
            if key_t is None or val_t is None:
                key_t, val_t = k, v
                continue
            mk, mv = t.join_types(key_t, k, self.unions), t.join_types(val_t, v, self.unions)
            if mk is None:
                self.report("WS301", entry.key, f"map key: expected {t.show(key_t)}, found "
                            f"{t.show(k)}")
            if mv is None:
                self.report("WS301", entry.value, f"map value: expected {t.show(val_t)}, found "
                            f"{t.show(v)}")
            key_t, val_t = mk or key_t, mv or val_t
        assert key_t is not None and val_t is not None
        if want_k is not None and want_v is not None and self.assignable(
                expected or t.UNKNOWN, t.MapOf(key_t, val_t)):
            return expected or t.UNKNOWN
        return t.MapOf(key_t, val_t)

    def expr_Call(self, e: n.Call, expected: t.Type | None) -> t.Type:
        from worldspec.compiler.builtins import call_type

        return call_type(self, e, expected)

    # ---------------------------------------------------------- statements
    def block(self, block: n.Block) -> bool:
        """Check a block in a new frame; True when it always leaves the block early.

        Leaving early is ``return`` or ``fail`` (the call ends) or ``break`` or
        ``continue`` (the loop's round ends): in each case the code after an
        ``if`` whose branch leaves knows that branch's condition was false, so
        ``if v == none { continue }`` narrows ``v`` like ``return`` does. A loop
        never passes its body's early exit on (stmt_For, stmt_While).
        """
        self.scope.push()
        try:
            return self.statements(block.body)
        finally:
            self.scope.pop()

    def statements(self, body: Iterable[n.Stmt]) -> bool:
        exits = False
        for stmt in body:
            if self.stmt(stmt):
                exits = True
        return exits

    def stmt(self, s: n.Stmt) -> bool:
        method = getattr(self, "stmt_" + type(s).__name__)
        result: bool = method(s)
        return result

    def stmt_Let(self, s: n.Let) -> bool:
        declared = self.resolve_type(s.type) if s.type is not None else None
        value = self.expr(s.value, declared)
        if declared is not None:
            self.expect(s.value, declared, value, f"'{s.name.name}'")
            typ = declared
        else:
            typ = value
            if isinstance(value, (t.EmptyList, t.EmptyMap, t.NoneType)):
                self.report("WS309", s, f"cannot infer the type of '{s.name.name}'",
                            hints=[f"give it a type: let {s.name.name}: list[str] = ..."])
                typ = t.UNKNOWN
        self.define(s.name, typ, "local")
        self.record(s, typ)
        self.scope.forget(s.name.name)
        return False

    def resolve_type(self, texpr: n.TypeExpr) -> t.Type:
        from worldspec.compiler.resolve import resolve_type_expr

        return resolve_type_expr(texpr, self.world, self.sink)

    def target(self, target: n.Expr) -> t.Type:
        """Type an assignment target and report what cannot be assigned."""
        if isinstance(target, n.NameRef):
            if target.qualified:
                self.qualified.add(target.name)
            local = None if target.qualified else self.scope.lookup(target.name)
            if local is not None:
                self.program.resolutions[id(target)] = Resolution(
                    "param" if local.kind == "param" else "local", target.name)
                self.record(target, local.type)
                if not local.assignable:
                    what = {"param": "parameter", "loop": "loop variable",
                            "binding": "case variable"}.get(local.kind, "variable")
                    self.report("WS310", target, f"cannot assign to {what} '{target.name}'",
                                hints=["bind a new local with `let`"])
                return local.type
            state = self.world.state.get(target.name)
            if state is not None:
                self.program.resolutions[id(target)] = Resolution("state", target.name)
                self.record(target, state.type)
                if state.kind != "value":
                    self.report("WS310", target, f"cannot assign to {state.kind} '{target.name}'",
                                hints=["use insert/delete for tables"] if state.kind == "table"
                                else [])
                else:
                    self.mark_change(target, f"assigning '{target.name}'")
                return state.type
            return self.expr(target)
        if isinstance(target, n.Attribute):
            obj = self.expr(target.obj)
            typ = self.member_type(target, obj, target.name)
            self.record(target, typ)
            base = t.strip_optional(obj)
            if isinstance(base, t.Named) and base.kind in ("record", "entity"):
                info = self.world.records.get(base.name)
                f = info.fields.get(target.name.name) if info else None
                if f is not None and f.is_key:
                    self.report("WS310", target.name, f"cannot change the key "
                                f"'{target.name.name}' of {base.name}")
            elif isinstance(base, t.Named) and base.kind == "union":
                self.report("WS310", target, "cannot assign a field of a union value; "
                            "use match to reach the variant")
            elif not t.is_unknown(base):
                self.report("WS310", target, f"cannot assign to a field of {t.show(base)}")
            if self.is_stored(target):
                self.mark_change(target, f"assigning '{path_of(target) or target.name.name}'")
            return typ
        if isinstance(target, n.Index):
            obj = self.expr(target.obj)
            if isinstance(obj, t.Table):
                self.report("WS310", target, "cannot assign a table row; use insert, or change "
                            "its fields")
            elif obj == t.STR:
                self.report("WS310", target, "strings cannot be changed in place")
            typ = self.expr_Index(target, None) if not isinstance(obj, t.Table) else t.UNKNOWN
            self.record(target, typ)
            if self.is_stored(target):
                self.mark_change(target, "assigning an element")
            return typ
        self.expr(target)
        self.report("WS310", target, "cannot assign to this expression")
        return t.UNKNOWN

    def stmt_Assign(self, s: n.Assign) -> bool:
        target = self.target(s.target)
        value = self.expr(s.value, target)
        self.expect(s.value, target, value, "assignment")
        path = path_of(s.target)
        if path is not None:
            self.scope.forget(path)
            if isinstance(target, t.Optional) and not isinstance(value, (t.Optional, t.NoneType,
                                                                         t.Unknown)):
                self.scope.narrowed.add(path)
        return False

    def stmt_AugAssign(self, s: n.AugAssign) -> bool:
        target = self.target(s.target)
        value = self.expr(s.value, target)
        if not (t.is_unknown(target) or t.is_unknown(value)):
            result = binary_result(s.op, target, value)
            if result is None or not self.assignable(target, result):
                self.report("WS304", s, f"'{s.op}=' is not defined for {t.show(target)} and "
                            f"{t.show(value)}")
        return False

    def stmt_If(self, s: n.If) -> bool:
        facts = self.condition(s.condition, "the 'if' condition")
        saved = set(self.scope.narrowed)
        self.scope.narrowed |= facts.when_true
        then_exits = self.block(s.then)
        ends = [] if then_exits else [set(self.scope.narrowed)]
        self.scope.narrowed = set(saved) | facts.when_false
        else_exits = False
        if isinstance(s.orelse, n.Block):
            else_exits = self.block(s.orelse)
        elif isinstance(s.orelse, n.If):
            self.scope.push()
            try:
                else_exits = self.stmt_If(s.orelse)
            finally:
                self.scope.pop()
        if not else_exits:
            ends.append(set(self.scope.narrowed))
        self.scope.narrowed = saved
        if then_exits and not else_exits:
            self.scope.narrowed |= facts.when_false
        elif else_exits and not then_exits:
            self.scope.narrowed |= facts.when_true
        for end in ends:  # a branch that falls through may have assigned none
            self.scope.narrowed &= end
        return then_exits and else_exits

    def stmt_For(self, s: n.For) -> bool:
        elem = self.element_type(s.iterable, self.expr(s.iterable))
        self.forget_assigned(s.body)
        saved = set(self.scope.narrowed)
        self.scope.push()
        try:
            self.define(s.var, elem, "loop")
            self.loops += 1
            self.block(s.body)
        finally:
            self.loops -= 1
            self.scope.pop()
            self.scope.narrowed = saved
        return False

    def stmt_While(self, s: n.While) -> bool:
        # no narrowing from the condition: the body may change what it tested
        self.forget_assigned(s.body)
        self.condition(s.condition, "the 'while' condition")
        saved = set(self.scope.narrowed)
        self.loops += 1
        try:
            self.block(s.body)
        finally:
            self.loops -= 1
            self.scope.narrowed = saved
        return False

    def forget_assigned(self, body: n.Block) -> None:
        """A loop body runs again after its own assignments: what it assigns is not known
        at the top of the body (nor after the loop)."""
        for node in n.walk(body):
            if isinstance(node, (n.Assign, n.AugAssign, n.Append, n.Remove)):
                path = path_of(node.target)
                if path is not None:
                    self.scope.forget(path)

    def stmt_Break(self, s: n.Break) -> bool:
        return self._loop_exit(s, "break")

    def stmt_Continue(self, s: n.Continue) -> bool:
        return self._loop_exit(s, "continue")

    def _loop_exit(self, s: n.Node, word: str) -> bool:
        if self.loops == 0:
            self.report("WS409", s, f"'{word}' outside a loop",
                        hints=["use `return` to leave a tool or helper"])
            return False
        return True  # the rest of the loop's round does not run

    def stmt_Match(self, s: n.Match) -> bool:
        subject = self.expr(s.subject)
        base = subject
        if isinstance(subject, t.Optional):
            self.report("WS305", s.subject, f"match on a value that may be none "
                        f"({t.show(subject)})")
            base = subject.inner
        tags: dict[str, t.Type | None] = {}
        kind = ""
        if isinstance(base, t.Named) and base.kind == "enum" and base.name in self.world.enums:
            tags = {m: None for m in self.world.enums[base.name].members}
            kind = f"enum {base.name}"
        elif isinstance(base, t.Named) and base.kind == "union" and base.name in self.world.unions:
            tags = {tag: t.Named("record", rec)
                    for tag, rec in self.world.unions[base.name].variants.items()}
            kind = f"union {base.name}"
        elif not t.is_unknown(base):
            self.report("WS304", s.subject, f"match needs an enum or a union, found "
                        f"{t.show(base)}")
        seen: dict[str, n.MatchCase] = {}
        all_exit = True
        saved = set(self.scope.narrowed)
        ends: list[set[str]] = []  # what is known at the end of each case that falls through
        for case in s.cases:
            self.scope.narrowed = set(saved)
            tag = case.tag.name
            binding_type: t.Type = t.UNKNOWN
            if tags and tag not in tags:
                self.report("WS207", case.tag, f"{kind} has no member '{tag}'",
                            hints=did_you_mean(tag, tags))
            elif tags:
                binding_type = tags[tag] or t.UNKNOWN
                if tags[tag] is None and case.binding is not None:
                    binding_type = base
            if tag in seen:
                self.report("WS406", case.tag, f"'{tag}' is matched twice",
                            related=[Related(seen[tag].tag.span, "first matched here")])
            seen.setdefault(tag, case)
            self.scope.push()
            try:
                if case.binding is not None:
                    self.define(case.binding, binding_type, "binding")
                exits = self.block(case.body)
            finally:
                self.scope.pop()
            all_exit = all_exit and exits
            if not exits:
                ends.append(set(self.scope.narrowed))
        self.scope.narrowed = set(saved)
        if s.orelse is not None:
            else_exits = self.block(s.orelse)
            all_exit = else_exits and all_exit
            if not else_exits:
                ends.append(set(self.scope.narrowed))
        elif tags and all(tag in tags for tag in seen):
            missing = [tag for tag in tags if tag not in seen]
            if missing:
                self.report("WS407", s, "match does not handle "
                            f"{', '.join(repr(m) for m in missing)}",
                            hints=["add the missing cases or an `else { }`"])
                all_exit = False
        self.scope.narrowed = set.intersection(*ends) if ends else saved
        return all_exit and (bool(s.cases) or s.orelse is not None)

    def message(self, expr: n.Expr, what: str) -> None:
        typ = self.expr(expr)
        if typ != t.STR and not t.is_unknown(typ):
            self.report("WS301", expr, f"{what}: expected str, found {t.show(typ)}")

    def stmt_Require(self, s: n.Require) -> bool:
        facts = self.condition(s.condition, "the 'require' condition")
        self.message(s.message, "the 'require' message")
        self.scope.narrowed |= facts.when_true
        return False

    def stmt_Fail(self, s: n.Fail) -> bool:
        self.message(s.message, "the 'fail' message")
        return True

    def stmt_Return(self, s: n.Return) -> bool:
        want = self.context.returns
        if s.value is None:
            if want is not None:
                self.report("WS404", s, f"this returns nothing, but {t.show(want)} is declared")
            return True
        value = self.expr(s.value, want)
        if want is None:
            self.report("WS404", s.value, "the tool declares no return type; add `-> "
                        f"{t.show(value)}` or return nothing")
        else:
            self.expect(s.value, want, value, "return value")
        return True

    def _table(self, expr: n.Expr, what: str) -> t.Table | None:
        typ = self.expr(expr)
        if isinstance(typ, t.Table):
            if not isinstance(expr, n.NameRef):
                self.report("WS405", expr, f"{what} needs a table state item")
            return typ
        if not t.is_unknown(typ):
            self.report("WS405", expr, f"{what} needs a table, found {t.show(typ)}")
        return None

    def stmt_Insert(self, s: n.Insert) -> bool:
        table = self._table(s.table, "insert ... into")
        want = t.Named("entity", table.entity) if table else None
        value = self.expr(s.value, want)
        if want is not None:
            self.expect(s.value, want, value, "inserted row")
        self.mark_change(s, "insert")
        return False

    def stmt_Delete(self, s: n.Delete) -> bool:
        table = self._table(s.table, "delete ... from")
        value = self.expr(s.value)
        if table is not None:
            want = t.Named("entity", table.entity)
            if not (self.assignable(want, value) or self._entity_key_match(want, value)):
                self.report("WS301", s.value, f"deleted row: expected {table.entity} or its key, "
                            f"found {t.show(value)}")
        self.mark_change(s, "delete")
        return False

    def _collection(self, expr: n.Expr, allow_map: bool, what: str) -> t.Type | None:
        if isinstance(expr, n.NameRef) and self.scope.lookup(expr.name) is None:
            state = self.world.state.get(expr.name)
            if state is not None and state.kind == "table":
                self.expr(expr)
                verb = "insert ... into" if what == "append" else "delete ... from"
                self.report("WS405", expr, f"{what} needs a list or a set; "
                            f"'{expr.name}' is a table", hints=[f"use `{verb} {expr.name}`"])
                return None
        typ = self.target(expr) if isinstance(expr, (n.NameRef, n.Attribute, n.Index)) else \
            self.expr(expr)
        if isinstance(typ, t.Optional):
            self.report("WS305", expr, f"{what} on a value that may be none")
            typ = typ.inner
        if isinstance(typ, (t.ListOf, t.SetOf)):
            return typ.element
        if allow_map and isinstance(typ, t.MapOf):
            return typ.key
        if not t.is_unknown(typ):
            kinds = "a list, a set or a map" if allow_map else "a list or a set"
            self.report("WS405", expr, f"{what} needs {kinds}, found {t.show(typ)}")
        return None

    def stmt_Append(self, s: n.Append) -> bool:
        elem = self._collection(s.target, False, "append")
        value = self.expr(s.value, elem)
        if elem is not None:
            self.expect(s.value, elem, value, "appended value")
        if self.is_stored(s.target):
            self.mark_change(s, "append")
        return False

    def stmt_Remove(self, s: n.Remove) -> bool:
        elem = self._collection(s.target, True, "remove")
        value = self.expr(s.value, elem)
        if elem is not None:
            self.expect(s.value, elem, value, "removed value")
        if self.is_stored(s.target):
            self.mark_change(s, "remove")
        return False


def binary_result(op: str, left: t.Type, right: t.Type) -> t.Type | None:
    """The result type of an arithmetic operator, or None if it is not defined."""
    if isinstance(left, t.Optional) or isinstance(right, t.Optional):
        return None
    num = t.is_numeric(left) and t.is_numeric(right)
    if op == "+":
        if num:
            return t.numeric_result(left, right)
        if left == right == t.STR:
            return t.STR
        if isinstance(left, t.ListOf) and isinstance(right, (t.ListOf, t.EmptyList)):
            return left
        if isinstance(left, t.EmptyList) and isinstance(right, t.ListOf):
            return right
        if left in (t.DATETIME, t.DATE) and right == t.DURATION:
            return left
        if left == right == t.DURATION:
            return t.DURATION
        return None
    if op == "-":
        if num:
            return t.numeric_result(left, right)
        if left in (t.DATETIME, t.DATE) and right == t.DURATION:
            return left
        if left == right and left in (t.DATETIME, t.DATE, t.DURATION):
            return t.DURATION
        return None
    if op == "*":
        if num:
            return t.numeric_result(left, right)
        if left == t.DURATION and t.is_numeric(right):
            return t.DURATION
        return None
    if op == "/":
        if num:
            return t.FLOAT
        return None
    if op in ("//", "%"):
        if num:
            return t.numeric_result(left, right)
        return None
    if op == "**":
        # int ** int stays an int (a negative exponent fails the call); else a float
        if num:
            return t.numeric_result(left, right)
        return None
    return None
