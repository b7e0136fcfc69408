"""A world served through OpenEnv (the ``openenv`` package, 0.10): reset/step/state and MCP tools.

OpenEnv environments are servers (FastAPI) that clients drive with ``reset(**kwargs)``,
``step(action)`` and ``state()`` over a WebSocket (``/ws``, one environment per connection),
and whose tools MCP environments offer on ``/mcp`` (JSON-RPC ``tools/list``/``tools/call``;
``openenv/session/create`` gives a session id that ``/ws?session_id=`` attaches to, which is
how OpenEnv's ``MCPToolClient`` resets over the WebSocket and calls tools over HTTP on one
episode). Here an episode of a world is a :class:`~worldspec.rl.env.TextEnv` (the rollout
runner's turn logic): the action is the policy's assistant message, the observation the
messages it sees next (tool results, the simulated user's reply), with ``reward`` the task's
score at the end and ``info`` the per-check breakdown, the frame and the termination.

- :class:`WorldAction`: ``content`` and ``tool_calls`` of an OpenAI-format assistant message;
- :class:`WorldObservation`: ``messages`` (the opening on reset, the new ones on step),
  ``tools`` (on reset), ``info``, and OpenEnv's ``done``/``reward``;
- :class:`WorldState`: OpenEnv's ``episode_id`` (the caller's, or a fresh one) and
  ``step_count`` plus the world, the task, the state hash, the termination and the reward;
- :class:`WorldEnvironment`: an OpenEnv ``MCPEnvironment`` whose MCP server holds the world's
  tools (:class:`WorldTool`): ``tools/call`` is one step of the episode whose assistant
  message makes that one call, so it is recorded, counted and scored as any other step;
- :func:`create_world_app` builds the server app; :class:`WorldEnvClient` is an OpenEnv
  ``EnvClient`` for it. ``python -m worldspec.adapters.openenv PATH --port N`` serves.

Plain HTTP: OpenEnv's own ``POST /reset`` and ``POST /step`` build a fresh environment per
request, so an episode cannot go on from one request to the next. The app serves these
routes itself instead (:class:`HttpEpisode`): one episode per server for a generic HTTP
client, ``POST /reset`` then ``POST /step`` then ``GET /state``; a step before any reset, or
after the end, is a 409 that says what to do.

``reset(task=NAME, seed=S)`` picks the task (the first one by default). The opening messages
are the step API's, so the agent's system prompt is the one every front end builds
(:mod:`worldspec.services.prompts`); ``policy`` (``--policy FILE``: an external policy text
that replaces the world's own) and ``system_template`` (``--system-prompt FILE``) shape it as
they shape a rollout's. A generated package is served with the runtime only, never the
compiler.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sys
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from fastapi import Body, FastAPI, HTTPException
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools import Tool
from fastmcp.tools.base import ToolResult
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server import (
    RESERVED_TOOL_NAMES,
    MCPEnvironment,
    ServerMode,
    create_fastapi_app,
    deserialize_action,
    serialize_observation,
)
from openenv.core.env_server.types import (
    Action,
    Observation,
    ResetRequest,
    ResetResponse,
    State,
    StepRequest,
    StepResponse,
)
from pydantic import Field, ValidationError
from pydantic.json_schema import SkipJsonSchema

from worldspec.rl.env import StepResult as TextStep
from worldspec.rl.env import TextEnv
from worldspec.runtime.episode import Episode
from worldspec.runtime.schema import tool_definitions
from worldspec.services.model_client import LLMClient, LLMConfig
from worldspec.services.prompts import AGENT_TEMPLATE, PromptFileError, read_prompt_file

__all__ = ["HttpEpisode", "WorldAction", "WorldEnvClient", "WorldEnvironment",
           "WorldObservation", "WorldState", "WorldTool", "create_world_app", "main"]


class WorldAction(Action):
    """The policy's assistant message: its text and its tool calls (Chat Completions)."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)


class WorldObservation(Observation):
    """What the policy sees next; ``reward`` is the task's score once ``done``."""

    messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    info: dict[str, Any] = Field(default_factory=dict)


class WorldState(State):
    """The episode as the harness sees it (the world's state stays on the server)."""

    world: str = ""
    task: str | None = None
    state_hash: str | None = None
    termination: str | None = None
    reward: float | None = None


class WorldTool(Tool):
    """One of the world's tools on the MCP server: its description and strict input schema
    as ``episode.tools()`` gives them; running it is ``call(name, arguments)``."""

    call: SkipJsonSchema[Callable[[str, dict[str, Any]], Awaitable[ToolResult]]] = Field(
        exclude=True)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return await self.call(self.name, arguments)


class WorldEnvironment(MCPEnvironment):
    """One session's episodes of a world; sessions never share an episode."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, world: type[Episode], *, conversational: bool = False,
                 user: Callable[[], LLMClient] | None = None, max_steps: int = 30,
                 max_turns: int = 20, policy: str | None = None,
                 system_template: str = AGENT_TEMPLATE) -> None:
        server = FastMCP(f"worldspec-{world.WORLD}")
        for definition in tool_definitions(world.TOOLS.values(), "chat"):
            function = definition["function"]
            server.add_tool(WorldTool(name=function["name"],
                                      description=function["description"],
                                      parameters=function["parameters"],
                                      call=self._call_tool))
        super().__init__(server)
        self._user = user() if conversational and user is not None else None
        self._env = TextEnv(world, conversational=conversational, user=self._user,
                            max_steps=max_steps, max_turns=max_turns, policy=policy,
                            system_template=system_template)
        self._state = WorldState(world=world.WORLD)
        self._call_ids = itertools.count(1)
        self._closing: asyncio.Task[None] | None = None

    # ------------------------------------------------------------- the contract
    def reset(self, seed: int | None = None, episode_id: str | None = None,
              task: str | None = None, **kwargs: Any) -> WorldObservation:
        messages, tools = self._env.reset(self._task(task), seed=seed)
        return self._opened(messages, tools, episode_id)

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                          task: str | None = None, **kwargs: Any) -> WorldObservation:
        messages, tools = await self._env.areset(self._task(task), seed=seed)
        return self._opened(messages, tools, episode_id)

    def _step_impl(self, action: Action, timeout_s: float | None = None,
                   **kwargs: Any) -> Observation:
        return self._stepped(self._env.step(self._message(action)))

    async def step_async(self, action: Action, timeout_s: float | None = None,
                         **kwargs: Any) -> Observation:
        if isinstance(action, WorldAction):
            return self._stepped(await self._env.astep(self._message(action)))
        observation: Observation = await super().step_async(action, timeout_s=timeout_s,
                                                            **kwargs)
        return observation  # OpenEnv's ListToolsAction/CallToolAction

    @property
    def state(self) -> WorldState:
        return self._state

    def close(self) -> None:
        """Close the simulated user's client (its HTTP connections) when the session
        ends; OpenEnv calls this from its event loop, so the close is scheduled there."""
        super().close()
        user, self._user = self._user, None
        if user is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(user.aclose())
        else:
            self._closing = loop.create_task(user.aclose())

    @property
    def finished(self) -> bool:
        """Whether an episode was started and is over."""
        return self._env.done

    @property
    def started(self) -> bool:
        return self._state.task is not None

    # ------------------------------------------------------------------ inside
    async def _call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """An MCP ``tools/call``: one step whose assistant message makes this one call."""
        if not self.started:
            raise ToolError("no episode yet: reset first (OpenEnv's MCPToolClient resets "
                            "over /ws on the session it calls tools in)")
        if self._env.done:
            raise ToolError(f"the episode is over ({self._env.session.termination}); "
                            "reset to start another")
        index = next(self._call_ids)
        call = {"id": f"mcp_{index}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}
        step = self._stepped(await self._env.astep(
            {"role": "assistant", "content": None, "tool_calls": [call]}))
        (called,) = step.info["tool_steps"]
        # the text the agent would read, and the result as ``episode.call`` returned it
        # (wrapped as FastMCP wraps a non-object result, so its clients unwrap it to ``data``)
        return ToolResult(content=str(step.messages[0]["content"]),
                          structured_content={"result": called["result"]},
                          meta={"fastmcp": {"wrap_result": True}},
                          is_error=bool(called["failed"]))

    def _task(self, task: str | None) -> str:
        if task is None:
            names = self._env.tasks
            if not names:
                raise ValueError(f"world {self._env.world.WORLD} has no tasks")
            return names[0]
        return task

    @staticmethod
    def _message(action: Action) -> dict[str, Any]:
        assert isinstance(action, WorldAction)
        message: dict[str, Any] = {"role": "assistant", "content": action.content}
        if action.tool_calls:
            message["tool_calls"] = action.tool_calls
        return message

    def _opened(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                episode_id: str | None) -> WorldObservation:
        session = self._env.session
        self._state = WorldState(world=self._env.world.WORLD, task=session.task,
                                 episode_id=episode_id or uuid.uuid4().hex, step_count=0,
                                 state_hash=session.episode.state_hash())
        done = session.done  # a user may end a conversation before the agent speaks
        return WorldObservation(messages=messages, tools=tools, done=done,
                                reward=session.score.reward if session.score else None,
                                info={"waiting": session.waiting, "task": session.task,
                                      "env_seed": session.env_seed,
                                      "episode_id": self._state.episode_id})

    def _stepped(self, step: TextStep) -> WorldObservation:
        session = self._env.session
        state = self._state
        state.step_count += 1
        state.state_hash = session.episode.state_hash()
        state.termination = session.termination
        state.reward = step.reward if step.done else None
        return WorldObservation(messages=step.messages, done=step.done,
                                reward=step.reward, info=step.info)


#: ``POST /reset`` takes an empty body (or none) as OpenEnv's does
_OPTIONAL_RESET_BODY = Body(default_factory=ResetRequest)


class HttpEpisode:
    """The server's one episode for plain HTTP clients: ``POST /reset``, ``POST /step``,
    ``GET /state`` (OpenEnv's own routes make a fresh environment per request)."""

    def __init__(self, world: type[Episode], factory: Callable[[], WorldEnvironment]) -> None:
        self._world = world
        self._factory = factory
        self._env: WorldEnvironment | None = None
        self._lock = asyncio.Lock()

    async def reset(self, request: ResetRequest) -> ResetResponse:
        options = request.model_dump(exclude_unset=True)
        task = options.get("task")
        if task is not None and task not in self._world.TASKS:
            known = ", ".join(self._world.TASKS) or "none"
            raise HTTPException(400, f"world {self._world.WORLD} has no task {task!r} "
                                     f"(tasks: {known})")
        async with self._lock:
            previous, self._env = self._env, self._factory()
            if previous is not None:
                previous.close()
            observation = await self._env.reset_async(
                seed=options.get("seed"), episode_id=options.get("episode_id"), task=task)
        return ResetResponse(**serialize_observation(observation))

    async def step(self, request: StepRequest) -> StepResponse:
        try:
            action = deserialize_action(request.action, WorldAction)
        except ValidationError as exc:
            raise HTTPException(422, exc.errors()) from None
        async with self._lock:
            env = self._env
            if env is None:
                raise HTTPException(409, "no episode yet: POST /reset first (body: "
                                         '{"task": NAME, "seed": N}, both optional); this '
                                         "server keeps one HTTP episode, so for an episode "
                                         "per client use the WebSocket at /ws (OpenEnv's "
                                         "EnvClient)")
            if env.finished:
                raise HTTPException(409, f"the episode is over ({env.state.termination}); "
                                         "POST /reset to start another")
            observation = await env.step_async(action)
        return StepResponse(**serialize_observation(observation))

    def state(self) -> WorldState:
        return self._env.state if self._env is not None else WorldState(world=self._world.WORLD)


def create_world_app(world: type[Episode], *, conversational: bool = False,
                     user: Callable[[], LLMClient] | None = None, max_steps: int = 30,
                     max_turns: int = 20, max_sessions: int = 64, policy: str | None = None,
                     system_template: str = AGENT_TEMPLATE) -> FastAPI:
    """The OpenEnv server app (FastAPI) of ``world``: ``/ws`` sessions, ``/mcp`` (the
    world's tools), ``/health``, ``/schema``, ``/metadata``, and the plain-HTTP
    ``/reset``/``/step``/``/state`` of :class:`HttpEpisode`. ``user`` makes the simulated
    user's client (one per session) for a conversational world; ``policy`` and
    ``system_template`` shape the agent's prompt as in :class:`~worldspec.rl.env.TextEnv`."""
    if conversational and user is None:
        raise ValueError("a conversational world needs user=... (a factory of LLMClient)")
    clashes = sorted(set(world.TOOLS) & set(RESERVED_TOOL_NAMES))
    if clashes:
        reserved = ", ".join(sorted(RESERVED_TOOL_NAMES))
        raise ValueError(f"world {world.WORLD} has tools named {', '.join(clashes)}, which "
                         f"OpenEnv reserves for its own calls ({reserved}); rename them to "
                         "serve the world through OpenEnv")

    def factory() -> WorldEnvironment:
        return WorldEnvironment(world, conversational=conversational, user=user,
                                max_steps=max_steps, max_turns=max_turns, policy=policy,
                                system_template=system_template)

    # OpenEnv's production mode registers its session routes (/ws, /mcp, /health, /schema,
    # /metadata) without its per-request /reset, /step, /state; the episode's are below.
    app: FastAPI = create_fastapi_app(factory, WorldAction, WorldObservation,
                                      max_concurrent_envs=max_sessions, state_cls=WorldState,
                                      env_name=world.WORLD, mode=ServerMode.PRODUCTION)
    episode = HttpEpisode(world, factory)

    @app.post("/reset", response_model=ResetResponse, tags=["Environment Control"])
    async def reset(request: ResetRequest = _OPTIONAL_RESET_BODY) -> ResetResponse:
        """Start the server's HTTP episode (``task``, ``seed``, ``episode_id``)."""
        return await episode.reset(request)

    @app.post("/step", response_model=StepResponse, tags=["Environment Control"])
    async def step(request: StepRequest) -> StepResponse:
        """One assistant message (``{"action": {"content": ..., "tool_calls": [...]}}``)."""
        return await episode.step(request)

    @app.get("/state", response_model=WorldState, tags=["State Management"])
    def state() -> WorldState:
        """The HTTP episode's state (its ``episode_id``, task, steps, reward)."""
        return episode.state()

    return app


class WorldEnvClient(EnvClient[WorldAction, WorldObservation, WorldState]):
    """OpenEnv's WebSocket client for a world server (``async with WorldEnvClient(
    base_url="http://127.0.0.1:8000") as env: await env.reset(task=...)``)."""

    def _step_payload(self, action: WorldAction) -> dict[str, Any]:
        payload: dict[str, Any] = action.model_dump(exclude={"metadata"})
        return payload

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[WorldObservation]:
        fields = dict(payload.get("observation") or {})
        observation = WorldObservation(**fields, done=bool(payload.get("done")),
                                       reward=payload.get("reward"))
        return StepResult(observation=observation, reward=payload.get("reward"),
                          done=bool(payload.get("done")))

    def _parse_state(self, payload: dict[str, Any]) -> WorldState:
        return WorldState(**payload)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m worldspec.adapters.openenv PATH``: serve a world over OpenEnv."""
    parser = argparse.ArgumentParser(prog="python -m worldspec.adapters.openenv",
                                     description="Serve a world through OpenEnv.")
    parser.add_argument("path", help="a generated package (or a .world spec)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--max-sessions", type=int, default=64)
    parser.add_argument("--max-steps", type=int, default=30)
    parser.add_argument("--max-turns", type=int, default=20)
    parser.add_argument("--conversational", action="store_true")
    parser.add_argument("--user-model")
    parser.add_argument("--user-base-url")
    parser.add_argument("--policy", metavar="FILE",
                        help="an external policy text that replaces the world's own")
    parser.add_argument("--system-prompt", metavar="FILE",
                        help="the agent's system prompt template (see docs/rollouts.md)")
    args = parser.parse_args(argv)
    import uvicorn

    from worldspec.services.loading import load_world

    path = Path(args.path)
    if not path.exists():
        print(f"error: {path} does not exist", file=sys.stderr)
        return 2
    if args.conversational and not (args.user_model and args.user_base_url):
        print("error: --conversational needs --user-model and --user-base-url",
              file=sys.stderr)
        return 2
    try:
        policy = None if args.policy is None else read_prompt_file(args.policy, "policy file")
        template = (AGENT_TEMPLATE if args.system_prompt is None
                    else read_prompt_file(args.system_prompt, "prompt template"))
    except PromptFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        world = load_world(path)
    except Exception as exc:  # a spec with errors, a folder that is no world
        print(f"error: cannot load {path}: {exc}", file=sys.stderr)
        return 1

    def user() -> LLMClient:
        return LLMClient(LLMConfig(base_url=str(args.user_base_url), model=str(args.user_model),
                                   api_key=os.environ.get("OPENAI_API_KEY") or "EMPTY"))

    app = create_world_app(world, conversational=args.conversational,
                           user=user if args.conversational else None,
                           max_steps=args.max_steps, max_turns=args.max_turns,
                           max_sessions=args.max_sessions, policy=policy,
                           system_template=template)
    print(f"serving {world.WORLD} at http://{args.host}:{args.port}", file=sys.stderr,
          flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
