"""The multi-player gate's error rates and games to a verdict, by simulation through the real tracker.

    python benchmarks/bench_gate_players.py                     # K = 3, 4, 6; 1,000 gates per truth
    python benchmarks/bench_gate_players.py --players 3 --runs 200

Each simulated gate feeds :class:`skyjo_ref.gate.tracker.GateTracker` (the
code the CLI runs) with stored games of a K-player table: the candidate and
K - 1 identical baseline copies, each deal one block of K games (the
candidate in each seat). A game's order is a Plackett-Luce draw (a Gumbel
race) in which the candidate's strength is ``elo`` above the copies', plus a
shared seat luck per deal (the same cards for the block's games): so the
candidate's chance to finish ahead of one copy is ``1 / (1 + 10^(-elo/400))``,
the gate's definition of Elo at K players (docs/gate.md). At true Elo =
elo0 the share accepted is the false positive rate (alpha), at elo1 the share
rejected is the false negative rate (beta).
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

from skyjo_bot.types import Rules, TimeControl
from skyjo_ref.gate.spec import GateSpec
from skyjo_ref.gate.tracker import GateTracker
from skyjo_ref.players import parse_bot_spec
from skyjo_ref.stats import sprt
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import SeatResult, StoredGame

NATS_PER_ELO = math.log(10.0) / 400.0


def gate_spec(players: int, elo0: float, elo1: float, max_games: int) -> GateSpec:
    return GateSpec(
        candidate=parse_bot_spec("greedy"),
        baseline=parse_bot_spec("random"),
        hypotheses=sprt.Hypotheses(elo0, elo1),
        rules=Rules(),
        time_control=TimeControl(),
        seed="sim",
        max_games=max_games,
        concurrency=1,
        output=Path("unused"),
        players=players,
    )


def simulate(spec: GateSpec, elo: float, rng: random.Random, seat_luck: float = 0.3) -> GateTracker:
    """One gate to its verdict (or cap) at true Elo ``elo``."""
    tracker = GateTracker(spec)
    cand = spec.names[0]
    strength = {name: (elo * NATS_PER_ELO if name == cand else 0.0) for name in spec.seat_names}
    k = spec.players
    deal = 0
    while not tracker.done:
        luck = [rng.gauss(0.0, seat_luck) for _ in range(k)]
        for rotation in range(k):
            game = GameId(spec.table, deal, rotation)
            keys = [strength[bot] + luck[s] - math.log(-math.log(rng.random())) for s, bot in enumerate(game.seats)]
            order = sorted(range(k), key=lambda s: -keys[s])
            ranks = [0] * k
            for place, s in enumerate(order):
                ranks[s] = place + 1
            seats = tuple(SeatResult(bot, ranks[s], ranks[s], 0, False, ()) for s, bot in enumerate(game.seats))
            tracker.add(StoredGame(game, seats), None)
        deal += 1
    return tracker


def measure(players: int, runs: int, elo0: float, elo1: float, seed: str) -> dict[str, object]:
    spec = gate_spec(players, elo0, elo1, max_games=200_000)
    out: dict[str, object] = {"players": players, "elo0": elo0, "elo1": elo1, "runs": runs}
    for label, truth, wrong in (("at_elo0", elo0, "accepted"), ("at_elo1", elo1, "rejected")):
        rng = random.Random(f"{seed}/{players}/{label}")
        trackers = [simulate(spec, truth, rng) for _ in range(runs)]
        errors = sum(t.verdict == wrong for t in trackers)
        out[label] = {
            "wrong_verdicts": errors / runs,
            "mean_games": sum(t.games for t in trackers) / runs,
            "inconclusive": sum(t.verdict == "inconclusive" for t in trackers),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", default="3,4,6")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=20.0)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    results = [measure(int(k), args.runs, args.elo0, args.elo1, args.seed) for k in args.players.split(",")]
    for result in results:
        print(json.dumps(result), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
