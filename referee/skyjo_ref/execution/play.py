"""The execution layer: play a stream of scheduled games on a referee, ``concurrency`` at a time.

It knows nothing of ratings or tests: the tournament, the gate and ``match``
hand it the games to play (in schedule order), how to seat and seed each one,
the store to commit to (anything with ``add_games``), a callback for every
finished game, and a stop condition (the gate's verdict). Finished games are
committed by one writer task in batches (a group commit: one transaction for
the games that finished while the previous commit ran), each before its
callback runs, so a run stopped any way resumes from the store.

Where the games are played is a :class:`GameBackend`: the local referee
(:mod:`.backend`) or Dask workers (:mod:`.dask_backend`), chosen by the
executor setting (:mod:`.executor`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any, Final, Generic, Protocol, TypeVar

from skyjo_ref.execution.types import FaultLog, GameId, GameSeed, Notes, PlayedGame, RoomConfig
from skyjo_ref.players import BotSpec

#: How far down the schedule a free slot looks for a game whose bots have an idle process.
PICK_WINDOW: Final = 256
#: Finished games not yet committed past which a player waits for the writer (bounds memory and lag).
MAX_UNCOMMITTED: Final = 64

Stored = TypeVar("Stored")
Stored_co = TypeVar("Stored_co", covariant=True)

SeatsOf = Callable[[GameId], Sequence[tuple[str, BotSpec]]]
#: Called on the event loop after a game is committed: what the store made of it, and its record.
OnGame = Callable[[Stored, dict[str, Any]], None]


class GameWriter(Protocol[Stored_co]):
    """Where finished games are committed (the tournament's store is one).

    ``add_games`` commits a batch (at once, ideally: one transaction) and
    returns what it made of each game, in order; it refuses a record by
    raising, after committing the batch's other games.
    """

    def add_games(self, batch: Sequence[PlayedGame]) -> Sequence[Stored_co]: ...


class Referee(Protocol):
    """Where a game is played (a :class:`GameBackend` is one)."""

    def ready(self, game: GameId) -> bool: ...

    async def play(self, seats: Sequence[tuple[str, BotSpec]], seed: GameSeed, game: GameId) -> dict[str, Any]: ...


class GameBackend(Protocol):
    """Plays one game on a referee and returns its record (see :mod:`.backend`, :mod:`.dask_backend`)."""

    async def prepare(self, todo: Sequence[GameId], concurrency: int) -> None:
        """Get ready for these games (start bot processes before the first game, not during play)."""

    def ready(self, game: GameId) -> bool:
        """Whether ``game`` can start now without starting a new bot process."""

    async def play(self, seats: Sequence[tuple[str, BotSpec]], seed: GameSeed, game: GameId) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


#: Opens a backend for a room's bots; bot faults go to the log, what happened to the notes.
BackendFactory = Callable[[RoomConfig, FaultLog, Notes], "contextlib.AbstractAsyncContextManager[GameBackend]"]


async def play_games(
    todo: Sequence[GameId],
    referee: Referee,
    store: GameWriter[Stored],
    *,
    seats_of: SeatsOf,
    seed_of: Callable[[GameId], GameSeed],
    concurrency: int,
    on_game: OnGame[Stored],
    stop: Callable[[], bool] | None = None,
) -> int:
    """Play ``todo`` (the first ready game first) until done or ``stop()``; return the games committed.

    Finished games go to one writer task, which commits everything waiting in
    one ``store.add_games`` (a group commit: while a commit runs, the games
    that finish wait for the next one, so batches grow with the load) and then
    calls ``on_game`` for each, in finishing order: nothing is counted before
    it is committed. Players go on to their next game without waiting for the
    commit, unless :data:`MAX_UNCOMMITTED` games already wait.

    ``stop`` is asked before each game starts, once every game finished so far
    is counted (it judges counted games: the gate's verdict; so with ``stop`` a
    player waits for the writer to catch up before it starts a game). Once it
    says yes no new game starts, and the games in flight finish and are
    stored. The first failure of any game or of the writer stops the others
    and is raised. Ended any way (done, failed, cancelled), every finished
    game is committed before this returns or raises.
    """
    run = _GameStream(todo, referee, store, seats_of, seed_of, on_game, stop)
    players = [asyncio.create_task(run.player()) for _ in range(min(concurrency, len(run.pending)))]
    commits = asyncio.create_task(run.writer())
    cancelled = False
    failure: BaseException | None = None
    try:
        await first_failure(players, watch=commits)
    except asyncio.CancelledError:
        cancelled = True
        run.give_up()
    except Exception as exc:
        failure = exc
    cancelled = await run.wind_down(players, commits) or cancelled
    writer_failure = None if commits.cancelled() else commits.exception()
    if cancelled and failure is None:  # stopped: a commit the stop gave up on (a lock held) does not hide the stop
        raise asyncio.CancelledError
    failure = failure or writer_failure
    if failure is not None:
        raise failure
    return run.committed


class _GameStream(Generic[Stored]):
    """One :func:`play_games` run's shared state: its players take games, its one writer commits them."""

    def __init__(
        self,
        todo: Sequence[GameId],
        referee: Referee,
        store: GameWriter[Stored],
        seats_of: SeatsOf,
        seed_of: Callable[[GameId], GameSeed],
        on_game: OnGame[Stored],
        stop: Callable[[], bool] | None,
    ) -> None:
        self.referee, self.store, self.seats_of, self.seed_of = referee, store, seats_of, seed_of
        self.on_game, self.stop = on_game, stop
        self.pending = list(todo)
        self.waiting: list[PlayedGame] = []  # finished, not yet in a commit, in finishing order
        self.arrived = asyncio.Event()  # set when a game joins ``waiting`` or the players are done
        self.room = asyncio.Semaphore(MAX_UNCOMMITTED)  # a unit for every finished game until it is committed
        self.all_counted = asyncio.Event()  # every game handed to the writer is counted (``stop`` may be asked)
        self.all_counted.set()
        self.players_done = False
        self.handed_over = self.committed = 0
        # a writer that waits for a lock another process holds (the tournament's store) stops waiting once the run
        # is stopped: Ctrl-C must stop a run whoever holds the lock (the commits that meet no lock go on)
        self.give_up: Callable[[], None] = getattr(store, "give_up_waiting", lambda: None)

    async def stopped(self) -> bool:
        if self.stop is None:
            return False
        await self.all_counted.wait()
        return self.stop()

    async def player(self) -> None:
        pending = self.pending
        while pending:
            if await self.stopped() or not pending:  # another player may have taken the last game meanwhile
                return
            # the first game in schedule order (within a window) whose bots have an idle process, else the first
            window = itertools.islice(enumerate(pending), PICK_WINDOW)
            index = next((i for i, g in window if self.referee.ready(g)), 0)
            game = pending.pop(index)
            seed = self.seed_of(game)
            started = time.monotonic()
            record = await self.referee.play(self.seats_of(game), seed, game)
            # handed over before any wait
            self.waiting.append(PlayedGame(game, str(seed), record, time.monotonic() - started))
            self.handed_over += 1
            self.all_counted.clear()
            self.arrived.set()
            await self.room.acquire()  # too many games wait for the writer: let it catch up

    async def writer(self) -> None:
        waiting = self.waiting
        while waiting or not self.players_done:
            if not waiting:
                self.arrived.clear()
                await self.arrived.wait()
                continue
            batch = waiting[:]
            del waiting[:]
            try:
                # off the event loop: a disk flush must not stall the referee's clocks
                stored = await asyncio.to_thread(self.store.add_games, batch)
            finally:
                for _ in batch:
                    self.room.release()
            for item, played in zip(stored, batch, strict=True):
                self.committed += 1
                self.on_game(item, dict(played.record))
            if self.committed == self.handed_over:
                self.all_counted.set()

    async def wind_down(self, players: Sequence[asyncio.Task[None]], commits: asyncio.Task[None]) -> bool:
        """Stop the players, let the writer commit what waits (and commit what a failed writer left); whether
        the caller was cancelled meanwhile."""
        for task in players:
            task.cancel()
        ended = asyncio.gather(*players, return_exceptions=True)
        cancelled = await _wait_through_cancellation(ended, self.give_up)
        self.players_done = True
        self.arrived.set()
        # the writer commits what is waiting; it is never cancelled (a commit in a thread cannot be)
        cancelled = await _wait_through_cancellation(commits, self.give_up) or cancelled
        if self.waiting:  # the writer failed: what it did not reach is still committed (its error, if any, comes 2nd)
            leftover = asyncio.create_task(asyncio.to_thread(self.store.add_games, self.waiting[:]))
            cancelled = await _wait_through_cancellation(leftover, self.give_up) or cancelled
            if not leftover.cancelled():
                leftover.exception()  # retrieved: the first failure is the one raised
        return cancelled


async def _wait_through_cancellation(task: asyncio.Future[Any], on_cancel: Callable[[], None]) -> bool:
    """Wait for ``task`` (which only its owner cancels) to end even if the caller is cancelled (then
    ``on_cancel()``); whether it was."""
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
            on_cancel()
        except Exception:
            pass  # the task's own failure: its owner reads it
    return cancelled


async def first_failure(tasks: Sequence[asyncio.Task[None]], watch: asyncio.Task[None] | None = None) -> None:
    """Wait for every task; the first one to fail stops the others and its error is raised.

    ``watch`` is not waited for, but its failure counts as a failure of ``tasks``.
    """
    pending: set[asyncio.Task[None]] = set(tasks)
    if watch is not None:
        pending.add(watch)
    while pending - {watch}:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            error = task.exception()
            if error is not None:
                raise error
