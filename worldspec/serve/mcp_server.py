"""A world as an MCP server, on the official SDK's (2.x) low-level ``Server``.

The server speaks the 2026-07-28 revision (``server/discover``, no handshake, no session) and
the 2025 one (``initialize``) where the SDK still does. Which episode a request plays in is
the endpoint it reached, never an argument of the agent's tools: ``/episodes/{id}/mcp`` is a
created episode's (:mod:`worldspec.serve.control` creates, resets, scores and deletes them),
``/mcp`` and stdio serve the table's default episode. Episodes share nothing.

What the agent sees is the world's tools: ``tools/list`` gives each with its description
and the same strict input schema as ``episode.tools()``, and ``tools/call`` runs it through
``episode.call``, so arguments are validated by the world's own dispatcher and the result
text is the world's result convention; a failed call is a tool error (``is_error``) whose
text is the world's failure message, which a model can read and correct. An unknown tool
is a protocol error (JSON-RPC ``-32602``), as the MCP specification asks.

Tool calls (and the harness's score, state and reset) run off the event loop, in worker
threads drawn from a bounded pool (:data:`WORKERS` at once), one at a time per episode (each
:class:`EpisodeHost` holds a lock): a long call (at most what the per-call budget allows)
delays only its own episode, never another episode's calls nor the server's answers.

The server's ``instructions`` (in the answer to ``server/discover`` or ``initialize``) are the
agent's system prompt, built by :func:`worldspec.services.prompts.agent_system_prompt` exactly
as a rollout, the step API, the adapters and ``worldspec export`` build it: for the server's
``task`` (the one the default episode starts on; none: an empty world), its setting (one-shot
unless ``conversational``), its external ``policy`` (else the world's own) and ``template``.
With the default template they name no task, so they hold for every task of the world in that
setting; the control surface answers each created episode's own.

What the harness sees, and the agent does not, is a handful of resources (over stdio the only
way in; over HTTP the control surface offers the same as plain JSON):

- ``worldspec://episode``: world, task, seed, state hash and the number of calls;
- ``worldspec://episode/score``: the task's reward, per-check breakdown and frame verdict;
  ``?replies=JSON`` passes what the agent told the user (a list of texts) to answer checks;
- ``worldspec://episode/state``: the whole state as JSON;
- ``worldspec://tasks``: the world's tasks;
- ``worldspec://episode/reset?task=NAME&seed=N&data=JSON``: reading it starts the endpoint's
  episode over (on a task, on given data, with a seed) and answers as ``worldspec://episode``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcp import types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from worldspec import __version__
from worldspec.runtime.episode import Episode
from worldspec.runtime.schema import tool_definitions
from worldspec.serve.episodes import (
    DEFAULT_EPISODE,
    WORKERS,
    ControlError,
    EpisodeHost,
    EpisodeTable,
    task_list,
)
from worldspec.services.prompts import AGENT_TEMPLATE, agent_system_prompt

__all__ = ["EpisodeHost", "ControlError", "ToolListAnswers", "build_server", "episode_id_of",
           "RESOURCE_NOT_FOUND", "EPISODE_GONE", "WORKERS"]

#: the MCP specification's error code for a resource that does not exist
RESOURCE_NOT_FOUND = -32002

#: the error code for a request to an episode deleted or expired since its endpoint answered
EPISODE_GONE = types.INVALID_REQUEST

EPISODE_URI = "worldspec://episode"
SCORE_URI = "worldspec://episode/score"
STATE_URI = "worldspec://episode/state"
TASKS_URI = "worldspec://tasks"
RESET_URI = "worldspec://episode/reset"

#: the path parameter that names a created episode in ``/episodes/{episode}/mcp``
EPISODE_PATH_PARAM = "episode"


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


def episode_id_of(ctx: ServerRequestContext[Any, Any]) -> str:
    """Which episode a request plays in: the ``{episode}`` of the HTTP path it reached, else
    (``/mcp``, stdio) the default one."""
    request = ctx.request
    path_params = getattr(request, "path_params", None)
    if isinstance(path_params, Mapping):
        chosen = path_params.get(EPISODE_PATH_PARAM)
        if isinstance(chosen, str):
            return chosen
    return DEFAULT_EPISODE


def build_server(world: type[Episode], *, task: str | None = None, seed: int | None = None,
                 conversational: bool = False, policy: str | None = None,
                 template: str = AGENT_TEMPLATE,
                 episodes: EpisodeTable | None = None) -> Server[Any]:
    """An MCP server for ``world`` over ``episodes`` (by default a table whose default episode
    starts on ``task`` with ``seed``). Its instructions are the agent's system prompt for that
    task in the setting ``conversational`` says, with ``policy`` (an external policy text) and
    ``template``."""
    table = episodes if episodes is not None else EpisodeTable(world, task, seed)
    instructions = agent_system_prompt(world, task, conversational=conversational,
                                       policy=policy, template=template)
    tools = [types.Tool(name=d["function"]["name"], description=d["function"]["description"],
                        input_schema=d["function"]["parameters"])
             for d in tool_definitions(world.TOOLS.values(), "chat")]
    json_type = "application/json"
    resources = [
        types.Resource(uri=EPISODE_URI, name="episode", mime_type=json_type,
                       description="World, task, seed, state hash and calls of this episode"),
        types.Resource(uri=SCORE_URI, name="score", mime_type=json_type,
                       description="The task's reward, per-check breakdown and frame verdict"),
        types.Resource(uri=STATE_URI, name="state", mime_type=json_type,
                       description="The episode's whole state as JSON"),
        types.Resource(uri=TASKS_URI, name="tasks", mime_type=json_type,
                       description="The world's tasks"),
    ]
    templates = [types.ResourceTemplate(
        uri_template=RESET_URI + "{?task,seed,data}", name="reset", mime_type=json_type,
        description="Reading it starts this episode over: on a task, on given data "
                    "(a JSON object), with a seed. Answers as worldspec://episode.")]

    def host(ctx: ServerRequestContext[Any, Any]) -> EpisodeHost:
        episode_id = episode_id_of(ctx)
        episode_host = table.get(episode_id)
        if episode_host is None:
            raise MCPError(EPISODE_GONE, f"episode {episode_id} is gone (deleted or expired)")
        return episode_host

    async def list_tools(ctx: ServerRequestContext[Any, Any],
                         _: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext[Any, Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        name = params.name
        if name not in world.TOOLS:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {name}")
        episode_host, arguments = host(ctx), params.arguments
        text, failed = await episode_host.run(lambda: episode_host.call(name, arguments))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    is_error=failed)

    async def list_resources(ctx: ServerRequestContext[Any, Any],
                             _: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=resources)

    async def list_templates(
            ctx: ServerRequestContext[Any, Any],
            _: types.PaginatedRequestParams | None) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(ctx: ServerRequestContext[Any, Any],
                            params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        parts = urlsplit(uri)
        base = f"{parts.scheme}://{parts.netloc}{parts.path}"
        episode_host = host(ctx)
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
                raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")
            elif base == EPISODE_URI:
                body = await episode_host.run(episode_host.info)
            elif base == STATE_URI:
                body = await episode_host.run(lambda: episode_host.episode.export_state())
            elif base == TASKS_URI:
                body = task_list(world)
            else:
                raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")
        except ControlError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        text = json.dumps(body, ensure_ascii=False, sort_keys=True)
        return types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=uri, mime_type=json_type, text=text)])

    server = Server(f"worldspec-{world.WORLD}", version=__version__, instructions=instructions,
                    on_list_tools=list_tools, on_call_tool=call_tool,
                    on_list_resources=list_resources,
                    on_list_resource_templates=list_templates, on_read_resource=read_resource)
    server.middleware.insert(0, ToolListAnswers())  # before the SDK's tracing: see its doc
    return server


class ToolListAnswers:
    """Server middleware that answers ``tools/list`` from its wire form, made once for each
    protocol revision: a world's tools never change while it is served.

    It matters on every ``tools/call``, not only on listings: to check a call's
    ``Mcp-Param-*`` headers (2026-07-28), the SDK lists the server's tools before it runs the
    call, and validating and dumping a world's few dozen tool schemas each time would cost
    more than most tool calls. The answer is the SDK's own (made by the handler and shaped
    by the SDK the first time), so it is exactly what an uncached listing gives. It runs before
    the SDK's tracing middleware: a listing answered from it (the SDK's own, on every call) is
    not traced as a request of its own."""

    def __init__(self) -> None:
        self.answers: dict[str | None, dict[str, Any]] = {}

    async def __call__(self, ctx: ServerRequestContext[Any, Any],
                       call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/list" or (ctx.params or {}).get("cursor") is not None:
            return await call_next(ctx)
        answer = self.answers.get(ctx.protocol_version)
        if answer is None:
            made = await call_next(ctx)
            if not isinstance(made, dict):  # not the wire form: leave it uncached
                return made
            answer = self.answers[ctx.protocol_version] = made
        return dict(answer)
