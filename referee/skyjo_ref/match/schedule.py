"""Which deal, which seats and which bot seeds a game of a match uses.

Everything follows from the match seed by hashing, so a match replays exactly
for a seed. Deal seeds and bot seeds come from separate hash domains: a bot's
own seed tells it nothing about the deck.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


def _digest(*parts: object) -> str:
    text = "/".join(str(p) for p in parts)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def deal_seed(match_seed: str, deal: int) -> str:
    """The seed of deal ``deal`` of a match (fed to :class:`SeededDealer`)."""
    return _digest("skyjo-ref", "deal", match_seed, deal)[:32]


def bot_seed(match_seed: str, game: int, slot: int) -> int:
    """The seed for a built-in bot in seat slot ``slot`` of game ``game`` (never a deal seed)."""
    return int(_digest("skyjo-ref", "bot", match_seed, game, slot)[:16], 16)


@dataclass(frozen=True, slots=True)
class GamePlan:
    """Game ``game`` plays deal ``deal``; ``slots[seat]`` is the match slot sitting in ``seat``."""

    game: int
    deal: int
    rotation: int
    slots: tuple[int, ...]


def plan_game(game: int, num_seats: int, rotate_seats: bool) -> GamePlan:
    """Without rotation game g plays deal g, slot k in seat k. With rotation game g plays
    deal g // n in rotation r = g % n: slot k sits in seat (k + r) % n, so over n games
    every slot plays every seat on the same cards (duplicate format)."""
    if not rotate_seats:
        return GamePlan(game, game, 0, tuple(range(num_seats)))
    deal, rotation = divmod(game, num_seats)
    slots = tuple((seat - rotation) % num_seats for seat in range(num_seats))
    return GamePlan(game, deal, rotation, slots)
