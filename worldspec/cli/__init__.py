"""The command line: one module per subcommand, thin over the services below.

The entry point is :func:`entry_point` here (the ``worldspec`` console script
and ``python -m worldspec``; :func:`worldspec.cli.main.main` is the same without
the import guard). It imports :mod:`worldspec.cli.main` only once it is inside its
``KeyboardInterrupt`` handler, so Ctrl-C is one line and status 130 at any moment,
the imports included. :mod:`worldspec.cli.main` holds the table of commands and
imports a command's module only when that command is chosen: ``--version`` and
``--help`` load no command, and ``serve`` of a generated package no compiler.
:mod:`worldspec.cli.console` holds what every subcommand shares (exit statuses,
the console, spec paths). This module imports only the standard library. Once the command
is over, Ctrl-C exits at once with status 130 (no traceback from the interpreter's shutdown).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType
from typing import Any, TextIO

__all__ = ["EXIT_INTERRUPTED", "entry_point", "error_document", "report_interrupted",
           "wants_json"]

#: the status of a run stopped by Ctrl-C (128 + SIGINT, as shells report it)
EXIT_INTERRUPTED = 130


def wants_json(arguments: Sequence[str]) -> bool:
    """True when the command line asks for ``--format json`` (before ``--``).

    Read from the raw arguments, because a usage error stops argparse before it
    says what the format is. Unique prefixes count, as argparse accepts them.
    """
    chosen = ""
    for index, argument in enumerate(arguments):
        if argument == "--":
            break
        name, equals, value = argument.partition("=")
        if len(name) > 3 and "--format".startswith(name):
            if not equals:
                value = arguments[index + 1] if index + 1 < len(arguments) else ""
            chosen = value
    return chosen == "json"


def error_document(code: str, message: str, status: int,
                   diagnostics: Sequence[dict[str, Any]] = ()) -> str:
    """The JSON document ``--format json`` prints when a command stops with an error.

    ``code`` says what kind of stop it was (``usage``, ``problems``, ``internal``,
    ``interrupted``); ``diagnostics`` are the spec's, when they are the reason.
    """
    return json.dumps({"error": {"code": code, "message": message, "exit_status": status,
                                 "diagnostics": list(diagnostics)}},
                      ensure_ascii=False, indent=2)


def report_interrupted(arguments: Sequence[str], out: TextIO, err: TextIO) -> int:
    """Say, in one line, that Ctrl-C stopped the command; the JSON document too if asked."""
    try:
        err.write("worldspec: interrupted\n")
        if wants_json(arguments):
            out.write(error_document("interrupted", "interrupted (Ctrl-C)",
                                     EXIT_INTERRUPTED) + "\n")
        out.flush()
        err.flush()
    except (OSError, ValueError):
        pass
    return EXIT_INTERRUPTED


def _exit_interrupted(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C once the command is over: leave at once, quietly, with status 130."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(EXIT_INTERRUPTED)


def _quiet_exit_on_interrupt() -> None:
    """From now on Ctrl-C ends the process without a ``KeyboardInterrupt``: the interpreter's
    shutdown (joining library threads, flushing) would otherwise print ``Exception ignored
    in: <module 'threading'>`` and a traceback. Retried if a Ctrl-C lands while it is set."""
    while True:
        try:
            signal.signal(signal.SIGINT, _exit_interrupted)
            return
        except KeyboardInterrupt:
            continue
        except ValueError:  # not the main thread: the caller owns the signals
            return


def entry_point(argv: Sequence[str] | None = None) -> int:
    """Run ``worldspec`` with ``argv`` (default ``sys.argv[1:]``); return the exit status.

    Without ``argv`` it runs as the program: once the command is over, Ctrl-C exits at once
    (status 130) instead of interrupting the interpreter's shutdown."""
    arguments = list(argv) if argv is not None else sys.argv[1:]
    try:
        try:
            from worldspec.cli.main import main as run_command

            return run_command(arguments)
        except KeyboardInterrupt:
            return report_interrupted(arguments, sys.stdout, sys.stderr)
    except KeyboardInterrupt:  # a second Ctrl-C while the first was being reported
        return EXIT_INTERRUPTED
    finally:
        if argv is None:  # the program itself (console script, ``python -m``), not a caller
            try:
                _quiet_exit_on_interrupt()
            except KeyboardInterrupt:  # it landed on the call itself, before the handler was set
                _quiet_exit_on_interrupt()
