"""``worldspec test``: explore every world with random tool calls and report what breaks.

The report also validates every task of each world (its reference solution replayed, as
``worldspec tasks`` does: WS610-WS624, discoverability included): an invalid task is a problem.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from worldspec.cli.console import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    Console,
    add_paths_argument,
    collect_spec_files,
    output_problem,
    report_errors,
)
from worldspec.services.validation import TaskReport
from worldspec.testing.explore import Finding, Report, explore, format_call

__all__ = ["configure_test", "run_test"]

def configure_test(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser)
    parser.add_argument("--max-examples", type=int, default=100, metavar="N",
                        help="random call sequences per world (default 100)")
    parser.add_argument("--steps", type=int, default=40, metavar="N",
                        help="calls per sequence (default 40)")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="the random seed: the same seed explores the same calls")
    parser.add_argument("--failures", default="worldspec-failures", metavar="DIR",
                        help="where each finding's calls are saved as JSONL for "
                             "'worldspec run --calls' (default: worldspec-failures)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="'text' (default) or 'json' (one object per world)")


def _save(finding: Finding, world: str, index: int, folder: Path) -> Path | None:
    if not finding.calls:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{world}-{index}.jsonl"
    path.write_text("".join(json.dumps({"name": name, "arguments": args},
                                       ensure_ascii=False) + "\n"
                            for name, args in finding.calls), encoding="utf-8")
    return path


def _text(report: Report, saved: dict[int, Path], console: Console) -> None:
    ok = sum(report.succeeded.values())
    console.line(f"{report.world}: {report.examples} sequences, {report.calls} calls "
                 f"({ok} succeeded), {report.calls_per_second:,.0f} calls/s")
    for line in _coverage_table(report):
        console.line(f"  {line}")
    if not report.problems:
        console.line("  exploration found no problems")
    for index, finding in enumerate(report.findings):
        where = f" ({finding.where})" if finding.where else ""
        label = "PROBLEM" if finding.severity == "problem" else "NOTE"
        console.line(f"  {label} {finding.kind}: {finding.tool}{where}")
        console.line(f"    {finding.message}")
        if finding.calls:
            console.line(f"    shortest sequence ({len(finding.calls)} call"
                         f"{'s' if len(finding.calls) != 1 else ''}):")
            for call in finding.calls:
                console.line(f"      {format_call(call)}")
        if index in saved:
            console.line(f"    saved to {saved[index]}")


def _task_lines(reports: list[TaskReport]) -> list[str]:
    """A world's task validation: how many are valid, and each invalid one's errors."""
    if not reports:
        return []
    valid = sum(r.valid for r in reports)
    lines = [f"tasks: {valid} of {len(reports)} valid"]
    for r in reports:
        if not r.valid:
            lines.append(f"PROBLEM invalid task: {r.task} ({r.file}:{r.line})")
            lines.extend(f"  {d.severity.value}[{d.code}] line {d.span.line}: {d.message}"
                         for d in r.problems if d.severity.value == "error")
    return lines


def _coverage_table(report: Report) -> list[str]:
    """Per tool: calls, successes and their share, every tool of the world in declaration
    order; a tool no call got past its checks is marked."""
    rows = report.coverage()
    if not rows:
        return []
    width = max(len("tool"), *(len(name) for name, _, _ in rows))
    lines = [f"{'tool':<{width}}  {'calls':>6}  {'succeeded':>9}  {'share':>5}"]
    for name, calls, succeeded in rows:
        share = f"{100 * succeeded / calls:.0f}%" if calls else "-"
        mark = "  never succeeded" if calls and not succeeded else (
            "  never called" if not calls else "")
        lines.append(f"{name:<{width}}  {calls:>6}  {succeeded:>9}  {share:>5}{mark}")
    return lines


def run_test(args: argparse.Namespace, console: Console) -> int:
    from worldspec.services.loading import CompileError, compile_worlds

    if args.max_examples < 1 or args.steps < 1:
        console.error("--max-examples and --steps must be at least 1")
        return EXIT_USAGE
    files = collect_spec_files(args.paths, console)
    if files is None:
        return EXIT_USAGE
    problem = output_problem(args.failures, folder=True, option="--failures")
    if problem is not None:
        console.error(problem)
        return EXIT_USAGE
    try:
        loaded = compile_worlds(list(files))
    except CompileError as exc:
        report_errors(exc.result, console)
        console.error("cannot test: the specs have errors")
        return EXIT_PROBLEMS
    if not loaded.worlds:
        console.error("nothing to test: the specs define no world")
        return EXIT_PROBLEMS
    from worldspec.services.validation import validate_tasks

    tasks: dict[str, list[TaskReport]] = {}
    for task_report in validate_tasks(loaded.result):
        tasks.setdefault(task_report.world, []).append(task_report)
    problems = 0
    outputs = []
    for name in sorted(loaded.worlds):
        report = explore(loaded.worlds[name], max_examples=args.max_examples,
                         steps=args.steps, seed=args.seed)
        saved = {}
        for index, finding in enumerate(report.findings):
            try:
                path = _save(finding, name, index, Path(args.failures))
            except OSError as exc:
                console.error(f"--failures: cannot save into '{args.failures}': "
                              f"{exc.strerror or exc}")
                return EXIT_USAGE
            if path is not None:
                saved[index] = path
        problems += len(report.problems) + sum(not r.valid for r in tasks.get(name, []))
        if args.format == "json":
            outputs.append({
                "world": name, "sequences": report.examples, "calls": report.calls,
                "calls_per_second": round(report.calls_per_second),
                "per_tool": {k: {"calls": report.per_tool[k], "succeeded": report.succeeded[k]}
                             for k in sorted(report.per_tool)},
                "coverage": [{"tool": tool, "calls": calls, "succeeded": succeeded}
                             for tool, calls, succeeded in report.coverage()],
                "findings": [{"kind": f.kind, "severity": f.severity, "tool": f.tool,
                              "message": f.message,
                              "where": f.where, "calls": [{"name": c[0], "arguments": c[1]}
                                                          for c in f.calls]}
                             for f in report.findings],
                "tasks": [r.to_json() for r in tasks.get(name, [])],
            })
        else:
            _text(report, saved, console)
            for line in _task_lines(tasks.get(name, [])):
                console.line(f"  {line}")
    if args.format == "json":
        console.line(json.dumps(outputs, ensure_ascii=False, indent=2))
    return EXIT_PROBLEMS if problems else EXIT_OK
