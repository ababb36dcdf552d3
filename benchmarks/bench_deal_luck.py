"""How much of a seat's result one deal explains in real Skyjo, across the tables that share the deal.

    python benchmarks/bench_deal_luck.py                 # 200 deals, 2 and 3 players
    python benchmarks/bench_deal_luck.py --deals 40 --sizes 2   # a smoke run

Without a seed secret every table of a league plays deal ``d`` from the same deck, so whatever that deck gives
a seat (good cards for seat 0, say) is shared by every table's games of the deal. This plays real bots (the
built-in ``greedy`` and ``random``, the example ``minimal`` and ``strong``) in-process: every table of ``k`` of
them on the same deals, each deal in the table's balanced seatings, and measures:

- ``icc``: the share of a seat's result that the deal explains, net of who sat there: the result is the seat's
  total minus the table's mean total in that game (lower is better), minus its bot's and seat's average; a
  one-way random-effects ANOVA over deals gives the intraclass correlation;
- ``design_effect``: ``1 + (m - 1) x icc`` for ``m`` games of one deal across all tables: how much larger the
  variance of a deal's mean is than if its games were independent. Resampling (table, deal) blocks as if
  independent then makes intervals ``sqrt(design_effect / (1 + (b - 1) x icc))`` too narrow, ``b`` a block's
  games; resampling whole deals (``rating.resample: deal``, the default without a secret) does not.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from skyjo_bot.bot import Bot
from skyjo_bot.loader import load_bot
from skyjo_bot.types import Rules
from skyjo_ref.bots import make_builtin
from skyjo_ref.rules.engine import Game
from skyjo_ref.seating import design, seat_order
from skyjo_ref.tournament.schedule import deal_match_seed

ROOT = Path(__file__).resolve().parent.parent


def bots() -> dict[str, Bot]:
    return {
        "greedy": make_builtin("greedy"),
        "random": make_builtin("random", 7),
        "minimal": load_bot(str(ROOT / "examples" / "python" / "minimal_bot.py")),
        "strong": load_bot(str(ROOT / "examples" / "python" / "strong_bot.py")),
    }


def play(table: tuple[str, ...], order: tuple[int, ...], seed: str, players: dict[str, Bot]) -> list[int]:
    """One game of ``table`` seated by ``order``: every seat's total."""
    seated = [table[i] for i in order]
    game = Game(len(seated), Rules(), seed=seed, players=seated)
    while game.current_seat is not None:
        seat = game.current_seat
        game.apply(players[seated[seat]].decide(game.view(seat)))
    return list(game.totals)


def measure(k: int, deals: int) -> dict[str, Any]:
    players = bots()
    tables = list(itertools.combinations(sorted(players), k))
    rows: list[tuple[int, str, int, float]] = []  # (deal, bot, seat, result)
    for deal in range(deals):
        seed = deal_match_seed("deal-luck", deal)
        for table in tables:
            for index in design(k, "balanced"):
                order = seat_order(k, index)
                totals = play(table, order, seed, players)
                mean = sum(totals) / k
                rows.extend((deal, table[order[s]], s, totals[s] - mean) for s in range(k))
    # net of who sat where: subtract each (bot, seat) average
    cell: dict[tuple[str, int], list[float]] = {}
    for _, bot, seat, y in rows:
        cell.setdefault((bot, seat), []).append(y)
    means = {key: statistics.fmean(values) for key, values in cell.items()}
    by_deal: dict[tuple[int, int], list[float]] = {}
    for deal, bot, seat, y in rows:
        by_deal.setdefault((deal, seat), []).append(y - means[(bot, seat)])
    groups = list(by_deal.values())
    m = len(groups[0])  # results of one seat of one deal, across tables and seatings
    grand = statistics.fmean(v for g in groups for v in g)
    between = m * sum((statistics.fmean(g) - grand) ** 2 for g in groups) / (len(groups) - 1)
    within = sum((v - statistics.fmean(g)) ** 2 for g in groups for v in g) / (len(groups) * (m - 1))
    icc = max(0.0, (between - within) / (between + (m - 1) * within))
    block = len(design(k, "balanced"))
    return {
        "players": k,
        "bots": sorted(players),
        "tables": len(tables),
        "deals": deals,
        "games_per_deal": len(tables) * block,
        "icc": round(icc, 4),
        "design_effect_per_deal": round(1 + (len(tables) * block - 1) * icc, 2),
        "interval_too_narrow_by_block_resampling": round(
            ((1 + (len(tables) * block - 1) * icc) / (1 + (block - 1) * icc)) ** 0.5, 3
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--sizes", default="2,3")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    results = []
    for k in (int(s) for s in args.sizes.split(",")):
        result = measure(k, args.deals)
        results.append(result)
        print(json.dumps(result), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    sys.exit(main())
