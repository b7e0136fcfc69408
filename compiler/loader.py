"""Reading spec files from disk and following their imports.

Every way reading can go wrong (missing file, directory, binary or non-UTF-8
content, an import cycle) becomes a ``WS100``/``WS106`` diagnostic; nothing
here raises for bad input.
"""

from __future__ import annotations

import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.parser import parse_module

__all__ = ["SourceFile", "Program", "load_program", "load_text", "expand_paths", "display_path",
           "refuse_import"]

MAX_FILE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file's text and syntax tree."""

    path: str
    text: str
    module: n.Module
    parsed_ok: bool


@dataclass
class Program:
    """All files reached from the roots, in a deterministic order (imports first)."""

    files: dict[str, SourceFile] = field(default_factory=dict)
    roots: list[str] = field(default_factory=list)
    #: for each file, the files it imports (resolved display paths)
    imports: dict[str, list[str]] = field(default_factory=dict)

    def source(self, path: str) -> str | None:
        f = self.files.get(path)
        return f.text if f else None


def display_path(path: Path) -> str:
    """A path as shown in diagnostics: relative to the working directory when possible."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, and every ``*.world`` file below each folder, sorted."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend(sorted(x for x in p.rglob("*.world") if x.is_file()))
        else:
            out.append(p)
    return out


def _whole_file_span(path: str) -> n.Span:
    return n.Span(path, 1, 1, 1, 1, 0, 0)


def read_text(path: Path, shown: str, sink: DiagnosticSink,
              at: n.Span | None = None) -> str | None:
    """The file's text, or ``None`` after reporting why it cannot be read."""
    span = at or _whole_file_span(shown)
    try:
        if path.is_dir():
            sink.report("WS100", span, f"'{shown}' is a directory, not a spec file")
            return None
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a pipe or a device could block or never end
            sink.report("WS100", span, f"'{shown}' is not a regular file")
            return None
        size = info.st_size
        if size > MAX_FILE_BYTES:
            sink.report("WS100", span, f"'{shown}' is larger than 64 MiB")
            return None
        data = path.read_bytes()
    except FileNotFoundError:
        sink.report("WS100", span, f"'{shown}' does not exist")
        return None
    except ValueError:  # an embedded NUL, or a path the OS cannot represent
        sink.report("WS100", span, f"'{shown}' is not a valid file name")
        return None
    except OSError as exc:
        sink.report("WS100", span, f"'{shown}' cannot be read: {exc.strerror or exc}")
        return None
    if b"\0" in data:
        sink.report("WS100", span, f"'{shown}' is a binary file, not UTF-8 text")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        sink.report("WS100", span,
                    f"'{shown}' is not valid UTF-8 (bad byte at offset {exc.start})")
        return None
    return text.removeprefix("\ufeff")


def load_text(text: str, path: str, sink: DiagnosticSink) -> Program:
    """A program made of one in-memory file (imports are resolved against the disk)."""
    program = Program()
    shown = display_path(Path(path)) if path and "\0" not in path else path
    _add(program, text.removeprefix("\ufeff"), shown, Path(path), sink, stack=[])
    program.roots.append(shown)
    return program


def load_program(paths: Iterable[str | Path], sink: DiagnosticSink) -> Program:
    """Read and parse every root file and, recursively, what it imports."""
    program = Program()
    for p in expand_paths(paths):
        shown = display_path(p)
        if shown in program.files:
            if shown not in program.roots:
                program.roots.append(shown)
            continue
        text = read_text(p, shown, sink)
        if text is None:
            continue
        _add(program, text, shown, p, sink, stack=[])
        program.roots.append(shown)
    return program


def refuse_import(decl: n.Import, target: str, chain: list[str], sink: DiagnosticSink) -> bool:
    """Report ``decl`` (an import of ``target``) when it imports the file itself or closes a
    cycle; ``chain`` is the files importing down to the importing one, which is last."""
    if target == chain[-1]:
        sink.report("WS106", decl.span, f"'{target}' imports itself",
                    hints=["remove this import: a file's own declarations are in scope"])
        return True
    if target in chain:
        cycle = " -> ".join([*chain[chain.index(target):], target])
        sink.report("WS106", decl.span, f"import cycle: {cycle}",
                    hints=["move the shared declarations into a file both can import"])
        return True
    return False


def _add(program: Program, text: str, shown: str, real: Path, sink: DiagnosticSink,
         stack: list[tuple[str, n.Span | None]]) -> None:
    result = parse_module(text, shown, sink)
    program.files[shown] = SourceFile(shown, text, result.module, result.ok)
    program.imports[shown] = []
    for decl in result.module.decls:
        if not isinstance(decl, n.Import):
            continue
        target = (real.parent / decl.path)
        target_shown = display_path(target)
        if refuse_import(decl, target_shown, [s for s, _ in stack] + [shown], sink):
            continue
        program.imports[shown].append(target_shown)
        if target_shown in program.files:
            continue
        sub_sink = DiagnosticSink()
        sub_text = read_text(target, target_shown, sub_sink, at=decl.span)
        if sub_text is None:
            reason = sub_sink.diagnostics[0].message if sub_sink.diagnostics else "cannot be read"
            sink.report("WS106", decl.span, f"cannot import '{decl.path}': {reason}")
            program.imports[shown].remove(target_shown)
            continue
        _add(program, sub_text, target_shown, target, sink, stack=[*stack, (shown, decl.span)])
