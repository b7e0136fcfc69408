"""The model fills in the skeleton, method by method, with the compiler and the differential
test in the loop.

For one class (:func:`port_class`):

1. **Translate**, one public method at a time: the model gets the condensed language
   reference, the rules of a faithful port, the class's source, the world as it stands and
   the method, and answers the ``tool`` declaration (and any ``fn``, ``record``, ``enum``,
   ``type`` or ``state`` it needs). The answer is spliced into the world (:func:`splice`),
   replacing the declarations of the same name; the world is checked, and its diagnostics go
   back to the model until it checks clean, at most ``max_rounds`` repair rounds per method.
   A method that never checks clean rejects the port with the last diagnostics.
2. **Compare**: the world is compiled and run against the original in the sandbox
   (:func:`worldspec.port.compare.compare`). Each difference, shrunk to its shortest call
   sequence with both sides' answers, goes back to the model, which answers corrected
   declarations; they are spliced in and checked (diagnostics go back too), and the
   comparison runs again, for at most ``max_rounds`` rounds. The port is accepted when
   ``examples`` random sequences agree.

:class:`RequestJournal` records every model request and its answer (JSONL, keyed by the
hash of the messages), so a port that is interrupted (or waits on a slow endpoint) resumes
without asking the same question twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldspec.compiler.api import check_source
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.parser import parse_module
from worldspec.port.compare import (
    CompareOptions,
    CompareReport,
    Difference,
    Original,
    compare,
)
from worldspec.port.prompts import (
    PortContext,
    difference_feedback,
    method_compile_feedback,
    translate_method_messages,
)
from worldspec.port.skeleton import Skeleton
from worldspec.services.compile_lock import COMPILE_LOCK
from worldspec.services.model_client import LLMClient, Message, Usage
from worldspec.services.model_diagnostics import diagnostics_for_model
from worldspec.services.world_replies import (
    extract_world_code,
    missing_code_feedback,
    repair_messages,
)

__all__ = ["PERSIST_ROUNDS", "PortOptions", "PortOutcome", "RequestJournal",
           "difference_signature", "port_class", "rejected_report", "rejected_world", "splice"]

#: declarations a reply may carry, by kind
_SPLICEABLE = (n.ToolDecl, n.FnDecl, n.RecordDecl, n.EnumDecl, n.AliasDecl, n.EntityDecl,
               n.UnionDecl, n.StateDecl, n.InvariantDecl, n.ConfigDecl, n.ConstDecl,
               n.LoadDecl)


class SpliceError(Exception):
    """A reply that cannot be spliced into the world; the message is for the model."""


@dataclass(frozen=True)
class PortOptions:
    """How hard to try."""

    #: repair rounds per method (compile errors) and differential rounds after the draft
    max_rounds: int = 4
    compare: CompareOptions = field(default_factory=CompareOptions.for_port)
    filename: str = "port.world"


@dataclass
class PortOutcome:
    """How the port of one class ended."""

    accepted: bool
    #: the world (accepted), or the last world that checked clean, or None
    text: str | None
    reason: str = ""
    detail: str = ""
    #: differential repair rounds used (0: the first translation agreed)
    rounds: int = 0
    tools_ported: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    report: CompareReport | None = None
    #: the last compiler diagnostics of a rejected port
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    #: per method: repair rounds its translation needed
    method_rounds: dict[str, int] = field(default_factory=dict)
    #: differences of the last comparison that stayed the same (kind, tool, message pattern)
    #: through at least :data:`PERSIST_ROUNDS` repair rounds: no longer sent to the model
    persisting: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        report = self.report
        return {"accepted": self.accepted, "reason": self.reason, "detail": self.detail,
                "rounds": self.rounds, "tools_ported": self.tools_ported,
                "method_rounds": self.method_rounds, "usage": self.usage.to_json(),
                "calls_compared": report.calls if report else 0,
                "differences": [d.to_json() for d in report.differences] if report else [],
                "persisting": self.persisting,
                "compare": report.to_json() if report else None,
                "diagnostics": self.diagnostics, "history": self.history}


def rejected_world(text: str, outcome: dict[str, Any], report: str | None = None) -> str:
    """The last world of a rejected port (``outcome`` is :meth:`PortOutcome.to_json`), with a
    header comment that marks it REJECTED, says why and how many differences remain, and
    names the ``report`` beside it."""
    left = len(outcome.get("differences") or [])
    reason = " ".join(str(outcome.get("reason") or "rejected").split())
    where = f" (see {report})" if report else ""
    return (f"# REJECTED by `worldspec port`: {reason}; {left} difference(s) remain{where}.\n"
            "# This is the last world that checked clean: it does not behave like the "
            "original everywhere.\n" + text)


def rejected_report(label: str, outcome: dict[str, Any]) -> dict[str, Any]:
    """What a rejected port leaves beside its last world: why, the remaining differences
    each with its shrunk call sequence and both sides' answers, the persisting ones, the last
    compiler diagnostics, the tokens, and the whole outcome."""
    return {"label": label, "status": "rejected", "reason": outcome.get("reason", ""),
            "detail": outcome.get("detail", ""),
            "differences": outcome.get("differences") or [],
            "persisting": outcome.get("persisting") or [],
            "diagnostics": outcome.get("diagnostics") or [],
            "tools_ported": outcome.get("tools_ported") or [],
            "usage": outcome.get("usage") or {}, "outcome": outcome}


#: repair rounds through which a difference may stay unchanged before it is taken to be one
#: the model cannot remove (e.g. the iteration order of a Python ``set``): it is then no
#: longer sent back, and when only such differences are left the repairs stop (the port is
#: still rejected, and the report lists them as persisting)
PERSIST_ROUNDS = 2

_QUOTED = re.compile(r""""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'""")
_NUMBER = re.compile(r"-?\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b")


def difference_signature(difference: Difference) -> tuple[str, str, str]:
    """``(kind, tool, message pattern)``: the message with every quoted text (but a JSON
    object's keys) and every number replaced, so that the same difference shown by other
    arguments is recognised."""
    message = difference.message

    def value(match: re.Match[str]) -> str:
        key = message[match.end():].lstrip().startswith(":")
        return match.group(0) if key else '"…"'

    pattern = _NUMBER.sub("#", _QUOTED.sub(value, message))
    return (difference.kind, difference.tool, pattern)


def _summary(difference: Difference) -> dict[str, Any]:
    return {"kind": difference.kind, "tool": difference.tool, "message": difference.message}


# ------------------------------------------------------------------ journal
class RequestJournal:
    """A client that answers repeated requests from a JSONL record of earlier answers.

    Every request that reaches the model is appended (flushed and fsynced) with its answer
    and usage, keyed by the SHA-256 of the messages; the same messages later are answered
    from the record, at no cost. A torn last line (a kill mid-write) is ignored.
    """

    def __init__(self, client: LLMClient, path: str | Path | None) -> None:
        self.client = client
        self.path = Path(path) if path is not None else None
        self.answers: dict[str, str] = {}
        #: per key: the usage the journal recorded for the answer (what it cost then)
        self.recorded: dict[str, Usage] = {}
        self.replayed = 0
        if self.path is not None and self.path.is_file():
            for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    raw = json.loads(line)
                except ValueError:
                    continue
                if isinstance(raw, dict) and isinstance(raw.get("key"), str) \
                        and isinstance(raw.get("text"), str):
                    self.answers[raw["key"]] = raw["text"]
                    usage = raw.get("usage")
                    self.recorded[raw["key"]] = Usage.from_json(
                        usage if isinstance(usage, dict) else {})

    @staticmethod
    def key(messages: Sequence[Message]) -> str:
        text = json.dumps(list(messages), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    async def chat(self, messages: Sequence[Message], usage: Usage) -> str:
        key = self.key(messages)
        known = self.answers.get(key)
        if known is not None:
            self.replayed += 1
            usage.add(_replayed(self.recorded.get(key, Usage())))
            return known
        result = await self.client.chat(messages, usage=usage)
        self.answers[key] = result.text
        self.recorded[key] = result.usage
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            line = json.dumps({"key": key, "text": result.text,
                               "usage": result.usage.to_json()}, ensure_ascii=False) + "\n"
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
        return result.text


def _replayed(recorded: Usage) -> Usage:
    """What an answer from the journal adds to a usage record: the tokens it cost when it was
    asked (a journal rerun reports what the port cost), marked as not spent in this run."""
    return Usage(requests=1, prompt_tokens=recorded.prompt_tokens,
                 completion_tokens=recorded.completion_tokens,
                 cached_tokens=recorded.cached_tokens, replayed_requests=1,
                 replayed_tokens=recorded.prompt_tokens + recorded.completion_tokens)


# ------------------------------------------------------------------ splice
def _decl_key(decl: n.Decl) -> tuple[str, str]:
    if isinstance(decl, n.StateDecl):
        return ("state", "")
    if isinstance(decl, n.LoadDecl):  # a world has at most one: a reply's replaces it
        return ("load", "")
    name = getattr(decl, "name", None)
    kind = "type" if isinstance(decl, (n.RecordDecl, n.EnumDecl, n.AliasDecl, n.EntityDecl,
                                       n.UnionDecl)) else type(decl).__name__
    return (kind, name.name if isinstance(name, n.Ident) else "")


def splice(world_text: str, reply_code: str, *, tool: str | None = None) -> str:
    """``world_text`` with the declarations of ``reply_code`` in place of those of the same
    name (new ones before the first tool, new tools at the end). A reply may carry what the
    language reference recommends for a port: ``const`` declarations, an ``on load`` block
    (it replaces the world's), a ``state`` block with ``private`` items (it replaces the
    world's), besides tools, helpers and types.

    Raises :class:`SpliceError` when the reply has syntax errors, holds what may not be
    replaced (a world header, imports, tasks, policies), or lacks ``tool`` when one is named.
    """
    sink = DiagnosticSink()
    parsed = parse_module(reply_code, "reply.world", sink)
    if not parsed.ok:
        problems = "; ".join(f"line {d.span.line}: {d.message}" for d in sink.sorted()[:5])
        raise SpliceError(f"your reply has syntax errors: {problems}")
    refused = [d for d in parsed.module.decls if not isinstance(d, _SPLICEABLE)]
    if refused:
        kinds = sorted({type(d).__name__.replace("Decl", "").lower() for d in refused})
        raise SpliceError(f"reply with tool, fn, record, entity, enum, type, const, state, "
                          f"config or invariant declarations and an `on load` block only; "
                          f"leave out: {', '.join(kinds)}")
    if tool is not None and not any(isinstance(d, n.ToolDecl) and d.name.name == tool
                                    for d in parsed.module.decls):
        raise SpliceError(f"your reply holds no `tool {tool}` declaration")
    current = parse_module(world_text, "world.world", DiagnosticSink())
    if not current.ok:
        raise SpliceError("the world itself does not parse")
    spans = {_decl_key(d): d.span for d in current.module.decls}
    first_tool = _before_comments(world_text, next(
        (d.span.start for d in current.module.decls if isinstance(d, n.ToolDecl)),
        len(world_text)))
    replacements: list[tuple[int, int, str]] = []
    before_tools: list[str] = []
    at_end: list[str] = []
    for decl in parsed.module.decls:
        text = reply_code[decl.span.start:decl.span.end]
        span = spans.get(_decl_key(decl))
        if span is not None:
            replacements.append((span.start, span.end, text))
        elif isinstance(decl, n.ToolDecl):
            at_end.append(text)
        else:
            before_tools.append(text)
    out = world_text
    inserts = [(first_tool, first_tool, "".join(f"{t}\n\n" for t in before_tools))] \
        if before_tools else []
    for start, end, text in sorted([*replacements, *inserts], key=lambda r: -r[0]):
        out = out[:start] + text + out[end:]
    if at_end:
        out = out.rstrip("\n") + "\n\n" + "\n\n".join(at_end) + "\n"
    return out


def _before_comments(text: str, offset: int) -> int:
    """``offset`` moved back over the comment lines right above it."""
    start = text.rfind("\n", 0, offset) + 1
    while start > 0:
        previous = text.rfind("\n", 0, start - 1) + 1
        if not text[previous:start].lstrip().startswith("#"):
            break
        start = previous
    return start


# --------------------------------------------------------------------- loop
def _check(text: str, filename: str) -> list[dict[str, Any]]:
    """The errors of ``text`` as JSON for the model ([] when it checks clean)."""
    with COMPILE_LOCK:
        result = check_source(text, filename)
    if result.ok:
        return []
    return [d for d in diagnostics_for_model(list(result.diagnostics), text)
            if d["severity"] == "error"]


def _compare(text: str, filename: str, original: Original, options: CompareOptions
             ) -> CompareReport:
    from worldspec.services.loading import load_result

    with COMPILE_LOCK:
        result = check_source(text, filename)
        loaded = load_result(result)
    world = next(iter(loaded.worlds.values()))
    return compare(world, original, options)


def _short_problems(problems: Sequence[dict[str, Any]]) -> str:
    return "; ".join(f"line {p.get('line')}: {p.get('code')}: {p.get('message')}"
                     for p in problems[:3])


async def _attempt(journal: RequestJournal, base: list[Message], world: str, *,
                   tool: str | None, filename: str, max_rounds: int, usage: Usage,
                   history: list[dict[str, Any]], label: str
                   ) -> tuple[str | None, int, list[dict[str, Any]]]:
    """Ask, splice, check, and repair until the world checks clean: (world, rounds, last
    problems); the world is None when ``max_rounds`` repairs did not get there."""
    messages = base
    problems: list[dict[str, Any]] = []
    for round_number in range(max_rounds + 1):
        reply = await journal.chat(messages, usage)
        code = extract_world_code(reply)
        if code is None:
            problems = [{"code": "port", "severity": "error",
                         "message": "the reply holds no ```world code block"}]
            history.append({"step": label, "round": round_number, "stage": "no code"})
            messages = repair_messages(base, reply, missing_code_feedback(
                f"`tool {tool}` declaration" if tool else "corrected declarations"))
            continue
        try:
            candidate = splice(world, code, tool=tool)
        except SpliceError as exc:
            problems = [{"code": "port", "severity": "error", "message": str(exc)}]
            history.append({"step": label, "round": round_number, "stage": "splice"})
            messages = repair_messages(base, f"```world\n{code}```",
                                       method_compile_feedback(problems, tool or "tools"))
            continue
        problems = await asyncio.to_thread(_check, candidate, filename)
        history.append({"step": label, "round": round_number,
                        "stage": "compile" if problems else "ok", "problems": len(problems)})
        if not problems:
            return candidate, round_number, []
        messages = repair_messages(base, f"```world\n{code}```",
                                   method_compile_feedback(problems, tool or "tools"))
    return None, max_rounds, problems


async def port_class(client: LLMClient | RequestJournal, skeleton: Skeleton,
                     original: Original, options: PortOptions = PortOptions(), *,
                     usage: Usage | None = None,
                     on_step: Callable[[str], None] | None = None) -> PortOutcome:
    """Translate, check, compare and repair one class (see the module docstring).

    ``on_step`` hears one line per step (``translate take (2/3)``, ``compare round 0``),
    for progress on a long port.

    Model failures that persist (``LLMRequestError``) propagate; everything the model gets
    wrong ends in a rejected outcome.
    """
    journal = client if isinstance(client, RequestJournal) else RequestJournal(client, None)
    spent = usage if usage is not None else Usage()
    info = skeleton.info
    assert info is not None, "the skeleton must come from read_class"
    outcome = PortOutcome(False, None, usage=spent)
    world = skeleton.text
    filename = options.filename
    def step(text: str) -> None:
        if on_step is not None:
            on_step(text)

    context = PortContext.of(info, original.data)
    state = list(info.attributes)
    for number, method in enumerate(info.methods, 1):
        step(f"translate {method.name} ({number}/{len(info.methods)})")
        base = translate_method_messages(context, world_text=world, method=method,
                                         state=state)
        done, rounds, problems = await _attempt(
            journal, base, world, tool=method.name, filename=filename,
            max_rounds=options.max_rounds, usage=spent, history=outcome.history,
            label=f"translate {method.name}")
        outcome.method_rounds[method.name] = rounds
        if done is None:
            outcome.text = world
            outcome.reason = (f"compile errors remain in {method.name} after "
                              f"{options.max_rounds} repair rounds")
            outcome.detail = _short_problems(problems)
            outcome.diagnostics = problems
            return outcome
        world = done
        outcome.tools_ported.append(method.name)
    outcome.text = world
    #: per difference signature: the repair rounds it has stayed through unchanged
    streaks: dict[tuple[str, str, str], int] = {}
    last_seen: set[tuple[str, str, str]] = set()
    for round_number in range(options.max_rounds + 1):
        step(f"compare, round {round_number}")
        report = await asyncio.to_thread(_compare, world, filename, original, options.compare)
        outcome.report = report
        outcome.rounds = round_number
        outcome.history.append({"step": "compare", "round": round_number,
                                "differences": len(report.differences),
                                "calls": report.calls, "agrees": report.agrees})
        if report.agrees:
            outcome.accepted = True
            return outcome
        if report.load_error:
            outcome.reason = "the comparison could not run"
            outcome.detail = report.load_error
            return outcome
        for difference in report.differences:
            signature = difference_signature(difference)
            streaks[signature] = streaks.get(signature, 0) + 1 if signature in last_seen else 0
        last_seen = {difference_signature(d) for d in report.differences}
        persisting = [d for d in report.differences
                      if streaks.get(difference_signature(d), 0) >= PERSIST_ROUNDS]
        outcome.persisting = [{**_summary(d), "repair_rounds": streaks[difference_signature(d)]}
                              for d in persisting]
        if round_number == options.max_rounds:
            break
        fresh = [d for d in report.differences if d not in persisting]
        if persisting and not fresh and not (report.missing_in_world
                                             or report.missing_in_original):
            outcome.reason = (f"{len(persisting)} difference(s) persisted unchanged through "
                              f"{PERSIST_ROUNDS} repair rounds; stopped repairing after "
                              f"{round_number} of {options.max_rounds}")
            outcome.detail = "; ".join(f"{d.kind} in {d.tool}: {d.message}"
                                       for d in persisting)
            return outcome
        differences = [d.to_json() for d in fresh]
        if report.missing_in_world or report.missing_in_original:
            differences.append({"kind": "tools differ", "tool": "",
                                "message": f"methods without a tool: {report.missing_in_world};"
                                           f" tools without a method: "
                                           f"{report.missing_in_original}"})
        step(f"repair {len(differences)} difference(s), round {round_number + 1}")
        base = difference_feedback(context, world_text=world, differences=differences)
        fixed, _, problems = await _attempt(
            journal, base, world, tool=None, filename=filename,
            max_rounds=options.max_rounds, usage=spent, history=outcome.history,
            label=f"repair round {round_number + 1}")
        if fixed is None:
            outcome.reason = (f"a repair did not check clean after {options.max_rounds} "
                              "rounds")
            outcome.detail = _short_problems(problems)
            outcome.diagnostics = problems
            return outcome
        world = fixed
        outcome.text = world
    last = outcome.report
    left = len(last.differences) if last else 0
    outcome.reason = f"differences remain after {options.max_rounds} repair rounds"
    outcome.detail = f"{left} difference(s) left" + (
        f"; first: {last.differences[0].kind} in {last.differences[0].tool}: "
        f"{last.differences[0].message}" if last and last.differences else "") + (
        f"; {len(outcome.persisting)} persisted unchanged through {PERSIST_ROUNDS} or more "
        "repair rounds" if outcome.persisting else "")
    return outcome
