"""proto <-> skyjo_bot.types converters: round trips over whole engine games, and bad input."""

from __future__ import annotations

import itertools
import random

import pytest
from skyjo_bot import convert
from skyjo_bot.types import (
    PRESETS,
    Action,
    DecisionKind,
    Event,
    EventKind,
    FinalTie,
    FinisherPenalty,
    GameResult,
    GameStart,
    IllegalActionError,
    InvalidActionError,
    NextRoundStarter,
    Rules,
    RulesError,
    Strike,
    TimeControl,
)
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
from skyjo_ref.rules.engine import Game


def _play(num_players: int, rules: Rules, seed: int) -> Game:
    """A random game; checks every view and event through the converters as it goes."""
    rng = random.Random(seed)
    game = Game(num_players, rules, seed=seed, players=[f"p{i}" for i in range(num_players)])
    start = GameStart("g1", 0, game.players, rules, TimeControl())
    # what each seat receives through an EventBuffer, decoded, against everything that happened
    buffers = [convert.EventBuffer("g1") for _ in range(num_players)]
    received: list[list[Event]] = [[] for _ in range(num_players)]
    happened = [e for e in game.drain_events() if e.kind is not EventKind.GAME_END]
    for s, buffer in enumerate(buffers):
        received[s].extend(_decode(buffer.add(happened)))
    request_id = 0
    while not game.over:
        seat = game.current_seat
        assert seat is not None
        view = game.view(seat)
        request_id += 1
        msg = convert.decision_request_to_proto(request_id, "g1", view, 500, buffers[seat].take())
        wire = pb.DecisionRequest.FromString(msg.SerializeToString())
        back = convert.decision_request_from_proto(wire, GameStart("g1", seat, game.players, rules))
        received[seat].extend(convert.events_from_proto(wire))
        assert received[seat] == happened, "a decision must come after every earlier event"
        assert back == view
        assert back.legal_actions == view.legal_actions
        # a view of another seat (no legal actions, no hand) also survives the trip
        other = game.view((seat + 1) % num_players)
        assert convert.view_from_proto(convert.view_to_proto(other), players=game.players, rules=rules) == other
        action = rng.choice(view.legal_actions)
        index = view.legal_actions.index(action)
        assert convert.reply_action(pb.DecisionReply(request_id=request_id, index=index), view.legal_actions) is action
        reply = convert.reply_to_proto(request_id, action, view.legal_actions)
        assert reply.WhichOneof("choice") == "index"
        assert convert.reply_action(reply, view.legal_actions) is action
        spelled = pb.DecisionReply(request_id=request_id, action=convert.action_to_proto(action))
        assert convert.reply_action(spelled, view.legal_actions) is action
        game.apply(action)
        events = game.drain_events()
        for event in events:
            _check_event(event, start)
        _check_batches(events, start)
        happened.extend(e for e in events if e.kind is not EventKind.GAME_END)
        for s, buffer in enumerate(buffers):
            received[s].extend(_decode(buffer.add(events)))
    for s, buffer in enumerate(buffers):
        flushed = buffer.flush()
        received[s].extend(_decode([flushed] if flushed is not None else []))
        assert received[s] == happened
        assert len(buffer) == 0 and buffer.flush() is None
    return game


def _decode(messages: list[pb.PlayResponse]) -> list[Event]:
    out: list[Event] = []
    for message in messages:
        wire = pb.PlayResponse.FromString(message.SerializeToString())
        if wire.WhichOneof("message") == "events":
            out.extend(convert.events_from_proto(wire.events))
        else:
            assert wire.WhichOneof("message") == "round_result"
            out.append(convert.round_result_from_proto(wire.round_result))
    return out


def _check_batches(events: list[Event], start: GameStart) -> None:
    """event_responses: as few messages as possible, in order, decoding to the same events."""
    messages = convert.event_responses(events, start.game_id)
    decoded: list[Event] = []
    kinds = [m.WhichOneof("message") for m in messages]
    for message in messages:
        wire = pb.PlayResponse.FromString(message.SerializeToString())
        if wire.WhichOneof("message") == "events":
            decoded.extend(convert.events_from_proto(wire.events))
        else:
            decoded.append(convert.round_result_from_proto(wire.round_result))
    assert decoded == [e for e in events if e.kind is not EventKind.GAME_END]
    assert all(a != b or a != "events" for a, b in itertools.pairwise(kinds)), "two batches in a row"


def _check_event(event: Event, start: GameStart) -> None:
    response = convert.event_response(event, start.game_id)
    if event.kind is EventKind.GAME_END:
        assert response is None
        return
    assert response is not None
    wire = pb.PlayResponse.FromString(response.SerializeToString())
    which = wire.WhichOneof("message")
    if event.kind is EventKind.ROUND_END:
        assert which == "round_result"
        assert convert.round_result_from_proto(wire.round_result) == event
    else:
        assert which == "events"
        assert wire.events.game_id == "g1"
        assert convert.events_from_proto(wire.events) == [event]


@pytest.mark.parametrize(
    ("num_players", "preset", "seed"),
    [(2, "official", 1), (3, "french", 2), (4, "slovenian", 3), (8, "indonesian", 4)],
)
def test_whole_games_round_trip(num_players: int, preset: str, seed: int) -> None:
    rules = Rules.from_dict({"preset": preset, "end_score": 40})
    game = _play(num_players, rules, seed)
    assert game.ranks is not None and game.winners is not None
    result = GameResult("g1", tuple(game.totals), tuple(game.ranks), tuple(game.winners), (1,))
    wire = pb.GameOver.FromString(convert.game_over_to_proto(result).SerializeToString())
    assert convert.game_over_from_proto(wire) == result
    end = convert.game_end_event(result)
    assert end.kind is EventKind.GAME_END and end.totals == tuple(game.totals)


def test_views_carry_no_hidden_value() -> None:
    game = Game(3, seed=11)
    msg = convert.view_to_proto(game.view(0))
    for grid in msg.grids:
        for slot in grid.slots:
            assert slot.HasField("value") == (slot.state == pb.SLOT_STATE_REVEALED)


def _all_rules() -> list[Rules]:
    out = [Rules.preset_named(name) for name in PRESETS]
    out.append(Rules.from_dict({"column_clear": False, "end_score": 7}))
    out.append(
        Rules(
            column_clear=False,
            clear_on_final_reveal=False,
            finisher_penalty=FinisherPenalty.PLUS_10,
            next_round_starter=NextRoundStarter.ROUND_WINNER,
            end_score=250,
            final_tie=FinalTie.EXTRA_ROUND,
            preset=None,
        )
    )
    return out


@pytest.mark.parametrize("rules", _all_rules(), ids=lambda r: str(r.to_dict()))
def test_rules_round_trip(rules: Rules) -> None:
    msg = convert.rules_to_proto(rules)
    # GameStart sets every field to the value in force
    for name in ("column_clear", "clear_on_final_reveal"):
        assert msg.HasField(name)
    assert msg.finisher_penalty and msg.next_round_starter and msg.final_tie and msg.end_score
    back = convert.rules_from_proto(pb.Rules.FromString(msg.SerializeToString()))
    assert back == rules
    assert back.preset == rules.preset
    assert back.options() == rules.options()


def test_partial_rules_take_the_preset() -> None:
    rules = convert.rules_from_proto(pb.Rules(preset="french", column_clear=False))
    assert rules == Rules.from_dict({"preset": "french", "column_clear": False})
    assert convert.rules_from_proto(pb.Rules()) == Rules()
    with pytest.raises(RulesError, match="unknown rules preset 'chess'"):
        convert.rules_from_proto(pb.Rules(preset="chess"))
    with pytest.raises(RulesError, match="final_tie"):
        convert.rules_from_proto(pb.Rules(final_tie=9))  # type: ignore[arg-type]


def test_game_start_and_time_control_round_trip() -> None:
    tc = TimeControl(decision_ms=50, bank_ms=1000, max_strikes=2, grace_ms=300)
    start = GameStart("m1-g3", 1, ("a", "b", "c"), Rules.preset_named("turkish"), tc)
    back = convert.game_start_from_proto(
        pb.GameStart.FromString(convert.game_start_to_proto(start).SerializeToString())
    )
    assert back == start
    bare = GameStart("x", 0, ("a", "b"), Rules())
    assert convert.game_start_from_proto(convert.game_start_to_proto(bare)) == bare
    with pytest.raises(convert.ProtocolError, match="seat 5"):
        convert.game_start_from_proto(pb.GameStart(seat=5, players=["a", "b"]))
    with pytest.raises(ValueError, match="decision_ms"):
        TimeControl(decision_ms=-1)


def test_strike_round_trip() -> None:
    strike = Strike("g", 7, "timeout", "took 130 ms, limit 100 ms", Action.reveal(3), 1, 3)
    assert convert.strike_from_proto(convert.strike_to_proto(strike)) == strike
    none_played = Strike("g", 0, "malformed", "no hello", None, 2, 3)
    assert convert.strike_from_proto(convert.strike_to_proto(none_played)) == none_played


@pytest.mark.parametrize(
    "action", [Action.draw(), Action.take(), *(Action.reveal(p) for p in range(12)), Action.swap(0), Action.swap(11)]
)
def test_action_round_trip(action: Action) -> None:
    assert convert.action_from_proto(convert.action_to_proto(action)) is action


def test_malformed_replies_say_what_is_expected() -> None:
    legal = (Action.draw(), Action.take())
    with pytest.raises(InvalidActionError, match=r"index 2 is out of range: expected 0-1 .*draw, take"):
        convert.reply_action(pb.DecisionReply(request_id=1, index=2), legal)
    with pytest.raises(convert.BotGaveUpError, match="the bot could not decide: KeyError: 3"):
        convert.reply_action(convert.error_reply(1, "KeyError: 3"), legal)
    with pytest.raises(InvalidActionError, match="chooses nothing"):
        convert.reply_action(pb.DecisionReply(request_id=1), legal)
    with pytest.raises(InvalidActionError, match="kind 0 is not an action"):
        convert.reply_action(pb.DecisionReply(request_id=1, action=pb.Action()), legal)
    with pytest.raises(InvalidActionError, match="swap needs a position"):
        convert.reply_action(pb.DecisionReply(action=pb.Action(kind=pb.ACTION_KIND_SWAP)), legal)
    with pytest.raises(InvalidActionError, match="position 0-11"):
        convert.reply_action(pb.DecisionReply(action=pb.Action(kind=pb.ACTION_KIND_REVEAL, pos=12)), legal)
    with pytest.raises(InvalidActionError, match="takes no position"):
        convert.reply_action(pb.DecisionReply(action=pb.Action(kind=pb.ACTION_KIND_DRAW, pos=1)), legal)
    with pytest.raises(IllegalActionError, match="swap 3 is not legal now: expected one of draw, take"):
        convert.reply_action(pb.DecisionReply(action=pb.Action(kind=pb.ACTION_KIND_SWAP, pos=3)), legal)
    # an action outside the legal list is spelled out rather than indexed
    assert convert.reply_to_proto(4, Action.swap(3), legal).WhichOneof("choice") == "action"


def test_malformed_views_are_refused() -> None:
    game = Game(2, seed=5)
    start = GameStart("g", 0, game.players, game.rules)
    good = convert.decision_request_to_proto(1, "g", game.view(0), 100)

    def refused(change: str, match: str) -> None:
        msg = pb.DecisionRequest()
        msg.CopyFrom(good)
        exec(change, {"msg": msg, "pb": pb})
        with pytest.raises(convert.ProtocolError, match=match):
            convert.decision_request_from_proto(msg, start)

    refused("del msg.view.grids[0].slots[0]", "grid 0 has 11 slots, expected 12")
    refused("msg.view.grids[1].slots[2].value = 5", "grid 1 slot 2 is hidden and has a value")
    refused("msg.view.grids[1].slots[2].state = 0", "grid 1 slot 2 has state 0")
    refused("msg.view.decision = 0", "view.decision is 0")
    refused("msg.view.seat = 2", "view.seat 2")
    refused("del msg.legal_actions[:]", "lists no legal actions")
    refused("msg.view.grids.add().slots.extend(msg.view.grids[0].slots)", "3 grids for 2 players")


def test_events_that_are_not_event_messages() -> None:
    with pytest.raises(ValueError, match="RoundResult / GameOver"):
        convert.event_to_proto(Event(EventKind.GAME_END), "g")
    with pytest.raises(convert.ProtocolError, match="unknown event kind 'juggle'"):
        convert.event_from_proto(pb.Event(kind="juggle"))
    batch = pb.EventBatch(game_id="g", events=[pb.Event(kind="juggle"), pb.Event(kind="draw", seat=1)])
    assert convert.events_from_proto(batch) == [Event(EventKind.DRAW, seat=1)]  # unknown kinds are skipped
    with pytest.raises(ValueError, match="round_end"):
        convert.round_result_to_proto(Event(EventKind.REVEAL, seat=0, pos=1, value=3), "g")


def test_hello_and_welcome() -> None:
    msg = convert.hello("mybot", "1.2")
    assert msg.hello.protocol_version == convert.PROTOCOL_VERSION == 1
    assert convert.welcome("seat-a").welcome.seat_name == "seat-a"
    assert DecisionKind.OPENING_REVEAL  # the four kinds map both ways
    for kind in DecisionKind:
        game_kind = convert._DECISION_TO_PB[kind]
        assert convert._DECISION_FROM_PB[game_kind] is kind
