"""The ``worldspec`` command line.

Subcommands are rows of :data:`SUBCOMMANDS` (name -> how to configure its
argument parser, and how to run it), so adding ``build`` or ``run`` later is
adding a row, not another branch.

Exit status, the same for every command:

- ``0`` nothing wrong;
- ``1`` the input has problems (errors found, or ``fmt --check`` would change files);
- ``2`` the command line is wrong, or a path does not exist;
- ``3`` an internal error: a bug in worldspec, never the user's fault;
- ``130`` interrupted by Ctrl-C (one line, at any moment, no traceback).

With ``--format json``, stdout is always one JSON document: the command's own,
or, when it stops before printing it, ``{"error": {"code", "message",
"exit_status", "diagnostics"}}``.

No input, however broken, may produce a Python traceback: :func:`main` turns
anything unexpected into a one-line ``internal error`` and status 3.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO, cast

from worldspec import __version__
from worldspec.cli import EXIT_INTERRUPTED, error_document, report_interrupted, wants_json
from worldspec.cli.build import configure_build, configure_run, run_build, run_run
from worldspec.cli.console import (
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    Console,
    Subcommand,
    add_paths_argument,
    collect_spec_files,
)
from worldspec.cli.diff import configure_diff, run_diff
from worldspec.cli.rollout import (
    configure_rollout,
    configure_view,
    run_rollout_command,
    run_view,
)
from worldspec.cli.serve import DESCRIPTION as SERVE_DESCRIPTION
from worldspec.cli.serve import SUMMARY as SERVE_SUMMARY
from worldspec.cli.serve import configure_serve, run_serve
from worldspec.cli.synth import configure_synth, run_synth
from worldspec.cli.tasks import configure_export, configure_tasks, run_export, run_tasks
from worldspec.cli.test import configure_test, run_test
from worldspec.compiler.loader import display_path, read_text
from worldspec.dsl.catalog import CATALOG
from worldspec.dsl.diagnostics import Diagnostic, DiagnosticSink, Severity, did_you_mean
from worldspec.dsl.parser import parse_module
from worldspec.dsl.render import render_explanation, render_github, render_json, render_text
from worldspec.services.files import write_atomically
from worldspec.services.validation import check_paths

__all__ = ["EXIT_OK", "EXIT_PROBLEMS", "EXIT_USAGE", "EXIT_INTERNAL", "Subcommand",
           "SUBCOMMANDS", "UsageError", "build_parser", "main"]

_ISSUES_HINT = "this is a bug in worldspec; please report it together with the input that caused it"


def _wants_colour(choice: str, stream: TextIO) -> bool:
    """Colour for ``--color``: ``auto`` means a terminal, without ``NO_COLOR``, not ``dumb``."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _add_colour_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto",
        help="colour the diagnostics: 'auto' (default) when writing to a terminal and "
             "NO_COLOR is not set, 'always', or 'never'",
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


# ------------------------------------------------------------------- check
def _configure_check(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser)
    parser.add_argument("--format", choices=("text", "json", "github"), default="text",
                        help="'text' (default) for people, 'json' for programs (only a JSON "
                             "array on stdout), 'github' for GitHub Actions annotations")
    _add_colour_option(parser)
    parser.add_argument("--warnings-as-errors", action="store_true",
                        help="exit with status 1 when there are warnings, not only errors")


def _run_check(args: argparse.Namespace, console: Console) -> int:
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
        console.write(render_text(diagnostics, sources, _wants_colour(args.color, console.out)))
    else:
        console.line(f"checked {_plural(len(result.program.files), 'file')}: no problems")
    failing = {Severity.ERROR, Severity.WARNING} if args.warnings_as_errors else {Severity.ERROR}
    return EXIT_PROBLEMS if any(d.severity in failing for d in diagnostics) else EXIT_OK


# --------------------------------------------------------------------- fmt
FormatSource = Callable[[str, str], str | None]


def _load_formatter() -> FormatSource:
    """``dsl.formatter.format_source``, imported only when ``fmt`` runs.

    The import is late so that the rest of the command line keeps working
    even if the formatter module is broken or missing.
    """
    module = importlib.import_module("worldspec.dsl.formatter")
    return cast(FormatSource, module.format_source)


def _configure_fmt(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; list the files that would be reformatted and "
                             "exit with status 1 if there are any")
    parser.add_argument("--diff", action="store_true",
                        help="change nothing; print a unified diff of what would change")
    _add_colour_option(parser)


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


def _run_fmt(args: argparse.Namespace, console: Console) -> int:
    files = collect_spec_files(args.paths, console)
    if files is None:
        return EXIT_USAGE
    try:
        format_source = _load_formatter()
    except ImportError as exc:
        console.error(f"the formatter is not available ({exc}); {_ISSUES_HINT}")
        return EXIT_INTERNAL
    colour = _wants_colour(args.color, console.err)
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
                console.error(f"cannot write '{shown}': {exc.strerror or exc}")
                changed.pop()
                failed += 1
                continue
            console.line(f"reformatted {shown}")
    verb = "reformatted" if write else "would be reformatted"
    parts = [f"{_plural(len(changed), 'file')} {verb}", f"{unchanged} unchanged"]
    if failed:
        parts.append(f"{failed} could not be formatted")
    console.line(", ".join(parts), to_err=args.diff)
    if failed or (args.check and changed):
        return EXIT_PROBLEMS
    return EXIT_OK


# ----------------------------------------------------------------- explain
def _configure_explain(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code", metavar="CODE",
                        help="a diagnostic code such as WS201 (case does not matter; "
                             "'201' means WS201)")


def _normalize_code(raw: str) -> str:
    code = raw.strip().upper()
    return f"WS{code}" if code.isdigit() else code


def _suggest_codes(code: str) -> list[str]:
    """Did-you-mean hints for an unknown code, trying letters typed for digits first."""
    repaired = code[:2] + code[2:].translate(str.maketrans("OIL", "011"))
    if repaired != code and repaired in CATALOG:
        return [f"did you mean '{repaired}'?"]
    return did_you_mean(code, CATALOG)


def _run_explain(args: argparse.Namespace, console: Console) -> int:
    code = _normalize_code(args.code)
    entry = CATALOG.get(code)
    if entry is None:
        console.error(f"unknown diagnostic code '{args.code}'")
        for hint in _suggest_codes(code):
            console.line(f"  = hint: {hint}", to_err=True)
        console.line("  = hint: the codes are listed in docs/diagnostics.md", to_err=True)
        return EXIT_USAGE
    console.write(render_explanation(entry))
    return EXIT_OK


# ------------------------------------------------------------------- port
def _lazy(module: str, name: str) -> Callable[..., Any]:
    """``module.name``, imported when the command runs (or configures its parser)."""
    def call(*args: object) -> Any:
        return getattr(importlib.import_module(module), name)(*args)

    return call


# ------------------------------------------------------------------- table
#: Every subcommand, in the order ``--help`` lists them. Add a row to add one.
SUBCOMMANDS: dict[str, Subcommand] = {
    "check": Subcommand(
        summary="check spec files for errors",
        description="Parse and type-check .world files and report every problem found. "
                    "Exit status: 0 no errors, 1 errors found, 2 bad arguments or a "
                    "missing path.",
        configure=_configure_check,
        run=_run_check,
    ),
    "fmt": Subcommand(
        summary="format spec files in place",
        description="Rewrite .world files in the canonical layout (only files that change "
                    "are written). Files with syntax errors are left alone and their errors "
                    "reported. Exit status: 0 done, 1 a file could not be formatted or "
                    "--check found files to change, 2 bad arguments or a missing path.",
        configure=_configure_fmt,
        run=_run_fmt,
    ),
    "build": Subcommand(
        summary="compile worlds to Python packages",
        description="Check .world files and generate one Python package per world under "
                    "OUT (default: generated). With --check, write nothing and exit 1 if "
                    "OUT is out of date. Exit status: 0 done, 1 spec errors or stale "
                    "output, 2 bad arguments.",
        configure=configure_build,
        run=run_build,
    ),
    "run": Subcommand(
        summary="run a task: its reference solution or recorded calls",
        description="Compile the spec, start an episode of the task, replay its reference "
                    "solution (--solution) or a JSONL file of calls (--calls), print each "
                    "call, its result and the state diff, then the score and whether the task "
                    "is solved: every check passes and the frame holds. Exit status: 0 the "
                    "run completed and the task is solved, 1 it is not solved (a check "
                    "fails or the frame is violated) or the specs have errors, 2 bad "
                    "arguments.",
        configure=configure_run,
        run=run_run,
    ),
    "test": Subcommand(
        summary="explore worlds with random tool calls and report what breaks",
        description="Compile the worlds and drive each with seeded random call sequences "
                    "from its task data and from an empty state, checking after every call "
                    "that failed calls change nothing, read-only tools change nothing, "
                    "invariants hold, schemas and the dispatcher agree, results match their "
                    "types and replays are deterministic. Each problem is shrunk to the "
                    "shortest call sequence and saved for 'worldspec run --calls'. Exit "
                    "status: 0 nothing found, 1 problems or spec errors, 2 bad arguments.",
        configure=configure_test,
        run=run_test,
    ),
    "tasks": Subcommand(
        summary="list tasks with their validation status",
        description="Check the specs, run every task's reference solution, and list each "
                    "task as valid, invalid (with its problems) or not validated (the specs "
                    "have errors outside tasks, and which). --format json prints an array "
                    "with one object per task: world, task, file, line, status, valid, "
                    "reason, problems. "
                    "Exit status: 0 every task valid, 1 problems, 2 bad arguments.",
        configure=configure_tasks,
        run=run_tasks,
    ),
    "export": Subcommand(
        summary="export tasks as a training dataset (JSONL)",
        description="Write one JSON object per task: prompt (system and user messages), "
                    "tools (OpenAI definitions as JSON text), world, task_id, split, and what "
                    "is needed to rebuild the episode and score it. Only valid tasks are "
                    "exported. Exit status: 0 written, 1 spec or task errors, 2 bad arguments.",
        configure=configure_export,
        run=run_export,
    ),
    "diff": Subcommand(
        summary="compare two versions of a spec: what changed for agents, tasks and data",
        description="Compare OLD and NEW (files or folders), or PATH... with a git revision "
                    "(--against REV), as checked models: each change is classified breaking, "
                    "dangerous, safe or info, then the tasks and recorded trajectories of "
                    "both sides are run to show what the change affects. Exit status: 0 "
                    "done, 1 changes at or above --fail-on or spec errors, 2 bad arguments.",
        configure=configure_diff,
        run=run_diff,
    ),
    "rollout": Subcommand(
        summary="put an agent (a model) in worlds: trajectories and rewards",
        description="Run each selected task N times with a model behind any OpenAI-compatible "
                    "endpoint (Chat Completions or Responses), one-shot or with a simulated "
                    "user (--conversational). Every rollout is journaled as one JSONL record "
                    "(messages, tools, results, state diffs, reward and checks); an "
                    "interrupted batch resumes. See docs/rollouts.md. Exit status: 0 every "
                    "rollout finished, 1 some failed or spec errors, 2 bad arguments.",
        configure=configure_rollout,
        run=run_rollout_command,
    ),
    "view": Subcommand(
        summary="an HTML report of rollout records",
        description="Write one self-contained HTML page for a runs folder: per task the "
                    "reward distribution, per rollout the conversation with tool calls, "
                    "results, state diffs and check verdicts. Exit status: 0 written, 2 no "
                    "records or bad arguments.",
        configure=configure_view,
        run=run_view,
    ),
    "synth": Subcommand(
        summary="write worlds and tasks with an LLM, the compiler in the loop",
        description="Ask an OpenAI-compatible model for .world specs (synth world) or tasks "
                    "(synth tasks); the compiler's diagnostics, the property tests and task "
                    "validation drive repair, and only what passes is written. See docs/llm.md.",
        configure=configure_synth,
        run=run_synth,
    ),
    "port": Subcommand(
        summary="turn a Python environment class into a checked world, proven equal",
        description="Read a Python class (never running it) and write a spec skeleton; an "
                    "LLM translates the methods with the compiler in the loop; then the "
                    "original, sandboxed, and the world are driven with the same random call "
                    "sequences, and each difference goes back to the model until N sequences "
                    "agree. --skeleton-only writes the skeleton without a model; --batch DIR "
                    "ports a folder of classes, resumably. See docs/port.md. Exit status: 0 "
                    "every class ported, 1 some rejected or failed, 2 bad arguments.",
        configure=_lazy("worldspec.cli.port", "configure_port"),
        run=_lazy("worldspec.cli.port", "run_port"),
    ),
    "compare": Subcommand(
        summary="differential test: a Python class against a world, call for call",
        description="Run the original class in a sandbox (no network, time and memory "
                    "limits) and the world side by side with the same random call sequences; "
                    "compare results and public state after every call, and report each "
                    "difference shrunk to its shortest sequence. See docs/port.md. Exit "
                    "status: 0 they agree, 1 they differ or the world has errors, 2 bad "
                    "arguments.",
        configure=_lazy("worldspec.cli.compare", "configure_compare"),
        run=_lazy("worldspec.cli.compare", "run_compare"),
    ),
    "serve": Subcommand(
        summary=SERVE_SUMMARY,
        description=SERVE_DESCRIPTION,
        configure=configure_serve,
        run=run_serve,
    ),
    "explain": Subcommand(
        summary="explain a diagnostic code",
        description="Print what a diagnostic code means, with an example. "
                    "Exit status: 0 known code, 2 unknown code.",
        configure=_configure_explain,
        run=_run_explain,
    ),
}


class UsageError(SystemExit):
    """A command line argparse rejects: status 2, with argparse's message kept for JSON."""

    def __init__(self, prog: str, usage: str, message: str) -> None:
        super().__init__(EXIT_USAGE)
        self.prog = prog
        self.usage = usage
        self.message = message


class _ArgumentParser(argparse.ArgumentParser):
    """argparse, except that a usage error is raised (:class:`UsageError`), not printed.

    :func:`main` prints it, as argparse would, and also as a JSON document when
    ``--format json`` was asked for. Sub-parsers inherit the class.
    """

    def error(self, message: str) -> NoReturn:
        raise UsageError(self.prog, self.format_usage(), message)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for ``worldspec`` and every row of :data:`SUBCOMMANDS`."""
    parser = _ArgumentParser(
        prog="worldspec",
        description="WorldSpec: a typed language and compiler for LLM-agent tool environments.",
        epilog="Run 'worldspec COMMAND --help' for the options of a command. Exit status: "
               "0 ok, 1 problems found, 2 usage error, 3 internal error, 130 interrupted. "
               "With --format json, stdout is always one JSON document (an object with "
               "'error' when the command stopped before its result).",
    )
    parser.add_argument("--version", action="version", version=f"worldspec {__version__}",
                        help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name, sub in SUBCOMMANDS.items():
        sub_parser = commands.add_parser(name, help=sub.summary, description=sub.description)
        sub.configure(sub_parser)
        sub_parser.set_defaults(run=sub.run)
    return parser


def _exit_status(exc: SystemExit) -> int:
    """argparse leaves through ``SystemExit``; turn its payload into a status."""
    if exc.code is None:
        return EXIT_OK
    if isinstance(exc.code, int):
        return exc.code
    return EXIT_USAGE


#: the ``code`` of the JSON error document, by exit status
_ERROR_CODES = {EXIT_PROBLEMS: "problems", EXIT_USAGE: "usage", EXIT_INTERNAL: "internal",
                EXIT_INTERRUPTED: "interrupted"}


def _run_command(arguments: list[str], console: Console) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(arguments)
    except UsageError as exc:
        console.errors.append(exc.message)
        console.write(exc.usage, to_err=True)
        console.line(f"{exc.prog}: error: {exc.message}", to_err=True)
        return EXIT_USAGE
    except SystemExit as exc:
        return _exit_status(exc)
    run = cast("Callable[[argparse.Namespace, Console], int] | None",
               getattr(args, "run", None))
    if run is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return run(args, console)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    arguments = list(argv) if argv is not None else sys.argv[1:]
    console = Console(sys.stdout, sys.stderr)
    try:
        status = _run_command(arguments, console)
    except KeyboardInterrupt:
        return report_interrupted(arguments, console.out, console.err)
    except BrokenPipeError:
        # The reader went away (``worldspec test . | head -1``): it has what it wanted, so
        # this is no failure (as ``rg``, ``git log`` do). Point stdout at /dev/null so the
        # interpreter's final flush does not fail again.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:
        status = EXIT_INTERNAL
        with contextlib.suppress(Exception):
            console.errors.append(f"internal error: {type(exc).__name__}: {exc}")
            console.line(f"worldspec: internal error: {type(exc).__name__}: {exc}", to_err=True)
            console.line(f"  = note: {_ISSUES_HINT}", to_err=True)
    if status != EXIT_OK and not console.wrote_out and wants_json(arguments):
        message = "; ".join(console.errors) or f"the command failed (exit status {status})"
        with contextlib.suppress(Exception):
            console.line(error_document(_ERROR_CODES.get(status, "problems"), message, status,
                                        console.diagnostics))
    return status


if __name__ == "__main__":
    sys.exit(main())
