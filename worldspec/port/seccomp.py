"""The seccomp filters of the sandbox: the original may start threads, never a process.

:func:`process_filter` compiles a classic BPF program (the form ``bwrap --seccomp FD``
loads, just before it runs the child) that, for the architecture it is built for,

- refuses every way of making a new process: ``fork``, ``vfork``, ``clone`` without
  ``CLONE_THREAD`` or with a namespace flag (``EPERM``), and ``clone3`` (``ENOSYS``, whose
  arguments a filter cannot read: the C library then falls back to ``clone`` for its
  threads);
- refuses ``socket`` for every family but ``AF_UNIX``: no network at all, not even the
  loopback of the sandbox's own network namespace;
- refuses the calls that could loosen the sandbox from inside: namespaces (``unshare``,
  ``setns``), mounts, ``chroot``, ``ptrace`` and reading or writing another process's memory,
  ``bpf``, ``perf_event_open``, ``userfaultfd`` and the kernel keyring;
- kills the process on any other architecture's calling convention (an x32 or i386 call
  on x86_64), so no syscall number can be smuggled past the table.

With no new process, a fork bomb, a ``setsid`` grandchild and ``subprocess`` all end at the
first call, whatever the Python code did to its own audit hooks.

``process_filter(forks=True)`` is the sandbox server's filter (bwrap loads it): the same,
except that ``fork``, ``vfork`` and ``clone`` without a namespace flag pass, so that the
server (which never runs the original's code) can fork a worker per call sequence; each
worker then loads the strict filter on top of it (filters stack, the strictest answer wins)
before the original's code runs (see :mod:`worldspec.port.sandbox_child`). The table has rows for
x86_64 only (the machines we test on); elsewhere :func:`process_filter` answers None and the
sandbox counts as unavailable (see :func:`worldspec.port.sandbox.confinement_problem`).
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

__all__ = ["ArchitectureTable", "TABLES", "process_filter"]

# classic BPF opcodes (linux/filter.h) and seccomp's return values (linux/seccomp.h)
_LOAD_WORD = 0x20       # BPF_LD | BPF_W | BPF_ABS
_JUMP_EQUAL = 0x15      # BPF_JMP | BPF_JEQ | BPF_K
_JUMP_AT_LEAST = 0x35   # BPF_JMP | BPF_JGE | BPF_K
_JUMP_ANY_BIT = 0x45    # BPF_JMP | BPF_JSET | BPF_K
_RETURN = 0x06          # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_ERRNO = 0x00050000

# offsets into struct seccomp_data: the syscall number, the architecture, the first argument
# (its low 32 bits, on a little-endian machine)
_NUMBER, _ARCHITECTURE, _FIRST_ARGUMENT = 0, 4, 16

_AF_UNIX = 1
_CLONE_THREAD = 0x00010000
#: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
_CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 \
    | 0x20000000 | 0x40000000 | 0x00000080


@dataclass(frozen=True)
class ArchitectureTable:
    """One architecture's numbers: its audit tag and the syscalls the filter refuses."""

    audit_arch: int
    clone: int
    socket: int
    #: syscall numbers at or above this belong to another calling convention (0: none)
    foreign_from: int
    #: number -> errno it is refused with
    refused: dict[int, int]
    #: the numbers among ``refused`` that make a process (the server's filter lets them pass)
    forks: tuple[int, ...] = ()


_X86_64_REFUSED = {
    57: errno.EPERM,    # fork
    58: errno.EPERM,    # vfork
    435: errno.ENOSYS,  # clone3
    272: errno.EPERM,   # unshare
    308: errno.EPERM,   # setns
    165: errno.EPERM,   # mount
    166: errno.EPERM,   # umount2
    155: errno.EPERM,   # pivot_root
    161: errno.EPERM,   # chroot
    101: errno.EPERM,   # ptrace
    310: errno.EPERM,   # process_vm_readv
    311: errno.EPERM,   # process_vm_writev
    321: errno.EPERM,   # bpf
    298: errno.EPERM,   # perf_event_open
    323: errno.EPERM,   # userfaultfd
    248: errno.EPERM,   # add_key
    249: errno.EPERM,   # request_key
    250: errno.EPERM,   # keyctl
    428: errno.EPERM,   # open_tree
    429: errno.EPERM,   # move_mount
    430: errno.EPERM,   # fsopen
    431: errno.EPERM,   # fsconfig
    432: errno.EPERM,   # fsmount
    433: errno.EPERM,   # fspick
    442: errno.EPERM,   # mount_setattr
}

#: machine name (``platform.machine()``) -> its table
TABLES: dict[str, ArchitectureTable] = {
    "x86_64": ArchitectureTable(audit_arch=0xC000003E, clone=56, socket=41,
                                foreign_from=0x40000000,
                                refused=_X86_64_REFUSED, forks=(57, 58)),
}


def _instruction(code: int, jump_true: int, jump_false: int, value: int) -> bytes:
    return struct.pack("=HBBI", code, jump_true, jump_false, value)


def _program(table: ArchitectureTable, forks: bool) -> list[bytes]:
    program = [
        _instruction(_LOAD_WORD, 0, 0, _ARCHITECTURE),
        _instruction(_JUMP_EQUAL, 1, 0, table.audit_arch),
        _instruction(_RETURN, 0, 0, _KILL_PROCESS),
        _instruction(_LOAD_WORD, 0, 0, _NUMBER),
    ]
    if table.foreign_from:
        program += [_instruction(_JUMP_AT_LEAST, 0, 1, table.foreign_from),
                    _instruction(_RETURN, 0, 0, _KILL_PROCESS)]
    for number, error in table.refused.items():
        if forks and number in table.forks:
            continue
        program += [_instruction(_JUMP_EQUAL, 0, 1, number),
                    _instruction(_RETURN, 0, 0, _ERRNO | error)]
    # socket: only AF_UNIX (a socketpair between threads); no other family, so no network
    # even on the namespace's own loopback
    program += [
        _instruction(_JUMP_EQUAL, 0, 4, table.socket),
        _instruction(_LOAD_WORD, 0, 0, _FIRST_ARGUMENT),
        _instruction(_JUMP_EQUAL, 0, 1, _AF_UNIX),
        _instruction(_RETURN, 0, 0, _ALLOW),
        _instruction(_RETURN, 0, 0, _ERRNO | errno.EPERM),
    ]
    # clone: a thread (CLONE_THREAD, no namespace flag) passes, anything else is refused;
    # with forks, anything without a namespace flag passes
    if forks:
        return [
            *program,
            _instruction(_JUMP_EQUAL, 0, 3, table.clone),
            _instruction(_LOAD_WORD, 0, 0, _FIRST_ARGUMENT),
            _instruction(_JUMP_ANY_BIT, 0, 1, _CLONE_NAMESPACES),
            _instruction(_RETURN, 0, 0, _ERRNO | errno.EPERM),
            _instruction(_RETURN, 0, 0, _ALLOW),
        ]
    program += [
        _instruction(_JUMP_EQUAL, 0, 5, table.clone),
        _instruction(_LOAD_WORD, 0, 0, _FIRST_ARGUMENT),
        _instruction(_JUMP_ANY_BIT, 2, 0, _CLONE_NAMESPACES),
        _instruction(_JUMP_ANY_BIT, 0, 1, _CLONE_THREAD),
        _instruction(_RETURN, 0, 0, _ALLOW),
        _instruction(_RETURN, 0, 0, _ERRNO | errno.EPERM),
        _instruction(_RETURN, 0, 0, _ALLOW),
    ]
    return program


def process_filter(machine: str | None = None, *, forks: bool = False) -> bytes | None:
    """The filter for ``machine`` (default: this one) as bytes, or None without a table;
    ``forks``: the server's filter, which lets a process fork (see the module docstring)."""
    table = TABLES.get(machine or platform.machine())
    return b"".join(_program(table, forks)) if table is not None else None
