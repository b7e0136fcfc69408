"""Many rollouts: tasks x samples, a bounded number at a time, journaled, summarised.

:func:`plan_rollouts` turns worlds, a task selection and ``samples`` into
:class:`RolloutJob`\\ s, each with its key (:func:`~worldspec.rollout.records.rollout_key`) and
its sampling seed. :func:`run_rollout` plays one job: a :class:`~worldspec.rollout.session.
Session` driven by the agent's model and, in a conversation, the simulated user's; it returns
the record. :func:`run_batch` runs every job not finished in the journal, ``concurrency`` at a
time on one event loop, appends each record to the journal as soon as it exists, shows a
progress line and returns a :class:`~worldspec.rollout.summary.BatchSummary`.

Seeds: the environment's seed is the task's (or the world's), the same for every sample, so
samples of a task face the same world and ``worldspec run --calls RECORD`` replays a record
exactly; each rollout's *sampling* seed (sent to the models with each request) is derived
from ``--seed``, the world, the task and the sample index, so samples differ and a rerun asks
the same questions.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, cast

from worldspec.rollout.agent import API, AgentClient
from worldspec.rollout.prompts import USER_TEMPLATE
from worldspec.rollout.records import FORMAT, Journal, RolloutRecord, rollout_key
from worldspec.rollout.session import Session
from worldspec.rollout.summary import BatchSummary
from worldspec.rollout.user import SimulatedUser
from worldspec.runtime.episode import Episode
from worldspec.services.dataset import world_sha256
from worldspec.services.executors import Executor, LocalExecutor
from worldspec.services.loading import load_package
from worldspec.services.model_client import LLMClient, LLMConfig, LLMError, Usage
from worldspec.services.progress import StatusLine
from worldspec.services.prompts import AGENT_TEMPLATE, setting_name

__all__ = ["Progress", "RolloutJob", "RolloutSettings", "RolloutWorker", "WorldSource",
           "load_shipped", "package_files", "plan_rollouts", "run_batch", "run_rollout",
           "select_tasks"]


@dataclass(frozen=True)
class RolloutSettings:
    """Everything that shapes a rollout besides the world and the task."""

    model: str
    api: API = "chat"
    conversational: bool = False
    user_model: str | None = None
    max_steps: int = 30
    max_turns: int = 20
    temperature: float | None = None
    seed: int = 0
    system_template: str = AGENT_TEMPLATE
    user_template: str = USER_TEMPLATE
    #: an external policy text that replaces the worlds' own in the agent's prompt
    policy: str | None = None

    def key_payload(self) -> dict[str, Any]:
        """The settings as they enter a rollout's key (templates and an external policy by
        their hash; without an external policy the key is what it was before there was one)."""
        payload: dict[str, Any] = {
            "model": self.model, "api": self.api, "conversational": self.conversational,
            "user_model": self.user_model if self.conversational else None,
            "max_steps": self.max_steps, "max_turns": self.max_turns,
            "temperature": self.temperature, "seed": self.seed,
            "system": _sha(self.system_template),
            "user": _sha(self.user_template) if self.conversational else None}
        if self.policy is not None:
            payload["policy"] = _sha(self.policy)
        return payload


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class WorldSource:
    """A loaded world and where it came from (as the user named it)."""

    world: type[Episode]
    path: str
    sha256: str

    @classmethod
    def of(cls, world: type[Episode], path: str) -> WorldSource:
        return cls(world, path, world_sha256(world))


@dataclass(frozen=True)
class RolloutJob:
    """One rollout to run: a task of a world, a sample index, its key and sampling seed."""

    source: WorldSource
    task: str
    sample: int
    seed: int
    key: str

    @property
    def label(self) -> str:
        return f"{self.source.world.WORLD}.{self.task}#{self.sample}"


def select_tasks(world: type[Episode], *, names: Sequence[str] = (), split: str | None = None,
                 tag: str | None = None) -> list[str]:
    """The world's tasks that pass the filters, in declaration order."""
    chosen = []
    for name, spec in world.TASKS.items():
        if names and name not in names:
            continue
        if split is not None and (spec.split or "train") != split:
            continue
        if tag is not None and tag not in spec.tags:
            continue
        chosen.append(name)
    return chosen


def plan_rollouts(sources: Sequence[WorldSource], tasks: Sequence[tuple[int, str]],
                  samples: int, settings: RolloutSettings) -> list[RolloutJob]:
    """One job per (world index, task) and sample, keyed and seeded."""
    jobs = []
    for index, task in tasks:
        source = sources[index]
        for sample in range(samples):
            payload = {"format": FORMAT, "world_sha256": source.sha256, "task": task,
                       "sample": sample, "settings": settings.key_payload()}
            key = rollout_key(payload)
            seed_text = f"{settings.seed}\0{source.world.WORLD}\0{task}\0{sample}"
            seed = int(_sha(seed_text)[:8], 16)
            jobs.append(RolloutJob(source, task, sample, seed, key))
    return jobs


@dataclass
class _Clock:
    agent: float = 0.0
    user: float = 0.0


async def run_rollout(job: RolloutJob, settings: RolloutSettings, agent: AgentClient,
                      user: LLMClient | None = None) -> RolloutRecord:
    """Play one job to its end and return its record (``status`` ``error`` when a model
    request failed for good: the trajectory so far is kept, the state scored as it is)."""
    started_at = dt.datetime.now(dt.UTC)
    started = time.perf_counter()
    session = Session(job.source.world, job.task, conversational=settings.conversational,
                      max_steps=settings.max_steps, max_turns=settings.max_turns,
                      system_template=settings.system_template, policy=settings.policy)
    agent_usage, user_usage = Usage(), Usage()
    clock = _Clock()
    error: str | None = None
    session.start()
    simulated: SimulatedUser | None = None
    if settings.conversational:
        if user is None:
            raise ValueError("a conversational rollout needs a user model")
        simulated = SimulatedUser.for_task(job.source.world, session.spec,
                                           template=settings.user_template)
    try:
        while not session.done:
            if session.waiting == "user":
                assert user is not None and simulated is not None
                request = simulated.hear(session.messages[-1])
                begun = time.perf_counter()
                reply = await user.chat(request, usage=user_usage,
                                        temperature=settings.temperature)
                clock.user += time.perf_counter() - begun
                session.user(simulated.said(reply.text))
            else:
                begun = time.perf_counter()
                message = await agent.respond(session.messages, session.tools,
                                              api=settings.api, usage=agent_usage,
                                              seed=job.seed)
                clock.agent += time.perf_counter() - begun
                session.act(message)
    except LLMError as exc:
        error = str(exc)
        session.stop("error")
    score = session.score
    assert score is not None
    scored = score.to_json()
    return {
        "format": FORMAT,
        "key": job.key,
        "status": "error" if error is not None else "finished",
        "error": error,
        "world": job.source.world.WORLD,
        "world_sha256": job.source.sha256,
        "world_path": job.source.path,
        "task": job.task,
        "sample": job.sample,
        "seed": job.seed,
        "env_seed": session.env_seed,
        "conversational": settings.conversational,
        "setting": setting_name(settings.conversational),
        "api": settings.api,
        "models": {"agent": settings.model,
                   "user": settings.user_model if settings.conversational else None},
        "settings": {"max_steps": settings.max_steps, "max_turns": settings.max_turns,
                     "temperature": settings.temperature, "base_seed": settings.seed},
        "messages": session.messages,
        "tools": session.tools,
        "steps": [step.to_json() for step in session.steps],
        "replies": session.replies,
        "reward": scored["reward"],
        "passed": scored["passed"],
        "checks_reward": scored["checks_reward"],
        "checks": scored["checks"],
        "frame": scored["frame"],
        "termination": session.termination,
        "agent_messages": session.agent_messages,
        "user_turns": session.user_turns,
        "usage": {"agent": agent_usage.to_json(), "user": user_usage.to_json(),
                  "total_tokens": agent_usage.total_tokens + user_usage.total_tokens},
        "timing": {"started": started_at.isoformat(timespec="seconds"),
                   "seconds": round(time.perf_counter() - started, 6),
                   "agent_seconds": round(clock.agent, 6),
                   "user_seconds": round(clock.user, 6),
                   "env_seconds": round(session.env_seconds, 6)},
    }


class Progress(StatusLine):
    """The rollout batch's status line: rollouts done, mean reward, errors, tokens."""

    def __init__(self, total: int, stream: TextIO, *, enabled: bool | None = None) -> None:
        super().__init__(stream, enabled=enabled)
        self.total = total
        self.done = 0
        self.errors = 0
        self.rewards: list[float] = []
        self.tokens = 0

    def add(self, record: RolloutRecord) -> None:
        self.done += 1
        if record.get("status") == "finished":
            self.rewards.append(float(record.get("reward") or 0.0))
        else:
            self.errors += 1
        self.tokens += int(record.get("usage", {}).get("total_tokens", 0))
        self.draw()

    def line(self) -> str:
        mean = f"{sum(self.rewards) / len(self.rewards):.3f}" if self.rewards else "-"
        errors = f", {self.errors} errors" if self.errors else ""
        return (f"rollouts {self.done}/{self.total} done, mean reward {mean}{errors}, "
                f"{self.tokens:,} tokens")


def package_files(world: type[Episode]) -> dict[str, bytes]:
    """The files of ``world``'s generated package (relative path -> bytes): what a worker on
    another machine needs to load it with the runtime alone."""
    module = sys.modules.get(world.__module__)
    source = getattr(module, "__file__", None)
    if not source:
        raise ValueError(f"the world {world.WORLD} does not come from a generated package, "
                         "so it cannot be sent to a worker")
    folder = Path(source).parent
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def load_shipped(sha256: str, files: dict[str, bytes]) -> type[Episode]:
    """A shipped package (:func:`package_files`) written to a new folder under this machine's
    temp folder and imported: the runtime and the world, no compiler. The folder stays while
    the worker runs (the world reads its task data from it); :meth:`RolloutWorker.stop`
    removes it."""
    folder = Path(tempfile.mkdtemp(prefix=f"worldspec-worker-{sha256[:12]}-"))
    for relative, data in files.items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    world: type[Episode] = load_package(folder, name=f"_worldspec_shipped_{sha256[:16]}").World
    return world


class RolloutWorker:
    """What a rollout worker holds: the worlds, the settings and the model endpoints.

    Sent to a Ray worker once (pickled), it carries each world as its generated package's
    source, compiled once on the driver, and the endpoints' configs; :meth:`start` loads the
    worlds there with the runtime alone and opens one client per endpoint, bounded by its
    ``concurrency``. In this process the loaded worlds and any open clients are used as they
    are. A payload is ``(world index, task, sample, seed, key)``; the result is the record.
    """

    def __init__(self, sources: Sequence[WorldSource], settings: RolloutSettings,
                 agent: AgentClient | LLMConfig, user: LLMClient | LLMConfig | None) -> None:
        self.sources = list(sources)
        self.settings = settings
        self.agent_config = agent if isinstance(agent, LLMConfig) else None
        self.user_config = user if isinstance(user, LLMConfig) else None
        self.agent = agent if isinstance(agent, AgentClient) else None
        self.user = user if isinstance(user, LLMClient) else None
        self._opened: list[LLMClient] = []
        self._shipped: list[tuple[str, str, dict[str, bytes]]] = []
        self._folders: list[Path] = []

    def __getstate__(self) -> dict[str, Any]:
        if self.agent_config is None or (self.user is not None and self.user_config is None):
            raise TypeError("a rollout worker that runs elsewhere needs the endpoints' "
                            "configs, not open clients")
        shipped = [(s.sha256, s.path, package_files(s.world)) for s in self.sources]
        return {"settings": self.settings, "agent_config": self.agent_config,
                "user_config": self.user_config, "shipped": shipped}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """On the worker: the configs and the packages' source; :meth:`start` loads them."""
        self.sources, self.settings = [], state["settings"]
        self.agent_config, self.user_config = state["agent_config"], state["user_config"]
        self.agent, self.user = None, None
        self._opened, self._shipped, self._folders = [], state["shipped"], []

    async def start(self) -> None:
        if self._shipped:
            self.sources = [WorldSource(load_shipped(sha, files), path, sha)
                            for sha, path, files in self._shipped]
            self._shipped = []
            self._folders = [Path(str(sys.modules[s.world.__module__].__file__)).parent
                             for s in self.sources]
        if self.agent is None and self.agent_config is not None:
            self.agent = AgentClient(self.agent_config)
            self._opened.append(self.agent)
        if self.user is None and self.user_config is not None:
            self.user = LLMClient(self.user_config)
            self._opened.append(self.user)

    async def run(self, payload: tuple[int, str, int, int, str]) -> RolloutRecord:
        index, task, sample, seed, key = payload
        assert self.agent is not None, "start() the worker first"
        job = RolloutJob(self.sources[index], task, sample, seed, key)
        return await run_rollout(job, self.settings, self.agent, self.user)

    async def stop(self) -> None:
        for client in self._opened:
            await client.aclose()
        self._opened.clear()
        for folder in self._folders:  # the shipped packages' copies on this machine
            shutil.rmtree(folder, ignore_errors=True)
        self._folders.clear()


def _error_record(job: RolloutJob, exc: BaseException) -> RolloutRecord:
    """The record of a rollout that raised (a bug) or whose every worker died."""
    return {"format": FORMAT, "key": job.key, "status": "error",
            "error": f"internal error: {type(exc).__name__}: {exc}",
            "world": job.source.world.WORLD, "world_sha256": job.source.sha256,
            "world_path": job.source.path, "task": job.task,
            "sample": job.sample, "seed": job.seed,
            "usage": {"total_tokens": 0}}


async def run_batch(jobs: Sequence[RolloutJob], settings: RolloutSettings,
                    agent: AgentClient | LLMConfig, user: LLMClient | LLMConfig | None, *,
                    journal: Journal, concurrency: int = 4,
                    progress: Progress | None = None,
                    on_record: Callable[[RolloutRecord], None] | None = None,
                    executor: Executor | None = None) -> BatchSummary:
    """Run every job not finished in ``journal``, ``concurrency`` at a time.

    Each record is journaled (fsynced) the moment its rollout ends. An unexpected exception
    in one rollout (a bug) becomes an ``error`` record for that rollout; the others go on.
    ``executor`` says where rollouts run (default: this event loop); only this process
    writes the journal. Elsewhere than here, ``agent`` and ``user`` must be configs (each
    worker opens its own clients).
    """
    unique: dict[str, RolloutJob] = {}
    for job in jobs:
        unique.setdefault(job.key, job)
    done = [journal.records[k] for k in unique if journal.finished(k)]
    summary = BatchSummary(total=len(unique), resumed=len(done))
    summary.records.extend(done)
    todo = [job for key, job in unique.items() if not journal.finished(key)]
    if progress is not None:
        for record in done:
            progress.add(record)
    sources = list({id(job.source): job.source for job in todo}.values())
    where = {id(source): index for index, source in enumerate(sources)}
    worker = RolloutWorker(sources, settings, agent, user)

    def prepare(job: RolloutJob) -> tuple[int, str, int, int, str]:
        return where[id(job.source)], job.task, job.sample, job.seed, job.key

    def finish(job: RolloutJob, outcome: Any) -> None:
        record = (cast(RolloutRecord, outcome) if isinstance(outcome, dict)
                  else _error_record(job, outcome))
        journal.append(record)
        summary.records.append(record)
        if on_record is not None:
            on_record(record)
        if progress is not None:
            progress.add(record)

    runner = executor or LocalExecutor(concurrency=max(1, concurrency))
    try:
        await runner.run(worker, todo, prepare=prepare, finish=finish)
    finally:
        if progress is not None:
            progress.close()
    order = {key: index for index, key in enumerate(unique)}
    summary.records.sort(key=lambda r: order.get(str(r.get("key")), len(order)))
    return summary
