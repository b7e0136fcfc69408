"""Serving an MCP server over streamable HTTP (the SDK's session manager, under uvicorn).

The endpoint is the SDK's default path, ``/mcp``. Sessions are the SDK's: a client that
initializes gets an ``Mcp-Session-Id`` and its own episode; a session idle for
``idle_timeout`` seconds is closed (its id then answers 404); while ``max_sessions`` are
open a new one is refused with 503; a request body over ``max_body`` bytes gets 413 before
anything is parsed, and one that is not JSON the server can read (invalid UTF-8, nested too
deep, a number too long to convert) gets 400 with a JSON-RPC parse error, never 500. On a
loopback address, requests whose ``Host`` or ``Origin`` is not
loopback are refused (DNS-rebinding protection).
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

__all__ = ["MCP_PATH", "http_app", "serve_http", "LOOPBACK"]

MCP_PATH = "/mcp"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class _Endpoint:
    """The ASGI endpoint that hands every request to the session manager, after reading a
    POST body whole (at most ``max_body`` bytes) and refusing one that is not readable JSON."""

    def __init__(self, manager: StreamableHTTPSessionManager, max_body: int) -> None:
        self.manager = manager
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "POST":
            await self.manager.handle_request(scope, receive, send)
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
        await self.manager.handle_request(scope, _replay(bytes(body), receive), send)


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


def _security(host: str) -> TransportSecuritySettings:
    if host not in LOOPBACK:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = ["127.0.0.1", "localhost", "[::1]"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[h for name in hosts for h in (name, f"{name}:*")],
        allowed_origins=[f"{scheme}://{name}{port}" for scheme in ("http", "https")
                         for name in hosts for port in ("", ":*")])


def http_app(server: Server[Any, Any], *, host: str = "127.0.0.1", max_sessions: int = 64,
             idle_timeout: float = 600.0, max_body: int = 1 << 20) -> Starlette:
    """A Starlette app serving ``server`` at :data:`MCP_PATH`."""
    manager = StreamableHTTPSessionManager(
        app=server, security_settings=_security(host), session_idle_timeout=idle_timeout,
        max_sessions=max_sessions, max_request_body_size=max_body)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(routes=[Route(MCP_PATH, endpoint=_Endpoint(manager, max_body),
                                   methods=["GET", "POST", "DELETE"])],
                     lifespan=lifespan)


def serve_http(app: Starlette, *, host: str, port: int,
               ready: Callable[[str], None] | None = None) -> None:
    """Run ``app`` until interrupted; ``ready`` gets the URL once the socket listens (with
    the real port when ``port`` is 0)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    http_server = uvicorn.Server(config)
    if ready is not None:
        ready(f"http://{shown}:{bound}{MCP_PATH}")
    http_server.run(sockets=[sock])
