"""Renderers of a diff report: terminal text, JSON, Markdown (a PR comment), GitHub annotations.

They only present what :mod:`worldspec.services.diff.compare` and
:mod:`worldspec.services.diff.impact` found; nothing here decides a level.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from worldspec.services.diff.model import (
    Change,
    DiffReport,
    Level,
    TaskImpact,
    TrajectoryImpact,
    span_json,
)

__all__ = ["RENDERERS", "render_text", "render_json", "render_markdown", "render_github",
           "MARKDOWN_MARKER"]

#: The first line of the Markdown report, so a CI job can find and update its own comment.
MARKDOWN_MARKER = "<!-- worldspec-diff -->"

_SHOWN = 240  # characters of an old or new value shown in text and Markdown


def _short(value: Any, limit: int = _SHOWN) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split()) if "\n" in text else text
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _summary(report: DiffReport) -> str:
    counts = report.counts()
    total = len(report.changes)
    parts = ", ".join(f"{counts[level.value]} {level.value}" for level in Level)
    noun = "change" if total == 1 else "changes"
    return f"{total} {noun}: {parts}"


def _where(change: Change) -> str:
    span = change.span
    return f"{span.file}:{span.line}" if span is not None else ""


def _reward(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _trajectory_line(t: TrajectoryImpact) -> str:
    if t.status == "changed":
        return f"reward {_reward(t.old_reward)} -> {_reward(t.new_reward)}"
    return t.message or t.status


# -------------------------------------------------------------------- text
def render_text(report: DiffReport) -> str:
    """For people at a terminal: changes grouped by world, worst first, then the impact."""
    lines = [f"worldspec diff: {report.old_label} -> {report.new_label}", _summary(report)]
    world = None
    for change in sorted(report.changes, key=lambda c: (c.world, c.sort_key())):
        if change.world != world:
            world = change.world
            lines += ["", f"world {world}"]
        lines.append(f"  {change.level.value.upper():<10}{change.rule}  {change.coordinate}")
        lines.append(f"            {change.message}")
        if change.span is not None:
            lines.append(f"            at {_where(change)}")
        if change.old is not None:
            lines.append(f"            - {_short(change.old)}")
        if change.new is not None:
            lines.append(f"            + {_short(change.new)}")
    lines += _text_impact(report)
    return "\n".join(lines) + "\n"


def _text_impact(report: DiffReport) -> list[str]:
    impact = report.impact
    if not impact.ran:
        return ["", "impact: not analysed (--no-impact)"]
    lines = ["", "impact"]
    if not impact.tasks:
        lines.append("  tasks: every task validates as before")
    else:
        lines.append("  tasks:")
        for task in impact.tasks:
            where = f"  ({task.span.file}:{task.span.line})" if task.span else ""
            lines.append(f"    {task.status:<8}{task.world}.{task.task}{where}")
            lines += [f"            {p}" for p in task.problems]
    if impact.trajectories:
        lines.append("  trajectories:")
        for t in impact.trajectories:
            lines.append(f"    {t.status + ' ':<10}{t.file} ({t.task}): {_trajectory_line(t)}")
            if t.first_difference is not None:
                d = t.first_difference
                lines.append(f"              call {d.index + 1} {d.tool}:")
                lines.append(f"                - {_short(d.old)}")
                lines.append(f"                + {_short(d.new)}")
            for name, before, after in t.checks:
                lines.append(f"              check {name}: {before} -> {after}")
            if t.frame is not None and t.frame[0] != t.frame[1]:
                lines.append(f"              frame holds: {t.frame[0]} -> {t.frame[1]}")
    return lines


# -------------------------------------------------------------------- json
def _change_json(report: DiffReport, change: Change) -> dict[str, Any]:
    tasks, trajectories = report.impact_of(change)
    return {
        "level": change.level.value, "rule": change.rule, "area": change.area.value,
        "world": change.world, "coordinate": change.coordinate, "message": change.message,
        "fingerprint": change.fingerprint, "old": change.old, "new": change.new,
        "span": span_json(change.span), "old_span": span_json(change.old_span),
        "impact": {"tasks": [f"{t.world}.{t.task}" for t in tasks],
                   "trajectories": [t.file for t in trajectories]},
    }


def render_json(report: DiffReport) -> str:
    """One JSON object: ``old``, ``new``, ``summary``, ``changes`` and ``impact``."""
    worst = max(report.changes, key=lambda c: c.level.rank).level.value \
        if report.changes else None
    payload = {
        "old": report.old_label, "new": report.new_label,
        "summary": {**report.counts(), "total": len(report.changes), "worst": worst},
        "changes": [_change_json(report, c) for c in report.changes],
        "impact": report.impact.to_json(),
    }
    return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"


# ---------------------------------------------------------------- markdown
def _code(text: str) -> str:
    """Inline code that survives backticks and table pipes in ``text``."""
    text = _short(text).replace("|", "\\|")
    fence = "`"
    while fence in text:
        fence += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def _markdown_impact(report: DiffReport) -> list[str]:
    impact = report.impact
    if not impact.ran:
        return []
    lines = ["", "#### Impact", ""]
    titles = {"broken": "no longer validates", "data": "old initial data rejected by the "
              "new schema", "invalid": "new task that does not validate",
              "fixed": "validates again"}
    if not impact.tasks:
        lines.append("Every task validates as before.")
    for task in impact.tasks:
        problems = "; ".join(task.problems[:3]) + (" …" if len(task.problems) > 3 else "")
        lines.append(f"- task {_code(f'{task.world}.{task.task}')} {titles[task.status]}: "
                     f"{_cell(_short(problems))}")
    changed = [t for t in impact.trajectories if t.status != "unchanged"]
    if impact.trajectories:
        lines += ["", f"{len(changed)} of {len(impact.trajectories)} recorded trajectories "
                  "replay differently" + (":" if changed else ".")]
        for t in changed:
            detail = _trajectory_line(t)
            if t.first_difference is not None:
                detail += (f"; call {t.first_difference.index + 1} "
                           f"{_code(t.first_difference.tool)} returns something else")
            lines.append(f"- {_code(t.file)} (task {_code(t.task)}): {_cell(detail)}")
    return lines


def render_markdown(report: DiffReport) -> str:
    """A pull-request comment: a summary, a table of changes, old/new values, the impact."""
    counts = report.counts()
    summary = ", ".join(f"**{counts[level.value]} {level.value}**" if level is Level.BREAKING
                        and counts[level.value] else f"{counts[level.value]} {level.value}"
                        for level in Level)
    lines = [MARKDOWN_MARKER, "### WorldSpec diff", "",
             f"{_code(report.old_label)} → {_code(report.new_label)}: {summary}", ""]
    if not report.changes:
        lines.append("No semantic changes.")
    else:
        lines += ["| level | rule | where | what |", "|---|---|---|---|"]
        for c in report.changes:
            where = _code(c.coordinate) + (f" ({_cell(_where(c))})" if c.span else "")
            lines.append(f"| {c.level.value} | {_code(c.rule)} | {where} | "
                         f"{_cell(c.message)} |")
        detailed = [c for c in report.changes if c.old is not None or c.new is not None]
        if detailed:
            lines += ["", "<details><summary>Old and new values</summary>", ""]
            for c in detailed:
                lines.append(f"- {_code(c.coordinate)} ({_code(c.rule)}, fingerprint "
                             f"{_code(c.fingerprint)})")
                if c.old is not None:
                    lines.append(f"  - old: {_code(c.old)}")
                if c.new is not None:
                    lines.append(f"  - new: {_code(c.new)}")
            lines += ["", "</details>"]
    lines += _markdown_impact(report)
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ github
_COMMANDS = {Level.BREAKING: "error", Level.DANGEROUS: "warning", Level.SAFE: "notice",
             Level.INFO: "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(command: str, title: str, message: str, span: Any) -> str:
    props = []
    if span is not None:
        props.append(("file", span.file))
        if span.line >= 1:
            props.append(("line", str(span.line)))
            if span.end_line >= span.line:
                props.append(("endLine", str(span.end_line)))
    props.append(("title", title))
    rendered = ",".join(f"{k}={_escape_property(v)}" for k, v in props)
    return f"::{command} {rendered}::{_escape_data(message)}"


def _task_annotation(task: TaskImpact) -> str:
    command = "notice" if task.status == "fixed" else "error"
    message = f"task {task.task}: {task.status}\n" + "\n".join(task.problems)
    return _annotation(command, "worldspec diff: task impact", message, task.span)


def render_github(report: DiffReport) -> str:
    """GitHub Actions workflow annotations at lines of the new files."""
    out = []
    for c in report.changes:
        message = c.message
        if c.old is not None:
            message += f"\nold: {_short(c.old)}"
        if c.new is not None:
            message += f"\nnew: {_short(c.new)}"
        message += f"\nfingerprint: {c.fingerprint}"
        out.append(_annotation(_COMMANDS[c.level], f"worldspec diff: {c.level.value} "
                               f"{c.rule}", message, c.span))
    out += [_task_annotation(t) for t in report.impact.tasks]
    for t in report.impact.trajectories:
        if t.status in ("changed", "task-removed", "task-invalid", "error"):
            out.append(_annotation("warning", "worldspec diff: trajectory",
                                   f"{t.file} ({t.task}): {_trajectory_line(t)}", None))
    return "".join(line + "\n" for line in out)


RENDERERS: dict[str, Callable[[DiffReport], str]] = {
    "text": render_text,
    "json": render_json,
    "markdown": render_markdown,
    "github": render_github,
}
