"""A task check's condition as Python that says what it compared when it fails.

A check whose condition has an explainable shape at its top level returns a
:class:`~worldspec.runtime.verdicts.Verdict` (truthy exactly when the check holds) instead of
a bare ``bool``, so the grader's breakdown can show *why* it failed:

- a comparison ``a == b`` (``!= < <= > >=``) becomes ``rt.expect(a, '==', b)``: both sides
  are evaluated once, as the plain comparison would, and the detail holds their values and
  the comparison as spec text. The text is data, kept once in the task's JSON (the check's
  ``explains``, in the order of the condition): the call names it by position (``part=1``
  for the second; the first is the default);
- ``matches_solution()`` becomes ``ep.solution_verdict(init, task)``: the detail holds the
  first path where the state differs from the reference solution's;
- an ``and`` of conditions keeps Python's ``and``, each side explained where it can be: the
  first conjunct that fails is the value, so its detail explains the check.

Any other condition is compiled as it always was (``None`` here).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from worldspec.compiler.codegen.exprs import Env, ExprCompiler
from worldspec.compiler.codegen.pycode import (
    Attr,
    BoolOp,
    Call,
    Compare,
    Const,
    Expr,
    Name,
    Not,
    Raw,
    call,
)
from worldspec.dsl import nodes as n
from worldspec.dsl.formatter import format_expr

__all__ = ["explained_condition", "names_read", "is_bool"]

#: ``(compiler, condition, env, texts) -> Python or None``; an explained comparison's spec text
#: is appended to ``texts`` and named by its position there
Explainer = Callable[[ExprCompiler, n.Expr, Env, list[str]], Expr | None]


def _comparison(x: ExprCompiler, e: n.Expr, env: Env, texts: list[str]) -> Expr | None:
    assert isinstance(e, n.Compare)
    sides = x.compare_operands(e, env)
    if sides is None:
        return None
    left, op, right = sides
    part = {"part": Const(len(texts))} if texts else {}
    texts.append(format_expr(e))
    return call(Attr(Name("rt"), "expect"), left, Const(op), right, **part)


def _solution(x: ExprCompiler, e: n.Expr, env: Env, texts: list[str]) -> Expr | None:
    assert isinstance(e, n.Call)
    if not (isinstance(e.func, n.NameRef) and e.func.name == "matches_solution") or \
            env.task is None:
        return None
    return call(Attr(env.episode, "solution_verdict"), Name(env.init), Const(env.task))


def _conjunction(x: ExprCompiler, e: n.Expr, env: Env, texts: list[str]) -> Expr | None:
    assert isinstance(e, n.BoolOp)
    if e.op != "and":
        return None
    left = explained_condition(x, e.left, env, texts)
    right = explained_condition(x, e.right, env, texts)
    if left is None and right is None:
        return None
    return BoolOp("and", (left if left is not None else x.value(e.left, env),
                          right if right is not None else x.value(e.right, env)))


#: condition node type -> how it is explained
_EXPLAINERS: dict[type[n.Node], Explainer] = {
    n.Compare: _comparison,
    n.Call: _solution,
    n.BoolOp: _conjunction,
}


def explained_condition(x: ExprCompiler, condition: n.Expr, env: Env,
                        texts: list[str]) -> Expr | None:
    """``condition`` as Python that evaluates to a verdict (or, for a conjunct that cannot
    be explained, a ``bool``); ``None`` when nothing in it can be explained. The spec text
    of each comparison it explains is appended to ``texts``, in the order of the
    condition."""
    explainer = _EXPLAINERS.get(type(condition))
    return explainer(x, condition, env, texts) if explainer is not None else None


def names_read(expr: Expr) -> frozenset[str] | None:
    """Every name ``expr`` reads, anywhere in it (a check's function takes the parameters it
    reads, no more); ``None`` where part of it is code given as text (:class:`Raw`), which
    may read any."""
    found: set[str] = set()
    pending: list[object] = [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, Raw):
            return None
        if isinstance(node, Name):
            found.add(node.id)
        elif isinstance(node, (tuple, list)):
            pending.extend(node)
        elif isinstance(node, Expr) and dataclasses.is_dataclass(node):
            pending.extend(getattr(node, f.name) for f in dataclasses.fields(node))
    return frozenset(found)


#: builtins whose call is a ``bool`` already
_BOOL_CALLS = frozenset({"any", "all", "isinstance"})
#: comparisons Python makes a ``bool`` of whatever the operands (``==`` may be anything)
_BOOL_COMPARISONS = frozenset({"in", "not in", "is", "is not"})


def is_bool(expr: Expr) -> bool:
    """Whether ``expr`` is a ``bool`` to Python and mypy alike (``not x``, ``any(...)``,
    ``x in y``, an ``and`` of those), so that a check returns it without ``bool(...)``
    around it."""
    if isinstance(expr, Compare):
        return expr.op in _BOOL_COMPARISONS
    if isinstance(expr, BoolOp):  # `and` / `or` of bools is one
        return all(is_bool(value) for value in expr.values)
    return isinstance(expr, Not) or (isinstance(expr, Call) and isinstance(expr.func, Name)
                                     and expr.func.id in _BOOL_CALLS)
