"""Spec names to Python names: never a keyword, a dunder, or a name the generated code uses."""

from __future__ import annotations

import keyword
import re
from pathlib import PurePath

__all__ = ["py_name", "snake_case", "enum_member", "file_label", "RESERVED", "CLASS_RESERVED"]

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
    "export_state", "copy", "task", "initial", "TypeAlias", "replies",
})

#: Local names of the generated boilerplate (loaders, exporters, helpers) that a class
#: referenced from inside it must not be called.
CLASS_RESERVED = frozenset({
    "x", "p", "k", "d", "data", "path", "cls", "index", "item", "other", "value", "ep", "init",
    "args", "key", "state", "self",
})

#: Attributes of ``enum.StrEnum`` members (str methods and Enum internals, Python 3.11):
#: a member may not shadow them.
_ENUM_RESERVED = frozenset({
    "name", "value", "mro", "capitalize", "casefold", "center", "count", "encode", "endswith",
    "expandtabs", "find", "format", "format_map", "index", "isalnum", "isalpha", "isascii",
    "isdecimal", "isdigit", "isidentifier", "islower", "isnumeric", "isprintable", "isspace",
    "istitle", "isupper", "join", "ljust", "lower", "lstrip", "maketrans", "partition",
    "removeprefix", "removesuffix", "replace", "rfind", "rindex", "rjust", "rpartition",
    "rsplit", "rstrip", "split", "splitlines", "startswith", "strip", "swapcase", "title",
    "translate", "upper", "zfill",
})

_UNDERSCORED = re.compile(r"x*_")


def py_name(name: str) -> str:
    """A safe Python identifier for a spec name (spec names are already identifiers).

    The mapping is injective, so two spec names never become one Python name: a name
    starting with ``_`` (or ``x..._``) gets an ``x`` in front, so no spec name is private,
    mangled or one of the generator's ``_``-names; a keyword, a reserved name or a name
    ending in ``_`` gets an ``_`` at the end (``def`` -> ``def_``, ``def_`` -> ``def__``).
    """
    if _UNDERSCORED.match(name):
        name = "x" + name
    if keyword.iskeyword(name) or keyword.issoftkeyword(name) or name in RESERVED or \
            name.endswith("_"):
        return name + "_"
    return name


def enum_member(name: str) -> str:
    """The Python name of an enum member: like :func:`py_name`, never a ``StrEnum`` attribute."""
    safe = py_name(name)
    return safe + "_" if safe in _ENUM_RESERVED else safe


def snake_case(name: str) -> str:
    """``MobileMessaging`` -> ``mobile_messaging`` (for package names)."""
    out = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    out = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", out)
    out = out.lower()
    return py_name(out) if out else "world"


def file_label(path: str) -> str:
    """A spec file's name for a ``#`` comment: anything unprintable (a newline!) escaped."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
                   for ch in PurePath(path).name)
