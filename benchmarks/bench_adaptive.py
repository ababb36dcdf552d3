"""Adaptive schedule vs round robin on simulated leagues with known strengths (docs/performance.md).

Each league has ``n`` bots with Elo strengths evenly spaced over the given spread (best minus worst; the
names in a seeded random order, so the first round's circle knows nothing of the strengths);
a two-player duplicate block is two games whose winner is drawn from the Bradley-Terry probability of the
true strengths (draws and the duplicate deal's shared luck are not simulated: each game is independent).
``--players k`` (3 or more): a block is the balanced design's ``k(k-1)`` games, each order drawn from
Plackett-Luce (a Gumbel race on the true strengths), judged by the schedule's Plackett-Luce status
(``--pairwise``: by the pairwise fit the schedule used before, which counts a game's pairs as independent).
Both schedules stop on the same rule (:func:`skyjo_ref.tournament.adaptive.status`: the order of the top
``--top`` places, and who they are, decided at ``--confidence`` together): the adaptive one after each of its
rounds, the round robin after full cycles (every pair one block, on a new deal) checked at cycles growing by
1/8 each time and credited with the cycle after its last failed check (a lower bound: it favours the round
robin). Reported per setting: median games to stop, the share of leagues whose top order when stopped equals
the true one, and the saving.

    python benchmarks/bench_adaptive.py --leagues 20 --sizes 12 24 40 --spreads 600 1200 2400
    python benchmarks/bench_adaptive.py --players 3 --leagues 40 --sizes 12 --spreads 600 --max-games 200000
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import statistics
import time
from collections.abc import Sequence
from typing import Any

from skyjo_ref.seating import block_size
from skyjo_ref.stats import plackett_luce
from skyjo_ref.tournament.adaptive import (
    AdaptiveSettings,
    Status,
    first_round,
    next_round,
    status_of_orders,
    status_of_totals,
)


class League:
    """True strengths, and the pairwise totals of the games played so far."""

    def __init__(self, n: int, spread: float, rng: random.Random, players: int = 2, pairwise: bool = False) -> None:
        self.names = [f"b{i:02d}" for i in range(n)]
        levels = [spread * (i / (n - 1) - 0.5) for i in range(n)]
        rng.shuffle(levels)
        self.strength = dict(zip(self.names, levels, strict=True))
        self.index = {name: i for i, name in enumerate(self.names)}
        self.wins = [[0.0] * n for _ in range(n)]
        self.counts = [[0.0] * n for _ in range(n)]
        self.games = 0
        self.rng = rng
        self.players = players
        self.pairwise = pairwise
        self.chosen = [0.0] * n  # Plackett-Luce totals (more than two players)
        self.stages: dict[int, float] = {}

    def judge(self, settings: AdaptiveSettings, state: Status | None) -> Status:
        start = state.strengths if state else None
        if self.players == 2 or self.pairwise:
            return status_of_totals(self.names, self.wins, self.counts, settings, start)
        return status_of_orders(self.names, self.chosen, self.stages, self.counts, settings, start)

    def play(self, table: Sequence[str]) -> None:
        if len(table) == 2:
            self.play_block(table[0], table[1])
            return
        for _ in range(block_size(len(table), "balanced")):  # the seats do not matter to this truth
            keys = {b: self.strength[b] / 400.0 * math.log(10) - math.log(-math.log(self.rng.random())) for b in table}
            order = sorted(table, key=lambda b: -keys[b])
            ranks = [(self.index[b], place) for place, b in enumerate(order)]
            for mask, group in plackett_luce.stages_of(ranks):
                self.stages[mask] = self.stages.get(mask, 0.0) + len(group)
                for i in group:
                    self.chosen[i] += 1.0
            for x, a in enumerate(order):
                for b in order[x + 1 :]:
                    i, j = self.index[a], self.index[b]
                    self.wins[i][j] += 1.0
                    self.counts[i][j] += 1.0
                    self.counts[j][i] += 1.0
            self.games += 1

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
    k = league.players
    plan = first_round(league.names, k, settings, seed)
    deals: dict[tuple[str, ...], int] = {}
    number = 1
    state: Status | None = None
    while plan is not None:
        for table, deal in plan.blocks:
            league.play(table)
            deals[table] = max(deals.get(table, 0), deal + 1)
        state = league.judge(settings, state)
        number += 1
        plan = next_round(number, state, deals, k, settings, league.games, block_size(k, "balanced"))
    assert state is not None
    return league.games, state.ranking


def round_robin(league: League, settings: AdaptiveSettings) -> tuple[int, list[str]]:
    tables = list(itertools.combinations(league.names, league.players))
    cycle = len(tables) * block_size(league.players, "balanced")
    cycles = checked = 0  # cycles played; the last cycle checked and found undecided
    check = 1
    state: Status | None = None
    while True:
        for table in tables:
            league.play(table)
        cycles += 1
        if cycles < check and league.games + cycle <= settings.max_games:
            continue
        state = league.judge(settings, state)
        if state.done or league.games + cycle > settings.max_games:
            return (checked + 1) * cycle, state.ranking
        checked = cycles
        check = max(cycles + 1, int(cycles * 1.125))


def measure(
    n: int,
    spread: float,
    leagues: int,
    settings: AdaptiveSettings,
    players: int = 2,
    pairwise: bool = False,
    adaptive_only: bool = False,
) -> dict[str, Any]:
    top = settings.top or n
    out: dict[str, Any] = {"bots": n, "spread_elo": spread, "players": players}
    for kind in ("adaptive", "round_robin"):
        games: list[int] = []
        correct = 0
        capped = 0
        for k in range(leagues):
            seed = f"{n}/{spread}/{k}" if players == 2 else f"{n}/{spread}/{k}/{players}"
            league = League(n, spread, random.Random(seed), players, pairwise)
            used, ranking = adaptive(league, settings, k) if kind == "adaptive" else round_robin(league, settings)
            games.append(used)
            correct += ranking[:top] == league.truth(top)
            capped += used + 2 * n * n > settings.max_games
        games.sort()
        out[kind] = {
            "median_games": statistics.median(games),
            "p90_games": games[min(leagues - 1, math.ceil(0.9 * leagues) - 1)],
            "max_games": games[-1],
            "correct": correct / leagues,
            "near_budget": capped,
        }
        if kind == "adaptive" and adaptive_only:
            break
    if adaptive_only:
        return out
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
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--pairwise", action="store_true", help="judge k-player leagues by the pairwise fit")
    parser.add_argument("--adaptive-only", action="store_true", help="no round robin (implied by --pairwise)")
    parser.add_argument("--json", help="write the numbers to this file")
    args = parser.parse_args(argv)
    settings = AdaptiveSettings(confidence=args.confidence, top=args.top, max_games=args.max_games)
    rows = []
    print(
        "bots\tspread\tadaptive_games\tadaptive_p90\tadaptive_max\tadaptive_correct\trr_games\trr_correct\tsaving\tseconds"
    )
    for n in args.sizes:
        for spread in args.spreads:
            started = time.perf_counter()
            top = args.top if args.top < n else None  # --top n or more: the whole order (the config's default)
            settings = AdaptiveSettings(confidence=args.confidence, top=top, max_games=args.max_games)
            only = args.adaptive_only or args.pairwise
            row = measure(n, spread, args.leagues, settings, args.players, args.pairwise, only)
            a, r = row["adaptive"], row.get("round_robin", {"median_games": math.nan, "correct": math.nan})
            print(
                f"{n}\t{spread:g}\t{a['median_games']:g}\t{a['p90_games']}\t{a['max_games']}\t{a['correct']:.2f}\t"
                f"{r['median_games']:g}\t{r['correct']:.2f}\t{row.get('saving', math.nan):.0%}\t"
                f"{time.perf_counter() - started:.1f}",
                flush=True,
            )
            rows.append(row)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"settings": settings.to_json(), "leagues": args.leagues, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
