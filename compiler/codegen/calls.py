"""Calls to Python expressions: builtins and methods from their one table
(``compiler.builtins``), helpers, constructors.

A builtin's row says how it is emitted (a template of text, filled with the arguments'
code and kept as :class:`~worldspec.compiler.codegen.pycode.Raw`, or a custom emitter here
that builds the expression, for builtins with several forms) and what it charges;
:class:`Args` applies the charge to the arguments (``rt.each`` on the collection processed,
``rt.read`` on a text read, ``rt.width`` on a string length, ``rt.check_spec`` on a
run-time format spec) and :func:`_charged` to the result (``self.built``, ``rt.each``,
``rt.pieces``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from worldspec.compiler import types as t
from worldspec.compiler.builtins import BUILTIN_FUNCTIONS, METHODS, Charge, receiver_kind
from worldspec.compiler.codegen.names import py_name
from worldspec.compiler.codegen.pycode import (
    Attr,
    Call,
    Compare,
    Comprehension,
    Const,
    Expr,
    Lambda,
    Name,
    Raw,
    call,
    rt,
)
from worldspec.dsl import nodes as n

#: A format width up to this keeps a string short (as for f-strings in ``exprs``).
_SHORT_WIDTH = 64
_NUMBERS = re.compile(r"[0-9]+")

if TYPE_CHECKING:
    from worldspec.compiler.codegen.exprs import Env, ExprCompiler

__all__ = ["compile_call", "CUSTOM_EMITTERS", "Args", "GIVEN_ARGUMENTS"]


def _bind(call: n.Call, params: tuple[str, ...], lambdas: frozenset[str] = frozenset()
          ) -> dict[str, n.Arg]:
    """Arguments by parameter name (the checker has validated them)."""
    names = [p.rstrip("?") for p in params]
    out: dict[str, n.Arg] = {}
    position = 0
    for arg in call.args:
        if arg.name is not None:
            out[arg.name.name] = arg
            continue
        if isinstance(arg.value, n.Lambda) and "key" in lambdas and "key" not in out:
            out["key"] = arg
            continue
        while position < len(names) and (names[position] in out or names[position] in lambdas):
            position += 1
        if position < len(names):
            out[names[position]] = arg
            position += 1
    return out


class Args:
    """The bound arguments of one builtin call, emitted with the builtin's charge applied."""

    def __init__(self, c: ExprCompiler, call: n.Call, bound: dict[str, n.Arg], charge: Charge,
                 env: Env, stored: bool = False) -> None:
        self.c = c
        self.call = call
        self.bound = bound
        self.charge = charge
        self.env = env
        #: method arguments are passed as stored values (entity keys)
        self.stored = stored

        #: the receiver, for a method
        self.recv: Expr = Name("")

    def __contains__(self, name: str) -> bool:
        return name in self.bound

    def node(self, name: str) -> n.Expr:
        value = self.bound[name].value
        assert not isinstance(value, n.Lambda)
        return value

    def value(self, name: str) -> Expr:
        """The argument; a charged collection pays a step per element first."""
        node = self.node(name)
        src = self.c.stored(node, self.env) if self.stored else self.c.value(node, self.env)
        if name == self.charge.steps and _sized(self.c.type_of(node)):
            return self.c.each(src, self.env)
        if name in self.charge.reads and _read(self.c, node):
            src = rt("read", self.env.episode, src)
        if name == self.charge.width:
            return rt("width", src)
        if name == self.charge.spec and not isinstance(node, n.StrLit):
            return rt("check_spec", src)  # a literal spec is judged at check time (WS410)
        return src

    def elements(self, name: str) -> Expr:
        """The values the builtin iterates (rows for entities), charged when it is the
        charged parameter."""
        return self.c.elements(self.node(name), self.env, charge=name == self.charge.steps)

    def key_kw(self) -> dict[str, Expr]:
        arg = self.bound.get("key")
        if arg is None or not isinstance(arg.value, n.Lambda):
            return {}
        return {"key": self.c.lambda_(arg.value, self.env)}


def _sized(typ: t.Type) -> bool:
    """Whether values of ``typ`` are collections (or json values, which may be) whose length
    a charge counts."""
    typ = t.strip_optional(typ)
    return isinstance(typ, (t.ListOf, t.SetOf, t.MapOf, t.Table)) or typ == t.JSON


def _read(c: ExprCompiler, node: n.Expr) -> bool:
    """Whether reading ``node``'s text is charged: a text (or json) value that may be long,
    not a literal (bounded by the spec) nor a number's or a date's text."""
    typ = t.strip_optional(c.type_of(node))
    return (typ == t.STR or typ == t.JSON) and not isinstance(node, n.StrLit)


Emit = Callable[[Args], Expr]


def _min_max(fn: str) -> Emit:
    def emit(a: Args) -> Expr:
        if "b" in a:
            return call(fn, a.value("a"), a.value("b"))
        return call(f"rt.{fn}imum", a.elements("a"), **a.key_kw())

    return emit


def _sorted(a: Args) -> Expr:
    keywords = a.key_kw()
    if "reverse" in a:
        keywords["reverse"] = a.value("reverse")
    typ = t.strip_optional(a.c.type_of(a.node("xs")))
    elem = typ.element if isinstance(typ, (t.ListOf, t.SetOf)) else (
        t.Named("entity", typ.entity) if isinstance(typ, t.Table) else
        typ.key if isinstance(typ, t.MapOf) else t.UNKNOWN)
    if a.c.is_entity(elem):  # the rows sorted, their keys kept
        return call("rt.sorted_keys", a.elements("xs"), **keywords)
    return call("tuple", call("sorted", a.elements("xs"), **keywords))


def _random_choice(a: Args) -> Expr:
    """A seeded element; a collection of entities holds keys, so look the row up."""
    src = rt("choice", call(Attr(a.env.episode, "random_source")), a.value("xs"))
    typ = a.c.type_of(a.call)
    return a.c.row_from_key(src, typ, a.env) if a.c.is_entity(typ) else src


def _matches_solution(a: Args) -> Expr:
    assert a.env.task is not None, "matches_solution() is checked to occur in task checks only"
    return call(Attr(a.env.episode, "matches_solution"), Name(a.env.init), Const(a.env.task))


def _next(a: Args) -> Expr:
    seq = a.node("seq")
    assert isinstance(seq, n.NameRef)
    fmt = a.c.world.state[seq.name].format or "{}"
    a.c.sequences_advanced += 1
    return call(Attr(a.env.episode, "next_id"), Const(py_name(seq.name)), Const(fmt))


def _range(a: Args) -> Expr:
    if "b" in a:
        return rt("int_range", a.value("a"), a.value("b"))
    return rt("int_range", Const(0), a.value("a"))


def _round(a: Args) -> Expr:
    if "digits" in a:
        return call("round", a.value("x"), a.value("digits"))
    return call("round", a.value("x"))


def _to_float(a: Args) -> Expr:
    """``float(x)``; of ``arithmetic(text)`` itself, Python's ``float(eval(text))`` in one
    (``rt.arithmetic_float``), so an int too large to be a value of the language still
    fails with ``float()``'s text."""
    node = a.node("x")
    if isinstance(node, n.Call) and isinstance(node.func, n.NameRef) and \
            node.func.name == "arithmetic":
        res = a.c.program.resolutions.get(id(node.func))
        if res is None or res.kind not in ("fn", "record"):
            builtin = BUILTIN_FUNCTIONS["arithmetic"]
            inner = Args(a.c, node, _bind(node, builtin.params), builtin.charge, a.env)
            return rt("arithmetic_float", a.env.episode, inner.value("text"))
    return rt("to_float", a.value("x"))


def _to_list(a: Args) -> Expr:
    typ = t.strip_optional(a.c.type_of(a.node("xs")))
    if isinstance(typ, t.Table):
        return call(Attr(a.value("xs"), "keys"))
    if typ == t.STR:  # its characters: new strings, a step each
        return rt("pieces", a.env.episode, call("tuple", a.value("xs")))
    return call("tuple", a.value("xs"))


def _strip(method: str) -> Emit:
    def emit(a: Args) -> Expr:
        chars = (a.value("chars"),) if "chars" in a else ()
        return call(Attr(a.recv, method), *chars)

    return emit


def _split(a: Args) -> Expr:
    """``s.split()`` on whitespace, ``s.split(sep)``, ``s.split(sep, maxsplit: n)``."""
    sep = a.value("sep") if "sep" in a else Const(None)
    limit = (a.value("maxsplit"),) if "maxsplit" in a else ()
    return call("tuple", call(Attr(a.recv, "split"), sep, *limit))


#: the local holding the names of the arguments a tool's caller sent (``given(p)``)
GIVEN_ARGUMENTS = "<given>"


def _given(a: Args) -> Expr:
    node = a.node("p")
    assert isinstance(node, n.NameRef)
    return Compare(Const(node.name), "in", Name(a.env.locals[GIVEN_ARGUMENTS]))


def _from_json(a: Args) -> Expr:
    """The loader of the expected type, as for data: a value that does not fit fails the
    call with its path (``value.items[0]: expected an integer, got "x"``)."""
    loader = a.c.tables.loader(a.c.tables.stored(a.c.type_of(a.call)), "x", "p")
    return rt("from_json", Lambda(("x", "p", "ep"), Raw(loader, atomic=False)),
              a.value("value"), a.env.episode)


def _len(a: Args) -> Expr:
    """``len(x)``; of a comprehension, the length of its list (no tuple copied first)."""
    return _length(a.value("x"))


def _count(a: Args) -> Expr:
    """``count(xs)``, ``len(xs)``: of a comprehension selecting rows, the length of the list
    of the rows (no key taken of each)."""
    rows = a.c.selected_rows(a.node("xs"), a.env)
    return call("len", rows) if rows is not None else _length(a.value("xs"))


def _length(src: Expr) -> Expr:
    if isinstance(src, Call) and src.func == Name("tuple") and len(src.args) == 1 and \
            isinstance(src.args[0], Comprehension) and src.args[0].kind == "list":
        return call("len", src.args[0])
    return call("len", src)


#: ``@name`` in a builtin's ``emit`` -> the emitter of its several forms.
CUSTOM_EMITTERS: dict[str, Emit] = {
    "@len": _len, "@count": _count,
    "@min": _min_max("min"), "@max": _min_max("max"), "@sorted": _sorted, "@range": _range,
    "@round": _round, "@float": _to_float, "@list": _to_list, "@next": _next,
    "@matches_solution": _matches_solution,
    "@random_choice": _random_choice, "@from_json": _from_json, "@strip": _strip("strip"),
    "@lstrip": _strip("lstrip"), "@rstrip": _strip("rstrip"), "@split": _split,
    "@given": _given,
}


#: a builtin template's pieces: a hole for an argument, a literal, a name, punctuation
_TEMPLATE_TOKENS = re.compile(r"\{\w+\}|'[^'\\]*'|[A-Za-z_]\w*|[0-9]+|[().,=:]| +")

Build = Callable[[dict[str, Expr]], Expr]


class _Template:
    """A builtin's template of code (``rt.json_get({recv}, {k})``, ``({x} in {recv})``,
    ``dt.timedelta(days={n})``) read once into a maker of the expression: calls, attribute
    reads, keywords, ``lambda:``, ``in``, names and literals, each ``{hole}`` an argument's
    expression. The templates are the builtin table's, not code the compiler wrote."""

    def __init__(self, text: str) -> None:
        tokens = _TEMPLATE_TOKENS.findall(text)
        if "".join(tokens) != text:
            raise ValueError(f"builtin template {text!r} is not of the template grammar")
        self.tokens = [token for token in tokens if not token.isspace()]
        self.at = 0
        self.build = self.membership()
        if self.at != len(self.tokens):
            raise ValueError(f"builtin template {text!r} is not of the template grammar")

    def peek(self) -> str:
        return self.tokens[self.at] if self.at < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if expected is not None and token != expected:
            raise ValueError(f"expected {expected!r}, found {token!r}")
        self.at += 1
        return token

    def membership(self) -> Build:
        left = self.expression()
        if self.peek() != "in":
            return left
        self.take()
        right = self.expression()
        return lambda holes: Compare(left(holes), "in", right(holes))

    def expression(self) -> Build:
        token = self.take()
        built: Build
        if token == "(":
            built = self.membership()
            self.take(")")
        elif token == "lambda":
            self.take(":")
            body = self.expression()
            built = lambda holes: Lambda((), body(holes))  # noqa: E731
        elif token.startswith("{"):
            hole = token[1:-1]
            built = lambda holes: holes[hole]  # noqa: E731
        elif token.startswith("'"):
            text = token[1:-1]
            built = lambda holes: Const(text)  # noqa: E731
        elif token.isdigit():
            number = int(token)
            built = lambda holes: Const(number)  # noqa: E731
        else:
            built = lambda holes: Name(token)  # noqa: E731
        while self.peek() in (".", "("):
            if self.take() == ".":
                built = self.attribute(built, self.take())
            else:
                built = self.arguments(built)
        return built

    @staticmethod
    def attribute(obj: Build, name: str) -> Build:
        return lambda holes: Attr(obj(holes), name)

    def arguments(self, func: Build) -> Build:
        args: list[Build] = []
        keywords: list[tuple[str, Build]] = []
        while self.peek() != ")":
            if self.at + 1 < len(self.tokens) and self.tokens[self.at + 1] == "=":
                keyword = self.take()
                self.take("=")
                keywords.append((keyword, self.membership()))
            else:
                args.append(self.membership())
            if self.peek() == ",":
                self.take()
        self.take(")")
        return lambda holes: Call(func(holes), tuple(arg(holes) for arg in args),
                                  tuple((k, v(holes)) for k, v in keywords))


@cache
def _template(text: str) -> Build:
    return _Template(text).build


def _emit(template: str, a: Args, recv: Expr | None = None) -> Expr:
    """The builtin's code: its custom emitter's, or its template's with the arguments'
    expressions in its holes."""
    custom = CUSTOM_EMITTERS.get(template)
    if custom is not None:
        return custom(a)
    holes = {name: a.value(name) for name in a.bound}
    if template.startswith("rt.error_of(") and a.c.tables.dynamic:
        # `arguments: dynamic`: Python's own text, as the call itself would fail with
        template = "rt.python_error_of(" + template[len("rt.error_of("):]
    holes["ep"] = a.env.episode
    if recv is not None:
        holes["recv"] = recv
    return _template(template)(holes)


def _short(a: Args) -> bool:
    """Whether every argument is a value of short text (and a literal spec pads little), so
    the string the builtin builds needs no charge (``str(n)``, ``format(total, ".2f")``)."""
    for name in a.bound:
        node = a.node(name)
        if name == a.charge.spec and isinstance(node, n.StrLit):
            if any(len(d) > 3 or int(d) > _SHORT_WIDTH for d in _NUMBERS.findall(node.value)):
                return False
        elif isinstance(node, n.NameRef) and a.c.type_of(node) == t.SEQUENCE:
            fmt = a.c.world.state[node.name].format or "{}"
            if any(len(d) > 3 or int(d) > _SHORT_WIDTH for d in _NUMBERS.findall(fmt)):
                return False
        elif not a.c.is_short(node):
            return False
    return True


def _charged(src: Expr, charge: Charge, env: Env, a: Args | None = None) -> Expr:
    """The result, charged: a built string to the text budget (unless it is built from
    short values only), new strings to it and in steps, a new collection in steps."""
    if charge.text and not (a is not None and _short(a)):
        return call(Attr(env.episode, "built"), src)
    if charge.pieces:
        return rt("pieces", env.episode, src)
    if charge.items:
        return rt("each", env.episode, src)
    return src


def compile_call(c: ExprCompiler, call_: n.Call, env: Env) -> Expr:
    func = call_.func
    if isinstance(func, n.Attribute):
        recv_type = t.strip_optional(c.type_of(func.obj))
        kind = receiver_kind(recv_type) or ""
        method = METHODS[kind][func.name.name]
        recv = c.value(func.obj, env)
        if method.charge.steps == "recv" and _sized(recv_type):
            recv = c.each(recv, env)
        elif "recv" in method.charge.reads and _read(c, func.obj):
            recv = rt("read", env.episode, recv)
        args = Args(c, call_, _bind(call_, method.params), method.charge, env, stored=True)
        args.recv = recv
        src = _charged(_emit(method.emit, args, recv), method.charge, env)
        result = c.type_of(call_)
        if c.is_entity(result) and kind in ("map",):
            return c.row_from_key(src, result, env)
        return src
    assert isinstance(func, n.NameRef)
    name = func.name
    res = c.program.resolutions.get(id(func))
    if res is not None and res.kind == "fn":
        info = c.world.fns[name]
        bound = _bind(call_, tuple(p.name for p in info.params))
        values: list[Expr] = []
        for p in info.params:
            arg = bound.get(p.name)
            if arg is None:
                assert p.default is not None
                values.append(c.value(p.default, env))
            else:
                assert not isinstance(arg.value, n.Lambda)
                values.append(c.value(arg.value, env))
        helper: Expr = Attr(env.episode, f"fn_{py_name(name)}")
        if c.recursive(name):  # a step per call: recursion is bounded by the budget too
            helper = rt("step", env.episode, helper)
        return Call(helper, tuple(values))
    if res is not None and res.kind == "record":
        return construct(c, call_, name, env)
    builtin = BUILTIN_FUNCTIONS[name]
    args = Args(c, call_, _bind(call_, builtin.params, builtin.lambdas), builtin.charge, env)
    return _charged(_emit(builtin.emit, args), builtin.charge, env, args)


def construct(c: ExprCompiler, call_: n.Call, name: str, env: Env) -> Expr:
    """``Rec(field: value)``: every field passed explicitly, defaults evaluated here."""
    info = c.world.records[name]
    given = {arg.name.name: arg for arg in call_.args if arg.name is not None}
    parts: list[tuple[str, Expr]] = []
    for f in info.fields.values():
        arg = given.get(f.name)
        if arg is not None:
            assert not isinstance(arg.value, n.Lambda)
            value = c.checked(f.type, c.stored(arg.value, env, f.type), f"{name}.{f.name}")
        elif f.default is not None:
            value = c.stored(f.default, env, f.type)
        else:
            value = Const(None)
        parts.append((py_name(f.name), value))
    cls = c.tables.class_name(name)
    if info.kind == "record":
        # positional, in declaration order (the order the values are computed in anyway):
        # no keyword matching per call
        return Call(Name(cls), tuple(value for _, value in parts))
    return Call(Name(cls), (), tuple(parts))
