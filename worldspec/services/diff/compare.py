"""Find and classify the differences between two checked programs.

Both sides are compared as typed models, never as text: declarations are
matched by name, types are compared with their aliases resolved, and syntax
nodes compare without their spans, so comments, layout and formatting are not
changes at all. Each difference is reported under a row of the rule table
(:mod:`worldspec.services.diff.rules`), which decides its level and area.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import fields, replace
from typing import Any

from worldspec.compiler import types as t
from worldspec.compiler.api import CheckResult
from worldspec.compiler.model import FieldInfo, ParamInfo, RecordInfo, ToolInfo, WorldModel
from worldspec.dsl import nodes as n
from worldspec.services.diff.model import Change
from worldspec.services.diff.relations import (
    Relation,
    expr_text,
    relate_conditions,
    relate_types,
    type_text,
)
from worldspec.services.diff.rules import rule

__all__ = ["compare_models", "world_spans"]

_COORD_TEXT = 60   # how much of a condition a coordinate quotes
_VALUE_TEXT = 200  # how much of a data value an old/new value shows


def world_spans(result: CheckResult) -> dict[str, n.Span]:
    """The span of each world's ``world Name`` header."""
    out: dict[str, n.Span] = {}
    for source in result.program.files.values():
        for decl in source.module.decls:
            if isinstance(decl, n.WorldDecl):
                out.setdefault(decl.name.name, decl.name.span)
    return out


def compare_models(old: CheckResult, new: CheckResult) -> list[Change]:
    """Every semantic change from ``old`` to ``new``, worst first."""
    changes = _Changes()
    old_worlds, new_worlds = old.model.worlds, new.model.worlds
    new_headers = world_spans(new)
    anchor = next(iter(sorted(new_headers.values(), key=lambda s: (s.file, s.line))), None)
    for name, world in old_worlds.items():
        if name not in new_worlds:
            changes.add("world-removed", name, f"world {name}",
                        f"world '{name}' was removed, with its "
                        f"{len(world.tools)} tool(s) and {len(world.tasks)} task(s)",
                        span=anchor, old_span=world_spans(old).get(name),
                        tools=tuple(world.tools), tasks=tuple(world.tasks))
    for name, world in new_worlds.items():
        if name not in old_worlds:
            changes.add("world-added", name, f"world {name}", f"world '{name}' is new",
                        span=new_headers.get(name))
            continue
        header = new_headers.get(name) or n.Span(world.file, 1, 1, 1, 1)
        _WorldComparison(old_worlds[name], world, header, changes, _task_decls(new)).run()
    return sorted(changes.items, key=Change.sort_key)


def _task_decls(result: CheckResult) -> dict[str, n.TaskDecl]:
    """Every task declaration by name, including those the model left out for errors."""
    out: dict[str, n.TaskDecl] = {}
    for source in result.program.files.values():
        for decl in source.module.decls:
            if isinstance(decl, n.TaskDecl):
                out.setdefault(decl.name.name, decl)
    return out


class _Changes:
    """The sink every comparison reports into; the rule table gives level and area."""

    def __init__(self) -> None:
        self.items: list[Change] = []

    def add(self, rule_id: str, world: str, coordinate: str, message: str, *,
            old: str | None = None, new: str | None = None, span: n.Span | None = None,
            old_span: n.Span | None = None, tools: Iterable[str] = (),
            tasks: Iterable[str] = ()) -> None:
        row = rule(rule_id)
        self.items.append(Change(rule_id, row.level, row.area, world, coordinate, message,
                                 old, new, span, old_span, tuple(tools), tuple(tasks)))


def _text(value: str | None) -> str:
    return "(none)" if value is None else value


def _quoted(value: str | None) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _relation_rule(prefix: str, relation: Relation) -> str:
    return {Relation.NARROWER: f"{prefix}-narrowed", Relation.WIDER: f"{prefix}-widened",
            Relation.DIFFERENT: f"{prefix}-changed"}[relation]


def _condition_rule(prefix: str, relation: Relation) -> str:
    return {Relation.NARROWER: f"{prefix}-tightened", Relation.WIDER: f"{prefix}-loosened",
            Relation.DIFFERENT: f"{prefix}-changed"}[relation]


_RELATION_WORDS = {Relation.NARROWER: "accepts fewer values", Relation.WIDER:
                   "accepts more values", Relation.DIFFERENT: "changed type"}


def _field_required(f: FieldInfo) -> bool:
    """Data must give the field: no default, and none is not a value of its type."""
    return f.default is None and not isinstance(f.type, t.Optional) and f.type != t.JSON


def _param_required(p: ParamInfo) -> bool:
    """The agent must pass the parameter (the generated dispatcher's own test)."""
    return p.default is None and not isinstance(p.type, t.Optional)


def _without_messages(node: n.Node) -> n.Node:
    """``node`` with every ``require`` dropped and every ``fail`` message blanked.

    What is left is what a tool *does*; preconditions and messages have
    rules of their own.
    """
    if isinstance(node, n.Fail):
        return replace(node, message=n.StrLit(value="", span=node.span))
    changes: dict[str, Any] = {}
    for f in fields(node):
        if f.name == "span":
            continue
        value = getattr(node, f.name)
        if isinstance(value, n.Node):
            changes[f.name] = _without_messages(value)
        elif isinstance(value, tuple):
            changes[f.name] = tuple(_without_messages(v) if isinstance(v, n.Node) else v
                                    for v in value if not isinstance(v, n.Require))
    return replace(node, **changes)


def _requires(body: n.Block) -> list[n.Require]:
    return [s for s in n.walk(body) if isinstance(s, n.Require)]


def _fails(body: n.Block) -> list[n.Fail]:
    return [s for s in n.walk(body) if isinstance(s, n.Fail)]


def _calls_to(body: n.Node, names: Iterable[str]) -> set[str]:
    wanted = set(names)
    return {c.func.name for c in n.walk(body)
            if isinstance(c, n.Call) and isinstance(c.func, n.NameRef) and c.func.name in wanted}


def _solution_text(solution: n.Solution | None) -> str:
    if solution is None:
        return "(none)"
    calls = []
    for call in solution.calls:
        args = ", ".join(f"{a.name.name}: {expr_text(a.value)}" if a.name is not None and
                         not isinstance(a.value, n.Lambda) else "…" for a in call.args)
        calls.append(f"{call.tool.name}({args})")
    calls += [f"reply {json.dumps(r.text, ensure_ascii=False)}" for r in solution.replies]
    return "; ".join(calls)


def _solution_tools(task: n.TaskDecl) -> tuple[str, ...]:
    solution = task.solution
    return tuple(dict.fromkeys(c.tool.name for c in solution.calls)) if solution else ()


def _value_text(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= _VALUE_TEXT else text[:_VALUE_TEXT - 1] + "…"


def _setting_text(item: n.TaskItem | None) -> str:
    """A task's ``split`` or ``seed`` as text."""
    if isinstance(item, n.Split):
        return item.name.name
    if isinstance(item, n.Seed):
        return str(item.value)
    return "(none)"


def _frame_covers(targets: set[str], target: str) -> bool:
    """Whether a frame listing ``targets`` lets ``target`` change."""
    return target in targets or target.split(".", 1)[0] in targets


class _WorldComparison:
    """The comparison of one world present on both sides."""

    def __init__(self, old: WorldModel, new: WorldModel, header: n.Span,
                 changes: _Changes, declared: Mapping[str, n.TaskDecl]) -> None:
        self.old, self.new, self.header, self.changes = old, new, header, changes
        self.name = new.name
        #: the new side's task declarations, those with errors included
        self.declared = declared

    def add(self, rule_id: str, coordinate: str, message: str, **kw: Any) -> None:
        self.changes.add(rule_id, self.name, coordinate, message, **kw)

    def run(self) -> None:
        self.world_settings()
        self.types()
        self.state()
        self.invariants()
        self.helpers()
        self.tools()
        self.tasks()

    # ------------------------------------------------------------------ world
    def world_settings(self) -> None:
        old, new = self.old, self.new
        if old.doc != new.doc:
            self.add("world-description-changed", f"world {self.name}",
                     "the world's description changed (the agent's system prompt shows it)",
                     old=_text(old.doc), new=_text(new.doc), span=self.header)
        if old.policy != new.policy:
            span = new.policy_node.span if new.policy_node is not None else self.header
            self.add("policy-changed", f"world {self.name} / policy",
                     "the world's policy changed (the agent's system prompt shows it)",
                     old=_quoted(old.policy) if old.policy else "(none)",
                     new=_quoted(new.policy) if new.policy else "(none)", span=span)
        if old.config.results != new.config.results:
            self.add("result-convention-changed", "config results",
                     f"the result convention changed from {old.config.results} to "
                     f"{new.config.results}: every tool result and error looks different",
                     old=old.config.results, new=new.config.results, span=self.header,
                     tools=tuple(new.tools))
        for key in ("clock", "tick"):
            before, after = getattr(old.config, key), getattr(new.config, key)
            if before != after:
                self.add("clock-changed", f"config {key}",
                         f"config {key} changed: the episode clock differs", old=str(before),
                         new=str(after), span=self.header, tools=tuple(new.tools))
        shapes = (_results_text(old), old.config.arguments, old.config.class_name,
                  old.config.unknown_tool)
        if shapes != (_results_text(new), new.config.arguments, new.config.class_name,
                      new.config.unknown_tool):
            self.add("failure-texts-changed", "config arguments / results",
                     "how failures read changed (the custom result shapes or the argument "
                     "error style): the agent sees other results and errors",
                     old=f"{shapes[1]} {shapes[0]}".strip(),
                     new=f"{new.config.arguments} {_results_text(new)}".strip(),
                     span=self.header, tools=tuple(new.tools))
        for name in sorted(set(old.consts) | set(new.consts)):
            before, after = _const_text(old, name), _const_text(new, name)
            if before != after:
                const = new.consts.get(name) or old.consts[name]
                self.add("const-changed", f"const {name}",
                         f"const {name} changed: every tool, helper and check reading it may "
                         "behave differently", old=before or "(none)", new=after or "(none)",
                         span=const.node.span, tools=tuple(new.tools))
        if old.config.seed != new.config.seed:
            self.add("seed-changed", "config seed", "config seed changed: random draws differ",
                     old=str(old.config.seed), new=str(new.config.seed), span=self.header,
                     tools=tuple(new.tools))

    # ------------------------------------------------------------------ types
    def _declared(self, world: WorldModel) -> dict[str, tuple[str, Any]]:
        out: dict[str, tuple[str, Any]] = {}
        for name, enum in world.enums.items():
            out[name] = ("enum", enum)
        for name, rec in world.records.items():
            out[name] = (rec.kind, rec)
        for name, union in world.unions.items():
            out[name] = ("union", union)
        return out

    def types(self) -> None:
        old_decls, new_decls = self._declared(self.old), self._declared(self.new)
        for name, (kind, info) in old_decls.items():
            if name not in new_decls:
                self.add("type-removed", f"{kind} {name}", f"{kind} '{name}' was removed",
                         span=self.header, old_span=info.node.name.span)
        for name, (kind, info) in new_decls.items():
            if name not in old_decls:
                self.add("type-added", f"{kind} {name}", f"{kind} '{name}' is new",
                         span=info.node.name.span)
                continue
            old_kind, old_info = old_decls[name]
            if old_kind != kind:
                self.add("type-kind-changed", f"{kind} {name}",
                         f"'{name}' was a {old_kind} and is now a {kind}", old=old_kind,
                         new=kind, span=info.node.name.span, old_span=old_info.node.name.span)
                continue
            if old_info.doc != info.doc:
                self.add("doc-changed", f"{kind} {name}", f"the description of {kind} "
                         f"'{name}' changed", old=_text(old_info.doc), new=_text(info.doc),
                         span=info.node.name.span, old_span=old_info.node.name.span)
            if kind == "enum":
                self.enum(name, old_info.node, info.node)
            elif kind == "union":
                self.union(name, old_info, info)
            else:
                self.record(old_info, info)

    def enum(self, name: str, old: n.EnumDecl, new: n.EnumDecl) -> None:
        old_members = {m.name.name: m for m in old.members}
        new_members = {m.name.name: m for m in new.members}
        where = f"enum {name}"
        for member, node in old_members.items():
            if member not in new_members:
                self.add("enum-member-removed", f"{where} / member {member}",
                         f"enum '{name}' lost member '{member}': data and arguments using it "
                         "are rejected", old=member, span=new.name.span,
                         old_span=node.name.span)
        for member, node in new_members.items():
            before = old_members.get(member)
            if before is None:
                self.add("enum-member-added", f"{where} / member {member}",
                         f"enum '{name}' has a new member '{member}'", new=member,
                         span=node.name.span)
                continue
            old_value, new_value = before.value or member, node.value or member
            if old_value != new_value:
                self.add("enum-member-value-changed", f"{where} / member {member}",
                         f"member '{member}' of enum '{name}' is now written "
                         f"{_quoted(new_value)}, not {_quoted(old_value)}",
                         old=_quoted(old_value), new=_quoted(new_value), span=node.span,
                         old_span=before.span)
            if before.doc != node.doc:
                self.add("doc-changed", f"{where} / member {member}",
                         f"the description of member '{member}' of enum '{name}' changed",
                         old=_text(before.doc), new=_text(node.doc), span=node.span,
                         old_span=before.span)

    def union(self, name: str, old: Any, new: Any) -> None:
        where = f"union {name}"
        if old.tag_field != new.tag_field:
            self.add("union-tag-changed", f"{where} / tag", f"union '{name}' is now tagged by "
                     f"'{new.tag_field}', not '{old.tag_field}'", old=old.tag_field,
                     new=new.tag_field, span=new.node.tag_field.span,
                     old_span=old.node.tag_field.span)
        for tag, record in old.variants.items():
            if tag not in new.variants:
                self.add("union-variant-removed", f"{where} / variant {tag}",
                         f"union '{name}' lost variant '{tag}'", old=f"{tag}: {record}",
                         span=new.node.name.span, old_span=old.node.name.span)
        for tag, record in new.variants.items():
            before = old.variants.get(tag)
            span = next((v.span for v in new.node.variants if v.tag == tag), new.node.span)
            if before is None:
                self.add("union-variant-added", f"{where} / variant {tag}",
                         f"union '{name}' has a new variant '{tag}'", new=f"{tag}: {record}",
                         span=span)
            elif before != record:
                self.add("union-variant-changed", f"{where} / variant {tag}",
                         f"variant '{tag}' of union '{name}' is now a {record}, not a "
                         f"{before}", old=before, new=record, span=span)

    def record(self, old: RecordInfo, new: RecordInfo) -> None:
        where = f"{new.kind} {new.name}"
        old_key, new_key = old.key, new.key
        if new.kind == "entity" and old_key is not None and new_key is not None and (
                old_key.name != new_key.name
                or relate_types(old_key.type, new_key.type) is not Relation.SAME):
            self.add("key-changed", f"{where} / key", f"the key of entity '{new.name}' is now "
                     f"{new_key.name}: {type_text(new_key.type)}",
                     old=f"{old_key.name}: {type_text(old_key.type)}",
                     new=f"{new_key.name}: {type_text(new_key.type)}", span=new_key.node.span,
                     old_span=old_key.node.span)
        for name, f in old.fields.items():
            if name not in new.fields:
                self.add("field-removed", f"{where} / field {name}", f"field '{name}' of "
                         f"{new.kind} '{new.name}' was removed",
                         old=f"{name}: {type_text(f.type)}", span=new.node.name.span,
                         old_span=f.node.span)
        for name, f in new.fields.items():
            before = old.fields.get(name)
            coordinate = f"{where} / field {name}"
            if before is None:
                required = _field_required(f)
                self.add("field-added-required" if required else "field-added-optional",
                         coordinate, f"{new.kind} '{new.name}' has a new "
                         f"{'required' if required else 'optional'} field '{name}'"
                         + (": data without it no longer loads" if required else ""),
                         new=f"{name}: {type_text(f.type)}" + (
                             f" = {expr_text(f.default)}" if f.default is not None else ""),
                         span=f.node.span)
                continue
            self.field(coordinate, before, f)

    def field(self, coordinate: str, old: FieldInfo, new: FieldInfo) -> None:
        span, old_span = new.node.span, old.node.span
        if not (old.is_key or new.is_key):  # a key's type is the rule key-changed's
            relation = relate_types(old.type, new.type)
            if relation is not Relation.SAME:
                self.add(_relation_rule("field-type", relation), coordinate,
                         f"field '{new.name}' {_RELATION_WORDS[relation]}: "
                         f"{type_text(old.type)} -> {type_text(new.type)}",
                         old=type_text(old.type), new=type_text(new.type), span=span,
                         old_span=old_span)
        old_required, new_required = _field_required(old), _field_required(new)
        if old_required and not new_required:
            self.add("field-now-optional", coordinate, f"field '{new.name}' may now be left "
                     "out of data", old="required", new="optional", span=span,
                     old_span=old_span)
        elif new_required and not old_required:
            self.add("field-now-required", coordinate, f"field '{new.name}' must now be "
                     "given in data", old="optional", new="required", span=span,
                     old_span=old_span)
        elif old.default != new.default:
            self.add("field-default-changed", coordinate,
                     f"the default of field '{new.name}' changed",
                     old=expr_text(old.default), new=expr_text(new.default), span=span,
                     old_span=old_span)
        if old.doc != new.doc:
            self.add("doc-changed", coordinate, f"the description of field '{new.name}' "
                     "changed", old=_text(old.doc), new=_text(new.doc), span=span,
                     old_span=old_span)

    # ------------------------------------------------------------------ state
    def state(self) -> None:
        old_state, new_state = self.old.state, self.new.state
        for name, item in old_state.items():
            if name not in new_state:
                self.add("state-removed", f"state {name}", f"state '{name}' was removed: "
                         "data giving it no longer loads", old=self._state_text(item),
                         span=self.header, old_span=item.node.span)
        for name, item in new_state.items():
            before = old_state.get(name)
            coordinate = f"state {name}"
            span = item.node.span
            if before is None:
                self.add("state-added", coordinate, f"state '{name}' is new",
                         new=self._state_text(item), span=span)
                continue
            old_text, new_text = self._state_text(before), self._state_text(item)
            kw: dict[str, Any] = {"old": old_text, "new": new_text, "span": span,
                                  "old_span": before.node.span}
            if before.kind != item.kind or (item.kind == "table" and before.entity !=
                                            item.entity):
                self.add("state-type-changed", coordinate, f"state '{name}' changed from "
                         f"{old_text} to {new_text}", **kw)
            elif item.kind == "sequence" and before.format != item.format:
                self.add("sequence-format-changed", coordinate, f"sequence '{name}' now "
                         f"formats ids as {_quoted(item.format)}", **kw)
            elif item.kind == "value":
                relation = relate_types(before.type, item.type)
                if relation is not Relation.SAME:
                    self.add(_relation_rule("state-type", relation), coordinate,
                             f"state '{name}' {_RELATION_WORDS[relation]}: "
                             f"{old_text} -> {new_text}", **kw)
            if before.kind == item.kind and before.default != item.default:
                self.add("state-default-changed", coordinate, f"the default of state "
                         f"'{name}' changed", old=expr_text(before.default),
                         new=expr_text(item.default), span=span, old_span=before.node.span)
            if before.doc != item.doc:
                self.add("doc-changed", coordinate, f"the description of state '{name}' "
                         "changed", old=_text(before.doc), new=_text(item.doc), span=span,
                         old_span=before.node.span)

    @staticmethod
    def _state_text(item: Any) -> str:
        if item.kind == "table":
            return f"table {item.entity}"
        if item.kind == "sequence":
            return f"sequence {_quoted(item.format)}"
        return str(type_text(item.type))

    # ------------------------------------------------------------- invariants
    def invariants(self) -> None:
        old_inv, new_inv = self.old.invariants, self.new.invariants
        writers = tuple(name for name, tool in self.new.tools.items() if not tool.read_only)
        for name, inv in old_inv.items():
            if name not in new_inv:
                self.add("invariant-removed", f"invariant {name}",
                         f"invariant '{name}' was removed: calls it rejected now succeed",
                         old=expr_text(inv.condition), span=self.header,
                         old_span=inv.node.span, tools=writers)
        for name, inv in new_inv.items():
            before = old_inv.get(name)
            coordinate = f"invariant {name}"
            span = inv.node.name.span
            if before is None:
                self.add("invariant-added", coordinate, f"invariant '{name}' is new: calls "
                         "and initial data that break it are rejected",
                         new=expr_text(inv.condition), span=span, tools=writers)
                continue
            relation = relate_conditions(before.condition, inv.condition)
            if relation is not Relation.SAME:
                self.add(_condition_rule("invariant", relation), coordinate,
                         self._condition_message(f"invariant '{name}'", relation),
                         old=expr_text(before.condition), new=expr_text(inv.condition),
                         span=inv.condition.span, old_span=before.condition.span,
                         tools=writers)
            if before.doc != inv.doc:
                self.add("error-message-changed", f"{coordinate} / message",
                         f"the message of invariant '{name}' changed (calls breaking it "
                         "fail with it)", old=_quoted(before.doc), new=_quoted(inv.doc),
                         span=span, old_span=before.node.name.span, tools=writers)

    @staticmethod
    def _condition_message(what: str, relation: Relation) -> str:
        if relation is Relation.NARROWER:
            return f"{what} is stricter: it accepts less than before"
        if relation is Relation.WIDER:
            return f"{what} is looser: it accepts more than before"
        return (f"{what} changed in a way that is not provably looser, so it may reject what "
                "it accepted")

    # ---------------------------------------------------------------- helpers
    def _users(self, world: WorldModel) -> dict[str, set[str]]:
        """For each helper, the tools that call it, directly or through other helpers."""
        calls = {name: _calls_to(fn.node.body, world.fns) for name, fn in world.fns.items()}
        users: dict[str, set[str]] = {name: set() for name in world.fns}
        for tool_name, tool in world.tools.items():
            todo = list(_calls_to(tool.node, world.fns))
            seen: set[str] = set()
            while todo:
                fn = todo.pop()
                if fn in seen:
                    continue
                seen.add(fn)
                users[fn].add(tool_name)
                todo.extend(calls.get(fn, ()))
        return users

    def helpers(self) -> None:
        old_fns, new_fns = self.old.fns, self.new.fns
        users = self._users(self.new)
        for name, fn in old_fns.items():
            if name not in new_fns:
                self.add("helper-removed", f"helper {name}", f"helper fn '{name}' was removed",
                         span=self.header, old_span=fn.node.name.span)
        for name, fn in new_fns.items():
            before = old_fns.get(name)
            span = fn.node.name.span
            if before is None:
                self.add("helper-added", f"helper {name}", f"helper fn '{name}' is new",
                         span=span)
                continue
            old_node, new_node = before.node, fn.node
            if (old_node.params, old_node.returns, old_node.body) != (
                    new_node.params, new_node.returns, new_node.body) or \
                    relate_types(before.returns or t.UNKNOWN, fn.returns or t.UNKNOWN) \
                    is not Relation.SAME:
                used = sorted(users.get(name, ()))
                by = f"; tools using it: {', '.join(used)}" if used else ""
                self.add("helper-changed", f"helper {name}", f"helper fn '{name}' changed{by}",
                         span=span, old_span=old_node.name.span, tools=used)
            if before.doc != fn.doc:
                self.add("doc-changed", f"helper {name}", f"the description of helper fn "
                         f"'{name}' changed", old=_text(before.doc), new=_text(fn.doc),
                         span=span, old_span=old_node.name.span)

    # ------------------------------------------------------------------ tools
    def tools(self) -> None:
        old_tools, new_tools = self.old.tools, self.new.tools
        for name, tool in old_tools.items():
            if name not in new_tools:
                self.add("tool-removed", f"tool {name}", f"tool '{name}' was removed: calls "
                         "to it fail", old=self._signature(tool), span=self.header,
                         old_span=tool.node.name.span, tools=(name,))
        for name, tool in new_tools.items():
            before = old_tools.get(name)
            if before is None:
                self.add("tool-added", f"tool {name}", f"tool '{name}' is new",
                         new=self._signature(tool), span=tool.node.name.span, tools=(name,))
            else:
                self.tool(before, tool)

    @staticmethod
    def _signature(tool: ToolInfo) -> str:
        params = ", ".join(f"{p.name}: {type_text(p.type)}" for p in tool.params)
        returns = f" -> {type_text(tool.returns)}" if tool.returns is not None else ""
        return f"{tool.name}({params}){returns}"

    def tool(self, old: ToolInfo, new: ToolInfo) -> None:
        name = new.name
        where = f"tool {name}"
        span, old_span = new.node.name.span, old.node.name.span
        tools = (name,)
        if old.doc != new.doc:
            self.add("tool-description-changed", where, f"the description of tool '{name}' "
                     "changed (the agent reads it)", old=_text(old.doc), new=_text(new.doc),
                     span=span, old_span=old_span, tools=tools)
        if old.returns is None or new.returns is None:
            relation = Relation.SAME if old.returns is new.returns else Relation.DIFFERENT
        else:
            relation = relate_types(old.returns, new.returns)
        if relation is not Relation.SAME:
            returns_span = new.node.returns.span if new.node.returns is not None else span
            self.add(_relation_rule("result-type", relation), f"{where} / result",
                     f"tool '{name}' now returns {type_text(new.returns)}, not "
                     f"{type_text(old.returns)}", old=type_text(old.returns),
                     new=type_text(new.returns), span=returns_span, old_span=old_span,
                     tools=tools)
        self.params(old, new)
        self.behaviour(where, old.node.body, new.node.body, span, tools)

    def params(self, old: ToolInfo, new: ToolInfo) -> None:
        name = new.name
        tools = (name,)
        old_params = {p.name: p for p in old.params}
        new_params = {p.name: p for p in new.params}
        for pname, p in old_params.items():
            if pname not in new_params:
                self.add("param-removed", f"tool {name} / param {pname}", f"parameter "
                         f"'{pname}' of tool '{name}' was removed: calls passing it fail",
                         old=f"{pname}: {type_text(p.type)}", span=new.node.name.span,
                         old_span=p.node.span, tools=tools)
        for pname, p in new_params.items():
            before = old_params.get(pname)
            coordinate = f"tool {name} / param {pname}"
            span = p.node.span
            kw: dict[str, Any] = {"span": span, "tools": tools}
            if before is None:
                required = _param_required(p)
                self.add("param-added-required" if required else "param-added-optional",
                         coordinate, f"tool '{name}' has a new "
                         f"{'required' if required else 'optional'} parameter '{pname}'"
                         + (": calls without it fail" if required else ""),
                         new=f"{pname}: {type_text(p.type)}" + (
                             f" = {expr_text(p.default)}" if p.default is not None else ""),
                         **kw)
                continue
            kw["old_span"] = before.node.span
            relation = relate_types(before.type, p.type)
            if relation is not Relation.SAME:
                self.add(_relation_rule("param-type", relation), coordinate,
                         f"parameter '{pname}' of tool '{name}' {_RELATION_WORDS[relation]}: "
                         f"{type_text(before.type)} -> {type_text(p.type)}",
                         old=type_text(before.type), new=type_text(p.type), **kw)
            old_required, new_required = _param_required(before), _param_required(p)
            if old_required and not new_required:
                self.add("param-now-optional", coordinate, f"parameter '{pname}' of tool "
                         f"'{name}' may now be left out", old="required",
                         new=f"default {expr_text(p.default)}", **kw)
            elif new_required and not old_required:
                self.add("param-now-required", coordinate, f"parameter '{pname}' of tool "
                         f"'{name}' is now required: calls without it fail",
                         old=f"default {expr_text(before.default)}", new="required", **kw)
            elif before.default != p.default:
                self.add("param-default-changed", coordinate, f"the default of parameter "
                         f"'{pname}' of tool '{name}' changed",
                         old=expr_text(before.default), new=expr_text(p.default), **kw)
            if before.doc != p.doc:
                self.add("param-description-changed", coordinate, f"the description of "
                         f"parameter '{pname}' of tool '{name}' changed (the agent reads it)",
                         old=_text(before.doc), new=_text(p.doc), **kw)
            if before.not_found != p.not_found:
                self.add("error-message-changed", f"{coordinate} / not found",
                         f"the message for an unknown '{pname}' of tool '{name}' changed",
                         old=expr_text(before.not_found), new=expr_text(p.not_found), **kw)
        common_old = [p for p in old_params if p in new_params]
        common_new = [p for p in new_params if p in old_params]
        if common_old != common_new:
            self.add("param-order-changed", f"tool {name} / params", f"the parameters of tool "
                     f"'{name}' were reordered", old=", ".join(common_old),
                     new=", ".join(common_new), span=new.node.name.span,
                     old_span=old.node.name.span, tools=tools)

    def behaviour(self, where: str, old: n.Block, new: n.Block, span: n.Span,
                  tools: tuple[str, ...]) -> None:
        """Preconditions, failure messages and effects of one tool body."""
        if old == new:
            return
        self.preconditions(where, _requires(old), _requires(new), span, tools)
        old_fails, new_fails = _fails(old), _fails(new)
        if len(old_fails) == len(new_fails):
            for before, after in zip(old_fails, new_fails, strict=True):
                if before.message != after.message:
                    self.add("error-message-changed", f"{where} / fail "
                             f"{expr_text(before.message, _COORD_TEXT)}",
                             f"a failure message of {where} changed",
                             old=expr_text(before.message), new=expr_text(after.message),
                             span=after.span, old_span=before.span, tools=tools)
        if _without_messages(old) != _without_messages(new):
            self.add("tool-effects-changed", f"{where} / body", f"the body of {where} changed "
                     "beyond its preconditions and messages: what it changes or returns may "
                     "differ", span=new.span, old_span=old.span, tools=tools)

    def preconditions(self, where: str, old: list[n.Require], new: list[n.Require],
                      span: n.Span, tools: tuple[str, ...]) -> None:
        """Pair the ``require``s of two bodies and report what changed about each."""
        pairs: list[tuple[n.Require, n.Require]] = []
        left, right = list(old), list(new)

        def pair_by(key: Any) -> None:
            for a in list(left):
                match = next((b for b in right if key(a) == key(b)), None)
                if match is not None:
                    pairs.append((a, match))
                    left.remove(a)
                    right.remove(match)

        pair_by(lambda r: (r.condition, r.message))
        pair_by(lambda r: r.condition)
        pair_by(lambda r: r.message)
        # what is left changed both condition and message: pair it in order of appearance
        for a, b in zip(list(left), list(right), strict=False):
            pairs.append((a, b))
            left.remove(a)
            right.remove(b)
        for before, after in pairs:
            coordinate = f"{where} / require {expr_text(after.condition, _COORD_TEXT)}"
            if before.message != after.message:
                self.add("error-message-changed", coordinate, f"the message of a precondition "
                         f"of {where} changed", old=expr_text(before.message),
                         new=expr_text(after.message), span=after.message.span,
                         old_span=before.message.span, tools=tools)
            relation = relate_conditions(before.condition, after.condition)
            if relation is not Relation.SAME:
                self.add(_condition_rule("precondition", relation), coordinate,
                         self._condition_message(f"a precondition of {where}", relation),
                         old=expr_text(before.condition), new=expr_text(after.condition),
                         span=after.condition.span, old_span=before.condition.span,
                         tools=tools)
        for before in left:
            self.add("precondition-removed", f"{where} / require "
                     f"{expr_text(before.condition, _COORD_TEXT)}",
                     f"a precondition of {where} was removed: calls it rejected may succeed",
                     old=expr_text(before.condition), span=span, old_span=before.span,
                     tools=tools)
        for after in right:
            self.add("precondition-added", f"{where} / require "
                     f"{expr_text(after.condition, _COORD_TEXT)}",
                     f"{where} has a new precondition: calls that succeeded may fail",
                     new=expr_text(after.condition), span=after.span, tools=tools)
        order_old = [id(a) for a in old if any(a is p[0] for p in pairs)]
        by_new = {id(b): id(a) for a, b in pairs}
        order_new = [by_new[id(b)] for b in new if id(b) in by_new]
        if order_old != order_new:
            self.add("precondition-reordered", f"{where} / require order",
                     f"the preconditions of {where} are checked in another order: a call "
                     "breaking several fails with another message", span=span, tools=tools)

    # ------------------------------------------------------------------ tasks
    def tasks(self) -> None:
        old_tasks, new_tasks = self.old.tasks, self.new.tasks
        for name, task in old_tasks.items():
            still = self.declared.get(name)
            if name not in new_tasks and still is not None:
                self.add("task-invalid", f"task {name}", f"task '{name}' is still declared "
                         "but has errors that leave it out of the world",
                         span=still.name.span, old_span=task.node.name.span, tasks=(name,),
                         tools=_solution_tools(task.node))
            elif name not in new_tasks:
                self.add("task-removed", f"task {name}", f"task '{name}' was removed",
                         span=self.header, old_span=task.node.name.span, tasks=(name,),
                         tools=_solution_tools(task.node))
        for name, task in new_tasks.items():
            before = old_tasks.get(name)
            if before is None:
                self.add("task-added", f"task {name}", f"task '{name}' is new",
                         span=task.node.name.span, tasks=(name,))
            else:
                self.task(name, before.node, task.node, before.initial_data,
                          task.initial_data)

    def task(self, name: str, old: n.TaskDecl, new: n.TaskDecl,
             old_data: Mapping[str, object] | None,
             new_data: Mapping[str, object] | None) -> None:
        where = f"task {name}"
        kw: dict[str, Any] = {"tasks": (name,), "span": new.name.span,
                              "old_span": old.name.span}
        if old.instruction != new.instruction:
            item = next((i for i in new.items if isinstance(i, n.Instruction)), None)
            self.add("task-instruction-changed", f"{where} / instruction",
                     f"the instruction of task '{name}' changed", old=_text(old.instruction),
                     new=_text(new.instruction),
                     **{**kw, "span": item.span if item else new.name.span})
        for kind, label in ((n.Persona, "persona"), (n.Known, "known"), (n.Unknown, "unknown")):
            before = next((i.text for i in old.items if isinstance(i, kind)), None)
            node = next((i for i in new.items if isinstance(i, kind)), None)
            after = node.text if node is not None else None
            if before != after:
                self.add("task-user-changed", f"{where} / {label}", f"the simulated user's "
                         f"{label} in task '{name}' changed", old=_text(before),
                         new=_text(after), **{**kw, "span": node.span if node else
                                              new.name.span})
        if old.doc != new.doc:
            self.add("doc-changed", where, f"the description of task '{name}' changed",
                     old=_text(old.doc), new=_text(new.doc), **kw)
        self.task_data(name, new, old_data, new_data, kw)
        self.checks(name, old, new, kw)
        self.frame(name, old.frame, new.frame, kw)
        if old.solution != new.solution:
            span = new.solution.span if new.solution is not None else new.name.span
            self.add("solution-changed", f"{where} / solution", f"the reference solution of "
                     f"task '{name}' changed", old=_solution_text(old.solution),
                     new=_solution_text(new.solution),
                     **{**kw, "span": span, "tools": _solution_tools(new)})
        for setting, label in ((n.Split, "split"), (n.Seed, "seed")):
            b = next((i for i in old.items if isinstance(i, setting)), None)
            a = next((i for i in new.items if isinstance(i, setting)), None)
            if b != a:
                self.add("task-settings-changed", f"{where} / {label}", f"the {label} of task "
                         f"'{name}' changed", old=_setting_text(b), new=_setting_text(a),
                         **{**kw, "span": a.span if a else new.name.span})
        old_tags = next((i for i in old.items if isinstance(i, n.Tags)), None)
        new_tags = next((i for i in new.items if isinstance(i, n.Tags)), None)
        before_tags = [x.name for x in old_tags.names] if old_tags else []
        after_tags = [x.name for x in new_tags.names] if new_tags else []
        if before_tags != after_tags:
            self.add("task-tags-changed", f"{where} / tags", f"the tags of task '{name}' "
                     "changed", old=", ".join(before_tags), new=", ".join(after_tags),
                     **{**kw, "span": new_tags.span if new_tags else new.name.span})

    def task_data(self, name: str, new: n.TaskDecl, old_data: Mapping[str, object] | None,
                  new_data: Mapping[str, object] | None, kw: dict[str, Any]) -> None:
        if old_data is None or new_data is None or old_data == new_data:
            return
        span = new.givens[-1].span if new.givens else new.name.span
        for key in sorted(set(old_data) | set(new_data), key=lambda k: (
                list(new_data).index(k) if k in new_data else len(new_data), k)):
            before, after = old_data.get(key), new_data.get(key)
            if before == after:
                continue
            self.add("task-data-changed", f"task {name} / given {key}",
                     f"the initial '{key}' of task '{name}' changed"
                     + self._rows_summary(key, before, after),
                     old=_value_text(before), new=_value_text(after), **{**kw, "span": span})

    def _rows_summary(self, key: str, before: object, after: object) -> str:
        item = self.new.state.get(key)
        if item is None or item.kind != "table" or not isinstance(before, list) or \
                not isinstance(after, list):
            return ""
        entity = self.new.records.get(item.entity or "")
        key_field = entity.key.name if entity is not None and entity.key is not None else None
        if key_field is None:
            return ""

        def rows(items: list[Any]) -> dict[str, Any]:
            return {str(r.get(key_field)): r for r in items if isinstance(r, dict)}

        old_rows, new_rows = rows(before), rows(after)
        parts = []
        for label, keys in (
                ("added", [k for k in new_rows if k not in old_rows]),
                ("removed", [k for k in old_rows if k not in new_rows]),
                ("changed", [k for k in new_rows if k in old_rows and
                             new_rows[k] != old_rows[k]])):
            if keys:
                shown = ", ".join(keys[:5]) + (f" and {len(keys) - 5} more"
                                               if len(keys) > 5 else "")
                parts.append(f"{len(keys)} row(s) {label} ({shown})")
        return ": " + "; ".join(parts) if parts else ""

    def checks(self, name: str, old: n.TaskDecl, new: n.TaskDecl, kw: dict[str, Any]) -> None:
        old_checks = {c.name.name: c for c in old.checks}
        new_checks = {c.name.name: c for c in new.checks}
        where = f"task {name}"
        for cname, check in old_checks.items():
            if cname not in new_checks:
                self.add("check-removed", f"{where} / check {cname}", f"check '{cname}' of "
                         f"task '{name}' was removed", old=expr_text(check.condition),
                         **{**kw, "old_span": check.span})
        for cname, check in new_checks.items():
            before = old_checks.get(cname)
            coordinate = f"{where} / check {cname}"
            ckw = {**kw, "span": check.span}
            if before is None:
                self.add("check-added", coordinate, f"task '{name}' has a new check '{cname}'",
                         new=expr_text(check.condition), **ckw)
                continue
            ckw["old_span"] = before.span
            relation = relate_conditions(before.condition, check.condition)
            if relation is not Relation.SAME:
                self.add(_condition_rule("check", relation), coordinate,
                         self._condition_message(f"check '{cname}' of task '{name}'",
                                                 relation).replace("accepts", "holds for"),
                         old=expr_text(before.condition), new=expr_text(check.condition),
                         **{**ckw, "span": check.condition.span})
            if (before.weight or 1) != (check.weight or 1):
                self.add("check-weight-changed", coordinate, f"the weight of check '{cname}' "
                         f"of task '{name}' changed", old=str(before.weight or 1),
                         new=str(check.weight or 1), **ckw)
            if before.doc != check.doc:
                self.add("doc-changed", coordinate, f"the description of check '{cname}' of "
                         f"task '{name}' changed", old=_text(before.doc),
                         new=_text(check.doc), **ckw)

    def frame(self, name: str, old: n.Frame | None, new: n.Frame | None,
              kw: dict[str, Any]) -> None:
        if old == new:
            return

        def targets(frame: n.Frame | None) -> set[str] | None:
            if frame is None:
                return None
            return {".".join(p.name for p in target.path) for target in frame.targets}

        def show(found: set[str] | None) -> str:
            if found is None:
                return "(no frame: anything may change)"
            return "only changes " + (", ".join(sorted(found)) or "nothing")

        before, after = targets(old), targets(new)
        if before == after:
            return
        if before is None:
            tighter, looser = True, False
        elif after is None:
            tighter, looser = False, True
        else:
            tighter = any(not _frame_covers(after, x) for x in before)
            looser = any(not _frame_covers(before, x) for x in after)
            if not (tighter or looser):
                return  # the same changes allowed, written differently
        rule_id = ("frame-changed" if tighter and looser else
                   "frame-tightened" if tighter else "frame-loosened")
        what = {"frame-changed": "allows some new changes and forbids some old ones",
                "frame-tightened": "allows fewer changes",
                "frame-loosened": "allows more changes"}[rule_id]
        self.add(rule_id, f"task {name} / frame", f"the frame of task '{name}' {what}",
                 old=show(before), new=show(after),
                 **{**kw, "span": new.span if new is not None else kw["span"]})


def _results_text(world: WorldModel) -> str:
    """The custom result shapes of ``world`` as spec text ("" without them)."""
    from worldspec.dsl.formatter import format_expr

    node = world.results_node
    if node is None:
        return ""
    return " ".join(f"{shape.name.name}: {format_expr(shape.value)}" for shape in node.shapes)


def _const_text(world: WorldModel, name: str) -> str:
    """A const's value as spec text ("" when the world has no such const)."""
    from worldspec.dsl.formatter import format_expr

    const = world.consts.get(name)
    return format_expr(const.node.value) if const is not None else ""
