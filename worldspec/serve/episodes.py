"""The episodes a server holds: explicit handles the harness controls.

The 2026-07-28 MCP revision has no sessions to hang state on (any request may reach any
server instance), so the server keeps its episodes itself and hands out their ids: the
harness creates one (on a task, with a seed, on given data), points the agent's MCP client at
that episode's endpoint, scores it, resets it and deletes it. The agent's tool schemas never
carry an episode argument: which episode a call plays in is the endpoint it was sent to.

:class:`EpisodeTable` holds them: one *default* episode (what ``/mcp`` and stdio serve, never
expired nor deleted) and at most ``max_episodes`` created ones, each dropped once idle for
``idle_timeout`` seconds. Ids are random (128 bits): an episode is reachable only by whoever
was given its id. :class:`EpisodeHost` is one episode and what may be done with it; its work
runs in worker threads from one bounded pool, one call at a time per episode.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from worldspec.runtime.episode import Episode
from worldspec.runtime.errors import ToolError

__all__ = ["ControlError", "EpisodeLimitError", "EpisodeHost", "EpisodeTable",
           "DEFAULT_EPISODE", "WORKERS"]

T = TypeVar("T")

#: worker threads that run episodes' calls at once (an episode runs one call at a time)
WORKERS = 16

#: the id of the episode that ``/mcp`` and stdio serve
DEFAULT_EPISODE = "default"


class ControlError(Exception):
    """A harness request that cannot be carried out (unknown task, bad data or seed)."""


class EpisodeLimitError(ControlError):
    """No room for another episode: ``max_episodes`` are open."""


class EpisodeHost:
    """One episode and what the harness may do with it."""

    def __init__(self, world: type[Episode], task: str | None, seed: int | None,
                 workers: anyio.CapacityLimiter | None = None,
                 data: Mapping[str, Any] | None = None) -> None:
        self.world = world
        self.seed = seed
        self.calls = 0
        self.episode = self._start(task=task, data=data, seed=seed)
        #: the pool the episode's work runs in (None: anyio's default one)
        self.workers = workers
        #: held while the episode is at work: one call at a time
        self.busy = anyio.Lock()
        #: when the episode was last used (time.monotonic), for idle expiry
        self.last_used = time.monotonic()
        #: calls running or waiting: a busy episode never expires
        self.pending = 0

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` on the episode, in a worker thread, after the episode's earlier work:
        the event loop (every other episode) goes on meanwhile. A cancelled request still
        waits for its call to end, so the episode is never used by two threads."""
        self.pending += 1
        try:
            async with self.busy:
                return await anyio.to_thread.run_sync(work, limiter=self.workers)
        finally:
            self.pending -= 1
            self.last_used = time.monotonic()

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
            raise ControlError("the episode has no task to score: reset it onto one first")
        score: dict[str, Any] = self.episode.score(replies=replies).to_json()
        return score

    def tasks(self) -> list[dict[str, Any]]:
        return task_list(self.world)


def task_list(world: type[Episode]) -> list[dict[str, Any]]:
    """The world's tasks as the harness reads them."""
    return [{"name": t.name, "instruction": t.instruction, "split": t.split,
             "tags": list(t.tags), "conversational": t.persona is not None}
            for t in world.TASKS.values()]


class EpisodeTable:
    """The default episode and at most ``max_episodes`` created ones, idle ones expiring."""

    def __init__(self, world: type[Episode], task: str | None = None, seed: int | None = None,
                 *, max_episodes: int = 64, idle_timeout: float = 600.0) -> None:
        self.world = world
        self.max_episodes = max_episodes
        self.idle_timeout = idle_timeout
        self.workers = anyio.CapacityLimiter(WORKERS)
        self.default = EpisodeHost(world, task, seed, self.workers)
        self._created: dict[str, EpisodeHost] = {}

    def create(self, *, task: str | None, seed: int | None,
               data: Mapping[str, Any] | None) -> tuple[str, EpisodeHost]:
        """A new episode and its id; :class:`EpisodeLimitError` when the table is full,
        :class:`ControlError` when the task, seed or data do not fit."""
        self.expire()
        if len(self._created) >= self.max_episodes:
            raise EpisodeLimitError(f"{self.max_episodes} episodes are open: delete one "
                                    "(DELETE /episodes/ID) or wait for an idle one to expire")
        host = EpisodeHost(self.world, task, seed, self.workers, data)
        episode_id = secrets.token_hex(16)
        self._created[episode_id] = host
        return episode_id, host

    def get(self, episode_id: str) -> EpisodeHost | None:
        """The episode with that id (the default one for :data:`DEFAULT_EPISODE`), marked as
        used; None when there is none (never created, deleted or expired)."""
        if episode_id == DEFAULT_EPISODE:
            return self.default
        self.expire()
        host = self._created.get(episode_id)
        if host is not None:
            host.last_used = time.monotonic()
        return host

    def delete(self, episode_id: str) -> bool:
        """Drop a created episode; False when there is none with that id."""
        return self._created.pop(episode_id, None) is not None

    def ids(self) -> list[str]:
        self.expire()
        return list(self._created)

    def expire(self) -> None:
        """Drop the created episodes idle for longer than ``idle_timeout``."""
        cutoff = time.monotonic() - self.idle_timeout
        for episode_id, host in list(self._created.items()):
            if host.pending == 0 and host.last_used < cutoff:
                del self._created[episode_id]
