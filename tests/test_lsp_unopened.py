"""``worldspec lsp`` asked about a document the editor never opened.

A client may ask (a stale tab, a file deleted after a search) about a URI it never sent
``didOpen`` for. When the file is on disk the server reads it from there; when it is not, every
request is answered with a clear JSON-RPC error (``RequestFailed``) naming the document and the
reason, never an internal error with a Python traceback, and the server goes on answering.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from tests.lsp_support import LspSession, position_of, uri_of

WORLD = '''\
world Counter "A counter."

state {
  total: int = 0
}

tool increment(by: int "How much to add.") -> int "Add to the total." {
  total = total + by
  return total
}
'''

#: RequestFailed in the LSP specification
REQUEST_FAILED = -32803


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("unopened")
    (root / "counter.world").write_text(WORLD, encoding="utf-8")
    (root / "latin1.world").write_bytes(WORLD.replace("A counter.", "Caf\xe9").encode("latin-1"))
    return root


@pytest.fixture(scope="module")
def session(workspace: Path) -> Iterator[LspSession]:
    s = LspSession(workspace)
    s.start()
    yield s
    s.stop()


REQUESTS: dict[str, Callable[[LspSession, str], Any]] = {
    "hover": lambda s, uri: s.hover(uri, 6, 6),
    "definition": lambda s, uri: s.definition(uri, 7, 3),
    "references": lambda s, uri: s.references(uri, 7, 3),
    "completion": lambda s, uri: s.completion(uri, 7, 3),
    "symbols": lambda s, uri: s.symbols(uri),
    "format": lambda s, uri: s.format(uri),
    "rename": lambda s, uri: s.rename(uri, 7, 3, "sum"),
}


@pytest.mark.parametrize("request_name", sorted(REQUESTS))
def test_a_request_about_a_missing_unopened_file_fails_cleanly(
        session: LspSession, workspace: Path, request_name: str) -> None:
    uri = uri_of(workspace / "deleted.world")
    with pytest.raises(JsonRpcException) as raised:
        REQUESTS[request_name](session, uri)
    error = raised.value
    assert error.code == REQUEST_FAILED
    assert str(error.message) == (f"'{uri}' is not open in the editor and cannot be read (No "
                                  "such file or directory): open it first (textDocument/didOpen)")
    assert error.data is None
    counter = session.open(workspace / "counter.world")  # and the server goes on answering
    try:
        hover = session.hover(counter, *position_of(WORLD, "total = total", delta=1))
        assert hover is not None and "total" in str(hover.contents)
    finally:
        session.close(counter)


def test_a_folder_or_a_file_that_is_not_utf8_says_why(session: LspSession,
                                                       workspace: Path) -> None:
    with pytest.raises(JsonRpcException, match="cannot be read \\(Is a directory\\)"):
        session.hover(uri_of(workspace), 0, 0)
    with pytest.raises(JsonRpcException, match="cannot be read \\(it is not UTF-8 text\\)"):
        session.hover(uri_of(workspace / "latin1.world"), 0, 0)


def test_an_unopened_file_on_disk_is_read_from_there(session: LspSession,
                                                     workspace: Path) -> None:
    uri = uri_of(workspace / "counter.world")
    hover = session.hover(uri, *position_of(WORLD, "total = total", delta=1))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert "total" in hover.contents.value
    assert [s.name for s in session.symbols(uri)] == ["Counter", "total", "increment"]


def test_saving_a_missing_unopened_file_publishes_nothing_and_breaks_nothing(
        session: LspSession, workspace: Path) -> None:
    uri = uri_of(workspace / "gone.world")
    session.client.text_document_did_save(lsp.DidSaveTextDocumentParams(
        lsp.TextDocumentIdentifier(uri)))
    counter = session.open(workspace / "counter.world")
    try:
        assert session.wait_diagnostics(counter) == []
        assert session.symbols(counter)
    finally:
        session.close(counter)
    assert uri not in session.diagnostics
