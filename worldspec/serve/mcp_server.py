"""A world as an MCP server, on the official SDK's low-level ``Server``.

Each MCP session owns one episode: the SDK enters the server's lifespan once per session
(once per process over stdio, once per ``Mcp-Session-Id`` over streamable HTTP), and the
lifespan builds the session's :class:`EpisodeHost`. Sessions therefore share nothing.

What the agent sees is the world's tools: ``tools/list`` gives each with its description
and the same strict input schema as ``episode.tools()``, and ``tools/call`` runs it through
``episode.call``, so arguments are validated by the world's own dispatcher and the result
text is the world's result convention; a failed call is a tool error (``isError``) whose
text is the world's failure message, which a model can read and correct. An unknown tool
is a protocol error (JSON-RPC ``-32602``), as the MCP specification asks.

Tool calls (and the harness's score, state and reset) run off the event loop, in worker
threads drawn from a bounded pool (:data:`WORKERS` at once), one at a time per session (each
session's :class:`EpisodeHost` holds a lock): a long call (at most what the per-call budget
allows) delays only its own session, never another session's calls nor the server's answers.

The server's ``instructions`` (sent once, when a session initializes) are the agent's system
prompt, built by :func:`worldspec.services.prompts.agent_system_prompt` exactly as a rollout,
the step API, the adapters and ``worldspec export`` build it: for the server's ``task`` (the
one every session starts on; none: an empty world), its setting (one-shot unless
``conversational``), its external ``policy`` (else the world's own) and ``template``. A session
that resets to another task keeps the instructions it was given; with the default template
they name no task, so they hold for every task of the world in that setting.

What the harness sees, and the agent does not, is a handful of resources:

- ``worldspec://episode``: world, task, seed, state hash and the number of calls;
- ``worldspec://episode/score``: the task's reward, per-check breakdown and frame verdict;
  ``?replies=JSON`` passes what the agent told the user (a list of texts) to answer checks;
- ``worldspec://episode/state``: the whole state as JSON;
- ``worldspec://tasks``: the world's tasks;
- ``worldspec://episode/reset?task=NAME&seed=N&data=JSON``: reading it starts the session's
  episode over (on a task, on given data, with a seed) and answers as ``worldspec://episode``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl

from worldspec import __version__
from worldspec.runtime.episode import Episode
from worldspec.runtime.errors import ToolError
from worldspec.runtime.schema import tool_definitions
from worldspec.services.prompts import AGENT_TEMPLATE, agent_system_prompt

__all__ = ["EpisodeHost", "ControlError", "build_server", "RESOURCE_NOT_FOUND", "WORKERS"]

T = TypeVar("T")

#: worker threads that run sessions' calls at once (a session runs one call at a time)
WORKERS = 16

#: the MCP specification's error code for a resource that does not exist
RESOURCE_NOT_FOUND = -32002

EPISODE_URI = "worldspec://episode"
SCORE_URI = "worldspec://episode/score"
STATE_URI = "worldspec://episode/state"
TASKS_URI = "worldspec://tasks"
RESET_URI = "worldspec://episode/reset"


class ControlError(Exception):
    """A harness request that cannot be carried out (unknown task, bad data or seed)."""


class EpisodeHost:
    """One session's episode and what the harness may do with it."""

    def __init__(self, world: type[Episode], task: str | None, seed: int | None,
                 workers: anyio.CapacityLimiter | None = None) -> None:
        self.world = world
        self.seed = seed
        self.calls = 0
        self.episode = self._start(task=task, data=None, seed=seed)
        #: the pool the session's work runs in (None: anyio's default one)
        self.workers = workers
        #: held while the session's episode is at work: one call at a time
        self.busy = anyio.Lock()

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` on the episode, in a worker thread, after the session's earlier work:
        the event loop (every other session) goes on meanwhile. A cancelled request still
        waits for its call to end, so the episode is never used by two threads."""
        async with self.busy:
            return await anyio.to_thread.run_sync(work, limiter=self.workers)

    def _start(self, *, task: str | None, data: Mapping[str, Any] | None,
               seed: int | None) -> Episode:
        if task is not None and task not in self.world.TASKS:
            known = ", ".join(sorted(self.world.TASKS)) or "none"
            raise ControlError(f"world {self.world.WORLD} has no task {task!r} (tasks: {known})")
        try:
            return self.world(task=task, data=data, seed=seed)
        except ToolError as exc:
            raise ControlError(f"the data does not fit world {self.world.WORLD}: "
                               f"{exc.message}") from None
        except (TypeError, ValueError, KeyError) as exc:
            raise ControlError(f"cannot start the episode: {exc}") from None
        except Exception as exc:  # a loader's own error for data that does not fit
            raise ControlError(f"cannot start the episode: {type(exc).__name__}: {exc}") from None

    def reset(self, *, task: str | None, data: Mapping[str, Any] | None,
              seed: int | None) -> None:
        """Start over; on failure the current episode is kept as it was."""
        self.episode = self._start(task=task, data=data, seed=seed)
        self.seed = seed
        self.calls = 0

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> tuple[str, bool]:
        """Run a tool: its result as text in the world's convention, and whether it failed."""
        result = self.episode.call(name, dict(arguments) if arguments is not None else None)
        self.calls += 1
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        return text, self.episode.failed(result)

    def info(self) -> dict[str, Any]:
        task = self.episode.task
        return {"world": self.world.WORLD, "task": task.name if task else None,
                "seed": self.seed, "state_hash": self.episode.state_hash(),
                "calls": self.calls}

    def score(self, replies: list[str]) -> dict[str, Any]:
        if self.episode.task is None:
            raise ControlError("the episode has no task to score: start one with "
                               f"{RESET_URI}?task=NAME")
        score: dict[str, Any] = self.episode.score(replies=replies).to_json()
        return score

    def tasks(self) -> list[dict[str, Any]]:
        return [{"name": t.name, "instruction": t.instruction, "split": t.split,
                 "tags": list(t.tags), "conversational": t.persona is not None}
                for t in self.world.TASKS.values()]


def _reset_arguments(query: str) -> tuple[str | None, Mapping[str, Any] | None, int | None]:
    params = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(params) - {"task", "seed", "data"})
    if unknown:
        raise ControlError(f"unknown reset parameter(s): {', '.join(unknown)} "
                           "(use task, seed, data)")
    task = params["task"][-1] if "task" in params else None
    seed: int | None = None
    if "seed" in params:
        try:
            seed = int(params["seed"][-1])
        except ValueError:
            raise ControlError(f"seed must be an integer, got {params['seed'][-1]!r}") from None
    data: Mapping[str, Any] | None = None
    if "data" in params:
        try:
            loaded = json.loads(params["data"][-1])
        except ValueError as exc:
            raise ControlError(f"data is not valid JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise ControlError("data must be a JSON object of tables and state items")
        data = loaded
    return task, data, seed


def _score_arguments(query: str) -> list[str]:
    params = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(params) - {"replies"})
    if unknown:
        raise ControlError(f"unknown score parameter(s): {', '.join(unknown)} (use replies)")
    if "replies" not in params:
        return []
    try:
        replies = json.loads(params["replies"][-1])
    except ValueError as exc:
        raise ControlError(f"replies is not valid JSON: {exc}") from None
    if not isinstance(replies, list) or not all(isinstance(r, str) for r in replies):
        raise ControlError("replies must be a JSON list of the agent's messages (texts)")
    return replies


def _protocol_error(code: int, message: str) -> McpError:
    return McpError(types.ErrorData(code=code, message=message))


def build_server(world: type[Episode], *, task: str | None = None, seed: int | None = None,
                 conversational: bool = False, policy: str | None = None,
                 template: str = AGENT_TEMPLATE) -> Server[EpisodeHost, Any]:
    """An MCP server for ``world``; every session starts on ``task`` (or an empty world).
    Its instructions are the agent's system prompt for that task in the setting
    ``conversational`` says, with ``policy`` (an external policy text) and ``template``."""
    if task is not None and task not in world.TASKS:
        known = ", ".join(sorted(world.TASKS)) or "none"
        raise ControlError(f"world {world.WORLD} has no task {task!r} (tasks: {known})")

    pool: list[anyio.CapacityLimiter] = []  # made in the event loop, on the first session

    @contextlib.asynccontextmanager
    async def one_episode_per_session(_: Server[EpisodeHost, Any]) -> AsyncIterator[EpisodeHost]:
        if not pool:
            pool.append(anyio.CapacityLimiter(WORKERS))
        yield EpisodeHost(world, task, seed, pool[0])

    instructions = agent_system_prompt(world, task, conversational=conversational,
                                       policy=policy, template=template)
    server: Server[EpisodeHost, Any] = Server(
        f"worldspec-{world.WORLD}", version=__version__, instructions=instructions,
        lifespan=one_episode_per_session)
    tools = [types.Tool(name=d["function"]["name"], description=d["function"]["description"],
                        inputSchema=d["function"]["parameters"])
             for d in tool_definitions(world.TOOLS.values(), "chat")]
    resources = [
        types.Resource(uri=AnyUrl(EPISODE_URI), name="episode", mimeType="application/json",
                       description="World, task, seed, state hash and calls of this session"),
        types.Resource(uri=AnyUrl(SCORE_URI), name="score", mimeType="application/json",
                       description="The task's reward, per-check breakdown and frame verdict"),
        types.Resource(uri=AnyUrl(STATE_URI), name="state", mimeType="application/json",
                       description="The episode's whole state as JSON"),
        types.Resource(uri=AnyUrl(TASKS_URI), name="tasks", mimeType="application/json",
                       description="The world's tasks"),
    ]
    templates = [types.ResourceTemplate(
        uriTemplate=RESET_URI + "{?task,seed,data}", name="reset",
        mimeType="application/json",
        description="Reading it starts this session's episode over: on a task, on given data "
                    "(a JSON object), with a seed. Answers as worldspec://episode.")]

    def host() -> EpisodeHost:
        episode_host: EpisodeHost = server.request_context.lifespan_context
        return episode_host

    async def list_tools(_: types.ListToolsRequest) -> types.ServerResult:
        return types.ServerResult(types.ListToolsResult(tools=tools))

    async def call_tool(request: types.CallToolRequest) -> types.ServerResult:
        name = request.params.name
        if name not in world.TOOLS:
            raise _protocol_error(types.INVALID_PARAMS, f"Unknown tool: {name}")
        episode_host, arguments = host(), request.params.arguments
        text, failed = await episode_host.run(lambda: episode_host.call(name, arguments))
        return types.ServerResult(types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], isError=failed))

    async def list_resources(_: types.ListResourcesRequest) -> types.ServerResult:
        return types.ServerResult(types.ListResourcesResult(resources=resources))

    async def list_templates(_: types.ListResourceTemplatesRequest) -> types.ServerResult:
        return types.ServerResult(types.ListResourceTemplatesResult(resourceTemplates=templates))

    async def read_resource(request: types.ReadResourceRequest) -> types.ServerResult:
        uri = str(request.params.uri)
        parts = urlsplit(uri)
        base = f"{parts.scheme}://{parts.netloc}{parts.path}"
        episode_host = host()
        try:
            if base == RESET_URI:
                task_name, data, chosen_seed = _reset_arguments(parts.query)

                def reset() -> Any:
                    episode_host.reset(task=task_name, data=data, seed=chosen_seed)
                    return episode_host.info()

                body: Any = await episode_host.run(reset)
            elif base == SCORE_URI:
                replies = _score_arguments(parts.query)
                body = await episode_host.run(lambda: episode_host.score(replies))
            elif parts.query:
                raise _protocol_error(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")
            elif base == EPISODE_URI:
                body = await episode_host.run(episode_host.info)
            elif base == STATE_URI:
                body = await episode_host.run(lambda: episode_host.episode.export_state())
            elif base == TASKS_URI:
                body = episode_host.tasks()
            else:
                raise _protocol_error(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")
        except ControlError as exc:
            raise _protocol_error(types.INVALID_PARAMS, str(exc)) from None
        text = json.dumps(body, ensure_ascii=False, sort_keys=True)
        return types.ServerResult(types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=request.params.uri, mimeType="application/json",
                                       text=text)]))

    server.request_handlers[types.ListToolsRequest] = list_tools
    server.request_handlers[types.CallToolRequest] = call_tool
    server.request_handlers[types.ListResourcesRequest] = list_resources
    server.request_handlers[types.ListResourceTemplatesRequest] = list_templates
    server.request_handlers[types.ReadResourceRequest] = read_resource
    return server
