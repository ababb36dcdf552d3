"""Round starters read from records, stored per game, and the starter effects the tables report."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from report_stores import play
from skyjo_ref.execution.types import GameId
from skyjo_ref.records import round_starters
from skyjo_ref.stats.clustered import clustered_mean
from skyjo_ref.tournament.store import _SCHEMA, Store, StoredGame, seat_results
from skyjo_ref.tournament.tables import compute, starter_effects
from test_league_store import cli


def rulebook_starters(record: dict[str, object]) -> list[int]:
    """The starters as RULES.md says, from the deck and results alone (official rules).

    Round 1: the highest sum of the two opening reveals (a tie to the lowest seat);
    later rounds: the previous round's finisher.
    """
    rounds = record["rounds"]
    assert isinstance(rounds, list)
    n = len(record["players"])  # type: ignore[arg-type]
    first = rounds[0]
    sums = [0] * n
    for action in first["actions"][: 2 * n]:
        assert action["act"] == "reveal"
        sums[action["seat"]] += first["deck"][12 * action["seat"] + action["pos"]]
    return [sums.index(max(sums))] + [rnd["result"]["finisher"] for rnd in rounds[:-1]]


@pytest.mark.parametrize("seed", ["a", "b", "c", "d"])
def test_round_starters_follow_the_rulebook(seed: str) -> None:
    record = play(["x", "y", "z"], seed, ["greedy", "random", "greedy"])
    assert len(record["rounds"]) >= 2
    assert round_starters(record) == rulebook_starters(record)


def test_a_clustered_mean_by_hand() -> None:
    # blocks [1, 3] and [5]: mean 3; block sums off by (4 - 6) and (5 - 3): spread 8 x 2/1 = 16, se 4/3,
    # t(0.975, 1 df) = 12.7062
    mean = clustered_mean([[1.0, 3.0], [5.0], []])
    assert mean is not None and mean.mean == 3.0 and (mean.count, mean.blocks) == (3, 2)
    assert mean.low == pytest.approx(3 - 12.7062 * 4 / 3, abs=1e-3)
    assert mean.high == pytest.approx(3 + 12.7062 * 4 / 3, abs=1e-3)
    single = clustered_mean([[2.0, 4.0]])
    assert single is not None and single.mean == 3.0 and single.low is None
    assert clustered_mean([[], []]) is None


def test_starter_effects_by_hand() -> None:
    def game(deal: int, rotation: int, starter: int | None, round1: tuple[int, int, int]) -> StoredGame:
        from skyjo_ref.tournament.store import SeatResult

        ranks = [sorted(round1).index(score) + 1 for score in round1]
        seats = tuple(
            SeatResult(bot, score, rank, 0, False, (score, 0)) for bot, score, rank in zip("abc", round1, ranks)
        )
        return StoredGame(GameId(("a", "b", "c"), deal, rotation), seats, starters=(starter, 0))

    games = [
        game(0, 0, 0, (12, 6, 0)),  # starter 12 vs others' mean 3: +9; it finished last: share 0
        game(0, 1, 2, (3, 4, 5)),  # starter 5 vs 3.5: +1.5; last: 0
        game(1, 0, 1, (9, 0, 3)),  # starter 0 vs 6: -6; first: 1
        game(1, 1, None, (1, 2, 3)),  # no known starter: left out
    ]
    effect = starter_effects(games)[3]
    assert effect.points.count == 3 and effect.points.blocks == 2
    assert effect.points.mean == pytest.approx((9 + 1.5 - 6) / 3)
    assert effect.share.mean == pytest.approx(1 / 3)
    assert starter_effects([game(0, 0, None, (1, 2, 3))]) == {}
    assert compute(games).to_json()["starter_effects"]["3"]["games"] == 3


def test_a_store_migrated_to_schema_3_reads_its_starters_from_the_records(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    folder.mkdir()
    db = sqlite3.connect(folder / "results.sqlite", isolation_level=None)
    db.executescript(_SCHEMA)  # schema 1
    db.execute("INSERT INTO meta VALUES ('format', 'skyjo-tournament-store/1')")
    expected = {}
    for deal in range(3):
        game = GameId(("a", "b", "c"), deal, 0)
        record = play(list(game.seats), f"s{deal}", ["greedy", "random", "greedy"])
        expected[game.key] = tuple(round_starters(record))
        db.execute(
            "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (game.key, "a+b+c", deal, 0, json.dumps(list(game.seats)), "s", json.dumps(record), 1.0, 0.1),
        )
        for seat, s in enumerate(seat_results(record, game.seats)):
            db.execute(
                "INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (game.key, seat, s.bot, s.total, s.rank, s.strikes, int(s.forfeit), json.dumps(list(s.round_scores))),
            )
    db.close()
    with Store(folder, create=False) as store:
        assert {g.ref: g.starters for g in store.games()} == expected


def test_a_tournament_reports_its_starter_effects(tmp_path: Path) -> None:
    (tmp_path / "league.yaml").write_text(
        "name: starters\noutput: out\nplayers_per_game: 3\ndeals: 2\nseed: 5\nrating: {bootstrap: 0}\nbots:\n"
        "  - {name: greedy, builtin: greedy}\n  - {name: random, builtin: random}\n"
        "  - {name: other, builtin: greedy}\n",
        encoding="utf-8",
    )
    run = cli("tournament", "league.yaml", "--json", "t.json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    effect = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))["starter_effects"]["3"]
    assert effect["games"] == 12  # 2 deals x 6 balanced seatings, every one with a starter
    with Store(tmp_path / "out", create=False) as store:
        for game in store.games():
            record = store.record(game.ref)
            assert record is not None and game.starters == tuple(rulebook_starters(record))


def test_a_fit_that_does_not_converge_shows_no_elo_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault injected into the solver: the tables say the fit did not converge instead of showing a guess."""
    from skyjo_ref.stats import plackett_luce
    from skyjo_ref.stats.newton import NotConverged
    from skyjo_ref.tournament.store import SeatResult
    from skyjo_ref.tournament.tables import compute

    def stuck(*args: object, **kwargs: object) -> list[float]:
        raise NotConverged("the Plackett-Luce fit did not converge in 100 Newton steps")

    monkeypatch.setattr(plackett_luce, "maximise", stuck)
    games = [
        StoredGame(
            GameId(("a", "b"), deal, r), tuple(SeatResult(bot, 10, 1 + (bot == "b"), 0, False, (10,)) for bot in "ab")
        )
        for deal in range(3)
        for r in range(2)
    ]
    tables = compute(games, bootstrap=0)
    assert all(row.elo is None for row in tables.rows) and tables.games == 6
    assert any("did not converge" in note and "no Elo is shown" in note for note in tables.notes)
