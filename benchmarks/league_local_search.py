"""The reference for bench_league.py: the local search that built ``schedule: sampled`` before the cyclic design.

Copied from ``skyjo_ref/tournament/league.py`` as it was (commit 3c75258), unchanged but for
these lines, so the benchmark can time both in the same run. Not used by the product.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Sequence

from skyjo_ref.tournament.league import ScheduleError, full_meetings
from skyjo_ref.tournament.schedule import tables


def min_sample_tables(bots: int, players_per_game: int, meetings: int) -> int:
    """The fewest tables any sample with ``meetings`` per pair can have (a table holds ``C(k, 2)`` pairs)."""
    return math.ceil(meetings * math.comb(bots, 2) / math.comb(players_per_game, 2))


def _rank(seed: int | str, *names: str) -> bytes:
    """A seeded tie-break that depends on the names only, not on which other bots are in the league."""
    return hashlib.sha256("\x00".join((str(seed), *names)).encode()).digest()[:8]


def sampled_tables(
    bots: Sequence[str], players_per_game: int, meetings: int, seed: int | str = 0
) -> list[tuple[str, ...]]:
    """A sample of tables in which every pair of bots shares ``meetings`` tables or more, all within one.

    The design: ``T`` tables, from the fewest that can give every pair ``meetings``
    (:func:`min_sample_tables`) upwards. For a given ``T`` the pair counts must all be ``L`` or
    ``L + 1``, with ``L = floor(T * C(k, 2) / C(n, 2))`` the mean rounded down. A greedy start
    (each table from the least-met pair, then the bots that met its members least) is repaired
    by a seeded local search: take a pair outside ``[L, L + 1]`` and swap one bot of one table
    to move it back, keeping swaps that do not make the total distance worse. Found: that
    sample. Not found within the search budget: one more table. The round robin is balanced, so
    it ends there at worst. A table is never chosen twice; each plays every deal in every
    rotation, so every bot sits in every seat equally often.
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
    count = min_sample_tables(n, k, meetings)
    while count < everything:
        found = _balanced_sample(n, k, count, seed, [_rank(seed, name) for name in names])
        if found is not None:
            return sorted(tuple(names[i] for i in table) for table in found)
        count += max(1, count // 5)
    return tables(names, k)


def _balanced_sample(
    n: int, k: int, count: int, seed: int | str, bot_rank: Sequence[bytes]
) -> list[tuple[int, ...]] | None:
    """``count`` distinct tables whose pair counts are all ``L`` or ``L + 1``, or None if none was found."""
    pairs = math.comb(n, 2)
    low = count * math.comb(k, 2) // pairs
    met = [[0] * n for _ in range(n)]
    sat = [0] * n
    chosen: list[list[int]] = []
    taken: set[tuple[int, ...]] = set()

    def off(c: int) -> int:
        """How far a pair count is from ``[low, low + 1]``."""
        return low - c if c < low else c - low - 1 if c > low + 1 else 0

    def add(table: list[int], step: int) -> None:
        for x, y in itertools.combinations(table, 2):
            met[x][y] += step
            met[y][x] += step
        for member in table:
            sat[member] += step

    # greedy start: each table from the least-met pair, then the bots that met its members least
    for _ in range(count):
        a, b = min(
            itertools.combinations(range(n), 2),
            key=lambda p: (met[p[0]][p[1]], sat[p[0]] + sat[p[1]], bot_rank[p[0]], bot_rank[p[1]]),
        )
        members = [a, b]
        while len(members) < k:
            rest = [c for c in range(n) if c not in members]
            rest.sort(key=lambda c: (max(met[p][c] for p in members), sum(met[p][c] for p in members), sat[c]))
            for c in rest:  # the last member: the best one that makes a table not chosen yet
                if len(members) < k - 1 or tuple(sorted([*members, c])) not in taken:
                    members.append(c)
                    break
            else:
                # every completion is taken: the first table not chosen yet
                spare = next(t for t in itertools.combinations(range(n), k) if t not in taken)
                members = list(spare)
        table = sorted(members)
        chosen.append(table)
        taken.add(tuple(table))
        add(table, 1)

    wrong = {(x, y) for x, y in itertools.combinations(range(n), 2) if off(met[x][y])}
    homes: list[set[int]] = [set() for _ in range(n)]  # the tables each bot sits at
    for index, table in enumerate(chosen):
        for member in table:
            homes[member].add(index)
    rng = random.Random(f"{seed}/sample/{n}/{k}/{count}")
    for _ in range(400 + 20 * count):
        if not wrong:
            return [tuple(t) for t in chosen]
        # a pair out of range; move one bot of one table to bring it back
        x, y = rng.choice(sorted(wrong))
        if rng.random() < 0.5:
            x, y = y, x
        if met[x][y] < low:  # too few meetings: a table with x (not y) takes y instead of someone
            moves = [(i, m, y) for i in homes[x] - homes[y] for m in chosen[i] if m != x]
        else:  # too many: a table with both lets y go for someone else
            moves = [(i, y, c) for i in homes[x] & homes[y] for c in range(n) if c not in chosen[i]]
        scored: list[tuple[int, bytes, int, int, int]] = []
        for index, leave, enter in moves:
            candidate = tuple(sorted([m for m in chosen[index] if m != leave] + [enter]))
            if candidate in taken:
                continue
            delta = 0
            for m in chosen[index]:
                if m != leave:
                    delta += off(met[m][leave] - 1) - off(met[m][leave])
                    delta += off(met[m][enter] + 1) - off(met[m][enter])
            scored.append((delta, rng.randbytes(4), index, leave, enter))
        if not scored:
            continue
        delta, _, index, leave, enter = min(scored)
        if delta > 0 and rng.random() < 0.3:  # stuck: sometimes a random move, to get out
            delta, _, index, leave, enter = rng.choice(scored)
        old = chosen[index]
        new = sorted([m for m in old if m != leave] + [enter])
        others = [m for m in old if m != leave]
        for m in others:
            for a, b, step in ((m, leave, -1), (m, enter, 1)):
                met[a][b] += step
                met[b][a] += step
                pair = (a, b) if a < b else (b, a)
                if off(met[a][b]):
                    wrong.add(pair)
                else:
                    wrong.discard(pair)
        sat[leave] -= 1
        sat[enter] += 1
        homes[leave].discard(index)
        homes[enter].add(index)
        taken.discard(tuple(old))
        taken.add(tuple(new))
        chosen[index] = new
    return [tuple(t) for t in chosen] if not wrong else None
