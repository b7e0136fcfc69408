"""One document and everything it imports, checked as a unit, fast enough for every keystroke.

``worldspec check`` reads and parses every import again on each run; an editor re-checks on
each keystroke, so here the parse of an imported file is kept as long as its text is the
same, and an import that is open in the editor is read from its buffer, not from the disk.
Only the edited document is parsed again; the semantic check then runs over the unit.

Import problems are reported as the compiler's loader reports them (WS106, at the import).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from worldspec.compiler.api import CheckResult
from worldspec.compiler.checker import check_program
from worldspec.compiler.loader import Program, SourceFile, display_path, read_text
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.parser import ParseResult, parse_module

__all__ = ["ParseCache", "check_unit", "shown_path"]

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


def check_unit(text: str, path: Path, cache: ParseCache, overlay: Overlay) -> CheckResult:
    """Parse ``text`` (the document at ``path``), load its imports and check the unit."""
    sink = DiagnosticSink()
    program = Program()
    shown = shown_path(path)
    text = text.removeprefix("\ufeff")
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
        if target_shown == shown:
            sink.report("WS106", decl.span, f"'{shown}' imports itself",
                        hints=["remove this import: a file's own declarations are in scope"])
            continue
        if target_shown in chain:
            first = chain.index(target_shown)
            cycle = " -> ".join([*chain[first:], target_shown])
            sink.report("WS106", decl.span, f"import cycle: {cycle}",
                        hints=["move the shared declarations into a file both can import"])
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
