"""Run an untrusted Python class in a separate, resource-limited process.

:class:`Sandbox` starts ``python -I worldspec/port/sandbox_child.py`` with

- a cleared environment (only ``PATH``, ``LANG``/``LC_ALL``, ``PYTHONHASHSEED=0`` and
  ``TZ``, default UTC): no API keys, no proxies, no ``PYTHONPATH``;
- resource limits set before the child's first instruction: address space
  (``RLIMIT_AS``, default 1024 MB), CPU time (``RLIMIT_CPU``, default 60 s for the whole
  child), file size (``RLIMIT_FSIZE``, 16 MB) and no core dumps;
- no network and no new processes: the child's audit hook refuses socket operations, name
  lookups, ``subprocess``, ``os.system``, ``exec``, ``fork`` and ``kill`` before the class's
  module is imported (see :mod:`worldspec.port.sandbox_child`);
- a wall-clock timeout on every request (default 5 s a call, 30 s to load): a child that
  does not answer in time is killed and the request ends in :class:`SandboxStopped`;
- a fresh child every :data:`RESETS_PER_CHILD` resets, so the CPU limit bounds a stretch of
  work rather than a whole long comparison.

This is defence in depth against buggy or generated code, not a security boundary against a
determined attacker (an audit hook can be evaded by native code); run classes you do not
trust at all in a container too.

After :class:`SandboxStopped` the sandbox restarts the child on the next request (loading
the class again), so one runaway call does not end a comparison.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CallOutcome", "Limits", "Loaded", "Sandbox", "SandboxError", "SandboxStopped"]

CHILD = Path(__file__).with_name("sandbox_child.py")

#: resets after which the child is started afresh, so that its CPU limit (which counts the
#: child's whole life) measures a bounded stretch of work, never a long comparison's total
RESETS_PER_CHILD = 200

#: the largest answer the child may send (a state serialised as JSON), in bytes
MAX_ANSWER = 64 * 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What the child may use."""

    memory_mb: int = 1024
    cpu_seconds: int = 60
    call_timeout: float = 5.0
    load_timeout: float = 30.0
    file_size_mb: int = 16
    #: the child's local time zone (``TZ``)
    time_zone: str = "UTC"


class SandboxError(Exception):
    """The class could not be loaded (import error, a failing constructor, ...)."""


class SandboxStopped(Exception):
    """The child was stopped: it timed out, ran out of memory or CPU time, or died."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Loaded:
    """A freshly built instance: its public methods and public state."""

    methods: tuple[str, ...]
    state: dict[str, Any]
    sets: frozenset[str]


@dataclass(frozen=True)
class CallOutcome:
    """What one method call did."""

    result: Any
    raised: bool
    #: the arguments did not fit the method's signature (it was not called)
    unbound: bool
    error: str
    state: dict[str, Any]
    sets: frozenset[str]
    exception: str = ""


def _limit(limits: Limits) -> None:  # pragma: no cover - runs in the child before exec
    memory = limits.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
    size = limits.file_size_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.setsid()


class Sandbox:
    """One child process holding one instance of the class under test."""

    def __init__(self, file: str | Path, class_name: str, *, load: str | None = None,
                 data: Any = None, limits: Limits = Limits()) -> None:
        self.file = Path(file).resolve()
        self.class_name = class_name
        self.load_method = load
        self.data = data
        self.limits = limits
        self._process: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._stderr: Any = None
        #: how many times the child was started
        self.starts = 0
        self._resets = 0

    # ------------------------------------------------------------ lifecycle
    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _environment(self) -> dict[str, str]:
        return {"PATH": os.defpath, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONIOENCODING": "utf-8", "TZ": self.limits.time_zone}

    def _start(self) -> Loaded:
        self.close()
        self._stderr = tempfile.TemporaryFile()
        limits = self.limits
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-B", str(CHILD)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, env=self._environment(), cwd=tempfile.gettempdir(),
            preexec_fn=lambda: _limit(limits), close_fds=True)
        self._buffer = b""
        self.starts += 1
        answer = self._request({"op": "load", "file": str(self.file), "class": self.class_name,
                                "load": self.load_method, "data": self.data,
                                "paths": [str(self.file.parent)]},
                               self.limits.load_timeout)
        if not answer.get("ok"):
            self.close()
            raise SandboxError(str(answer.get("error", "the class could not be loaded")))
        return _loaded(answer)

    def close(self) -> None:
        """Stop the child (killing its whole process group)."""
        process, self._process = self._process, None
        if process is not None:
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -------------------------------------------------------------- requests
    def reset(self) -> Loaded:
        """A fresh instance, loaded from the data (the child is started if it is not running)."""
        self._resets += 1
        if self._process is None or self._process.poll() is not None \
                or self._resets > RESETS_PER_CHILD:
            self._resets = 1
            return self._start()
        answer = self._request({"op": "reset"}, self.limits.load_timeout)
        if not answer.get("ok"):
            raise SandboxError(str(answer.get("error", "the class could not be reset")))
        return _loaded(answer)

    def call(self, name: str, args: dict[str, Any]) -> CallOutcome:
        """Call ``name(**args)`` on the current instance."""
        if self._process is None:
            raise SandboxStopped("the original is not running (reset it first)")
        answer = self._request({"op": "call", "name": name, "args": args},
                               self.limits.call_timeout)
        if not answer.get("ok"):
            raise SandboxStopped(str(answer.get("error", "the call failed in the sandbox")))
        return CallOutcome(answer.get("result"), bool(answer.get("raised")),
                           bool(answer.get("unbound")), str(answer.get("error", "")),
                           dict(answer.get("state") or {}), frozenset(answer.get("sets") or ()),
                           str(answer.get("exception", "")))

    def _request(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        try:
            line = json.dumps(request, ensure_ascii=False, allow_nan=False) + "\n"
        except (TypeError, ValueError) as exc:
            raise SandboxError(f"the request is not JSON: {exc}") from None
        try:
            process.stdin.write(line.encode("utf-8"))
            process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._stopped("exited") from None
        deadline = time.monotonic() + timeout
        fd = process.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._stopped(f"did not answer within {timeout:g} s (stopped)")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise self._stopped("exited")
            self._buffer += chunk
            if len(self._buffer) > MAX_ANSWER:
                raise self._stopped(f"sent an answer over {MAX_ANSWER // (1 << 20)} MB")
        raw, _, self._buffer = self._buffer.partition(b"\n")
        try:
            answer = json.loads(raw)
        except ValueError:
            raise self._stopped("sent an answer that is not JSON") from None
        if not isinstance(answer, dict):
            raise self._stopped("sent an answer that is not a JSON object")
        if answer.get("fatal") == "memory":
            raise self._stopped(f"ran out of memory (limit {self.limits.memory_mb} MB)")
        return answer

    def _stopped(self, what: str) -> SandboxStopped:
        """Kill the child and say why it stopped."""
        process = self._process
        status = process.poll() if process is not None else None
        if status is None and process is not None:
            self.close()
        else:
            tail = self._stderr_tail()
            self.close()
            if status == -signal.SIGXCPU or (status == -signal.SIGKILL and what == "exited"):
                what = f"used up its CPU time (limit {self.limits.cpu_seconds} s)"
            elif what == "exited":
                what = f"exited with status {status}" + (f": {tail}" if tail else "")
            if "MemoryError" in tail:
                what = f"ran out of memory (limit {self.limits.memory_mb} MB)"
        return SandboxStopped(f"the original {what}")

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            text: str = self._stderr.read()[-2000:].decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [x for x in text.strip().splitlines() if x.strip()]
        return lines[-1].strip() if lines else ""


def _loaded(answer: dict[str, Any]) -> Loaded:
    return Loaded(tuple(answer.get("methods") or ()), dict(answer.get("state") or {}),
                  frozenset(answer.get("sets") or ()))
