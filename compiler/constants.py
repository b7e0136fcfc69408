"""Constant expressions (solution arguments) evaluated at compile time to JSON data."""

from __future__ import annotations

from typing import Any

from worldspec.compiler.model import ProgramModel, WorldModel
from worldspec.dsl import nodes as n

__all__ = ["NotConstant", "constant_value", "is_constant"]


class NotConstant(ValueError):
    """The expression needs run-time state."""


def constant_value(expr: n.Node, world: WorldModel, program: ProgramModel) -> Any:
    """The JSON value of a literal expression, as an agent would send it."""
    if isinstance(expr, (n.IntLit, n.FloatLit, n.StrLit, n.BoolLit)):
        return expr.value
    if isinstance(expr, n.NoneLit):
        return None
    if isinstance(expr, n.FStr) and all(isinstance(p, str) for p in expr.parts):
        return "".join(p for p in expr.parts if isinstance(p, str))
    if isinstance(expr, n.ListLit):
        return [constant_value(x, world, program) for x in expr.items]
    if isinstance(expr, n.MapLit):
        return {str(constant_value(e.key, world, program)): constant_value(e.value, world, program)
                for e in expr.entries}
    if isinstance(expr, n.NameRef):
        res = program.resolutions.get(id(expr))
        if res is not None and res.kind == "enum_member" and res.owner in world.enums:
            return world.enums[res.owner].members[expr.name].value
    if isinstance(expr, n.Attribute) and isinstance(expr.obj, n.NameRef) and \
            expr.obj.name in world.enums:
        member = world.enums[expr.obj.name].members.get(expr.name.name)
        if member is not None:
            return member.value
    if isinstance(expr, n.Unary) and expr.op == "-":
        inner = constant_value(expr.operand, world, program)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner
    if isinstance(expr, n.Call) and isinstance(expr.func, n.NameRef):
        name = expr.func.name
        if name in world.records and all(a.name is not None for a in expr.args):
            return {a.name.name: constant_value(a.value, world, program)  # type: ignore[union-attr]
                    for a in expr.args}
        if name in ("date", "datetime") and len(expr.args) == 1:
            return constant_value(expr.args[0].value, world, program)
    raise NotConstant(f"not a constant: {type(expr).__name__}")


def is_constant(expr: n.Node, world: WorldModel, program: ProgramModel) -> bool:
    """Whether :func:`constant_value` can evaluate ``expr`` (after it was typed)."""
    try:
        constant_value(expr, world, program)
    except NotConstant:
        return False
    return True
