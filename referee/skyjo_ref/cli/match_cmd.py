"""``skyjo-ref match BOT BOT...``: play games between bots and say who is better, and how sure.

Thin: parse, call :func:`skyjo_ref.server.lineup.play_lineup`, render.
"""

from __future__ import annotations

import asyncio
import signal
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from skyjo_bot.address import check_address
from skyjo_bot.types import Rules, TimeControl

from skyjo_ref.cli import errors
from skyjo_ref.cli.failures import show_failures
from skyjo_ref.cli.options import check_json_target, rules_from_cli, table_console, time_control_from_cli, write_json
from skyjo_ref.cli.plain import print_table
from skyjo_ref.match.stats import summarize
from skyjo_ref.players import BotSpec, BotSpecError, ManagedBot, parse_bot_spec
from skyjo_ref.records import save
from skyjo_ref.server.client import FinishedGame, MatchEnd, RefereeError
from skyjo_ref.server.lineup import (
    REMOTE_CONNECT_TIMEOUT_S,
    BotNeverConnected,
    Lineup,
    LineupError,
    LineupResult,
    play_lineup,
)

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
    logs: Annotated[
        Path | None,
        typer.Option(
            "--logs",
            metavar="DIR",
            help="Keep each bot process's output in DIR/SEAT.log (default: a new folder under the temp folder).",
            show_default=False,
        ),
    ] = None,
    connect_timeout: Annotated[
        float,
        typer.Option("--connect-timeout", metavar="SECONDS", min=1, help="How long a remote:NAME bot has to connect."),
    ] = REMOTE_CONNECT_TIMEOUT_S,
) -> None:
    """Play games between bots (seats rotate over duplicate deals) and summarise who is better."""
    stderr = Console(stderr=True, soft_wrap=True)  # lines for scripts (SKYJO_ADDR=...) are never wrapped
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

    log_dir = _log_folder(logs, specs)
    terminal = stderr.is_terminal
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=stderr,
        transient=False,
        disable=not terminal,  # a pipe or a CI log gets no progress bar
    )
    task = progress.add_task(" vs ".join(lineup.labels), total=games)
    played: list[FinishedGame] = []
    processes: dict[str, ManagedBot] = {}

    def on_game(item: FinishedGame) -> None:
        played.append(item)
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
            notice=lambda text: typer.echo(text, err=True),  # one line, never wrapped: scripts grep it
            log_dir=log_dir,
            remote_connect_timeout_s=connect_timeout,
            on_process=processes.__setitem__,
        )

    try:
        with progress:
            result = asyncio.run(run())
    except (asyncio.CancelledError, KeyboardInterrupt):
        stderr.print(f"interrupted after {len(played)} of {games} games; bots and referee stopped", highlight=False)
        _finish(_partial(lineup, seed, played, processes), specs, rule_set, json_file)
        raise typer.Exit(errors.EXIT_INTERRUPTED) from None
    except BotNeverConnected as exc:
        raise errors.Unfinished(str(exc)) from None
    except LineupError as exc:  # a bot that cannot be started or seated: bad input
        raise errors.UserError(str(exc)) from None
    except RefereeError as exc:
        raise errors.Unfinished(str(exc)) from None
    except OSError as exc:
        raise errors.Unfinished(f"cannot start the referee: {exc}") from None

    _finish(result, specs, rule_set, json_file)
    if result.end.error:
        raise errors.Unfinished(f"the match stopped after {len(result.records)} of {games} games: {result.end.error}")


def _log_folder(logs: Path | None, specs: list[BotSpec]) -> Path | None:
    """Where bot processes' output goes: ``--logs``, else a fresh temp folder (only when a bot has a process)."""
    if logs is None and not any(spec.managed for spec in specs):
        return None
    try:
        if logs is None:
            return Path(tempfile.mkdtemp(prefix="skyjo-match-"))
        logs.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise errors.UserError(f"--logs {logs}: cannot create the folder: {exc.strerror or exc}") from None
    return logs


def _partial(lineup: Lineup, seed: str, played: list[FinishedGame], processes: dict[str, ManagedBot]) -> LineupResult:
    """What an interrupted match played, as a result (games in order)."""
    records = sorted((item.record for item in played), key=lambda r: int(r.get("meta", {}).get("game", 0)))
    if not seed and records:  # a random seed was drawn by the referee: the records carry it
        seed = str(records[0].get("meta", {}).get("seed", ""))
    faults = {name: list(p.faults) for name, p in processes.items() if p.faults}
    return LineupResult(
        lineup,
        seed,
        records,
        MatchEnd(len(records), "interrupted"),
        {name: [f.describe() for f in found] for name, found in faults.items()},
        faults,
        {name: p.log_path for name, p in processes.items() if p.log_path is not None},
    )


def _finish(result: LineupResult, specs: list[BotSpec], rules: Rules, json_file: Path | None) -> None:
    """The summary table, each bot's first failure and where its output is, and the JSON."""
    summary = _summary(result, specs=[b.text for b in specs], rules=rules)
    to_stderr = json_file is not None and str(json_file) == "-"
    _render(summary, result, table_console(stderr=to_stderr))
    show_failures(result, Console(stderr=True, soft_wrap=True))
    if json_file is not None:
        write_json(json_file, summary)


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
    title = f"{summary['games']} games, {summary['players_per_game']} players, seed {summary['seed']}"
    rows = []
    for bot in summary["bots"]:
        lo, hi = bot["win_rate_ci"]
        rows.append(
            [
                bot["name"],
                str(bot["games"]),
                f"{bot['wins']:g}",
                f"{bot['win_rate']:.1%} ({lo:.1%}-{hi:.1%})",
                f"{bot['avg_total']:.1f}",
                f"{bot['avg_round_score']:.2f}",
                str(bot["strikes"]),
                str(bot["forfeits"]),
            ]
        )
    columns = ["bot", "games", "wins", "win rate (95% CI)", "avg total", "avg round", "strikes", "forfeits"]
    print_table(console, title, columns, rows)
    if summary["verdict"] is not None:
        console.print(summary["verdict"]["text"], highlight=False, markup=False)
