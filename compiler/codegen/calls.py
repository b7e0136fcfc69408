"""Calls to Python source: builtins and methods (one table row each), helpers, constructors."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from worldspec.compiler import types as t
from worldspec.compiler.codegen.names import py_name
from worldspec.dsl import nodes as n

if TYPE_CHECKING:
    from worldspec.compiler.codegen.exprs import Env, ExprCompiler

__all__ = ["compile_call", "BUILTIN_CODE", "METHOD_CODE"]

Args = dict[str, "n.Arg"]
Emit = Callable[["ExprCompiler", n.Call, Args, "Env"], str]


def _bind(call: n.Call, params: tuple[str, ...], lambdas: tuple[str, ...] = ()) -> Args:
    """Arguments by parameter name (the checker has validated them)."""
    names = [p.rstrip("?") for p in params]
    out: Args = {}
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


def _v(c: ExprCompiler, args: Args, name: str, env: Env) -> str:
    value = args[name].value
    assert not isinstance(value, n.Lambda)
    return c.value(value, env)


def _elements(c: ExprCompiler, args: Args, name: str, env: Env) -> str:
    value = args[name].value
    assert not isinstance(value, n.Lambda)
    return c.elements(value, env)


def _key_kw(c: ExprCompiler, args: Args, env: Env) -> str:
    arg = args.get("key")
    if arg is None or not isinstance(arg.value, n.Lambda):
        return ""
    return f", key={c.lambda_(arg.value, env)}"


def _min_max(fn: str) -> Emit:
    def emit(c: ExprCompiler, call: n.Call, a: Args, env: Env) -> str:
        if "b" in a:
            return f"{fn}({_v(c, a, 'a', env)}, {_v(c, a, 'b', env)})"
        return f"rt.{fn}imum({_elements(c, a, 'a', env)}{_key_kw(c, a, env)})"

    return emit


def _sorted(c: ExprCompiler, call: n.Call, a: Args, env: Env) -> str:
    reverse = f", reverse={_v(c, a, 'reverse', env)}" if "reverse" in a else ""
    xs = a["xs"].value
    assert not isinstance(xs, n.Lambda)
    typ = t.strip_optional(c.type_of(xs))
    elem = typ.element if isinstance(typ, (t.ListOf, t.SetOf)) else (
        t.Named("entity", typ.entity) if isinstance(typ, t.Table) else
        typ.key if isinstance(typ, t.MapOf) else t.UNKNOWN)
    src = f"sorted({_elements(c, a, 'xs', env)}{_key_kw(c, a, env)}{reverse})"
    if c.is_entity(elem):
        return f"tuple(rt.key_of(x) for x in {src})"
    return f"tuple({src})"


def _draw(fn: str) -> Emit:
    def emit(c: ExprCompiler, call: n.Call, a: Args, env: Env) -> str:
        if fn == "random_int":
            return f"{env.ep}._rng().randint({_v(c, a, 'lo', env)}, {_v(c, a, 'hi', env)})"
        if fn == "random_choice":  # a collection of entities holds keys: look the row up
            src = f"rt.choice({env.ep}._rng(), {_v(c, a, 'xs', env)})"
            typ = c.type_of(call)
            return c.row_from_key(src, typ, env) if c.is_entity(typ) else src
        return f"rt.random_digits({env.ep}._rng(), {_v(c, a, 'n', env)})"

    return emit


def _matches_solution(c: ExprCompiler, call: n.Call, a: Args, env: Env) -> str:
    assert env.task is not None, "matches_solution() is checked to occur in task checks only"
    return f"{env.ep}.matches_solution({env.init}, {env.task!r})"


def _next(c: ExprCompiler, call: n.Call, a: Args, env: Env) -> str:
    seq = a["seq"].value
    assert isinstance(seq, n.NameRef)
    fmt = c.world.state[seq.name].format or "{}"
    return f"{env.ep}._next({py_name(seq.name)!r}, {fmt!r})"


def _simple(template: str, *names: str) -> Emit:
    def emit(c: ExprCompiler, call: n.Call, a: Args, env: Env) -> str:
        values = {name: _v(c, a, name, env) for name in names if name in a}
        return template.format(**values)

    return emit


def _range(c: ExprCompiler, call: n.Call, a: Args, env: Env) -> str:
    if "b" in a:
        return f"rt.int_range({_v(c, a, 'a', env)}, {_v(c, a, 'b', env)})"
    return f"rt.int_range(0, {_v(c, a, 'a', env)})"


def _round(c: ExprCompiler, call: n.Call, a: Args, env: Env) -> str:
    if "digits" in a:
        return f"round({_v(c, a, 'x', env)}, {_v(c, a, 'digits', env)})"
    return f"round({_v(c, a, 'x', env)})"


def _duration(unit: str) -> Emit:
    return _simple(f"dt.timedelta({unit}={{n}})", "n")


def _to_list(c: ExprCompiler, call: n.Call, a: Args, env: Env) -> str:
    xs = a["xs"].value
    assert not isinstance(xs, n.Lambda)
    typ = t.strip_optional(c.type_of(xs))
    if isinstance(typ, t.Table):
        return f"{c.value(xs, env)}.keys()"
    return f"tuple({c.value(xs, env)})"


def _to_set(c: ExprCompiler, call: n.Call, a: Args, env: Env) -> str:
    return f"v.unique(tuple({_v(c, a, 'xs', env)}))"


#: Builtin function -> (parameter names, lambda parameters, emitter).
BUILTIN_CODE: dict[str, tuple[tuple[str, ...], tuple[str, ...], Emit]] = {
    "len": (("x",), (), _simple("len({x})", "x")),
    "count": (("xs",), (), _simple("len({xs})", "xs")),
    "range": (("a", "b?"), (), _range),
    "sum": (("xs",), (), _simple("sum({xs})", "xs")),
    "min": (("a", "b?", "key?"), ("key",), _min_max("min")),
    "max": (("a", "b?", "key?"), ("key",), _min_max("max")),
    "sorted": (("xs", "key?", "reverse?"), ("key",), _sorted),
    "round": (("x", "digits?"), (), _round),
    "abs": (("x",), (), _simple("abs({x})", "x")),
    "str": (("x",), (), _simple("rt.text({x})", "x")),
    "int": (("x",), (), _simple("rt.to_int({x})", "x")),
    "float": (("x",), (), _simple("rt.to_float({x})", "x")),
    "list": (("xs",), (), _to_list),
    "set": (("xs",), (), _to_set),
    "format": (("x", "spec"), (), _simple("format({x}, {spec})", "x", "spec")),
    "next": (("seq",), (), _next),
    "date": (("text",), (), _simple("rt.parse_date({text})", "text")),
    "datetime": (("text",), (), _simple("rt.parse_datetime({text})", "text")),
    "days": (("n",), (), _duration("days")),
    "hours": (("n",), (), _duration("hours")),
    "minutes": (("n",), (), _duration("minutes")),
    "seconds": (("n",), (), _duration("seconds")),
    "random_int": (("lo", "hi"), (), _draw("random_int")),
    "random_choice": (("xs",), (), _draw("random_choice")),
    "random_digits": (("n",), (), _draw("random_digits")),
    "matches_solution": ((), (), _matches_solution),
}


def _method(template: str, *names: str) -> Callable[[ExprCompiler, str, Args, Env], str]:
    def emit(c: ExprCompiler, recv: str, a: Args, env: Env) -> str:
        values = {name: c.stored(a[name].value, env) for name in names  # type: ignore[arg-type]
                  if name in a}
        return template.format(recv=recv, **values)

    return emit


#: (receiver kind, method) -> emitter.
METHOD_CODE: dict[tuple[str, str], tuple[tuple[str, ...],
                                         Callable[[ExprCompiler, str, Args, Env], str]]] = {
    ("str", "lower"): ((), _method("{recv}.lower()")),
    ("str", "upper"): ((), _method("{recv}.upper()")),
    ("str", "strip"): ((), _method("{recv}.strip()")),
    ("str", "contains"): (("s",), _method("({s} in {recv})", "s")),
    ("str", "startswith"): (("s",), _method("{recv}.startswith({s})", "s")),
    ("str", "endswith"): (("s",), _method("{recv}.endswith({s})", "s")),
    ("str", "split"): (("sep",), _method("tuple({recv}.split({sep}))", "sep")),
    ("str", "replace"): (("old", "new"), _method("{recv}.replace({old}, {new})", "old", "new")),
    ("str", "zfill"): (("n",), _method("{recv}.zfill({n})", "n")),
    ("str", "join"): (("xs",), _method("{recv}.join({xs})", "xs")),
    ("list", "contains"): (("x",), _method("({x} in {recv})", "x")),
    ("list", "index"): (("x",), _method("{recv}.index({x})", "x")),
    ("set", "contains"): (("x",), _method("({x} in {recv})", "x")),
    ("map", "get"): (("k",), _method("{recv}.get({k})", "k")),
    ("map", "contains"): (("k",), _method("({k} in {recv})", "k")),
    ("map", "keys"): ((), _method("tuple({recv})")),
    ("map", "values"): ((), _method("tuple({recv}.values())")),
    ("table", "get"): (("key",), _method("{recv}.get({key})", "key")),
    ("table", "keys"): ((), _method("{recv}.keys()")),
    ("datetime", "date"): ((), _method("{recv}.date()")),
}


def _receiver_kind(typ: t.Type) -> str:
    from worldspec.compiler.builtins import receiver_kind

    return receiver_kind(typ) or ""


def compile_call(c: ExprCompiler, call: n.Call, env: Env) -> str:
    func = call.func
    if isinstance(func, n.Attribute):
        recv_type = t.strip_optional(c.type_of(func.obj))
        kind = _receiver_kind(recv_type)
        params, emit = METHOD_CODE[(kind, func.name.name)]
        src = emit(c, c.value(func.obj, env), _bind(call, params), env)
        result = c.type_of(call)
        if c.is_entity(result) and kind in ("map",):
            return c.row_from_key(src, result, env)
        return src
    assert isinstance(func, n.NameRef)
    name = func.name
    res = c.program.resolutions.get(id(func))
    if res is not None and res.kind == "fn":
        info = c.world.fns[name]
        bound = _bind(call, tuple(p.name for p in info.params))
        args = []
        for p in info.params:
            arg = bound.get(p.name)
            if arg is None:
                assert p.default is not None
                args.append(c.value(p.default, env))
            else:
                assert not isinstance(arg.value, n.Lambda)
                args.append(c.value(arg.value, env))
        return f"{env.ep}.fn_{py_name(name)}({', '.join(args)})"
    if res is not None and res.kind == "record":
        return construct(c, call, name, env)
    params, lambdas, emit_builtin = BUILTIN_CODE[name]
    return emit_builtin(c, call, _bind(call, params, lambdas), env)


def construct(c: ExprCompiler, call: n.Call, name: str, env: Env) -> str:
    """``Rec(field: value)``: every field passed explicitly, defaults evaluated here."""
    info = c.world.records[name]
    given = {arg.name.name: arg for arg in call.args if arg.name is not None}
    parts = []
    for f in info.fields.values():
        arg = given.get(f.name)
        if arg is not None:
            assert not isinstance(arg.value, n.Lambda)
            value = c.tables.checked(f.type, c.stored(arg.value, env, f.type),
                                     repr(f"{name}.{f.name}"))
        elif f.default is not None:
            value = c.stored(f.default, env, f.type)
        else:
            value = "None"
        parts.append(f"{py_name(f.name)}={value}")
    return f"{c.tables.class_name(name)}({', '.join(parts)})"
