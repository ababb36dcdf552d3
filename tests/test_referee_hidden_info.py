"""Proof that the referee never sends a bot anything it may not see (docs/rules.md, "Hidden information").

A raw-stub client records every message (and its bytes) it receives during
whole games. Afterwards each game is replayed from its finished record, and
the test rebuilds, action by action, every message that seat was entitled to:
its GameStart, the public events, a DecisionRequest built from
``game.view(seat)`` whenever it was due, and GameOver. The received stream
must equal that, message for message (event batches opened up, since the
referee may send the events of several actions in one batch). Independently of the engine's view,
every card value a request carries at a position must be face up in the true
state at that moment, and no seed (the match's or a deal's) appears in any byte.
"""

from __future__ import annotations

import asyncio
from typing import Any

from referee_harness import RawBot, answer_first, play, start_referee
from skyjo_bot import convert
from skyjo_bot.types import Action, GameResult, GameStart, Rules, TimeControl
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
from skyjo_ref.match import deal_seed
from skyjo_ref.rules import FixedDealer, Game
from skyjo_ref.rules.engine import REVEALED
from skyjo_ref.server import MatchSpec, SeatSpec

SEED = "hidden-seed-7781"
TC = TimeControl(decision_ms=10_000, bank_ms=600_000, max_strikes=3, grace_ms=10_000)


def _check_values_are_public(game: Game, request: pb.DecisionRequest, seat: int) -> None:
    for p, grid in enumerate(request.view.grids):
        for pos, slot in enumerate(grid.slots):
            if slot.HasField("value"):
                assert game.states[p][pos] == REVEALED, f"seat {seat} was sent seat {p}'s hidden card at {pos}"
                assert slot.value == game.values[p][pos]
    if request.view.HasField("hand"):
        assert game.seat == seat and game.hand == request.view.hand
    assert list(request.view.discard_pile) == game.discard
    assert request.view.draw_pile_size == len(game.draw_pile)


def expected_stream(record: dict[str, Any], seat: int, received: list[pb.PlayResponse]) -> list[pb.PlayResponse]:
    """Every message ``seat`` may receive in this game, rebuilt from the record."""
    rounds = record["rounds"]
    rules = Rules.from_dict(record["rules"])
    players = tuple(record["players"])
    game = Game(
        len(players),
        rules,
        dealer=FixedDealer([r["deck"] for r in rounds], [r["reshuffles"] for r in rounds]),
        players=players,
    )
    gid = record["meta"]["game_id"]
    decisions = iter(m.decision for m in received if m.WhichOneof("message") == "decision")
    out = [pb.PlayResponse(game_start=convert.game_start_to_proto(GameStart(gid, seat, players, rules, TC)))]
    out += convert.event_responses(game.drain_events(), gid)
    for entry in (a for r in rounds for a in r["actions"]):
        if game.current_seat == seat:
            got = next(decisions)
            _check_values_are_public(game, got, seat)
            assert 0 < got.time_left_ms <= TC.decision_ms
            view = game.view(seat)
            out.append(
                pb.PlayResponse(decision=convert.decision_request_to_proto(got.request_id, gid, view, got.time_left_ms))
            )
        game.apply(Action.from_dict(entry), auto=entry.get("auto"))
        out += convert.event_responses(game.drain_events(), gid)
    result = record["result"]
    out.append(
        pb.PlayResponse(
            game_over=convert.game_over_to_proto(
                GameResult(gid, tuple(result["totals"]), tuple(result["ranks"]), tuple(result["winners"]))
            )
        )
    )
    return out


def canonical(messages: list[pb.PlayResponse]) -> list[Any]:
    """Messages with event batches opened up: the referee may batch the events of several actions,
    and send the events that precede a decision inside its DecisionRequest."""
    out: list[Any] = []
    for message in messages:
        kind = message.WhichOneof("message")
        if kind == "events":
            out.extend(("event", message.events.game_id, e) for e in message.events.events)
        elif kind == "decision" and len(message.decision.events):
            out.extend(("event", e.game_id, e) for e in message.decision.events)
            bare = pb.PlayResponse()
            bare.CopyFrom(message)
            del bare.decision.events[:]
            out.append(bare)
        else:
            out.append(message)
    return out


def test_every_byte_a_bot_receives_is_public_to_it() -> None:
    async def scenario() -> tuple[list[dict[str, Any]], RawBot]:
        server = await start_referee(TC)
        token = server.issue_token("spy")
        spy = RawBot(server.address, token, answer_first, "spy")
        spy.connect()
        try:
            spec = MatchSpec(
                seats=(SeatSpec.of_token(token, "spy"), SeatSpec.of_builtin("greedy"), SeatSpec.of_builtin("random")),
                time_control=TC,
                games=3,
                seed=SEED,
                rotate_seats=True,
            )
            records, end = await play(server, spec)
            assert end.error == ""
            await asyncio.wait_for(_until(lambda: spy.games_over == 3), 10)
            return records, spy
        finally:
            await spy.close()
            await server.stop()

    records, spy = asyncio.run(asyncio.wait_for(scenario(), 120))
    received = spy.received
    assert received[0].WhichOneof("message") == "welcome"
    starts = [i for i, m in enumerate(received) if m.WhichOneof("message") == "game_start"] + [len(received)]
    assert len(starts) == 4
    checked_requests = 0
    for g, record in enumerate(records):
        seat = record["meta"]["slots"].index(0)
        got = received[starts[g] : starts[g + 1]]
        want = canonical(expected_stream(record, seat, got))
        sent = canonical(got)
        assert len(sent) == len(want)
        for i, (a, b) in enumerate(zip(sent, want)):
            assert a == b, f"game {g}, item {i}: what was sent differs from what the seat may see"
        checked_requests += sum(1 for m in got if m.WhichOneof("message") == "decision")
    assert checked_requests > 30
    everything = b"".join(spy.raw)
    for secret in (SEED, *(deal_seed(SEED, d) for d in range(2))):
        assert secret.encode() not in everything


async def _until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0.01)
