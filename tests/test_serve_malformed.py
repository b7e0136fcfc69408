"""Malformed bodies sent to ``worldspec serve --transport http`` get a 4xx, never 500.

Raw HTTP against the real server process on loopback: a body nested 100,000 deep (the JSON
reader's RecursionError), an id of 5,000 digits (Python's integer conversion limit) and
invalid UTF-8 once answered 500; each is a client's mistake, so it is a 400 with a JSON-RPC
parse error, and the server keeps serving a well-formed session afterwards.
"""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")
httpx = pytest.importorskip("httpx")

from test_serve_mcp import _ACCEPT, _INITIALIZE, _http_server  # noqa: E402

_HEADERS = {**_ACCEPT, "Content-Type": "application/json"}
_INITIALIZE_TEXT = ('"method":"initialize","params":{"protocolVersion":"2025-06-18",'
                    '"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}')

MALFORMED = {
    "nested-100k": (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":'
                    + b"[" * 100_000 + b"]" * 100_000 + b"}"),
    "id-of-5000-digits": ('{"jsonrpc":"2.0","id":' + "9" * 5000 + "," + _INITIALIZE_TEXT
                          ).encode(),
    "invalid-utf8": b'{"jsonrpc":"2.0","id":1,"method":"ping","x":"\xff\xfe"}',
    "truncated": b'{"jsonrpc":"2.0","id":1,"meth',
}


def test_malformed_bodies_get_4xx_and_the_server_keeps_serving() -> None:
    with _http_server() as url:
        opened = httpx.post(url, json=_INITIALIZE, headers=_ACCEPT, timeout=30)
        assert opened.status_code == 200
        session = {**_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
        for name, body in MALFORMED.items():
            for headers in (_HEADERS, session):
                answer = httpx.post(url, content=body, headers=headers, timeout=30)
                assert answer.status_code == 400, (name, answer.status_code, answer.text)
                error = answer.json()["error"]
                assert error["code"] == -32700 and error["message"].startswith("Parse error")
        ping = httpx.post(url, json={"jsonrpc": "2.0", "id": 7, "method": "ping"},
                          headers=session, timeout=30)
        assert ping.status_code == 200 and '"id":7' in ping.text.replace(" ", "")
        # a created episode's endpoint, and a 2026-07-28 request, are refused alike
        base = url.removesuffix("/mcp")
        endpoint = base + httpx.post(f"{base}/episodes", json={}, timeout=30).json()["mcp"]
        modern = {**_HEADERS, "MCP-Protocol-Version": "2026-07-28"}
        for name, body in MALFORMED.items():
            answer = httpx.post(endpoint, content=body, headers=modern, timeout=30)
            assert answer.status_code == 400, (name, answer.status_code, answer.text)
            assert answer.json()["error"]["code"] == -32700
        # a well-formed id of ordinary size is still served
        again = httpx.post(url, content=('{"jsonrpc":"2.0","id":12345678901234567890,'
                                         + _INITIALIZE_TEXT).encode(),
                           headers=_HEADERS, timeout=30)
        assert again.status_code == 200
