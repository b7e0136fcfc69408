"""The operating-system boundary around an untrusted original: a bubblewrap command line.

:func:`confined_command` wraps the sandbox's child (``python -s -B sandbox_child.py``) in
``bwrap`` (Debian's ``bubblewrap``) so that the original's code, whatever it does to the
Python it runs in, meets the kernel's limits:

- **namespaces**: new user (uid and gid 65534 inside, no capabilities), pid, network, IPC,
  UTS and cgroup namespaces. No network at all (not even loopback is up), no other process
  to see or signal, and ``--die-with-parent`` plus the pid namespace: the child script is
  the namespace's pid 1 (``--as-pid-1``: the kernel ignores the signals its workers send
  it), and when the sandbox's bwrap is killed it dies and the kernel kills every process
  left in the namespace; ``--new-session`` so it cannot push input into the terminal;
- **a filesystem of its own**: an empty root holding, read-only, the interpreter's prefixes
  and the folders on its ``sys.path`` (asked of the interpreter itself, so a venv or another
  Python works), the system's shared libraries (``/usr/lib``, ``/usr/lib64`` and the ``/lib``
  links), the time-zone files, the child script and the original's own folder; a private
  ``/tmp`` (a size-limited tmpfs), ``/proc`` of its own pid namespace and a minimal ``/dev``;
  the root itself read-only. No ``/etc``, no home folder, no ``/proc`` of the parent;
- **a seccomp filter** (:mod:`worldspec.port.seccomp`): the child script's server may fork
  (no namespace), and each worker it forks loads the strict filter (threads, but no new
  process) before the original's code runs;
- **a clean environment**: bwrap itself is started with only the child's variables, so not
  even ``/proc/1/environ`` (bwrap's own, inside) holds a variable of the parent.

Memory, CPU time, file size and tasks (``RLIMIT_NPROC``, counted in the sandbox's own user
namespace) are ``setrlimit`` limits the child sets on itself before it reads a request (see
:mod:`worldspec.port.sandbox_child`); its workers inherit them, and with no process of their
own they bound everything the original can run.

The interpreter need not be worldspec's own (``--python``): its folders are asked of it.

:func:`confinement_problem` says, once per interpreter, why this machine cannot provide the
boundary (no bwrap on ``PATH``, namespaces refused, an architecture without a seccomp table),
by starting the real thing with ``python -c pass``.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from worldspec.port.seccomp import process_filter

__all__ = ["CHILD_UID", "confined_command", "confinement_problem", "filter_file",
           "interpreter_folders"]

#: the uid and gid the original runs as inside its user namespace ("nobody")
CHILD_UID = 65534

#: system folders the interpreter's shared libraries come from, bound read-only if present
SYSTEM_LIBRARIES = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/share/zoneinfo")

#: top-level names that are links into /usr on a merged-/usr system (or folders elsewhere)
ROOT_LINKS = ("lib", "lib64", "lib32", "libx32")

#: seconds the availability probe may take
PROBE_TIMEOUT = 20.0

_ASK_INTERPRETER = ("import json, sys; print(json.dumps([sys.prefix, sys.base_prefix, "
                    "sys.exec_prefix, sys.base_exec_prefix, *sys.path]))")


@functools.lru_cache(maxsize=8)
def interpreter_folders(python: str) -> tuple[str, ...]:
    """The folders ``python -I`` needs: its prefixes and its ``sys.path``, those that exist,
    none inside another."""
    try:
        answer = subprocess.run([python, "-I", "-B", "-c", _ASK_INTERPRETER], capture_output=True,
                                text=True, timeout=PROBE_TIMEOUT, check=True,
                                env={"PATH": os.defpath, "LANG": "C.UTF-8"})
        folders = [str(x) for x in json.loads(answer.stdout) if isinstance(x, str) and x]
    except (OSError, subprocess.SubprocessError, ValueError):
        return ()
    return _outermost(folder for folder in folders if os.path.isdir(folder))


def _outermost(paths: Iterable[str]) -> tuple[str, ...]:
    """The paths and their real paths (a folder may be reached through a link), each once,
    leaving out those inside another."""
    given = [os.path.abspath(p) for p in paths]
    chosen: list[str] = []
    for path in sorted({*given, *(os.path.realpath(p) for p in given)}):
        if not any(path == c or path.startswith(c.rstrip("/") + "/") for c in chosen):
            chosen.append(path)
    return tuple(chosen)


def _bind_root_links() -> list[str]:
    arguments: list[str] = []
    for name in ROOT_LINKS:
        path = "/" + name
        if os.path.islink(path):
            arguments += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            arguments += ["--ro-bind", path, path]
    return arguments


def confined_command(python: str, child: Path, argument: str, original_folder: Path,
                     environment: dict[str, str], tmp_bytes: int,
                     seccomp: IO[bytes]) -> list[str]:
    """The bwrap command line that runs ``python -s -B child argument`` confined
    (``-s``, not ``-I``: ``-I`` ignores the ``PYTHONHASHSEED`` the environment sets).

    ``seccomp`` is an open file holding :func:`~worldspec.port.seccomp.process_filter`'s
    program; its descriptor must be passed to the process (``pass_fds``).
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise FileNotFoundError("bwrap")
    read_only = _outermost([*interpreter_folders(python), *(
        p for p in SYSTEM_LIBRARIES if os.path.isdir(p))])
    command = [bwrap, "--unshare-user", "--uid", str(CHILD_UID), "--gid", str(CHILD_UID),
               "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
               "--unshare-cgroup-try", "--as-pid-1", "--die-with-parent", "--new-session",
               "--cap-drop", "ALL",
               "--clearenv"]
    for name, value in environment.items():
        command += ["--setenv", name, value]
    # the private /tmp first: the binds below may lie inside /tmp (an original in a
    # temporary folder) and must show on top of it, not be hidden by it
    command += ["--proc", "/proc", "--dev", "/dev", "--size", str(tmp_bytes), "--tmpfs", "/tmp"]
    for folder in read_only:
        command += ["--ro-bind", folder, folder]
    command += _bind_root_links()
    command += ["--ro-bind", str(child), str(child),
                "--ro-bind", str(original_folder), str(original_folder),
                # the root itself is bwrap's tmpfs, unbounded: read-only once it is built
                "--remount-ro", "/", "--chdir", "/tmp",
                "--seccomp", str(seccomp.fileno()),
                "--", python, "-s", "-B", str(child), argument]
    return command


def filter_file(*, forks: bool = False) -> IO[bytes] | None:
    """A temporary file holding the seccomp program (``forks``: the server's, see
    :func:`~worldspec.port.seccomp.process_filter`), rewound, or None (no table here)."""
    program = process_filter(forks=forks)
    if program is None:
        return None
    handle = tempfile.TemporaryFile()
    handle.write(program)
    handle.flush()
    handle.seek(0)
    return handle


@functools.lru_cache(maxsize=8)
def _probe(bwrap: str, python: str) -> str | None:
    seccomp = filter_file(forks=True)
    if seccomp is None:
        return "no seccomp filter is known for this machine's architecture"
    if not interpreter_folders(python):
        return f"the interpreter {python} did not say where its libraries are"
    with seccomp, tempfile.TemporaryDirectory() as folder:
        probe = Path(folder) / "probe.py"
        probe.write_text("pass\n", encoding="utf-8")
        command = confined_command(python, probe, "-", Path(folder),
                                   {"PATH": os.defpath}, 1 << 20, seccomp)
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT,
                                  env={"PATH": os.defpath}, pass_fds=(seccomp.fileno(),),
                                  check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"bwrap could not be started ({exc})"
    if done.returncode != 0:
        lines = [x for x in done.stderr.strip().splitlines() if x.strip()]
        return f"bwrap cannot create the sandbox here ({lines[-1] if lines else done.returncode})"
    return None


def confinement_problem(python: str) -> str | None:
    """Why this machine cannot run ``python`` confined, or None when it can."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    return _probe(bwrap, python)
