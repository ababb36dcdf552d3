"""Which tables a league plays: every table (round robin), challengers against the field (gauntlet), or a sample.

Whatever the kind, a game is still ``(table, deal, rotation)`` (:class:`~.schedule.GameId`): every
table plays every deal in every seating of the league's seat design (:mod:`skyjo_ref.seating`), so
each bot sits in each seat equally often per duplicate block, whatever tables were chosen. The kinds
only choose the tables, which is why the store's fingerprint leaves the kind out: a gauntlet's or a
sample's games are round-robin games.

- ``round_robin``: every combination of ``players_per_game`` bots.
- ``gauntlet``: each challenger with every combination of ``players_per_game - 1`` field bots (the
  bots that are not challengers); challengers never share a table.
- ``sampled``: a deterministic sample in which every pair of bots shares at least ``meetings``
  tables and any two pairs' counts differ by at most one: a cyclic design (see
  :func:`sampled_tables` and :func:`cyclic_blocks`).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Iterable, Sequence
from typing import Final

from skyjo_ref.errors import UsageError
from skyjo_ref.seating import design
from skyjo_ref.tournament.schedule import GameId, tables

#: The schedule kinds a config may name.
SCHEDULE_KINDS: Final = ("round_robin", "gauntlet", "sampled", "adaptive")


class ScheduleError(UsageError):
    """Settings for which no schedule of that kind exists; the message says what is possible."""


def league_tables(
    kind: str,
    bots: Sequence[str],
    players_per_game: int,
    *,
    challengers: Sequence[str] = (),
    meetings: int = 1,
    seed: int | str = 0,
) -> list[tuple[str, ...]]:
    """The tables of a league of this kind, names sorted in each table, tables in sorted order."""
    if kind == "round_robin":
        return tables(bots, players_per_game)
    if kind == "gauntlet":
        return gauntlet_tables(bots, challengers, players_per_game)
    if kind == "sampled":
        return sampled_tables(bots, players_per_game, meetings, seed)
    if kind == "adaptive":  # rounds choose their tables as they go (tournament.adaptive); the first uses every pair
        return sampled_tables(bots, players_per_game, 1, seed)
    raise ScheduleError(f"unknown schedule {kind!r}: expected one of {', '.join(SCHEDULE_KINDS)}")


def league_games(table_list: Iterable[tuple[str, ...]], deals: int, seating: str = "rotations") -> list[GameId]:
    """All games of these tables, deal by deal (as :func:`.schedule.schedule` orders a round robin).

    Each table plays each deal in the seatings of ``seating``'s design for its
    size (:func:`skyjo_ref.seating.design`; a table's size is its length).
    """
    ordered = sorted(table_list)
    return [
        GameId(table, deal, rotation)
        for deal in range(deals)
        for table in ordered
        for rotation in design(len(table), seating)
    ]


# ------------------------------------------------------------------------ gauntlet


def gauntlet_tables(bots: Sequence[str], challengers: Sequence[str], players_per_game: int) -> list[tuple[str, ...]]:
    """Each challenger with every combination of ``players_per_game - 1`` field bots, never two challengers."""
    chosen = set(challengers)
    unknown = sorted(chosen - set(bots))
    if unknown:
        raise ScheduleError(f"challengers {', '.join(unknown)} are not bots of the league")
    field = sorted(b for b in bots if b not in chosen)
    if not chosen:
        raise ScheduleError("a gauntlet needs at least one challenger")
    if len(field) < players_per_game - 1:
        raise ScheduleError(
            f"a table is 1 challenger and {players_per_game - 1} field bots, but the field has {len(field)}"
        )
    return sorted(
        tuple(sorted((challenger, *others)))
        for challenger in sorted(chosen)
        for others in itertools.combinations(field, players_per_game - 1)
    )


# ------------------------------------------------------------------------- sampled


def full_meetings(bots: int, players_per_game: int) -> int:
    """How many tables each pair shares in the round robin: ``C(n - 2, k - 2)``."""
    return math.comb(bots - 2, players_per_game - 2)


def min_sample_tables(bots: int, players_per_game: int, meetings: int) -> int:
    """The fewest tables any sample with ``meetings`` per pair can have (a table holds ``C(k, 2)`` pairs)."""
    return math.ceil(meetings * math.comb(bots, 2) / math.comb(players_per_game, 2))


def schonheim_tables(bots: int, players_per_game: int, meetings: int) -> int:
    """A lower bound on a sample's tables: each bot needs ``ceil(meetings (n - 1) / (k - 1))`` tables."""
    per_bot = math.ceil(meetings * (bots - 1) / (players_per_game - 1))
    return max(math.ceil(bots * per_bot / players_per_game), min_sample_tables(bots, players_per_game, meetings))


def _rank(seed: int | str, *names: str) -> bytes:
    """A seeded tie-break that depends on the names only, not on which other bots are in the league."""
    return hashlib.sha256("\x00".join((str(seed), *names)).encode()).digest()[:8]


def sampled_tables(
    bots: Sequence[str], players_per_game: int, meetings: int, seed: int | str = 0
) -> list[tuple[str, ...]]:
    """A sample of tables in which every pair of bots shares ``meetings`` tables or more, all within one.

    A cyclic design (see :func:`cyclic_blocks`): the bots sit on the points of ``Z_n`` in a
    seeded order of their names; ``s`` base tables are found whose differences cover every
    difference ``d`` and ``-d`` mod ``n`` ``L`` or ``L + 1`` times, and each base table is turned
    round the circle (``{b + t mod n}`` for every ``t``). Two bots ``d`` apart then share exactly
    as many tables as the base tables hold pairs at distance ``d``, so every pair's count is
    ``L`` or ``L + 1``. No cyclic design found: the round robin, which is balanced.
    """
    k = players_per_game
    names = sorted(bots)
    n = len(names)
    if len(set(names)) != n:
        raise ScheduleError("bot names must be unique")
    if k < 2 or n < k:
        raise ScheduleError(f"{k} players per table needs at least {k} bots, got {n}")
    if meetings < 1:
        raise ScheduleError(f"meetings must be at least 1, got {meetings}")
    most = full_meetings(n, k)
    if meetings > most:
        raise ScheduleError(
            f"{n} bots at {k} players share at most {most} tables per pair (the whole round robin): "
            f"expected meetings from 1 to {most}"
        )
    everything = math.comb(n, k)
    blocks = cyclic_blocks(n, k, meetings, seed)
    if blocks is None or len(blocks) * n >= everything:
        return tables(names, k)
    points = sorted(names, key=lambda name: (_rank(seed, name), name))  # point i of Z_n is points[i]
    return sorted(tuple(sorted(points[(b + shift) % n] for b in block)) for block in blocks for shift in range(n))


def cyclic_blocks(n: int, k: int, meetings: int, seed: int | str = 0) -> list[tuple[int, ...]] | None:
    """Base tables of ``Z_n`` whose developments give every pair ``L`` or ``L + 1`` tables, ``L >= meetings``.

    A pair of bots at distance ``d`` (``1 <= d <= n // 2``) shares one developed table for each
    pair of a base table at distance ``d``, two for distance ``n / 2`` (the pair is met from
    both ends). So the search is over ``s`` base tables only, its state the ``n // 2`` distance
    counts: a seeded local search moves one point of one base table at a time. ``s`` starts at
    the fewest that can give every distance ``meetings`` and grows when no design is found
    within the budget; None when it reaches the round robin's size.
    """
    classes = n // 2
    weight = [0] + [2 if 2 * d == n else 1 for d in range(1, classes + 1)]
    per_block = math.comb(k, 2)
    rng = random.Random(f"{seed}/cyclic/{n}/{k}/{meetings}")
    count = max(1, math.ceil(meetings * classes / per_block))
    everything = math.comb(n, k)
    while count * n < everything:
        found = _cyclic_search(n, k, meetings, count, weight, rng)
        if found is not None:
            return found
        count += 1
    return None


def _cyclic_search(
    n: int, k: int, meetings: int, count: int, weight: Sequence[int], rng: random.Random
) -> list[tuple[int, ...]] | None:
    """``count`` base tables with every distance covered ``L`` or ``L + 1`` times, or None."""
    classes = n // 2
    low = max(meetings, count * math.comb(k, 2) // classes)
    dist = [min(i, n - i) for i in range(n)]
    budget = 100 + 20 * classes  # bounded: a miss adds one base table (n tables), never loops
    cover = [0] * (classes + 1)
    blocks = [sorted([0, *rng.sample(range(1, n), k - 1)]) for _ in range(count)]
    for block in blocks:
        for a, b in itertools.combinations(block, 2):
            d = dist[(a - b) % n]
            cover[d] += weight[d]

    def off(c: int) -> int:
        return low - c if c < low else c - low - 1 if c > low + 1 else 0

    wrong = {d for d in range(1, classes + 1) if off(cover[d])}

    def change(point: int, others: Sequence[int], step: int) -> None:
        for other in others:
            d = dist[(point - other) % n]
            cover[d] += step * weight[d]
            if off(cover[d]):
                wrong.add(d)
            else:
                wrong.discard(d)

    def delta(leaving: int, entering: int, others: Sequence[int]) -> int:
        """The change of the total distance from the band if ``leaving`` gave its place to ``entering``."""
        moved: dict[int, int] = {}
        for other in others:
            d = dist[(leaving - other) % n]
            moved[d] = moved.get(d, 0) - weight[d]
            d = dist[(entering - other) % n]
            moved[d] = moved.get(d, 0) + weight[d]
        return sum(off(cover[d] + step) - off(cover[d]) for d, step in moved.items())

    for _ in range(budget):
        if not wrong:
            break
        d = rng.choice(sorted(wrong))
        moves = _moves(blocks, d, cover[d] < low, dist, rng)
        if not moves:
            continue
        if len(moves) > 48:  # a seeded share of them: the search needs many cheap steps, not best ones
            moves = rng.sample(moves, 48)
        scored = [
            (
                delta(leaving, entering, [o for o in blocks[i] if o != leaving]),
                rng.getrandbits(20),
                i,
                leaving,
                entering,
            )
            for i, leaving, entering in moves
        ]
        best = min(scored)
        if best[0] > 0 and rng.random() < 0.3:  # stuck: sometimes any of these moves, to get out
            best = rng.choice(scored)
        _, _, index, leaving, entering = best
        others = [o for o in blocks[index] if o != leaving]
        change(leaving, others, -1)
        change(entering, others, 1)
        blocks[index] = sorted([*others, entering])
    if wrong or not _distinct_orbits(blocks, n):
        return None
    return [tuple(block) for block in blocks]


def _moves(
    blocks: list[list[int]], d: int, short: bool, dist: Sequence[int], rng: random.Random
) -> list[tuple[int, int, int]]:
    """Moves (block, leaving, entering) that change how often distance ``d`` is covered: up when ``short``."""
    n, count = len(dist), len(blocks)
    moves: list[tuple[int, int, int]] = []
    some = rng.sample(range(count), min(count, 4))  # a few base tables: the moves stay cheap
    if short:  # put a point at distance d from a point of some base table
        for index in some:
            block = blocks[index]
            for anchor in block:
                for entering in ((anchor + d) % n, (anchor - d) % n):
                    if entering and entering not in block:
                        moves.extend((index, leaving, entering) for leaving in block if leaving not in (0, anchor))
        return moves
    for index, block in enumerate(blocks):  # one point of a pair at distance d leaves (the pair may be in any)
        for a, b in itertools.combinations(block, 2):
            if dist[(a - b) % n] == d:
                for leaving in (a, b):
                    if leaving:
                        moves.extend(
                            (index, leaving, e) for e in rng.sample(range(1, n), min(n - 1, 24)) if e not in block
                        )
    return moves


def _distinct_orbits(blocks: list[list[int]], n: int) -> bool:
    """Whether the base tables' turns never repeat a table (no block equals one of its own turns or another's)."""
    orbits = set()
    for block in blocks:
        turns = [tuple(sorted((b + t) % n for b in block)) for t in range(n)]
        if len(set(turns)) < n:
            return False
        orbits.add(min(turns))
    return len(orbits) == len(blocks)
