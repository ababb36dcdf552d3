"""Seat a line-up of bot specs on a referee and play a match: what ``skyjo-ref match`` runs.

It starts a referee in-process (loopback, port 0) unless one is named, issues
one token per seat that is not built in, starts the processes of Python and
command bots through the run's :class:`~skyjo_ref.execution.pool.BotPool` (the
one way a bot process is started, here with one process per seat for the whole
match: the author's own bots, not isolated by default), waits for them to
connect, plays the match with rotating seats and stops everything it started.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from skyjo_bot.loader import BotSpecError as LoaderError
from skyjo_bot.loader import load_bot
from skyjo_bot.tls import ClientTls, client_tls
from skyjo_bot.types import MAX_PLAYERS, MIN_PLAYERS, Rules, TimeControl

from skyjo_ref.execution.pool import BotPool
from skyjo_ref.execution.types import FaultList, QuietNotes, RunUnfinished
from skyjo_ref.match import MatchSpec, SeatSpec
from skyjo_ref.match.runner import new_seed
from skyjo_ref.players import BotSpec, ManagedBot, ProcessFault
from skyjo_ref.server.client import FinishedGame, MatchClient, MatchEnd
from skyjo_ref.server.server import RefereeServer, ServerConfig

#: How long a bot process may take to start and connect.
CONNECT_TIMEOUT_S = 60.0
#: Restarts of a seat's process before it is given up (its seat then forfeits each game it cannot start).
MATCH_RESTARTS: Final = 5

#: How long ``match remote:NAME`` on its own referee waits for the bot to connect, by default.
REMOTE_CONNECT_TIMEOUT_S = 300.0


class BotNeverConnected(LookupError):
    """A bot whose seat was set but which never connected: the match cannot be played with it."""


class LineupError(ValueError):
    """A line-up that cannot be seated or started; the message says why and what is expected."""


@dataclass(slots=True)
class Lineup:
    """Bots (distinct entries, even when they name the same bot) filling ``players_per_game`` seats."""

    bots: Sequence[BotSpec]
    players_per_game: int
    labels: list[str] = field(init=False)  # a unique display name per bot
    slot_bot: list[int] = field(init=False)  # slot k is played by bots[slot_bot[k]]
    seat_names: list[str] = field(init=False)

    def __post_init__(self) -> None:
        k, n = len(self.bots), self.players_per_game
        if k == 0:
            raise LineupError("no bots given: name at least one bot (e.g. random greedy)")
        if not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise LineupError(f"--players-per-game must be {MIN_PLAYERS} to {MAX_PLAYERS}, got {n}")
        if k > n:
            raise LineupError(
                f"{k} bots cannot all sit at a {n}-player table: use --players-per-game {k} or more "
                "(or a tournament for more bots than seats)"
            )
        seen: dict[str, int] = {}
        self.labels = []
        for bot in self.bots:
            seen[bot.name] = seen.get(bot.name, 0) + 1
            self.labels.append(bot.name if seen[bot.name] == 1 else f"{bot.name}#{seen[bot.name]}")
        self.slot_bot = [i % k for i in range(n)]
        self.seat_names = [
            self.labels[b] if i < k else f"{self.labels[b]}#{i // k + 1}" for i, b in enumerate(self.slot_bot)
        ]


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
    referee: str | None = None,
    control_token: str | None = None,
    on_game: Callable[[FinishedGame], None] | None = None,
    notice: Callable[[str], None] | None = None,
    log_dir: Path | None = None,
    remote_connect_timeout_s: float = REMOTE_CONNECT_TIMEOUT_S,
    on_process: Callable[[str, ManagedBot], None] | None = None,
    in_process: bool = False,
    concurrency: int = 1,
) -> LineupResult:
    """Play ``games`` games of the line-up (seats rotate: every bot plays every seat on the same deals).

    Each bot process's output goes to ``log_dir/SEAT.log``; ``remote:`` bots have
    ``remote_connect_timeout_s`` to connect to a referee of our own (:class:`BotNeverConnected`
    when they do not; on a ``--referee``, when the first game finds one never connected).
    ``in_process``: Python bots are loaded and played inside this process, without gRPC (trusted
    bots only: they can read the referee's memory); the referee must be our own.
    ``concurrency``: games at once (a seat's bot plays one game at a time, as over gRPC)."""
    say = notice or (lambda text: None)
    if in_process and referee is not None:
        raise LineupError(
            "--in-process plays Python bots inside this process's own referee: it cannot be used with --referee"
        )
    all_local = all(b.kind in ("builtin", "python") for b in lineup.bots)
    tc = time_control or TimeControl()
    seed = seed or new_seed()
    server: RefereeServer | None = None
    tls: ClientTls | None = None
    if referee is None:
        server = RefereeServer(ServerConfig(address="127.0.0.1:0", time_control=tc))
        await server.start()
        address, token = server.address, server.control_token
    else:
        if not control_token:
            raise LineupError(
                "--referee needs the referee's control token: pass --control-token or set SKYJO_CONTROL_TOKEN"
            )
        address, token = referee, control_token
        try:
            tls = client_tls()  # SKYJO_CA_FILE: the running referee serves TLS
        except ValueError as exc:
            raise LineupError(str(exc)) from None
    managed: dict[str, ManagedBot] = {}
    remotes: dict[str, str] = {}  # seat name -> token of remote: bots
    records: list[dict[str, Any]] = []
    pool: BotPool | None = None
    try:
        async with MatchClient(address, token, tls=tls) as client:
            seat_specs = [
                dataclasses.replace(lineup.bots[lineup.slot_bot[slot]], name=name)
                for slot, name in enumerate(lineup.seat_names)
                if lineup.bots[lineup.slot_bot[slot]].managed and not in_process_seat(lineup, slot, in_process)
            ]
            pool = seat_pool(seat_specs, address, client.issue_token, log_dir)
            seats: list[SeatSpec] = []
            waits: list[tuple[str, str, ManagedBot | None]] = []
            for slot, name in enumerate(lineup.seat_names):
                bot = lineup.bots[lineup.slot_bot[slot]]
                if bot.kind == "builtin":
                    assert bot.builtin is not None
                    seats.append(SeatSpec.of_builtin(bot.builtin, name))
                    continue
                if in_process_seat(lineup, slot, in_process):
                    assert server is not None and bot.python is not None
                    try:
                        loaded = load_bot(bot.python)
                    except LoaderError as exc:
                        raise LineupError(f"bot {bot.text!r}: {exc}") from None
                    seats.append(SeatSpec.of_token(server.add_in_process_bot(name, loaded, block_loop=all_local), name))
                    continue
                if bot.managed:
                    if log_dir is not None:
                        (log_dir / f"{_file_name(name)}.log").write_text("", encoding="utf-8")  # this match's only
                    try:
                        process = (await pool.start(name)).process
                    except RunUnfinished as exc:
                        raise LineupError(f"cannot start bot {bot.text!r}: {exc}") from None
                    seat_token = process.token
                    seats.append(SeatSpec.of_token(seat_token, name))
                    managed[name] = process
                    if on_process is not None:
                        on_process(name, process)
                    waits.append((name, seat_token, process))
                else:
                    seat_token = await client.issue_token(name)
                    seats.append(SeatSpec.of_token(seat_token, name))
                    if server is not None:
                        say(
                            f"waiting {remote_connect_timeout_s:g} s for remote bot {name!r}: connect it with "
                            f"SKYJO_ADDR={address} SKYJO_TOKEN={seat_token}"
                        )
                    else:  # the referee's own token for a name it knows (serve --token NAME=...), else a fresh one
                        say(
                            f"remote bot {name!r} must be connected when the first game starts: "
                            f"SKYJO_ADDR={address} SKYJO_TOKEN={seat_token}"
                        )
                    remotes[name] = seat_token
                    waits.append((name, seat_token, None))
            if server is not None:
                for name, seat_token, waiting in waits:
                    await wait_bot_connected(server, name, seat_token, waiting, remote_connect_timeout_s)
            pool.connected_once.update(managed)  # from now on an exit is a crash to restart, not a bot that cannot run
            spec = MatchSpec(
                seats=tuple(seats),
                rules=rules or Rules(),
                time_control=tc,
                games=games,
                seed=seed,
                rotate_seats=True,
                concurrency=concurrency,
            )
            match_id = await client.start_match(spec)
            end = MatchEnd(0, "the referee did not report the end of the match")
            async for item in client.watch(match_id):
                if isinstance(item, FinishedGame):
                    if server is None and remotes and not records:
                        _check_remotes_connected(item.record, lineup.seat_names, remotes, address)
                    records.append(item.record)
                    if on_game is not None:
                        on_game(item)
                else:
                    end = item
    finally:
        if pool is not None:
            with contextlib.suppress(Exception):
                await pool.aclose()
        if server is not None:
            await server.stop(grace=0.5)
    records.sort(key=lambda r: int(r.get("meta", {}).get("game", 0)))
    faults = {name: [f.describe() for f in p.faults] for name, p in managed.items() if p.faults}
    crashes = {name: list(p.faults) for name, p in managed.items() if p.faults}
    logs = {name: p.log_path for name, p in managed.items() if p.log_path is not None}
    return LineupResult(lineup, seed, records, end, faults, crashes, logs)


def seat_pool(
    seats: Sequence[BotSpec], address: str, issue_token: Callable[[str], Awaitable[str]], log_dir: Path | None
) -> BotPool:
    """The bot pool of a match's (or a person's game's) seats, each ``BotSpec`` named after its seat: one process
    a seat for the whole match (it holds its token throughout, so a process that gives up is not replaced),
    its output in ``log_dir/SEAT.log``; crashes are told after the match, not as they come."""
    return BotPool(
        seats,
        address=address,
        issue_token=issue_token,
        wait_connected=None,  # the caller waits: a process that exits first is an error with its output
        store=FaultList(),
        observer=QuietNotes(),
        log_dir=log_dir,
        connect_timeout_s=CONNECT_TIMEOUT_S,
        max_restarts=MATCH_RESTARTS,
        log_name=lambda seat, number: f"{_file_name(seat)}.log",
        replace_given_up=False,
    )


def in_process_seat(lineup: Lineup, slot: int, in_process: bool) -> bool:
    """Whether slot ``slot``'s bot plays inside this process (``--in-process`` and a Python bot)."""
    return in_process and lineup.bots[lineup.slot_bot[slot]].kind == "python"


def _file_name(seat: str) -> str:
    """A seat name as a file name (``greedy#2`` -> ``greedy-2``)."""
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in seat) or "bot"


def _check_remotes_connected(record: dict[str, Any], seats: list[str], remotes: dict[str, str], address: str) -> None:
    """On a running referee, the first game tells whether each ``remote:`` bot ever connected."""
    meta = record.get("meta") or {}
    for entry in meta.get("forfeited", []):
        seat = int(entry.get("seat", -1))
        reason = str(entry.get("reason", ""))
        slot = (meta.get("slots") or list(range(len(seats))))[seat] if 0 <= seat < len(seats) else -1
        name = seats[slot] if 0 <= slot < len(seats) else ""
        if name in remotes and reason.startswith("not connected"):
            raise BotNeverConnected(
                f"remote bot {name!r} never connected to the referee at {address} ({reason}): start it with "
                f"SKYJO_ADDR={address} SKYJO_TOKEN=<its token> (serve --token {name}=TOKEN) before the match"
            )


async def wait_bot_connected(
    server: RefereeServer,
    name: str,
    token: str,
    process: ManagedBot | None,
    remote_timeout_s: float = REMOTE_CONNECT_TIMEOUT_S,
) -> None:
    """Until the seat's bot connects; a process that exits first is a :class:`LineupError` with its output;
    a remote bot that does not connect in ``remote_timeout_s`` is :class:`BotNeverConnected`."""
    connected = asyncio.ensure_future(server.wait_connected(token, CONNECT_TIMEOUT_S if process else remote_timeout_s))
    waits: set[asyncio.Future[Any]] = {connected}
    exited: asyncio.Future[Any] | None = None
    if process is not None:
        exited = asyncio.ensure_future(process.exited.wait())
        waits.add(exited)
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for fut in waits:
            fut.cancel()
    if connected.done() and not connected.cancelled() and connected.result():
        return
    if process is not None and exited is not None and exited.done() and not exited.cancelled():
        output = process.output(12).strip() or "(no output)"
        where = f"\n(all of its output: {process.log_path})" if process.log_path is not None else ""
        raise LineupError(f"bot {process.spec.text!r} exited before connecting to the referee:\n{output}{where}")
    if process is None:
        raise BotNeverConnected(
            f"remote bot {name!r} did not connect to the referee within {remote_timeout_s:g} s "
            "(--connect-timeout): start it with the SKYJO_ADDR and SKYJO_TOKEN printed above"
        )
    raise LineupError(f"bot {name!r} did not connect to the referee within {CONNECT_TIMEOUT_S:.0f} s")
