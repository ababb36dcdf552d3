"""Run ``skyjo-ref`` in a real pseudo-terminal of a given size and read what a person would see.

Rich decides from the terminal itself (``isatty``, the window size, ``COLUMNS``) how wide to draw, so output
"at 80 columns" is only tested honestly through a pty: a pipe gets plain lines. The child's stdout and stderr
both go to the terminal, as they do in a person's shell; reading stops at end of output (the child and every
process holding the terminal exited), never on a timer.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from dataclasses import dataclass
from pathlib import Path

#: Control sequences (colours, cursor moves, Live's line erasing) and the terminal's own carriage returns.
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


@dataclass(frozen=True)
class Screen:
    code: int
    raw: str  # as the terminal received it, control sequences and all

    @property
    def text(self) -> str:
        """What was written, without control sequences."""
        return _CONTROL.sub("", self.raw)

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")


def run_in_terminal(
    *args: str, cwd: Path, columns: int = 80, rows: int = 40, env: dict[str, str] | None = None, timeout: float = 110
) -> Screen:
    """``python -m skyjo_ref ARGS`` on a ``columns``-wide pseudo-terminal; its exit code and everything it showed."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    child_env = {
        **os.environ,
        "COLUMNS": str(columns),
        "LINES": str(rows),
        "TERM": "xterm-256color",
        **(env or {}),
    }
    for name in ("NO_COLOR", "TTY_COMPATIBLE", "FORCE_COLOR", "TTY_INTERACTIVE"):
        child_env.pop(name, None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "skyjo_ref", *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=cwd,
        env=child_env,
        close_fds=True,
    )
    os.close(follower)
    chunks: list[bytes] = []
    try:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = proc.wait(timeout=timeout)
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return Screen(code, b"".join(chunks).decode("utf-8", "replace"))
