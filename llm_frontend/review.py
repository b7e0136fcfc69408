"""``synth review``: an LLM's advisory review of a world against the description it was made for.

The compiler proves a world consistent; it cannot tell whether the world
models what was asked. This review asks a model that question, and only after
the compiler has had its say:

1. :func:`load_review_target` checks the file with the compiler and refuses a
   world with errors (:class:`WorldHasErrors` carries the check result, so the
   caller can show every diagnostic);
2. :func:`summarize_world` condenses the checked model: entities and their
   fields, state, invariants, and each tool's signature, whether it changes
   state and its ``require`` preconditions;
3. :func:`review_world` sends the description, that summary and the spec text,
   and reads back a :class:`ReviewVerdict` (structured output, validated by
   pydantic): does the world model the request (``yes``, ``partly``, ``no``),
   which rules and tools are missing, which tools are risky, what to change.

The verdict is advice: it never overrides the compiler and is never applied.
Tool names the model mentions that the world does not have are reported as
such (:attr:`ReviewOutcome.unknown_tools`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from worldspec.compiler.api import CheckResult, check_specs
from worldspec.compiler.model import RecordInfo, ToolInfo, WorldModel
from worldspec.compiler.types import show
from worldspec.dsl import nodes as n
from worldspec.dsl.formatter import format_expr, format_type
from worldspec.llm_frontend.batch import InputError, read_input_text
from worldspec.services.compile_lock import COMPILE_LOCK
from worldspec.services.model_client import LLMClient, Message, Usage

__all__ = ["MAX_SPEC_CHARS", "ReviewOutcome", "ReviewTarget", "ReviewVerdict", "RiskyTool",
           "WorldHasErrors", "load_review_target", "render_review_text", "review_messages",
           "review_world", "summarize_world"]

#: Spec text beyond this many characters is cut from the prompt (the summary stays whole).
MAX_SPEC_CHARS = 60_000


class WorldHasErrors(Exception):
    """The world does not check clean; ``result`` holds the diagnostics to show."""

    def __init__(self, path: Path, result: CheckResult) -> None:
        super().__init__(f"'{path}' has {len(result.errors)} error(s); a world is reviewed only "
                         "once it checks clean")
        self.path = path
        self.result = result


@dataclass(frozen=True)
class ReviewTarget:
    """A world that checks clean: its file, text, typed model and summary."""

    path: Path
    text: str
    world: WorldModel
    summary: dict[str, Any]


def load_review_target(path: str | Path, world: str | None = None) -> ReviewTarget:
    """Check ``path`` and pick its world (``world`` names it when there are several).

    Raises :class:`~llm_frontend.batch.InputError` for a missing file or an
    ambiguous world, :class:`WorldHasErrors` when the compiler finds errors.
    """
    source = Path(path)
    text = read_input_text(source, "a .world file")
    with COMPILE_LOCK:
        result = check_specs([source])
    if not result.ok:
        raise WorldHasErrors(source, result)
    worlds = result.model.worlds
    if world is not None:
        if world not in worlds:
            raise InputError(f"'{path}' has no world '{world}' (it has: "
                             f"{', '.join(sorted(worlds)) or 'none'})")
        chosen = worlds[world]
    elif len(worlds) == 1:
        chosen = next(iter(worlds.values()))
    else:
        names = ", ".join(sorted(worlds)) or "none"
        raise InputError(f"'{path}' defines {len(worlds)} worlds ({names}); name one with "
                         "--world NAME")
    return ReviewTarget(source, text, chosen, summarize_world(chosen))


# ----------------------------------------------------------------- summary
def _signature(tool: ToolInfo) -> str:
    params = []
    for param in tool.params:
        written = f"{param.name}: {format_type(param.node.type)}"
        if param.default is not None:
            written += f" = {format_expr(param.default)}"
        params.append(written)
    returns = f" -> {format_type(tool.node.returns)}" if tool.node.returns is not None else ""
    return f"{tool.name}({', '.join(params)}){returns}"


def _requires(tool: ToolInfo) -> list[str]:
    return [f"require {format_expr(node.condition)} else {format_expr(node.message)}"
            for node in n.walk(tool.node.body) if isinstance(node, n.Require)]


def _record(record: RecordInfo) -> dict[str, Any]:
    fields = []
    for f in record.fields.values():
        written = f"{'key ' if f.is_key else ''}{f.name}: {format_type(f.node.type)}"
        if f.default is not None:
            written += f" = {format_expr(f.default)}"
        fields.append(written)
    out: dict[str, Any] = {"name": record.name, "fields": fields}
    if record.doc:
        out["doc"] = record.doc
    return out


def summarize_world(world: WorldModel) -> dict[str, Any]:
    """What the compiler made of a world, in a compact JSON-able form."""
    return {
        "world": world.name,
        "doc": world.doc or "",
        "result_convention": world.config.results,
        "entities": [_record(r) for r in world.records.values() if r.kind == "entity"],
        "records": [_record(r) for r in world.records.values() if r.kind == "record"],
        "enums": [{"name": e.name, "members": [m.value for m in e.members.values()]}
                  for e in world.enums.values()],
        "unions": [{"name": u.name, "tag": u.tag_field, "variants": dict(u.variants)}
                   for u in world.unions.values()],
        "state": [{"name": s.name, "kind": s.kind,
                   "type": show(s.type) if s.kind != "sequence" else "sequence"}
                  for s in world.state.values()],
        "invariants": [{"name": i.name, "doc": i.doc or "",
                        "condition": format_expr(i.condition)}
                       for i in world.invariants.values()],
        "tools": [{"signature": _signature(t), "changes_state": not t.read_only,
                   "doc": t.doc or "", "requires": _requires(t)}
                  for t in world.tools.values()],
        "helpers": sorted(world.fns),
    }


# ----------------------------------------------------------------- verdict
class RiskyTool(BaseModel):
    """A tool that can do harm or be misused as written."""

    tool: str = Field(description="the tool's name, as in the spec")
    risk: str = Field(description="what can go wrong, and when")


class ReviewVerdict(BaseModel):
    """The reviewer's verdict on a world against its description."""

    models_request: Literal["yes", "partly", "no"] = Field(
        description="does the world model what the description asks for")
    summary: str = Field(description="the verdict in two or three sentences")
    missing_rules: list[str] = Field(default_factory=list, description=(
        "business rules the description implies that no invariant or precondition enforces"))
    missing_tools: list[str] = Field(default_factory=list, description=(
        "operations the description needs that no tool offers, each as 'name: what it does'"))
    risky_tools: list[RiskyTool] = Field(default_factory=list, description=(
        "tools that can break the domain's rules or do more than they should"))
    suggestions: list[str] = Field(default_factory=list, description=(
        "other concrete changes that would make the world closer to the description"))

    @property
    def has_gaps(self) -> bool:
        """Not a full ``yes``, or something missing."""
        return self.models_request != "yes" or bool(self.missing_rules or self.missing_tools)


_REVIEW_SYSTEM = """\
You review specs written in WorldSpec, a typed language for the stateful tool environments \
LLM agents are trained in: entities in tables, state, invariants checked after every tool \
call, and tools with `require ... else "message"` preconditions. The compiler has already \
checked this spec: it is well-typed and consistent. Do not report syntax or type problems. \
Judge only whether it models what its description asks for:
- models_request: "yes" when every entity, rule and operation the description asks for is \
there; "partly" when some are missing or wrong; "no" when it models something else;
- missing_rules: rules the description states or clearly implies (limits, states an object \
must be in, ownership, uniqueness) that no invariant or precondition enforces;
- missing_tools: operations the description needs that no tool offers;
- risky_tools: tools that let an agent break the domain's rules or change more than they \
should (name the tool exactly as in the spec);
- suggestions: other concrete improvements.
Be specific and brief; empty lists are fine when nothing is missing."""


def review_messages(target: ReviewTarget, description: str) -> list[Message]:
    """The review request: description, the compiled world's summary and the spec text."""
    spec = target.text.rstrip()
    if len(spec) > MAX_SPEC_CHARS:
        spec = spec[:MAX_SPEC_CHARS] + "\n# [... the rest of the file is cut]"
    summary = json.dumps(target.summary, indent=1, ensure_ascii=False)
    user = (f"The description the world was written for:\n\n<description>\n"
            f"{description.strip()}\n</description>\n\n"
            f"What the compiler made of the world `{target.world.name}`:\n\n```json\n"
            f"{summary}\n```\n\nThe spec, `{target.path.name}`:\n\n```world\n{spec}\n```\n\n"
            "Review the world against the description.")
    return [{"role": "system", "content": _REVIEW_SYSTEM}, {"role": "user", "content": user}]


@dataclass
class ReviewOutcome:
    """A verdict, what it cost, and the tool names in it the world does not have."""

    target: ReviewTarget
    verdict: ReviewVerdict
    usage: Usage = field(default_factory=Usage)
    unknown_tools: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"world": self.target.world.name, "file": str(self.target.path),
                "verdict": self.verdict.model_dump(), "has_gaps": self.verdict.has_gaps,
                "unknown_tools": list(self.unknown_tools), "usage": self.usage.to_json()}


async def review_world(client: LLMClient, target: ReviewTarget, description: str, *,
                       usage: Usage | None = None) -> ReviewOutcome:
    """Ask the model for a :class:`ReviewVerdict`; raises
    :class:`~worldspec.services.model_client.LLMError` when it cannot get a valid one."""
    spent = usage if usage is not None else Usage()
    reply = await client.chat(review_messages(target, description), json_schema=ReviewVerdict,
                              usage=spent)
    verdict = reply.parsed
    known = set(target.world.tools)
    unknown = sorted({r.tool for r in verdict.risky_tools if r.tool not in known})
    return ReviewOutcome(target, verdict, spent, unknown)


def render_review_text(outcome: ReviewOutcome) -> str:
    """The verdict for a terminal."""
    verdict = outcome.verdict
    lines = [f"review of {outcome.target.world.name} ({outcome.target.path}): models the "
             f"request: {verdict.models_request}", ""]
    lines += [f"  {line}" for line in verdict.summary.strip().splitlines() if line.strip()]

    def section(title: str, entries: list[str]) -> None:
        lines.append("")
        lines.append(f"{title}: {'none' if not entries else ''}".rstrip())
        lines.extend(f"  - {entry}" for entry in entries)

    section("missing rules", verdict.missing_rules)
    section("missing tools", verdict.missing_tools)
    unknown = set(outcome.unknown_tools)
    section("risky tools", [f"{r.tool}{' (not a tool of this world)' if r.tool in unknown else ''}"
                            f": {r.risk}" for r in verdict.risky_tools])
    section("suggestions", verdict.suggestions)
    lines.append("")
    lines.append(f"advisory only: the compiler decides what is valid; "
                 f"{outcome.usage.total_tokens:,} tokens")
    return "\n".join(lines) + "\n"
