"""Adaptive schedule vs round robin on simulated leagues with known strengths (docs/performance.md).

Each league has ``n`` bots with Elo strengths evenly spaced over the given spread (best minus worst; the
names in a seeded random order, so the first round's circle knows nothing of the strengths);
a two-player duplicate block is two games whose winner is drawn from the Bradley-Terry probability of the
true strengths (draws and the duplicate deal's shared luck are not simulated: each game is independent).
Both schedules stop on the same rule (:func:`skyjo_ref.tournament.adaptive.status`: the order of the top
``--top`` places, and who they are, decided at ``--confidence`` together): the adaptive one after each of its
rounds, the round robin after full cycles (every pair one block, on a new deal) checked at cycles growing by
1/8 each time and credited with the cycle after its last failed check (a lower bound: it favours the round
robin). Reported per setting: median games to stop, the share of leagues whose top order when stopped equals
the true one, and the saving.

    python benchmarks/bench_adaptive.py --leagues 20 --sizes 12 24 40 --spreads 600 1200 2400
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Sequence
from typing import Any

from skyjo_ref.tournament.adaptive import AdaptiveSettings, Status, first_round, next_round, status_of_totals


class League:
    """True strengths, and the pairwise totals of the games played so far."""

    def __init__(self, n: int, spread: float, rng: random.Random) -> None:
        self.names = [f"b{i:02d}" for i in range(n)]
        levels = [spread * (i / (n - 1) - 0.5) for i in range(n)]
        rng.shuffle(levels)
        self.strength = dict(zip(self.names, levels, strict=True))
        self.index = {name: i for i, name in enumerate(self.names)}
        self.wins = [[0.0] * n for _ in range(n)]
        self.counts = [[0.0] * n for _ in range(n)]
        self.games = 0
        self.rng = rng

    def truth(self, top: int) -> list[str]:
        return sorted(self.names, key=lambda x: -self.strength[x])[:top]

    def play_block(self, a: str, b: str) -> None:
        p = 1.0 / (1.0 + 10 ** ((self.strength[b] - self.strength[a]) / 400.0))
        i, j = self.index[a], self.index[b]
        for _ in range(2):  # both seatings
            score = 1.0 if self.rng.random() < p else 0.0
            self.wins[i][j] += score
            self.wins[j][i] += 1.0 - score
            self.counts[i][j] += 1.0
            self.counts[j][i] += 1.0
            self.games += 1


def adaptive(league: League, settings: AdaptiveSettings, seed: int) -> tuple[int, list[str]]:
    plan = first_round(league.names, 2, settings, seed)
    deals: dict[tuple[str, ...], int] = {}
    number = 1
    state: Status | None = None
    while plan is not None:
        for table, deal in plan.blocks:
            league.play_block(table[0], table[1])
            deals[table] = max(deals.get(table, 0), deal + 1)
        state = status_of_totals(league.names, league.wins, league.counts, settings, state.strengths if state else None)
        number += 1
        plan = next_round(number, state, deals, 2, settings, league.games)
    assert state is not None
    return league.games, state.ranking


def round_robin(league: League, settings: AdaptiveSettings) -> tuple[int, list[str]]:
    pairs = [(a, b) for i, a in enumerate(league.names) for b in league.names[i + 1 :]]
    cycles = checked = 0  # cycles played; the last cycle checked and found undecided
    check = 1
    state: Status | None = None
    while True:
        for a, b in pairs:
            league.play_block(a, b)
        cycles += 1
        if cycles < check and league.games + 2 * len(pairs) <= settings.max_games:
            continue
        state = status_of_totals(league.names, league.wins, league.counts, settings, state.strengths if state else None)
        if state.done or league.games + 2 * len(pairs) > settings.max_games:
            return (checked + 1) * 2 * len(pairs), state.ranking
        checked = cycles
        check = max(cycles + 1, int(cycles * 1.125))


def measure(n: int, spread: float, leagues: int, settings: AdaptiveSettings) -> dict[str, Any]:
    top = settings.top or n
    out: dict[str, Any] = {"bots": n, "spread_elo": spread}
    for kind in ("adaptive", "round_robin"):
        games: list[int] = []
        correct = 0
        capped = 0
        for k in range(leagues):
            league = League(n, spread, random.Random(f"{n}/{spread}/{k}"))
            used, ranking = adaptive(league, settings, k) if kind == "adaptive" else round_robin(league, settings)
            games.append(used)
            correct += ranking[:top] == league.truth(top)
            capped += used + 2 * n * n > settings.max_games
        out[kind] = {"median_games": statistics.median(games), "correct": correct / leagues, "near_budget": capped}
    out["saving"] = round(1 - out["adaptive"]["median_games"] / out["round_robin"]["median_games"], 3)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leagues", type=int, default=20)
    parser.add_argument("--sizes", type=int, nargs="+", default=[12, 24, 40])
    parser.add_argument("--spreads", type=float, nargs="+", default=[600.0, 1200.0, 2400.0])
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--max-games", type=int, default=400_000)
    parser.add_argument("--json", help="write the numbers to this file")
    args = parser.parse_args(argv)
    settings = AdaptiveSettings(confidence=args.confidence, top=args.top, max_games=args.max_games)
    rows = []
    print("bots\tspread\tadaptive_games\tadaptive_correct\trr_games\trr_correct\tsaving\tseconds")
    for n in args.sizes:
        for spread in args.spreads:
            started = time.perf_counter()
            row = measure(n, spread, args.leagues, settings)
            a, r = row["adaptive"], row["round_robin"]
            print(
                f"{n}\t{spread:g}\t{a['median_games']:g}\t{a['correct']:.2f}\t{r['median_games']:g}\t"
                f"{r['correct']:.2f}\t{row['saving']:.0%}\t{time.perf_counter() - started:.1f}",
                flush=True,
            )
            rows.append(row)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"settings": settings.to_json(), "leagues": args.leagues, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
