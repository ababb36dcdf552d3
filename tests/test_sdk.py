"""The Python SDK against a real referee on loopback: subprocess bots, reconnects, faults, shutdown."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from sdk_harness import MINIMAL_BOT, ROOT, CuttableProxy, autos, play_match, referee, sdk_argv, start_bot
from skyjo_bot import Action, Bot, Event, View
from skyjo_bot.client import BotClient, SessionRefused
from skyjo_bot.loader import BotSpecError, load_bot
from skyjo_proto.skyjo.v1 import skyjo_pb2_grpc as pb_grpc
from skyjo_ref.match import SeatSpec
from skyjo_ref.records import replay

# ---------------------------------------------------------------------- full matches


def test_two_sdk_subprocess_bots_play_a_match(tmp_path: Path) -> None:
    decorated = tmp_path / "lowest.py"
    decorated.write_text(
        "from skyjo_bot import Action, View, bot\n\n"
        "@bot\n"
        "def lowest(view: View) -> Action:\n"
        "    return view.legal_actions[-1]\n"
    )

    async def main() -> None:
        async with referee() as server:
            t1, t2 = server.issue_token("minimal"), server.issue_token("lowest")
            b1 = await start_bot(sdk_argv(MINIMAL_BOT), "minimal", t1, server.address)
            b2 = await start_bot(sdk_argv(f"{decorated}:lowest", "-v"), "lowest", t2, server.address)
            records = await play_match(server, [SeatSpec.of_token(t1, "minimal"), SeatSpec.of_token(t2, "lowest")], 3)
            assert [b1.proc.returncode, b2.proc.returncode] == [None, None], "bots stay up between games"
            assert await b1.stop() == 0
            assert await b2.stop() == 0
        assert len(records) == 3
        for record in records:
            replay(record)  # every action legal, the stored result right
            assert record["players"] == ["minimal", "lowest"]
            assert autos(record) == [], f"the referee played for a bot: {autos(record)}"
            assert record["meta"]["strikes"] == []
            assert record["meta"]["bots"][1]["name"] == "lowest"
        assert "connected to" in b2.text() and "SIGTERM: closing the session" in b2.text()
        assert "Traceback" not in b1.text() + b2.text()

    asyncio.run(main())


@pytest.mark.parametrize("mode", [["--thread"], []], ids=["worker", "inline"])
def test_reconnect_mid_game_finishes_the_game(mode: list[str]) -> None:
    """The network drops under a subprocess bot mid-game; it reconnects and the game ends normally."""

    async def main() -> None:
        async with referee() as server:
            proxy = CuttableProxy(server.address)
            await proxy.start()
            proxy.cut_after_bytes = 15_000  # well inside the first game
            token = server.issue_token("minimal")
            bot = await start_bot(sdk_argv(MINIMAL_BOT, "-v", *mode), "minimal", token, proxy.address)
            records = await play_match(server, [SeatSpec.of_token(token, "minimal"), SeatSpec.of_builtin("greedy")], 2)
            assert await bot.stop() == 0
            await proxy.stop()
            assert proxy.cuts >= 1 and proxy.connections >= 2, "the test must really have cut the stream"
            assert server.sessions[token].connections >= 2
        for record in records:
            replay(record)
            assert autos(record) == [], f"the reconnect cost the bot: {autos(record)}"
        assert "reconnecting in" in bot.text()

    asyncio.run(main())


class _SlowOnce(Bot):
    """Cuts the network (through ``on_slow``) while it thinks over its 5th decision."""

    def __init__(self, on_slow: Callable[[], object]) -> None:
        super().__init__()
        self.calls = 0
        self.on_slow = on_slow

    def decide(self, view: View) -> Action:
        self.calls += 1
        if self.calls == 5:
            self.on_slow()  # on the loop's thread (inline): the stream is gone before this reply is written
        return view.legal_actions[0]


def test_a_re_sent_decision_is_answered_without_a_second_decide() -> None:
    async def main() -> None:
        async with referee() as server:
            proxy = CuttableProxy(server.address)
            await proxy.start()
            bot = _SlowOnce(proxy.cut)
            token = server.issue_token("slow")
            client = BotClient(bot, proxy.address, token, backoff_base=0.05)
            task = asyncio.create_task(client.run())
            records = await play_match(server, [SeatSpec.of_token(token, "slow"), SeatSpec.of_builtin("random")], 1)
            client.stop()
            await asyncio.wait_for(task, 10)
            await proxy.stop()
        record = records[0]
        replay(record)
        assert autos(record) == []
        assert client.stats.sessions >= 2
        # one decide call per decision of the seat: the re-sent request reused the answer
        assert bot.calls == record["meta"]["timings"][0]["decisions"]

    asyncio.run(main())


class _Faulty(Bot):
    """Raises on every 7th decision, and returns garbage on every 11th."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def decide(self, view: View) -> Action:
        self.calls += 1
        if self.calls % 7 == 0:
            raise ZeroDivisionError("bad heuristic")
        if self.calls % 11 == 0:
            return "swap 3"  # type: ignore[return-value]
        return view.legal_actions[0]


@pytest.mark.parametrize("inline", [False, True], ids=["worker", "inline"])
def test_a_bot_exception_is_a_strike_not_a_crash(caplog: pytest.LogCaptureFixture, inline: bool) -> None:
    caplog.set_level(logging.ERROR, logger="skyjo_bot")  # other tests may have quietened it

    async def main() -> tuple[BotClient, list[dict[str, Any]]]:
        async with referee() as server:
            token = server.issue_token("faulty")
            client = BotClient(_Faulty(), server.address, token, inline=inline)
            task = asyncio.create_task(client.run())
            records = await play_match(server, [SeatSpec.of_token(token, "faulty"), SeatSpec.of_builtin("greedy")], 1)
            client.stop()
            await asyncio.wait_for(task, 10)
        return client, records

    client, records = asyncio.run(main())
    record = records[0]
    replay(record)
    strikes = record["meta"]["strikes"]
    assert client.stats.decide_errors >= 2
    assert len(strikes) == client.stats.decide_errors == len(autos(record))
    details = " ".join(str(s) for s in strikes)
    assert "ZeroDivisionError: bad heuristic" in details
    assert "TypeError: decide returned 'swap 3', expected an Action" in details
    assert client.stats.strikes == client.stats.decide_errors  # the referee told the bot each time
    assert "decide raised on decision" in caplog.text


# ---------------------------------------------------------------------- the command line


def _run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SKYJO_")}
    return subprocess.run(
        [sys.executable, "-m", "skyjo_bot", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=clean | (env or {}),
    )


def test_cli_spec_errors(tmp_path: Path) -> None:
    none = tmp_path / "none.py"
    none.write_text("x = 1\n")
    several = tmp_path / "several.py"
    several.write_text(
        "from skyjo_bot import Bot, bot\n"
        "class Alpha(Bot):\n    def decide(self, view): return view.legal_actions[0]\n"
        "@bot\ndef beta(view): return view.legal_actions[0]\n"
    )
    broken = tmp_path / "broken.py"
    broken.write_text("import skyjo_bot\n\n1 / 0\n")
    cases = [
        (["run", "nope/missing.py"], "bot file 'nope/missing.py' not found"),
        (["run", str(none)], f"no bot in {none}: define a class that subclasses skyjo_bot.Bot"),
        (["run", str(several)], f"several bots in {several} (Alpha, beta): choose one with {several}:Alpha"),
        (["run", f"{several}:Gamma"], "has no 'Gamma' (bots defined there: Alpha, beta)"),
        (["run", str(broken)], f"loading {broken} failed: ZeroDivisionError: division by zero (at {broken}:3)"),
        (["run", "no_such_pkg.mod:Bot"], "no module 'no_such_pkg.mod'"),
        (["run", str(MINIMAL_BOT)], "no referee address: pass --addr HOST:PORT or set SKYJO_ADDR"),
        (["run", str(MINIMAL_BOT), "--addr", "127.0.0.1:1"], "no bot token: pass --token TOKEN or set SKYJO_TOKEN"),
    ]
    for args, message in cases:
        done = _run_cli(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1, f"one line expected: {done.stderr!r}"


def test_loader_finds_each_kind_of_spec(tmp_path: Path) -> None:
    assert type(load_bot(str(MINIMAL_BOT))).__name__ == "MinimalBot"
    assert type(load_bot(f"{MINIMAL_BOT}:MinimalBot")).__name__ == "MinimalBot"
    assert load_bot("skyjo_ref.bots.greedy:GreedyBot").name == "greedy"
    plain = tmp_path / "plain.py"
    plain.write_text("def first(view):\n    return view.legal_actions[0]\n")
    assert load_bot(f"{plain}:first").name == "first"
    needs_args = tmp_path / "needs.py"
    needs_args.write_text(
        "from skyjo_bot import Bot\nclass Needs(Bot):\n    def __init__(self, x): super().__init__()\n"
    )
    with pytest.raises(BotSpecError, match="must be constructible without arguments"):
        load_bot(str(needs_args))


def test_unknown_token_is_refused() -> None:
    async def main() -> None:
        async with referee() as server:
            client = BotClient(Bot(), server.address, "not-a-token")
            with pytest.raises(SessionRefused, match="the referee refused the token: UNAUTHENTICATED"):
                await asyncio.wait_for(client.run(), 20)
            bot = await start_bot(sdk_argv(MINIMAL_BOT), "x", "not-a-token", server.address)
            code = await asyncio.wait_for(bot.proc.wait(), 30)
            assert bot._reader is not None
            await bot._reader
            assert code == 1
            assert "error: the referee refused the token" in bot.text()

    asyncio.run(main())


class _RacyReferee(pb_grpc.BotServiceServicer):
    """Refuses every stream, and shows the asyncio client what grpc/grpc#36066 sometimes shows it.

    The referee's status is UNAUTHENTICATED, but the grpc.aio client can see
    ``INTERNAL "Internal error from Core"`` when the refusal races its Hello.
    This referee makes that race certain for asyncio clients (told apart by
    their user-agent) and tells any other client the truth.
    """

    def __init__(self) -> None:
        self.agents: list[str] = []

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        agent = str(dict(context.invocation_metadata() or ()).get("user-agent", ""))
        self.agents.append(agent)
        if "asyncio" in agent:
            await context.abort(grpc.StatusCode.INTERNAL, "Internal error from Core")
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown bot token: use a token the referee issued")


def test_a_refusal_hidden_behind_internal_still_ends_the_bot_clearly() -> None:
    """An unknown token ends the bot with the referee's own reason, even when the aio client saw INTERNAL."""

    async def main() -> None:
        racy = _RacyReferee()
        server = grpc.aio.server()
        pb_grpc.add_BotServiceServicer_to_server(racy, server)  # type: ignore[no-untyped-call]
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            client = BotClient(Bot(), f"127.0.0.1:{port}", "not-a-token", give_up_after=5)
            with pytest.raises(SessionRefused, match="the referee refused the token: UNAUTHENTICATED: unknown bot"):
                await asyncio.wait_for(client.run(), 60)
            bot = await start_bot(sdk_argv(MINIMAL_BOT), "x", "not-a-token", f"127.0.0.1:{port}")
            code = await asyncio.wait_for(bot.proc.wait(), 60)
            assert bot._reader is not None
            await bot._reader
            assert code == 1, bot.text()
            assert "error: the referee refused the token: UNAUTHENTICATED: unknown bot token" in bot.text()
            assert any("asyncio" in agent for agent in racy.agents), "the race was not staged"
        finally:
            await server.stop(0)

    asyncio.run(main())


def test_sigterm_while_waiting_and_while_reconnecting() -> None:
    async def main() -> None:
        async with referee() as server:
            token = server.issue_token("idle")
            bot = await start_bot(sdk_argv(MINIMAL_BOT, "-v"), "idle", token, server.address)
            assert await server.wait_connected(token, 30)
            assert await bot.stop(timeout=15) == 0
        # nothing listens at this address any more: the bot keeps retrying until told to stop
        bot = await start_bot(sdk_argv(MINIMAL_BOT, "-v"), "idle", token, server.address)
        await bot.wait_for_text("reconnecting in")
        assert bot.proc.returncode is None
        assert await bot.stop(timeout=15) == 0

    asyncio.run(main())


def test_gives_up_after_the_give_up_time() -> None:
    done = _run_cli(
        "run", str(MINIMAL_BOT), "--give-up", "1", env={"SKYJO_ADDR": "127.0.0.1:9", "SKYJO_TOKEN": "t"}, timeout=60
    )
    assert done.returncode == 1
    assert "error: no session with the referee at 127.0.0.1:9" in done.stderr
    assert "giving up" in done.stderr


def test_worker_thread_keeps_the_loop_free() -> None:
    """A decide that blocks its thread leaves the event loop running (keepalives, messages)."""

    async def main() -> None:
        from skyjo_bot.client import _Worker

        worker = _Worker()
        release = threading.Event()
        slow = worker.submit(lambda: release.wait(60))
        ticks = 0
        for _ in range(5):
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks == 5 and not slow.done()
        release.set()
        assert await asyncio.wait_for(slow, 5) is True
        worker.close()

    asyncio.run(main())


def test_bot_exits_when_the_referee_ends_the_session() -> None:
    async def main() -> None:
        async with referee() as server:
            token = server.issue_token("idle")
            bot = await start_bot(sdk_argv(MINIMAL_BOT, "-v"), "idle", token, server.address)
            await bot.wait_for_text("connected to")  # it has its Welcome (an idle session, as after a match)
        # the referee stopped (streams end with status OK): the bot leaves by itself, exit 0
        code = await asyncio.wait_for(bot.proc.wait(), 30)
        assert bot._reader is not None
        await bot._reader
        assert code == 0, bot.text()
        assert "the referee ended the session" in bot.text()
        assert "reconnecting" not in bot.text()

    asyncio.run(main())


class _Recorder(Bot):
    def __init__(self) -> None:
        super().__init__()
        self.log: list[str] = []

    def on_event(self, event: Event) -> None:
        self.log.append(f"event {event.kind.value}")

    def decide(self, view: View) -> Action:
        self.log.append("decide")
        return view.legal_actions[0]


@pytest.mark.parametrize("inline", [False, True], ids=["worker", "inline"])
def test_events_inside_a_decision_request_reach_the_bot_before_decide(inline: bool) -> None:
    """A referee may hold events and send them inside the DecisionRequest (a minimal real gRPC server here)."""
    from skyjo_bot import convert
    from skyjo_bot.types import EventKind, GameStart, Rules
    from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
    from skyjo_ref.rules import Game

    game = Game(2, seed=4)
    events = [e for e in game.drain_events() if e.kind is not EventKind.GAME_END]
    replies: list[pb.PlayRequest] = []

    async def play(requests: Any, context: Any) -> Any:
        hello = await context.read()
        assert hello.WhichOneof("message") == "hello"
        yield convert.welcome("rec")
        start = GameStart("g", 0, game.players, Rules())
        yield pb.PlayResponse(game_start=convert.game_start_to_proto(start))
        held = [convert.event_to_proto(e, "g") for e in events]
        yield pb.PlayResponse(decision=convert.decision_request_to_proto(7, "g", game.view(0), 5000, held))
        replies.append(await context.read())

    async def main() -> _Recorder:
        import grpc.aio

        server = grpc.aio.server()
        handler = grpc.method_handlers_generic_handler(
            "skyjo.v1.BotService",
            {
                "Play": grpc.stream_stream_rpc_method_handler(
                    play,
                    request_deserializer=pb.PlayRequest.FromString,
                    response_serializer=pb.PlayResponse.SerializeToString,
                )
            },
        )
        server.add_generic_rpc_handlers((handler,))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        bot = _Recorder()
        client = BotClient(bot, f"127.0.0.1:{port}", "t", inline=inline)
        try:
            await asyncio.wait_for(client.run(), 30)  # the server ends the stream with OK after the reply
        finally:
            await server.stop(None)
        return bot

    bot = asyncio.run(main())
    assert bot.log == [f"event {e.kind.value}" for e in events] + ["decide"]
    assert replies[0].reply.request_id == 7 and replies[0].reply.WhichOneof("choice") == "index"


def test_a_restarted_referee_at_the_same_address_is_served() -> None:
    """After a reconnect to a new referee (request ids start again at 1), replies still go out."""
    from skyjo_bot.types import TimeControl
    from skyjo_ref.server.server import RefereeServer, ServerConfig

    tc = TimeControl(decision_ms=10_000, bank_ms=600_000, max_strikes=1000, grace_ms=20_000)  # a loaded machine

    async def main() -> None:
        token = "same-token-for-both-referees"
        first = RefereeServer(ServerConfig(address="127.0.0.1:0", tokens={"bot": token}, time_control=tc))
        second = RefereeServer(ServerConfig(address="127.0.0.1:0", tokens={"bot": token}, time_control=tc))
        await first.start()
        await second.start()
        proxy = CuttableProxy(first.address)
        await proxy.start()
        bot = await start_bot(sdk_argv(MINIMAL_BOT, "-v"), "bot", token, proxy.address)
        try:
            seats = [SeatSpec.of_token(token, "bot"), SeatSpec.of_builtin("random")]
            before = await play_match(first, seats, 1, time_control=tc)
            host, port = second.address.rsplit(":", 1)
            proxy.target = (host, int(port))
            proxy.cut()  # the first referee "crashed"; the same address now reaches the second one
            after = await play_match(second, seats, 1, time_control=tc, seed="again")
        finally:
            await bot.stop()
            await proxy.stop()
            await first.stop(0.5)
            await second.stop(0.5)
        for record in before + after:
            replay(record)
            assert autos(record) == [], f"replies were lost after the restart: {autos(record)[:3]}"

    asyncio.run(main())


def test_a_second_connection_with_the_same_token_replaces_the_first() -> None:
    async def main() -> None:
        async with referee() as server:
            token = server.issue_token("twice")
            first = BotClient(Bot(), server.address, token)
            first_run = asyncio.create_task(first.run())
            assert await server.wait_connected(token, 30)
            await asyncio.wait_for(first.welcomed.wait(), 30)
            assert first.stats.sessions == 1
            second = BotClient(Bot(), server.address, token)
            second_run = asyncio.create_task(second.run())
            with pytest.raises(SessionRefused, match="another connection with the same token replaced this one"):
                await asyncio.wait_for(first_run, 30)
            assert not second_run.done()
            second.stop()
            await asyncio.wait_for(second_run, 30)

    asyncio.run(main())
