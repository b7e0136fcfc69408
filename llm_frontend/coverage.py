"""Exploring a compiled world from its tasks' data, and how far the calls got into each tool.

Random calls from an empty world prove little: a tool that needs a row never gets past its
first lookup, so its body (and the bug in it) is never run. :func:`explore_from_tasks`
therefore starts from the data of every task the world holds (and from the states its
reference solutions pass through, reached by running the solution's calls so that the clock
and the random numbers are where they left them), and measures, per tool, how many random
calls were made and how many succeeded. A state-changing tool is *reached* when a random call
made it succeed, or when a task's reference solution called it successfully with every property
checked (the checks of :func:`worldspec.testing.properties.check_call`, as the explorer
makes them): a login that needs the right password is reached by the solution, not by luck.

While some state-changing tool is not reached, exploration goes on with the next seed,
``tries`` runs at most; the counts add up over the runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from worldspec.runtime.episode import Episode
from worldspec.testing.explore import Finding, Reached, Start, explore, format_call
from worldspec.testing.properties import check_call

__all__ = ["Exploration", "coverage_cells", "explore_from_tasks", "unreached"]

#: The most start states taken from the solutions' intermediate states.
MAX_STARTS = 24


@dataclass
class Exploration:
    """Findings, notes and per-tool coverage of one world's exploration."""

    #: problems (a property broke), as JSON with the shortest calls that show each
    findings: list[dict[str, Any]] = field(default_factory=list)
    #: notes of the explorer (a tool that never succeeded, with its most common error)
    notes: list[dict[str, Any]] = field(default_factory=list)
    #: tool -> ``{"calls", "succeeded", "in_solutions", "changes_state"}`` (and ``error``, the
    #: most common failure of a tool never reached)
    coverage: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: int = 0
    runs: int = 0


def unreached(coverage: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The state-changing tools that neither a random call nor a solution got to succeed."""
    return sorted(name for name, row in coverage.items()
                  if row.get("changes_state") and not row.get("succeeded")
                  and not row.get("in_solutions"))


def coverage_cells(coverage: Mapping[str, Mapping[str, Any]]) -> str:
    """``park* 14/45, leave* 0/44 +1 in solutions, ...``: succeeded/calls of each tool."""
    cells = []
    for name, row in sorted(coverage.items()):
        cell = f"{name}{'*' if row.get('changes_state') else ''} " \
               f"{row.get('succeeded', 0)}/{row.get('calls', 0)}"
        if row.get("in_solutions") and not row.get("succeeded"):
            cell += f" +{row['in_solutions']} in solutions"
        cells.append(cell)
    return ", ".join(cells)


def _shown(finding: Finding) -> dict[str, Any]:
    return {"kind": finding.kind, "tool": finding.tool, "message": finding.message,
            "where": finding.where, "calls": [format_call(c) for c in finding.calls]}


def _replay_solutions(world: type[Episode]) -> tuple[list[Reached], Counter[str],
                                                     list[dict[str, Any]]]:
    """The states each solution passes through, the tools it called successfully, and the
    properties its calls broke (as findings)."""
    states: list[Reached] = []
    seen: set[str] = set()
    succeeded: Counter[str] = Counter()
    findings: list[dict[str, Any]] = []
    for name, task in world.TASKS.items():
        episode = world(task=name)
        done: list[tuple[str, dict[str, Any]]] = []
        for tool, args in task.solution:
            spec = world.TOOLS.get(tool)
            if spec is None:
                break
            before = episode.state_hash()
            episode.call(tool, dict(args))
            done.append((tool, dict(args)))
            broken = check_call(episode, spec, args, before)
            if broken is not None:
                findings.append({"kind": broken.kind, "tool": broken.tool,
                                 "message": f"{broken.message} (in the solution of task "
                                            f"{name})", "where": broken.where,
                                 "calls": [format_call(c) for c in done]})
                break
            if episode.last_error is not None:
                break
            succeeded[tool] += 1
            digest = episode.state_hash()
            if digest not in seen and len(states) < MAX_STARTS:
                seen.add(digest)
                states.append(Reached(task.data, tuple(done)))
    return states, succeeded, findings


def explore_from_tasks(world: type[Episode], *, examples: int, steps: int, seed: int = 0,
                       tries: int = 1, limit: int = 20) -> Exploration:
    """Explore ``world`` from its tasks' data (or an empty state when it has none)."""
    result = Exploration()
    states, in_solutions, solution_findings = _replay_solutions(world)
    starts: list[Start] = [task.data for task in world.TASKS.values()]
    starts += states
    calls: Counter[str] = Counter()
    succeeded: Counter[str] = Counter()
    errors: dict[str, str] = {}
    changing = {name: not spec.read_only for name, spec in world.TOOLS.items()}
    for attempt in range(max(1, tries)):
        report = explore(world, max_examples=examples, steps=steps, seed=seed + attempt,
                         starts=starts or [{}])
        result.runs += 1
        result.calls += report.calls
        calls.update(report.per_tool)
        succeeded.update(report.succeeded)
        result.findings = [_shown(f) for f in report.problems[:limit]]
        result.notes = [_shown(f) for f in report.findings if f.severity != "problem"]
        for finding in report.findings:
            if finding.severity == "note" and finding.kind == "never succeeds":
                errors[finding.tool] = finding.message.partition("most often with: ")[2]
        coverage = {name: {"calls": calls[name], "succeeded": succeeded[name],
                           "in_solutions": in_solutions[name], "changes_state": writes}
                    for name, writes in sorted(changing.items())}
        result.coverage = coverage
        if result.findings or not unreached(coverage):
            break
    result.findings = (solution_findings + result.findings)[:limit]
    for name, message in errors.items():
        row = result.coverage.get(name)
        if row is not None and not row["succeeded"] and message:
            row["error"] = message
    return result
