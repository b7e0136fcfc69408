"""What arrives on the server's stdin, made safe: frames re-synchronised, unreadable requests
answered.

pygls reads a frame as ``Content-Length: N\\r\\n``, an empty line, then ``N`` bytes, and
nothing else: after one malformed header (``Content-Length: abc`` or ``-5``, no space after
the colon, a lowercase name, ``\\n`` line ends) it read the next frame's header as part of a
body and never answered again. :class:`FrameReader` sits between stdin and pygls: it accepts
the header in any letter case, with or without spaces and with ``\\r\\n`` or ``\\n`` line
ends, skips whatever cannot be a frame up to the next ``Content-Length`` header (logging what
it skipped), and hands pygls canonical frames only. A frame longer than :data:`MAX_FRAME`
bytes ends the session with a message on stderr, as the end of input does.

A request whose params do not fit the method (``params: null``, a ``line`` of ``-1``) fails
in pygls before any handler runs, so it was never answered; :class:`AnsweringProtocol`
answers it with the JSON-RPC error (``-32602 Invalid params``), as the protocol requires.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from dataclasses import dataclass
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol

__all__ = ["MAX_FRAME", "AnsweringProtocol", "FrameReader"]

logger = logging.getLogger(__name__)

#: the largest frame read; a client announcing more is not one to wait for
MAX_FRAME = 256 * 1024 * 1024

#: a frame's headers: ``Content-Length`` (any case, spaces optional), other header lines,
#: then the empty line; ``\r\n`` or ``\n`` line ends
_HEADERS = re.compile(rb"content-length[ \t]*:[ \t]*([0-9]+)[ \t]*\r?\n"
                      rb"(?:[A-Za-z0-9-]+[ \t]*:[^\r\n]*\r?\n)*\r?\n", re.IGNORECASE)
#: what a header may still become while more bytes are awaited (kept when skipping)
_TAIL = 4096
#: bytes asked from stdin at a time
_CHUNK = 65536


class FrameReader:
    """``stdin`` as pygls reads it (``readline`` for headers, ``read(n)`` for the body), with
    only well-formed frames in it."""

    def __init__(self, stdin: BinaryIO) -> None:
        self._stdin = stdin
        self._buffer = bytearray()
        self._lines: list[bytes] = []
        self._body = b""
        self._ended = False

    def readline(self) -> bytes:
        if not self._lines and not self._next_frame():
            return b""
        return self._lines.pop(0)

    def read(self, size: int) -> bytes:
        body, self._body = self._body[:size], self._body[size:]
        return body

    def _fill(self) -> bool:
        """Read more of stdin into the buffer; False at its end."""
        if self._ended:
            return False
        read1 = getattr(self._stdin, "read1", None)
        chunk = read1(_CHUNK) if read1 is not None else self._stdin.read(_CHUNK)
        if not chunk:
            self._ended = True
            return False
        self._buffer += chunk
        return True

    def _next_frame(self) -> bool:
        """Queue the next well-formed frame; False when input ends (or must end)."""
        while True:
            found = _HEADERS.search(self._buffer)
            if found is None:
                if len(self._buffer) > _TAIL:
                    self._skip(len(self._buffer) - _TAIL)
                if not self._fill():
                    return False
                continue
            if found.start():
                self._skip(found.start())
                continue
            length = int(found.group(1))
            if length > MAX_FRAME:
                sys.stderr.write(f"worldspec lsp: a frame of {length} bytes is over the "
                                 f"limit of {MAX_FRAME}; closing the connection\n")
                return False
            end = found.end() + length
            while len(self._buffer) < end:
                if not self._fill():
                    return False
            self._body = bytes(self._buffer[found.end():end])
            del self._buffer[:end]
            self._lines = [b"Content-Length: %d\r\n" % length, b"\r\n"]
            return True

    def _skip(self, count: int) -> None:
        skipped = bytes(self._buffer[:count])
        del self._buffer[:count]
        if skipped.strip():
            logger.warning("skipped %d bytes that are not a frame: %r", count, skipped[:80])


@dataclass(frozen=True, slots=True)
class _Answered:
    """What a request answered with an error becomes: pygls ignores a message whose
    ``jsonrpc`` is not ``2.0`` (with a warning in the log)."""

    method: str
    jsonrpc: str = "answered with an error"


class AnsweringProtocol(LanguageServerProtocol):
    """pygls's protocol, except that a request whose params cannot be read is answered with
    a JSON-RPC error instead of being dropped."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            request_id = data.get("id")
            if "method" not in data or not isinstance(request_id, int | str):
                raise
            self._answer_error(request_id, exc.CODE,
                               f"{exc.MESSAGE or 'Invalid request'} for "
                               f"'{data['method']}'")
            return _Answered(str(data["method"]))

    def _answer_error(self, request_id: int | str, code: int, message: str) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": request_id,
                           "error": {"code": code, "message": message}}).encode("utf-8")
        if self.writer is not None:
            self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
