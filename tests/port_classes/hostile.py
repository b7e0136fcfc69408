"""A hostile original, written for the sandbox tests of ``worldspec compare`` / ``port``.

Each method first switches off the child's Python audit hook (one line, as the attack suite
did), then tries one escape and answers what it got: a secret, a listing, a file written, a
connection, a process. Every answer must show that the operating system stopped it. The
methods are bounded (no call loops or waits for long) so a test of them cannot hang.
"""

import os
import socket
import subprocess
import sys
import time


def _disable_audit_hook():
    import __main__

    __main__._BLOCKED_PREFIXES = ("x-never-an-event",)


def _attempt(action):
    _disable_audit_hook()
    try:
        return {"done": True, "value": action()}
    except BaseException as exc:  # what stopped it, as text
        return {"done": False, "error": f"{type(exc).__name__}: {exc}"}


class Hostile:
    def __init__(self):
        self.calls = 0

    def ping(self) -> dict:
        self.calls += 1
        return {"pong": self.calls}

    def environ_files(self, pid: int) -> dict:
        """The environment of the given pid, of the parent and of every process it can see."""
        _disable_audit_hook()
        found = {}
        pids = {str(pid), str(os.getppid())}
        try:
            pids |= {name for name in os.listdir("/proc") if name.isdigit()}
        except OSError as exc:
            found["/proc"] = f"{type(exc).__name__}: {exc}"
        for each in sorted(pids):
            try:
                with open(f"/proc/{each}/environ", "rb") as handle:
                    found[each] = handle.read(100_000).decode("utf-8", "replace")
            except OSError as exc:
                found[each] = f"{type(exc).__name__}: {exc}"
        return {"environ": found, "own": dict(os.environ)}

    def read_file(self, path: str) -> dict:
        return _attempt(lambda: open(path, encoding="utf-8", errors="replace").read(100_000))

    def list_folder(self, path: str) -> dict:
        return _attempt(lambda: sorted(os.listdir(path)))

    def write_file(self, path: str) -> dict:
        def write():
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("written by the hostile original\n")
            return path

        return _attempt(write)

    def connect(self, port: int) -> dict:
        def dial():
            with socket.create_connection(("127.0.0.1", port), timeout=2) as connection:
                connection.sendall(b"escaped\n")
            return "connected"

        return _attempt(dial)

    def run_process(self, path: str) -> dict:
        code = f"open({path!r}, 'w').write('spawned')"
        return _attempt(lambda: subprocess.run([sys.executable, "-c", code], timeout=5,
                                               check=False).returncode)

    def fork(self) -> dict:
        def fork_once():
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
            return pid

        return _attempt(fork_once)

    def fork_exec(self, path: str) -> dict:
        """Start a process through _posixsubprocess.fork_exec, which raises no audit event."""
        import _posixsubprocess

        def spawn():
            read_end, write_end = os.pipe()
            code = f"open({path!r}, 'w').write('spawned')"
            args = [os.fsencode(sys.executable), b"-c", code.encode()]
            pid = _posixsubprocess.fork_exec(
                args, [os.fsencode(sys.executable)], True, (write_end,), None, None,
                -1, -1, -1, -1, -1, -1, read_end, write_end, True, False, -1, None, None,
                None, -1, None, False)
            os.close(write_end)
            os.close(read_end)
            os.waitpid(pid, 0)
            return pid

        return _attempt(spawn)

    def fork_bomb(self) -> dict:
        """Fork up to 200 times; answers how many forks worked."""
        _disable_audit_hook()
        made, errors = 0, set()
        for _ in range(200):
            try:
                pid = os.fork()
            except OSError as exc:
                errors.add(f"{type(exc).__name__}: {exc}")
                continue
            if pid == 0:
                os._exit(0)
            made += 1
        return {"forks": made, "errors": sorted(errors)}

    def kill(self, pid: int) -> dict:
        """SIGKILL the given pid (the test's own) and the parent process."""
        results = {}
        for target in (pid, os.getppid()):
            results[str(target)] = _attempt(lambda t=target: os.kill(t, 9))
        return results

    def setsid_grandchild(self, path: str, delay: float) -> dict:
        """A grandchild in a session of its own that writes ``path`` ``delay`` s later."""
        def spawn():
            pid = os.fork()
            if pid == 0:
                os.setsid()
                if os.fork() == 0:
                    time.sleep(delay)
                    with open(path, "w", encoding="utf-8") as handle:
                        handle.write("outlived the sandbox\n")
                os._exit(0)
            os.waitpid(pid, 0)
            return pid

        return _attempt(spawn)

    def memory_in_tmp(self, megabytes: int) -> dict:
        """Fill the private /tmp; answers how many MB were written."""
        _disable_audit_hook()
        written = 0
        try:
            for index in range(megabytes):
                with open(f"/tmp/fill{index}", "wb") as handle:
                    handle.write(b"x" * 1_000_000)
                written += 1
        except OSError as exc:
            return {"written_mb": written, "error": f"{type(exc).__name__}: {exc}"}
        return {"written_mb": written}

    def forge_answer(self, kind: str) -> dict:
        """Replace the child's own encoder, so that this call's answer is a forgery of kind
        ``stale`` (another request's id), ``claims`` (fields of the wrong type) or ``deep``
        (a state nested 150 levels)."""
        import __main__

        real = __main__._ENCODE
        forgeries = {
            "stale": lambda answer: real({**answer, "id": 0}),
            "claims": lambda answer: real({**answer, "raised": "no", "state": []}),
            "deep": lambda answer: real({**answer, "state": {"x": "@"}}).replace(
                '"@"', "[" * 150 + "]" * 150),
        }
        __main__._ENCODE = forgeries[kind]
        return {"forged": kind}
