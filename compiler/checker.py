"""Semantic analysis: the order in which the checker's stages run.

1. Files are visited imports-first; a file whose own text or whose imports
   failed to parse is not analysed further (its syntax errors stand alone,
   so they never cascade into name errors).
2. ``resolve.build_world`` collects the declarations visible from the file.
3. ``typer.Typer`` checks every body the file declares: field, state and
   parameter defaults, helpers, tools, invariants and tasks.
4. The rule registry (``compiler.rules``) runs over every world.
"""

from __future__ import annotations

import sys
from typing import Literal

from worldspec.compiler import types as t
from worldspec.compiler.constants import is_constant
from worldspec.compiler.data_check import argument_problems, load_initial_data
from worldspec.compiler.loader import Program
from worldspec.compiler.model import ProgramModel, TaskInfo, ToolInfo, WorldModel
from worldspec.compiler.resolve import VisibleDecl, build_world
from worldspec.compiler.rules import RuleContext, run_rules
from worldspec.compiler.scope import Context, Local
from worldspec.compiler.typer import Typer
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink, Related, did_you_mean

__all__ = ["check_program"]


def _order(program: Program) -> list[str]:
    """Files in dependency order (imports first), deterministic."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(path: str) -> None:
        if path in seen:
            return
        seen.add(path)
        for dep in program.imports.get(path, []):
            visit(dep)
        order.append(path)

    for path in sorted(program.files):
        visit(path)
    return order


def check_program(program: Program, sink: DiagnosticSink) -> ProgramModel:
    """Resolve and type-check every file of ``program``; report into ``sink``."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))  # typing recurses once per nesting level
    try:
        return _check_program(program, sink)
    finally:
        sys.setrecursionlimit(limit)


def _check_program(program: Program, sink: DiagnosticSink) -> ProgramModel:
    model = ProgramModel()
    model.modules = [f.module for f in program.files.values()]
    visible: dict[str, list[VisibleDecl]] = {}
    healthy: dict[str, bool] = {}
    world_files: dict[str, WorldModel] = {}
    world_decl_at: dict[str, n.Ident] = {}
    analysed: list[WorldModel] = []

    for path in _order(program):
        source = program.files[path]
        deps = program.imports.get(path, [])
        healthy[path] = source.parsed_ok and all(healthy.get(d, False) for d in deps)
        own = [VisibleDecl(d, path) for d in source.module.decls]
        seen_ids: set[int] = set()
        vis: list[VisibleDecl] = []
        for dep in deps:
            for vd in visible.get(dep, []):
                if id(vd.decl) not in seen_ids:
                    seen_ids.add(id(vd.decl))
                    vis.append(vd)
        vis.extend(own)
        visible[path] = vis
        if not healthy[path]:
            continue

        headers = [d for d in source.module.decls if isinstance(d, n.WorldDecl)]
        for extra in headers[1:]:
            sink.report("WS504", extra.span, "a file declares at most one world",
                        related=[Related(headers[0].span, "first world header")])
        header = headers[0] if headers else None
        if header is None:
            for d in source.module.decls:
                if isinstance(d, (n.StateDecl, n.ToolDecl, n.InvariantDecl, n.ConfigDecl,
                                  n.PolicyDecl)):
                    what = type(d).__name__.removesuffix("Decl").lower()
                    sink.report("WS504", d.span, f"{what} outside a world: this file has no "
                                "`world Name` header")
        name = header.name.name if header else ""
        world = build_world(name, header.doc if header else None, path, vis, sink)
        analysed.append(world)
        if header is not None:
            previous = world_decl_at.get(name)
            if previous is not None:
                sink.report("WS203", header.name.span, f"world '{name}' is defined twice",
                            related=[Related(previous.span, "first defined here")])
            else:
                world_decl_at[name] = header.name
                model.worlds[name] = world
                world_files[path] = world
        _check_bodies(world, path, model, sink)

        visible_worlds = {w.name: w for p, w in world_files.items()
                          if p == path or any(vd.file == p for vd in vis)}
        for d in source.module.decls:
            if isinstance(d, n.TaskDecl):
                _check_task(d, path, visible_worlds, program, model, sink)

    for world in analysed:
        run_rules(RuleContext(world=world, program=model, sink=sink))
    return model


def _typer(world: WorldModel, model: ProgramModel, sink: DiagnosticSink,
           context: Context) -> Typer:
    return Typer(world, model, sink, context)


#: What a `const` value and a result shape are built from: literals, nothing computed.
_LITERAL_NODES = (n.IntLit, n.FloatLit, n.StrLit, n.BoolLit, n.NoneLit, n.ListLit, n.MapLit,
                  n.MapEntry, n.Unary)


def _literal_problem(expr: n.Node, names: frozenset[str], world: WorldModel | None
                     ) -> n.Node | None:
    """The first part of ``expr`` that is not a literal, one of ``names``, an enum member of
    ``world`` (``Enum.member``, or bare where the type says which enum), or an f-string of
    those."""
    enums = frozenset(world.enums) if world is not None else frozenset()
    members = frozenset(m for e in world.enums.values() for m in e.members) \
        if world is not None else frozenset()
    for node in n.walk(expr):
        if isinstance(node, (*_LITERAL_NODES, n.FStr, n.Interpolation, n.Ident)):
            continue
        if isinstance(node, n.Attribute) and isinstance(node.obj, n.NameRef) and \
                node.obj.name in enums:
            continue
        if isinstance(node, n.NameRef) and not node.qualified and \
                node.name in names | enums | members:
            continue
        return node
    return None


def _check_consts(world: WorldModel, path: str, model: ProgramModel,
                  sink: DiagnosticSink) -> None:
    """Each `const` is a literal of its declared (or inferred) type (WS217)."""
    for const in world.consts.values():
        node = const.node
        bad = _literal_problem(node.value, frozenset(), world)
        ty = _typer(world, model, sink, Context("default"))
        value = ty.expr(node.value, const.declared)
        if const.declared is not None:
            ty.expect(node.value, const.declared, value, f"const '{const.name}'")
            const.type = const.declared
        elif isinstance(value, (t.EmptyList, t.EmptyMap, t.NoneType)):
            sink.report("WS309", node.span, f"cannot infer the type of const '{const.name}'",
                        hints=[f"give it a type: const {const.name}: list[str] = ..."])
            const.type = t.UNKNOWN
        else:
            const.type = value
        if bad is not None and const.file == path:
            sink.report("WS217", bad.span, f"const '{const.name}' must be built from literals "
                        "(numbers, strings, booleans, none, enum members, lists and maps)",
                        hints=["compute it in a helper fn instead"])


_RESULT_NAMES = {"success": ("value", t.JSON), "failure": ("message", t.STR)}


def _check_results(world: WorldModel, model: ProgramModel, sink: DiagnosticSink) -> None:
    """A custom result convention needs its `results` block, with a success and a failure
    shape built from `value` / `message` and literals (WS510-WS512)."""
    node = world.results_node
    custom = world.config.results == "custom"
    if custom and node is None:
        sink.report("WS510", world.config.results_span or n.NO_SPAN, "results: custom needs a "
                    "results block saying how a success and a failure look",
                    hints=['results { success: value  failure: {"error": message} }'])
        return
    if node is None:
        return
    if not custom:
        sink.report("WS510", node.span, "a results block is used only with "
                    "`config { results: custom }`")
    seen: dict[str, n.Node] = {}
    unknown = False
    for shape in node.shapes:
        want = _RESULT_NAMES.get(shape.name.name)
        if want is None:
            unknown = True
            sink.report("WS511", shape.name.span, f"unknown result shape '{shape.name.name}'",
                        hints=["the shapes are success (from `value`) and failure (from "
                               "`message`)"])
            continue
        if shape.name.name in seen:
            sink.report("WS204", shape.name.span, f"shape '{shape.name.name}' is given twice")
            continue
        seen[shape.name.name] = shape
        hole, typ = want
        bad = _literal_problem(shape.value, frozenset({hole}), None)
        if bad is not None:
            sink.report("WS512", bad.span, f"the {shape.name.name} shape is built from "
                        f"`{hole}` and literals only")
            continue
        ty = _typer(world, model, sink, Context("default"))
        ty.scope.define(Local(hole, typ, "param", shape.name, used=True))
        value = ty.expr(shape.value, t.JSON)
        ty.expect(shape.value, t.JSON, value, f"the {shape.name.name} shape")
        holes = [x for x in n.walk(shape.value) if isinstance(x, n.NameRef) and x.name == hole]
        if shape.name.name == "failure" and len(holes) != 1:
            sink.report("WS512", shape.value.span, "the failure shape holds `message` exactly "
                        "once, so that failed() can recognise a failure")
    for name in _RESULT_NAMES:
        if name not in seen and not unknown:
            sink.report("WS511", node.span, f"the results block has no {name} shape")


def _check_bodies(world: WorldModel, path: str, model: ProgramModel,
                  sink: DiagnosticSink) -> None:
    """Type-check every body declared in ``path``."""
    _check_consts(world, path, model, sink)
    if world.file == path:
        _check_results(world, model, sink)
        if world.load_node is not None:
            ty = _typer(world, model, sink, Context("load"))
            ty.scope.push()
            ty.statements(world.load_node.body.body)
            ty.shadowing()
    for rec in world.records.values():
        if rec.file != path:
            continue
        for f in rec.fields.values():
            if f.default is not None:
                ty = _typer(world, model, sink, Context("default"))
                value = ty.expr(f.default, f.type)
                ty.expect(f.default, f.type, value, f"default of '{f.name}'")
    for state in world.state.values():
        if state.default is None:
            continue
        ty = _typer(world, model, sink, Context("default"))
        if state.kind != "value":
            sink.report("WS301", state.default.span, f"a {state.kind} has no default value")
            continue
        value = ty.expr(state.default, state.type)
        ty.expect(state.default, state.type, value, f"default of '{state.name}'")
    for fn in world.fns.values():
        if fn.file == path:
            _check_callable(world, fn, model, sink)
    for tool in world.tools.values():
        if tool.file == path:
            _check_callable(world, tool, model, sink)
    for inv in world.invariants.values():
        ty = _typer(world, model, sink, Context("invariant"))
        ty.condition(inv.condition, f"invariant '{inv.name}'")


def _check_callable(world: WorldModel, info: ToolInfo, model: ProgramModel,
                    sink: DiagnosticSink) -> None:
    where: Literal["fn", "tool"] = "fn" if info.is_fn else "tool"
    for p in info.params:
        if p.default is not None:
            ty = _typer(world, model, sink, Context("default"))
            value = ty.expr(p.default, p.type)
            ty.expect(p.default, p.type, value, f"default of '{p.name}'")
            param_base = t.strip_optional(p.type)
            if isinstance(param_base, t.Named) and param_base.kind == "entity":
                if isinstance(p.type, t.Optional):
                    sink.report("WS301", p.default.span,
                                f"an optional entity parameter is none when a call leaves it "
                                f"out, so it takes no default: drop `= ...` after "
                                f"'{p.name}: {param_base.name}?'")
                else:
                    sink.report("WS301", p.default.span,
                                "an entity parameter cannot have a default",
                                hints=[f"make it optional without a default (`{p.name}: "
                                       f"{param_base.name}?`): it is none when a call leaves "
                                       "it out"])
        if p.not_found is not None:
            # an entity parameter's message when no row has the key; any other parameter's
            # message when the value does not fit its type (the name is the JSON value sent)
            base = t.strip_optional(p.type)
            ty = _typer(world, model, sink, Context("default"))
            key = ty.entity_key_type(base.name) if isinstance(base, t.Named) and \
                base.kind == "entity" else t.JSON
            ty.scope.define(Local(p.name, key, "param", p.node.name, used=True))
            if key == t.JSON:
                # a type mismatch's message may be none: the runtime's own message then
                found = ty.expr(p.not_found)
                if t.strip_optional(found) != t.STR and found != t.NONE \
                        and not t.is_unknown(found):
                    sink.report("WS301", p.not_found.span,
                                f"the parameter's 'else' message: expected str or str?, found "
                                f"{t.show(found)}")
            else:
                ty.message(p.not_found, "the 'not found' message")
    ty = _typer(world, model, sink, Context(where, returns=info.returns, tool_name=info.name))
    for p in info.params:
        ty.scope.define(Local(p.name, p.type, "param", p.node.name, used=True))
    ty.scope.push()
    ty.statements(info.node.body.body)
    ty.shadowing()
    info.read_only = not ty.changes_state
    for local in ty.scope.all_locals:
        if not local.used and local.kind == "local" and not local.name.startswith("_"):
            sink.report("WS408", local.node.span, f"'{local.name}' is never used",
                        hints=["remove it, or name it with a leading '_'"])


def _check_task(task: n.TaskDecl, path: str, worlds: dict[str, WorldModel], program: Program,
                model: ProgramModel, sink: DiagnosticSink) -> None:
    world = worlds.get(task.world.name)
    if world is None:
        sink.report("WS209", task.world.span, f"unknown world '{task.world.name}'",
                    hints=did_you_mean(task.world.name, worlds) or
                    ["import the world's file: import \"path/to/world.world\""])
        return
    if task.name.name in world.tasks:
        previous = world.tasks[task.name.name].node
        sink.report("WS203", task.name.span, f"task '{task.name.name}' is defined twice in "
                    f"world {world.name}", related=[Related(previous.name.span,
                                                            "first defined here")])
    else:
        world.tasks[task.name.name] = TaskInfo(task.name.name, world.name, task, path)
    checks: dict[str, n.Node] = {}
    for item in task.items:
        if isinstance(item, n.Check):
            if item.name.name in checks:
                sink.report("WS204", item.name.span, f"check '{item.name.name}' is defined twice",
                            related=[Related(checks[item.name.name].span, "first defined here")])
            checks[item.name.name] = item.name
            if item.weight is not None and item.weight <= 0:
                sink.report("WS608", item.span, f"weight {item.weight} is not positive")
            ty = _typer(world, model, sink, Context("check"))
            ty.condition(item.condition, f"check '{item.name.name}'")
            if task.solution is None:
                for node in n.walk(item.condition):
                    if isinstance(node, n.Call) and isinstance(node.func, n.NameRef) and \
                            node.func.name == "matches_solution":
                        sink.report("WS616", node.span, "matches_solution() compares with the "
                                    "state the reference solution leaves, but the task has none",
                                    hints=["add a solution { ... } block to the task"])
        elif isinstance(item, n.Frame):
            _check_frame(item, world, sink)
        elif isinstance(item, n.Solution):
            for call in item.calls:
                _check_solution_call(call, world, model, sink)
    answers = _answer_checks(task, model, sink)
    data = load_initial_data(task, path, world, sink) if task.givens else {}
    info = world.tasks.get(task.name.name)
    if info is not None and info.node is task:
        info.initial_data = data
        info.answer_checks = frozenset(answers)
    if task.instruction is None or not task.checks:
        missing = "instruction" if task.instruction is None else "checks"
        sink.report("WS609", task.name.span, f"task '{task.name.name}' has no {missing}")


def _answer_checks(task: n.TaskDecl, model: ProgramModel, sink: DiagnosticSink) -> list[str]:
    """The checks that read the conversation; each needs the solution's reference reply
    (WS620), and a reference reply needs a check that reads it (WS621)."""
    answers = [c for c in task.checks if any(
        isinstance(e, n.NameRef) and (res := model.resolutions.get(id(e))) is not None
        and res.kind == "conversation" for e in n.walk(c.condition))]
    solution = task.solution
    if solution is not None and answers and not solution.replies:
        sink.report("WS620", answers[0].name.span, f"check '{answers[0].name.name}' grades "
                    "what the agent says, but the solution has no reference reply",
                    hints=['add the answer to the solution: solution { ... reply "..." }'])
    if solution is not None and solution.replies and not answers:
        sink.report("WS621", solution.replies[0].span, "no check of the task reads the "
                    "reply, so it grades nothing",
                    hints=['add an answer check, e.g. check told: reply.contains("...")'])
    return [c.name.name for c in answers]


def _check_frame(frame: n.Frame, world: WorldModel, sink: DiagnosticSink) -> None:
    for target in frame.targets:
        head = target.path[0]
        state = world.state.get(head.name)
        if state is None:
            sink.report("WS607", head.span, f"unknown state '{head.name}'",
                        hints=did_you_mean(head.name, world.state))
            continue
        if len(target.path) == 1:
            continue
        if state.kind != "table" or state.entity is None or len(target.path) > 2:
            sink.report("WS607", target.span, "only a table's field can follow the state name "
                        "(`orders.status`)")
            continue
        field = target.path[1]
        rec = world.records.get(state.entity)
        if rec is not None and field.name not in rec.fields:
            sink.report("WS607", field.span, f"{rec.name} has no field '{field.name}'",
                        hints=did_you_mean(field.name, rec.fields))


def _check_solution_call(call: n.SolutionCall, world: WorldModel, model: ProgramModel,
                         sink: DiagnosticSink) -> None:
    tool = world.tools.get(call.tool.name)
    ty = _typer(world, model, sink, Context("solution"))
    if tool is None:
        sink.report("WS206", call.tool.span, f"world {world.name} has no tool "
                    f"'{call.tool.name}'", hints=did_you_mean(call.tool.name, world.tools))
        return
    params = {p.name: p for p in tool.params}
    given: set[str] = set()
    misnamed = False
    for arg in call.args:
        if arg.name is None:
            sink.report("WS606", arg.span, "solution calls take named arguments, as the agent "
                        f"sends them: {tool.name}(name: value)")
            continue
        p = params.get(arg.name.name)
        if p is None:
            misnamed = True
            sink.report("WS606", arg.name.span, f"tool {tool.name} has no parameter "
                        f"'{arg.name.name}'", hints=did_you_mean(arg.name.name, params))
            continue
        if arg.name.name in given:
            sink.report("WS204", arg.name.span, f"argument '{arg.name.name}' is given twice")
        given.add(arg.name.name)
        if isinstance(arg.value, n.Lambda):
            sink.report("WS311", arg.value.span, "a solution argument cannot be a lambda")
            continue
        want = _agent_type(p.type, world)
        # JSON as the agent would send it ("economy" for an enum, ISO text for a date, an
        # object for a record) is checked by the rules of tool arguments; anything else is
        # typed like an expression (Cabin.economy, date("2024-05-01"), Address(...)).
        data = _json_literal(arg.value)
        if data is not _NOT_JSON:
            problems = argument_problems(data, want, world, p.name)
            if problems:
                sink.report("WS606", arg.value.span, f"{tool.name}(): {problems[0]}",
                            hints=[f"also {x}" for x in problems[1:3]])
            continue
        value = ty.expr(arg.value, want)
        if not ty.assignable(want, value):
            sink.report("WS606", arg.value.span, f"argument '{p.name}' of {tool.name}: expected "
                        f"{t.show(want)}, found {t.show(value)}")
        elif not is_constant(arg.value, world, model):
            sink.report("WS606", arg.value.span, f"argument '{p.name}' of {tool.name} is not a "
                        "constant: a solution sends what the agent would, literals only",
                        hints=["write a row as its key, and a record or list holding rows as "
                               'the JSON the agent sends: {"item": "F01", "quantity": 2}'])
    for p in tool.params:
        if misnamed:
            break  # the misspelt argument is the error; do not also call its parameter missing
        if p.name not in given and p.default is None and not isinstance(p.type, t.Optional):
            sink.report("WS606", call.span, f"{tool.name}() is missing its argument '{p.name}'")


_NOT_JSON = object()


def _json_literal(expr: n.Node) -> object:
    """The JSON value of a literal written as JSON (strings, numbers, booleans, none, lists and
    maps with string keys), or ``_NOT_JSON``."""
    if isinstance(expr, (n.IntLit, n.FloatLit, n.StrLit, n.BoolLit)):
        return expr.value
    if isinstance(expr, n.NoneLit):
        return None
    if isinstance(expr, n.Unary) and expr.op == "-" and \
            isinstance(expr.operand, (n.IntLit, n.FloatLit)):
        return -expr.operand.value
    if isinstance(expr, n.ListLit):
        items = [_json_literal(x) for x in expr.items]
        return _NOT_JSON if any(x is _NOT_JSON for x in items) else items
    if isinstance(expr, n.MapLit):
        out: dict[str, object] = {}
        for entry in expr.entries:
            value = _json_literal(entry.value)
            if not isinstance(entry.key, n.StrLit) or value is _NOT_JSON:
                return _NOT_JSON
            out[entry.key.value] = value
        return out
    return _NOT_JSON


def _agent_type(typ: t.Type, world: WorldModel) -> t.Type:
    """What the agent sends for a parameter: entities by key."""
    if isinstance(typ, t.Optional):
        return t.make_optional(_agent_type(typ.inner, world))
    if isinstance(typ, t.Named) and typ.kind == "entity":
        rec = world.records.get(typ.name)
        key = rec.key if rec else None
        return key.type if key else t.UNKNOWN
    if isinstance(typ, t.ListOf):
        return t.ListOf(_agent_type(typ.element, world))
    return typ
