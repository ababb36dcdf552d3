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

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from skyjo_ref.checkbot.before import check_before_play
from skyjo_ref.execution.play import BackendFactory, play_games
from skyjo_ref.seating import block_size
from skyjo_ref.tournament.adaptive import Plan, Status, first_round, next_round, status, stop_reason
from skyjo_ref.tournament.config import TournamentConfig
from skyjo_ref.tournament.league import league_games
from skyjo_ref.tournament.schedule import GameId, deal_match_seed
from skyjo_ref.tournament.secret import secret_deal_seed, secret_id
from skyjo_ref.tournament.shard import Shard
from skyjo_ref.tournament.store import Store, StoredGame, open_run_store, version_tag
from skyjo_ref.tournament.tables import Tables
from skyjo_ref.tournament.versions import bot_version, current_view, short, versioned_tables


def fingerprint(config: TournamentConfig) -> dict[str, Any]:
    """What the stored results mean: a store refuses a config that changes any of it."""
    return {
        "rules": config.rules.options(),
        "players_per_game": list(config.sizes) if config.sizes else config.players_per_game,
        "seed": config.seed,
    }


def open_store(
    config: TournamentConfig,
    new: bool = False,
    on_wait: Callable[[str], None] | None = None,
    on_set_aside: Callable[[Path], None] | None = None,
) -> Store:
    """The store ``config``'s run writes, bound to its fingerprint, with its name, rating settings and bots (its
    writer lock held; :func:`~skyjo_ref.tournament.store.open_run_store` says what ``new`` and the callbacks do)."""
    return open_run_store(
        config.output,
        fingerprint(config),
        what=f"{config.path}",
        info={"name": config.name, "rating": config.rating.to_info(), "bots": list(config.bot_names)},
        new=new,
        on_wait=on_wait,
        on_set_aside=on_set_aside,
    )


def shard_config(config: TournamentConfig, shard: Shard, own_output: bool) -> TournamentConfig:
    """``config`` as ``shard`` plays it: ShardError when the shard would play nothing; unless the caller gave the
    output folder (``own_output``), each shard in a folder of its own (``league.shard-2-of-4``)."""
    shard.check(league_games(config.tables(), config.deals, config.seating))
    if own_output:
        return config
    return dataclasses.replace(config, output=config.output.with_name(config.output.name + shard.suffix))


def compute_tables(config: TournamentConfig, store: Store, bootstrap: int | None = None) -> Tables:
    """The tables over every stored game, rated as the config says."""
    return versioned_tables(
        store.games(),
        current=store.current_versions(),
        history=store.version_history(),
        bots=config.bot_names,
        rating=config.rating if bootstrap is None else dataclasses.replace(config.rating, bootstrap=bootstrap),
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
    _store_schedule(config, store, shard)
    versions = {spec.name: bot_version(spec, config.output) for spec in config.bots}
    changed = store.use_versions(versions)  # games are stored (and looked up) under these versions from now on
    secret = config.seed_secret
    if secret is not None:  # records and the store say which secret dealt (never the secret itself)
        dealt = {"secret_id": secret_id(secret), "source": config.seed_secret_source}
        store.record_meta = {"deals": dealt}
        store.set_info("deals", dealt)
    rounds = Rounds(config, store, versions) if config.schedule == "adaptive" else None

    def scheduled_games() -> list[GameId]:
        every = rounds.games() if rounds is not None else league_games(config.tables(), config.deals, config.seating)
        return shard.select(every) if shard is not None else every

    def missing(games: list[GameId]) -> list[GameId]:
        done = store.finished_slots()
        return [g for g in games if (g.key, version_tag(g.table, versions)) not in done]

    if rounds is not None and not missing(rounds.games()):
        rounds.plan_next()  # nothing left of the stored rounds: plan (and store) the next one
    games = scheduled_games()
    todo = missing(games)
    scheduled = {(g.key, version_tag(g.table, versions)) for g in games}
    extra = len(store.finished_slots() - scheduled) if rounds is None else 0
    summary = RunSummary(total=len(games), already=len(games) - len(todo), played=0, seconds=0.0, extra_games=extra)
    summary.notes.extend(_history_notes(changed, extra))
    observer.started(len(games), summary.already, len(todo))
    if not todo:
        if rounds is not None:
            summary.notes.append(rounds.describe())
        summary.seconds = time.monotonic() - started
        return summary
    if config.check != "none":  # before any game: a bot that breaks the protocol stops the run in seconds
        await _check_bots(config, todo, observer)
    if backend is None:
        from skyjo_ref.execution.backend import referee_backend

        backend = referee_backend
    slots = concurrency or config.concurrency
    finished = summary.already

    def on_game(stored: StoredGame, record: dict[str, Any]) -> None:
        nonlocal finished
        finished += 1
        summary.played += 1
        observer.game_finished(stored, finished, max(summary.total, finished))

    async with backend(config.room(), store, observer) as referee:
        while todo:
            await referee.prepare(todo, slots)
            await play_games(
                todo,
                referee,
                store,
                seats_of=lambda game: [(name, config.bot(name)) for name in game.seats],
                seed_of=lambda game: _deal_seed(config, game, versions),
                concurrency=slots,
                on_game=on_game,
            )
            # an adaptive schedule plans its next round from what is stored (a shard never does: its store
            # holds only its share, and the round after is planned once the shards are merged)
            if rounds is None or shard is not None or rounds.plan_next() is None:
                break
            games = scheduled_games()
            todo = missing(games)
            summary.total = len(games)
            observer.note(rounds.latest_note())
    if rounds is not None:
        summary.notes.append(rounds.describe())
    summary.seconds = time.monotonic() - started
    return summary


def _store_schedule(config: TournamentConfig, store: Store, shard: Shard | None) -> None:
    """What a merge checks besides the fingerprint: the same schedule (and which shard this store is)."""
    plan: dict[str, Any] = {"bots": sorted(config.bot_names), "deals": config.deals, "seating": config.seating}
    if config.schedule == "adaptive":
        plan = {"bots": sorted(config.bot_names), "kind": "adaptive", **config.adaptive.to_json()}
    elif config.schedule != "round_robin":
        plan.update(kind=config.schedule, challengers=sorted(config.challengers), meetings=config.meetings)
    store.set_info("schedule", plan)
    if shard is not None:
        store.set_info("shard", {"index": shard.index, "count": shard.count})


def _history_notes(changed: Sequence[tuple[str, str, str]], extra: int) -> list[str]:
    """What a run says of the games it does not replay: a bot's older version's, and those off the schedule."""
    notes = [
        f"bot {bot} is a new version ({short(new)}, was {short(old)}): its games are played again; "
        "the old version's games stay in the store as its history"
        for bot, new, old in changed
    ]
    if extra:
        notes.append(
            f"the store also holds {extra} games outside this config's schedule (older versions, bots or deals "
            "no longer listed): they are rated as history, and only the current versions of the listed bots are "
            "in the table"
        )
    return notes


async def _check_bots(config: TournamentConfig, todo: Sequence[GameId], observer: Observer) -> None:
    """check-bot's quick checks of every bot that will play (raises when one breaks the protocol)."""
    playing = {name for game in todo for name in game.seats}
    bots = [config.bot(name) for name in sorted(playing)]
    rerun = lambda bot: f"skyjo-ref check-bot {config.path} --bot {bot.name}"  # noqa: E731
    for note in await check_before_play(bots, config.output / "check-bot", rerun):
        observer.note(note)


def _deal_seed(config: TournamentConfig, game: GameId, versions: Mapping[str, str]) -> str:
    """The match seed ``game`` is dealt from: its deal's, or the secret's for the table's versions."""
    secret = config.seed_secret
    if secret is None:
        return deal_match_seed(config.seed, game.deal)
    return secret_deal_seed(secret, config.seed, game.deal, version_tag(game.table, versions))


class Rounds:
    """An adaptive schedule's rounds (tournament.adaptive): the plans stored so far, and the next one."""

    def __init__(self, config: TournamentConfig, store: Store, versions: Mapping[str, str]) -> None:
        self.config = config
        self.store = store
        self.versions = versions
        self.plans = [Plan.from_json(p) for p in store.rounds()]
        self.stopped: str | None = None

    def games(self) -> list[GameId]:
        return [g for plan in self.plans for g in plan.games(self.config.seating)]

    def status(self) -> Status:
        games = current_view(self.store.games(), self.store.current_versions())
        return status(
            [(g.id.block, [(s.bot, s.rank) for s in g.seats]) for g in games],
            self.config.bot_names,
            self.config.adaptive,
        )

    def plan_next(self) -> Plan | None:
        """Plan the next round and store it before anything plays it; None when the schedule is over."""
        settings = self.config.adaptive
        k = self.config.players_per_game
        done = self.store.finished_slots()
        if any((g.key, version_tag(g.table, self.versions)) not in done for g in self.games()):
            return None  # a round is not complete here (a shard's store): plan after the merge
        per_block = block_size(k, self.config.seating)  # a block is k(k-1) games under the balanced design
        planned = sum(len(p.blocks) for p in self.plans) * per_block
        if not self.plans:
            plan: Plan | None = first_round(self.config.bot_names, k, settings, self.config.seed)
            if plan is not None and len(plan.blocks) * per_block > settings.max_games:
                plan.blocks = plan.blocks[: settings.max_games // per_block]
        else:
            deals: dict[tuple[str, ...], int] = {}
            for old in self.plans:
                for table, deal in old.blocks:
                    deals[table] = max(deals.get(table, 0), deal + 1)
            current = self.status()
            plan = next_round(len(self.plans) + 1, current, deals, k, settings, planned, per_block)
            if plan is None:
                self.stopped = stop_reason(current, settings)
                return None
        if plan is None or not plan.blocks:
            return None
        self.store.add_round(plan.number, plan.to_json())  # stored before it is played
        self.plans.append(plan)
        return plan

    def latest_note(self) -> str:
        plan = self.plans[-1]
        return (
            f"adaptive round {plan.number}: {len(plan.blocks)} duplicate blocks for "
            f"{max(1, len(plan.why))} undecided comparisons"
        )

    def describe(self) -> str:
        rounds = len(self.plans)
        if self.stopped is not None:
            return f"adaptive schedule: {rounds} rounds; stopped: {self.stopped}"
        return f"adaptive schedule: {rounds} rounds planned so far (run again, or merge the shards, to go on)"
