"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, for tests that must not need a model.

The real ``openai`` SDK (through :class:`worldspec.services.model_client.LLMClient`) is
pointed at it, so requests and responses cross a real socket in the real wire
format. Standard library only.

Scripting chat answers (``POST /v1/chat/completions``), in order of precedence:

- ``server.responder = fn``: ``fn(request) -> Reply | str`` answers every chat
  request; it sees the :class:`RecordedRequest` (``messages``, ``body``,
  ``last_user``, ``system``) and can branch on it.
- ``server.push(reply, ...)``: a queue, one reply per request. A plain ``str``
  is a 200 answer with that text as the assistant's content.
- Nothing scripted: status 400 ``"no scripted reply left"`` (not retried, so a
  test that under-scripts fails fast and clearly).

A :class:`Reply` can also be an error (``status=429``, ``status=500``, with
``headers={"retry-after": "0"}``), a slow answer (``delay=`` seconds: longer
than the client's timeout makes a timeout), or a raw body (``raw=b"..."``, for a
malformed response).

Tool calls: ``Reply(tool_calls=[{"name": "login", "arguments": '{"phone": "..."}'}])``
answers with those calls (``arguments`` is sent as given: text, possibly malformed; an ``id``
may be given, else one is made up). The Responses API (``POST /v1/responses``) is answered
from the same script as chat, in the Responses wire format (``function_call`` items, then a
``message`` item with the text); ``server.responses_requests`` records those requests.

Embeddings (``POST /v1/embeddings``): replies pushed with ``push_embedding``
are used first (for errors); otherwise ``server.embedder(text)`` gives each
vector (default :func:`hashed_embedding`, a deterministic 8-dimensional vector).
Both ``encoding_format`` ``float`` and ``base64`` are served.

Every request is recorded in ``server.requests`` (thread-safe), chat ones also
in ``server.chat_requests``.

Fixtures (import them into a test module, or they come with ``tests/conftest.py``):

- ``llm_server``: a started :class:`ScriptedLLMServer`, closed after the test;
- ``llm_config``: an :class:`~worldspec.services.model_client.LLMConfig` pointed at it with a
  5 s timeout, 3 retries and millisecond backoff (a timeout test sets its own,
  shorter timeout with ``dataclasses.replace``).

Example::

    def test_retry(llm_server, llm_config):
        llm_server.push(Reply(status=429), "hello")
        result = asyncio.run(chat_once(llm_config))
        assert result.text == "hello" and len(llm_server.chat_requests) == 2
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # imported in the fixture, so collecting tests does not load the SDK
    from worldspec.services.model_client import LLMConfig

__all__ = ["RecordedRequest", "Reply", "ScriptedLLMServer", "hashed_embedding", "llm_config",
           "llm_server"]


@dataclass
class Reply:
    """One scripted answer."""

    content: str = ""
    status: int = 200
    #: seconds to wait before answering
    delay: float = 0.0
    prompt_tokens: int = 11
    completion_tokens: int = 7
    #: prompt tokens the server says it read from its cache (sent as
    #: ``usage.prompt_tokens_details.cached_tokens`` when not None)
    cached_tokens: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: the exact response body, sent as is (overrides everything but status and headers)
    raw: bytes | None = None
    error: str = "scripted error"
    finish_reason: str = "stop"
    #: tool calls to answer with: ``{"name": ..., "arguments": "<JSON text>", "id": ...}``
    tool_calls: list[dict[str, Any]] | None = None


@dataclass
class RecordedRequest:
    """A request the server received."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages = self.body.get("messages", [])
        return messages if isinstance(messages, list) else []

    @property
    def system(self) -> str:
        """The text of the first system message, or ``""``."""
        for message in self.messages:
            if message.get("role") == "system":
                return str(message.get("content", ""))
        return ""

    @property
    def last_user(self) -> str:
        """The text of the last user message, or ``""``."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return str(message.get("content", ""))
        return ""

    @property
    def text(self) -> str:
        """Every message's text, joined: handy for ``"marker" in request.text``."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)


Responder = Callable[[RecordedRequest], "Reply | str"]


def hashed_embedding(text: str, dims: int = 8) -> list[float]:
    """A deterministic unit-free vector for ``text``: equal texts, equal vectors."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [round((digest[i] - 127.5) / 127.5, 6) for i in range(dims)]


class ScriptedLLMServer:
    """An OpenAI-compatible server on a random local port that answers from a script."""

    def __init__(self, replies: Iterable[Reply | str] = (), *,
                 responder: Responder | None = None,
                 embedder: Callable[[str], list[float]] = hashed_embedding) -> None:
        self.responder = responder
        self.embedder = embedder
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Reply | str] = deque(replies)
        self._embedding_queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -------------------------------------------------------- control
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL to give the client: ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def responses_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/responses")]

    def push(self, *replies: Reply | str) -> None:
        """Queue chat replies, answered in order."""
        with self._lock:
            self._queue.extend(replies)

    def push_embedding(self, *replies: Reply) -> None:
        """Queue embedding replies (errors, delays) used before :attr:`embedder`."""
        with self._lock:
            self._embedding_queue.extend(replies)

    def start(self) -> ScriptedLLMServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------- answering
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_chat(self, request: RecordedRequest) -> Reply:
        if self.responder is not None:
            answer = self.responder(request)
        else:
            with self._lock:
                answer = self._queue.popleft() if self._queue else \
                    Reply(status=400, error="no scripted reply left")
        return Reply(content=answer) if isinstance(answer, str) else answer

    def _next_embedding(self) -> Reply | None:
        with self._lock:
            return self._embedding_queue.popleft() if self._embedding_queue else None

    def wait(self, seconds: float) -> None:
        """Sleep, but wake up when the server closes."""
        self._closing.wait(seconds)


def _scripted_calls(reply: Reply) -> list[tuple[str, str, str]]:
    """``(id, name, arguments text)`` of each scripted tool call."""
    calls = []
    for index, call in enumerate(reply.tool_calls or []):
        arguments = call.get("arguments", "{}")
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        calls.append((str(call.get("id") or f"call_{index}_{time.monotonic_ns()}"),
                      str(call.get("name", "")), text))
    return calls


def _chat_body(request: RecordedRequest, reply: Reply) -> dict[str, Any]:
    if reply.tool_calls:
        message: dict[str, Any] = {
            "role": "assistant", "content": reply.content or None,
            "tool_calls": [{"id": i, "type": "function",
                            "function": {"name": n, "arguments": a}}
                           for i, n, a in _scripted_calls(reply)]}
        finish = "tool_calls" if reply.finish_reason == "stop" else reply.finish_reason
    else:
        message = {"role": "assistant", "content": reply.content}
        finish = reply.finish_reason
    return {
        "id": f"chatcmpl-{len(reply.content)}-{int(time.time() * 1000)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(request.body.get("model", "scripted")),
        "choices": [{"index": 0, "finish_reason": finish, "logprobs": None,
                     "message": message}],
        "usage": {"prompt_tokens": reply.prompt_tokens,
                  "completion_tokens": reply.completion_tokens,
                  "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                  **({} if reply.cached_tokens is None else
                     {"prompt_tokens_details": {"cached_tokens": reply.cached_tokens}})},
    }


def _responses_body(request: RecordedRequest, reply: Reply) -> dict[str, Any]:
    output: list[dict[str, Any]] = [
        {"type": "function_call", "id": f"fc_{i}", "call_id": i, "name": n, "arguments": a,
         "status": "completed"} for i, n, a in _scripted_calls(reply)]
    if reply.content or not output:
        output.append({"type": "message", "id": f"msg_{time.monotonic_ns()}",
                       "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": reply.content,
                                    "annotations": []}]})
    return {
        "id": f"resp_{time.monotonic_ns()}", "object": "response",
        "created_at": int(time.time()), "status": "completed",
        "model": str(request.body.get("model", "scripted")), "output": output,
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": reply.prompt_tokens, "output_tokens": reply.completion_tokens,
                  "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }


def _embedding_body(server: ScriptedLLMServer, request: RecordedRequest) -> dict[str, Any]:
    raw = request.body.get("input", [])
    texts = [raw] if isinstance(raw, str) else [str(t) for t in raw]
    encode_base64 = request.body.get("encoding_format") == "base64"
    data = []
    for index, text in enumerate(texts):
        vector = server.embedder(text)
        embedding: Any = vector
        if encode_base64:
            embedding = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
        data.append({"object": "embedding", "index": index, "embedding": embedding})
    tokens = sum(max(1, len(t.split())) for t in texts)
    return {"object": "list", "model": str(request.body.get("model", "scripted")), "data": data,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def _handler_for(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: tests read ``server.requests`` instead."""

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to do

        def _answer(self, reply: Reply, ok_body: Callable[[], dict[str, Any]]) -> None:
            if reply.delay:
                server.wait(reply.delay)
            if reply.raw is not None:
                body = reply.raw
            elif reply.status >= 400:
                body = json.dumps({"error": {"message": reply.error, "type": "scripted",
                                             "code": str(reply.status)}}).encode()
            else:
                body = json.dumps(ok_body()).encode()
            self._send(reply.status, body, reply.headers)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            request = RecordedRequest(self.path, body if isinstance(body, dict) else {},
                                      {k.lower(): v for k, v in self.headers.items()})
            server._record(request)
            if self.path.endswith("/chat/completions"):
                reply = server._next_chat(request)
                self._answer(reply, lambda: _chat_body(request, reply))
            elif self.path.endswith("/responses"):
                reply = server._next_chat(request)
                self._answer(reply, lambda: _responses_body(request, reply))
            elif self.path.endswith("/embeddings"):
                scripted = server._next_embedding() or Reply()
                self._answer(scripted, lambda: _embedding_body(server, request))
            else:
                self._send(404, b'{"error": {"message": "not found"}}', {})

    return Handler


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A started scripted server, closed after the test."""
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture
def llm_config(llm_server: ScriptedLLMServer) -> LLMConfig:
    """A client config for :func:`llm_server`: 5 s timeout, 3 retries, tiny backoff."""
    from worldspec.services.model_client import LLMConfig

    return LLMConfig(base_url=llm_server.url, model="scripted-model", api_key="test-key",
                     timeout=5.0, max_retries=3, concurrency=4, backoff_base=0.01,
                     backoff_max=0.05)
