"""The fixed-size numeric observation and the discrete action enumeration.

Everything here is built from a seat's :class:`~skyjo_bot.types.View` and
nothing else, so an observation holds exactly what the referee would show
that seat (hidden cards stay hidden). docs/learning.md lists every field.

Seats are encoded in *relative* order: block 0 is the observing seat, block 1
the seat after it (the next to play), and so on; a policy learned in one seat
plays in any seat.

Speed: a step builds one observation, so :class:`ObservationEncoder` keeps,
per observing seat, a preallocated ``float32`` buffer and rewrites only the
grid blocks whose :class:`~skyjo_bot.types.Grid` object changed (the engine
keeps a grid's object until that grid changes); the returned array is a copy.
"""

from __future__ import annotations

from array import array
from typing import Final

import numpy as np
import numpy.typing as npt
from skyjo_bot.types import (
    CARD_VALUES,
    DECK_COUNTS,
    GRID_SIZE,
    Action,
    DecisionKind,
    FinisherPenalty,
    Grid,
    Rules,
    SlotState,
    View,
)

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

_MASKS: dict[tuple[Action, ...], npt.NDArray[np.int8]] = {}


def action_mask(legal: tuple[Action, ...]) -> npt.NDArray[np.int8]:
    """A fresh ``int8`` array of :data:`NUM_ACTIONS`: 1 where the action is legal."""
    mask = _MASKS.get(legal)
    if mask is None:
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        for action in legal:
            mask[ACTION_INDEX[action]] = 1
        mask.flags.writeable = False
        if len(_MASKS) < 4096:  # a game sees few distinct legal sets
            _MASKS[legal] = mask
    return mask.copy()


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


_HIDDEN: Final = SlotState.HIDDEN
_REMOVED: Final = SlotState.REMOVED
_DECISION_CODES: Final = {d: array("f", [float(d is e) for e in DECISIONS]) for d in DECISIONS}
_UNSEEN_AT: Final = 4 + 9  # offset of the unseen counts in the table part
_HIDDEN_COUNT_AT: Final = 3 * GRID_SIZE  # offsets inside a grid block
_REVEALED_SUM_AT: Final = 3 * GRID_SIZE + 1


class ObservationEncoder:
    """Encodes views of one game table into observation vectors, fast (see the module docstring).

    One encoder per environment, fed the views of one game in order (call
    :meth:`reset` for a new game); :meth:`encode` gives the same vector as
    :func:`encode_view` (a test checks it at every step of many games).

    What it keeps between views: per seat, the last :class:`Grid` seen and its
    block (patched slot by slot when the grid object changes); the count of
    cards not visible on the table (the deck minus the discard pile and every
    revealed card, updated as those change); per observing seat, a float32
    buffer with its seats' blocks in its own relative order.
    """

    def __init__(self, num_players: int, rules: Rules) -> None:
        self.num_players = num_players
        self.size = observation_size(num_players)
        self._rules = array("f", _rules_part(rules))
        self._seat_start = TABLE_SIZE
        self._grid_start = TABLE_SIZE + num_players * SEAT_SIZE
        self._orders = [tuple((seat + k) % num_players for k in range(num_players)) for seat in range(num_players)]
        self.reset()

    def reset(self) -> None:
        """Forget everything cached (call when a new game starts)."""
        n = self.num_players
        self._buffers = [np.zeros(self.size, dtype=np.float32) for _ in range(n)]
        self._views = [b.data.cast("B").cast("f") for b in self._buffers]
        for mv in self._views:
            at = _UNSEEN_AT + _NUM_VALUES
            mv[at : at + len(self._rules)] = self._rules
        self._encoded: list[list[Grid | None]] = [[None] * n for _ in range(n)]  # per observer, per relative seat
        self._grids: list[Grid | None] = [None] * n  # per seat, the grid its block holds
        self._blocks = [array("f", [0.0] * GRID_BLOCK) for _ in range(n)]
        self._unseen = array("f", [float(c) for c in _DECK])  # deck - discard pile - revealed cards
        self._discard: tuple[int, ...] = ()
        self._seats: list[tuple[tuple[int, ...], int | None, int | None] | None] = [None] * n

    def _absorb(self, seat: int, grid: Grid) -> None:
        """Patch ``seat``'s block (and the unseen counts) for its new grid, slot by slot."""
        old = self._grids[seat]
        block = self._blocks[seat]
        unseen = self._unseen
        old_states = old.states if old is not None else (None,) * GRID_SIZE
        old_values = old.values if old is not None else (None,) * GRID_SIZE
        p = 0
        for state, value, old_state, old_value in zip(grid.states, grid.values, old_states, old_values):
            if state is not old_state or value != old_value:
                at = 3 * p
                if old_value is not None:
                    unseen[old_value + _VALUE_OFFSET] += 1
                    block[_REVEALED_SUM_AT] -= old_value
                if old_state is _HIDDEN:
                    block[_HIDDEN_COUNT_AT] -= 1
                if state is _HIDDEN:
                    block[at] = 1.0
                    block[at + 1] = 0.0
                    block[at + 2] = 0.0
                    block[_HIDDEN_COUNT_AT] += 1
                elif state is _REMOVED:
                    block[at] = 0.0
                    block[at + 1] = 1.0
                    block[at + 2] = 0.0
                else:
                    assert value is not None
                    block[at] = 0.0
                    block[at + 1] = 0.0
                    block[at + 2] = value
                    unseen[value + _VALUE_OFFSET] -= 1
                    block[_REVEALED_SUM_AT] += value
            p += 1
        self._grids[seat] = grid

    def _absorb_discard(self, pile: tuple[int, ...]) -> None:
        before = self._discard
        unseen = self._unseen
        k = len(before)
        if len(pile) >= k and pile[:k] == before:
            for v in pile[k:]:
                unseen[v + _VALUE_OFFSET] -= 1
        elif len(pile) == k - 1 and before[:-1] == pile:
            unseen[before[-1] + _VALUE_OFFSET] += 1
        else:
            for v in before:
                unseen[v + _VALUE_OFFSET] += 1
            for v in pile:
                unseen[v + _VALUE_OFFSET] -= 1
        self._discard = pile

    def encode(self, view: View) -> npt.NDArray[np.float32]:
        """The observation vector of ``view`` (a fresh array)."""
        seat = view.seat
        grids = view.grids
        known = self._grids
        for s, grid in enumerate(grids):
            if grid is not known[s]:
                self._absorb(s, grid)
        pile = view.discard_pile
        if pile is not self._discard:
            self._absorb_discard(pile)
        mv = self._views[seat]
        encoded = self._encoded[seat]
        order = self._orders[seat]
        blocks = self._blocks
        at = self._grid_start
        for k, s in enumerate(order):
            grid = grids[s]
            if encoded[k] is not grid:
                mv[at : at + GRID_BLOCK] = blocks[s]
                encoded[k] = grid
            at += GRID_BLOCK
        mv[0:4] = _DECISION_CODES[view.decision]
        hand = view.hand
        finisher = view.finisher
        mv[4:13] = array(
            "f",
            (
                1.0 if view.legal_actions else 0.0,
                0.0 if hand is None else 1.0,
                hand or 0,
                1.0 if pile else 0.0,
                pile[-1] if pile else 0,
                view.draw_pile_size,
                len(pile),
                view.round,
                0.0 if finisher is None else 1.0,
            ),
        )
        mv[_UNSEEN_AT : _UNSEEN_AT + _NUM_VALUES] = self._unseen
        if hand is not None:
            mv[_UNSEEN_AT + _VALUE_OFFSET + hand] -= 1
        seats = (view.totals, finisher, view.starter)
        if seats != self._seats[seat]:  # totals, finisher and starter change a few times a round
            self._seats[seat] = seats
            totals, _, starter = seats
            at = self._seat_start
            for s in order:
                mv[at] = totals[s]
                mv[at + 1] = 1.0 if finisher == s else 0.0
                mv[at + 2] = 1.0 if starter == s else 0.0
                at += 3
        return self._buffers[seat].copy()
