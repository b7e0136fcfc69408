"""Writing files so that a crash never leaves half of one (shared by every command that writes)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


def _umask() -> int:
    """The process's umask, read without changing it (Linux), else the usual 022."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def write_atomically(path: str | Path, text: str) -> None:
    """Replace the file's contents in one step: a temporary file beside it, then rename.

    A crash or a full disk leaves either the old or the new file, never half of one. Missing
    parent folders are created; an existing file keeps its permission bits (a new one gets
    ``0644`` less the umask, as ``open`` would give it: the temporary file is private),
    and a symbolic link is followed so that the link itself stays a link.
    """
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if target.exists():
            shutil.copymode(target, tmp_name)
        else:
            os.chmod(tmp_name, 0o644 & ~_umask())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
