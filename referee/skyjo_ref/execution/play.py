"""The execution layer: play a stream of scheduled games on a referee, ``concurrency`` at a time.

It knows nothing of ratings or tests: the tournament, the gate and ``match``
hand it the games to play (in schedule order), how to seat and seed each one,
the store to commit to (anything with ``add_game``), a callback for every
finished game, and a stop condition (the gate's verdict). Every finished game
is committed to the store before the callback runs, so a run stopped any way
resumes from the store.

Where the games are played is a :class:`GameBackend`: the local referee
(:mod:`.backend`) or Dask workers (:mod:`.dask_backend`), chosen by the
executor setting (:mod:`.executor`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Protocol, TypeVar

from skyjo_ref.execution.types import FaultLog, GameId, GameSeed, Notes, RoomConfig
from skyjo_ref.players import BotSpec

#: How far down the schedule a free slot looks for a game whose bots have an idle process.
PICK_WINDOW: Final = 256

Stored = TypeVar("Stored")
Stored_co = TypeVar("Stored_co", covariant=True)

SeatsOf = Callable[[GameId], Sequence[tuple[str, BotSpec]]]
#: Called on the event loop after a game is committed: what the store made of it, and its record.
OnGame = Callable[[Stored, dict[str, Any]], None]


class GameWriter(Protocol[Stored_co]):
    """Where finished games are committed (the tournament's store is one); may refuse a record by raising."""

    def add_game(self, game: GameId, deal_seed: str, record: Mapping[str, Any], duration_s: float) -> Stored_co: ...


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
    """Play ``todo`` (the first ready game first) until done or ``stop()``; return the games finished.

    ``stop`` is asked before each game starts: once it says yes no new game
    starts, and the games already in flight finish and are stored. The first
    failure of any game stops the others and is raised.
    """
    pending = list(todo)
    finished = 0

    async def worker() -> None:
        nonlocal finished
        while pending and not (stop is not None and stop()):
            # the first game in schedule order (within a window) whose bots have an idle process, else the first
            window = itertools.islice(enumerate(pending), PICK_WINDOW)
            index = next((i for i, g in window if referee.ready(g)), 0)
            game = pending.pop(index)
            seed = seed_of(game)
            started = time.monotonic()
            record = await referee.play(seats_of(game), seed, game)
            # off the event loop: a disk flush must not stall the referee's clocks
            stored = await asyncio.to_thread(store.add_game, game, str(seed), record, time.monotonic() - started)
            finished += 1
            on_game(stored, record)

    workers = [asyncio.create_task(worker()) for _ in range(min(concurrency, len(pending)))]
    try:
        await first_failure(workers)
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    return finished


async def first_failure(tasks: Sequence[asyncio.Task[None]]) -> None:
    """Wait for every task; the first one to fail stops the others and its error is raised."""
    pending = set(tasks)
    while pending:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            error = task.exception()
            if error is not None:
                raise error
