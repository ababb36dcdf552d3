"""``skyjo-ref serve``: run a referee until SIGTERM or Ctrl-C."""

from __future__ import annotations

import ipaddress
import logging
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from skyjo_ref.cli import errors
from skyjo_ref.cli.options import clock_from_cli
from skyjo_ref.server.config import MIN_MESSAGE_BYTES, CommandLine, ServerConfig
from skyjo_ref.server.guard import MIN_TOKEN_CHARS
from skyjo_ref.server.tls import TlsError


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def is_loopback(address: str) -> bool:
    """Whether ``address`` (HOST:PORT or unix:PATH) is reachable from this machine only."""
    if address.startswith("unix:"):
        return True
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


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
        list[str] | None,
        typer.Option(
            "--token",
            metavar="NAME=TOKEN",
            help=f"A bot token known from the start (at least {MIN_TOKEN_CHARS} characters).",
        ),
    ] = None,
    decision_ms: Annotated[int | None, typer.Option(help="Default time limit per decision, ms (0: no limit).")] = None,
    bank_ms: Annotated[int | None, typer.Option(help="Default time bank per seat per game, ms (0: no bank).")] = None,
    max_strikes: Annotated[int | None, typer.Option(help="Default strikes before a seat forfeits (0: never).")] = None,
    grace_ms: Annotated[int | None, typer.Option(help="Default reconnection grace period, ms.")] = None,
    max_message_bytes: Annotated[
        int | None, typer.Option(help=f"Largest message a bot may send (at least {MIN_MESSAGE_BYTES}).")
    ] = None,
    tls_cert: Annotated[
        Path | None, typer.Option(metavar="PEM", help="Serve TLS with this certificate (chain); needs --tls-key.")
    ] = None,
    tls_key: Annotated[Path | None, typer.Option(metavar="PEM", help="The private key of --tls-cert.")] = None,
    tls_client_ca: Annotated[
        Path | None,
        typer.Option(metavar="PEM", help="Require client certificates signed by this CA (mutual TLS)."),
    ] = None,
    handshake_timeout_ms: Annotated[
        int | None, typer.Option(help="Close a connection that has not started HTTP/2 within this (default 10000).")
    ] = None,
    max_connections: Annotated[
        int | None,
        typer.Option(
            help="Close new connections past this many (default: the descriptor limit less 1024, or half of it)."
        ),
    ] = None,
) -> None:
    """Run a referee: bots connect to it with tokens; `match --referee` and tournaments start games on it."""
    import asyncio

    cfg = ServerConfig.from_file(config) if config is not None else ServerConfig()
    cfg.override(
        CommandLine(
            address=address,
            control_token=control_token,
            tokens=tuple(token or ()),
            tls_cert=tls_cert,
            tls_key=tls_key,
            tls_client_ca=tls_client_ca,
            handshake_timeout_ms=handshake_timeout_ms,
            max_connections=max_connections,
            time_control=clock_from_cli(decision_ms, bank_ms, max_strikes, grace_ms, cfg.time_control),
            max_message_bytes=max_message_bytes,
        )
    )
    console = Console(stderr=True, soft_wrap=True)  # the SKYJO_ADDR=... line stays one line: scripts grep it
    try:
        asyncio.run(_serve(cfg, console, show_control_token=cfg.control_token is None))
    except TlsError as exc:
        raise errors.UserError(f"cannot serve TLS: {exc}") from None
    except OSError as exc:
        raise errors.UserError(f"cannot serve: {exc}") from None


def _log_refusals() -> None:
    """The referee's warnings (a peer throttled after failed tokens) on stderr, one timestamped line each."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s warning: %(message)s", "%Y-%m-%d %H:%M:%S"))
    guard = logging.getLogger("skyjo_ref.server.guard")
    guard.addHandler(handler)
    guard.setLevel(logging.WARNING)
    guard.propagate = False


async def _serve(cfg: ServerConfig, console: Console, *, show_control_token: bool) -> None:
    import asyncio

    from skyjo_ref.server.server import RefereeServer  # gRPC loads when the referee starts, not for --help

    _log_refusals()
    server = RefereeServer(cfg)
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    tc = cfg.time_control
    secure = " (TLS" + (", client certificates required)" if cfg.tls and cfg.tls.client_ca else ")")
    console.print(
        f"[bold]skyjo-ref referee[/] listening on [bold]{server.address}[/]{secure if cfg.tls else ''}",
        highlight=False,
    )
    if cfg.tls is None and not is_loopback(cfg.address):
        console.print(
            f"[bold yellow]warning:[/] no TLS on {cfg.address}: bot and control tokens cross the network in "
            "plaintext; serve with --tls-cert/--tls-key (docs/referee.md, TLS)",
            highlight=False,
        )
    decision = f"{tc.decision_ms} ms a decision" if tc.decision_ms else "no limit a decision"  # 0: no limit
    bank = f"{tc.bank_ms} ms bank a game" if tc.bank_ms else "no bank"
    strikes = f"{tc.max_strikes} strikes" if tc.max_strikes else "no strike limit"
    console.print(f"time control: {decision}, {bank}, {strikes}, {tc.grace_ms} ms grace", highlight=False)
    if show_control_token:
        console.print(f"control token: {escape(server.control_token)}", highlight=False)
    for name, bot_token in cfg.tokens.items():
        console.print(
            f"bot {escape(name)}: SKYJO_ADDR={server.address} SKYJO_TOKEN={escape(bot_token)} "
            f"{'SKYJO_CA_FILE=CA.pem ' if cfg.tls else ''}python -m skyjo_bot run BOT.py",
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
