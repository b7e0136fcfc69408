"""Which invariants can be checked on the rows a call changed, instead of in full.

Two shapes are recognised, both over tables, with a body that is *pure in its row variables*:
it reads only those rows' own fields, constants, enum members, and pure helpers (``fn``s that
read no state and no other row) or pure builtins.

- ``all x in t: body(x)``: it holds for the whole table when it holds for every row the call
  inserted or changed (a deleted row cannot break it).
- ``all a in t: all b in u: body(a, b)``: it holds when it holds for every pair with a changed
  row on either side, so a call costs ``changed x rows`` checks instead of ``rows x rows``.

Anything else (reading other state, other rows through a reference, aggregates over tables)
is checked in full after every call that changes state.
"""

from __future__ import annotations

from dataclasses import dataclass

from worldspec.compiler import types as t
from worldspec.compiler.builtins import DRAWS
from worldspec.compiler.model import ProgramModel, WorldModel
from worldspec.dsl import nodes as n

__all__ = ["LocalInvariant", "PairInvariant", "local_invariant", "pair_invariant"]

#: builtins whose value depends on more than their arguments
_IMPURE_BUILTINS = DRAWS | {"matches_solution"}


@dataclass(frozen=True, slots=True)
class LocalInvariant:
    """``all var in table: body`` with ``body`` pure in ``var``."""

    var: str
    table: str
    body: n.Expr


@dataclass(frozen=True, slots=True)
class PairInvariant:
    """``all a in table_a: all b in table_b: body`` with ``body`` pure in ``a`` and ``b``."""

    a: str
    table_a: str
    b: str
    table_b: str
    body: n.Expr


def _table_quantifier(expr: n.Expr, world: WorldModel) -> tuple[str, str, n.Expr] | None:
    if not (isinstance(expr, n.Quantifier) and expr.kind == "all"
            and isinstance(expr.iterable, n.NameRef)):
        return None
    state = world.state.get(expr.iterable.name)
    if state is None or state.kind != "table":
        return None
    return expr.var.name, state.name, expr.body


def local_invariant(expr: n.Expr, world: WorldModel,
                    program: ProgramModel) -> LocalInvariant | None:
    """The row-local shape of ``expr``, or None."""
    found = _table_quantifier(expr, world)
    if found is None:
        return None
    var, table, body = found
    if not _Purity(world, program).pure(body, frozenset({var})):
        return None
    return LocalInvariant(var, table, body)


def pair_invariant(expr: n.Expr, world: WorldModel,
                   program: ProgramModel) -> PairInvariant | None:
    """The pairwise shape of ``expr``, or None."""
    outer = _table_quantifier(expr, world)
    if outer is None:
        return None
    a, table_a, inner_expr = outer
    inner = _table_quantifier(inner_expr, world)
    if inner is None:
        return None
    b, table_b, body = inner
    if a == b or not _Purity(world, program).pure(body, frozenset({a, b})):
        return None
    return PairInvariant(a, table_a, b, table_b, body)


class _Purity:
    """Decides whether code reads nothing but the given row variables (and constants)."""

    def __init__(self, world: WorldModel, program: ProgramModel) -> None:
        self.world = world
        self.program = program
        self.fns: dict[str, bool] = {}

    def pure(self, root: n.Node, rows: frozenset[str], *, in_fn: bool = False) -> bool:
        """``root`` reads only the variables ``rows`` (or, in a helper, its parameters and
        locals), their own fields, constants and pure helpers."""
        resolutions = self.program.resolutions
        callees: set[int] = set()
        compared: set[int] = set()
        # variables bound inside (quantifiers, comprehensions, lambdas) range over values
        # computed from pure expressions, so reading them is pure too -- unless they hold
        # entity keys, whose fields live in other rows
        bound: set[str] = set()
        for node in n.walk(root):
            if isinstance(node, n.Compare) and node.op in ("==", "!="):
                compared.update((id(node.left), id(node.right)))
            elif isinstance(node, n.Call) and isinstance(node.func, n.NameRef):
                callees.add(id(node.func))
            elif isinstance(node, (n.Quantifier, n.Comprehension)):
                bound.add(node.var.name)
            elif isinstance(node, n.Lambda):
                bound.add(node.param.name)
        for node in n.walk(root):
            if isinstance(node, n.Call):
                if not self._pure_call(node):
                    return False
            elif isinstance(node, n.NameRef):
                if id(node) in callees:
                    continue
                res = resolutions.get(id(node))
                if res is None:
                    return False
                if res.kind in ("enum", "enum_member"):
                    continue
                if res.kind == "param" and in_fn:
                    continue  # a helper's argument: the call site was checked
                if res.kind == "local" and node.name in rows:
                    continue  # a row variable
                if res.kind == "local" and (in_fn or node.name in bound) and \
                        not self._holds_entity(node):
                    continue
                return False
            elif isinstance(node, (n.Attribute, n.Index)) and not self._own_field(
                    node, compared):
                return False
        return True

    def _holds_entity(self, node: n.Expr) -> bool:
        typ = t.strip_optional(self.program.type_of(node) or t.UNKNOWN)
        if isinstance(typ, (t.ListOf, t.SetOf)):
            typ = t.strip_optional(typ.element)
        return (isinstance(typ, t.Named) and typ.kind == "entity") or typ == t.UNKNOWN

    def _own_field(self, node: n.Attribute | n.Index, compared: set[int]) -> bool:
        """A field read that stays within the row it starts from."""
        typ = t.strip_optional(self.program.type_of(node) or t.UNKNOWN)
        obj_type = t.strip_optional(self.program.type_of(node.obj) or t.UNKNOWN)
        # an entity-typed field is a key: comparing it is local, using it reads another row
        if isinstance(typ, t.Named) and typ.kind == "entity" and id(node) not in compared:
            return False
        # a field of an entity that is not a variable itself (e.g. reached by a reference)
        return not (isinstance(obj_type, t.Named) and obj_type.kind == "entity"
                    and not isinstance(node.obj, n.NameRef))

    def _pure_call(self, call: n.Call) -> bool:
        func = call.func
        if isinstance(func, n.Attribute):
            return True  # a method of a value (str, list, map); its receiver is checked too
        if not isinstance(func, n.NameRef):
            return False
        res = self.program.resolutions.get(id(func))
        if res is None:
            return False
        if res.kind == "builtin":
            return func.name not in _IMPURE_BUILTINS
        if res.kind == "record":
            return True
        if res.kind == "fn":
            return self._pure_fn(func.name)
        return False

    def _pure_fn(self, name: str) -> bool:
        known = self.fns.get(name)
        if known is not None:
            return known
        info = self.world.fns.get(name)
        self.fns[name] = False  # helpers cannot recurse; a cycle would not be pure anyway
        result = info is not None and self.pure(info.node, frozenset(), in_fn=True)
        self.fns[name] = result
        return result
