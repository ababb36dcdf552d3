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
