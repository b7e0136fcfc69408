"""The language server: pygls wiring over stdio.

Each open document is checked on every change (bursts of changes are coalesced: only the
latest version is checked) and its diagnostics published; requests (hover, definition,
references, rename, completion, outline, formatting, code actions) are answered from the
index of the latest analysis, checked first if a change is still pending.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from worldspec import __version__
from worldspec.dsl import nodes as n
from worldspec.dsl.catalog import CATALOG
from worldspec.dsl.diagnostics import Diagnostic, Severity
from worldspec.dsl.formatter import format_source
from worldspec.lsp.analysis import Analyser, Analysis
from worldspec.lsp.features import (
    builtin_hover,
    completion_context,
    completions,
    hover_text,
    outline,
    rename_problem,
)
from worldspec.lsp.index import Index, Kind, Occurrence, Symbol
from worldspec.lsp.loading import ParseCache, check_unit, shown_path
from worldspec.lsp.positions import LineMap
from worldspec.lsp.wire import AnsweringProtocol, FrameReader

__all__ = ["DocumentUnreadable", "MAX_WORKSPACE_FILES", "RequestFailed", "WorldSpecServer",
           "build_server", "diagnostic_anchor", "serve"]

#: files read when looking for references outside the open document's imports
MAX_WORKSPACE_FILES = 2000
#: seconds to wait before checking again the open documents that import a changed one (a
#: burst of keystrokes re-checks them once)
DEPENDENT_DELAY = 0.3
#: units checked with a rename applied before it is accepted (the document's, then other
#: edited files')
MAX_RENAME_CHECKS = 20

_SEVERITIES = {Severity.ERROR: lsp.DiagnosticSeverity.Error,
               Severity.WARNING: lsp.DiagnosticSeverity.Warning,
               Severity.NOTE: lsp.DiagnosticSeverity.Information}
_DID_YOU_MEAN = re.compile(r"did you mean (.+)\?$")
_QUOTED = re.compile(r"'([A-Za-z_][A-Za-z0-9_]*)'")


class RequestFailed(JsonRpcException):
    """A request that cannot be carried out (LSP ``RequestFailed``), e.g. an unsafe rename."""

    CODE = -32803


class DocumentUnreadable(RequestFailed):
    """A request about a document the editor never opened and whose file cannot be read (it
    does not exist, is a folder, is not UTF-8): answered with this error's message, not a
    traceback."""

    def __init__(self, uri: str, reason: str) -> None:
        super().__init__(f"'{uri}' is not open in the editor and cannot be read ({reason}): "
                         "open it first (textDocument/didOpen)")


def _unreadable_reason(exc: OSError | UnicodeDecodeError) -> str:
    """Why a file could not be read, in words (``No such file or directory``, ...)."""
    if isinstance(exc, UnicodeDecodeError):
        return "it is not UTF-8 text"
    return exc.strerror or type(exc).__name__


def diagnostic_anchor(code: str) -> str:
    """The anchor of a code's section in ``docs/diagnostics.md`` (GitHub's heading slugs)."""
    entry = CATALOG.get(code)
    if entry is None:
        return code.lower()
    heading = f"{code}: {entry.title}".lower()
    return re.sub(r"[^a-z0-9 _-]", "", heading).replace(" ", "-")


def _default_docs_url() -> str | None:
    """``docs/diagnostics.md`` of the checkout the package runs from, when there is one (the
    client may name another with the initialization option ``diagnosticsUrl``)."""
    here = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"
    return from_fs_path(str(here)) if here.is_file() else None


@dataclass
class _Document:
    """An open document: the latest analysis, and the last one that parsed."""

    path: Path
    analysis: Analysis | None = None
    last_good: Analysis | None = None
    scheduled: bool = False


class WorldSpecServer(LanguageServer):
    """The server's state: open documents and their analyses."""

    def __init__(self) -> None:
        super().__init__("worldspec", __version__, protocol_cls=AnsweringProtocol)
        self.documents: dict[str, _Document] = {}
        self.by_path: dict[Path, str] = {}
        self.analyser = Analyser(self._open_text)
        self.docs_url = _default_docs_url()
        self.encoding = "utf-16"
        self._workspace_cache: dict[Path, tuple[str, Index]] = {}

    # -- documents
    def _open_text(self, path: Path) -> str | None:
        uri = self.by_path.get(path)
        if uri is None:
            return None
        return self.workspace.get_text_document(uri).source

    def open(self, uri: str) -> _Document:
        doc = self.documents.get(uri)
        if doc is None:
            path = Path(to_fs_path(uri) or uri)
            doc = _Document(path)
            self.documents[uri] = doc
            self.by_path[path.resolve()] = uri
        return doc

    def close(self, uri: str) -> None:
        doc = self.documents.pop(uri, None)
        if doc is not None:
            self.by_path.pop(doc.path.resolve(), None)
            self.analyser.forget(doc.path)

    def current(self, uri: str) -> Analysis:
        """The analysis of the document's text as it is now (checked if it changed); a
        document the editor never opened is read from its file (:class:`DocumentUnreadable`
        when that fails)."""
        text_doc = self.workspace.get_text_document(uri)
        try:
            source = text_doc.source
        except (OSError, UnicodeDecodeError) as exc:
            raise DocumentUnreadable(uri, _unreadable_reason(exc)) from None
        doc = self.open(uri)
        analysis = doc.analysis
        if analysis is None or analysis.text != source or analysis.version != text_doc.version:
            analysis = self.analyser.analyse(doc.path, source, text_doc.version)
            doc.analysis = analysis
            if analysis.parsed_ok:
                doc.last_good = analysis
        return analysis

    def schedule(self, uri: str, delay: float = 0.0) -> None:
        """Check and publish soon (after ``delay`` seconds); changes arriving meanwhile are
        checked together."""
        doc = self.open(uri)
        if doc.scheduled:
            return
        doc.scheduled = True
        asyncio.get_running_loop().call_later(delay, self._publish_later, uri)

    def _publish_later(self, uri: str) -> None:
        doc = self.documents.get(uri)
        if doc is None:
            return
        doc.scheduled = False
        changed = doc.analysis.shown if doc.analysis is not None else None
        try:
            self.publish(uri)
        except DocumentUnreadable:  # saved or changed, never opened, and not on disk
            self.close(uri)
            return
        for other_uri, other in list(self.documents.items()):  # documents importing this one
            if other_uri != uri and other.analysis is not None and changed is not None and \
                    changed in other.analysis.result.program.files:
                other.analysis = None  # its import changed: check it again, once typing pauses
                self.schedule(other_uri, delay=DEPENDENT_DELAY)

    def publish(self, uri: str) -> None:
        analysis = self.current(uri)
        lines = LineMap(analysis.text, self.encoding)
        diagnostics = [self.to_lsp(d, lines, analysis)
                       for d in [*analysis.diagnostics, *analysis.task_diagnostics]]
        for decl, broken in analysis.broken_imports():
            diagnostics.append(lsp.Diagnostic(
                range=lines.span_range(decl.span), severity=lsp.DiagnosticSeverity.Information,
                source="worldspec",
                message=f"'{broken}' has syntax errors: this file is checked again once they "
                        "are fixed"))
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=uri, version=analysis.version, diagnostics=diagnostics))

    # -- conversions
    def uri_of(self, file: str) -> str:
        return from_fs_path(str(Path(file).resolve())) or file

    def lines_of(self, index: Index, file: str) -> LineMap:
        source = index.result.program.files.get(file)
        return LineMap(source.text if source else "", self.encoding)

    def location(self, index: Index, span: n.Span) -> lsp.Location:
        return lsp.Location(self.uri_of(span.file), self.lines_of(index, span.file)
                            .span_range(span))

    def to_lsp(self, d: Diagnostic, lines: LineMap, analysis: Analysis) -> lsp.Diagnostic:
        message = d.message + "".join(f"\n= hint: {h}" for h in d.hints)
        related = []
        for r in d.related:
            text = analysis.result.program.source(r.span.file)
            rel_lines = lines if r.span.file == analysis.shown else LineMap(text or "",
                                                                             self.encoding)
            related.append(lsp.DiagnosticRelatedInformation(
                lsp.Location(self.uri_of(r.span.file), rel_lines.span_range(r.span)),
                r.message))
        description = None
        if self.docs_url:
            description = lsp.CodeDescription(href=f"{self.docs_url}#{diagnostic_anchor(d.code)}")
        return lsp.Diagnostic(
            range=lines.span_range(d.span), message=message, severity=_SEVERITIES[d.severity],
            code=d.code, code_description=description, source="worldspec",
            related_information=related or None, data=self._fix_data(d, lines, analysis.text))

    def _fix_data(self, d: Diagnostic, lines: LineMap, text: str) -> dict[str, Any] | None:
        """For a did-you-mean diagnostic: the misspelt name's range and the candidates."""
        candidates: list[str] = []
        for hint in d.hints:
            found = _DID_YOU_MEAN.match(hint)
            if found:
                candidates += _QUOTED.findall(found.group(1))
        wrong = _QUOTED.search(d.message)
        if not candidates or wrong is None or d.span.end <= d.span.start:
            return None
        name = wrong.group(1)
        at = text.find(name, d.span.start, d.span.end)
        if at < 0:
            return None
        rng = lines.range(at, at + len(name))
        return {"name": name, "candidates": candidates,
                "range": [rng.start.line, rng.start.character, rng.end.line, rng.end.character]}

    # -- lookups
    def occurrence(self, uri: str, position: lsp.Position) -> tuple[Analysis, Occurrence | None]:
        analysis = self.current(uri)
        offset = LineMap(analysis.text, self.encoding).offset(position)
        return analysis, analysis.index.occurrence_at(analysis.shown, offset)

    def workspace_files(self) -> Iterator[Path]:
        roots = [Path(to_fs_path(f.uri) or f.uri) for f in self.workspace.folders.values()]
        if not roots and self.workspace.root_path:
            roots = [Path(self.workspace.root_path)]
        count = 0
        for root in roots:
            for path in sorted(root.rglob("*.world")):
                if any(part.startswith(".") or part == "node_modules" for part in path.parts):
                    continue
                count += 1
                if count > MAX_WORKSPACE_FILES:
                    return
                yield path

    def all_references(self, analysis: Analysis, sym: Symbol) -> list[tuple[Index, Occurrence]]:
        """The symbol's occurrences in the document's unit, then in other workspace files
        that use it (each checked with its own imports)."""
        index = analysis.index
        found = [(index, occ) for occ in index.references(sym.key)]
        if sym.kind in (Kind.LOCAL, Kind.PARAM):
            return found
        known = set(index.result.program.files)
        seen = {(occ.span.file, occ.span.start) for _, occ in found}
        for path in self.workspace_files():
            if shown_path(path) in known:
                continue
            other = self._workspace_index(path.resolve(), sym.name)
            if other is None:
                continue
            for occ in other.references(sym.key):
                if (occ.span.file, occ.span.start) not in seen:
                    seen.add((occ.span.file, occ.span.start))
                    found.append((other, occ))
        return found

    def importers(self, files: set[str]) -> list[str]:
        """Workspace files (not open in the editor's unit) whose imports reach ``files``."""
        out = []
        for path in self.workspace_files():
            shown = shown_path(path)
            if shown in files:
                continue
            index = self._workspace_index(path.resolve(), "import")
            if index is not None and files & set(index.result.program.files):
                out.append(shown)
        return out

    def read_text(self, path: Path) -> str | None:
        """A file's text: the editor's buffer when it is open, else the disk's."""
        text = self._open_text(path.resolve())
        if text is None:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
        return text

    def _workspace_index(self, path: Path, name: str) -> Index | None:
        """The index of a workspace file that mentions ``name`` (None when it does not)."""
        text = self.read_text(path)
        if text is None or name not in text:
            return None
        cached = self._workspace_cache.get(path)
        if cached is not None and cached[0] == text:
            return cached[1]
        index = self.analyser.analyse(path, text, incremental=False).index
        self._workspace_cache[path] = (text, index)
        return index


def _explanations(analysis: Analysis, offset: int) -> str:
    """What the diagnostics under the cursor mean (``worldspec explain``), as markdown."""
    parts = []
    for d in analysis.diagnostics:
        entry = CATALOG.get(d.code)
        if entry is None or not d.span.start <= offset <= max(d.span.end, d.span.start + 1):
            continue
        parts.append(f"**{d.code}: {entry.title}**\n\n{entry.explanation}\n\n"
                     f"```worldspec\n{entry.example}\n```")
    return "\n\n---\n\n".join(parts) + ("\n\n---\n\n" if parts else "")


def _word_at(text: str, offset: int) -> tuple[str, bool]:
    """The identifier around ``offset`` and whether a dot is right before it."""
    start = offset
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    end = offset
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    return text[start:end], start > 0 and text[start - 1] == "."


def build_server() -> WorldSpecServer:
    """A server with every feature registered."""
    server = WorldSpecServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: WorldSpecServer, params: lsp.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict) and isinstance(options.get("diagnosticsUrl"), str):
            ls.docs_url = options["diagnosticsUrl"] or None
        encoding = ls.workspace.position_encoding
        ls.encoding = getattr(encoding, "value", encoding) or "utf-16"

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: WorldSpecServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.open(params.text_document.uri)
        ls.schedule(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: WorldSpecServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: WorldSpecServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: WorldSpecServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)
        ls.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: WorldSpecServer, params: lsp.HoverParams) -> lsp.Hover | None:
        analysis, occ = ls.occurrence(params.text_document.uri, params.position)
        lines = LineMap(analysis.text, ls.encoding)
        offset = lines.offset(params.position)
        explained = _explanations(analysis, offset)
        if occ is not None:
            return lsp.Hover(lsp.MarkupContent(
                lsp.MarkupKind.Markdown, explained + hover_text(analysis.index, occ)),
                lines.span_range(occ.span))
        word, after_dot = _word_at(analysis.text, offset)
        text = explained + (builtin_hover(word, after_dot) or "" if word else "")
        return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, text)) if text else None

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: WorldSpecServer, params: lsp.DefinitionParams) -> list[lsp.Location]:
        analysis, occ = ls.occurrence(params.text_document.uri, params.position)
        if occ is None:
            return []
        return [ls.location(analysis.index, occ.symbol.span)]

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    def references(ls: WorldSpecServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
        analysis, occ = ls.occurrence(params.text_document.uri, params.position)
        if occ is None:
            return []
        found = ls.all_references(analysis, occ.symbol)
        return [ls.location(index, o.span) for index, o in found
                if params.context.include_declaration or not o.is_definition]

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(ls: WorldSpecServer,
                       params: lsp.PrepareRenameParams) -> lsp.PrepareRenamePlaceholder | None:
        analysis, occ = ls.occurrence(params.text_document.uri, params.position)
        if occ is None:
            return None
        lines = LineMap(analysis.text, ls.encoding)
        return lsp.PrepareRenamePlaceholder(lines.span_range(occ.span), occ.symbol.name)

    @server.feature(lsp.TEXT_DOCUMENT_RENAME)
    def rename(ls: WorldSpecServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
        analysis, occ = ls.occurrence(params.text_document.uri, params.position)
        if occ is None:
            raise RequestFailed("nothing to rename here: put the cursor on a declared name")
        problem = rename_problem(analysis.index, occ.symbol, params.new_name)
        if problem is not None:
            raise RequestFailed(problem)
        found = ls.all_references(analysis, occ.symbol)
        by_file: dict[str, list[tuple[int, int]]] = {}
        texts: dict[str, str] = {}
        for index, o in found:
            by_file.setdefault(o.span.file, []).append((o.span.start, o.span.end))
            source = index.result.program.files.get(o.span.file)
            if source is not None:
                texts[o.span.file] = source.text
        problem = _breaks_unit(ls, analysis, by_file, texts, params.new_name)
        if problem is not None:
            raise RequestFailed(problem)
        changes: dict[str, list[lsp.TextEdit]] = {}
        for file, spans in by_file.items():
            lines = LineMap(texts.get(file, ""), ls.encoding)
            changes[ls.uri_of(file)] = [lsp.TextEdit(lines.range(a, b), params.new_name)
                                        for a, b in sorted(set(spans))]
        return lsp.WorkspaceEdit(changes=changes)

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION,
                    lsp.CompletionOptions(trigger_characters=["."]))
    def completion(ls: WorldSpecServer, params: lsp.CompletionParams) -> lsp.CompletionList:
        uri = params.text_document.uri
        analysis = ls.current(uri)
        offset = LineMap(analysis.text, ls.encoding).offset(params.position)
        ctx = completion_context(analysis.text, offset)
        index = analysis.index
        at = offset
        if ctx.dot_at is not None:
            # `obj.` does not parse: check the text without `.partial` to learn obj's type
            repaired = analysis.text[:ctx.dot_at] + analysis.text[offset:]
            attempt = ls.analyser.analyse(analysis.path, repaired)
            if attempt.parsed_ok:
                index = attempt.index
            else:
                good = ls.documents[uri].last_good
                if good is not None and good.text[:ctx.dot_at] == analysis.text[:ctx.dot_at]:
                    index = good.index
        elif not analysis.parsed_ok:
            good = ls.documents[uri].last_good
            if good is not None and good.text[:offset - len(ctx.prefix)] == \
                    analysis.text[:offset - len(ctx.prefix)]:
                index, at = good.index, offset - len(ctx.prefix)
        items = completions(index, analysis.shown, at, ctx)
        return lsp.CompletionList(is_incomplete=False, items=items)

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(ls: WorldSpecServer,
                        params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        analysis = ls.current(params.text_document.uri)
        lines = LineMap(analysis.text, ls.encoding)
        return outline(analysis.index, analysis.shown, lines.span_range)

    @server.feature(lsp.TEXT_DOCUMENT_FOLDING_RANGE)
    def folding_range(ls: WorldSpecServer,
                      params: lsp.FoldingRangeParams) -> list[lsp.FoldingRange]:
        """Every declaration, and every block inside one, that spans lines."""
        analysis = ls.current(params.text_document.uri)
        source = analysis.semantic.program.files.get(analysis.shown)
        if source is None:
            return []
        ranges = []
        for decl in source.module.decls:
            for node in n.walk(decl):
                if (node is decl or isinstance(node, (n.Block, n.StateDecl, n.ConfigDecl,
                                                      n.Given))) and \
                        node.span.end_line > node.span.line:
                    ranges.append(lsp.FoldingRange(start_line=node.span.line - 1,
                                                   end_line=node.span.end_line - 1))
        return ranges

    @server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
    def formatting(ls: WorldSpecServer,
                   params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit] | None:
        analysis = ls.current(params.text_document.uri)
        formatted = format_source(analysis.text, analysis.shown)
        if formatted is None:
            ls.window_show_message(lsp.ShowMessageParams(
                lsp.MessageType.Warning, "not formatted: the file has syntax errors"))
            return None
        if formatted == analysis.text:
            return []
        lines = LineMap(analysis.text, ls.encoding)
        return [lsp.TextEdit(lines.range(0, len(analysis.text)), formatted)]

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix]))
    def code_action(ls: WorldSpecServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        actions = []
        for diag in params.context.diagnostics:
            data = diag.data
            if not isinstance(data, dict) or "candidates" not in data:
                continue
            a, b, c, d = data["range"]
            rng = lsp.Range(lsp.Position(a, b), lsp.Position(c, d))
            for i, candidate in enumerate(data["candidates"]):
                actions.append(lsp.CodeAction(
                    title=f"Change '{data['name']}' to '{candidate}'",
                    kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag], is_preferred=i == 0,
                    edit=lsp.WorkspaceEdit(changes={params.text_document.uri: [
                        lsp.TextEdit(rng, candidate)]})))
        return actions

    return server


def _breaks_unit(ls: WorldSpecServer, analysis: Analysis, by_file: dict[str, list[tuple[int, int]]],
                 texts: dict[str, str], new_name: str) -> str | None:
    """Check, with the rename applied, the document's unit and every other edited file's
    (a task file that imports the world, say): a rename that brings an error a unit did not
    have (a clash the name rules missed, a name now read differently, data that no longer
    fits) is refused."""
    edited: dict[str, str] = {}
    for file, spans in by_file.items():
        text = texts.get(file)
        if text is None:
            continue
        for a, b in sorted(set(spans), reverse=True):
            text = text[:a] + new_name + text[b:]
        edited[file] = text

    def renamed_overlay(path: Path) -> str | None:
        return edited.get(shown_path(path), ls._open_text(path))

    unit = set(analysis.result.program.files)
    roots = [analysis.shown, *sorted(f for f in edited if f not in unit)]
    roots += [f for f in ls.importers(set(edited)) if f not in roots]
    for root in roots[:MAX_RENAME_CHECKS]:
        path = analysis.path if root == analysis.shown else Path(root)
        original = analysis.text if root == analysis.shown else texts.get(root)
        if original is None:
            original = ls.read_text(path)
            if original is None:
                continue
        cache = ParseCache()
        before_result = (analysis.result if root == analysis.shown else
                         check_unit(original, path, cache, ls._open_text))
        after_result = check_unit(edited.get(root, original), path, cache, renamed_overlay)
        before = Counter(d.code for d in before_result.diagnostics
                         if d.severity is Severity.ERROR)
        after = Counter(d.code for d in after_result.diagnostics if d.severity is Severity.ERROR)
        for d in after_result.diagnostics:
            if d.severity is Severity.ERROR and after[d.code] > before[d.code]:
                return (f"cannot rename to '{new_name}': the spec would no longer check "
                        f"({d.code} at {d.span}: {d.message})")
    return None


def serve(start: Callable[[WorldSpecServer], None] | None = None) -> None:
    """Run the server on stdin/stdout until the client exits."""
    server = build_server()
    if start is not None:
        start(server)
    server.start_io(cast(BinaryIO, FrameReader(sys.stdin.buffer)), sys.stdout.buffer)
