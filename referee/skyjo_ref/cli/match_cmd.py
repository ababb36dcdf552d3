"""``skyjo-ref match BOT BOT...``: play games between bots and say who is better, and how sure.

Thin: parse, call :func:`skyjo_ref.server.lineup.play_lineup`, render.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table
from skyjo_bot.address import check_address
from skyjo_bot.types import Rules, TimeControl

from skyjo_ref.cli import errors
from skyjo_ref.cli.options import check_json_target, rules_from_cli, table_console, time_control_from_cli, write_json
from skyjo_ref.match.stats import summarize
from skyjo_ref.players import BotSpecError, parse_bot_spec
from skyjo_ref.records import save
from skyjo_ref.server.client import FinishedGame, RefereeError
from skyjo_ref.server.lineup import Lineup, LineupError, LineupResult, play_lineup

_DEFAULT_TC = TimeControl()


def register(app: typer.Typer) -> None:
    app.command("match")(match)


def match(
    bots: Annotated[
        list[str],
        typer.Argument(
            metavar="BOT...",
            help="Bots: random, greedy, path/bot.py[:Class], module:Class, 'cmd:COMMAND', remote:NAME.",
            show_default=False,
        ),
    ],
    players_per_game: Annotated[
        int | None, typer.Option("--players-per-game", "-n", help="Seats per game (default: the number of bots, 2+).")
    ] = None,
    games: Annotated[int, typer.Option("--games", "-g", min=1, help="Games to play.")] = 100,
    seed: Annotated[str, typer.Option(help="Seed for deals and built-in bots (default: a random one, printed).")] = "",
    rules: Annotated[str, typer.Option("--rules", help="Rules preset.")] = "official",
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", metavar="KEY=VALUE", help="Rules option over the preset.")
    ] = None,
    records: Annotated[
        Path | None, typer.Option("--records", metavar="DIR", help="Write one skyjo-game/1 file per game here.")
    ] = None,
    json_file: Annotated[
        Path | None, typer.Option("--json", metavar="FILE", help="Write the summary as JSON ('-': stdout).")
    ] = None,
    referee: Annotated[
        str | None,
        typer.Option(
            metavar="ADDR", envvar="SKYJO_REFEREE", help="Play on this running referee instead of one of its own."
        ),
    ] = None,
    control_token: Annotated[
        str | None,
        typer.Option(envvar="SKYJO_CONTROL_TOKEN", help="The --referee's control token.", show_default=False),
    ] = None,
    decision_ms: Annotated[
        int, typer.Option(help="Time limit per decision, ms (0: no limit).")
    ] = _DEFAULT_TC.decision_ms,
    bank_ms: Annotated[int, typer.Option(help="Time bank per seat per game, ms (0: no bank).")] = _DEFAULT_TC.bank_ms,
    max_strikes: Annotated[
        int, typer.Option(help="Strikes before a seat forfeits (0: never).")
    ] = _DEFAULT_TC.max_strikes,
    grace_ms: Annotated[
        int, typer.Option(help="How long a disconnected bot may stay away, ms.")
    ] = _DEFAULT_TC.grace_ms,
) -> None:
    """Play games between bots (seats rotate over duplicate deals) and summarise who is better."""
    stderr = Console(stderr=True)
    try:
        specs = [parse_bot_spec(b) for b in bots]
    except BotSpecError as exc:
        raise errors.UserError(str(exc)) from None
    rule_set = rules_from_cli(rules, option or [])
    n = players_per_game if players_per_game is not None else max(2, len(specs))
    try:
        lineup = Lineup(specs, n)
    except LineupError as exc:
        raise errors.UserError(str(exc)) from None
    tc = time_control_from_cli(
        {"decision_ms": decision_ms, "bank_ms": bank_ms, "max_strikes": max_strikes, "grace_ms": grace_ms}
    )
    check_json_target(json_file)
    if referee is not None:
        try:
            referee = check_address(referee, "--referee")
        except ValueError as exc:
            raise errors.UserError(str(exc)) from None
    if records is not None:
        try:
            records.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise errors.UserError(f"--records {records}: cannot create the folder: {exc.strerror or exc}") from None

    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=stderr,
        transient=False,
    )
    task = progress.add_task(" vs ".join(lineup.labels), total=games)

    def on_game(item: FinishedGame) -> None:
        if records is not None:
            save(item.record, records / f"game-{item.index + 1:05d}.json")
        progress.advance(task)

    async def run() -> LineupResult:
        # SIGTERM stops like Ctrl-C: bot processes and the referee are stopped before exiting
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        return await play_lineup(
            lineup,
            games=games,
            seed=seed,
            rules=rule_set,
            time_control=tc,
            referee=referee,
            control_token=control_token,
            on_game=on_game,
            notice=lambda text: stderr.print(text, highlight=False, markup=False),
        )

    try:
        with progress:
            result = asyncio.run(run())
    except (asyncio.CancelledError, KeyboardInterrupt):
        done = int(progress.tasks[0].completed)
        stderr.print(f"interrupted after {done} of {games} games; bots and referee stopped", highlight=False)
        raise typer.Exit(errors.EXIT_INTERRUPTED) from None
    except LineupError as exc:  # a bot that cannot be started or seated: bad input
        raise errors.UserError(str(exc)) from None
    except RefereeError as exc:
        raise errors.Unfinished(str(exc)) from None
    except OSError as exc:
        raise errors.Unfinished(f"cannot start the referee: {exc}") from None

    summary = _summary(result, specs=[b.text for b in specs], rules=rule_set)
    _render(summary, result, table_console(stderr=json_file is not None and str(json_file) == "-"))
    if json_file is not None:
        write_json(json_file, summary)
    if result.end.error:
        raise errors.Unfinished(f"the match stopped after {len(result.records)} of {games} games: {result.end.error}")


def _summary(result: LineupResult, *, specs: list[str], rules: Rules) -> dict[str, Any]:
    lineup = result.lineup
    stats, verdict = summarize(result.records, lineup.labels, specs, lineup.slot_bot)
    return {
        "games": len(result.records),
        "players_per_game": lineup.players_per_game,
        "seed": result.seed,
        "rules": rules.to_dict(),
        "seats": lineup.seat_names,
        "bots": [s.public() for s in stats],
        "verdict": verdict.public() if verdict is not None else None,
        "process_faults": result.process_faults,
    }


def _render(summary: dict[str, Any], result: LineupResult, console: Console) -> None:
    table = Table(title=f"{summary['games']} games, {summary['players_per_game']} players, seed {summary['seed']}")
    for column in ("bot", "games", "wins", "win rate (95% CI)", "avg total", "avg round", "strikes", "forfeits"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for bot in summary["bots"]:
        lo, hi = bot["win_rate_ci"]
        table.add_row(
            bot["name"],
            str(bot["games"]),
            f"{bot['wins']:g}",
            f"{bot['win_rate']:.1%} ({lo:.1%}-{hi:.1%})",
            f"{bot['avg_total']:.1f}",
            f"{bot['avg_round_score']:.2f}",
            str(bot["strikes"]),
            str(bot["forfeits"]),
        )
    console.print(table)
    if summary["verdict"] is not None:
        console.print(summary["verdict"]["text"], highlight=False)
    for name, faults in result.process_faults.items():
        for fault in faults:
            console.print(f"[yellow]bot process {name} {fault}; it was restarted[/]", highlight=False)
