"""The TypeScript SDK's costs: a decision's round trip against a bare gRPC client, and a bot's start time.

    python benchmarks/bench_sdk_typescript.py [--games 20] [--starts 10]

Needs sdk/typescript built (``cd sdk/typescript && npm ci && npx tsc -b``). All of it on one referee here:

- **round trip**: the referee's own clock per decision (``meta.decision_ms``: request sent -> reply read) over
  ``--games`` games against greedy, for (1) a bare client on the same runtime (@connectrpc/connect-node and the
  SDK's generated messages, answering index 0 by hand: benchmarks/ts_bare_client.mjs), (2) the SDK running a
  bot that answers ``view.legalActions[0]`` (benchmarks/ts_sdk_first_legal.mjs), (3) the Python SDK with the
  same bot, for scale;
- **start**: spawn -> the referee's Welcome read by the bot (its ``connected to`` log line) for the SDK and
  the Python SDK, ``--starts`` times each.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "referee"), str(ROOT / "sdk")]

from skyjo_bot.types import Rules, TimeControl  # noqa: E402
from skyjo_ref.match import MatchSpec, SeatSpec  # noqa: E402
from skyjo_ref.server.server import RefereeServer, ServerConfig  # noqa: E402

HERE = Path(__file__).resolve().parent
TC = TimeControl(decision_ms=10_000, bank_ms=600_000, max_strikes=1000, grace_ms=20_000)
PY_FIRST = """\
from skyjo_bot import Action, Bot, View


class FirstLegal(Bot):
    def decide(self, view: View) -> Action:
        return view.legal_actions[0]
"""


async def _spawn(argv: list[str], server: RefereeServer, name: str) -> tuple[asyncio.subprocess.Process, str]:
    token = server.issue_token(name)
    env = {**os.environ, "SKYJO_ADDR": server.address, "SKYJO_TOKEN": token, "PYTHONPATH": str(ROOT / "sdk")}
    proc = await asyncio.create_subprocess_exec(
        *argv, env=env, cwd=str(ROOT), stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    return proc, token


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.terminate()
    await proc.wait()


async def _round_trips(server: RefereeServer, argv: list[str], name: str, games: int) -> list[float]:
    proc, token = await _spawn(argv, server, name)
    try:
        spec = MatchSpec(
            seats=(SeatSpec.of_token(token, name), SeatSpec.of_builtin("greedy")),
            rules=Rules(),
            time_control=TC,
            games=games,
            seed="bench-sdk-ts",
        )
        match_id = server.start_match(spec)
        times: list[float] = []
        async for index, payload in server.watch(match_id):
            if index is None:
                assert payload == "", payload
                break
            record: dict[str, Any] = json.loads(payload)
            seat = [b["name"] for b in record["meta"]["bots"]].index(name)
            times.extend(record["meta"]["decision_ms"][seat])
        return times
    finally:
        await _stop(proc)


async def _start_time(server: RefereeServer, argv: list[str], name: str) -> float:
    started = time.perf_counter()
    proc, _ = await _spawn([*argv, "-v"], server, name)
    assert proc.stderr is not None
    try:
        async for line in proc.stderr:
            if b"connected to" in line:
                return time.perf_counter() - started
        raise AssertionError(f"{name} exited before connecting")
    finally:
        await _stop(proc)


def _row(label: str, ms: list[float]) -> str:
    ms = sorted(ms)
    p90 = ms[int(0.9 * (len(ms) - 1))]
    return f"| {label} | {len(ms)} | {statistics.median(ms):.2f} | {statistics.mean(ms):.2f} | {p90:.2f} |"


async def main(games: int, starts: int) -> None:
    node = "node"
    with tempfile.TemporaryDirectory() as tmp:
        py_bot = Path(tmp) / "first_legal.py"
        py_bot.write_text(PY_FIRST)
        clients = {
            "bare connect-node client (index 0)": [node, str(HERE / "ts_bare_client.mjs")],
            "TypeScript SDK (legalActions[0])": [node, str(HERE / "ts_sdk_first_legal.mjs")],
            "Python SDK (legal_actions[0])": [sys.executable, "-m", "skyjo_bot", "run", str(py_bot)],
        }
        server = RefereeServer(ServerConfig(address="127.0.0.1:0", time_control=TC))
        await server.start()
        try:
            load = os.getloadavg()[0]
            print(f"round trip per decision (ms, the referee's clock), {games} games against greedy, load {load:.1f}")
            print("| client | decisions | median | mean | p90 |\n|---|---|---|---|---|")
            for i, (label, argv) in enumerate(clients.items()):
                print(_row(label, await _round_trips(server, argv, f"rt{i}", games)), flush=True)
            print(f"\nstart (spawn -> Welcome), {starts} starts each")
            print("| bot | median s | min s | max s |\n|---|---|---|---|")
            for i, (label, argv) in enumerate(list(clients.items())[1:]):
                times = [await _start_time(server, argv, f"st{i}-{n}") for n in range(starts)]
                print(f"| {label} | {statistics.median(times):.3f} | {min(times):.3f} | {max(times):.3f} |", flush=True)
        finally:
            await server.stop(0.5)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--starts", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.games, args.starts))
