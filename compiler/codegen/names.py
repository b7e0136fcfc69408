"""Spec names to Python names: never a keyword, a dunder, or a name the generated code uses."""

from __future__ import annotations

import keyword
import re

__all__ = ["py_name", "snake_case", "RESERVED"]

#: Names the generated modules use for their own purposes.
RESERVED = frozenset({
    "self", "ep", "init", "rt", "v", "dt", "enum", "dataclasses", "Any", "ClassVar", "Mapping",
    "ToolError", "Episode", "Row", "StateBase", "Table", "ToolSpec", "ParamSpec", "TaskSpec",
    "CheckSpec", "annotations", "args", "tuple", "dict", "list", "set", "str", "int", "float",
    "bool", "len", "sum", "min", "max", "sorted", "round", "abs", "all", "any", "isinstance",
    "format", "type", "object", "None", "True", "False", "print", "range", "repr", "iter",
    "next", "super", "getattr", "setattr", "id", "hash", "map", "filter", "zip", "open",
    "eval", "exec", "compile", "globals", "locals", "vars", "input", "key", "export", "clone",
    "load", "digest", "ENTITY", "KEY", "FIELDS", "TAGS", "state", "tables", "clock", "rng",
    "call", "reset", "tools", "snapshot", "restore", "state_hash", "diff", "score",
    "export_state", "copy", "task", "initial",
})


def py_name(name: str) -> str:
    """A safe Python identifier for a spec name (spec names are already identifiers)."""
    if keyword.iskeyword(name) or keyword.issoftkeyword(name) or name in RESERVED:
        return name + "_"
    if name.startswith("__"):
        return "x" + name
    return name


def snake_case(name: str) -> str:
    """``MobileMessaging`` -> ``mobile_messaging`` (for package names)."""
    out = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    out = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", out)
    out = out.lower()
    return py_name(out) if out else "world"
