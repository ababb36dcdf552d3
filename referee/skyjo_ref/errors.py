"""The one error root: every error a user can cause or meet, and the one table mapping each kind to an exit code.

A library error that a person can act on subclasses :class:`SkyjoRefError`
(through one of the kinds below); the CLI prints its message on one line and
exits with :func:`exit_code` of it, so no command rewraps it. The kinds:

=================  ====  ======================================================================
kind               exit  meaning
=================  ====  ======================================================================
:class:`CheckFailed`  1  the command ran but its check failed (an invalid record)
:class:`UsageError`   2  bad usage or input, found before anything was played
:class:`Unfinished`   3  the work stopped before its end (finished work is kept); a bot that
                         cannot run (``execution.types.BotCannotRun``: its process exits
                         before connecting, it never connects) is one, in every command
:class:`Busy`         6  another run writes to the folder; nothing was done
=================  ====  ======================================================================

Imports nothing of skyjo_ref: every layer may raise these. The SDK never
imports skyjo_ref, so the referee's :class:`BotSpecError` subclasses the SDK
loader's: one ``except`` catches a bad spec from either side.
"""

from __future__ import annotations

from typing import Final

from skyjo_bot.loader import BotSpecError as LoaderSpecError

EXIT_OK: Final = 0
EXIT_CHECK_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_UNFINISHED: Final = 3
EXIT_FAIL_ON: Final = 5
EXIT_BUSY: Final = 6
EXIT_INTERRUPTED: Final = 130


class SkyjoRefError(Exception):
    """Something a user can act on; the message says what is wrong and what is expected.

    ``exit_code`` overrides the kind's code for one error (``--fail-on``'s 5)."""

    def __init__(self, message: str = "", exit_code: int | None = None) -> None:
        super().__init__(message)
        self._exit_code = exit_code

    @property
    def exit_code(self) -> int:
        return self._exit_code if self._exit_code is not None else exit_code_of_kind(type(self))


class CheckFailed(SkyjoRefError):
    """The command ran, and what it checks is wrong."""


class UsageError(SkyjoRefError, ValueError):
    """Bad usage or bad input (arguments, a config file, a bot spec), found before anything was played."""


class ConfigError(UsageError):
    """A config file (tournament, serve) that is not valid; the message names the line and the key."""


class BotSpecError(UsageError, LoaderSpecError):
    """A bot spec that names no usable bot (command line or config entry); found before anything runs."""


class Unfinished(SkyjoRefError, RuntimeError):
    """The work stopped before its end (a bot or the referee failed); finished work is kept."""


class Busy(SkyjoRefError):
    """Another run writes to the folder this command would write to; nothing was done."""


#: The one table: each kind of error and its exit code (the most specific kind listed wins).
EXIT_CODES: Final[dict[type[SkyjoRefError], int]] = {
    CheckFailed: EXIT_CHECK_FAILED,
    UsageError: EXIT_USAGE,
    Unfinished: EXIT_UNFINISHED,
    Busy: EXIT_BUSY,
}


def exit_code_of_kind(kind: type[BaseException]) -> int:
    """The exit code of an error class: the first class of its MRO in :data:`EXIT_CODES` (usage otherwise)."""
    for cls in kind.__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls]
    return EXIT_USAGE
