"""The child side of the sandbox: runs one untrusted Python class, answering JSON lines.

This file is run as a script by :mod:`worldspec.port.sandbox` (``python -I -B``: no
``PYTHON*`` variables, no user site, not the current folder on the path, no bytecode
written), never imported by worldspec, and imports the standard library alone. The parent
runs it inside bubblewrap (see :mod:`worldspec.port.confinement`: the operating system is
the boundary, not this script) with a cleared environment; before the class's module is
loaded, this script

- sets its resource limits first (address space, CPU time, file size, no core files: the
  numbers are its one argument, as JSON), so that no ``preexec_fn`` runs between fork and
  exec in a parent that has threads (a Ray worker, the comparison's worker thread);
- takes private references to the JSON encoder and decoder it speaks with, so a class that
  replaces ``json.dumps`` or ``json.loads`` changes nothing here (a class can still reach
  this script's objects, and so send other values: the parent judges values only, and such
  values are as good as the class returning them);
- refuses, with an audit hook, socket operations, name lookups and new processes: a clear
  message for a class that tries them (defence in depth: the hook can be switched off from
  Python, the namespaces and the seccomp filter around this process cannot);
- keeps the protocol on a private copy of stdout, and points file descriptor 1 and
  ``sys.stdout``/``sys.stderr`` at a bounded sink, so a class that prints cannot corrupt it.

Requests (one JSON object per line on stdin, each with an ``id`` its answer repeats) and
answers (one per line on the protocol fd):

- ``{"op": "load", "file", "class", "load", "data", "paths"}``: import the file, build the
  instance (``load`` is a method name given the data, ``"__init__"`` to pass the data to the
  constructor, ``"attributes"`` to set each key as an attribute, null for ``cls()``, or
  ``"auto"``: ``_load_scenario`` if the class has it, else the constructor if it takes an
  argument, else attributes);
  answers ``{"ok": true, "methods": [...], "state": {...}, "sets": [...]}``;
- ``{"op": "reset"}``: a fresh instance from the same load request;
- ``{"op": "call", "name", "args"}``: call a public method with keyword arguments; answers
  ``{"ok": true, "raised": bool, "unbound": bool, "error": str, "result": ..., "state":
  ..., "sets": [...]}`` (``unbound``: the arguments do not fit the signature, so the method
  was not called).

Values cross as JSON that keeps their types (:mod:`worldspec.port.exact` reads it): JSON's
own values as they are (an int stays an int, a float a float), and ``{"$tuple": [...]}``,
``{"$set": [...]}``, ``{"$frozenset": [...]}`` (items sorted by their JSON text),
``{"$dict": [[key, value], ...]}`` for a dict with a key that is not text or starts with
``$``, ``{"$float": "nan"}`` (``"inf"``, ``"-inf"``) and ``{"$repr": "..."}`` for a value
with no JSON form; dates as ISO text, enums as their values. The top-level state names
holding sets are listed in ``sets`` as well.
"""

from __future__ import annotations

import copy
import enum
import importlib.util
import inspect
import io
import json
import os
import sys
from typing import Any

_BLOCKED_PREFIXES = ("socket.", "subprocess.", "os.system", "os.exec", "os.posix_spawn",
                     "os.spawn", "os.fork", "os.forkpty", "os.kill", "os.killpg", "pty.",
                     "webbrowser.", "urllib.Request", "ftplib.", "smtplib.", "telnetlib.",
                     "http.client.", "ctypes.")
MAX_DEPTH = 64

# taken before the class's module is imported: replacing json.dumps/json.loads (or the json
# module in sys.modules) later does not reach these
_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
_ENCODE_SORTED = json.JSONEncoder(sort_keys=True).encode
_DECODE = json.JSONDecoder().decode
_INF = float("inf")


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event.startswith(_BLOCKED_PREFIXES):
        raise PermissionError(f"the sandbox forbids {event}")


class _Sink(io.TextIOBase):
    """Where the class's prints go: kept up to a bound, then dropped."""

    def __init__(self) -> None:
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.size += len(text)
        return len(text)


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` in the tagged JSON form that keeps its types (see the module docstring);
    ``depth`` counts JSON levels (a tag's object and list are levels too), so that what is
    sent nests at most :data:`MAX_DEPTH` levels, tags included."""
    if depth > MAX_DEPTH:
        return {"$repr": "<nested too deeply>"}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return plain(value.value, depth + 1)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if value == value and value not in (_INF, -_INF) \
            else {"$float": repr(float(value))}
    if isinstance(value, dict):
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: plain(v, depth + 1) for k, v in value.items()}
        return {"$dict": [[plain(k, depth + 3), plain(v, depth + 3)] for k, v in value.items()]}
    if isinstance(value, list):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return {"$tuple": [plain(v, depth + 2) for v in value]}
    if isinstance(value, (set, frozenset)):
        items = sorted((plain(v, depth + 2) for v in value), key=_ENCODE_SORTED)
        return {"$set" if isinstance(value, set) else "$frozenset": items}
    iso = getattr(value, "isoformat", None)
    if callable(iso):
        return str(iso())
    try:
        return {"$repr": str(repr(value))}
    except Exception as exc:  # a broken __repr__ is the class's bug: say so, as its repr
        return {"$repr": f"<{type(value).__name__} whose repr raised {type(exc).__name__}>"}


def _auto_load(cls: Any, data: Any) -> str | None:
    """``_load_scenario`` when the class has one (BFCL's convention), else the constructor
    when it takes an argument, else the data's keys set as attributes (or nothing)."""
    if callable(getattr(cls, "_load_scenario", None)):
        return "_load_scenario"
    if data is None:
        return None
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        params = []
    return "__init__" if params else "attributes"


class Host:
    """The instance of the class under test and what loading it needs."""

    def __init__(self) -> None:
        self.cls: Any = None
        self.request: dict[str, Any] = {}
        self.obj: Any = None

    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        for path in request.get("paths") or []:
            if path not in sys.path:
                sys.path.insert(0, path)
        spec = importlib.util.spec_from_file_location("worldspec_original", request["file"])
        if spec is None or spec.loader is None:
            return {"ok": False, "error": f"cannot import {request['file']}"}
        module = importlib.util.module_from_spec(spec)
        sys.modules["worldspec_original"] = module
        spec.loader.exec_module(module)
        cls = getattr(module, request["class"], None)
        if not inspect.isclass(cls):
            return {"ok": False, "error": f"the file defines no class {request['class']}"}
        self.cls = cls
        self.request = request
        return self.reset()

    def reset(self) -> dict[str, Any]:
        if self.cls is None:
            return {"ok": False, "error": "nothing is loaded"}
        # a fresh copy each time: the class may keep and change the very objects it is given
        load, data = self.request.get("load"), copy.deepcopy(self.request.get("data"))
        if load == "auto":
            load = _auto_load(self.cls, data)
        if load == "__init__":
            obj = self.cls(data) if data is not None else self.cls()
        else:
            obj = self.cls()
            if load == "attributes":
                for name, value in (data or {}).items():
                    setattr(obj, name, value)
            elif load:
                getattr(obj, load)(data if data is not None else {})
        self.obj = obj
        methods = sorted(name for name, member in inspect.getmembers(self.cls)
                         if not name.startswith("_") and callable(member))
        return {"ok": True, "methods": methods, **self.state()}

    def state(self) -> dict[str, Any]:
        public = {k: v for k, v in vars(self.obj).items() if not k.startswith("_")}
        sets = sorted(k for k, v in public.items() if isinstance(v, (set, frozenset)))
        return {"state": plain(public), "sets": sets}

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if self.obj is None:
            return {"ok": False, "error": "nothing is loaded"}
        method = getattr(self.obj, name, None) if not name.startswith("_") else None
        if method is None or not callable(method):
            return {"ok": True, "raised": True, "unbound": True, "result": None,
                    "error": f"no public method {name}", **self.state()}
        try:
            inspect.signature(method).bind(**args)
        except TypeError as exc:
            return {"ok": True, "raised": True, "unbound": True, "result": None,
                    "error": str(exc), **self.state()}
        except ValueError:
            pass  # no signature to check (a builtin): let the call decide
        try:
            result = method(**args)
        except MemoryError:
            raise
        except Exception as exc:
            return {"ok": True, "raised": True, "unbound": False, "result": None,
                    "error": str(exc), "exception": type(exc).__name__, **self.state()}
        return {"ok": True, "raised": False, "unbound": False, "result": plain(result),
                "error": "", **self.state()}


def set_limits(spec: str) -> None:
    """Apply ``{"memory", "cpu", "file_size"}`` (bytes, seconds, bytes) to this process."""
    import resource

    limits = json.loads(spec)
    memory, cpu, size = int(limits["memory"]), int(limits["cpu"]), int(limits["file_size"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main() -> None:
    if len(sys.argv) > 1:
        set_limits(sys.argv[1])
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    sink = _Sink()
    sys.stdout = sink
    sys.stderr = sink
    sys.addaudithook(_audit)
    host = Host()
    for line in sys.stdin:
        request_id = None
        try:
            request = _DECODE(line)
            request_id = request.get("id")
            op = request.get("op")
            if op == "load":
                answer = host.load(request)
            elif op == "reset":
                answer = host.reset()
            elif op == "call":
                answer = host.call(str(request["name"]), dict(request.get("args") or {}))
            else:
                answer = {"ok": False, "error": f"unknown request {op!r}"}
        except MemoryError:
            answer = {"ok": False, "fatal": "memory", "error": "the class ran out of memory"}
        except RecursionError:
            answer = {"ok": False, "error": "the class recursed too deeply"}
        except BaseException as exc:  # the class's bug, at load time: reported, not fatal
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        answer["id"] = request_id
        try:
            text = _ENCODE(answer)
        except (TypeError, ValueError, RecursionError) as exc:
            text = _ENCODE({"ok": False, "id": request_id,
                            "error": f"the answer is not JSON: {exc}"})
        protocol.write(text + "\n")
        protocol.flush()
        if answer.get("fatal"):
            return


if __name__ == "__main__":
    main()
