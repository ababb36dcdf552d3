"""``skyjo-ref tournament CONFIG`` and ``skyjo-ref ratings FOLDER``: thin commands over skyjo_ref.tournament.

Exit codes: 0 finished; 2 a config (or store) error, before any game; 3 the
tournament could not finish (finished games are kept); 5 ``--fail-on`` found a
bot that forfeited, was struck or crashed; 6 another run writes to the output
folder (the message names it); 130 interrupted. ``--json`` and
``--markdown`` are written on every exit once games are stored (with why it stopped).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from skyjo_ref.cli import errors, markdown
from skyjo_ref.cli.failon import FailOnOption, check_fail_on, fail_message, raise_if_failed
from skyjo_ref.cli.markdown import MarkdownOption, check_markdown_target
from skyjo_ref.cli.options import (
    ExecutorOption,
    ProgressEveryOption,
    ProgressSecondsOption,
    check_json_target,
    parse_executor,
    parse_shard,
    run_stoppable,
    stdout_taken,
    table_console,
    write_json,
)
from skyjo_ref.cli.plain import console as cli_console
from skyjo_ref.cli.tournament_view import (
    PROGRESS_EVERY_GAMES,
    PROGRESS_EVERY_S,
    LineObserver,
    RichObserver,
    render_tables,
)

if TYPE_CHECKING:  # the run's modules (gRPC, the referee, the bots' checks) and the store (SQLite, the ratings)
    # load when a tournament runs or a store is read, not for --help
    from skyjo_ref.execution.play import BackendFactory
    from skyjo_ref.tournament import runner
    from skyjo_ref.tournament.config import TournamentConfig
    from skyjo_ref.tournament.incidents import BotIncidents
    from skyjo_ref.tournament.shard import Shard
    from skyjo_ref.tournament.store import Store, StoredGame
    from skyjo_ref.tournament.tables import Tables


def register(app: typer.Typer) -> None:
    app.command("tournament")(tournament)
    app.command("ratings")(ratings)


def waiting_note(stderr: Console) -> Callable[[str], None]:
    """What a store says when another process holds its database's lock: one line on stderr, then it waits."""
    return lambda message: stderr.print(f"note: {message}", highlight=False)


def set_aside_note(stderr: Console) -> Callable[[Path], None]:
    """What ``--new`` says once the old results are set aside: where they went."""
    return lambda moved: stderr.print(f"--new: the old results are kept in {moved}", highlight=False)


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
    shard_text: Annotated[
        str | None,
        typer.Option(
            "--shard",
            metavar="I/N",
            help="Play shard I of N (whole duplicate blocks) into its own folder; 'merge' joins the shards.",
        ),
    ] = None,
    markdown_file: MarkdownOption = None,
    fail_on: FailOnOption = None,
    progress_every: ProgressEveryOption = PROGRESS_EVERY_GAMES,
    progress_seconds: ProgressSecondsOption = PROGRESS_EVERY_S,
    executor_text: ExecutorOption = None,
) -> None:
    """Play a duplicate round-robin tournament and print its Elo table (resumes where it stopped)."""
    from skyjo_ref.checkbot.before import BotFailedCheck
    from skyjo_ref.execution.types import BotCannotRun, RunUnfinished
    from skyjo_ref.tournament import runner
    from skyjo_ref.tournament.config import load_config
    from skyjo_ref.tournament.store import StoreError

    stderr = cli_console(stderr=True)
    shard = parse_shard(shard_text)
    fail_kinds = check_fail_on(fail_on)
    config = load_config(config_file, output=output)
    if shard is not None:
        config = runner.shard_config(config, shard, own_output=output is not None)
    executor = parse_executor(executor_text)
    if executor is not None:
        config = dataclasses.replace(config, executor=executor)
    backend, slots = _backend(config, concurrency)
    check_json_target(json_file)
    check_markdown_target(markdown_file, json_file)
    store = runner.open_store(config, new, on_wait=waiting_note(stderr), on_set_aside=set_aside_note(stderr))
    if config.isolation_note is not None:  # never silently weaker: say why the bots are not isolated
        stderr.print(f"note: {config.isolation_note}", highlight=False, markup=False, soft_wrap=True)
    _warn_tight_clock(config, concurrency, stderr)
    if not errors.DEBUG:  # the tournament reports bot process faults itself (notes, and the store)
        logging.getLogger("skyjo_ref.players").setLevel(logging.ERROR)
    outputs = _Outputs(config, store, json_file, markdown_file, shard)
    try:

        def standings() -> Tables:
            return runner.compute_tables(config, store, bootstrap=0)

        observer: RichObserver | LineObserver
        if stderr.is_terminal and not plain:
            observer = RichObserver(stderr, standings)
        else:
            observer = LineObserver(stderr, every_games=progress_every, every_s=progress_seconds)
        counter = _Counting(observer)
        try:
            summary = _run(runner.run(config, store, counter, backend=backend, concurrency=slots, shard=shard))
        except BotFailedCheck as exc:  # check: quick found a protocol fault before any game: no game was played
            observer.stop()
            outputs.stopped(counter, str(exc), errors.EXIT_CHECK_FAILED)
            raise errors.UserError(str(exc), errors.EXIT_CHECK_FAILED) from None
        except BotCannotRun as exc:  # found only once it ran: the work stopped (exit 3), as documented
            observer.stop()
            outputs.stopped(counter, str(exc), errors.EXIT_UNFINISHED)
            raise errors.Unfinished(
                f"{exc}; {store.count()} finished games are kept in {config.output}: "
                "fix the bot and run the same command again"
            ) from None
        except RunUnfinished as exc:
            observer.stop()
            outputs.stopped(counter, str(exc), errors.EXIT_UNFINISHED)
            raise errors.Unfinished(
                f"{exc}; {store.count()} finished games are kept in {config.output}: run the same command to go on"
            ) from None
        except StoreError as exc:
            observer.stop()
            outputs.stopped(counter, str(exc), errors.EXIT_UNFINISHED)
            raise errors.Unfinished(f"{exc}; finished games are kept in {config.output}") from None
        except KeyboardInterrupt:
            observer.stop()
            stderr.print(
                f"interrupted: {store.count()} finished games are kept in {config.output}; "
                "run the same command to go on",
                highlight=False,
            )
            outputs.stopped(counter, "interrupted", errors.EXIT_INTERRUPTED)
            raise typer.Exit(errors.EXIT_INTERRUPTED) from None
        finally:
            observer.stop()
        _finished(config, store, summary, outputs, fail_kinds, stderr, stdout_taken(json_file, markdown_file))
    finally:
        store.close()


def _finished(
    config: TournamentConfig,
    store: Store,
    summary: runner.RunSummary,
    outputs: _Outputs,
    fail_kinds: frozenset[str],
    stderr: Console,
    stdout_taken_by_data: bool,
) -> None:
    """A finished run: its notes, each bot's faults and first failure, the tables, ``--json``/``--markdown``,
    and ``--fail-on``'s verdict."""
    from skyjo_ref.tournament import runner
    from skyjo_ref.tournament.incidents import incidents

    for note in summary.notes:
        stderr.print(f"note: {note}", highlight=False)
    stderr.print(
        f"{summary.played} games played in {summary.seconds:.1f} s, {summary.already} were already stored; results in:",
        highlight=False,
    )
    # the folder on a line of its own: a long path never wraps mid-name in an 80-column terminal
    stderr.print(str(config.output), highlight=False, markup=False, soft_wrap=True)
    for bot, kinds in _fault_counts(store).items():
        stderr.print(f"note: bot {bot}: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())), highlight=False)
    for line in first_failures(store, config.output / "logs"):
        stderr.print(line, highlight=False, markup=False, soft_wrap=True)
    tables = runner.compute_tables(config, store)
    # stdout holds the JSON (or the Markdown) alone: the tables go to stderr
    render_tables(
        table_console(stderr=True) if stdout_taken_by_data else table_console(),
        tables,
        title=f"{config.name}: Elo",
    )
    found = incidents(store)
    failed = fail_message(found, fail_kinds)
    outputs.write(
        tables,
        found,
        {
            "scheduled": summary.total,
            "played_now": summary.played,
            "already_stored": summary.already,
            "seconds": round(summary.seconds, 3),
        },
        stopped=None,
        exit_code=errors.EXIT_FAIL_ON if failed else errors.EXIT_OK,
        failed=failed,
    )
    raise_if_failed(failed)


class _Counting:
    """Passes a run's events on to the display, and remembers how far the run got (for an early stop's JSON)."""

    def __init__(self, inner: runner.Observer) -> None:
        self.inner = inner
        self.total = 0
        self.already = 0
        self.played = 0
        self.started_at = time.monotonic()

    def started(self, total: int, done: int, to_play: int) -> None:
        self.total, self.already, self.started_at = total, done, time.monotonic()
        self.inner.started(total, done, to_play)

    def game_finished(self, game: StoredGame, done: int, total: int) -> None:
        self.played += 1
        self.inner.game_finished(game, done, total)

    def note(self, message: str) -> None:
        self.inner.note(message)


@dataclasses.dataclass(slots=True)
class _Outputs:
    """The ``--json`` and ``--markdown`` of a tournament, written on every exit that has games to show."""

    config: TournamentConfig
    store: Store
    json_file: Path | None
    markdown_file: Path | None
    shard: Shard | None

    def stopped(self, counter: _Counting, why: str, exit_code: int) -> None:
        """An early stop: the tables of what is stored, and why it stopped (nothing when nothing is stored)."""
        if (self.json_file is None and self.markdown_file is None) or self.store.count() == 0:
            return
        from skyjo_ref.tournament import runner
        from skyjo_ref.tournament.incidents import incidents

        try:
            tables = runner.compute_tables(self.config, self.store)
            found = incidents(self.store)
        except Exception:  # a broken store: the error message says it; the outputs cannot
            return
        run = {
            "scheduled": counter.total,
            "played_now": counter.played,
            "already_stored": counter.already,
            "seconds": round(time.monotonic() - counter.started_at, 3),
        }
        self.write(tables, found, run, stopped=why, exit_code=exit_code, failed=None)

    def write(
        self,
        tables: Tables,
        found: dict[str, BotIncidents],
        run: dict[str, Any],
        *,
        stopped: str | None,
        exit_code: int,
        failed: str | None,
    ) -> None:
        config = self.config
        if self.json_file is not None:
            data = tables.to_json()
            data["tournament"] = {
                "name": config.name,
                "output": str(config.output),
                **run,
                "shard": self.shard.label if self.shard is not None else None,
                "stopped": stopped,
                "exit_code": exit_code,
                "incidents": [entry.to_json() for entry in found.values()],
            }
            write_json(self.json_file, data)
        if self.markdown_file is not None:
            facts = {"games played now": run["played_now"], "already stored": run["already_stored"]}
            if run["scheduled"]:
                facts["scheduled"] = run["scheduled"]
            if self.shard is not None:
                facts["shard"] = self.shard.label
            facts["results"] = f"`{config.output}`"
            title = f"{config.name}: Elo" + (f" (shard {self.shard.label})" if self.shard is not None else "")
            text = markdown.summary(title, tables, found, facts=facts, stopped=stopped, failed=failed)
            markdown.write_markdown(self.markdown_file, text)


def _backend(config: TournamentConfig, concurrency: int | None) -> tuple[BackendFactory | None, int | None]:
    """The executor's backend (checked before the store is touched) and the games to keep submitted."""
    from skyjo_ref.execution.executor import backend_for

    if config.executor.is_local:
        return None, concurrency
    return backend_for(config.room(), config.executor, concurrency or config.concurrency)


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
            record = store.record(game.ref) or {}
            strikes = [s for s in (record.get("meta") or {}).get("strikes", []) if s.get("seat") == seat]
            if not strikes:
                continue
            seen.add(result.bot)
            first = strikes[0]
            where = f"game {game.ref}, round {int(first.get('round', 0)) + 1}"
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


def _run(coro: Coroutine[Any, Any, runner.RunSummary]) -> runner.RunSummary:
    """Run the tournament's event loop; SIGTERM stops it like Ctrl-C (finished games are kept)."""
    return run_stoppable(coro)


def not_an_output_folder(path: Path, command: str) -> str:
    """Why ``path`` is not a tournament's output folder; for a tournament config, which folder is (its output)."""
    if not path.exists():
        return f"{path}: no such folder: expected a tournament's output folder (the one holding results.sqlite)"
    from skyjo_ref.tournament.config import output_folder_of

    output = output_folder_of(path) if path.is_file() else None
    if output is None:
        return f"{path}: is a file: expected a tournament's output folder (the one holding results.sqlite)"
    try:
        shown = output.relative_to(Path.cwd())
    except ValueError:
        shown = output
    return f"{path} is a tournament config; {command} wants the tournament's output folder: skyjo-ref {command} {shown}"


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
    markdown_file: MarkdownOption = None,
    fail_on: FailOnOption = None,
) -> None:
    """Print a tournament's tables from its results store, without playing."""
    from skyjo_ref.tournament.incidents import incidents
    from skyjo_ref.tournament.store import Store

    check_json_target(json_file)
    check_markdown_target(markdown_file, json_file)
    fail_kinds = check_fail_on(fail_on)
    if not folder.is_dir():
        raise errors.UserError(not_an_output_folder(folder, "ratings"))
    store = Store(folder, create=False)
    try:
        tables = store_tables(store, folder, anchor=anchor, elo=elo, pool_mean=pool_mean, bootstrap=bootstrap)
        name = store.info("name") or folder.name
        found = incidents(store)
        failed = fail_message(found, fail_kinds)
        if markdown_file is not None:
            text = markdown.summary(
                f"{name}: Elo",
                tables,
                found,
                gate=markdown.gate_section(store.info("gate")),
                facts={"results": f"`{folder}`"},
                failed=failed,
            )
        if not stdout_taken(json_file, markdown_file):
            render_tables(table_console(), tables, title=f"{name}: Elo")
        if json_file is not None:
            write_json(json_file, tables.to_json())
        if markdown_file is not None:
            markdown.write_markdown(markdown_file, text)
        raise_if_failed(failed)
    finally:
        store.close()


def store_tables(
    store: Store,
    folder: Path,
    *,
    anchor: str | None = None,
    elo: float | None = None,
    pool_mean: bool = False,
    bootstrap: int | None = None,
) -> Tables:
    """A store's tables, rated as its tournament's config said unless the arguments say otherwise."""
    from skyjo_ref.tournament.tables import RatingConfig
    from skyjo_ref.tournament.versions import versioned_tables

    saved = RatingConfig.stored(store.info("rating"), bootstrap)
    bots = store.info("bots") or []
    games = store.games()
    use_anchor = None if pool_mean else (anchor if anchor is not None else saved.anchor)
    present = {s.bot for g in games for s in g.seats} | set(bots)
    if use_anchor is not None and use_anchor not in present and f"{use_anchor}.1" not in present:
        raise errors.UserError(
            f"--anchor {use_anchor!r}: no such bot in {folder}: expected one of {', '.join(sorted(present))}"
        )
    return versioned_tables(
        games,
        current=store.current_versions(),
        history=store.version_history(),
        bots=bots,
        rating=dataclasses.replace(
            saved, anchor=use_anchor, elo=elo if elo is not None else 1500.0 if pool_mean else saved.elo
        ),
    )
