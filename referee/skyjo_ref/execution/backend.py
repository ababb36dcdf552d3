"""Where games are played locally: a referee, reached through MatchService.

:func:`referee_backend` starts an in-process referee on loopback (or uses the
running one the config names), keeps one pool of bot processes per managed bot
and plays each game as a one-game match: seats already in the rotated order,
seed = the deal's seed, so every game is individually resumable.

Bot processes: a process serves one game at a time and is reused for the next;
a bot gets a new process (with its own token) when concurrent games need one.
A process that exits is restarted with the same token (the referee treats it
as a reconnect, so a game in progress goes on) and the fault is stored. A bot
whose processes keep dying, or that never connects, stops the run: the
run exits 3 and keeps every finished game.

Sandboxed bots (``limits``, ``network: false``; see docs/sandbox.md): a
process killed for a limit is a fault of kind ``limit`` naming it, restarted
like a crash. A bot whose processes are all killed by its sandbox before it
ever connects is out (a ``disqualified`` fault): it forfeits its games, and
the run goes on. Bots without network reach the in-process referee by a
``unix:`` socket in a private temporary folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shutil
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from skyjo_bot.loader import BotSpecError as LoaderError
from skyjo_bot.loader import load_bot

from skyjo_ref.execution.types import (
    BotCannotRun,
    FaultLog,
    GameId,
    GameSeed,
    MatchSlice,
    Notes,
    RoomConfig,
    RunUnfinished,
)
from skyjo_ref.match import MatchSpec, SeatSpec
from skyjo_ref.players import BotSpec, ManagedBot, ProcessFault
from skyjo_ref.server import FinishedGame, MatchClient, RefereeError, RefereeServer, ServerConfig

#: ``python -m skyjo_bot run`` exits 2 when the bot cannot be loaded (no Bot in the file, import error)
SDK_USAGE_ERROR = 2

#: Restarts of one bot process before the bot stops the run (exit 3; a rerun starts afresh).
MAX_RESTARTS: Final = 3
#: How long a stopped process may take to exit after SIGTERM before SIGKILL.
STOP_TIMEOUT_S: Final = 3.0


@dataclass(slots=True)
class _Worker:
    """One bot process (a :class:`ManagedBot`) and its token."""

    bot: str
    number: int
    process: ManagedBot
    busy: bool = False
    game_key: str | None = None
    recorded: int = 0  # process faults already stored
    watcher: asyncio.Task[None] | None = None

    @property
    def gave_up(self) -> bool:
        """The process died and will not be restarted again."""
        p = self.process
        return not p.running and p.exited.is_set() and p.restarts >= p.max_restarts and bool(p.faults)


class RefereeBackend:
    """Plays one game at a time per call to :meth:`play`; safe to call concurrently."""

    def __init__(
        self,
        config: RoomConfig,
        store: FaultLog,
        observer: Notes,
        client: MatchClient,
        address: str,
        server: RefereeServer | None,
    ) -> None:
        self.config = config
        self.store = store
        self.observer = observer
        self.client = client
        self.address = address
        self.server = server
        self.pools: dict[str, list[_Worker]] = {b.name: [] for b in config.bots if b.managed}
        self.remote_busy: set[str] = set()
        self.local_free: dict[str, list[str]] = {b.name: [] for b in config.bots if b.in_process}  # idle tokens
        self.connected_once: set[str] = set()  # bots that have held a stream at least once in this run
        self.disqualified: dict[str, str] = {}  # bots killed by their sandbox before ever connecting: why
        self.log_dir = config.output / "logs"
        self.closing = False
        self.failure: RunUnfinished | None = None
        self.connect_timeout_s = config.connect_timeout_s
        # bots without network connect here (a unix: socket); the others at ``address``
        self.isolated_address = server.unix_address if server is not None else None
        if self.isolated_address is None and address.startswith("unix:"):
            self.isolated_address = address

    def _address_for(self, entry: BotSpec) -> str:
        if entry.sandbox.network:
            return self.address
        assert self.isolated_address is not None, "the config check requires a unix: socket for this bot"
        return self.isolated_address

    # ----------------------------------------------------------------- a game

    async def prepare(self, todo: Sequence[GameId], concurrency: int) -> None:
        """Start the bot processes the first games need, all at once, before any game starts.

        Starting a Python process costs about a second of CPU: done during
        play, it would steal time from bots that are thinking under a clock.
        Each managed bot gets as many processes as it is expected to need at
        once (its share of the seats in play, at most ``concurrency``); more
        start later only when no game in the schedule can start without one.
        """
        k = self.config.players_per_game
        games_of: dict[str, int] = {}
        for game in todo:
            for name in game.table:
                games_of[name] = games_of.get(name, 0) + 1
        playing = max(len(games_of), 1)
        share = -(-concurrency * k // playing)
        starts = []
        for name in self.pools:
            wanted = min(games_of.get(name, 0), concurrency, share)
            starts += [self._start_worker(name) for _ in range(wanted - len(self.pools[name]))]
        workers = await asyncio.gather(*starts)
        await asyncio.gather(*(self._wait_connected(w) for w in workers))

    def ready(self, game: GameId) -> bool:
        for name in game.table:
            if name in self.disqualified:
                continue  # it needs no process: its seat forfeits
            if name in self.pools and all(w.busy for w in self.pools[name]):
                return False
            if name in self.remote_busy:  # a remote bot (one token) plays one game at a time
                return False
        return True

    async def play(self, seats: Sequence[tuple[str, BotSpec]], seed: GameSeed, game: GameId) -> dict[str, Any]:
        """Play ``game`` (seats in order; a :class:`MatchSlice`: in the match's slot order) and return its record."""
        held: list[_Worker] = []
        local: list[tuple[str, str]] = []  # in-process bots' (name, token) held for this game
        remotes = {name for name, entry in seats if entry.kind == "remote"}
        self.remote_busy |= remotes
        try:
            for name in sorted(name for name, entry in seats if entry.managed and name not in self.disqualified):
                held.append(await self._acquire(name, game.key))
            tokens = {w.bot: w.process.token for w in held}
            for name, entry in seats:
                if entry.in_process:
                    tokens[name] = self._local_token(entry)
                    local.append((name, tokens[name]))
            for name in sorted(name for name, _ in seats if name in self.disqualified):
                tokens[name] = await self._unused_token(name)  # nobody connects: the referee forfeits the seat
            specs = tuple(
                SeatSpec(name, builtin=entry.builtin)
                if entry.kind == "builtin"
                else SeatSpec(name, token=tokens.get(name, entry.token))
                for name, entry in seats
            )
            spec = MatchSpec(
                seats=specs, rules=self.config.rules, time_control=self.config.time_control, games=1, seed=str(seed)
            )
            if isinstance(seed, MatchSlice):  # game ``seed.game`` of a match with rotating seats, as in the whole
                spec = dataclasses.replace(spec, seed=seed.seed, rotate_seats=True, first_game=seed.game)
            record = await self._play_match(spec, game)
            self._check_connected(record, game, seats)
            self.connected_once.update(name for name, entry in seats if entry.kind != "builtin")
            return record
        finally:
            self.remote_busy -= remotes
            for name, token in local:
                self.local_free[name].append(token)
            for worker in held:
                worker.busy, worker.game_key = False, None

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
        if self.failure is not None:
            raise self.failure  # a bot gave up during the game: its result is not kept
        assert record is not None
        return record

    def _check_connected(self, record: dict[str, Any], game: GameId, seats: Sequence[tuple[str, BotSpec]]) -> None:
        """A bot that has never connected is not playing badly but not playing: stop, keep nothing of this game.

        (A bot that did connect before and misses a game's start, say while its
        crashed process restarts, forfeits that game like any fault.)
        """
        meta = record.get("meta") or {}
        for entry in meta.get("forfeited", []) if isinstance(meta, dict) else []:
            reason = str(entry.get("reason", "")) if isinstance(entry, dict) else ""
            name, bot = seats[int(entry["seat"])] if isinstance(entry, dict) else ("", None)
            if (
                reason.startswith("not connected")
                and bot is not None
                and name not in self.connected_once
                and name not in self.disqualified
            ):
                where = f"its output is in {self.log_dir}/{name}-*.log" if bot.managed else "it connects by itself"
                raise RunUnfinished(
                    f"game {game.key}: bot {name!r} ({bot.describe()}) never connected to the referee "
                    f"at {self.address} ({reason}); {where}"
                )

    def _local_token(self, entry: BotSpec) -> str:
        """A token of an idle instance of in-process bot ``entry`` (a new instance when all are playing)."""
        free = self.local_free[entry.name]
        if free:
            return free.pop()
        assert self.server is not None and entry.python is not None, "the config check requires our own referee"
        try:
            bot = load_bot(entry.python)
        except LoaderError as exc:
            raise RunUnfinished(f"bot {entry.name!r} (in_process): {exc}") from None
        # waiting for the bot may hold the event loop only when no seat plays over a stream
        block_loop = all(b.kind == "builtin" or b.in_process for b in self.config.bots)
        return self.server.add_in_process_bot(entry.name, bot, block_loop=block_loop)

    # ---------------------------------------------------------------- processes

    async def _unused_token(self, name: str) -> str:
        try:
            return await self.client.issue_token(name)
        except RefereeError as exc:
            raise RunUnfinished(f"bot {name!r}: {exc}") from None

    async def _acquire(self, name: str, game_key: str) -> _Worker:
        for worker in self.pools[name]:
            if not worker.busy:
                worker.busy, worker.game_key = True, game_key
                return worker
        worker = await self._start_worker(name)
        worker.busy, worker.game_key = True, game_key
        await self._wait_connected(worker)
        return worker

    async def _start_worker(self, name: str) -> _Worker:
        """A new process for bot ``name``, with its own token (not yet connected, not busy)."""
        pool = self.pools[name]
        try:
            token = await self.client.issue_token(name)
        except RefereeError as exc:
            raise RunUnfinished(f"bot {name!r}: {exc}") from None
        entry = self.config.bot(name)
        number = len(pool) + 1
        self.log_dir.mkdir(parents=True, exist_ok=True)
        process = ManagedBot(
            entry,
            self._address_for(entry),
            token,
            max_restarts=MAX_RESTARTS,
            log_path=self.log_dir / f"{name}-{number}.log",
        )
        worker = _Worker(name, number, process)
        pool.append(worker)
        try:
            await process.start()
        except OSError as exc:
            raise RunUnfinished(f"bot {name!r}: cannot start {entry.describe()}: {exc.strerror or exc}") from None
        worker.watcher = asyncio.create_task(self._watch(worker))
        return worker

    async def _wait_connected(self, worker: _Worker) -> None:
        """In-process referee: wait until the new process holds its stream (restarts included)."""
        if self.server is None:
            return
        deadline = asyncio.get_running_loop().time() + self.connect_timeout_s
        while not await self.server.wait_connected(worker.process.token, 0.25):
            if self.failure is not None:
                raise self.failure
            if worker.bot in self.disqualified:
                return
            if asyncio.get_running_loop().time() > deadline:
                raise RunUnfinished(
                    f"bot {worker.bot!r} did not connect to the referee within {self.connect_timeout_s:g} s "
                    f"(connect_timeout_s{_sandbox_hint(worker)}); its output is in {worker.process.log_path}"
                )
        self.connected_once.add(worker.bot)

    async def _watch(self, worker: _Worker) -> None:
        """Store every fault of the worker's processes; replace a process that will not restart again.

        A bot that has never connected and keeps exiting cannot play at all:
        that stops the run (exit 3). A bot that played and then crashes too
        often gets a fresh process with a fresh token; the game it was in goes
        on without it (the referee forfeits the seat after the grace period).
        """
        while not self.closing:
            process = worker.process
            await process.wait_fault(worker.recorded)  # the fault is in the list, and gave_up says if it was the last
            if self.closing:
                return
            for fault in process.faults[worker.recorded :]:
                worker.recorded += 1
                if worker.gave_up and worker.recorded == len(process.faults):
                    self._store_fault(worker, fault, "gave_up", "", "; not restarted again")
                else:
                    self._store_fault(worker, fault, None, "; restarted", "; restarting it")
            if worker.gave_up:
                if worker.bot not in self.connected_once:
                    if all(fault.limit is not None for fault in process.faults):
                        self._disqualify(worker)
                        return
                    if all(fault.returncode == SDK_USAGE_ERROR for fault in process.faults):
                        self.failure = BotCannotRun(
                            f"bot {worker.bot!r} cannot run: {process.faults[-1].describe()}; see {process.log_path}"
                        )
                        return
                    self.failure = RunUnfinished(
                        f"bot {worker.bot!r}: its process exited {len(process.faults)} times without ever "
                        f"connecting (last: {process.faults[-1].describe()}{_sandbox_hint(worker)}); "
                        f"see {process.log_path}"
                    )
                    return
                try:
                    await self._replace(worker)
                except RunUnfinished as exc:
                    self.failure = exc
                    return
                continue

    def _disqualify(self, worker: _Worker) -> None:
        """Its sandbox killed every process of this bot before it ever connected: it cannot play under
        these limits. Unlike a bot that cannot run at all (a mistake in the config), this is how the
        league's rules treat a submission: it forfeits its games, and the run goes on."""
        if worker.bot in self.disqualified:
            return
        last = worker.process.faults[-1]
        reason = f"every process killed by its sandbox before it connected (last: {last.describe()})"
        self.disqualified[worker.bot] = reason
        self.store.add_fault(worker.bot, "disqualified", reason + "; it forfeits its games", worker.game_key)
        self.observer.note(f"bot {worker.bot}: {reason}; it forfeits its games")

    async def _replace(self, worker: _Worker) -> None:
        """A fresh process (and token) for a worker whose process gave up."""
        try:
            token = await self.client.issue_token(worker.bot)
        except RefereeError as exc:
            raise RunUnfinished(f"bot {worker.bot!r}: {exc}") from None
        old = worker.process
        worker.process = ManagedBot(
            old.spec, self._address_for(old.spec), token, max_restarts=MAX_RESTARTS, log_path=old.log_path
        )
        worker.recorded = 0
        self.store.add_fault(
            worker.bot, "replaced", f"process {worker.number} replaced by a fresh one", worker.game_key
        )
        self.observer.note(f"bot {worker.bot}: process {worker.number} replaced by a fresh one")
        try:
            await worker.process.start()
        except OSError as exc:
            raise RunUnfinished(f"bot {worker.bot!r}: cannot start it again: {exc.strerror or exc}") from None

    async def aclose(self) -> None:
        """Stop every bot process (SIGTERM, then SIGKILL), and store the faults the watchers had no time to:
        a process that crashed in the run's last moments, whose exit the run's end overtook."""
        self.closing = True
        workers = [w for pool in self.pools.values() for w in pool]
        await asyncio.gather(*(w.process.stop(STOP_TIMEOUT_S) for w in workers), return_exceptions=True)
        for worker in workers:
            if worker.watcher is not None:
                worker.watcher.cancel()
        await asyncio.gather(*(w.watcher for w in workers if w.watcher is not None), return_exceptions=True)
        for worker in workers:
            for fault in worker.process.faults[worker.recorded :]:
                worker.recorded += 1
                self._store_fault(worker, fault, None, "", ", as the run ended")

    def _store_fault(
        self, worker: _Worker, fault: ProcessFault, kind: str | None, stored_end: str, told_end: str
    ) -> None:
        """Store one process fault (``kind``: by default ``crash``, or ``limit`` for a sandbox limit) and say it."""
        detail = f"process {worker.number} {fault.describe()}"
        if worker.game_key is not None:
            detail += f" (during game {worker.game_key})"
        kind = kind or ("crash" if fault.limit is None else "limit")
        self.store.add_fault(worker.bot, kind, detail + stored_end, worker.game_key)
        self.observer.note(f"bot {worker.bot}: {detail}{told_end}")


def _sandbox_hint(worker: _Worker) -> str:
    """For a bot that never got to play: its sandbox, since a limit too tight keeps a bot from starting."""
    sandbox = worker.process.spec.sandbox
    if not sandbox.active:
        return ""
    return f"; its sandbox: {sandbox.describe()} (a limit too tight keeps a bot from starting)"


@contextlib.asynccontextmanager
async def referee_backend(config: RoomConfig, store: FaultLog, observer: Notes) -> AsyncIterator[RefereeBackend]:
    """The in-process referee (loopback, port 0 unless ``referee.listen``), or the configured running one."""
    server: RefereeServer | None = None
    socket_folder: Path | None = None
    if config.referee.address is None:
        tokens = {b.name: b.token for b in config.bots if b.kind == "remote" and b.token is not None}
        if any(b.managed and not b.sandbox.network for b in config.bots):
            socket_folder = Path(tempfile.mkdtemp(prefix="skyjo-ref-"))  # short: socket paths max ~100 bytes
        server = RefereeServer(
            ServerConfig(
                address=config.referee.listen,
                tokens=tokens,
                time_control=config.time_control,
                unix_socket=socket_folder / "referee.sock" if socket_folder is not None else None,
            )
        )
        try:
            await server.start()
        except OSError as exc:
            if socket_folder is not None:
                shutil.rmtree(socket_folder, ignore_errors=True)
            raise RunUnfinished(f"cannot start the referee: {exc}") from None
        address, control = server.address, server.control_token
    else:
        address = config.referee.address
        assert config.referee.control_token is not None
        control = config.referee.control_token
    client = MatchClient(address, control)
    backend = RefereeBackend(config, store, observer, client, address, server)
    try:
        yield backend
    finally:
        try:
            await backend.aclose()
        finally:
            await client.close()
            if server is not None:
                await server.stop(1.0)
            if socket_folder is not None:
                shutil.rmtree(socket_folder, ignore_errors=True)
