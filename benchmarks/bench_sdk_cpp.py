"""The C++ SDK's speed: its decision round trip against a bare grpc++ client, and its start time.

    python benchmarks/bench_sdk_cpp.py [--round-trips 2000] [--repeats 7] [--starts 15] [--json FILE]

It builds sdk/cpp first (cmake into sdk/cpp/build, Release: the library, its tests and examples).

- **round trip**: benchmarks/bench_referee.py's replay server (grpc.aio, in this process) writes the same
  recorded DecisionRequests, one after each reply, to a bot process on loopback: the bare grpc++ client
  (sdk/cpp/examples/bare_client.cc: the generated stubs, the sync API, answers index 0 at once) or the SDK
  bot (examples/faulty.cc without a FAULT: the first legal action through `skyjo::run`, every request read
  into a View). Wall time per decision, and the bot's CPU per decision (its rusage). The two alternate,
  round after round, so both see the same machine load. Target: the SDK adds at most 10% (medians).
- **start**: a real referee (skyjo_ref's RefereeServer) on loopback; a bot process is spawned and the
  clock stops when it writes that the referee welcomed it (`connected to ...` on stderr): the C++ SDK bot,
  and the Python SDK's minimal bot (`python -m skyjo_bot run examples/python/minimal_bot.py -v`) beside
  it. Target for C++: under 0.3 s (medians).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_referee import _identity, _Replay, decision_messages

ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "sdk" / "cpp"
BUILD = SDK / "build"
MINIMAL_BOT = ROOT / "examples" / "python" / "minimal_bot.py"


def build(folder: Path) -> None:
    subprocess.run(["cmake", "-S", str(SDK), "-B", str(folder), "-DCMAKE_BUILD_TYPE=Release"], check=True)
    subprocess.run(["cmake", "--build", str(folder), "--parallel", "2"], check=True)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def round_trip(argv: list[str], messages: list[bytes]) -> tuple[float, float]:
    """(wall, bot CPU) seconds per decision of the bot ``argv`` served by the replay server."""
    replay = _Replay(messages)
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    handler = grpc.method_handlers_generic_handler(
        "skyjo.v1.BotService",
        {
            "Play": grpc.stream_stream_rpc_method_handler(
                replay.play, request_deserializer=_identity, response_serializer=_identity
            )
        },
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        env = {**os.environ, "SKYJO_ADDR": f"127.0.0.1:{port}", "SKYJO_TOKEN": "bench-token", "SKYJO_LOG": "warn"}
        cpu = _children_cpu()
        proc = await asyncio.create_subprocess_exec(*argv, env=env)
        code = await asyncio.wait_for(proc.wait(), 300)
        assert code == 0, f"{argv[0]} failed with exit code {code}"
        cpu = _children_cpu() - cpu
    finally:
        await server.stop(None)
    return replay.elapsed / len(messages), cpu / len(messages)


async def start_time(argv: list[str]) -> float:
    """Seconds from spawning ``argv`` to its 'connected to' line, on a real referee."""
    from skyjo_ref.server.server import RefereeServer, ServerConfig

    server = RefereeServer(ServerConfig(address="127.0.0.1:0"))
    await server.start()
    try:
        token = server.issue_token("bench")
        env = {**os.environ, "SKYJO_ADDR": server.address, "SKYJO_TOKEN": token}
        began = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            *argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        assert proc.stderr is not None
        seen = ""
        while "connected to" not in seen:
            line = await asyncio.wait_for(proc.stderr.readline(), 60)
            assert line, f"{argv} exited before connecting"
            seen = line.decode(errors="replace")
        elapsed = time.perf_counter() - began
        proc.terminate()
        await proc.wait()
    finally:
        await server.stop(0.5)
    return elapsed


def _summary(values: list[float], scale: float = 1e3, unit: str = "ms") -> str:
    return f"median {statistics.median(values) * scale:.3f} {unit} (best {min(values) * scale:.3f})"


async def run(args: argparse.Namespace) -> dict[str, Any]:
    bare_argv, sdk_argv = [str(args.build / "bare_client")], [str(args.build / "faulty")]
    messages = decision_messages(args.round_trips)
    bare: list[float] = []
    sdk: list[float] = []
    bare_cpu: list[float] = []
    sdk_cpu: list[float] = []
    for i in range(args.repeats):  # alternate, so both see the same machine load
        wall, cpu = await round_trip(bare_argv, messages)
        bare.append(wall)
        bare_cpu.append(cpu)
        wall, cpu = await round_trip(sdk_argv, messages)
        sdk.append(wall)
        sdk_cpu.append(cpu)
        print(
            f"round {i + 1}: bare grpc++ {bare[-1] * 1e3:.3f} ms (CPU {bare_cpu[-1] * 1e6:.1f} us) | "
            f"SDK {sdk[-1] * 1e3:.3f} ms (CPU {sdk_cpu[-1] * 1e6:.1f} us) a decision"
        )
    cpp_start: list[float] = []
    python_start: list[float] = []
    for _ in range(args.starts):
        cpp_start.append(await start_time(sdk_argv))
        python_start.append(await start_time([sys.executable, "-m", "skyjo_bot", "run", str(MINIMAL_BOT), "-v"]))
    result = {
        "load_average": os.getloadavg()[0],
        "bare_ms": statistics.median(bare) * 1e3,
        "sdk_ms": statistics.median(sdk) * 1e3,
        "bare_cpu_us": statistics.median(bare_cpu) * 1e6,
        "sdk_cpu_us": statistics.median(sdk_cpu) * 1e6,
        "cpp_start_s": statistics.median(cpp_start),
        "python_start_s": statistics.median(python_start),
    }
    result["ratio"] = result["sdk_ms"] / result["bare_ms"]
    result["ratio_best"] = min(sdk) / min(bare)
    print()
    print(f"bare grpc++ client        {_summary(bare)} a decision; bot CPU {_summary(bare_cpu, 1e6, 'us')}")
    print(f"C++ SDK (first legal)   {_summary(sdk)} a decision; bot CPU {_summary(sdk_cpu, 1e6, 'us')}")
    print(f"ratio SDK / bare: {result['ratio']:.3f}x (medians), {result['ratio_best']:.3f}x (best rounds)")
    print(f"target <= 1.10x (medians): {'met' if result['ratio'] <= 1.10 else 'MISSED'}")
    print(
        f"start, spawn -> connected: C++ SDK {_summary(cpp_start, 1, 's')}; Python SDK {_summary(python_start, 1, 's')}"
    )
    print(f"target < 0.3 s for C++ (median): {'met' if result['cpp_start_s'] < 0.3 else 'MISSED'}")
    print(f"load average during the run: {result['load_average']:.1f} on {os.cpu_count()} cores")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--round-trips", type=int, default=2000, help="decisions per round-trip measurement")
    parser.add_argument("--repeats", type=int, default=7, help="alternating rounds of both clients")
    parser.add_argument("--starts", type=int, default=15, help="start-time measurements of each SDK")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--build", type=Path, default=BUILD, help="the CMake build folder (default: sdk/cpp/build)")
    args = parser.parse_args()
    build(args.build)
    result = asyncio.run(run(args))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
