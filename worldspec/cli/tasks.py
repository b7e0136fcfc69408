"""``worldspec tasks`` (validation status of every task) and ``worldspec export`` (datasets)."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

from worldspec.cli.console import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    Console,
    add_paths_argument,
    cannot_write,
    collect_spec_files,
    output_problem,
    report_errors,
)
from worldspec.cli.prompt_options import add_prompt_options, read_prompt_options
from worldspec.dsl.diagnostics import did_you_mean
from worldspec.services.dataset import task_rows
from worldspec.services.files import FileRefusedError, write_atomically

__all__ = ["configure_tasks", "run_tasks", "configure_export", "run_export"]

#: how ``worldspec tasks`` marks each status in text
_MARKS = {"valid": "ok     ", "invalid": "INVALID", "not-validated": "NOT RUN"}


def configure_tasks(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="'text' (default), or 'json': an array with one object per task "
                             "(world, task, file, line, status, valid, reason, problems)")


def run_tasks(args: argparse.Namespace, console: Console) -> int:
    from worldspec.services.validation import check_paths

    files = collect_spec_files(args.paths, console)
    if files is None:
        return EXIT_USAGE
    validated = check_paths(files)
    reports = sorted(validated.tasks, key=lambda r: (r.world, r.file, r.line))
    if args.format == "json":
        console.line(json.dumps([r.to_json() for r in reports], ensure_ascii=False, indent=2))
    else:
        for report in reports:
            console.line(f"{_MARKS[report.status]} {report.world}.{report.task}  "
                         f"({report.file}:{report.line})")
            if report.reason:
                console.line(f"          {report.reason}")
            for problem in report.problems:
                console.line(f"          {problem.severity.value}[{problem.code}] "
                             f"{problem.message}")
        if not validated.result.ok:
            console.line("the specs have errors: run 'worldspec check' for the details")
        counts = Counter(r.status for r in reports)
        summary = f"{counts['valid']} of {len(reports)} task(s) valid"
        if counts["invalid"]:
            summary += f", {counts['invalid']} invalid"
        if counts["not-validated"]:
            summary += f", {counts['not-validated']} not validated"
        console.line(summary)
    return EXIT_OK if validated.ok and all(r.valid for r in reports) else EXIT_PROBLEMS


def configure_export(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="a .world file, or a folder: every *.world file below it "
                             "(not with --trajectories)")
    parser.add_argument("--format", choices=("jsonl",), default="jsonl",
                        help="'jsonl' (default): one JSON object per task and line")
    parser.add_argument("-o", "--out", metavar="FILE",
                        help="write to FILE instead of standard output")
    parser.add_argument("--split", metavar="NAME",
                        help="only tasks of this split (train, test, ...)")
    prompt = parser.add_argument_group(
        "the agent's prompt, as worldspec rollout builds it (not with --trajectories, whose "
        "records hold theirs)")
    add_prompt_options(prompt, conversational_help="rows for a conversation: the prompt ends "
                       "with the agent's greeting and a simulated user speaks next (default: "
                       "one-shot, the instruction as the user message)")
    rollouts = parser.add_argument_group("SFT data from rollouts (docs/rollouts.md)")
    rollouts.add_argument("--trajectories", metavar="RUNS",
                          help="export rollout records (a runs folder or a records file) as "
                               "HF messages+tools rows instead of tasks")
    rollouts.add_argument("--best-of", action="store_true",
                          help="keep only the best sample of each task")
    rollouts.add_argument("--min-reward", type=float, default=1.0, metavar="R",
                          help="keep rollouts with a reward of at least R (default 1)")


def _export_trajectories(args: argparse.Namespace, console: Console) -> int:
    from worldspec.rollout.export import select_rollouts, sft_rows
    from worldspec.rollout.records import RecordError, json_line, read_records

    if args.paths:
        console.error("give spec paths or --trajectories RUNS, not both")
        return EXIT_USAGE
    shaping = [flag for flag, given in (("--conversational", args.conversational),
                                        ("--policy", args.policy is not None),
                                        ("--system-prompt", args.system_prompt is not None))
               if given]
    if shaping:
        console.error(f"{', '.join(shaping)}: a trajectory keeps the prompt its rollout was "
                      "given; pass the option to `worldspec rollout` instead")
        return EXIT_USAGE
    problem = output_problem(args.out, folder=False) if args.out is not None else None
    if problem is not None:
        console.error(problem)
        return EXIT_USAGE
    try:
        records = list(read_records(args.trajectories))
    except RecordError as exc:
        console.error(str(exc))
        return EXIT_USAGE
    kept = select_rollouts(records, best_of=args.best_of, min_reward=args.min_reward)
    text = "".join(json_line(row) + "\n" for row in sft_rows(kept))
    if args.out:
        if not _written(args.out, text, console):
            return EXIT_USAGE
        console.line(f"wrote {len(kept)} of {len(records)} rollout(s) to {args.out}")
    else:
        console.write(text)
    return EXIT_OK


def _written(out: str, text: str, console: Console) -> bool:
    """Write ``text`` to ``-o OUT`` atomically; say why not (and return False) if it fails."""
    try:
        write_atomically(out, text)
    except FileRefusedError as exc:
        console.error(f"-o: {exc}")
        return False
    except OSError as exc:
        console.error("-o: " + cannot_write(out, exc))
        return False
    return True


def run_export(args: argparse.Namespace, console: Console) -> int:
    from worldspec.services.validation import check_paths

    if args.trajectories:
        return _export_trajectories(args, console)
    if not args.paths:
        console.error("nothing to export: give spec paths, or --trajectories RUNS")
        return EXIT_USAGE
    files = collect_spec_files(args.paths, console)
    if files is None:
        return EXIT_USAGE
    problem = output_problem(args.out, folder=False) if args.out is not None else None
    if problem is not None:
        console.error(problem)
        return EXIT_USAGE
    prompt = read_prompt_options(args, console)
    if prompt is None:
        return EXIT_USAGE
    validated = check_paths(files)
    if not validated.ok:
        report_errors(validated, console)
        console.error("not exported: the specs or their tasks have errors")
        return EXIT_PROBLEMS
    from worldspec.services.loading import load_result

    loaded = load_result(validated.result)
    rows: list[dict[str, Any]] = []
    for name in sorted(loaded.worlds):
        rows += task_rows(loaded.worlds[name], conversational=args.conversational,
                          policy=prompt.policy, template=prompt.template)
    if args.split is not None:
        splits = sorted({r["split"] for r in rows})
        if args.split not in splits:
            console.error(f"--split: no task is in split '{args.split}' (" +
                          (f"the splits are: {', '.join(splits)})" if splits else
                           "there are no tasks)"))
            for hint in did_you_mean(args.split, splits):
                console.line(f"  = hint: {hint}", to_err=True)
            return EXIT_USAGE
        rows = [r for r in rows if r["split"] == args.split]
    if not rows:
        console.error("nothing exported: the specs define no tasks")
        return EXIT_PROBLEMS
    text = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)
    if args.out is not None:
        if not _written(args.out, text, console):
            return EXIT_USAGE
        console.line(f"wrote {len(rows)} task(s) to {args.out}")
    else:
        console.write(text)
    return EXIT_OK
