"""What every ``worldspec`` subcommand shares: exit statuses, output, and spec paths.

Nothing of the compiler is imported until a function needs it, so a command that serves a
generated package (``worldspec serve``) runs without it.
"""

from __future__ import annotations

import argparse
import importlib
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

__all__ = ["EXIT_OK", "EXIT_PROBLEMS", "EXIT_USAGE", "EXIT_INTERNAL", "ISSUES_HINT", "Console",
           "LazySubcommand", "Subcommand", "add_backend_options", "add_colour_option",
           "add_paths_argument", "cannot_write", "collect_spec_files", "output_problem", "plural",
           "report_errors", "special_file_kind", "wants_colour"]

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

#: what an internal error (status 3) says after its one line
ISSUES_HINT = "this is a bug in worldspec; please report it together with the input that caused it"


@dataclass(slots=True)
class Console:
    """Where a command writes: results to ``out``, problems to ``err``.

    It also remembers whether anything reached ``out`` and which errors and
    diagnostics were reported, so that with ``--format json`` the command line
    can print one JSON error document when a command stops before printing its
    own (stdout is then always one JSON document, whatever the exit status).
    """

    out: TextIO
    err: TextIO
    #: the messages of :meth:`error`, in order
    errors: list[str] = field(default_factory=list)
    #: the diagnostics of :func:`report_errors`, as JSON objects
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    #: True once anything was written to ``out``
    wrote_out: bool = False

    def write(self, text: str, *, to_err: bool = False) -> None:
        """Write ``text``, replacing what the stream's encoding cannot hold.

        Source lines and names are user text; a terminal that is not UTF-8
        must not turn them into a ``UnicodeEncodeError``.
        """
        stream = self.err if to_err else self.out
        if not to_err:
            self.wrote_out = True
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
        self.errors.append(message)
        self.line(f"worldspec: error: {message}", to_err=True)


def special_file_kind(mode: int) -> str | None:
    """What a non-regular, non-folder file is (reading one may block or never end): the
    answer of :func:`worldspec.services.files.special_file_kind`, imported when asked so that
    ``--version`` and ``--help`` load no service."""
    from worldspec.services.files import special_file_kind as kind_of

    return kind_of(mode)


def cannot_write(path: object, exc: OSError) -> str:
    """The one wording of a failed write: ``cannot write 'PATH': reason``."""
    return f"cannot write '{path}': {exc.strerror or exc}"


def output_problem(raw: str, *, folder: bool, option: str = "-o") -> str | None:
    """Why ``-o RAW`` cannot be written (as a folder, or as a file), or None.

    Decided before anything is written, so that a bad ``-o`` leaves nothing
    half-done; what only writing shows (permissions, a full disk) is still
    caught where the command writes.
    """
    if not raw or "\0" in raw:
        return f"{option}: {raw!r} is not a path"
    path = Path(raw)
    if path.exists():
        kind = special_file_kind(path.stat().st_mode)
        if kind is not None:
            return f"{option}: '{raw}' is {kind}, not a regular file"
        if path.is_dir() == folder:
            return None
        return f"{option}: '{raw}' exists and is {'not ' if folder else ''}a folder"
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"{option}: '{raw}' cannot be created: '{parent}' is not a folder"
    return None


def collect_spec_files(raw_paths: Sequence[str], console: Console) -> list[Path] | None:
    """The files named by ``raw_paths``: files as given, folders as every ``*.world`` below.

    Reports each path that does not exist, cannot be inspected, is not a
    regular file (a FIFO or a device would block the read or never end), or is
    a folder without spec files, and returns ``None`` if there was any (a usage
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
        except ValueError:  # a NUL byte: no file has such a name
            console.error(f"{raw!r} is not a valid path")
            ok = False
            continue
        special = special_file_kind(mode)
        if special is not None:
            console.error(f"'{raw}' is {special}, not a spec file")
            ok = False
        elif stat.S_ISDIR(mode):
            from worldspec.compiler.loader import expand_paths

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

    def load(self) -> Subcommand:
        """Itself (a :class:`LazySubcommand` imports its module here)."""
        return self


@dataclass(frozen=True, slots=True)
class LazySubcommand:
    """A command whose code is imported only when it is chosen.

    The help texts are here, so ``worldspec --help`` lists every command without
    importing any; ``module`` is imported, and ``configure`` and ``run`` (names of
    its functions) are looked up, by :meth:`load`, when the command is run or its
    own ``--help`` is asked for.
    """

    summary: str
    description: str
    module: str
    configure: str
    run: str

    def load(self) -> Subcommand:
        """The command's :class:`Subcommand`, its module imported."""
        code = importlib.import_module(self.module)
        return Subcommand(self.summary, self.description, getattr(code, self.configure),
                          getattr(code, self.run))


def wants_colour(choice: str, stream: TextIO) -> bool:
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


def add_colour_option(parser: argparse.ArgumentParser) -> None:
    """``--color``, for the commands that print diagnostics."""
    parser.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto",
        help="colour the diagnostics: 'auto' (default) when writing to a terminal and "
             "NO_COLOR is not set, 'always', or 'never'",
    )


def plural(count: int, noun: str) -> str:
    """``1 file``, ``2 files``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def add_backend_options(parser: argparse.ArgumentParser, *, title: str = "where the work runs",
                        count: Callable[[str], int] = int) -> None:
    """``--backend``, ``--workers`` and ``--address``: where a batch's items run (rollouts and
    every synth batch; docs/scaling.md). ``count`` parses ``--workers``."""
    group = parser.add_argument_group(f"{title} (docs/scaling.md)")
    group.add_argument("--backend", choices=("local", "ray"), default="local",
                       help="'local' (default): this process, --concurrency items at once; "
                            "'ray': Ray workers, --concurrency items each, each worker with "
                            "its own model clients (the ray extra)")
    group.add_argument("--workers", type=count, default=2, metavar="N",
                       help="Ray workers (actors) with --backend ray (default 2)")
    group.add_argument("--address", metavar="ADDR",
                       help="the Ray cluster to join (default: $RAY_ADDRESS, else a local "
                            "one started for the batch)")


def add_paths_argument(parser: argparse.ArgumentParser) -> None:
    """The ``PATH...`` argument every spec-reading command takes."""
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="a .world file, or a folder: every *.world file below it")


def report_errors(result: Any, console: Console) -> None:
    """A check result's diagnostics as text on stderr (for commands that stop on errors)."""
    sources = {path: f.text for path, f in result.program.files.items()}
    console.diagnostics.extend(d.to_json() for d in result.diagnostics)
    from worldspec.dsl.render import render_text

    console.write(render_text(list(result.diagnostics), sources, False), to_err=True)
