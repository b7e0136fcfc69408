"""Run an untrusted Python class in a separate, confined, resource-limited process.

:class:`Sandbox` starts ``python -s -B worldspec/port/sandbox_child.py`` inside the
operating-system boundary of :mod:`worldspec.port.confinement` (bubblewrap: new user, pid,
network, IPC and UTS namespaces, a filesystem holding only the interpreter, its libraries,
the original's folder (or its package's root) read-only and a private ``/tmp``, seccomp
filters that allow the original no new process), with

- a cleared environment (only ``PATH``, ``LANG``/``LC_ALL``, ``PYTHONHASHSEED`` (default 0;
  ``hash_seed`` chooses another, see :mod:`worldspec.port.hash_order`) and ``TZ``, default
  UTC): no API keys, no proxies, no ``PYTHONPATH``;
- resource limits, set by the child as its first step, before it reads a request (no
  ``preexec_fn``, unsafe in a parent with threads, such as a Ray worker): address space
  (``RLIMIT_AS``, default 1024 MB), CPU time (``RLIMIT_CPU``, default 60 s a call
  sequence), file size (``RLIMIT_FSIZE``, 16 MB), tasks (``RLIMIT_NPROC``, 128, confined
  only) and no core dumps; the private ``/tmp`` holds at most ``tmp_mb`` (64 MB);
- a fresh process per call sequence (:data:`ISOLATION`): the child compiles the original
  and imports the libraries it imports once, then forks a worker for every ``reset``, in
  which the original's module runs afresh, so nothing the original changes (module state,
  mutable default arguments, class attributes, the ``decimal`` context, files in ``/tmp``)
  reaches the next sequence;
- any interpreter (``python``, default worldspec's own): one with the original's
  dependencies installed (its prefixes and ``sys.path`` are mounted read-only);
- the original's package: a file in a folder with ``__init__.py`` is imported by its dotted
  name from the outermost such folder (:func:`module_location`), so relative imports work;
- a wall-clock timeout on every request (default 5 s a call, 30 s to load): a child that
  does not answer in time is killed (with its pid namespace, so with everything it started)
  and the request ends in :class:`SandboxStopped`;
- a fresh child every :data:`RESETS_PER_CHILD` resets, so the CPU limit bounds a stretch of
  work rather than a whole long comparison.

The child's answers are data, never verdicts: this process decodes them itself, checks their
shape (:func:`_checked_answer`) and leaves every comparison to :mod:`worldspec.port.compare`.
A class that tampers with the child's own code can make it send other values, as if it had
returned them, but never more than that (docs/port.md, "The sandbox").

Where the machine cannot provide the boundary (:func:`confinement_problem`), the sandbox
refuses to start (:class:`SandboxUnavailable`) unless it was built with ``trusted=True``:
then the child runs as a plain process, with the limits and the child's audit hook only.

After :class:`SandboxStopped` the sandbox restarts the child on the next request (loading
the class again), so one runaway call does not end a comparison.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from worldspec.port import confinement, exact
from worldspec.port.seccomp import process_filter

__all__ = ["ISOLATION", "CallOutcome", "Limits", "Loaded", "ModuleLocation", "Sandbox",
           "SandboxError", "SandboxStopped", "SandboxUnavailable", "confinement_problem",
           "module_location"]

CHILD = Path(__file__).with_name("sandbox_child.py")

#: resets after which the child (the server that forks a worker per sequence) is started
#: afresh
RESETS_PER_CHILD = 200

#: how each call sequence is isolated from the others (said in compare's report)
ISOLATION = ("a fresh process per sequence (forked before the original's module runs; "
             "its installed libraries imported once)")

#: seconds to wait for a child whose pipe closed to report its exit status
EXIT_GRACE = 2.0

#: the largest answer the child may send (a state serialised as JSON), in bytes
MAX_ANSWER = 64 * 1024 * 1024

#: the deepest nesting an answer's values may have (the child cuts its values at 64 levels;
#: deeper is a child that does not follow the protocol, and would strain the comparison)
MAX_ANSWER_DEPTH = 100


def confinement_problem(python: str | None = None) -> str | None:
    """Why this machine cannot confine an original run by ``python`` (default: this
    interpreter; see :mod:`worldspec.port.confinement`), or None when it can."""
    return confinement.confinement_problem(python or sys.executable)


@dataclass(frozen=True)
class ModuleLocation:
    """Where the original's module is and how the child imports it."""

    #: the folder mounted read-only for it: the file's own, or its package's root
    folder: Path
    #: the folder put on ``sys.path``
    path: Path
    #: the dotted name inside its package, or None (a plain file, imported as itself)
    dotted: str | None


def module_location(file: Path, package_root: Path | None = None) -> ModuleLocation:
    """How to import ``file``: from ``package_root`` when given (a folder holding it), else
    from the outermost folder of the ``__init__.py`` folders it lies in, else as a plain
    file. :class:`SandboxError` when the file is not inside ``package_root`` or a folder on
    the way is not a Python name."""
    file = file.resolve()
    if package_root is None:
        root = None
        folder = file.parent
        while (folder / "__init__.py").is_file() and folder.parent != folder:
            root, folder = folder, folder.parent
        if root is None:
            return ModuleLocation(file.parent, file.parent, None)
    else:
        root = package_root.resolve()
        if not file.is_relative_to(root):
            raise SandboxError(f"{file} is not inside the package root {root}")
    parts = [*file.relative_to(root.parent).parent.parts]
    if file.name != "__init__.py":
        parts.append(file.stem)
    if not all(part.isidentifier() for part in parts):
        raise SandboxError(f"{'.'.join(parts)} is not an importable module name (package "
                           f"root {root})")
    return ModuleLocation(root, root.parent, ".".join(parts))


@dataclass(frozen=True)
class Limits:
    """What the child may use."""

    memory_mb: int = 1024
    cpu_seconds: int = 60
    call_timeout: float = 5.0
    load_timeout: float = 30.0
    file_size_mb: int = 16
    #: the size of the private /tmp (a tmpfs, so memory), in MB
    tmp_mb: int = 64
    #: the child's local time zone (``TZ``)
    time_zone: str = "UTC"
    #: tasks (processes and threads) in the sandbox, where it has a user namespace of its own
    processes: int = 128


class SandboxError(Exception):
    """The class could not be loaded (import error, a failing constructor, ...)."""


class SandboxUnavailable(SandboxError):
    """This machine cannot confine the original, and it was not declared trusted."""


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


class Sandbox:
    """One child process holding one instance of the class under test."""

    def __init__(self, file: str | Path, class_name: str, *, load: str | None = None,
                 data: Any = None, limits: Limits = Limits(), trusted: bool = False,
                 python: str | Path | None = None, package_root: str | Path | None = None,
                 hash_seed: int = 0) -> None:
        self.file = Path(file).resolve()
        #: the interpreter that runs the original (not resolved: a venv's link is the venv)
        self.python = os.path.abspath(python) if python is not None else sys.executable
        self.package_root = Path(package_root) if package_root is not None else None
        #: run the original without the operating-system boundary (its author is trusted)
        self.trusted = trusted
        self.class_name = class_name
        self.load_method = load
        self.data = data
        self.limits = limits
        #: the child's ``PYTHONHASHSEED``: the order of its sets of strings follows it
        self.hash_seed = hash_seed
        self._process: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._stderr: Any = None
        #: how many times the child was started
        self.starts = 0
        self._resets = 0
        self._request_ids = itertools.count(1)

    # ------------------------------------------------------------ lifecycle
    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _environment(self) -> dict[str, str]:
        return {"PATH": os.defpath, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                "PYTHONHASHSEED": str(self.hash_seed), "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONIOENCODING": "utf-8", "TZ": self.limits.time_zone}

    def _command(self, seccomp: IO[bytes] | None, folder: Path) -> list[str]:
        argument = _limits_argument(self.limits, confined=seccomp is not None)
        if seccomp is None:
            return [self.python, "-s", "-B", str(CHILD), argument]
        return confinement.confined_command(
            self.python, CHILD, argument, folder, self._environment(),
            self.limits.tmp_mb * 1024 * 1024, seccomp)

    def _start(self) -> Loaded:
        self.close()
        location = module_location(self.file, self.package_root)
        seccomp = None
        if not self.trusted:
            problem = confinement_problem(self.python)
            if problem is not None:
                raise SandboxUnavailable(f"cannot sandbox the original: {problem} (pass "
                                         "--trusted-original to run it unconfined)")
            seccomp = confinement.filter_file(forks=True)
        self._stderr = tempfile.TemporaryFile()
        try:
            self._process = subprocess.Popen(
                self._command(seccomp, location.folder), stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr, env=self._environment(), cwd=tempfile.gettempdir(),
                start_new_session=True, close_fds=True,
                pass_fds=(seccomp.fileno(),) if seccomp is not None else ())
        except OSError as exc:
            raise SandboxError(f"cannot run {self.python}: {exc.strerror or exc}") from None
        finally:
            if seccomp is not None:
                seccomp.close()
        self._buffer = b""
        self.starts += 1
        answer = self._request({"op": "load", "file": str(self.file), "class": self.class_name,
                                "load": self.load_method, "data": self.data,
                                "paths": [str(location.path)], "module": location.dotted},
                               self.limits.load_timeout)
        if not answer["ok"]:
            self.close()
            raise SandboxError(answer["error"] or "the class could not be loaded")
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
        if not answer["ok"]:
            raise SandboxError(answer["error"] or "the class could not be reset")
        return _loaded(answer)

    def call(self, name: str, args: dict[str, Any]) -> CallOutcome:
        """Call ``name(**args)`` on the current instance."""
        if self._process is None:
            raise SandboxStopped("the original is not running (reset it first)")
        answer = self._request({"op": "call", "name": name, "args": args},
                               self.limits.call_timeout)
        if not answer["ok"]:
            raise SandboxStopped(answer["error"] or "the call failed in the sandbox")
        return CallOutcome(answer.get("result"), answer["raised"], answer["unbound"],
                           answer["error"], answer["state"], frozenset(answer["sets"]),
                           answer["exception"])

    def _request(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        request = {**request, "id": next(self._request_ids)}
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
        except (ValueError, RecursionError):
            raise self._stopped("sent an answer that is not JSON") from None
        if isinstance(answer, dict) and answer.get("fatal") == "memory":
            raise self._stopped(f"ran out of memory (limit {self.limits.memory_mb} MB)")
        problem = _answer_problem(answer, request["op"], request["id"])
        if problem is not None:
            raise self._stopped(f"broke the sandbox's protocol ({problem})")
        assert isinstance(answer, dict)
        return answer

    def _stopped(self, what: str) -> SandboxStopped:
        """Kill the child and say why it stopped."""
        process = self._process
        status = process.poll() if process is not None else None
        if status is None and process is not None and what == "exited":
            # the pipe closes as the child exits, a moment before its status can be read
            # (a busy host, e.g. a Ray worker, widens that moment): wait for it briefly
            try:
                status = process.wait(timeout=EXIT_GRACE)
            except subprocess.TimeoutExpired:
                status = None
        if status is None and process is not None:
            self.close()
        else:
            tail = self._stderr_tail()
            self.close()
            if status is not None and status > 128 and not self.trusted:
                status = 128 - status  # bwrap exits 128 + N for a child killed by signal N
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


def _limits_argument(limits: Limits, *, confined: bool) -> str:
    """The child's limits, as its one argument (it sets them before anything else); where it
    is confined, also its workers' strict seccomp program, its task limit and that its
    ``/tmp`` is its own (emptied between sequences)."""
    options: dict[str, Any] = {"memory": limits.memory_mb * 1024 * 1024,
                               "cpu": limits.cpu_seconds,
                               "file_size": limits.file_size_mb * 1024 * 1024}
    if confined:
        program = process_filter()
        assert program is not None  # confinement_problem said this machine has a table
        options.update(seccomp=program.hex(), processes=limits.processes, private_tmp=True)
    return json.dumps(options)


def _loaded(answer: dict[str, Any]) -> Loaded:
    return Loaded(tuple(answer["methods"]), answer["state"], frozenset(answer["sets"]))


#: request -> the fields of a successful answer and their types (every answer has ``ok``,
#: ``id`` and ``error``)
ANSWER_FIELDS: dict[str, dict[str, type]] = {
    "load": {"methods": list, "state": dict, "sets": list},
    "reset": {"methods": list, "state": dict, "sets": list},
    "call": {"raised": bool, "unbound": bool, "exception": str, "state": dict, "sets": list},
}


def _answer_problem(answer: Any, op: str, request_id: int) -> str | None:
    """What is wrong with the shape of the child's answer to request ``op``, or None.

    The child may be under the original's control: its answer is checked field by field
    (what it claims is never taken on trust, only its values, which the comparison judges),
    missing defaults are filled in place (``exception`` of a call: ``""``) and the values
    (``state``, ``result``) are decoded in place from the tagged form that keeps their types
    (:func:`worldspec.port.exact.decoded`).
    """
    if not isinstance(answer, dict):
        return "an answer that is not a JSON object"
    if answer.get("id") != request_id:
        return f"an answer to request {answer.get('id')!r}, not to {request_id}"
    if not isinstance(answer.get("ok"), bool):
        return "an answer without ok"
    answer.setdefault("error", "")
    if not isinstance(answer["error"], str):
        return "an error that is not text"
    if not answer["ok"]:
        return None
    if op == "call":
        answer.setdefault("exception", "")
    for name, kind in ANSWER_FIELDS[op].items():
        if not isinstance(answer.get(name), kind):
            return f"{name} is not a {kind.__name__}"
    listed = [*answer.get("methods", ()), *answer["sets"]]
    if not all(isinstance(x, str) for x in listed):
        return "a name that is not text"
    if _depth(answer) > MAX_ANSWER_DEPTH:
        return f"values nested over {MAX_ANSWER_DEPTH} levels"
    try:  # the values, from the tagged form that keeps their types, in place
        answer["state"] = exact.decoded(answer["state"])
        answer["result"] = exact.decoded(answer.get("result"))
    except exact.DecodeProblem as exc:
        return str(exc)
    return None


def _depth(value: Any) -> int:
    """How deeply ``value`` (decoded JSON) nests, without recursion."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, level = pending.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            pending.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            pending.extend((v, level + 1) for v in item)
    return deepest
