"""A mean over observations that come in correlated clusters (duplicate blocks), with its 95% interval.

The games of one duplicate block share their cards, so their observations are
not independent: the standard error is the cluster-robust one (the spread of
the blocks' sums around the ratio estimate, times ``B / (B - 1)``), and the
interval uses Student's quantile with ``B - 1`` degrees of freedom, ``B`` the
number of blocks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from skyjo_ref.stats.bootstrap import t_quantile_975


@dataclass(frozen=True, slots=True)
class ClusteredMean:
    """The mean of every observation, its 95% interval (None with fewer than 2 blocks), and the counts."""

    mean: float
    low: float | None
    high: float | None
    count: int
    blocks: int


def clustered_mean(blocks: Sequence[Sequence[float]]) -> ClusteredMean | None:
    """The mean of all observations in ``blocks`` (one list a cluster); None without any observation."""
    used = [block for block in blocks if block]
    count = sum(len(block) for block in used)
    if not count:
        return None
    mean = sum(sum(block) for block in used) / count
    b = len(used)
    if b < 2:
        return ClusteredMean(mean, None, None, count, b)
    spread = sum((sum(block) - mean * len(block)) ** 2 for block in used) * b / (b - 1)
    half = t_quantile_975(b - 1) * math.sqrt(spread) / count
    return ClusteredMean(mean, mean - half, mean + half, count, b)
