"""The two sides of a diff: specs checked from disk, or read from a git revision first.

A side whose *world* declarations have errors cannot be compared, and
:class:`Side` says so (``fatal``). Errors inside a ``task`` declaration are
different: they are what a change did to the tasks built on the world, so the
side is still compared, the broken tasks are set aside (``task_errors``), and
the rest is checked again without them so that it can be compiled and run.

``git_snapshot`` copies the files of ``PATH...`` as they were at a revision
into a folder, with ``git ls-tree`` and ``git cat-file`` (nothing is checked
out, the working tree and the index are left alone), then also copies the
files those specs import or read data from, wherever they are in the
repository.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from worldspec.compiler.api import CheckResult, check_specs
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import Diagnostic, DiagnosticSink, Related
from worldspec.dsl.parser import parse_module
from worldspec.services.validation import set_aside_broken_tasks

__all__ = ["Side", "SourceError", "load_side", "git_snapshot"]


class SourceError(Exception):
    """A side cannot be read at all (a bad revision, not a git repository, ...)."""


@dataclass
class Side:
    """One side of the diff, checked."""

    label: str
    #: the whole program as checked (what the comparison reads)
    result: CheckResult
    #: the program without the tasks that have errors (what is compiled and run); None
    #: when the side has errors outside tasks
    runnable: CheckResult | None
    #: errors outside task declarations: the side cannot be compared
    fatal: list[Diagnostic] = field(default_factory=list)
    #: (world, task) -> the errors inside that task's declaration
    task_errors: dict[tuple[str, str], list[Diagnostic]] = field(default_factory=dict)
    #: a folder prefix shown as another text (a temporary snapshot shown as ``REV:``)
    shown_as: tuple[str, str] | None = None

    def show_path(self, path: str) -> str:
        """A file name of this side as the user should read it."""
        if self.shown_as is not None:
            prefix, label = self.shown_as
            if path == prefix or path.startswith(prefix + os.sep):
                rel = os.path.relpath(path, prefix).replace(os.sep, "/")
                return f"{label}{rel}"
        return path

    def show_span(self, span: n.Span | None) -> n.Span | None:
        if span is None or self.shown_as is None:
            return span
        return replace(span, file=self.show_path(span.file))

    def shown_diagnostics(self, diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
        """``diagnostics`` with their file names shown as the user should read them."""
        out = []
        for d in diagnostics:
            span = self.show_span(d.span)
            assert span is not None
            related = tuple(Related(self.show_span(r.span) or r.span, r.message)
                            for r in d.related)
            out.append(replace(d, span=span, related=related))
        return out

    def shown_sources(self) -> dict[str, str]:
        return {self.show_path(p): f.text for p, f in self.result.program.files.items()}


def load_side(paths: Sequence[str | Path], label: str,
              shown_as: tuple[str, str] | None = None) -> Side:
    """Check the specs at ``paths``, setting aside the tasks that have errors."""
    result = check_specs(paths)
    split = set_aside_broken_tasks(result)
    return Side(label, result, split.runnable, fatal=list(split.fatal),
                task_errors=split.task_errors, shown_as=shown_as)


# --------------------------------------------------------------------- git
def _git(args: Sequence[str], cwd: Path, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True,
                              check=False)
    except FileNotFoundError:
        raise SourceError("git is not installed (it is needed for --against)") from None
    except OSError as exc:
        raise SourceError(f"cannot run git: {exc.strerror or exc}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SourceError(message[-1] if message else f"git {args[0]} failed")
    return done.stdout


def _repository(paths: Sequence[str]) -> Path:
    """The top folder of the git repository holding the first path."""
    first = Path(os.path.abspath(paths[0]))
    base = first if first.is_dir() else first.parent
    while not base.is_dir() and base != base.parent:
        base = base.parent
    try:
        top = _git(["rev-parse", "--show-toplevel"], base)
    except SourceError:
        raise SourceError(f"'{paths[0]}' is not in a git repository") from None
    return Path(os.fsdecode(top.strip()))


def _read_blobs(top: Path, commit: str, names: Sequence[str]) -> dict[str, bytes]:
    """The contents of files at ``commit``, in one ``git cat-file --batch``."""
    if not names:
        return {}
    request = "".join(f"{commit}:{name}\n" for name in names).encode()
    output = _git(["cat-file", "--batch"], top, stdin=request)
    out: dict[str, bytes] = {}
    pos = 0
    for name in names:
        end = output.index(b"\n", pos)
        header = output[pos:end].rsplit(b" ", 2)
        pos = end + 1
        if len(header) != 3 or not header[2].isdigit():
            continue  # "<name> missing": nothing follows
        size = int(header[2])
        if header[1] == b"blob":
            out[name] = output[pos:pos + size]
        pos += size + 1
    return out


def _listed(top: Path, commit: str, rel: str) -> list[str]:
    raw = _git(["ls-tree", "-r", "-z", "--name-only", commit, "--", rel], top)
    return [os.fsdecode(x) for x in raw.split(b"\0") if x]


def _references(text: str, name: str) -> list[str]:
    """Repository paths a spec file imports or reads data from."""
    sink = DiagnosticSink()
    module = parse_module(text, name, sink).module
    folder = posixpath.dirname(name)
    found: list[str] = []
    for decl in module.decls:
        if isinstance(decl, n.Import):
            found.append(decl.path)
        elif isinstance(decl, n.TaskDecl):
            found += [g.source for g in decl.givens if isinstance(g.source, str)]
    return [posixpath.normpath(posixpath.join(folder, p)) for p in found]


def git_snapshot(revision: str, paths: Sequence[str], into: Path) -> list[Path]:
    """Copy ``paths`` as they were at ``revision`` into ``into``; the copies that exist.

    Paths are relative to the working directory (as the new side's are). A path
    that did not exist at the revision has no copy: that side simply lacks it.
    """
    if not paths:
        raise SourceError("no paths to compare")
    if not revision or revision.startswith("-"):
        raise SourceError(f"'{revision}' is not a revision")
    top = _repository(paths)
    real_top = Path(os.path.realpath(top))
    try:
        commit = _git(["rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"],
                      top).decode().strip()
    except SourceError:
        raise SourceError(f"unknown revision '{revision}'") from None
    rels: list[str] = []
    for raw in paths:
        full = Path(os.path.realpath(raw))
        try:
            rel = full.relative_to(real_top).as_posix()
        except ValueError:
            raise SourceError(f"'{raw}' is outside the git repository at {top}") from None
        rels.append(rel or ".")
    wanted: list[str] = []
    roots: list[Path] = []
    for rel in rels:
        listed = _listed(top, commit, rel)
        if listed:
            roots.append(into / rel)
        wanted += listed
    done: set[str] = set()
    while wanted:
        names = [w for w in dict.fromkeys(wanted) if w not in done]
        wanted = []
        for name, data in _read_blobs(top, commit, names).items():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            if name.endswith(".world"):
                text = data.decode("utf-8", "replace")
                wanted += [r for r in _references(text, name)
                           if not r.startswith("..") and r not in done and r not in names]
        done.update(names)
        wanted = [w for w in wanted if _listed(top, commit, w)]
    return roots
