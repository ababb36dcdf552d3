"""Property-based fuzzing of the Play stream (hypothesis): a real referee, a raw client, a real game.

Each example starts a referee on loopback and plays one game between a
built-in bot and a raw gRPC client that answers its decisions from a random
script: right answers, random indexes and actions, wrong request ids, second
Hellos, empty messages, bytes that do not decode (or decode to something
else), oversize messages, bursts, answers followed by junk, early closes. The
properties: the game finishes and replays, the referee goes on serving, every
action the referee played for the seat is explained in the record (a strike,
or a forfeit, with its reason), and the first fault is recorded with the
reason it deserves. Derandomized, so CI sees the same examples every run.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from referee_harness import RawBot, play, reply, simple_index, start_referee
from skyjo_bot import convert
from skyjo_bot.types import TimeControl
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
from skyjo_ref.records import replay
from skyjo_ref.server import MatchSpec, SeatSpec

#: Limits roomy enough that a prompt answer never times out on a loaded machine; short grace: closes end fast.
TC = TimeControl(decision_ms=3_000, bank_ms=600_000, max_strikes=3, grace_ms=200)
U64 = 2**64 - 1

Op = tuple[Any, ...]

_JUNK = st.one_of(
    # an id far from the pending one (a near one could be the next request), or 0, or the largest
    st.tuples(st.just("wrong_id"), st.one_of(st.integers(10**6, 2**40), st.sampled_from([-1, U64]))),
    st.tuples(st.just("empty")),
    st.tuples(st.just("hello")),
    st.tuples(st.just("garbage"), st.binary(min_size=1, max_size=40)),
    st.tuples(st.just("mutated"), st.lists(st.integers(0, 400), min_size=1, max_size=4)),
    st.tuples(st.just("burst"), st.integers(2, 45)),
)
_OPS = st.one_of(
    st.tuples(st.just("answer")),
    st.tuples(st.just("late_dup")),
    st.tuples(st.just("index"), st.integers(0, 2**32 - 1) | st.integers(0, 30)),
    st.tuples(st.just("action"), st.integers(0, 6), st.none() | st.integers(0, 2**32 - 1) | st.integers(0, 14)),
    st.tuples(st.just("error"), st.text(max_size=30)),
    _JUNK,
    st.tuples(st.just("junk_after_answer"), _JUNK),
    st.tuples(st.just("oversize"), st.integers(65_537, 200_000)),
    st.tuples(st.just("close")),
    st.tuples(st.just("cancel")),
)


def _send_junk(bot: RawBot, rid: int, junk: Op) -> None:
    kind = junk[0]
    if kind == "wrong_id":
        wrong = junk[1] if junk[1] in (-1, U64) else rid + junk[1]
        bot.send(reply(0 if wrong == -1 else wrong, index=0))
    elif kind == "empty":
        bot.send(pb.PlayRequest())
    elif kind == "hello":
        bot.send(convert.hello("again", "2"))
    elif kind == "garbage":
        bot.send(junk[1])
    elif kind == "mutated":
        data = bytearray(reply(rid, index=0).SerializeToString())
        for flip in junk[1]:
            data[flip % len(data)] ^= 1 << (flip % 8)
        bot.send(bytes(data))
    elif kind == "burst":
        for i in range(junk[1]):
            bot.send(reply(rid + 10_000_000 + i, index=0))


def _decodes(data: bytes) -> bool:
    try:
        pb.PlayRequest.FromString(data)
    except DecodeError:
        return False
    return True


def expected_first(op: Op, legal: int) -> set[str] | None:
    """The reason the first entry of the record must give after ``op`` answered the first decision (None: any)."""
    kind = op[0]
    if kind in ("wrong_id", "empty", "hello", "burst", "oversize"):
        return {"malformed"}
    if kind == "garbage":
        return None if _decodes(op[1]) else {"malformed"}
    if kind == "junk_after_answer":
        return expected_first(op[1], legal)
    if kind == "index":
        return {"illegal"} if op[1] >= legal else None
    if kind == "error":
        return {"illegal"}
    if kind in ("close", "cancel"):
        return {"disconnected"}
    return None


def fuzz_policy(script: list[Op]) -> Any:
    async def policy(bot: RawBot, msg: pb.PlayResponse) -> None:
        if msg.WhichOneof("message") != "decision":
            return
        d = msg.decision
        rid, right = d.request_id, simple_index(d)
        n = bot.state["n"] = bot.state.get("n", 0) + 1
        if n == 1:
            bot.state["first_legal"] = len(d.legal_actions)
        op = script[n - 1] if n <= len(script) else ("answer",)
        kind = op[0]
        if kind == "answer":
            bot.send(reply(rid, index=right))
        elif kind == "late_dup":
            bot.send(reply(rid, index=right))
            bot.send(reply(rid, index=right))
        elif kind == "index":
            bot.send(reply(rid, index=op[1]))
        elif kind == "action":
            action = pb.Action(kind=op[1]) if op[2] is None else pb.Action(kind=op[1], pos=op[2])
            bot.send(reply(rid, action=action))
        elif kind == "error":
            bot.send(pb.PlayRequest(reply=pb.DecisionReply(request_id=rid, error=op[1])))
        elif kind == "junk_after_answer":
            bot.send(reply(rid, index=right))
            _send_junk(bot, rid, op[1])
        elif kind == "oversize":
            bot.send(pb.PlayRequest(reply=pb.DecisionReply(request_id=rid, error="x" * op[1])))
        elif kind == "close":
            bot.close_send()
        elif kind == "cancel":
            bot._call.cancel()
        else:  # junk first, then the right answer (if the stream is still open for it)
            _send_junk(bot, rid, op)
            bot.send(reply(rid, index=right))

    return policy


def check_explained(record: dict[str, Any], seat: int) -> None:
    """Every action the referee played for ``seat`` is explained by a strike or a forfeit at that place."""
    meta = record["meta"]
    strikes = [s for s in meta["strikes"] if s["seat"] == seat]
    forfeits = [f for f in meta["forfeited"] if f["seat"] == seat]
    assert [s["strikes"] for s in strikes] == list(range(1, len(strikes) + 1))
    assert len(strikes) <= TC.max_strikes and len(forfeits) <= 1
    for s in strikes:
        assert s["reason"] in ("timeout", "illegal", "malformed") and s["detail"]
    if len(strikes) == TC.max_strikes:
        assert forfeits and forfeits[0]["reason"].startswith(f"{TC.max_strikes} strikes")
    played_at = {(s["round"], s["action"]): s for s in strikes if s["played"] is not None}
    forfeit_at = (forfeits[0]["round"], forfeits[0]["action"]) if forfeits else None
    for r, round_ in enumerate(record["rounds"]):
        for a, action in enumerate(round_["actions"]):
            if action["seat"] != seat or "auto" not in action:
                continue
            where, tag = (r, a), action["auto"]
            if tag in ("timeout", "illegal"):
                strike = played_at.get(where)
                assert strike is not None, f"{tag} at {where} without a strike"
                assert (tag == "timeout") == (strike["reason"] == "timeout")
            elif tag == "disconnected":
                assert forfeit_at == where and "disconnected" in forfeits[0]["reason"]
            else:
                assert tag == "forfeit" and forfeit_at is not None and forfeit_at <= where


def first_entry(record: dict[str, Any], seat: int) -> str:
    """The reason of the seat's first fault on record: its first strike, else its forfeit."""
    meta = record["meta"]
    strikes = [s["reason"] for s in meta["strikes"] if s["seat"] == seat]  # in the order they happened
    forfeits = ["disconnected" for f in meta["forfeited"] if f["seat"] == seat and "disconnected" in f["reason"]]
    assert strikes or forfeits, "a faulty first answer left no trace in the record"
    return (strikes or forfeits)[0]


async def fuzz_game(script: list[Op], seat: int, opponent: str) -> tuple[dict[str, Any], RawBot]:
    server = await start_referee(TC)
    token = server.issue_token("fuzz")
    bot = RawBot(server.address, token, fuzz_policy(script), "fuzz")
    bot.connect()
    try:
        seats = [SeatSpec.of_builtin(opponent), SeatSpec.of_builtin(opponent)]
        seats[seat] = SeatSpec.of_token(token, "fuzz")
        records, end = await play(server, MatchSpec(seats=tuple(seats), time_control=TC), timeout=60)
        assert end.error == "" and end.games == 1 and len(records) == 1
        # the referee goes on serving: another match through MatchService, and a fresh bot
        again, end_again = await play(
            server, MatchSpec(seats=(SeatSpec.of_builtin("greedy"), SeatSpec.of_builtin("random"))), timeout=60
        )
        assert end_again.error == "" and len(again) == 1
        return records[0], bot
    finally:
        await bot.close()
        await server.stop(grace=0)


@settings(max_examples=16, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(st.lists(_OPS, min_size=1, max_size=6), st.integers(0, 1), st.sampled_from(["greedy", "random"]))
# every kind of fault at least once, whatever the random draw
@example([("garbage", b"\x7f\xff"), ("answer",)], 0, "greedy")
@example([("oversize", 70_000)], 1, "random")
@example([("close",)], 0, "random")
@example([("cancel",)], 1, "greedy")
@example([("wrong_id", U64), ("hello",), ("empty",)], 0, "greedy")
@example([("burst", 45), ("answer",)], 1, "greedy")
@example([("junk_after_answer", ("mutated", [3, 9])), ("error", "boom"), ("index", 2**32 - 1)], 0, "random")
def test_a_raw_client_sending_anything_never_breaks_a_game_and_every_fault_is_recorded(
    script: list[Op], seat: int, opponent: str
) -> None:
    record, bot = asyncio.run(asyncio.wait_for(fuzz_game(script, seat, opponent), 100))
    replay(record)  # every action legal, the result right
    assert record["players"][seat] == "fuzz"
    check_explained(record, seat)
    expected = expected_first(script[0], bot.state.get("first_legal", 0))
    if expected is not None:
        assert first_entry(record, seat) in expected, (
            script[0],
            record["meta"]["strikes"],
            record["meta"]["forfeited"],
        )
    # a stream the referee ended for a fault ended with a status that says so, never OK
    if script[0][0] == "oversize":
        assert bot.status is grpc.StatusCode.RESOURCE_EXHAUSTED and "over the referee's limit" in bot.details
    if script[0][0] == "garbage" and not _decodes(script[0][1]):
        assert bot.status is grpc.StatusCode.INVALID_ARGUMENT and "could not decode" in bot.details
