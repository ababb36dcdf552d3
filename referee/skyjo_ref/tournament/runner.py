"""Runs a tournament: the games the store lacks, on a referee, ``concurrency`` at a time.

The tournament is a client of the referee: each game is one ``StartMatch``
(one game, seats already rotated, seed = the deal's seed) followed by
``WatchMatch`` for its record, which is committed to the store before anything
else happens. The referee is started in-process on a loopback port, or is a
running one named by address.

Managed bots (Python files, command lines) run as processes started once and
reused: one process plays one game at a time, and a bot gets more processes
when concurrent games need it. A process that dies is restarted and the fault
recorded; a bot that cannot be kept running stops the run (exit 3), keeping
every finished game.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from skyjo_ref.execution.play import BackendFactory, play_games
from skyjo_ref.execution.types import BotCannotRun, RunUnfinished
from skyjo_ref.tournament.config import TournamentConfig
from skyjo_ref.tournament.league import league_games
from skyjo_ref.tournament.schedule import deal_match_seed
from skyjo_ref.tournament.shard import Shard
from skyjo_ref.tournament.store import Store, StoredGame
from skyjo_ref.tournament.tables import Tables, compute

#: The run stopped before its end (a bot or the referee failed); finished games are kept.
TournamentUnfinished = RunUnfinished
#: A bot that cannot run at all as configured (it cannot be loaded): the user's input to fix.
TournamentBotError = BotCannotRun


def fingerprint(config: TournamentConfig) -> dict[str, Any]:
    """What the stored results mean: a store refuses a config that changes any of it."""
    return {
        "rules": config.rules.options(),
        "players_per_game": list(config.sizes) if config.sizes else config.players_per_game,
        "seed": config.seed,
    }


def compute_tables(config: TournamentConfig, store: Store, bootstrap: int | None = None) -> Tables:
    """The tables over every stored game, rated as the config says."""
    rating = config.rating
    return compute(
        store.games(),
        bots=config.bot_names,
        anchor=rating.anchor,
        anchor_elo=rating.elo,
        bootstrap=rating.bootstrap if bootstrap is None else bootstrap,
        interval_seed=rating.interval_seed,
        model=rating.model,
        interval=rating.interval,
    )


class Observer(Protocol):
    """What a display is told while a tournament runs (all calls on the event loop)."""

    def started(self, total: int, done: int, to_play: int) -> None: ...

    def game_finished(self, game: StoredGame, done: int, total: int) -> None: ...

    def note(self, message: str) -> None: ...


class QuietObserver:
    def started(self, total: int, done: int, to_play: int) -> None:
        pass

    def game_finished(self, game: StoredGame, done: int, total: int) -> None:
        pass

    def note(self, message: str) -> None:
        pass


@dataclass(slots=True)
class RunSummary:
    """What a run did."""

    total: int  # games in the schedule
    already: int  # stored before this run
    played: int  # finished in this run
    seconds: float
    extra_games: int = 0  # stored games outside the current schedule (older bots or deals)
    notes: list[str] = field(default_factory=list)


async def run(
    config: TournamentConfig,
    store: Store,
    observer: Observer | None = None,
    backend: BackendFactory | None = None,
    concurrency: int | None = None,
    shard: Shard | None = None,
) -> RunSummary:
    """Play every scheduled game (of ``shard``'s share) the store lacks; each is committed as it finishes."""
    observer = observer or QuietObserver()
    started = time.monotonic()
    games = league_games(config.tables(), config.players_per_game, config.deals, config.seating)
    # what a merge checks besides the fingerprint: the same schedule
    plan: dict[str, Any] = {"bots": sorted(config.bot_names), "deals": config.deals, "seating": config.seating}
    if config.schedule != "round_robin":
        plan.update(kind=config.schedule, challengers=sorted(config.challengers), meetings=config.meetings)
    store.set_info("schedule", plan)
    if shard is not None:
        games = shard.select(games)
        store.set_info("shard", {"index": shard.index, "count": shard.count})
    done = store.finished_keys()
    todo = [g for g in games if g.key not in done]
    scheduled = {g.key for g in games}
    extra = len(done - scheduled)
    summary = RunSummary(total=len(games), already=len(games) - len(todo), played=0, seconds=0.0, extra_games=extra)
    if extra:
        summary.notes.append(
            f"the store also holds {extra} games outside this config's schedule (bots or deals no longer "
            "listed); the tables include them"
        )
    observer.started(len(games), summary.already, len(todo))
    if not todo:
        summary.seconds = time.monotonic() - started
        return summary
    if backend is None:
        from skyjo_ref.execution.backend import referee_backend

        backend = referee_backend
    slots = concurrency or config.concurrency
    finished = summary.already

    def on_game(stored: StoredGame, record: dict[str, Any]) -> None:
        nonlocal finished
        finished += 1
        summary.played += 1
        observer.game_finished(stored, finished, len(games))

    async with backend(config.room(), store, observer) as referee:
        await referee.prepare(todo, slots)
        await play_games(
            todo,
            referee,
            store,
            seats_of=lambda game: [(name, config.bot(name)) for name in game.seats],
            seed_of=lambda game: deal_match_seed(config.seed, game.deal),
            concurrency=slots,
            on_game=on_game,
        )
    summary.seconds = time.monotonic() - started
    return summary
