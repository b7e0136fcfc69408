"""What every ``worldspec`` subcommand shares: exit statuses, output, and spec paths."""

from __future__ import annotations

import argparse
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from worldspec.compiler.loader import expand_paths
from worldspec.dsl.render import render_text

__all__ = ["EXIT_OK", "EXIT_PROBLEMS", "EXIT_USAGE", "EXIT_INTERNAL", "Console", "Subcommand",
           "add_paths_argument", "collect_spec_files", "report_errors"]

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


@dataclass(frozen=True, slots=True)
class Console:
    """Where a command writes: results to ``out``, problems to ``err``."""

    out: TextIO
    err: TextIO

    def write(self, text: str, *, to_err: bool = False) -> None:
        """Write ``text``, replacing what the stream's encoding cannot hold.

        Source lines and names are user text; a terminal that is not UTF-8
        must not turn them into a ``UnicodeEncodeError``.
        """
        stream = self.err if to_err else self.out
        try:
            stream.write(text)
        except UnicodeEncodeError:
            encoding = getattr(stream, "encoding", None) or "ascii"
            stream.write(text.encode(encoding, "backslashreplace").decode(encoding, "replace"))

    def line(self, text: str = "", *, to_err: bool = False) -> None:
        """Write ``text`` and a newline."""
        self.write(text + "\n", to_err=to_err)

    def error(self, message: str) -> None:
        """A problem with the command itself (not a diagnostic), on stderr."""
        self.line(f"worldspec: error: {message}", to_err=True)


def collect_spec_files(raw_paths: Sequence[str], console: Console) -> list[Path] | None:
    """The files named by ``raw_paths``: files as given, folders as every ``*.world`` below.

    Reports each path that does not exist, cannot be inspected, or is a
    folder without spec files, and returns ``None`` if there was any (a usage
    error, status 2). Files that exist but cannot be read are left to the
    loader, which reports them as ``WS100`` diagnostics (status 1).
    """
    found: list[Path] = []
    ok = True
    for raw in raw_paths:
        if not raw:
            console.error("an empty string is not a path")
            ok = False
            continue
        path = Path(raw)
        try:
            mode = path.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            console.error(f"'{raw}' does not exist")
            ok = False
            continue
        except OSError as exc:
            console.error(f"'{raw}' cannot be accessed: {exc.strerror or exc}")
            ok = False
            continue
        if stat.S_ISDIR(mode):
            below = expand_paths([path])
            if not below:
                console.error(f"no .world files found in '{raw}'")
                ok = False
            found.extend(below)
        else:
            found.append(path)
    if not ok:
        return None
    unique: dict[str, Path] = {}
    for p in found:
        unique.setdefault(os.path.realpath(p), p)
    return list(unique.values())



@dataclass(frozen=True, slots=True)
class Subcommand:
    """One command of a table of commands (``worldspec COMMAND``, ``worldspec synth WHAT``):
    its help, its options, and what it does."""

    summary: str
    description: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Console], int]

def add_paths_argument(parser: argparse.ArgumentParser) -> None:
    """The ``PATH...`` argument every spec-reading command takes."""
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="a .world file, or a folder: every *.world file below it")


def report_errors(result: Any, console: Console) -> None:
    """A check result's diagnostics as text on stderr (for commands that stop on errors)."""
    sources = {path: f.text for path, f in result.program.files.items()}
    console.write(render_text(list(result.diagnostics), sources, False), to_err=True)
