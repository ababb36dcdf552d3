"""Measure two bots against each other in-process, the way the strong bot was tuned.

Duplicate games straight on the rules engine (no referee): every deal is
played in every rotation of the seats, so luck of the cards cancels out.
Prints the pairwise score of the first bot, the Elo difference and a bootstrap
interval over deals.

    python examples/python/duel.py --deals 200               # strong vs greedy, 2 players
    python examples/python/duel.py --deals 100 --players 4   # 2 strong vs 2 greedy
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from skyjo_bot import Bot, Rules
from skyjo_ref.bots import make_builtin
from skyjo_ref.rules.engine import Game

sys.path.insert(0, str(Path(__file__).resolve().parent))
from strong_bot import StrongBot


def make_bot(name: str, seed: int) -> Bot:
    if name == "strong":
        return StrongBot()
    return make_builtin(name, seed)


def play_game(bots: Sequence[Bot], seed: int | str, rules: Rules) -> list[int]:
    """One game; returns the final totals, one per seat."""
    game = Game(len(bots), rules, seed=seed, record_events=False)
    while not game.over:
        seat = game.seat
        game.apply(bots[seat].decide(game.view(seat)))
    return list(game.totals)


def deal_score(args: tuple[str, str, int, int, str]) -> tuple[float, int]:
    """Pairwise points of bot A over bot B on one deal, over every seat rotation.

    Seats alternate A, B, A, B...; each rotation is one game. Every (A seat,
    B seat) pair in a game is one pairwise comparison: 1 if A's total is lower,
    0.5 on a tie. Returns (points, comparisons).
    """
    name_a, name_b, deal, players, rules_preset = args
    rules = Rules.from_dict({"preset": rules_preset})
    points = 0.0
    count = 0
    for shift in range(players):
        names = [name_a if (seat + shift) % 2 == 0 else name_b for seat in range(players)]
        bots = [make_bot(n, deal * 31 + i) for i, n in enumerate(names)]
        totals = play_game(bots, deal, rules)
        for a in range(players):
            if names[a] != name_a:
                continue
            for b in range(players):
                if names[b] != name_b:
                    continue
                count += 1
                points += 1.0 if totals[a] < totals[b] else 0.5 if totals[a] == totals[b] else 0.0
    return points, count


def elo(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return 400 * math.log10(p / (1 - p))


def measure(
    name_a: str,
    name_b: str,
    deals: int,
    players: int = 2,
    preset: str = "official",
    first_deal: int = 0,
    workers: int = 2,
    progress: Callable[[int], None] | None = None,
) -> tuple[float, float, tuple[float, float]]:
    """(pairwise score of A, Elo difference, 95% bootstrap interval of the Elo)."""
    jobs = [(name_a, name_b, d, players, preset) for d in range(first_deal, first_deal + deals)]
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(deal_score, jobs, chunksize=4))
    points = sum(p for p, _ in results)
    count = sum(c for _, c in results)
    score = points / count
    rng = random.Random(0)
    samples = []
    for _ in range(1000):
        pick = [results[rng.randrange(len(results))] for _ in results]
        samples.append(elo(sum(p for p, _ in pick) / sum(c for _, c in pick)))
    samples.sort()
    return score, elo(score), (samples[25], samples[974])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", default="strong")
    parser.add_argument("--b", default="greedy")
    parser.add_argument("--deals", type=int, default=100)
    parser.add_argument("--first-deal", type=int, default=0)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--rules", default="official")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    score, diff, (low, high) = measure(
        args.a, args.b, args.deals, args.players, args.rules, args.first_deal, args.workers
    )
    games = args.deals * args.players
    print(
        f"{args.a} vs {args.b}, {args.players} players, {args.rules}, {games} games: "
        f"score {score:.3f}, Elo {diff:+.0f} (95% {low:+.0f} .. {high:+.0f})"
    )


if __name__ == "__main__":
    main()
