"""``mypy --strict`` over generated packages, as the tests that type-check them run it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def mypy_strict(folder: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    """Run ``mypy --strict`` over ``folder`` (from the checkout, with its own cache in
    ``cache``, at most five minutes); the caller asserts on the returncode and output."""
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
         "--cache-dir", str(cache), str(folder)],
        cwd=REPO, capture_output=True, text=True, timeout=300)
