"""The harness's control surface over HTTP: plain JSON routes that manage episodes.

The agent talks MCP to an episode's endpoint; the harness, which the agent never sees,
manages the episodes here:

=========================================  ===============================================
``POST /episodes`` ``{task, seed, data}``  create one (all three optional): 201 with its
                                           ``id``, its MCP endpoint ``mcp``, its ``instructions``
                                           (the agent's system prompt) and its info
``GET /episodes``                          the open episodes' ids and the limit
``GET /episodes/{id}``                     world, task, seed, state hash, calls
``POST /episodes/{id}/reset`` ``{...}``    start it over (as creating), answers its info
``POST /episodes/{id}/score`` ``{replies}``  the task's reward, per-check breakdown, frame
``GET /episodes/{id}/state``               the whole state
``DELETE /episodes/{id}``                  drop it: 204
``GET /tasks``                             the world's tasks
=========================================  ===============================================

The id ``default`` names the episode ``/mcp`` serves (it can be reset and scored, not
deleted). Errors are JSON ``{"error": message}``: 400 for a body or argument that does not
fit, 404 for an episode that does not exist (never created, deleted, expired), 413 for a body
over the limit, 503 when ``max_episodes`` are open.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from worldspec.serve.episodes import (
    DEFAULT_EPISODE,
    ControlError,
    EpisodeHost,
    EpisodeLimitError,
    EpisodeTable,
    task_list,
)

__all__ = ["control_routes", "episode_path"]

Handler = Callable[[Request], Awaitable[Response]]


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def episode_path(episode_id: str) -> str:
    """The MCP endpoint of an episode (``/mcp`` for the default one)."""
    return "/mcp" if episode_id == DEFAULT_EPISODE else f"/episodes/{episode_id}/mcp"


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _body(request: Request, max_body: int, allowed: frozenset[str]) -> dict[str, Any]:
    """The request's JSON object (empty body: ``{}``), its keys among ``allowed``."""
    raw = bytearray()
    async for chunk in request.stream():
        raw.extend(chunk)
        if len(raw) > max_body:
            raise _BadRequest(413, f"the body is over {max_body} bytes")
    if not raw.strip():
        return {}
    try:
        loaded = json.loads(bytes(raw).decode("utf-8"))
    except UnicodeDecodeError:
        raise _BadRequest(400, "the body is not UTF-8") from None
    except RecursionError:
        raise _BadRequest(400, "the body is nested too deeply") from None
    except ValueError as exc:
        raise _BadRequest(400, f"the body is not valid JSON: {exc}") from None
    if not isinstance(loaded, dict):
        raise _BadRequest(400, "the body must be a JSON object")
    unknown = sorted(set(loaded) - allowed)
    if unknown:
        raise _BadRequest(400, f"unknown field(s): {', '.join(unknown)} "
                               f"(use {', '.join(sorted(allowed))})")
    return loaded


def _start_arguments(body: Mapping[str, Any]) -> tuple[str | None, int | None,
                                                       Mapping[str, Any] | None]:
    task, seed, data = body.get("task"), body.get("seed"), body.get("data")
    if task is not None and not isinstance(task, str):
        raise _BadRequest(400, "task must be a task's name (a string)")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise _BadRequest(400, "seed must be an integer")
    if data is not None and not isinstance(data, dict):
        raise _BadRequest(400, "data must be a JSON object of tables and state items")
    return task, seed, data


def _replies(body: Mapping[str, Any]) -> list[str]:
    replies = body.get("replies", [])
    if not isinstance(replies, list) or not all(isinstance(r, str) for r in replies):
        raise _BadRequest(400, "replies must be a list of the agent's messages (texts)")
    return replies


def control_routes(table: EpisodeTable, *, security: TransportSecurityMiddleware,
                   instructions: Callable[[str | None], str],
                   max_body: int = 1 << 20) -> list[Route]:
    """The control surface's routes over ``table``; ``instructions(task)`` is the agent's
    system prompt for a task, ``security`` refuses foreign hosts and origins."""

    def guarded(handler: Callable[[Request], Awaitable[Any]], *,
                status: int = 200) -> Handler:
        async def endpoint(request: Request) -> Response:
            refused = await security.validate_request(request, is_post=request.method == "POST")
            if refused is not None:
                return refused
            try:
                answer = await handler(request)
            except _BadRequest as exc:
                return _error(exc.status, exc.message)
            except EpisodeLimitError as exc:
                return _error(503, str(exc))
            except ControlError as exc:
                return _error(400, str(exc))
            if isinstance(answer, Response):
                return answer
            return JSONResponse(answer, status_code=status)
        return endpoint

    def episode(request: Request) -> tuple[str, EpisodeHost]:
        episode_id = request.path_params["episode"]
        host = table.get(episode_id)
        if host is None:
            raise _BadRequest(404, f"no episode {episode_id} (never created, deleted, "
                                   "or expired after being idle)")
        return episode_id, host

    def described(episode_id: str, host: EpisodeHost) -> dict[str, Any]:
        return {"id": episode_id, "mcp": episode_path(episode_id), **host.info()}

    async def create(request: Request) -> Any:
        task, seed, data = _start_arguments(
            await _body(request, max_body, frozenset({"task", "seed", "data"})))
        episode_id, host = await anyio.to_thread.run_sync(
            lambda: table.create(task=task, seed=seed, data=data), limiter=table.workers)
        return {**described(episode_id, host), "instructions": instructions(task)}

    async def listing(_: Request) -> Any:
        return {"episodes": table.ids(), "max_episodes": table.max_episodes}

    async def info(request: Request) -> Any:
        episode_id, host = episode(request)
        return described(episode_id, host)

    async def reset(request: Request) -> Any:
        episode_id, host = episode(request)
        task, seed, data = _start_arguments(
            await _body(request, max_body, frozenset({"task", "seed", "data"})))

        def start_over() -> dict[str, Any]:
            host.reset(task=task, data=data, seed=seed)
            return described(episode_id, host)

        return await host.run(start_over)

    async def score(request: Request) -> Any:
        _, host = episode(request)
        replies = _replies(await _body(request, max_body, frozenset({"replies"})))
        return await host.run(lambda: host.score(replies))

    async def state(request: Request) -> Any:
        _, host = episode(request)
        return await host.run(lambda: host.episode.export_state())

    async def delete(request: Request) -> Any:
        episode_id = request.path_params["episode"]
        if episode_id == DEFAULT_EPISODE:
            raise _BadRequest(400, "the default episode (/mcp) cannot be deleted; reset it")
        if not table.delete(episode_id):
            raise _BadRequest(404, f"no episode {episode_id}")
        return Response(status_code=204)

    async def tasks(_: Request) -> Any:
        return task_list(table.world)

    return [
        Route("/episodes", guarded(create, status=201), methods=["POST"]),
        Route("/episodes", guarded(listing), methods=["GET"]),
        Route("/episodes/{episode}", guarded(info), methods=["GET"]),
        Route("/episodes/{episode}", guarded(delete), methods=["DELETE"]),
        Route("/episodes/{episode}/reset", guarded(reset), methods=["POST"]),
        Route("/episodes/{episode}/score", guarded(score), methods=["POST"]),
        Route("/episodes/{episode}/state", guarded(state), methods=["GET"]),
        Route("/tasks", guarded(tasks), methods=["GET"]),
    ]
