"""Where a tournament's games are played: a referee, reached through MatchService.

:func:`referee_backend` starts an in-process referee on loopback (or uses the
running one the config names), keeps one pool of bot processes per managed bot
and plays each game as a one-game match: seats already in the rotated order,
seed = the deal's seed, so every game is individually resumable.

Bot processes: a process serves one game at a time and is reused for the next;
a bot gets a new process (with its own token) when concurrent games need one.
A process that exits is restarted with the same token (the referee treats it
as a reconnect, so a game in progress goes on) and the fault is stored. A bot
whose processes keep dying, or that never connects, stops the run: the
tournament exits 3 and keeps every finished game.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

from skyjo_ref.match import MatchSpec, SeatSpec
from skyjo_ref.server import FinishedGame, MatchClient, RefereeError, RefereeServer, ServerConfig
from skyjo_ref.tournament.config import BotEntry, TournamentConfig
from skyjo_ref.tournament.runner import Observer, TournamentUnfinished
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import Store

#: Process exits in a row (without a good game between) before a bot stops the run.
MAX_CRASHES_IN_A_ROW: Final = 3
#: How long a freshly started bot process may take to connect (in-process referee), at least.
MIN_CONNECT_TIMEOUT_S: Final = 5.0
#: How long a stopped process may take to exit after SIGTERM before SIGKILL.
STOP_TIMEOUT_S: Final = 3.0


def bot_argv(entry: BotEntry) -> list[str]:
    """The command line of a managed bot's process."""
    if entry.kind == "python":
        assert entry.python is not None
        return [sys.executable, "-m", "skyjo_bot", "run", entry.python, "--name", entry.name, "--give-up", "30"]
    assert entry.command is not None
    return list(entry.command)


@dataclass(slots=True)
class _Worker:
    """One bot process and its token."""

    bot: str
    token: str
    number: int
    log_path: Path
    process: asyncio.subprocess.Process | None = None
    log_file: IO[bytes] | None = None
    busy: bool = False
    game_key: str | None = None
    watcher: asyncio.Task[None] | None = None
    connected: bool = False


@dataclass(slots=True)
class _Pool:
    entry: BotEntry
    workers: list[_Worker] = field(default_factory=list)
    crashes_in_a_row: int = 0
    free: asyncio.Condition = field(default_factory=asyncio.Condition)


class RefereeBackend:
    """Plays one game at a time per call to :meth:`play`; safe to call concurrently."""

    def __init__(
        self,
        config: TournamentConfig,
        store: Store,
        observer: Observer,
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
        self.pools = {b.name: _Pool(b) for b in config.bots if b.managed}
        self.log_dir = config.output / "logs"
        self.closing = False
        self.failure: TournamentUnfinished | None = None
        self.connect_timeout_s = max(MIN_CONNECT_TIMEOUT_S, config.time_control.grace_ms / 1000)

    # ----------------------------------------------------------------- a game

    async def play(self, seats: Sequence[tuple[str, BotEntry]], seed: str, game: GameId) -> dict[str, Any]:
        """Play ``game`` (seats in order) on the referee and return its checked record."""
        held: list[_Worker] = []
        try:
            for name in sorted(name for name, entry in seats if entry.managed):
                held.append(await self._acquire(name, game.key))
            tokens = {w.bot: w.token for w in held}
            specs = tuple(
                SeatSpec(name, builtin=entry.builtin)
                if entry.kind == "builtin"
                else SeatSpec(name, token=tokens.get(name, entry.token))
                for name, entry in seats
            )
            spec = MatchSpec(
                seats=specs, rules=self.config.rules, time_control=self.config.time_control, games=1, seed=seed
            )
            record = await self._play_match(spec, game)
            self._check_connected(record, game, seats)
            for name, entry in seats:
                if entry.managed:
                    self.pools[name].crashes_in_a_row = 0
            return record
        finally:
            for worker in held:
                await self._release(worker)

    async def _play_match(self, spec: MatchSpec, game: GameId) -> dict[str, Any]:
        try:
            match_id = await self.client.start_match(spec)
            record: dict[str, Any] | None = None
            async for item in self.client.watch(match_id):
                if isinstance(item, FinishedGame):
                    record = item.record
                elif record is None:
                    raise TournamentUnfinished(
                        f"game {game.key}: the referee stopped it: {item.error or 'no game was reported'}"
                    )
        except RefereeError as exc:
            raise TournamentUnfinished(f"game {game.key}: {exc}") from None
        if self.failure is not None:
            raise self.failure
        assert record is not None
        return record

    def _check_connected(self, record: dict[str, Any], game: GameId, seats: Sequence[tuple[str, BotEntry]]) -> None:
        """A seat that never connected is not a result: stop, keep nothing of this game."""
        meta = record.get("meta") or {}
        for entry in meta.get("forfeited", []) if isinstance(meta, dict) else []:
            reason = str(entry.get("reason", "")) if isinstance(entry, dict) else ""
            if reason.startswith("not connected"):
                name, bot = seats[int(entry["seat"])]
                where = f"its log is {self.log_dir}/{name}-*.log" if bot.managed else "it connects by itself"
                raise TournamentUnfinished(
                    f"game {game.key}: bot {name!r} ({bot.describe()}) never connected to the referee "
                    f"at {self.address} ({reason}); {where}"
                )

    # ---------------------------------------------------------------- processes

    async def _acquire(self, name: str, game_key: str) -> _Worker:
        pool = self.pools[name]
        for worker in pool.workers:
            if not worker.busy:
                worker.busy, worker.game_key = True, game_key
                return worker
        token = await self._issue_token(name)
        worker = _Worker(name, token, len(pool.workers) + 1, self.log_dir / f"{name}-{len(pool.workers) + 1}.log")
        worker.busy, worker.game_key = True, game_key
        pool.workers.append(worker)
        await self._spawn(worker)
        await self._wait_connected(worker)
        return worker

    async def _release(self, worker: _Worker) -> None:
        worker.busy, worker.game_key = False, None

    async def _issue_token(self, name: str) -> str:
        try:
            return await self.client.issue_token(name)
        except RefereeError as exc:
            raise TournamentUnfinished(f"bot {name!r}: {exc}") from None

    async def _spawn(self, worker: _Worker) -> None:
        entry = self.pools[worker.bot].entry
        argv = bot_argv(entry)
        env = {**os.environ, **entry.env, "SKYJO_ADDR": self.address, "SKYJO_TOKEN": worker.token}
        self.log_dir.mkdir(parents=True, exist_ok=True)
        if worker.log_file is None:
            worker.log_file = open(worker.log_path, "ab")  # kept open for the process's life
        try:
            worker.process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=str(entry.cwd or self.config.path.resolve().parent),
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=worker.log_file,
                stderr=worker.log_file,
            )
        except OSError as exc:
            raise TournamentUnfinished(
                f"bot {worker.bot!r}: cannot start {' '.join(argv)}: {exc.strerror or exc}"
            ) from None
        worker.connected = False
        worker.watcher = asyncio.create_task(self._watch(worker, worker.process))

    async def _wait_connected(self, worker: _Worker) -> None:
        """In-process referee: wait until the new process holds its stream (or fails)."""
        if self.server is None:
            return
        while True:
            process = worker.process
            assert process is not None
            connect = asyncio.ensure_future(self.server.wait_connected(worker.token, self.connect_timeout_s))
            exited = asyncio.ensure_future(process.wait())
            done, _ = await asyncio.wait({connect, exited}, return_when=asyncio.FIRST_COMPLETED)
            if connect in done and connect.result():
                exited.cancel()
                worker.connected = True
                return
            connect.cancel()
            exited.cancel()
            if self.failure is not None:
                raise self.failure
            if process.returncode is None:
                raise TournamentUnfinished(
                    f"bot {worker.bot!r} did not connect to the referee within {self.connect_timeout_s:.0f} s "
                    f"(the grace period, at least {MIN_CONNECT_TIMEOUT_S:.0f} s); "
                    f"its output is in {worker.log_path}"
                )
            # it exited: the watcher restarts it (or gives up); wait for the new process
            await asyncio.sleep(0)
            while worker.process is process and self.failure is None:
                await asyncio.sleep(0.05)

    async def _watch(self, worker: _Worker, process: asyncio.subprocess.Process) -> None:
        """Restart a process that exits while the tournament runs, and record the fault."""
        code = await process.wait()
        if self.closing or worker.process is not process:
            return
        pool = self.pools[worker.bot]
        pool.crashes_in_a_row += 1
        detail = f"process {worker.number} (pid {process.pid}) exited with code {code}"
        if worker.game_key is not None:
            detail += f" during game {worker.game_key}"
        tail = _tail(worker.log_path)
        if tail:
            detail += f"; last output: {tail}"
        if pool.crashes_in_a_row > MAX_CRASHES_IN_A_ROW:
            self.store.add_fault(worker.bot, "gave_up", detail, worker.game_key)
            self.failure = TournamentUnfinished(
                f"bot {worker.bot!r}: its process exited {pool.crashes_in_a_row} times in a row "
                f"(last: {detail}); see {worker.log_path}"
            )
            self.observer.note(f"bot {worker.bot}: {detail}; giving up")
            return
        self.store.add_fault(worker.bot, "crash", detail + "; restarted", worker.game_key)
        self.observer.note(f"bot {worker.bot}: {detail}; restarting it")
        await asyncio.sleep(0.2 * pool.crashes_in_a_row)
        if not self.closing:
            try:
                await self._spawn(worker)
            except TournamentUnfinished as exc:
                self.failure = exc

    async def aclose(self) -> None:
        """Stop every bot process: SIGTERM, then SIGKILL after a few seconds."""
        self.closing = True
        workers = [w for pool in self.pools.values() for w in pool.workers]
        for worker in workers:
            if worker.process is not None and worker.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    worker.process.send_signal(signal.SIGTERM)
        for worker in workers:
            process = worker.process
            if process is not None:
                try:
                    await asyncio.wait_for(process.wait(), STOP_TIMEOUT_S)
                except TimeoutError:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
                    await process.wait()
            if worker.watcher is not None:
                worker.watcher.cancel()
            if worker.log_file is not None:
                worker.log_file.close()


def _tail(path: Path, limit: int = 300) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 4000))
            lines = [ln.strip() for ln in f.read().decode("utf-8", "replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1][:limit] if lines else ""


@contextlib.asynccontextmanager
async def referee_backend(config: TournamentConfig, store: Store, observer: Observer) -> AsyncIterator[RefereeBackend]:
    """The in-process referee (loopback, port 0 unless ``referee.listen``), or the configured running one."""
    server: RefereeServer | None = None
    if config.referee.address is None:
        tokens = {b.name: b.token for b in config.bots if b.kind == "remote" and b.token is not None}
        server = RefereeServer(
            ServerConfig(address=config.referee.listen, tokens=tokens, time_control=config.time_control)
        )
        try:
            await server.start()
        except OSError as exc:
            raise TournamentUnfinished(f"cannot start the referee: {exc}") from None
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
