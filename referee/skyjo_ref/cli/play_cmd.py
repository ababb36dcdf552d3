"""``skyjo-ref play [BOTS...]``: play Skyjo against bots in the terminal.

The person takes a seat on a referee like any bot (a token and a gRPC stream
through the Python SDK client), so a game played here is also a manual test
of the protocol. Thin: parse the options, build a :class:`HumanBot`, run the
session (``play_session``), report how it ended.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated

import typer
from rich.console import Console

from skyjo_ref.cli import errors
from skyjo_ref.cli.options import rules_from_cli
from skyjo_ref.cli.play_session import PlayError, play
from skyjo_ref.cli.play_view import HumanBot
from skyjo_ref.players import BotSpecError, parse_bot_spec


def play_command(
    bots: Annotated[
        list[str],
        typer.Argument(
            metavar="BOTS...",
            help="1 to 7 opponents: built-in names (greedy, random), Python bot files (bot.py) or cmd:COMMAND.",
            show_default=False,
        ),
    ],
    seat: Annotated[int, typer.Option("--seat", help="Your seat, 0-based (seat order is play order).")] = 0,
    rules: Annotated[str, typer.Option("--rules", help="Rules preset (official, french, ...).")] = "official",
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", metavar="KEY=VALUE", help="Rules option over the preset, e.g. end_score=50."),
    ] = None,
    seed: Annotated[str, typer.Option("--seed", help="Deals follow from this seed (default: a fresh one).")] = "",
    games: Annotated[int, typer.Option("--games", min=1, help="How many games to play.")] = 1,
    name: Annotated[str, typer.Option("--name", help="Your name at the table.")] = "you",
    referee: Annotated[
        str | None,
        typer.Option(
            "--referee", metavar="ADDR", help="Play on a running referee (HOST:PORT) instead of one started here."
        ),
    ] = None,
    control_token: Annotated[
        str | None,
        typer.Option(
            "--control-token", envvar="SKYJO_CONTROL_TOKEN", help="The referee's control token (with --referee)."
        ),
    ] = None,
) -> None:
    """Play against bots in the terminal: you take a seat on the referee like any bot."""
    if not 1 <= len(bots) <= 7:
        raise errors.UserError(f"play needs 1 to 7 bots to play against, got {len(bots)}")
    try:
        specs = [parse_bot_spec(text) for text in bots]
    except BotSpecError as exc:
        raise errors.UserError(str(exc)) from None
    rules_in_force = rules_from_cli(rules, option or ())
    logging.getLogger("skyjo_bot").setLevel(logging.DEBUG if errors.DEBUG else logging.CRITICAL)
    console = Console(highlight=False)
    human = HumanBot(console, name=name)
    try:
        outcome = asyncio.run(
            play(
                human,
                specs,
                seat=seat,
                rules=rules_in_force,
                games=games,
                seed=seed,
                referee=referee,
                control_token=control_token,
            )
        )
    except PlayError as exc:
        raise errors.UserError(str(exc)) from None
    if outcome.quit:
        console.print(f"You left after {outcome.games} finished game(s).")
        return
    if outcome.error:
        raise errors.Unfinished(f"the match stopped after {outcome.games} game(s): {outcome.error}")
    if len(human.results) > 1:
        wins = sum(1 for r in human.results if human.seat in r.winners)
        console.print(f"{len(human.results)} games played; you won {wins}.", style="bold")


def register(app: typer.Typer) -> None:
    app.command(
        "play",
        no_args_is_help=True,
        epilog="Examples: skyjo-ref play greedy  ·  skyjo-ref play greedy random --seat 2  ·  "
        "skyjo-ref play examples/python/strong_bot.py -o end_score=50. At the prompt: d, t, s5, r3, help, quit.",
    )(play_command)
