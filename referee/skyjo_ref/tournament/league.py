"""Which tables a league plays: every table (round robin), challengers against the field (gauntlet), or a sample.

Whatever the kind, a game is still ``(table, deal, rotation)`` (:class:`~.schedule.GameId`): every
table plays every deal in every cyclic rotation of its seats, so each bot sits in each seat once per
duplicate block, whatever tables were chosen. The kinds only choose the tables, which is why the
store's fingerprint leaves the kind out: a gauntlet's or a sample's games are round-robin games.

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

from skyjo_ref.tournament.schedule import GameId, tables

#: The schedule kinds a config may name.
SCHEDULE_KINDS: Final = ("round_robin", "gauntlet", "sampled")


class ScheduleError(ValueError):
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
    raise ScheduleError(f"unknown schedule {kind!r}: expected one of {', '.join(SCHEDULE_KINDS)}")


def league_games(table_list: Iterable[tuple[str, ...]], players_per_game: int, deals: int) -> list[GameId]:
    """All games of these tables, deal by deal (as :func:`.schedule.schedule` orders a round robin)."""
    ordered = sorted(table_list)
    return [
        GameId(table, deal, rotation)
        for deal in range(deals)
        for table in ordered
        for rotation in range(players_per_game)
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
    counts: a seeded local search moves one point of one base table at a time.

    The design grows point by point so that adding a bot keeps most tables: every base table
    lies within half the circle (its points in ``0 .. n // 2``), so its distances mean the same
    on ``Z_{n+1}``, and the design of ``n`` points starts from the base tables of ``n - 1``
    points (repairing as few of them as it can); a turn of an unchanged base table that does not
    pass point ``n - 1`` is the same table on both circles. The chain starts where a design
    first exists. None when no design below the round robin's size is found for ``n``.
    """
    grown: list[tuple[int, ...]] | None = None
    if k <= GROWN_PLAYERS:
        for points in range(_first_grown(k), n + 1):
            grown = _grown_design(points, k, meetings, seed, grown)
    if grown is not None:
        return grown
    # more players, or no design within half circles (too few points): any cyclic design
    classes = n // 2
    weight = [0] + [2 if 2 * d == n else 1 for d in range(1, classes + 1)]
    rng = random.Random(f"{seed}/cyclic/{n}/{k}/{meetings}")
    count = max(1, math.ceil(meetings * classes / math.comb(k, 2)))
    everything = math.comb(n, k)
    while count * n < everything:
        found = _cyclic_search(n, k, meetings, count, weight, rng, within_half=False)
        if found is not None:
            return found
        count += 1
    return None


#: The most players per table for which designs grow point by point. Above it the few base tables
#: leave the half-circle search too little slack: the chain breaks often and each break costs a
#: whole search budget (100 bots at 8 players took 20 s), so those designs are built afresh.
GROWN_PLAYERS: Final = 5


def _first_grown(k: int) -> int:
    """Where the grown designs start: a half circle of ``C(k, 2) / 2`` distances, room for a table's pairs."""
    return max(2 * k - 2, math.comb(k, 2) + 1)


def _grown_design(
    n: int, k: int, meetings: int, seed: int | str, previous: Sequence[tuple[int, ...]] | None
) -> list[tuple[int, ...]] | None:
    """The base tables for ``n`` points, from ``previous`` (those of ``n - 1`` points) where possible."""
    if meetings > full_meetings(n, k):
        return None
    classes = n // 2
    weight = [0] + [2 if 2 * d == n else 1 for d in range(1, classes + 1)]
    rng = random.Random(f"{seed}/cyclic/{n}/{k}/{meetings}")
    everything = math.comb(n, k)
    kept = list(previous or ())
    fewest = max(1, math.ceil(meetings * classes / math.comb(k, 2)), len(kept))
    for count in range(fewest, fewest + 2):  # bounded: a circle without one falls back (cyclic_blocks)
        if count * n >= everything:
            break
        found = _cyclic_search(n, k, meetings, count, weight, rng, kept)
        if found is not None:
            return found
    return None


def _cyclic_search(
    n: int,
    k: int,
    meetings: int,
    count: int,
    weight: Sequence[int],
    rng: random.Random,
    kept: Sequence[tuple[int, ...]] = (),
    *,
    within_half: bool = True,
) -> list[tuple[int, ...]] | None:
    """``count`` base tables within half the circle, every distance covered ``L`` or ``L + 1`` times, or None.

    The first base tables are ``kept`` (those of the circle one point smaller): the search
    prefers moves in base tables it has already changed, so most of them stay as they were.
    """
    classes = n // 2
    top = classes if within_half else n - 1
    half = range(1, top + 1)  # the points a base table may use besides 0
    low = max(meetings, count * math.comb(k, 2) // classes)
    dist = [min(i, n - i) for i in range(n)]
    budget = 100 + 20 * classes  # bounded: a miss adds one base table (n tables), never loops
    cover = [0] * (classes + 1)
    blocks = [sorted(block) for block in kept[:count]]
    blocks += [sorted([0, *rng.sample(half, k - 1)]) for _ in range(count - len(blocks))]
    touched = set(range(len(kept), count))  # changed base tables: their old turns are lost anyway
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
        moves: list[tuple[int, int, int]] = []  # (block, leaving, entering)
        # a few base tables, the changed ones first: the moves stay cheap and the kept tables stay
        some = rng.sample(sorted(touched), min(len(touched), 4))
        some += rng.sample([i for i in range(count) if i not in touched], min(count - len(touched), 4 - len(some)))
        if cover[d] < low:  # put a point at distance d from a point of some base table
            for index in some:
                block = blocks[index]
                for anchor in block:
                    for entering in ((anchor + d) % n, (anchor - d) % n):
                        if 0 < entering <= top and entering not in block:
                            moves.extend((index, leaving, entering) for leaving in block if leaving not in (0, anchor))
        else:  # one point of a pair at distance d leaves
            for index, block in enumerate(blocks):  # (every base table: the pair may be in any)
                for a, b in itertools.combinations(block, 2):
                    if dist[(a - b) % n] == d:
                        for leaving in (a, b):
                            if leaving:
                                moves.extend(
                                    (index, leaving, e) for e in rng.sample(half, min(top, 24)) if e not in block
                                )
        if not moves:
            continue
        if len(moves) > 48:  # a seeded share of them: the search needs many cheap steps, not best ones
            moves = rng.sample(moves, 48)
        scored = [
            (
                delta(leaving, entering, [o for o in blocks[i] if o != leaving]),
                i not in touched,
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
        _, _, _, index, leaving, entering = best
        touched.add(index)
        others = [o for o in blocks[index] if o != leaving]
        change(leaving, others, -1)
        change(entering, others, 1)
        blocks[index] = sorted([*others, entering])
    current = len(wrong)
    if current:
        return None
    orbits = set()
    for block in blocks:
        turns = [tuple(sorted((b + t) % n for b in block)) for t in range(n)]
        if len(set(turns)) < n:  # a block equal to one of its own turns would repeat tables
            return None
        orbits.add(min(turns))
    if len(orbits) < count:  # two base tables of one orbit would repeat tables
        return None
    return [tuple(block) for block in blocks]
