"""How an old type or condition relates to a new one: same, wider, narrower or neither.

``relate_types`` compares the sets of values two types accept, refinements
included (the checker's own ``assignable`` ignores ranges and patterns, since
they are run-time checks). ``relate_conditions`` decides, for the few shapes
where it can be proved, whether a boolean condition accepts more or less:
conjuncts or disjuncts added or dropped, a numeric bound against a literal
moved, a negation, the body of a quantifier. Anything else is ``DIFFERENT``,
which callers must treat conservatively.
"""

from __future__ import annotations

from enum import Enum

from worldspec.compiler import types as t
from worldspec.dsl import nodes as n
from worldspec.dsl.formatter import format_expr

__all__ = ["Relation", "relate_types", "relate_conditions", "type_text", "expr_text"]


class Relation(Enum):
    """How the new thing's set of accepted values compares with the old one's."""

    SAME = "same"
    WIDER = "wider"        # accepts everything the old one did, and more
    NARROWER = "narrower"  # accepts only part of what the old one did
    DIFFERENT = "different"

    def then(self, other: Relation) -> Relation:
        """Both relations at once (of two parts of one type, or two conjuncts)."""
        if self is Relation.SAME:
            return other
        if other is Relation.SAME or other is self:
            return self
        return Relation.DIFFERENT

    def flipped(self) -> Relation:
        """The relation of the complements (under ``not``)."""
        return {Relation.WIDER: Relation.NARROWER,
                Relation.NARROWER: Relation.WIDER}.get(self, self)


# ------------------------------------------------------------------- types
def _relate_bounds(old: t.Refinement | None, new: t.Refinement | None) -> Relation:
    olo, ohi = (old.low, old.high) if old else (None, None)
    nlo, nhi = (new.low, new.high) if new else (None, None)
    if (olo, ohi) == (nlo, nhi):
        return Relation.SAME
    new_holds_old = ((nlo is None or (olo is not None and nlo <= olo))
                     and (nhi is None or (ohi is not None and nhi >= ohi)))
    old_holds_new = ((olo is None or (nlo is not None and olo <= nlo))
                     and (ohi is None or (nhi is not None and ohi >= nhi)))
    if new_holds_old:
        return Relation.WIDER
    if old_holds_new:
        return Relation.NARROWER
    return Relation.DIFFERENT


def _relate_refinements(old: t.Refinement | None, new: t.Refinement | None) -> Relation:
    bounds = _relate_bounds(old, new)
    old_pattern = old.pattern if old else None
    new_pattern = new.pattern if new else None
    if old_pattern == new_pattern:
        pattern = Relation.SAME
    elif old_pattern is None:
        pattern = Relation.NARROWER
    elif new_pattern is None:
        pattern = Relation.WIDER
    else:
        pattern = Relation.DIFFERENT  # which strings match both cannot be decided
    return bounds.then(pattern)


def relate_types(old: t.Type, new: t.Type) -> Relation:
    """How the values ``new`` accepts compare with those ``old`` accepts."""
    if isinstance(old, t.Optional) or isinstance(new, t.Optional):
        if isinstance(old, t.Optional) and isinstance(new, t.Optional):
            return relate_types(old.inner, new.inner)
        if isinstance(new, t.Optional):
            return Relation.WIDER.then(relate_types(old, new.inner))
        assert isinstance(old, t.Optional)
        return Relation.NARROWER.then(relate_types(old.inner, new))
    if isinstance(old, t.Prim) and isinstance(new, t.Prim):
        refinements = _relate_refinements(old.refinement, new.refinement)
        if old.name == new.name:
            return refinements
        if new.name == "json":
            return Relation.WIDER
        if old.name == "json":
            return Relation.NARROWER
        if (old.name, new.name) == ("int", "float"):
            return Relation.WIDER.then(refinements)
        if (old.name, new.name) == ("float", "int"):
            return Relation.NARROWER.then(refinements)
        return Relation.DIFFERENT
    if new == t.JSON and not isinstance(old, (t.Table, t.Sequence)):
        return Relation.WIDER
    if old == t.JSON and not isinstance(new, (t.Table, t.Sequence)):
        return Relation.NARROWER
    if (isinstance(old, t.ListOf) and isinstance(new, t.ListOf)) or \
            (isinstance(old, t.SetOf) and isinstance(new, t.SetOf)):
        assert isinstance(old, (t.ListOf, t.SetOf)) and isinstance(new, (t.ListOf, t.SetOf))
        return relate_types(old.element, new.element).then(
            _relate_bounds(old.refinement, new.refinement))
    if isinstance(old, t.MapOf) and isinstance(new, t.MapOf):
        return (relate_types(old.key, new.key).then(relate_types(old.value, new.value))
                .then(_relate_bounds(old.refinement, new.refinement)))
    if isinstance(old, t.Named) and isinstance(new, t.Named):
        # a declared type's own changes are reported where it is declared
        return Relation.SAME if old.name == new.name else Relation.DIFFERENT
    return Relation.SAME if old == new else Relation.DIFFERENT


def _number(value: int | float) -> str:
    return repr(value)


def _refinement_text(ref: t.Refinement | None, *, string: bool) -> str:
    if ref is None:
        return ""
    out = ""
    if ref.low is not None or ref.high is not None:
        low = _number(ref.low) if ref.low is not None else ""
        high = _number(ref.high) if ref.high is not None else ""
        out += f"({low}..{high})"
    if ref.pattern is not None and string:
        out += f" matching /{ref.pattern}/"
    return out


def type_text(typ: t.Type | None) -> str:
    """A type as spec text, with its ranges and pattern (aliases written out)."""
    if typ is None:
        return "nothing"
    if isinstance(typ, t.Prim):
        return typ.name + _refinement_text(typ.refinement, string=typ.name == "str")
    if isinstance(typ, t.Optional):
        inner = type_text(typ.inner)
        return f"({inner})?" if " " in inner else inner + "?"
    if isinstance(typ, t.ListOf):
        return f"list[{type_text(typ.element)}]" + _refinement_text(typ.refinement,
                                                                     string=False)
    if isinstance(typ, t.SetOf):
        return f"set[{type_text(typ.element)}]" + _refinement_text(typ.refinement,
                                                                   string=False)
    if isinstance(typ, t.MapOf):
        return (f"map[{type_text(typ.key)}, {type_text(typ.value)}]"
                + _refinement_text(typ.refinement, string=False))
    return t.show(typ)


# -------------------------------------------------------------- conditions
_MAX_TEXT = 80


def expr_text(expr: n.Expr | None, limit: int | None = None) -> str:
    """An expression as one line of canonical spec text, cut at ``limit`` characters."""
    if expr is None:
        return "nothing"
    text = format_expr(expr)
    if limit is not None and len(text) > limit:
        text = text[:limit - 1] + "…"
    return text


def _flatten(expr: n.Expr, op: str) -> list[n.Expr]:
    if isinstance(expr, n.BoolOp) and expr.op == op:
        return _flatten(expr.left, op) + _flatten(expr.right, op)
    return [expr]


def _literal(expr: n.Expr) -> int | float | None:
    if isinstance(expr, (n.IntLit, n.FloatLit)):
        return expr.value
    if isinstance(expr, n.Unary) and expr.op == "-" and isinstance(expr.operand,
                                                                  (n.IntLit, n.FloatLit)):
        return -expr.operand.value
    return None


_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _bound(expr: n.Expr) -> tuple[n.Expr, str, int | float] | None:
    """``x op literal`` (or ``literal op x``, mirrored) as (x, op, literal)."""
    if not isinstance(expr, n.Compare) or expr.op not in _MIRROR:
        return None
    right = _literal(expr.right)
    if right is not None:
        return expr.left, expr.op, right
    left = _literal(expr.left)
    if left is not None:
        return expr.right, _MIRROR[expr.op], left
    return None


def _relate_bounds_of(old: n.Expr, new: n.Expr) -> Relation:
    """``x >= 1`` against ``x >= 2``: how the set of accepted ``x`` moves."""
    a, b = _bound(old), _bound(new)
    if a is None or b is None or a[0] != b[0]:
        return Relation.DIFFERENT
    (_, old_op, old_value), (_, new_op, new_value) = a, b
    lower = {">", ">="}
    if (old_op in lower) != (new_op in lower):
        return Relation.DIFFERENT
    old_strict, new_strict = old_op in {">", "<"}, new_op in {">", "<"}
    if old_value == new_value:
        if old_strict == new_strict:
            return Relation.SAME
        return Relation.NARROWER if new_strict else Relation.WIDER
    raised = new_value > old_value
    if old_op in lower:
        return Relation.NARROWER if raised else Relation.WIDER
    return Relation.WIDER if raised else Relation.NARROWER


def _relate_parts(old: list[n.Expr], new: list[n.Expr], op: str) -> Relation:
    """Conjuncts (``op`` and) or disjuncts (``or``) of two conditions."""
    grow = Relation.NARROWER if op == "and" else Relation.WIDER
    if len(old) == len(new):
        differing = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
        if len(differing) == 1:
            return relate_conditions(*differing[0])
    remaining = list(new)
    for part in old:
        if part in remaining:
            remaining.remove(part)
        else:
            break
    else:
        return grow if remaining else Relation.SAME  # every old part kept, some added
    remaining = list(old)
    for part in new:
        if part in remaining:
            remaining.remove(part)
        else:
            return Relation.DIFFERENT
    return grow.flipped()  # only parts dropped


def relate_conditions(old: n.Expr, new: n.Expr) -> Relation:
    """How the states (or calls) ``new`` accepts compare with those ``old`` accepts."""
    if old == new:
        return Relation.SAME
    if isinstance(old, n.Not) and isinstance(new, n.Not):
        return relate_conditions(old.operand, new.operand).flipped()
    if isinstance(old, n.Quantifier) and isinstance(new, n.Quantifier) and (
            old.kind == new.kind or {old.kind, new.kind} == {"any", "exists"}) and (
            old.var, old.iterable) == (new.var, new.iterable):
        return relate_conditions(old.body, new.body)  # both quantifiers are monotone
    for op in ("and", "or"):
        old_parts, new_parts = _flatten(old, op), _flatten(new, op)
        if len(old_parts) > 1 or len(new_parts) > 1:
            found = _relate_parts(old_parts, new_parts, op)
            if found is not Relation.DIFFERENT:
                return found
    return _relate_bounds_of(old, new)
