"""``skyjo-ref play [BOTS...]``: play Skyjo against bots in the terminal.

The person takes a seat on a referee like any bot (a token and a gRPC stream
through the Python SDK client), so a game played here is also a manual test
of the protocol. Thin: parse the options, build a :class:`HumanBot`, run the
session (``play_session``), report how it ended.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from skyjo_ref.cli import errors
from skyjo_ref.cli.failures import report_failures
from skyjo_ref.cli.options import (
    DEFAULT_RULES,
    RuleOptionsOption,
    RulesOption,
    bots_from_cli,
    folder_from_cli,
    in_process_notes,
    referee_from_cli,
    rules_from_cli,
)
from skyjo_ref.cli.plain import console as cli_console

if TYPE_CHECKING:  # the session's modules (gRPC, the referee, the room) load when a game starts, not for --help
    from skyjo_ref.server.client import FinishedGame


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
    rules: RulesOption = DEFAULT_RULES,
    option: RuleOptionsOption = None,
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
    records: Annotated[
        Path | None,
        typer.Option(
            "--records",
            metavar="DIR",
            help="Save each game's skyjo-game/1 record here (default: a new folder under the temp folder).",
            show_default=False,
        ),
    ] = None,
    logs: Annotated[
        Path | None,
        typer.Option(
            "--logs",
            metavar="DIR",
            help="Keep each bot process's output here (default: beside the records).",
            show_default=False,
        ),
    ] = None,
    in_process: Annotated[
        bool,
        typer.Option(
            "--in-process",
            help="Play Python bot files inside this process, without gRPC (trusted bots only: no isolation).",
        ),
    ] = False,
) -> None:
    """Play against bots in the terminal: you take a seat on the referee like any bot."""
    import asyncio

    from skyjo_ref.cli.play_session import play
    from skyjo_ref.cli.play_view import HumanBot
    from skyjo_ref.execution.types import RefereeConfig
    from skyjo_ref.records import save

    if not 1 <= len(bots) <= 7:
        raise errors.UserError(f"play needs 1 to 7 bots to play against, got {len(bots)}")
    specs = bots_from_cli(bots)
    for note in in_process_notes(specs, in_process):
        typer.echo(note, err=True)
    rules_in_force = rules_from_cli(rules, option or ())
    referee = referee_from_cli(referee)
    records_dir = folder_from_cli("--records", records, "skyjo-play-")
    log_dir = folder_from_cli("--logs", logs, "skyjo-play-") if logs is not None else records_dir
    saved: list[Path] = []

    def on_game(item: FinishedGame) -> None:
        path = records_dir / f"game-{item.index + 1:05d}.json"
        save(item.record, path)
        saved.append(path)

    logging.getLogger("skyjo_bot").setLevel(logging.DEBUG if errors.DEBUG else logging.CRITICAL)
    console = cli_console(highlight=False)
    if 0 <= seat <= len(specs):  # else play says what is wrong with --seat
        opponents = ", ".join(spec.name for spec in specs)
        console.print(f"A {len(specs) + 1}-player game: you (seat {seat}) against {opponents}", markup=False)
    human = HumanBot(console, name=name)
    outcome = asyncio.run(
        play(
            human,
            specs,
            seat=seat,
            rules=rules_in_force,
            games=games,
            seed=seed,
            referee=RefereeConfig(address=referee, control_token=control_token) if referee is not None else None,
            log_dir=log_dir,
            on_game=on_game,
            in_process=in_process,
        )
    )
    stderr = Console(stderr=True, soft_wrap=True)
    report_failures(stderr, outcome.records, outcome.seat_names, outcome.crashes, outcome.log_paths)
    if saved:
        console.print("Game record saved; replay it with:" if len(saved) == 1 else "Game records saved; replay with:")
    for path in saved:
        # the command alone on its line, never split even on a narrow terminal: it is there to be pasted
        console.print(f"skyjo-ref replay {_shown(path)}", highlight=False, markup=False, soft_wrap=True)
    if outcome.interrupted:
        stderr.print(f"interrupted after {outcome.games} finished game(s)", highlight=False)
        # The prompt's reader thread is still blocked on stdin, and Python's shutdown would wait on it
        # (and abort): everything is stopped and saved, so leave now.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(errors.EXIT_INTERRUPTED)
    if outcome.quit:
        console.print(f"You left after {outcome.games} finished game(s).")
        return
    if outcome.error:
        raise errors.Unfinished(f"the match stopped after {outcome.games} game(s): {outcome.error}")
    if len(human.results) > 1:
        wins = sum(1 for r in human.results if human.seat in r.winners)
        console.print(f"{len(human.results)} games played; you won {wins}.", style="bold")


def _shown(path: Path) -> str:
    """``path`` relative to the current folder when that is shorter (a record under it), else as it is."""
    try:
        relative = str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)
    return relative if len(relative) < len(str(path)) else str(path)


def register(app: typer.Typer) -> None:
    app.command(
        "play",
        no_args_is_help=True,
        epilog="Examples: skyjo-ref play greedy  ·  skyjo-ref play greedy random --seat 2  ·  "
        "skyjo-ref play examples/python/strong_bot.py -o end_score=50. At the prompt: d, t, s5, r3, help, quit.",
    )(play_command)
