"""Who is better, and how sure: per-bot numbers of a match and a verdict with 95% intervals.

Pure functions over finished ``skyjo-game/1`` records (their ``meta.slots``
say which match slot sat in which seat, ``meta.deal`` which deal was played).

The verdict's unit is the deal block (all rotations of one deal), since the
games of one deal are not independent. Its win-rate interval is a Wilson score
interval over blocks: each block's win-rate difference ``d`` (-1 to +1) is
mapped to a score ``(1 + d) / 2`` in [0, 1] and treated as one trial. A score
bounded in [0, 1] varies at most as much as a win/loss does, so the interval is
conservative, valid from a few blocks, and never leaves -100%..+100%. The
average-total interval is a Student t interval over blocks. Below
:data:`MIN_BLOCKS` blocks there is no verdict ("not enough games to tell").

One verdict, one statistic: the blocks' mean score ``s`` decides. The Elo
difference and its interval are ``s`` and the Wilson interval's ends put on the
Elo scale (``-400 log10(1/s - 1)``, monotone), and the LOS (likelihood of
superiority, as cutechess and fastchess print it) is the same score test's
``Phi(2 (s - 1/2) sqrt(blocks))``. So "better" holds exactly when the win-rate
interval excludes 0, when the Elo interval is above 0 and when the LOS is above
97.5%. The average-total difference is shown in the JSON, not judged.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

Z95 = 1.959964

#: Fewer deal blocks than this: "not enough games to tell", whatever the numbers.
MIN_BLOCKS = 6

#: Two-sided 95% Student t quantiles for 1..30 degrees of freedom.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t_quantile_95(df: int) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError("a t quantile needs at least one degree of freedom")
    if df <= len(_T975):
        return _T975[df - 1]
    z = Z95  # Cornish-Fisher expansion: within 0.001 of the exact value above 30 degrees of freedom
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (shared wins count as fractions)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def elo_of_score(score: float) -> float:
    """The Elo difference a mean score in [0, 1] stands for (logistic; +-inf at 1 and 0)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def los_of_blocks(mean_diff: float, blocks: int) -> float:
    """Likelihood of superiority from the blocks' mean win-rate difference: the Wilson interval's own score test
    (``Phi(2 (s - 1/2) sqrt(n))`` with ``s = (1 + d) / 2``), so LOS > 97.5% exactly when that interval excludes 0."""
    if blocks <= 0:
        return 0.5
    return 0.5 * (1.0 + math.erf(mean_diff * math.sqrt(blocks) / math.sqrt(2.0)))


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _signed(value: float) -> str:
    return f"{round(value):+d}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")  # never "-0"


def mean_interval(values: Sequence[float]) -> tuple[float, float, float] | None:
    """Mean and Student t 95% interval; None with fewer than two values."""
    m = len(values)
    if m < 2:
        return None
    mean = sum(values) / m
    var = sum((v - mean) ** 2 for v in values) / (m - 1)
    half = t_quantile_95(m - 1) * math.sqrt(var / m)
    return (mean, mean - half, mean + half)


def difference_interval(diffs: Sequence[float]) -> tuple[float, float, float] | None:
    """Mean of per-block differences in [-1, 1] and its 95% interval, bounded to [-1, 1].

    Wilson score interval on the block scores ``(1 + d) / 2``: valid for few blocks,
    never a zero-width interval when every block agrees. None without any block.
    """
    m = len(diffs)
    if m == 0:
        return None
    mean = sum(diffs) / m
    lo, hi = wilson(m * (1 + mean) / 2, m)
    return (mean, 2 * lo - 1, 2 * hi - 1)


@dataclass(slots=True)
class BotStats:
    name: str
    spec: str
    games: int = 0  # seat-games played (a bot sitting in two seats of one game counts twice)
    wins: float = 0.0  # shared wins split between the winners
    win_rate: float = 0.0
    win_rate_ci: tuple[float, float] = (0.0, 1.0)
    avg_total: float = 0.0
    avg_round_score: float = 0.0
    rounds: int = 0
    strikes: int = 0
    forfeits: int = 0
    _totals: float = field(default=0.0, repr=False)
    _round_sum: float = field(default=0.0, repr=False)

    def public(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if not k.startswith("_")}
        out["win_rate_ci"] = list(self.win_rate_ci)
        return out


@dataclass(slots=True)
class Verdict:
    better: str | None  # None when the interval does not exclude "no difference"
    first: str
    second: str
    win_rate_diff: float
    win_rate_diff_ci: tuple[float, float] | None
    avg_total_diff: float  # first minus second (lower totals are better)
    avg_total_diff_ci: tuple[float, float] | None
    blocks: int  # independent units the intervals are computed over (deals)
    text: str
    elo_diff: float = 0.0  # first minus second, from the same block scores (+-inf when one bot won every block)
    elo_diff_ci: tuple[float, float] | None = None
    los: float = 0.5  # likelihood that first is better than second

    def public(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("win_rate_diff_ci", "avg_total_diff_ci"):
            out[key] = list(out[key]) if out[key] is not None else None
        out["elo_diff"] = _finite(self.elo_diff)  # JSON has no infinity: null
        out["elo_diff_ci"] = [_finite(v) for v in self.elo_diff_ci] if self.elo_diff_ci is not None else None
        return out


def summarize(
    records: Sequence[Mapping[str, Any]], names: Sequence[str], specs: Sequence[str], slot_bot: Sequence[int]
) -> tuple[list[BotStats], Verdict | None]:
    """Per-bot numbers, and a verdict between the two best bots by win rate.

    ``slot_bot[k]`` is the bot (index into ``names``) sitting in match slot ``k``.
    """
    stats, per_deal = _tally(records, names, specs, slot_bot)
    if len(stats) < 2 or not records:
        return stats, None
    return stats, _verdict(stats, per_deal, seats_per_game=len(records[0]["players"]))


#: Per deal, per bot: summed win share, summed final total, games.
PerDeal = dict[Any, dict[int, list[float]]]


def _tally(
    records: Sequence[Mapping[str, Any]], names: Sequence[str], specs: Sequence[str], slot_bot: Sequence[int]
) -> tuple[list[BotStats], PerDeal]:
    """Each bot's numbers over the records, and its per-deal sums (for the verdict)."""
    stats = [BotStats(n, s) for n, s in zip(names, specs)]
    # per deal, per bot: summed win share and summed final total, and seat counts (for the verdict)
    per_deal: PerDeal = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0, 0.0]))
    for record in records:
        meta = record.get("meta", {})
        result = record["result"]
        seats = len(record["players"])
        slots = meta.get("slots", list(range(seats)))
        winners = result["winners"]
        forfeits = set(result.get("forfeits", []))
        strikes_by_seat: dict[int, int] = defaultdict(int)
        for strike in meta.get("strikes", []):
            strikes_by_seat[strike["seat"]] += 1
        deal = meta.get("deal", meta.get("game"))
        for seat in range(seats):
            b = slot_bot[slots[seat]]
            st = stats[b]
            share = 1.0 / len(winners) if seat in winners else 0.0
            total = result["totals"][seat]
            st.games += 1
            st.wins += share
            st._totals += total
            for rnd in record["rounds"]:
                if "result" in rnd:
                    st.rounds += 1
                    st._round_sum += rnd["result"]["scores"][seat]
            st.strikes += strikes_by_seat[seat]
            st.forfeits += seat in forfeits
            cell = per_deal[deal][b]
            cell[0] += share
            cell[1] += total
            cell[2] += 1
    for st in stats:
        if st.games:
            st.win_rate = st.wins / st.games
            st.win_rate_ci = wilson(st.wins, st.games)
            st.avg_total = st._totals / st.games
        if st.rounds:
            st.avg_round_score = st._round_sum / st.rounds
    return stats, per_deal


def _verdict(stats: list[BotStats], per_deal: PerDeal, *, seats_per_game: int) -> Verdict:
    """The two best bots by win rate, compared deal by deal (paired: the same cards)."""
    order = sorted(range(len(stats)), key=lambda i: (-stats[i].win_rate, stats[i].avg_total, i))
    a, b = order[0], order[1]
    win_diffs: list[float] = []
    total_diffs: list[float] = []
    for cells in per_deal.values():
        if a in cells and b in cells:
            ca, cb = cells[a], cells[b]
            win_diffs.append(ca[0] / ca[2] - cb[0] / cb[2])
            total_diffs.append(ca[1] / ca[2] - cb[1] / cb[2])
    win = difference_interval(win_diffs) if len(win_diffs) >= 2 else None
    tot = mean_interval(total_diffs)
    A, B = stats[a].name, stats[b].name
    wd = win[0] if win is not None else stats[a].win_rate - stats[b].win_rate
    td = tot[0] if tot is not None else stats[a].avg_total - stats[b].avg_total
    blocks = len(win_diffs)
    elo = elo_of_score((1 + wd) / 2)
    elo_ci = (elo_of_score((1 + win[1]) / 2), elo_of_score((1 + win[2]) / 2)) if win is not None else None
    los = los_of_blocks(wd, blocks)
    if win is None or blocks < MIN_BLOCKS:
        better = None
        text = (
            f"not enough games to tell: {A} leads {B} ({stats[a].win_rate:.1%} vs {stats[b].win_rate:.1%} wins) "
            f"over {blocks} deal{'s' if blocks != 1 else ''}; a verdict needs at least {MIN_BLOCKS} deals "
            f"({MIN_BLOCKS * seats_per_game} games at {seats_per_game} seats)"
        )
    else:
        lo, hi = win[1], win[2]
        assert elo_ci is not None
        span = (
            f"Elo {_signed(elo)} (95% CI {_signed(elo_ci[0])} to {_signed(elo_ci[1])}), LOS {los:.1%}, "
            f"win-rate difference {wd:+.1%} (95% CI {lo:+.1%} to {hi:+.1%}), {blocks} deals"
        )
        if lo > 0:  # the same test as elo_ci[0] > 0 and los > 97.5%
            better = A
            text = f"{A} is better than {B}: {span}"
        else:
            better = None
            text = f"no clear difference between {A} and {B} yet: {span}; play more games"
    verdict = Verdict(
        better=better,
        first=A,
        second=B,
        win_rate_diff=wd,
        win_rate_diff_ci=(win[1], win[2]) if win is not None else None,
        avg_total_diff=td,
        avg_total_diff_ci=(tot[1], tot[2]) if tot is not None else None,
        blocks=len(win_diffs),
        text=text,
        elo_diff=elo,
        elo_diff_ci=elo_ci,
        los=los,
    )
    return verdict
