"""The schedule and the store, in-process (no referee)."""

from __future__ import annotations

from pathlib import Path

import pytest
from skyjo_ref.bots import make_builtin
from skyjo_ref.records import game_to_record
from skyjo_ref.rules import Game
from skyjo_ref.tournament.schedule import GameId, deal_match_seed, schedule
from skyjo_ref.tournament.store import Store, StoreError


def test_schedule_is_a_duplicate_round_robin() -> None:
    games = schedule(["c", "a", "b"], 2, 3)
    assert len(games) == 3 * 3 * 2
    assert len({g.key for g in games}) == len(games)
    assert games[0] == GameId(("a", "b"), 0, 0) and games[1] == GameId(("a", "b"), 0, 1)
    assert [g.deal for g in games] == sorted(g.deal for g in games)  # deal by deal
    three = GameId(("a", "b", "c"), 4, 2)
    assert three.seats == ("c", "a", "b") and GameId.parse(three.key) == three
    assert deal_match_seed(7, 1) == deal_match_seed(7, 1) != deal_match_seed(7, 2)


def test_game_identity_survives_a_growing_league() -> None:
    before = {g.key for g in schedule(["a", "b", "c"], 2, 4)}
    after = {g.key for g in schedule(["d", "c", "b", "a"], 2, 4)}
    assert before < after
    assert all("d" in key.split("/")[0].split("+") for key in after - before)
    assert {g.key for g in schedule(["a", "b", "c"], 2, 5)} > before  # more deals: only new games


def _record(players: tuple[str, ...], seed: str) -> dict[str, object]:
    game = Game(len(players), seed=seed, players=players)
    bots = [make_builtin("greedy") for _ in players]
    while not game.over:
        seat = game.current_seat
        assert seat is not None
        game.apply(bots[seat].decide(game.view(seat)))
    return game_to_record(game, {"strikes": [{"seat": 1, "reason": "timeout"}]})


def test_store_commits_games_and_refuses_other_settings(tmp_path: Path) -> None:
    game = GameId(("a", "b"), 0, 1)
    with Store(tmp_path / "out") as store:
        store.bind({"seed": 1, "players_per_game": 2})
        stored = store.add_game(game, "s", _record(game.seats, "s"), 1.0)
        assert [s.bot for s in stored.seats] == ["b", "a"] and stored.seats[1].strikes == 1
        assert (tmp_path / "out" / "games" / game.file_name()).is_file()
    with Store(tmp_path / "out", create=False) as store:
        assert store.finished_keys() == {game.key}
        assert store.games()[0].seats == stored.seats
        with pytest.raises(StoreError, match=r"seed: stored 1, this config has 2"):
            store.bind({"seed": 2, "players_per_game": 2})
        with pytest.raises(StoreError, match="players"):  # a record for other seats is never stored
            store.add_game(GameId(("a", "b"), 1, 0), "t", _record(("x", "y"), "t"), 1.0)
        assert store.count() == 1


def test_an_empty_store_takes_new_settings(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.bind({"seed": 1})
        store.bind({"seed": 2})
        assert store.fingerprint() == {"seed": 2}


def test_changed_rules_are_refused_naming_only_the_option_that_changed(tmp_path: Path) -> None:
    rules = {"preset": "official", "column_clear": True, "end_score": 100, "finisher_penalty": "double"}
    game = GameId(("a", "b"), 0, 1)
    with Store(tmp_path / "out") as store:
        store.bind({"rules": rules, "seed": 1})
        store.add_game(game, "s", _record(game.seats, "s"), 1.0)
        with pytest.raises(StoreError) as refused:
            store.bind({"rules": {**rules, "column_clear": False}, "seed": 1})
    message = str(refused.value)
    assert "rules.column_clear: stored true, this config has false" in message
    assert "end_score" not in message and "finisher_penalty" not in message
