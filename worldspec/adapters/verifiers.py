"""A world's tasks as a ``verifiers`` environment (Prime Intellect's ``verifiers``, the v1 stack).

``verifiers.v1`` composes an environment from a *taskset* (the rows), a *harness* (the program
that plays a seat: it talks to the model through the rollout's interception endpoint, which
records the trace) and the tasks' ``@vf.reward`` functions. This module supplies the three:

- :class:`WorldTaskset` yields one :class:`WorldTask` per task of the world (``world=`` a
  generated package or a spec; ``tasks``/``split`` pick some), whose ``system_prompt`` and
  ``prompt`` are the opening the harness shows the model (the prompt every front end builds,
  :mod:`worldspec.services.prompts`; ``policy_file`` and ``prompt_template_file`` shape it as
  ``--policy`` and ``--system-prompt`` shape a rollout's);
- :class:`WorldHarness` plays the seat in-process, as the v1 harness contract allows: a
  :class:`~worldspec.rl.env.TextEnv` (the rollout runner's turn logic) whose assistant
  messages come from the model behind the interception endpoint, the world's tools
  executed in order through ``episode.call``, and in a conversation the simulated user asked
  through our own client (the user's tokens are not the policy's, so they stay off the
  trace). The calls, replies and termination go to ``trace.info["worldspec"]``;
- :meth:`WorldTask.world_reward` is the rubric: it replays those calls on a fresh episode
  and returns the task's score (0 with a broken frame); ``world_checks`` records whether the
  task passed, the checks' share and the frame as metrics, and one ``check_<name>`` metric
  per check that every task of the taskset has (:func:`shared_checks`): verifiers averages a
  metric over every rollout of a run, a rollout without it counting 0, so a check only some
  tasks have would be averaged over rollouts that never had it. Every check's verdict, shared
  or not, is in ``trace.info["worldspec"]["checks"]``.

``load_environment(world, ...)`` builds the whole ``vf.Env`` for programmatic use. verifiers
finds a taskset by importing its id as a module; in this process the id
:data:`PLUGIN_ID` names this module. A separate process (``vf-eval``, an env server) imports
an installed environment package that re-exports the classes: the repository's
``environments/messaging_world`` is one (``docs/serving.md``).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import verifiers.v1 as vf
from pydantic import Field

from worldspec.adapters.verifiers_prompt import verifiers_prompt
from worldspec.rl.env import TextEnv, replay_score
from worldspec.rollout.agent import AgentClient
from worldspec.runtime.episode import Episode
from worldspec.services.model_client import LLMClient, LLMConfig, LLMError
from worldspec.services.prompts import AGENT_TEMPLATE, read_prompt_file

__all__ = ["PLUGIN_ID", "WorldData", "WorldHarness", "WorldHarnessConfig", "WorldTask",
           "WorldTaskset", "WorldTasksetConfig", "load_environment", "shared_checks"]

#: The taskset (and harness) id under which this module is importable in this process.
PLUGIN_ID = "worldspec_verifiers"
sys.modules.setdefault(PLUGIN_ID, sys.modules[__name__])


@functools.cache
def _world(path: str) -> type[Episode]:
    """The world at ``path``, loaded once per process (a package: the runtime only)."""
    from worldspec.services.loading import load_world

    return load_world(path)


class WorldData(vf.TaskData):
    """One task of a world, as verifiers carries it on the trace."""

    world: str
    task: str
    seed: int | None = None
    conversational: bool = False
    max_steps: int = 30
    max_turns: int = 20
    #: the simulated user's model and endpoint (conversational tasks)
    user_model: str | None = None
    user_base_url: str | None = None
    user_api_key_var: str = "OPENAI_API_KEY"
    #: the external policy text and the prompt template (None: the world's policy, the
    #: default template), so the harness builds the prompt the row shows
    policy: str | None = None
    system_template: str | None = None
    #: the checks every task of the taskset has: each is a ``check_<name>`` metric
    metric_checks: list[str] = Field(default_factory=list)


def shared_checks(world: type[Episode], tasks: list[str]) -> list[str]:
    """The names of the checks every one of ``tasks`` has, in the first task's order: the
    checks whose ``check_<name>`` metric a run's average reads over rollouts that all have
    it."""
    if not tasks:
        return []
    common = set.intersection(*({c.name for c in world.TASKS[t].checks} for t in tasks))
    return [c.name for c in world.TASKS[tasks[0]].checks if c.name in common]


class WorldTask(vf.Task[WorldData]):
    """A world's task; its rubric is the task's own score."""

    @vf.reward
    async def world_reward(self, trace: vf.Trace) -> float:
        """The task's score on the state the recorded calls leave (0 with a broken frame)."""
        return float(self._score(trace)["reward"])

    @vf.metric
    async def world_checks(self, trace: vf.Trace) -> dict[str, float]:
        """Whether the task passed, the checks' share, whether the frame held, and each check
        every task of the taskset has (1 passed, 0 not); every check's verdict goes to
        ``trace.info["worldspec"]["checks"]``."""
        scored = self._score(trace)
        verdicts = {str(c["name"]): bool(c["passed"]) for c in scored["checks"]}
        trace.info.setdefault("worldspec", {})["checks"] = verdicts
        values = {"passed": 1.0 if scored["passed"] else 0.0,
                  "checks_reward": float(scored["checks_reward"]),
                  "frame_ok": 1.0 if scored["frame"]["ok"] else 0.0}
        values.update({f"check_{name}": 1.0 if verdicts[name] else 0.0
                       for name in self.data.metric_checks if name in verdicts})
        return values

    def _score(self, trace: vf.Trace) -> dict[str, Any]:
        played = trace.info.get("worldspec") or {}
        calls = [(str(n), str(a)) for n, a in played.get("calls", [])]
        replies = [str(r) for r in played.get("replies", [])]
        data = self.data
        score = replay_score(_world(data.world), data.task, calls, replies, seed=data.seed)
        return score.to_json()


class WorldTasksetConfig(vf.TasksetConfig):
    """Which world and which of its tasks; how the episodes run."""

    world: str = ""
    """A generated package folder (loaded without the compiler) or a ``.world`` spec."""
    tasks: list[str] = Field(default_factory=list)
    """Task names to keep (default: every task)."""
    split: str | None = None
    """Keep the tasks of this split only."""
    conversational: bool = False
    """A simulated user talks to the agent (needs ``user_model`` and ``user_base_url``)."""
    max_steps: int = 30
    max_turns: int = 20
    seed: int | None = None
    """The episodes' seed (default: each task's)."""
    user_model: str | None = None
    user_base_url: str | None = None
    user_api_key_var: str = "OPENAI_API_KEY"
    policy_file: str | None = None
    """An external policy text (e.g. a benchmark's own policy.md) replacing the world's."""
    prompt_template_file: str | None = None
    """The agent's system prompt template (docs/rollouts.md); verifiers' own
    ``system_prompt`` is refused, since the harness would not show it."""


class WorldTaskset(vf.Taskset[WorldTask, WorldTasksetConfig]):
    """The tasks of one world, in declaration order."""

    def load(self) -> Any:
        config = self.config
        if not config.world:
            raise ValueError("set the world: --env.taskset.world PATH (a generated package "
                             "or a .world spec)")
        if config.conversational and not (config.user_model and config.user_base_url):
            raise ValueError("a conversational taskset needs user_model and user_base_url "
                             "for the simulated user")
        if config.system_prompt is not None:
            raise ValueError("a world's system prompt is built from the world: set "
                             "prompt_template_file (a template, docs/rollouts.md) and "
                             "policy_file instead of system_prompt")
        policy = (None if config.policy_file is None
                  else read_prompt_file(config.policy_file, "policy file"))
        template = (None if config.prompt_template_file is None
                    else read_prompt_file(config.prompt_template_file, "prompt template"))
        world = _world(config.world)
        unknown = sorted(set(config.tasks) - set(world.TASKS))
        if unknown:
            raise ValueError(f"world {world.WORLD} has no task {', '.join(unknown)}")
        chosen = [name for name, spec in world.TASKS.items()
                  if (not config.tasks or name in config.tasks)
                  and (config.split is None or (spec.split or "train") == config.split)]
        metric_checks = shared_checks(world, chosen)
        for name in chosen:
            opening = verifiers_prompt(world, name, conversational=config.conversational,
                                       policy=policy, template=template or AGENT_TEMPLATE)
            data = WorldData(
                id=f"{world.WORLD}/{name}", name=name, prompt=opening.prompt,
                system_prompt=opening.system_prompt,
                world=config.world, task=name, seed=config.seed,
                conversational=config.conversational, max_steps=config.max_steps,
                max_turns=config.max_turns, user_model=config.user_model,
                user_base_url=config.user_base_url, user_api_key_var=config.user_api_key_var,
                policy=policy, system_template=template, metric_checks=metric_checks)
            yield WorldTask(data, config.task)


class WorldHarnessConfig(vf.HarnessConfig):
    """The in-process world harness; ``request_timeout`` bounds one model request."""

    request_timeout: float = 120.0


class WorldHarness(vf.Harness[WorldHarnessConfig]):
    """Plays a world's task in-process: the model through the interception endpoint, the
    tools through ``episode.call``, the turn logic of ``worldspec rollout``."""

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx: vf.ModelContext, trace: vf.Trace, runtime: vf.Runtime,
                     endpoint: str, secret: str, mcp_urls: dict[str, str], data: Any,
                     **_: Any) -> vf.ProgramResult:
        if not isinstance(data, WorldData):
            data = WorldData.model_validate(data.model_dump())
        world = _world(data.world)
        agent = AgentClient(LLMConfig(base_url=endpoint.rstrip("/"), model=ctx.model,
                                      api_key=secret, timeout=self.config.request_timeout,
                                      max_retries=0))
        user: LLMClient | None = None
        if data.conversational:
            user = LLMClient(LLMConfig(
                base_url=str(data.user_base_url), model=str(data.user_model),
                api_key=os.environ.get(data.user_api_key_var) or "EMPTY",
                timeout=self.config.request_timeout))
        env = TextEnv(world, conversational=data.conversational, user=user,
                      max_steps=data.max_steps, max_turns=data.max_turns, policy=data.policy,
                      system_template=data.system_template or AGENT_TEMPLATE)
        error: str | None = None
        try:
            messages, tools = await env.areset(data.task, seed=data.seed)
            while not env.done:
                try:
                    reply = await agent.respond(messages, tools)
                except LLMError as exc:
                    error = str(exc)
                    env.session.stop("error")
                    break
                step = await env.astep(reply)
                messages = [*messages, reply, *step.messages]
        finally:
            await agent.aclose()
            if user is not None:
                await user.aclose()
        trace.info["worldspec"] = _played(env, error)
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")


def _played(env: TextEnv, error: str | None) -> dict[str, Any]:
    session = env.session
    played: dict[str, Any] = {
        "world": env.world.WORLD, "task": session.task, "env_seed": session.env_seed,
        "calls": [[s.name, s.arguments] for s in session.steps],
        "replies": list(session.replies), "termination": session.termination,
        "reward": session.score.reward if session.score is not None else None,
        "passed": session.score.passed if session.score is not None else None,
    }
    if error is not None:
        played["error"] = error
    return played


def load_environment(world: str | Path, *, tasks: list[str] | None = None,
                     split: str | None = None, conversational: bool = False,
                     max_steps: int = 30, max_turns: int = 20, seed: int | None = None,
                     user_model: str | None = None, user_base_url: str | None = None,
                     user_api_key_var: str = "OPENAI_API_KEY",
                     policy_file: str | Path | None = None,
                     prompt_template_file: str | Path | None = None,
                     **env_options: Any) -> Any:
    """A ``vf.Env`` (the single-agent env) over the tasks of ``world``, played by
    :class:`WorldHarness` and scored by the tasks' own checks. ``policy_file`` and
    ``prompt_template_file`` shape the agent's prompt (as ``--policy`` and
    ``--system-prompt`` do a rollout's). ``env_options`` go to the env config (``timeout``,
    ``retries``, ...)."""
    taskset: Mapping[str, Any] = {
        "id": PLUGIN_ID, "world": str(world), "tasks": list(tasks or []), "split": split,
        "conversational": conversational, "max_steps": max_steps, "max_turns": max_turns,
        "seed": seed, "user_model": user_model, "user_base_url": user_base_url,
        "user_api_key_var": user_api_key_var,
        "policy_file": None if policy_file is None else str(policy_file),
        "prompt_template_file": None if prompt_template_file is None
        else str(prompt_template_file)}
    # the harness runs in this process: the seat's runtime is a local subprocess box, so
    # the interception server is reached on localhost (no tunnel, no sandbox)
    agent = {"harness": {"id": PLUGIN_ID}, "runtime": {"type": "subprocess"}}
    config = vf.resolve_env_config({"taskset": dict(taskset), "agent": agent, **env_options})
    return vf.load_environment(config)
