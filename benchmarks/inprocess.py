"""In-process Skyjo games for the rating and seating benchmarks: engine and bots in one process, no gRPC.

A bot is a name (:func:`make`):

- ``greedy``, ``random``: the built-in bots (:mod:`skyjo_ref.bots`);
- ``minimal``, ``strong``: ``examples/python/minimal_bot.py`` and
  ``strong_bot.py``, loaded in-process by the SDK's loader;
- ``epsNN``: greedy with ``NN``% of its decisions uniformly random;
- ``leaky``: greedy with half its decisions random (it throws good cards away);
- ``scavenger``: greedy that takes any discard worth 3 or less.

A game is seeded by ``(tag, deal)`` (:func:`~skyjo_ref.match.schedule.deal_seed`),
so every seating of a deal is dealt the same cards; a bot's own randomness is
seeded by tag, deal, seat and name.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from skyjo_bot import Action, Bot, View
from skyjo_bot.loader import load_bot
from skyjo_bot.types import DecisionKind
from skyjo_ref.bots import GreedyBot, make_builtin
from skyjo_ref.bots.greedy import best_placement
from skyjo_ref.match.schedule import deal_seed
from skyjo_ref.rules.engine import Game
from skyjo_ref.seating import design, seat_order

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "python"

#: The built-in and example bots, strongest first by their measured Elo, then epsilon-greedy fillers.
REAL_FIELD = ("strong", "greedy", "minimal", "random", "eps10", "eps20", "eps30", "eps50", "eps70")


class Variant(Bot):
    """Greedy with a twist: random decisions (``epsilon``) and/or eager discard taking (``take_at``)."""

    def __init__(self, epsilon: float, take_at: int | None, seed: str) -> None:
        super().__init__()
        self.epsilon = epsilon
        self.take_at = take_at
        self.rng = random.Random(seed)
        self.greedy = GreedyBot()

    def decide(self, view: View) -> Action:
        if self.epsilon and self.rng.random() < self.epsilon:
            return self.rng.choice(view.legal_actions)
        top = view.discard_top
        if self.take_at is not None and view.decision is DecisionKind.DRAW_OR_TAKE:
            if top is not None and top <= self.take_at:
                return Action.take()
        if self.take_at is not None and view.decision is DecisionKind.SWAP_AFTER_TAKE and view.hand is not None:
            return Action.swap(-best_placement(view, view.hand)[1])
        return self.greedy.decide(view)


@cache
def example_class(stem: str) -> type[Bot]:
    """The bot class of ``examples/python/<stem>.py``, loaded once."""
    return type(load_bot(str(EXAMPLES / f"{stem}.py")))


def make(name: str, seed: str) -> Bot:
    """A fresh bot by name (see the module docstring)."""
    if name in ("minimal", "strong"):
        return example_class(f"{name}_bot")()
    if name == "random":
        return make_builtin("random", seed)
    if name == "greedy":
        return Variant(0.0, None, seed)  # plays exactly as the built-in greedy
    if name == "leaky":
        return Variant(0.5, None, seed)
    if name == "scavenger":
        return Variant(0.0, 3, seed)
    if name.startswith("eps") and name[3:].isdigit():
        return Variant(int(name[3:]) / 100, None, seed)
    raise KeyError(f"no benchmark bot {name!r}")


@cache
def play(bots: tuple[str, ...], deal: int, tag: str) -> tuple[int, ...]:
    """Ranks by seat (1 best, ties equal) of one game with ``bots`` in seat order on deal ``deal``.

    Games are deterministic, so they are cached: a seating that two designs share is played once.
    """
    game = Game(len(bots), seed=deal_seed(tag, deal), record_events=False)
    players = [make(name, f"{tag}/{deal}/{seat}/{name}") for seat, name in enumerate(bots)]
    while not game.over:
        seat = game.current_seat
        assert seat is not None
        game.apply(players[seat].decide(game.view(seat)))
    assert game.ranks is not None
    return tuple(game.ranks)


def play_block(table: Sequence[str], deal: int, kind: str, tag: str) -> list[list[tuple[str, int]]]:
    """One duplicate block: ``table`` (in this order) on one deal in every seating of design ``kind``.

    Each game is ``[(bot, rank), ...]`` in seat order.
    """
    k = len(table)
    out = []
    for index in design(k, kind):
        seats = tuple(table[i] for i in seat_order(k, index))
        out.append(list(zip(seats, play(seats, deal, tag))))
    return out


def share_beaten(game: Sequence[tuple[str, int]]) -> dict[str, float]:
    """Each bot's share of the others it finished ahead of in one game (a tie counts half)."""
    k = len(game)
    return {
        bot: sum(1.0 if rank < r else 0.5 if rank == r else 0.0 for other, r in game if other != bot) / (k - 1)
        for bot, rank in game
    }
