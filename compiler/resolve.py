"""Declarations to model: name collection, duplicate detection and type resolution.

``build_world`` turns the declarations visible from one file into a
:class:`~compiler.model.WorldModel` (types, state, tools, invariants,
config) without looking inside bodies; :mod:`compiler.typer` does that next.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from worldspec.compiler import types as t
from worldspec.compiler.builtins import BUILTIN_NAMES, CONVERSATION, MAX_STRING, format_too_wide
from worldspec.compiler.model import (
    RESULT_CONVENTIONS,
    AliasInfo,
    ConfigInfo,
    ConstInfo,
    EnumInfo,
    EnumMemberInfo,
    FieldInfo,
    InvariantInfo,
    ParamInfo,
    RecordInfo,
    StateInfo,
    ToolInfo,
    UnionInfo,
    WorldModel,
)
from worldspec.compiler.scope import RESERVED_NAMES
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink, Related, did_you_mean

__all__ = ["VisibleDecl", "build_world", "resolve_type_expr", "GENERIC_TYPES"]

#: Generic builtin types and how many type arguments each takes.
GENERIC_TYPES = {"list": 1, "set": 1, "map": 2, "row": 1}
#: primitive type -> the kind of refinement it takes (a range of values, or a length)
_REFINED = {"str": "str", "int": "number", "float": "number", "number": "number"}

_NAME_CHECKED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class VisibleDecl:
    """A declaration and the file that declares it."""

    decl: n.Decl
    file: str


def _first(seen: dict[str, n.Node], ident: n.Ident, sink: DiagnosticSink, code: str,
           what: str) -> bool:
    """Record ``ident`` in ``seen``; report a duplicate and return False if it was there."""
    previous = seen.get(ident.name)
    if previous is not None and previous is not ident:
        sink.report(code, ident.span, f"{what} '{ident.name}' is defined twice",
                    related=[Related(previous.span, "first defined here")])
        return False
    seen[ident.name] = ident
    return True


def resolve_type_expr(texpr: n.TypeExpr, world: WorldModel, sink: DiagnosticSink) -> t.Type:
    """A written type -> semantic type; unknown names are reported (WS202)."""
    name = texpr.name.name
    base: t.Type
    if name in GENERIC_TYPES:
        want = GENERIC_TYPES[name]
        if len(texpr.args) != want:
            sink.report("WS307", texpr.span, f"{name} takes {want} type argument"
                        f"{'s' if want > 1 else ''}, found {len(texpr.args)}",
                        hints=[f"write {name}[{', '.join(['T', 'V'][:want])}]"])
            base = t.UNKNOWN
        else:
            args = [resolve_type_expr(a, world, sink) for a in texpr.args]
            refinement = _refinement(texpr, "" if name == "row" else "collection", sink)
            if name == "row":
                base = _whole_row(texpr, args[0], sink)
            elif name == "list":
                base = t.ListOf(args[0], refinement)
            elif name == "set":
                base = t.SetOf(args[0], refinement)
            else:
                key = args[0]
                if not (key in (t.STR, t.INT, t.JSON) or t.is_unknown(key) or
                        (isinstance(key, t.Named) and key.kind == "enum")):
                    sink.report("WS308", texpr.args[0].span,
                                f"map keys must be str, int, an enum or json (int and str keys "
                                f"mixed), not {t.show(key)}")
                base = t.MapOf(key, args[1], refinement)
    else:
        if texpr.args:
            sink.report("WS307", texpr.span, f"{name} takes no type arguments")
        if name in t.PRIMITIVES:
            prim = t.PRIMITIVES[name]
            kind = _REFINED.get(name, "")
            refinement = _refinement(texpr, kind, sink)
            base = t.Prim(name, refinement) if refinement else prim
        elif name in world.enums:
            base = t.Named("enum", name)
            _refinement(texpr, "", sink)
        elif name in world.records:
            base = t.Named(world.records[name].kind, name)
            _refinement(texpr, "", sink)
        elif name in world.unions:
            base = t.Named("union", name)
            _refinement(texpr, "", sink)
        elif name in world.aliases:
            alias = world.aliases[name]
            base = alias.type
            if texpr.constraints:
                kind = _REFINED.get(base.name if isinstance(base, t.Prim) else "", "")
                refinement = _refinement(texpr, kind, sink)
                if refinement and isinstance(base, t.Prim):
                    base = t.Prim(base.name, _merge(base.refinement, refinement))
        else:
            candidates = [*t.PRIMITIVES, *GENERIC_TYPES, *world.enums, *world.records,
                          *world.unions, *world.aliases]
            sink.report("WS202", texpr.name.span, f"unknown type '{name}'",
                        hints=did_you_mean(name, candidates))
            base = t.UNKNOWN
    if texpr.optional and not t.is_unknown(base):
        return t.make_optional(base)
    return base


def _whole_row(texpr: n.TypeExpr, of: t.Type, sink: DiagnosticSink) -> t.Type:
    """``row[E]``: entity ``E`` shown whole in a result; anything else is reported (WS325)."""
    if isinstance(of, t.Named) and of.kind == "entity":
        return t.Named("entity", of.name, whole_row=True)
    if not t.is_unknown(of):
        hint = (f"write row[{t.show(of.inner)}]?" if isinstance(of, t.Optional)
                else "a record or a value already shows in full; write its type alone")
        sink.report("WS325", texpr.args[0].span, f"row[...] takes an entity, not {t.show(of)}",
                    hints=[hint])
    return t.UNKNOWN


def _merge(a: t.Refinement | None, b: t.Refinement) -> t.Refinement:
    if a is None:
        return b
    return t.Refinement(b.low if b.low is not None else a.low,
                        b.high if b.high is not None else a.high,
                        b.pattern or a.pattern)


def _refinement(texpr: n.TypeExpr, kind: str, sink: DiagnosticSink) -> t.Refinement | None:
    """Turn constraints into a refinement; ``kind`` says which constraints fit."""
    low: int | float | None = None
    high: int | float | None = None
    pattern: str | None = None
    for c in texpr.constraints:
        if isinstance(c, n.RangeConstraint):
            if kind not in ("str", "number", "collection"):
                sink.report("WS306", c.span, f"{texpr.name.name} cannot have a range")
                continue
            if kind in ("str", "collection"):
                for bound in (c.low, c.high):
                    if bound is not None and (isinstance(bound, float) or bound < 0):
                        sink.report("WS306", c.span, "a length range needs whole numbers >= 0")
                        break
            if texpr.name.name == "int":
                for bound in (c.low, c.high):
                    if isinstance(bound, float):
                        sink.report("WS306", c.span, "an int range needs whole-number bounds")
                        break
            if c.low is not None and c.high is not None and c.low > c.high:
                sink.report("WS306", c.span, f"empty range: {c.low} is above {c.high}")
            low, high = c.low, c.high
        else:
            if kind != "str":
                sink.report("WS306", c.span, f"only str can be matched against a pattern, not "
                            f"{texpr.name.name}")
                continue
            pattern = c.pattern
    if low is None and high is None and pattern is None:
        return None
    return t.Refinement(low, high, pattern)


def _absent_field_type(rec: RecordInfo, f: n.Field, typ: t.Type,
                       sink: DiagnosticSink) -> t.Type:
    """The type of a field that may be absent (``name?: T``): ``T?``, none meaning absent."""
    problem = None
    if rec.kind != "record":
        problem = (f"'{f.name.name}?' may be absent, which only record fields may be; a row "
                   f"of {rec.name} has every field (make it optional: {f.name.name}: T?)")
    elif isinstance(typ, t.Optional) or typ == t.JSON:
        problem = (f"'{f.name.name}?' may be absent, so it cannot also be null "
                   f"({t.show(typ)}): none is how an absent field reads")
    elif f.default is not None:
        problem = f"'{f.name.name}?' may be absent, so it has no default"
    if problem is not None:
        sink.report("WS323", f.span, problem)
    return t.make_optional(typ)


def _check_builtin_clash(ident: n.Ident, what: str, sink: DiagnosticSink,
                         reserved: bool = False) -> None:
    if ident.name in BUILTIN_NAMES or (reserved and ident.name in RESERVED_NAMES):
        kind = "a builtin" if ident.name in BUILTIN_NAMES else \
            "a method of the generated environment"
        sink.report("WS208", ident.span, f"{what} '{ident.name}' clashes with {kind}",
                    hints=[f"rename it, e.g. '{ident.name}_'"] if ident.name else [])


def _sequence_format_ok(fmt: str) -> bool:
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(fmt) if f is not None]
    except ValueError:
        return False
    if len(fields) != 1 or fields[0] not in ("", "0"):
        return False
    try:
        fmt.format(1)
    except (ValueError, IndexError, KeyError):
        return False
    return True


def build_world(name: str, doc: str | None, file: str, visible: Iterable[VisibleDecl],
                sink: DiagnosticSink) -> WorldModel:
    """Collect and resolve the declarations visible from ``file`` into a world model.

    State, config, tools and invariants are taken from ``file`` only (a world
    is one file plus the libraries it imports).
    """
    world = WorldModel(name=name, doc=doc, file=file, config=ConfigInfo())
    decls = list(visible)
    values: dict[str, n.Node] = {}     # types, fns and state share one namespace

    # 1. names of types and helpers
    for vd in decls:
        d = vd.decl
        if isinstance(d, (n.EnumDecl, n.RecordDecl, n.EntityDecl, n.UnionDecl, n.AliasDecl)):
            _check_builtin_clash(d.name, "type", sink)
            if d.name.name in t.PRIMITIVES or d.name.name in GENERIC_TYPES:
                sink.report("WS208", d.name.span, f"type '{d.name.name}' clashes with a "
                            "builtin type")
                continue
            if not _first(values, d.name, sink, "WS203", "type"):
                continue
            if isinstance(d, n.EnumDecl):
                members: dict[str, EnumMemberInfo] = {}
                seen: dict[str, n.Node] = {}
                values_seen: dict[str, n.Node] = {}
                for m in d.members:
                    if _first(seen, m.name, sink, "WS204", "enum member"):
                        value = m.value if m.value is not None else m.name.name
                        if value in values_seen:
                            sink.report("WS204", m.span, f"enum value '{value}' is used twice",
                                        related=[Related(values_seen[value].span,
                                                         "first used here")])
                        values_seen[value] = m
                        members[m.name.name] = EnumMemberInfo(m.name.name, value, m.doc)
                world.enums[d.name.name] = EnumInfo(d.name.name, d.doc, members, d, vd.file)
            elif isinstance(d, (n.RecordDecl, n.EntityDecl)):
                kind = "entity" if isinstance(d, n.EntityDecl) else "record"
                world.records[d.name.name] = RecordInfo(d.name.name, kind, d.doc, {}, d,  # type: ignore[arg-type]
                                                        vd.file)
            elif isinstance(d, n.UnionDecl):
                world.unions[d.name.name] = UnionInfo(d.name.name, d.doc, d.tag_field.name, {},
                                                      d, vd.file)
        elif isinstance(d, n.FnDecl):
            _check_builtin_clash(d.name, "helper", sink)
            _first(values, d.name, sink, "WS203", "name")
        elif isinstance(d, n.ConstDecl):
            _check_builtin_clash(d.name, "const", sink)
            _first(values, d.name, sink, "WS203", "name")

    # 2. aliases, in dependency order (an alias may use another alias)
    pending = [vd for vd in decls if isinstance(vd.decl, n.AliasDecl)
               and values.get(vd.decl.name.name) is vd.decl.name]
    for vd in _alias_order(pending, sink):
        d = vd.decl
        assert isinstance(d, n.AliasDecl)
        world.aliases[d.name.name] = AliasInfo(d.name.name, resolve_type_expr(d.type, world, sink),
                                               d.doc, d, vd.file)

    # 3. record and entity fields, union variants
    for rec in world.records.values():
        seen_fields: dict[str, n.Node] = {}
        for f in rec.node.fields:
            if not _first(seen_fields, f.name, sink, "WS204", "field"):
                continue
            typ = resolve_type_expr(f.type, world, sink)
            if f.may_be_absent:
                typ = _absent_field_type(rec, f, typ, sink)
            rec.fields[f.name.name] = FieldInfo(f.name.name, typ, f.default, f.doc, f.is_key, f,
                                                f.may_be_absent)
        if rec.kind == "record":
            for f in rec.node.fields:
                if f.is_key:
                    sink.report("WS501", f.span, f"record {rec.name} cannot have a key; "
                                "declare it as an entity to store it in a table")
    for union in world.unions.values():
        seen_tags: dict[str, n.Node] = {}
        for v in union.node.variants:
            tag_ident = n.Ident(name=v.tag, span=v.span)
            if not _first(seen_tags, tag_ident, sink, "WS204", "variant"):
                continue
            rec_info = world.records.get(v.record.name)
            if rec_info is None:
                sink.report("WS202", v.record.span, f"unknown record '{v.record.name}'",
                            hints=did_you_mean(v.record.name, world.records))
                continue
            if rec_info.kind != "record":
                sink.report("WS301", v.record.span, f"union variants must be records; "
                            f"{v.record.name} is an entity")
                continue
            tag_field = rec_info.fields.get(union.tag_field)
            if tag_field is not None and tag_field.type != t.STR:
                sink.report("WS301", tag_field.node.span, f"'{union.tag_field}' is the tag of "
                            f"union {union.name} and must be a str")
            union.variants[v.tag] = v.record.name

    # 4. world-only declarations from the world's own file
    if name:
        _world_parts(world, [vd for vd in decls if vd.file == file], values, sink)
    # helpers, visible from any file
    for vd in decls:
        d = vd.decl
        if isinstance(d, n.FnDecl) and values.get(d.name.name) is d.name:
            world.fns[d.name.name] = _tool_info(d, world, sink, vd.file, is_fn=True)
        elif isinstance(d, n.ConstDecl) and values.get(d.name.name) is d.name:
            declared = resolve_type_expr(d.type, world, sink) if d.type is not None else None
            world.consts[d.name.name] = ConstInfo(d.name.name, declared, d, vd.file)
    return world


def _alias_order(pending: list[VisibleDecl], sink: DiagnosticSink) -> list[VisibleDecl]:
    by_name = {vd.decl.name.name: vd for vd in pending}  # type: ignore[union-attr]
    order: list[VisibleDecl] = []
    state: dict[str, int] = {}

    def refs(texpr: n.TypeExpr) -> list[str]:
        out = [texpr.name.name]
        for a in texpr.args:
            out += refs(a)
        return out

    def visit(name: str) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            vd = by_name[name]
            sink.report("WS202", vd.decl.span, f"type alias '{name}' refers to itself")
            return
        state[name] = 1
        d = by_name[name].decl
        assert isinstance(d, n.AliasDecl)
        for ref in refs(d.type):
            if ref in by_name and state.get(ref) != 1:
                visit(ref)
            elif ref in by_name:
                sink.report("WS202", d.type.span, f"type alias '{name}' refers to itself")
        state[name] = 2
        order.append(by_name[name])

    for name in by_name:
        visit(name)
    return order


def _tool_info(d: n.ToolDecl | n.FnDecl, world: WorldModel, sink: DiagnosticSink, file: str,
               is_fn: bool) -> ToolInfo:
    params: list[ParamInfo] = []
    seen: dict[str, n.Node] = {}
    for p in d.params:
        if not _first(seen, p.name, sink, "WS204", "parameter"):
            continue
        params.append(ParamInfo(p.name.name, resolve_type_expr(p.type, world, sink), p.default,
                                p.doc, p.not_found, p))
    returns = resolve_type_expr(d.returns, world, sink) if d.returns is not None else None
    return ToolInfo(d.name.name, params, returns, d.doc, d, file, is_fn=is_fn)


_CONFIG_KEYS = ("results", "clock", "tick", "seed", "arguments", "class_name", "unknown_tool",
                "reward")
_ARGUMENT_STYLES = ("worldspec", "python", "dynamic")


def _world_parts(world: WorldModel, own: list[VisibleDecl], values: dict[str, n.Node],
                 sink: DiagnosticSink) -> None:
    state_blocks = [vd.decl for vd in own if isinstance(vd.decl, n.StateDecl)]
    for extra in state_blocks[1:]:
        sink.report("WS504", extra.span, "a world has one state block",
                    related=[Related(state_blocks[0].span, "first state block")])
    config_blocks = [vd.decl for vd in own if isinstance(vd.decl, n.ConfigDecl)]
    for extra_config in config_blocks[1:]:
        sink.report("WS504", extra_config.span, "a world has one config block",
                    related=[Related(config_blocks[0].span, "first config block")])
    if config_blocks:
        config = config_blocks[0]
        assert isinstance(config, n.ConfigDecl)
        _config(world, config, sink)
    policies = [vd.decl for vd in own if isinstance(vd.decl, n.PolicyDecl)]
    for extra_policy in policies[1:]:
        sink.report("WS504", extra_policy.span, "a world has one policy",
                    related=[Related(policies[0].span, "first policy")])
    loads = [vd.decl for vd in own if isinstance(vd.decl, n.LoadDecl)]
    for extra_load in loads[1:]:
        sink.report("WS504", extra_load.span, "a world has one on load block",
                    related=[Related(loads[0].span, "first on load block")])
    if loads:
        assert isinstance(loads[0], n.LoadDecl)
        world.load_node = loads[0]
    results = [vd.decl for vd in own if isinstance(vd.decl, n.ResultsDecl)]
    for extra_results in results[1:]:
        sink.report("WS504", extra_results.span, "a world has one results block",
                    related=[Related(results[0].span, "first results block")])
    if results:
        assert isinstance(results[0], n.ResultsDecl)
        world.results_node = results[0]
    if policies:
        policy = policies[0]
        assert isinstance(policy, n.PolicyDecl)
        world.policy_node = policy
        world.policy = _policy_text(policy, world.file, sink)
    if state_blocks:
        state_block = state_blocks[0]
        assert isinstance(state_block, n.StateDecl)
        own_items: dict[str, n.Node] = {}
        for item in state_block.items:
            _check_builtin_clash(item.name, "state", sink, reserved=True)
            if item.name.name in CONVERSATION:
                sink.report("WS208", item.name.span, f"state '{item.name.name}' clashes with "
                            f"`{item.name.name}` of task checks "
                            f"({CONVERSATION[item.name.name][1]})",
                            hints=[f"rename it, e.g. '{item.name.name}_text'"])
            if not _first(own_items, item.name, sink, "WS204", "state item"):
                continue
            if not _first(values, item.name, sink, "WS203", "name"):
                continue
            world.state[item.name.name] = _state_info(item, world, sink)
        _check_state_aliases(world, sink)
    tools: dict[str, n.Node] = {}
    invariants: dict[str, n.Node] = {}
    for vd in own:
        d = vd.decl
        if isinstance(d, n.ToolDecl):
            # a tool's name is only a key of TOOLS and the suffix of `tool_<name>`: any name
            # is free, `reset` and `diff` included (the agent-visible name is the original's)
            _check_builtin_clash(d.name, "tool", sink)
            if _first(tools, d.name, sink, "WS203", "tool"):
                world.tools[d.name.name] = _tool_info(d, world, sink, vd.file, is_fn=False)
        elif isinstance(d, n.InvariantDecl):
            if _first(invariants, d.name, sink, "WS203", "invariant"):
                world.invariants[d.name.name] = InvariantInfo(d.name.name, d.doc, d.condition, d)


def _policy_text(policy: n.PolicyDecl, spec_file: str, sink: DiagnosticSink) -> str:
    """The policy's text: inline, or read from the file next to the spec.

    A file's line endings are normalised and its surrounding blank lines dropped, so
    that the generated code does not depend on how the file was checked out.
    """
    if not policy.from_file:
        return policy.source
    path = Path(spec_file).parent / policy.source
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        sink.report("WS213", policy.span, f"policy file '{policy.source}' not found",
                    hints=["the path is relative to the spec file"])
        return ""
    except UnicodeDecodeError as exc:
        sink.report("WS213", policy.span, f"policy file '{policy.source}' is not UTF-8 text "
                    f"(byte {exc.start})")
        return ""
    except OSError as exc:
        sink.report("WS213", policy.span, f"policy file '{policy.source}' cannot be read: "
                    f"{exc.strerror or exc}")
        return ""
    return text.replace("\r\n", "\n").strip("\n")


def _check_state_aliases(world: WorldModel, sink: DiagnosticSink) -> None:
    """WS514: a state item's loading alias (``from "key"``) is a key data can give (not
    empty), and differs from every state item's name and from the other aliases, so each key
    of loaded data names one item."""
    aliases: dict[str, StateInfo] = {}
    for s in world.state.values():
        alias = s.node.alias
        if alias is None:
            continue
        shown = json.dumps(alias, ensure_ascii=False)
        if not alias.strip():
            sink.report("WS514", s.node.span, f"state '{s.name}' loads from a blank key",
                        hints=["name the key the original's data gives it under, "
                               'e.g. from "engineState"'])
        elif alias == s.name:
            sink.report("WS514", s.node.span, f"state '{s.name}' loads from its own name",
                        hints=[f'leave out `from {shown}`'])
        elif alias in world.state:
            other = world.state[alias]
            sink.report("WS514", s.node.span, f"state '{s.name}' loads from {shown}, the name "
                        f"of state '{other.name}'",
                        hints=["data under that key would be ambiguous; each key of loaded data "
                               "names one state item"],
                        related=[Related(other.node.span, f"state '{other.name}'")])
        elif alias in aliases:
            other = aliases[alias]
            sink.report("WS514", s.node.span, f"state '{s.name}' and state '{other.name}' both "
                        f"load from {shown}",
                        related=[Related(other.node.span, f"state '{other.name}'")])
        else:
            aliases[alias] = s


def _state_info(item: n.StateItem, world: WorldModel, sink: DiagnosticSink) -> StateInfo:
    kind = item.kind
    if isinstance(kind, n.TableKind):
        entity = kind.entity.name
        rec = world.records.get(entity)
        if rec is None:
            sink.report("WS202", kind.entity.span, f"unknown entity '{entity}'",
                        hints=did_you_mean(entity, world.entities))
            return StateInfo(item.name.name, "table", t.UNKNOWN, item.default, item.doc, item)
        if rec.kind != "entity":
            sink.report("WS501", kind.entity.span, f"a table holds entities; {entity} is a "
                        "record", hints=[f"declare it as `entity {entity}` with a key field"])
            return StateInfo(item.name.name, "table", t.UNKNOWN, item.default, item.doc, item)
        return StateInfo(item.name.name, "table", t.Table(entity), item.default, item.doc, item,
                         entity=entity)
    if isinstance(kind, n.SequenceKind):
        wide = format_too_wide(kind.format)
        if wide is not None:  # judged first: formatting it to check it would build it
            sink.report("WS411", kind.span, f"sequence format \"{kind.format}\" pads ids to "
                        f"{wide} characters; a call may build strings of at most "
                        f"{MAX_STRING:,}")
        elif not _sequence_format_ok(kind.format):
            sink.report("WS506", kind.span, f"invalid sequence format \"{kind.format}\"",
                        hints=['use one integer field, e.g. "MSG{:03d}" or "U{}"'])
        return StateInfo(item.name.name, "sequence", t.SEQUENCE, item.default, item.doc, item,
                         format=kind.format)
    return StateInfo(item.name.name, "value", resolve_type_expr(kind, world, sink), item.default,
                     item.doc, item)


def _config(world: WorldModel, block: n.ConfigDecl, sink: DiagnosticSink) -> None:
    seen: dict[str, n.Node] = {}
    cfg = world.config
    for item in block.items:
        key = item.name.name
        if key not in _CONFIG_KEYS:
            sink.report("WS503", item.name.span, f"unknown config key '{key}'",
                        hints=did_you_mean(key, _CONFIG_KEYS) or
                        [f"keys: {', '.join(_CONFIG_KEYS)}"])
            continue
        if not _first(seen, item.name, sink, "WS204", "config key"):
            continue
        value = item.value
        if key == "results":
            word = value.name if isinstance(value, n.DataName) else \
                value.value if isinstance(value, n.DataString) else None
            if word not in RESULT_CONVENTIONS:
                sink.report("WS503", value.span, "results must be one of "
                            f"{', '.join(RESULT_CONVENTIONS)}",
                            hints=did_you_mean(str(word), RESULT_CONVENTIONS))
            else:
                cfg.results = word
                cfg.results_span = value.span
        elif key == "arguments":
            word = value.name if isinstance(value, n.DataName) else \
                value.value if isinstance(value, n.DataString) else None
            if word not in _ARGUMENT_STYLES:
                sink.report("WS503", value.span, "arguments must be worldspec, python or dynamic",
                            hints=did_you_mean(str(word), _ARGUMENT_STYLES))
            else:
                cfg.arguments = word
        elif key == "reward":  # the mode is judged by rules/reward_modes.py, with the tasks'
            cfg.reward = value.name if isinstance(value, n.DataName) else \
                value.value if isinstance(value, n.DataString) else ""
            cfg.reward_span = value.span
        elif key == "class_name":
            text = value.value if isinstance(value, n.DataString) else None
            if text is None or not text.isidentifier():
                sink.report("WS503", value.span, "class_name must be a string holding a "
                            'Python class name, such as "RetailTools"')
            else:
                cfg.class_name = text
        elif key == "unknown_tool":
            text = value.value if isinstance(value, n.DataString) else None
            rest = text.replace("{name}", "") if text is not None else ""
            if text is None or text.strip() == "" or "{" in rest or "}" in rest:
                sink.report("WS503", value.span, "unknown_tool must be a non-empty string; "
                            "{name} in it stands for the tool name, and it holds no other "
                            "braces", hints=["""e.g. "Tool '{name}' not found." """.strip()])
            else:
                cfg.unknown_tool = text
        elif key == "clock":
            from worldspec.compiler.data_check import datetime_text_problem

            text = value.value if isinstance(value, n.DataString) else None
            problem = datetime_text_problem(text) if text is not None else None
            if text is not None and problem is None:
                cfg.clock = text
            else:
                why = f": '{text}' {problem}" if text is not None else ""
                sink.report("WS503", value.span, "clock must be a naive ISO datetime string "
                            f'such as "2024-01-01T09:00:00"{why}')
        else:
            if not isinstance(value, n.DataInt) or value.value < 0:
                sink.report("WS503", value.span, f"{key} must be a whole number >= 0")
            elif key == "tick":
                cfg.tick = value.value
            else:
                cfg.seed = value.value
