"""Plackett-Luce vs the pairwise fit on real leagues: held-out prediction of table orders, 2 to 8 players.

    python benchmarks/bench_ratings_real.py                                  # 2..8 players, 20 deals, 10 folds
    python benchmarks/bench_ratings_real.py --sizes 3,4 --deals 6 --folds 3  # a smoke run (seconds)

The bots are real: ``strong`` and ``minimal`` (examples/python), the built-in
``greedy`` and ``random``, then epsilon-greedy fillers (``eps10``, ``eps20``,
``eps30``, ``eps50``, ``eps70``: greedy with that share of random decisions),
played in-process (``benchmarks/inprocess.py``, no gRPC). A league at ``k``
players has the first ``k + extra`` of them, every table of ``k`` of those
bots, and ``deals`` seeded deals; every table plays every deal as one
balanced duplicate block (:mod:`skyjo_ref.seating`).

Cross-validation over deals: the deals are cut into ``folds`` folds of
consecutive deals; each fold is held out in turn and both models are fitted
on training deals, in two regimes:

- ``all``: every other deal (classic k-fold);
- ``N``: only the ``--train-deals`` deals that follow the fold (cyclically):
  a small league, where the choice of model matters most.

Each fit scores the held-out games (:func:`bench_ratings.held_out`):
Plackett-Luce order log-likelihood per game, pair log-likelihood per pair
(``P(i ahead of j)`` is the same formula in both models; a tie counts half
each way), and the share of decided pairs ordered against the fitted
strengths. Printed per size and regime: each model's mean over folds and the
mean difference Plackett-Luce minus pairwise with its standard error over the
folds (the held-out sets are disjoint; the training sets overlap, so the
standard error is the usual cross-validation approximation).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ratings import Game, centred, each_size, fits, held_out
from inprocess import REAL_FIELD, play_block

METRICS = ("order_loglik_per_game", "pair_loglik_per_pair", "mispredicted_pairs")


def play_league(names: tuple[str, ...], k: int, deals: int, tag: str) -> list[list[Game]]:
    """The league's games, by deal: every table of ``k`` of ``names``, one balanced block a deal."""
    by_deal: list[list[Game]] = []
    for deal in range(deals):
        games: list[Game] = []
        for table in itertools.combinations(range(len(names)), k):
            for game in play_block([names[i] for i in table], deal, "balanced", tag):
                games.append(((table, deal), game))
        by_deal.append(games)
    return by_deal


def scores(train: list[Game], test: list[Game], names: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """Both models fitted on ``train``, scored on ``test``."""
    _, _, beta_pl, beta_bt = fits(train, names)
    out = {}
    for model, beta in (("pl", beta_pl), ("bt", beta_bt)):
        s = held_out(test, names, beta)
        out[model] = {
            "order_loglik_per_game": s.order_loglik / s.games,
            "pair_loglik_per_pair": s.pair_loglik / s.pairs,
            "mispredicted_pairs": s.wrong / max(s.decided, 1),
        }
    return out


def summary(folds: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Per metric: each model's mean over folds, and the mean difference PL - BT with its standard error."""
    out = {}
    n = len(folds)
    for metric in METRICS:
        pl_values = [f["pl"][metric] for f in folds]
        bt_values = [f["bt"][metric] for f in folds]
        diffs = [a - b for a, b in zip(pl_values, bt_values)]
        mean = sum(diffs) / n
        se = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1) / n) if n > 1 else math.nan
        out[metric] = {
            "pl": round(sum(pl_values) / n, 5),
            "bt": round(sum(bt_values) / n, 5),
            "diff": round(mean, 6),
            "se": round(se, 6),
        }
    return out


def measure(k: int, args: argparse.Namespace) -> dict[str, Any]:
    names = tuple(REAL_FIELD[: k + args.extra])
    if len(names) < k + args.extra:
        raise SystemExit(f"{k} players + {args.extra} extra bots: the field has only {len(REAL_FIELD)} bots")
    started = time.process_time()
    by_deal = play_league(names, k, args.deals, f"{args.seed}/{k}")
    played = time.process_time() - started
    cut = [round(f * args.deals / args.folds) for f in range(args.folds + 1)]
    regimes: dict[str, list[dict[str, dict[str, float]]]] = {"all": [], str(args.train_deals): []}
    for f in range(args.folds):
        held = set(range(cut[f], cut[f + 1]))
        test = [g for d in sorted(held) for g in by_deal[d]]
        rest = [d for d in range(args.deals) if d not in held]
        regimes["all"].append(scores([g for d in rest for g in by_deal[d]], test, names))
        following = [d % args.deals for d in range(cut[f + 1], cut[f + 1] + args.deals)]
        few = [d for d in following if d not in held][: args.train_deals]
        regimes[str(args.train_deals)].append(scores([g for d in few for g in by_deal[d]], test, names))
    everything = [g for games in by_deal for g in games]
    _, _, beta_pl, beta_bt = fits(everything, names)
    return {
        "players": k,
        "bots": list(names),
        "tables": math.comb(len(names), k),
        "deals": args.deals,
        "games": len(everything),
        "folds": args.folds,
        "train_deals": {"all": args.deals - args.deals // args.folds, str(args.train_deals): args.train_deals},
        "elo_all_deals": {
            "pl": dict(zip(names, (round(e, 1) for e in centred(beta_pl)))),
            "bt": dict(zip(names, (round(e, 1) for e in centred(beta_bt)))),
        },
        "heldout": {regime: summary(folds) for regime, folds in regimes.items()},
        "cpu_seconds": {"play": round(played, 1), "total": round(time.process_time() - started, 1)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="2,3,4,5,6,7,8")
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--train-deals", type=int, default=10, help="the small-league regime's training deals")
    parser.add_argument("--extra", type=int, default=1, help="bots beyond the table size (k + extra bots a league)")
    parser.add_argument("--seed", default="ratings-real")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    if not 2 <= args.folds <= args.deals:
        parser.error("--folds must be between 2 and --deals")
    each_size(args.sizes, lambda k: measure(k, args), args.json)


if __name__ == "__main__":
    main()
