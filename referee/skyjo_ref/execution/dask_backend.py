"""Games on Dask workers: the ``processes`` and ``tcp://scheduler`` executors.

The shape is that of fishtest's workers and Battlecode's match queue:
independent game tasks pulled by workers, at-least-once execution, one
idempotent writer. Each game is a Dask task (``pure=False``, a key made from
the run and the game's key); the task's result is the game's record, which
comes back to the coordinator — the process the user started — where the
execution layer (:mod:`.play`) replay-checks and commits it before counting it.
The coordinator is the only writer of the store; a game delivered twice (a
worker that died after finishing it) is stored once, under its key.

Each worker keeps a :class:`WorkerRoom` per run: its own in-process
referee and bot-process pools (the local :class:`~.backend.RefereeBackend`), on
its own event loop thread, started by the first task (or the setup task the
coordinator sends every worker) and reused by every game after it. Bot faults
on a worker are kept in memory there and shipped back with the next
finished game, so the coordinator's store holds them all.

A worker that dies mid-game: Dask gives its tasks to other workers (a game is
played again from its start, with the same seed, so the result is the same for
deterministic bots); after three deaths on one game Dask gives up on it
(``KilledWorker``) and the run stops with exit 3. No worker at all for
``connect_timeout_s``: the run stops with exit 3. Finished games are kept.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import hashlib
import importlib.util
import logging
import math
import os
import pickle
import shutil
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, Final

from skyjo_bot.loader import split_spec

from skyjo_ref.execution.executor import Executor, ExecutorError
from skyjo_ref.execution.play import BackendFactory
from skyjo_ref.execution.types import (
    BotCannotRun,
    BotFault,
    FaultList,
    FaultLog,
    GameId,
    GameSeed,
    Notes,
    QuietNotes,
    RefereeConfig,
    RoomConfig,
    RunUnfinished,
)
from skyjo_ref.players import BotSpec

#: How often the coordinator looks at the scheduler's list of workers (joins, departures, none left).
WATCH_INTERVAL_S: Final = 0.5
#: A worker's room unused this long closes itself (its coordinator was killed and cannot close it).
ROOM_IDLE_S: Final = 300.0
#: Batches submitted per game slot: a worker's next batch waits on it while the last result travels back.
PREFETCH: Final = 2
#: Games in one task: a task's round trip (client, scheduler, worker, back) costs milliseconds of CPU and,
#: on a loaded machine, tens of milliseconds of waiting; a batch pays it once for several games. 16 against
#: 4 measured 1.31-1.42x against 1.16-1.17x local for built-in bots (docs/performance.md); the price: a
#: killed worker's batch (up to 16 games) is played again, and a gate plays more games past its verdict.
BATCH: Final = 16
#: How long the coordinator waits for the workers to close their rooms at the end.
CLOSE_TIMEOUT_S: Final = 30.0
#: Games of the schedule a worker's setup looks at to decide how many bot processes to start.
SETUP_SAMPLE: Final = 512


class DaskUnavailable(ExecutorError):
    """``distributed`` is not installed: the user's setup to fix (exit 2)."""


@dataclasses.dataclass(frozen=True, slots=True)
class GameJob:
    """What one game task carries to a worker."""

    config: RoomConfig  # the worker's copy: in-process referee, scratch output
    digest: str  # which room on the worker
    slots: int  # games at once on one worker
    seats: tuple[tuple[str, BotSpec], ...]
    seed: GameSeed
    game: GameId


@dataclasses.dataclass(frozen=True, slots=True)
class GameDone:
    """What comes back: the record, the bot faults seen on the worker since its last game, and where."""

    record: dict[str, Any]
    faults: tuple[BotFault, ...]
    worker: str


# ----------------------------------------------------------------- worker side


def bot_problems(config: RoomConfig) -> list[tuple[str, str]]:
    """(bot, problem) for every managed bot this machine cannot start (file, module, command, folder)."""
    problems: list[tuple[str, str]] = []
    for bot in config.bots:
        if bot.cwd is not None and not bot.cwd.is_dir():
            problems.append((bot.name, f"its folder {bot.cwd} does not exist here"))
        elif bot.kind == "python" and bot.python is not None:
            parts = split_spec(bot.python)
            target = parts.target
            if parts.is_file:
                if not Path(target).is_file():
                    problems.append((bot.name, f"its file {target} does not exist here"))
            elif importlib.util.find_spec(target.split(".")[0]) is None:
                problems.append((bot.name, f"its module {target} cannot be imported here"))
        elif bot.kind == "command" and bot.command:
            program = bot.command[0]
            path = bot.env.get("PATH", os.environ.get("PATH"))
            if os.sep in program:
                where = Path(program) if Path(program).is_absolute() or bot.cwd is None else bot.cwd / program
                if not os.access(where, os.X_OK):
                    problems.append((bot.name, f"its program {program} is not an executable file here"))
            elif shutil.which(program, path=path) is None:
                problems.append((bot.name, f"its program {program!r} is not found on PATH here"))
    return problems


class WorkerRoom:
    """One run's referee and bot processes inside one Dask worker, on their own event loop."""

    def __init__(self, config: RoomConfig, digest: str, where: str) -> None:
        self.where = where
        self.folder = Path(tempfile.mkdtemp(prefix=f"skyjo-ref-worker-{digest[:8]}-"))
        self.config = config if config.output == self.folder else dataclasses.replace(config, output=self.folder)
        self.store = FaultList()  # bot faults only; shipped to the coordinator with each game
        self.sent_faults = 0
        self.lock = threading.Lock()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=f"skyjo-room-{digest[:8]}", daemon=True)
        self.thread.start()
        self.context: contextlib.AbstractAsyncContextManager[Any] | None = None
        self.backend: Any = None
        self.digest = digest
        self.used_at = time.monotonic()
        self.in_flight = 0
        self.closed = threading.Event()
        threading.Thread(target=self._reap_when_idle, name=f"skyjo-reaper-{digest[:8]}", daemon=True).start()

    def _reap_when_idle(self) -> None:
        """Close the room once no game came for ROOM_IDLE_S (a killed coordinator never says goodbye)."""
        while not self.closed.wait(ROOM_IDLE_S / 10):
            if self.in_flight == 0 and time.monotonic() - self.used_at > ROOM_IDLE_S:
                close_rooms(self.digest)
                return

    def _call(self, coroutine: Any) -> Any:
        """Run ``coroutine`` on the room's loop and wait for it (giving up if the room is closed meanwhile)."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        while True:
            try:
                return future.result(timeout=1.0)
            except concurrent.futures.TimeoutError:
                if self.closed.is_set() and not self.thread.is_alive():
                    future.cancel()
                    raise RunUnfinished("the worker's referee was closed during the game") from None

    def open(self, sample: Sequence[GameId], slots: int) -> None:
        """Start the referee and the bot processes the first games need (before any game is played)."""
        from skyjo_ref.execution.backend import referee_backend

        async def enter() -> None:
            self.context = referee_backend(self.config, self.store, QuietNotes())
            self.backend = await self.context.__aenter__()
            await self.backend.prepare(sample, slots)

        try:
            self._call(enter())
        except RunUnfinished as exc:
            raise type(exc)(f"on Dask worker {self.where}: {exc}") from None

    def play(self, job: GameJob) -> GameDone:
        with self.lock:
            self.in_flight += 1
        try:
            record = self._call(self.backend.play(job.seats, job.seed, job.game))
        except RunUnfinished as exc:
            raise type(exc)(f"on Dask worker {self.where}: {exc}") from None
        finally:
            with self.lock:
                self.in_flight -= 1
                self.used_at = time.monotonic()
        return GameDone(record, self.new_faults(), self.where)

    def new_faults(self) -> tuple[BotFault, ...]:
        with self.lock:
            faults = self.store.rows[self.sent_faults :]
            self.sent_faults += len(faults)
        return tuple(faults)

    def close(self) -> None:
        """Stop the bot processes and the referee (SIGTERM, then SIGKILL), and the loop."""
        self.closed.set()
        if self.context is not None:
            with contextlib.suppress(Exception):
                self._call(self.context.__aexit__(None, None, None))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)  # the folder stays: the bots' logs are there, and messages name them


_rooms: dict[str, WorkerRoom] = {}
_rooms_lock = threading.Lock()


def _worker_address() -> str:
    from distributed import get_worker

    try:
        return str(get_worker().address)
    except ValueError:
        return f"pid {os.getpid()}"


def room_for(config: RoomConfig, digest: str, slots: int, sample: Sequence[GameId] = ()) -> WorkerRoom:
    """This worker's room for the run ``digest``: made (bots checked, processes started) on first use."""
    with _rooms_lock:
        room = _rooms.get(digest)
        if room is not None:
            return room
        where = _worker_address()
        problems = bot_problems(config)
        if problems:
            bot, problem = problems[0]
            raise BotCannotRun(
                f"Dask worker {where} cannot run bot {bot!r}: {problem} "
                "(workers need the bots at the same paths: see docs/scale-out.md)"
            )
        room = WorkerRoom(config, digest, where)
        try:
            room.open(sample, slots)
        except BaseException:
            room.close()
            raise
        _rooms[digest] = room
        return room


def setup_worker(config: RoomConfig, digest: str, slots: int, sample: tuple[GameId, ...]) -> str:
    """The setup task: check the bots and start this worker's room before any game is given to it."""
    room_for(config, digest, slots, sample)
    return _worker_address()


def play_batch_on_worker(jobs: tuple[GameJob, ...]) -> tuple[GameDone, ...]:
    """The game task: play a few games one after the other in this worker's room; their records."""
    room = room_for(jobs[0].config, jobs[0].digest, jobs[0].slots)
    return tuple(room.play(job) for job in jobs)


def close_rooms(digest: str) -> int:
    """Run on every worker at the end (``Client.run``): stop the run's bots and referee there."""
    with _rooms_lock:
        room = _rooms.pop(digest, None)
    if room is None:
        return 0
    room.close()
    return 1


# ------------------------------------------------------------ coordinator side


def _digest(config: RoomConfig) -> str:
    return hashlib.sha256(pickle.dumps((config, time.time_ns(), os.getpid()))).hexdigest()


class DaskBackend:
    """The :class:`~.play.GameBackend` that sends each game to a Dask worker and returns its record."""

    def __init__(self, config: RoomConfig, store: FaultLog, observer: Notes, client: Any, executor: Executor) -> None:
        self.config = config
        self.store = store
        self.observer = observer
        self.client = client
        self.executor = executor
        self.digest = _digest(config)
        self.worker_config = dataclasses.replace(config, referee=RefereeConfig(), output=Path(tempfile.gettempdir()))
        self.slots = 1  # bot processes per bot on a worker
        self.threads = 1  # game slots on all workers
        self.queue: list[tuple[GameJob, asyncio.Future[GameDone]]] = []
        self.batches_in_flight = 0
        self.batch_tasks: set[asyncio.Task[None]] = set()
        self.known: set[str] = set()
        self.lost = asyncio.Event()
        self.failure: RunUnfinished | None = None
        self.watcher: asyncio.Task[None] | None = None

    async def _workers(self) -> dict[str, Any]:
        info = await self.client.scheduler.identity()
        workers: dict[str, Any] = info.get("workers", {})
        return workers

    async def prepare(self, todo: Sequence[GameId], concurrency: int) -> None:
        """Wait for a worker, then set up every worker (bots checked, processes started) before any game."""
        try:
            await self.client.wait_for_workers(1, timeout=self.config.connect_timeout_s)
        except TimeoutError:
            raise RunUnfinished(
                f"no Dask worker joined {self.executor.describe()} within {self.config.connect_timeout_s:g} s "
                "(connect_timeout_s): start workers with 'dask worker ADDRESS' (docs/scale-out.md)"
            ) from None
        workers = await self._workers()
        self.known = set(workers)
        # bot processes per bot on a worker: one per game it plays at once (its threads)
        self.slots = max([int(w.get("nthreads", 1)) for w in workers.values()] + [1])
        self.threads = max(sum(int(w.get("nthreads", 1)) for w in workers.values()), 1)
        sample = tuple(todo[:SETUP_SAMPLE])
        setups = [
            self.client.submit(
                setup_worker,
                self.worker_config,
                self.digest,
                self.slots,
                sample,
                key=f"skyjo-setup-{self.digest[:16]}-{address}",
                workers=[address],
                allow_other_workers=True,
                pure=False,
            )
            for address in workers
        ]
        await self._await_all(setups)
        self.watcher = asyncio.create_task(self._watch())

    async def _await_all(self, futures: list[Any]) -> list[Any]:
        try:
            return list(await self.client.gather(futures))
        except RunUnfinished:
            raise
        except Exception as exc:
            raise RunUnfinished(f"setting up the Dask workers failed: {type(exc).__name__}: {exc}") from None

    def ready(self, game: GameId) -> bool:
        return True  # the scheduler queues what no worker can take yet

    async def play(self, seats: Sequence[tuple[str, BotSpec]], seed: GameSeed, game: GameId) -> dict[str, Any]:
        """Send ``game`` to a worker (in a batch); return its record when it comes back."""
        if self.failure is not None:
            raise self.failure
        job = GameJob(self.worker_config, self.digest, self.slots, tuple(seats), seed, game)
        waiter: asyncio.Future[GameDone] = asyncio.get_running_loop().create_future()
        self.queue.append((job, waiter))
        self._flush()
        lost: asyncio.Future[Any] = asyncio.ensure_future(self.lost.wait())
        watched: set[asyncio.Future[Any]] = {waiter, lost}
        try:
            await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
            if not waiter.done():
                assert self.failure is not None
                raise self.failure
            done = waiter.result()
        finally:
            lost.cancel()
            if not waiter.done():
                waiter.cancel()
        for fault in done.faults:
            self.store.add_fault(fault.bot, fault.kind, f"on Dask worker {done.worker}: {fault.detail}", fault.game_key)
            self.observer.note(f"bot {fault.bot} on Dask worker {done.worker}: {fault.detail}")
        return done.record

    def _flush(self) -> None:
        """Submit queued games: a full batch, or what there is when a worker thread would otherwise wait."""
        while self.queue and (len(self.queue) >= BATCH or self.batches_in_flight < self.threads):
            batch, self.queue = self.queue[:BATCH], self.queue[BATCH:]
            self.batches_in_flight += 1
            task = asyncio.create_task(self._run_batch(batch))
            self.batch_tasks.add(task)
            task.add_done_callback(self.batch_tasks.discard)

    async def _run_batch(self, batch: list[tuple[GameJob, asyncio.Future[GameDone]]]) -> None:
        """One task of up to BATCH games on a worker; each game's record goes to its waiting ``play``."""
        from distributed import KilledWorker

        jobs = tuple(job for job, _ in batch)
        key = f"skyjo-games-{self.digest[:16]}-{jobs[0].game.key}-{len(jobs)}"
        future = self.client.submit(play_batch_on_worker, jobs, key=key, pure=False, retries=0)
        try:
            results: tuple[GameDone, ...] = await future.result()
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await self.client.cancel([future])
            raise
        except KilledWorker:
            error: BaseException = RunUnfinished(
                f"games {', '.join(j.game.key for j in jobs)}: Dask workers died while playing them, "
                "three times (KilledWorker); see the workers' logs"
            )
            self._fail_batch(batch, error)
            return
        except Exception as exc:
            self._fail_batch(batch, exc)
            return
        finally:
            self.batches_in_flight -= 1
            future.release()
            self._flush()
        for (_, waiter), done in zip(batch, results, strict=True):
            if not waiter.done():
                waiter.set_result(done)

    @staticmethod
    def _fail_batch(batch: list[tuple[GameJob, asyncio.Future[GameDone]]], error: BaseException) -> None:
        for _, waiter in batch:
            if not waiter.done():
                waiter.set_exception(error)
                break  # one waiter raises it (the run stops); the others are cancelled when it does

    async def _watch(self) -> None:
        """Say when workers leave or join; stop the run when none is left for ``connect_timeout_s``."""
        empty_since: float | None = None
        while True:
            try:
                workers = set(await self._workers())
            except Exception as exc:  # the scheduler is gone
                self.failure = RunUnfinished(f"lost the Dask scheduler ({type(exc).__name__}: {exc})")
                self.lost.set()
                return
            for address in sorted(self.known - workers):
                self.observer.note(f"Dask worker {address} left; the games it was playing are played again elsewhere")
            for address in sorted(workers - self.known):
                self.observer.note(f"Dask worker {address} joined")
            self.known = workers
            now = time.monotonic()
            if workers:
                empty_since = None
            elif empty_since is None:
                empty_since = now
            elif now - empty_since > self.config.connect_timeout_s:
                self.failure = RunUnfinished(
                    f"no Dask worker left at {self.executor.describe()} for {self.config.connect_timeout_s:g} s "
                    "(connect_timeout_s): every worker died or was stopped"
                )
                self.lost.set()
                return
            # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancel that races its timeout
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(WATCH_INTERVAL_S):
                    await self.lost.wait()
            if self.lost.is_set():
                return

    async def aclose(self) -> None:
        """Stop the run's bots and referees on every worker."""
        tasks = [*self.batch_tasks, *([self.watcher] if self.watcher is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.failure is None:
            with contextlib.suppress(Exception):  # TimeoutError included: a worker that hangs is left to its reaper
                async with asyncio.timeout(CLOSE_TIMEOUT_S):
                    await self.client.run(close_rooms, self.digest)


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise DaskUnavailable(
            "the Dask executors need the 'distributed' package: pip install 'skyjo-ref[dask]'"
        ) from None
    return distributed


def check_executor(config: RoomConfig, executor: Executor) -> None:
    """Refuse, before any game, what a Dask executor cannot run (remote bots, a running referee)."""
    if executor.is_local:
        return
    _import_distributed()
    remote = [b.name for b in config.bots if b.kind == "remote"]
    if remote:
        raise ExecutorError(
            f"executor {executor.describe()}: remote bots ({', '.join(remote)}) connect to one referee and cannot "
            "follow games onto Dask workers: use executor local for them"
        )
    if config.referee.address is not None:
        raise ExecutorError(
            f"executor {executor.describe()}: every Dask worker runs its own referee; "
            "referee.address (a running referee) works only with executor local"
        )


@contextlib.asynccontextmanager
async def dask_backend(
    config: RoomConfig, store: FaultLog, observer: Notes, executor: Executor, concurrency: int
) -> AsyncIterator[DaskBackend]:
    """A LocalCluster (``processes``) or a client of a running scheduler, and the backend that uses it."""
    check_executor(config, executor)
    distributed = _import_distributed()
    cluster: Any = None
    for name in ("distributed", "distributed.worker", "distributed.scheduler", "distributed.nanny"):
        logging.getLogger(name).setLevel(logging.ERROR)  # our notes say what matters (a worker left)
    try:
        if executor.kind == "processes":
            count = executor.worker_count()
            cluster = await distributed.LocalCluster(
                n_workers=count,
                threads_per_worker=max(1, math.ceil(concurrency / count)),
                processes=True,
                asynchronous=True,
                host="127.0.0.1",  # this machine only: nobody else may send the workers code
                dashboard_address=":0",  # its HTTP server on a free port (8787 may be another cluster's)
                silence_logs=logging.CRITICAL,  # workers logging a closing scheduler is not news
            )
            client = await distributed.Client(cluster, asynchronous=True)
        else:
            client = await distributed.Client(
                executor.address, asynchronous=True, timeout=f"{config.connect_timeout_s}s"
            )
    except OSError as exc:
        if cluster is not None:
            await cluster.close()
        raise RunUnfinished(f"cannot reach {executor.describe()}: {exc}") from None
    backend = DaskBackend(config, store, observer, client, executor)
    try:
        yield backend
    finally:
        try:
            await backend.aclose()
        finally:
            await client.close()
            if cluster is not None:
                await cluster.close()


def in_flight(executor: Executor, concurrency: int) -> int:
    """Games the execution layer keeps submitted: ``concurrency`` play at once, as many more wait on workers."""
    return concurrency if executor.is_local else PREFETCH * BATCH * concurrency


def backend_factory(executor: Executor, concurrency: int) -> BackendFactory | None:
    """The runner's and the gate's backend for ``executor`` (None: the local referee, their default)."""
    if executor.is_local:
        return None

    def factory(
        config: RoomConfig, store: FaultLog, observer: Notes
    ) -> contextlib.AbstractAsyncContextManager[DaskBackend]:
        return dask_backend(config, store, observer, executor, concurrency)

    return factory
