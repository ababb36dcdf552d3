"""The gate against a named field (``--players K --field BOT ...``): its spec and block, its tracker by simulation,
and real runs through the CLI (verdict, JSON, Markdown, refusals, resume, shards)."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from skyjo_bot.types import Rules
from skyjo_ref.gate.tracker import GateTracker, head_to_head, prior_variance, shrunk_llr
from skyjo_ref.stats import sprt
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import SeatResult, StoredGame

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from bench_gate_players import gate_spec, simulate
from test_gate_players import spec

SHORT = ("--option", "end_score=30")  # short games: the tests stay fast
SAME_RUN = ("verdict", "games", "llr", "block_scores", "history", "elo", "elo_ci")


def gate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_field_gate_s_block_is_the_balanced_design() -> None:
    """Every bot in every seat and every ordered pair neighbours equally often: K(K-1) games a deal."""
    for k, field in ((3, ("greedy",)), (4, ("random", "random")), (6, ("random", "greedy", "random", "greedy"))):
        gate = spec(k, field)
        assert gate.seating == "balanced" and gate.block_games == k * (k - 1)
        block = [g for g in gate.games() if g.deal == 0]
        assert len(block) == k * (k - 1) and len(gate.seat_names) == k == len(set(gate.seat_names))
        seats = Counter((g.seats[s], s) for g in block for s in range(k))
        assert set(seats.values()) == {k - 1} and len(seats) == k * k
        after = Counter((g.seats[s], g.seats[(s + 1) % k]) for g in block for s in range(k))
        assert set(after.values()) == {k} and len(after) == k * (k - 1)
    same = spec(4, ("random", "random"))
    assert same.seat_names == ("greedy", "random", "random.field1", "random.field2")
    assert spec(3, ("greedy",), baseline="greedy").seat_names == (
        "greedy.candidate",
        "greedy.baseline",
        "greedy",
    )


def test_a_field_is_in_the_fingerprint_and_a_gate_without_one_keeps_its_own() -> None:
    """Existing gate stores (2 players, or K players of copies) resume: their fingerprints are main's."""
    common = {
        "alpha": 0.05,
        "beta": 0.05,
        "baseline": {"kind": "builtin", "name": "random", "runs": "builtin random"},
        "candidate": {"kind": "builtin", "name": "greedy", "runs": "builtin greedy"},
        "elo0": 0.0,
        "elo1": 20.0,
        "elo_model": "logistic",
        "format": "skyjo-gate/1",
        "luck_adjusted": False,
        "rules": Rules().options(),
        "seed": "s",
        "time_control": {"bank_ms": 120000, "decision_ms": 2000, "grace_ms": 10000, "max_strikes": 3},
    }
    assert spec(2).fingerprint() == {**common, "players_per_game": 2}
    assert spec(3).fingerprint() == {**common, "players_per_game": 3, "seats": ["greedy", "random.1", "random.2"]}
    with_field = spec(3, ("random",)).fingerprint()
    assert with_field["seating"] == "balanced" and with_field["seats"] == ["greedy", "random", "random.field1"]
    assert with_field["field"] == [{"name": "random.field1", "kind": "builtin", "runs": "builtin random"}]
    assert spec(3, ("greedy",)).fingerprint()["field"] != with_field["field"]
    with pytest.raises(ValueError, match="expected 2"):
        spec(4, ("random",))


def test_the_block_score_is_the_candidate_against_the_baseline_alone() -> None:
    assert head_to_head([2, 1, 3], 0, 2) == 1.0 and head_to_head([3, 1, 2], 0, 2) == 0.0
    assert head_to_head([1, 3, 1, 2], 0, 2) == 0.5
    gate = spec(3, ("random",))
    tracker = GateTracker(gate)
    # the candidate is always behind the field bot and ahead of the baseline: 1 a game, whatever the field
    ranks = {"greedy": 2, "random": 3, "random.field1": 1}

    def game(seating: int) -> StoredGame:
        ident = GameId(gate.table, 0, seating)
        return StoredGame(ident, tuple(SeatResult(b, ranks[b], ranks[b], 0, False, ()) for b in ident.seats))

    for seating in range(5):
        assert not tracker.add(game(seating), None)  # a block is 6 games
    assert tracker.add(game(5), None)
    info = tracker.info()
    assert info["games"] == 6 and info["block_scores"] == [0, 0, 0, 0, 1] and info["history"][0][0] == 6
    assert info["field"] == ["random.field1"] and info["seating"] == "balanced" and info["block_games"] == 6
    assert prior_variance(6) == pytest.approx(0.25 / 6)
    # with a field the variance is never below the prior (independent games); copies keep the shrunk one
    s0, s1 = sprt.score_of(0.0), sprt.score_of(20.0)
    floored = shrunk_llr(100, 0.6, 0.001, s0, s1, 6, floor=True)
    assert floored == pytest.approx(sprt.normal_llr(100, 0.6, 0.25 / 6, s0, s1))
    assert shrunk_llr(100, 0.6, 0.001, s0, s1, 6) > 1.5 * floored
    assert shrunk_llr(100, 0.6, 0.1, s0, s1, 6, floor=True) == shrunk_llr(100, 0.6, 0.1, s0, s1, 6)


def test_simulated_field_gates_stay_within_alpha_and_beta() -> None:
    """60 field gates at elo0 and 60 at elo1 (4 players, [0, 40] Elo, alpha = beta = 0.05): at a true 5% the
    wrong verdicts are Binomial(60, 0.05), 3 +/- 1.7; more than 9 happens once in ~1,000 runs
    (benchmarks/bench_gate_players.py --design field: 300 gates a truth, docs/gate.md)."""
    gate = gate_spec(4, 0.0, 40.0, max_games=100_000, design="field")
    assert gate.field_names == ("random.field1", "random.field2")
    rng = random.Random(5)
    at_elo0 = [simulate(gate, 0.0, rng, field_elo=100.0) for _ in range(60)]
    at_elo1 = [simulate(gate, 40.0, rng, field_elo=100.0) for _ in range(60)]
    assert sum(t.verdict == "accepted" for t in at_elo0) <= 9
    assert sum(t.verdict == "rejected" for t in at_elo1) <= 9
    assert all(t.verdict != "inconclusive" for t in at_elo0 + at_elo1)


def test_a_field_gate_through_the_cli_reaches_a_verdict_with_field_in_json_and_markdown(tmp_path: Path) -> None:
    args = ("gate", "greedy", "random", "--players", "4", "--field", "random", "--field", "greedy", "--preset", "gain")
    done = gate(*args, *SHORT, "--out", "g", "--json", "g.json", "--markdown", "g.md", "--plain", cwd=tmp_path)
    assert done.returncode == 0, done.stderr  # greedy finishes ahead of random: accepted
    data = json.loads((tmp_path / "g.json").read_text())
    assert data["verdict"] == "accepted" and data["players"] == 4 and data["games"] % 12 == 0
    assert data["field"] == ["random.field1", "greedy.field2"] and data["seating"] == "balanced"
    assert data["field_specs"] == ["random", "greedy"] and data["pentanomial"] is None
    assert "with the field random.field1, greedy.field2 at 4-player tables" in done.stdout
    assert "balanced seatings: 12 games a deal" in done.stdout
    summary = (tmp_path / "g.md").read_text()
    assert "| Field | builtin random, builtin greedy |" in summary and "12 games a deal" in summary
    with sqlite3.connect(tmp_path / "g" / "results.sqlite") as db:
        seatings = [r for (r,) in db.execute("SELECT rotation FROM games WHERE deal = 0 ORDER BY rotation")]
    assert seatings == list(range(16, 28))  # the balanced design's indices at 4 players
    page = gate("report", "g", cwd=tmp_path)  # a K-player gate's store has no pentanomial: the page still renders
    assert page.returncode == 0 and (tmp_path / "g" / "report.html").is_file(), page.stderr
    html = " ".join((tmp_path / "g" / "report.html").read_text("utf-8").split())
    assert "the field random.field1, greedy.field2, balanced seatings (12 games a deal" in html
    assert f'data-blocks="{data["block_scores"]}"'.replace(" ", "") in html.replace(" ", "")
    assert "<th>pentanomial</th>" not in html
    # a field of other bots is another gate: its store is refused, naming what differs
    other = gate(*args[:-4], "--field", "random", "--preset", "gain", *SHORT, "--out", "g", cwd=tmp_path)
    assert other.returncode == 2 and "field" in other.stderr and len(other.stderr.strip().splitlines()) == 1


def test_a_field_gate_resumes_from_its_store_to_the_verdict_of_a_whole_run(tmp_path: Path) -> None:
    args = ("gate", "random", "greedy", "--field", "random", "--preset", "gain", *SHORT)
    whole = gate(*args, "--out", "whole", "--json", "whole.json", cwd=tmp_path)
    assert whole.returncode == 1, whole.stderr  # random behind greedy: rejected
    reference = json.loads((tmp_path / "whole.json").read_text())
    assert reference["players"] == 3 and reference["games"] > 12  # --players from the field: 2 + 1
    part = gate(*args, "--out", "part", "--max-games", "12", "--json", "part.json", cwd=tmp_path)
    assert part.returncode == 4, part.stderr
    assert json.loads((tmp_path / "part.json").read_text())["games"] == 12
    rest = gate(*args, "--out", "part", "--json", "rest.json", cwd=tmp_path)
    assert rest.returncode == 1, rest.stderr
    resumed: dict[str, Any] = json.loads((tmp_path / "rest.json").read_text())
    for key in SAME_RUN:
        assert resumed[key] == reference[key], key
    # the first 12 games were not played again (games in flight at the verdict are stored too: hence <=)
    assert 0 < resumed["played_now"] <= resumed["stored_games"] - 12


def test_a_sharded_field_gate_merges_into_the_verdict_of_the_whole_gate(tmp_path: Path) -> None:
    args = ("gate", "random", "greedy", "--players", "3", "--field", "random", "--preset", "gain", *SHORT)
    whole = gate(*args, "--out", "whole", "--json", "whole.json", cwd=tmp_path)
    assert whole.returncode == 1, whole.stderr
    for i in (1, 2):
        part = gate(*args, "--shard", f"{i}/2", "--out", f"s{i}", cwd=tmp_path)
        assert part.returncode == 0 and f"Shard {i}/2 done" in part.stdout, part.stderr
    assert gate("merge", "merged", "s1", "s2", cwd=tmp_path).returncode == 0
    verdict = gate(*args, "--out", "merged", "--json", "merged.json", cwd=tmp_path)
    assert verdict.returncode == 1, verdict.stderr
    a = json.loads((tmp_path / "whole.json").read_text())
    b = json.loads((tmp_path / "merged.json").read_text())
    for key in SAME_RUN:
        assert a[key] == b[key], key


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--players", "4", "--field", "random"), "--players 4 with 1 --field bot: expected 2 (players-2"),
        (("--players", "3", "--field", "random", "--field", "random"), "--players 3 with 2 --field bots: expected 1"),
        (("--players", "2", "--field", "random"), "a field needs 3 or more players"),
        (
            (
                "--field",
                "random",
            )
            * 7,
            "--players 9: expected 2 to 8",
        ),
        (("--field", "nobot.py"), "--field 'nobot.py': no such file"),
        (("--field", "remote:x"), "remote bots are not supported yet"),
        (("--field", "random", "--max-games", "5"), "--max-games 5: expected at least one deal's 6 games"),
    ],
)
def test_bad_field_counts_are_refused_in_one_line(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    done = gate("gate", "greedy", "random", *args, "--out", "x", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert message in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()
