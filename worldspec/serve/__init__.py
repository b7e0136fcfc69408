"""Serving worlds to agent stacks: an MCP server over stdio or streamable HTTP.

A front end over the runtime only: a server given a generated package never loads the
compiler. :mod:`worldspec.serve.mcp_server` builds the server (one episode per MCP
session); :mod:`worldspec.serve.http` runs it over streamable HTTP. ``docs/serving.md``
says how clients and harnesses use it.
"""
