"""Tournament throughput and timeouts, with SDK bots as subprocesses on an in-process referee.

    python benchmarks/bench_tournament.py                 # the full measurement (a few minutes)
    python benchmarks/bench_tournament.py --quick         # a smoke run
    python benchmarks/bench_tournament.py --json out.json

1. Throughput: the same round robin (SDK bots only, 2 players a table) at
   concurrency 1, 2 and 4, in games per second of wall time, from the
   referee's start to the last stored game (bot process start-up included).
   Target: concurrency 4 >= 1.6x concurrency 1 on 2 cores.
2. Timeouts: a 50 ms per-decision limit at concurrency 8 over >= 10,000
   decisions taken by SDK bots; counts the referee's timeout strikes from the
   stored records. Target: <= 1 per 10,000 decisions.

Every run goes through the real path: tournament runner -> MatchService ->
referee -> gRPC -> `python -m skyjo_bot run` processes, each game committed
to a SQLite store in a temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skyjo_ref.tournament import runner
from skyjo_ref.tournament.config import TournamentConfig, parse_config
from skyjo_ref.tournament.store import Store, StoredGame

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = ROOT / "examples" / "python" / "minimal_bot.py"


def make_config(
    folder: Path, *, bots: int, deals: int, concurrency: int, decision_ms: int, seed: int
) -> TournamentConfig:
    lines = [
        "name: bench",
        "rules: official",
        "players_per_game: 2",
        f"deals: {deals}",
        f"seed: {seed}",
        f"concurrency: {concurrency}",
        f"time_control: {{decision_ms: {decision_ms}, bank_ms: 0, max_strikes: 1000, grace_ms: 10000}}",
        "rating: {bootstrap: 0}",
        "output: out",
        "bots:",
    ]
    lines += [f"  - {{name: sdk{i}, python: {json.dumps(str(MINIMAL))}}}" for i in range(bots)]
    path = folder / "bench.yaml"
    text = "\n".join(lines) + "\n"
    path.write_text(text, encoding="utf-8")
    return parse_config(text, path)


@dataclass
class Run:
    seconds: float
    store: Store
    referee_cpu_s: float  # this process: the tournament and the in-process referee
    bots_cpu_s: float  # the bot processes (children)
    loop_lag_ms: list[float]  # how late a 5 ms sleep on the referee's event loop woke up, sampled
    finished_at: list[float]  # perf_counter() of each finished game

    @property
    def steady_rate(self) -> float:
        """Games per second between the first and the last finished game (bot start-up excluded)."""
        t = self.finished_at
        return (len(t) - 1) / (t[-1] - t[0]) if len(t) > 1 and t[-1] > t[0] else 0.0


class _Clock(runner.QuietObserver):
    def __init__(self) -> None:
        self.finished_at: list[float] = []

    def game_finished(self, game: StoredGame, done: int, total: int) -> None:
        self.finished_at.append(time.perf_counter())


async def _run_with_lag(config: TournamentConfig, store: Store, lags: list[float], clock: _Clock) -> None:
    stop = asyncio.Event()

    async def monitor() -> None:
        while not stop.is_set():
            t = time.perf_counter()
            await asyncio.sleep(0.005)
            lags.append((time.perf_counter() - t - 0.005) * 1000)

    task = asyncio.create_task(monitor())
    try:
        await runner.run(config, store, clock)
    finally:
        stop.set()
        await task


def run_once(config: TournamentConfig) -> Run:
    store = Store(config.output)
    store.bind(runner.fingerprint(config))
    me0, kids0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    lags: list[float] = []
    t0 = time.perf_counter()
    clock = _Clock()
    asyncio.run(_run_with_lag(config, store, lags, clock))
    seconds = time.perf_counter() - t0
    me1, kids1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return Run(
        seconds,
        store,
        me1.ru_utime - me0.ru_utime + me1.ru_stime - me0.ru_stime,
        kids1.ru_utime - kids0.ru_utime + kids1.ru_stime - kids0.ru_stime,
        lags,
        clock.finished_at,
    )


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def decisions_and_timeouts(store: Store) -> tuple[int, int, float]:
    """SDK decisions, timeout strikes and the slowest decision (ms), from the stored records."""
    decisions = timeouts = 0
    slowest = 0.0
    for game in store.games():
        record = store.record(game.id.key) or {}
        meta = record.get("meta", {})
        for timing in meta.get("timings", []):
            decisions += int(timing.get("decisions", 0))
            slowest = max(slowest, float(timing.get("max_ms", 0.0)))
        timeouts += sum(1 for s in meta.get("strikes", []) if s.get("reason") == "timeout")
    return decisions, timeouts, slowest


def throughput(deals: int, repeats: int) -> dict[str, Any]:
    """Concurrency 1, 2, 4 interleaved (1, 2, 4, 1, 2, 4, ...) so that load drift hits each alike."""
    rates: dict[int, list[float]] = {1: [], 2: [], 4: []}
    steady: dict[int, list[float]] = {1: [], 2: [], 4: []}
    cpu: dict[int, list[float]] = {1: [], 2: [], 4: []}
    games = 0
    for rep in range(repeats):
        for concurrency in (1, 2, 4):
            with tempfile.TemporaryDirectory() as tmp:
                config = make_config(
                    Path(tmp), bots=3, deals=deals, concurrency=concurrency, decision_ms=2000, seed=rep
                )
                run = run_once(config)
                games = run.store.count()
                run.store.close()
            rates[concurrency].append(games / run.seconds)
            steady[concurrency].append(run.steady_rate)
            cpu[concurrency].append((run.referee_cpu_s + run.bots_cpu_s) / games)
            print(
                f"  concurrency {concurrency}: {games} games in {run.seconds:.2f} s "
                f"= {games / run.seconds:.2f} games/s ({run.steady_rate:.2f} after start-up); "
                f"CPU per game: referee {1000 * run.referee_cpu_s / games:.0f} ms, "
                f"bots {1000 * run.bots_cpu_s / games:.0f} ms; load average {os.getloadavg()[0]:.1f}"
            )
    out: dict[str, Any] = {
        str(c): {
            "games": games,
            "games_per_s": statistics.median(rates[c]),
            "runs": rates[c],
            "steady_games_per_s": statistics.median(steady[c]),
            "cpu_s_per_game": statistics.median(cpu[c]),
        }
        for c in rates
    }
    out["speedup_4_over_1"] = out["4"]["games_per_s"] / out["1"]["games_per_s"]
    out["steady_speedup_4_over_1"] = out["4"]["steady_games_per_s"] / out["1"]["steady_games_per_s"]
    return out


def timeouts(min_decisions: int, deals: int) -> dict[str, Any]:
    total_decisions = total_timeouts = games = 0
    slowest = 0.0
    seconds = 0.0
    lags: list[float] = []
    rep = 0
    while total_decisions < min_decisions:
        with tempfile.TemporaryDirectory() as tmp:
            config = make_config(Path(tmp), bots=4, deals=deals, concurrency=8, decision_ms=50, seed=100 + rep)
            run = run_once(config)
            d, t, s = decisions_and_timeouts(run.store)
            games += run.store.count()
            run.store.close()
        seconds += run.seconds
        lags += run.loop_lag_ms
        total_decisions += d
        total_timeouts += t
        slowest = max(slowest, s)
        rep += 1
        print(
            f"  run {rep}: {d} decisions, {t} timeouts, slowest {s:.1f} ms; referee loop lag p99 "
            f"{_pct(run.loop_lag_ms, 0.99):.1f} ms, max {max(run.loop_lag_ms, default=0):.1f} ms; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
    return {
        "decision_ms": 50,
        "concurrency": 8,
        "games": games,
        "decisions": total_decisions,
        "timeouts": total_timeouts,
        "per_10000": 10_000 * total_timeouts / total_decisions,
        "slowest_ms": slowest,
        "seconds": seconds,
        "loop_lag_ms": {
            "p50": _pct(lags, 0.5),
            "p99": _pct(lags, 0.99),
            "p999": _pct(lags, 0.999),
            "max": max(lags, default=0.0),
            "over_40": sum(1 for x in lags if x > 40),
            "samples": len(lags),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small runs (a smoke test, not a measurement)")
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    args = parser.parse_args()
    deals, repeats, min_decisions = (2, 1, 1000) if args.quick else (10, 3, 10_000)
    print(
        f"tournament benchmark on {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
        f"load average {os.getloadavg()[0]:.1f} at the start"
    )
    print("throughput: 3 SDK bots (examples/python/minimal_bot.py), 2 players a table, official rules")
    tp = throughput(deals, repeats)
    for c in ("1", "2", "4"):
        print(
            f"concurrency {c}: {tp[c]['games_per_s']:.2f} games/s, {tp[c]['steady_games_per_s']:.2f} after start-up "
            f"(medians of {repeats}); {1000 * tp[c]['cpu_s_per_game']:.0f} ms CPU per game"
        )
    verdict = "met" if tp["speedup_4_over_1"] >= 1.6 else "MISSED"
    print(
        f"concurrency 4 / concurrency 1 = {tp['speedup_4_over_1']:.2f}x, "
        f"{tp['steady_speedup_4_over_1']:.2f}x after start-up (target >= 1.6x: {verdict})"
    )
    print("timeouts: 4 SDK bots, 50 ms per decision, concurrency 8")
    to = timeouts(min_decisions, deals=5 if not args.quick else 2)
    verdict = "met" if to["per_10000"] <= 1 else "MISSED"
    print(
        f"{to['timeouts']} timeouts in {to['decisions']} decisions = {to['per_10000']:.2f} per 10,000 "
        f"(target <= 1: {verdict}); slowest decision {to['slowest_ms']:.1f} ms"
    )
    lag = to["loop_lag_ms"]
    print(
        f"referee event loop lag: p50 {lag['p50']:.1f} ms, p99 {lag['p99']:.1f} ms, p99.9 {lag['p999']:.1f} ms, "
        f"max {lag['max']:.1f} ms ({lag['over_40']} of {lag['samples']} samples over 40 ms)"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"throughput": tp, "timeouts": to}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
