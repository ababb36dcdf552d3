"""The fixed-size numeric observation and the discrete action enumeration.

An observation holds exactly what the referee would show a seat (hidden
cards stay hidden): :func:`encode_view` defines it from a seat's
:class:`~skyjo_bot.types.View`, field by field. docs/learning.md lists every
field.

Seats are encoded in *relative* order: block 0 is the observing seat, block 1
the seat after it (the next to play), and so on; a policy learned in one seat
plays in any seat.

Speed: the environment builds one observation a step, and building a
``View`` alone costs more than the rest of a step, so :class:`TableEncoder`
(what :class:`~skyjo_ref.env.SkyjoEnv` uses) skips it: it patches one
preallocated ``float32`` buffer from the engine's public events and gathers
it into the observer's order (tests check it equals ``encode_view`` at every
step). Code that has only a view (a bot at the referee) uses :func:`encode_view`.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt
from skyjo_bot.types import (
    CARD_VALUES,
    DECK_COUNTS,
    GRID_SIZE,
    Action,
    DecisionKind,
    Event,
    EventKind,
    FinisherPenalty,
    Grid,
    Rules,
    SlotState,
    View,
)

if TYPE_CHECKING:
    from skyjo_ref.rules.engine import Game

# ---------------------------------------------------------------------------- actions

#: Action index -> action: 0-11 ``swap p``, 12-23 ``reveal p``, 24 ``draw``, 25 ``take``
#: (the order of rlskyjo's Discrete(26), so code written for it maps one to one).
ACTIONS: Final[tuple[Action, ...]] = (
    *(Action.swap(p) for p in range(GRID_SIZE)),
    *(Action.reveal(p) for p in range(GRID_SIZE)),
    Action.draw(),
    Action.take(),
)
NUM_ACTIONS: Final = len(ACTIONS)
#: Action -> its index in :data:`ACTIONS`.
ACTION_INDEX: Final[dict[Action, int]] = {action: i for i, action in enumerate(ACTIONS)}

#: Legal set -> its read-only mask. A legal set is fixed by the decision, which slots are hidden
#: and which columns are removed: a few thousand exist (at most 9**4 grids per decision), so all stay.
_MASKS: dict[tuple[Action, ...], npt.NDArray[np.int8]] = {}
MASK_CACHE_SIZE: Final = 65_536


def shared_action_mask(legal: tuple[Action, ...]) -> npt.NDArray[np.int8]:
    """A read-only ``int8`` array of :data:`NUM_ACTIONS`, 1 where the action is legal, shared by equal legal sets."""
    mask = _MASKS.get(legal)
    if mask is None:
        bits = bytearray(NUM_ACTIONS)
        for action in legal:
            bits[ACTION_INDEX[action]] = 1
        mask = np.frombuffer(bytes(bits), dtype=np.int8)  # over bytes: read-only
        if len(_MASKS) >= MASK_CACHE_SIZE:
            _MASKS.clear()
        _MASKS[legal] = mask
    return mask


def action_mask(legal: tuple[Action, ...]) -> npt.NDArray[np.int8]:
    """A fresh (writable) ``int8`` array of :data:`NUM_ACTIONS`: 1 where the action is legal."""
    return shared_action_mask(legal).copy()


# ------------------------------------------------------------------------ observation

DECISIONS: Final = (
    DecisionKind.OPENING_REVEAL,
    DecisionKind.DRAW_OR_TAKE,
    DecisionKind.SWAP_OR_REVEAL,
    DecisionKind.SWAP_AFTER_TAKE,
)
PENALTIES: Final = (FinisherPenalty.DOUBLE_IF_POSITIVE, FinisherPenalty.DOUBLE, FinisherPenalty.PLUS_10)
_VALUE_OFFSET: Final = -CARD_VALUES[0]  # card value v counts at index v + 2
_NUM_VALUES: Final = len(CARD_VALUES)
_DECK: Final = [DECK_COUNTS[v] for v in CARD_VALUES]
#: The bound of fields with no natural one (totals, round index): far beyond any real game.
BIG: Final = 1e6

#: The table part: (name, width, low, high). Field offsets follow in this order.
TABLE_FIELDS: Final[tuple[tuple[str, int, float, float], ...]] = (
    ("decision", 4, 0, 1),  # one-hot: opening_reveal, draw_or_take, swap_or_reveal, swap_after_take
    ("my_turn", 1, 0, 1),  # 1 when this seat's decision is due
    ("has_hand", 1, 0, 1),  # 1 when this seat holds a drawn or taken card
    ("hand", 1, -2, 12),  # its value (0 without one)
    ("has_discard", 1, 0, 1),  # 1 when the discard pile is not empty
    ("discard_top", 1, -2, 12),  # the top discard's value (0 when empty)
    ("draw_pile_size", 1, 0, 150),
    ("discard_pile_size", 1, 0, 150),
    ("round", 1, 0, BIG),  # 0-based round index
    ("round_finishing", 1, 0, 1),  # 1 once someone revealed their last card (last turns)
    ("unseen", _NUM_VALUES, 0, 15),  # per value -2..12: cards this seat has not seen (hidden slots + draw pile)
    ("column_clear", 1, 0, 1),  # the rules in force...
    ("clear_on_final_reveal", 1, 0, 1),
    ("finisher_penalty", 3, 0, 1),  # one-hot: double_if_positive, double, plus_10
    ("end_score", 1, 1, BIG),
)
#: Per seat, in relative order: (name, width, low, high).
SEAT_FIELDS: Final[tuple[tuple[str, int, float, float], ...]] = (
    ("total", 1, -BIG, BIG),  # game total before this round
    ("is_finisher", 1, 0, 1),  # this seat ended the round
    ("is_starter", 1, 0, 1),  # this seat started (starts) the round's turns
)
#: Per seat, in relative order, the grid: 12 slots of (hidden, removed, value), then two sums.
GRID_FIELDS: Final[tuple[tuple[str, int, float, float], ...]] = (
    *((f"slot{p}", 3, -2, 12) for p in range(GRID_SIZE)),  # hidden 0/1, removed 0/1, value (0 unless revealed)
    ("hidden_count", 1, 0, 12),
    ("revealed_sum", 1, -24, 144),
)
TABLE_SIZE: Final = sum(f[1] for f in TABLE_FIELDS)
SEAT_SIZE: Final = sum(f[1] for f in SEAT_FIELDS)
GRID_BLOCK: Final = sum(f[1] for f in GRID_FIELDS)


def observation_size(num_players: int) -> int:
    """Length of one observation vector: 34 + 41 per player."""
    return TABLE_SIZE + num_players * (SEAT_SIZE + GRID_BLOCK)


def field_offsets(num_players: int) -> dict[str, tuple[int, int]]:
    """Field name -> (start, stop) in the vector; seat fields are ``seat{k}.name`` (k relative)."""
    out: dict[str, tuple[int, int]] = {}
    at = 0
    for name, width, _, _ in TABLE_FIELDS:
        out[name] = (at, at + width)
        at += width
    for k in range(num_players):
        for name, width, _, _ in SEAT_FIELDS:
            out[f"seat{k}.{name}"] = (at, at + width)
            at += width
    for k in range(num_players):
        for name, width, _, _ in GRID_FIELDS:
            out[f"seat{k}.{name}"] = (at, at + width)
            at += width
    return out


def observation_bounds(num_players: int, rules: Rules) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """(low, high) of every field, for a ``gymnasium.spaces.Box``."""
    low: list[float] = []
    high: list[float] = []
    for name, width, lo, hi in TABLE_FIELDS:
        if name == "end_score":
            hi = max(hi, float(rules.end_score))
        low += [lo] * width
        high += [hi] * width
    for fields in (SEAT_FIELDS, GRID_FIELDS):
        for _ in range(num_players):
            for name, width, lo, hi in fields:
                if name.startswith("slot"):
                    low += [0, 0, lo]
                    high += [1, 1, hi]
                else:
                    low += [lo] * width
                    high += [hi] * width
    return np.array(low, dtype=np.float32), np.array(high, dtype=np.float32)


def _grid_block(grid: Grid) -> list[float]:
    """The grid's 38 floats: per slot (hidden, removed, value), then hidden count and revealed sum."""
    block: list[float] = []
    hidden = 0
    total = 0
    for state, value in zip(grid.states, grid.values):
        if state is SlotState.HIDDEN:
            block += (1.0, 0.0, 0.0)
            hidden += 1
        elif state is SlotState.REMOVED:
            block += (0.0, 1.0, 0.0)
        else:
            assert value is not None
            block += (0.0, 0.0, float(value))
            total += value
    block += (float(hidden), float(total))
    return block


def _rules_part(rules: Rules) -> list[float]:
    return [
        float(rules.column_clear),
        float(rules.clear_on_final_reveal),
        *(float(rules.finisher_penalty is p) for p in PENALTIES),
        float(rules.end_score),
    ]


def encode_view(view: View) -> npt.NDArray[np.float32]:
    """The observation vector of ``view``, field by field (the reference the fast encoder is tested against)."""
    n = view.num_players
    order = [(view.seat + k) % n for k in range(n)]
    unseen = view.unseen_cards()
    out: list[float] = [float(view.decision is d) for d in DECISIONS]
    hand = view.hand
    top = view.discard_top
    out += [
        float(bool(view.legal_actions)),
        float(hand is not None),
        float(hand or 0),
        float(top is not None),
        float(top or 0),
        float(view.draw_pile_size),
        float(len(view.discard_pile)),
        float(view.round),
        float(view.finisher is not None),
        *(float(unseen[v]) for v in CARD_VALUES),
        *_rules_part(view.rules),
    ]
    for s in order:
        out += [float(view.totals[s]), float(view.finisher == s), float(view.starter == s)]
    for s in order:
        out += _grid_block(view.grids[s])
    return np.array(out, dtype=np.float32)


_UNSEEN_AT: Final = 4 + 9  # offset of the unseen counts in the table part
_HIDDEN_COUNT_AT: Final = 3 * GRID_SIZE  # offsets inside a grid block
_REVEALED_SUM_AT: Final = 3 * GRID_SIZE + 1


# ------------------------------------------------------------------ the fast path: public events

_EV_REVEAL: Final = EventKind.REVEAL
_EV_FINAL_REVEAL: Final = EventKind.FINAL_REVEAL
_EV_SWAP: Final = EventKind.SWAP
_EV_DISCARD: Final = EventKind.DISCARD
_EV_TAKE: Final = EventKind.TAKE
_EV_COLUMN_CLEARED: Final = EventKind.COLUMN_CLEARED
_EV_DRAW: Final = EventKind.DRAW
#: events after which the whole table is read again (a few per round)
_EV_RESYNC: Final = frozenset({EventKind.ROUND_START, EventKind.ROUND_END, EventKind.RESHUFFLE, EventKind.GAME_END})
_EV_TURNS_START: Final = EventKind.TURNS_START  # the starter flag, and draw_or_take after the opening
_EV_ROUND_FINISHING: Final = EventKind.ROUND_FINISHING  # the finisher flag
_ENGINE_HIDDEN: Final = 0  # the engine's slot states (skyjo_ref.rules.engine): plain ints
_ENGINE_REVEALED: Final = 1
_ENGINE_REMOVED: Final = 2
# offsets of the table's scalars (TABLE_FIELDS), the decision's one-hot first (DECISIONS order)
_DECISION_OPENING_REVEAL: Final = 0
_DECISION_DRAW_OR_TAKE: Final = 1
_DECISION_SWAP_OR_REVEAL: Final = 2
_DECISION_SWAP_AFTER_TAKE: Final = 3
_MY_TURN: Final = 4
_UNSEEN_BASE: Final = _UNSEEN_AT + _VALUE_OFFSET  # the unseen count of value v is at _UNSEEN_BASE + v
_HAS_HAND: Final = 5
_HAND: Final = 6
_HAS_DISCARD: Final = 7
_DISCARD_TOP: Final = 8
_DRAW_SIZE: Final = 9
_DISCARD_SIZE: Final = 10
_ROUND: Final = 11
_FINISHING: Final = 12

#: Set to 1 (or any non-empty value but 0) to run the pure-Python catch-up even where the compiled one is built.
PURE_PYTHON_ENV_VAR: Final = "SKYJO_ENV_PURE_PYTHON"
_NO_EVENTS_LIST: Final = 4  # the compiled Table.sync's flag: game.events is not a list (_fastobs.c)

try:  # the optional compiled catch-up (setup.py builds it where a C compiler is found)
    from skyjo_ref.env import _fastobs
except ImportError:  # pragma: no cover - an install without a compiler
    _fastobs = None  # type: ignore[assignment]
else:
    _fastobs.configure(
        _EV_SWAP,
        _EV_DRAW,
        _EV_TAKE,
        _EV_REVEAL,
        _EV_FINAL_REVEAL,
        _EV_DISCARD,
        _EV_COLUMN_CLEARED,
        _EV_TURNS_START,
        _EV_ROUND_FINISHING,
        _EV_RESYNC,
        DECISIONS,
        tuple(float(c) for c in _DECK),
    )


def compiled_available() -> bool:
    """Whether the compiled catch-up (``skyjo_ref.env._fastobs``) was built and imports."""
    return _fastobs is not None


def pure_python_forced() -> bool:
    """Whether ``SKYJO_ENV_PURE_PYTHON`` asks for the pure-Python encoder (set, not empty, not ``0``)."""
    return os.environ.get(PURE_PYTHON_ENV_VAR, "") not in ("", "0")


class TableEncoder:
    """Observations straight from a :class:`~skyjo_ref.rules.engine.Game`, without building a ``View``.

    The same vectors as ``encode_view(game.view(seat))`` (a test checks it at
    every step of many games, presets and player counts), built from what
    every seat sees: the engine's public events (reveals, swaps, discards,
    takes, column clears, each with the values the table sees) patch one
    float32 buffer laid out in seat order, and a few public counters (pile
    sizes, decision, round, totals) are read from the game. Hidden card values
    are never read: at a round's start, a reshuffle or the game's end the
    table is read again, taking a slot's value only where it is revealed.

    The buffer holds the table as the due seat sees it (its turn flag, the
    card in its hand, that card out of the unseen counts); only what changed
    is written (the decision's one-hot, the hand's unseen count), and a card
    the events show moving from the hand to the table, or from the discard
    pile to the hand, stays counted as seen without being taken out and put
    back. ``observe(game, seat)`` then gathers the buffer into ``seat``'s
    relative order with one numpy indexing (a copy for seat 0: a fresh array;
    the buffer is never handed out) and, for any other seat, takes the turn
    flag and the hand out of that copy.

    Where the optional C extension is built (``skyjo_ref.env._fastobs``), ``self.table``
    does the catch-up, the resync and the seat flags on the same buffer in C; the
    Python methods here are the reference (``pure_python=True`` or
    ``SKYJO_ENV_PURE_PYTHON=1`` run them; tests compare both at every step).
    """

    def __init__(self, num_players: int, rules: Rules, *, pure_python: bool | None = None) -> None:
        """``pure_python``: True runs the Python catch-up (the reference), False the compiled one where built;
        None (default) the compiled one unless ``SKYJO_ENV_PURE_PYTHON`` is set."""
        if pure_python is None:
            pure_python = pure_python_forced()
        n = self.num_players = num_players
        self.size = observation_size(num_players)
        self._rules = tuple(_rules_part(rules))
        self._seat_start = TABLE_SIZE
        self._grid_start = TABLE_SIZE + n * SEAT_SIZE
        self._grid_starts = tuple(self._grid_start + s * GRID_BLOCK for s in range(n))
        orders: list[npt.NDArray[np.intp] | None] = [None]  # seat 0's order is the buffer's own: a copy
        for seat in range(1, n):
            index = list(range(TABLE_SIZE))
            for k in range(n):
                s = (seat + k) % n
                index += range(TABLE_SIZE + s * SEAT_SIZE, TABLE_SIZE + (s + 1) * SEAT_SIZE)
            for k in range(n):
                start = self._grid_starts[(seat + k) % n]
                index += range(start, start + GRID_BLOCK)
            orders.append(np.array(index, dtype=np.intp))
        self._orders = orders
        self._buffer = np.zeros(self.size, dtype=np.float32)
        self._mv = self._buffer.data.cast("B").cast("f")
        self._mv[_UNSEEN_AT + _NUM_VALUES : TABLE_SIZE] = array("f", self._rules)  # fixed: the resyncs keep it
        #: the compiled catch-up's state (it patches the same buffer), or None: pure Python
        self.table = None if pure_python or _fastobs is None else _fastobs.Table(self._mv)
        self._events: list[Event] = []  # the game's events list read so far (never a game's own at first)
        self._seen = 0
        self._hand: int | None = None  # the card in hand the buffer shows (taken out of the unseen counts)

    def _resync(self, game: Game) -> None:
        """Read the whole public table again (hidden values are not read), the decision and the card in hand.

        Every float is written: the vector is built as a list and copied into the buffer at once (a
        few per round, so a fifth of a step's time at 2 players when written field by field).
        """
        out = [0.0] * self.size
        out[DECISIONS.index(game.decision)] = 1.0
        out[_UNSEEN_AT + _NUM_VALUES : TABLE_SIZE] = self._rules
        unseen = [float(c) for c in _DECK]
        discard = game.discard
        for v in discard:
            unseen[v + _VALUE_OFFSET] -= 1
        hand = self._hand = game.hand  # the due seat's card (none after a round's end or the game's)
        if hand is not None:
            out[_HAS_HAND] = 1.0
            out[_HAND] = hand
            unseen[hand + _VALUE_OFFSET] -= 1
        at = self._grid_start
        for states, values in zip(game.states, game.values):
            hidden = 0
            total = 0
            for p, state in enumerate(states):
                if state == _ENGINE_HIDDEN:
                    out[at] = 1.0
                    hidden += 1
                elif state == _ENGINE_REMOVED:
                    out[at + 1] = 1.0
                else:
                    value = values[p]  # revealed: public
                    out[at + 2] = value
                    unseen[value + _VALUE_OFFSET] -= 1
                    total += value
                at += 3
            out[at] = hidden
            out[at + 1] = total
            at += 2
        out[_UNSEEN_AT : _UNSEEN_AT + _NUM_VALUES] = unseen
        out[_MY_TURN] = 0.0 if game.over else 1.0
        out[_HAS_DISCARD] = 1.0 if discard else 0.0
        out[_DISCARD_TOP] = discard[-1] if discard else 0
        out[_DRAW_SIZE] = len(game.draw_pile)
        out[_DISCARD_SIZE] = len(discard)
        out[_ROUND] = len(game.rounds) - 1
        self._write_seats(game, out)
        self._mv[:] = array("f", out)

    def _write_seats(self, game: Game, mv: list[float] | memoryview[float] | None = None) -> None:
        """Totals, finisher and starter flags (they change a few times a round), into ``mv`` or the buffer."""
        if mv is None:
            mv = self._mv
        finisher = game.finisher
        starter = game.starter
        mv[_FINISHING] = 0.0 if finisher is None else 1.0
        at = self._seat_start
        for seat, total in enumerate(game.totals):
            mv[at] = total
            mv[at + 1] = 1.0 if finisher == seat else 0.0
            mv[at + 2] = 1.0 if starter == seat else 0.0
            at += SEAT_SIZE

    def sync(self, game: Game) -> None:
        """Bring the buffer up to date with ``game`` (nothing to do when no event came since the last call)."""
        table = self.table
        if table is not None:
            flags = table.sync(game)
            if flags:
                self.finish_sync(game, flags)
            return
        events = game.events
        if events is not self._events or len(events) != self._seen:
            self._catch_up(game, events)

    def finish_sync(self, game: Game, flags: int) -> None:
        """What the compiled ``table.sync(game)`` leaves to Python (``flags`` not 0): a game without events."""
        if flags & _NO_EVENTS_LIST:
            raise ValueError("TableEncoder needs a game that records its events (record_events=True)")
        raise AssertionError(f"unknown flags {flags} from the compiled catch-up")

    def _catch_up(self, game: Game, events: list[Event] | None) -> None:
        """Apply the events since the last call (a new events list: read the whole table again).

        Each event also sets what it implies for the decision's one-hot and the
        card in hand, so nothing else is read from the game: a draw implies
        swap_or_reveal, a take swap_after_take, a swap or a discard draw_or_take
        (and no card in hand), the turns' start draw_or_take; any other change
        comes with an event that reads the table again. Only a drawn card's
        value is read, from ``game.hand``, once no later event placed it.
        """
        if events is not self._events:
            self._start_events(game, events)
            return
        mv = self._mv
        u = _UNSEEN_BASE
        held = self._hand  # the card in hand the buffer shows, taken out of the unseen counts
        drawn = False  # a card was drawn and not placed yet
        resync = False
        starts = self._grid_starts
        fresh: Sequence[tuple[Any, ...]] = events[self._seen :]  # plain tuples: each kind sets the fields it names
        self._seen = len(events)
        for event in fresh:
            kind = event[0]
            if kind is _EV_SWAP or kind is _EV_DISCARD:  # the card in hand is placed: on the grid, or discarded
                value = event[3]
                if kind is _EV_SWAP:
                    at = starts[event[1]]
                    top = event[4]  # the grid's card the swap sends to the discard pile
                    p = at + 3 * event[2]
                    if mv[p]:  # a hidden card leaves for the discard pile: now seen
                        mv[p] = 0.0
                        mv[at + _HIDDEN_COUNT_AT] -= 1
                        mv[u + top] -= 1
                        mv[at + _REVEALED_SUM_AT] += value
                    else:  # a revealed card moves to the discard pile: still seen
                        mv[at + _REVEALED_SUM_AT] += value - top
                    mv[p + 2] = value
                else:
                    top = value
                if held == value:  # the card in hand leaves it: counted as seen already
                    held = None
                else:
                    mv[u + value] -= 1
                drawn = False
                mv[_HAS_HAND] = 0.0
                mv[_HAND] = 0.0
                mv[_HAS_DISCARD] = 1.0
                mv[_DISCARD_TOP] = top
                mv[_DISCARD_SIZE] += 1
                mv[_DECISION_DRAW_OR_TAKE] = 1.0  # the next turn's decision (after a discard: a reveal first)
                mv[_DECISION_SWAP_OR_REVEAL] = 0.0
                mv[_DECISION_SWAP_AFTER_TAKE] = 0.0
            elif kind is _EV_DRAW:
                mv[_DRAW_SIZE] -= 1
                mv[_DECISION_DRAW_OR_TAKE] = 0.0
                mv[_DECISION_SWAP_OR_REVEAL] = 1.0
                drawn = True
            elif kind is _EV_TAKE:
                value = held = event[3]  # from the discard pile to the due seat's hand: seen all along
                discard = game.discard
                mv[_HAS_HAND] = 1.0
                mv[_HAND] = value
                mv[_HAS_DISCARD] = 1.0 if discard else 0.0
                mv[_DISCARD_TOP] = discard[-1] if discard else 0.0
                mv[_DISCARD_SIZE] -= 1
                mv[_DECISION_DRAW_OR_TAKE] = 0.0
                mv[_DECISION_SWAP_AFTER_TAKE] = 1.0
            elif kind is _EV_REVEAL or kind is _EV_FINAL_REVEAL:
                at = starts[event[1]]
                value = event[3]
                p = at + 3 * event[2]
                mv[p] = 0.0
                mv[p + 2] = value
                mv[at + _HIDDEN_COUNT_AT] -= 1
                mv[at + _REVEALED_SUM_AT] += value
                mv[u + value] -= 1
            elif self._round_event(game, event):
                resync = True
        if resync:
            self._resync(game)
            return
        if drawn:  # the due seat's card in hand: it alone sees it
            held = game.hand
            assert held is not None
            mv[_HAS_HAND] = 1.0
            mv[_HAND] = held
            mv[u + held] -= 1
        self._hand = held

    def _start_events(self, game: Game, events: list[Event] | None) -> None:
        """Follow a new events list (a new game's): read the whole table."""
        if events is None:
            raise ValueError("TableEncoder needs a game that records its events (record_events=True)")
        self._events = events
        self._seen = len(events)
        self._resync(game)

    def _round_event(self, game: Game, event: tuple[Any, ...]) -> bool:
        """An event at most a few times a round (a column cleared, the turns' start, the last turns, a new
        deal...); True when it asks for the whole table to be read again."""
        kind = event[0]
        mv = self._mv
        if kind is _EV_COLUMN_CLEARED:
            at = self._grid_starts[event[1]]
            value = event[3]
            p = at + 3 * event[2]
            for q in (p, p + 12, p + 24):  # the column's three slots, 4 slots of 3 floats apart
                mv[q + 1] = 1.0
                mv[q + 2] = 0.0
            mv[at + _REVEALED_SUM_AT] -= 3 * value
            mv[_HAS_DISCARD] = 1.0
            mv[_DISCARD_TOP] = value
            mv[_DISCARD_SIZE] += 3
        elif kind is _EV_TURNS_START:
            mv[_DECISION_OPENING_REVEAL] = 0.0
            mv[_DECISION_DRAW_OR_TAKE] = 1.0
            self._write_seats(game)
        elif kind is _EV_ROUND_FINISHING:
            self._write_seats(game)
        return kind in _EV_RESYNC

    def observe(self, game: Game, seat: int) -> npt.NDArray[np.float32]:
        """``seat``'s observation vector now (a fresh array); :meth:`SkyjoEnv.observe` does the same inline."""
        self.sync(game)
        order = self._orders[seat]
        out: npt.NDArray[np.float32] = self._buffer.copy() if order is None else self._buffer[order]
        if seat != game.seat or game.over:
            self.hide_turn(out)
        return out

    def hide_turn(self, out: npt.NDArray[np.float32]) -> None:
        """Make ``out`` (a copy of the buffer) a seat's whose decision is not due: no turn, no card in hand."""
        out[_MY_TURN] = 0.0
        hand = self._hand if self.table is None else self.table.held
        if hand is not None:
            out[_HAS_HAND] = 0.0
            out[_HAND] = 0.0
            out[_UNSEEN_BASE + hand] += 1
