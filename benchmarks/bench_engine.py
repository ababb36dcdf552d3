"""Rules engine speed: random legal play, ours against the PyPI package ``rlskyjo``, in the same run.

    python benchmarks/bench_engine.py [--rounds 1000] [--players 2 4] [--repeat 5] [--pin] [--json FILE]

Both engines play the same work on one core: uniform random legal play for
the same number of rounds. Ours plays whole games (rounds until a total
reaches 100, official rules) and picks with a seeded ``random.Random`` over
``Game.legal_actions()``; rlskyjo plays one round per game, driven exactly as
its own ``rlskyjo/game/sample_game.py`` does (``collect_observation``, then
``policy_ra`` over the action mask, then ``act``), after a warm-up that
compiles its numba functions. Times are the process's CPU time (one thread),
so other processes on a shared machine do not count; each figure is the best
of ``--repeat`` runs, the engines taking turns.

Actions are not the same unit in both engines: ours counts the opening
reveals (2 per player per round) as actions, rlskyjo reveals them inside
``reset()``; so the table gives per-round rates too, and the ratio for both.
A third line, ``skyjo-ref + view``, also builds the acting seat's full
``View`` at every decision, as the referee does for a bot.

rlskyjo is optional (``pip install 'skyjo-ref[bench]'``); without it the
script says so and shows our figures alone.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from skyjo_ref.rules.engine import Game


def clock() -> float:
    """CPU time of this process: on a shared machine, other processes' load does not count against either engine."""
    return time.process_time()


@dataclass
class Result:
    players: int
    engine: str
    games: int
    rounds: int
    actions: int
    seconds: float

    @property
    def actions_per_s(self) -> float:
        return self.actions / self.seconds

    @property
    def rounds_per_s(self) -> float:
        return self.rounds / self.seconds

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds


def ours(players: int, rounds: int, seed: int, with_view: bool = False) -> Result:
    """Whole games of uniform random legal play until ``rounds`` rounds are played."""
    rng = random.Random(seed)
    games = played_rounds = actions = 0
    start = clock()
    while played_rounds < rounds:
        game = Game(players, seed=f"bench/{seed}/{games}")
        apply, legal_actions = game.apply, game.legal_actions
        if with_view:
            view = game.view
            while not game.over:
                apply(rng.choice(view(game.seat).legal_actions))
                actions += 1
        else:
            while not game.over:
                apply(rng.choice(legal_actions()))
                actions += 1
        games += 1
        played_rounds += len(game.rounds)
    seconds = clock() - start
    return Result(players, "skyjo-ref + view" if with_view else "skyjo-ref", games, played_rounds, actions, seconds)


def load_rlskyjo() -> tuple[Any, Any, Any] | None:
    """(SkyjoGame, policy_ra, numpy) or None when rlskyjo is not installed."""
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import numpy as np
            from rlskyjo.game.skyjo import SkyjoGame  # type: ignore[import-untyped]
            from rlskyjo.models.random_admissible_policy import policy_ra  # type: ignore[import-untyped]
    except ImportError:
        return None
    return SkyjoGame, policy_ra, np


def peer(players: int, rounds: int, seed: int, rl: tuple[Any, Any, Any]) -> Result:
    """rlskyjo: ``rounds`` one-round games of its random admissible policy, as in its sample_game.py."""
    skyjo_game, policy_ra, np = rl
    game = skyjo_game(num_players=players)
    game.set_seed(seed)
    rng = np.random.default_rng(seed)
    actions = 0
    start = clock()
    for _ in range(rounds):
        game.reset()
        while not game.is_terminated:
            player_id, _expected = game.expected_action
            obs, action_mask = game.collect_observation(player_id)
            game.act(player_id, policy_ra(obs, action_mask, rng))
            actions += 1
    seconds = clock() - start
    return Result(players, "rlskyjo 1.0.0", rounds, rounds, actions, seconds)


def best_interleaved(repeat: int, runs: list[Callable[[], Result]]) -> list[Result]:
    """Each run ``repeat`` times, taking turns, so that every engine meets the same machine load; the best of each."""
    best: list[Result | None] = [None] * len(runs)
    for _ in range(repeat):
        for i, run in enumerate(runs):
            result = run()
            current = best[i]
            if current is None or result.seconds / result.rounds < current.seconds / current.rounds:
                best[i] = result
    return [r for r in best if r is not None]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()} on {platform.system()}"


def pin_to_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
        return f"pinned to core {core}"
    return "not pinned (no sched_setaffinity here)"


def table(results: list[Result]) -> str:
    head = (
        "| players | engine | games | rounds | actions | actions/round | actions/s | rounds/s | games/s "
        "| ratio actions/s | ratio rounds/s |"
    )
    lines = [head, "|" + "---|" * 11]
    reference = {r.players: r for r in results if r.engine.startswith("rlskyjo")}
    for r in results:
        ref = reference.get(r.players)
        ratio_a = f"{r.actions_per_s / ref.actions_per_s:.1f}" if ref else "-"
        ratio_r = f"{r.rounds_per_s / ref.rounds_per_s:.1f}" if ref else "-"
        lines.append(
            f"| {r.players} | {r.engine} | {r.games} | {r.rounds} | {r.actions} | {r.actions / r.rounds:.1f} "
            f"| {r.actions_per_s:,.0f} | {r.rounds_per_s:,.0f} | {r.games_per_s:,.0f} | {ratio_a} | {ratio_r} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=1000, help="rounds of random play per run")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4], help="player counts (2-8)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure, engines taking turns; the best is kept")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--pin", action="store_true", help="pin the process to one core (it is single-threaded anyway)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.repeat < 1 or any(not 2 <= n <= 8 for n in args.players):
        parser.error("--rounds and --repeat must be >= 1 and --players between 2 and 8")

    pinned = pin_to_one_core() if args.pin else "one thread, not pinned"
    print(f"machine: {machine()}; {pinned}")
    print(f"date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC")
    print(f"command: python benchmarks/bench_engine.py {' '.join(sys.argv[1:] if argv is None else argv)}".rstrip())
    rl = load_rlskyjo()
    if rl is None:
        print("rlskyjo is not installed (pip install 'skyjo-ref[bench]'): showing skyjo-ref's figures only")
    else:
        start = time.perf_counter()
        peer(2, 3, args.seed, rl)  # compiles the numba functions before anything is timed
        print(f"rlskyjo warm-up (numba JIT compilation): {time.perf_counter() - start:.1f} s, not timed")
    ours(2, 20, args.seed)  # warm caches the same way

    results: list[Result] = []
    for n in args.players:
        runs: list[Callable[[], Result]] = [
            lambda n=n: ours(n, args.rounds, args.seed),  # type: ignore[misc]
            lambda n=n: ours(n, args.rounds, args.seed, with_view=True),  # type: ignore[misc]
        ]
        if rl is not None:
            runs.append(lambda n=n: peer(n, args.rounds, args.seed, rl))  # type: ignore[misc]
        results += best_interleaved(args.repeat, runs)
    print()
    print(table(results))
    if args.json:
        rows = [
            {
                **asdict(r),
                "actions_per_s": r.actions_per_s,
                "rounds_per_s": r.rounds_per_s,
                "games_per_s": r.games_per_s,
            }
            for r in results
        ]
        args.json.write_text(json.dumps({"machine": machine(), "results": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
