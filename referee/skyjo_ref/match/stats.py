"""Who is better, and how sure: per-bot numbers of a match and a verdict with 95% intervals.

Pure functions over finished ``skyjo-game/1`` records (their ``meta.slots``
say which match slot sat in which seat, ``meta.deal`` which deal was played).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

Z95 = 1.959964


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (shared wins count as fractions)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float] | None:
    """Mean and normal-approximation 95% interval; None with fewer than two values."""
    m = len(values)
    if m < 2:
        return None
    mean = sum(values) / m
    var = sum((v - mean) ** 2 for v in values) / (m - 1)
    half = z * math.sqrt(var / m)
    return (mean, mean - half, mean + half)


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

    def public(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("win_rate_diff_ci", "avg_total_diff_ci"):
            out[key] = list(out[key]) if out[key] is not None else None
        return out


def summarize(
    records: Sequence[Mapping[str, Any]], names: Sequence[str], specs: Sequence[str], slot_bot: Sequence[int]
) -> tuple[list[BotStats], Verdict | None]:
    """Per-bot numbers, and a verdict between the two best bots by win rate.

    ``slot_bot[k]`` is the bot (index into ``names``) sitting in match slot ``k``.
    """
    stats = [BotStats(n, s) for n, s in zip(names, specs)]
    # per deal, per bot: summed win share and summed final total, and seat counts (for the verdict)
    per_deal: dict[Any, dict[int, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0, 0.0]))
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
    if len(stats) < 2 or not records:
        return stats, None
    order = sorted(range(len(stats)), key=lambda i: (-stats[i].win_rate, stats[i].avg_total, i))
    a, b = order[0], order[1]
    win_diffs: list[float] = []
    total_diffs: list[float] = []
    for cells in per_deal.values():
        if a in cells and b in cells:
            ca, cb = cells[a], cells[b]
            win_diffs.append(ca[0] / ca[2] - cb[0] / cb[2])
            total_diffs.append(ca[1] / ca[2] - cb[1] / cb[2])
    win = mean_interval(win_diffs)
    tot = mean_interval(total_diffs)
    A, B = stats[a].name, stats[b].name
    wd = win[0] if win is not None else stats[a].win_rate - stats[b].win_rate
    td = tot[0] if tot is not None else stats[a].avg_total - stats[b].avg_total
    if win is None:
        better = None
        text = f"{A} leads {B} ({stats[a].win_rate:.1%} vs {stats[b].win_rate:.1%} wins), too few games to say how sure"
    else:
        lo, hi = win[1], win[2]
        span = f"win-rate difference {wd:+.1%} (95% CI {lo:+.1%} to {hi:+.1%}, {len(win_diffs)} deals)"
        if lo > 0:
            better = A
            text = f"{A} is better than {B}: {span}"
        else:
            better = None
            text = f"no clear difference between {A} and {B} yet: {span}; play more games"
        if tot is not None:
            text += f"; average total {td:+.1f} (95% CI {tot[1]:+.1f} to {tot[2]:+.1f})"
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
    )
    return stats, verdict
