"""A world as a text environment for RL trainers: ``reset`` and ``step`` over chat messages.

RL frameworks that train tool-using agents (SkyRL-gym, verl's agent loops, ROLL) drive an
environment with two calls: ``reset(task, seed) -> (messages, tools)`` hands the policy its
prompt and tool definitions; ``step(assistant_message) -> (messages, reward, done, info)``
takes the policy's OpenAI-format reply, runs its tool calls in order and answers with what the
policy sees next (tool results, or the simulated user's reply in a conversation). The reward
is the task's score once the episode ends, 0.0 before.

There is no turn logic here: :class:`TextEnv` drives a
:class:`~worldspec.rollout.session.Session` (the same object ``worldspec rollout`` plays) and,
in a conversation, a :class:`~worldspec.rollout.user.SimulatedUser` asked through
:class:`~worldspec.services.model_client.LLMClient` exactly as the runner asks it, so a policy
that writes the same messages gets the same trajectory, record for record::

    env = TextEnv(World)
    messages, tools = env.reset("tidy_archive")
    while True:
        reply = policy(messages, tools)                 # an OpenAI-format assistant message
        step = env.step(reply)
        messages = [*messages, reply, *step.messages]
        if step.done:
            break
    step.reward, step.info["checks"], step.info["termination"]

Conversational environments need the user model, so their steps are coroutines:
``await env.areset(task)`` and ``await env.astep(message)``; the sync ``reset``/``step`` refuse
them with a message saying so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldspec.rollout.prompts import USER_TEMPLATE
from worldspec.rollout.session import Session, Turn
from worldspec.rollout.user import SimulatedUser
from worldspec.runtime.episode import Episode, Score
from worldspec.services.model_client import LLMClient, LLMError, Usage
from worldspec.services.prompts import AGENT_TEMPLATE

__all__ = ["TRAJECTORY_FIELDS", "StepResult", "TextEnv", "replay_score"]

#: The fields of a rollout record (``worldspec.rollout/1``) that the session alone decides:
#: what a step-API trajectory shares with ``worldspec rollout``'s record of the same messages.
#: The rest (key, sampling seed, models, usage, timing) belong to whoever called the models.
TRAJECTORY_FIELDS = ("task", "env_seed", "conversational", "setting", "messages", "tools",
                     "steps", "replies", "reward", "passed", "checks_reward", "checks", "frame",
                     "termination", "agent_messages", "user_turns")



@dataclass(frozen=True)
class StepResult:
    """What one step produced; unpacks as ``messages, reward, done, info``."""

    #: the messages the policy sees next: tool results in call order, then the user's reply
    messages: list[dict[str, Any]]
    #: the task's score once done (0.0 before, and 0.0 with a broken frame)
    reward: float
    done: bool
    #: ``waiting``, ``tool_steps`` (this step's calls: name, failed, result), counts; once
    #: done also ``termination``, ``passed``, ``checks`` (per-check breakdown), ``frame``,
    #: ``checks_reward``
    info: dict[str, Any]

    def __iter__(self) -> Any:
        return iter((self.messages, self.reward, self.done, self.info))


@dataclass
class TextEnv:
    """One episode at a time of a world, driven by chat messages (see the module doc).

    ``world`` is an episode class (a generated package's ``World``). ``conversational``
    puts a simulated user in the loop; it needs ``user``, an :class:`LLMClient` the caller
    opens and closes (one client may serve many environments). ``max_steps``/``max_turns``,
    the prompt templates and ``temperature`` (sent to the user model) mean what they mean
    for ``worldspec rollout``; ``policy`` is an external policy text that replaces the
    world's own in the agent's prompt (``worldspec rollout --policy FILE``).
    ``record_diffs`` keeps the per-call state diffs of the trajectory (as the runner's
    records do); a trainer that never reads them can switch them off and save a state copy
    per write.
    """

    world: type[Episode]
    conversational: bool = False
    user: LLMClient | None = None
    max_steps: int = 30
    max_turns: int = 20
    temperature: float | None = None
    system_template: str = AGENT_TEMPLATE
    user_template: str = USER_TEMPLATE
    policy: str | None = None
    record_diffs: bool = True
    #: the tokens the simulated user spent in the current episode
    user_usage: Usage = field(init=False, default_factory=Usage)
    _session: Session | None = field(init=False, default=None, repr=False)
    _simulated: SimulatedUser | None = field(init=False, default=None, repr=False)
    _error: str | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        if self.conversational and self.user is None:
            raise ValueError("a conversational TextEnv needs user=LLMClient(...) for the "
                             "simulated user")

    @classmethod
    def from_path(cls, path: str | Path, **options: Any) -> TextEnv:
        """An environment over the world at ``path``: a generated package (the runtime
        only is loaded) or a spec (compiled on the fly, cached by its hash)."""
        from worldspec.services.loading import load_world

        return cls(load_world(path), **options)

    # ------------------------------------------------------------------ reading
    @property
    def session(self) -> Session:
        """The current episode's session (its episode, trajectory, steps and score)."""
        if self._session is None:
            raise RuntimeError("no episode yet: call reset(task) (or await areset(task)) "
                               "first")
        return self._session

    @property
    def tasks(self) -> list[str]:
        """The world's task names, in declaration order."""
        return list(self.world.TASKS)

    @property
    def done(self) -> bool:
        return self._session is not None and self._session.done

    # ---------------------------------------------------------------- one-shot
    def reset(self, task: str, seed: int | None = None
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Start an episode of ``task`` (environment seed ``seed``, default the task's):
        the opening messages (system, user) and the tools, in Chat Completions format."""
        self._refuse_sync("reset", "areset")
        return self._open(task, seed)

    def step(self, message: Mapping[str, Any]) -> StepResult:
        """Feed the policy's assistant message; its tool calls run in order."""
        self._refuse_sync("step", "astep")
        session = self.session
        before = len(session.steps)
        turn = self._act(session, message)
        return self._result(session, list(turn.messages), before)

    # ----------------------------------------------------------- conversational
    async def areset(self, task: str, seed: int | None = None
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """As :meth:`reset`; in a conversation the user model speaks first, so the opening
        is system, the agent's greeting and the user's first message."""
        messages, tools = self._open(task, seed)
        session = self.session
        if session.waiting == "user":
            await self._hear_user(session)
            messages = list(session.messages)
        return messages, tools

    async def astep(self, message: Mapping[str, Any]) -> StepResult:
        """As :meth:`step`; a reply without tool calls goes to the simulated user, whose
        answer comes back as a user message (its stop marker ends the episode)."""
        session = self.session
        before_steps = len(session.steps)
        turn = self._act(session, message)
        added = list(turn.messages)
        if turn.waiting == "user":
            mark = len(session.messages)
            await self._hear_user(session)
            added.extend(session.messages[mark:])
        return self._result(session, added, before_steps)

    # ------------------------------------------------------------------ record
    def trajectory(self) -> dict[str, Any]:
        """The episode so far as the session-decided fields of a ``worldspec.rollout/1``
        record (:data:`TRAJECTORY_FIELDS`): the same values ``worldspec rollout`` records
        for the same messages. ``reward`` and the verdict are ``None`` before the end."""
        session = self.session
        scored = session.score.to_json() if session.score is not None else {}
        return {
            "task": session.task,
            "env_seed": session.env_seed,
            "conversational": session.conversational,
            "setting": session.setting,
            "messages": [dict(m) for m in session.messages],
            "tools": session.tools,
            "steps": [step.to_json() for step in session.steps],
            "replies": list(session.replies),
            "reward": scored.get("reward"),
            "passed": scored.get("passed"),
            "checks_reward": scored.get("checks_reward"),
            "checks": scored.get("checks"),
            "frame": scored.get("frame"),
            "termination": session.termination,
            "agent_messages": session.agent_messages,
            "user_turns": session.user_turns,
        }

    # ------------------------------------------------------------------ inside
    def _refuse_sync(self, name: str, instead: str) -> None:
        if self.conversational:
            raise TypeError(f"{name}() cannot ask the simulated user's model; a "
                            f"conversational TextEnv is driven with `await env.{instead}(...)`")

    def _open(self, task: str, seed: int | None
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        if task not in self.world.TASKS:
            known = ", ".join(self.world.TASKS) or "none"
            raise KeyError(f"world {self.world.WORLD} has no task {task!r} (tasks: {known})")
        session = Session(self.world, task, conversational=self.conversational,
                          max_steps=self.max_steps, max_turns=self.max_turns, seed=seed,
                          system_template=self.system_template, policy=self.policy,
                          record_diffs=self.record_diffs)
        self._session, self._error = session, None
        self.user_usage = Usage()
        self._simulated = (SimulatedUser.for_task(self.world, session.spec,
                                                  template=self.user_template)
                           if self.conversational else None)
        return session.start(), list(session.tools)

    def _act(self, session: Session, message: Mapping[str, Any]) -> Turn:
        if not isinstance(message, Mapping):
            raise TypeError("step() takes an assistant message, a mapping such as "
                            "{'role': 'assistant', 'content': ..., 'tool_calls': [...]}, "
                            f"not {type(message).__name__}")
        if session.done:
            raise RuntimeError(f"the episode is over ({session.termination}); call reset() "
                               "to start another")
        return session.act(message)

    async def _hear_user(self, session: Session) -> None:
        """One turn of the simulated user, asked as the runner asks it; a model request
        that fails for good ends the episode (``termination`` ``error``), as in a batch."""
        assert self.user is not None and self._simulated is not None
        request = self._simulated.hear(session.messages[-1])
        try:
            reply = await self.user.chat(request, usage=self.user_usage,
                                         temperature=self.temperature)
        except LLMError as exc:
            self._error = str(exc)
            session.stop("error")
            return
        session.user(self._simulated.said(reply.text))

    def _result(self, session: Session, added: Sequence[dict[str, Any]],
                first_step: int) -> StepResult:
        info: dict[str, Any] = {
            "waiting": session.waiting,
            "tool_steps": [{"name": s.name, "failed": s.failed, "result": s.result}
                           for s in session.steps[first_step:]],
            "agent_messages": session.agent_messages,
            "user_turns": session.user_turns,
        }
        reward = 0.0
        if session.done:
            assert session.score is not None
            scored = session.score.to_json()
            reward = float(scored["reward"])
            info.update(termination=session.termination, passed=scored["passed"],
                        checks=scored["checks"],
                        frame=scored["frame"], checks_reward=scored["checks_reward"])
            if self._error is not None:
                info["error"] = self._error
        return StepResult(list(added), reward, session.done, info)



def replay_score(world: type[Episode], task: str, calls: Sequence[tuple[str, str]],
                 replies: Sequence[str], *, seed: int | None = None) -> Score:
    """The task's score after running ``calls`` (tool name, arguments as the model wrote
    them) in order on a fresh episode, with the agent's ``replies`` for answer checks: what a
    session that ran those calls scores, recomputed from its record alone (the world is
    deterministic for a seed). Adapters use it as the rubric of a recorded trajectory."""
    episode = world(task=task, seed=seed)
    for name, arguments in calls:
        episode.call(name, arguments)
    return episode.score(replies=list(replies))
