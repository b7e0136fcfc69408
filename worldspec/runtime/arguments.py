"""A generated world's tools, declared: how each argument loads, and the registry.

Part of the contract between generated code and the runtime (see
:mod:`worldspec.runtime.contract`, which this module completes: it needs the episode's
``ToolSpec``, which needs the contract's classes). A generated world imports this module as
``arg`` (its argument types) and declares each tool by decorating its method with
:func:`tool`: the tool's description (never the method's docstring, which ``python -OO``
drops) and its parameters, each a :func:`param` saying how its argument loads; after the
class, :func:`tools` makes its registry of what the methods declare::

    class Shop(Episode):
        @tool(
            'Cancel a pending order.',
            param('order', arg.row('orders'), 'The order to cancel.'),
            param('reason', arg.optional(arg.enum_of(Reason)), 'Why.'),
            param('count', arg.refined(arg.INT, 1, 5), 'How many.', default=1),
            where='shop.world:40', returns=Order,
        )
        def tool_cancel_order(self, order: Order, reason: Reason | None, count: int) -> Order:
            ...

    Shop.TOOLS = tools(Shop)

An argument type (a :class:`Loads`, made once per parameter) is a builtin scalar
(:data:`TEXT`, :data:`INT`, :data:`FLOAT`, :data:`NUMBER`, :data:`BOOL`, :data:`DATE`,
:data:`DATETIME`, :data:`DURATION`, :data:`JSON`), :data:`TEXT_LIST`, or made of others:
:func:`refined`, :func:`optional`, :func:`list_of`, :func:`set_of`, :func:`map_of`,
:func:`enum_of`, :func:`record` (a record or a union: its loader and schema) and :func:`row`
(the row of a table by its key). Each loads as the value shape of the same type does (the
one composition of the value checks, :mod:`worldspec.runtime.value_shapes`, which records'
fields declare too), and carries its JSON schema, made by the functions of
:mod:`worldspec.runtime.schema` that the compiler's type tables use too.

A :func:`param` may say ``default=`` (the value for a call that leaves the argument out or
gives null: a constant; ``default_from=``: a function of the episode that computes it) and
``not_found=`` (the spec's message for a value that does not fit the type, or for a row, a key
no row has: it may be said once by the row, ``row('orders', not_found=...)``).

The world's argument rules (``config { arguments: python | dynamic }``) are
:func:`tools`'s ``arguments``: with Python's rules an explicit null is a value and errors
name ``<python_class>.<tool>``; with ``dynamic`` a value of another JSON type than declared
is passed on as it is and what Python raises on it is the call's failure.

:func:`tools` builds each tool's invoker once (:func:`invoker`, with
:mod:`worldspec.runtime.invokers`): no generated function loads arguments.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

from worldspec.runtime import schema as js
from worldspec.runtime import value_shapes as sh
from worldspec.runtime.episode import ParamSpec, ToolSpec
from worldspec.runtime.errors import ToolError
from worldspec.runtime.helpers import (
    PYTHON_FAILURES,
    Exported,
    fitting,
    foreign,
    foreign_list,
    lookup,
    str_list_or_foreign,
    str_or_foreign,
)
from worldspec.runtime.invokers import (
    MOST_SLOTS,
    Getter,
    Invoke,
    SlotLoad,
    checked_arguments,
    getter_invoker,
    names_check,
    slot_invoker,
)
from worldspec.runtime.records import value_class
from worldspec.runtime.values import (
    quote,
    want_str,
    want_str_list,
)

__all__ = [
    "Loads", "TEXT", "TEXT_LIST", "INT", "FLOAT", "NUMBER", "BOOL", "DATE", "DATETIME",
    "DURATION", "JSON", "refined", "optional", "list_of", "set_of", "map_of", "enum_of",
    "record", "row", "param", "tool", "tools", "declaration", "tool_spec", "ParamDeclaration",
    "ToolDeclaration", "invoker", "ARGUMENT_RULES",
]

#: ``message(episode, key) -> text``: the spec's message for a key or value that fits not
Message = Callable[[Any, Any], "str | None"]

#: a tool's method, as :func:`tool` declares it
Method = TypeVar("Method", bound=Callable[..., Any])
#: where :func:`tool` keeps a method's declaration: an attribute of the function
_DECLARATION = "tool_declaration"

#: ``config { arguments: ... }``: the world's argument rules
ARGUMENT_RULES: Final = ("worldspec", "python", "dynamic")


@value_class(frozen=True)
class Loads:
    """How an argument of one type loads: ``load(value, path, episode)`` checks and converts
    the JSON value (``plain(value, path)`` where it needs no episode); ``schema`` is the
    type's JSON schema. Made by the argument types below, never by hand."""

    #: what it is: a scalar's name (``str``, ``int``...), ``list``, ``set``, ``map``,
    #: ``optional``, ``enum``, ``record``, ``union``, ``row``; ``text_list`` for a list of
    #: plain text
    kind: str
    schema: dict[str, Any]
    load: Callable[[Any, str, Any], Any]
    plain: Callable[[Any, str], Any] | None = None
    #: a list or set (or an optional one): in ``arguments: dynamic``, a JSON array of other
    #: elements stays a list
    is_list: bool = False
    #: whether null is a value of the type (``json``), not a missing argument
    takes_null: bool = False
    #: an optional type: the type it makes optional
    inner: Loads | None = None
    #: a row: its table, its key's type, the spec's not-found message
    table: str | None = None
    key: Loads | None = None
    not_found: Message | None = None
    #: how its values load (every type but a row, whose key loads as ``key`` says)
    shape: sh.Shape | None = None

    def value(self, ep: Any, given: Any, path: str) -> Any:
        """The value of JSON ``given`` (every check the type makes)."""
        return self.load(given, path, ep)

    def item(self, ep: Any) -> Callable[[Any, str], Any]:
        """``load(value, path)`` for an element, a key or a value inside a container."""
        if self.plain is not None:
            return self.plain
        load = self.load
        return lambda value, path: load(value, path, ep)

    def lookup(self, ep: Any, key: Any) -> Any:
        """The row of ``key`` in the table, or the parameter's not-found failure (the
        spec's message, or ``<the table's entity> <key> not found.``)."""
        table = getattr(ep, f"t_{self.table}")
        own = self.not_found
        if own is not None:
            def message(key: Any) -> Any:
                return own(ep, key)
            return lookup(table, key, message)
        return lookup(table, key, lambda key: f"{table.entity} {quote(key)} not found.")


def _of(shape: sh.Shape, schema: dict[str, Any], *, is_list: bool = False,
        takes_null: bool = False, inner: Loads | None = None) -> Loads:
    """An argument type whose value loads as ``shape`` says (the one composition of the
    value checks, :mod:`worldspec.runtime.value_shapes`, which records' fields use too),
    with the JSON schema the agent is shown."""
    plain = shape.load
    load: Callable[[Any, str, Any], Any]
    if plain is not None:
        def load(value: Any, path: str, ep: Any) -> Any:
            return plain(value, path)
    else:
        assert shape.load_ep is not None
        load = shape.load_ep
    return Loads(shape.kind, schema, load, plain, is_list=is_list, takes_null=takes_null,
                 inner=inner, shape=shape)


def _shape(how: Loads) -> sh.Shape:
    """The shape of ``how``'s values; a row's (a key looked up in its table) made for it."""
    return how.shape if how.shape is not None else sh.Shape(how.kind, load_ep=how.load)


#: text (``str``)
TEXT: Final = _of(sh.TEXT, js.STRING)
#: a list of text (``list[str]``)
TEXT_LIST: Final = _of(sh.list(sh.TEXT), js.array(js.STRING), is_list=True)
INT: Final = _of(sh.INT, js.INTEGER)
FLOAT: Final = _of(sh.FLOAT, js.NUMBER)
NUMBER: Final = _of(sh.NUMBER, js.NUMBER)
BOOL: Final = _of(sh.BOOL, js.BOOLEAN)
DATE: Final = _of(sh.DATE, js.SCALARS["date"])
DATETIME: Final = _of(sh.DATETIME, js.SCALARS["datetime"])
DURATION: Final = _of(sh.DURATION, js.SCALARS["duration"])
#: any JSON value (``json``): null is one
JSON: Final = _of(sh.JSON, js.JSON_ANY, takes_null=True)

#: the schema's names of a refinement's limits, by what is refined
_LIMITS = {"int": ("minimum", "maximum"), "float": ("minimum", "maximum"),
           "number": ("minimum", "maximum"), "list": ("minItems", "maxItems"),
           "set": ("minItems", "maxItems"), "map": ("minProperties", "maxProperties")}


def refined(how: Loads, low: float | None = None, high: float | None = None,
            pattern: str | None = None) -> Loads:
    """``how`` refined: values (numbers) or lengths (text, lists, maps) from ``low`` to
    ``high``, text matching ``pattern``."""
    lowest, highest = _LIMITS.get(how.kind, ("minLength", "maxLength"))
    schema = js.refined(how.schema, **{lowest: low, highest: high, "pattern": pattern})
    return _of(sh.refined(_shape(how), low, high, pattern), schema, is_list=how.is_list)


def optional(how: Loads) -> Loads:
    """``T?``: none (null) or a ``how``."""
    return _of(sh.optional(_shape(how)), js.nullable(how.schema), is_list=how.is_list,
               inner=how)


def list_of(how: Loads) -> Loads:
    """``list[T]``."""
    return _of(sh.list(_shape(how)), js.array(how.schema), is_list=True)


def set_of(how: Loads) -> Loads:
    """``set[T]``: a JSON array without repeats."""
    return _of(sh.set(_shape(how)), js.array(how.schema, unique=True), is_list=True)


def map_of(key: Loads, value: Loads) -> Loads:
    """``map[K, V]``: a JSON object (an ``int`` key is decimal text, a ``json`` one text or
    an integer)."""
    return _of(sh.map(_shape(key), _shape(value)), js.mapping(value.schema))


def enum_of(enum_class: type[enum.Enum]) -> Loads:
    """A member of ``enum_class``, by its text."""
    return _of(sh.enum(enum_class), js.members(enum_class))


def record(load: Callable[[Any, str, Any], Any], schema: dict[str, Any]) -> Loads:
    """A record (or a union of records): ``load(value, path, episode)``, its class's (the
    episode computes its fields' defaults), and its schema."""
    return _of(sh.Shape("record", load_ep=load), schema)


def row(table: str, key: Loads = TEXT, not_found: Message | str | None = None) -> Loads:
    """An entity: the row of ``table`` whose key the agent gives (loaded as ``key`` says),
    or the failure ``not_found(ep, key)`` (by default ``<entity> <key> not found.``; a text:
    that text whatever the key; a parameter's ``not_found`` is its row's)."""
    def load(value: Any, path: str, ep: Any) -> Any:
        return found.lookup(ep, key.load(value, path, ep))
    found = Loads("row", key.schema, load, table=table, key=key,
                  not_found=_message(not_found))
    return found


def _message(not_found: Message | str | None) -> Message | None:
    """A not-found message as a function of the episode and the key (a text: that text)."""
    if isinstance(not_found, str):
        text = not_found
        return lambda ep, key: text
    return not_found


def _row_of(how: Loads) -> Loads | None:
    """The row type ``how`` is, or makes optional; None for another type."""
    if how.kind == "optional" and how.inner is not None:
        how = how.inner
    return how if how.kind == "row" else None


@value_class(frozen=True)
class ParamDeclaration:
    """A tool's parameter as a world declares it (see :func:`param`)."""

    name: str
    loads: Loads
    doc: str = ""
    default: Callable[[Any], Any] | None = None
    optional: bool = False
    not_found: Message | None = None


def param(name: str, how: Loads, doc: str = "", *, default: Any = None,
          default_from: Callable[[Any], Any] | None = None,
          not_found: Message | str | None = None) -> ParamDeclaration:
    """A tool's parameter: its name, how its argument loads (an optional type: a call may
    leave it out), its description; for a call that leaves it out, ``default`` (a constant:
    a number, a text, a bool, an enum member; None is no default) or ``default_from(ep)``
    (computed by the episode, or a null default); ``not_found(ep, value)`` the spec's message
    for a value that does not fit its type (for a row, for a key no row has; a text: that
    text whatever the value)."""
    if default is not None:
        if default_from is not None:
            raise TypeError(f"parameter {name!r}: say default= or default_from=, not both")
        default_from = _constant(default)
    found = _row_of(how)
    if not_found is not None and found is not None:
        assert found.key is not None
        made = row(found.table or "", found.key, not_found)
        how, not_found = (made if how is found else optional(made)), None
    return ParamDeclaration(name, how, doc, default_from, how.kind == "optional",
                            _message(not_found))


def _constant(value: Any) -> Callable[[Any], Any]:
    """``default_from`` for a constant default: the value, whatever the episode."""
    return lambda ep: value


@value_class(frozen=True)
class ToolDeclaration:
    """A tool as a world declares it (see :func:`tool`)."""

    method: Callable[..., Any]
    name: str
    params: tuple[ParamDeclaration, ...]
    read_only: bool
    doc: str = ""
    where: str = ""
    returns: dict[str, Any] | None = None
    checks: bool | None = None
    shows: tuple[Any, ...] | None = None
    export: Callable[[Any], Any] | None = None
    given: bool = False


def tool(doc: str, /, *params: ParamDeclaration, read_only: bool = False,
         name: str | None = None, where: str = "", returns: js.SchemaOf | None = None,
         checks: bool | None = None, shows: tuple[Any, ...] | None = None,
         export: Callable[[Any], Any] | None = None,
         given: bool = False) -> Callable[[Method], Method]:
    """Declares the method it decorates (``method(episode, *arguments)``, named
    ``tool_<name>``: ``name`` where the tool's name is no Python name) a tool: its
    description ``doc`` (the registry's text, never the method's docstring, which ``python
    -OO`` drops) and its parameters; ``read_only`` where it changes nothing; ``returns`` the
    JSON schema of its result (a record's or a row's class: the schema
    :func:`~worldspec.runtime.schema.result_of` builds); ``export`` the function writing a
    result as JSON where the result's class cannot (a union, whose tag only the declared type
    knows); ``given``: the method also takes the names of the arguments the call gave. The
    method is left as it is; :func:`tools` collects the declarations of a world's class."""
    schema = None if returns is None else js.schema_of(returns)

    def declare(method: Method) -> Method:
        declared = ToolDeclaration(method, name or method.__name__.removeprefix("tool_"),
                                   params, read_only, doc, where, schema, checks, shows,
                                   export, given)
        vars(method)[_DECLARATION] = declared
        return method
    return declare


def declaration(method: Any) -> ToolDeclaration | None:
    """The tool declaration :func:`tool` made of ``method``, or None for any other value."""
    found = getattr(method, "__dict__", {}).get(_DECLARATION)
    return found if isinstance(found, ToolDeclaration) else None


def tools(world: type, *, arguments: str = "worldspec",
          python_class: str = "") -> dict[str, ToolSpec]:
    """A world's tool registry: the tools its class ``world`` declares (its methods
    decorated with :func:`tool`), by name, in the class's order, each with its invoker built
    (``arguments``: the world's argument rules; ``python_class``: with Python's, the class
    its errors name)."""
    if arguments not in ARGUMENT_RULES:
        raise ValueError(f"unknown argument rules {arguments!r}: use one of "
                         f"{', '.join(ARGUMENT_RULES)}")
    declared = [d for d in map(declaration, vars(world).values()) if d is not None]
    return {decl.name: tool_spec(decl, arguments, python_class) for decl in declared}


def tool_spec(decl: ToolDeclaration, arguments: str, python_class: str) -> ToolSpec:
    """The ``ToolSpec`` of a declared tool."""
    python = arguments != "worldspec"
    params = tuple(_param_spec(p, python) for p in decl.params)
    return ToolSpec(decl.name, decl.doc, params, decl.read_only,
                    invoker(decl, arguments, python_class), where=decl.where,
                    returns=decl.returns, checks=decl.checks, shows=decl.shows)


def _param_spec(p: ParamDeclaration, python: bool) -> ParamSpec:
    """What the agent sees of a parameter: its JSON schema (the type's; or null where the
    type is optional, or where null means the default but with Python's rules), its
    description, whether it is required."""
    schema = p.loads.schema
    if p.default is not None and not p.optional and not python:
        schema = js.nullable(schema)  # null means the default
    if p.doc:
        schema = {**schema, "description": p.doc}
    found = _row_of(p.loads)
    return ParamSpec(p.name, schema, _required(p), p.doc,
                     table=found.table if found is not None else None)


def _required(p: ParamDeclaration) -> bool:
    return p.default is None and not p.optional


# ------------------------------------------------------------------------- loaders
def _getter(p: ParamDeclaration, python: bool, dynamic: bool) -> Getter:
    """``get(ep, args)``: parameter ``p``'s argument loaded (its names are checked)."""
    how = p.loads
    if p.default is None and not p.optional and p.not_found is None:
        fast = _fast_getter(p.name, how, dynamic)
        if fast is not None:
            return fast
    return _general_getter(p, python, dynamic)


def _fast_getter(name: str, how: Loads, dynamic: bool) -> Getter | None:
    """The loader of a required text, list of text or row by a text key: the common case
    checked inline (ASCII text as it is), anything else through the value checks (in
    ``arguments: dynamic``, a value of another JSON type passed on)."""
    if how is TEXT:
        slow_text = _slow_text(name, dynamic)

        def get_text(ep: Any, args: Mapping[str, Any]) -> Any:
            given = args[name]
            if type(given) is str and given.isascii():
                return given
            return slow_text(ep, given)
        return get_text
    if how is TEXT_LIST:
        load_list = _text_list(name, dynamic)
        return lambda ep, args: load_list(ep, args[name])
    if how.kind == "row" and how.key is TEXT:
        load_row = _row_by_text(name, how, dynamic)
        return lambda ep, args: load_row(ep, args[name])
    return None


def _slow_text(name: str, dynamic: bool) -> Callable[[Any, Any], Any]:
    if dynamic:
        return lambda ep, given: str_or_foreign(ep, given, name)
    return lambda ep, given: want_str(given, name)


def _general_getter(p: ParamDeclaration, python: bool, dynamic: bool) -> Getter:
    """The loader of any parameter: the value's checks, the spec's message for a value that
    fits not, the default for a missing argument (or null, but with Python's rules), and in
    ``arguments: dynamic`` a value of another JSON type passed on."""
    name, how, default, not_found = p.name, p.loads, p.default, p.not_found
    plain, with_episode = how.plain, how.load
    if plain is not None:
        def load(ep: Any, args: Mapping[str, Any]) -> Any:
            return plain(args[name], name)
    else:
        def load(ep: Any, args: Mapping[str, Any]) -> Any:
            return with_episode(args[name], name, ep)
    if not_found is not None:
        unfitting = load

        def load(ep: Any, args: Mapping[str, Any]) -> Any:
            return fitting(lambda: unfitting(ep, args), args[name],
                           lambda key: not_found(ep, key))
    if default is not None or p.optional:
        required = load
        fill: Callable[[Any], Any] = default if default is not None else (lambda ep: None)
        # with Python's argument rules an explicit null is a value, as in Python (but none
        # for an optional parameter); otherwise it means the default
        given: Callable[[Mapping[str, Any]], bool] = \
            (lambda args: name in args) if python and default is not None else \
            (lambda args: args.get(name) is not None)

        def load(ep: Any, args: Mapping[str, Any]) -> Any:
            return required(ep, args) if given(args) else fill(ep)
    if not dynamic:
        return load
    loaded = load
    fallback = _pass_on(name, how)

    def load_or_pass_on(ep: Any, args: Mapping[str, Any]) -> Any:
        try:
            return loaded(ep, args)
        except ToolError as exc:
            return fallback(ep, exc, args[name])
    return load_or_pass_on


# ------------------------------------------------------------------------- invokers
def invoker(decl: ToolDeclaration, arguments: str = "worldspec", python_class: str = ""
            ) -> Invoke:
    """``invoke(ep, args)``: the arguments' names checked, the arguments loaded, the tool's
    method called, its result exported where the tool says how; in ``arguments: dynamic``,
    what Python raises on a value of another type than declared is a failed call with
    Python's text, as the original's harness says (see :mod:`worldspec.runtime.invokers`)."""
    python, dynamic = arguments != "worldspec", arguments == "dynamic"
    failures = PYTHON_FAILURES if dynamic else ()
    method = decl.method
    export = decl.export
    if export is not None:
        plain = method

        def method(ep: Any, *values: Any) -> Any:
            return Exported(export(plain(ep, *values)))
    params = decl.params
    allowed = tuple(p.name for p in params)
    required = tuple(p.name for p in params if _required(p))
    nullable = tuple(p.name for p in params if p.loads.takes_null and _required(p))
    python_name = f"{python_class}.{decl.name}" if python else None
    if params and len(params) <= MOST_SLOTS and not decl.given and \
            all(_required(p) and p.not_found is None for p in params):
        slots = [_slot(p, dynamic) for p in params]
        check, nulls = names_check(allowed, required, nullable=nullable,
                                   python_name=python_name)
        return slot_invoker(method, allowed, tuple(text for text, _, _ in slots),
                            tuple(table for _, table, _ in slots),
                            tuple(load for _, _, load in slots), check, nulls, failures)
    getters = [_getter(p, python, dynamic) for p in params]
    if decl.given:
        getters.append(lambda ep, args: frozenset(args))
    return checked_arguments(getter_invoker(method, tuple(getters), failures), allowed,
                             required, nullable=nullable, python_name=python_name)


def _slot(p: ParamDeclaration, dynamic: bool) -> tuple[bool, str | None, SlotLoad]:
    """A required parameter's slot (see :func:`~worldspec.runtime.invokers.slot_invoker`):
    whether its value is checked inline as text, the table of its row by that text, and
    its loader of any other value."""
    name, how = p.name, p.loads
    if how is TEXT:
        return True, None, _slow_text(name, dynamic)
    if how.kind == "row" and how.key is TEXT:
        return True, how.table, _row_by_text(name, how, dynamic)
    if how is TEXT_LIST:
        return False, None, _text_list(name, dynamic)
    return False, None, _value(p, dynamic)


def _row_by_text(name: str, how: Loads, dynamic: bool) -> SlotLoad:
    """The row of a key that is no ASCII text (or that no row has: the failure)."""
    slow_key = _slow_text(name, dynamic)
    table = how.table
    row_lookup = how.lookup

    def load_row(ep: Any, key: Any) -> Any:
        if type(key) is not str or not key.isascii():
            key = slow_key(ep, key)
        found = ep.tables[table].rows.get(key)
        if found is not None:
            return found
        return row_lookup(ep, key)
    return load_row


def _text_list(name: str, dynamic: bool) -> SlotLoad:
    """A list of text: a list of ASCII text as a tuple at once, anything else through the
    value checks (in ``arguments: dynamic``, a value of another JSON type passed on)."""
    slow: SlotLoad = (lambda ep, given: str_list_or_foreign(ep, given, name)) if dynamic \
        else (lambda ep, given: want_str_list(given, name))

    def load_text_list(ep: Any, given: Any) -> Any:
        try:  # ''.join checks in C that every element is a str
            if type(given) is list and "".join(given).isascii():
                return tuple(given)
        except TypeError:  # an element that is no str
            pass
        return slow(ep, given)
    return load_text_list


def _value(p: ParamDeclaration, dynamic: bool) -> SlotLoad:
    """A required argument of any type: every check its type makes; in ``arguments:
    dynamic``, a value of another JSON type passed on."""
    name, how = p.name, p.loads
    plain, with_episode = how.plain, how.load
    if plain is not None:
        def load(ep: Any, given: Any) -> Any:
            return plain(given, name)
    else:
        def load(ep: Any, given: Any) -> Any:
            return with_episode(given, name, ep)
    if not dynamic:
        return load
    fallback = _pass_on(name, how)

    def load_or_pass_on(ep: Any, given: Any) -> Any:
        try:
            return load(ep, given)
        except ToolError as exc:
            return fallback(ep, exc, given)
    return load_or_pass_on


def _pass_on(name: str, how: Loads) -> Callable[[Any, ToolError, Any], Any]:
    """``arguments: dynamic``: the value of an argument its type refused (``exc``) for its
    JSON type: the JSON value itself (a list as the world keeps lists), or for a row the
    row of that key (a key no row has fails with the not-found message)."""
    found = _row_of(how)
    if found is not None:
        return lambda ep, exc, given: found.lookup(ep, foreign(ep, exc, given, name))
    if how.is_list:
        return lambda ep, exc, given: foreign_list(ep, exc, given, name)
    return lambda ep, exc, given: foreign(ep, exc, given, name)
