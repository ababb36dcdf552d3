"""The referee's wire-format DecisionRequests and event batches are byte for byte what protobuf writes."""

from __future__ import annotations

import random

from skyjo_bot import convert
from skyjo_bot.types import Event
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
from skyjo_ref.rules import Game
from skyjo_ref.server import wire


def test_decision_requests_and_event_batches_equal_protobufs_own_bytes_over_whole_games() -> None:
    rng = random.Random(3)
    checked = 0
    for seed in range(1, 61):
        game = Game(2 + seed % 3, seed=seed)
        gid = f"m{seed}/{seed % 7}"
        events: list[pb.Event] = []
        engine_events: list[Event] = []
        while not game.over:
            view = game.view(game.seat)
            request_id = rng.choice([0, 1, 300, 2**40])
            left = rng.choice([0, 5, 2000, 86_400_000, -3])  # negative: sent as 0
            expected = pb.PlayResponse(
                decision=convert.decision_request_to_proto(request_id, gid, view, left, events)
            ).SerializeToString()
            held = [wire.event_bytes(e, gid) for e in engine_events]
            assert held == [e.SerializeToString() for e in events]
            assert wire.decision_response(request_id, gid, view, left, held) == expected
            for seat in range(game.num_players):  # views without a hand or legal actions too
                other = game.view(seat)
                assert wire.view_bytes(other) == convert.view_to_proto(other).SerializeToString()
            if events:
                batch = pb.PlayResponse(events=pb.EventBatch(game_id=gid, events=events)).SerializeToString()
                assert wire.event_batch_response(gid, held) == batch
            game.apply(rng.choice(view.legal_actions))
            engine_events = [e for e in game.drain_events() if e.kind in convert.EVENT_MESSAGE_KINDS]
            events = [convert.event_to_proto(e, gid) for e in engine_events]
            checked += 1
    assert checked > 5000


def test_the_response_serializer_sends_bytes_as_they_are_and_serializes_messages() -> None:
    message = convert.welcome("seat")
    assert wire.serialize_response(message) == message.SerializeToString()
    assert wire.serialize_response(b"\x1a\x00") == b"\x1a\x00"


def test_varints_match_protobuf_for_large_and_negative_values() -> None:
    assert wire.varint(0) == b"\x00"
    for n in (1, 127, 128, 16383, 16384, 2**32 - 1, 2**63):
        assert wire.varint(n) == pb.DecisionReply(request_id=n).SerializeToString()[1:]
    for value in (-2, -1, 0, 1, 12, 10_000, -10_000):
        assert wire._sv(value) == pb.Slot(value=value).SerializeToString()[1:]
