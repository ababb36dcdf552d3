"""Tune the strong example bot's weights by self-play through skyjo_ref.env (cross-entropy method, numpy only).

    python examples/learning/train_cem.py                     # the run in docs/learning.md (about 15 min, one core)
    python examples/learning/train_cem.py --generations 2 --population 4 --deals 2 --out /tmp/w.json   # a smoke run

Each generation samples ``--population`` weight vectors from a diagonal
Gaussian (the first one is the current mean itself), plays each against the
untuned strong bot on the same ``--deals`` deals, each deal in both seatings
(duplicate games: luck of the cards cancels), and scores a candidate by its
mean point margin (the opponent's total minus its own; higher is better). The
best quarter (the elites) gives the next mean and standard deviation, plus a
little extra noise that shrinks over the generations. Games are played through
the PettingZoo environment (``SkyjoEnv``): each bot decides on ``env.view(agent)``,
the same :class:`View` the referee would send it.

Everything follows from ``--seed``: the same command prints the same numbers
and writes the same weights. The final mean is then checked on fresh deals
(``--check-deals``) and saved, with those figures, as JSON for tuned_bot.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from skyjo_bot import Bot
from skyjo_ref.env import SkyjoEnv, action_index

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from strong_bot import StrongBot, Weights

HERE = Path(__file__).resolve().parent
#: The weights tuned, and the first standard deviation of each (about a third of a sensible range).
SEARCH: dict[str, float] = {
    "pair_potential": 0.3,
    "draw_rate": 0.5,
    "tempo": 0.05,
    "tempo_cap": 4.0,
    "feed_weight": 0.3,
    "feed_baseline": 1.0,
    "opp_last_turn_gain": 1.0,
    "finish_bonus": 1.0,
    "take_margin": 1.0,
}
#: Weights that make no sense below zero.
NON_NEGATIVE = {"pair_potential", "draw_rate", "tempo", "tempo_cap", "feed_weight", "feed_baseline"}
NAMES = tuple(SEARCH)


def to_weights(vector: Sequence[float]) -> Weights:
    values = {name: float(max(0.0, v) if name in NON_NEGATIVE else v) for name, v in zip(NAMES, vector)}
    return Weights(**values)


def play(env: SkyjoEnv, bots: Sequence[Bot], game_seed: str) -> list[int]:
    """One game through the environment; returns the final totals, one per seat."""
    env.reset(options={"game_seed": game_seed})
    while not env.terminations[env.agent_selection]:
        agent = env.agent_selection
        bot = bots[env.possible_agents.index(agent)]
        env.step(action_index(bot.decide(env.view(agent))))
    assert env.game is not None
    return list(env.game.totals)


def duel(env: SkyjoEnv, weights: Weights, deals: Sequence[str]) -> tuple[float, float]:
    """(mean point margin, pairwise score) of ``weights`` against the untuned bot, each deal in both seatings."""
    margins: list[float] = []
    points = 0.0
    for deal in deals:
        for tuned_seat in (0, 1):
            bots: list[Bot] = [StrongBot(), StrongBot()]
            bots[tuned_seat] = StrongBot(weights)
            totals = play(env, bots, deal)
            mine, theirs = totals[tuned_seat], totals[1 - tuned_seat]
            margins.append(theirs - mine)
            points += 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
    return float(np.mean(margins)), points / len(margins)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--generations", type=int, default=10)
    parser.add_argument("--population", type=int, default=12)
    parser.add_argument("--deals", type=int, default=12, help="deals per generation (each played in both seatings)")
    parser.add_argument("--elite", type=float, default=0.25, help="share of the population kept as elites")
    parser.add_argument("--check-deals", type=int, default=100, help="fresh deals for the final check")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", type=Path, default=HERE / "tuned_weights.json")
    args = parser.parse_args(argv)
    if min(args.generations, args.population, args.deals) < 1 or args.check_deals < 0 or not 0 < args.elite <= 1:
        parser.error("--generations, --population and --deals must be >= 1, --elite in (0, 1]")

    rng = np.random.default_rng(args.seed)
    env = SkyjoEnv(2)
    defaults = Weights()
    mean = np.array([getattr(defaults, n) for n in NAMES], dtype=float)
    std = np.array([SEARCH[n] for n in NAMES], dtype=float)
    floor = std * 0.1
    n_elite = max(1, round(args.population * args.elite))
    started = time.process_time()
    history: list[dict[str, Any]] = []
    for g in range(args.generations):
        deals = [f"cem/{args.seed}/gen{g}/deal{d}" for d in range(args.deals)]
        samples = rng.normal(mean, std, size=(args.population, len(NAMES)))
        samples[0] = mean
        fitness = []
        for vector in samples:
            margin, _ = duel(env, to_weights(vector), deals)
            fitness.append(margin)
        order = np.argsort(fitness)[::-1]
        elites = samples[order[:n_elite]]
        mean = elites.mean(axis=0)
        std = elites.std(axis=0) + floor * (1.0 - g / args.generations)
        best = float(fitness[order[0]])
        print(
            f"generation {g + 1}/{args.generations}: mean margin {fitness[0]:+.2f} (the mean's), "
            f"best {best:+.2f}, elites {np.mean([fitness[i] for i in order[:n_elite]]):+.2f}; "
            f"{time.process_time() - started:.0f} s",
            flush=True,
        )
        history.append({"generation": g + 1, "mean_margin": float(fitness[0]), "best_margin": best})

    tuned = to_weights(mean)
    print("tuned weights:", json.dumps(dataclasses.asdict(tuned)))
    check: dict[str, Any] = {}
    if args.check_deals:
        deals = [f"cem/{args.seed}/check/deal{d}" for d in range(args.check_deals)]
        margin, score = duel(env, tuned, deals)
        check = {"deals": args.check_deals, "games": 2 * args.check_deals, "mean_margin": margin, "score": score}
        print(f"check on {2 * args.check_deals} fresh games: margin {margin:+.2f} points a game, score {score:.3f}")
    result = {
        "weights": dataclasses.asdict(tuned),
        "defaults": dataclasses.asdict(defaults),
        "command": (
            "python examples/learning/train_cem.py " + " ".join(sys.argv[1:] if argv is None else argv)
        ).rstrip(),
        "seed": args.seed,
        "generations": args.generations,
        "population": args.population,
        "deals": args.deals,
        "history": history,
        "check": check,
        "cpu_seconds": round(time.process_time() - started, 1),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
