"""Serving an MCP server over stdio: one process, one episode (the table's default one)."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

__all__ = ["serve_stdio"]


def serve_stdio(server: Server[Any]) -> None:
    """Serve until the client closes stdin."""

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)
