"""The bot author's loop: ``match BOTFILE greedy`` in-process against ``match greedy random``.

    python benchmarks/bench_author_loop.py                # 200 games a run, 3 rounds (a few minutes)
    python benchmarks/bench_author_loop.py --quick        # a smoke run
    python benchmarks/bench_author_loop.py --json out.json

Each variant is the real command (``python -m skyjo_ref match ...``) in a
subprocess, so the figures are what an author waits for, start-up included.
The variants alternate within each round, so a change of machine load hits
them alike; the report gives each variant's median wall time and the ratios
to ``match greedy random`` (the engine's own speed with built-in bots), the
target being ``--in-process`` within 1.5x. Over gRPC (the bot in its own
process) is measured too, for scale. The machine's load average is printed
beside the figures.

The games are not the same length: greedy ends a game against random in about
2 rounds, against a bot that plays well in about 4. So the report also gives
the time per round played (rounds counted from each run's ``--json``) and
``match greedy greedy`` — built-in bots only, games as long as the bot file's —
which is what "at engine speed" means for those games.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = ROOT / "examples" / "python" / "minimal_bot.py"

VARIANTS: dict[str, list[str]] = {
    "greedy_vs_random": ["greedy", "random"],
    "greedy_vs_greedy": ["greedy", "greedy"],
    "botfile_in_process": [str(MINIMAL), "greedy", "--in-process"],
    "botfile_over_grpc": [str(MINIMAL), "greedy"],
}


def run_once(bots: list[str], games: int, summary: Path) -> tuple[float, int]:
    """Wall seconds of one ``match`` command (it must succeed) and the rounds its games had."""
    command = [sys.executable, "-m", "skyjo_ref", "match", *bots, "--games", str(games), "--seed", "1"]
    command += ["--json", str(summary)]
    env = {**os.environ, "SKYJO_CONTROL_TOKEN": "", "SKYJO_REFEREE": ""}
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    rounds = int(json.loads(summary.read_text(encoding="utf-8"))["bots"][0]["rounds"])
    return elapsed, rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20 games, 1 round")
    parser.add_argument("--skip-grpc", action="store_true", help="leave out the over-gRPC variant")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    games, rounds = (20, 1) if args.quick else (args.games, args.rounds)
    variants = {k: v for k, v in VARIANTS.items() if not (args.skip_grpc and k == "botfile_over_grpc")}
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {name: [] for name in variants}
    played: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as folder:
        for round_index in range(rounds):
            order = list(variants) if round_index % 2 == 0 else list(reversed(variants))
            for name in order:
                elapsed, played[name] = run_once(variants[name], games, Path(folder) / "summary.json")
                times[name].append(elapsed)
                print(f"round {round_index + 1}: {name:20s} {elapsed:6.2f} s ({played[name]} rounds)", flush=True)
    load_after = os.getloadavg()
    median = {name: statistics.median(ts) for name, ts in times.items()}
    base = median["greedy_vs_random"]
    per_round = {name: median[name] / played[name] for name in median}
    report: dict[str, Any] = {
        "games": games,
        "rounds": rounds,
        "cpus": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
        "median_s": {k: round(v, 3) for k, v in median.items()},
        "ratio_to_greedy_vs_random": {k: round(v / base, 2) for k, v in median.items()},
        "rounds_played": played,
        "ms_per_round": {k: round(v * 1000, 2) for k, v in per_round.items()},
        "per_round_ratio_to_greedy_vs_random": {
            k: round(v / per_round["greedy_vs_random"], 2) for k, v in per_round.items()
        },
        "target_in_process_ratio": 1.5,
    }
    print()
    print(f"{games} games a run, {rounds} round(s), load average {load_before[0]:.1f} -> {load_after[0]:.1f}")
    for name, value in median.items():
        print(
            f"  {name:20s} median {value:6.2f} s   x{value / base:.2f} of greedy vs random; "
            f"{per_round[name] * 1000:.1f} ms a round, x{per_round[name] / per_round['greedy_vs_random']:.2f}"
        )
    ratio = median["botfile_in_process"] / base
    print(f"in-process target (<= 1.5x): {'met' if ratio <= 1.5 else 'MISSED'} at {ratio:.2f}x")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
