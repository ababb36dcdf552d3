"""Where games are played locally: a referee, reached through MatchService.

:func:`referee_backend` opens the execution room's referee
(:func:`~.room.open_referee`: an in-process one on loopback, or the running
one the config names), keeps one pool of bot processes per managed bot
and plays each game as a one-game match: seats already in the rotated order,
seed = the deal's seed, so every game is individually resumable.

Bot processes come from the run's :class:`~skyjo_ref.execution.pool.BotPool`:
a process serves one game at a time, never two games of one deal, and is
restarted when it dies (faults stored). A bot whose processes keep dying, or
that never connects, stops the run: the run exits 3 and keeps every finished
game. Isolated bots and bots without network reach the in-process referee by a
``unix:`` socket in a private temporary folder (docs/sandbox.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

from skyjo_ref.execution.pool import BotPool
from skyjo_ref.execution.room import Referee, load_in_process, open_referee, seat_spec
from skyjo_ref.execution.types import (
    FaultLog,
    GameId,
    GameSeed,
    MatchSlice,
    Notes,
    RoomConfig,
    RunUnfinished,
)
from skyjo_ref.match import MatchSpec
from skyjo_ref.players import BotSpec
from skyjo_ref.sandbox import SandboxUnavailable, check_sandbox
from skyjo_ref.server import FinishedGame, RefereeError

#: What a bot needs of the runner's environment to reach a running referee over TLS (skyjo_bot.tls).
TLS_VARIABLES: Final = ("SKYJO_CA_FILE", "SKYJO_CLIENT_CERT", "SKYJO_CLIENT_KEY")

#: At most this many processes a bot keeps for the seatings of a block (a balanced 6-player block has 30): past it,
#: a process that has seen a deal makes room for a fresh one.
MAX_SEATING_PROCESSES: Final = 8


class RefereeBackend:
    """Plays one game at a time per call to :meth:`play`; safe to call concurrently."""

    def __init__(self, config: RoomConfig, store: FaultLog, observer: Notes, referee: Referee) -> None:
        self.config = config
        self.client = referee.client
        self.address = referee.address
        self.server = server = referee.server
        self.remote_busy: set[str] = set()
        self.local_free: dict[str, list[str]] = {b.name: [] for b in config.bots if b.in_process}  # idle tokens
        self.pool = BotPool(
            config.bots,
            address=referee.address,
            unix_address=referee.unix_address,
            issue_token=self._token,
            wait_connected=referee.wait_connected if server is not None else None,
            store=store,
            observer=observer,
            log_dir=config.output / "logs",
            connect_timeout_s=config.connect_timeout_s,
            hidden=config.hidden,
            # a running referee that speaks TLS: its bots need the runner's CA file (and client certificate)
            referee_env={k: os.environ[k] for k in TLS_VARIABLES if k in os.environ} if server is None else None,
        )

    # ----------------------------------------------------------------- a game

    async def prepare(self, todo: Sequence[GameId], concurrency: int) -> None:
        """Start the bot processes the first games need, all at once, before any game starts: each managed
        bot gets as many as it is expected to need at once (its share of the seats in play, at most
        ``concurrency``); more start later only when no game in the schedule can start without one."""
        k = self.config.players_per_game
        games_of: dict[str, int] = {}
        for game in todo:
            for name in game.table:
                games_of[name] = games_of.get(name, 0) + 1
        playing = max(len(games_of), 1)
        share = -(-concurrency * k // playing)
        wanted = {name: min(games_of.get(name, 0), concurrency, share) for name in self.pool.bots}
        blocks: dict[tuple[tuple[str, ...], int], int] = {}
        for game in todo:  # the seatings of a block: games no process of a bot may play two of
            blocks[game.block] = blocks.get(game.block, 0) + 1
        await self.pool.prepare(wanted, seatings=min(max(blocks.values(), default=k), MAX_SEATING_PROCESSES))

    def ready(self, game: GameId) -> bool:
        for name in game.table:
            if name in self.pool.bots and not self.pool.idle(name, game.deal):
                return False
            if name in self.remote_busy:  # a remote bot (one token) plays one game at a time
                return False
        return True

    @property
    def failure(self) -> RunUnfinished | None:
        return self.pool.failure

    async def play(self, seats: Sequence[tuple[str, BotSpec]], seed: GameSeed, game: GameId) -> dict[str, Any]:
        """Play ``game`` (seats in order; a :class:`MatchSlice`: in the match's slot order) and return its record."""
        pool = self.pool
        held = []
        local: list[tuple[str, str]] = []  # in-process bots' (name, token) held for this game
        remotes = {name for name, entry in seats if entry.kind == "remote"}
        self.remote_busy |= remotes
        try:
            for name in sorted(name for name, entry in seats if entry.managed and name not in pool.disqualified):
                held.append(await pool.acquire(name, game.key, game.deal))
            tokens = {w.bot: w.process.token for w in held}
            for name, entry in seats:
                if entry.in_process:
                    tokens[name] = self._local_token(entry)
                    local.append((name, tokens[name]))
            for name in sorted(name for name, _ in seats if name in pool.disqualified):
                tokens[name] = await self._token(name)  # nobody connects: the referee forfeits the seat
            specs = tuple(seat_spec(name, entry, tokens.get(name, entry.token)) for name, entry in seats)
            spec = MatchSpec(
                seats=specs, rules=self.config.rules, time_control=self.config.time_control, games=1, seed=str(seed)
            )
            if isinstance(seed, MatchSlice):  # game ``seed.game`` of a match with rotating seats, as in the whole
                spec = dataclasses.replace(spec, seed=seed.seed, rotate_seats=True, first_game=seed.game)
            record = await self._play_match(spec, game)
            self._check_connected(record, game, seats)
            pool.connected_once.update(name for name, entry in seats if entry.kind != "builtin")
            return record
        finally:
            self.remote_busy -= remotes
            for name, token in local:
                self.local_free[name].append(token)
            for worker in held:
                pool.release(worker)

    async def _play_match(self, spec: MatchSpec, game: GameId) -> dict[str, Any]:
        try:
            match_id = await self.client.start_match(spec)
            record: dict[str, Any] | None = None
            async for item in self.client.watch(match_id):
                if isinstance(item, FinishedGame):
                    record = item.record
                elif record is None:
                    raise RunUnfinished(
                        f"game {game.key}: the referee stopped it: {item.error or 'no game was reported'}"
                    )
        except RefereeError as exc:
            raise RunUnfinished(f"game {game.key}: {exc}") from None
        if self.pool.failure is not None:
            raise self.pool.failure  # a bot gave up during the game: its result is not kept
        assert record is not None
        return record

    def _check_connected(self, record: dict[str, Any], game: GameId, seats: Sequence[tuple[str, BotSpec]]) -> None:
        """A bot that has never connected is not playing badly but not playing: stop, keep nothing of this game.

        (A bot that did connect before and misses a game's start, say while its
        crashed process restarts, forfeits that game like any fault.)
        """
        meta = record.get("meta") or {}
        pool = self.pool
        for entry in meta.get("forfeited", []) if isinstance(meta, dict) else []:
            reason = str(entry.get("reason", "")) if isinstance(entry, dict) else ""
            name, bot = seats[int(entry["seat"])] if isinstance(entry, dict) else ("", None)
            if (
                reason.startswith("not connected")
                and bot is not None
                and name not in pool.connected_once
                and name not in pool.disqualified
            ):
                where = f"its output is in {pool.log_dir}/{name}-*.log" if bot.managed else "it connects by itself"
                raise RunUnfinished(
                    f"game {game.key}: bot {name!r} ({bot.describe()}) never connected to the referee "
                    f"at {self.address} ({reason}); {where}"
                )

    def _local_token(self, entry: BotSpec) -> str:
        """A token of an idle instance of in-process bot ``entry`` (a new instance when all are playing)."""
        free = self.local_free[entry.name]
        if free:
            return free.pop()
        assert self.server is not None, "the config check requires our own referee"
        bot = load_in_process(entry)
        # waiting for the bot may hold the event loop only when no seat plays over a stream
        block_loop = all(b.kind == "builtin" or b.in_process for b in self.config.bots)
        return self.server.add_in_process_bot(entry.name, bot, block_loop=block_loop)

    async def _token(self, name: str) -> str:
        try:
            return await self.client.issue_token(name)
        except RefereeError as exc:
            raise RunUnfinished(f"bot {name!r}: {exc}") from None

    async def aclose(self) -> None:
        await self.pool.aclose()


@contextlib.asynccontextmanager
async def referee_backend(config: RoomConfig, store: FaultLog, observer: Notes) -> AsyncIterator[RefereeBackend]:
    """The execution room's referee (our own on ``referee.listen``, or the configured running one) and the pool."""
    for bot in config.bots:  # each machine checks for itself (a Dask worker too): never a bot run without its sandbox
        if bot.managed:
            try:
                check_sandbox(bot.sandbox)
            except SandboxUnavailable as exc:
                raise RunUnfinished(f"bot {bot.name!r} cannot be sandboxed on this machine: {exc}") from None
    tokens = {b.name: b.token for b in config.bots if b.kind == "remote" and b.token is not None}
    # isolated bots and bots without network reach our referee by a unix: socket
    unix_socket = any(b.managed and (not b.sandbox.has_network or b.sandbox.isolation == "strict") for b in config.bots)
    async with open_referee(config.referee, config.time_control, tokens=tokens, unix_socket=unix_socket) as referee:
        backend = RefereeBackend(config, store, observer, referee)
        try:
            yield backend
        finally:
            await backend.aclose()
