"""No spec name can reach a name the generated module uses for itself: a name x position battery.

A spec name becomes a Python name in the generated module: a class, an attribute, a
parameter, a local, a keyword argument. Each must stay clear of what that module uses for
its own purposes: Python's keywords and builtins, its imports (``rt``, ``v``, ``dt``,
``Any``...), the runtime's classes and what their instances carry (``Row.key``,
``JSON_FIELDS``, ``Episode.call``, ``type.mro``), the boilerplate's locals and helpers.

The battery takes every *dangerous* name, computed from those sources rather than listed
by hand (plus a few hostile ones), and puts it in every position the language has: the
world, each kind of declaration, fields, key fields, parameters, locals, loop and lambda
variables, match bindings, state items, tables, sequences, tools, fns, invariants, tasks
and checks. Each world of a position holds up to :data:`CHUNK` names at once, side by side
(the world position is one small world per name); every package must build, import, pass
``mypy --strict`` (one run over all of them), answer calls with the values the spec
computes, and score 1 on its tasks' reference solutions. ``worldspec check --format json``
over the same specs must report, never fail with an internal error. Of the ``_``-names the
battery takes a sample: one rule maps them all out of reach, checked for each of them.

A name the language itself refuses in a position (a spec keyword, a builtin such as
``len``) is fine when it is refused with a diagnostic; the battery asserts that refusals
are exactly those and nothing else.
"""

from __future__ import annotations

import ast
import builtins
import enum
import json
import keyword
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from lark import Lark

from worldspec.compiler import types as t
from worldspec.compiler.api import CheckResult, check_specs
from worldspec.compiler.build import generate_all, write_packages
from worldspec.compiler.builtins import BUILTIN_NAMES, CONVERSATION
from worldspec.compiler.codegen.names import enum_member, py_name, snake_case
from worldspec.compiler.resolve import GENERIC_TYPES
from worldspec.compiler.scope import RESERVED_NAMES
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.parser import parse_module
from worldspec.runtime.episode import Episode, Row, StateBase, Table
from worldspec.services.loading import load_package

REPO = Path(__file__).resolve().parents[1]
GENERATED = REPO / "generated"
HOSTILE = Path(__file__).resolve().parent / "hostile"
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: Names no computation finds but a generator could still trip on: private and mangled
#: forms, names differing only by underscores, names of packages a generated one could
#: shadow, typing names. (The scaffolding's own names all start with ``zq``/``Zq``, which
#: no dangerous name does, so a name never collides with the scaffolding around it.)
HOSTILE_NAMES = (
    "_", "__", "___", "x_", "_x", "x__", "__x", "__x__", "xx_", "a__b", "a_", "a__",
    "id", "id_", "id__", "key_", "self_", "t_x", "tool_x", "fn_x", "a_x", "row_x", "x",
    "World", "State", "_State", "Names", "NamesField",
    "worldspec", "typing", "json", "collections", "datetime", "os", "sys", "re", "math",
    "generated", "main", "tests", "Self", "NoReturn", "Never", "Literal", "Optional",
    "Union", "Callable", "Protocol", "Final", "Generic", "TypeVar", "Iterator",
)


# ---------------------------------------------------------------- the dangerous names
def _ast_names(text: str) -> set[str]:
    """Every identifier a module binds, reads, calls, imports or reads as an attribute."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.keyword) and node.arg:
            out.add(node.arg)
        elif isinstance(node, ast.alias):
            out.add(node.asname or node.name.split(".")[0])
    return out


_STRINGS_AND_COMMENTS = re.compile(r'"""(?:.|\n)*?"""|"(?:\\.|[^"\\\n])*"|#[^\n]*')
#: Python names the generator makes from a spec name: ``_check_<task>``, ``t_<table>``,
#: ``_UNION_<Union>``, ``_RESULT_<Record>`` (a schema the registry names), ``_PARAM_<param>``...
_DERIVED = re.compile(r"^(?:_check_|_UNION_|_SCHEMA_|_RESULT_|_PARAM_|_ROW_|t_|tool_|fn_|a_|"
                      r"row_)?(?P<core>.*?)\d*$")


def _spec_identifiers() -> set[str]:
    """Every identifier the example specs write (outside strings and comments)."""
    return {m for p in (REPO / "examples").rglob("*.world")
            for m in IDENT.findall(_STRINGS_AND_COMMENTS.sub(" ", p.read_text(encoding="utf-8")))}


def generator_vocabulary() -> set[str]:
    """The names the code generator itself emits: identifiers of the committed generated
    modules that are neither an example spec's name nor made from one (so ``rt``, ``ep``,
    ``isoformat``, ``FieldJson``, ``_State``... but not ``_check_login``)."""
    spec = _spec_identifiers()

    def derived(name: str) -> bool:
        match = _DERIVED.match(name)
        core = match.group("core").strip("_") if match else name
        parts = [p.strip("_") for p in core.split("__") if p.strip("_")]
        return name in spec or (bool(parts) and all(p in spec for p in parts))

    names: set[str] = set()
    for module in sorted(GENERATED.glob("*/world.py")):
        names |= _ast_names(module.read_text(encoding="utf-8"))
    # one of each family of fresh locals (``_row27``, ``_row39``... stand for each other)
    stems = {re.sub(r"\d+$", "", n): n for n in sorted(names, reverse=True) if not derived(n)}
    return set(stems.values())


def runtime_vocabulary() -> set[str]:
    """What the runtime's base classes, their instances and their metaclasses define."""
    names: set[str] = set()
    for cls in (Row, StateBase, Episode, Table, enum.StrEnum, str, type, object):
        names |= set(dir(cls))
    episode = load_package(GENERATED / "mobile_messaging").World()
    names |= set(vars(episode)) | set(vars(episode.state)) if hasattr(episode.state, "__dict__") \
        else set(vars(episode))
    return names


def underscore_sample() -> set[str]:
    """The ``_``-names the battery takes: hostile ones and those of the generated module."""
    return {n for n in set(HOSTILE_NAMES) | generator_vocabulary() if n.startswith("_")} | {
        "__slots__", "__class__", "__dict__", "__module__", "__init_subclass__", "__name__",
        "__qualname__", "__annotations__", "__all__", "__future__", "__builtins__",
        "__match_args__", "__dataclass_fields__", "__members__", "_missing_", "_ignore_",
        "_generate_next_value_", "_value_", "_name_", "_CANONICAL_STEPS", "_fragments"}


def battery_names() -> list[str]:
    """The names the battery puts in every position: every dangerous name, but of the
    ``_``-names only a sample: one rule maps them all out of reach (a leading ``_`` gets an
    ``x``), which :func:`test_underscore_names_are_never_private` checks for each of them."""
    sample = underscore_sample()
    return [n for n in dangerous_names() if not n.startswith("_") or n in sample]


def dangerous_names() -> list[str]:
    """Keywords, soft keywords, builtins, the generator's and the runtime's names, hostiles."""
    names = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins))
    names |= generator_vocabulary() | runtime_vocabulary() | set(HOSTILE_NAMES)
    return sorted(n for n in names if IDENT.fullmatch(n))


# ------------------------------------------------------------------- spec scaffolding
@dataclass
class Spec:
    """Spec text built line by line, remembering which name each line is about (so a
    diagnostic on a line names the name it refuses)."""

    lines: list[str] = field(default_factory=list)
    owner: dict[int, str] = field(default_factory=dict)

    def add(self, text: str, name: str | None = None) -> None:
        for line in text.split("\n"):
            self.lines.append(line)
            if name is not None:
                self.owner[len(self.lines)] = name

    def each(self, names: list[str], template: Callable[[int, str], str]) -> None:
        for i, name in enumerate(names):
            self.add(template(i, name), name)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


#: position -> (spec writer, the calls to make: (tool, arguments, expected result))
Calls = list[tuple[str, dict[str, Any], Any]]


def _world(spec: Spec, world: str) -> None:
    spec.add(f'world {world} "Names in one position."')
    spec.add("config { results: bfcl }")


def p_world(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    for i, name in enumerate(names):
        spec = Spec()
        spec.add(f'world {name} "A world named {name}."\nconfig {{ results: bfcl }}\n'
                 f'state {{ zqhits: int = 0 }}\ntool zqhit() -> int "Count." '
                 f'{{ zqhits += 1  return zqhits }}\n'
                 f'task zqt{i} in {name} {{ given {{ zqhits: 1 }} instruction "Hit." '
                 f'check zqc: zqhits == 2 solution {{ zqhit() }} }}', name)
        yield f"world_{i}", spec, [("zqhit", {}, 1)]


def p_entity(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesEntity")
    spec.each(names, lambda i, n: f"entity {n} {{ key zqid: str  {n}: int = 0 }}")
    spec.add("entity ZqHolder {\n  key zqid: str")
    spec.each(names, lambda i, n: f"  zqr{i}: {n}? = none")
    spec.add("}\nstate {\n  zqholders: table ZqHolder\n  zqlimit: int = 0")
    spec.each(names, lambda i, n: f"  zqrows{i}: table {n}")
    spec.add("}\ninvariant zqinv \"The limit broke.\": zqlimit >= 0\n"
             "tool zqbreak() -> int { zqlimit = -1  return zqlimit }")
    spec.each(names, lambda i, n: (
        f"tool zqput{i}(zqid: str) -> {n} {{ let zqrow = {n}(zqid: zqid)"
        f"  insert zqrow into zqrows{i}\n"
        f"  insert ZqHolder(zqid: zqid + \"{i}\", zqr{i}: zqrow) into zqholders"
        f"  return zqrow }}\n"
        f"tool zqget{i}(zqrow: {n}) -> int {{ zqrow.{n} += 1  return zqrow.{n} }}"))
    # an entity may be called ``InvariantError``: a broken invariant still says so
    calls: Calls = [("zqbreak", {}, {"error": "The limit broke."})]
    for i, n in enumerate(names):
        calls += [(f"zqput{i}", {"zqid": "a"}, {"zqid": "a", n: 0}),
                  (f"zqget{i}", {"zqrow": "a"}, 1)]
    yield "entity", spec, calls


def p_record(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesRecord")
    spec.each(names, lambda i, n: f"record {n} {{ {n}: int = 0 }}")
    spec.add("state {")
    spec.each(names, lambda i, n: f"  zqr{i}: {n}? = none")
    spec.add("}")
    spec.each(names, lambda i, n: (
        f"tool zqmake{i}(zqa: int) -> {n} {{ let zqr = {n}({n}: zqa)  zqr{i} = zqr"
        f"  return zqr }}"))
    yield "record", spec, [(f"zqmake{i}", {"zqa": i}, {n: i}) for i, n in enumerate(names)]


def p_enum(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesEnum")
    spec.each(names, lambda i, n: f"enum {n} {{ zqon, zqoff }}")
    spec.add("state {")
    spec.each(names, lambda i, n: f"  zqe{i}: {n} = zqon")
    spec.add("}")
    spec.each(names, lambda i, n: (
        f"tool zqflip{i}(zqto: {n}) -> {n} {{ zqe{i} = zqto"
        f"  if zqe{i} == {n}.zqoff {{ return zqon }}  return {n}.zqoff }}"))
    yield "enum", spec, [(f"zqflip{i}", {"zqto": "zqoff"}, "zqon") for i in range(len(names))]


def p_member(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesEnumMember")
    spec.add("enum ZqPick {")
    spec.each(names, lambda i, n: f"  {n},")
    spec.add(f"}}\nstate {{ zqpick: ZqPick = {names[0]} }}\n"
             "tool zqchoose(zqp: ZqPick) -> ZqPick { zqpick = zqp  return zqpick }\n"
             "tool zqmembers() -> list[ZqPick] {\n  return [")
    spec.each(names, lambda i, n: f"    ZqPick.{n},")
    spec.add("  ]\n}\ntool zqrank(zqp: ZqPick) -> int {\n  match zqp {")
    spec.each(names, lambda i, n: f"    case {n} {{ return {i} }}")
    spec.add("  }\n}")
    calls: Calls = [("zqmembers", {}, names)]
    calls += [("zqchoose", {"zqp": n}, n) for n in names]
    calls += [("zqrank", {"zqp": n}, i) for i, n in enumerate(names)]
    yield "enum member", spec, calls


def p_union(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesUnion")
    spec.add("record ZqA { zqa: int = 0 }\nrecord ZqB { zqb: str = \"\" }")
    spec.each(names, lambda i, n: f"union {n} by zqkind {{ zqa: ZqA, zqb: ZqB }}")
    spec.add("state {")
    spec.each(names, lambda i, n: f"  zqu{i}: {n}? = none")
    spec.add("}")
    spec.each(names, lambda i, n: (
        f"tool zqset{i}(zqa: int) -> {n} {{ let zqx: {n} = ZqA(zqa: zqa)  zqu{i} = zqx"
        f"  return zqx }}"))
    yield "union", spec, [(f"zqset{i}", {"zqa": i}, {"zqkind": "zqa", "zqa": i})
                          for i in range(len(names))]


def p_variant(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesUnionVariant")
    spec.each(names, lambda i, n: f"record ZqV{i} {{ zqa: int = 0 }}")
    spec.add("union ZqTagged by zqkind {")
    spec.each(names, lambda i, n: f"  {n}: ZqV{i},")
    spec.add("}\nstate { zqtagged: ZqTagged? = none }")
    spec.each(names, lambda i, n: (
        f"tool zqtag{i}() -> ZqTagged {{ let zqx: ZqTagged = ZqV{i}(zqa: {i})  zqtagged = zqx"
        f"  return zqx }}"))
    spec.add("tool zqwhich() -> int {\n  let zqfound = zqtagged\n  if zqfound != none {\n"
             "    match zqfound {")
    spec.each(names, lambda i, n: f"      case {n} as zqx {{ return zqx.zqa }}")
    spec.add("    }\n  }\n  return -1\n}")
    calls: Calls = []
    for i, n in enumerate(names):
        calls += [(f"zqtag{i}", {}, {"zqkind": n, "zqa": i}), ("zqwhich", {}, i)]
    yield "union variant", spec, calls


def p_tag_field(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesUnionTagField")
    spec.add("record ZqPlain { zqa: int = 0 }")
    spec.each(names, lambda i, n: f"union ZqU{i} by {n} {{ zqplain: ZqPlain }}")
    spec.add("state {")
    spec.each(names, lambda i, n: f"  zqtf{i}: ZqU{i}? = none")
    spec.add("}")
    spec.each(names, lambda i, n: (
        f"tool zqtf{i}() -> str {{ let zqx: ZqU{i} = ZqPlain(zqa: 1)  zqtf{i} = zqx"
        f"  return zqx.{n} }}\n"
        f"tool zqread{i}() -> ZqU{i}? {{ return zqtf{i} }}"))
    calls: Calls = []
    for i, n in enumerate(names):
        calls += [(f"zqtf{i}", {}, "zqplain"), (f"zqread{i}", {}, {n: "zqplain", "zqa": 1})]
    yield "union tag field", spec, calls


def p_alias(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesAlias")
    spec.each(names, lambda i, n: f"type {n} = int(0..100)")
    spec.add("state {")
    spec.each(names, lambda i, n: f"  zqal{i}: {n} = 1")
    spec.add("}")
    spec.each(names, lambda i, n: (
        f"tool zqal{i}(zqx: {n}) -> {n} {{ zqal{i} = zqx  return zqal{i} }}"))
    yield "alias", spec, [(f"zqal{i}", {"zqx": i % 100}, i % 100) for i in range(len(names))]


def p_field(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesField")
    spec.add("entity ZqItem {\n  key zqid: str")
    spec.each(names, lambda i, n: f"  {n}: int = {i}")
    spec.add("}\nstate { zqitems: table ZqItem }\n"
             "tool zqadd(zqid: str) -> ZqItem { insert ZqItem(zqid: zqid) into zqitems"
             "  return zqitems[zqid] }\n"
             "tool zqbump(zqitem: ZqItem) -> int {")
    spec.each(names, lambda i, n: f"  zqitem.{n} += 1")
    spec.add("  let zqtotal = 0")
    spec.each(names, lambda i, n: f"  zqtotal += zqitem.{n}")
    spec.add("  return zqtotal\n}\ntask zqfields in NamesField {\n"
             "  given { zqitems: [{zqid: \"a\",")
    spec.each(names, lambda i, n: f"    {json.dumps(n)}: {i},")
    spec.add("  }] }\n  instruction \"Bump item a.\"\n  check zqbumped: all zqok in [")
    spec.each(names, lambda i, n: f"    zqitems[\"a\"].{n} == {i + 1},")
    spec.add("  ]: zqok\n  only changes zqitems\n  solution { zqbump(zqitem: \"a\") }\n}")
    row = {"zqid": "b", **{n: i for i, n in enumerate(names)}}
    total = sum(range(1, len(names) + 1))
    yield "field", spec, [("zqadd", {"zqid": "b"}, row), ("zqbump", {"zqitem": "b"}, total)]


def p_record_field(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesRecordField")
    spec.add("record ZqRec {")
    spec.each(names, lambda i, n: f"  {n}: int = {i}")
    spec.add("}\nstate { zqrec: ZqRec? = none }\ntool zqmake() -> ZqRec {\n  let zqr = ZqRec(")
    spec.each(names, lambda i, n: f"    {n}: {i + 1},")
    spec.add("  )\n  zqrec = zqr\n  return zqr\n}\ntool zqtotal() -> int {\n"
             "  let zqr = ZqRec()\n  let zqtotal = 0")
    spec.each(names, lambda i, n: f"  zqtotal += zqr.{n}")
    spec.add("  return zqtotal\n}")
    yield "record field", spec, [
        ("zqmake", {}, {n: i + 1 for i, n in enumerate(names)}),
        ("zqtotal", {}, sum(range(len(names))))]


def p_key_field(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesKeyField")
    spec.each(names, lambda i, n: f"entity ZqK{i} {{ key {n}: str  zqsize: int = 0 }}")
    spec.add("state {")
    spec.each(names, lambda i, n: f"  zqk{i}: table ZqK{i}")
    spec.add("}")
    spec.each(names, lambda i, n: (
        f"tool zqput{i}(zqx: str) -> ZqK{i} {{ let zqrow = ZqK{i}({n}: zqx)"
        f"  insert zqrow into zqk{i}  return zqrow }}\n"
        f"tool zqget{i}(zqrow: ZqK{i}) -> str {{ zqrow.zqsize += 1  return zqrow.{n} }}"))
    calls: Calls = []
    for i, n in enumerate(names):
        calls += [(f"zqput{i}", {"zqx": "a"}, {n: "a", "zqsize": 0}),
                  (f"zqget{i}", {"zqrow": "a"}, "a")]
    yield "key field", spec, calls


def p_param(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesParam")
    spec.add("entity ZqItem { key zqid: str }\nstate { zqitems: table ZqItem }\n"
             "fn zqtotal(")
    spec.each(names, lambda i, n: f"  {n}: int,")
    spec.add(") -> int {\n  let zqtotal = 0")
    spec.each(names, lambda i, n: f"  zqtotal += {n}")
    spec.add("  return zqtotal\n}\ntool zqparams(")
    spec.each(names, lambda i, n: f"  {n}: int = {i},")
    spec.add(") -> int {\n  return zqtotal(")
    spec.each(names, lambda i, n: f"    {n}: {n},")
    spec.add("  )\n}")
    spec.each(names, lambda i, n: (
        f"tool zqlook{i}({n}: ZqItem \"The item.\" else f\"No item {{{n}}}.\") -> str "
        f"{{ return {n}.zqid }}"))
    spec.add("tool zqadd(zqid: str) -> int { insert ZqItem(zqid: zqid) into zqitems"
             "  return len(zqitems) }")
    calls: Calls = [("zqparams", {}, sum(range(len(names)))),
                    ("zqparams", {n: 1 for n in names}, len(names)),
                    ("zqadd", {"zqid": "a"}, 1)]
    for i, n in enumerate(names):
        calls += [(f"zqlook{i}", {n: "a"}, "a"),
                  (f"zqlook{i}", {n: "zz"}, {"error": "No item zz."})]
    yield "param", spec, calls


def p_local(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesLocal")
    spec.add("tool zqlocals() -> int {")
    spec.add("  let zqtotal = 0")
    spec.each(names, lambda i, n: f"  let {n} = {i}\n  {n} = {n} + 1\n  zqtotal += {n}")
    spec.add("  return zqtotal\n}\nfn zqtyped() -> int {\n  let zqtotal = 0")
    spec.each(names, lambda i, n: f"  let {n}: int = 1\n  zqtotal += {n}")
    spec.add("  return zqtotal\n}\ntool zqcall_typed() -> int { return zqtyped() }")
    yield "local", spec, [("zqlocals", {}, sum(range(1, len(names) + 1))),
                          ("zqcall_typed", {}, len(names))]


def p_loop(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesLoopVariable")
    spec.add("record ZqA { zqa: int = 0 }\nrecord ZqB { zqb: int = 0 }\n"
             "union ZqEither by zqkind { zqa: ZqA, zqb: ZqB }\n"
             "tool zqloops() -> int {\n  let zqtotal = 0")
    spec.each(names, lambda i, n: f"  for {n} in [0, 1, 2] {{ zqtotal += {n} }}")
    spec.add("  return zqtotal\n}\ntool zqcomprehensions() -> int {\n  let zqtotal = 0")
    spec.each(names, lambda i, n: (
        f"  zqtotal += [{n} * 2 for {n} in [0, 1, 2] if {n} > 0][0]"))
    spec.add("  return zqtotal\n}\ntool zqquantifiers() -> bool {\n  return all zqok in [")
    spec.each(names, lambda i, n: f"    all {n} in [0, 1, 2]: {n} >= 0,")
    spec.add("  ]: zqok\n}\ntool zqlambdas() -> int {\n  let zqtotal = 0")
    spec.each(names, lambda i, n: f"  zqtotal += sorted([0, 1, 2], key: {n} => -{n})[0]")
    spec.add("  return zqtotal\n}\ntool zqbindings() -> int {\n"
             "  let zqe: ZqEither = ZqB(zqb: 1)\n  let zqtotal = 0")
    spec.each(names, lambda i, n: (
        f"  match zqe {{ case zqa as {n} {{ zqtotal += {n}.zqa }}"
        f" case zqb as {n} {{ zqtotal += {n}.zqb }} }}"))
    spec.add("  return zqtotal\n}")
    count = len(names)
    yield "loop variable", spec, [
        ("zqloops", {}, 3 * count), ("zqcomprehensions", {}, 2 * count),
        ("zqquantifiers", {}, True), ("zqlambdas", {}, 2 * count),
        ("zqbindings", {}, count)]


def p_state(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesStateItem")
    spec.add("state {")
    spec.each(names, lambda i, n: f"  {n}: int = {i}")
    spec.add("}\ntool zqbump() -> int {")
    spec.add("  let zqtotal = 0")
    spec.each(names, lambda i, n: f"  {n} += 1\n  zqtotal += {n}")
    spec.add("  return zqtotal\n}\ntask zqstates in NamesStateItem {\n  given {")
    spec.each(names, lambda i, n: f"    {json.dumps(n)}: {2 * i},")
    spec.add("  }\n  instruction \"Bump everything.\"\n  check zqbumped: all zqok in [")
    spec.each(names, lambda i, n: f"    {n} == initial.{n} + 1,")
    spec.add("  ]: zqok\n  only changes")
    spec.each(names, lambda i, n: f"    {n}" + ("," if i < len(names) - 1 else ""))
    spec.add("  solution { zqbump() }\n}")
    yield "state item", spec, [("zqbump", {}, sum(range(1, len(names) + 1)))]


def p_table(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesTable")
    spec.each(names, lambda i, n: f"entity ZqT{i} {{ key zqid: str }}")
    spec.add("state {")
    spec.each(names, lambda i, n: f"  {n}: table ZqT{i}")
    spec.add("}")
    spec.each(names, lambda i, n: (
        f"tool zqput{i}(zqid: str) -> str {{ insert ZqT{i}(zqid: zqid) into {n}"
        f"  return {n}[zqid].zqid }}\n"
        f"tool zqtake{i}(zqrow: ZqT{i}) -> str {{ delete zqrow from {n}  return zqrow.zqid }}"))
    spec.add("task zqtables in NamesTable {\n  given {")
    spec.each(names, lambda i, n: f"    {json.dumps(n)}: [{{zqid: \"a\"}}],")
    spec.add("  }\n  instruction \"Delete a.\"\n  check zqgone: all zqok in [")
    spec.each(names, lambda i, n: f"    \"a\" in initial.{n} and not (\"a\" in {n}),")
    spec.add("  ]: zqok\n  solution {")
    spec.each(names, lambda i, n: f"    zqtake{i}(zqrow: \"a\")")
    spec.add("  }\n}")
    calls: Calls = []
    for i in range(len(names)):
        calls += [(f"zqput{i}", {"zqid": "a"}, "a"), (f"zqtake{i}", {"zqrow": "a"}, "a")]
    yield "table", spec, calls


def p_sequence(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    if "next" in names and len(names) > 1:
        # a sequence named ``next`` hides, for its whole world, the builtin that draws
        yield from p_sequence([n for n in names if n != "next"])
        names = ["next"]
    spec = Spec()
    _world(spec, "NamesSequence")
    spec.add("state {")
    spec.each(names, lambda i, n: f"  {n}: sequence \"S{{:03d}}\"")
    spec.add("}")
    spec.each(names, lambda i, n: (
        f"tool zqseq{i}() -> str {{ return next({n}) }}" if n != "next" else
        f"tool zqseq{i}() -> str {{ return \"S001\" }}"))
    yield "sequence", spec, [(f"zqseq{i}", {}, "S001") for i in range(len(names))]


def p_tool(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesTool")
    spec.add("state { zqhits: int = 0 }")
    spec.each(names, lambda i, n: (
        f"tool {n}(zqx: int = 0) -> int \"The tool {n}.\" {{ zqhits += 1  return zqx + {i} }}"))
    spec.add("task zqtools in NamesTool {\n  given { zqhits: 0 }\n"
             "  instruction \"Call them all.\"\n"
             f"  check zqall_called: zqhits == {len(names)}\n  solution {{")
    spec.each(names, lambda i, n: f"    {n}(zqx: 1)")
    spec.add("  }\n}")
    yield "tool", spec, [(n, {"zqx": 1}, i + 1) for i, n in enumerate(names)]


def p_fn(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesFn")
    spec.add("state { zqhits: int = 0 }")
    spec.each(names, lambda i, n: f"fn {n}(zqx: int) -> int {{ return zqx + {i} + zqhits }}")
    spec.add("tool zqcalls() -> int {\n  zqhits += 1\n  let zqtotal = 0")
    spec.each(names, lambda i, n: f"  zqtotal += {n}(0)")
    spec.add("  return zqtotal\n}\ntask zqfns in NamesFn {\n  given { zqhits: 0 }\n"
             "  instruction \"Call.\"\n  check zqcalled: zqhits == 1\n"
             "  check zqeach: all zqok in [")
    spec.each(names, lambda i, n: f"    {n}(0) == {i + 1},")
    spec.add("  ]: zqok\n  solution { zqcalls() }\n}")
    yield "fn", spec, [("zqcalls", {}, sum(range(len(names))) + len(names))]


def p_invariant(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesInvariant")
    spec.add("state { zqhits: int = 0 }")
    spec.each(names, lambda i, n: (
        f"invariant {n} \"Invariant {n} broke.\": zqhits >= -{i}"))
    spec.add("tool zqhit(zqby: int) -> int { zqhits += zqby  return zqhits }")
    yield "invariant", spec, [
        ("zqhit", {"zqby": 2}, 2),
        ("zqhit", {"zqby": -3}, {"error": f"Invariant {names[0]} broke."}),
        ("zqhit", {"zqby": -len(names) - 5}, {"error": f"Invariant {names[0]} broke."})]


def p_task(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesTask")
    spec.add("state { zqhits: int = 0 }\ntool zqhit() -> int { zqhits += 1  return zqhits }")
    spec.each(names, lambda i, n: (
        f"task {n} in NamesTask {{ given {{ zqhits: {i} }} instruction \"Hit.\""
        f"  check zqc: zqhits == {i + 1}  solution {{ zqhit() }} }}"))
    yield "task", spec, [("zqhit", {}, 1)]


def p_check(names: list[str]) -> Iterator[tuple[str, Spec, Calls]]:
    spec = Spec()
    _world(spec, "NamesCheck")
    spec.add("state { zqhits: int = 0 }\ntool zqhit() -> int { zqhits += 1  return zqhits }\n"
             "task zqchecks in NamesCheck {\n  given { zqhits: 0 }\n  instruction \"Hit.\"")
    spec.each(names, lambda i, n: f"  check {n} \"Check {n}.\": zqhits == 1")
    spec.add("  solution { zqhit() }\n}")
    yield "check", spec, [("zqhit", {}, 1)]


POSITIONS: dict[str, Callable[[list[str]], Iterator[tuple[str, Spec, Calls]]]] = {
    "world": p_world, "entity": p_entity, "record": p_record, "enum": p_enum,
    "enum member": p_member, "union": p_union, "union variant": p_variant,
    "union tag field": p_tag_field, "alias": p_alias, "field": p_field,
    "record field": p_record_field, "key field": p_key_field, "param": p_param,
    "local": p_local, "loop variable": p_loop, "state item": p_state, "table": p_table,
    "sequence": p_sequence, "tool": p_tool, "fn": p_fn, "invariant": p_invariant,
    "task": p_task, "check": p_check,
}


# ------------------------------------------------------------------------ the battery
def spec_keywords() -> frozenset[str]:
    """The words a terminal of the grammar other than ``NAME`` matches (``table``, ``key``,
    ``all``...): the only names that can parse differently from an ordinary name."""
    grammar = (REPO / "dsl" / "worldspec.lark").read_text(encoding="utf-8")
    terminals = [t for t in Lark(grammar, parser="lalr", start="start").terminals
                 if t.name != "NAME"]
    return frozenset(name for name in dangerous_names() if any(
        re.fullmatch(t.pattern.to_regexp(), name) for t in terminals))


@dataclass
class Refusal:
    """A name the language refuses in a position, and how it said so."""

    position: str
    name: str
    code: str
    message: str


@dataclass
class Battery:
    """Every position's specs, what was refused, and what was built from the rest."""

    folder: Path
    out: Path
    accepted: dict[str, list[str]]
    refused: list[Refusal]
    #: position -> the calls to make and what they answer (world: one call per package)
    calls: dict[str, Calls]
    #: package name -> its position
    packages: dict[str, str] = field(default_factory=dict)


#: Names per world: big enough to batch, small enough that no literal of the generated
#: module (``TOOLS``, ``__slots__``) grows large enough to slow ``mypy`` down.
CHUNK = 60


def _render(position: str, names: list[str]) -> list[tuple[str, Spec, Calls]]:
    """The worlds of one position: one per chunk of names, each named after its chunk."""
    size = CHUNK
    return [world for start in range(0, len(names), size)
            for world in _render_chunk(position, names[start:start + size], start // size)]


def _render_chunk(position: str, names: list[str], chunk: int) -> list[tuple[str, Spec, Calls]]:
    out = []
    for j, (stem, spec, calls) in enumerate(POSITIONS[position](names) if names else ()):
        if position != "world":
            base = stem.title().replace(" ", "")
            header = re.compile(rf"(?<=world )Names{base}\b|(?<=in )Names{base}(?= {{)")
            spec.lines = [header.sub(f"Names{base}{chunk}_{j}", line) for line in spec.lines]
        stem = f"{stem}_{chunk}_{j}"
        out.append((re.sub(r"[^a-z0-9]+", "_", stem.lower()), spec, calls))
    return out


def _parses(position: str, name: str) -> bool:
    for _, spec, _ in _render(position, [name]):
        sink = DiagnosticSink()
        parse_module(spec.text(), f"{name}.world", sink)
        if sink.diagnostics:
            return False
    return True


def _check_chunk(folder: Path, position: str, keep: list[str], chunk: int,
                 refused: list[Refusal]) -> tuple[CheckResult, dict[Path, Calls]]:
    """Check the worlds of one chunk of names, dropping each name the checker refuses (and
    writing the chunk again without it) until they are clean."""
    while True:
        files: dict[Path, Spec] = {}
        calls: dict[Path, Calls] = {}
        for stem, spec, made in _render_chunk(position, keep, chunk):
            path = (folder / f"{stem}.world").resolve()
            path.write_text(spec.text(), encoding="utf-8")
            files[path] = spec
            calls[path] = made
        result = check_specs(sorted(files))
        if result.ok:
            return result, calls
        for d in result.errors:
            name = files[Path(d.span.file).resolve()].owner.get(d.span.line)
            assert name is not None, f"{d.span}: {d.code} {d.message}"
            if name in keep:
                keep.remove(name)
                refused.append(Refusal(position, name, d.code, d.message))
        for path in files:
            path.unlink()


def build_battery(root: Path, names: list[str]) -> Battery:
    """Write the specs of every position, drop (and record) what the checker refuses, and
    generate the packages of the rest into ``root / "out"``."""
    keywords = spec_keywords()
    battery = Battery(root / "specs", root / "out", {}, [], {})
    for position in POSITIONS:
        keep = []
        for name in names:
            if name in keywords and not _parses(position, name):
                battery.refused.append(Refusal(position, name, "syntax", "does not parse"))
            else:
                keep.append(name)
        folder = battery.folder / re.sub(r"[^a-z0-9]+", "_", position)
        folder.mkdir(parents=True)
        size = CHUNK
        battery.accepted[position] = []
        for start in range(0, len(keep), size):
            chunk = keep[start:start + size]
            result, calls = _check_chunk(folder, position, chunk, start // size,
                                         battery.refused)
            battery.accepted[position] += chunk
            build = generate_all(result)
            write_packages(build, battery.out)
            for package in build.packages:
                battery.packages[package.name] = position
                battery.calls[package.name] = calls[
                    Path(result.model.worlds[package.world].file).resolve()]
    return battery


# ------------------------------------------------------------------------ the tests
def test_python_and_module_names_are_escaped() -> None:
    """Keywords, builtins and every name a generated module imports or defines for itself."""
    top: set[str] = set()
    for module in sorted(GENERATED.glob("*/world.py")):
        for node in ast.parse(module.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                top |= {a.asname or a.name.split(".")[0] for a in node.names}
    names = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins)) | top
    assert {"rt", "v", "dt", "field", "Record", "InvariantError", "TypeAlias"} <= names
    assert sorted(n for n in names if py_name(n) == n) == []


def test_runtime_names_are_escaped() -> None:
    """What a row or the state object carries, and what ``type`` gives every class."""
    names = set(dir(Row)) | set(dir(StateBase)) | {n for n in dir(type) if not n.startswith("__")}
    assert {"JSON_FIELDS", "KEY", "ENTITY", "FIELDS", "clone", "digest", "mro"} <= names
    assert sorted(n for n in names if py_name(n) == n) == []


def test_enum_members_never_shadow_the_enum() -> None:
    names = {n for n in dir(enum.StrEnum)} | {"name", "value", "mro"}
    assert sorted(n for n in names if enum_member(n) == n) == []


def test_episode_attributes_leave_the_prefixes_free() -> None:
    """Tools, fns and tables become ``tool_<name>``, ``fn_<name>``, ``t_<name>`` on the
    episode class: no attribute of the runtime's ``Episode`` may start like that."""
    episode = load_package(GENERATED / "mobile_messaging").World()
    own = set(dir(Episode)) | {n for n in vars(episode) if not n.startswith("t_")}
    assert sorted(n for n in own if n.startswith(("tool_", "fn_", "t_"))) == []


def test_package_names_never_shadow_a_module() -> None:
    modules = {m for m in sys.stdlib_module_names if IDENT.fullmatch(m)} | {"worldspec"}
    assert sorted(m for m in modules if snake_case(m) in modules) == []
    assert snake_case("Json") == "json_" and snake_case("MobileMessaging") == "mobile_messaging"


def test_underscore_names_are_never_private() -> None:
    """Every ``_``-name becomes an ``x_``-name: nothing the generator names ``_...`` (the
    ``_State`` class, ``_PARAM_<param>``, a row's ``_digest``) is reachable."""
    names = [n for n in dangerous_names() if n.startswith("_")]
    assert len(names) > 50
    assert [n for n in names if not py_name(n).startswith("x_")] == []


def test_escaping_keeps_names_apart() -> None:
    names = dangerous_names()
    every = set(names) | {py_name(n) for n in names} | {py_name(py_name(n)) for n in names}
    assert len({py_name(n) for n in every}) == len(every)
    assert len({enum_member(n) for n in every}) == len(every)


def test_worlds_named_alike_get_packages_of_their_own(tmp_path: Path) -> None:
    """``FooBar`` and ``foo_bar`` are both ``foo_bar`` in snake case: neither package may
    overwrite the other."""
    for i, world in enumerate(("FooBar", "foo_bar")):
        (tmp_path / f"w{i}.world").write_text(
            f"world {world}\nstate {{ hits: int = {i} }}\n"
            "tool hits_now() -> int { return hits }\n", encoding="utf-8")
    result = check_specs([tmp_path])
    assert result.ok
    build = generate_all(result)
    assert sorted(p.name for p in build.packages) == ["foo_bar", "foo_bar_"]
    write_packages(build, tmp_path / "out")
    for package in build.packages:
        world: Any = load_package(tmp_path / "out" / package.name).World
        assert world.WORLD == package.world
        assert world().call("hits_now") == {"success": True, "data": int(world.WORLD == "foo_bar")}


@pytest.fixture(scope="module")
def battery(tmp_path_factory: pytest.TempPathFactory) -> Battery:
    return build_battery(tmp_path_factory.mktemp("names"), battery_names())


def test_the_battery_covers_every_position(battery: Battery) -> None:
    assert set(battery.accepted) == set(POSITIONS)
    names = battery_names()
    for position, accepted in battery.accepted.items():
        assert len(accepted) > 0.85 * len(names), position


def test_refused_names_are_the_languages_own(battery: Battery) -> None:
    """A name is refused only when the language reserves it: a word of the grammar, a
    builtin function or type of the language, the conversation task checks read (``reply``,
    ``replies``), or a method of the environment (WS208); ``state`` is also refused where a
    field follows it, since ``state.x`` always names the state item (WS215, WS216)."""
    own = (spec_keywords() | BUILTIN_NAMES | RESERVED_NAMES | set(t.PRIMITIVES)
           | set(GENERIC_TYPES) | set(CONVERSATION))
    assert [r for r in battery.refused if r.name not in own] == []
    assert {r.code for r in battery.refused} <= {"syntax", "WS101", "WS208", "WS304", "WS404",
                                                 "WS215", "WS216"}
    assert {r.name for r in battery.refused if r.code in ("WS215", "WS216")} <= {"state"}


_LIMITED = """
import resource, runpy, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
sys.argv = ["worldspec"] + sys.argv[1:]
runpy.run_module("worldspec", run_name="__main__")
"""


@dataclass
class Runs:
    """``mypy`` over the packages and ``worldspec check`` over the specs, started together
    (they are independent: on two cores the battery takes the longer of the two)."""

    mypy: subprocess.Popen[str]
    check: subprocess.Popen[str]

    def result(self, which: str) -> tuple[int, str, str]:
        process: subprocess.Popen[str] = getattr(self, which)
        out, err = process.communicate(timeout=900)
        return process.returncode, out, err


@pytest.fixture(scope="module")
def runs(battery: Battery) -> Iterator[Runs]:
    def start(*argv: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, *argv], cwd=REPO, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    started = Runs(
        start("-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", os.devnull,
              str(battery.out)),
        start("-c", _LIMITED, "check", "--format", "json", str(battery.folder)))
    yield started
    for process in (started.mypy, started.check):
        if process.poll() is None:
            process.kill()
        process.communicate()


def test_every_package_passes_mypy_strict(runs: Runs) -> None:
    status, out, err = runs.result("mypy")
    assert status == 0, (out + err)[:8000]


def test_every_package_imports_and_answers(battery: Battery) -> None:
    assert len(battery.packages) > len(battery_names())
    for package, position in sorted(battery.packages.items()):
        world: Any = load_package(battery.out / package).World
        episode = world()
        for tool, args, expected in battery.calls[package]:
            assert episode.call(tool, args) == expected, (position, package, tool, args)
        for name, task in world.TASKS.items():
            episode = world(task=name)
            for tool, args in task.solution:
                assert not episode.failed(episode.call(tool, dict(args))), (package, name)
            score = episode.score()
            assert score.reward == 1.0 and score.frame_ok, (package, name, score.to_json())


def test_check_reports_and_never_fails_internally(runs: Runs) -> None:
    """``worldspec check --format json`` compiles and runs every task of the battery: it
    answers with JSON and status 0, never with an internal error (status 3)."""
    status, out, err = runs.result("check")
    assert status == 0, (status, out[-2000:], err[-2000:])
    assert json.loads(out) is not None
