"""Read a Python environment class with libcst and write a WorldSpec skeleton for it.

The class is read, never imported or run: libcst gives its structure (attributes assigned on
``self`` in ``__init__`` and in a load method, public methods with their parameters, type
hints, defaults, docstrings, and the dict literals they return); initial values are folded
from literals only (module-level constant dicts, ``deepcopy(...)``, ``x.get("k", default)``,
``CONST["k"]``), with :func:`ast.literal_eval`-style evaluation that runs nothing.

The skeleton (:func:`emit_skeleton`) holds:

- a ``world`` header named after the class, with its docstring;
- ``config { results: ... }``: ``envscaler`` when every result dict is
  ``{"success": True, "data": ...}`` or ``{"success": False, "error": ...}`` and no method
  changes state before returning an error (the world's failures roll back, the original's
  do not), otherwise ``bfcl`` (results are returned as they are);
- one state item per public attribute, typed from its annotation, its initial value and the
  sample data; a dict of dicts becomes a ``map`` of a record, or a ``table`` of an entity
  when every row holds its own key;
- one tool per public method: the parameters with their types, defaults and the docs of the
  docstring's ``Args:`` (or ``:param x:``) section, the description, ``-> json``, and a body
  that fails with ``not ported yet`` (the translation step fills it in), preceded by a
  comment listing the result shapes the original returns.

Every type comes from a table (:data:`SIMPLE_TYPES`); what cannot be typed is ``json``. The
skeleton is checked with the compiler and any state item or parameter the compiler refuses is
widened to ``json``, so the skeleton checks clean.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst

from worldspec.port.changes import changing_methods, error_after_change

__all__ = ["CUT_MARKER", "LOAD_METHODS", "AttributeInfo", "ClassInfo", "MethodInfo",
           "ModuleName", "ModuleSource", "ParamInfo", "PortInputError", "Skeleton", "emit_skeleton",
           "imported_definition", "list_classes", "module_finder", "read_class",
           "resolved_load", "worldspec_literal"]


class PortInputError(Exception):
    """The Python file cannot be read as a class to port; the message says why."""


_UNKNOWN = object()

#: Python annotation name -> WorldSpec type. Python's ``float`` hint takes an int and keeps
#: it an int (``amount: float`` called with ``12346`` stores ``12346``), as ``number`` does; the
#: world's ``float`` would widen it to ``12346.0``, which the exact comparison tells apart
SIMPLE_TYPES: dict[str, str] = {"str": "str", "int": "int", "float": "number", "bool": "bool",
                                "Any": "json", "object": "json", "dict": "map[str, json]",
                                "Dict": "map[str, json]", "list": "list[json]",
                                "List": "list[json]", "set": "list[json]", "Set": "list[json]",
                                "tuple": "list[json]", "Tuple": "list[json]"}
_SCALARS = ("str", "int", "float", "bool")
_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Returns?|Raises|Yields|"
                      r"Examples?|Notes?|Attributes|Methods)\s*:\s*$")
_GOOGLE_ARG = re.compile(r"^\s*\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_ARG = re.compile(r"^\s*:param\s+(?:[^:]*\s)?([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$")
_KEYWORDS = {"key", "all", "any", "exists", "nothing"}


@dataclass
class ParamInfo:
    name: str
    annotation: str | None
    default: str | None
    doc: str = ""


@dataclass
class MethodInfo:
    name: str
    params: list[ParamInfo]
    returns: str | None
    doc: str
    #: the string keys of each dict literal the method returns, in order
    result_keys: list[tuple[str, ...]] = field(default_factory=list)
    #: whether it returns an error dict after changing ``self`` state
    error_after_change: bool = False
    raises: bool = False
    source: str = ""
    line: int = 0
    #: the module-level names the body uses, in the module's order (see :class:`ModuleName`)
    module_names: list[ModuleName] = field(default_factory=list)


@dataclass(frozen=True)
class ModuleName:
    """A name defined outside the class, at the module's top level, that a method uses.

    ``kind`` is ``"assignment"`` (``code`` is the statement), ``"import"`` (``code`` is the
    import of this one name: its value is in another module), ``"function"`` or ``"class"``
    (``code`` is the definition).

    For an import from a module whose file is found (beside the class's file, as
    :func:`module_finder` looks), the name's definition there, read with :mod:`ast` (nothing
    is imported or run): ``value`` when it is a plain assignment of a literal (``has_value``),
    else ``definition``, the source of the assignment, function or class.
    """

    name: str
    kind: str
    code: str
    has_value: bool = False
    value: Any = None
    definition: str = ""


@dataclass
class AttributeInfo:
    name: str
    annotation: str | None = None
    value: Any = _UNKNOWN
    #: the classes of the module whose objects it holds (an object graph), if any
    objects: tuple[str, ...] = ()
    #: those of ``objects`` without a ``__repr__`` of their own (their repr() holds a memory
    #: address, different in every run)
    addressed: tuple[str, ...] = ()
    #: the code the load method sets it with, when that is not the data's value of the same
    #: name (``self.cwd_path = self._cwd.path()``, ``self.balance = data["start"]``)
    derived: str = ""

    @property
    def known(self) -> bool:
        return self.value is not _UNKNOWN


@dataclass
class ClassInfo:
    name: str
    doc: str
    attributes: dict[str, AttributeInfo]
    methods: list[MethodInfo]
    load_method: str | None
    source: str
    #: the literal seed of a ``random.Random(seed)`` the class keeps, if any
    seed: int | None = None
    #: the base classes whose source was found: (name, the import that brought it, or ""
    #: for one of the same file, source)
    bases: list[tuple[str, str, str]] = field(default_factory=list)
    #: the module-level names the class reads anywhere (its methods, ``__init__``, its
    #: body, its base classes of the same file), with those their definitions read
    module_names: list[ModuleName] = field(default_factory=list)

    @property
    def convention(self) -> str:
        """``envscaler`` or ``bfcl`` (see the module docstring)."""
        shapes = [keys for m in self.methods for keys in m.result_keys]
        if not shapes or not any("success" in keys for keys in shapes):
            return "bfcl"
        wrapped = all(set(keys) in ({"success", "data"}, {"success", "error"})
                      for keys in shapes)
        if wrapped and not any(m.error_after_change for m in self.methods):
            return "envscaler"
        return "bfcl"


# ------------------------------------------------------------------ reading
def _parse(source: str, filename: str) -> cst.Module:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise PortInputError(f"{filename}:{exc.raw_line}:{exc.raw_column}: not valid Python: "
                             f"{exc.message}") from None


def list_classes(source: str, filename: str = "<source>") -> list[str]:
    """The names of the classes defined at the top level of ``source``."""
    module = _parse(source, filename)
    return [s.name.value for s in module.body if isinstance(s, cst.ClassDef)]


#: finds the source of an imported module, by the dotted name in its import (``base``,
#: ``.base``, ``pkg.base``); None when it cannot be found
ModuleSource = Callable[[str], "str | None"]


@dataclass(frozen=True)
class _Owned:
    """A method, with the module its source is in (a base class may be in another file)."""

    module: cst.Module
    function: cst.FunctionDef


@dataclass(frozen=True)
class _ClassFound:
    """A class in the inheritance chain, with its module and where it came from."""

    module: cst.Module
    node: cst.ClassDef
    #: the import that brought it, for a base class from another module ("" in this file)
    origin: str = ""


#: the largest module file read for a base class
_MODULE_BYTES = 2_000_000


def module_finder(file: Path) -> ModuleSource:
    """Finds an imported module's source beside ``file``: ``.base`` (and ``..pkg.base``)
    relative to its folder as Python would, ``base`` or ``pkg.base`` in its folder (a
    sibling module) or from the folder above each package ``file`` is in (``pkg.sub.base``
    for a file of ``pkg/sub/``, as an installed package imports its own modules), as
    ``NAME.py`` or ``NAME/__init__.py``. Nothing is imported."""
    roots = [file.parent]
    while (roots[-1] / "__init__.py").is_file() and len(roots) < 20:
        roots.append(roots[-1].parent)

    def find(name: str) -> str | None:
        dots = len(name) - len(name.lstrip("."))
        folder = file.parent
        for _ in range(max(dots - 1, 0)):
            folder = folder.parent
        parts = [p for p in name.lstrip(".").split(".") if p]
        if not parts:
            return None
        folders = [folder] if dots else roots
        for candidate in [c for f in folders for c in (f.joinpath(*parts).with_suffix(".py"),
                                                       f.joinpath(*parts, "__init__.py"))]:
            try:
                if candidate.is_file() and candidate.stat().st_size <= _MODULE_BYTES:
                    return candidate.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
        return None

    return find


def read_class(source: str, class_name: str | None = None, filename: str = "<source>",
               module_source: ModuleSource | None = None, load: str | None = "auto"
               ) -> ClassInfo:
    """What :func:`emit_skeleton` needs to know about one class of ``source``.

    ``load`` says how the original takes its data, as ``--load`` does: ``"auto"`` (the first
    of :data:`LOAD_METHODS` the class has), a method name, or ``"__init__"``,
    ``"attributes"`` or None (no load method). The state is read from ``__init__`` and the
    load method, and the load method is never a tool.

    Base classes defined in the same file, or imported from a module ``module_source`` finds,
    are read too: their public methods become tools (unless the class overrides them) and
    their source goes to the model.
    """
    module = _parse(source, filename)
    classes = {s.name.value: s for s in module.body if isinstance(s, cst.ClassDef)}
    if class_name is None:
        if len(classes) != 1:
            names = ", ".join(sorted(classes)) or "none"
            raise PortInputError(f"{filename} defines {len(classes)} classes ({names}): name "
                                 "one with --class")
        class_name = next(iter(classes))
    node = classes.get(class_name)
    if node is None:
        names = ", ".join(sorted(classes)) or "none"
        raise PortInputError(f"{filename} has no top-level class {class_name} (classes: "
                             f"{names})")
    constants = _module_constants(module)
    module_source = _remembered(module_source)
    chain = _class_chain(_ClassFound(module, node), module_source)
    own_init = next((s for s in node.body.body if isinstance(s, cst.FunctionDef)
                     and s.name.value == "__init__"), None)
    functions: dict[str, _Owned] = {}
    for found in reversed(chain):  # the most basic first, so overrides win
        for statement in found.node.body.body:
            if isinstance(statement, cst.FunctionDef):
                functions[statement.name.value] = _Owned(found.module, statement)
    attributes: dict[str, AttributeInfo] = {}
    for found in reversed(chain):  # class-level annotations: ``count: int = 0``
        if found.node is not node and not _inherits_init(found, own_init, module):
            continue
        found_constants = constants if found.module is module else \
            _module_constants(found.module)
        for statement in found.node.body.body:
            for small in _smalls(statement):
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    name = small.target.value
                    if not name.startswith("_"):
                        info = attributes.setdefault(name, AttributeInfo(name))
                        info.annotation = found.module.code_for_node(
                            small.annotation.annotation)
                        if small.value is not None:
                            info.value = _fold(found.module.code_for_node(small.value),
                                               found_constants, {})
    load = _load_method(functions, load)
    makers = _object_makers(module, {f.node.name.value for f in chain})
    for found in reversed(chain):
        if found.node is not node and not _inherits_init(found, own_init, module):
            continue
        found_constants = constants if found.module is module else \
            _module_constants(found.module)
        for statement in found.node.body.body:
            if isinstance(statement, cst.FunctionDef) and \
                    statement.name.value in ("__init__", load):
                loads = statement.name.value == load or (
                    load is None and _data_parameter(statement) is not None)
                _collect_attributes(found.module, statement, found_constants, attributes,
                                    makers if found.module is module else {}, loads)
    changing = changing_methods({name: owned.function for name, owned in functions.items()})
    methods = [_method(owned.module, owned.function, changing)
               for name, owned in functions.items()
               if not name.startswith("_") and name != load]
    definitions = _resolved_imports(_module_definitions(module, class_name), module_source)
    for method in methods:
        used = _names_used(method.name, functions, module)
        method.module_names = _with_dependencies(definitions, used)
    bases = [(f.node.name.value, f.origin, f.module.code_for_node(f.node).strip())
             for f in chain[1:]]
    read = set().union(*(_reads(f.node) for f in chain if f.module is module)) \
        - {f.node.name.value for f in chain}
    shown = _classes_with_a_repr(module)
    for attribute in attributes.values():
        attribute.addressed = tuple(c for c in attribute.objects if c not in shown)
    return ClassInfo(class_name, node.get_docstring() or "", attributes, methods, load,
                     module.code_for_node(node), _random_seed(module, node, constants),
                     bases, _with_dependencies(definitions, read))


#: the names a load method goes by, in the order ``--load auto`` looks for them
LOAD_METHODS = ("_load_scenario", "load_scenario", "_load", "load_state", "load")
#: ``--load`` values that name no method (the constructor takes the data, or nothing does)
_NO_LOAD_METHOD = ("__init__", "attributes", "none", None)


def _load_method(functions: Mapping[str, _Owned], load: str | None) -> str | None:
    if load == "auto":
        return next((name for name in LOAD_METHODS if name in functions), None)
    return load if load not in _NO_LOAD_METHOD and load in functions else None


def resolved_load(info: ClassInfo, load: str | None) -> str | None:
    """The ``--load`` value that builds the original from the method the skeleton read the
    state from: ``"auto"`` becomes that method's name (``load_state``), so the sandbox calls
    it and the differential test does not take it for a tool; any other value stays."""
    return info.load_method if load == "auto" and info.load_method else load


def _base_names(node: cst.ClassDef) -> list[str]:
    return [b.value.value for b in node.bases
            if b.keyword is None and isinstance(b.value, cst.Name)]


def _class_chain(start: _ClassFound, module_source: ModuleSource | None) -> list[_ClassFound]:
    """``start`` and the base classes whose source is found (same file, or an imported
    module ``module_source`` finds), depth first, each once."""
    chain = [start]
    todo = [start]
    while todo and len(chain) < 20:
        current = todo.pop(0)
        local = {s.name.value: s for s in current.module.body if isinstance(s, cst.ClassDef)}
        imports = _imported_from(current.module)
        for base in _base_names(current.node):
            found: _ClassFound | None = None
            if base in local and local[base] is not current.node:
                found = _ClassFound(current.module, local[base], current.origin)
            elif base in imports and module_source is not None:
                origin, name = imports[base]
                text = module_source(origin)
                other = _parse_quietly(text) if text is not None else None
                node = next((s for s in other.body if isinstance(s, cst.ClassDef)
                             and s.name.value == name), None) if other is not None else None
                if other is not None and node is not None:
                    found = _ClassFound(other, node, f"from {origin} import {name}")
            if found is not None and all(f.node is not found.node for f in chain):
                chain.append(found)
                todo.append(found)
    return chain


def _parse_quietly(source: str) -> cst.Module | None:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError:
        return None


def _from_import_names(module: cst.Module, small: cst.ImportFrom
                       ) -> list[tuple[str, str, str, bool]]:
    """``(module, name, local name, renamed)`` for each name of ``from M import name [as
    local]`` (none for ``import *``)."""
    if isinstance(small.names, cst.ImportStar):
        return []
    origin = "." * len(small.relative) + (
        module.code_for_node(small.module) if small.module is not None else "")
    out = []
    for alias in small.names:
        imported = module.code_for_node(alias.name)
        out.append((origin, imported, alias.evaluated_alias or imported,
                    alias.asname is not None))
    return out


def _imported_from(module: cst.Module) -> dict[str, tuple[str, str]]:
    """Local name -> (module, name) for each ``from M import name [as local]``."""
    return {local: (origin, imported)
            for statement in module.body for small in _smalls(statement)
            if isinstance(small, cst.ImportFrom)
            for origin, imported, local, _ in _from_import_names(module, small)}


def _inherits_init(base: _ClassFound, own_init: cst.FunctionDef | None,
                   module: cst.Module) -> bool:
    """Whether the class's instances get ``base``'s attributes: it has no ``__init__`` of its
    own, or its ``__init__`` calls ``super().__init__`` or ``Base.__init__``."""
    if own_init is None:
        return True
    code = module.code_for_node(own_init)
    return "super().__init__" in code or f"{base.node.name.value}.__init__" in code


class _SeedFinder(cst.CSTVisitor):
    """The first ``Random(<literal>)`` (or ``Random(x.get("k", <literal>))``) in a class."""

    def __init__(self, module: cst.Module, constants: Mapping[str, Any]) -> None:
        self.module = module
        self.constants = constants
        self.seed: int | None = None
        #: names assigned in the methods (``DEFAULT_COPY = deepcopy(DEFAULT)``)
        self.local: dict[str, Any] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                value = _fold(self.module.code_for_node(node.value), self.constants, self.local)
                if value is not _UNKNOWN:
                    self.local[target.target.value] = value

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else \
            func.value if isinstance(func, cst.Name) else ""
        if name != "Random" or len(node.args) != 1 or self.seed is not None:
            return
        value = _fold(self.module.code_for_node(node.args[0].value), self.constants,
                      self.local)
        if isinstance(value, int) and not isinstance(value, bool):
            self.seed = value


def _random_seed(module: cst.Module, node: cst.ClassDef, constants: Mapping[str, Any]
                 ) -> int | None:
    finder = _SeedFinder(module, constants)
    node.visit(finder)
    return finder.seed


def _module_constants(module: cst.Module) -> dict[str, Any]:
    constants: dict[str, Any] = {}
    for statement in module.body:
        for small in _smalls(statement):
            target: cst.BaseExpression | None = None
            value: cst.BaseExpression | None = None
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target, value = small.targets[0].target, small.value
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                target, value = small.target, small.value
            if isinstance(target, cst.Name) and value is not None:
                folded = _fold(module.code_for_node(value), constants, {})
                if folded is not _UNKNOWN:
                    constants[target.value] = folded
    return constants


#: the longest module-level statement shown to the model in full (longer ones are cut, and
#: say so). Functions and classes are code the model must reproduce (a helper class's
#: ``__repr__`` is what compare sees of its objects), so they are shown whole up to a far
#: larger size than an assignment, whose literal value is shown bounded as data is instead.
MODULE_CODE_LIMIT = 1500
DEFINITION_LIMIT = 24000


#: ends a module-level statement too long to show whole
CUT_MARKER = "\n# ... (cut: the rest of this definition is not shown)"


def _clip(code: str, limit: int = MODULE_CODE_LIMIT) -> str:
    code = code.strip()
    if len(code) <= limit:
        return code
    return code[:limit].rstrip() + CUT_MARKER


def _literal(module: cst.Module, value: cst.BaseExpression | None) -> tuple[bool, Any]:
    """``(True, the value)`` when ``value`` is a plain literal (read with
    :func:`ast.literal_eval`, nothing run), else ``(False, None)``."""
    if value is None:
        return False, None
    try:
        return True, ast.literal_eval(module.code_for_node(value).strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _module_definitions(module: cst.Module, class_name: str
                        ) -> list[tuple[ModuleName, frozenset[str]]]:
    """The module's top-level names other than the class, with the code defining each and
    the names that code reads (a helper function's constants, a constant's imports)."""
    out: list[tuple[ModuleName, frozenset[str]]] = []
    for statement in module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            if statement.name.value != class_name:
                kind = "function" if isinstance(statement, cst.FunctionDef) else "class"
                out.append((ModuleName(statement.name.value, kind,
                                       _clip(module.code_for_node(statement),
                                             DEFINITION_LIMIT)),
                            _reads(statement)))
            continue
        for small in _smalls(statement):
            if isinstance(small, (cst.Assign, cst.AnnAssign)):
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) \
                    else [small.target]
                code = _clip(module.code_for_node(small))
                reads = _reads(small.value) if small.value is not None else frozenset()
                names = [name for target in targets for name in _target_names(target)]
                # one plain name bound to a literal: its value, shown bounded as data is
                has_value, value = _literal(module, small.value) if len(names) == 1 \
                    else (False, None)
                for name in names:
                    out.append((ModuleName(name, "assignment", code, has_value=has_value,
                                           value=value), reads))
            elif isinstance(small, cst.ImportFrom):
                for origin, imported, local, renamed in _from_import_names(module, small):
                    as_text = f" as {local}" if renamed else ""
                    out.append((ModuleName(local, "import",
                                           f"from {origin} import {imported}{as_text}"),
                                frozenset()))
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    imported = module.code_for_node(alias.name)
                    local = alias.evaluated_alias or imported.split(".")[0]
                    as_text = f" as {local}" if alias.asname is not None else ""
                    out.append((ModuleName(local, "import", f"import {imported}{as_text}"),
                                frozenset()))
    return out


def _resolved_imports(definitions: list[tuple[ModuleName, frozenset[str]]],
                      module_source: ModuleSource | None
                      ) -> list[tuple[ModuleName, frozenset[str]]]:
    """``definitions`` with each ``from M import name`` whose module ``module_source`` finds
    given the name's value or source there (:func:`imported_definition`)."""
    if module_source is None:
        return definitions
    out: list[tuple[ModuleName, frozenset[str]]] = []
    for definition, reads in definitions:
        match = _FROM_IMPORT.fullmatch(definition.code)
        if definition.kind == "import" and match is not None:
            origin, imported = match.group(1), match.group(2)
            text = module_source(origin)
            found = imported_definition(text, imported) if text is not None else None
            if found is not None:
                has_value, value, code = found
                definition = ModuleName(definition.name, definition.kind, definition.code,
                                        has_value, value, code)
        out.append((definition, reads))
    return out


def _remembered(module_source: ModuleSource | None) -> ModuleSource | None:
    """``module_source`` asking for each module once."""
    if module_source is None:
        return None
    texts: dict[str, str | None] = {}

    def find(name: str) -> str | None:
        if name not in texts:
            texts[name] = module_source(name)
        return texts[name]

    return find


_FROM_IMPORT = re.compile(r"from (\S+) import (\w+)(?: as \w+)?")


def imported_definition(module_text: str, name: str) -> tuple[bool, Any, str] | None:
    """How ``module_text`` defines the top-level ``name``: ``(True, value, "")`` for a plain
    assignment of a literal (``X = [...]``, read with :func:`ast.literal_eval`), ``(False,
    None, source)`` for another assignment, a function or a class; None when it has no such
    definition (or cannot be parsed). Nothing is imported or run."""
    try:
        tree = ast.parse(module_text)
    except (SyntaxError, ValueError):
        return None
    found: tuple[bool, Any, str] | None = None
    for statement in tree.body:  # the last definition wins, as when the module runs
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if statement.name == name:
                found = (False, None, _clip(ast.get_source_segment(module_text, statement,
                                                                   padded=True) or ""))
            continue
        if isinstance(statement, ast.Assign):
            targets, value_node = list(statement.targets), statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value_node = [statement.target], statement.value
        else:
            continue
        if not any(isinstance(t, ast.Name) and t.id == name for t in targets):
            continue
        try:
            found = (True, ast.literal_eval(value_node), "")
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            found = (False, None, _clip(ast.get_source_segment(module_text, statement) or ""))
    return found


def _reads(node: cst.CSTNode) -> frozenset[str]:
    """The bare names a piece of code reads (attribute names left out: ``math.pi`` reads
    ``math``)."""
    visitor = _NamesUsed()
    node.visit(visitor)
    return frozenset(visitor.names)


def _with_dependencies(definitions: list[tuple[ModuleName, frozenset[str]]],
                       used: set[str]) -> list[ModuleName]:
    """The definitions of the names in ``used``, and of the names those read, and so on, in
    the module's order."""
    wanted = set(used)
    todo = list(used)
    while todo:
        name = todo.pop()
        for definition, reads in definitions:
            if definition.name == name:
                for other in reads - wanted:
                    wanted.add(other)
                    todo.append(other)
    return [d for d, _ in definitions if d.name in wanted]


def _target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    return []


class _NamesUsed(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()
        #: methods called on ``self`` (``self._stamp()``)
        self.methods: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Annotation(self, node: cst.Annotation) -> bool:
        return False  # a type hint is not a value the code reads (``Dict[str, Any]``)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if _is_self(node.value):
            self.methods.add(node.attr.value)
        node.value.visit(self)  # ``CONST.x`` uses CONST; ``self.x`` uses no module name x
        return False


def _names_used(method: str, functions: Mapping[str, _Owned], module: cst.Module
                ) -> set[str]:
    """The bare names a method's body reads (its parameters and ``self`` excluded), in
    nested functions, lambdas and comprehensions too, and those of the methods it calls or
    reads on ``self`` (``self._stamp()``, ``self.helper``), and theirs. Methods of a base
    class from another module read that module's names, not this one's: left out."""
    names: set[str] = set()
    todo, done = [method], set()
    while todo:
        current = functions[todo.pop()]
        done.add(current.function.name.value)
        visitor = _NamesUsed()
        current.function.body.visit(visitor)
        params = {p.name.value for p in [*current.function.params.posonly_params,
                                         *current.function.params.params,
                                         *current.function.params.kwonly_params]}
        if current.module is module:
            names |= visitor.names - params - {"self", "cls"}
        todo += [m for m in sorted(visitor.methods)
                 if m in functions and m not in done and m not in todo]
    return names


def _smalls(statement: cst.CSTNode) -> tuple[cst.BaseSmallStatement, ...]:
    """The small statements of a simple statement line (none for a compound statement)."""
    return tuple(statement.body) if isinstance(statement, cst.SimpleStatementLine) else ()


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def _object_makers(module: cst.Module, own: set[str]) -> dict[str, tuple[str, ...]]:
    """The module's classes (other than ``own``) and the functions that build their objects,
    each with the module classes whose objects it makes or links (``Folder`` -> Folder;
    ``_build`` -> Folder, Document). A function builds objects when its return annotation
    names a module class or it returns ``Cls(...)``."""
    classes = {s.name.value for s in module.body if isinstance(s, cst.ClassDef)} - own
    makers: dict[str, tuple[str, ...]] = {}
    for statement in module.body:
        if isinstance(statement, cst.ClassDef) and statement.name.value in classes:
            linked = _reads(statement.body) & classes | {statement.name.value}
            makers[statement.name.value] = tuple(sorted(linked))
        elif isinstance(statement, cst.FunctionDef):
            returned = _reads(statement.returns.annotation) if statement.returns is not None \
                else frozenset()
            finder = _ReturnedCalls()
            statement.body.visit(finder)
            if (returned | finder.names) & classes:
                linked = (_reads(statement) | returned) & classes
                makers[statement.name.value] = tuple(sorted(linked))
    return makers


def _classes_with_a_repr(module: cst.Module) -> set[str]:
    """The module's classes with a ``__repr__`` of their own (a dataclass has one)."""
    out: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.ClassDef):
            continue
        decorated = any("dataclass" in module.code_for_node(d.decorator)
                        for d in statement.decorators)
        if decorated or any(isinstance(s, cst.FunctionDef) and s.name.value == "__repr__"
                            for s in statement.body.body):
            out.add(statement.name.value)
    return out


class _ReturnedCalls(cst.CSTVisitor):
    """The names called in a ``return NAME(...)`` of a function."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Return(self, node: cst.Return) -> None:
        if isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Name):
            self.names.add(node.value.func.value)


class _CalledNames(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self.names.add(node.func.value)


def _objects_built(value: cst.BaseExpression, makers: Mapping[str, tuple[str, ...]]
                   ) -> tuple[str, ...]:
    """The module classes whose objects ``value`` builds (``Folder("")``, ``_build(...)``,
    ``{k: User(**u) for ...}``)."""
    calls = _CalledNames()
    value.visit(calls)
    return tuple(sorted({c for name in calls.names & set(makers) for c in makers[name]}))


class _DataKeys(cst.CSTVisitor):
    """The string keys read from the data parameter: ``data["k"]``, ``data.get("k", ...)``."""

    def __init__(self, data: str) -> None:
        self.data = data
        self.keys: set[str] = set()

    def _key(self, node: cst.BaseExpression) -> None:
        if isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str):
            self.keys.add(node.evaluated_value)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == self.data \
                and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            self._key(node.slice[0].slice.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "get" and node.args \
                and isinstance(func.value, cst.Name) and func.value.value == self.data:
            self._key(node.args[0].value)


def _data_parameter(function: cst.FunctionDef) -> str | None:
    """The parameter a load method (or a constructor that loads) takes the data in."""
    names = [p.name.value for p in function.params.params]
    return names[1] if len(names) > 1 and names[0] == "self" else None


def _collect_attributes(module: cst.Module, function: cst.FunctionDef,
                        constants: Mapping[str, Any], out: dict[str, AttributeInfo],
                        makers: Mapping[str, tuple[str, ...]], loads: bool = False) -> None:
    """The attributes ``function`` sets; ``loads`` when it is the one that takes the data
    (the load method, or a constructor with a data parameter)."""
    data = _data_parameter(function) if loads else None
    read = _DataKeys(data or "")
    function.body.visit(read)  # the data's keys the whole method reads, branches too
    # a parameter with a literal default stands for that default (``long_context=False``)
    local: dict[str, Any] = {}
    for param in [*function.params.params, *function.params.kwonly_params]:
        if param.default is not None:
            value = _fold(module.code_for_node(param.default), constants, {})
            if value is not _UNKNOWN:
                local[param.name.value] = value
    for statement in function.body.body:
        for small in _smalls(statement):
            pairs: list[tuple[cst.BaseExpression, cst.BaseExpression | None, str | None]] = []
            if isinstance(small, cst.Assign):
                pairs = [(t.target, small.value, None) for t in small.targets]
            elif isinstance(small, cst.AnnAssign):
                pairs = [(small.target, small.value,
                          module.code_for_node(small.annotation.annotation))]
            for target, value, annotation in pairs:
                code = module.code_for_node(value) if value is not None else None
                if isinstance(target, cst.Name) and code is not None:
                    local[target.value] = _fold(code, constants, local)
                if not (isinstance(target, cst.Attribute) and _is_self(target.value)):
                    continue
                name = target.attr.value
                if name.startswith("_"):
                    continue
                info = out.setdefault(name, AttributeInfo(name))
                if annotation is not None and info.annotation is None:
                    info.annotation = annotation
                if value is not None:
                    info.objects = tuple(sorted({*info.objects,
                                                 *_objects_built(value, makers)}))
                folded = _fold(code, constants, local) if code is not None else _UNKNOWN
                if folded is not _UNKNOWN:
                    info.value = folded
                if data is not None and value is not None and not info.objects \
                        and not (isinstance(value, cst.Name) and value.value == data):
                    keys = _DataKeys(data)
                    value.visit(keys)
                    derived = name not in read.keys and (folded is _UNKNOWN or keys.keys)
                    info.derived = _doc(code or "", 120) if derived else ""


def _fold(code: str, constants: Mapping[str, Any], local: Mapping[str, Any]) -> Any:
    """The value of an expression built from literals and known names, or ``_UNKNOWN``.

    Nothing is evaluated: the expression is parsed and only literals, known names,
    ``deepcopy``/``dict``/``list``/``set`` copies, subscripts and ``.get(k, default)`` on
    unknown mappings are folded.
    """
    try:
        tree = ast.parse(code.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return _UNKNOWN
    try:
        return _fold_node(tree, constants, local, 0)
    except (TypeError, KeyError, IndexError, ValueError, RecursionError):
        return _UNKNOWN


def _fold_node(node: ast.expr, constants: Mapping[str, Any], local: Mapping[str, Any],
               depth: int) -> Any:
    if depth > 40:
        return _UNKNOWN

    def fold(child: ast.expr) -> Any:
        return _fold_node(child, constants, local, depth + 1)

    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [fold(e) for e in node.elts]
        if any(i is _UNKNOWN for i in items):
            return _UNKNOWN
        return set(items) if isinstance(node, ast.Set) else list(items)
    if isinstance(node, ast.Dict):
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                return _UNKNOWN
            key, value = fold(k), fold(v)
            if key is _UNKNOWN or value is _UNKNOWN:
                return _UNKNOWN
            out[key] = value
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = fold(node.operand)
        return -value if isinstance(value, (int, float)) else _UNKNOWN
    if isinstance(node, ast.Name):
        if node.id in local:
            return local[node.id]
        return constants.get(node.id, _UNKNOWN)
    if isinstance(node, ast.Subscript):
        base, index = fold(node.value), fold(node.slice)
        if base is _UNKNOWN or index is _UNKNOWN:
            return _UNKNOWN
        return base[index]
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else \
            func.id if isinstance(func, ast.Name) else ""
        if name == "get" and isinstance(func, ast.Attribute) and len(node.args) == 2:
            base = fold(func.value)
            if base is _UNKNOWN:  # scenario.get("x", DEFAULT["x"]): the default
                return fold(node.args[1])
            key = fold(node.args[0])
            return base.get(key, fold(node.args[1])) if isinstance(base, dict) else _UNKNOWN
        if name in ("deepcopy", "copy", "dict", "list", "set") and len(node.args) <= 1:
            if not node.args:
                return {"dict": {}, "list": [], "set": set()}.get(name, _UNKNOWN)
            value = fold(node.args[0])
            if value is _UNKNOWN:
                return _UNKNOWN
            converted: Any = {"dict": dict, "list": list, "set": set}.get(name, lambda x: x)
            return converted(value)
    return _UNKNOWN


class _BodyFacts(cst.CSTVisitor):
    """The dict literals a method returns and whether it raises."""

    def __init__(self) -> None:
        self.result_keys: list[tuple[str, ...]] = []
        self.raises = False

    def visit_Raise(self, node: cst.Raise) -> None:
        self.raises = True

    def visit_Return(self, node: cst.Return) -> None:
        if not isinstance(node.value, cst.Dict):
            return
        keys = tuple(e.key.evaluated_value for e in node.value.elements
                     if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                     and isinstance(e.key.evaluated_value, str))
        self.result_keys.append(keys)


def _method(module: cst.Module, function: cst.FunctionDef,
            changing: frozenset[str] = frozenset()) -> MethodInfo:
    raw_doc = function.get_docstring() or ""
    description, param_docs = _split_docstring(raw_doc)
    params: list[ParamInfo] = []
    for p in [*function.params.posonly_params, *function.params.params,
              *function.params.kwonly_params]:
        if p.name.value in ("self", "cls"):
            continue
        params.append(ParamInfo(
            p.name.value,
            module.code_for_node(p.annotation.annotation) if p.annotation else None,
            module.code_for_node(p.default) if p.default is not None else None,
            param_docs.get(p.name.value, "")))
    facts = _BodyFacts()
    function.body.visit(facts)
    returns = module.code_for_node(function.returns.annotation) if function.returns else None
    position = module.code.find(f"def {function.name.value}(")
    line = module.code.count("\n", 0, position) + 1 if position >= 0 else 0
    return MethodInfo(function.name.value, params, returns, description, facts.result_keys,
                      error_after_change(function, changing), facts.raises,
                      module.code_for_node(function), line)


def _split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The description (text before the first section) and each parameter's doc."""
    description: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in doc.splitlines():
        header = _SECTION.match(line)
        sphinx = _SPHINX_ARG.match(line)
        if sphinx:
            current = sphinx.group(1)
            params[current] = sphinx.group(2).strip()
            section = "sphinx"
            continue
        if line.strip().startswith(":"):
            section, current = "sphinx", None
            continue
        if header:
            section = header.group(1).lower()
            current = None
            continue
        if section is None:
            description.append(line.strip())
        elif section in ("args", "arguments", "parameters", "params"):
            match = _GOOGLE_ARG.match(line)
            indent = len(line) - len(line.lstrip())
            if match and (current is None or indent <= _arg_indent.get(id(params), indent)):
                current = match.group(1)
                _arg_indent[id(params)] = indent
                params[current] = match.group(3).strip()
            elif current is not None and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
        elif section == "sphinx" and current is not None and line.strip():
            params[current] = (params[current] + " " + line.strip()).strip()
    _arg_indent.pop(id(params), None)
    text = " ".join(" ".join(description).split())
    return text, params


#: the indentation of the argument lines of the docstring being split (by its dict's id)
_arg_indent: dict[int, int] = {}


# ------------------------------------------------------------------ typing
def type_of_annotation(code: str | None) -> str | None:
    """The WorldSpec type of a Python annotation, or None when there is none."""
    if code is None:
        return None
    try:
        tree = ast.parse(code.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return "json"
    return _annotation(tree)


def _annotation(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return type_of_annotation(node.value) or "json"
    if isinstance(node, ast.Constant) and node.value is None:
        return "json"
    if isinstance(node, ast.Attribute):  # typing.List
        return SIMPLE_TYPES.get(node.attr, "json")
    if isinstance(node, ast.Name):
        return SIMPLE_TYPES.get(node.id, "json")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        parts = _union_parts(node)
        return _optional(parts)
    if isinstance(node, ast.Subscript):
        head = node.value.attr if isinstance(node.value, ast.Attribute) else \
            node.value.id if isinstance(node.value, ast.Name) else ""
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "Optional" and len(args) == 1:
            return _optional([args[0], ast.Constant(None)])
        if head == "Union":
            return _optional(args)
        if head in ("List", "list", "Sequence") and len(args) == 1:
            return f"list[{_annotation(args[0])}]"
        if head in ("Set", "set", "FrozenSet", "frozenset") and len(args) == 1:
            inner = _annotation(args[0])
            return f"set[{inner}]" if inner in ("str", "int") else "list[json]"
        if head in ("Dict", "dict", "Mapping") and len(args) == 2:
            key = _annotation(args[0])
            return f"map[{key if key in ('str', 'int') else 'str'}, {_annotation(args[1])}]" \
                if key in ("str", "int") else "json"
        if head == "Literal":
            return "json"
    return "json"


def _union_parts(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return [*_union_parts(node.left), *_union_parts(node.right)]
    return [node]


def _optional(parts: list[ast.expr]) -> str:
    nullable = any(isinstance(p, ast.Constant) and p.value is None for p in parts)
    others = [p for p in parts if not (isinstance(p, ast.Constant) and p.value is None)]
    if len(others) != 1:
        return "json"
    inner = _annotation(others[0])
    if inner == "json" or not nullable:
        return inner
    return f"{inner}?"


def type_of_value(value: Any) -> str | None:
    """The WorldSpec type a sample value suggests, or None when it says nothing (None)."""
    if value is None or value is _UNKNOWN:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "number"  # a float value now, an int when the original stores one (see above)
    if isinstance(value, str):
        return "str"
    if isinstance(value, (list, tuple, set, frozenset)):
        inner = _common({type_of_value(v) for v in value})
        if isinstance(value, (set, frozenset)):
            return f"set[{inner}]" if inner in ("str", "int") else "list[json]"
        return f"list[{inner or 'json'}]"
    if isinstance(value, dict):
        key = _key_type(value)
        if key is None:
            return "json"
        inner = _common({type_of_value(v) for v in value.values()})
        return f"map[{key}, {inner or 'json'}]"
    return "json"


def _key_type(value: dict[Any, Any]) -> str | None:
    """``str`` or ``int`` when every key of ``value`` is one (an empty dict: ``str``)."""
    if all(isinstance(k, str) for k in value):
        return "str"
    if all(isinstance(k, int) and not isinstance(k, bool) for k in value):
        return "int"
    return None


def _common(kinds: set[str | None]) -> str | None:
    known = {k for k in kinds if k is not None}
    if not known:
        return None
    if known == {"int", "number"}:
        return "number"  # ints and floats side by side, each kept as it is
    if len(known) == 1:
        only = known.pop()
        return only if None not in kinds or only == "json" else \
            (f"{only}?" if not only.endswith("?") else only)
    return "json"


# ------------------------------------------------------------------ literals
def _string_literal(text: str) -> str:
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def worldspec_literal(value: Any) -> str | None:
    """``value`` as a WorldSpec literal, or None when it has none (a float like ``inf``)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        text = repr(value)
        return text if any(c in text for c in ".e") else text + ".0"
    if isinstance(value, str):
        return _string_literal(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [worldspec_literal(v) for v in (sorted(value, key=repr)
                                                if isinstance(value, (set, frozenset))
                                                else value)]
        if any(i is None for i in items):
            return None
        return "[" + ", ".join(i for i in items if i is not None) + "]"
    if isinstance(value, dict):
        parts = []
        for k, v in value.items():
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                return None
            inner = worldspec_literal(v)
            if inner is None:
                return None
            parts.append(f"{_string_literal(k) if isinstance(k, str) else k}: {inner}")
        return "{" + ", ".join(parts) + "}"
    return None


# ------------------------------------------------------------------ emitting
@dataclass
class Skeleton:
    """The spec skeleton and what the reader should know about it."""

    text: str
    world: str
    convention: str
    tools: list[str]
    notes: list[str] = field(default_factory=list)
    #: the class as read (for the translation prompts)
    info: ClassInfo | None = None


def _singular_title(name: str) -> str:
    base = name[:-3] + "y" if name.endswith("ies") else name[:-1] \
        if name.endswith("s") and not name.endswith("ss") else name + "_item"
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"_+", base) if part) \
        or "Item"


def _doc(text: str, limit: int = 400) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 3].rstrip() + "..."


@dataclass
class _Plan:
    """The typed choices of one skeleton, so they can be widened one by one."""

    state_types: dict[str, str]
    records: dict[str, tuple[str, dict[str, str], str | None]]  # state -> (name, fields, key)
    param_types: dict[tuple[str, str], str]
    widened: set[str] = field(default_factory=set)


def _record_for(name: str, value: Any) -> tuple[str, dict[str, str], str | None] | None:
    """A record (or entity, when each row holds its key) for a dict of dicts."""
    if not isinstance(value, dict) or not value or _key_type(value) is None:
        return None
    rows = list(value.values())
    if not all(isinstance(r, dict) and r and all(isinstance(k, str) for k in r) for r in rows):
        return None
    fields: dict[str, str] = {}
    names: list[str] = []
    for row in rows:
        for key in row:
            if key not in names:
                names.append(key)
    for key in names:
        if any(k in _KEYWORDS for k in (key,)) or not re.fullmatch(r"[A-Za-z_]\w*", key):
            return None
        kinds = {type_of_value(r.get(key)) for r in rows}
        missing = any(key not in r for r in rows)
        kind = _common(kinds) or "json"
        if kind.startswith(("map[", "list[", "set[")) and "json" not in kind:
            kind = kind  # nested typed collections are kept
        if missing or None in kinds:
            if kind != "json" and not kind.endswith("?"):
                kind += "?"
        fields[key] = kind
    key_field = next((f for f in names if all(isinstance(r.get(f), str) and r.get(f) == k
                                                for k, r in value.items())), None)
    return _singular_title(name), fields, key_field


def emit_skeleton(info: ClassInfo, data: Mapping[str, Any] | None = None, *,
                  source_name: str = "", check: bool = True) -> Skeleton:
    """The skeleton of ``info`` (see the module docstring), checked clean when ``check``."""
    state_types: dict[str, str] = {}
    records: dict[str, tuple[str, dict[str, str], str | None]] = {}
    for name, attribute in info.attributes.items():
        if attribute.objects:  # an object graph: no WorldSpec type holds it as it is
            state_types[name] = "json"
            continue
        sample = data.get(name, _UNKNOWN) if data is not None else _UNKNOWN
        value = sample if sample is not _UNKNOWN else attribute.value
        record = _record_for(name, value)
        annotated = type_of_annotation(attribute.annotation)
        if record is not None and (annotated is None or "json" in annotated):
            records[name] = record
            continue
        guessed = type_of_value(value)
        if annotated is not None and annotated != "json":
            state_types[name] = annotated
        else:
            state_types[name] = guessed or "json"
    param_types: dict[tuple[str, str], str] = {}
    for method in info.methods:
        for p in method.params:
            kind = type_of_annotation(p.annotation)
            default = _fold(p.default, {}, {}) if p.default is not None else _UNKNOWN
            if kind is None:
                kind = type_of_value(default) or "json"
            if default is None and kind != "json" and not kind.endswith("?"):
                kind += "?"
            param_types[(method.name, p.name)] = kind
    plan = _Plan(state_types, records, param_types)
    notes: list[str] = []
    text, lines = _render(info, plan, data, source_name)
    if check:
        for _ in range(len(state_types) + len(records) + len(param_types) + 1):
            bad = _refused_items(text, lines)
            if not bad:
                break
            for item in bad:
                plan.widened.add(item)
                notes.append(f"{item}: the inferred type was refused by the compiler; "
                             "widened to json")
            text, lines = _render(info, plan, data, source_name)
    if info.convention == "bfcl" and any("success" in k for m in info.methods
                                         for k in m.result_keys):
        notes.append("results: bfcl, because the class returns its own success/error dicts "
                     "(or changes state before returning an error): tools return those dicts "
                     "as values")
    for method in info.methods:
        if method.error_after_change:
            notes.append(f"{method.name} changes state and then returns an error: a world's "
                         "failure would roll that back, so it must return the error as a value")
    for name, attribute in info.attributes.items():
        if attribute.objects:
            notes.append(" ".join(_object_graph_lines(name, attribute.objects,
                                                      attribute.addressed)))
        elif attribute.derived:
            notes.append(_derived_text(name, attribute.derived, info.load_method))
    if info.load_method is not None and not info.load_method.startswith("_"):
        notes.append(f"{info.load_method} is the load method: the state is read from it and "
                     "it is not a tool; the original is built with it (as --load "
                     f"{info.load_method} does)")
    return Skeleton(text, info.name, info.convention, [m.name for m in info.methods], notes,
                    info)


def _derived_text(name: str, code: str, load_method: str | None) -> str:
    """What the model and the user must know of a state item the load derives."""
    where = load_method or "__init__"
    return (f"{name}: {where} sets it to `{code}`, not to the data's \"{name}\": set it in "
            "an `on load` block")


def _object_graph_lines(name: str, classes: tuple[str, ...],
                        addressed: tuple[str, ...] = ()) -> list[str]:
    """What the model and the user must know of a state item that holds objects."""
    named = ", ".join(classes)
    if addressed:
        return [f"{name} holds objects of the module's classes {named} (an object graph);",
                f"{', '.join(addressed)} has no __repr__ of its own, so the repr() by which",
                f"`worldspec compare` sees {name} holds a memory address, different in",
                f"every run: {name} cannot compare equal. Leave it out of the comparison",
                f"(--ignore-state {name}) and keep it in the world as private state."]
    return [f"{name} holds objects of the module's classes {named} (an object graph),",
            "which a world cannot hold as they are; `worldspec compare` sees the original's",
            f"{name} as its repr() text (a value with no JSON form is compared by its repr()),",
            f"so the world's {name} must be that same text. Keep the graph as rows (a table",
            "of nodes, each with its parent's key) or as private state, built from the data",
            f"in an `on load` block, and set {name} from it after every change."]


def _render(info: ClassInfo, plan: _Plan, data: Mapping[str, Any] | None,
            source_name: str) -> tuple[str, dict[int, str]]:
    """The skeleton's text, and which item each line types (to widen refused ones)."""
    out: list[str] = []
    lines: dict[int, str] = {}

    def emit(text: str, item: str | None = None) -> None:
        if item is not None:
            lines[len(out) + 1] = item
        out.append(text)

    origin = f"{source_name} (class {info.name})" if source_name else f"class {info.name}"
    emit(f"# Ported from {origin} by `worldspec port`: a skeleton; the tool bodies are")
    emit("# translated from the original methods, then proven equal by `worldspec compare`.")
    emit("")
    emit(f"world {info.name} {_string_literal(_doc(info.doc.split(chr(10) * 2)[0]) or info.name)}")
    emit("")
    seed = f"  seed: {info.seed}" if info.seed is not None else ""
    emit(f"config {{ results: {info.convention}{seed} }}")
    emit("")
    for state, (record, fields, key) in plan.records.items():
        if f"state:{state}" in plan.widened:
            continue
        kind = "entity" if key is not None and not _default_rows(info, state, data) else "record"
        emit(f"{kind} {record} {{", f"state:{state}")
        for field_name, field_type in fields.items():
            prefix = "key " if kind == "entity" and field_name == key else ""
            emit(f"  {prefix}{field_name}: {field_type}", f"state:{state}")
        emit("}", f"state:{state}")
        emit("")
    emit("state {")
    for name in info.attributes:
        item = f"state:{name}"
        attribute = info.attributes[name]
        if attribute.objects:
            for line in _object_graph_lines(name, attribute.objects, attribute.addressed):
                emit(f"  # {line}")
        elif attribute.derived:
            emit(f"  # {_derived_text(name, attribute.derived, info.load_method)}")
        if name in plan.records and item not in plan.widened:
            record, fields, key = plan.records[name]
            if key is not None and not _default_rows(info, name, data):
                emit(f"  {name}: table {record}", item)
                continue
            kind = f"map[{_key_type(attribute.value) or 'str'}, {record}]" \
                if isinstance(attribute.value, dict) else f"map[str, {record}]"
            default = _record_map_literal(attribute.value, record, fields)
        else:
            kind = "json" if item in plan.widened else plan.state_types.get(name, "json")
            default = _default_literal(attribute.value, kind)
        emit(f"  {name}: {kind}" + (f" = {default}" if default is not None else ""), item)
    emit("}")
    for method in info.methods:
        emit("")
        for keys in _unique(method.result_keys)[:6]:
            emit(f"# returns {{{', '.join(json.dumps(k) for k in keys)}}}")
        if method.raises:
            emit("# raises exceptions: fail with exactly the exception's text")
        params = []
        for p in method.params:
            item = f"param:{method.name}.{p.name}"
            kind = "json" if item in plan.widened else plan.param_types[(method.name, p.name)]
            text = f"{p.name}: {kind}"
            if p.default is not None:
                literal = _default_literal(_fold(p.default, {}, {}), kind)
                if literal is not None:
                    text += f" = {literal}"
            if p.doc:
                text += f" {_string_literal(_doc(p.doc, 300))}"
            params.append((text, item))
        if params:
            emit(f"tool {method.name}(")
            for text, item in params:
                emit(f"  {text},", item)
            emit(") -> json")
        else:
            emit(f"tool {method.name}() -> json")
        emit(f"  {_string_literal(_doc(method.doc) or method.name.replace('_', ' '))}")
        emit("{")
        emit(f"  fail \"not ported yet: {method.name}\"")
        emit("}")
    return "\n".join(out) + "\n", lines


def _unique(items: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    seen: list[tuple[str, ...]] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def _default_rows(info: ClassInfo, state: str, data: Mapping[str, Any] | None) -> bool:
    """Whether the class starts ``state`` with rows of its own (a table could not hold them
    as a default, so a map is used)."""
    value = info.attributes[state].value
    return isinstance(value, dict) and bool(value)


def _default_literal(value: Any, kind: str) -> str | None:
    if value is _UNKNOWN:
        return None
    if value is None and kind != "json" and not kind.endswith("?"):
        return None
    return worldspec_literal(value)


def _record_map_literal(value: Any, record: str, fields: dict[str, str]) -> str | None:
    if not isinstance(value, dict):
        return None
    parts = []
    for key, row in value.items():
        if isinstance(key, bool) or not isinstance(key, (str, int)) or not isinstance(row, dict):
            return None
        inner = []
        for name in fields:
            if name not in row:
                continue
            literal = worldspec_literal(row[name])
            if literal is None:
                return None
            inner.append(f"{name}: {literal}")
        written = _string_literal(key) if isinstance(key, str) else str(key)
        parts.append(f"{written}: {record}({', '.join(inner)})")
    return "{" + ", ".join(parts) + "}"


def _refused_items(text: str, lines: dict[int, str]) -> set[str]:
    from worldspec.compiler.api import check_source

    result = check_source(text, "skeleton.world")
    bad: set[str] = set()
    for d in result.errors:
        item = lines.get(d.span.line)
        if item is not None:
            bad.add(item)
    if result.errors and not bad:  # an error we cannot place: widen everything typed
        bad = set(lines.values())
    return bad
