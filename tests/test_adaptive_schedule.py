"""schedule: adaptive: rounds planned from the stored games, each stored before it is played; resume, shards and
merge play the same plans; the schedule stops when the ranking it was asked for is decided or the budget is spent.

Built-in bots only (they play inside the referee: fast), a short game (end_score 30).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from skyjo_ref.tournament.adaptive import AdaptiveSettings, next_round, status_of_totals
from skyjo_ref.tournament.store import Store


def league(folder: Path, adaptive: str = "{top: 1, max_games: 120}", players: int = 2) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "league.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            name: adapt
            rules: {{preset: official, end_score: 30}}
            players_per_game: {players}
            seed: 4
            schedule: adaptive
            adaptive: {adaptive}
            rating: {{bootstrap: 0}}
            output: out
            bots:
              - {{name: greedy, builtin: greedy}}
              - {{name: random, builtin: random}}
              - {{name: random2, builtin: random}}
            """
        ),
        encoding="utf-8",
    )
    return config


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_planner_plays_only_undecided_comparisons_and_stops_when_all_are_decided() -> None:
    names = ["a", "b", "c"]
    settings = AdaptiveSettings(confidence=0.95, max_games=1000)
    # a far ahead of b and c; b and c even: only b-c is undecided
    wins = [[0, 60, 60], [0, 0, 10], [0, 10, 0]]
    counts = [[0, 60, 60], [60, 0, 20], [60, 20, 0]]
    state = status_of_totals(names, wins, counts, settings)
    assert state.ranking[0] == "a" and state.comparisons[0].better == "a" and state.comparisons[0].decided
    plan = next_round(2, state, {("b", "c"): 10}, 2, settings, games_so_far=200)
    assert plan is not None and {table for table, _ in plan.blocks} == {("b", "c")}
    assert [deal for _, deal in plan.blocks] == list(range(10, 10 + len(plan.blocks)))  # fresh deals
    assert next_round(2, state, {}, 2, settings, games_so_far=1000) is None  # no budget left
    decided = status_of_totals(names, wins, counts, AdaptiveSettings(top=1))  # only who is first
    assert decided.done and next_round(2, decided, {}, 2, settings, 0) is None


def test_an_adaptive_league_stops_at_its_target_and_a_rerun_plays_nothing(tmp_path: Path) -> None:
    config = league(tmp_path)
    first = cli("tournament", str(config), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    text = " ".join(first.stderr.split())
    assert "adaptive schedule:" in text and "stopped:" in text, text
    with Store(tmp_path / "out", create=False) as store:
        rounds = store.rounds()
        games = store.games()
        assert len(rounds) >= 2 and rounds[0]["why"] == [{"first_round": True}]
        planned = {(tuple(t), d) for r in rounds for t, d in r["blocks"]}
        assert {g.id.block for g in games} == planned  # every planned block played, nothing else
        assert len(games) <= 120
    again = cli("tournament", str(config), cwd=tmp_path)
    assert again.returncode == 0 and "0 games played" in " ".join(again.stderr.split()), again.stderr
    with Store(tmp_path / "out", create=False) as store:
        assert store.rounds() == rounds  # nothing re-planned


def test_shards_play_one_round_each_then_the_merged_store_goes_on(tmp_path: Path) -> None:
    config = league(tmp_path, "{max_games: 40}")
    for index in (1, 2):
        shard = cli("tournament", str(config), "--shard", f"{index}/2", cwd=tmp_path)
        assert shard.returncode == 0, shard.stderr
    with (
        Store(tmp_path / "out.shard-1-of-2", create=False) as one,
        Store(tmp_path / "out.shard-2-of-2", create=False) as two,
    ):
        assert one.rounds() == two.rounds() and len(one.rounds()) == 1  # the same first round, planned alike
        assert one.count() + two.count() == 6  # 3 tables x 2 seatings, split
    merged = cli("merge", "out", "out.shard-1-of-2", "out.shard-2-of-2", cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    going_on = cli("tournament", str(config), cwd=tmp_path)  # plans round 2 from the merged games
    assert going_on.returncode == 0, going_on.stderr
    with Store(tmp_path / "out", create=False) as store:
        assert len(store.rounds()) >= 2 and 6 < store.count() <= 40


def test_adaptive_settings_are_checked_with_the_line_and_what_is_expected(tmp_path: Path) -> None:
    config = league(tmp_path, "{confidence: 1.5}")
    bad = cli("tournament", str(config), cwd=tmp_path)
    assert bad.returncode == 2 and ":6: adaptive.confidence: expected a probability from 0.5 to below 1" in bad.stderr
    config.write_text(config.read_text().replace("schedule: adaptive\n", ""))
    other = cli("tournament", str(config), cwd=tmp_path)
    assert other.returncode == 2 and "adaptive sets an adaptive schedule, not a round_robin one" in other.stderr


def test_at_three_players_the_budget_counts_every_game_of_a_block(tmp_path: Path) -> None:
    """A balanced 3-player block is 6 games: max_games 42 holds 7 blocks, never more games than that."""
    config = league(tmp_path, "{max_games: 42}", players=3)
    done = cli("tournament", str(config), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stderr.split())  # random and random2 are one bot: 42 games cannot order them
    assert "the budget (max_games 42) ended the run with the order of" in text and "undecided" in text, text
    with Store(tmp_path / "out", create=False) as store:
        assert 6 <= store.count() <= 42 and store.count() % 6 == 0
        planned = sum(len(plan["blocks"]) for plan in store.rounds()) * 6
    assert planned <= 42
