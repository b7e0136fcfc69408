"""A generated world's tools, declared: the runtime checks each call's argument names.

Part of the contract between generated code and the runtime (see
:mod:`worldspec.runtime.contract`, which this module completes: it needs the episode's
``ToolSpec``, which needs the contract's classes). A generated world declares each tool
with :func:`tool` (in :func:`tools`, its registry): its parameters (:func:`param`, which
say which are required) and the function loading the arguments and calling the tool's
method (``invoke``), or, for a tool without parameters, the method itself. :func:`tool`
builds the check of the arguments' names once: a call whose names fit exactly (all the
required ones, no unknown one, no null for a required one) costs one set comparison; any
other call gets the check that says what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from worldspec.runtime.episode import ParamSpec, ToolSpec
from worldspec.runtime.helpers import check_arguments, check_arguments_python

__all__ = ["param", "tool", "tools", "checked_arguments"]

#: ``invoke(episode, arguments) -> result``
Invoke = Callable[[Any, Mapping[str, Any]], Any]


def param(name: str, schema: dict[str, Any], doc: str = "", *, optional: bool = False,
          table: str | None = None) -> ParamSpec:
    """A tool's parameter: its JSON schema (with ``doc`` as its description), whether a call
    may leave it out (``optional``: it has a default or may be none), and the table whose
    row it names by key (``table``, for an entity)."""
    if doc:
        schema = {**schema, "description": doc}
    return ParamSpec(name, schema, not optional, doc, table=table)


def tool(name: str, doc: str, params: tuple[ParamSpec, ...], *, read_only: bool,
         invoke: Invoke | None = None, method: Callable[[Any], Any] | None = None,
         nullable: tuple[str, ...] = (), python_name: str | None = None,
         **details: Any) -> ToolSpec:
    """The ``ToolSpec`` of a tool whose calls run ``invoke`` (or, for a tool without
    parameters, ``method`` of the episode) once their names are checked.

    ``nullable``: required parameters for which null is a value (``json``), not a gap;
    ``python_name``: with Python's argument rules (``config { arguments: python }``), the
    function name its errors name, and an explicit null is a value."""
    if invoke is None:
        if method is None or params:
            raise TypeError(f"tool {name!r}: give invoke=, or method= for a tool without "
                            "parameters")
        bound = method
        invoke = lambda ep, args: bound(ep)  # noqa: E731
    checked = checked_arguments(invoke, tuple(p.name for p in params),
                                tuple(p.name for p in params if p.required),
                                nullable=nullable, python_name=python_name)
    return ToolSpec(name, doc, params, read_only, checked, **details)


def tools(*specs: ToolSpec) -> dict[str, ToolSpec]:
    """A world's tool registry: its tools by name, in declaration order."""
    return {spec.name: spec for spec in specs}


def checked_arguments(invoke: Invoke, allowed: tuple[str, ...], required: tuple[str, ...], *,
                      nullable: tuple[str, ...] = (), python_name: str | None = None
                      ) -> Invoke:
    """``invoke`` behind the check of the arguments' names (see the module's doc)."""
    if python_name is not None:
        function = python_name

        def slow(args: Mapping[str, Any]) -> None:
            check_arguments_python(args, allowed, required, function)
    else:
        def slow(args: Mapping[str, Any]) -> None:
            check_arguments(args, allowed, required, nullable)
    names, needed = frozenset(allowed), frozenset(required)
    # a null counts as missing unless Python's rules hold
    nulls = python_name is None and bool(required)
    if names == needed and nulls:
        def exact_no_null(ep: Any, args: Mapping[str, Any]) -> Any:
            if not (args.keys() == names and None not in args.values()):
                slow(args)
            return invoke(ep, args)
        return exact_no_null
    if names == needed:
        def exact(ep: Any, args: Mapping[str, Any]) -> Any:
            if not args.keys() == names:
                slow(args)
            return invoke(ep, args)
        return exact
    if nulls:
        def within_no_null(ep: Any, args: Mapping[str, Any]) -> Any:
            if not (names >= args.keys() >= needed and None not in args.values()):
                slow(args)
            return invoke(ep, args)
        return within_no_null

    def within(ep: Any, args: Mapping[str, Any]) -> Any:
        if not names >= args.keys() >= needed:
            slow(args)
        return invoke(ep, args)
    return within
