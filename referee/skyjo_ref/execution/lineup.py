"""Seat a line-up of bot specs on a referee and play a match: what ``skyjo-ref match`` runs.

A :class:`Lineup` names the bots and fills the seats; :func:`play_lineup` seats
it in an execution room (:mod:`skyjo_ref.execution.room`: one referee, one
process per managed seat for the whole match, the author's own bots, not
isolated), plays the match with rotating seats and stops everything it started.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skyjo_bot.types import MAX_PLAYERS, MIN_PLAYERS, Rules, TimeControl

from skyjo_ref.errors import UsageError
from skyjo_ref.execution.room import CONNECT_TIMEOUT_S, REMOTE_CONNECT_TIMEOUT_S, open_room
from skyjo_ref.execution.types import BotCannotRun, RefereeConfig
from skyjo_ref.match import MatchSpec
from skyjo_ref.match.runner import new_seed
from skyjo_ref.players import BotSpec, ManagedBot, ProcessFault
from skyjo_ref.server.client import FinishedGame, MatchEnd


class LineupError(UsageError):
    """A line-up that cannot be seated; the message says why and what is expected."""


@dataclass(slots=True)
class Lineup:
    """Bots (distinct entries, even when they name the same bot) filling ``players_per_game`` seats."""

    bots: Sequence[BotSpec]
    players_per_game: int
    labels: list[str] = field(init=False)  # a unique display name per bot
    slot_bot: list[int] = field(init=False)  # slot i is played by bots[slot_bot[i]]
    seat_names: list[str] = field(init=False)

    def __post_init__(self) -> None:
        n_bots, seats = len(self.bots), self.players_per_game
        if n_bots == 0:
            raise LineupError("no bots given: name at least one bot (e.g. random greedy)")
        if not MIN_PLAYERS <= seats <= MAX_PLAYERS:
            raise LineupError(f"--players-per-game must be {MIN_PLAYERS} to {MAX_PLAYERS}, got {seats}")
        if n_bots > seats:
            raise LineupError(
                f"{n_bots} bots cannot all sit at a {seats}-player table: use --players-per-game {n_bots} or more "
                "(or a tournament for more bots than seats)"
            )
        seen: dict[str, int] = {}
        self.labels = []
        for bot in self.bots:
            seen[bot.name] = seen.get(bot.name, 0) + 1
            self.labels.append(bot.name if seen[bot.name] == 1 else f"{bot.name}#{seen[bot.name]}")
        self.slot_bot = [i % n_bots for i in range(seats)]
        self.seat_names = [
            self.labels[b] if i < n_bots else f"{self.labels[b]}#{i // n_bots + 1}" for i, b in enumerate(self.slot_bot)
        ]

    def bot_at(self, slot: int) -> BotSpec:
        """The bot playing slot ``slot``."""
        return self.bots[self.slot_bot[slot]]


@dataclass(slots=True)
class LineupResult:
    lineup: Lineup
    seed: str
    records: list[dict[str, Any]]
    end: MatchEnd
    process_faults: dict[str, list[str]]  # seat name -> what each crash of its process was
    crashes: dict[str, list[ProcessFault]] = field(default_factory=dict)  # seat name -> its process's faults
    log_paths: dict[str, Path] = field(default_factory=dict)  # seat name -> the file holding its output


async def play_lineup(
    lineup: Lineup,
    *,
    games: int,
    seed: str = "",
    rules: Rules | None = None,
    time_control: TimeControl | None = None,
    referee: RefereeConfig | None = None,
    on_game: Callable[[FinishedGame], None] | None = None,
    notice: Callable[[str], None] | None = None,
    log_dir: Path | None = None,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
    remote_connect_timeout_s: float = REMOTE_CONNECT_TIMEOUT_S,
    on_process: Callable[[str, ManagedBot], None] | None = None,
    in_process: bool = False,
    concurrency: int = 1,
) -> LineupResult:
    """Play ``games`` games of the line-up (seats rotate: every bot plays every seat on the same deals) in an
    execution room (:func:`room.open_room`: our own referee unless ``referee`` names a running one).

    Each bot process's output goes to ``log_dir/SEAT.log``; processes have ``connect_timeout_s`` to connect,
    ``remote:`` bots ``remote_connect_timeout_s`` on a referee of our own (on a running referee, the first game
    tells whether one never connected); a bot that cannot run is :class:`BotCannotRun`.
    ``in_process``: Python bots are loaded and played inside this process, without gRPC (trusted
    bots only: they can read the referee's memory); the referee must be our own.
    ``concurrency``: games at once (a seat's bot plays one game at a time, as over gRPC)."""
    tc = time_control or TimeControl()
    seed = seed or new_seed()
    where = referee or RefereeConfig()
    if in_process and where.address is not None:
        raise LineupError(
            "--in-process plays Python bots inside this process's own referee: it cannot be used with --referee"
        )
    all_local = all(b.kind in ("builtin", "python") for b in lineup.bots)
    room_of = open_room(
        where,
        tc,
        log_dir=log_dir,
        connect_timeout_s=connect_timeout_s,
        remote_connect_timeout_s=remote_connect_timeout_s,
        notice=notice or (lambda text: None),
    )
    async with room_of as room:
        seats = []
        for slot, name in enumerate(lineup.seat_names):
            seats.append(await room.seat(name, lineup.bot_at(slot), in_process=in_process, block_loop=all_local))
            if name in room.processes and on_process is not None:
                on_process(name, room.processes[name])
        await room.wait_connected()
        spec = MatchSpec(
            seats=tuple(seats),
            rules=rules or Rules(),
            time_control=tc,
            games=games,
            seed=seed,
            rotate_seats=True,
            concurrency=concurrency,
        )
        first = True

        def each_game(item: FinishedGame) -> None:
            nonlocal first
            if first and room.referee.server is None and room.remotes:
                _check_remotes_connected(item.record, lineup.seat_names, room.remotes, room.referee.address)
            first = False
            if on_game is not None:
                on_game(item)

        records, end = await room.play(spec, each_game)
        managed = room.processes
    faults = {name: [f.describe() for f in p.faults] for name, p in managed.items() if p.faults}
    crashes = {name: list(p.faults) for name, p in managed.items() if p.faults}
    logs = {name: p.log_path for name, p in managed.items() if p.log_path is not None}
    return LineupResult(lineup, seed, records, end, faults, crashes, logs)


def _check_remotes_connected(record: dict[str, Any], seats: list[str], remotes: dict[str, str], address: str) -> None:
    """On a running referee, the first game tells whether each ``remote:`` bot ever connected."""
    meta = record.get("meta") or {}
    for entry in meta.get("forfeited", []):
        seat = int(entry.get("seat", -1))
        reason = str(entry.get("reason", ""))
        slot = (meta.get("slots") or list(range(len(seats))))[seat] if 0 <= seat < len(seats) else -1
        name = seats[slot] if 0 <= slot < len(seats) else ""
        if name in remotes and reason.startswith("not connected"):
            raise BotCannotRun(
                f"remote bot {name!r} never connected to the referee at {address} ({reason}): start it with "
                f"SKYJO_ADDR={address} SKYJO_TOKEN=<its token> (serve --token {name}=TOKEN) before the match"
            )
