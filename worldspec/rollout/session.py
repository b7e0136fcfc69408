"""One agent in one episode: the turn logic, without any model.

A :class:`Session` drives an episode from OpenAI-format messages. Whoever plays the agent
(the rollout runner's model client, a trainer's policy, a test) feeds it assistant messages;
it runs their tool calls through ``episode.call`` and answers with the tool messages, and in
a conversation it takes the user's replies. It keeps the whole trajectory (``messages``), the
raw result and state diff of every tool call (``steps``), what the agent told the user
(``replies``) and, once done, the score. The runner is built on this object, so a ``step()``
API that drives a session gives the same trajectories as ``worldspec rollout``::

    session = Session(World, "reply_to_priya")
    messages = session.start()                     # system (+ user, or the greeting)
    turn = session.act({"role": "assistant", "content": None, "tool_calls": [...]})
    turn.messages                                  # one tool message per call, in order
    turn.waiting                                   # "agent", "user" or None (done)
    turn = session.act({"role": "assistant", "content": "Done."})
    turn.done, turn.reward, session.score          # reason "answered", reward, breakdown

Nothing a model sends can crash a session: a call to an unknown tool, arguments that are not
JSON or not an object, missing or mistyped arguments and failing tools all come back as tool
messages in the world's result convention (``episode.call`` never raises for bad input).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from worldspec.rollout.prompts import STOP_MARKER
from worldspec.runtime.episode import Episode, Score, TaskSpec
from worldspec.services.prompts import AGENT_TEMPLATE, Setting, opening_messages, setting_name

__all__ = ["Session", "ToolStep", "Turn", "Termination", "Waiting", "result_text"]

#: Who the session waits for: the agent's next message, the user's, or nobody (done).
Waiting = Literal["agent", "user"] | None

#: Why a session ended: the agent answered without a tool call (one-shot), the user wrote the
#: stop marker, the agent used up ``max_steps`` messages, the conversation used up
#: ``max_turns`` user turns, or the driver gave up (a model request failed for good).
Termination = Literal["answered", "user_stop", "max_steps", "max_turns", "error"]


@dataclass(frozen=True)
class ToolStep:
    """One tool call the agent made, as the world ran it."""

    #: position among all the session's tool calls, and the agent message it came in
    index: int
    message: int
    call_id: str
    name: str
    #: the arguments as the model sent them (JSON text, possibly malformed)
    arguments: str
    #: the result exactly as ``episode.call`` returned it (the world's convention)
    result: Any
    failed: bool
    #: what the call changed: ``episode.diff`` entries (empty for reads and failures)
    diff: tuple[Mapping[str, Any], ...]
    state_hash: str
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "message": self.message, "call_id": self.call_id,
                "name": self.name, "arguments": self.arguments, "result": self.result,
                "failed": self.failed, "diff": [dict(d) for d in self.diff],
                "state_hash": self.state_hash, "seconds": round(self.seconds, 6)}


@dataclass(frozen=True)
class Turn:
    """What one message fed to a session produced."""

    #: the messages the session added after the one fed in (tool results)
    messages: tuple[dict[str, Any], ...]
    waiting: Waiting
    #: the reward once done (``None`` before)
    reward: float | None = None

    @property
    def done(self) -> bool:
        return self.waiting is None


def result_text(result: Any) -> str:
    """A tool result as the text of a tool message: strings as they are, the rest as JSON."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _arguments_text(raw: Any) -> str:
    if raw is None:
        return ""
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)


@dataclass
class Session:
    """The turn logic of one rollout: an episode, its trajectory and its end.

    ``conversational``: a simulated user talks to the agent (``user()`` feeds its messages);
    otherwise the task's instruction is the only user message and the first reply without
    tool calls ends the session. ``max_steps`` bounds the agent's messages, ``max_turns``
    the user's (in a conversation). ``seed`` is the episode's seed (default: the task's, else
    the world's): the same seed and the same messages give the same results and reward.
    ``policy`` (an external policy text replacing the world's own) and ``system_template``
    shape the agent's system prompt (:func:`~worldspec.services.prompts.opening_messages`).
    """

    world: type[Episode]
    task: str
    conversational: bool = False
    max_steps: int = 30
    max_turns: int = 20
    seed: int | None = None
    system_template: str = AGENT_TEMPLATE
    policy: str | None = None
    #: whether to record a state diff per state-changing call (off for the bare benchmark)
    record_diffs: bool = True
    episode: Episode = field(init=False)
    messages: list[dict[str, Any]] = field(init=False, default_factory=list)
    tools: list[dict[str, Any]] = field(init=False, default_factory=list)
    steps: list[ToolStep] = field(init=False, default_factory=list)
    #: the text of every assistant message that had some (what the agent told the user)
    replies: list[str] = field(init=False, default_factory=list)
    agent_messages: int = field(init=False, default=0)
    user_turns: int = field(init=False, default=0)
    waiting: Waiting = field(init=False, default="agent")
    termination: Termination | None = field(init=False, default=None)
    score: Score | None = field(init=False, default=None)
    env_seconds: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        if self.task not in self.world.TASKS:
            raise KeyError(f"world {self.world.WORLD} has no task {self.task!r}")
        if self.max_steps < 1 or self.max_turns < 1:
            raise ValueError("max_steps and max_turns must be at least 1")
        self.episode = self.world(task=self.task, seed=self.seed)
        self.tools = self.episode.tools("chat")
        self._before = self.episode.copy() if self.record_diffs else None
        #: the state hash after the last call: a read or a failed call leaves it as it was
        self._hash: str | None = None

    @property
    def spec(self) -> TaskSpec:
        return self.world.TASKS[self.task]

    @property
    def setting(self) -> Setting:
        """``conversational`` or ``one-shot``: the setting the agent's prompt is for."""
        return setting_name(self.conversational)

    @property
    def env_seed(self) -> int:
        """The seed the episode was reset with (as ``Episode.reset`` chooses it)."""
        if self.seed is not None:
            return self.seed
        return self.spec.seed if self.spec.seed is not None else self.world.SEED

    @property
    def done(self) -> bool:
        return self.waiting is None

    # ---------------------------------------------------------------- turns
    def start(self) -> list[dict[str, Any]]:
        """The opening messages: the system prompt, then the task's instruction as the user
        (one-shot) or the agent's greeting (a conversation, where the user speaks next)."""
        if self.messages:
            raise RuntimeError("the session has started already")
        self.messages.extend(opening_messages(
            self.world, self.task, conversational=self.conversational, policy=self.policy,
            template=self.system_template))
        self.waiting = "user" if self.conversational else "agent"
        return list(self.messages)

    def act(self, message: Mapping[str, Any]) -> Turn:
        """Feed the agent's message (OpenAI chat format); its tool calls run in order."""
        if self.waiting != "agent":
            raise RuntimeError(f"the session waits for {self.waiting or 'nobody (done)'}, "
                               "not the agent")
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        calls = [c for c in (message.get("tool_calls") or []) if isinstance(c, Mapping)]
        self.agent_messages += 1
        stored: dict[str, Any] = {"role": "assistant", "content": text or None}
        normalised: list[dict[str, Any]] = []
        for position, call in enumerate(calls):
            function = call.get("function")
            function = function if isinstance(function, Mapping) else {}
            call_id = str(call.get("id") or f"call_{self.agent_messages}_{position}")
            normalised.append({"id": call_id, "type": "function",
                               "function": {"name": str(function.get("name") or ""),
                                            "arguments": _arguments_text(
                                                function.get("arguments"))}})
        if normalised:
            stored["tool_calls"] = normalised
        elif not text:
            stored["content"] = ""
        self.messages.append(stored)
        if text.strip():
            self.replies.append(text)
        added = [self._run_call(call) for call in normalised]
        self.messages.extend(added)
        if normalised:
            if self.agent_messages >= self.max_steps:
                return self._finish("max_steps", added)
            return Turn(tuple(added), "agent")
        if not self.conversational:
            return self._finish("answered", added)
        if self.agent_messages >= self.max_steps:
            return self._finish("max_steps", added)
        if self.user_turns >= self.max_turns:
            return self._finish("max_turns", added)
        self.waiting = "user"
        return Turn((), "user")

    def user(self, text: str) -> Turn:
        """Feed the simulated user's message; the stop marker ends the session."""
        if self.waiting != "user":
            raise RuntimeError(f"the session waits for {self.waiting or 'nobody (done)'}, "
                               "not the user")
        self.user_turns += 1
        stop = STOP_MARKER in text
        said = text.replace(STOP_MARKER, "").strip() if stop else text
        if said or not stop:
            self.messages.append({"role": "user", "content": said})
        if stop:
            return self._finish("user_stop", [])
        self.waiting = "agent"
        return Turn((), "agent")

    def stop(self, reason: Termination = "error") -> Score:
        """End the session now (the driver gave up); the state is scored as it is."""
        if self.waiting is not None:
            self._finish(reason, [])
        assert self.score is not None
        return self.score

    # --------------------------------------------------------------- inside
    def _run_call(self, call: Mapping[str, Any]) -> dict[str, Any]:
        function = call["function"]
        name, arguments = function["name"], function["arguments"]
        episode = self.episode
        started = time.perf_counter()
        result = episode.call(name, arguments)
        failed = episode.failed(result)
        diff: tuple[Mapping[str, Any], ...] = ()
        spec = episode.TOOLS.get(name)
        writes = not failed and spec is not None and not spec.read_only
        if self._before is not None and writes:
            diff = tuple(episode.diff(self._before))
            if diff:
                self._before = episode.copy()
        if writes or self._hash is None:
            self._hash = episode.state_hash()
        state_hash = self._hash
        seconds = time.perf_counter() - started
        self.env_seconds += seconds
        self.steps.append(ToolStep(len(self.steps), self.agent_messages, call["id"], name,
                                   arguments, result, failed, diff, state_hash, seconds))
        return {"role": "tool", "tool_call_id": call["id"], "content": result_text(result)}

    def _finish(self, reason: Termination, added: Sequence[dict[str, Any]]) -> Turn:
        self.waiting = None
        self.termination = reason
        started = time.perf_counter()
        self.score = self.episode.score(replies=self.replies)
        self.env_seconds += time.perf_counter() - started
        return Turn(tuple(added), None, self.score.reward)
