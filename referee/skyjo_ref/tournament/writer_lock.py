"""One writer per store: an OS lock (``flock``) on a file in the output folder, held for a whole run.

The lock dies with its process (a crashed or killed run never leaves a stale lock behind), and the file
holds who took it (host, PID, start time) so that a second run is refused with a message that names the
holder. Readers (``ratings``, ``report``) never take it: SQLite in WAL mode lets them read while a run writes.
``flock`` works between processes of one machine; two CI jobs on two runners never see each other's lock
(docs/ci.md: a workflow ``concurrency:`` group keeps them apart, and ``merge`` joins stores that grew apart).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path
from typing import Final

from skyjo_ref.errors import Busy

LOCK_NAME: Final = ".writer.lock"


class FolderBusy(Busy):
    """Another run writes to this folder; the message names it."""


class WriterLock:
    """The writer's lock on ``folder`` (created if needed), taken at once or :class:`FolderBusy`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / LOCK_NAME
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(self.path)
            os.close(fd)
            raise FolderBusy(
                f"{folder} is in use by another run ({holder}): wait for it to finish, "
                "or give this run another output folder"
            ) from None
        except OSError:
            os.close(fd)
            raise
        self.fd: int | None = fd
        who = {"host": socket.gethostname(), "pid": os.getpid(), "started": time.time()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(who) + "\n").encode(), 0)

    def release(self) -> None:
        """Let the next writer in (the file stays: removing it would race with a writer opening it)."""
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # closing the descriptor drops the flock

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _holder(path: Path) -> str:
    """``host H, PID P, started 2026-12-04 17:29:12 UTC`` from the lock file, as far as it was written."""
    try:
        who = json.loads(path.read_text(encoding="utf-8") or "{}")
        started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(who["started"])))
        return f"host {who['host']}, PID {who['pid']}, started {started}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not written its name yet"


def lock_holder(db: Path) -> str:
    """Who holds a lock on the SQLite database ``db`` (or its ``-wal``/``-shm``), for a message:
    ``PID 4242 (python3 holder.py)``. The kernel's table of locks (``/proc/locks``) names the process of a POSIX
    lock; an open file description lock names none, and then the processes that have the files open do (those
    this user may see). Else "another process"."""
    files = [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
    pids = _lockers(files) or _openers(files)
    if not pids:
        return "another process"
    named = [f"PID {pid} ({_command(pid)})" for pid in sorted(pids)[:3]]
    return "process " + ", ".join(named) if len(named) == 1 else "processes " + ", ".join(named)


def _lockers(files: list[Path]) -> set[int]:
    """Other processes that hold a POSIX lock on one of ``files`` (``/proc/locks``: ``1: POSIX ADVISORY WRITE
    PID MAJ:MIN:INODE START END``; a waiter's line has ``->``)."""
    keys = set()
    for path in files:
        try:
            st = path.stat()
        except OSError:
            continue
        keys.add((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino))
    try:
        lines = Path("/proc/locks").read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return set()
    found: set[int] = set()
    for line in lines:
        fields = line.split()
        if len(fields) < 6 or fields[1] == "->" or not fields[4].isdigit():
            continue
        try:
            major, minor, inode = fields[5].split(":")
            key = (int(major, 16), int(minor, 16), int(inode))
        except ValueError:
            continue
        if key in keys and int(fields[4]) != os.getpid():
            found.add(int(fields[4]))
    return found


def _openers(files: list[Path]) -> set[int]:
    """Other processes that have one of ``files`` open (those whose ``/proc/PID/fd`` this user may read)."""
    wanted = {str(path.resolve()) for path in files}
    found: set[int] = set()
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            fds = os.scandir(f"/proc/{entry.name}/fd")
        except OSError:
            continue
        with fds:
            for fd in fds:
                try:
                    if os.readlink(fd.path) in wanted:
                        found.add(int(entry.name))
                        break
                except OSError:
                    continue
    return found


def _command(pid: int) -> str:
    """A process's command line, printable and short."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "gone"
    text = " ".join(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= 60 else text[:59] + "~"
