"""The ``skyjo-ref`` command's first code: Ctrl-C and SIGTERM are answered from the first millisecond.

The console script imports this module, which imports nothing of the CLI: a signal that arrives while
Typer, gRPC and the commands are still being imported (a second or two on a busy machine) ends the
command with exit 130 and one line, not a traceback (SIGINT) or a silent death (SIGTERM). From there
on SIGTERM is Ctrl-C: each command stops the way its Ctrl-C does (finished games are kept), and the
commands that run an event loop install their own handler for it.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

#: The exit code of a command stopped by Ctrl-C or SIGTERM (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main() -> None:
    """Console-script entry point (``skyjo-ref``, ``python -m skyjo_ref``)."""
    signal.signal(signal.SIGTERM, _terminate)
    try:
        from skyjo_ref.cli.app import main as run
    except KeyboardInterrupt:
        sys.stderr.write("interrupted while starting: nothing was run, nothing changed\n")
        sys.exit(EXIT_INTERRUPTED)
    run()
