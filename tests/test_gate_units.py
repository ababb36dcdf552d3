"""The gate's parts without a referee: the tracker's deal-order counting, the luck control variate, the spec."""

from __future__ import annotations

import math
import random
from pathlib import Path

from skyjo_bot.types import Rules, TimeControl
from skyjo_ref import records
from skyjo_ref.bots import make_builtin
from skyjo_ref.gate.luck import game_luck, record_luck
from skyjo_ref.gate.spec import GateSpec, table_names
from skyjo_ref.gate.tracker import GateTracker
from skyjo_ref.players import parse_bot_spec
from skyjo_ref.rules.engine import Game
from skyjo_ref.stats import sprt
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import SeatResult, StoredGame

#: The smallest bot file the up-front check accepts (one Bot class).
A_BOT = (
    "from skyjo_bot import Action, Bot, View\n\n\n"
    "class B(Bot):\n    def decide(self, view: View) -> Action:\n        return view.legal_actions[0]\n"
)


def spec(max_games: int = 1000, elo0: float = 0.0, elo1: float = 60.0) -> GateSpec:
    return GateSpec(
        candidate=parse_bot_spec("greedy"),
        baseline=parse_bot_spec("random"),
        hypotheses=sprt.Hypotheses(elo0, elo1),
        rules=Rules(),
        time_control=TimeControl(),
        seed="s",
        max_games=max_games,
        concurrency=2,
        output=Path("unused"),
    )


def stored(gate: GateSpec, deal: int, rotation: int, candidate_wins: bool) -> StoredGame:
    game = GameId(gate.table, deal, rotation)
    cand = gate.names[0]
    seats = tuple(
        SeatResult(bot, 10, 1 if (bot == cand) == candidate_wins else 2, 0, False, (10,)) for bot in game.seats
    )
    return StoredGame(game, seats)


def outcomes(blocks: int, seed: int) -> list[tuple[bool, bool]]:
    rng = random.Random(seed)
    return [(rng.random() < 0.7, rng.random() < 0.6) for _ in range(blocks)]


def test_blocks_count_in_deal_order_whatever_the_finishing_order() -> None:
    gate = spec()
    games = [stored(gate, d, r, won) for d, pair in enumerate(outcomes(300, 1)) for r, won in enumerate(pair)]
    in_order = GateTracker(gate)
    for game in games:
        in_order.add(game, None)
    shuffled = GateTracker(gate)
    mixed = list(games)
    random.Random(2).shuffle(mixed)
    for game in mixed:
        shuffled.add(game, None)
    assert in_order.verdict == "accepted"
    assert shuffled.info() == in_order.info()
    # the same as the reference loop over block scores
    scores = [float(a) + float(b) for a, b in outcomes(300, 1)]
    used, decision = sprt.run_test(scores, gate.hypotheses)
    assert in_order.blocks == used and in_order.decision == decision


def test_nothing_is_counted_after_the_verdict_or_out_of_order() -> None:
    gate = spec()
    tracker = GateTracker(gate)
    assert not tracker.add(stored(gate, 1, 0, True), None)  # deal 1 waits for deal 0
    assert not tracker.add(stored(gate, 1, 1, True), None)
    assert tracker.blocks == 0
    assert not tracker.add(stored(gate, 0, 0, True), None)  # half a block
    assert tracker.add(stored(gate, 0, 1, True), None) and tracker.blocks == 2  # deals 0 and 1 at once
    deal = 2
    while not tracker.done:
        tracker.add(stored(gate, deal, 0, True), None)
        tracker.add(stored(gate, deal, 1, True), None)
        deal += 1
    counted = tracker.info()
    assert not tracker.add(stored(gate, deal, 0, True), None) and not tracker.add(stored(gate, deal, 1, True), None)
    assert tracker.info() == counted and counted["verdict"] == "accepted"


def test_the_cap_makes_the_test_inconclusive() -> None:
    gate = spec(max_games=6)
    tracker = GateTracker(gate)
    for deal in range(5):
        tracker.add(stored(gate, deal, 0, True), None)
        tracker.add(stored(gate, deal, 1, False), None)
    assert tracker.blocks == 3 and tracker.done and tracker.verdict == "inconclusive"


def test_names_stay_distinct_and_the_fingerprint_names_the_bots(tmp_path: Path) -> None:
    bot = tmp_path / "my bot.py"
    bot.write_text(A_BOT)
    assert table_names(parse_bot_spec("greedy"), parse_bot_spec("greedy")) == ("greedy.candidate", "greedy.baseline")
    assert table_names(parse_bot_spec(str(bot)), parse_bot_spec("greedy")) == ("my-bot", "greedy")
    gate = GateSpec(
        candidate=parse_bot_spec(str(bot)),
        baseline=parse_bot_spec("greedy"),
        hypotheses=sprt.Hypotheses(-20, 0),
        rules=Rules(),
        time_control=TimeControl(),
        seed="s",
        max_games=10,
        concurrency=1,
        output=tmp_path,
    )
    before = gate.fingerprint()
    bot.write_text(A_BOT + "# changed\n")
    assert gate.fingerprint()["candidate"]["sha256"] != before["candidate"]["sha256"]  # a changed bot is a new gate
    assert [g.key for g in gate.games()[:2]] == ["greedy+my-bot/0/0", "greedy+my-bot/0/1"]


def play(bots: list[str], seed: str) -> Game:
    game = Game(2, seed=seed)
    players = [make_builtin(name, f"{seed}/{i}") for i, name in enumerate(bots)]
    while not game.over:
        seat = game.current_seat
        assert seat is not None
        game.apply(players[seat].decide(game.view(seat)))
    return game


def test_luck_has_mean_zero_whatever_the_bots_do() -> None:
    # the control variate is only unbiased if each seat's luck averages zero for any play
    for bots in (["random", "random"], ["greedy", "random"]):
        draws: list[float] = []
        reveals: list[float] = []
        for i in range(120):
            luck = game_luck(play(bots, f"luck/{i}"))
            draws += luck.draw
            reveals += luck.reveal
        for values in (draws, reveals):
            mean = sum(values) / len(values)
            sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
            assert abs(mean) < 4 * sd / math.sqrt(len(values)), (bots, mean, sd)
            assert sd > 1  # and it is not trivially zero


def test_luck_from_a_record_equals_luck_from_the_live_game() -> None:
    game = play(["greedy", "random"], "record")
    record = records.loads(records.dumps(records.game_to_record(game)))
    assert record_luck(record) == game_luck(game)
