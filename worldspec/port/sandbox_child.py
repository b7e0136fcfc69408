"""The child side of the sandbox: runs one untrusted Python class, answering JSON lines.

This file is run as a script by :mod:`worldspec.port.sandbox` (``python -s -B`` with a
cleared environment: no ``PYTHON*`` variables but the sandbox's own, ``PYTHONHASHSEED``
among them (``-I`` would ignore it), no user site, not this script's folder on the path, no
bytecode written), never imported by worldspec, and imports the standard library alone (it
may run on another interpreter than worldspec's, ``--python``: Python 3.9 or newer). The
parent runs it inside bubblewrap (see :mod:`worldspec.port.confinement`: the operating
system is the boundary, not this script) with a cleared environment.

It is two processes. The **server** (this script's own process, pid 1 of the sandbox's pid
namespace) never runs the original's code: it sets the resource limits first (address
space, CPU time, file size, processes, no core files: the numbers are its one argument, as
JSON), keeps the protocol on a private copy of stdout and points file descriptor 1 and
``sys.stdout``/``sys.stderr`` at a bounded sink (a class that prints cannot corrupt the
protocol), compiles the original's file (compiling runs nothing) and imports the installed
libraries the file imports at its top level (modules found outside the original's own
folders: the interpreter's standard library and site-packages), so that they are imported
once. For every sequence (``load`` and ``reset``) it forks a **worker**, a fresh copy of that
state in which the original's code has never run; the worker

- installs a second, stricter seccomp filter (its program is in the argument, from
  :func:`worldspec.port.seccomp.process_filter`): threads, but no new process, whatever the
  original does. The server's own filter (from bwrap) lets the server fork, nothing more;
- takes private references to the JSON encoder and decoder it speaks with, so a class that
  replaces ``json.dumps`` or ``json.loads`` changes nothing here (a class can still reach
  this script's objects, and so send other values: the parent judges values only, and such
  values are as good as the class returning them);
- refuses, with an audit hook, socket operations, name lookups and new processes: a clear
  message for a class that tries them (defence in depth: the hook can be switched off from
  Python, the namespaces and the seccomp filters around this process cannot);
- runs the original's module (as ``worldspec_original``, or by its dotted name inside its
  package), builds the instance and answers the requests the server passes on.

So module-level state, mutable default arguments, class attributes and the ``decimal``
context start afresh in every sequence; the private ``/tmp`` is emptied between sequences.
The server ends the worker (SIGKILL) at the next ``reset``; when a worker dies by itself (a
CPU limit, ``os._exit``), the server exits the same way, so the parent sees the same exit
status it would see from a single process.

Requests (one JSON object per line on stdin, each with an ``id`` its answer repeats) and
answers (one per line on the protocol fd):

- ``{"op": "load", "file", "class", "load", "data", "paths", "module"}``: import the file,
  build the instance (``load`` is a method name given the data, ``"__init__"`` to pass the
  data to the constructor, ``"attributes"`` to set each key as an attribute, null for
  ``cls()``, or ``"auto"``: ``_load_scenario`` if the class has it, else the constructor if
  it takes an argument, else attributes; ``module`` is the dotted name inside a package
  whose root's parent is in ``paths``, or null); answers
  ``{"ok": true, "methods": [...], "state": {...}, "sets": [...]}``;
- ``{"op": "reset"}``: a fresh worker and instance from the same load request;
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

import ast
import copy
import enum
import gc
import importlib
import importlib.util
import inspect
import io
import json
import os
import signal
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
    """The instance of the class under test and what loading it needs (in a worker)."""

    def __init__(self) -> None:
        self.cls: Any = None
        self.request: dict[str, Any] = {}
        self.obj: Any = None

    def load(self, request: dict[str, Any], code: Any) -> dict[str, Any]:
        """Run the module's compiled ``code`` as the original's module, then build."""
        dotted = request.get("module")
        name = dotted or "worldspec_original"
        if dotted and "." in dotted:
            importlib.import_module(dotted.rpartition(".")[0])  # its package, afresh
        package = os.path.basename(request["file"]) == "__init__.py"
        spec = importlib.util.spec_from_file_location(
            name, request["file"],
            submodule_search_locations=[os.path.dirname(request["file"])] if package else None)
        if spec is None or spec.loader is None:
            return {"ok": False, "error": f"cannot import {request['file']}"}
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        exec(code, module.__dict__)  # the original's module, in the worker
        cls = getattr(module, request["class"], None)
        if not inspect.isclass(cls):
            return {"ok": False, "error": f"the file defines no class {request['class']}"}
        self.cls = cls
        self.request = request
        return self.build()

    def build(self) -> dict[str, Any]:
        # a fresh copy: the class may keep and change the very objects it is given
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


def set_limits(limits: dict[str, Any]) -> None:
    """Apply ``{"memory", "cpu", "file_size", "processes"}`` (bytes, seconds, bytes, tasks;
    ``processes`` only where given: it counts the user's tasks, which only a user namespace
    of the sandbox's own makes a count of the sandbox alone) to this process."""
    import resource

    memory, cpu, size = int(limits["memory"]), int(limits["cpu"]), int(limits["file_size"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if limits.get("processes"):
        processes = int(limits["processes"])
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))


# ------------------------------------------------------------------ seccomp
_PR_SET_DUMPABLE, _PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 4, 38, 22, 2


def _prctl() -> Any:
    """libc's ``prctl``, looked up before the audit hook (which refuses ``ctypes``)."""
    import ctypes

    function = ctypes.CDLL(None, use_errno=True).prctl
    function.restype = ctypes.c_int
    return function


def install_filter(prctl: Any, program: bytes) -> None:
    """Load the seccomp ``program`` (classic BPF, 8 bytes an instruction) on this thread,
    on top of the filters already there (the kernel applies the strictest answer)."""
    import ctypes

    class Program(ctypes.Structure):
        _fields_ = [("length", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = Program(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    zero = ctypes.c_ulong(0)
    if prctl(_PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), zero, zero, zero) != 0 or prctl(
            _PR_SET_SECCOMP, ctypes.c_ulong(_SECCOMP_MODE_FILTER), ctypes.byref(fprog),
            zero, zero) != 0:
        raise OSError(ctypes.get_errno(), "the seccomp filter could not be installed")


# ------------------------------------------------------------------ server
def _top_level_imports(tree: ast.Module) -> list[str]:
    """The absolute modules the module imports at its top level (not inside functions)."""
    names: list[str] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
        elif isinstance(node, (ast.If, ast.Try)):
            pending += [*node.body, *node.orelse, *getattr(node, "finalbody", []),
                        *(s for h in getattr(node, "handlers", []) for s in h.body)]
    return names


def _outside(spec: Any, folders: list[str]) -> bool:
    """Whether a module spec lies outside the original's folders (an installed library)."""
    places = [spec.origin or "", *(spec.submodule_search_locations or [])]
    if not any(places) or spec.origin in ("built-in", "frozen"):
        return True
    return not any(os.path.realpath(p).startswith(tuple(f.rstrip("/") + "/" for f in folders))
                   for p in places if p)


def preimport(tree: ast.Module, folders: list[str]) -> None:
    """Import the installed libraries the module imports, once, in the server: each worker
    then starts with them imported. Modules of the original's own folders are left to the
    workers (their code is the original's); a failure is left for the worker to report."""
    for name in _top_level_imports(tree):
        try:
            spec = importlib.util.find_spec(name.partition(".")[0])
            if spec is not None and _outside(spec, folders):
                importlib.import_module(name)
        except BaseException:  # the worker imports it again, and reports
            continue


def _answer(host: Host, request: Any, code: Any) -> dict[str, Any]:
    """The worker's answer to one request, the original's failures caught."""
    try:
        op = request.get("op")
        if op == "load":
            return host.load(request, code)
        if op == "call":
            return host.call(str(request["name"]), dict(request.get("args") or {}))
        return {"ok": False, "error": f"unknown request {op!r}"}
    except MemoryError:
        return {"ok": False, "fatal": "memory", "error": "the class ran out of memory"}
    except RecursionError:
        return {"ok": False, "error": "the class recursed too deeply"}
    except BaseException as exc:  # the class's bug, at load time: reported, not fatal
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def _next_line(pending: bytes) -> tuple[bytes, bytes] | None:
    """The next request line (without its newline) and what was read after it, reading
    stdin as needed after ``pending``; None once stdin is closed."""
    while b"\n" not in pending:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return None
        pending += chunk
    line, _, rest = pending.partition(b"\n")
    return line, rest


def _write(protocol: Any, answer: dict[str, Any], request_id: Any) -> None:
    answer["id"] = request_id
    try:
        text = _ENCODE(answer)
    except (TypeError, ValueError, RecursionError) as exc:
        text = _ENCODE({"ok": False, "id": request_id,
                        "error": f"the answer is not JSON: {exc}"})
    protocol.write(text + "\n")
    protocol.flush()


class Server:
    """Reads the parent's requests while no worker runs, and forks a worker per sequence.

    A worker reads the parent's requests itself (stdin) and answers its calls; any other
    request (``reset``, ``load``) it hands back to the server through a pipe and exits, so
    that a call costs no extra hop and a sequence's end is the worker's end.
    """

    def __init__(self, protocol: Any, options: dict[str, Any]) -> None:
        self.protocol = protocol
        self.program = bytes.fromhex(str(options.get("seccomp") or ""))
        self.private_tmp = bool(options.get("private_tmp"))
        self.prctl = _prctl() if self.program else None
        self.load_request: dict[str, Any] | None = None
        self.code: Any = None

    def serve(self) -> None:
        pending = b""
        while True:
            read = _next_line(pending)
            if read is None:
                return
            line, pending = read
            pending = self.handle(line) + pending

    def handle(self, line: bytes) -> bytes:
        """Answer one request (a worker answers the calls of its sequence); what a worker
        handed back unread."""
        request_id = None
        try:
            request = _DECODE(line.decode("utf-8"))
            request_id = request.get("id")
            op = request.get("op")
            if op == "load":
                self.load_request, self.code = None, None
                self.code = self._compile(request)
                self.load_request = request
                op = "reset"
            if op == "reset" and self.load_request is not None:
                return self._sequence(request_id)
            answer = {"ok": False, "error": "nothing is loaded" if op in ("reset", "call")
                      else f"unknown request {op!r}"}
        except MemoryError:
            answer = {"ok": False, "fatal": "memory", "error": "the class ran out of memory"}
        except RecursionError:
            answer = {"ok": False, "error": "the module is nested too deeply to compile"}
        except BaseException as exc:  # a file that does not compile, a bad request
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        _write(self.protocol, answer, request_id)
        if answer.get("fatal"):
            sys.exit(1)
        return b""

    def _compile(self, request: dict[str, Any]) -> Any:
        folders = [str(p) for p in request.get("paths") or []]
        for path in reversed(folders):
            if path not in sys.path:
                sys.path.insert(0, path)
        with open(request["file"], "rb") as handle:
            source = handle.read()
        tree = ast.parse(source, request["file"])
        code = compile(tree, request["file"], "exec", dont_inherit=True)
        preimport(tree, folders)
        return code

    def _sequence(self, request_id: Any) -> bytes:
        """Fork a worker for one sequence and wait for its end: the bytes it handed back (the
        request that ended the sequence, and anything after it). A worker that died ends
        this process the same way."""
        if self.private_tmp:
            _empty_folder("/tmp")
        handback_read, handback_write = os.pipe()
        self.protocol.flush()
        gc.freeze()  # the worker's collections leave the server's objects (and pages) alone
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            status = 0
            try:
                os.close(handback_read)
                self._work(handback_write, request_id)
            except BaseException:  # nothing may escape into the server's loop
                status = 70
            os._exit(status)
        os.close(handback_write)
        handed = b""
        while True:
            chunk = os.read(handback_read, 1 << 16)
            if not chunk:
                break
            handed += chunk
        os.close(handback_read)
        _, status = os.waitpid(pid, 0)
        if handed and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            return handed
        self._end_as(status)
        return b""

    def _work(self, handback: int, request_id: Any) -> None:
        if self.prctl is not None:
            try:
                self.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
                install_filter(self.prctl, self.program)
            except OSError as exc:
                _write(self.protocol, {"ok": False, "fatal": "sandbox",
                                       "error": f"the sandbox could not start: {exc}"},
                       request_id)
                return
        sys.addaudithook(_audit)
        assert self.load_request is not None
        host = Host()
        _write(self.protocol, _answer(host, self.load_request, self.code), request_id)
        pending = b""
        while True:
            read = _next_line(pending)
            if read is None:
                return
            line, rest = read
            request_id = None
            try:
                request = _DECODE(line.decode("utf-8"))
                request_id = request.get("id")
            except (ValueError, UnicodeDecodeError) as exc:
                answer = {"ok": False, "error": f"a request that is not JSON: {exc}"}
            else:
                if not isinstance(request, dict) or request.get("op") != "call":
                    _hand_back(handback, line + b"\n" + rest)  # the sequence ends here
                    return
                answer = _answer(host, request, self.code)
            pending = rest
            _write(self.protocol, answer, request_id)
            if answer.get("fatal"):
                sys.exit(1)

    def _end_as(self, status: int) -> None:
        """The worker ended by itself: end this process the same way (the parent reads the
        worker's fate from the sandbox's exit status)."""
        self.protocol.flush()
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            signal.signal(number, signal.SIG_DFL)
            os.kill(os.getpid(), number)  # ignored where this is its namespace's pid 1
            os._exit(128 + number)
        os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _hand_back(handback: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(handback, view):]
    os._exit(0)


def _empty_folder(folder: str) -> None:
    """Remove everything in ``folder`` (the sandbox's private /tmp), what can be removed."""
    import shutil

    for entry in os.scandir(folder):
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            continue


def main() -> None:
    if not (sys.flags.isolated or getattr(sys.flags, "safe_path", False)):
        del sys.path[0]  # this script's folder: nothing of the original's is imported from it
    options = _DECODE(sys.argv[1]) if len(sys.argv) > 1 else {}
    if options:
        set_limits(options)
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    sink = _Sink()
    sys.stdout = sink
    sys.stderr = sink
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    server = Server(protocol, options)
    if server.prctl is not None:
        server.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)  # no worker may read or write its memory
    server.serve()


if __name__ == "__main__":
    main()
