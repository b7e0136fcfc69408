"""Serving an MCP server over streamable HTTP (the SDK's session manager, under uvicorn).

``/mcp`` (the SDK's default path) serves the table's default episode; ``/episodes/{id}/mcp``
serves a created episode (an id the table does not hold answers 404 before any MCP is read);
the control surface (:mod:`worldspec.serve.control`) creates, resets, scores and deletes them.
Both MCP revisions are spoken: a 2026-07-28 request stands alone, a 2025 client initializes
and gets an ``Mcp-Session-Id`` (a transport session only: the episode is the endpoint's),
closed once idle for ``idle_timeout`` seconds (its id then answers 404). A request body over
``max_body`` bytes gets 413 before anything is parsed, and one that is not JSON the server can
read (invalid UTF-8, nested too deep, a number too long to convert) gets 400 with a JSON-RPC
parse error, never 500. On a loopback address, requests whose ``Host`` or ``Origin`` is not
loopback are refused (DNS-rebinding protection). A client that disconnects is no error: the
SDK's log of it is kept out of the server's stderr.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import Message, Receive, Scope, Send

from worldspec.serve.control import control_routes
from worldspec.serve.episodes import EpisodeTable
from worldspec.serve.mcp_server import EPISODE_PATH_PARAM

__all__ = ["MCP_PATH", "EPISODE_MCP_PATH", "http_app", "serve_http", "listening_socket",
           "LOOPBACK"]

MCP_PATH = "/mcp"
EPISODE_MCP_PATH = f"/episodes/{{{EPISODE_PATH_PARAM}}}/mcp"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class _Endpoint:
    """The ASGI endpoint that hands every request to the session manager, after reading a
    POST body whole (at most ``max_body`` bytes) and refusing one that is not readable JSON."""

    def __init__(self, manager: StreamableHTTPSessionManager, max_body: int) -> None:
        self.manager = manager
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "POST":
            await _hand_over(self.manager, scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            if len(body) > self.max_body:
                await _refuse(send, 413, -32600, f"the request body is over {self.max_body} "
                                                 "bytes")
                return
            if not message.get("more_body", False):
                break
        problem = _unreadable_json(bytes(body))
        if problem is not None:
            await _refuse(send, 400, -32700, f"Parse error: {problem}")
            return
        await _hand_over(self.manager, scope, _replay(bytes(body), receive), send)


async def _hand_over(manager: StreamableHTTPSessionManager, scope: Scope, receive: Receive,
                     send: Send) -> None:
    """The session manager's handling of a request, less the errors of a client that went
    away: when a client drops its connection mid-call, the SDK's writer finds its stream
    closed and then tries to answer 500 on a response already completed; neither is the
    server's problem, and uvicorn would log both with a traceback."""
    completed = False

    async def tracked(message: Message) -> None:
        nonlocal completed
        if completed:
            return  # the response is over: a late answer has no one to go to
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            completed = True
        await send(message)

    try:
        await manager.handle_request(scope, receive, tracked)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        return
    except RuntimeError:
        if not completed:
            raise


def _unreadable_json(body: bytes) -> str | None:
    """Why ``body`` is not JSON this server can read, or None (an empty body is left to the
    SDK, which answers it as the protocol says)."""
    if not body:
        return None
    try:
        json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        return "the body is not UTF-8"
    except RecursionError:
        return "the JSON is nested too deeply"
    except ValueError as exc:  # not JSON, or an integer over Python's digit limit
        return str(exc)
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` again, then whatever the client sends next."""
    given = False

    async def again() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


async def _refuse(send: Send, status: int, code: int, message: str) -> None:
    """Answer with ``status`` and a JSON-RPC error (its id unknown: the request was not read)."""
    payload = json.dumps({"jsonrpc": "2.0", "id": None,
                          "error": {"code": code, "message": message}}).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(payload)).encode("ascii"))]})
    await send({"type": "http.response.body", "body": payload})


class _EpisodeEndpoint(_Endpoint):
    """A created episode's endpoint: 404 when the table does not hold it."""

    def __init__(self, manager: StreamableHTTPSessionManager, table: EpisodeTable,
                 max_body: int) -> None:
        super().__init__(manager, max_body)
        self.table = table

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        episode_id = scope.get("path_params", {}).get(EPISODE_PATH_PARAM, "")
        if self.table.get(episode_id) is None:
            gone = JSONResponse({"error": f"no episode {episode_id} (never created, deleted, "
                                          "or expired after being idle)"}, status_code=404)
            await gone(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


class _QuietDisconnects(logging.Filter):
    """Drops the SDK's error records for a client that went away (its stream closed)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, anyio.ClosedResourceError | anyio.BrokenResourceError)


def _log_sdk_quietly() -> None:
    """The SDK's warnings and errors on stderr, less those of clients that went away."""
    handler = logging.StreamHandler()
    handler.setLevel(logging.WARNING)
    handler.addFilter(_QuietDisconnects())
    sdk = logging.getLogger("mcp")
    sdk.addHandler(handler)
    sdk.propagate = False


def _security(host: str) -> TransportSecuritySettings:
    if host not in LOOPBACK:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = ["127.0.0.1", "localhost", "[::1]"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[h for name in hosts for h in (name, f"{name}:*")],
        allowed_origins=[f"{scheme}://{name}{port}" for scheme in ("http", "https")
                         for name in hosts for port in ("", ":*")])


def http_app(server: Server[Any], episodes: EpisodeTable, *, host: str = "127.0.0.1",
             idle_timeout: float = 600.0, max_body: int = 1 << 20,
             instructions: Callable[[str | None], str] | None = None) -> Starlette:
    """A Starlette app serving ``server`` at :data:`MCP_PATH` (the default episode) and
    :data:`EPISODE_MCP_PATH` (created ones), with the control surface over ``episodes``;
    ``instructions(task)`` is the agent's system prompt the control surface answers for a
    created episode (default: the server's own instructions)."""
    security = _security(host)
    manager = StreamableHTTPSessionManager(
        app=server, security_settings=security, session_idle_timeout=idle_timeout,
        max_request_body_size=max_body)
    prompt = instructions or (lambda _task: server.instructions or "")

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    methods = ["GET", "POST", "DELETE"]
    routes: list[BaseRoute] = [
        Route(MCP_PATH, endpoint=_Endpoint(manager, max_body), methods=methods),
        Route(EPISODE_MCP_PATH, endpoint=_EpisodeEndpoint(manager, episodes, max_body),
              methods=methods),
        *control_routes(episodes, security=TransportSecurityMiddleware(security),
                        instructions=prompt, max_body=max_body),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket listening on ``host``:``port`` (0: a free port) whose connections, once
    accepted by asyncio, send without delay (TCP_NODELAY).

    Its proto is IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on accepted sockets whose
    proto says TCP. Without it a response written in two segments (head, then body) waits on
    the client's delayed ACK (Nagle's algorithm): ~40 ms a call."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


def serve_http(app: Starlette, *, host: str, port: int,
               ready: Callable[[str], None] | None = None) -> None:
    """Run ``app`` until interrupted; ``ready`` gets the URL once the socket listens (with
    the real port when ``port`` is 0)."""
    sock = listening_socket(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    _log_sdk_quietly()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    http_server = uvicorn.Server(config)
    if ready is not None:
        ready(f"http://{shown}:{bound}{MCP_PATH}")
    http_server.run(sockets=[sock])
