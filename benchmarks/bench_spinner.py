"""A bot that spins many processes: how much slower its opponent decides, with and without a CPU share per bot.

One league of three bots, 2 players a game, concurrency 2, games to 30 points: a victim (the example minimal bot,
doing a fixed 20 ms of CPU work in each decision and printing how long that took on the wall clock), the built-in
greedy bot, and a third bot (the example minimal bot too) that is either **calm** or a **spinner** (at its first
decision each of its processes starts 200 processes that spin until the run ends). Reported: the victim's
decisions (wall ms: median, 99th percentile, worst), its strikes (decisions over the 2 s clock), and the run's
wall time, for

- ``isolation: strict`` (each bot's processes in a cgroup of its own with the default CPU weight: the spinner's
  200 processes share one bot's part of the CPU), and
- with ``--unisolated``, ``isolation: none`` too (no cgroup: 200 processes against the victim's one; on a shared
  machine that slows every other job as much, so it is not run by default).

    python benchmarks/bench_spinner.py [--deals 2] [--spinners 200] [--unisolated]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MINIMAL = (REPO / "examples" / "python" / "minimal_bot.py").read_text(encoding="utf-8")
DECIDE = "    def decide(self, view: View) -> Action:\n"

#: The example minimal bot, doing 20 ms of CPU work first in each decision and printing its wall time.
VICTIM = MINIMAL.replace(
    DECIDE,
    DECIDE
    + "        import time\n"
    + "        began, cpu = time.perf_counter(), time.process_time()\n"
    + "        while time.process_time() - cpu < 0.02:\n"
    + "            pass\n"
    + "        print(f'DECIDE {(time.perf_counter() - began) * 1000:.1f}', flush=True)\n",
)

#: The example minimal bot that, with SPINNERS set, starts that many spinning processes at its first decision.
OTHER = MINIMAL.replace(
    DECIDE,
    DECIDE
    + "        import os\n"
    + "        if not getattr(MinimalBot, 'spun', False):\n"
    + "            MinimalBot.spun = True\n"
    + "            for _ in range(int(os.environ.get('SPINNERS', '0'))):\n"
    + "                if os.fork() == 0:\n"
    + "                    while True:\n"
    + "                        pass\n",
)


def league(folder: Path, isolation: str, spinners: int, deals: int) -> dict[str, float]:
    run = folder / f"{isolation}-{spinners}"
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    (run / "victim.py").write_text(VICTIM, encoding="utf-8")
    (run / "other.py").write_text(OTHER, encoding="utf-8")
    (run / "league.yaml").write_text(
        f"name: spin\nisolation: {isolation}\nrules: {{preset: official, end_score: 30}}\nplayers_per_game: 2\n"
        f"deals: {deals}\nseed: 5\nconcurrency: 2\n"
        "time_control: {decision_ms: 2000, bank_ms: 0, max_strikes: 1000, grace_ms: 5000}\n"
        "rating: {bootstrap: 0}\noutput: out\nbots:\n"
        "  - {name: victim, python: victim.py}\n  - {name: greedy, builtin: greedy}\n"
        f"  - {{name: other, python: other.py, env: {{SPINNERS: '{spinners}'}}}}\n",
        encoding="utf-8",
    )
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "tournament", "league.yaml", "--plain"],
        cwd=run,
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - began
    times = sorted(
        float(line.split()[1])
        for log in (run / "out" / "logs").glob("victim-*.log")
        for line in log.read_text(encoding="utf-8").splitlines()
        if line.startswith("DECIDE ")
    )
    with sqlite3.connect(run / "out" / "results.sqlite") as db:
        strikes = db.execute("SELECT COALESCE(SUM(strikes), 0) FROM seats WHERE bot = 'victim'").fetchone()[0]
    return {
        "decisions": len(times),
        "median": statistics.median(times),
        "p99": times[min(len(times) - 1, int(len(times) * 0.99))],
        "worst": times[-1],
        "strikes": strikes,
        "wall": wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=2)
    parser.add_argument("--spinners", type=int, default=200)
    parser.add_argument("--unisolated", action="store_true", help="also isolation: none (starves the machine)")
    args = parser.parse_args()
    print(
        f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}, Python {platform.python_version()}, uid {os.geteuid()}"
    )
    print("| isolation | third bot | victim decisions | median ms | p99 ms | worst ms | strikes | run s |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for isolation in ("strict", "none") if args.unisolated else ("strict",):
            for spinners in (0, args.spinners):
                r = league(Path(tmp), isolation, spinners, args.deals)
                who = f"spinner ({spinners} processes)" if spinners else "calm"
                print(
                    f"| {isolation} | {who} | {r['decisions']:.0f} | {r['median']:.1f} | {r['p99']:.1f} | "
                    f"{r['worst']:.1f} | {r['strikes']:.0f} | {r['wall']:.1f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
