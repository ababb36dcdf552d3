"""Seat designs: in which orders a table of ``k`` bots plays one deal (a duplicate block).

A game's key ``table/deal/rotation`` names a seating by its index in this
module's fixed list for ``k`` players (:func:`seat_order`), so a key alone says
who sat where, whatever config played it. Two designs choose indices from it:

- ``rotations``: the ``k`` cyclic rotations of the sorted table (indices
  ``0 .. k-1``). Every bot sits in every seat once, but the order around the
  table never changes: the same bot always plays right after the same other
  bot (and sees, and may take, its discards).
- ``balanced``: every bot sits in every seat equally often **and** every
  ordered pair of bots is neighbours (one directly after the other, the last
  seat followed by the first) equally often. Seat balance needs a multiple of
  ``k`` games, neighbour balance (``k`` neighbour pairs a game, ``k(k-1)``
  ordered pairs) a multiple of ``k - 1``: so ``k(k-1)`` games at least, and
  every design here has exactly that many. Where the ``k(k-1)`` ordered pairs
  split into ``k - 1`` orders around the table (every ``k`` but 4 and 6,
  Tillson 1980), those orders are played in their ``k`` rotations: at prime
  ``k`` the orders ``(0, d, 2d, ...) mod k``, at 8 a decomposition found by
  search; the first order is the sorted table, so the balanced design
  contains the rotations design. At 4 and 6 no such split exists (checked
  exhaustively at 4 in the tests). At 6 the design (indices 6 to 35) uses ten
  orders around the table, each in half of its rotations, chosen so that seats
  still balance. At 4 the design is 12 distinct seatings (indices 16 to 27;
  the first in order of 48 that balance seats and neighbours, found by an
  exhaustive search that the tests repeat): no seating repeats inside a block,
  so deterministic bots never replay a game. Indices 4 to 15 are the earlier
  4-player design, which played (2, 0, 3, 1) and (3, 1, 0, 2) twice a block;
  they stay, so the games stored under it keep their meaning.

Every block at every size seats the table in distinct orders (tested).

The lists are data: they never change (a stored game's seats depend on them;
tests/test_seating.py pins them and checks every design by counting).
"""

from __future__ import annotations

from functools import cache
from typing import Final, Literal

SeatingKind = Literal["rotations", "balanced"]
SEATINGS: Final = ("rotations", "balanced")

#: The base orders of the decomposition at 8 players (each in its 8 rotations).
_EIGHT: Final = (
    (0, 1, 2, 3, 4, 5, 6, 7),
    (0, 2, 7, 6, 3, 5, 4, 1),
    (0, 3, 7, 1, 5, 2, 6, 4),
    (0, 4, 6, 1, 7, 5, 3, 2),
    (0, 5, 7, 4, 2, 1, 3, 6),
    (0, 6, 2, 5, 1, 4, 7, 3),
    (0, 7, 2, 4, 3, 1, 6, 5),
)
#: The balanced seatings at 4 players (after the 4 rotations): each of the 6 orders around the table twice.
_FOUR: Final = (
    (0, 2, 1, 3),
    (0, 3, 2, 1),
    (1, 3, 2, 0),
    (2, 0, 3, 1),
    (3, 1, 0, 2),
    (2, 0, 3, 1),
    (3, 1, 0, 2),
    (3, 2, 1, 0),
    (1, 3, 0, 2),
    (0, 1, 2, 3),
    (2, 0, 1, 3),
    (1, 2, 3, 0),
)
#: The balanced seatings at 6 players (after the 6 rotations): 10 orders around the table, 3 rotations each.
_SIX: Final = (
    (1, 2, 4, 5, 3, 0),
    (4, 5, 3, 0, 1, 2),
    (3, 0, 1, 2, 4, 5),
    (0, 1, 2, 3, 5, 4),
    (2, 3, 5, 4, 0, 1),
    (5, 4, 0, 1, 2, 3),
    (2, 1, 3, 4, 5, 0),
    (3, 4, 5, 0, 2, 1),
    (5, 0, 2, 1, 3, 4),
    (2, 5, 4, 3, 1, 0),
    (4, 3, 1, 0, 2, 5),
    (1, 0, 2, 5, 4, 3),
    (3, 2, 4, 1, 5, 0),
    (4, 1, 5, 0, 3, 2),
    (5, 0, 3, 2, 4, 1),
    (0, 3, 5, 1, 4, 2),
    (5, 1, 4, 2, 0, 3),
    (4, 2, 0, 3, 5, 1),
    (4, 2, 5, 3, 1, 0),
    (5, 3, 1, 0, 4, 2),
    (1, 0, 4, 2, 5, 3),
    (0, 4, 1, 5, 2, 3),
    (1, 5, 2, 3, 0, 4),
    (2, 3, 0, 4, 1, 5),
    (0, 5, 2, 1, 3, 4),
    (2, 1, 3, 4, 0, 5),
    (3, 4, 0, 5, 2, 1),
    (0, 5, 1, 4, 3, 2),
    (1, 4, 3, 2, 0, 5),
    (3, 2, 0, 5, 1, 4),
)
#: The balanced seatings at 4 players (indices 16 to 27): 12 distinct orders, every bot in every seat 3 times,
#: every ordered pair neighbours 4 times.
_FOUR_DISTINCT: Final = (
    (0, 1, 2, 3),
    (0, 1, 3, 2),
    (0, 2, 1, 3),
    (1, 0, 2, 3),
    (1, 0, 3, 2),
    (1, 3, 0, 2),
    (2, 0, 3, 1),
    (2, 3, 0, 1),
    (2, 3, 1, 0),
    (3, 1, 2, 0),
    (3, 2, 0, 1),
    (3, 2, 1, 0),
)
#: Where the balanced design starts in :func:`seat_orders`, where it does not start at 0.
_BALANCED_START: Final = {4: 4 + len(_FOUR), 6: 6}
MIN_K: Final = 2
MAX_K: Final = 8


def _rotations(order: tuple[int, ...]) -> list[tuple[int, ...]]:
    """``order`` in its ``k`` rotations: rotation ``r`` seats ``order[r], order[r+1], ...``."""
    return [order[r:] + order[:r] for r in range(len(order))]


@cache
def seat_orders(k: int) -> tuple[tuple[int, ...], ...]:
    """Every seating index's order for ``k`` players: entry ``i`` lists, seat by seat, positions in the table."""
    if not MIN_K <= k <= MAX_K:
        raise ValueError(f"a table seats {MIN_K} to {MAX_K} players, got {k}")
    identity = tuple(range(k))
    if k == 4:
        return (*_rotations(identity), *_FOUR, *_FOUR_DISTINCT)
    if k == 6:
        return (*_rotations(identity), *_SIX)
    if k == 8:
        bases: tuple[tuple[int, ...], ...] = _EIGHT
    else:  # prime k: (0, d, 2d, ...) mod k, d = 1 .. k-1 (d = 1 is the sorted table)
        bases = tuple(tuple(d * i % k for i in range(k)) for d in range(1, k))
    return tuple(order for base in bases for order in _rotations(base))


def design(k: int, kind: str) -> range:
    """The seating indices of one duplicate block of a ``k`` table under design ``kind``."""
    if kind == "rotations":
        return range(k)
    if kind == "balanced":
        start = _BALANCED_START.get(k, 0)
        return range(start, start + k * (k - 1))
    raise ValueError(f"unknown seating {kind!r}: expected one of {', '.join(SEATINGS)}")


def block_size(k: int, kind: str) -> int:
    """Games per table and deal under design ``kind``."""
    return len(design(k, kind))


def seat_order(k: int, index: int) -> tuple[int, ...]:
    """The order of seating ``index`` (see :func:`seat_orders`)."""
    orders = seat_orders(k)
    if not 0 <= index < len(orders):
        raise ValueError(f"seating {index} does not exist at {k} players: expected 0 to {len(orders) - 1}")
    return orders[index]
