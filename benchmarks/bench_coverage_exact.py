"""Interval coverage at 2 players against the exact limit, per bot: where the misses fall (docs/tournaments.md).

    python benchmarks/bench_coverage_exact.py --truth shared --leagues 600 --deals 10
    python benchmarks/bench_coverage_exact.py --truth thurstone --leagues 1000

At two players both simulated truths of ``bench_ratings.py`` (``shared``: a
deal's seat luck shared by every table, 64% of a seat's variance; ``thurstone``:
normal noise) give ``P(i ahead of j) = Phi(d / sqrt 2)`` for a strength
difference ``d``, so the fit's limit is known exactly (the Bradley-Terry fit,
without the prior, of those probabilities) and needs no simulated truth. A
league: 5 bots evenly spread over 400 Elo, every pair, ``--deals`` deals, each a
block of both seatings. Intervals from ``--samples`` resamples of whole deals
by :func:`skyjo_ref.stats.bootstrap.interval` (``normal``: the tables' rule),
and around the bias-corrected centre (the rule before issue 29). Reported per
bot, weakest first: coverage, how often the truth fell below the interval, and
the centre's mean error in Elo.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
from statistics import NormalDist

from skyjo_ref.stats import bradley_terry as bt
from skyjo_ref.stats.bootstrap import interval

Wins = list[list[float]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--truth", choices=("shared", "thurstone"), default="shared")
    parser.add_argument("--leagues", type=int, default=600)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--deals", type=int, default=10)
    args = parser.parse_args()
    n = 5
    strength = [400 / bt.ELO_PER_NAT * (i / (n - 1) - 0.5) for i in range(n)]
    share = 0.64 if args.truth == "shared" else 0.0
    rng = random.Random(f"coverage-exact/{args.truth}/{args.deals}")

    def deal() -> Wins:
        luck = [rng.gauss(0.0, math.sqrt(share)) for _ in range(2)]
        noise = math.sqrt(1.0 - share)
        wins = [[0.0] * n for _ in range(n)]
        for a, b in itertools.combinations(range(n), 2):
            for seat in (0, 1):
                ahead = strength[a] + luck[seat] + rng.gauss(0, noise) > strength[b] + luck[1 - seat] + rng.gauss(
                    0, noise
                )
                wins[a if ahead else b][b if ahead else a] += 1.0
        return wins

    def fit(deals: list[Wins], start: list[float] | None = None, prior: float = 1.0) -> list[float]:
        wins = [[sum(d[i][j] for d in deals) for j in range(n)] for i in range(n)]
        games = [[wins[i][j] + wins[j][i] for j in range(n)] for i in range(n)]
        beta = bt.fit(wins, games, prior=prior, start=start)
        mean = sum(beta) / n
        return [bt.ELO_PER_NAT * (b - mean) for b in beta]

    phi = NormalDist().cdf
    expected = [
        [1000 * phi((strength[i] - strength[j]) / math.sqrt(2)) if i != j else 0.0 for j in range(n)] for i in range(n)
    ]
    truth = fit([expected], prior=0.0)
    rules = ("normal", "normal@bias-corrected")
    covered = {r: [0] * n for r in rules}
    below = {r: [0] * n for r in rules}
    error = {r: [0.0] * n for r in rules}
    for league in range(args.leagues):
        deals = [deal() for _ in range(args.deals)]
        beta = [b / bt.ELO_PER_NAT for b in fit(deals)]
        point = fit(deals)
        boot = random.Random(league)
        draws: list[list[float]] = [[] for _ in range(n)]
        for _ in range(args.samples):
            for i, r in enumerate(fit([deals[boot.randrange(args.deals)] for _ in range(args.deals)], beta)):
                draws[i].append(r)
        for i in range(n):
            low, high = interval(point[i], draws[i], args.deals, "normal")
            shift = point[i] - sum(draws[i]) / len(draws[i])
            for rule, (lo, hi) in (("normal", (low, high)), ("normal@bias-corrected", (low + shift, high + shift))):
                covered[rule][i] += lo <= truth[i] <= hi
                below[rule][i] += truth[i] < lo
                error[rule][i] += (lo + hi) / 2 - truth[i]
    share_of = args.leagues / 100
    print(
        json.dumps(
            {
                "truth": args.truth,
                "deals": args.deals,
                "leagues": args.leagues,
                "intervals": args.leagues * n,
                "exact_limit_elo": [round(t, 1) for t in truth],
                **{
                    rule: {
                        "coverage": round(sum(covered[rule]) / (args.leagues * n) * 100, 2),
                        "per_bot": [round(c / share_of, 1) for c in covered[rule]],
                        "truth_below": [round(b / share_of, 1) for b in below[rule]],
                        "centre_error_elo": [round(e / args.leagues, 1) for e in error[rule]],
                    }
                    for rule in rules
                },
            }
        )
    )


if __name__ == "__main__":
    main()
