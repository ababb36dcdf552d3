"""Seat designs measured: a bot that feeds on its right-hand neighbour's discards, rated under rotations and balanced.

    python benchmarks/bench_seating.py                  # 3, 4 and 6 players, 150 deals
    python benchmarks/bench_seating.py --sizes 3 --deals 40

In-process games (engine and bots, no gRPC) on seeded deals. The field, in name
order: ``greedy``, ``leaky`` (greedy, but half its decisions random: it
discards good cards), ``scavenger`` (greedy, but takes any discard worth 3 or
less), then epsilon-greedy fillers for bigger tables. Under ``rotations`` the
order around the table is the sorted names, so ``scavenger`` always plays
right after ``leaky`` and is first to see what it throws away; under
``balanced`` every bot follows every other equally often. The same deals are
played under both designs; each bot's Plackett-Luce Elo (pool mean 0) is
printed for both, with the per-block variance of its block score (the share
of the others it beat, averaged over the block) and that variance per game
of the block (x games a block: what a fixed budget of games pays).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Sequence

from skyjo_bot import Action, Bot, View
from skyjo_bot.types import DecisionKind
from skyjo_ref.bots import GreedyBot
from skyjo_ref.bots.greedy import best_placement
from skyjo_ref.match.schedule import deal_seed
from skyjo_ref.rules.engine import Game
from skyjo_ref.seating import design, seat_order
from skyjo_ref.stats import plackett_luce as pl

FIELD = ("greedy", "leaky", "scavenger", "eps10", "eps20", "eps30")


class Variant(Bot):
    """Greedy with a twist: random decisions (``epsilon``) and/or eager discard taking (``take_at``)."""

    def __init__(self, epsilon: float, take_at: int | None, seed: str) -> None:
        super().__init__()
        self.epsilon = epsilon
        self.take_at = take_at
        self.rng = random.Random(seed)
        self.greedy = GreedyBot()
        self.took = False

    def decide(self, view: View) -> Action:
        if self.epsilon and self.rng.random() < self.epsilon:
            return self.rng.choice(view.legal_actions)
        top = view.discard_top
        if self.take_at is not None and view.decision is DecisionKind.DRAW_OR_TAKE:
            if top is not None and top <= self.take_at:
                return Action.take()
        if self.take_at is not None and view.decision is DecisionKind.SWAP_AFTER_TAKE and view.hand is not None:
            return Action.swap(-best_placement(view, view.hand)[1])
        return self.greedy.decide(view)


def make(name: str, seed: str) -> Bot:
    if name == "greedy":
        return Variant(0.0, None, seed)
    if name == "leaky":
        return Variant(0.5, None, seed)
    if name == "scavenger":
        return Variant(0.0, 3, seed)
    return Variant(int(name.removeprefix("eps")) / 100, None, seed)


def play(bots: Sequence[str], deal: int, tag: str) -> list[int]:
    """Ranks by seat of one game with ``bots`` in seat order."""
    game = Game(len(bots), seed=deal_seed(tag, deal))
    players = [make(name, f"{tag}/{deal}/{seat}/{name}") for seat, name in enumerate(bots)]
    while not game.over:
        seat = game.current_seat
        assert seat is not None
        game.apply(players[seat].decide(game.view(seat)))
    assert game.ranks is not None
    return list(game.ranks)


def measure(k: int, deals: int, tag: str) -> dict[str, object]:
    table = tuple(sorted(FIELD[:k]))
    out: dict[str, object] = {"players": k, "deals": deals, "table": list(table)}
    for kind in ("rotations", "balanced"):
        games = []
        block_scores: dict[str, list[float]] = {name: [] for name in table}
        for deal in range(deals):
            totals = dict.fromkeys(table, 0.0)
            seatings = design(k, kind)
            for index in seatings:
                seats = [table[i] for i in seat_order(k, index)]
                ranks = play(seats, deal, tag)
                games.append(((deal,), list(zip(seats, ranks))))
                for s, name in enumerate(seats):
                    beaten = sum(1.0 if ranks[s] < r else 0.5 if ranks[s] == r else 0.0 for r in ranks) - 0.5
                    totals[name] += beaten / (k - 1)
            for name in table:
                block_scores[name].append(totals[name] / len(seatings))
        ratings = pl.rate(pl.order_data(games, list(table)), elo=0.0, samples=200, seed=tag)
        size = len(design(k, kind))
        rows = {}
        for rating in ratings:
            values = block_scores[rating.name]
            mean = sum(values) / len(values)
            var = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
            rows[rating.name] = {
                "elo": round(rating.elo, 1),
                "ci": [round(rating.low or 0.0, 1), round(rating.high or 0.0, 1)],
                "block_var": round(var, 5),
                "block_var_x_games": round(var * size, 4),
            }
        out[kind] = {"games_per_block": size, "games": len(games), "bots": rows}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="3,4,6")
    parser.add_argument("--deals", type=int, default=150)
    parser.add_argument("--seed", default="seating")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    results = []
    for k in (int(s) for s in args.sizes.split(",")):
        result = measure(k, args.deals, args.seed)
        results.append(result)
        print(json.dumps(result), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
