"""``worldspec fmt``: rewrite spec files in the canonical layout, or show what would change."""

from __future__ import annotations

import argparse
import difflib
import importlib
from collections.abc import Callable
from typing import cast

from worldspec.cli.console import (
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    ISSUES_HINT,
    Console,
    add_colour_option,
    add_paths_argument,
    cannot_write,
    collect_spec_files,
    plural,
    wants_colour,
)
from worldspec.compiler.loader import display_path, read_text
from worldspec.dsl.diagnostics import Diagnostic, DiagnosticSink
from worldspec.dsl.parser import parse_module
from worldspec.dsl.render import render_text
from worldspec.services.files import write_atomically

__all__ = ["configure_fmt", "run_fmt"]

FormatSource = Callable[[str, str], str | None]


def _load_formatter() -> FormatSource:
    """``dsl.formatter.format_source``, imported only when ``fmt`` runs.

    The import is late so that the rest of the command line keeps working
    even if the formatter module is broken or missing.
    """
    module = importlib.import_module("worldspec.dsl.formatter")
    return cast(FormatSource, module.format_source)


def configure_fmt(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; list the files that would be reformatted and "
                             "exit with status 1 if there are any")
    parser.add_argument("--diff", action="store_true",
                        help="change nothing; print a unified diff of what would change")
    add_colour_option(parser)


def _unified_diff(before: str, after: str, shown: str) -> str:
    """A ``diff -u`` style patch, marking a missing final newline as ``diff`` does."""
    def lines(text: str) -> list[str]:
        out = text.splitlines(keepends=True)
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    return "".join(difflib.unified_diff(lines(before), lines(after),
                                        fromfile=f"a/{shown}", tofile=f"b/{shown}"))


def _syntax_diagnostics(text: str, shown: str) -> list[Diagnostic]:
    """The syntax errors of one file, for when the formatter refuses it."""
    sink = DiagnosticSink()
    parse_module(text, shown, sink)
    return sink.sorted()


def run_fmt(args: argparse.Namespace, console: Console) -> int:
    files = collect_spec_files(args.paths, console)
    if files is None:
        return EXIT_USAGE
    try:
        format_source = _load_formatter()
    except ImportError as exc:
        console.error(f"the formatter is not available ({exc}); {ISSUES_HINT}")
        return EXIT_INTERNAL
    colour = wants_colour(args.color, console.err)
    write = not (args.check or args.diff)
    changed: list[str] = []
    unchanged = 0
    failed = 0
    for path in files:
        shown = display_path(path)
        sink = DiagnosticSink()
        text = read_text(path, shown, sink)
        if text is None:
            console.write(render_text(sink.sorted(), {}, colour), to_err=True)
            failed += 1
            continue
        formatted = format_source(text, shown)
        if formatted is None:
            problems = _syntax_diagnostics(text, shown)
            if problems:
                console.write(render_text(problems, {shown: text}, colour), to_err=True)
            console.line(f"not formatted: '{shown}' has syntax errors", to_err=True)
            failed += 1
            continue
        if formatted == text:
            unchanged += 1
            continue
        changed.append(shown)
        if args.diff:
            console.write(_unified_diff(text, formatted, shown))
        if args.check:
            console.line(f"would reformat {shown}", to_err=args.diff)
        if write:
            try:
                write_atomically(path, formatted)
            except OSError as exc:
                console.error(cannot_write(shown, exc))
                changed.pop()
                failed += 1
                continue
            console.line(f"reformatted {shown}")
    verb = "reformatted" if write else "would be reformatted"
    parts = [f"{plural(len(changed), 'file')} {verb}", f"{unchanged} unchanged"]
    if failed:
        parts.append(f"{failed} could not be formatted")
    console.line(", ".join(parts), to_err=args.diff)
    if failed or (args.check and changed):
        return EXIT_PROBLEMS
    return EXIT_OK
