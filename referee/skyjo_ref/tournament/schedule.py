"""The duplicate round-robin schedule.

Every table (combination) of ``k`` bots plays the same ``D`` deals, each deal
in every cyclic rotation of the seats, so every bot sits in every seat on the
same cards and the luck of the deal cancels out.

A game's identity is ``(table, deal, rotation)`` with the table's names sorted:
it depends on nothing else (not on the config's order, not on the other bots),
so a league that grows keeps every stored game and plays only the new ones.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class GameId:
    """One game of the schedule: a table of bots (sorted names), a deal and a seat rotation."""

    table: tuple[str, ...]
    deal: int
    rotation: int

    @property
    def key(self) -> str:
        """The stable text key (``alice+bob+carol/3/1``); bot names never hold ``+`` or ``/``."""
        return f"{'+'.join(self.table)}/{self.deal}/{self.rotation}"

    @property
    def seats(self) -> tuple[str, ...]:
        """Bot names in seat order: the table rotated left by ``rotation``."""
        r = self.rotation
        return self.table[r:] + self.table[:r]

    @property
    def block(self) -> tuple[tuple[str, ...], int]:
        """The duplicate block: a table and a deal, all rotations together."""
        return (self.table, self.deal)

    @classmethod
    def parse(cls, key: str) -> GameId:
        table, deal, rotation = key.split("/")
        return cls(tuple(table.split("+")), int(deal), int(rotation))

    def file_name(self) -> str:
        """``alice+bob__d3_r1.json``; a long table (8 long names) is shortened with a digest of its names."""
        table = "+".join(self.table)
        if len(table) > 150:
            table = f"{table[:100]}~{hashlib.sha256(table.encode()).hexdigest()[:16]}"
        return f"{table}__d{self.deal}_r{self.rotation}.json"


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


def schedule(bots: Sequence[str], players_per_game: int, deals: int) -> list[GameId]:
    """All games, deal by deal: an interrupted run leaves whole deals played across tables.

    Within a deal, the tables come in sorted order and each table's rotations
    together, so the duplicate blocks complete one after another.
    """
    return [
        GameId(table, deal, rotation)
        for deal in range(deals)
        for table in tables(bots, players_per_game)
        for rotation in range(players_per_game)
    ]
