"""How long ``schedule: sampled`` takes to build its sample, against the local search it replaced.

    python benchmarks/bench_league.py                  # the sizes of docs/performance.md
    python benchmarks/bench_league.py --old-limit 60   # give the old local search more time
    python benchmarks/bench_league.py --json out.json

For each size (bots, players per table, meetings): the cyclic design
(:func:`skyjo_ref.tournament.league.sampled_tables`) and the old local search
(``benchmarks/league_local_search.py``), each timed in the same run, the
old one in a child process stopped at ``--old-limit`` seconds. Printed per
size: tables, the lower bound (:func:`~skyjo_ref.tournament.league.schonheim_tables`),
the pair counts' range (every pair must be in ``[L, L + 1]`` with ``L >= meetings``),
seconds, the ratio, and the share of the sample's tables still in the sample
when one more bot is listed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import platform
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skyjo_ref.tournament.league import sampled_tables, schonheim_tables

sys.path.insert(0, str(Path(__file__).resolve().parent))

SIZES = [(12, 4, 1), (30, 4, 1), (30, 4, 2), (17, 8, 1), (40, 3, 3), (40, 8, 1), (100, 4, 1), (100, 8, 1), (100, 6, 2)]


def names(n: int) -> list[str]:
    return [f"bot{i:03d}" for i in range(n)]


def pair_range(sample: list[tuple[str, ...]], bots: list[str]) -> tuple[int, int]:
    counts: Counter[tuple[str, str]] = Counter({pair: 0 for pair in itertools.combinations(sorted(bots), 2)})
    for table in sample:
        counts.update(itertools.combinations(table, 2))
    return min(counts.values()), max(counts.values())


def _old(n: int, k: int, m: int, out: Any) -> None:
    from league_local_search import sampled_tables as old_sampled_tables

    started = time.perf_counter()
    sample = old_sampled_tables(names(n), k, m, 0)
    out.put((time.perf_counter() - started, len(sample)))


def time_old(n: int, k: int, m: int, limit: float) -> tuple[float | None, int | None]:
    """The old search's seconds and tables, or (None, None) if it did not finish within ``limit``."""
    results: multiprocessing.Queue[tuple[float, int]] = multiprocessing.Queue()
    child = multiprocessing.Process(target=_old, args=(n, k, m, results))
    child.start()
    child.join(limit)
    if child.is_alive():
        child.terminate()
        child.join()
        return None, None
    seconds, count = results.get(timeout=5)
    return seconds, count


def measure(n: int, k: int, m: int, old_limit: float, repeat: int) -> dict[str, Any]:
    bots = names(n)
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        sample = sampled_tables(bots, k, m, 0)
        seconds.append(time.perf_counter() - started)
    low, high = pair_range(sample, bots)
    grown = sampled_tables([*bots, "bot999"], k, m, 0)
    old_seconds, old_tables = time_old(n, k, m, old_limit) if old_limit > 0 else (None, None)
    new_seconds = min(seconds)
    return {
        "bots": n,
        "players": k,
        "meetings": m,
        "tables": len(sample),
        "lower_bound": schonheim_tables(n, k, m),
        "pair_min": low,
        "pair_max": high,
        "seconds": new_seconds,
        "old_seconds": old_seconds,
        "old_tables": old_tables,
        "speedup": None if old_seconds is None else old_seconds / max(new_seconds, 1e-6),
        "kept_after_one_more_bot": len(set(sample) & set(grown)) / len(sample),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old-limit", type=float, default=30.0, help="seconds the old search may take (0: skip)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the new construction per size (best kept)")
    parser.add_argument("--json", type=Path, help="write the rows to this file")
    args = parser.parse_args()
    print(
        f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, {multiprocessing.cpu_count()} cores"
    )
    print(
        "| bots | players | meetings | tables | lower bound | pair counts | seconds | old seconds (tables) | "
        "ratio | kept with one more bot |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for n, k, m in SIZES:
        row = measure(n, k, m, args.old_limit, args.repeat)
        rows.append(row)
        old = (
            f"> {args.old_limit:g} (stopped)"
            if row["old_seconds"] is None
            else f"{row['old_seconds']:.3f} ({row['old_tables']})"
        )
        ratio = "-" if row["speedup"] is None else f"{row['speedup']:,.0f}x"
        print(
            f"| {n} | {k} | {m} | {row['tables']} | {row['lower_bound']} | {row['pair_min']}-{row['pair_max']} | "
            f"{row['seconds']:.3f} | {old} | {ratio} | {row['kept_after_one_more_bot']:.0%} |",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
