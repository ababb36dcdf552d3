"""``skyjo-ref check-bot BOT``: walk a bot through the conformance cases of docs/check-bot.md.

Thin: find the bot (a spec as ``match`` takes it, or ``CONFIG --bot NAME``: the bot as that league runs it), call
:func:`skyjo_ref.checkbot.check_bot`, render the table and the CI reports.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from skyjo_ref.cli import errors
from skyjo_ref.cli.options import folder_from_cli, table_console
from skyjo_ref.cli.plain import print_table

if TYPE_CHECKING:  # the cases (a referee, gRPC) load when a bot is checked, not for --help
    from skyjo_ref.checkbot import Result
    from skyjo_ref.players import BotSpec


def register(app: typer.Typer) -> None:
    app.command("check-bot")(check_bot_cmd)


def check_bot_cmd(
    bot: Annotated[
        str | None, typer.Argument(help="The bot: bot.py, module:Class, 'cmd:COMMAND', or a league config with --bot.")
    ] = None,
    bot_name: Annotated[
        str | None, typer.Option("--bot", help="With a config: the bot of that name, exactly as the league runs it.")
    ] = None,
    list_cases: Annotated[bool, typer.Option("--list", help="Print the case names, one a line, and exit.")] = False,
    cases: Annotated[
        list[str] | None, typer.Option("--case", help="Run this case (repeatable; default: every case).")
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="Run the quick cases only (what a league runs first).")
    ] = False,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the results as JSON to this file.")] = None,
    junit_out: Annotated[Path | None, typer.Option("--junit", help="Write a JUnit XML report to this file.")] = None,
    expect_fail: Annotated[
        Path | None,
        typer.Option("--expect-fail", help="Cases known to fail, one a line; a listed case that passes fails the run."),
    ] = None,
    logs: Annotated[
        Path | None, typer.Option("--logs", help="Keep the bot's logs here (default: a temp folder).")
    ] = None,
) -> None:
    """Check a bot against the protocol's rules before it plays: exit 0 when every case passes (or fails as
    listed in --expect-fail), 1 when one does not, 2 on bad usage."""
    import asyncio

    from skyjo_ref.checkbot import CASES, check_bot, write_json, write_junit
    from skyjo_ref.sandbox import SandboxUnavailable

    if list_cases:
        for name in CASES:  # names alone, for scripts (docs/check-bot.md says what each checks)
            typer.echo(name)
        return
    chosen = _cases(cases or [], quick)
    listed = _expected_failures(expect_fail)
    for flag, path in (("--json", json_out), ("--junit", junit_out)):
        if path is not None and (path.is_dir() or not path.parent.is_dir()):
            raise errors.UserError(f"{flag} {path}: expected a file in an existing folder")
    spec = bot_to_check(bot, bot_name)
    log_dir = folder_from_cli("--logs", logs, "skyjo-check-logs-")
    # the process layer's own warnings (a bot exited, not restarted) are what the cases provoke: the table says them
    logging.getLogger("skyjo_ref.players").setLevel(logging.ERROR)
    try:
        results = asyncio.run(check_bot(spec, chosen, log_dir, listed, on_result=_progress))
    except SandboxUnavailable as exc:
        raise errors.UserError(f"bot {spec.name!r} cannot be run here as its league runs it: {exc}") from None
    show(results, spec, log_dir)
    if json_out is not None:
        write_json(results, spec.name, json_out)
    if junit_out is not None:
        write_junit(results, spec.name, junit_out)
    if not all(r.ok for r in results):
        raise typer.Exit(errors.EXIT_CHECK_FAILED)


def _cases(given: list[str], quick: bool) -> list[str]:
    from skyjo_ref.checkbot import CASES, unknown_cases

    unknown = unknown_cases(given)
    if unknown:
        raise errors.UserError(f"--case {unknown[0]!r}: no such case (skyjo-ref check-bot --list names them)")
    if not given and not quick:
        return list(CASES)
    return [n for n in CASES if n in given or (quick and CASES[n].quick)]


def _expected_failures(path: Path | None) -> list[str]:
    if path is None:
        return []
    from skyjo_ref.checkbot import read_expected_failures

    try:
        return read_expected_failures(path)
    except OSError as exc:
        raise errors.UserError(f"--expect-fail {path}: cannot read: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.UserError(f"--expect-fail {exc}") from None


def bot_to_check(text: str | None, name: str | None) -> BotSpec:
    """The bot named on the command line; UserError for what check-bot cannot check (it speaks no protocol)."""
    from skyjo_ref.players import parse_bot_spec

    if text is None:
        raise errors.UserError("missing BOT: expected bot.py, module:Class, 'cmd:COMMAND' or CONFIG --bot NAME")
    if name is not None or text.endswith((".yaml", ".yml")):
        spec = _from_config(text, name)
    else:
        spec = parse_bot_spec(text)  # BotSpecError: a usage error, printed as it is
    if spec.kind == "builtin":
        raise errors.UserError(
            f"{spec.name!r} is a built-in bot: it plays inside the referee and speaks no protocol, so there is "
            "nothing to check; expected a bot that connects: bot.py, module:Class, 'cmd:COMMAND' or CONFIG --bot NAME"
        )
    if spec.kind == "remote":
        raise errors.UserError(
            f"{text!r}: check-bot starts the bot itself (and again for each signal); give its command as 'cmd:...'"
        )
    return dataclasses.replace(spec, in_process=False)  # a trusted in-process bot is checked as its own process


def _from_config(path: str, name: str | None) -> BotSpec:
    from skyjo_ref.tournament.config import load_config

    config = load_config(path)  # ConfigError: a usage error, printed as it is
    names = ", ".join(b.name for b in config.bots)
    if name is None:
        raise errors.UserError(f"{path} is a league config: name its bot with --bot NAME (one of {names})")
    for spec in config.bots:
        if spec.name == name:
            return spec
    raise errors.UserError(f"--bot {name!r}: no such bot in {path}: expected one of {names}")


def _progress(result: Result) -> None:
    """One line a case as it ends (stderr: the table and the reports are the output)."""
    typer.echo(f"  {result.case}: {result.verdict} ({result.seconds:.1f} s)", err=True)


def show(results: list[Result], spec: BotSpec, log_dir: Path) -> None:
    """The table: case, verdict, what was expected, what the bot did, its log (tab-separated off a terminal)."""
    console = table_console()
    rows = [[r.case, r.verdict, r.expected, r.did, ", ".join(Path(p).name for p in r.log.split(", ") if p)]
            for r in results]  # fmt: skip
    columns = ("case", "result", "expected", "what the bot did", "log")
    print_table(console, f"check-bot {spec.name} ({spec.describe()})", columns, rows, left=len(columns))
    bad = [r.case for r in results if not r.ok]
    passed = sum(r.status == "pass" for r in results)
    seconds = sum(r.seconds for r in results)
    summary = f"{passed} of {len(results)} cases passed in {seconds:.1f} s; logs in {log_dir}"
    console.print(escape(summary + (f"; not ok: {', '.join(bad)}" if bad else "")), highlight=False)
