"""Decision round trip through the referee against a bare grpcio bidirectional ping-pong.

    python benchmarks/bench_referee.py [--games 3] [--round-trips 2000] [--repeats 7]

Every measurement uses the same process layout as real use: the server
(the referee, or a bare server) runs in this process on grpc.aio, the bots
are separate Python processes on loopback.

- **bare**: a grpc.aio server writes a message the size of a typical
  DecisionRequest (with the events it carries) on a bidirectional stream
  and waits for a reply the size of a DecisionReply; the client (a
  subprocess, grpc.aio) answers each at once.
- **SDK alone**: the same bare server, but writing real DecisionRequests
  (recorded from games) to an SDK bot (``python -m skyjo_bot run``, inline and
  default) and reading its replies: what the SDK costs over the bare client,
  without the referee's work.
- **referee work**: the referee's Python work alone (:func:`referee_work`): the
  same runner, seats and sessions on in-memory streams, no gRPC, no bot
  process; CPU per decision. The part of the referee figure its own code decides.
- **referee**: a match between two SDK bots (``python -m skyjo_bot run``,
  each answering at once with a random legal action) on a real RefereeServer:
  every decision is a DecisionRequest built from the engine's view, an SDK
  round trip, the reply checked and applied, and the events broadcast. The
  figure is the match's wall time divided by its decisions, so everything the
  referee does per decision is in it.

The measurements alternate, round after round, so all see the same machine
load; it prints each round, the medians and the best rounds, and the ratio
(target: at most 1.3, medians). Bots and the referee start once; only the
games are timed. It also prints the ratio of the referee figure to "SDK
alone": the same bot, the same messages, without the referee's work: the
referee's own share of the round trip.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

ROOT = Path(__file__).resolve().parent.parent
INSTANT_BOT = Path(__file__).resolve().parent / "instant_bot.py"
PINGPONG = "/bench.PingPong/Play"


def _identity(data: bytes) -> bytes:
    return data


# ---------------------------------------------------------------------- message sizes


def typical_sizes(samples: int = 400) -> tuple[int, int]:
    """Mean serialized sizes of a DecisionRequest and a DecisionReply in 2-player games.

    As the referee sends them: each request carries the public events its seat
    has not had yet (the referee holds them for the seat's next request; those
    before a round's end go out in a batch of their own with the RoundResult).
    """
    import random

    from skyjo_bot import convert
    from skyjo_bot.types import EventKind
    from skyjo_ref.rules import Game

    rng = random.Random(1)
    req_sizes: list[int] = []
    reply_sizes: list[int] = []
    seed = 0
    while len(req_sizes) < samples:
        seed += 1
        game = Game(2, seed=seed)
        game_id = f"m1/{seed}"
        request_id = 10_000
        held: list[list[Any]] = [[], []]  # per seat: events not sent yet
        game.drain_events()
        while not game.over and len(req_sizes) < samples:
            seat = game.current_seat
            assert seat is not None
            view = game.view(seat)
            request_id += 1
            req = convert.decision_request_to_proto(request_id, game_id, view, 2000, held[seat])
            held[seat] = []
            action = rng.choice(view.legal_actions)
            reply = convert.reply_to_proto(request_id, action, view.legal_actions)
            req_sizes.append(len(req.SerializeToString()))
            reply_sizes.append(len(reply.SerializeToString()))
            game.apply(action)
            for event in game.drain_events():
                for pending in held:
                    if event.kind in convert.EVENT_MESSAGE_KINDS:
                        pending.append(convert.event_to_proto(event, game_id))
                    elif event.kind is EventKind.ROUND_END:
                        pending.clear()  # sent in a batch before the RoundResult
    return round(statistics.mean(req_sizes)), round(statistics.mean(reply_sizes))


# ---------------------------------------------------------------------- bare ping-pong


class _PingPong:
    """A server that sends ``count`` messages of ``down`` bytes, each after the previous reply."""

    def __init__(self, down: int, count: int) -> None:
        self.payload = b"x" * down
        self.count = count
        self.elapsed: list[float] = []
        self.cpu: list[float] = []

    async def play(self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]) -> None:
        first = await context.read()  # the client's hello
        assert isinstance(first, bytes)
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(self.count):
            await context.write(self.payload)
            reply = await context.read()
            assert isinstance(reply, bytes)
        self.elapsed.append(time.perf_counter() - start)
        self.cpu.append(time.process_time() - cpu)


async def bare_round_trip(down: int, up: int, count: int) -> float:
    """Seconds per round trip of a bare grpc.aio bidi ping-pong, client in a subprocess."""
    return (await bare_round_trip_cpu(down, up, count))[0]


async def bare_round_trip_cpu(down: int, up: int, count: int) -> tuple[float, float]:
    """(wall, server CPU) seconds per round trip of a bare grpc.aio bidi ping-pong, client in a subprocess."""
    pingpong = _PingPong(down, count)
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    handler = grpc.method_handlers_generic_handler(
        "bench.PingPong",
        {
            "Play": grpc.stream_stream_rpc_method_handler(
                pingpong.play, request_deserializer=_identity, response_serializer=_identity
            )
        },
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--pingpong-client", f"127.0.0.1:{port}", "--reply-bytes", str(up)
        )
        code = await asyncio.wait_for(proc.wait(), 300)
        assert code == 0, f"ping-pong client failed with exit code {code}"
    finally:
        await server.stop(None)
    return pingpong.elapsed[0] / count, pingpong.cpu[0] / count


# ---------------------------------------------------------------------- the SDK alone


def decision_messages(count: int) -> list[bytes]:
    """Serialized PlayResponse(decision=...) messages from random 2-player games, request ids 1, 2, ...

    Each carries the events its seat has not had yet, as the referee sends them (see :func:`typical_sizes`).
    """
    import random

    from skyjo_bot import convert
    from skyjo_bot.types import EventKind
    from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
    from skyjo_ref.rules import Game

    rng = random.Random(2)
    out: list[bytes] = []
    seed = 0
    while len(out) < count:
        seed += 1
        game = Game(2, seed=seed)
        held: list[list[Any]] = [[], []]
        game.drain_events()
        while not game.over and len(out) < count:
            seat = game.current_seat
            assert seat is not None
            view = game.view(seat)
            request = convert.decision_request_to_proto(len(out) + 1, "g/0", view, 2000, held[seat])
            held[seat] = []
            out.append(pb.PlayResponse(decision=request).SerializeToString())
            game.apply(rng.choice(view.legal_actions))
            for event in game.drain_events():
                for pending in held:
                    if event.kind in convert.EVENT_MESSAGE_KINDS:
                        pending.append(convert.event_to_proto(event, "g/0"))
                    elif event.kind is EventKind.ROUND_END:
                        pending.clear()
    return out


class _Replay:
    """A fake referee: Welcome, GameStart, then each recorded DecisionRequest after the previous reply."""

    def __init__(self, messages: list[bytes]) -> None:
        from skyjo_bot import convert
        from skyjo_bot.types import GameStart, Rules
        from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb

        start = convert.game_start_to_proto(GameStart("g/0", 0, ("a", "b"), Rules()))
        self.preamble = [
            convert.welcome("bench").SerializeToString(),
            pb.PlayResponse(game_start=start).SerializeToString(),
        ]
        self.messages = messages
        self.elapsed = 0.0
        self.cpu = 0.0

    async def play(self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]) -> None:
        first = await context.read()  # the SDK's Hello
        assert isinstance(first, bytes)
        for message in self.preamble:
            await context.write(message)
        start, cpu = time.perf_counter(), time.process_time()
        for message in self.messages:
            await context.write(message)
            reply = await context.read()
            assert isinstance(reply, bytes), "the SDK bot closed the stream"
        self.elapsed = time.perf_counter() - start
        self.cpu = time.process_time() - cpu


async def sdk_round_trip_cpu(messages: list[bytes], inline: bool) -> tuple[float, float]:
    """(wall, server CPU) seconds per decision of an SDK bot subprocess served by :class:`_Replay`."""
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
        env = {**os.environ, "SKYJO_ADDR": f"127.0.0.1:{port}", "SKYJO_TOKEN": "bench"}
        argv = [sys.executable, "-m", "skyjo_bot", "run", str(INSTANT_BOT), "--inline" if inline else "--thread"]
        proc = await asyncio.create_subprocess_exec(*argv, env=env)
        code = await asyncio.wait_for(proc.wait(), 300)
        assert code == 0, f"SDK bot failed with exit code {code}"
    finally:
        await server.stop(None)
    return replay.elapsed / len(messages), replay.cpu / len(messages)


async def _pingpong_client(address: str, up: int) -> None:
    payload = b"y" * up
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(PINGPONG, request_serializer=_identity, response_deserializer=_identity)(None)
        await call.write(b"hello")
        while True:
            message = await call.read()
            if message is grpc.aio.EOF:  # type: ignore[attr-defined]
                break
            await call.write(payload)


# ---------------------------------------------------------------------- through the referee


class RefereeBench:
    """A real RefereeServer in this process and two SDK bot subprocesses, reused for every measurement."""

    def __init__(self, inline: bool) -> None:
        from skyjo_bot.types import TimeControl

        self.inline = inline
        self.tc = TimeControl(decision_ms=10_000, bank_ms=3_600_000, max_strikes=1000, grace_ms=30_000)
        self.server: Any = None
        self.tokens: list[str] = []
        self.procs: list[asyncio.subprocess.Process] = []

    async def __aenter__(self) -> RefereeBench:
        from skyjo_ref.server.server import RefereeServer, ServerConfig

        self.server = RefereeServer(ServerConfig(address="127.0.0.1:0", time_control=self.tc))
        await self.server.start()
        self.tokens = [self.server.issue_token(f"instant{i}") for i in range(2)]
        for token in self.tokens:
            env = {**os.environ, "SKYJO_ADDR": self.server.address, "SKYJO_TOKEN": token}
            argv = [
                sys.executable,
                "-m",
                "skyjo_bot",
                "run",
                str(INSTANT_BOT),
                "--inline" if self.inline else "--thread",
            ]
            self.procs.append(await asyncio.create_subprocess_exec(*argv, env=env))
        for token in self.tokens:
            assert await self.server.wait_connected(token, 60), "an SDK bot did not connect"
        await self.measure(1, "warm-up")
        return self

    async def __aexit__(self, *exc: object) -> None:
        for proc in self.procs:
            if proc.returncode is None:
                proc.terminate()
        for proc in self.procs:
            await proc.wait()
        if self.server is not None:
            await self.server.stop(0.5)

    async def measure(self, games: int, seed: str) -> tuple[float, float, float, int]:
        """Per decision: wall seconds, reply seconds seen by the referee, referee CPU seconds; and decisions."""
        from skyjo_bot.types import Rules

        start, cpu = time.perf_counter(), time.process_time()
        records = await _match(self.server, self.tokens, games, seed, self.tc, Rules())
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        decisions = sum(t["decisions"] for r in records for t in r["meta"]["timings"])
        measured_ms = sum(t["total_ms"] for r in records for t in r["meta"]["timings"])
        for record in records:
            assert not any("auto" in a for rnd in record["rounds"] for a in rnd["actions"]), "a bot was struck"
        return wall / decisions, measured_ms / 1000 / decisions, cpu / decisions, decisions


async def _match(server: Any, tokens: list[str], games: int, seed: str, tc: Any, rules: Any) -> list[dict[str, Any]]:
    from skyjo_ref.match import MatchSpec, SeatSpec

    spec = MatchSpec(
        seats=tuple(SeatSpec.of_token(t, f"instant{i}") for i, t in enumerate(tokens)),
        rules=rules,
        time_control=tc,
        games=games,
        seed=seed,
    )
    match_id = server.start_match(spec)
    records: list[dict[str, Any]] = []
    async for index, payload in server.watch(match_id):
        if index is None:
            assert payload == "", f"match failed: {payload}"
            break
        records.append(json.loads(payload))
    return records


# ---------------------------------------------------------------------- the referee's own work, without gRPC


async def referee_work(games: int, seed: str) -> tuple[float, int]:
    """(CPU seconds per decision, decisions) of the referee's Python work alone: no gRPC, no bot process.

    Real :class:`GameRunner`, :class:`RemoteSeat`, :class:`Session` and
    :class:`Stream` objects; in place of gRPC, each stream's outbox is drained
    by a task that serializes each message as gRPC would and parses it back, and
    a DecisionRequest is answered at once (a seeded random index) through ``Session.on_message``,
    as the reader task does. What is left is what the referee does per
    decision in Python (engine, view, messages, events, clock, loop turns).
    """
    import random

    from skyjo_bot.types import TimeControl
    from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
    from skyjo_ref.match import GameSetup, play_game
    from skyjo_ref.server.session import RemoteSeat, Session, Stream

    tc = TimeControl(decision_ms=10_000, bank_ms=3_600_000, max_strikes=1000, grace_ms=30_000)
    rng = random.Random(seed)

    async def drain(session: Session, stream: Stream) -> None:
        while True:
            message = await stream.outbox.get()
            data = message if isinstance(message, bytes) else message.SerializeToString()
            stream.mark_written()
            parsed = pb.PlayResponse.FromString(data)
            if parsed.WhichOneof("message") == "decision":
                request = parsed.decision
                index = rng.randrange(len(request.legal_actions))
                reply = pb.DecisionReply(request_id=request.request_id, index=index)
                session.on_message(stream, pb.PlayRequest(reply=reply))

    sessions = [Session(f"t{i}", f"instant{i}") for i in range(2)]
    drains = []
    for session in sessions:
        stream = Stream("in-memory")
        session.attach(stream, pb.Hello(name=session.name, protocol_version=1))
        drains.append(asyncio.create_task(drain(session, stream)))
    decisions = 0
    cpu = time.process_time()
    try:
        for g in range(games):
            seats = [RemoteSeat(s, s.name) for s in sessions]
            record = await play_game(GameSetup(f"w/{g}", seats, seed=f"{seed}/{g}", time_control=tc))
            decisions += sum(t["decisions"] for t in record["meta"]["timings"])
    finally:
        cpu = time.process_time() - cpu
        for task in drains:
            task.cancel()
    return cpu / decisions, decisions


# ---------------------------------------------------------------------- main


def _summary(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1e3:.3f} ms, best {min(values) * 1e3:.3f} ms"


async def run(args: argparse.Namespace) -> dict[str, Any]:
    down, up = typical_sizes()
    print(f"message sizes: DecisionRequest {down} bytes, DecisionReply {up} bytes (2 players, mean)")
    bare: list[float] = []
    ref: list[float] = []
    ref_threaded: list[float] = []
    measured: list[float] = []
    cpu: list[float] = []
    bare_cpu: list[float] = []
    sdk_inline: list[float] = []
    sdk_threaded: list[float] = []
    work: list[float] = []
    messages = decision_messages(args.round_trips)
    async with RefereeBench(inline=True) as inline, RefereeBench(inline=False) as threaded:
        for i in range(args.repeats):  # alternate, so both see the same machine load
            wall_b, cpu_b = await bare_round_trip_cpu(down, up, args.round_trips)
            bare.append(wall_b)
            bare_cpu.append(cpu_b)
            sdk_inline.append((await sdk_round_trip_cpu(messages, inline=True))[0])
            sdk_threaded.append((await sdk_round_trip_cpu(messages, inline=False))[0])
            per, inside, used, n = await inline.measure(args.games, f"bench-{i}")
            ref.append(per)
            measured.append(inside)
            cpu.append(used)
            per_t, _, _, _ = await threaded.measure(args.games, f"bench-{i}")
            ref_threaded.append(per_t)
            work.append((await referee_work(args.games * 5, f"work-{i}"))[0])
            print(
                f"round {i + 1}: bare {bare[-1] * 1e3:.3f} ms | SDK alone {sdk_inline[-1] * 1e3:.3f} ms "
                f"(--thread {sdk_threaded[-1] * 1e3:.3f} ms) | referee {per * 1e3:.3f} ms a decision "
                f"({n} decisions; reply seen by the referee {inside * 1e3:.3f} ms; referee CPU {used * 1e3:.3f} ms) | "
                f"worker-thread SDK {per_t * 1e3:.3f} ms | referee work without gRPC {work[-1] * 1e6:.1f} us"
            )
    result: dict[str, Any] = {
        "request_bytes": down,
        "reply_bytes": up,
        "repeats": args.repeats,
        "bare_ms": statistics.median(bare) * 1e3,
        "bare_best_ms": min(bare) * 1e3,
        "sdk_alone_ms": statistics.median(sdk_inline) * 1e3,
        "sdk_alone_threaded_ms": statistics.median(sdk_threaded) * 1e3,
        "referee_ms": statistics.median(ref) * 1e3,
        "referee_best_ms": min(ref) * 1e3,
        "referee_threaded_ms": statistics.median(ref_threaded) * 1e3,
        "referee_threaded_best_ms": min(ref_threaded) * 1e3,
        "referee_reply_ms": statistics.median(measured) * 1e3,
        "referee_cpu_ms": statistics.median(cpu) * 1e3,
        "bare_server_cpu_ms": statistics.median(bare_cpu) * 1e3,
        "referee_work_us": statistics.median(work) * 1e6,
    }
    result["ratio"] = result["referee_ms"] / result["bare_ms"]
    result["ratio_best"] = result["referee_best_ms"] / result["bare_best_ms"]
    result["ratio_threaded"] = result["referee_threaded_ms"] / result["bare_ms"]
    # the same SDK peer and messages, with and without the referee: the referee's own share
    result["ratio_to_sdk_alone"] = result["referee_ms"] / result["sdk_alone_ms"]
    print()
    print(f"bare grpc.aio bidi ping-pong        {_summary(bare)} a round trip")
    print(f"SDK alone, --inline                 {_summary(sdk_inline)} a decision (recorded requests)")
    print(f"SDK alone, --thread                 {_summary(sdk_threaded)} a decision (worker thread)")
    print(f"through the referee, SDK --inline   {_summary(ref)} a decision")
    print(f"through the referee, SDK --thread   {_summary(ref_threaded)} a decision (decide in a worker thread)")
    print(f"reply time seen by the referee      {_summary(measured)} (request queued -> reply in)")
    print(f"referee CPU                         {_summary(cpu)} a decision")
    print(f"bare server CPU                     {_summary(bare_cpu)} a round trip")
    print(f"referee work without gRPC (CPU)     {_summary(work)} a decision (in-process streams, no bots)")
    print(
        f"ratio referee / bare: {result['ratio']:.2f}x (medians), {result['ratio_best']:.2f}x (best rounds); "
        f"worker-thread SDK {result['ratio_threaded']:.2f}x (medians)"
    )
    print(f"target <= 1.3x (medians, --inline): {'met' if result['ratio'] <= 1.3 else 'MISSED'}")
    print(
        f"ratio referee / SDK alone (same bot, same messages, no referee work): {result['ratio_to_sdk_alone']:.2f}x; "
        f"SDK alone / bare: {result['sdk_alone_ms'] / result['bare_ms']:.2f}x"
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3, help="games per referee measurement (2 SDK bots)")
    parser.add_argument("--round-trips", type=int, default=2000, help="round trips per bare measurement")
    parser.add_argument("--repeats", type=int, default=7, help="alternating rounds of both measurements")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--pingpong-client", metavar="ADDR", help=argparse.SUPPRESS)
    parser.add_argument("--reply-bytes", type=int, default=8, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pingpong_client:
        asyncio.run(_pingpong_client(args.pingpong_client, args.reply_bytes))
        return 0
    result = asyncio.run(run(args))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
