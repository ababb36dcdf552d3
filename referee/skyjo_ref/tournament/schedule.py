"""The duplicate round-robin schedule.

Every table (combination) of ``k`` bots plays the same ``D`` deals, each deal
in every seating of a seat design (:mod:`skyjo_ref.seating`: the cyclic
rotations, or the balanced design where every ordered pair of bots is also
neighbours equally often), so every bot sits in every seat on the same cards
and the luck of the deal cancels out.

A game's identity is ``(table, deal, rotation)`` with the table's names sorted:
it depends on nothing else (not on the config's order, not on the other bots),
so a league that grows keeps every stored game and plays only the new ones.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from skyjo_ref.execution.types import GameId as GameId  # the schedule's games (re-exported)
from skyjo_ref.seating import design


def deal_match_seed(seed: int | str, deal: int) -> str:
    """The match seed for deal ``deal``, the same for every table and rotation.

    Each game is a one-game match on the referee with this seed; the referee
    derives the cards from it (``skyjo_ref.match.deal_seed``), so equal match
    seeds mean equal cards.
    """
    return f"{seed}/deal/{deal}"


def tables(bots: Iterable[str], players_per_game: int) -> list[tuple[str, ...]]:
    """Every combination of ``players_per_game`` bots, names sorted, in sorted order."""
    return list(itertools.combinations(sorted(bots), players_per_game))


def schedule(bots: Sequence[str], players_per_game: int, deals: int, seating: str = "rotations") -> list[GameId]:
    """All games, deal by deal: an interrupted run leaves whole deals played across tables.

    Within a deal, the tables come in sorted order and each table's seatings
    together, so the duplicate blocks complete one after another.
    """
    return [
        GameId(table, deal, rotation)
        for deal in range(deals)
        for table in tables(bots, players_per_game)
        for rotation in design(players_per_game, seating)
    ]
