"""Reading and writing the files a command is given, safely (shared by every command).

Writing: a temporary file beside the target, then a rename, so that a crash never leaves half
of one; never onto a device, a named pipe or a socket (renaming over one would replace the
node). Reading: regular files only (a FIFO would block the read for ever, a device may never
end), and no more than a stated number of bytes (a huge file fails with a message instead of
exhausting memory).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

__all__ = ["FileRefusedError", "append_line_durably", "open_for_append", "read_text_file",
           "special_file_kind", "write_atomically"]


class FileRefusedError(OSError):
    """A path that is not a regular file where one is read or written, or an input over its
    size limit; ``str()`` is the whole message."""


#: what a path that is neither a file nor a folder is, for the message refusing it
_SPECIAL_FILES: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def special_file_kind(mode: int) -> str | None:
    """What a non-regular, non-folder file is (reading one may block or never end)."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return next((name for test, name in _SPECIAL_FILES if test(mode)), "a special file")


def _size_text(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB" if size >= 1_000_000 else f"{size} bytes"


def read_text_file(path: str | Path, *, limit: int) -> str:
    """The UTF-8 text of the regular file at ``path``, at most ``limit`` bytes of it.

    The file is opened without blocking and checked before anything is read: a FIFO, a
    device, a socket or a folder raises :class:`FileRefusedError`, as does a file over
    ``limit`` bytes (checked again while reading, for a file that grows). Other failures
    are the ``OSError`` or ``UnicodeDecodeError`` that reading raises.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise FileRefusedError(f"'{path}' is a folder, not a file")
        raise FileRefusedError(f"'{path}' is {special_file_kind(mode)}, not a regular file")
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(fd).st_size > limit:
            raise _too_large(path, limit)
        chunks: list[bytes] = []
        size = 0
        while chunk := handle.read(_CHUNK):
            size += len(chunk)
            if size > limit:
                raise _too_large(path, limit)
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8")


def open_for_append(path: str | Path) -> TextIO:
    """A UTF-8 text handle appending to the regular file at ``path`` (created if missing), for
    a log. Opened without blocking, so a FIFO with no reader is refused at once rather than
    waited on; a FIFO, a device, a socket or a folder raises :class:`FileRefusedError`."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if os.path.exists(path) and not os.path.isfile(path):
            kind = "a folder" if os.path.isdir(path) else special_file_kind(os.stat(path).st_mode)
            raise FileRefusedError(f"'{path}' is {kind}, not a regular file") from None
        raise exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise FileRefusedError(f"'{path}' is {special_file_kind(mode)}, not a regular file")
    os.set_blocking(fd, True)
    return open(fd, "a", encoding="utf-8", errors="backslashreplace")


#: how much of an input file is read at a time
_CHUNK = 1 << 20


def _too_large(path: str | Path, limit: int) -> FileRefusedError:
    return FileRefusedError(f"'{path}' is larger than {_size_text(limit)}, the most read "
                            "from such a file")


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


def append_line_durably(path: Path, line: str) -> None:
    """Append one line (``line`` ends with a newline) to a journal, flushed and fsynced before
    returning, so that a kill at any moment loses at most the line being written; a torn last
    line a kill left is closed first, so the new line starts a line of its own."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() > 0:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.write(b"\n")  # close a torn line left by a kill
        handle.write(line.encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())


def write_atomically(path: str | Path, text: str) -> None:
    """Replace the file's contents in one step: a temporary file beside it, then rename.

    A crash or a full disk leaves either the old or the new file, never half of one. Missing
    parent folders are created; an existing file keeps its permission bits (a new one gets
    ``0644`` less the umask, as ``open`` would give it: the temporary file is private),
    and a symbolic link is followed so that the link itself stays a link. A target that
    exists and is not a regular file (a device such as ``/dev/full``, a FIFO, a socket, a
    folder) raises :class:`FileRefusedError` and is left as it is.
    """
    target = Path(os.path.realpath(path))
    try:
        mode: int | None = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else special_file_kind(mode)
        raise FileRefusedError(f"'{path}' is {kind}, not a regular file: not written")
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
