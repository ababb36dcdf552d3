"""The rating fits' solver loop (stats/newton.py): CPU seconds of Bradley-Terry and Plackett-Luce ratings with
bootstrap intervals on one seeded league, to compare two checkouts (run it with each one's Python; less is better).

    python benchmarks/bench_solvers.py                 # 8 bots, 4-player tables, 30 deals, 200 resamples
    python benchmarks/bench_solvers.py --repeat 5 --json out.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import time
from collections.abc import Callable
from typing import Any

from skyjo_ref.stats import bradley_terry, plackett_luce


def league(bots: int, k: int, deals: int, seed: int) -> list[tuple[Any, list[tuple[str, int]]]]:
    """Games ``(block, [(bot, rank), ...])``: every table of ``k`` bots, ``deals`` deals, k seatings a deal."""
    rng = random.Random(seed)
    names = [f"bot{i}" for i in range(bots)]
    strength = {name: i * 0.15 for i, name in enumerate(names)}
    games = []
    for table in itertools.combinations(names, k):
        for deal in range(deals):
            for _ in range(k):
                score = {name: strength[name] + rng.gauss(0.0, 1.0) for name in table}
                order = sorted(table, key=lambda n: -score[n])
                games.append(((table, deal), [(name, rank + 1) for rank, name in enumerate(order)]))
    return games


def best_of(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()  # CPU time: a busy machine slows the wall clock, not this
        work()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--deals", type=int, default=30)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    games = league(args.bots, args.players, args.deals, seed=7)
    pairs = bradley_terry.pair_data(games)
    orders = plackett_luce.order_data(games)
    out = {
        "games": len(games),
        "bradley_terry_s": best_of(args.repeat, lambda: bradley_terry.rate(pairs, samples=args.samples)),
        "plackett_luce_s": best_of(args.repeat, lambda: plackett_luce.rate(orders, samples=args.samples)),
        "bt_first": bradley_terry.rate(pairs, samples=0)[0].elo,
        "pl_first": plackett_luce.rate(orders, samples=0)[0].elo,
    }
    print(json.dumps(out))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f)


if __name__ == "__main__":
    main()
