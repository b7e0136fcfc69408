"""A real LSP client (pygls's) driving ``worldspec lsp`` over stdio, for the tests.

The tests are synchronous: :class:`LspSession` owns an event loop and runs each request to
completion on it. The server is the command users run (``python -m worldspec lsp``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")

#: how long to wait for the server before declaring it hung (a guard, not a measurement)
PATIENCE = 60.0


def uri_of(path: Path) -> str:
    uri = from_fs_path(str(path.resolve()))
    assert uri is not None
    return uri


class LspSession:
    """One server process and a client talking to it."""

    def __init__(self, workspace: Path, initialization_options: Any = None) -> None:
        self.loop = asyncio.new_event_loop()
        self.client = LanguageClient("worldspec-tests", "1")
        self.workspace = workspace
        self.options = initialization_options
        self.diagnostics: dict[str, list[lsp.PublishDiagnosticsParams]] = {}
        self.messages: list[lsp.ShowMessageParams] = []
        self.versions: dict[str, int] = {}

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
            self.diagnostics.setdefault(params.uri, []).append(params)

        @self.client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def on_message(params: lsp.ShowMessageParams) -> None:
            self.messages.append(params)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(asyncio.wait_for(coro, PATIENCE))

    def start(self) -> lsp.InitializeResult:
        self.run(self.client.start_io(sys.executable, "-m", "worldspec", "lsp",
                                      cwd=str(self.workspace)))
        result = self.run(self.client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(
                text_document=lsp.TextDocumentClientCapabilities(
                    publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(
                        related_information=True, code_description_support=True,
                        data_support=True))),
            root_uri=uri_of(self.workspace),
            workspace_folders=[lsp.WorkspaceFolder(uri_of(self.workspace), "workspace")],
            initialization_options=self.options)))
        self.client.initialized(lsp.InitializedParams())
        return result

    def stop(self) -> None:
        try:
            self.run(self.client.shutdown_async(None))
            self.client.exit(None)
            self.run(self.client.stop())
        finally:
            self.loop.close()

    # -- documents
    def open(self, path: Path, text: str | None = None) -> str:
        uri = uri_of(path)
        self.versions[uri] = 1
        self.diagnostics.pop(uri, None)
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri, "worldspec", 1,
                                 path.read_text(encoding="utf-8") if text is None else text)))
        return uri

    def change(self, uri: str, text: str, rng: lsp.Range | None = None) -> int:
        """Replace the whole text (or ``rng`` with ``text``); returns the new version."""
        version = self.versions[uri] + 1
        self.versions[uri] = version
        event: Any = (lsp.TextDocumentContentChangeWholeDocument(text) if rng is None else
                      lsp.TextDocumentContentChangePartial(range=rng, text=text))
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=version, uri=uri), [event]))
        return version

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(
            lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))

    def wait_diagnostics(self, uri: str, version: int | None = None) -> list[lsp.Diagnostic]:
        """The diagnostics published for ``uri`` (for ``version`` or later)."""
        async def wait() -> list[lsp.Diagnostic]:
            while True:
                for params in reversed(self.diagnostics.get(uri, [])):
                    if version is None or (params.version or 0) >= version:
                        return list(params.diagnostics)
                await asyncio.sleep(0.005)
        return self.run(wait())

    # -- requests
    def doc(self, uri: str) -> lsp.TextDocumentIdentifier:
        return lsp.TextDocumentIdentifier(uri)

    def hover(self, uri: str, line: int, character: int) -> lsp.Hover | None:
        return self.run(self.client.text_document_hover_async(lsp.HoverParams(
            self.doc(uri), lsp.Position(line, character))))

    def definition(self, uri: str, line: int, character: int) -> list[lsp.Location]:
        result = self.run(self.client.text_document_definition_async(lsp.DefinitionParams(
            self.doc(uri), lsp.Position(line, character))))
        if result is None:
            return []
        return [r for r in (result if isinstance(result, list) else [result])
                if isinstance(r, lsp.Location)]

    def references(self, uri: str, line: int, character: int,
                   declaration: bool = True) -> list[lsp.Location]:
        result = self.run(self.client.text_document_references_async(lsp.ReferenceParams(
            context=lsp.ReferenceContext(declaration), text_document=self.doc(uri),
            position=lsp.Position(line, character))))
        return list(result or [])

    def rename(self, uri: str, line: int, character: int, new: str) -> lsp.WorkspaceEdit | None:
        return self.run(self.client.text_document_rename_async(lsp.RenameParams(
            self.doc(uri), lsp.Position(line, character), new)))

    def completion(self, uri: str, line: int, character: int) -> list[lsp.CompletionItem]:
        result = self.run(self.client.text_document_completion_async(lsp.CompletionParams(
            self.doc(uri), lsp.Position(line, character))))
        if result is None:
            return []
        return list(result.items if isinstance(result, lsp.CompletionList) else result)

    def symbols(self, uri: str) -> list[lsp.DocumentSymbol]:
        result = self.run(self.client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(self.doc(uri))))
        return [s for s in result or [] if isinstance(s, lsp.DocumentSymbol)]

    def format(self, uri: str) -> list[lsp.TextEdit] | None:
        return self.run(self.client.text_document_formatting_async(lsp.DocumentFormattingParams(
            self.doc(uri), lsp.FormattingOptions(tab_size=2, insert_spaces=True))))

    def code_actions(self, uri: str, diagnostics: list[lsp.Diagnostic]) -> list[lsp.CodeAction]:
        rng = diagnostics[0].range if diagnostics else lsp.Range(lsp.Position(0, 0),
                                                                 lsp.Position(0, 0))
        result = self.run(self.client.text_document_code_action_async(lsp.CodeActionParams(
            self.doc(uri), rng, lsp.CodeActionContext(diagnostics))))
        return [a for a in result or [] if isinstance(a, lsp.CodeAction)]


def position_of(text: str, needle: str, occurrence: int = 0, delta: int = 0) -> tuple[int, int]:
    """The (line, character) of the ``occurrence``-th ``needle`` in ``text``, plus ``delta``
    characters (ASCII texts: characters are UTF-16 units)."""
    at = -1
    for _ in range(occurrence + 1):
        at = text.index(needle, at + 1)
    at += delta
    line = text.count("\n", 0, at)
    return line, at - (text.rfind("\n", 0, at) + 1)


def apply_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    """``text`` with LSP edits applied (ASCII texts)."""
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)

    def offset(p: lsp.Position) -> int:
        return min(starts[p.line] + p.character, len(text)) if p.line < len(starts) else len(text)

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text
