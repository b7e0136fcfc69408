"""``worldspec check``: check spec files (the compiler, then every task run) and report."""

from __future__ import annotations

import argparse

from worldspec.cli.console import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    Console,
    add_colour_option,
    add_paths_argument,
    collect_spec_files,
    plural,
    wants_colour,
)
from worldspec.dsl.diagnostics import Severity
from worldspec.dsl.render import render_github, render_json, render_text
from worldspec.services.validation import check_paths

__all__ = ["configure_check", "run_check"]


def configure_check(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser)
    parser.add_argument("--format", choices=("text", "json", "github"), default="text",
                        help="'text' (default) for people, 'json' for programs (only a JSON "
                             "array on stdout), 'github' for GitHub Actions annotations")
    add_colour_option(parser)
    parser.add_argument("--warnings-as-errors", action="store_true",
                        help="exit with status 1 when there are warnings, not only errors")


def run_check(args: argparse.Namespace, console: Console) -> int:
    files = collect_spec_files(args.paths, console)
    if files is None:
        return EXIT_USAGE
    result = check_paths(files)  # the compiler's check, then the tasks are run
    diagnostics = result.diagnostics
    if args.format == "json":
        console.line(render_json(diagnostics))
    elif args.format == "github":
        console.write(render_github(diagnostics))
    elif diagnostics:
        sources = {path: f.text for path, f in result.program.files.items()}
        console.write(render_text(diagnostics, sources, wants_colour(args.color, console.out)))
    else:
        console.line(f"checked {plural(len(result.program.files), 'file')}: no problems")
    failing = {Severity.ERROR, Severity.WARNING} if args.warnings_as_errors else {Severity.ERROR}
    return EXIT_PROBLEMS if any(d.severity in failing for d in diagnostics) else EXIT_OK
