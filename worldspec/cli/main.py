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
import os
import sys
from collections.abc import Callable, Collection, Sequence
from typing import NoReturn, cast

from worldspec import __version__
from worldspec.cli import EXIT_INTERRUPTED, error_document, report_interrupted, wants_json
from worldspec.cli.console import (
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    ISSUES_HINT,
    Console,
    LazySubcommand,
    Subcommand,
)

__all__ = ["EXIT_OK", "EXIT_PROBLEMS", "EXIT_USAGE", "EXIT_INTERNAL", "LazySubcommand",
           "Subcommand", "SUBCOMMANDS", "UsageError", "build_parser", "chosen_command", "main"]


# ------------------------------------------------------------------- port
# ------------------------------------------------------------------- table
#: Every subcommand, in the order ``--help`` lists them. Add a row to add one: its help texts
#: and where its code is (imported only when the command is chosen, so ``worldspec --help``
#: and ``--version`` import none of them; a :class:`Subcommand` row is imported with this table).
SUBCOMMANDS: dict[str, Subcommand | LazySubcommand] = {
    "check": LazySubcommand(
        summary="check spec files for errors",
        description="Parse and type-check .world files and report every problem found. "
                    "Exit status: 0 no errors, 1 errors found, 2 bad arguments or a "
                    "missing path.",
        module="worldspec.cli.check", configure="configure_check", run="run_check",
    ),
    "fmt": LazySubcommand(
        summary="format spec files in place",
        description="Rewrite .world files in the canonical layout (only files that change "
                    "are written). Files with syntax errors are left alone and their errors "
                    "reported. Exit status: 0 done, 1 a file could not be formatted or "
                    "--check found files to change, 2 bad arguments or a missing path.",
        module="worldspec.cli.fmt", configure="configure_fmt", run="run_fmt",
    ),
    "build": LazySubcommand(
        summary="compile worlds to Python packages",
        description="Check .world files and generate one Python package per world under "
                    "OUT (default: generated). With --check, write nothing and exit 1 if "
                    "OUT is out of date. Exit status: 0 done, 1 spec errors or stale "
                    "output, 2 bad arguments.",
        module="worldspec.cli.build", configure="configure_build", run="run_build",
    ),
    "run": LazySubcommand(
        summary="run a task: its reference solution or recorded calls",
        description="Compile the spec, start an episode of the task, replay its reference "
                    "solution (--solution) or a JSONL file of calls (--calls), print each "
                    "call, its result and the state diff, then the score and whether the task "
                    "is solved: every check passes and the frame holds. Exit status: 0 the "
                    "run completed and the task is solved, 1 it is not solved (a check "
                    "fails or the frame is violated) or the specs have errors, 2 bad "
                    "arguments.",
        module="worldspec.cli.build", configure="configure_run", run="run_run",
    ),
    "test": LazySubcommand(
        summary="explore worlds with random tool calls and report what breaks",
        description="Compile the worlds and drive each with seeded random call sequences "
                    "from its task data and from an empty state, checking after every call "
                    "that failed calls change nothing, read-only tools change nothing, "
                    "invariants hold, schemas and the dispatcher agree, results match their "
                    "types and replays are deterministic. Each problem is shrunk to the "
                    "shortest call sequence and saved for 'worldspec run --calls'. Exit "
                    "status: 0 nothing found, 1 problems or spec errors, 2 bad arguments.",
        module="worldspec.cli.test", configure="configure_test", run="run_test",
    ),
    "tasks": LazySubcommand(
        summary="list tasks with their validation status",
        description="Check the specs, run every task's reference solution, and list each "
                    "task as valid, invalid (with its problems) or not validated (the specs "
                    "have errors outside tasks, and which). --format json prints an array "
                    "with one object per task: world, task, file, line, status, valid, "
                    "reason, problems. "
                    "Exit status: 0 every task valid, 1 problems, 2 bad arguments.",
        module="worldspec.cli.tasks", configure="configure_tasks", run="run_tasks",
    ),
    "export": LazySubcommand(
        summary="export tasks as a training dataset (JSONL)",
        description="Write one JSON object per task: prompt (system and user messages), "
                    "tools (OpenAI definitions as JSON text), world, task_id, split, and what "
                    "is needed to rebuild the episode and score it. Only valid tasks are "
                    "exported. Exit status: 0 written, 1 spec or task errors, 2 bad arguments.",
        module="worldspec.cli.tasks", configure="configure_export", run="run_export",
    ),
    "diff": LazySubcommand(
        summary="compare two versions of a spec: what changed for agents, tasks and data",
        description="Compare OLD and NEW (files or folders), or PATH... with a git revision "
                    "(--against REV), as checked models: each change is classified breaking, "
                    "dangerous, safe or info, then the tasks and recorded trajectories of "
                    "both sides are run to show what the change affects. Exit status: 0 "
                    "done, 1 changes at or above --fail-on or spec errors, 2 bad arguments.",
        module="worldspec.cli.diff", configure="configure_diff", run="run_diff",
    ),
    "rollout": LazySubcommand(
        summary="put an agent (a model) in worlds: trajectories and rewards",
        description="Run each selected task N times with a model behind any OpenAI-compatible "
                    "endpoint (Chat Completions or Responses), one-shot or with a simulated "
                    "user (--conversational). Every rollout is journaled as one JSONL record "
                    "(messages, tools, results, state diffs, reward and checks); an "
                    "interrupted batch resumes. See docs/rollouts.md. Exit status: 0 every "
                    "rollout finished, 1 some failed or spec errors, 2 bad arguments.",
        module="worldspec.cli.rollout", configure="configure_rollout", run="run_rollout_command",
    ),
    "view": LazySubcommand(
        summary="an HTML report of rollout records",
        description="Write one self-contained HTML page for a runs folder: per task the "
                    "reward distribution, per rollout the conversation with tool calls, "
                    "results, state diffs and check verdicts. Exit status: 0 written, 2 no "
                    "records or bad arguments.",
        module="worldspec.cli.rollout", configure="configure_view", run="run_view",
    ),
    "synth": LazySubcommand(
        summary="write worlds and tasks with an LLM, the compiler in the loop",
        description="Ask an OpenAI-compatible model for .world specs (synth world) or tasks "
                    "(synth tasks); the compiler's diagnostics, the property tests and task "
                    "validation drive repair, and only what passes is written. See docs/llm.md.",
        module="worldspec.cli.synth", configure="configure_synth", run="run_synth",
    ),
    "port": LazySubcommand(
        summary="turn a Python environment class into a checked world, proven equal",
        description="Read a Python class (never running it) and write a spec skeleton; an "
                    "LLM translates the methods with the compiler in the loop; then the "
                    "original, sandboxed, and the world are driven with the same random call "
                    "sequences, and each difference goes back to the model until N sequences "
                    "agree. --skeleton-only writes the skeleton without a model; --batch DIR "
                    "ports a folder of classes, resumably. See docs/port.md. Exit status: 0 "
                    "every class ported, 1 some rejected or failed, 2 bad arguments.",
        module="worldspec.cli.port", configure="configure_port", run="run_port",
    ),
    "compare": LazySubcommand(
        summary="differential test: a Python class against a world, call for call",
        description="Run the original class in a sandbox (no network, time and memory "
                    "limits) and the world side by side with the same random call sequences; "
                    "compare results and public state after every call, and report each "
                    "difference shrunk to its shortest sequence. See docs/port.md. Exit "
                    "status: 0 they agree, 1 they differ or the world has errors, 2 bad "
                    "arguments.",
        module="worldspec.cli.compare", configure="configure_compare", run="run_compare",
    ),
    "serve": LazySubcommand(
        summary="serve a world over MCP (stdio or streamable HTTP)",
        description="Run an MCP server for a world: its tools as MCP tools (results in the "
                    "world's convention, failures as tool errors), one episode per session, and "
                    "resources for the harness (episode, score, state, tasks, reset). See "
                    "docs/serving.md. Exit status: 0 stopped, 1 spec errors, 2 bad arguments.",
        module="worldspec.cli.serve", configure="configure_serve", run="run_serve",
    ),
    "lsp": LazySubcommand(
        summary="the language server for editors (LSP over stdio)",
        description="Run the WorldSpec language server on stdin/stdout: diagnostics as you type, "
                    "hover, go to definition, references, rename, completion, outline, formatting "
                    "and quick fixes. Point any LSP client at 'worldspec lsp'; the VS Code "
                    "extension in editors/vscode does. See docs/editor.md. Exit status: 0 the "
                    "client closed the connection, 2 bad arguments or pygls missing.",
        module="worldspec.cli.lsp", configure="configure_lsp", run="run_lsp",
    ),
    "explain": LazySubcommand(
        summary="explain a diagnostic code",
        description="Print what a diagnostic code means, with an example. "
                    "Exit status: 0 known code, 2 unknown code.",
        module="worldspec.cli.explain", configure="configure_explain", run="run_explain",
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


def chosen_command(arguments: Sequence[str]) -> str | None:
    """The command a command line names: its first argument that is not an option.

    ``worldspec`` itself takes no option with a value (``--version``, ``--help``), so
    that is the command argparse will pick; it is None when there is none.
    """
    for index, argument in enumerate(arguments):
        if argument == "--":
            return arguments[index + 1] if index + 1 < len(arguments) else None
        if not argument.startswith("-"):
            return argument
    return None


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser for ``worldspec`` and every row of :data:`SUBCOMMANDS`.

    Every command is listed (with its one-line help), but only those in ``commands``
    (default: all) get their options, which imports their code; :func:`main` passes the
    one the command line chose.
    """
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
    sub_parsers = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name, row in SUBCOMMANDS.items():
        sub_parser = sub_parsers.add_parser(name, help=row.summary, description=row.description)
        if commands is None or name in commands:
            sub = row.load()
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
    chosen = chosen_command(arguments)
    parser = build_parser(() if chosen is None else (chosen,))
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
            console.line(f"  = note: {ISSUES_HINT}", to_err=True)
    if status != EXIT_OK and not console.wrote_out and wants_json(arguments):
        message = "; ".join(console.errors) or f"the command failed (exit status {status})"
        with contextlib.suppress(Exception):
            console.line(error_document(_ERROR_CODES.get(status, "problems"), message, status,
                                        console.diagnostics))
    return status


if __name__ == "__main__":
    sys.exit(main())
