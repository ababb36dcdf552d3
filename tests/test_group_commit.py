"""Group commit: a batch of finished games in one transaction, and the execution layer's single writer task.

Real SQLite stores and real games (greedy against greedy through the rules
engine). The referee here is the execution layer's ``Referee`` protocol played
in-process, with games that finish when a test says so; the writer is the
real :class:`Store`, one of whose commits a test may hold (a threading event)
to have games finish while it runs. No sleeps: the tests wait on events.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from skyjo_ref.execution import play
from skyjo_ref.execution.types import GameId, GameSeed, PlayedGame
from skyjo_ref.players import BotSpec
from skyjo_ref.records import RecordError
from skyjo_ref.tournament.store import Store, StoredGame, StoreError
from test_tournament_units import _record

#: Far above any wait here, far below pytest's timeout.
WAIT_S = 60.0


def _games(count: int) -> list[GameId]:
    return [GameId(("a", "b"), deal, 0) for deal in range(count)]


def _played(game: GameId) -> PlayedGame:
    seed = f"seed-{game.deal}"
    return PlayedGame(game, seed, _record(game.seats, seed), 0.1)


def _statements(store: Store) -> list[str]:
    """Every SQL statement the store's connection runs from now on."""
    seen: list[str] = []
    store.db.set_trace_callback(seen.append)
    return seen


# ------------------------------------------------------------------ the store


def test_a_batch_is_one_transaction_and_a_game_twice_is_stored_once(tmp_path: Path) -> None:
    games = _games(16)
    batch = [_played(g) for g in games]
    with Store(tmp_path / "out") as store:
        statements = _statements(store)
        stored = store.add_games([*batch, batch[3]])  # game 3 delivered twice in the same batch
        assert statements.count("BEGIN IMMEDIATE") == 1 and statements.count("COMMIT") == 1
        assert [s.id for s in stored] == [*games, games[3]]
        assert store.count() == 16 and len(store.games()) == 16
        assert all(len(g.seats) == 2 for g in store.games())
        played = batch[5]
        again = store.add_game(played.game, played.deal_seed, played.record, played.duration_s)  # a batch of one
        assert again == stored[5] and store.count() == 16
        assert statements.count("COMMIT") == 2
        assert store.games() == sorted(stored[:16], key=lambda g: g.id.key)


def test_a_refused_record_is_not_stored_but_the_rest_of_its_batch_is(tmp_path: Path) -> None:
    good = [_played(g) for g in _games(4)]
    tampered = copy.deepcopy(dict(good[1].record))
    tampered["result"]["totals"][0] += 1  # does not replay
    wrong_players = PlayedGame(GameId(("a", "b"), 9, 0), "t", _record(("x", "y"), "t"), 0.1)
    with Store(tmp_path / "out") as store:
        statements = _statements(store)
        with pytest.raises(RecordError, match="totals"):  # the first refusal is the one raised
            store.add_games([good[0], dataclasses.replace(good[1], record=tampered), good[2], wrong_players, good[3]])
        assert statements.count("COMMIT") == 1
        assert store.finished_keys() == {good[0].game.key, good[2].game.key, good[3].game.key}
        files = {p.name for p in (tmp_path / "out" / "games").iterdir()}
        assert files == {good[i].game.file_name() for i in (0, 2, 3)}
        with pytest.raises(StoreError, match="players"):
            store.add_games([wrong_players])
        assert store.count() == 3


# ------------------------------------------------------------- the writer task


class _Referee:
    """Plays real games in-process; a game listed in ``held`` finishes only when its event is set."""

    def __init__(self, held: Sequence[GameId] = (), refuse: GameId | None = None, fail: GameId | None = None):
        self.held = {game: asyncio.Event() for game in held}
        self.refuse = refuse
        self.fail = fail
        self.started: list[GameId] = []
        self.finished: dict[GameId, asyncio.Event] = {}
        self.cancelled: list[GameId] = []

    def ready(self, game: GameId) -> bool:
        return True

    async def play(self, seats: Sequence[tuple[str, BotSpec]], seed: GameSeed, game: GameId) -> dict[str, Any]:
        self.started.append(game)
        self.finished.setdefault(game, asyncio.Event())
        if game in self.held:
            try:
                await self.held[game].wait()
            except asyncio.CancelledError:
                self.cancelled.append(game)
                raise
        if game == self.fail:
            raise RuntimeError(f"game {game.key} failed")
        players = ("x", "y") if game == self.refuse else game.seats
        record = _record(players, str(seed))
        self.finished[game].set()  # the player hands the game to the writer in this same step
        return record


class _HeldStore:
    """The real store; its first commit waits, in its thread, until the test releases it."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.entered = threading.Event()
        self.release = threading.Event()
        self.batches: list[list[str]] = []

    def add_games(self, batch: Sequence[PlayedGame]) -> list[StoredGame]:
        self.batches.append([played.game.key for played in batch])
        if len(self.batches) == 1:
            self.entered.set()
            assert self.release.wait(WAIT_S)
        return self.store.add_games(batch)


def _run(
    todo: Sequence[GameId],
    referee: _Referee,
    writer: _HeldStore,
    concurrency: int,
    counted: list[str],
    stop: Callable[[], bool] | None = None,
) -> asyncio.Task[int]:
    def on_game(stored: StoredGame, record: dict[str, Any]) -> None:
        assert stored.id.key in writer.store.finished_keys()  # committed before it is counted
        counted.append(stored.id.key)

    return asyncio.create_task(
        play.play_games(
            todo,
            referee,
            writer,
            seats_of=lambda game: [],
            seed_of=lambda game: f"seed-{game.deal}",
            concurrency=concurrency,
            on_game=on_game,
            stop=stop,
        )
    )


async def _until(condition: Any) -> None:
    """Yield to the loop until ``condition()`` holds (loop turns, no clock)."""
    for _ in range(10_000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never held")


def test_games_that_finish_during_a_commit_go_in_the_next_batch_and_cancelling_keeps_them(tmp_path: Path) -> None:
    """Game 0's commit is held; games 1 and 2 finish meanwhile; the run is cancelled with game 3 in play:
    0, 1 and 2 are committed (1 and 2 in one batch) and counted in finishing order, 3 is not stored."""
    todo = _games(4)

    async def main() -> None:
        with Store(tmp_path / "out") as store:
            writer = _HeldStore(store)
            referee = _Referee(held=todo)
            counted: list[str] = []
            task = _run(todo, referee, writer, 4, counted)
            await _until(lambda: len(referee.started) == 4)
            referee.held[todo[0]].set()
            assert await asyncio.to_thread(writer.entered.wait, WAIT_S)  # game 0's commit runs (held)
            for game in (todo[2], todo[1]):
                referee.held[game].set()
                await referee.finished[game].wait()
            task.cancel()  # Ctrl-C: game 3 in play, 2 and 1 waiting, 0 in a commit
            await _until(lambda: referee.cancelled == [todo[3]])
            assert not task.done()  # waiting for the commit it cannot cancel
            writer.release.set()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, WAIT_S)
            assert writer.batches == [[todo[0].key], [todo[2].key, todo[1].key]]
            assert counted == [todo[0].key, todo[2].key, todo[1].key]
            assert store.finished_keys() == {todo[0].key, todo[1].key, todo[2].key}

    asyncio.run(main())


def test_players_wait_when_too_many_games_wait_for_the_writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(play, "MAX_UNCOMMITTED", 2)
    todo = _games(6)

    async def main() -> None:
        with Store(tmp_path / "out") as store:
            writer = _HeldStore(store)
            referee = _Referee()
            counted: list[str] = []
            task = _run(todo, referee, writer, 1, counted)
            assert await asyncio.to_thread(writer.entered.wait, WAIT_S)
            await _until(lambda: len(referee.started) == 3)
            for _ in range(100):  # the player stays blocked (two waiting, its third handed over) while held
                await asyncio.sleep(0)
            assert len(referee.started) == 3 and counted == []
            writer.release.set()
            assert await asyncio.wait_for(task, WAIT_S) == 6
            assert counted == [g.key for g in todo] and store.count() == 6
            assert writer.batches[0] == [g.key for g in todo[:3]]

    asyncio.run(main())


def test_a_refused_record_stops_the_run_after_committing_every_other_finished_game(tmp_path: Path) -> None:
    todo = _games(4)

    async def main() -> None:
        with Store(tmp_path / "out") as store:
            writer = _HeldStore(store)
            referee = _Referee(held=todo[1:], refuse=todo[2])
            counted: list[str] = []
            task = _run(todo, referee, writer, 4, counted)
            assert await asyncio.to_thread(writer.entered.wait, WAIT_S)  # game 0's commit (held)
            for game in (todo[1], todo[2]):  # finish during it: the next batch holds a refused record
                referee.held[game].set()
                await referee.finished[game].wait()
            writer.release.set()
            with pytest.raises(StoreError, match="players"):
                await asyncio.wait_for(task, WAIT_S)
            assert referee.cancelled == [todo[3]]  # the refusal stopped the game still in play
            assert store.finished_keys() == {todo[0].key, todo[1].key}
            assert counted == [todo[0].key]

    asyncio.run(main())


def test_a_failing_game_stops_the_run_and_the_finished_games_are_committed(tmp_path: Path) -> None:
    todo = _games(4)

    async def main() -> None:
        with Store(tmp_path / "out") as store:
            writer = _HeldStore(store)
            referee = _Referee(held=todo[1:], fail=todo[3])
            counted: list[str] = []
            task = _run(todo, referee, writer, 4, counted)
            assert await asyncio.to_thread(writer.entered.wait, WAIT_S)
            referee.held[todo[1]].set()
            await referee.finished[todo[1]].wait()
            referee.held[todo[3]].set()  # fails while game 0's commit runs and game 1 waits
            await _until(lambda: referee.cancelled == [todo[2]])
            writer.release.set()
            with pytest.raises(RuntimeError, match="failed"):
                await asyncio.wait_for(task, WAIT_S)
            assert store.finished_keys() == {todo[0].key, todo[1].key}
            assert counted == [todo[0].key, todo[1].key]

    asyncio.run(main())


def test_stop_is_asked_once_every_finished_game_is_counted(tmp_path: Path) -> None:
    """The gate's verdict judges counted games: no game starts that a verdict on the finished ones would stop,
    so after the verdict only the other player's game in flight is played (not a queue of games)."""
    todo = _games(40)

    async def main() -> None:
        with Store(tmp_path / "out") as store:
            writer = _HeldStore(store)
            writer.release.set()
            referee = _Referee()
            counted: list[str] = []
            task = _run(todo, referee, writer, 2, counted, stop=lambda: len(counted) >= 3)
            assert await asyncio.wait_for(task, WAIT_S) == len(referee.started)
            assert 3 <= len(referee.started) <= 4 and len(counted) == len(referee.started) == store.count()

    asyncio.run(main())


def test_two_players_waiting_to_ask_stop_for_the_last_game_do_not_both_take_it(tmp_path: Path) -> None:
    """Both players wait (to ask ``stop``) for the writer to count their games, with one game left: the first to
    wake takes it, the other finds nothing left and ends. Seen in the suite: the gate died with
    ``IndexError: pop from empty list``, its last game taken while the other player waited."""
    todo = _games(3)

    async def main() -> None:
        with Store(tmp_path / "out") as store:
            writer = _HeldStore(store)
            referee = _Referee(held=todo[:2])
            counted: list[str] = []
            task = _run(todo, referee, writer, 2, counted, stop=lambda: False)
            await _until(lambda: len(referee.started) == 2)
            referee.held[todo[0]].set()
            assert await asyncio.to_thread(writer.entered.wait, WAIT_S)  # game 0's commit runs (held)
            referee.held[todo[1]].set()
            await referee.finished[todo[1]].wait()  # both players now wait for every game to be counted
            writer.release.set()
            assert await asyncio.wait_for(task, WAIT_S) == 3
            assert referee.started == todo and sorted(counted) == sorted(g.key for g in todo)

    asyncio.run(main())
