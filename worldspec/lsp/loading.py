"""One document and everything it imports, checked as a unit, fast enough for every keystroke.

``worldspec check`` reads and parses every import again on each run; an editor re-checks on
each keystroke, so here the parse of an imported file is kept as long as its text is the
same, and an import that is open in the editor is read from its buffer, not from the disk.

The edited document itself is parsed one top-level declaration at a time
(:class:`DocumentParser`): a keystroke changes one declaration, so only that one is parsed
again; the others are taken from the previous parse, their spans moved by how far the edit
moved them. When a declaration does not parse on its own, the whole text is parsed by
:func:`~worldspec.dsl.parser.parse_module`, so what is reported is exactly what
``worldspec check`` reports. The semantic check then runs over the unit.

Import problems are reported as the compiler's loader reports them (WS106, at the import).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import cast

from worldspec.compiler.api import CheckResult
from worldspec.compiler.checker import check_program
from worldspec.compiler.loader import Program, SourceFile, display_path, read_text, refuse_import
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import Diagnostic, DiagnosticSink
from worldspec.dsl.parser import ParseResult, parse_module

__all__ = ["ParseCache", "DocumentParser", "check_unit", "shown_path", "declaration_bounds"]

#: the text of an open document, by its resolved path; None when it is not open
Overlay = Callable[[Path], str | None]


def shown_path(path: Path) -> str:
    """The path as diagnostics show it (what the compiler puts in every span)."""
    return display_path(path)


@dataclass
class ParseCache:
    """Parsed files by display path, valid while their text is unchanged."""

    entries: dict[str, tuple[str, ParseResult]] = field(default_factory=dict)
    hits: int = 0

    def parse(self, text: str, shown: str) -> ParseResult:
        """The parse of ``text``; syntax errors of a cached file are not reported again (only
        the edited document's own diagnostics are shown, and it is never cached)."""
        cached = self.entries.get(shown)
        if cached is not None and cached[0] == text:
            self.hits += 1
            return cached[1]
        result = parse_module(text, shown, DiagnosticSink())
        self.entries[shown] = (text, result)
        return result


#: a top-level declaration starts with its keyword at the start of a line (as the parser's
#: own recovery splits a file)
_TOP_LEVEL = re.compile(
    r"^(?:import|world|config|policy|enum|record|entity|union|type|state|invariant|tool|fn|"
    r"task)\b",
    re.MULTILINE,
)


def declaration_bounds(text: str) -> list[int]:
    """Offsets where top-level declarations start, with 0 first and the text's end last."""
    starts = [m.start() for m in _TOP_LEVEL.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    starts.append(len(text))
    return starts


_FIELDS: dict[type, tuple[str, ...]] = {}


def _moved(node: n.Node, lines: int, chars: int) -> n.Node:
    """A copy of ``node`` (and everything below it) ``lines`` lines and ``chars`` characters
    further down the file. Nodes are frozen: the copy is built field by field."""
    cls = type(node)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in fields(node))
    copy = object.__new__(cls)
    for name in names:
        value = getattr(node, name)
        if name == "span":
            value = _moved_span(value, lines, chars)
        elif isinstance(value, n.Node):
            value = _moved(value, lines, chars)
        elif type(value) is tuple and any(isinstance(v, n.Node) for v in value):
            value = tuple(_moved(v, lines, chars) if isinstance(v, n.Node) else v
                          for v in value)
        object.__setattr__(copy, name, value)
    return copy


def _moved_span(s: n.Span, lines: int, chars: int) -> n.Span:
    return n.Span(s.file, s.line + lines, s.column, s.end_line + lines, s.end_column,
                  s.start + chars, s.end + chars)


@dataclass
class _Chunk:
    """One declaration's parse, its spans as if it started ``lines`` lines and ``offset``
    characters into the file (where it was last seen)."""

    decls: tuple[n.Decl, ...]
    diagnostics: list[Diagnostic]
    ok: bool
    lines: int = 0
    offset: int = 0

    def at(self, lines: int, offset: int) -> _Chunk:
        """The chunk with its spans where it is now (itself when it has not moved)."""
        if (lines, offset) == (self.lines, self.offset):
            return self
        dl, dc = lines - self.lines, offset - self.offset
        moved = tuple(cast(n.Decl, _moved(d, dl, dc)) for d in self.decls)
        return _Chunk(moved, self.diagnostics, self.ok, lines, offset)


@dataclass
class DocumentParser:
    """Parses an edited document one top-level declaration at a time, reusing the parse of
    every declaration whose text did not change."""

    chunks: dict[str, _Chunk] = field(default_factory=dict)
    #: declarations parsed again by the last :meth:`parse` (the rest came from the cache)
    parsed: int = 0

    def parse(self, text: str, shown: str, sink: DiagnosticSink) -> ParseResult:
        bounds = declaration_bounds(text)
        kept: dict[str, _Chunk] = {}
        decls: list[n.Decl] = []
        lines = 0
        self.parsed = 0
        for a, b in itertools.pairwise(bounds):
            piece = text[a:b]
            chunk = kept.get(piece) or self.chunks.get(piece)
            if chunk is None:
                self.parsed += 1
                piece_sink = DiagnosticSink()
                result = parse_module(piece, shown, piece_sink)
                chunk = _Chunk(result.module.decls, piece_sink.diagnostics, result.ok)
            if not chunk.ok or chunk.diagnostics:
                kept[piece] = chunk
                self.chunks = kept
                return parse_module(text, shown, sink)  # exactly what `check` reports
            chunk = chunk.at(lines, a)
            kept[piece] = chunk
            decls.extend(chunk.decls)
            lines += piece.count("\n")
        self.chunks = kept
        last = len(text) - (text.rfind("\n") + 1) + 1
        module = n.Module(path=shown, decls=tuple(decls),
                          span=n.Span(shown, 1, 1, text.count("\n") + 1, last, 0, len(text)))
        return ParseResult(module, True)


def check_unit(text: str, path: Path, cache: ParseCache, overlay: Overlay,
               parser: DocumentParser | None = None) -> CheckResult:
    """Parse ``text`` (the document at ``path``; with ``parser``, incrementally), load its
    imports and check the unit."""
    sink = DiagnosticSink()
    program = Program()
    shown = shown_path(path)
    text = text.removeprefix("\ufeff")
    if parser is not None:
        result = parser.parse(text, shown, sink)
    else:
        result = parse_module(text, shown, sink)
    _add(program, text, result, shown, path, sink, cache, overlay, stack=[])
    program.roots.append(shown)
    model = check_program(program, sink)
    return CheckResult(program=program, model=model, diagnostics=tuple(sink.sorted()))


def _add(program: Program, text: str, result: ParseResult, shown: str, real: Path,
         sink: DiagnosticSink, cache: ParseCache, overlay: Overlay, stack: list[str]) -> None:
    program.files[shown] = SourceFile(shown, text, result.module, result.ok)
    program.imports[shown] = []
    chain = [*stack, shown]
    for decl in result.module.decls:
        if not isinstance(decl, n.Import):
            continue
        target = real.parent / decl.path
        target_shown = shown_path(target)
        if refuse_import(decl, target_shown, chain, sink):
            continue
        program.imports[shown].append(target_shown)
        if target_shown in program.files:
            continue
        sub_text = _read(target, target_shown, decl, sink, overlay)
        if sub_text is None:
            program.imports[shown].remove(target_shown)
            continue
        sub = cache.parse(sub_text, target_shown)
        _add(program, sub_text, sub, target_shown, target, sink, cache, overlay, chain)


def _read(target: Path, shown: str, decl: n.Import, sink: DiagnosticSink,
          overlay: Overlay) -> str | None:
    """An import's text: the editor's buffer when it is open, else the file on disk."""
    try:
        open_text = overlay(target.resolve())
    except (OSError, ValueError):
        open_text = None
    if open_text is not None:
        return open_text.removeprefix("\ufeff")
    sub_sink = DiagnosticSink()
    sub_text = read_text(target, shown, sub_sink, at=decl.span)
    if sub_text is None:
        reason = sub_sink.diagnostics[0].message if sub_sink.diagnostics else "cannot be read"
        sink.report("WS106", decl.span, f"cannot import '{decl.path}': {reason}")
    return sub_text
