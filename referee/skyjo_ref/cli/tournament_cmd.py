"""``skyjo-ref tournament CONFIG`` and ``skyjo-ref ratings FOLDER``: thin commands over skyjo_ref.tournament.

Exit codes: 0 finished; 2 a config (or store) error, before any game; 3 the
tournament could not finish (finished games are kept); 130 interrupted.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from skyjo_ref.cli import errors
from skyjo_ref.cli.options import check_json_target, table_console, write_json
from skyjo_ref.cli.tournament_view import LineObserver, RichObserver, render_tables
from skyjo_ref.tournament import runner
from skyjo_ref.tournament.config import ConfigError, TournamentConfig, load_config
from skyjo_ref.tournament.store import Store, StoreError
from skyjo_ref.tournament.tables import Tables, compute


def register(app: typer.Typer) -> None:
    app.command("tournament")(tournament)
    app.command("ratings")(ratings)


def _set_aside(folder: Path) -> Path:
    """--new: move an old output folder out of the way (never delete results)."""
    target = folder.with_name(f"{folder.name}.old-{time.strftime('%Y%m%d-%H%M%S')}")
    folder.rename(target)
    return target


def _open_store(config: TournamentConfig, new: bool, stderr: Console) -> Store:
    if new and config.output.exists():
        moved = _set_aside(config.output)
        stderr.print(f"--new: the old results are kept in {moved}", highlight=False)
    try:
        store = Store(config.output)
        store.bind(runner.fingerprint(config), what=f"{config.path}")
    except StoreError as exc:
        raise errors.UserError(str(exc)) from None
    store.set_info("name", config.name)
    store.set_info(
        "rating",
        {
            "anchor": config.rating.anchor,
            "elo": config.rating.elo,
            "bootstrap": config.rating.bootstrap,
            "interval_seed": config.rating.interval_seed,
        },
    )
    store.set_info("bots", list(config.bot_names))
    return store


def tournament(
    config_file: Annotated[Path, typer.Argument(metavar="CONFIG", help="The tournament's YAML config.")],
    json_file: Annotated[
        Path | None, typer.Option("--json", metavar="FILE", help="Write every number of the final tables as JSON.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Output folder (overrides the config's output).")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", "-j", min=1, help="Games at once (overrides the config).")
    ] = None,
    new: Annotated[
        bool, typer.Option("--new", help="Set the output folder's old results aside and start afresh.")
    ] = False,
    plain: Annotated[bool, typer.Option("--plain", help="Line-based progress even on a terminal.")] = False,
) -> None:
    """Play a duplicate round-robin tournament and print its Elo table (resumes where it stopped)."""
    stderr = Console(stderr=True)
    stdout = table_console()
    try:
        config = load_config(config_file, output=output)
    except ConfigError as exc:
        raise errors.UserError(str(exc)) from None
    check_json_target(json_file)
    store = _open_store(config, new, stderr)
    _warn_tight_clock(config, concurrency, stderr)
    if not errors.DEBUG:  # the tournament reports bot process faults itself (notes, and the store)
        logging.getLogger("skyjo_ref.players").setLevel(logging.ERROR)
    try:

        def standings() -> Tables:
            return runner.compute_tables(config, store, bootstrap=0)

        observer: RichObserver | LineObserver
        if stderr.is_terminal and not plain:
            observer = RichObserver(stderr, standings)
        else:
            observer = LineObserver(stderr)
        try:
            summary = _run(runner.run(config, store, observer, concurrency=concurrency))
        except runner.TournamentBotError as exc:  # found only once it ran: the work stopped (exit 3), as documented
            observer.stop()
            raise errors.Unfinished(
                f"{exc}; {store.count()} finished games are kept in {config.output}: "
                "fix the bot and run the same command again"
            ) from None
        except runner.TournamentUnfinished as exc:
            observer.stop()
            raise errors.Unfinished(
                f"{exc}; {store.count()} finished games are kept in {config.output}: run the same command to go on"
            ) from None
        except StoreError as exc:
            observer.stop()
            raise errors.Unfinished(f"{exc}; finished games are kept in {config.output}") from None
        except KeyboardInterrupt:
            observer.stop()
            stderr.print(
                f"interrupted: {store.count()} finished games are kept in {config.output}; "
                "run the same command to go on",
                highlight=False,
            )
            raise typer.Exit(errors.EXIT_INTERRUPTED) from None
        finally:
            observer.stop()
        for note in summary.notes:
            stderr.print(f"note: {note}", highlight=False)
        stderr.print(
            f"{summary.played} games played in {summary.seconds:.1f} s, {summary.already} were already stored; "
            f"results in {config.output}",
            highlight=False,
        )
        for bot, kinds in _fault_counts(store).items():
            stderr.print(
                f"note: bot {bot}: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())), highlight=False
            )
        for line in first_failures(store, config.output / "logs"):
            stderr.print(line, highlight=False, markup=False, soft_wrap=True)
        tables = runner.compute_tables(config, store)
        json_alone = json_file is not None and str(json_file) == "-"  # stdout is the JSON alone: tables to stderr
        render_tables(table_console(stderr=True) if json_alone else stdout, tables, title=f"{config.name}: Elo")
        if json_file is not None:
            data = tables.to_json()
            data["tournament"] = {
                "name": config.name,
                "output": str(config.output),
                "scheduled": summary.total,
                "played_now": summary.played,
                "already_stored": summary.already,
                "seconds": round(summary.seconds, 3),
            }
            write_json(json_file, data)
    finally:
        store.close()


def _warn_tight_clock(config: TournamentConfig, concurrency: int | None, stderr: Console) -> None:
    """More games at once than cores under a tight clock: bots wait for the CPU and time out."""
    cores = os.cpu_count() or 1
    slots = concurrency or config.concurrency
    limit = config.time_control.decision_ms
    if 0 < limit < 250 and slots > cores:
        stderr.print(
            f"note: {slots} games at once on {cores} cores with decision_ms {limit}: bots will wait for the CPU "
            f"and some will time out (see docs/performance.md); --concurrency {cores} avoids it",
            highlight=False,
        )


def first_failures(store: Store, logs: Path) -> list[str]:
    """``note: bot X: first failure in game KEY, round R, ...: what it said; its output: logs/X-*.log`` for each
    bot with strikes (rounds counted from 1 here; the game key is the store's)."""
    lines: list[str] = []
    seen: set[str] = set()
    for game in store.games():
        for seat, result in enumerate(game.seats):
            if result.bot in seen or not result.strikes:
                continue
            record = store.record(game.id.key) or {}
            strikes = [s for s in (record.get("meta") or {}).get("strikes", []) if s.get("seat") == seat]
            if not strikes:
                continue
            seen.add(result.bot)
            first = strikes[0]
            where = f"game {game.id.key}, round {int(first.get('round', 0)) + 1}"
            if first.get("decision"):
                where += f", {first['decision']}"
            detail = first.get("detail") or first.get("answered") or ""
            output = sorted(logs.glob(f"{result.bot}-*.log"))
            kept = f"; its output: {logs}/{result.bot}-*.log" if output else ""
            lines.append(f"note: bot {result.bot}: first failure in {where}: {first.get('reason')}: {detail}{kept}")
    return lines


def _fault_counts(store: Store) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for fault in store.faults():
        kinds = out.setdefault(fault.bot, {})
        kinds[fault.kind] = kinds.get(fault.kind, 0) + 1
    return out


def _run(coro: Any) -> runner.RunSummary:
    """Run the tournament's event loop; SIGTERM stops it like Ctrl-C (finished games are kept)."""

    async def main() -> runner.RunSummary:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        if task is not None:
            try:
                loop.add_signal_handler(signal.SIGTERM, task.cancel)
            except (NotImplementedError, RuntimeError):
                pass
        try:
            result: runner.RunSummary = await coro
            return result
        except asyncio.CancelledError:
            raise KeyboardInterrupt from None

    return asyncio.run(main())


def ratings(
    folder: Annotated[Path, typer.Argument(help="A tournament's output folder (holding results.sqlite).")],
    json_file: Annotated[
        Path | None,
        typer.Option("--json", metavar="FILE", help="Write every number of the tables as JSON ('-': stdout)."),
    ] = None,
    anchor: Annotated[str | None, typer.Option(help="Anchor bot (default: as the tournament's config said).")] = None,
    elo: Annotated[float | None, typer.Option(help="The anchor's Elo, or the pool mean without an anchor.")] = None,
    pool_mean: Annotated[
        bool, typer.Option("--pool-mean", help="Anchor the pool mean (at 1500 unless --elo) instead of a bot.")
    ] = False,
    bootstrap: Annotated[
        int | None, typer.Option(min=0, help="Bootstrap resamples for the intervals (0: none).")
    ] = None,
) -> None:
    """Print a tournament's tables from its results store, without playing."""
    check_json_target(json_file)
    if not folder.is_dir():
        raise errors.UserError(f"{folder}: no such folder: expected a tournament output folder")
    try:
        store = Store(folder, create=False)
    except StoreError as exc:
        raise errors.UserError(str(exc)) from None
    try:
        saved = store.info("rating") or {}
        bots = store.info("bots") or []
        name = store.info("name") or folder.name
        games = store.games()
        use_anchor = None if pool_mean else (anchor if anchor is not None else saved.get("anchor"))
        present = {s.bot for g in games for s in g.seats} | set(bots)
        if use_anchor is not None and use_anchor not in present:
            raise errors.UserError(
                f"--anchor {use_anchor!r}: no such bot in {folder}: expected one of {', '.join(sorted(present))}"
            )
        tables = compute(
            games,
            bots=bots,
            anchor=use_anchor,
            anchor_elo=elo if elo is not None else 1500.0 if pool_mean else float(saved.get("elo", 1500.0)),
            bootstrap=bootstrap if bootstrap is not None else int(saved.get("bootstrap", 400)),
            interval_seed=saved.get("interval_seed", 0),
        )
        if json_file is not None and str(json_file) == "-":
            write_json(json_file, tables.to_json())
            return
        render_tables(table_console(), tables, title=f"{name}: Elo")
        if json_file is not None:
            write_json(json_file, tables.to_json())
    finally:
        store.close()
