"""Seat designs (skyjo_ref.seating): every design checked by counting, at every table size."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from skyjo_ref.execution.types import GameId
from skyjo_ref.seating import SEATINGS, block_size, design, seat_order, seat_orders
from skyjo_ref.tournament.config import load_config
from skyjo_ref.tournament.league import league_games

SIZES = range(2, 9)


def _neighbours(order: tuple[int, ...]) -> list[tuple[int, int]]:
    """Ordered pairs (a, b): b plays directly after a, the last seat followed by the first."""
    return [(order[i], order[(i + 1) % len(order)]) for i in range(len(order))]


@pytest.mark.parametrize("k", SIZES)
def test_every_seating_is_a_permutation_and_the_first_k_are_the_rotations(k: int) -> None:
    orders = seat_orders(k)
    assert all(sorted(order) == list(range(k)) for order in orders)
    identity = tuple(range(k))
    assert [seat_order(k, r) for r in range(k)] == [identity[r:] + identity[:r] for r in range(k)]


@pytest.mark.parametrize("k", SIZES)
def test_the_balanced_design_balances_seats_and_neighbours_in_k_times_k_minus_1_games(k: int) -> None:
    indices = design(k, "balanced")
    orders = [seat_order(k, i) for i in indices]
    assert len(orders) == block_size(k, "balanced") == k * (k - 1)  # the fewest that can balance both
    seats = Counter((bot, seat) for order in orders for seat, bot in enumerate(order))
    assert set(seats) == {(b, s) for b in range(k) for s in range(k)}
    assert set(seats.values()) == {k - 1}  # every bot in every seat k-1 times
    after = Counter(pair for order in orders for pair in _neighbours(order))
    assert set(after) == set(itertools.permutations(range(k), 2))
    assert set(after.values()) == {k}  # every ordered pair neighbours k times


@pytest.mark.parametrize("k", range(3, 9))
def test_rotations_balance_seats_but_not_neighbours(k: int) -> None:
    orders = [seat_order(k, i) for i in design(k, "rotations")]
    assert Counter((b, s) for o in orders for s, b in enumerate(o)) == Counter(
        {(b, s): 1 for b in range(k) for s in range(k)}
    )
    after = Counter(pair for order in orders for pair in _neighbours(order))
    assert len(after) == k  # only the k pairs of the sorted order: (0, 2) is never neighbours
    assert (0, 2) not in after


def test_at_4_no_3_orders_make_every_pair_neighbours_once() -> None:
    """Why 4 (and, by Tillson's theorem, 6) has a design of its own: no decomposition into k-1 orders exists."""
    k = 4
    cycles = [(0, *rest) for rest in itertools.permutations(range(1, k))]
    for chosen in itertools.combinations(cycles, k - 1):
        arcs = {pair for order in chosen for pair in _neighbours(order)}
        assert len(arcs) < k * (k - 1)


def test_the_designs_are_pinned() -> None:
    """A stored game's seats come from these lists: changing one would change what old games mean."""
    assert seat_orders(3) == ((0, 1, 2), (1, 2, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0), (1, 0, 2))
    assert seat_orders(4)[4:7] == ((0, 2, 1, 3), (0, 3, 2, 1), (1, 3, 2, 0))
    assert seat_orders(5)[5] == (0, 2, 4, 1, 3)
    assert seat_orders(6)[6] == (1, 2, 4, 5, 3, 0)
    assert seat_orders(8)[8] == (0, 2, 7, 6, 3, 5, 4, 1)
    assert seat_orders(4)[16:19] == ((0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 1, 3))
    assert [len(seat_orders(k)) for k in SIZES] == [2, 6, 28, 20, 36, 42, 56]


@pytest.mark.parametrize("k", SIZES)
def test_no_seating_repeats_inside_a_balanced_block(k: int) -> None:
    """A repeated seating is a replayed game for deterministic bots: information the block does not gain."""
    orders = [seat_order(k, i) for i in design(k, "balanced")]
    assert len(set(orders)) == len(orders)


def test_the_4_player_design_is_the_first_of_the_48_distinct_balanced_ones() -> None:
    """An exhaustive search over 12 of the 24 seatings: 48 designs balance seats (3 each) and neighbours (4 each)."""
    perms = list(itertools.permutations(range(4)))
    found: list[tuple[tuple[int, ...], ...]] = []

    def extend(start: int, chosen: list[tuple[int, ...]], seats: Counter[tuple[int, int]], after: Counter[Any]) -> None:
        if len(chosen) == 12:
            found.append(tuple(chosen))
            return
        for j in range(start, len(perms)):
            order = perms[j]
            pairs = _neighbours(order)
            if any(seats[(b, s)] >= 3 for s, b in enumerate(order)) or any(after[p] >= 4 for p in pairs):
                continue
            seats.update((b, s) for s, b in enumerate(order))
            after.update(pairs)
            extend(j + 1, [*chosen, order], seats, after)
            seats.subtract((b, s) for s, b in enumerate(order))
            after.subtract(pairs)

    extend(0, [], Counter(), Counter())
    assert len(found) == 48
    assert tuple(seat_order(4, i) for i in design(4, "balanced")) == found[0]


def test_block_sizes() -> None:
    assert [block_size(k, "balanced") for k in SIZES] == [2, 6, 12, 20, 30, 42, 56]
    assert [block_size(k, "rotations") for k in SIZES] == list(SIZES)
    assert SEATINGS == ("rotations", "balanced")


def test_a_game_key_says_who_sat_where() -> None:
    game = GameId(("a", "b", "c", "d"), 3, 4)
    assert game.seats == ("a", "c", "b", "d")
    assert GameId.parse(game.key).seats == game.seats
    assert GameId(("a", "b", "c"), 0, 1).seats == ("b", "c", "a")  # below k: a rotation, as before


def test_a_league_plays_every_table_in_its_design() -> None:
    games = league_games([("a", "b", "c", "d")], 2, "balanced")
    assert len(games) == 2 * 12
    assert len({g.key for g in games}) == 24
    assert {g.block for g in games} == {(("a", "b", "c", "d"), 0), (("a", "b", "c", "d"), 1)}
    assert [g.rotation for g in games[:12]] == list(range(16, 28))


def test_bad_sizes_and_kinds_are_refused() -> None:
    with pytest.raises(ValueError, match="2 to 8 players"):
        seat_orders(9)
    with pytest.raises(ValueError, match="expected one of rotations, balanced"):
        design(3, "random")
    with pytest.raises(ValueError, match="expected 0 to 5"):
        seat_order(3, 6)


def test_a_config_seats_balanced_unless_told(tmp_path: Path) -> None:
    bots = "bots:\n  - {name: a, builtin: greedy}\n  - {name: b, builtin: random}\n  - {name: c, builtin: greedy}\n"
    path = tmp_path / "league.yaml"
    path.write_text(f"players_per_game: 3\ndeals: 2\n{bots}", encoding="utf-8")
    assert load_config(path).seating == "balanced"
    path.write_text(f"players_per_game: 3\ndeals: 2\nseating: rotations\n{bots}", encoding="utf-8")
    assert load_config(path).seating == "rotations"
