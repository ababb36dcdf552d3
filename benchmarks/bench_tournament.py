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
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from skyjo_ref.tournament import runner
from skyjo_ref.tournament.config import TournamentConfig, parse_config
from skyjo_ref.tournament.store import Store

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


def run_once(config: TournamentConfig) -> tuple[float, Store]:
    store = Store(config.output)
    store.bind(runner.fingerprint(config))
    t0 = time.perf_counter()
    asyncio.run(runner.run(config, store))
    return time.perf_counter() - t0, store


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
    out: dict[str, Any] = {}
    for concurrency in (1, 2, 4):
        rates = []
        games = 0
        for rep in range(repeats):
            with tempfile.TemporaryDirectory() as tmp:
                config = make_config(
                    Path(tmp), bots=3, deals=deals, concurrency=concurrency, decision_ms=2000, seed=rep
                )
                seconds, store = run_once(config)
                games = store.count()
                store.close()
            rates.append(games / seconds)
            print(f"  concurrency {concurrency}: {games} games in {seconds:.2f} s = {games / seconds:.2f} games/s")
        out[str(concurrency)] = {"games": games, "games_per_s": statistics.median(rates), "runs": rates}
    out["speedup_4_over_1"] = out["4"]["games_per_s"] / out["1"]["games_per_s"]
    return out


def timeouts(min_decisions: int, deals: int) -> dict[str, Any]:
    total_decisions = total_timeouts = games = 0
    slowest = 0.0
    seconds = 0.0
    rep = 0
    while total_decisions < min_decisions:
        with tempfile.TemporaryDirectory() as tmp:
            config = make_config(Path(tmp), bots=4, deals=deals, concurrency=8, decision_ms=50, seed=100 + rep)
            took, store = run_once(config)
            d, t, s = decisions_and_timeouts(store)
            games += store.count()
            store.close()
        seconds += took
        total_decisions += d
        total_timeouts += t
        slowest = max(slowest, s)
        rep += 1
        print(f"  run {rep}: {d} decisions, {t} timeouts, slowest {s:.1f} ms")
    return {
        "decision_ms": 50,
        "concurrency": 8,
        "games": games,
        "decisions": total_decisions,
        "timeouts": total_timeouts,
        "per_10000": 10_000 * total_timeouts / total_decisions,
        "slowest_ms": slowest,
        "seconds": seconds,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small runs (a smoke test, not a measurement)")
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    args = parser.parse_args()
    deals, repeats, min_decisions = (2, 1, 1000) if args.quick else (10, 3, 10_000)
    print(f"tournament benchmark on {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print("throughput: 3 SDK bots (examples/python/minimal_bot.py), 2 players a table, official rules")
    tp = throughput(deals, repeats)
    for c in ("1", "2", "4"):
        print(f"concurrency {c}: {tp[c]['games_per_s']:.2f} games/s (median of {repeats})")
    verdict = "met" if tp["speedup_4_over_1"] >= 1.6 else "MISSED"
    print(f"concurrency 4 / concurrency 1 = {tp['speedup_4_over_1']:.2f}x (target >= 1.6x: {verdict})")
    print("timeouts: 4 SDK bots, 50 ms per decision, concurrency 8")
    to = timeouts(min_decisions, deals=5 if not args.quick else 2)
    verdict = "met" if to["per_10000"] <= 1 else "MISSED"
    print(
        f"{to['timeouts']} timeouts in {to['decisions']} decisions = {to['per_10000']:.2f} per 10,000 "
        f"(target <= 1: {verdict}); slowest decision {to['slowest_ms']:.1f} ms"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"throughput": tp, "timeouts": to}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
