"""``worldspec build`` and ``worldspec run``: compile worlds, and run a task in one."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldspec.cli.console import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    Console,
    add_paths_argument,
    collect_spec_files,
    output_problem,
    report_errors,
    special_file_kind,
)
from worldspec.compiler.build import generate_all, stale_files, write_packages
from worldspec.dsl.diagnostics import did_you_mean
from worldspec.services.calls import read_calls, read_replies
from worldspec.services.validation import check_paths

if TYPE_CHECKING:
    from worldspec.runtime.episode import Episode, Score

__all__ = ["configure_build", "run_build", "configure_run", "run_run"]


# ------------------------------------------------------------------- build
def configure_build(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser)
    parser.add_argument("-o", "--out", default="generated", metavar="OUT",
                        help="the folder to write one package per world into "
                             "(default: generated)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if OUT differs from what would be written")


def _io_problem(exc: OSError | UnicodeDecodeError, out: Path) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"-o: '{out}' holds a file that is not UTF-8 text: {exc.reason}"
    where = f" ('{exc.filename}')" if exc.filename and str(exc.filename) != str(out) else ""
    return f"-o: cannot write into '{out}'{where}: {exc.strerror or exc}"


def run_build(args: argparse.Namespace, console: Console) -> int:
    files = collect_spec_files(args.paths, console)
    if files is None:
        return EXIT_USAGE
    out = Path(args.out)
    problem = output_problem(args.out, folder=True)
    if problem is not None:
        console.error(problem)
        return EXIT_USAGE
    validated = check_paths(files)  # what 'worldspec check' refuses is not built either
    if not validated.ok:
        report_errors(validated, console)
        console.error("not built: the specs or their tasks have errors")
        return EXIT_PROBLEMS
    build = generate_all(validated.result)
    if args.check:
        try:
            stale = stale_files(build, out)
        except (OSError, UnicodeDecodeError) as exc:
            console.error(_io_problem(exc, out))
            return EXIT_USAGE
        for path in stale:
            console.line(f"stale: {path}")
        if stale:
            console.error(f"{len(stale)} generated file(s) are out of date; "
                          f"run 'worldspec build {' '.join(args.paths)} -o {args.out}'")
            return EXIT_PROBLEMS
        console.line(f"{len(build.packages)} world package(s) up to date in {out}")
        return EXIT_OK
    try:
        out.mkdir(parents=True, exist_ok=True)
        written = write_packages(build, out)
    except (OSError, UnicodeDecodeError) as exc:
        console.error(_io_problem(exc, out))
        return EXIT_USAGE
    for package in build.packages:
        console.line(f"built {package.world} -> {out / package.name}")
    console.line(f"{len(written)} file(s) written")
    return EXIT_OK


# --------------------------------------------------------------------- run
def configure_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC",
                        help="a .world file or folder holding the world and the task")
    parser.add_argument("--task", required=True, help="the task to run")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--solution", action="store_true",
                        help="replay the task's reference solution")
    source.add_argument("--calls", metavar="FILE",
                        help="replay a JSONL file of {\"name\": ..., \"arguments\": {...}} lines")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="'text' (default): each call, its result and the state diff, "
                             "then the score; 'json': one object with the score")
    parser.add_argument("--all-or-nothing", action="store_true",
                        help="reward 1 only when every check passes and the frame holds, "
                             "else 0")


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def run_run(args: argparse.Namespace, console: Console) -> int:
    from worldspec.services.loading import CompileError, compile_worlds

    files = collect_spec_files([args.spec], console)
    if files is None:
        return EXIT_USAGE
    try:
        loaded = compile_worlds(list(files))
    except CompileError as exc:
        report_errors(exc.result, console)
        console.error("cannot run: the specs have errors")
        return EXIT_PROBLEMS
    world = loaded.world_of_task(args.task)
    if world is None:
        tasks = sorted({t for w in loaded.worlds.values() for t in w.TASKS})
        console.error(f"no task '{args.task}' in {args.spec}" +
                      (f" (tasks: {', '.join(tasks)})" if tasks else " (it defines no tasks)"))
        for hint in did_you_mean(args.task, tasks):
            console.line(f"  = hint: {hint}", to_err=True)
        return EXIT_USAGE
    task = world.TASKS[args.task]
    if args.solution:
        calls: list[tuple[str, Any]] = [(name, dict(a)) for name, a in task.solution]
        replies = list(task.replies)
    else:
        try:
            special = special_file_kind(os.stat(args.calls).st_mode)
            if special is not None:
                console.error(f"--calls: '{args.calls}' is {special}, not a file of calls")
                return EXIT_USAGE
            calls = read_calls(args.calls)
            replies = read_replies(args.calls)
        except OSError as exc:
            console.error(f"--calls: cannot read '{args.calls}': {exc.strerror or exc}")
            return EXIT_USAGE
        except ValueError as exc:  # not JSON, or not calls; UnicodeDecodeError too
            console.error(f"--calls: {exc}")
            return EXIT_USAGE
    try:
        episode: Episode = world(task=args.task)
    except ValueError as exc:  # the world's `on load` refused the task's data (WS623)
        console.error(f"task {args.task}: {exc}")
        return EXIT_PROBLEMS
    results = []
    for name, arguments in calls:
        before = episode.copy() if args.format == "text" else None
        result = episode.call(name, arguments)
        results.append({"name": name, "arguments": arguments, "result": result,
                        "failed": episode.failed(result)})
        if args.format == "text":
            console.line(f"> {name}({_show(arguments)})")
            console.line(f"  {'error' if episode.failed(result) else 'ok'}: {_show(result)}")
            assert before is not None
            for change in episode.diff(before):
                console.line(f"  ~ {change['path']}: {_show(change['old'])} -> "
                             f"{_show(change['new'])}")
    score = episode.score(all_or_nothing=args.all_or_nothing, replies=replies)
    verdict = _verdict(score)
    if args.format == "json":
        console.line(json.dumps({**score.to_json(), "solved": verdict is None,
                                 "world": world.WORLD, "task": args.task, "calls": results},
                                ensure_ascii=False, indent=2))
    else:
        console.line(f"score {_shown_reward(score.reward)} "
                     f"({'solved' if verdict is None else f'not solved: {verdict}'})")
        for check in score.checks:
            mark = {"passed": "pass", "failed": "FAIL", "error": "ERROR"}[check.status]
            console.line(f"  [{mark}] {check.name}" + (f": {check.message}" if check.message
                                                      else ""))
        if not score.frame_ok:
            console.line("  frame violated: " + ", ".join(score.frame_violations))
    return EXIT_OK if verdict is None else EXIT_PROBLEMS


def _verdict(score: Score) -> str | None:
    """Why the task is not solved, or None when it is: solved means every check passes and
    the frame holds (the reward can be 1 with the frame broken, so it is not the test)."""
    failing = sum(not c.passed for c in score.checks)
    why = []
    if not score.checks:
        why.append("the task has no checks")
    if failing:
        why.append(f"{failing} of {len(score.checks)} check(s) fail")
    if not score.frame_ok:
        why.append("the frame is violated")
    return ", ".join(why) or None


def _shown_reward(reward: float) -> str:
    """Three decimals, but a reward below 1 never shows as ``1.000`` (nor above 0 as 0)."""
    shown = f"{reward:.3f}"
    if shown == "1.000" and reward < 1.0:
        return "0.999"
    if shown == "0.000" and reward > 0.0:
        return "0.001"
    return shown
