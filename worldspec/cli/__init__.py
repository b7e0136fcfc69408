"""The command line: one module per subcommand, thin over the services below.

The entry point is :func:`entry_point` here (the ``worldspec`` console script
and ``python -m worldspec``; :func:`worldspec.cli.main.main` is the same without
the import guard). It imports :mod:`worldspec.cli.main` only once it is inside its
``KeyboardInterrupt`` handler, so Ctrl-C is one line and status 130 at any moment,
the imports included. :mod:`worldspec.cli.main` holds the table of commands and
imports a command's module only when that command is chosen: ``--version`` and
``--help`` load no command, and ``serve`` of a generated package no compiler.
:mod:`worldspec.cli.console` holds what every subcommand shares (exit statuses,
the console, spec paths). This module imports only the standard library.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
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


def entry_point(argv: Sequence[str] | None = None) -> int:
    """Run ``worldspec`` with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    arguments = list(argv) if argv is not None else sys.argv[1:]
    try:
        from worldspec.cli.main import main as run_command

        return run_command(arguments)
    except KeyboardInterrupt:
        return report_interrupted(arguments, sys.stdout, sys.stderr)
