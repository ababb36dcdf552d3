"""How errors reach a person: one line on stderr and the exit code :mod:`skyjo_ref.errors` maps them to.

The errors themselves, and the one table of exit codes (documented in
docs/cli.md), live in :mod:`skyjo_ref.errors`; this module prints them, and
words the usage errors the command-line parser finds.
"""

from __future__ import annotations

import errno
import traceback
from typing import Any

from rich.console import Console
from rich.markup import escape
from typer._click import exceptions as click_errors

from skyjo_ref.errors import (
    EXIT_BUSY,
    EXIT_CHECK_FAILED,
    EXIT_FAIL_ON,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_UNFINISHED,
    EXIT_USAGE,
    Busy,
    SkyjoRefError,
    Unfinished,
)

__all__ = [
    "EXIT_BUSY",
    "EXIT_CHECK_FAILED",
    "EXIT_FAIL_ON",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_UNFINISHED",
    "EXIT_USAGE",
    "Busy",
    "Unfinished",
    "UserError",
]

#: What commands raise for a person's mistake: the root itself (exit 2 unless told), and every library error
#: under it reaches the person unchanged (a ConfigError, a BotSpecError, an Unfinished run...).
UserError = SkyjoRefError

DEBUG = False
_stderr = Console(stderr=True, soft_wrap=True)  # one-line errors stay one line in CI logs


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
    if _out_of_tasks(exc):  # not a bug: the machine (or this user) has no process or thread left to give
        report(
            Unfinished(
                f"the machine is out of processes or threads ({exc}): finished work is kept; run again to go on. "
                "Something used them all: a bot without a process cap (isolation: none, or no writable cgroup; "
                "docs/sandbox.md) or another program; see ulimit -u, /proc/sys/kernel/threads-max and pid_max"
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


def _out_of_tasks(exc: BaseException) -> bool:
    """Whether ``exc`` says no thread or process could be made: Python's ``can't start new thread``, or a
    ``fork``/``clone`` that failed with EAGAIN."""
    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return True
    return isinstance(exc, BlockingIOError) and exc.errno == errno.EAGAIN and "fork" in str(exc).lower()


#: How Typer's validation (pydantic) words a range or a type it refused, as "expected ..." words.
_EXPECTED = {
    "greater_than_equal": "{kind} of at least {ge}",
    "greater_than": "{kind} greater than {gt}",
    "less_than_equal": "{kind} of at most {le}",
    "less_than": "{kind} less than {lt}",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_parsing": "a number",
    "bool_parsing": "true or false",
}


def _flag(param: Any) -> str:
    """How a person typed (or would type) the parameter: its long option, or an argument's metavar."""
    opts = [opt for opt in getattr(param, "opts", []) if opt.startswith("--")] or list(getattr(param, "opts", []))
    if getattr(param, "param_type_name", "") == "argument" or not opts:
        return str(getattr(param, "metavar", None) or getattr(param, "name", "") or "").upper()
    return str(opts[0])


def _help_hint(exc: click_errors.UsageError) -> str:
    return f"; see {exc.ctx.command_path} --help" if exc.ctx is not None else ""


def _bad_value(exc: click_errors.BadParameter) -> str:
    where = _flag(exc.param) if exc.param is not None else "a value"
    cause = exc.__cause__
    found = cause.errors() if cause is not None and hasattr(cause, "errors") else []
    if found:
        first = found[0]
        kind = "a whole number" if isinstance(first.get("input"), int) or _int_param(exc.param) else "a number"
        wording = _EXPECTED.get(str(first.get("type")))
        if wording is not None:
            return f"{where} {first.get('input')}: expected " + wording.format(kind=kind, **(first.get("ctx") or {}))
        return f"{where} {first.get('input')}: {first.get('msg')}"
    return f"{where}: {exc.message}"


def _int_param(param: Any) -> bool:
    return "int" in str(getattr(param, "type_descriptor", "") or getattr(param, "type", "")).lower()


def usage_message(exc: click_errors.ClickException) -> str:
    """One line for a usage error the command-line parser found, in our words: what is wrong, what is expected."""
    if isinstance(exc, click_errors.NoSuchOption):
        guess = f" (did you mean {exc.possibilities[0]}?)" if exc.possibilities else ""
        return f"no such option {exc.option_name}{guess}{_help_hint(exc)}"
    if isinstance(exc, click_errors.MissingParameter):
        what = _flag(exc.param) if exc.param is not None else "an argument"
        usage = ""
        if exc.ctx is not None:
            args = [_flag(p) for p in exc.ctx.command.params if getattr(p, "param_type_name", "") == "argument"]
            usage = f"; expected {exc.ctx.command_path} {' '.join(args)} [OPTIONS]"
        return f"missing {what}{usage}"
    if isinstance(exc, click_errors.BadParameter):
        return _bad_value(exc)
    if isinstance(exc, click_errors.UsageError):
        text = exc.message.rstrip(".")
        return f"{text[:1].lower()}{text[1:]}{_help_hint(exc)}"
    return exc.format_message()
