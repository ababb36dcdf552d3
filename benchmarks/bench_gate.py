"""Games a gate takes to a verdict: independent deals vs duplicate deals vs duplicate + luck adjustment.

    python benchmarks/bench_gate.py                    # the full measurement (several minutes)
    python benchmarks/bench_gate.py --quick            # a smoke run
    python benchmarks/bench_gate.py --json out.json

1. Pools of deal blocks, played in-process (engine + bots, no gRPC) on seeded
   deals: each deal once with the candidate in seat 0 and once in seat 1. Per
   game: the candidate's score and the luck features the gate uses
   (:mod:`skyjo_ref.gate.luck`). Pairs of bots at a few true Elo differences:
   an epsilon-greedy candidate (plays a random legal action with probability
   epsilon, else greedy) against an epsilon-greedy baseline, and the minimal
   example bot against greedy (the pair the issue measured).
2. Variance of the statistic per pair of games (what the number of games a
   sequential test needs is proportional to): independent deals (the two
   games of a pair on different deals), duplicate (the same deal, both
   seatings), duplicate + luck adjustment (least-squares control variate).
3. Sequential tests by resampling blocks with replacement from each pool
   (so the pool's mean is the true value): the gate's test with bounds
   ``[elo0, elo1]`` chosen around each pair's true Elo, ``runs`` times per
   design; mean games to a verdict and the share of wrong verdicts.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skyjo_bot import Action, Bot, View
from skyjo_ref.bots import GreedyBot
from skyjo_ref.gate.luck import game_luck
from skyjo_ref.gate.tracker import DRAW_CLIP, LuckFit
from skyjo_ref.match.schedule import deal_seed
from skyjo_ref.rules.engine import Game
from skyjo_ref.stats import sprt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "python"))

from minimal_bot import MinimalBot  # noqa: E402


class EpsilonGreedy(Bot):
    """Greedy, except that with probability ``epsilon`` it plays a uniformly random legal action."""

    def __init__(self, epsilon: float, seed: str) -> None:
        super().__init__()
        self.epsilon = epsilon
        self.rng = random.Random(seed)
        self.greedy = GreedyBot()

    def decide(self, view: View) -> Action:
        if self.epsilon and self.rng.random() < self.epsilon:
            return self.rng.choice(view.legal_actions)
        return self.greedy.decide(view)


def make_bot(kind: str, seed: str) -> Bot:
    if kind == "minimal":
        return MinimalBot()
    return EpsilonGreedy(float(kind.removeprefix("eps")), seed)


@dataclass(frozen=True, slots=True)
class GameOutcome:
    score: float  # the candidate's
    luck: tuple[float, float, float, float]  # cand draw, base draw, cand reveal, base reveal


def play(candidate: str, baseline: str, deal: int, cand_seat: int, tag: str) -> GameOutcome:
    game = Game(2, seed=deal_seed(tag, deal))
    bots = [make_bot(baseline, f"{tag}/{deal}/{cand_seat}/b")] * 2
    bots[cand_seat] = make_bot(candidate, f"{tag}/{deal}/{cand_seat}/c")
    while not game.over:
        seat = game.current_seat
        assert seat is not None
        game.apply(bots[seat].decide(game.view(seat)))
    assert game.ranks is not None
    mine, other = cand_seat, 1 - cand_seat
    score = 1.0 if game.ranks[mine] < game.ranks[other] else 0.5 if game.ranks[mine] == game.ranks[other] else 0.0
    luck = game_luck(game, lambda card: float(min(card, DRAW_CLIP)))
    return GameOutcome(score, (luck.draw[mine], luck.draw[other], luck.reveal[mine], luck.reveal[other]))


Block = tuple[GameOutcome, GameOutcome]


def pool(candidate: str, baseline: str, blocks: int, tag: str) -> list[Block]:
    return [(play(candidate, baseline, d, 0, tag), play(candidate, baseline, d, 1, tag)) for d in range(blocks)]


# ----------------------------------------------------------------------- statistics


def variance(values: Sequence[float]) -> float:
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / (len(values) - 1)


def adjusted_variance(blocks: Sequence[Block]) -> float:
    fit = LuckFit()
    for a, b in blocks:
        fit.add((a.score + b.score) / 2, [x + y for x, y in zip(a.luck, b.luck)])
    return fit.adjusted()[1]


def variances(blocks: Sequence[Block]) -> dict[str, float]:
    """Variance of the pair score (0..1) for each design."""
    half = len(blocks) // 2
    independent = [(blocks[2 * k][0].score + blocks[2 * k + 1][1].score) / 2 for k in range(half)]
    duplicate = [(a.score + b.score) / 2 for a, b in blocks]
    return {
        "independent": variance(independent),
        "duplicate": variance(duplicate),
        "duplicate+luck": adjusted_variance(blocks),
    }


def centred(blocks: Sequence[Block]) -> list[Block]:
    """The pool with its luck features shifted to mean zero.

    Resampling makes the pool the population: its luck must have mean zero
    there, as it has in play (a pool's sample mean is not exactly zero, and
    a control variate with a nonzero mean would bias the resampled tests).
    """
    n = len(blocks)
    means = [sum(a.luck[i] + b.luck[i] for a, b in blocks) / (2 * n) for i in range(4)]

    def shift(game: GameOutcome) -> GameOutcome:
        return GameOutcome(game.score, tuple(x - m for x, m in zip(game.luck, means)))  # type: ignore[arg-type]

    return [(shift(a), shift(b)) for a, b in blocks]


def sequential(
    design: str, blocks: Sequence[Block], hyp: sprt.Hypotheses, rng: random.Random, cap: int
) -> tuple[int, str]:
    """One test on blocks drawn with replacement: (games, verdict)."""
    counts = [0] * 5
    overshoot = sprt.Overshoot()
    fit = LuckFit()
    s0, s1 = sprt.score_of(hyp.elo0), sprt.score_of(hyp.elo1)
    n = len(blocks)
    for k in range(1, cap + 1):
        if design == "independent":  # two games on two different deals
            first, second = blocks[rng.randrange(n)][0], blocks[rng.randrange(n)][1]
        else:
            first, second = blocks[rng.randrange(n)]
        score = first.score + second.score
        counts[round(score * 2)] += 1
        if design == "duplicate+luck":
            fit.add(score / 2, [x + y for x, y in zip(first.luck, second.luck)])
            value = fit.llr(s0, s1)
        else:
            value = sprt.llr(counts, hyp.elo0, hyp.elo1)
        overshoot.add(value)
        decision = sprt.decide_at(value, overshoot, hyp)
        if decision.verdict != "running":
            return 2 * k, decision.verdict
    return 2 * cap, "inconclusive"


@dataclass(slots=True)
class Cell:
    pair: str
    true_elo: float
    elo0: float
    elo1: float
    design: str
    pair_variance: float
    mean_games: float
    wrong: float  # share of verdicts against the truth (accepting below elo0, rejecting above elo1)
    runs: int


def measure(
    name: str, blocks: Sequence[Block], bounds: Sequence[tuple[float, float]], runs: int, seed: int
) -> list[Cell]:
    duplicate = [(a.score + b.score) / 2 for a, b in blocks]
    true_elo = sprt.elo_of(sum(duplicate) / len(duplicate))
    var = variances(blocks)
    cells = []
    for elo0, elo1 in bounds:
        hyp = sprt.Hypotheses(elo0, elo1)
        for design in ("independent", "duplicate", "duplicate+luck"):
            rng = random.Random(f"{seed}/{name}/{elo0}/{design}")
            results = [sequential(design, blocks, hyp, rng, 20_000) for _ in range(runs)]
            games = sum(g for g, _ in results) / runs
            if true_elo <= elo0:
                wrong = sum(v == "accepted" for _, v in results) / runs
            elif true_elo >= elo1:
                wrong = sum(v == "rejected" for _, v in results) / runs
            else:
                wrong = float("nan")
            cells.append(Cell(name, true_elo, elo0, elo1, design, var[design], games, wrong, runs))
    return cells


PAIRS = {  # name: (candidate, baseline)
    "eps0.10 vs eps0.10": ("eps0.10", "eps0.10"),
    "eps0.05 vs eps0.10": ("eps0.05", "eps0.10"),
    "eps0.15 vs eps0.10": ("eps0.15", "eps0.10"),
    "minimal vs greedy": ("minimal", "eps0"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blocks", type=int, default=1500, help="deal blocks per pair")
    parser.add_argument("--runs", type=int, default=150, help="sequential tests per design and bounds")
    parser.add_argument("--quick", action="store_true", help="a smoke run (few blocks and runs)")
    parser.add_argument("--json", type=Path, help="write every number here")
    parser.add_argument("--pools", type=Path, help="cache the played pools in this JSON file")
    args = parser.parse_args()
    blocks_per_pair, runs = (120, 20) if args.quick else (args.blocks, args.runs)
    started = time.monotonic()
    pools: dict[str, list[Block]] = {}
    cached: dict[str, Any] = {}
    if args.pools is not None and args.pools.exists():
        cached = json.loads(args.pools.read_text())
    for name, (candidate, baseline) in PAIRS.items():
        if name in cached and len(cached[name]) >= blocks_per_pair:
            pools[name] = [
                (GameOutcome(a[0], tuple(a[1])), GameOutcome(b[0], tuple(b[1])))  # type: ignore[arg-type]
                for a, b in cached[name][:blocks_per_pair]
            ]
            continue
        t0 = time.monotonic()
        pools[name] = pool(candidate, baseline, blocks_per_pair, f"bench-gate/{name}")
        print(f"played {name}: {2 * blocks_per_pair} games in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    if args.pools is not None:
        args.pools.write_text(
            json.dumps({k: [[[a.score, a.luck], [b.score, b.luck]] for a, b in v] for k, v in pools.items()})
        )

    print(f"{'pair':<22} {'true Elo':>8}  {'var indep':>9} {'var dup':>8} {'var dup+luck':>12}  dup  dup+luck")
    for name, blocks in pools.items():
        var = variances(blocks)
        duplicate = [(a.score + b.score) / 2 for a, b in blocks]
        true_elo = sprt.elo_of(sum(duplicate) / len(duplicate))
        print(
            f"{name:<22} {true_elo:8.1f}  {var['independent']:9.4f} {var['duplicate']:8.4f} "
            f"{var['duplicate+luck']:12.4f}  {var['duplicate'] / var['independent']:.2f} "
            f"{var['duplicate+luck'] / var['independent']:.2f}"
        )

    cells: list[Cell] = []
    for name, blocks in pools.items():
        duplicate = [(a.score + b.score) / 2 for a, b in blocks]
        true_elo = sprt.elo_of(sum(duplicate) / len(duplicate))
        # the gate's bounds width (20 Elo), placed so the truth sits at elo0, in the middle and at elo1
        width = 20.0
        bounds = [
            (true_elo, true_elo + width),
            (true_elo - width / 2, true_elo + width / 2),
            (true_elo - width, true_elo),
        ]
        cells += measure(name, centred(blocks), bounds, runs, seed=1)
    print()
    print(f"{'pair':<22} {'truth at':>9} {'design':<15} {'games':>7} {'wrong':>6} {'vs indep':>8}")
    base: dict[tuple[str, float], float] = {}
    for cell in cells:
        where = (
            "elo0" if cell.true_elo <= cell.elo0 + 1e-9 else "elo1" if cell.true_elo >= cell.elo1 - 1e-9 else "middle"
        )
        if cell.design == "independent":
            base[(cell.pair, cell.elo0)] = cell.mean_games
        ratio = cell.mean_games / base[(cell.pair, cell.elo0)]
        wrong = "-" if math.isnan(cell.wrong) else f"{cell.wrong:.3f}"
        print(f"{cell.pair:<22} {where:>9} {cell.design:<15} {cell.mean_games:7.0f} {wrong:>6} {ratio:8.2f}")
    print(f"\n{time.monotonic() - started:.0f} s", file=sys.stderr)
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {"blocks": blocks_per_pair, "runs": runs, "cells": [dataclasses.asdict(c) for c in cells]}, indent=2
            )
        )


if __name__ == "__main__":
    main()
