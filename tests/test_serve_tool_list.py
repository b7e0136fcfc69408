"""``tools/list`` answered from its wire form (``ToolListAnswers``): exactly the SDK's own answer.

The SDK 2.x lists a server's tools before every ``tools/call`` (to check ``Mcp-Param-*``
headers), so the server keeps the listing's wire form, made once per protocol revision by the
handler and the SDK. These tests hold it to what an uncached server answers, with the SDK's own
in-process client, and show the cache is what answers the second time.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

if os.environ.get("CI") == "true":
    import mcp  # noqa: F401  (CI installs the serve extra: these tests must run there)
else:
    pytest.importorskip("mcp")

from mcp.client import Client

from worldspec.serve.mcp_server import ToolListAnswers, build_server
from worldspec.services.loading import load_package

ROOT = Path(__file__).resolve().parents[1]
World: Any = load_package(ROOT / "generated" / "mobile_messaging").World
TASK = "reply_to_priya"
LOGIN = {"phone": "+14155550101", "password": "sunflower42"}


async def _listings_and_a_call(server: Any) -> tuple[list[Any], list[Any], str]:
    async with Client(server) as client:
        first = (await client.list_tools()).tools
        again = (await client.list_tools()).tools
        called = await client.call_tool("login", LOGIN)
        text = getattr(called.content[0], "text", "")
        assert not called.is_error, text
        return first, again, text


def test_cached_listings_are_the_uncached_servers_answer() -> None:
    cached = build_server(World, task=TASK)
    plain = build_server(World, task=TASK)
    plain.middleware = [m for m in plain.middleware if not isinstance(m, ToolListAnswers)]
    answers = next(m for m in cached.middleware if isinstance(m, ToolListAnswers)).answers

    first, again, text = asyncio.run(asyncio.wait_for(_listings_and_a_call(cached), 60))
    reference, _, reference_text = asyncio.run(asyncio.wait_for(_listings_and_a_call(plain), 60))

    assert len(answers) == 1  # one protocol revision spoken, one wire form kept
    assert [t.model_dump() for t in first] == [t.model_dump() for t in reference]
    assert [t.model_dump() for t in again] == [t.model_dump() for t in reference]
    assert [t.name for t in first] == [d["function"]["name"] for d in World(task=TASK).tools()]
    assert text == reference_text

