"""Elo by maximum likelihood (Bradley-Terry) with bootstrap intervals over duplicate blocks.

The data are pairwise outcomes inside games: at a table of k bots each of the
k(k-1)/2 pairs is a win, a loss or a draw by rank (lower total is better; a
forfeit ranks last), a draw counting half a win for each side. Bradley-Terry
says bot i beats bot j with probability ``1 / (1 + 10**((R_j - R_i) / 400))``;
the ratings R maximise the likelihood of all the outcomes.

Regularisation: a bot that won (or lost) every pairing has no finite maximum
likelihood rating. So that the fit always stays finite, every pair of bots gets
``prior`` virtual games (default 1) split as a draw — half a win each. It is
equivalent to a weak prior pulling ratings together; with hundreds of games it
moves ratings by a few Elo at most, and it also connects bots that never met.

Intervals: the data are resampled by duplicate block (a table and a deal, all
its rotations together: the unit whose luck is shared), with replacement,
``samples`` times from a seeded generator; each resample is fitted again and
the 2.5% and 97.5% percentiles of each bot's anchored rating are its 95%
interval (or another method of :mod:`.bootstrap`). Ratings are relative: the
anchor's interval is a single point.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Final

from skyjo_ref.stats.bootstrap import block_intervals
from skyjo_ref.stats.newton import maximise

ELO_PER_NAT: Final = 400.0 / math.log(10.0)

#: The sparse outcomes of one block: (i, j) with i < j -> (score of i, games).
Block = dict[tuple[int, int], tuple[float, float]]


@dataclass(frozen=True, slots=True)
class PairData:
    """Pairwise outcomes grouped by duplicate block, bots by index into ``names``."""

    names: tuple[str, ...]
    blocks: tuple[Block, ...]

    def totals(self) -> tuple[list[list[float]], list[list[float]]]:
        return _sum_blocks(len(self.names), self.blocks)


def pair_data(
    games: Sequence[tuple[Hashable, Sequence[tuple[str, int]]]], names: Sequence[str] | None = None
) -> PairData:
    """Group games ``(block, [(bot, rank), ...])`` into pairwise outcomes per block."""
    if names is None:
        names = sorted({bot for _, seats in games for bot, _ in seats})
    index = {name: i for i, name in enumerate(names)}
    blocks: dict[Hashable, Block] = {}
    for block_key, seats in games:
        block = blocks.setdefault(block_key, {})
        for a in range(len(seats)):
            for b in range(a + 1, len(seats)):
                (bot_a, rank_a), (bot_b, rank_b) = seats[a], seats[b]
                i, j = index[bot_a], index[bot_b]
                score = 1.0 if rank_a < rank_b else 0.0 if rank_a > rank_b else 0.5
                if i > j:
                    i, j, score = j, i, 1.0 - score
                if i == j:
                    raise ValueError(f"bot {bot_a!r} appears twice in one game")
                old_score, old_n = block.get((i, j), (0.0, 0.0))
                block[(i, j)] = (old_score + score, old_n + 1.0)
    return PairData(tuple(names), tuple(blocks[k] for k in blocks))


def _sum_blocks(n: int, blocks: Sequence[Block]) -> tuple[list[list[float]], list[list[float]]]:
    wins = [[0.0] * n for _ in range(n)]
    games = [[0.0] * n for _ in range(n)]
    for block in blocks:
        for (i, j), (score, count) in block.items():
            wins[i][j] += score
            wins[j][i] += count - score
            games[i][j] += count
            games[j][i] += count
    return wins, games


def fit(
    wins: Sequence[Sequence[float]],
    games: Sequence[Sequence[float]],
    prior: float = 1.0,
    start: Sequence[float] | None = None,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> list[float]:
    """Bradley-Terry strengths (natural log units, mean 0) by Newton's method with a line search
    (:func:`.newton.maximise`: :class:`~.newton.NotConverged` when ``max_iter`` steps do not reach ``tol``).

    ``wins[i][j]`` is i's score against j (draws count half), ``games[i][j]``
    the games between them (symmetric); ``prior`` virtual drawn games are added
    to every pair (see the module's docstring).
    """
    n = len(wins)
    if n == 0:
        return []
    if n == 1:
        return [0.0]
    w = [[wins[i][j] + (prior / 2 if i != j else 0.0) for j in range(n)] for i in range(n)]
    g = [[games[i][j] + (prior if i != j else 0.0) for j in range(n)] for i in range(n)]
    row_wins = [sum(row) for row in w]

    def derivatives(beta: list[float]) -> tuple[list[float], list[list[float]]]:
        grad = list(row_wins)
        hess = [[0.0] * n for _ in range(n)]
        for i in range(n):
            bi = beta[i]
            gi = g[i]
            for j in range(i + 1, n):
                count = gi[j]
                if count == 0.0:
                    continue
                p = 1.0 / (1.0 + math.exp(beta[j] - bi))
                grad[i] -= count * p
                grad[j] -= count * (1.0 - p)
                h = count * p * (1.0 - p)
                hess[i][i] += h
                hess[j][j] += h
                hess[i][j] -= h
                hess[j][i] -= h
        return grad, hess

    return maximise(
        start if start is not None else [0.0] * n,
        lambda beta: _loglik(beta, w, g),
        derivatives,
        tol=tol,
        max_iter=max_iter,
        what="Bradley-Terry",
    )


def _loglik(beta: Sequence[float], w: Sequence[Sequence[float]], g: Sequence[Sequence[float]]) -> float:
    total = 0.0
    n = len(beta)
    for i in range(n):
        for j in range(i + 1, n):
            if g[i][j] == 0.0:
                continue
            d = beta[i] - beta[j]
            # log p = -log(1 + e^-d), log(1-p) = -log(1 + e^d), computed stably
            log_p = -_softplus(-d)
            log_q = -_softplus(d)
            total += w[i][j] * log_p + w[j][i] * log_q
    return total


def _softplus(x: float) -> float:
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


@dataclass(frozen=True, slots=True)
class Rating:
    """One bot's Elo and its 95% interval (None without bootstrap)."""

    name: str
    elo: float
    low: float | None
    high: float | None


def anchor_ratings(beta: Sequence[float], names: Sequence[str], anchor: str | None, elo: float) -> list[float]:
    """Elo from strengths: ``anchor`` gets ``elo``; without an anchor the pool mean is ``elo``."""
    if anchor is not None:
        base = beta[list(names).index(anchor)]
    else:
        base = sum(beta) / len(beta) if beta else 0.0
    return [elo + ELO_PER_NAT * (b - base) for b in beta]


def rate(
    data: PairData,
    anchor: str | None = None,
    elo: float = 1500.0,
    samples: int = 400,
    seed: int | str = 0,
    prior: float = 1.0,
    method: str = "percentile",
) -> list[Rating]:
    """Fit, anchor and (``samples`` > 0) bootstrap the ratings; one :class:`Rating` per name, in order.

    ``method`` makes the interval from the bootstrap draws (:mod:`.bootstrap`).
    """
    names = data.names
    if anchor is not None and anchor not in names:
        raise ValueError(f"anchor {anchor!r} has no games")
    wins, games = data.totals()
    beta = fit(wins, games, prior=prior)
    point = anchor_ratings(beta, names, anchor, elo)
    if samples <= 0 or not data.blocks:
        return [Rating(name, r, None, None) for name, r in zip(names, point)]
    fixed = names.index(anchor) if anchor is not None else None

    def refit(chosen: list[Block]) -> list[float]:
        w, g = _sum_blocks(len(names), chosen)
        return anchor_ratings(fit(w, g, prior=prior, start=beta), names, anchor, elo)

    bounds = block_intervals(
        point,
        data.blocks,
        refit,
        samples=samples,
        seed=f"skyjo-elo/{seed}",
        blocks_of=bot_blocks(data),
        method=method,
        fixed=fixed,
    )
    return [Rating(name, r, low, high) for name, r, (low, high) in zip(names, point, bounds)]


def bot_blocks(data: PairData) -> list[int]:
    """How many blocks each bot played in: the sample size behind its own rating."""
    counts = [0] * len(data.names)
    for block in data.blocks:
        for i in {i for pair in block for i in pair}:
            counts[i] += 1
    return counts


def expected_score(elo_a: float, elo_b: float) -> float:
    """The Bradley-Terry probability that a beats b (a draw counting half)."""
    return float(1.0 / (1.0 + 10.0 ** ((elo_b - elo_a) / 400.0)))
