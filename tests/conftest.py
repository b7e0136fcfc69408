"""Fixtures shared by the test modules in this folder.

``llm_server`` and ``llm_config`` (a scripted OpenAI-compatible server on
127.0.0.1 and a client config pointed at it) are defined in
``tests/llm_server.py``; importing them here makes them available to every test.
"""

from __future__ import annotations

from llm_server import llm_config, llm_server

__all__ = ["llm_config", "llm_server"]
