"""The Go SDK's costs: a decision's round trip against a bare grpc-go client, the referee's round trip with a Go
bot against bare grpc-go, and a Go bot's start time.

    python benchmarks/bench_sdk_go.py [--trips 2000] [--rounds 5] [--games 20] [--starts 10]

Builds sdk/go's cmd/bare (raw stubs and grpc-go, answering index 0), cmd/firstlegal (the SDK, answering
``view.LegalActions[0]``) and cmd/pingpong (a bare grpc-go BotService) with Go 1.26, then:

- **SDK vs bare, on a bare grpc-go server**: pingpong sends one recorded DecisionRequest (a conformance
  vector) ``--trips`` times and times each reply (send -> reply read, Go's clock), to the bare client and to
  the SDK, alternating, ``--rounds`` times each: the SDK's share of a round trip, with no Python in the loop;
- **the referee's round trip**: the referee's own clock per decision (``meta.decision_ms``) over ``--games``
  games against greedy, for the bare client, the SDK and the Python SDK (the same choice), beside pingpong's
  bare grpc-go round trip;
- **start**: spawn -> the Welcome read (the bot's ``connected to`` log line), ``--starts`` times, for the SDK
  bot and the bare client.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
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
sys.path[:0] = [str(ROOT / "referee"), str(ROOT / "sdk")]

from skyjo_bot.types import Rules, TimeControl  # noqa: E402
from skyjo_ref.match import MatchSpec, SeatSpec  # noqa: E402
from skyjo_ref.server.server import RefereeServer, ServerConfig  # noqa: E402

SDK = ROOT / "sdk" / "go"
TC = TimeControl(decision_ms=10_000, bank_ms=600_000, max_strikes=1000, grace_ms=20_000)
PY_FIRST = """\
from skyjo_bot import Action, Bot, View


class FirstLegal(Bot):
    def decide(self, view: View) -> Action:
        return view.legal_actions[0]
"""


def build(out: Path) -> dict[str, Path]:
    env = {**os.environ, "PATH": f"/usr/local/go/bin{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("GOFLAGS", None)
    names = ("bare", "firstlegal", "pingpong")
    subprocess.run(["go", "build", "-o", str(out), *(f"./cmd/{n}" for n in names)], cwd=SDK, env=env, check=True)
    return {name: out / name for name in names}


def vector() -> tuple[str, str]:
    """A mid-game decision (swap_or_reveal, 2 players) from the conformance vectors: GameStart, request."""
    vectors = json.loads((ROOT / "conformance" / "views.json").read_text())["vectors"]
    chosen = next(v for v in vectors if v["view"]["decision"] == "swap_or_reveal" and v["view"]["num_players"] == 2)
    return chosen["game_start"], chosen["request"]


def pingpong(programs: dict[str, Path], bot: str, trips: int, start: str, request: str) -> tuple[float, float]:
    """The median round trip (µs) of ``trips`` decisions between pingpong and ``bot``, and the bot process's
    CPU time per decision (µs, its whole life: start, Hello and the trips; from wait4)."""
    with subprocess.Popen(
        [str(programs["pingpong"]), "-n", str(trips), "-start", start, "-request", request], stdout=subprocess.PIPE
    ) as server:
        assert server.stdout is not None
        address = server.stdout.readline().decode().strip()
        env = {**os.environ, "SKYJO_ADDR": address, "SKYJO_TOKEN": "bench-token-0123456789", "SKYJO_LOG": "warn"}
        env.pop("SKYJO_PARENT_PID", None)
        client = subprocess.Popen([str(programs[bot])], env=env, stderr=subprocess.DEVNULL)
        result = server.stdout.readline().decode().split()
        _, _, usage = os.wait4(client.pid, 0)
        client.returncode = 0  # reaped by wait4
    return float(result[0]), (usage.ru_utime + usage.ru_stime) * 1e6 / trips


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


async def referee_round_trips(server: RefereeServer, argv: list[str], name: str, games: int) -> list[float]:
    proc, token = await _spawn(argv, server, name)
    try:
        spec = MatchSpec(
            seats=(SeatSpec.of_token(token, name), SeatSpec.of_builtin("greedy")),
            rules=Rules(),
            time_control=TC,
            games=games,
            seed="bench-sdk-go",
        )
        match_id = server.start_match(spec)
        times: list[float] = []
        async for index, payload in server.watch(match_id):
            if index is None:
                break
            record: dict[str, Any] = json.loads(payload)
            seat = [b["name"] for b in record["meta"]["bots"]].index(name)
            times.extend(record["meta"]["decision_ms"][seat])
        return times
    finally:
        await _stop(proc)


async def start_time(server: RefereeServer, argv: list[str], name: str) -> float:
    started = time.perf_counter()
    proc, _ = await _spawn(argv, server, name)
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
    return f"| {label} | {len(ms)} | {statistics.median(ms):.3f} | {statistics.mean(ms):.3f} | {p90:.3f} |"


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        programs = build(Path(tmp))
        start, request = vector()
        print(f"load {os.getloadavg()[0]:.1f}; request {len(base64.b64decode(request))} bytes")
        print(f"\nSDK vs bare grpc-go client, on a bare grpc-go server: median µs of {args.trips} round trips a round")
        medians: dict[str, list[float]] = {"bare": [], "firstlegal": []}
        cpu: dict[str, list[float]] = {"bare": [], "firstlegal": []}
        for _ in range(args.rounds):
            for bot in medians:  # alternating, so both see the same load
                median, cpu_each = pingpong(programs, bot, args.trips, start, request)
                medians[bot].append(median)
                cpu[bot].append(cpu_each)
        bare, sdk = statistics.median(medians["bare"]), statistics.median(medians["firstlegal"])
        print("| client | rounds (µs) | median µs | client CPU µs a decision |\n|---|---|---|---|")
        for bot, label in (("bare", "bare grpc-go client"), ("firstlegal", "Go SDK")):
            rounds = ", ".join(f"{m:.0f}" for m in medians[bot])
            print(f"| {label} | {rounds} | {statistics.median(medians[bot]):.1f} | {statistics.median(cpu[bot]):.1f} |")
        cpu_ratio = statistics.median(cpu["firstlegal"]) / statistics.median(cpu["bare"])
        print(f"SDK / bare: {sdk / bare:.3f}x wall, {cpu_ratio:.3f}x client CPU")

        py_bot = Path(tmp) / "first_legal.py"
        py_bot.write_text(PY_FIRST)
        clients = {
            "bare grpc-go client (index 0)": [str(programs["bare"])],
            "Go SDK (LegalActions[0])": [str(programs["firstlegal"])],
            "Python SDK (legal_actions[0])": [sys.executable, "-m", "skyjo_bot", "run", str(py_bot)],
        }
        server = RefereeServer(ServerConfig(address="127.0.0.1:0", time_control=TC))
        await server.start()
        try:
            print(f"\nthrough the referee: ms per decision (the referee's clock), {args.games} games against greedy")
            print("| client | decisions | median | mean | p90 |\n|---|---|---|---|---|")
            for i, (label, argv) in enumerate(clients.items()):
                print(_row(label, await referee_round_trips(server, argv, f"rt{i}", args.games)), flush=True)
            print(f"| (bare grpc-go server and client, above) | | {bare / 1000:.3f} | | |")
            print(f"\nstart (spawn -> Welcome), {args.starts} starts each, load {os.getloadavg()[0]:.1f}")
            print("| bot | median s | min s | max s |\n|---|---|---|---|")
            for i, (label, argv) in enumerate(list(clients.items())[:2]):
                times = [await start_time(server, argv, f"st{i}-{n}") for n in range(args.starts)]
                print(f"| {label} | {statistics.median(times):.4f} | {min(times):.4f} | {max(times):.4f} |", flush=True)
        finally:
            await server.stop(0.5)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--trips", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--starts", type=int, default=10)
    asyncio.run(main(parser.parse_args()))
