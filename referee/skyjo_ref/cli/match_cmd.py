"""``skyjo-ref match BOT BOT...``: play games between bots and say who is better, and how sure.

Thin: parse, call :func:`skyjo_ref.execution.match.play_match` (locally or, with ``--executor
processes|tcp://...``, on Dask workers), render.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from skyjo_bot.types import Rules

from skyjo_ref.cli import errors
from skyjo_ref.cli.failures import show_failures
from skyjo_ref.cli.options import (
    DEFAULT_RULES,
    DEFAULT_TIME_CONTROL,
    BankMsOption,
    DecisionMsOption,
    ExecutorOption,
    GraceMsOption,
    InProcessOption,
    MaxStrikesOption,
    RuleOptionsOption,
    RulesOption,
    bots_from_cli,
    check_json_target,
    clock_from_cli,
    folder_from_cli,
    in_process_notes,
    parse_executor,
    referee_from_cli,
    rules_from_cli,
    run_stoppable,
    stdout_taken,
    table_console,
    write_json,
)
from skyjo_ref.cli.plain import print_table
from skyjo_ref.errors import Unfinished
from skyjo_ref.execution.types import CONNECT_TIMEOUT_S, REMOTE_CONNECT_TIMEOUT_S, RefereeConfig

if TYPE_CHECKING:  # the match's modules (gRPC, the referee, the room) load when it plays, not for --help
    from rich.progress import Progress

    from skyjo_ref.execution.executor import Executor
    from skyjo_ref.execution.lineup import Lineup, LineupResult
    from skyjo_ref.players import BotSpec, ManagedBot
    from skyjo_ref.server.client import FinishedGame


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
    rules: RulesOption = DEFAULT_RULES,
    option: RuleOptionsOption = None,
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
    decision_ms: DecisionMsOption = DEFAULT_TIME_CONTROL.decision_ms,
    bank_ms: BankMsOption = DEFAULT_TIME_CONTROL.bank_ms,
    max_strikes: MaxStrikesOption = DEFAULT_TIME_CONTROL.max_strikes,
    grace_ms: GraceMsOption = DEFAULT_TIME_CONTROL.grace_ms,
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
        float | None,
        typer.Option(
            "--connect-timeout",
            metavar="SECONDS",
            min=1,
            help=f"How long each bot has to connect (default: bot processes {CONNECT_TIMEOUT_S:g}, remote:NAME "
            f"bots {REMOTE_CONNECT_TIMEOUT_S:g}; with --executor, the first worker too).",
            show_default=False,
        ),
    ] = None,
    in_process: InProcessOption = False,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency", "-j", min=1, help="Games at once (results equal those of 1 for deterministic bots)."
        ),
    ] = 1,
    executor_text: ExecutorOption = None,
) -> None:
    """Play games between bots (seats rotate over duplicate deals) and summarise who is better."""
    from skyjo_ref.execution.lineup import Lineup
    from skyjo_ref.execution.match import play_match
    from skyjo_ref.records import save

    stderr = Console(stderr=True, soft_wrap=True)  # lines for scripts (SKYJO_ADDR=...) are never wrapped
    specs = bots_from_cli(bots)
    if len(specs) == 1:  # a typo'd or forgotten second bot would otherwise quietly play a mirror match
        raise errors.UserError(
            f"match needs at least two bots, got one ({bots[0]}); to play a bot against itself, "
            f"name it twice: skyjo-ref match {bots[0]} {bots[0]}"
        )
    for note in in_process_notes(specs, in_process):
        typer.echo(note, err=True)  # one line, never wrapped
    rule_set = rules_from_cli(rules, option or [])
    n = players_per_game if players_per_game is not None else max(2, len(specs))
    lineup = Lineup(specs, n)  # LineupError: a usage error, shown as it is
    tc = clock_from_cli(decision_ms, bank_ms, max_strikes, grace_ms)
    check_json_target(json_file)
    referee = referee_from_cli(referee)
    if records is not None:
        folder_from_cli("--records", records, "skyjo-match-")

    executor = _executor(executor_text, referee, logs)
    log_dir = None
    if executor.is_local:
        log_dir = _log_folder(logs, [s for s in specs if not (in_process and s.kind == "python")])
    progress = _progress_bar(stderr)
    task = progress.add_task(" vs ".join(lineup.labels), total=games)
    played: list[FinishedGame] = []
    processes: dict[str, ManagedBot] = {}

    def on_game(item: FinishedGame) -> None:
        played.append(item)
        if records is not None:
            save(item.record, records / f"game-{item.index + 1:05d}.json")
        progress.advance(task)

    async def run() -> LineupResult:
        return await play_match(
            lineup,
            executor=executor,
            games=games,
            seed=seed,
            rules=rule_set,
            time_control=tc,
            referee=RefereeConfig(address=referee, control_token=control_token) if referee is not None else None,
            connect_timeout_s=connect_timeout,
            log_dir=log_dir,
            in_process=in_process,
            concurrency=concurrency,
            on_game=on_game,
            on_process=processes.__setitem__,
            notice=lambda text: typer.echo(text, err=True),  # one line, never wrapped: scripts grep it
        )

    # an in-process bot's print() must not land in the table or in `--json -`: bots' output goes to stderr
    bot_output = contextlib.redirect_stdout(sys.stderr) if in_process else contextlib.nullcontext()
    try:
        with progress, bot_output:
            result = run_stoppable(run())  # SIGTERM stops like Ctrl-C: bots and the referee are stopped first
    except KeyboardInterrupt:
        _finish(_partial(lineup, seed, played, processes), specs, rule_set, json_file, "interrupted", 130)
        # the last line says why it stopped and what was kept (after the table and the bots' log folders)
        stderr.print(f"interrupted after {len(played)} of {games} games; bots and referee stopped", highlight=False)
        raise typer.Exit(errors.EXIT_INTERRUPTED) from None
    except Unfinished as exc:  # a bot that cannot run, a referee that fails: exit 3
        if played:  # the games before the stop are shown and in the JSON, with why it stopped
            _finish(_partial(lineup, seed, played, processes), specs, rule_set, json_file, str(exc), exc.exit_code)
        raise

    stopped = None
    if result.end.error:
        stopped = f"the match stopped after {len(result.records)} of {games} games: {result.end.error}"
    _finish(result, specs, rule_set, json_file, stopped, errors.EXIT_UNFINISHED if stopped else errors.EXIT_OK)
    if stopped:
        raise errors.Unfinished(stopped)


def _progress_bar(stderr: Console) -> Progress:
    """The match's progress bar on a terminal (a pipe or a CI log gets none)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=stderr,
        transient=False,
        disable=not stderr.is_terminal,
    )


def _executor(text: str | None, referee: str | None, logs: Path | None) -> Executor:
    """``--executor``, checked: a Dask executor runs a referee and the bot processes per worker, so it cannot use
    ``--referee``, and the bots' output stays on the workers (no ``--logs``)."""
    from skyjo_ref.execution.executor import Executor

    executor = parse_executor(text)
    if executor is None:
        return Executor()
    if not executor.is_local and referee is not None:
        raise errors.UserError(
            f"--executor {text}: every Dask worker runs its own referee; --referee works only with --executor local"
        )
    if not executor.is_local and logs is not None:
        raise errors.UserError(
            f"--executor {text}: bot processes run on the Dask workers and keep their output there "
            "(skyjo-ref-worker-* folders); --logs works only with --executor local"
        )
    return executor


def _log_folder(logs: Path | None, specs: list[BotSpec]) -> Path | None:
    """Where bot processes' output goes: ``--logs``, else a fresh temp folder (only when a bot has a process)."""
    if logs is None and not any(spec.managed for spec in specs):
        return None
    return folder_from_cli("--logs", logs, "skyjo-match-")


def _partial(lineup: Lineup, seed: str, played: list[FinishedGame], processes: dict[str, ManagedBot]) -> LineupResult:
    """What an interrupted match played, as a result (games in order)."""
    from skyjo_ref.execution.lineup import LineupResult
    from skyjo_ref.server.client import MatchEnd

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


def _finish(
    result: LineupResult,
    specs: list[BotSpec],
    rules: Rules,
    json_file: Path | None,
    stopped: str | None = None,
    exit_code: int = errors.EXIT_OK,
) -> None:
    """The summary table, each bot's first failure and where its output is, and the JSON (with why it
    stopped early, if it did: ``stopped`` and ``exit_code``)."""
    summary = _summary(result, specs=[b.text for b in specs], rules=rules)
    summary["stopped"] = stopped
    summary["exit_code"] = exit_code
    _render(summary, result, table_console(stderr=stdout_taken(json_file)))
    show_failures(result, Console(stderr=True, soft_wrap=True))
    if json_file is not None:
        write_json(json_file, summary)


def _summary(result: LineupResult, *, specs: list[str], rules: Rules) -> dict[str, Any]:
    lineup = result.lineup
    from skyjo_ref.match.stats import summarize

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
