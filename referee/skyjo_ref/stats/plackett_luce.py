"""Elo from whole table orders: a Plackett-Luce (rank-ordered logit) maximum-likelihood fit.

A game's order is read best first: the winner is chosen from the whole table
with probability ``w_i / sum(w)``, the second from the rest, and so on, with
``w_i = exp(beta_i)``. Unlike the pairwise fit (:mod:`.bradley_terry`), a
table of ``k`` is one observation, not ``k(k-1)/2`` outcomes counted as if
independent. At two players the models agree (a tie aside). The pairwise
marginal of Plackett-Luce is Bradley-Terry (``P(i before j) = w_i / (w_i +
w_j)`` whatever the other seats), so the Elo scale is the same:
``400 / ln 10`` Elo per unit of ``beta``, and 200 Elo means a 76% chance to
finish ahead of that bot at any table size.

Ties (equal totals, equal rank) are Breslow's: the tied bots are all chosen
from the same remaining set, each with its own probability; the likelihood
stays concave and a tie means what it does to Bradley-Terry's half win.

The fit works on sufficient statistics: how often each bot was chosen and,
per remaining set of bots (a bit mask), how many choices were made from it.
A duplicate block (a table and a deal, all its seatings) keeps its own, so a
bootstrap resample only sums block statistics and refits.

Regularisation as in the pairwise fit: every pair of bots gets ``prior``
virtual games split as a draw, so the fit is always finite.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from skyjo_ref.stats.bootstrap import INTERVAL_METHODS, block_intervals
from skyjo_ref.stats.bradley_terry import Rating, anchor_ratings
from skyjo_ref.stats.newton import maximise


@dataclass(frozen=True, slots=True)
class BlockStats:
    """One block's sufficient statistics: times each bot was chosen, choices made from each remaining set."""

    chosen: Mapping[int, float]  # bot index -> times chosen
    stages: Mapping[int, float]  # remaining set (bit mask of bot indices) -> choices made from it


@dataclass(frozen=True, slots=True)
class OrderData:
    """Table orders grouped by duplicate block, bots by index into ``names``."""

    names: tuple[str, ...]
    blocks: tuple[BlockStats, ...]

    def totals(self) -> tuple[list[float], dict[int, float]]:
        return _sum_blocks(len(self.names), self.blocks)


def stages_of(order: Sequence[tuple[int, int]]) -> list[tuple[int, list[int]]]:
    """A game's choices, best first: (remaining set as a bit mask, the bots chosen from it together)."""
    ranked = sorted(order, key=lambda pair: pair[1])
    remaining = 0
    for index, _ in ranked:
        if remaining >> index & 1:
            raise ValueError(f"bot {index} appears twice in one game")
        remaining |= 1 << index
    out: list[tuple[int, list[int]]] = []
    position = 0
    while position < len(ranked) and remaining:
        rank = ranked[position][1]
        group = [i for i, r in ranked[position:] if r == rank]
        position += len(group)
        if remaining & (remaining - 1) == 0 and len(group) == 1:
            break  # the last bot alone: chosen with probability 1, no information
        out.append((remaining, group))
        for i in group:
            remaining &= ~(1 << i)
    return out


def order_data(
    games: Sequence[tuple[Hashable, Sequence[tuple[str, int]]]], names: Sequence[str] | None = None
) -> OrderData:
    """Group games ``(block, [(bot, rank), ...])`` (rank 1 best, ties equal) into block statistics."""
    if names is None:
        names = sorted({bot for _, seats in games for bot, _ in seats})
    index = {name: i for i, name in enumerate(names)}
    chosen: dict[Hashable, dict[int, float]] = {}
    stages: dict[Hashable, dict[int, float]] = {}
    for block_key, seats in games:
        c = chosen.setdefault(block_key, {})
        s = stages.setdefault(block_key, {})
        for remaining, group in stages_of([(index[bot], rank) for bot, rank in seats]):
            s[remaining] = s.get(remaining, 0.0) + len(group)
            for i in group:
                c[i] = c.get(i, 0.0) + 1.0
    return OrderData(tuple(names), tuple(BlockStats(chosen[k], stages[k]) for k in chosen))


def _sum_blocks(n: int, blocks: Sequence[BlockStats]) -> tuple[list[float], dict[int, float]]:
    chosen = [0.0] * n
    stages: dict[int, float] = {}
    for block in blocks:
        for i, count in block.chosen.items():
            chosen[i] += count
        for mask, count in block.stages.items():
            stages[mask] = stages.get(mask, 0.0) + count
    return chosen, stages


def _members(mask: int) -> list[int]:
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out


def log_likelihood(beta: Sequence[float], chosen: Sequence[float], stages: Mapping[int, float]) -> float:
    """The Plackett-Luce log-likelihood of these statistics at strengths ``beta`` (natural units)."""
    total = sum(c * b for c, b in zip(chosen, beta))
    for mask, count in stages.items():
        members = _members(mask)
        top = max(beta[i] for i in members)
        total -= count * (top + math.log(sum(math.exp(beta[i] - top) for i in members)))
    return total


def _objective(beta: Sequence[float], chosen: Sequence[float], stages: Mapping[int, float], prior: float) -> float:
    value = log_likelihood(beta, chosen, stages)
    n = len(beta)
    for i in range(n):
        for j in range(i + 1, n):
            d = beta[i] - beta[j]
            value -= prior * 0.5 * (_softplus(-d) + _softplus(d))
    return value


def _softplus(x: float) -> float:
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def fit(
    chosen: Sequence[float],
    stages: Mapping[int, float],
    prior: float = 1.0,
    start: Sequence[float] | None = None,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> list[float]:
    """Plackett-Luce strengths (natural log units, mean 0) by Newton's method with a line search
    (:func:`.newton.maximise`: :class:`~.newton.NotConverged` when ``max_iter`` steps do not reach ``tol``)."""
    n = len(chosen)
    if n == 0:
        return []
    if n == 1:
        return [0.0]
    sets = [(_members(mask), count) for mask, count in stages.items()]
    return maximise(
        start if start is not None else [0.0] * n,
        lambda beta: _objective(beta, chosen, stages, prior),
        lambda beta: _derivatives(beta, chosen, sets, prior),
        tol=tol,
        max_iter=max_iter,
        what="Plackett-Luce",
    )


def _derivatives(
    beta: Sequence[float], chosen: Sequence[float], sets: Sequence[tuple[list[int], float]], prior: float
) -> tuple[list[float], list[list[float]]]:
    """The penalised log-likelihood's gradient and its information (minus the Hessian) at ``beta``."""
    n = len(beta)
    grad = list(chosen)
    hess = [[0.0] * n for _ in range(n)]
    for members, count in sets:
        top = max(beta[i] for i in members)
        weights = [math.exp(beta[i] - top) for i in members]
        total = sum(weights)
        probs = [w / total for w in weights]
        for a, i in enumerate(members):
            pa = probs[a]
            grad[i] -= count * pa
            row = hess[i]
            row[i] += count * pa
            for b, j in enumerate(members):
                row[j] -= count * pa * probs[b]
    if prior:
        for i in range(n):
            for j in range(i + 1, n):
                p = 1.0 / (1.0 + math.exp(beta[j] - beta[i]))
                grad[i] += prior * (0.5 - p)
                grad[j] -= prior * (0.5 - p)
                h = prior * p * (1.0 - p)
                hess[i][i] += h
                hess[j][j] += h
                hess[i][j] -= h
                hess[j][i] -= h
    return grad, hess


def information(beta: Sequence[float], stages: Mapping[int, float], prior: float = 1.0) -> list[list[float]]:
    """The fit's observed information at ``beta`` (minus the Hessian of the penalised log-likelihood): its
    inverse, on differences, is the strengths' covariance (what the adaptive schedule judges comparisons by)."""
    sets = [(_members(mask), count) for mask, count in stages.items()]
    return _derivatives(beta, [0.0] * len(beta), sets, prior)[1]


def rate(
    data: OrderData,
    anchor: str | None = None,
    elo: float = 1500.0,
    samples: int = 400,
    seed: int | str = 0,
    prior: float = 1.0,
    method: str = "normal",
) -> list[Rating]:
    """Fit, anchor and (``samples`` > 0) bootstrap the ratings over blocks; one :class:`Rating` per name."""
    if method not in INTERVAL_METHODS:
        raise ValueError(f"unknown interval method {method!r}: expected one of {', '.join(INTERVAL_METHODS)}")
    names = data.names
    if anchor is not None and anchor not in names:
        raise ValueError(f"anchor {anchor!r} has no games")
    chosen, stages = data.totals()
    beta = fit(chosen, stages, prior=prior)
    point = anchor_ratings(beta, names, anchor, elo)
    if samples <= 0 or not data.blocks:
        return [Rating(name, r, None, None) for name, r in zip(names, point)]
    fixed = names.index(anchor) if anchor is not None else None

    def refit(chosen: list[BlockStats]) -> list[float]:
        c, s = _sum_blocks(len(names), chosen)
        return anchor_ratings(fit(c, s, prior=prior, start=beta), names, anchor, elo)

    bounds = block_intervals(
        point,
        data.blocks,
        refit,
        samples=samples,
        seed=f"skyjo-pl/{seed}",
        blocks_of=bot_blocks(data),
        method=method,
        fixed=fixed,
    )
    return [Rating(name, r, low, high) for name, r, (low, high) in zip(names, point, bounds)]


def bot_blocks(data: OrderData) -> list[int]:
    """How many blocks each bot played in: the sample size behind its own rating."""
    counts = [0] * len(data.names)
    for block in data.blocks:
        present = 0
        for mask in block.stages:
            present |= mask
        for i in _members(present):
            counts[i] += 1
    return counts
