"""Intervals from bootstrap draws: percentile, and a normal interval with Student's quantile.

The block bootstrap's percentile interval is too narrow with few blocks (its
spread is the plug-in one, ``(n - 1) / n`` of the variance), which measured
as 87-93% coverage for a nominal 95% (docs/tournaments.md). The ``normal``
interval centres on the estimate, widens the bootstrap standard deviation by
``sqrt(n / (n - 1))`` and uses Student's 97.5% quantile with ``n - 1``
degrees of freedom, ``n`` the number of blocks the bot played in (the sample
behind its own rating, not the league's: at 5 bots and 2 players a bot is in
4 of the 10 tables).

Why not the bootstrap's bias-corrected centre ``2 x point - mean(draws)`` (the
rule until issue 29): the fit is regularised (virtual draws pull ratings
toward the pool), and a bootstrap of it cannot see that pull, since each
resample is pulled toward the sample's own estimate. Its bias correction
removes only the maximum likelihood fit's outward bias, which the prior has
already more than undone, and so moved extreme bots' intervals further toward
the pool (12-20 Elo from the truth at 2 players over 10 deals, against 6-15
for the estimate). On the same simulated leagues the estimate's centre covered
0.1 to 0.45 points more at 2 to 4 players (the same within noise at 6, where
the pull is under 1 Elo), and an interval always holds the rating it is
shown with.

Why a bot's own count although every resample draws all blocks: the
quantile's degrees of freedom are those of the variance estimate, and a
rating's bootstrap variance is (to first order) a sum over blocks of each
block's influence on it squared; the blocks the bot is not in move it only
through its opponents' ratings, which many more blocks pin, so their terms
are small and the estimate's degrees of freedom are about the bot's own
count less one. The count is also the smaller number, so the quantile errs
wide, never narrow; where every bot is in every unit (resampling deals in a
full league) the two are equal. A "block" here is
whatever unit the caller resamples: in a league without a seed secret, a whole
deal (every table's games of it), since the tables share its deck.

With fewer than :data:`MIN_UNITS` blocks, or draws that do not differ (a bot
whose every block ended alike), no interval is given (NaN, shown as a dash
with a "too few games" note): one degree of freedom, or none, measures nothing,
and a zero-width interval would claim certainty.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Final, TypeVar

INTERVAL_METHODS: Final = ("normal", "percentile")
#: The fewest independent blocks behind a rating that give it an interval.
MIN_UNITS: Final = 3


_Block = TypeVar("_Block")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (linear interpolation between order statistics)."""
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def t_quantile_975(df: int) -> float:
    """Student's 97.5% quantile (Cornish-Fisher expansion; within 1e-3 of the table from df 3 on)."""
    z = 1.959963984540054
    if df <= 0:
        return math.inf
    if df == 1:
        return 12.706204736174698
    if df == 2:
        return 4.302652729749464
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def interval(point: float, draws: Sequence[float], blocks: int, method: str) -> tuple[float, float]:
    """The 95% interval of an estimate from its bootstrap ``draws`` over ``blocks`` resampled blocks;
    NaN at both ends when there is too little to measure (module docstring)."""
    if method not in INTERVAL_METHODS:
        raise ValueError(f"unknown interval method {method!r}: expected one of {', '.join(INTERVAL_METHODS)}")
    if blocks < MIN_UNITS or max(draws, default=0.0) - min(draws, default=0.0) <= 1e-9 * max(1.0, abs(point)):
        return math.nan, math.nan
    if method == "percentile":
        return percentile(draws, 0.025), percentile(draws, 0.975)
    if method == "normal":
        n = len(draws)
        mean = sum(draws) / n
        sd = math.sqrt(sum((d - mean) ** 2 for d in draws) / max(n - 1, 1))
        half = t_quantile_975(blocks - 1) * sd * math.sqrt(blocks / max(blocks - 1, 1))
        return point - half, point + half
    raise ValueError(f"unknown interval method {method!r}: expected one of {', '.join(INTERVAL_METHODS)}")


def block_intervals(
    point: Sequence[float],
    blocks: Sequence[_Block],
    refit: Callable[[list[_Block]], Sequence[float]],
    *,
    samples: int,
    seed: str,
    blocks_of: Sequence[int],
    method: str,
    fixed: int | None = None,
) -> list[tuple[float, float]]:
    """The 95% interval of each rating: ``samples`` resamples of the duplicate ``blocks`` (with replacement,
    drawn from ``random.Random(seed)``), each refitted by ``refit``; ``blocks_of[i]`` is how many blocks rating
    ``i`` rests on, and rating ``fixed`` (an anchor) has none."""
    rng = random.Random(seed)
    count = len(blocks)
    draws: list[list[float]] = [[] for _ in point]
    for _ in range(samples):
        for i, r in enumerate(refit([blocks[rng.randrange(count)] for _ in range(count)])):
            draws[i].append(r)
    return [
        (p, p) if i == fixed else interval(p, d, n, method)
        for i, (p, d, n) in enumerate(zip(point, draws, blocks_of, strict=True))
    ]
