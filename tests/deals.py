"""Exact deals and scripted play for rules tests.

A test writes the grids it needs, the discard card and the first cards of
the draw pile; :func:`make_deck` completes the 150-card multiset with the
cards left over, so every scenario is a legal deal and every card is known.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from skyjo_bot.types import DECK_COUNTS, Action, Rules
from skyjo_ref.rules.engine import FixedDealer, Game, RoundLog, SeededDealer


def make_deck(grids: Sequence[Sequence[int]], discard: int, draw: Sequence[int] = ()) -> list[int]:
    """Grids (12 values each, row-major), the discard card and the draw pile's first cards, then the rest."""
    assert all(len(g) == 12 for g in grids)
    head = [v for grid in grids for v in grid] + [discard, *draw]
    left = Counter(DECK_COUNTS)
    left.subtract(head)
    assert all(n >= 0 for n in left.values()), f"too many cards of some value: {-left}"
    return head + sorted(left.elements())


def make_game(
    decks: Sequence[Sequence[int]],
    num_players: int,
    rules: Rules | None = None,
    reshuffles: Sequence[Sequence[Sequence[int]]] = (),
    seed: int = 0,
) -> Game:
    """A game on the given decks; later rounds and missing reshuffles come from a seed."""
    return Game(num_players, rules, dealer=FixedDealer(decks, reshuffles, fallback=SeededDealer(seed)))


def act(game: Game, *texts: str) -> None:
    for text in texts:
        game.apply(Action.parse(text))


def open_all(game: Game, positions: tuple[int, int] = (0, 1)) -> None:
    """Every seat reveals the same two positions, seat 0 first."""
    for _ in range(game.num_players):
        act(game, f"reveal {positions[0]}", f"reveal {positions[1]}")


def hidden(game: Game, seat: int) -> list[int]:
    return list(game.view(seat).my_grid.hidden_positions())


def turn_reveal(game: Game) -> None:
    """Draw, discard it, reveal the lowest hidden position."""
    seat = game.current_seat
    assert seat is not None
    act(game, "draw", f"reveal {hidden(game, seat)[0]}")


def play_round(game: Game, swaps: dict[int, list[int]] | None = None) -> RoundLog:
    """Play the current round to its end: each seat draws and reveals its lowest hidden slot.

    ``swaps[seat]`` lists positions: on each of its first turns that seat
    draws and swaps into the next listed position instead (a turn that
    reveals nothing new when the position is already revealed).
    """
    plan = {seat: list(ps) for seat, ps in (swaps or {}).items()}
    k = game.round_index
    while not game.over and game.round_index == k:
        seat = game.current_seat
        assert seat is not None
        if plan.get(seat):
            act(game, "draw", f"swap {plan[seat].pop(0)}")
        else:
            turn_reveal(game)
    return game.rounds[k]


# Grids used across tests (row-major; no column holds three equal values).
# G_HIGH: opening (0, 1) sums to 23, total 54.
G_HIGH = [12, 11, 1, 2, 3, 4, 1, 2, 3, 4, 5, 6]
# G_LOW: opening sums to 3, total 7.
G_LOW = [1, 2, 0, 0, 1, 2, -1, -1, 2, 1, 0, 0]
# G_MID: opening sums to 1, total 53.
G_MID = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -2]
