"""What isolation costs: the start of an isolated bot process, and a league of SDK bots isolated against not.

Side by side in one run, alternating, so the machine's load hits both alike:

1. **Start** (ms): ``/bin/true`` run through the bot's supervisor (as every managed bot is), with and without
   bubblewrap's isolated view; and an SDK bot from spawn until it holds its stream to a real referee.
2. **League** (games/s): ``skyjo-ref tournament`` of SDK bots (the example bots), ``isolation: strict`` (each
   process never plays two games of one deal: more processes) against ``isolation: none``.

    python benchmarks/bench_isolation.py [--starts 20] [--deals 6] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from skyjo_ref.execution.pool import BotPool
from skyjo_ref.execution.types import FaultList, QuietNotes
from skyjo_ref.players import parse_bot_spec
from skyjo_ref.sandbox import BotView, Sandbox, SandboxPlan, python_runtime
from skyjo_ref.server import RefereeServer, ServerConfig

REPO = Path(__file__).resolve().parents[1]
BOTS = ("minimal_bot.py", "strong_bot.py", "minimal_bot.py")


def start_true(isolated: bool) -> float:
    view = BotView(runtime=python_runtime(), binds=(), socket_dir=None, hidden=(), cwd=None)
    plan = SandboxPlan(Sandbox(isolation="strict" if isolated else "none"), view=view if isolated else None)
    began = time.perf_counter()
    subprocess.run(plan.wrap(["/bin/true"]), check=True)
    return (time.perf_counter() - began) * 1000


async def start_sdk_bot(isolated: bool, folder: Path) -> float:
    """Spawn to connected, for one SDK bot process through the bot pool (as a league starts one)."""
    socket_dir = folder / "s"
    socket_dir.mkdir(parents=True, exist_ok=True)
    server = RefereeServer(ServerConfig(address="127.0.0.1:0", unix_socket=socket_dir / "referee.sock"))
    await server.start()
    os.chmod(socket_dir, 0o755)
    os.chmod(socket_dir / "referee.sock", 0o666)
    spec = parse_bot_spec(str(REPO / "examples" / "python" / "minimal_bot.py"))
    spec = dataclasses.replace(spec, sandbox=Sandbox(isolation="strict" if isolated else "none"))

    async def token(name: str) -> str:
        return server.issue_token(name)

    pool = BotPool(
        [spec],
        address=server.address,
        unix_address=server.unix_address,
        issue_token=token,
        wait_connected=server.wait_connected,
        store=FaultList(),
        observer=QuietNotes(),
        log_dir=folder / "logs",
        connect_timeout_s=60,
    )
    try:
        began = time.perf_counter()
        worker = await pool.start(spec.name)
        while not await server.wait_connected(worker.process.token, 0.01):
            pass
        return (time.perf_counter() - began) * 1000
    finally:
        await pool.aclose()
        await server.stop(0.5)


def league(isolation: str, deals: int, folder: Path) -> tuple[float, int]:
    bots = "\n".join(
        f"  - {{name: b{i}, python: {REPO / 'examples' / 'python' / name}}}" for i, name in enumerate(BOTS)
    )
    config = folder / f"{isolation}.yaml"
    config.write_text(
        f"name: bench\nisolation: {isolation}\nplayers_per_game: 2\ndeals: {deals}\nseed: 1\nconcurrency: 2\n"
        f"rating: {{bootstrap: 0}}\noutput: {folder / isolation}\nbots:\n{bots}\n",
        encoding="utf-8",
    )
    shutil.rmtree(folder / isolation, ignore_errors=True)
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "tournament", str(config), "--plain"],
        check=True,
        capture_output=True,
    )
    games = 3 * deals * 2
    return time.perf_counter() - began, games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--deals", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}, Python {platform.python_version()}, uid {os.geteuid()}"
    )
    plain, isolated = [], []
    for _ in range(args.starts):
        plain.append(start_true(False))
        isolated.append(start_true(True))
    print(
        f"/bin/true through the supervisor: {statistics.median(plain):.1f} ms; isolated: "
        f"{statistics.median(isolated):.1f} ms (medians of {args.starts})"
    )
    with tempfile.TemporaryDirectory() as tmp:
        sdk_plain, sdk_isolated = [], []
        for i in range(max(3, args.starts // 4)):
            sdk_plain.append(asyncio.run(start_sdk_bot(False, Path(tmp) / f"p{i}")))
            sdk_isolated.append(asyncio.run(start_sdk_bot(True, Path(tmp) / f"i{i}")))
        print(
            f"SDK bot, spawn to connected: {statistics.median(sdk_plain):.0f} ms; isolated: "
            f"{statistics.median(sdk_isolated):.0f} ms (medians of {len(sdk_plain)})"
        )
        rates: dict[str, list[float]] = {"none": [], "strict": []}
        for _ in range(args.repeat):
            for isolation in ("none", "strict"):
                seconds, games = league(isolation, args.deals, Path(tmp))
                rates[isolation].append(games / seconds)
        none, strict = statistics.median(rates["none"]), statistics.median(rates["strict"])
        print(
            f"league of SDK bots ({3 * args.deals * 2} games, concurrency 2, wall time with start-up): "
            f"none {none:.2f} games/s, strict {strict:.2f} games/s: strict takes {none / strict:.2f}x as long "
            f"(medians of {args.repeat}, alternating)"
        )


if __name__ == "__main__":
    main()
