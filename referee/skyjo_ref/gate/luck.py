"""Luck of the cards, measured from a finished game: a control variate for the gate.

Every card a seat sees come out of hiding (drawn from the pile, a hidden grid
card turned, the hidden cards turned at a round's end) was, given everything
public at that moment, a uniform pick from the cards still unseen (before a
reshuffle: the unseen multiset; after one: the rebuilt draw pile for draws and
the unseen multiset for hidden grid cards). So ``expected value - value`` of
each such card has mean zero *whatever the bots do*: summed over a game, a
seat's luck is a martingale with mean 0. A statistic ``score - c * luck`` is
then unbiased for the expected score for any fixed ``c`` — the idea of AIVAT
(Burch et al., 2018, "AIVAT: A New Variance Reduction Technique for Agent
Evaluation in Imperfect Information Games"), with a card-points value
function instead of a learnt one. Positive luck: lower cards than expected.

Pure functions over a replayed game (``records.replay``) or a live ``Game``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from skyjo_bot.types import GRID_SIZE, EventKind

from skyjo_ref import records
from skyjo_ref.rules.engine import Game


@dataclass(frozen=True, slots=True)
class Luck:
    """Per seat: luck of drawn cards and of grid cards turned (card points, + is good luck)."""

    draw: tuple[float, ...]
    reveal: tuple[float, ...]

    def total(self, seat: int) -> float:
        return self.draw[seat] + self.reveal[seat]


class _Pool:
    """A multiset of card values with its running sum (the mean of an unseen card)."""

    def __init__(self, cards: Counter[int]) -> None:
        self.cards = cards
        self.count = sum(cards.values())
        self.total = sum(v * n for v, n in cards.items())

    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    def expect(self, value: Callable[[int], float]) -> float:
        """The mean of ``value(card)`` over the pool."""
        if not self.count:
            return 0.0
        return sum(value(v) * n for v, n in self.cards.items() if n) / self.count

    def take(self, value: int) -> None:
        if self.cards[value] > 0:
            self.cards[value] -= 1
            self.count -= 1
            self.total -= value


def linear(card: int) -> float:
    return float(card)


def game_luck(game: Game, draw_value: Callable[[int], float] = linear) -> Luck:
    """The luck of each seat over a finished game that recorded its events.

    ``draw_value`` maps a drawn card to what it costs its drawer (any fixed
    function keeps the mean at zero)."""
    assert game.events is not None, "the game must record its events"
    n = game.num_players
    draw = [0.0] * n
    reveal = [0.0] * n
    unseen = _Pool(Counter())
    pile: _Pool | None = None  # after a reshuffle: the rebuilt draw pile (known cards, unknown order)
    hidden: list[set[int]] = [set() for _ in range(n)]
    drawn_expected: float | None = None
    drawing_seat = -1
    round_index = -1
    reshuffles = 0
    for event in game.events:
        kind = event.kind
        if kind is EventKind.ROUND_START:
            round_index += 1
            reshuffles = 0
            deck = game.rounds[round_index].deck
            cards = Counter(deck)
            cards[deck[GRID_SIZE * n]] -= 1  # the first discard is face up
            unseen = _Pool(cards)
            pile = None
            hidden = [set(range(GRID_SIZE)) for _ in range(n)]
        elif kind is EventKind.RESHUFFLE:
            pile = _Pool(Counter(game.rounds[round_index].reshuffles[reshuffles]))
            reshuffles += 1
        elif kind is EventKind.DRAW:
            assert event.seat is not None
            drawing_seat = event.seat
            drawn_expected = (pile if pile is not None else unseen).expect(draw_value)
        elif kind in (EventKind.SWAP, EventKind.DISCARD) and drawn_expected is not None:
            assert event.value is not None
            draw[drawing_seat] += drawn_expected - draw_value(event.value)
            (pile if pile is not None else unseen).take(event.value)
            drawn_expected = None
            if kind is EventKind.SWAP:
                _swap_out(event.seat, event.pos, event.replaced, hidden, unseen)
        elif kind is EventKind.SWAP:  # after a take: the card placed was public
            _swap_out(event.seat, event.pos, event.replaced, hidden, unseen)
        elif kind in (EventKind.REVEAL, EventKind.FINAL_REVEAL):
            assert event.seat is not None and event.pos is not None and event.value is not None
            reveal[event.seat] += unseen.mean() - event.value
            unseen.take(event.value)
            hidden[event.seat].discard(event.pos)
    return Luck(tuple(draw), tuple(reveal))


def _swap_out(seat: int | None, pos: int | None, replaced: int | None, hidden: list[set[int]], unseen: _Pool) -> None:
    """A hidden card swapped away is seen (it leaves the unseen pool) but never counts for its seat."""
    assert seat is not None and pos is not None
    if pos in hidden[seat]:
        hidden[seat].discard(pos)
        if replaced is not None:
            unseen.take(replaced)


def record_luck(record: Mapping[str, Any], draw_value: Callable[[int], float] = linear) -> Luck:
    """The luck of each seat of a stored ``skyjo-game/1`` record (replayed through the engine)."""
    return game_luck(records.replay(record), draw_value)
