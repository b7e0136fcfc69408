"""Which invariants can be checked on the changed rows only."""

from __future__ import annotations

from compiler import types as t
from compiler.model import ProgramModel, WorldModel
from dsl import nodes as n

__all__ = ["local_invariant"]


def local_invariant(expr: n.Expr, world: WorldModel,
                    program: ProgramModel) -> tuple[str, str, n.Expr] | None:
    """``all x in table: body`` where ``body`` reads only ``x``'s own fields and constants.

    Such an invariant holds for the whole table if it holds for every row a
    call changed, so it is checked on those rows only. Returns (variable,
    table, body), or None when the invariant must be checked in full.
    """
    if not (isinstance(expr, n.Quantifier) and expr.kind == "all"
            and isinstance(expr.iterable, n.NameRef)):
        return None
    state = world.state.get(expr.iterable.name)
    if state is None or state.kind != "table":
        return None
    var = expr.var.name
    for node in n.walk(expr.body):
        if isinstance(node, (n.Quantifier, n.Comprehension, n.Lambda)):
            return None
        if isinstance(node, n.Call):
            return None
        if isinstance(node, n.NameRef):
            res = program.resolutions.get(id(node))
            if node.name == var and res is not None and res.kind == "local":
                continue
            if res is not None and res.kind in ("enum", "enum_member"):
                continue
            return None
        if isinstance(node, (n.Attribute, n.Index)):
            typ = t.strip_optional(program.type_of(node) or t.UNKNOWN)
            obj_type = t.strip_optional(program.type_of(node.obj) or t.UNKNOWN)
            # reading through a reference would depend on another row
            if isinstance(typ, t.Named) and typ.kind == "entity":
                return None
            if isinstance(obj_type, t.Named) and obj_type.kind == "entity" and not (
                    isinstance(node.obj, n.NameRef) and node.obj.name == var):
                return None
    return var, state.name, expr.body
