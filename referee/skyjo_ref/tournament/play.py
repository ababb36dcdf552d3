"""The execution layer: play a stream of scheduled games on a referee, ``concurrency`` at a time.

It knows nothing of ratings or tests: the tournament and the gate both hand
it the games to play (in schedule order), how to seat and seed each one, the
store to commit to, a callback for every finished game, and a stop condition
(the gate's verdict). Every finished game is committed to the store before
the callback runs, so a run stopped any way resumes from the store.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

from skyjo_ref.players import BotSpec
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import Store, StoredGame

#: How far down the schedule a free slot looks for a game whose bots have an idle process.
PICK_WINDOW: Final = 256

SeatsOf = Callable[[GameId], Sequence[tuple[str, BotSpec]]]
#: Called on the event loop after a game is committed: the stored game and its record.
OnGame = Callable[[StoredGame, dict[str, Any]], None]


class Referee(Protocol):
    """Where a game is played (the tournament backend's :class:`~.runner.GameBackend` is one)."""

    def ready(self, game: GameId) -> bool: ...

    async def play(self, seats: Sequence[tuple[str, BotSpec]], seed: str, game: GameId) -> dict[str, Any]: ...


async def play_games(
    todo: Sequence[GameId],
    referee: Referee,
    store: Store,
    *,
    seats_of: SeatsOf,
    seed_of: Callable[[GameId], str],
    concurrency: int,
    on_game: OnGame,
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
            stored = await asyncio.to_thread(store.add_game, game, seed, record, time.monotonic() - started)
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
