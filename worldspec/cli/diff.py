"""``worldspec diff``: what a spec change means for agents, tasks and recorded trajectories."""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from pathlib import Path

from worldspec.cli.console import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, Console, collect_spec_files
from worldspec.compiler.loader import display_path
from worldspec.dsl.render import render_text as render_diagnostics
from worldspec.services.diff.compare import compare_models
from worldspec.services.diff.impact import analyse_impact
from worldspec.services.diff.model import DiffReport, Impact, Level
from worldspec.services.diff.render import RENDERERS
from worldspec.services.diff.sources import Side, SourceError, git_snapshot, load_side

__all__ = ["configure_diff", "run_diff"]

_FAIL_ON = {"breaking": Level.BREAKING, "dangerous": Level.DANGEROUS}


def configure_diff(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="OLD NEW: two .world files or folders; with --against, the "
                             "files and folders of the new side")
    parser.add_argument("--against", metavar="REV",
                        help="compare PATH... with the same paths at git revision REV "
                             "(a branch, tag or commit); nothing is checked out")
    parser.add_argument("--format", choices=tuple(RENDERERS), default="text",
                        help="'text' (default), 'json' (an object with 'changes' and "
                             "'impact'), 'markdown' (a pull-request comment) or 'github' "
                             "(workflow annotations at lines of the new files)")
    parser.add_argument("--fail-on", choices=tuple(_FAIL_ON), metavar="LEVEL",
                        help="exit with status 1 when a change is at LEVEL or worse "
                             "('breaking' or 'dangerous'; a task that no longer validates "
                             "counts as breaking, a trajectory that replays differently as "
                             "dangerous); without it the status is 0 whatever changed")
    parser.add_argument("--trajectories", metavar="PATH",
                        help="replay recorded trajectories on both sides: a rollout journal "
                             "(every record in it), a run folder of 'worldspec rollout', or "
                             "any <task>.jsonl / <task>.json file ('worldspec run --calls' "
                             "input; the task is the file name up to its first dot), or a "
                             "folder of such files")
    parser.add_argument("--no-impact", action="store_true",
                        help="only compare the specs; do not run tasks or trajectories")


def _report_errors(side: Side, which: str, console: Console) -> None:
    shown = side.shown_diagnostics(side.fatal)
    console.diagnostics.extend(d.to_json() for d in shown)
    console.write(render_diagnostics(shown, side.shown_sources(), False), to_err=True)
    console.error(f"cannot compare: the {which} side ({side.label}) has "
                  f"{len(shown)} error(s) outside its tasks")


def _sides(args: argparse.Namespace, console: Console, scratch: Path
           ) -> tuple[Side, Side] | None:
    """Both sides checked, or None after reporting a usage error."""
    if args.against is None:
        if len(args.paths) != 2:
            console.error("give two paths, OLD and NEW, or compare with a git revision: "
                          "worldspec diff --against REV PATH...")
            return None
        old_files = collect_spec_files(args.paths[:1], console)
        new_files = collect_spec_files(args.paths[1:], console)
        if old_files is None or new_files is None:
            return None
        return (load_side(old_files, args.paths[0]), load_side(new_files, args.paths[1]))
    new_files = collect_spec_files(args.paths, console)
    if new_files is None:
        return None
    try:
        roots = git_snapshot(args.against, args.paths, scratch)
    except SourceError as exc:
        console.error(str(exc))
        return None
    old = load_side(roots, f"{args.against}:{' '.join(args.paths)}",
                    shown_as=(display_path(scratch), f"{args.against}:"))
    return old, load_side(new_files, " ".join(args.paths))


def run_diff(args: argparse.Namespace, console: Console) -> int:
    trajectories = Path(args.trajectories) if args.trajectories else None
    if trajectories is not None and not (trajectories.is_dir() or trajectories.is_file()):
        console.error(f"--trajectories: '{args.trajectories}' does not exist (give a rollout "
                      "journal, a trajectory file or a folder of them)")
        return EXIT_USAGE
    with tempfile.TemporaryDirectory(prefix="worldspec-diff-") as scratch:
        sides = _sides(args, console, Path(scratch))
        if sides is None:
            return EXIT_USAGE
        old, new = sides
        if old.fatal or new.fatal:
            for side, which in ((old, "old"), (new, "new")):
                if side.fatal:
                    _report_errors(side, which, console)
            return EXIT_PROBLEMS
        changes = [replace(c, old_span=old.show_span(c.old_span))
                   for c in compare_models(old.result, new.result)]
        impact = Impact(ran=False) if args.no_impact else analyse_impact(old, new, trajectories)
        report = DiffReport(old.label, new.label, changes, impact)
        console.write(RENDERERS[args.format](report))
    if args.fail_on is not None and report.worst() >= _FAIL_ON[args.fail_on].rank:
        return EXIT_PROBLEMS
    return EXIT_OK
