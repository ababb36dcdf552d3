"""Errors a user can cause, their one-line messages and exit codes.

Exit codes (documented in docs/cli.md):
  0  success
  1  the command ran but its check failed (e.g. ``replay --check`` found an invalid record)
  2  bad usage or bad input (arguments, config file, record file)
  3  the work could not finish (a tournament or match stopped early)
  5  ``--fail-on``: a bot forfeited, was struck or crashed (the message names the bots)
  130 interrupted (Ctrl-C); finished work is kept
"""

from __future__ import annotations

import errno
import traceback

from rich.console import Console
from rich.markup import escape

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_UNFINISHED = 3
EXIT_FAIL_ON = 5
EXIT_INTERRUPTED = 130

DEBUG = False
_stderr = Console(stderr=True, soft_wrap=True)  # one-line errors stay one line in CI logs


class UserError(Exception):
    """Something the user can fix; the message says what and what is expected."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class Unfinished(UserError):
    """The work stopped before its end; what finished is kept."""

    exit_code = EXIT_UNFINISHED


def report(exc: BaseException) -> None:
    if DEBUG:
        _stderr.print(escape("".join(traceback.format_exception(exc))), highlight=False)
    _stderr.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)


def handle_unexpected(exc: BaseException) -> int:
    """A message and an exit code for anything that is not a :class:`UserError`."""
    if isinstance(exc, KeyboardInterrupt):
        _stderr.print("interrupted; finished work is kept", highlight=False)
        return EXIT_INTERRUPTED
    if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE):
        # not a bug: the machine's limit (the referee already raised its own soft limit to the hard one)
        report(
            Unfinished(
                f"out of file descriptors ({exc.strerror or exc}): finished work is kept; run again to go on, "
                "with a higher limit (ulimit -n) or less at once (concurrency, serve --max-connections)"
            )
        )
        return EXIT_UNFINISHED
    if DEBUG:
        _stderr.print(escape("".join(traceback.format_exception(exc))), highlight=False)
    _stderr.print(
        f"[bold red]internal error:[/] {escape(type(exc).__name__)}: {escape(str(exc))}\n"
        "This is a bug in skyjo-ref; run again with --debug for the traceback and report it.",
        highlight=False,
    )
    return 70
