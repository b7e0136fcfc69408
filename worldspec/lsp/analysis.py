"""One analysis per document version, resilient to syntax errors.

The diagnostics shown are always those of the text as it is. Navigation, hover, completion
and the outline need a checked model, which the compiler builds only for files that parse;
so when a declaration has a syntax error, the text is checked a second time with that
declaration blanked out (every character but newlines replaced by a space, so every other
offset, line and column stays the same). One broken tool therefore leaves the types,
the outline and hover of every other declaration as they were.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

from worldspec.compiler.api import CheckResult
from worldspec.compiler.loader import Program
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import Diagnostic
from worldspec.lsp.index import Index, build_index
from worldspec.lsp.loading import (
    DocumentParser,
    Overlay,
    ParseCache,
    check_unit,
    declaration_bounds,
    shown_path,
)

__all__ = ["Analysis", "Analyser", "blank_broken_declarations", "SYNTAX_CODES"]

#: the codes the parser reports: a file with one of these is not analysed by the checker
SYNTAX_CODES = frozenset({"WS101", "WS102", "WS103", "WS104", "WS105", "WS107"})

def blank_broken_declarations(text: str, offsets: list[int]) -> str:
    """``text`` with each top-level declaration that holds one of ``offsets`` blanked."""
    bounds = declaration_bounds(text)
    chars = list(text)
    for offset in offsets:
        for a, b in itertools.pairwise(bounds):
            if a <= offset < b or (offset == b == len(text) and a < b):
                for i in range(a, b):
                    if chars[i] not in "\r\n":
                        chars[i] = " "
                break
    return "".join(chars)


@dataclass
class Analysis:
    """What the compiler learnt about one version of one document."""

    path: Path
    shown: str
    text: str
    version: int | None
    result: CheckResult
    #: the result the index is built from: ``result``, or the check of the text with its
    #: broken declarations blanked (None until first asked for)
    _semantic: CheckResult | None = None
    _index: Index | None = None
    _tasks: list[Diagnostic] | None = None
    cache: ParseCache = field(default_factory=ParseCache, repr=False)
    overlay: Overlay | None = field(default=None, repr=False)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """This document's own diagnostics (an import's are shown in the import's document)."""
        return [d for d in self.result.diagnostics if d.span.file == self.shown]

    @property
    def task_diagnostics(self) -> list[Diagnostic]:
        """What running this document's tasks finds (WS610-WS624, discoverability included),
        as ``worldspec check`` reports it; only for a document that checks without errors
        and declares tasks (running them needs the compiled world)."""
        if self._tasks is None:
            self._tasks = []
            source = self.result.program.files.get(self.shown)
            if self.result.ok and source is not None and \
                    any(isinstance(d, n.TaskDecl) for d in source.module.decls):
                from worldspec.services.validation import validate_tasks

                self._tasks = [d for r in validate_tasks(self.result) for d in r.problems
                               if d.span.file == self.shown]
        return self._tasks

    def broken_imports(self) -> list[tuple[n.Import, str]]:
        """This document's imports that (themselves or through theirs) do not parse: the
        checker leaves the document unchecked until they do, which the editor should say."""
        program = self.result.program
        source = program.files.get(self.shown)
        if source is None:
            return []
        out = []
        for decl in source.module.decls:
            if not isinstance(decl, n.Import):
                continue
            target = shown_path(self.path.parent / decl.path)
            broken = _first_broken(program, target, set())
            if broken is not None:
                out.append((decl, broken))
        return out

    @property
    def parsed_ok(self) -> bool:
        source = self.result.program.files.get(self.shown)
        return source is not None and source.parsed_ok

    @property
    def semantic(self) -> CheckResult:
        if self._semantic is None:
            self._semantic = self.result
            if not self.parsed_ok and self.overlay is not None:
                broken = [d.span.start for d in self.diagnostics if d.code in SYNTAX_CODES]
                blanked = blank_broken_declarations(self.text, broken)
                self._semantic = check_unit(blanked, self.path, self.cache, self.overlay)
        return self._semantic

    @property
    def index(self) -> Index:
        if self._index is None:
            self._index = build_index(self.semantic)
        return self._index


def _first_broken(program: Program, path: str, seen: set[str]) -> str | None:
    """``path`` or the first file it imports that has syntax errors, or None."""
    if path in seen:
        return None
    seen.add(path)
    source = program.files.get(path)
    if source is None:
        return None
    if not source.parsed_ok:
        return path
    for dep in program.imports.get(path, []):
        found = _first_broken(program, dep, seen)
        if found is not None:
            return found
    return None


class Analyser:
    """Checks documents as they change; imported files' parses are shared through one cache."""

    def __init__(self, overlay: Overlay) -> None:
        self.cache = ParseCache()
        self.overlay = overlay
        self.parsers: dict[Path, DocumentParser] = {}

    def parser_of(self, path: Path) -> DocumentParser:
        """The incremental parser of an open document (dropped by :meth:`forget`)."""
        return self.parsers.setdefault(path, DocumentParser())

    def forget(self, path: Path) -> None:
        self.parsers.pop(path, None)

    def analyse(self, path: Path, text: str, version: int | None = None,
                incremental: bool = True) -> Analysis:
        """Check ``text``; ``incremental`` reuses the document's previous parse (the
        keystroke path), otherwise the text is parsed from scratch (one-off checks)."""
        parser = self.parser_of(path) if incremental else None
        result = check_unit(text, path, self.cache, self.overlay, parser)
        return Analysis(path, shown_path(path), text, version, result, cache=self.cache,
                        overlay=self.overlay)
