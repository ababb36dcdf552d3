"""The Elo fit: against an independent maximum-likelihood algorithm, and interval coverage."""

from __future__ import annotations

import math
import random

import pytest
from skyjo_ref.stats import bradley_terry as elo
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import SeatResult, StoredGame
from skyjo_ref.tournament.tables import compute


def mm_fit(wins: list[list[float]], games: list[list[float]], prior: float) -> list[float]:
    """Hunter's MM (Zermelo) iteration for Bradley-Terry, on the same virtual-draw prior.

    Written independently of elo.fit (a fixed-point iteration on the
    strengths gamma, not Newton on log-strengths); returns mean-zero logs.
    """
    n = len(wins)
    w = [[wins[i][j] + (prior / 2 if i != j else 0.0) for j in range(n)] for i in range(n)]
    g = [[games[i][j] + (prior if i != j else 0.0) for j in range(n)] for i in range(n)]
    gamma = [1.0] * n
    for _ in range(100_000):
        new = []
        for i in range(n):
            denom = sum(g[i][j] / (gamma[i] + gamma[j]) for j in range(n) if j != i)
            new.append(sum(w[i]) / denom)
        scale = math.exp(sum(math.log(x) for x in new) / n)
        new = [x / scale for x in new]
        done = max(abs(math.log(a) - math.log(b)) for a, b in zip(new, gamma)) < 1e-13
        gamma = new
        if done:
            break
    logs = [math.log(x) for x in gamma]
    mean = sum(logs) / n
    return [x - mean for x in logs]


def random_games(
    rng: random.Random, true_elo: list[float], k: int, blocks: int
) -> list[tuple[object, list[tuple[str, int]]]]:
    """Multi-player games with ranks from noisy strengths (ties possible), grouped in blocks."""
    names = [f"b{i}" for i in range(len(true_elo))]
    out: list[tuple[object, list[tuple[str, int]]]] = []
    for block in range(blocks):
        seats = rng.sample(range(len(names)), k)
        for _rotation in range(k):
            perf = [true_elo[s] / 173.7 + rng.gauss(0, 1) for s in seats]
            totals = [round(-p * 3) for p in perf]  # integer totals make draws happen
            ranks = [1 + sum(1 for t in totals if t < mine) for mine in totals]
            out.append(((block,), [(names[s], r) for s, r in zip(seats, ranks)]))
            seats = seats[1:] + seats[:1]
    return out


@pytest.mark.parametrize(("n", "k", "blocks", "seed"), [(3, 2, 30, 1), (5, 3, 40, 2), (6, 4, 25, 3), (8, 2, 60, 4)])
def test_newton_fit_matches_mm_iteration(n: int, k: int, blocks: int, seed: int) -> None:
    rng = random.Random(seed)
    true_elo = [rng.uniform(1200, 1800) for _ in range(n)]
    data = elo.pair_data(random_games(rng, true_elo, k, blocks))
    wins, games = data.totals()
    ours = elo.fit(wins, games, prior=1.0)
    theirs = mm_fit(wins, games, prior=1.0)
    assert len(ours) == n
    for a, b in zip(ours, theirs):
        assert abs(a - b) < 1e-7
    # the fit is a maximum: the gradient of the (prior-augmented) log-likelihood vanishes
    for i in range(n):
        grad = sum(
            wins[i][j] + 0.5 - (games[i][j] + 1.0) / (1.0 + math.exp(ours[j] - ours[i])) for j in range(n) if j != i
        )
        assert abs(grad) < 1e-6


def test_draws_count_half_and_ties_are_symmetric() -> None:
    # a and b draw every game: equal ratings whatever the anchor
    games = [((i,), [("a", 1), ("b", 1)]) for i in range(10)]
    ratings = elo.rate(elo.pair_data(games), samples=0)
    assert [r.name for r in ratings] == ["a", "b"]
    assert ratings[0].elo == pytest.approx(1500.0) and ratings[1].elo == pytest.approx(1500.0)


def test_perfect_record_stays_finite_and_ordered() -> None:
    games = []
    for i in range(20):
        games.append(((i,), [("strong", 1), ("weak", 2)]))
        games.append(((i,), [("strong", 1), ("mid", 2)]))
        games.append(((i,), [("mid", 1 if i % 3 else 2), ("weak", 2 if i % 3 else 1)]))
    ratings = {r.name: r for r in elo.rate(elo.pair_data(games), anchor="weak", elo=1000, samples=50, seed=1)}
    assert ratings["weak"].elo == 1000
    assert ratings["weak"].low == ratings["weak"].high == 1000  # the anchor is a fixed point
    assert math.isfinite(ratings["strong"].elo)
    assert ratings["strong"].elo > ratings["mid"].elo > ratings["weak"].elo
    # 41 of 41 with one virtual draw: p = 40.5/41 -> about 760 Elo above a peer; the prior keeps it near that
    assert 300 < ratings["strong"].elo - ratings["mid"].elo < 1200


def test_known_difference_is_recovered() -> None:
    # 75% score is 190.8 Elo; with 400 games the prior hardly moves it
    games = [((i,), [("a", 1), ("b", 2)]) for i in range(300)] + [((i,), [("a", 2), ("b", 1)]) for i in range(100)]
    ratings = {r.name: r.elo for r in elo.rate(elo.pair_data(games), samples=0)}
    assert ratings["a"] - ratings["b"] == pytest.approx(400 * math.log10(300.5 / 100.5), abs=1e-6)
    assert ratings["a"] + ratings["b"] == pytest.approx(3000.0)


def test_bootstrap_is_seeded() -> None:
    rng = random.Random(9)
    data = elo.pair_data(random_games(rng, [1400, 1500, 1600], 2, 30))
    one = elo.rate(data, samples=60, seed="x")
    two = elo.rate(data, samples=60, seed="x")
    other = elo.rate(data, samples=60, seed="y")
    assert one == two
    assert one != other


def test_intervals_cover_the_truth_about_95_percent() -> None:
    """Synthetic 2-player results from bots of known Elo: the 95% intervals cover the truth.

    Each game is a Bradley-Terry draw at the true ratings, so the model is
    right and the truth (pool mean 1500) is known exactly.
    """
    true_elo = [1320.0, 1440.0, 1560.0, 1680.0]
    names = [f"b{i}" for i in range(len(true_elo))]
    rng = random.Random(7)
    covered = total = 0
    for rep in range(80):
        games: list[tuple[object, list[tuple[str, int]]]] = []
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                for deal in range(12):
                    for first, second in ((i, j), (j, i)):
                        win = rng.random() < elo.expected_score(true_elo[first], true_elo[second])
                        games.append(
                            ((i, j, deal), [(names[first], 1 if win else 2), (names[second], 2 if win else 1)])
                        )
        ratings = elo.rate(elo.pair_data(games, names), samples=100, seed=rep)
        for rating, truth in zip(ratings, true_elo):
            assert rating.low is not None and rating.high is not None
            total += 1
            covered += rating.low <= truth <= rating.high
    coverage = covered / total
    assert 0.88 <= coverage <= 0.99, coverage


def test_tables_statistics_from_stored_games() -> None:
    def game(key: str, seats: list[tuple[str, int, int, list[int]]], strikes: int = 0) -> StoredGame:
        return StoredGame(
            GameId.parse(key),
            tuple(
                SeatResult(b, total, rank, strikes if i == 0 else 0, False, tuple(r))
                for i, (b, total, rank, r) in enumerate(seats)
            ),
        )

    games = [
        game("a+b+c/0/0", [("a", 40, 1, [20, 20]), ("b", 40, 1, [30, 10]), ("c", 110, 3, [50, 60])], strikes=2),
        game("a+b+c/0/1", [("b", 30, 1, [30]), ("c", 120, 3, [120]), ("a", 101, 2, [101])]),
    ]
    t = compute(games, bots=["a", "b", "c", "d"], bootstrap=0)
    rows = {r.name: r for r in t.rows}
    assert rows["a"].games == 2 and rows["a"].wins == 0.5 and rows["b"].wins == 1.5 and rows["c"].wins == 0
    assert rows["a"].avg_total == pytest.approx(70.5)
    assert rows["a"].avg_round == pytest.approx(141 / 3)
    assert rows["a"].strikes == 2 and rows["b"].strikes == 0
    assert rows["d"].games == 0 and rows["d"].elo is None
    assert t.rows[-1].name == "d"
    assert [r.name for r in t.rows[:3]] == ["b", "a", "c"]
    h = t.head_to_head
    assert (h["a"]["b"].wins, h["a"]["b"].draws, h["a"]["b"].losses) == (0, 1, 1)
    assert h["b"]["a"].score == pytest.approx(0.75)
    data = t.to_json()
    assert data["bots"][0]["name"] == "b" and data["head_to_head"]["a"]["c"]["wins"] == 2
