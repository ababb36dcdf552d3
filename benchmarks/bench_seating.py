"""Seat designs measured: a bot that feeds on its right-hand neighbour's discards, rated under rotations and balanced.

    python benchmarks/bench_seating.py                  # 3, 4 and 6 players, 150 deals
    python benchmarks/bench_seating.py --sizes 3 --deals 40
    python benchmarks/bench_seating.py --field real --deals 60   # the built-in and example bots

In-process games (engine and bots, no gRPC; ``benchmarks/inprocess.py``) on
seeded deals. Two fields (the first ``k`` bots at ``k`` players):

- ``synthetic`` (the default), in name order: ``greedy``, ``leaky`` (greedy,
  but half its decisions random: it discards good cards), ``scavenger``
  (greedy, but takes any discard worth 3 or less), then epsilon-greedy fillers
  for bigger tables. Under ``rotations`` the order around the table is the
  sorted names, so ``scavenger`` always plays right after ``leaky`` and is
  first to see what it throws away; under ``balanced`` every bot follows
  every other equally often.
- ``real``: ``strong`` and ``minimal`` (examples/python), the built-in
  ``greedy`` and ``random``, then ``eps10``, ``eps20`` (greedy with 10% / 20%
  random decisions). Under ``rotations`` the order is again the sorted names.

The same deals are played under both designs; each bot's Plackett-Luce Elo
(pool mean 0) is printed for both, with the per-block variance of its block
score (the share of the others it beat, averaged over the block), that
variance per game of the block (x games a block: what a fixed budget of games
pays), and ``bias``: its Elo under rotations minus its Elo balanced.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from skyjo_ref.seating import design
from skyjo_ref.stats import plackett_luce as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ratings import each_size
from inprocess import REAL_FIELD, play_block, share_beaten

FIELDS = {"synthetic": ("greedy", "leaky", "scavenger", "eps10", "eps20", "eps30"), "real": REAL_FIELD}


def measure(k: int, deals: int, tag: str, field: str = "synthetic") -> dict[str, object]:
    table = tuple(sorted(FIELDS[field][:k]))
    out: dict[str, object] = {"players": k, "deals": deals, "field": field, "table": list(table)}
    started = time.process_time()
    elo: dict[str, dict[str, float]] = {}
    for kind in ("rotations", "balanced"):
        games = []
        block_scores: dict[str, list[float]] = {name: [] for name in table}
        for deal in range(deals):
            totals = dict.fromkeys(table, 0.0)
            block = play_block(table, deal, kind, tag)
            for game in block:
                games.append(((deal,), game))
                for name, share in share_beaten(game).items():
                    totals[name] += share
            for name in table:
                block_scores[name].append(totals[name] / len(block))
        ratings = pl.rate(pl.order_data(games, list(table)), elo=0.0, samples=200, seed=tag)
        size = len(design(k, kind))
        rows = {}
        for rating in ratings:
            values = block_scores[rating.name]
            mean = sum(values) / len(values)
            var = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
            elo.setdefault(rating.name, {})[kind] = rating.elo
            rows[rating.name] = {
                "elo": round(rating.elo, 1),
                "ci": [round(rating.low or 0.0, 1), round(rating.high or 0.0, 1)],
                "block_var": round(var, 5),
                "block_var_x_games": round(var * size, 4),
            }
        out[kind] = {"games_per_block": size, "games": len(games), "bots": rows}
    out["bias"] = {name: round(e["rotations"] - e["balanced"], 1) for name, e in elo.items()}
    out["cpu_seconds"] = round(time.process_time() - started, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="3,4,6")
    parser.add_argument("--deals", type=int, default=150)
    parser.add_argument("--field", choices=tuple(FIELDS), default="synthetic")
    parser.add_argument("--seed", default="seating")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    each_size(args.sizes, lambda k: measure(k, args.deals, args.seed, args.field), args.json)


if __name__ == "__main__":
    main()
