"""The Java SDK's costs, side by side in one run (docs/performance.md):

1. a bot's start, spawn -> connected (the referee has its Hello), for the Python SDK and the Java template's jar
   under several JVM settings (the JVM's own class-data sharing archive off and on, an application archive);
2. a decision's round trip (the referee sends a DecisionRequest, the bot's reply arrives) for the Java SDK and for
   a bare grpc-java client on the generated stubs (BareClient), both answering legal action 0, against the same
   referee stand-in, over a Unix socket.

    .venv/bin/python benchmarks/bench_sdk_java.py [--bot-dir DIR] [--starts 10] [--decisions 20000]

DIR is a built Java template (`DIR/build` done); without it, one is copied and built in a temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
from skyjo_proto.skyjo.v1 import skyjo_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "sdk" / "java"


class Referee(pb_grpc.BotServiceServicer):
    """A stand-in referee: Welcome, then ``decisions`` requests one at a time, timing each reply; then OK."""

    def __init__(self, decisions: int, request: pb.DecisionRequest) -> None:
        self.decisions = decisions
        self.request = request
        self.hello_at: asyncio.Future[float] | None = None
        self.round_trips: list[float] = []

    async def Play(
        self, requests: AsyncIterator[pb.PlayRequest], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.PlayResponse]:
        incoming = requests.__aiter__()
        await incoming.__anext__()  # Hello
        if self.hello_at is not None and not self.hello_at.done():
            self.hello_at.set_result(time.perf_counter())
        yield pb.PlayResponse(welcome=pb.Welcome(protocol_version=1, seat_name="bench"))
        if self.decisions:
            yield pb.PlayResponse(game_start=pb.GameStart(game_id="g", seat=0, players=["a", "b"], rules=RULES))
        for rid in range(1, self.decisions + 1):
            self.request.request_id = rid
            sent = time.perf_counter()
            yield pb.PlayResponse(decision=self.request)
            reply = await incoming.__anext__()
            self.round_trips.append(time.perf_counter() - sent)
            assert reply.reply.request_id == rid, reply


RULES = pb.Rules(
    preset="official",
    column_clear=True,
    clear_on_final_reveal=True,
    finisher_penalty=pb.FINISHER_PENALTY_DOUBLE_IF_POSITIVE,
    next_round_starter=pb.NEXT_ROUND_STARTER_FINISHER,
    end_score=100,
    final_tie=pb.FINAL_TIE_SHARED,
)


def mid_game_request() -> pb.DecisionRequest:
    """A swap_or_reveal decision of a 2-player game in its middle: 12 legal actions, two grids, a discard pile."""

    def grid(revealed: dict[int, int]) -> pb.Grid:
        return pb.Grid(
            slots=[
                pb.Slot(state=pb.SLOT_STATE_REVEALED, value=revealed[p])
                if p in revealed
                else pb.Slot(state=pb.SLOT_STATE_HIDDEN)
                for p in range(12)
            ]
        )

    mine = {0: 5, 3: 11, 5: -1, 6: 2, 9: 7}
    view = pb.View(
        seat=0,
        round=1,
        decision=pb.DECISION_KIND_SWAP_OR_REVEAL,
        grids=[grid(mine), grid({1: 0, 2: 4, 7: 9, 8: 12, 10: 3})],
        discard_pile=[3, 8, 12, 1, 6],
        draw_pile_size=104,
        hand=4,
        totals=[23, 31],
        round_scores=[pb.Scores(values=[23, 31])],
        starter=1,
    )
    legal = [pb.Action(kind=pb.ACTION_KIND_SWAP, pos=p) for p in range(12)]
    legal += [pb.Action(kind=pb.ACTION_KIND_REVEAL, pos=p) for p in range(12) if p not in mine]
    return pb.DecisionRequest(game_id="g", view=view, legal_actions=legal, time_left_ms=2000)


async def serve(referee: Referee, socket: Path) -> grpc.aio.Server:
    server = grpc.aio.server()
    pb_grpc.add_BotServiceServicer_to_server(referee, server)  # type: ignore[no-untyped-call]
    server.add_insecure_port(f"unix:{socket}")
    await server.start()
    return server


async def one_start(argv: list[str], socket: Path, cwd: Path) -> tuple[float, float]:
    """Seconds from spawning ``argv`` to its Hello at the referee, and the CPU seconds the process used in all
    (it ends right after its Welcome): the CPU figure holds on a busy machine, where the wall time does not."""
    referee = Referee(0, mid_game_request())
    referee.hello_at = asyncio.get_running_loop().create_future()
    server = await serve(referee, socket)
    env = {**os.environ, "SKYJO_ADDR": f"unix:{socket}", "SKYJO_TOKEN": "bench-token-0123456789"}
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        spawned = time.perf_counter()
        process = await asyncio.create_subprocess_exec(*argv, env=env, cwd=cwd, stderr=asyncio.subprocess.DEVNULL)
        hello = await asyncio.wait_for(referee.hello_at, 60)
        await asyncio.wait_for(process.wait(), 60)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return hello - spawned, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    finally:
        await server.stop(None)
        socket.unlink(missing_ok=True)


async def round_trips(argv: list[str], socket: Path, decisions: int) -> list[float]:
    referee = Referee(decisions, mid_game_request())
    server = await serve(referee, socket)
    env = {**os.environ, "SKYJO_ADDR": f"unix:{socket}", "SKYJO_TOKEN": "bench-token-0123456789"}
    try:
        process = await asyncio.create_subprocess_exec(*argv, env=env, stderr=asyncio.subprocess.DEVNULL)
        await asyncio.wait_for(process.wait(), 600)
        return referee.round_trips
    finally:
        await server.stop(None)
        socket.unlink(missing_ok=True)


def build_template(folder: Path) -> Path:
    """The Java template copied as new-bot writes it and built with its own script."""
    target = folder / "benchbot"
    shutil.copytree(SDK / "template", target)
    exclude = set(json.loads((SDK / "template.json").read_text())["exclude"])
    shutil.copytree(SDK, target / "skyjo-sdk", ignore=lambda d, names: {n for n in names if n in exclude})
    subprocess.run([str(target / "build"), "-q"], check=True, capture_output=True)
    return target


def template_flags() -> list[str]:
    """The JVM options of the template's command, less its class-data sharing archive (measured apart)."""
    command: list[str] = str(json.loads((SDK / "template.json").read_text())["command"]).split()
    return [flag for flag in command[1 : command.index("-jar")] if not flag.startswith("-XX:SharedArchiveFile")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bot-dir", type=Path, help="a built Java template (default: build one)")
    parser.add_argument("--starts", type=int, default=10, help="starts measured per variant")
    parser.add_argument("--decisions", type=int, default=20000, help="round trips per client (the first 20%% warm up)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_text:
        tmp = Path(tmp_text)
        if args.starts > 0:
            measure_starts(tmp, args.bot_dir or build_template(tmp), args.starts)
        if args.decisions > 0:
            measure_round_trips(tmp, args.decisions)


def measure_starts(tmp: Path, bot_dir: Path, starts: int) -> None:
    jar = "bot/target/bot.jar"  # relative, from the bot's folder, as a league runs it (the CDS archive records it so)
    flags = template_flags()
    archive = "bot/target/bot.jsa"  # written by the template's build (a training start)
    variants = {
        "python SDK (python -m skyjo_bot run minimal_bot.py)": [
            sys.executable, "-m", "skyjo_bot", "run", str(ROOT / "examples/python/minimal_bot.py"),
        ],
        "java, JVM defaults": ["java", "-jar", jar],
        "java, template flags": ["java", *flags, "-jar", jar],
        "java, template flags, -Xshare:off (no CDS)": ["java", *flags, "-Xshare:off", "-jar", jar],
        "java, template flags + the build's CDS archive": [
            "java", *flags, f"-XX:SharedArchiveFile={archive}", "-jar", jar,
        ],
    }  # fmt: skip
    print(f"bot start, spawn -> Hello at the referee ({starts} starts each; wall median / min, CPU median; seconds)")
    for name, argv in variants.items():
        cwd = ROOT if argv[0] == sys.executable else bot_dir
        runs = [asyncio.run(one_start(argv, tmp / "start.sock", cwd)) for _ in range(starts)]
        walls, cpus = [wall for wall, _ in runs], [cpu for _, cpu in runs]
        print(f"  {name:<52} {statistics.median(walls):6.3f} / {min(walls):6.3f}   CPU {statistics.median(cpus):6.3f}")


def measure_round_trips(tmp: Path, decisions: int) -> None:
    flags = template_flags()
    classpath = build_classpath()
    clients = {
        "bare grpc-java (BareClient)": ["java", *flags, "-cp", classpath, "skyjo.bot.bench.BareClient"],
        "Java SDK (SdkClient)": ["java", *flags, "-cp", classpath, "skyjo.bot.bench.SdkClient"],
    }
    print(f"decision round trip, Unix socket ({decisions} each, after {decisions // 5} warm-up), µs")
    results: dict[str, list[float]] = {name: [] for name in clients}
    for _ in range(2):  # alternate, so a busy moment of the machine hurts both
        for name, argv in clients.items():
            trips = asyncio.run(round_trips(argv, tmp / "rt.sock", decisions))
            results[name] += trips[decisions // 5 :]
    for name, trips in results.items():
        print(f"  {name:<30} median {statistics.median(trips) * 1e6:7.1f}  mean {statistics.fmean(trips) * 1e6:7.1f}")
    bare, sdk = (statistics.median(results[name]) for name in clients)
    print(f"  the SDK adds {100 * (sdk - bare) / bare:+.1f}% to the median round trip")


def build_classpath() -> str:
    """target/classes, target/test-classes (the bench clients) and the SDK's dependencies."""
    out = SDK / "target" / "classpath.txt"
    subprocess.run(
        ["mvn", "-q", "-B", "test-compile", "dependency:build-classpath", f"-Dmdep.outputFile={out}"],
        cwd=SDK,
        check=True,
        capture_output=True,
    )
    return os.pathsep.join([str(SDK / "target" / "classes"), str(SDK / "target" / "test-classes"), out.read_text()])


if __name__ == "__main__":
    main()
