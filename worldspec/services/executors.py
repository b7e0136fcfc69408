"""Where a batch's items run: on this event loop, or spread over a Ray cluster.

One seam serves every batch (``worldspec rollout`` and each ``worldspec synth`` command): the
caller gives an :class:`ItemWorker` (what one worker process needs, and how it does one item)
and three things happen per item:

1. ``prepare(item)`` on the driver, when the item is dispatched: the payload sent to a worker
   (so it can carry what the driver knows at that moment, such as the tasks accepted so far);
2. ``worker.run(payload)`` on a worker: the work itself, returning a picklable result;
3. ``finish(item, outcome)`` on the driver, when the item ends: ``outcome`` is the result, or
   the exception the work raised. The driver, and only the driver, writes the journal and the
   outputs here, so a Ray batch writes the same files as a local one.

:class:`LocalExecutor` runs everything in this process, at most ``concurrency`` items at once.
:class:`RayExecutor` starts ``workers`` Ray actors, ships the :class:`ItemWorker` to each once
(it holds, say, a compiled world's source and the model endpoint's settings), and keeps at
most ``concurrency`` items in flight per actor, so one model endpoint sees at most
``workers x concurrency`` requests. An actor that dies mid-item (its process killed, its node
lost) is replaced by a fresh one and the item is dispatched again, to whichever worker is
free first, up to ``max_attempts`` times; after that the item ends with :class:`WorkerLost`.
The item's result never depends on which worker ran it.

Ray is an optional extra (the ``ray`` extra): it is imported only when a
:class:`RayExecutor` starts, and :func:`require_ray` says in one sentence what to install. This
module itself imports the standard library alone, so a Ray worker that unpickles its actor
loads nothing else from here.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from worldspec.services.extras import install_line

__all__ = ["BACKENDS", "BackendUnavailable", "Executor", "ItemWorker", "LocalExecutor",
           "RayExecutor", "WorkerLost", "make_executor", "require_ray"]

T = TypeVar("T")

#: What ``--backend`` accepts.
BACKENDS = ("local", "ray")

#: The pip line that brings Ray in, pinned as in the ``ray`` extra.
RAY_INSTALL = install_line("ray")

#: Environment variables a Ray worker needs to import the same worldspec as the driver.
_FORWARDED_ENV = ("PYTHONPATH", "WORLDSPEC_CACHE", "WORLDSPEC_PEERS")

#: The Ray setting for its workers' nice level (Ray's default: 15).
_NICENESS = "RAY_worker_niceness"


class BackendUnavailable(Exception):
    """The chosen backend cannot run here (Ray is not installed, the cluster is unreachable)."""


class WorkerLost(Exception):
    """Every worker that tried an item died before finishing it."""


class ItemWorker(Protocol):
    """What one worker process holds, and how it does one item.

    The object is pickled once per Ray worker (locally it is used as it is): keep in it what
    every item needs (a world's source, the endpoint's settings) and build the heavy parts
    (clients, loaded worlds) in :meth:`start`, which runs once in each worker process.
    """

    async def start(self) -> None: ...

    async def run(self, payload: Any) -> Any: ...

    async def stop(self) -> None: ...


Prepare = Callable[[T], Any]
Finish = Callable[[T, Any], None]


class Executor(Protocol):
    """Runs ``worker`` on every item: ``prepare`` and ``finish`` on the driver."""

    name: str

    async def run(self, worker: ItemWorker, items: Sequence[T], *, prepare: Prepare[T],
                  finish: Finish[T]) -> None: ...


@dataclass
class LocalExecutor:
    """Every item on this event loop, at most ``concurrency`` at once."""

    concurrency: int = 4
    name: str = "local"

    async def run(self, worker: ItemWorker, items: Sequence[T], *, prepare: Prepare[T],
                  finish: Finish[T]) -> None:
        slots = asyncio.Semaphore(max(1, self.concurrency))
        await worker.start()

        async def one(item: T) -> None:
            async with slots:
                outcome: Any
                try:
                    outcome = await worker.run(prepare(item))
                except Exception as exc:  # the caller turns it into an error record
                    outcome = exc
                finish(item, outcome)

        try:
            await asyncio.gather(*(one(item) for item in items))
        finally:
            await worker.stop()


def require_ray() -> Any:
    """The ``ray`` module, or :class:`BackendUnavailable` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise BackendUnavailable(f"--backend ray needs Ray, which is not installed: "
                                 f"{RAY_INSTALL}") from None
    return ray


class _WorkerHost:
    """The Ray actor around an :class:`ItemWorker`: starts it on the first item and runs
    items concurrently on the actor's event loop."""

    def __init__(self, worker: ItemWorker) -> None:
        self.worker = worker
        self.started = False
        self.lock = asyncio.Lock()

    async def run(self, payload: Any) -> Any:
        async with self.lock:
            if not self.started:
                await self.worker.start()
                self.started = True
        return await self.worker.run(payload)

    async def stop(self) -> None:
        if self.started:
            await self.worker.stop()
            self.started = False

    def pid(self) -> int:
        return os.getpid()


@dataclass
class RayExecutor:
    """Items spread over ``workers`` Ray actors, ``concurrency`` in flight on each.

    ``address`` is the cluster to join (``None``: a Ray already initialised in this process,
    else ``RAY_ADDRESS``, else a local cluster on 127.0.0.1 started for the batch and stopped
    after it).
    The driver's ``PYTHONPATH`` and ``WORLDSPEC_*`` settings travel in the runtime
    environment, merged into ``runtime_env``.
    """

    workers: int = 2
    concurrency: int = 4
    address: str | None = None
    runtime_env: Mapping[str, Any] | None = None
    #: dispatches of one item before it ends with :class:`WorkerLost`
    max_attempts: int = 3
    #: CPUs each actor reserves (so actors spread over a cluster's nodes)
    cpus_per_worker: float = 1.0
    name: str = "ray"
    #: record in :attr:`running` which worker process runs each item (one more round trip)
    track_pids: bool = False
    #: item index -> the pid of the worker process running it (for tests and debugging)
    running: dict[int, int] = field(default_factory=dict)
    #: dispatches cut short by a worker's death (each item in flight on it counts)
    lost_workers: int = 0

    def _runtime_env(self) -> dict[str, Any]:
        env = dict(self.runtime_env or {})
        variables = dict(env.get("env_vars") or {})
        for name in _FORWARDED_ENV:
            if name in os.environ and name not in variables:
                variables[name] = os.environ[name]
        if variables:
            env["env_vars"] = variables
        return env

    def _connect(self, ray: Any) -> bool:
        """Join or start the cluster; whether this executor must shut Ray down after."""
        if ray.is_initialized():
            return False
        address = self.address or os.environ.get("RAY_ADDRESS") or None
        options: dict[str, Any] = {}
        niceness: dict[str, str] = {}
        if address is None:  # a cluster of our own, on this machine only
            options["_node_ip_address"] = "127.0.0.1"
            # Ray starts workers at nice 15, for a driver that does the work; here the workers
            # do it, and at 15 anything else busy on the machine starves them (an actor that
            # starts in 0.8 s took 30-40 s beside two busy processes on two cores).
            niceness = {_NICENESS: os.environ.get(_NICENESS, "0")}
        else:
            _probe(address)
        try:
            with _environment(niceness):  # read by the raylet ray.init starts
                ray.init(address=address, include_dashboard=False,
                         runtime_env=self._runtime_env() or None, log_to_driver=False,
                         logging_level=logging.ERROR, **options)
        except Exception as exc:  # Ray's own errors (ConnectionError, RuntimeError, ...)
            where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
            raise BackendUnavailable(f"cannot start {where}: {exc}") from None
        return True

    async def run(self, worker: ItemWorker, items: Sequence[T], *, prepare: Prepare[T],
                  finish: Finish[T]) -> None:
        ray = require_ray()
        from ray import exceptions as ray_errors

        owned = self._connect(ray)
        host_class = ray.remote(_WorkerHost).options(
            max_concurrency=max(1, self.concurrency), num_cpus=self.cpus_per_worker)
        shipped = ray.put(worker)  # in the object store once, read by every actor
        hosts = [host_class.remote(shipped) for _ in range(max(1, self.workers))]
        lost = (ray_errors.RayActorError, ray_errors.WorkerCrashedError,
                ray_errors.ObjectLostError)
        queue: deque[int] = deque(range(len(items)))
        attempts = [0] * len(items)

        def replace(slot: int, dead: Any) -> None:
            """A fresh actor in place of a dead one (once, whichever of its items saw it)."""
            if hosts[slot] is dead:
                ray.kill(dead)
                hosts[slot] = host_class.remote(shipped)

        async def drive(slot: int) -> None:
            while queue:
                index = queue.popleft()
                item = items[index]
                attempts[index] += 1
                host = hosts[slot]
                outcome: Any
                try:
                    if self.track_pids:
                        self.running[index] = await host.pid.remote()
                    outcome = await host.run.remote(prepare(item))
                except lost as exc:
                    self.running.pop(index, None)
                    self.lost_workers += 1
                    replace(slot, host)
                    if attempts[index] < self.max_attempts:
                        queue.appendleft(index)  # to whichever slot is free first
                        continue
                    outcome = WorkerLost(f"the worker died {attempts[index]} times while "
                                         f"running this item ({type(exc).__name__})")
                except ray_errors.RayTaskError as exc:
                    cause = getattr(exc, "cause", None)
                    outcome = cause if isinstance(cause, Exception) else \
                        RuntimeError(str(exc).splitlines()[0])
                except Exception as exc:  # a bug in prepare: the caller records it
                    outcome = exc
                self.running.pop(index, None)
                finish(item, outcome)

        try:
            await asyncio.gather(*(drive(slot) for slot in range(len(hosts))
                                   for _ in range(max(1, self.concurrency))))
        finally:
            for host in hosts:
                try:
                    await asyncio.wait_for(host.stop.remote(), timeout=10)
                except Exception:  # a dead or stuck actor is killed below anyway
                    pass
                ray.kill(host)
            if owned:
                ray.shutdown()


@contextmanager
def _environment(variables: Mapping[str, str]) -> Iterator[None]:
    """``variables`` set in this process's environment while the block runs, then put back."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _probe(address: str, timeout: float = 5.0) -> None:
    """Fail at once, in words, when a ``HOST:PORT`` cluster address does not answer (Ray
    itself would retry for minutes); other forms (``auto``, ``ray://...``) go to Ray."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "/" in address:
        return
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise BackendUnavailable(f"cannot reach the Ray cluster at {address}: "
                                 f"{exc.strerror or exc}") from None


def make_executor(backend: str, *, concurrency: int, workers: int | None = None,
                  address: str | None = None) -> Executor:
    """The executor a command line asked for (``--backend``, ``--workers``, ``--address``)."""
    if backend == "ray":
        require_ray()
        return RayExecutor(workers=workers or 2, concurrency=concurrency, address=address)
    if backend != "local":
        raise BackendUnavailable(f"unknown backend {backend!r} (choose from "
                                 f"{', '.join(BACKENDS)})")
    if address is not None:
        raise BackendUnavailable("--address names a Ray cluster: add --backend ray")
    return LocalExecutor(concurrency=concurrency)
