"""Two sandboxes try to talk through the kernel: ``hold BITS FILE TAG`` encodes BITS in byte-range locks on FILE
(a file every sandbox can read) and in a key of its uid's keyring, says ``held``, and keeps them until its stdin
closes; ``look N FILE TAG`` reads N bits back from the locks and the key. tests/test_sandbox_channels.py runs the
two in separate sandboxes, with and without the seccomp filter.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import struct
import sys

F_OFD_GETLK, F_OFD_SETLK = 36, 37
ADD_KEY, KEYCTL = 248, 250
KEY_SPEC_USER_KEYRING = -4
KEYCTL_INVALIDATE, KEYCTL_READ, KEYCTL_SEARCH = 21, 11, 10

libc = ctypes.CDLL(None, use_errno=True)


def lock(kind: int, start: int) -> bytes:
    return struct.pack("hhqqi", kind, 0, start, 1, 0)


def failed() -> str:
    return errno.errorcode.get(ctypes.get_errno(), "?")


def hold(bits: str, shared: str, tag: str) -> None:
    handle = open(shared, "rb")  # the locks live as long as it is open
    said = []
    try:
        for i, bit in enumerate(bits):
            if bit == "1":
                fcntl.fcntl(handle, F_OFD_SETLK, lock(fcntl.F_RDLCK, i))
        said.append("locks set")
    except OSError as exc:
        said.append(f"locks refused ({errno.errorcode[exc.errno]})")
    key = libc.syscall(ADD_KEY, b"user", tag.encode(), bits.encode(), len(bits), KEY_SPEC_USER_KEYRING)
    said.append("key added" if key >= 0 else f"key refused ({failed()})")
    print("held:", "; ".join(said), flush=True)
    sys.stdin.read()  # until the test closes it


def look(n: int, shared: str, tag: str) -> None:
    handle = open(shared, "rb")
    said = []
    try:
        seen = ""
        for i in range(n):
            answer = fcntl.fcntl(handle, F_OFD_GETLK, lock(fcntl.F_WRLCK, i))
            seen += "0" if struct.unpack("hhqqi", answer)[0] == fcntl.F_UNLCK else "1"
        said.append(f"locks {seen}")
    except OSError as exc:
        said.append(f"locks refused ({errno.errorcode[exc.errno]})")
    key = libc.syscall(KEYCTL, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, b"user", tag.encode(), 0)
    if key >= 0:
        buffer = ctypes.create_string_buffer(n)
        libc.syscall(KEYCTL, KEYCTL_READ, key, buffer, n)
        libc.syscall(KEYCTL, KEYCTL_INVALIDATE, key)  # leave nothing in the uid's keyring
        said.append(f"key {buffer.raw.decode()}")
    else:
        said.append(f"key not found ({failed()})")
    print("saw:", "; ".join(said), flush=True)


if __name__ == "__main__":
    mode, arg, shared, tag = sys.argv[1:5]
    hold(arg, shared, tag) if mode == "hold" else look(int(arg), shared, tag)
