"""Ending a child process a test started: asked to stop first, then killed if it lingers."""

from __future__ import annotations

import subprocess
from typing import Any

__all__ = ["end_process"]


def end_process(process: subprocess.Popen[Any], timeout: float = 20) -> None:
    """Terminate ``process`` and wait up to ``timeout`` seconds for it to end; kill it when it
    has not, and wait for that too, so that no child outlives the test that started it."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)
