"""What proto/skyjo/v1/skyjo.proto's comments promise a bot is what a real referee sends.

A raw-stub bot (no SDK) plays a whole game and checks the comments that bot
authors in other languages rely on: GameStart.rules holds the values in force,
DecisionRequest.time_left_ms with no limit, the event kinds and their fields,
and the code-generation options the guide's commands need.
"""

from __future__ import annotations

import asyncio
import re

from referee_harness import RawBot, play, start_referee
from sdk_harness import ROOT
from skyjo_bot.types import Rules, TimeControl
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
from skyjo_ref.match import MatchSpec, SeatSpec
from skyjo_ref.match.runner import NO_LIMIT_MS

PROTO = ROOT / "proto" / "skyjo" / "v1" / "skyjo.proto"
#: Event kinds the proto lists, with the fields each one sets.
EVENT_FIELDS = {
    "round_start": {"round"},
    "reveal": {"seat", "pos", "value"},
    "draw": {"seat"},
    "take": {"seat", "value"},
    "discard": {"seat", "value"},
    "swap": {"seat", "pos", "value", "replaced"},
    "column_cleared": {"seat", "pos", "value"},
    "reshuffle": {"value"},
    "turns_start": {"seat"},
    "round_finishing": {"seat"},
    "final_reveal": {"seat", "pos", "value"},
}
OPTIONAL_EVENT_FIELDS = ("seat", "pos", "value", "replaced", "round")


def _play_one_game(rules: Rules, tc: TimeControl) -> RawBot:
    async def scenario() -> RawBot:
        server = await start_referee(tc)
        token = server.issue_token("raw")
        bot = RawBot(server.address, token)
        bot.connect()
        try:
            spec = MatchSpec(
                seats=(SeatSpec.of_token(token, "raw"), SeatSpec.of_builtin("greedy")),
                rules=rules,
                time_control=tc,
                games=1,
                seed="promises",
            )
            _, end = await play(server, spec)
            assert end.error == "" and end.games == 1
            await asyncio.wait_for(bot.game_over.wait(), 30)
        finally:
            await bot.close()
            await server.stop()
        return bot

    return asyncio.run(scenario())


def test_game_start_reports_the_rules_in_force_and_time_left_without_limits() -> None:
    untimed = TimeControl(decision_ms=0, bank_ms=0, max_strikes=0, grace_ms=20_000)
    bot = _play_one_game(Rules.from_dict({"column_clear": False, "end_score": 30}), untimed)
    (start,) = bot.messages("game_start")
    assert start.rules.HasField("column_clear") and not start.rules.column_clear
    # the preset's clear_on_final_reveal (true) has no effect without column clears: reported as in force
    assert start.rules.HasField("clear_on_final_reveal") and not start.rules.clear_on_final_reveal
    assert start.rules.end_score == 30 and start.rules.finisher_penalty == pb.FINISHER_PENALTY_DOUBLE_IF_POSITIVE
    assert start.time_control.decision_ms == 0 and start.time_control.bank_ms == 0
    decisions = bot.messages("decision")
    assert decisions and {d.time_left_ms for d in decisions} == {NO_LIMIT_MS} == {86_400_000}
    text = " ".join(PROTO.read_text().split())
    assert "counts as 86,400,000 (24 hours) here" in text


def test_clear_on_final_reveal_is_reported_when_it_applies() -> None:
    bot = _play_one_game(Rules.from_dict({"end_score": 30}), TimeControl(decision_ms=10_000, bank_ms=600_000))
    (start,) = bot.messages("game_start")
    assert start.rules.column_clear and start.rules.clear_on_final_reveal
    bot = _play_one_game(Rules.from_dict({"end_score": 30, "clear_on_final_reveal": False}), TimeControl())
    assert not bot.messages("game_start")[0].rules.clear_on_final_reveal


def test_rules_in_force() -> None:
    assert Rules(column_clear=False).in_force() == Rules(column_clear=False, clear_on_final_reveal=False)
    assert Rules().in_force() == Rules()
    assert Rules(clear_on_final_reveal=False).in_force().clear_on_final_reveal is False


def test_events_are_the_documented_kinds_with_their_fields() -> None:
    bot = _play_one_game(Rules.from_dict({"end_score": 30}), TimeControl(decision_ms=10_000, bank_ms=600_000))
    events = [e for batch in bot.messages("events") for e in batch.events]
    events += [e for d in bot.messages("decision") for e in d.events]
    assert events
    seen: set[str] = set()
    for event in events:
        assert event.kind in EVENT_FIELDS, f"undocumented event kind {event.kind!r}"
        fields = {name for name in OPTIONAL_EVENT_FIELDS if event.HasField(name)}
        assert fields == EVENT_FIELDS[event.kind], f"{event.kind} sets {fields}"
        seen.add(event.kind)
    assert {"round_start", "reveal", "turns_start", "round_finishing"} <= seen
    rounds = [e.round for e in events if e.kind == "round_start"]
    assert rounds == list(range(len(rounds)))  # 0-based
    assert len(bot.messages("round_result")) == len(rounds)  # a round's end is a RoundResult, not an event
    # the proto documents each kind it sends, and none it does not
    documented = set(re.findall(r"^\s*// +([a-z_]+) \([a-z_, =0-9-]*\):", PROTO.read_text(), flags=re.M))
    assert documented == set(EVENT_FIELDS)
    assert "round_end" not in PROTO.read_text()


def test_code_generation_options() -> None:
    options = pb.DESCRIPTOR.GetOptions()
    assert options.go_package == "skyjo-ref/skyjo/v1;skyjov1"
    assert options.java_package == "skyjo.v1" and options.java_multiple_files
    assert options.csharp_namespace == "Skyjo.V1"
    assert options.php_namespace == "Skyjo\\V1" and options.ruby_package == "Skyjo::V1"
    assert options.objc_class_prefix == "SKY"
