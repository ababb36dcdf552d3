"""The multi-player gate (--players K): its spec, its tracker by simulation, and one real run through the CLI."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

from skyjo_bot.types import Rules, TimeControl
from skyjo_ref.gate.spec import GateSpec
from skyjo_ref.gate.tracker import GateTracker, game_score
from skyjo_ref.players import parse_bot_spec
from skyjo_ref.stats import sprt
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import SeatResult, StoredGame

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from bench_gate_players import gate_spec, simulate


def spec(players: int, field: tuple[str, ...] = (), baseline: str = "random") -> GateSpec:
    """greedy against ``baseline`` at ``players`` seats (copies, or this ``field``); test_gate_field.py uses it too."""
    return GateSpec(
        candidate=parse_bot_spec("greedy"),
        baseline=parse_bot_spec(baseline),
        hypotheses=sprt.Hypotheses(0.0, 20.0),
        rules=Rules(),
        time_control=TimeControl(),
        seed="s",
        max_games=300,
        concurrency=2,
        output=Path("unused"),
        players=players,
        field=tuple(parse_bot_spec(f) for f in field),
    )


def test_a_k_player_gate_is_the_candidate_and_k_minus_1_baseline_copies() -> None:
    gate = spec(4)
    assert gate.seat_names == ("greedy", "random.1", "random.2", "random.3")
    assert gate.max_blocks == 75
    games = gate.games()
    assert len(games) == 300 and {g.rotation for g in games} == {0, 1, 2, 3}
    first = [g.seats.index("greedy") for g in games[:4]]
    assert sorted(first) == [0, 1, 2, 3]  # a block: the candidate once in each seat
    assert gate.fingerprint()["players_per_game"] == 4
    assert len(gate.tournament_config().bots) == 4
    same = spec(3, baseline="greedy")
    assert same.seat_names == ("greedy.candidate", "greedy.baseline.1", "greedy.baseline.2")


def test_two_players_keep_their_fingerprint() -> None:
    """Existing 2-player gate stores resume: nothing about them changed."""
    fingerprint = spec(2).fingerprint()
    assert fingerprint["players_per_game"] == 2 and "seats" not in fingerprint
    assert spec(2).seat_names == spec(2).names


def test_a_game_score_is_the_share_of_the_others_beaten() -> None:
    assert game_score([1, 2], 0) == 1.0 and game_score([1, 1], 1) == 0.5 and game_score([2, 1], 0) == 0.0
    assert game_score([2, 1, 3, 4], 0) == 2 / 3
    assert game_score([1, 1, 3], 0) == 0.75


def test_the_tracker_counts_whole_k_player_blocks_in_deal_order() -> None:
    gate = spec(3)
    tracker = GateTracker(gate)

    def game(deal: int, rotation: int) -> StoredGame:
        ident = GameId(gate.table, deal, rotation)
        ranks = {"greedy": 1, "random.1": 2, "random.2": 3}
        return StoredGame(ident, tuple(SeatResult(b, ranks[b], ranks[b], 0, False, ()) for b in ident.seats))

    assert not tracker.add(game(1, 0), None)
    assert not tracker.add(game(0, 0), None) and not tracker.add(game(0, 1), None)
    assert tracker.add(game(0, 2), None)  # deal 0 complete
    assert tracker.blocks == 1 and tracker.games == 3
    info = tracker.info()
    assert info["players"] == 3 and info["pentanomial"] is None and info["block_scores"] == [0, 0, 0, 0, 1]
    assert info["history"][0][0] == 3


def test_simulated_error_rates_stay_within_alpha_and_beta() -> None:
    """60 gates at elo0 and 60 at elo1 (3 players, [0, 40] Elo, alpha = beta = 0.05).

    At a true 5% the wrong verdicts are Binomial(60, 0.05): 3 +/- 1.7; more than 9
    happens once in ~1,000 runs (benchmarks/bench_gate_players.py: 500 gates a truth).
    """
    gate = gate_spec(3, 0.0, 40.0, max_games=100_000)
    rng = random.Random(4)
    at_elo0 = [simulate(gate, 0.0, rng) for _ in range(60)]
    at_elo1 = [simulate(gate, 40.0, rng) for _ in range(60)]
    assert sum(t.verdict == "accepted" for t in at_elo0) <= 9
    assert sum(t.verdict == "rejected" for t in at_elo1) <= 9
    assert all(t.verdict != "inconclusive" for t in at_elo0 + at_elo1)


def test_a_three_player_gate_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "g"
    result = subprocess.run(
        [
            *(sys.executable, "-m", "skyjo_ref", "gate", "greedy", "random", "--players", "3", "--preset", "gain"),
            *("--max-games", "120", "--out", str(out), "--json", str(tmp_path / "g.json"), "--plain"),
            *("--option", "end_score=30"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr  # greedy beats two random bots: accepted
    data = json.loads((tmp_path / "g.json").read_text())
    assert data["players"] == 3 and data["verdict"] == "accepted" and data["games"] % 3 == 0
    assert "2 copies at 3-player tables" in result.stdout and "Blocks(0-1 by 1/4)" in result.stdout
    with sqlite3.connect(out / "results.sqlite") as db:
        seats = [json.loads(s) for (s,) in db.execute("SELECT seats FROM games WHERE deal = 0 ORDER BY rotation")]
    assert [s.index("greedy") for s in seats] == [0, 2, 1]
    ratings = subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "ratings", str(out), "--json", "-"], capture_output=True, text=True
    )
    assert ratings.returncode == 0, ratings.stderr  # a gate's store is a store `ratings` reads
    table = json.loads(ratings.stdout)
    assert {row["name"] for row in table["bots"]} == {"greedy", "random.1", "random.2"}
    assert any("random.1, random.2 are copies of one bot, random" in note for note in table["notes"])


def test_bad_player_counts_are_refused(tmp_path: Path) -> None:
    for args, words in (
        (["--players", "9"], "expected 2 to 8"),
        (["--players", "3", "--luck-adjust"], "2 players only"),
        (["--players", "3", "--elo-model", "normalized"], "logistic only"),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "skyjo_ref", "gate", "greedy", "random", "--out", str(tmp_path / "x"), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2, result.stderr
        assert words in result.stderr and "Traceback" not in result.stderr
