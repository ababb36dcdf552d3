"""``skyjo-ref serve``: run a referee until SIGTERM or Ctrl-C."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from skyjo_bot.address import check_address

from skyjo_ref.cli import errors
from skyjo_ref.cli.options import clock_from_cli
from skyjo_ref.server import ConfigError, RefereeServer, ServerConfig
from skyjo_ref.server.server import MIN_MESSAGE_BYTES, check_message_bytes


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def _tokens(pairs: list[str]) -> dict[str, str]:
    tokens: dict[str, str] = {}
    for pair in pairs:
        name, sep, token = pair.partition("=")
        if not sep or not name.strip() or not token.strip():
            raise errors.UserError(f"--token {pair!r}: expected NAME=TOKEN, e.g. --token tomas=s3cret")
        tokens[name.strip()] = token.strip()
    return tokens


def serve(
    address: Annotated[
        str | None, typer.Option(metavar="HOST:PORT", help="Where to listen (default 127.0.0.1:50051; port 0: any).")
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="YAML: address, control_token, tokens, time_control, ... (docs/referee.md).",
        ),
    ] = None,
    control_token: Annotated[
        str | None,
        typer.Option(envvar="SKYJO_CONTROL_TOKEN", help="Token for MatchService (default: a random one, printed)."),
    ] = None,
    token: Annotated[
        list[str] | None, typer.Option("--token", metavar="NAME=TOKEN", help="A bot token known from the start.")
    ] = None,
    decision_ms: Annotated[int | None, typer.Option(help="Default time limit per decision, ms (0: no limit).")] = None,
    bank_ms: Annotated[int | None, typer.Option(help="Default time bank per seat per game, ms (0: no bank).")] = None,
    max_strikes: Annotated[int | None, typer.Option(help="Default strikes before a seat forfeits (0: never).")] = None,
    grace_ms: Annotated[int | None, typer.Option(help="Default reconnection grace period, ms.")] = None,
    max_message_bytes: Annotated[
        int | None, typer.Option(help=f"Largest message a bot may send (at least {MIN_MESSAGE_BYTES}).")
    ] = None,
) -> None:
    """Run a referee: bots connect to it with tokens; `match --referee` and tournaments start games on it."""
    try:
        cfg = ServerConfig.from_file(config) if config is not None else ServerConfig()
    except ConfigError as exc:
        raise errors.UserError(str(exc)) from None
    if address is not None:
        cfg.address = address
    if control_token is not None:
        cfg.control_token = control_token
    cfg.tokens = {**cfg.tokens, **_tokens(token or [])}
    cfg.time_control = clock_from_cli(decision_ms, bank_ms, max_strikes, grace_ms, cfg.time_control)
    if max_message_bytes is not None:
        try:
            cfg.max_message_bytes = check_message_bytes(max_message_bytes)
        except ValueError as exc:
            raise errors.UserError(f"--max-message-bytes: {exc}") from None
    try:
        cfg.address = check_address(cfg.address, "--address")
    except ValueError as exc:
        raise errors.UserError(str(exc)) from None
    console = Console(stderr=True, soft_wrap=True)  # the SKYJO_ADDR=... line stays one line: scripts grep it
    try:
        asyncio.run(_serve(cfg, console, show_control_token=cfg.control_token is None))
    except OSError as exc:
        raise errors.UserError(f"cannot serve: {exc}") from None


async def _serve(cfg: ServerConfig, console: Console, *, show_control_token: bool) -> None:
    server = RefereeServer(cfg)
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    tc = cfg.time_control
    console.print(f"[bold]skyjo-ref referee[/] listening on [bold]{server.address}[/]", highlight=False)
    decision = f"{tc.decision_ms} ms a decision" if tc.decision_ms else "no limit a decision"  # 0: no limit
    bank = f"{tc.bank_ms} ms bank a game" if tc.bank_ms else "no bank"
    strikes = f"{tc.max_strikes} strikes" if tc.max_strikes else "no strike limit"
    console.print(f"time control: {decision}, {bank}, {strikes}, {tc.grace_ms} ms grace", highlight=False)
    if show_control_token:
        console.print(f"control token: {escape(server.control_token)}", highlight=False)
    for name, bot_token in cfg.tokens.items():
        console.print(
            f"bot {escape(name)}: SKYJO_ADDR={server.address} SKYJO_TOKEN={escape(bot_token)} "
            "python -m skyjo_bot run BOT.py",
            highlight=False,
        )
    console.print(
        f"start games with: skyjo-ref match remote:NAME greedy --referee {server.address} --control-token TOKEN",
        highlight=False,
    )
    console.print("stop with Ctrl-C or SIGTERM", highlight=False)
    # for scripts, on stdout: one line in the names match and gate read from the environment (the control token
    # only when it was made here: a given one is not echoed)
    token = f" SKYJO_CONTROL_TOKEN={server.control_token}" if show_control_token else ""
    print(f"SKYJO_REFEREE={server.address}{token}", flush=True)
    await stop.wait()
    console.print("stopping: running matches end, bots are told the session is over", highlight=False)
    await server.stop(grace=2.0)
