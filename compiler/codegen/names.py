"""Spec names to Python names: never a keyword, a dunder, or a name the generated code uses."""

from __future__ import annotations

import builtins
import enum
import keyword
import re
import sys
from pathlib import PurePath
from types import ModuleType

from worldspec.runtime import arguments, contract, episode, errors, records, tasks

__all__ = ["py_name", "snake_case", "enum_member", "file_label", "const_name", "RESERVED",
           "member_constant", "union_object",
           "CLASS_RESERVED",
           "GENERATED_NAMES", "RUNTIME_NAMES", "CONTRACT_IMPORTS", "OPTIONAL_IMPORTS",
           "UNION_CLASS", "TASK_REGISTRY", "PACKAGE_TEXT"]

def _imported(module: ModuleType, *names: str) -> tuple[str, tuple[str, ...]]:
    """An import line of the generated module: ``names`` from the runtime's ``module``, each
    one the module exports (its ``__all__``; checked when this module is imported)."""
    missing = [name for name in names if name not in module.__all__]
    if missing:
        raise ImportError(f"{module.__name__} does not export {', '.join(missing)}")
    return module.__name__, names


#: The contract generated code is written against: each ``from worldspec.runtime.X import
#: ...`` line of a generated module, checked against the runtime's own exports, so the
#: names the generator writes are those the runtime gives (one list: the template writes
#: these lines, :data:`GENERATED_NAMES` reserves their names). ``OPTIONAL_IMPORTS`` are
#: written only where a world needs them.
CONTRACT_IMPORTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    _imported(arguments, "param", "tool", "tools"),
    _imported(contract, "enum_text", "enum_value", "field", "optional_text", "state_item"),
    _imported(episode, "Episode", "Row", "StateBase", "Table", "ToolSpec"),
    _imported(errors, "InvariantError", "ToolError"),
    _imported(records, "Record"),
)
#: the class declaring a union, and the function declaring a world's task registry
UNION_CLASS = contract.TaggedUnion.__name__
TASK_REGISTRY = tasks.task_registry.__name__
#: the class declaring a text file of the package (the policy) a class attribute
PACKAGE_TEXT = tasks.PackageText.__name__
#: what a world with unions imports (``union``), one with tasks (``tasks``) and one with its
#: policy in its package (``policy``)
OPTIONAL_IMPORTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "union": _imported(contract, UNION_CLASS),
    "tasks": _imported(tasks, TASK_REGISTRY),
    "policy": _imported(tasks, PACKAGE_TEXT),
}

#: What ``codegen_templates/world.py.jinja`` imports and defines at module level, the
#: runtime names generated code calls, and the locals of its boilerplate. A spec name equal
#: to one would shadow it (an entity called ``InvariantError``). ``tests/test_generated_names.py``
#: compares this with the names the generated modules really use.
GENERATED_NAMES = frozenset({
    # imports and module-level names of the template
    "annotations", "dt", "enum", "Mapping", "Any", "ClassVar", "Self", "TypeAlias", "rt", "v",
    # the modules of the tool registry's argument types and schemas
    "arg", "js", "sh",
    # the names tool methods, invokers and check functions bind around spec code
    "self", "ep", "init", "args", "key", "state", "replies",
}) | frozenset(name for _, names in (*CONTRACT_IMPORTS, *OPTIONAL_IMPORTS.values())
               for name in names)

#: What the runtime's base classes define on a generated class or its instances (a field
#: named ``JSON_FIELDS`` or ``clone`` would replace it), and ``type``'s own attributes that
#: a class attribute may not hide (``mro``); the battery test checks this against
#: ``dir(Row)``.
RUNTIME_NAMES = frozenset({
    "ENTITY", "KEY", "JSON_FIELDS", "FIELDS", "FIELD_TABLE", "DECLARED_FIELDS", "key", "export",
    "clone", "digest",
    "load",
    "WORLD", "DESCRIPTION", "POLICY", "RESULTS", "CLOCK", "TICK", "SEED", "TABLES", "TOOLS",
    "TASKS", "TAGS", "mro",
    "PRIVATE",
    # attributes of the episode the generated code reads
    "tables", "clock", "rng", "call", "reset", "tools", "snapshot", "restore", "state_hash",
    "diff", "score", "export_state", "copy", "task", "initial",
})

#: Every name a spec name may not become: Python's keywords and builtins, and the two sets
#: above. :func:`py_name` escapes these by appending ``_``.
RESERVED = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | \
    frozenset(dir(builtins)) | GENERATED_NAMES | RUNTIME_NAMES

#: Local names of the generated boilerplate (loaders, exporters, helpers) that a class
#: referenced from inside it must not be called.
CLASS_RESERVED = frozenset({
    "x", "p", "k", "d", "data", "path", "cls", "index", "item", "other", "value", "ep", "init",
    "args", "key", "state", "self",
})

#: Attributes of ``enum.StrEnum`` members and classes (str methods, Enum internals,
#: ``type``'s): a member may not shadow them.
_ENUM_RESERVED = frozenset(name for name in dir(enum.StrEnum) if not name.startswith("_")) | \
    frozenset({"name", "value", "mro"})

#: Top-level modules a generated package must not be named like: it would shadow them
#: for whoever puts the output folder on ``sys.path`` (and ``mypy`` refuses it).
_PACKAGE_RESERVED = frozenset(sys.stdlib_module_names) | {"worldspec", "generated", "tests"}

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


def const_name(name: str) -> str:
    """The module-level Python name of a spec ``const``: ``_C_`` and the escaped name (no spec
    name becomes a ``_``-name, so this never meets one)."""
    return "_C_" + py_name(name)


def enum_member(name: str) -> str:
    """The Python name of an enum member: like :func:`py_name`, never a ``StrEnum`` attribute."""
    safe = py_name(name)
    return safe + "_" if safe in _ENUM_RESERVED else safe


def union_object(union: str) -> str:
    """The module-level name of a union's declaration (``worldspec.runtime.contract``'s
    ``TaggedUnion``, whose ``load``, ``export``, ``text``, ``tag``, ``holds`` and ``some``
    generated code calls): ``_UNION_`` and the spec name (no spec name starts with ``_``)."""
    return "_UNION_" + union


def member_constant(cls: str, member: str) -> str:
    """The module constant holding an enum member: ``_E<len>_<class>_<member>`` (the length
    keeps ``A`` + ``b_c`` and ``A_b`` + ``c`` apart; no spec name starts with ``_``)."""
    return f"_E{len(cls)}_{cls}_{member}"


def snake_case(name: str) -> str:
    """``MobileMessaging`` -> ``mobile_messaging`` (for package names); never the name of
    a standard library module (a world ``Json`` gives ``json_``)."""
    out = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    out = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", out)
    out = out.lower()
    if not out:
        return "world"
    safe = py_name(out)
    return safe + "_" if safe in _PACKAGE_RESERVED else safe


def file_label(path: str) -> str:
    """A spec file's name for a ``#`` comment: anything unprintable (a newline!) escaped."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
                   for ch in PurePath(path).name)
