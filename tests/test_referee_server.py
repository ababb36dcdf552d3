"""The referee server with raw-stub clients: auth, a whole game, every fault, reconnects, floods.

Every test runs a real grpc.aio referee on loopback (port 0) and real gRPC
clients; time limits are short but the assertions do not depend on timing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from referee_harness import RawBot, answer_first, play, refusal, reply, simple_index, start_referee
from skyjo_bot import convert
from skyjo_bot.types import Action, TimeControl
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
from skyjo_ref.records import replay
from skyjo_ref.server import ConfigError, MatchClient, MatchSpec, RefereeError, SeatSpec, ServerConfig


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


def autos(record: dict[str, Any], seat: int) -> list[str]:
    return [a["auto"] for r in record["rounds"] for a in r["actions"] if a["seat"] == seat and "auto" in a]


# ---------------------------------------------------------------------- a whole game


def test_raw_bot_plays_a_whole_match_against_builtins() -> None:
    async def scenario() -> None:
        server = await start_referee()
        token = server.issue_token("raw")
        bot = RawBot(server.address, token)
        bot.connect()
        try:
            spec = MatchSpec(
                seats=(SeatSpec.of_token(token, "raw"), SeatSpec.of_builtin("greedy"), SeatSpec.of_builtin("random")),
                games=3,
                seed="full",
                rotate_seats=True,
            )
            records, end = await play(server, spec)
            assert end.error == "" and end.games == 3
            for g, record in enumerate(records):
                replay(record)  # every action legal, results right
                assert record["meta"]["strikes"] == [] and "forfeits" not in record["result"]
                assert record["meta"]["deal"] == 0 and record["meta"]["rotation"] == g
                seat = record["meta"]["slots"].index(0)
                assert record["players"][seat] == "raw"
                assert record["meta"]["timings"][seat]["decisions"] > 0
            assert records[0]["rounds"][0]["deck"] == records[1]["rounds"][0]["deck"]  # duplicate deals
            await asyncio.wait_for(_until(lambda: bot.games_over == 3), 10)
            assert bot.messages("welcome")[0].seat_name == "raw"
            assert len(bot.messages("game_start")) == 3
        finally:
            await bot.close()
            await server.stop()

    run(scenario())


async def _until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0.01)


# ---------------------------------------------------------------------- identity


def test_missing_unknown_token_and_no_hello_are_refused_clearly() -> None:
    async def scenario() -> None:
        server = await start_referee()
        token = server.issue_token("x")
        try:
            # the synchronous client: it reports the referee's status even when the refusal races the
            # first message (the aio client may say INTERNAL then, grpc/grpc#36066)
            hello = convert.hello("x", "test-1")
            bearer = (("authorization", f"Bearer {token}"),)
            code, details = await asyncio.to_thread(refusal, server.address, (), hello)
            assert code is grpc.StatusCode.UNAUTHENTICATED
            assert "authorization: Bearer" in details

            stranger = (("authorization", "Bearer not-a-token"),)
            code, details = await asyncio.to_thread(refusal, server.address, stranger, hello)
            assert code is grpc.StatusCode.UNAUTHENTICATED
            assert "unknown bot token" in details

            code, details = await asyncio.to_thread(refusal, server.address, bearer, reply(1, index=0))
            assert code is grpc.StatusCode.INVALID_ARGUMENT
            assert "first message must be Hello" in details

            future = pb.PlayRequest(hello=pb.Hello(name="f", protocol_version=99))
            code, details = await asyncio.to_thread(refusal, server.address, bearer, future)
            assert code is grpc.StatusCode.INVALID_ARGUMENT and "protocol_version 99" in details
        finally:
            await server.stop()

    run(scenario())


def test_match_service_needs_the_control_token_and_checks_matches() -> None:
    async def scenario() -> None:
        server = await start_referee()
        try:
            async with MatchClient(server.address, "wrong") as bad:
                with pytest.raises(RefereeError) as refused:
                    await bad.issue_token("x")
                assert refused.value.code is grpc.StatusCode.UNAUTHENTICATED
            async with MatchClient(server.address, server.control_token) as client:
                with pytest.raises(RefereeError, match="unknown bot token"):
                    await client.start_match(
                        MatchSpec(seats=(SeatSpec.of_token("nope", "a"), SeatSpec.of_builtin("greedy")))
                    )
                with pytest.raises(RefereeError, match="no built-in bot 'grumpy'"):
                    await client.start_match(
                        MatchSpec(seats=(SeatSpec.of_builtin("grumpy"), SeatSpec.of_builtin("greedy")))
                    )
                with pytest.raises(RefereeError, match="2 to 8 seats"):
                    await client.start_match(MatchSpec(seats=(SeatSpec.of_builtin("greedy"),)))
                token = await client.issue_token("twice")
                with pytest.raises(RefereeError, match="token another seat uses"):
                    await client.start_match(
                        MatchSpec(seats=(SeatSpec.of_token(token, "a"), SeatSpec.of_token(token, "b")))
                    )
        finally:
            await server.stop()

    run(scenario())


def test_health_and_reflection_are_served() -> None:
    async def scenario() -> None:
        server = await start_referee()
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                health = health_pb2_grpc.HealthStub(channel)
                status = await health.Check(health_pb2.HealthCheckRequest(service="skyjo.v1.BotService"))
                assert status.status == health_pb2.HealthCheckResponse.SERVING
                stub = reflection_pb2_grpc.ServerReflectionStub(channel)

                async def ask() -> Any:
                    yield reflection_pb2.ServerReflectionRequest(list_services="")

                names: set[str] = set()
                async for response in stub.ServerReflectionInfo(ask()):
                    names |= {s.name for s in response.list_services_response.service}
                assert {"skyjo.v1.BotService", "skyjo.v1.MatchService", "grpc.health.v1.Health"} <= names
        finally:
            await server.stop()

    run(scenario())


# ---------------------------------------------------------------------- faults


def _illegal_for(decision: pb.DecisionRequest) -> pb.Action:
    legal = [convert.action_from_proto(a) for a in decision.legal_actions]
    wrong = Action.swap(0) if Action.draw() in legal else Action.draw()
    assert wrong not in legal
    return convert.action_to_proto(wrong)


def test_every_fault_is_a_strike_with_a_default_action_and_the_game_finishes() -> None:
    # one timeout is staged: the limit is what it costs; 3 s keeps every other (prompt) answer in time under load
    tc = TimeControl(decision_ms=3_000, bank_ms=600_000, max_strikes=20, grace_ms=5_000)

    async def policy(bot: RawBot, msg: pb.PlayResponse) -> None:
        if msg.WhichOneof("message") != "decision":
            return
        d = msg.decision
        n = bot.state["n"] = bot.state.get("n", 0) + 1
        rid = d.request_id
        if n == 3:
            bot.state["timeout_id"] = rid  # say nothing: a timeout
        elif n == 5:
            bot.send(reply(rid, action=_illegal_for(d)))
        elif n == 7:
            bot.send(reply(rid, index=len(d.legal_actions) + 90))
        elif n == 9:
            bot.send(reply(rid + 1_000_000, index=0))  # a wrong request id: struck, the decision stays open
            bot.send(reply(rid, index=simple_index(d)))
        elif n == 11:
            bot.send(reply(rid, index=simple_index(d)))
            bot.send(reply(rid, index=simple_index(d)))  # a duplicate of an answered id: ignored
        elif n == 13:
            bot.send(pb.PlayRequest(hello=pb.Hello(name="again", protocol_version=1)))
            bot.send(pb.PlayRequest())
            bot.send(reply(rid, index=simple_index(d)))
        elif n == 15:
            bot.send(pb.PlayRequest(reply=pb.DecisionReply(request_id=rid, error="my code raised KeyError: 3")))
        elif n == 17:
            bot.send(reply(rid, index=simple_index(d)))
            bot.send(reply(rid + 2_000_000, index=0))  # nothing asked this id: out of turn
        else:
            bot.send(reply(rid, index=simple_index(d)))

    async def scenario() -> dict[str, Any]:
        server = await start_referee(tc)
        token = server.issue_token("faulty")
        bot = RawBot(server.address, token, policy)
        bot.connect()
        try:
            spec = MatchSpec(
                seats=(SeatSpec.of_token(token, "faulty"), SeatSpec.of_builtin("greedy")), time_control=tc, seed="f"
            )
            records, end = await play(server, spec)
            assert end.error == ""
            await asyncio.wait_for(bot.game_over.wait(), 10)
            record = records[0]
            record["_strike_messages"] = [convert.strike_from_proto(s) for s in bot.messages("strike")]
            record["_timeout_id"] = bot.state["timeout_id"]
            return record
        finally:
            await bot.close()
            await server.stop()

    record = run(scenario())
    replay(record)
    strikes = record["meta"]["strikes"]
    reasons = [s["reason"] for s in strikes]
    assert reasons == ["timeout", "illegal", "illegal", "malformed", "malformed", "malformed", "illegal", "malformed"]
    timeout = strikes[0]
    assert timeout["request_id"] == record["_timeout_id"] and timeout["limit_ms"] == 3_000
    assert timeout["elapsed_ms"] >= 2_250 and timeout["played"] is not None
    assert "not legal now" in strikes[1]["detail"] and strikes[1]["answered"].startswith("action ")
    assert "out of range" in strikes[2]["detail"] and strikes[2]["answered"].startswith("index ")
    assert "the pending decision is request_id" in strikes[3]["detail"]
    assert "second Hello" in strikes[4]["detail"] and "empty PlayRequest" in strikes[5]["detail"]
    assert "KeyError: 3" in strikes[6]["detail"]
    assert "no decision is due" in strikes[7]["detail"] or "pending decision" in strikes[7]["detail"]
    assert [s["strikes"] for s in strikes] == list(range(1, 9))
    assert autos(record, 0) == ["timeout", "illegal", "illegal", "illegal"]
    assert "forfeits" not in record["result"]
    told = record["_strike_messages"]
    assert [s.reason for s in told] == reasons and all(s.max_strikes == 20 for s in told)
    assert told[0].played is not None and str(told[0].played) == timeout["played"]


def test_strikes_past_the_limit_forfeit_and_a_builtin_finishes_the_game() -> None:
    tc = TimeControl(decision_ms=5_000, bank_ms=600_000, max_strikes=2, grace_ms=5_000)

    async def stubborn(bot: RawBot, msg: pb.PlayResponse) -> None:
        if msg.WhichOneof("message") == "decision":
            bot.send(reply(msg.decision.request_id, index=99))

    async def scenario() -> dict[str, Any]:
        server = await start_referee(tc)
        token = server.issue_token("stubborn")
        bot = RawBot(server.address, token, stubborn)
        bot.connect()
        try:
            spec = MatchSpec(
                seats=(SeatSpec.of_builtin("random"), SeatSpec.of_token(token, "stubborn")), time_control=tc
            )
            records, _ = await play(server, spec)
            await asyncio.wait_for(bot.game_over.wait(), 10)
            assert list(bot.messages("game_over")[0].forfeits) == [1]
            return records[0]
        finally:
            await bot.close()
            await server.stop()

    record = run(scenario())
    replay(record)
    assert record["result"]["forfeits"] == [1] and record["result"]["ranks"][1] == 2
    assert len(record["meta"]["strikes"]) == 2
    assert record["meta"]["forfeited"][0]["reason"].startswith("2 strikes")
    tags = autos(record, 1)
    assert tags[:2] == ["illegal", "illegal"] and set(tags[2:]) == {"forfeit"} and len(tags) > 10


def test_a_token_cannot_act_for_another_seat() -> None:
    async def scenario() -> dict[str, Any]:
        server = await start_referee()
        ta, tb = server.issue_token("a"), server.issue_token("b")
        a = RawBot(server.address, ta, answer_first, "a")

        async def slow_b(bot: RawBot, msg: pb.PlayResponse) -> None:
            if msg.WhichOneof("message") == "decision":
                rid = msg.decision.request_id
                if "stolen" not in bot.state:
                    bot.state["stolen"] = rid
                    a.send(reply(rid, index=len(msg.decision.legal_actions) - 1))  # a answers b's decision
                    await asyncio.wait_for(_until(lambda: a.messages("strike")), 30)  # refused while still b's
                bot.send(reply(rid, index=simple_index(msg.decision)))

        b = RawBot(server.address, tb, slow_b, "b")
        a.connect()
        b.connect()
        try:
            spec = MatchSpec(seats=(SeatSpec.of_token(ta, "a"), SeatSpec.of_token(tb, "b")), seed="steal")
            records, _ = await play(server, spec)
            record = records[0]
            record["_stolen"] = b.state["stolen"]
            return record
        finally:
            await a.close()
            await b.close()
            await server.stop()

    record = run(scenario())
    replay(record)
    strikes = record["meta"]["strikes"]
    assert len(strikes) == 1
    assert strikes[0]["seat"] == 0 and strikes[0]["reason"] == "malformed"
    assert strikes[0]["request_id"] == record["_stolen"]
    assert autos(record, 1) == []  # b's decision was b's own


def test_a_seat_that_never_connects_forfeits_after_the_grace_period() -> None:
    tc = TimeControl(decision_ms=1_000, bank_ms=60_000, max_strikes=3, grace_ms=300)

    async def scenario() -> dict[str, Any]:
        server = await start_referee(tc)
        token = server.issue_token("absent")
        try:
            spec = MatchSpec(seats=(SeatSpec.of_token(token, "absent"), SeatSpec.of_builtin("greedy")), time_control=tc)
            records, _ = await play(server, spec)
            return records[0]
        finally:
            await server.stop()

    record = run(scenario())
    replay(record)
    assert record["result"]["forfeits"] == [0] and record["result"]["winners"] == [1]
    assert "not connected" in record["meta"]["forfeited"][0]["reason"]
    assert set(autos(record, 0)) == {"forfeit"}


# ---------------------------------------------------------------------- reconnects


def test_reconnect_mid_game_gets_the_pending_decision_again() -> None:
    async def policy(bot: RawBot, msg: pb.PlayResponse) -> None:
        if msg.WhichOneof("message") != "decision":
            return
        n = bot.state["n"] = bot.state.get("n", 0) + 1
        if n == 10 and "dropped" not in bot.state:
            bot.state["dropped"] = msg.decision.request_id  # crash before answering
            return
        bot.state.setdefault("after", []).append(msg.decision.request_id) if "dropped" in bot.state else None
        bot.send(reply(msg.decision.request_id, index=simple_index(msg.decision)))

    async def scenario() -> tuple[dict[str, Any], RawBot]:
        server = await start_referee(TimeControl(decision_ms=10_000, bank_ms=600_000, max_strikes=3, grace_ms=20_000))
        token = server.issue_token("phoenix")
        bot = RawBot(server.address, token, policy)
        bot.connect()
        try:
            spec = MatchSpec(seats=(SeatSpec.of_token(token, "phoenix"), SeatSpec.of_builtin("greedy")))
            task = asyncio.create_task(play(server, spec))
            await asyncio.wait_for(_until(lambda: "dropped" in bot.state), 30)
            await bot.drop()
            before = len(bot.received)
            bot.connect()
            records, _ = await task
            await asyncio.wait_for(bot.game_over.wait(), 10)
            kinds = [m.WhichOneof("message") for m in bot.received[before:]]
            assert kinds[:3] == ["welcome", "game_start", "decision"]
            assert bot.received[before + 2].decision.request_id == bot.state["dropped"]
            return records[0], bot
        finally:
            await bot.close()
            await server.stop()

    record, bot = run(scenario())
    replay(record)
    assert bot.state["after"][0] == bot.state["dropped"]
    assert record["meta"]["strikes"] == [] and "forfeits" not in record["result"]


def test_a_new_stream_with_the_same_token_replaces_the_old_one() -> None:
    async def mute(bot: RawBot, msg: pb.PlayResponse) -> None:
        if msg.WhichOneof("message") == "decision":
            bot.state["pending"] = msg.decision.request_id

    async def scenario() -> dict[str, Any]:
        server = await start_referee()
        token = server.issue_token("twin")
        old = RawBot(server.address, token, mute)
        old.connect()
        new = RawBot(server.address, token, answer_first)
        try:
            spec = MatchSpec(seats=(SeatSpec.of_builtin("greedy"), SeatSpec.of_token(token, "twin")))
            task = asyncio.create_task(play(server, spec))
            await asyncio.wait_for(_until(lambda: "pending" in old.state), 30)
            new.connect()
            await asyncio.wait_for(old.done.wait(), 10)
            assert old.status is grpc.StatusCode.ABORTED and "replaced" in old.details
            records, _ = await task
            assert new.messages("decision")[0].request_id == old.state["pending"]
            return records[0]
        finally:
            await old.close()
            await new.close()
            await server.stop()

    record = run(scenario())
    replay(record)
    assert record["meta"]["strikes"] == [] and "forfeits" not in record["result"]


# ---------------------------------------------------------------------- abuse


def test_a_flood_is_cut_off_and_does_not_hurt_the_other_seat() -> None:
    tc = TimeControl(decision_ms=10_000, bank_ms=600_000, max_strikes=3, grace_ms=300)  # prompt answers, loaded machine

    async def flood(bot: RawBot, msg: pb.PlayResponse) -> None:
        if msg.WhichOneof("message") == "game_start" and "flooded" not in bot.state:
            bot.state["flooded"] = True
            for i in range(2_000):
                bot.send(reply(10_000_000 + i, index=0))

    async def scenario() -> tuple[dict[str, Any], RawBot, RawBot, list[str]]:
        server = await start_referee(tc)
        tf, tg = server.issue_token("flood"), server.issue_token("good")
        flooder = RawBot(server.address, tf, flood, "flood")
        good = RawBot(server.address, tg, answer_first, "good")
        flooder.connect()
        good.connect()
        try:
            spec = MatchSpec(seats=(SeatSpec.of_token(tf, "flood"), SeatSpec.of_token(tg, "good")), time_control=tc)
            records, _ = await play(server, spec)
            await asyncio.wait_for(flooder.done.wait(), 10)
            await asyncio.wait_for(good.game_over.wait(), 10)
            return records[0], flooder, good, server.sessions[tf].cut_off
        finally:
            await flooder.close()
            await good.close()
            await server.stop()

    record, flooder, good, cut_off = run(scenario())
    replay(record)
    assert cut_off and "too many unexpected" in cut_off[0]
    # the status reaches the bot, unless its own flood of writes races the end of the call (then grpc says INTERNAL)
    assert flooder.status is grpc.StatusCode.RESOURCE_EXHAUSTED or flooder.status is grpc.StatusCode.INTERNAL
    if flooder.status is grpc.StatusCode.RESOURCE_EXHAUSTED:
        assert "too many unexpected" in flooder.details
    assert record["result"]["forfeits"] == [0]
    assert {s["seat"] for s in record["meta"]["strikes"]} == {0} and len(record["meta"]["strikes"]) == 3
    assert autos(record, 1) == [] and good.games_over == 1


def test_an_oversize_message_ends_the_stream_and_the_absent_seat_forfeits() -> None:
    tc = TimeControl(decision_ms=10_000, bank_ms=600_000, max_strikes=3, grace_ms=300)  # prompt answers, loaded machine

    async def huge(bot: RawBot, msg: pb.PlayResponse) -> None:
        if msg.WhichOneof("message") != "decision":
            return
        n = bot.state["n"] = bot.state.get("n", 0) + 1
        if n == 4:
            bot.state["big"] = msg.decision.request_id
            bot.send(pb.PlayRequest(reply=pb.DecisionReply(request_id=msg.decision.request_id, error="x" * 200_000)))
        else:
            bot.send(reply(msg.decision.request_id, index=simple_index(msg.decision)))

    async def scenario() -> tuple[dict[str, Any], RawBot]:
        server = await start_referee(tc)
        token = server.issue_token("big")
        bot = RawBot(server.address, token, huge)
        bot.connect()
        try:
            spec = MatchSpec(seats=(SeatSpec.of_token(token, "big"), SeatSpec.of_builtin("greedy")), time_control=tc)
            records, _ = await play(server, spec)
            await asyncio.wait_for(bot.done.wait(), 10)  # the call ended without the bot closing it
            return records[0], bot
        finally:
            await bot.close()
            await server.stop()

    record, bot = run(scenario())
    replay(record)
    # the referee refuses it itself, so the fault is counted and recorded, and the bot is told why
    assert bot.status is grpc.StatusCode.RESOURCE_EXHAUSTED and "over the referee's limit of 65536" in bot.details
    (strike,) = record["meta"]["strikes"]
    assert strike["reason"] == "malformed" and strike["request_id"] == bot.state["big"]
    assert "over the referee's limit" in strike["detail"] and strike["played"] is not None
    assert record["result"]["forfeits"] == [0]
    reason = record["meta"]["forfeited"][0]["reason"]
    assert "disconnected" in reason and "RESOURCE_EXHAUSTED: a message of" in reason
    tags = autos(record, 0)
    assert tags[:2] == ["illegal", "disconnected"] and set(tags[2:]) == {"forfeit"}


def test_a_match_watched_to_its_end_is_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    from skyjo_ref.server import server as server_module

    monkeypatch.setattr(server_module, "FORGET_WATCHED_MATCH_S", 0.05)

    async def scenario() -> None:
        server = await start_referee()
        try:
            spec = MatchSpec(seats=(SeatSpec.of_builtin("greedy"), SeatSpec.of_builtin("random")), games=2)
            records, end = await play(server, spec)
            assert len(records) == 2 and end.games == 2
            await asyncio.wait_for(_until(lambda: not server.matches), 10)
        finally:
            await server.stop()

    run(scenario())


def test_server_config_files_are_checked(tmp_path: Path) -> None:
    good = tmp_path / "referee.yaml"
    good.write_text(
        "address: 127.0.0.1:0\ncontrol_token: control-token-0123\ntokens: {tomas: tomas-token-01234}\n"
        "time_control: {decision_ms: 500, grace_ms: 0}\nmax_message_bytes: 4096\n"
    )
    config = ServerConfig.from_file(good)
    assert config.tokens == {"tomas": "tomas-token-01234"} and config.control_token == "control-token-0123"
    assert config.time_control.decision_ms == 500 and config.time_control.grace_ms == 0
    assert config.time_control.max_strikes == TimeControl().max_strikes
    for text, message in (
        ("adress: x\n", "unknown key 'adress'"),
        ("tokens: [a, b]\n", "tokens: expected a mapping"),
        ("time_control: {decision: 5}\n", "unknown key 'decision'"),
        ("time_control: {decision_ms: -5}\n", r":1: time_control\.decision_ms: expected an integer from 0 to"),
        ("control_token: control-token-0123\ntime_control:\n  bank_ms: x\n", r":3: time_control\.bank_ms: expected"),
        (
            "control_token: c\n",
            r":1: control_token: a token of 1 characters is too short .* 16; make one with: python3",
        ),
        ("tokens: {tomas: t1}\n", r":1: tokens\.tomas: a token of 2 characters is too short"),
        ("tls_cert: a.pem\n", r":1: tls_cert: TLS needs both tls_cert and tls_key: add tls_key"),
        ("handshake_timeout_ms: 5\n", r":1: handshake_timeout_ms: expected at least 100 \(milliseconds"),
        ("max_connections: 0\n", r":1: max_connections: expected at least 1 \(connections"),
        ("max_message_bytes: -1\n", r":1: max_message_bytes: expected an integer from 1024"),
        ("max_message_bytes: big\n", "expected an integer"),
        ("[unclosed\n", "not valid YAML"),
    ):
        bad = tmp_path / "bad.yaml"
        bad.write_text(text)
        with pytest.raises(ConfigError, match=message):
            ServerConfig.from_file(bad)


def test_waiting_for_a_connection_honours_cancellation_when_the_bot_connects_at_that_moment() -> None:
    """A cancel that lands as the session changes is not swallowed (Python 3.11's wait_for would return instead).

    A tournament interrupted while a worker waited for a new bot process to
    connect kept that worker playing, and Ctrl-C hung behind a held game.
    """
    from skyjo_ref.server.session import Session

    async def scenario() -> bool:
        session = Session("token", "late")
        waiting = asyncio.create_task(session.wait_connected(60))
        await asyncio.sleep(0)  # one loop turn: the task is now waiting for a change
        session._notify()  # something changed (not yet connected) ...
        waiting.cancel()  # ... and the wait is cancelled in the same loop turn
        await asyncio.wait({waiting}, timeout=10)  # a failure detector: a swallowed cancel waits 60 s
        return waiting.cancelled()

    assert run(scenario()), "the cancellation was swallowed"
