"""Adaptive schedules: play duplicate blocks in rounds, each round where the ranking is still unclear.

A round is planned from the games stored so far and stored in the store *before* it is played (so a resumed
run, a CI matrix's shards and a merge all play the same plan, whatever bots that are not deterministic did):

1. The first round is a sparse, connected design: each bot meets its ``ring`` nearest neighbours on a circle
   of the bots in a seeded order (two players), or a sampled design with every pair once (more players).
2. Every later round fits strengths to the stored games (Bradley-Terry at two players, Plackett-Luce at more,
   as the tables do, with the same prior) with their covariance (the inverse of the likelihood's information),
   and ranks the bots. The
   comparisons that decide the ranking are the neighbouring pairs of the first ``top`` + 1 places (all places
   without ``top``) and, with ``top``, the ``top``-th bot against every bot ranked below ``top`` + 1 (so that
   no uncertain bot further down can be in the top). A comparison is decided when the probability of its
   order, ``Phi(d / sd)``, reaches ``1 - (1 - confidence) / m`` for its ``m`` comparisons (Bonferroni: all of
   them hold together at ``confidence``).
3. Each undecided comparison gets duplicate blocks of its own table (the two bots, filled up with the bots
   ranked nearest to them at more players), on fresh deals: about half the blocks a normal approximation says
   it still needs, at least 1 and at most ``max_blocks_per_pair`` a round.
4. The schedule stops when every comparison is decided, or when ``max_games`` would be exceeded (a round is
   cut to fit the budget; a round that cannot hold a block ends the schedule, and :func:`stop_reason` names
   the orders left undecided).

The plan of round ``r`` is a list of duplicate blocks ``(table, deal)``; a table's deals are numbered from 0
across the rounds, so a block is a normal game slot (``GameId``) and the store, shards and merge treat it
like any other.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Final

from skyjo_ref.seating import design
from skyjo_ref.stats import bradley_terry as elo
from skyjo_ref.stats import plackett_luce
from skyjo_ref.tournament.league import sampled_tables
from skyjo_ref.tournament.schedule import GameId

#: The virtual drawn games per pair the fit adds (the tables' prior: see elo.py).
PRIOR = 1.0
#: The default budget: on simulated 2-player leagues of 12 and 24 bots evenly spread over 600 Elo (26-54 Elo
#: between neighbours), deciding the whole order took at most 5,660 and 53,560 games (docs/tournaments.md).
DEFAULT_MAX_GAMES: Final = 60_000


@dataclass(frozen=True, slots=True)
class AdaptiveSettings:
    """``adaptive:`` in a tournament config."""

    confidence: float = 0.95  # every deciding comparison's order together at this probability
    top: int | None = None  # only the order of the first ``top`` places (and who they are) must be decided
    max_games: int = DEFAULT_MAX_GAMES  # the budget: no round goes beyond it
    ring: int = 3  # the first round: each bot against its ``ring`` nearest neighbours on each side
    max_blocks_per_pair: int = 8  # at most this many blocks per comparison in one round

    def to_json(self) -> dict[str, Any]:
        return {
            "confidence": self.confidence,
            "top": self.top,
            "max_games": self.max_games,
            "ring": self.ring,
            "max_blocks_per_pair": self.max_blocks_per_pair,
        }


@dataclass(frozen=True, slots=True)
class Comparison:
    """Is ``better`` ahead of ``worse``? With the probability of that order and the games between them."""

    better: str
    worse: str
    probability: float
    games: float
    decided: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "better": self.better,
            "worse": self.worse,
            "probability": round(self.probability, 6),
            "games": self.games,
            "decided": self.decided,
        }


@dataclass(slots=True)
class Status:
    """Where the ranking stands after the stored games."""

    ranking: list[str]  # best first
    comparisons: list[Comparison]
    threshold: float
    strengths: list[float] = field(default_factory=list)  # the fit, natural log units, bots in name order

    @property
    def undecided(self) -> list[Comparison]:
        return [c for c in self.comparisons if not c.decided]

    @property
    def done(self) -> bool:
        return not self.undecided


@dataclass(slots=True)
class Plan:
    """One round: its blocks (table, deal), and why (the comparisons it plays)."""

    number: int
    blocks: list[tuple[tuple[str, ...], int]]
    why: list[dict[str, Any]] = field(default_factory=list)

    def games(self, seating: str) -> list[GameId]:
        """The round's games: each block in its table's seat design (skyjo_ref.seating)."""
        return [GameId(table, deal, r) for table, deal in self.blocks for r in design(len(table), seating)]

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "blocks": [[list(t), d] for t, d in self.blocks], "why": self.why}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Plan:
        return cls(
            int(data["number"]),
            [(tuple(str(n) for n in t), int(d)) for t, d in data["blocks"]],
            list(data.get("why", [])),
        )


def _order(seed: int | str, name: str) -> bytes:
    return hashlib.sha256(f"{seed}\x00adaptive\x00{name}".encode()).digest()[:8]


def first_round(bots: Sequence[str], players_per_game: int, settings: AdaptiveSettings, seed: int | str) -> Plan:
    """Round 1: a sparse connected design (see the module docstring), deal 0 of every table."""
    names = sorted(bots)
    n = len(names)
    if players_per_game == 2:
        circle = sorted(names, key=lambda name: (_order(seed, name), name))
        reach = max(1, min(settings.ring, (n - 1) // 2))
        tables = {tuple(sorted((circle[i], circle[(i + d) % n]))) for i in range(n) for d in range(1, reach + 1)}
        if n <= 2 * settings.ring + 1:  # small leagues: every pair
            tables = {tuple(sorted((a, b))) for i, a in enumerate(names) for b in names[i + 1 :]}
    else:
        tables = set(sampled_tables(names, players_per_game, 1, seed))
    return Plan(1, [(t, 0) for t in sorted(tables)], [{"first_round": True}])


def status(
    games: Iterable[tuple[Hashable, Sequence[tuple[str, int]]]], bots: Sequence[str], settings: AdaptiveSettings
) -> Status:
    """Fit the stored games (``(block, [(bot, rank), ...])``) and judge every comparison that decides the
    ranking (see the module docstring)."""
    names = sorted(bots)
    listed = set(names)
    kept = [(b, [s for s in seats if s[0] in listed]) for b, seats in games]
    wins, counts = elo.pair_data(kept, names).totals()
    if any(len(seats) > 2 for _, seats in kept):
        chosen, stages = plackett_luce.order_data(kept, names).totals()
        return status_of_orders(names, chosen, stages, counts, settings)
    return status_of_totals(names, wins, counts, settings)


def status_of_totals(
    names: Sequence[str],
    wins: Sequence[Sequence[float]],
    counts: Sequence[Sequence[float]],
    settings: AdaptiveSettings,
    start: Sequence[float] | None = None,
) -> Status:
    """:func:`status` from pairwise totals (``wins[i][j]``: i's score against j; ``counts``: games), bots in
    the order of ``names``; ``start``: strengths to start the fit from (a previous status's ``strengths``)."""
    beta = elo.fit(wins, counts, prior=PRIOR, start=start, tol=1e-7)
    return _judge(names, beta, _covariance(beta, counts), counts, settings)


def status_of_orders(
    names: Sequence[str],
    chosen: Sequence[float],
    stages: Mapping[int, float],
    counts: Sequence[Sequence[float]],
    settings: AdaptiveSettings,
    start: Sequence[float] | None = None,
) -> Status:
    """:func:`status` from Plackett-Luce totals (tables of 3 or more): ``chosen`` and ``stages`` as
    :func:`skyjo_ref.stats.plackett_luce.order_data` sums them, ``counts[i][j]`` the games where i and j both
    sat. A table of ``k`` is one order, not ``k(k-1)/2`` independent pairs: the pairwise fit's information
    counts each game's pairs as if independent and makes comparisons look decided too early."""
    beta = plackett_luce.fit(chosen, stages, prior=PRIOR, start=start, tol=1e-7)
    cov = _inverse_on_differences(plackett_luce.information(beta, stages, PRIOR))
    return _judge(names, beta, cov, counts, settings)


def _judge(
    names: Sequence[str],
    beta: Sequence[float],
    cov: Sequence[Sequence[float]],
    counts: Sequence[Sequence[float]],
    settings: AdaptiveSettings,
) -> Status:
    """Rank by ``beta`` and judge each comparison that decides the ranking by the covariance ``cov``."""
    n = len(names)
    order = sorted(range(n), key=lambda i: (-beta[i], names[i]))
    ranking = [names[i] for i in order]
    pairs: list[tuple[int, int]] = []
    top = settings.top if settings.top is not None and settings.top < n else None
    last = (top + 1) if top is not None else n
    pairs += [(order[p], order[p + 1]) for p in range(last - 1)]
    if top is not None:
        pairs += [(order[top - 1], order[j]) for j in range(top + 1, n)]
    threshold = 1.0 - (1.0 - settings.confidence) / max(1, len(pairs))
    normal = NormalDist()
    comparisons = []
    for a, b in pairs:
        var = cov[a][a] + cov[b][b] - 2 * cov[a][b]
        z = (beta[a] - beta[b]) / math.sqrt(var) if var > 0 else math.inf
        p = normal.cdf(z)
        comparisons.append(Comparison(names[a], names[b], p, counts[a][b], p >= threshold))
    return Status(ranking, comparisons, threshold, list(beta))


def _covariance(beta: Sequence[float], counts: Sequence[Sequence[float]]) -> list[list[float]]:
    """The inverse of the fit's information (the last strength held at 0; only differences are used)."""
    n = len(beta)
    info = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            g = counts[i][j] + PRIOR
            p = 1.0 / (1.0 + math.exp(beta[j] - beta[i]))
            h = g * p * (1.0 - p)
            info[i][i] += h
            info[j][j] += h
            info[i][j] -= h
            info[j][i] -= h
    return _inverse_on_differences(info)


def _inverse_on_differences(info: Sequence[Sequence[float]]) -> list[list[float]]:
    """The inverse of an information matrix with the last strength held at 0 (only differences are used)."""
    n = len(info)
    reduced = _inverse([row[: n - 1] for row in info[: n - 1]]) if n > 1 else []
    cov = [[0.0] * n for _ in range(n)]
    for i in range(n - 1):
        for j in range(n - 1):
            cov[i][j] = reduced[i][j]
    return cov


def _inverse(matrix: Sequence[Sequence[float]]) -> list[list[float]]:
    """Gauss-Jordan with partial pivoting (the information matrix is positive definite thanks to the prior)."""
    n = len(matrix)
    a = [list(row) + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        head = a[col][col]
        a[col] = [v / head for v in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0.0:
                factor = a[r][col]
                row = a[col]
                a[r] = [v - factor * w for v, w in zip(a[r], row, strict=True)]
    return [row[n:] for row in a]


def next_round(
    number: int,
    current: Status,
    planned_deals: Mapping[tuple[str, ...], int],
    players_per_game: int,
    settings: AdaptiveSettings,
    games_so_far: int,
    block_games: int | None = None,
) -> Plan | None:
    """The blocks of round ``number`` for the undecided comparisons (None: done, or no budget left).

    ``planned_deals``: each table's deals planned so far (the next block of a table takes the next deal);
    ``block_games``: the games of one block (its seat design's; ``players_per_game`` when not given, the
    rotations). Both the budget and a comparison's blocks so far are counted in it: every game of a block
    seats both bots of the comparison its table was chosen for.
    """
    if current.done:
        return None
    per_block = block_games or players_per_game
    room = (settings.max_games - games_so_far) // per_block  # blocks the budget still holds
    if room <= 0:
        return None
    z_target = NormalDist().inv_cdf(current.threshold)
    blocks: list[tuple[tuple[str, ...], int]] = []
    why: list[dict[str, Any]] = []
    next_deal = dict(planned_deals)
    rank = {name: i for i, name in enumerate(current.ranking)}
    # the least decided first: when the budget cuts a round, it cuts the clearest comparisons
    for comparison in sorted(current.undecided, key=lambda c: (abs(c.probability - 0.5), c.better, c.worse)):
        z = NormalDist().inv_cdf(min(max(comparison.probability, 1e-12), 1 - 1e-12))
        pair_blocks = max(comparison.games / per_block, 1.0)
        if z > 0.05:
            needed = pair_blocks * ((z_target / z) ** 2 - 1.0)
            count = math.ceil(needed / 2)
        else:
            count = settings.max_blocks_per_pair
        count = max(1, min(settings.max_blocks_per_pair, count, room - len(blocks)))
        table = _table(comparison.better, comparison.worse, current.ranking, rank, players_per_game)
        for _ in range(count):
            deal = next_deal.get(table, 0)
            next_deal[table] = deal + 1
            blocks.append((table, deal))
        why.append({**comparison.to_json(), "blocks": count})
        if len(blocks) >= room:
            break
    return Plan(number, blocks, why) if blocks else None


def stop_reason(current: Status, settings: AdaptiveSettings) -> str:
    """Why the schedule ended: every comparison decided, or the budget, naming the orders left undecided (the
    rows of the tables between those bots are not settled at the asked confidence)."""
    undecided = current.undecided
    if not undecided:
        return f"every comparison decided at {settings.confidence:g}"
    shown = ", ".join(f"{c.better} and {c.worse} (P = {c.probability:.3f})" for c in undecided[:3])
    more = f" and {len(undecided) - 3} more" if len(undecided) > 3 else ""
    return (
        f"the budget (max_games {settings.max_games}) ended the run with the order of {shown}{more} undecided "
        f"at {settings.confidence:g}: raise adaptive.max_games to decide it"
    )


def _table(a: str, b: str, ranking: Sequence[str], rank: Mapping[str, int], k: int) -> tuple[str, ...]:
    """The two bots of a comparison and, at more players, the bots ranked nearest to them."""
    chosen = {a, b}
    centre = (rank[a] + rank[b]) / 2
    for name in sorted(ranking, key=lambda x: (abs(rank[x] - centre), rank[x])):
        if len(chosen) >= k:
            break
        chosen.add(name)
    return tuple(sorted(chosen))
