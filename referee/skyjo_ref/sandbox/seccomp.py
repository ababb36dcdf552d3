"""The seccomp filter of an isolated bot: the system calls that would let two sandboxes talk, refused.

Namespaces separate what a bot can name; some kernel objects are shared by
every process that can open one file, or by every process of one host uid, and
would carry bits between two sandboxes alive at the same time (the process
playing a deal's second seating and the one that saw its first, or two bots
colluding), or across runs:

- byte-range locks (POSIX ``F_SETLK`` and OFD ``F_OFD_SETLK``), ``flock``,
  leases: held per inode, they are visible to every process that can open the
  file, whatever its mount namespace (``/usr``, the virtual environment);
- inotify, fanotify and ``F_NOTIFY``: one sandbox sees another open or read a
  shared file;
- the kernel keyrings (``add_key``, ``keyctl``, ``request_key``): the user
  keyring of uid 65534 is one for every isolated bot on the host, and keeps
  what a bot leaves in it after the bot ends;
- the kernel log (``syslog``): a crash message carries a name the bot chose;
- the page cache (``preadv2`` with ``RWF_NOWAIT``, ``cachestat``): whether
  another sandbox read a page of a shared file.

Refused too, as nothing a bot needs and much kernel surface: ``ptrace``,
``process_vm_readv``/``writev``, ``perf_event_open``, ``bpf``,
``userfaultfd``, ``io_uring_*``, and new user namespaces (``unshare``/``clone``
with ``CLONE_NEWUSER``; ``clone3``, whose flags a filter cannot read, says
``ENOSYS`` and libc falls back to ``clone``). Calls a runtime may probe for
answer ``ENOSYS`` (it falls back), the others ``EPERM``. Every other
architecture's calls (32-bit x86 on a 64-bit kernel, x32) are refused.

The filter is classic BPF assembled here with the standard library
(bubblewrap's ``--seccomp FD`` loads it); docs/sandbox.md lists what it closes.
"""

from __future__ import annotations

import errno
import functools
import platform
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

# <linux/filter.h> and <linux/seccomp.h>
_LD_ABS_W: Final = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ: Final = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE: Final = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET: Final = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET: Final = 0x06  # BPF_RET | BPF_K
RET_ALLOW: Final = 0x7FFF0000
_RET_ERRNO: Final = 0x00050000

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian: low word first)
_NR: Final = 0
_ARCH: Final = 4


def _arg_low(index: int) -> int:
    return 16 + 8 * index


CLONE_NEWUSER: Final = 0x10000000

#: fcntl commands that lock, lease or watch: POSIX locks (and their 64-bit twins), OFD locks, leases, F_NOTIFY.
LOCK_COMMANDS: Final = (5, 6, 7, 12, 13, 14, 36, 37, 38, 1024, 1025, 1026)


@dataclass(frozen=True, slots=True)
class Arch:
    """One architecture's audit id and the numbers of the system calls the filter looks at."""

    audit: int
    numbers: Mapping[str, int]
    x32_bit: int | None = None  # x86_64: calls with this bit set are the x32 ABI


#: From the kernel's uapi headers (asm/unistd_64.h on x86_64; asm-generic/unistd.h on aarch64).
ARCHES: Final[Mapping[str, Arch]] = {
    "x86_64": Arch(
        audit=0xC000003E,
        x32_bit=0x40000000,
        numbers={
            "fcntl": 72,
            "flock": 73,
            "ptrace": 101,
            "syslog": 103,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "inotify_init": 253,
            "inotify_add_watch": 254,
            "inotify_init1": 294,
            "perf_event_open": 298,
            "fanotify_init": 300,
            "fanotify_mark": 301,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "bpf": 321,
            "userfaultfd": 323,
            "preadv2": 327,
            "pwritev2": 328,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "cachestat": 451,
            "unshare": 272,
            "clone": 56,
            "clone3": 435,
        },
    ),
    "aarch64": Arch(
        audit=0xC00000B7,
        numbers={
            "fcntl": 25,
            "flock": 32,
            "ptrace": 117,
            "syslog": 116,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "inotify_init1": 26,
            "inotify_add_watch": 27,
            "perf_event_open": 241,
            "fanotify_init": 262,
            "fanotify_mark": 263,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "bpf": 280,
            "userfaultfd": 282,
            "preadv2": 286,
            "pwritev2": 287,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "cachestat": 451,
            "unshare": 97,
            "clone": 220,
            "clone3": 435,
        },
    ),
}

#: Refused outright, and with which errno (ENOSYS where a runtime may probe and fall back).
REFUSED: Final[Mapping[str, int]] = {
    "flock": errno.EPERM,
    "add_key": errno.EPERM,
    "request_key": errno.EPERM,
    "keyctl": errno.EPERM,
    "inotify_init": errno.EPERM,
    "inotify_init1": errno.EPERM,
    "inotify_add_watch": errno.EPERM,
    "fanotify_init": errno.EPERM,
    "fanotify_mark": errno.EPERM,
    "syslog": errno.EPERM,
    "ptrace": errno.EPERM,
    "process_vm_readv": errno.EPERM,
    "process_vm_writev": errno.EPERM,
    "perf_event_open": errno.EPERM,
    "bpf": errno.EPERM,
    "userfaultfd": errno.EPERM,
    "preadv2": errno.ENOSYS,
    "pwritev2": errno.ENOSYS,
    "cachestat": errno.ENOSYS,
    "io_uring_setup": errno.ENOSYS,
    "io_uring_enter": errno.ENOSYS,
    "io_uring_register": errno.ENOSYS,
    "clone3": errno.ENOSYS,
}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def _deny(err: int) -> bytes:
    return _op(_RET, _RET_ERRNO | err)


def _on_arg(nr: int, arg: int, values: Iterable[int], err: int, mask: bool = False) -> bytes:
    """Refuse call ``nr`` with ``err`` when its argument ``arg`` equals one of ``values`` (``mask``: has a bit
    of the one value set); allow it otherwise. Placed where the call number is loaded."""
    checks = b""
    for value in values:
        checks += _op(_JSET if mask else _JEQ, value, 0, 1) + _deny(err)
    body = _op(_LD_ABS_W, _arg_low(arg)) + checks + _op(_RET, RET_ALLOW)
    return _op(_JEQ, nr, 0, len(body) // 8) + body


@functools.cache
def program(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (this one by default) as bubblewrap reads it, or None for an architecture
    this module has no table of."""
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    n = arch.numbers
    out = _op(_LD_ABS_W, _ARCH) + _op(_JEQ, arch.audit, 1, 0) + _deny(errno.ENOSYS)
    out += _op(_LD_ABS_W, _NR)
    if arch.x32_bit is not None:
        out += _op(_JGE, arch.x32_bit, 0, 1) + _deny(errno.ENOSYS)
    for name, err in REFUSED.items():
        if name in n:
            out += _op(_JEQ, n[name], 0, 1) + _deny(err)
    out += _on_arg(n["fcntl"], 1, LOCK_COMMANDS, errno.EPERM)
    out += _on_arg(n["unshare"], 0, (CLONE_NEWUSER,), errno.EPERM, mask=True)
    out += _on_arg(n["clone"], 0, (CLONE_NEWUSER,), errno.EPERM, mask=True)
    return out + _op(_RET, RET_ALLOW)
