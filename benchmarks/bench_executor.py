"""The Dask executor against local, side by side in one run, and the coordinator's cost past one machine.

    python benchmarks/bench_executor.py               # the full measurement (several minutes)
    python benchmarks/bench_executor.py --quick       # a smoke run
    python benchmarks/bench_executor.py --json out.json
    python benchmarks/bench_executor.py --writer-only # the single writer alone: group commit by batch size

1. Throughput: the same tournament with ``executor: local`` and
   ``processes:2``, interleaved (local, processes, local, processes, ...), for
   built-in bots (3 bots, 2 a table) and for SDK bot processes
   (examples/python/minimal_bot.py). Games per second of wall time from the
   run's start (the cluster's start-up included) and after start-up (first to
   last finished game). Targets: processes:2 >= 1.7x local (built-in),
   >= 1.5x (SDK).
2. Timeouts: 50 ms per decision, 8 games in flight, >= 10,000 SDK decisions,
   with ``processes:2``. Target: <= 1 per 10,000.
3. Past one machine: the coordinator's own CPU per game (getrusage of this
   process during the processes:2 runs: Dask client, replay check, commit),
   the replay check alone, the commit (``Store.add_games``) per game in
   batches of 1, 4 and 16 (group commit; CPU and wall), and the scheduler's
   cost per task (trivial tasks); from them a model of games/s at 4, 16 and
   64 workers. ``--writer-only`` measures just the writer (no Dask, a minute).
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
from pathlib import Path
from typing import Any

from skyjo_ref import records
from skyjo_ref.execution.dask_backend import BATCH, backend_factory, in_flight
from skyjo_ref.execution.executor import Executor
from skyjo_ref.execution.types import PlayedGame
from skyjo_ref.tournament import runner
from skyjo_ref.tournament.config import TournamentConfig, parse_config
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import Store, StoredGame

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = ROOT / "examples" / "python" / "minimal_bot.py"


def make_config(
    folder: Path, *, kind: str, bots: int, deals: int, concurrency: int, decision_ms: int
) -> TournamentConfig:
    lines = [
        "name: bench",
        "rules: official",
        "players_per_game: 2",
        f"deals: {deals}",
        "seed: 7",
        f"concurrency: {concurrency}",
        f"time_control: {{decision_ms: {decision_ms}, bank_ms: 0, max_strikes: 1000, grace_ms: 10000}}",
        "rating: {bootstrap: 0}",
        "output: out",
        "bots:",
    ]
    if kind == "builtin":
        names = ["greedy", "random"]
        lines += [f"  - {{name: b{i}, builtin: {names[i % 2]}}}" for i in range(bots)]
    else:
        lines += [f"  - {{name: sdk{i}, python: {json.dumps(str(MINIMAL))}}}" for i in range(bots)]
    path = folder / "bench.yaml"
    text = "\n".join(lines) + "\n"
    path.write_text(text, encoding="utf-8")
    return parse_config(text, path)


class _Clock(runner.QuietObserver):
    def __init__(self) -> None:
        self.finished_at: list[float] = []

    def game_finished(self, game: StoredGame, done: int, total: int) -> None:
        self.finished_at.append(time.perf_counter())


def run_once(config: TournamentConfig, executor: Executor) -> dict[str, Any]:
    """One run; wall time, the rate after start-up, this process's CPU, decisions and timeouts."""
    store = Store(config.output)
    store.bind(runner.fingerprint(config))
    clock = _Clock()
    me0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    backend = backend_factory(executor, config.concurrency)
    slots = in_flight(executor, config.concurrency)
    asyncio.run(runner.run(config, store, clock, backend=backend, concurrency=slots))
    seconds = time.perf_counter() - t0
    me1 = resource.getrusage(resource.RUSAGE_SELF)
    games = store.count()
    decisions = timeouts = 0
    for game in store.games():
        meta = (store.record(game.id.key) or {}).get("meta", {})
        decisions += sum(int(t.get("decisions", 0)) for t in meta.get("timings", []))
        timeouts += sum(1 for s in meta.get("strikes", []) if s.get("reason") == "timeout")
    store.close()
    t = clock.finished_at
    return {
        "games": games,
        "seconds": seconds,
        "games_per_s": games / seconds,
        "steady_games_per_s": (len(t) - 1) / (t[-1] - t[0]) if len(t) > 1 and t[-1] > t[0] else 0.0,
        "coordinator_cpu_s": me1.ru_utime - me0.ru_utime + me1.ru_stime - me0.ru_stime,
        "decisions": decisions,
        "timeouts": timeouts,
        "load": os.getloadavg()[0],
    }


def throughput(kind: str, deals: int, concurrency: int, repeats: int) -> dict[str, Any]:
    executors = {"local": Executor(), "processes:2": Executor("processes", workers=2)}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in executors}
    for _ in range(repeats):
        for name, executor in executors.items():
            with tempfile.TemporaryDirectory() as tmp:
                config = make_config(
                    Path(tmp), kind=kind, bots=3, deals=deals, concurrency=concurrency, decision_ms=2000
                )
                run = run_once(config, executor)
            runs[name].append(run)
            print(
                f"  {kind:7} {name:11}: {run['games']} games in {run['seconds']:.2f} s = {run['games_per_s']:.2f} "
                f"games/s ({run['steady_games_per_s']:.2f} after start-up); coordinator CPU "
                f"{1000 * run['coordinator_cpu_s'] / run['games']:.1f} ms/game; load {run['load']:.1f}",
                flush=True,
            )
    out: dict[str, Any] = {"concurrency": concurrency, "deals": deals}
    for name in executors:
        out[name] = {
            "games_per_s": statistics.median(r["games_per_s"] for r in runs[name]),
            "steady_games_per_s": statistics.median(r["steady_games_per_s"] for r in runs[name]),
            "coordinator_cpu_ms_per_game": statistics.median(
                1000 * r["coordinator_cpu_s"] / r["games"] for r in runs[name]
            ),
            "runs": runs[name],
        }
    out["ratio"] = out["processes:2"]["games_per_s"] / out["local"]["games_per_s"]
    out["steady_ratio"] = out["processes:2"]["steady_games_per_s"] / out["local"]["steady_games_per_s"]
    return out


def timeouts(min_decisions: int, deals: int) -> dict[str, Any]:
    """50 ms a decision, 8 games in flight, processes:2 and local alternately until each has min_decisions."""
    totals = {name: {"decisions": 0, "timeouts": 0, "games": 0} for name in ("local", "processes:2")}
    executors = {"local": Executor(), "processes:2": Executor("processes", workers=2)}
    while min(t["decisions"] for t in totals.values()) < min_decisions:
        for name, executor in executors.items():
            with tempfile.TemporaryDirectory() as tmp:
                config = make_config(Path(tmp), kind="sdk", bots=4, deals=deals, concurrency=8, decision_ms=50)
                run = run_once(config, executor)
            for key in ("decisions", "timeouts", "games"):
                totals[name][key] += run[key]
            print(
                f"  50 ms, 8 in flight, {name:11}: {run['decisions']} decisions, {run['timeouts']} timeouts; "
                f"load {run['load']:.1f}",
                flush=True,
            )
    return {name: {**t, "per_10000": 10_000 * t["timeouts"] / max(t["decisions"], 1)} for name, t in totals.items()}


#: Games a commit takes at once in the writer measurement: 1 is a commit a game (the store before group commit).
BATCH_SIZES = (1, 4, 16)


def sample_records(games: int) -> list[tuple[GameId, dict[str, Any]]]:
    """Real records to commit: a built-in tournament of ``games`` games (two bots, one table), played locally."""
    with tempfile.TemporaryDirectory() as tmp:
        config = make_config(Path(tmp), kind="builtin", bots=2, deals=(games + 1) // 2, concurrency=2, decision_ms=2000)
        asyncio.run(runner.run(config, Store(config.output)))
        with Store(config.output) as source:
            return [(g.id, source.record(g.id.key) or {}) for g in source.games()]


def writer_costs(stored: list[tuple[GameId, dict[str, Any]]], rounds: int) -> dict[str, Any]:
    """The replay check alone, and ``Store.add_games`` (check, file, transaction, fsync) per game by batch size.

    Batch sizes alternate round by round, each round into a fresh store, so a busy machine weighs on all alike.
    Wall time is what the writer thread takes a game (its cap is 1000 / that); CPU is this process's.
    """
    t0 = time.perf_counter()
    for _, record in stored:
        records.replay(record)
    replay_ms = 1000 * (time.perf_counter() - t0) / len(stored)
    wall: dict[int, list[float]] = {size: [] for size in BATCH_SIZES}
    cpu: dict[int, list[float]] = {size: [] for size in BATCH_SIZES}
    for _ in range(rounds):
        for size in BATCH_SIZES:
            with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp)) as target:
                batches = [stored[i : i + size] for i in range(0, len(stored), size)]
                c0, t0 = time.process_time(), time.perf_counter()
                for batch in batches:
                    target.add_games([PlayedGame(game, "s", record, 0.0) for game, record in batch])
                wall[size].append(1000 * (time.perf_counter() - t0) / len(stored))
                cpu[size].append(1000 * (time.process_time() - c0) / len(stored))
    out: dict[str, Any] = {"replay_ms": replay_ms, "games": len(stored), "rounds": rounds}
    for size in BATCH_SIZES:
        w, c = statistics.median(wall[size]), statistics.median(cpu[size])
        out[f"batch_{size}"] = {"wall_ms_per_game": w, "cpu_ms_per_game": c, "writer_cap_games_per_s": 1000 / w}
        print(
            f"  add_games, batches of {size:2}: {w:.2f} ms wall, {c:.2f} ms CPU a game "
            f"(x{w / statistics.median(wall[1]):.2f} wall, x{c / statistics.median(cpu[1]):.2f} CPU of batches of 1); "
            f"writer cap {1000 / w:.0f} games/s",
            flush=True,
        )
    print(f"  replay check alone: {replay_ms:.2f} ms a game; load {os.getloadavg()[0]:.1f}", flush=True)
    return out


def coordinator_parts(sample_games: int, rounds: int) -> dict[str, Any]:
    """The writer's costs (replay check, commit by batch size), and the Dask scheduler's cost per trivial task."""
    from distributed import Client, LocalCluster

    parts = writer_costs(sample_records(sample_games), rounds)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster) as client:
        client.gather(client.map(abs, range(200), pure=False))  # warm
        tasks = 2000
        t0 = time.perf_counter()
        client.gather(client.map(abs, range(tasks), pure=False))
        task_ms = 1000 * (time.perf_counter() - t0) / tasks
    return {**parts, "add_game_ms": parts["batch_1"]["wall_ms_per_game"], "scheduler_ms_per_trivial_task": task_ms}


def model(
    per_worker_games_per_s: float, coordinator_ms: float, scheduler_ms: float, commit_ms: float
) -> dict[str, Any]:
    """Games/s at W workers: W x one worker's rate, capped by the coordinator and by the scheduler.

    The coordinator's CPU per game (Dask client, replay check, commit; with ``processes`` the scheduler
    runs in it too) bounds what one writer can take in: 1 / that; so does the writer thread's wall time
    a game (``commit_ms``: check, file, transaction, fsync shared by a batch). Workers add their rate until then.
    """
    writer_cap = min(1000 / coordinator_ms, 1000 / commit_ms)
    scheduler_cap = 1000 * BATCH / scheduler_ms  # one task carries up to BATCH games
    out: dict[str, Any] = {"writer_cap_games_per_s": writer_cap, "scheduler_cap_games_per_s": scheduler_cap}
    for workers in (4, 16, 64):
        out[str(workers)] = min(workers * per_worker_games_per_s, writer_cap, scheduler_cap)
    out["workers_where_writer_limits"] = writer_cap / per_worker_games_per_s
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small runs (a smoke test, not a measurement)")
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    parser.add_argument("--skip-timeouts", action="store_true", help="leave out the 50 ms measurement")
    parser.add_argument(
        "--writer-only", action="store_true", help="only the single writer's costs (group commit), no Dask"
    )
    args = parser.parse_args()
    quick = args.quick
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()}, Python {sys.version.split()[0]}", flush=True)
    result: dict[str, Any] = {"load_at_start": os.getloadavg()}
    if args.writer_only:
        print("the single writer:", flush=True)
        result["writer"] = writer_costs(sample_records(32 if quick else 192), 1 if quick else 5)
        result["load_at_end"] = os.getloadavg()
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        return 0
    print("throughput, built-in bots:", flush=True)
    result["builtin"] = throughput("builtin", deals=10 if quick else 150, concurrency=2, repeats=1 if quick else 3)
    print("throughput, SDK bot processes:", flush=True)
    result["sdk"] = throughput("sdk", deals=3 if quick else 20, concurrency=4, repeats=1 if quick else 3)
    if not args.skip_timeouts:
        print("timeouts:", flush=True)
        result["timeouts"] = timeouts(500 if quick else 10_000, deals=2 if quick else 5)
    print("coordinator:", flush=True)
    parts = coordinator_parts(32 if quick else 192, 1 if quick else 3)
    result["coordinator"] = parts
    builtin = result["builtin"]["processes:2"]
    result["model_builtin"] = model(
        builtin["steady_games_per_s"] / 2,
        builtin["coordinator_cpu_ms_per_game"],
        parts["scheduler_ms_per_trivial_task"],
        parts[f"batch_{BATCH_SIZES[-1]}"]["wall_ms_per_game"],  # under load the writer's batches grow to this
    )
    result["load_at_end"] = os.getloadavg()
    print(json.dumps({k: v for k, v in result.items() if k not in ("builtin", "sdk")}, indent=1))
    for kind in ("builtin", "sdk"):
        r = result[kind]
        print(
            f"{kind}: processes:2 / local = {r['ratio']:.2f}x wall, {r['steady_ratio']:.2f}x after start-up; "
            f"coordinator {r['processes:2']['coordinator_cpu_ms_per_game']:.1f} ms CPU/game"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
