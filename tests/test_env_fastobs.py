"""skyjo_ref.env._fastobs, the optional compiled catch-up of the learning environment's encoder: it is
built in this install (so the suite proves the fast path is what runs), it gives the very vectors of the
pure-Python reference at every step, and it refuses events that would write outside its buffer."""

from __future__ import annotations

import gc
import random
import sys

import numpy as np
import pytest
from skyjo_bot.types import PRESETS, Event, EventKind
from skyjo_ref.env import SkyjoEnv, encode_view
from skyjo_ref.env.encoding import ACTION_INDEX, PURE_PYTHON_ENV_VAR, TableEncoder, compiled_available
from skyjo_ref.rules.engine import Game

NOT_BUILT = (
    "skyjo_ref.env._fastobs is not built in this install: the learning environment runs its pure-Python "
    "encoder. Install with a C compiler and Python's headers (Debian: gcc, python3-dev), then "
    "`pip install -e .` again (setup.py builds referee/skyjo_ref/env/_fastobs.c)."
)


def test_the_compiled_catch_up_is_built_and_used_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert compiled_available(), NOT_BUILT
    from skyjo_ref.env import _fastobs

    assert hasattr(_fastobs, "Table")
    monkeypatch.delenv(PURE_PYTHON_ENV_VAR, raising=False)
    assert SkyjoEnv(2)._encoder.table is not None


@pytest.mark.parametrize("value", ["1", "yes"])
def test_the_environment_variable_forces_pure_python(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(PURE_PYTHON_ENV_VAR, value)
    assert SkyjoEnv(2)._encoder.table is None
    assert SkyjoEnv(2, pure_python=False)._encoder.table is not None or not compiled_available()
    monkeypatch.setenv(PURE_PYTHON_ENV_VAR, "0")
    assert (SkyjoEnv(2)._encoder.table is None) is not compiled_available()


@pytest.mark.parametrize("players", range(2, 9))
def test_compiled_and_pure_python_give_the_same_vectors_at_every_step(players: int) -> None:
    # every preset at every player count, both encoders fed the same game, every seat at every step
    assert compiled_available(), NOT_BUILT
    rng = random.Random(players)
    for number, preset in enumerate(PRESETS):
        compiled = SkyjoEnv(players, preset, pure_python=False)
        python = SkyjoEnv(players, preset, pure_python=True)
        seed = 1000 * players + number
        compiled.reset(seed=seed)
        python.reset(seed=seed)
        game = compiled.game
        assert game is not None
        while True:
            observe_all = rng.random() < (0.5 if players <= 4 else 0.2) or game.over
            for agent in compiled.possible_agents if observe_all else [compiled.agent_selection]:
                np.testing.assert_array_equal(
                    compiled.observe(agent)["observation"], python.observe(agent)["observation"]
                )
            if game.over:
                break
            legal = game.legal_actions()
            action = ACTION_INDEX[legal[rng.randrange(len(legal))]]
            compiled.step(action)
            python.step(action)


def _table_over(players: int) -> tuple[TableEncoder, Game]:
    """An encoder with a compiled table in sync with a new game."""
    assert compiled_available(), NOT_BUILT
    game = Game(players, seed=7)
    encoder = TableEncoder(players, game.rules, pure_python=False)
    table = encoder.table
    assert table is not None
    assert table.sync(game) == 0  # a new events list: the whole table read
    assert game.events is not None and table.seen == len(game.events)
    return encoder, game


@pytest.mark.parametrize(
    "event",
    [
        Event(EventKind.REVEAL, seat=2, pos=0, value=3),  # seat out of range for 2 players
        Event(EventKind.REVEAL, seat=-1, pos=0, value=3),
        Event(EventKind.REVEAL, seat=1, pos=12, value=3),  # slot out of range
        Event(EventKind.SWAP, seat=0, pos=1, value=13, replaced=0),  # no such card
        Event(EventKind.SWAP, seat=0, pos=1, value=2, replaced=-3),
        Event(EventKind.COLUMN_CLEARED, seat=1, pos=4, value=2),  # column out of range
        Event(EventKind.DISCARD, seat=0, value=None),
        Event(EventKind.REVEAL, seat=1, pos=2**70, value=3),
    ],
)
def test_an_event_that_would_write_outside_the_buffer_raises_value_error(event: Event) -> None:
    encoder, game = _table_over(2)
    table = encoder.table
    assert table is not None and game.events is not None
    before = encoder._buffer.copy()
    game.events.append(event)
    with pytest.raises(ValueError, match="must be"):
        table.sync(game)
    np.testing.assert_array_equal(encoder._buffer, before)  # checked before anything is written
    game.events.pop()
    assert table.sync(game) == 0  # after an error the next call reads the whole table again
    np.testing.assert_array_equal(encoder._buffer, before)
    np.testing.assert_array_equal(encoder.observe(game, 0), encode_view(game.view(0)))


def test_a_game_that_records_no_events_gets_the_one_line_error() -> None:
    assert compiled_available(), NOT_BUILT
    env = SkyjoEnv(2, pure_python=False)
    env.reset(seed=1)
    assert env.game is not None
    env.game.events = None
    with pytest.raises(ValueError, match="record_events=True"):
        env.observe("player_0")


def test_a_bad_buffer_is_refused() -> None:
    assert compiled_available(), NOT_BUILT
    from skyjo_ref.env._fastobs import Table

    with pytest.raises(ValueError, match="float32"):
        Table(memoryview(bytearray(4 * 75)).cast("f"))  # 34 + 41: one player
    with pytest.raises(ValueError, match="float32"):
        Table(memoryview(bytearray(8 * 116)).cast("d"))
    with pytest.raises(BufferError, match="not writable"):
        Table(memoryview(bytes(4 * 116)).cast("f"))


def test_no_reference_leaks_and_the_buffer_is_released() -> None:
    # whole games through the compiled path (events, resyncs, observe) leave no reference behind on the
    # objects it reads, and a dropped environment releases its buffer
    env = SkyjoEnv(3, pure_python=False)
    encoder = env._encoder
    env.reset(seed=3)
    game = env.game
    assert game is not None and game.events is not None
    rng = random.Random(3)
    env.observe(env.agent_selection)
    watched = (game, game.states, game.values, game.totals, game.discard, game.draw_pile)  # kept for the round
    counts = [sys.getrefcount(obj) for obj in watched]
    for step in range(300):
        if game.finisher is not None:  # before the round ends (a new round makes new lists)
            break
        if step % 7 == 0:
            game.drain_events()  # a new events list: the whole table read again (the resync)
        for agent in env.possible_agents:
            env.observe(agent)
        legal = game.legal_actions()
        env.step(ACTION_INDEX[legal[rng.randrange(len(legal))]])
    assert step > 20
    assert [sys.getrefcount(obj) for obj in watched] == counts
    memory = encoder._mv
    del env, encoder
    gc.collect()
    memory.release()  # raises BufferError while a Table still holds it
