"""Builtin functions and methods: one table row each.

A row binds a name to its parameter list, a function computing the result type from the
typed arguments, how the code generator emits the call, and what the call draws from the
per-call budget (``worldspec.runtime.budget``). Adding a builtin is adding a row here (and,
when it needs one, a runtime helper it is emitted as).

``emit`` is a Python source template over the parameter names (``{x}``), the receiver
(``{recv}``, for methods) and the episode (``{ep}``); a name starting with ``@`` instead
names a custom emitter of ``compiler.codegen.calls`` (for builtins with several forms).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from worldspec.compiler import types as t
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import Related, did_you_mean

if TYPE_CHECKING:
    from worldspec.compiler.typer import Typer

__all__ = ["BUILTIN_FUNCTIONS", "BUILTIN_VALUES", "METHODS", "call_type", "BUILTIN_NAMES",
           "DRAWS", "CONVERSATION", "Builtin", "Method", "Charge", "MAX_STRING", "MAX_RANGE",
           "spec_too_wide", "format_too_wide", "report_wide_spec", "constant_int"]

#: Bound arguments: parameter name -> argument node (None when absent).
Bound = dict[str, "n.Arg | None"]
Handler = Callable[["Typer", n.Call, Bound, "t.Type | None"], t.Type]

#: The runtime's limits the checker judges constants against (``worldspec.runtime.budget``
#: and ``helpers``; the compiler does not import the runtime, a test keeps them equal).
MAX_STRING = 1_000_000
MAX_RANGE = 100_000


@dataclass(frozen=True, slots=True)
class Charge:
    """What a builtin draws from the call's budget; the code generator applies it.

    ``steps`` names the parameter (``recv`` for a method's receiver) whose elements the
    builtin processes: one step each, charged before (only when it is a collection).
    ``reads`` names the parameters whose text the builtin reads: one step per 64 characters,
    charged before (``rt.read``; a literal or a number's text is short and free).
    ``width`` names the parameter that is the length of the string about to be built: checked
    before building. ``spec`` names a format-spec parameter: its width and precision are
    checked before formatting (at check time when it is a literal). ``text``: the result is a
    string the call builds (its length is checked and charged). ``items``: the result is a
    new collection, one step per element. ``pieces``: the result is a collection of new
    strings (``split``): one step per piece, and their characters charged as text.
    """

    steps: str | None = None
    reads: tuple[str, ...] = ()
    width: str | None = None
    spec: str | None = None
    text: bool = False
    items: bool = False
    pieces: bool = False


FREE = Charge()
#: a string method that builds a new string from its receiver
BUILDS = Charge(text=True)
#: a string method that reads its receiver (and answers a number or a bool)
READS = Charge(reads=("recv",))
#: a string method that searches its receiver for its argument ``s``
SEARCHES = Charge(reads=("recv", "s"))

#: the numbers of a format spec: a width or a precision (a digit used as fill is one digit)
_SPEC_NUMBERS = re.compile(r"[0-9]+")


def spec_too_wide(spec: str) -> str | None:
    """The width or precision of a format spec over :data:`MAX_STRING` (as it is written,
    shortened when very long), if there is one."""
    for number in _SPEC_NUMBERS.findall(spec):
        if len(number) > 7 or int(number) > MAX_STRING:
            return f"{int(number):,}" if len(number) <= 12 else f"a {len(number):,}-digit number"
    return None


def format_too_wide(fmt: str) -> str | None:
    """The widest field spec of a ``str.format`` template over :data:`MAX_STRING`, if any."""
    try:
        specs = [spec for _, name, spec, _ in string.Formatter().parse(fmt)
                 if name is not None and spec]
    except ValueError:
        return None  # not a valid template: reported as such
    return next((w for w in map(spec_too_wide, specs) if w is not None), None)


#: the largest constant :func:`constant_int` computes (a bigger one is not judged)
_CONSTANT_BITS = 256


def constant_int(node: n.Node | None) -> int | None:
    """The value of an int expression made of literals (``10 ** 9``, ``-1``), or None."""
    if isinstance(node, n.IntLit):
        return node.value
    if isinstance(node, n.Unary):
        inner = constant_int(node.operand)
        return None if inner is None else -inner
    if not isinstance(node, n.Binary):
        return None
    left, right = constant_int(node.left), constant_int(node.right)
    if left is None or right is None:
        return None
    if node.op == "**":
        if right < 0 or (abs(left) > 1 and right * abs(left).bit_length() > _CONSTANT_BITS):
            return None
        value: int = left ** right
    elif node.op in _CONSTANT_OPS and (right != 0 or node.op in ("+", "-", "*")):
        value = _CONSTANT_OPS[node.op](left, right)
    else:
        return None
    return value if value.bit_length() <= _CONSTANT_BITS else None


_CONSTANT_OPS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "//": lambda a, b: a // b, "%": lambda a, b: a % b,
}


def _too_long(ty: Typer, node: n.Node | None, what: str) -> None:
    """WS412 when ``node`` is a constant string length over :data:`MAX_STRING`."""
    value = constant_int(node)
    if node is not None and value is not None and value > MAX_STRING:
        ty.report("WS412", node, f"{what} builds a string of {value:,} characters; a call "
                  f"may build at most {MAX_STRING:,}")


@dataclass(frozen=True)
class Builtin:
    """A builtin function: parameter names (``?`` marks optional), a typing rule, how it is
    emitted and what it charges."""

    params: tuple[str, ...]
    handler: Handler
    doc: str
    emit: str
    lambdas: frozenset[str] = frozenset()
    charge: Charge = FREE


def _arg(ty: Typer, bound: Bound, name: str, expected: t.Type | None = None) -> t.Type:
    arg = bound.get(name)
    if arg is None:
        return t.UNKNOWN
    if isinstance(arg.value, n.Lambda):
        return t.UNKNOWN  # reported by _bind
    return ty.expr(arg.value, expected)


def _want(ty: Typer, node: n.Node | None, typ: t.Type, ok: Callable[[t.Type], bool],
          what: str, fn: str) -> bool:
    if node is None or t.is_unknown(typ) or ok(typ):
        return True
    ty.report("WS301", node, f"{fn}: expected {what}, found {t.show(typ)}")
    return False


def _node(bound: Bound, name: str) -> n.Node | None:
    arg = bound.get(name)
    return arg.value if arg is not None else None


def _sized(typ: t.Type) -> bool:
    return typ == t.STR or isinstance(typ, (t.ListOf, t.SetOf, t.MapOf, t.Table, t.EmptyList,
                                            t.EmptyMap)) or typ == t.JSON


def _collection(typ: t.Type) -> bool:
    return isinstance(typ, (t.ListOf, t.SetOf, t.MapOf, t.Table, t.EmptyList, t.EmptyMap))


def _len(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    x = _arg(ty, b, "x")
    _want(ty, _node(b, "x"), x, _sized, "a string or a collection", "len")
    return t.INT


def _range(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    for name in ("a", "b"):
        if b.get(name) is not None:
            _want(ty, _node(b, name), _arg(ty, b, name), lambda y: y == t.INT, "int", "range")
    low, high = (0, constant_int(_node(b, "a"))) if b.get("b") is None else (
        constant_int(_node(b, "a")), constant_int(_node(b, "b")))
    if low is not None and high is not None and high - low > MAX_RANGE:
        ty.report("WS413", call, f"this range has {high - low:,} elements; range may build at "
                  f"most {MAX_RANGE:,}")
    return t.ListOf(t.INT)


def _count(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    x = _arg(ty, b, "xs")
    _want(ty, _node(b, "xs"), x, _collection, "a collection", "count")
    return t.INT


def _sum(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    xs = _arg(ty, b, "xs")
    if isinstance(xs, (t.ListOf, t.SetOf)) and t.is_numeric(xs.element):
        return xs.element
    if isinstance(xs, t.EmptyList):
        return t.INT
    _want(ty, _node(b, "xs"), xs, lambda _: False, "a list of numbers", "sum")
    return t.UNKNOWN


def _key_fn(ty: Typer, b: Bound, elem: t.Type) -> None:
    arg = b.get("key")
    if arg is None:
        return
    if not isinstance(arg.value, n.Lambda):
        ty.report("WS301", arg.value, "key: expected a lambda such as `x => x.created_at`")
        return
    lam = arg.value
    key_type = ty._bind_and(lam.param, elem, "lambda", lambda: ty.expr(lam.body))
    ty.record(lam, key_type)
    base = t.strip_optional(key_type)
    if not (t.is_unknown(base) or t.is_numeric(base) or (
            isinstance(base, t.Prim) and base.name in ("str", "date", "datetime", "duration",
                                                      "bool"))
            or (isinstance(base, t.Named) and base.kind == "enum")):
        ty.report("WS304", lam.body, f"cannot sort by {t.show(key_type)}")


def _min_max(name: str) -> Handler:
    def handler(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
        first = _arg(ty, b, "a")
        if b.get("b") is not None:
            second = _arg(ty, b, "b", first)
            joined = t.join_types(first, second)
            if joined is None or not (t.is_numeric(joined) or joined in (t.STR, t.DATE,
                                                                         t.DATETIME, t.DURATION)
                                      or t.is_unknown(joined)):
                ty.report("WS304", call, f"{name} of {t.show(first)} and {t.show(second)}")
                return t.UNKNOWN
            return joined
        if isinstance(first, (t.ListOf, t.SetOf)):
            _key_fn(ty, b, first.element)
            return first.element
        if isinstance(first, t.Table):
            elem: t.Type = t.Named("entity", first.entity)
            _key_fn(ty, b, elem)
            return elem
        _want(ty, _node(b, "a"), first, lambda _: False, "a list, or two values", name)
        return t.UNKNOWN

    return handler


def _sorted(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    xs = _arg(ty, b, "xs")
    _arg(ty, b, "reverse", t.BOOL) if b.get("reverse") else None
    rev = b.get("reverse")
    if rev is not None:
        _want(ty, rev.value, ty.program.type_of(rev.value) or t.UNKNOWN,
              lambda x: x == t.BOOL, "bool", "sorted reverse")
    elem: t.Type
    if isinstance(xs, (t.ListOf, t.SetOf)):
        elem = xs.element
    elif isinstance(xs, t.Table):
        elem = t.Named("entity", xs.entity)
    elif isinstance(xs, t.MapOf):
        elem = xs.key
    else:
        _want(ty, _node(b, "xs"), xs, lambda _: False, "a list, set, map or table", "sorted")
        return t.UNKNOWN
    if b.get("key") is None:
        base = t.strip_optional(elem)
        if not (t.is_numeric(base) or base in (t.STR, t.DATE, t.DATETIME, t.DURATION)
                or t.is_unknown(base) or (isinstance(base, t.Named) and base.kind == "enum")):
            ty.report("WS304", call, f"cannot sort {t.show(elem)} values without a key",
                      hints=["add key: x => x.some_field"])
    _key_fn(ty, b, elem)
    return t.ListOf(elem)


def _round(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    x = _arg(ty, b, "x")
    _want(ty, _node(b, "x"), x, t.is_numeric, "a number", "round")
    if b.get("digits") is not None:
        d = _arg(ty, b, "digits")
        _want(ty, _node(b, "digits"), d, lambda y: y == t.INT, "int", "round digits")
        return t.FLOAT if x == t.FLOAT else x if t.is_numeric(x) else t.UNKNOWN
    return t.INT


def _abs(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    x = _arg(ty, b, "x")
    if _want(ty, _node(b, "x"), x, lambda y: t.is_numeric(y) or y == t.DURATION, "a number",
             "abs"):
        return x
    return t.UNKNOWN


def _conversion(target: t.Type, accepts: Callable[[t.Type], bool], what: str) -> Handler:
    def handler(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
        x = _arg(ty, b, "x")
        _want(ty, _node(b, "x"), x, accepts, what, t.show(target))
        return target

    return handler


def _scalar(x: t.Type) -> bool:
    return isinstance(t.strip_optional(x), (t.Prim, t.Named)) or isinstance(x, t.Optional)


def _to_list(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    xs = _arg(ty, b, "xs")
    if isinstance(xs, (t.ListOf, t.SetOf)):
        return t.ListOf(xs.element)
    if isinstance(xs, t.MapOf):
        return t.ListOf(xs.key)
    if isinstance(xs, t.Table):
        return t.ListOf(t.Named("entity", xs.entity))
    if xs == t.STR:  # its characters, as Python's list("abc")
        return t.ListOf(t.STR)
    _want(ty, _node(b, "xs"), xs, lambda _: False, "a collection or text", "list")
    return t.UNKNOWN


def _to_set(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    xs = _arg(ty, b, "xs", exp.element if isinstance(exp, t.SetOf) else None)
    if isinstance(xs, (t.ListOf, t.SetOf)):
        return t.SetOf(xs.element)
    if isinstance(xs, t.EmptyList):
        return exp if isinstance(exp, t.SetOf) else t.EmptyList()
    _want(ty, _node(b, "xs"), xs, lambda _: False, "a list or a set", "set")
    return t.UNKNOWN


def _format(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    _arg(ty, b, "x")
    spec = _arg(ty, b, "spec")
    _want(ty, _node(b, "spec"), spec, lambda y: y == t.STR, "str", "format spec")
    node = _node(b, "spec")
    if isinstance(node, n.StrLit):
        report_wide_spec(ty, node, node.value)
    return t.STR


def report_wide_spec(ty: Typer, node: n.Node, spec: str) -> None:
    """WS410 when a literal format spec asks for a width or precision over the limit."""
    wide = spec_too_wide(spec)
    if wide is not None:
        ty.report("WS410", node, f"format spec '{spec}' asks for {wide} characters; a call may "
                  f"build strings of at most {MAX_STRING:,}")


def _next(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    seq = _arg(ty, b, "seq")
    _want(ty, _node(b, "seq"), seq, lambda y: isinstance(y, t.Sequence), "a sequence", "next")
    _draw(ty, call, "next()")
    return t.STR


def _draw(ty: Typer, call: n.Call, what: str) -> None:
    ty.changes_state = True
    if ty.attempting:
        ty.report("WS324", call, f"{what} draws from the episode's generators inside "
                  "attempt() or error_of(); a failure there would have to undo the draw",
                  hints=["draw first, into a local: let n = random_int(1, 6), then "
                         "attempt(...) of what uses it"])
    if not ty.context.may_draw:
        where = {"fn": "a helper fn", "invariant": "an invariant", "check": "a check",
                 "load": "on load (loading is deterministic)"}.get(
            ty.context.where, ty.context.where)
        code = "WS505" if ty.context.where in ("invariant", "check") else "WS403"
        ty.report(code, call, f"{what} draws from the episode's generators, which {where} "
                  "may not do")


def _parse_time(target: t.Type) -> Handler:
    def handler(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
        text = _arg(ty, b, "text")
        _want(ty, _node(b, "text"), text, lambda y: y == t.STR, "an ISO string", t.show(target))
        node = _node(b, "text")
        if isinstance(node, n.StrLit):
            from worldspec.compiler.data_check import date_text_problem, datetime_text_problem

            problem = (date_text_problem if target == t.DATE else datetime_text_problem)(
                node.value)
            if problem is not None:
                ty.report("WS301", node, f"'{node.value}' {problem}")
        return target

    return handler


def strptime_format_problem(fmt: str) -> str | None:
    """Why Python's ``strptime`` refuses a format itself (a bad directive), or None."""
    import datetime as dt

    try:
        dt.datetime.strptime("", fmt)
    except ValueError as exc:
        text = str(exc)
        if "directive" in text or "stray %" in text:
            return text
    return None


def _strptime(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    for name in ("text", "format"):
        node = _node(b, name)
        ty.expect(node or call, t.STR, _arg(ty, b, name, t.STR), f"argument '{name}' of "
                  "strptime()")
    node = _node(b, "format")
    if isinstance(node, n.StrLit):
        problem = strptime_format_problem(node.value)
        if problem is not None:
            ty.report("WS321", node, f"strptime format '{node.value}': {problem}")
        elif "%z" in node.value or "%Z" in node.value:
            ty.report("WS321", node, f"strptime format '{node.value}' reads a UTC offset or "
                      "time zone; datetimes are naive (the world's local time)")
    return t.DATETIME


def _arithmetic(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    node = _node(b, "text")
    ty.expect(node or call, t.STR, _arg(ty, b, "text", t.STR), "argument 'text' of "
              "arithmetic()")
    return t.NUMBER


def _duration(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    x = _arg(ty, b, "n")
    _want(ty, _node(b, "n"), x, t.is_numeric, "a number", "duration")
    return t.DURATION


def _random_int(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    for name in ("lo", "hi"):
        _want(ty, _node(b, name), _arg(ty, b, name), lambda y: y == t.INT, "int", "random_int")
    _draw(ty, call, "random_int()")
    return t.INT


def _random_float(name: str, params: tuple[str, ...]) -> Handler:
    def handler(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
        for param in params:
            _want(ty, _node(b, param), _arg(ty, b, param, t.FLOAT), t.is_numeric, "a number",
                  name)
        _draw(ty, call, f"{name}()")
        return t.FLOAT

    return handler


def _random_choice(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    xs = _arg(ty, b, "xs")
    _draw(ty, call, "random_choice()")
    if isinstance(xs, (t.ListOf, t.SetOf)):
        return xs.element
    _want(ty, _node(b, "xs"), xs, lambda _: False, "a list", "random_choice")
    return t.UNKNOWN


def _random_digits(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    _want(ty, _node(b, "n"), _arg(ty, b, "n"), lambda y: y == t.INT, "int", "random_digits")
    _too_long(ty, _node(b, "n"), "random_digits()")
    _draw(ty, call, "random_digits()")
    return t.STR


def _to_json(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    x = _arg(ty, b, "x")
    _want(ty, _node(b, "x"), x, lambda y: t.assignable(t.JSON, y), "a value", "to_json")
    return t.JSON


def _from_json(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    x = _arg(ty, b, "value", t.JSON)
    ty.expect(_node(b, "value") or call, t.JSON, x, "argument 'value' of from_json()")
    if exp is None or t.is_unknown(exp):
        ty.report("WS320", call, "from_json() takes its type from where the value goes",
                  hints=["declare it: let prices: map[str, float] = from_json(j)"])
        return t.UNKNOWN
    if _holds(exp, lambda y: isinstance(y, (t.Table, t.Sequence)) or (
            isinstance(y, t.Named) and y.kind == "entity")) and not _entity_row(exp):
        ty.report("WS320", call, f"from_json() cannot build {t.show(exp)}",
                  hints=["convert to the key type and look the row up"])
        return t.UNKNOWN
    if _entity_row(exp):
        ty.report("WS320", call, f"from_json() cannot build a row ({t.show(exp)}): rows live "
                  "in tables", hints=["convert to the key type and look the row up"])
        return t.UNKNOWN
    return exp


def _entity_row(typ: t.Type) -> bool:
    typ = t.strip_optional(typ)
    return isinstance(typ, t.Named) and typ.kind == "entity"


def _holds(typ: t.Type, bad: Callable[[t.Type], bool]) -> bool:
    """Whether ``typ`` or a type inside it (element, key, value) is ``bad``."""
    typ = t.strip_optional(typ)
    if bad(typ):
        return True
    if isinstance(typ, (t.ListOf, t.SetOf)):
        return _holds(typ.element, bad)
    if isinstance(typ, t.MapOf):
        return _holds(typ.key, bad) or _holds(typ.value, bad)
    return False


def _type_name(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    x = _arg(ty, b, "x")
    _want(ty, _node(b, "x"), x, lambda y: t.strip_optional(y) in (
        t.JSON, t.NUMBER, t.INT, t.FLOAT, t.STR, t.BOOL) or isinstance(y, t.NoneType),
        "json, a number, text or a bool", "type_name")
    return t.STR


def _plain(typ: t.Type) -> bool:
    """Whether ``typ`` holds Python's plain values only (what ``repr`` prints as Python
    does): text, numbers, bools, none, json, and lists and maps of them."""
    typ = t.strip_optional(typ)
    if isinstance(typ, (t.NoneType, t.Unknown, t.EmptyList, t.EmptyMap)):
        return True
    if isinstance(typ, t.Prim):
        return typ.name in ("str", "int", "float", "number", "bool", "json")
    if isinstance(typ, t.ListOf):
        return _plain(typ.element)
    if isinstance(typ, t.MapOf):
        return _plain(typ.key) and _plain(typ.value)
    return False


def _repr(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    x = _arg(ty, b, "x")
    _want(ty, _node(b, "x"), x, _plain, "text, a number, a bool, none, json, or a list or "
          "map of them", "repr")
    return t.STR


def _given(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    node = _node(b, "p")
    tool = ty.world.tools.get(ty.context.tool_name or "") if ty.context.where == "tool" \
        else None
    param = None
    if isinstance(node, n.NameRef) and tool is not None:
        local = ty.scope.lookup(node.name)
        if local is not None and local.kind == "param":  # not a local that hides it
            param = next((p for p in tool.params if p.name == node.name), None)
    if node is not None:
        ty.expr(node)
    if tool is None:
        ty.report("WS322", call, "given(p) asks whether a tool's caller sent an argument; it "
                  "exists only in tool bodies")
    elif param is None:
        ty.report("WS322", node or call, "given() takes a parameter of this tool by name",
                  hints=did_you_mean(node.name, [p.name for p in tool.params])
                  if isinstance(node, n.NameRef) else [])
    elif param.default is None and not isinstance(param.type, t.Optional):
        ty.report("WS322", node or call, f"'{param.name}' is required, so it is always given",
                  hints=["give it a default or make it optional: p: str? = none"])
    else:
        ty.program.uses_given.add((ty.world.name, tool.name))
    return t.BOOL


def _attempted(ty: Typer, b: Bound, exp: t.Type | None) -> t.Type:
    """The operand of attempt()/error_of(), typed with draws refused (WS324)."""
    ty.attempting += 1
    try:
        return _arg(ty, b, "x", exp)
    finally:
        ty.attempting -= 1


def _attempt(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    inner = _attempted(ty, b, t.strip_optional(exp) if exp is not None else None)
    if isinstance(inner, t.NoneType):
        ty.report("WS324", _node(b, "x") or call, "attempt() of none is always none",
                  hints=["attempt(e) is e's value, or none when evaluating e fails"])
    return t.make_optional(inner)


def _error_of(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    _attempted(ty, b, None)
    return t.Optional(t.STR)


def _matches_solution(ty: Typer, call: n.Call, b: Bound, exp: t.Type | None) -> t.Type:
    if ty.context.where != "check":
        ty.report("WS211", call, "matches_solution() (the state the reference solution leaves) "
                  "exists only in task checks")
    return t.BOOL


_KEY = frozenset({"key"})

BUILTIN_FUNCTIONS: dict[str, Builtin] = {
    "len": Builtin(("x",), _len, "length of a string or collection", "@len"),
    "count": Builtin(("xs",), _count, "number of elements of a collection", "@count"),
    "range": Builtin(("a", "b?"), _range, "range(n) is 0..n-1, range(a, b) is a..b-1", "@range",
                     charge=Charge(items=True)),
    "sum": Builtin(("xs",), _sum, "sum of a list of numbers", "sum({xs})",
                   charge=Charge(steps="xs")),
    "min": Builtin(("a", "b?", "key?"), _min_max("min"), "smallest element", "@min", _KEY,
                   Charge(steps="a")),
    "max": Builtin(("a", "b?", "key?"), _min_max("max"), "largest element", "@max", _KEY,
                   Charge(steps="a")),
    "sorted": Builtin(("xs", "key?", "reverse?"), _sorted, "sorted list", "@sorted", _KEY,
                      Charge(steps="xs")),
    "round": Builtin(("x", "digits?"), _round, "Python round (half to even)", "@round"),
    "abs": Builtin(("x",), _abs, "absolute value", "abs({x})"),
    "str": Builtin(("x",), _conversion(t.STR, _scalar, "a scalar"), "text of a value",
                   "rt.text({x})", charge=Charge(text=True)),
    "int": Builtin(("x",), _conversion(
        t.INT, lambda y: t.is_numeric(y) or y in (t.STR, t.BOOL), "a number or text"),
        "convert to int", "rt.to_int({x})", charge=Charge(reads=("x",))),
    "float": Builtin(("x",), _conversion(
        t.FLOAT, lambda y: t.is_numeric(y) or y == t.STR, "a number or text"),
        "convert to float", "@float", charge=Charge(reads=("x",))),
    "number": Builtin(("x",), _conversion(
        t.NUMBER, lambda y: t.is_numeric(y) or y in (t.STR, t.JSON), "a number, text or json"),
        "Python's int or float: an int stays an int, a float a float; text is read as int() "
        "reads it, else as float() does", "rt.to_number({x})", charge=Charge(reads=("x",))),
    "to_json": Builtin(("x",), _to_json, "a value as plain JSON: a row or record as an "
                       "object of its fields, dates as ISO text", "v.export_value({x})",
                       charge=Charge(steps="x")),
    "from_json": Builtin(("value",), _from_json, "a json value as the type expected where it "
                         "goes, checked as data is (fails the call when it does not fit)",
                         "@from_json", charge=Charge(steps="value")),
    "repr": Builtin(("x",), _repr, "Python's repr(): text quoted as Python quotes it, "
                    "lists and maps as Python prints them", "rt.python_repr({x})",
                    charge=Charge(steps="x", text=True)),
    "type_name": Builtin(("x",), _type_name, "Python's name of a value's type: int, float, "
                         "str, bool, list, dict, NoneType", "rt.python_type({x})"),
    "list": Builtin(("xs",), _to_list, "a list of the elements", "@list",
                    charge=Charge(steps="xs")),
    "set": Builtin(("xs",), _to_set, "a set of the elements", "v.unique(tuple({xs}))",
                   charge=Charge(steps="xs")),
    "format": Builtin(("x", "spec"), _format, "Python format()", "format({x}, {spec})",
                      charge=Charge(spec="spec", reads=("spec",), text=True)),
    "next": Builtin(("seq",), _next, "the next id of a sequence", "@next",
                    charge=Charge(text=True)),
    "date": Builtin(("text",), _parse_time(t.DATE), "parse an ISO date",
                    "rt.parse_date({text})", charge=Charge(reads=("text",))),
    "datetime": Builtin(("text",), _parse_time(t.DATETIME), "parse an ISO datetime",
                        "rt.parse_datetime({text})", charge=Charge(reads=("text",))),
    "strptime": Builtin(("text", "format"), _strptime, "Python's datetime.strptime: text "
                        "read with an explicit format; fails with Python's message",
                        "rt.strptime({text}, {format})",
                        charge=Charge(reads=("text", "format"))),
    "arithmetic": Builtin(("text",), _arithmetic, "Python's arithmetic: the expression "
                          "text evaluated as Python's eval() would (numbers, tuples, "
                          "+ - * / // % **, unary + - ~), an int or a float; fails the call "
                          "with Python's error text", "rt.arithmetic({ep}, {text})"),
    "days": Builtin(("n",), _duration, "a duration in days", "dt.timedelta(days={n})"),
    "hours": Builtin(("n",), _duration, "a duration in hours", "dt.timedelta(hours={n})"),
    "minutes": Builtin(("n",), _duration, "a duration in minutes",
                       "dt.timedelta(minutes={n})"),
    "seconds": Builtin(("n",), _duration, "a duration in seconds",
                       "dt.timedelta(seconds={n})"),
    "random_int": Builtin(("lo", "hi"), _random_int, "seeded random int, inclusive",
                          "{ep}.random_source().randint({lo}, {hi})"),
    "random_float": Builtin((), _random_float("random_float", ()), "seeded float in "
                            "[0, 1): Python's random.Random(seed).random()",
                            "{ep}.random_source().random()"),
    "random_uniform": Builtin(("a", "b"), _random_float("random_uniform", ("a", "b")),
                              "seeded float between a and b: Python's Random.uniform(a, b)",
                              "{ep}.random_source().uniform({a}, {b})"),
    "random_gauss": Builtin(("mu", "sigma"), _random_float("random_gauss", ("mu", "sigma")),
                            "seeded normal draw: Python's Random.gauss(mu, sigma)",
                            "{ep}.random_source().gauss({mu}, {sigma})"),
    "random_choice": Builtin(("xs",), _random_choice, "seeded random element",
                             "@random_choice"),
    "random_digits": Builtin(("n",), _random_digits, "seeded random decimal digits",
                             "rt.random_digits({ep}.random_source(), {n})",
                             charge=Charge(width="n", text=True)),
    "attempt": Builtin(("x",), _attempt, "the value of x, or none when evaluating x fails "
                       "(Python's try/except: int(s), strptime, a require or fail in a fn); "
                       "the call's guards (steps, sizes, nesting) are not caught",
                       "rt.attempt(lambda: {x})"),
    "error_of": Builtin(("x",), _error_of, "the text x fails with (what the call would fail "
                        "with, Python's exception text for int(), strptime...), or none when "
                        "it does not fail; the call's guards are not caught",
                        "rt.error_of(lambda: {x})"),
    "given": Builtin(("p",), _given, "in a tool: whether the caller sent the optional "
                     "parameter p (even as null), as opposed to leaving it out", "@given"),
    "matches_solution": Builtin((), _matches_solution, "in a check: the whole state equals "
                                "the state the task's reference solution leaves",
                                "@matches_solution"),
}

#: Builtins that draw from the episode's generators.
DRAWS = frozenset({"next", "random_int", "random_choice", "random_digits", "random_float",
                   "random_uniform", "random_gauss"})

#: Builtin values usable as bare names.
BUILTIN_VALUES = frozenset({"now", "initial", "true", "false", "none"})

#: The conversation as task checks read it (``reply``, ``replies``): name -> (type, what it
#: is). Only checks see it; a tool or helper may still be called like it.
CONVERSATION: dict[str, tuple[t.Type, str]] = {
    "reply": (t.STR, "the agent's last message to the user"),
    "replies": (t.ListOf(t.STR), "every message of the agent to the user, in order"),
}

BUILTIN_NAMES = frozenset(BUILTIN_FUNCTIONS) | BUILTIN_VALUES


def _bind(ty: Typer, call: n.Call, name: str, params: tuple[str, ...],
          lambdas: frozenset[str]) -> Bound | None:
    """Match call arguments to parameter names; report arity problems (WS303)."""
    names = [p.rstrip("?") for p in params]
    required = [p for p in params if not p.endswith("?")]
    bound: Bound = {p: None for p in names}
    position = 0
    ok = True
    for arg in call.args:
        if isinstance(arg.value, n.Lambda) and not (
                "key" in lambdas and (arg.name is None or arg.name.name == "key")):
            ty.report("WS311", arg.value, f"{name}() does not take a lambda" + (
                "; only sorted, min and max take `key: x => ...`" if not lambdas else
                f" for '{arg.name.name}'" if arg.name is not None else ""))
            ok = False
            continue
        if arg.name is None:
            if isinstance(arg.value, n.Lambda) and "key" in lambdas and bound.get("key") is None:
                bound["key"] = arg
                continue
            while position < len(names) and (names[position] in lambdas or
                                             bound[names[position]] is not None):
                position += 1
            if position >= len(names):
                ty.report("WS303", arg, f"{name}() takes at most {len(names)} argument"
                          f"{'s' if len(names) != 1 else ''}")
                ok = False
                continue
            bound[names[position]] = arg
            position += 1
        else:
            if arg.name.name not in bound:
                ty.report("WS303", arg.name, f"{name}() has no parameter '{arg.name.name}'",
                          hints=did_you_mean(arg.name.name, names))
                ok = False
            elif bound[arg.name.name] is not None:
                ty.report("WS204", arg.name, f"argument '{arg.name.name}' is given twice")
                ok = False
            else:
                bound[arg.name.name] = arg
    for p in required:
        if bound[p] is None and ok:
            ty.report("WS303", call, f"{name}() is missing its argument '{p}'")
            ok = False
    if not ok:
        for arg in call.args:
            if not isinstance(arg.value, n.Lambda):
                ty.expr(arg.value)
        return None
    return bound


#: how a diagnostic names each kind of local
_LOCAL_WORDS = {"local": "local", "param": "parameter", "loop": "loop variable",
                "binding": "binding", "lambda": "parameter", "quantifier": "variable"}


def call_type(ty: Typer, call: n.Call, expected: t.Type | None) -> t.Type:
    """Type a call: builtin, helper fn, record constructor or method."""
    func = call.func
    if isinstance(func, n.Attribute):
        return _method_call(ty, call, func, expected)
    if not isinstance(func, n.NameRef):
        ty.expr(func)
        ty.report("WS206", func, "only named functions and methods can be called")
        return t.UNKNOWN
    name = func.name
    world = ty.world
    local = ty.scope.lookup(name)
    if local is not None or name in world.state:
        ty.expr(func)
        hidden = ("builtin function" if name in BUILTIN_FUNCTIONS else "function"
                  if name in world.fns else "record" if name in world.records else None)
        if hidden is None:
            ty.report("WS206", func, f"'{name}' is a value, not a function")
            return t.UNKNOWN
        what = "state item" if local is None else _LOCAL_WORDS[local.kind]
        related = [] if local is None else [Related(local.node.span, f"the {what} '{name}'")]
        ty.report("WS206", func, f"the {what} '{name}' hides the {hidden} {name}()",
                  hints=[f"rename the {what} (say '{name}_'), then {name}() is the "
                         f"{hidden} again"], related=related)
        return t.UNKNOWN
    if name in world.fns:
        return _fn_call(ty, call, name)
    if name in world.records:
        return _construct(ty, call, name)
    if name in world.unions:
        variants = ", ".join(world.unions[name].variants.values())
        ty.report("WS206", func, f"a union is built from one of its variants: {variants}")
        return t.UNKNOWN
    builtin = BUILTIN_FUNCTIONS.get(name)
    if builtin is None:
        candidates = [*BUILTIN_FUNCTIONS, *world.fns, *world.records]
        ty.report("WS206", func, f"unknown function '{name}'", hints=did_you_mean(name, candidates))
        for arg in call.args:
            if not isinstance(arg.value, n.Lambda):
                ty.expr(arg.value)
        return t.UNKNOWN
    from worldspec.compiler.model import Resolution

    ty.program.resolutions[id(func)] = Resolution("builtin", name)
    bound = _bind(ty, call, name, builtin.params, builtin.lambdas)
    if bound is None:
        return t.UNKNOWN
    for pname in list(bound):
        given = bound[pname]
        if given is not None and isinstance(given.value, n.Lambda) and \
                pname not in builtin.lambdas:
            ty.report("WS311", given.value, f"{name}() does not take a lambda")
            bound[pname] = None
    return builtin.handler(ty, call, bound, expected)


def _fn_call(ty: Typer, call: n.Call, name: str) -> t.Type:
    from worldspec.compiler.model import Resolution

    info = ty.world.fns[name]
    ty.program.resolutions[id(call.func)] = Resolution("fn", name)
    params = tuple(p.name + ("?" if p.default is not None else "") for p in info.params)
    bound = _bind(ty, call, name, params, frozenset())
    if bound is None:
        return info.returns or t.UNKNOWN
    for p in info.params:
        arg = bound.get(p.name)
        if arg is None:
            continue
        value = _arg(ty, bound, p.name, p.type)
        ty.expect(arg.value, p.type, value, f"argument '{p.name}' of {name}()")
    return info.returns or t.UNKNOWN


def _construct(ty: Typer, call: n.Call, name: str) -> t.Type:
    from worldspec.compiler.model import Resolution

    info = ty.world.records[name]
    ty.program.resolutions[id(call.func)] = Resolution("record", name)
    seen: set[str] = set()
    positional = False
    for arg in call.args:
        if arg.name is None:
            positional = True
            ty.report("WS303", arg, f"{name}(...) takes named arguments: "
                      f"{name}({next(iter(info.fields), 'field')}: ...)")
            if not isinstance(arg.value, n.Lambda):
                ty.expr(arg.value)
            continue
        fname = arg.name.name
        f = info.fields.get(fname)
        if f is None:
            ty.report("WS303", arg.name, f"{name} has no field '{fname}'",
                      hints=did_you_mean(fname, info.fields))
            if not isinstance(arg.value, n.Lambda):
                ty.expr(arg.value)
            continue
        if fname in seen:
            ty.report("WS204", arg.name, f"field '{fname}' is given twice")
        seen.add(fname)
        if isinstance(arg.value, n.Lambda):
            ty.report("WS311", arg.value, "a field value cannot be a lambda")
            continue
        value = ty.expr(arg.value, f.type)
        ty.expect(arg.value, f.type, value, f"field '{fname}' of {name}")
    missing = [f.name for f in info.fields.values()
               if f.name not in seen and f.default is None and not isinstance(f.type, t.Optional)]
    if missing and not positional:
        ty.report("WS303", call, f"{name}(...) is missing {', '.join(repr(m) for m in missing)}")
    return t.Named(info.kind, name)


@dataclass(frozen=True)
class Method:
    """A method on a receiver type: parameters, result type, how it is emitted (a template
    over ``{recv}`` and the parameters) and what it charges."""

    params: tuple[str, ...]
    result: Callable[[Typer, t.Type, Bound], t.Type]
    emit: str
    charge: Charge = FREE


def _str_arg(name: str) -> Callable[[Typer, t.Type, Bound], t.Type]:
    def check(ty: Typer, recv: t.Type, b: Bound) -> t.Type:
        for pname, arg in b.items():
            if arg is None:
                continue
            want = t.INT if pname in ("n", "maxsplit") else t.ListOf(t.STR) if pname == "xs" \
                else t.STR
            value = _arg(ty, b, pname, want)
            ty.expect(arg.value, want, value, f"argument '{pname}' of {name}()")
        if name == "zfill":
            _too_long(ty, _node(b, "n"), "zfill()")
        return _STR_RESULTS.get(name, t.STR)

    return check


def _elem_arg(result: Callable[[t.Type], t.Type], key: bool = False
              ) -> Callable[[Typer, t.Type, Bound], t.Type]:
    def check(ty: Typer, recv: t.Type, b: Bound) -> t.Type:
        elem: t.Type = t.UNKNOWN
        if isinstance(recv, (t.ListOf, t.SetOf)):
            elem = recv.element
        elif isinstance(recv, t.MapOf):
            elem = recv.key
        elif isinstance(recv, t.Table):
            elem = ty.entity_key_type(recv.entity)
        for pname, arg in b.items():
            if arg is not None:
                value = _arg(ty, b, pname, elem)
                if not (ty.assignable(elem, value) or ty._entity_key_match(elem, value)):
                    ty.report("WS301", arg.value, f"expected {t.show(elem)}, found "
                              f"{t.show(value)}")
        return result(recv)

    return check


def _map_get(ty: Typer, recv: t.Type, b: Bound) -> t.Type:
    _elem_arg(lambda r: r)(ty, recv, b)
    if isinstance(recv, t.MapOf):
        return t.make_optional(recv.value)
    if isinstance(recv, t.Table):
        return t.Optional(t.Named("entity", recv.entity))
    return t.UNKNOWN


#: str methods whose result is not a str
_STR_RESULTS: dict[str, t.Type] = {
    "contains": t.BOOL, "startswith": t.BOOL, "endswith": t.BOOL, "split": t.ListOf(t.STR),
    "splitlines": t.ListOf(t.STR), "isdigit": t.BOOL, "isalpha": t.BOOL, "isalnum": t.BOOL,
    "isspace": t.BOOL, "islower": t.BOOL, "isupper": t.BOOL, "isdecimal": t.BOOL,
    "find": t.INT, "rfind": t.INT, "count": t.INT, "byte_length": t.INT,
}

#: str method -> (parameters, template, charge); all are Python's ``str`` methods of the
#: same name and arguments (``contains`` is ``in``, ``byte_length`` is the UTF-8 length)
_STR: dict[str, tuple[tuple[str, ...], str, Charge]] = {
    "lower": ((), "{recv}.lower()", BUILDS),
    "upper": ((), "{recv}.upper()", BUILDS),
    "title": ((), "{recv}.title()", BUILDS),
    "capitalize": ((), "{recv}.capitalize()", BUILDS),
    "strip": (("chars?",), "@strip", Charge(reads=("chars",), text=True)),
    "lstrip": (("chars?",), "@lstrip", Charge(reads=("chars",), text=True)),
    "rstrip": (("chars?",), "@rstrip", Charge(reads=("chars",), text=True)),
    "contains": (("s",), "({s} in {recv})", SEARCHES),
    # Python compares only as many characters as the prefix (suffix) has
    "startswith": (("s",), "{recv}.startswith({s})", Charge(reads=("s",))),
    "endswith": (("s",), "{recv}.endswith({s})", Charge(reads=("s",))),
    "find": (("s",), "{recv}.find({s})", SEARCHES),
    "rfind": (("s",), "{recv}.rfind({s})", SEARCHES),
    "count": (("s",), "{recv}.count({s})", SEARCHES),
    "isdigit": ((), "{recv}.isdigit()", READS),
    "isdecimal": ((), "{recv}.isdecimal()", READS),
    "isalpha": ((), "{recv}.isalpha()", READS),
    "isalnum": ((), "{recv}.isalnum()", READS),
    "isspace": ((), "{recv}.isspace()", READS),
    "islower": ((), "{recv}.islower()", READS),
    "isupper": ((), "{recv}.isupper()", READS),
    "byte_length": ((), "len({recv}.encode('utf-8'))", READS),
    "split": (("sep?", "maxsplit?"), "@split", Charge(reads=("recv", "sep"), pieces=True)),
    "splitlines": ((), "tuple({recv}.splitlines())", Charge(reads=("recv",), pieces=True)),
    "replace": (("old", "new"), "rt.replace({recv}, {old}, {new})",
                Charge(reads=("recv", "old", "new"), text=True)),
    "zfill": (("n",), "{recv}.zfill({n})", Charge(width="n", text=True)),
    "join": (("xs",), "rt.join({recv}, {xs})", Charge(steps="xs", text=True)),
}
STR_METHODS = {name: Method(params, _str_arg(name), emit, charge)
               for name, (params, emit, charge) in _STR.items()}
LIST_METHODS = {
    "contains": Method(("x",), _elem_arg(lambda r: t.BOOL), "({x} in {recv})",
                       Charge(steps="recv")),
    "index": Method(("x",), _elem_arg(lambda r: t.INT), "{recv}.index({x})",
                    Charge(steps="recv")),
    # Python's list.count: how many elements are `x` or equal to it
    "count": Method(("x",), _elem_arg(lambda r: t.INT), "{recv}.count({x})",
                    Charge(steps="recv")),
}
SET_METHODS = {"contains": Method(("x",), _elem_arg(lambda r: t.BOOL), "({x} in {recv})",
                                  Charge(steps="recv"))}
MAP_METHODS = {
    "get": Method(("k",), _map_get, "{recv}.get({k})"),
    "contains": Method(("k",), _elem_arg(lambda r: t.BOOL), "({k} in {recv})"),
    "keys": Method((), lambda ty, r, b: t.ListOf(r.key) if isinstance(r, t.MapOf) else t.UNKNOWN,
                   "tuple({recv}.keys())", Charge(steps="recv")),
    "values": Method((), lambda ty, r, b: t.ListOf(r.value) if isinstance(r, t.MapOf)
                     else t.UNKNOWN, "tuple({recv}.values())", Charge(steps="recv")),
}
TABLE_METHODS = {
    # the table's dict itself (``Table.get`` is the same lookup behind a Python call)
    "get": Method(("key",), _map_get, "{recv}.rows.get({key})"),
    "keys": Method((), lambda ty, r, b: t.ListOf(ty.entity_key_type(r.entity))
                   if isinstance(r, t.Table) else t.UNKNOWN, "{recv}.keys()",
                   Charge(steps="recv")),
}
def _format_arg(ty: Typer, recv: t.Type, b: Bound) -> t.Type:
    arg = b.get("format")
    if arg is not None:
        ty.expect(arg.value, t.STR, _arg(ty, b, "format", t.STR), "argument 'format'")
        if isinstance(arg.value, n.StrLit):
            report_wide_spec(ty, arg.value, arg.value.value)
    return t.STR


_TIME_METHODS = {
    "strftime": Method(("format",), _format_arg, "{recv}.strftime({format})",
                       Charge(spec="format", text=True)),
    "isoformat": Method((), lambda ty, r, b: t.STR, "{recv}.isoformat()"),
    "weekday": Method((), lambda ty, r, b: t.INT, "{recv}.weekday()"),
    "isoweekday": Method((), lambda ty, r, b: t.INT, "{recv}.isoweekday()"),
}
DATETIME_METHODS = {"date": Method((), lambda ty, r, b: t.DATE, "{recv}.date()"),
                    **_TIME_METHODS}
DATE_METHODS = dict(_TIME_METHODS)
INT_METHODS = {"bit_length": Method((), lambda ty, r, b: t.INT, "{recv}.bit_length()")}
FLOAT_METHODS = {"is_integer": Method((), lambda ty, r, b: t.BOOL, "{recv}.is_integer()")}
DURATION_METHODS = {
    "total_seconds": Method((), lambda ty, r, b: t.FLOAT, "{recv}.total_seconds()"),
}


def _json_key(result: t.Type) -> Callable[[Typer, t.Type, Bound], t.Type]:
    def check(ty: Typer, recv: t.Type, b: Bound) -> t.Type:
        for pname, arg in b.items():
            if arg is not None:
                value = _arg(ty, b, pname, t.JSON)
                ty.expect(arg.value, t.JSON, value, f"argument '{pname}'")
        return result

    return check


JSON_METHODS = {
    "get": Method(("k",), _json_key(t.JSON), "rt.json_get({recv}, {k})"),
    "contains": Method(("x",), _json_key(t.BOOL), "rt.json_contains({recv}, {x})",
                       Charge(steps="recv")),
    "keys": Method((), _json_key(t.ListOf(t.STR)), "rt.json_keys({recv})",
                   Charge(steps="recv")),
    "values": Method((), _json_key(t.ListOf(t.JSON)), "rt.json_values({recv})",
                     Charge(steps="recv")),
}

#: Receiver kind -> method name -> method.
METHODS: dict[str, dict[str, Method]] = {
    "str": STR_METHODS, "list": LIST_METHODS, "set": SET_METHODS, "map": MAP_METHODS,
    "table": TABLE_METHODS, "datetime": DATETIME_METHODS, "json": JSON_METHODS,
    "date": DATE_METHODS, "duration": DURATION_METHODS, "int": INT_METHODS,
    "float": FLOAT_METHODS,
}


def receiver_kind(typ: t.Type) -> str | None:
    if typ == t.STR:
        return "str"
    if typ == t.DATETIME:
        return "datetime"
    if typ == t.JSON:
        return "json"
    if typ == t.DATE:
        return "date"
    if typ == t.DURATION:
        return "duration"
    if typ == t.INT:
        return "int"
    if typ == t.FLOAT:
        return "float"
    if isinstance(typ, t.ListOf):
        return "list"
    if isinstance(typ, t.SetOf):
        return "set"
    if isinstance(typ, t.MapOf):
        return "map"
    if isinstance(typ, t.Table):
        return "table"
    return None


def _method_call(ty: Typer, call: n.Call, func: n.Attribute, expected: t.Type | None) -> t.Type:
    recv = ty.expr(func.obj)
    if isinstance(recv, t.Optional):
        ty.report("WS305", func, f"'{func.name.name}()' is called on a value that may be none "
                  f"({t.show(recv)})")
        recv = recv.inner
    if t.is_unknown(recv):
        for arg in call.args:
            if not isinstance(arg.value, n.Lambda):
                ty.expr(arg.value)
        return t.UNKNOWN
    kind = receiver_kind(recv)
    methods = METHODS.get(kind or "", {})
    method = methods.get(func.name.name)
    if method is None:
        offered = sorted(methods)
        hints = did_you_mean(func.name.name, offered)
        if not hints and offered:
            hints = [f"{t.show(recv)} has: {', '.join(offered)}"]
        ty.report("WS205", func.name, f"{t.show(recv)} has no method '{func.name.name}'",
                  hints=hints)
        for arg in call.args:
            if not isinstance(arg.value, n.Lambda):
                ty.expr(arg.value)
        return t.UNKNOWN
    bound = _bind(ty, call, func.name.name, method.params, frozenset())
    if bound is None:
        return t.UNKNOWN
    return method.result(ty, recv, bound)
