"""Raw bytes to ``worldspec lsp``: malformed frames are skipped, unreadable requests answered.

The real server process over stdio, every read bounded by a deadline. pygls alone stopped
answering for good after one malformed header (the next frame's header was read as part of
a body), and dropped a request whose params did not fit (never answered).
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls")

ROOT = Path(__file__).resolve().parents[1]
PATIENCE = 30.0
URI = "file:///tmp/worldspec-wire-test/shop.world"
TEXT = 'world Shop "A shop."\n\nenum Colour { red, green }\n'
_FRAME = re.compile(rb"Content-Length: ([0-9]+)\r\n(?:[^\r\n]+\r\n)*\r\n")


def frame(message: dict[str, Any] | bytes, header: bytes | None = None) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return (header if header is not None else b"Content-Length: %d\r\n\r\n" % len(body)) + body


def request(number: int, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": number, "method": method, "params": params}


def hover(number: int, line: int = 2, character: int = 6) -> dict[str, Any]:
    return request(number, "textDocument/hover", {
        "textDocument": {"uri": URI}, "position": {"line": line, "character": character}})


class RawServer:
    """``python -m worldspec lsp`` with bytes in and parsed frames out."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen([sys.executable, "-m", "worldspec", "lsp"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=env)
        self.received = bytearray()
        self.messages: list[dict[str, Any]] = []

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def _parse(self) -> None:
        while (found := _FRAME.search(self.received)) is not None:
            end = found.end() + int(found.group(1))
            if len(self.received) < end:
                return
            self.messages.append(json.loads(self.received[found.end():end]))
            del self.received[:end]

    def answer(self, number: int, patience: float = PATIENCE) -> dict[str, Any] | None:
        """The response to request ``number``, or None when none came within ``patience``."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + patience
        while True:
            for message in self.messages:
                if message.get("id") == number and "method" not in message:
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.process.stdout], [], [], min(left, 0.2))
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                if not chunk:
                    return None
                self.received += chunk
                self._parse()

    def close(self) -> str:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=PATIENCE)
        assert self.process.stderr is not None
        return self.process.stderr.read().decode("utf-8", "replace")


@pytest.fixture
def server() -> Iterator[RawServer]:
    raw = RawServer()
    raw.send(frame(request(1, "initialize", {"processId": None, "rootUri": None,
                                              "capabilities": {}})))
    assert raw.answer(1) is not None, "the server did not initialize"
    raw.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    raw.send(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": URI, "languageId": "worldspec", "version": 1, "text": TEXT}}}))
    try:
        yield raw
    finally:
        raw.close()


def _body(number: int) -> bytes:
    return json.dumps(hover(number)).encode()


#: a frame whose header cannot be read, built around a hover request's body
MALFORMED: dict[str, Callable[[bytes], bytes]] = {
    "length-abc": lambda body: b"Content-Length: abc\r\n\r\n" + body,
    "length-negative": lambda body: b"Content-Length: -5\r\n\r\n" + body,
    "garbage-line": lambda body: b"hello there\r\n\r\n" + body,
}

#: a frame that is unusual but readable: it is answered
TOLERATED: dict[str, Callable[[bytes], bytes]] = {
    "no-space": lambda body: b"Content-Length:%d\r\n\r\n" % len(body) + body,
    "lowercase-name": lambda body: b"content-length: %d\r\n\r\n" % len(body) + body,
    "lf-separators": lambda body: b"Content-Length: %d\n\n" % len(body) + body,
    "with-content-type": lambda body: (b"Content-Length: %d\r\nContent-Type: application/"
                                       b"vscode-jsonrpc; charset=utf-8\r\n\r\n" % len(body)
                                       + body),
}


@pytest.mark.parametrize("kind", MALFORMED)
def test_a_malformed_frame_is_skipped_and_the_next_one_answered(kind: str,
                                                                server: RawServer) -> None:
    server.send(MALFORMED[kind](_body(10)))
    server.send(frame(hover(11)))
    answer = server.answer(11)
    assert answer is not None, f"no answer after a {kind} frame"
    assert "result" in answer and "Colour" in json.dumps(answer["result"])
    assert server.answer(10, patience=0.5) is None  # the malformed one was skipped


@pytest.mark.parametrize("kind", TOLERATED)
def test_an_unusual_but_readable_frame_is_answered(kind: str, server: RawServer) -> None:
    server.send(TOLERATED[kind](_body(20)))
    answer = server.answer(20)
    assert answer is not None and "Colour" in json.dumps(answer["result"])
    server.send(frame(hover(21)))
    assert server.answer(21) is not None


@pytest.mark.parametrize("params", [
    None,
    {"textDocument": {"uri": URI}, "position": {"line": -1, "character": 0}},
    {"textDocument": {"uri": URI}},
    [1, 2, 3],
], ids=["null", "line-minus-one", "no-position", "a-list"])
def test_a_request_with_invalid_params_gets_an_error_response(params: Any,
                                                              server: RawServer) -> None:
    server.send(frame(request(30, "textDocument/hover", params)))
    answer = server.answer(30)
    assert answer is not None, "an invalid request was never answered"
    assert answer["error"]["code"] == -32602
    assert "textDocument/hover" in answer["error"]["message"]
    server.send(frame(hover(31)))
    good = server.answer(31)
    assert good is not None and "Colour" in json.dumps(good["result"])


def test_a_frame_over_the_limit_ends_the_session_with_a_message(server: RawServer) -> None:
    server.send(b"Content-Length: 99999999999\r\n\r\n{}")
    assert server.process.stdin is not None
    server.process.wait(timeout=PATIENCE)
    assert "over the limit" in server.close()
