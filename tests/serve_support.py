"""``worldspec serve --transport http`` in a child process, for the serving tests."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from process_support import end_process

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["served_over_http"]


@contextmanager
def served_over_http(args: Sequence[str], *, env: Mapping[str, str] | None = None,
                     start_timeout: float = 60) -> Iterator[str]:
    """``worldspec serve ARGS --transport http --port 0`` running; yields its base URL (read
    from the line it prints on stderr) and stops it on leaving."""
    process = subprocess.Popen(
        [sys.executable, "-m", "worldspec", "serve", *args, "--transport", "http", "--port", "0"],
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, env={**os.environ, **(env or {})})
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + start_timeout
        line = ""
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            if " on http://" in line or not line:
                break
        assert " on http://" in line, f"server did not start: {line!r}"
        yield line.split(" on ", 1)[1].split(" ", 1)[0]
    finally:
        end_process(process, timeout=20)
