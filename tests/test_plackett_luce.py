"""Plackett-Luce Elo (skyjo_ref.stats.plackett_luce): against choix, against the pairwise fit, and by simulation."""

from __future__ import annotations

import itertools
import math
import random
import sys
from collections.abc import Sequence
from pathlib import Path

import choix  # type: ignore[import-untyped]
import pytest
from skyjo_ref.seating import design, seat_order
from skyjo_ref.stats import bradley_terry as bt
from skyjo_ref.stats import plackett_luce as pl
from skyjo_ref.stats.bootstrap import interval, percentile, t_quantile_975

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from bench_ratings import held_out

Game = tuple[object, list[tuple[str, int]]]


def race(rng: random.Random, strengths: Sequence[float]) -> list[int]:
    """Ranks (1 best) of a Plackett-Luce draw: strength plus Gumbel noise, highest first."""
    keys = [s - math.log(-math.log(rng.random())) for s in strengths]
    order = sorted(range(len(keys)), key=lambda i: -keys[i])
    ranks = [0] * len(keys)
    for place, i in enumerate(order):
        ranks[i] = place + 1
    return ranks


def test_the_fit_agrees_with_choix_on_orders_without_ties() -> None:
    rng = random.Random(1)
    n = 6
    truth = [0.8, 0.4, 0.0, -0.2, -0.5, 0.3]
    games: list[Game] = []
    rankings: list[list[int]] = []
    for g in range(400):
        table = rng.sample(range(n), rng.choice([2, 3, 4, 5]))
        ranks = race(rng, [truth[b] for b in table])
        games.append((g, [(f"b{b}", r) for b, r in zip(table, ranks)]))
        rankings.append([b for _, b in sorted(zip(ranks, table))])
    names = [f"b{i}" for i in range(n)]
    mine = pl.fit(*pl.order_data(games, names).totals(), prior=0.0)
    theirs = choix.opt_rankings(n, rankings, alpha=0.0)
    theirs = [float(t) - float(sum(theirs)) / n for t in theirs]
    assert mine == pytest.approx(theirs, abs=1e-5)


def test_at_two_players_without_ties_it_is_the_pairwise_fit() -> None:
    rng = random.Random(2)
    games: list[Game] = []
    for g in range(200):
        a, b = rng.sample(["x", "y", "z"], 2)
        games.append((g // 2, [(a, 1), (b, 2)]))
    one = pl.rate(pl.order_data(games), samples=0)
    two = bt.rate(bt.pair_data(games), samples=0)
    assert [r.elo for r in one] == pytest.approx([r.elo for r in two], abs=1e-6)


def test_ties_share_a_place() -> None:
    """A tie is both bots chosen from the same remaining set (Breslow): two bots always tied rate equal."""
    assert pl.stages_of([(0, 1), (1, 1), (2, 3)]) == [(0b111, [0, 1])]
    assert pl.stages_of([(0, 2), (1, 1), (2, 2)]) == [(0b111, [1]), (0b101, [0, 2])]
    games: list[Game] = [(g, [("a", 1), ("b", 1), ("c", 3)]) for g in range(20)]
    ratings = {r.name: r.elo for r in pl.rate(pl.order_data(games), samples=0)}
    assert ratings["a"] == pytest.approx(ratings["b"], abs=1e-9)
    assert ratings["a"] > ratings["c"] + 200  # finite (the prior) and far ahead
    with pytest.raises(ValueError, match="twice"):
        pl.order_data([(0, [("a", 1), ("a", 2)])])


def test_anchor_and_seeded_bootstrap() -> None:
    rng = random.Random(3)
    games: list[Game] = []
    for block in range(30):
        for _ in range(3):
            ranks = race(rng, [0.5, 0.0, -0.5])
            games.append((block, [(name, r) for name, r in zip("abc", ranks)]))
    data = pl.order_data(games)
    one = pl.rate(data, anchor="b", elo=1000.0, samples=50, seed="s")
    assert one == pl.rate(data, anchor="b", elo=1000.0, samples=50, seed="s")
    anchored = next(r for r in one if r.name == "b")
    assert anchored.elo == anchored.low == anchored.high == 1000.0
    best = next(r for r in one if r.name == "a")
    assert best.low is not None and best.high is not None and best.low < best.elo < best.high
    with pytest.raises(ValueError, match="has no games"):
        pl.rate(data, anchor="zed")


def test_interval_helpers() -> None:
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert t_quantile_975(9) == pytest.approx(2.2622, abs=1e-3)
    assert t_quantile_975(100) == pytest.approx(1.9840, abs=1e-3)
    low, high = interval(10.0, [9.0, 10.0, 11.0, 10.0], 50, "normal")
    assert low < 10.0 < high and high - 10.0 == pytest.approx(10.0 - low)
    with pytest.raises(ValueError, match="expected one of"):
        interval(0.0, [0.0], 2, "bca")


def test_intervals_cover_the_truth_in_a_small_simulated_league() -> None:
    """Seeded leagues of 5 bots at 3 and 4 players (Plackett-Luce truth, balanced seatings, 4 deals).

    200 intervals on the pool-mean scale: at a true 95%, the count covered is
    Binomial(200, 0.95), 190 +/- 3.1; the band 178..200 fails a true 95% once
    in ~10,000 runs (benchmarks/bench_ratings.py measures it with 4,000 a size).
    """
    n = 5
    truth = [400 / bt.ELO_PER_NAT * (i / (n - 1) - 0.5) for i in range(n)]
    names = [f"b{i}" for i in range(n)]
    rng = random.Random(11)
    covered = total = 0
    for k, leagues in ((3, 20), (4, 20)):
        for league in range(leagues):
            games: list[Game] = []
            for table in itertools.combinations(range(n), k):
                for deal in range(4):
                    for index in design(k, "balanced"):
                        bots = [table[i] for i in seat_order(k, index)]
                        ranks = race(rng, [truth[b] for b in bots])
                        games.append(((table, deal), [(names[b], r) for b, r in zip(bots, ranks)]))
            ratings = pl.rate(pl.order_data(games, names), elo=0.0, samples=60, seed=league)
            for rating, strength in zip(ratings, truth):
                assert rating.low is not None and rating.high is not None
                total += 1
                covered += rating.low <= strength * bt.ELO_PER_NAT <= rating.high
    assert total == 200
    assert 178 <= covered <= 200, covered


def test_the_tables_rate_with_the_chosen_model() -> None:
    from skyjo_ref.execution.types import GameId
    from skyjo_ref.tournament.store import SeatResult, StoredGame
    from skyjo_ref.tournament.tables import compute

    rng = random.Random(5)
    stored = []
    for deal in range(8):
        for rotation in design(3, "balanced"):
            game = GameId(("a", "b", "c"), deal, rotation)
            ranks = race(rng, [{"a": 0.6, "b": 0.0, "c": -0.6}[bot] for bot in game.seats])
            seats = tuple(SeatResult(bot, 10 * r, r, 0, False, (10 * r,)) for bot, r in zip(game.seats, ranks))
            stored.append(StoredGame(game, seats))
    default = compute(stored, bootstrap=30).to_json()
    pairwise = compute(stored, bootstrap=30, model="bradley-terry", interval="percentile").to_json()
    assert default["rating"]["model"] == "plackett-luce" and default["rating"]["interval_method"] == "normal"
    assert pairwise["rating"]["model"] == "bradley-terry" and pairwise["rating"]["interval_method"] == "percentile"
    assert default["duplicate_blocks"] == pairwise["duplicate_blocks"] == 8
    assert default["bots"][0]["name"] == "a"
    assert default["bots"][0]["elo"] != pairwise["bots"][0]["elo"]  # two models, two fits of the same games
    seats = default["seat_effects"]["3"]
    assert [cell["seat"] for cell in seats] == [0, 1, 2] and all(cell["games"] == 48 for cell in seats)
    assert sum(cell["score"] for cell in seats) == pytest.approx(1.5)  # the shares beaten add to k/2


def test_the_benchmarks_held_out_scorer_on_a_hand_computed_case() -> None:
    """benchmarks/bench_ratings.py's scorer (bench_ratings_real.py's too): strengths w = (2, 1, 1)."""
    beta = [math.log(2.0), 0.0, 0.0]
    games = [
        ((0, 0), [("a", 1), ("b", 2), ("c", 3)]),
        ((0, 1), [("c", 1), ("a", 2), ("b", 2)]),  # a and b tied second (Breslow: both chosen from {a, b})
    ]
    score = held_out(games, ["a", "b", "c"], beta)
    # orders: a from {a,b,c} (2/4), b from {b,c} (1/2); c from {a,b,c} (1/4), a and b from {a,b} (2/3 x 1/3)
    assert score.order_loglik == pytest.approx(math.log(2 / 4 * 1 / 2) + math.log(1 / 4 * 2 / 3 * 1 / 3))
    # pairs: a>b 2/3, a>c 2/3, b>c 1/2; c>a 1/3, c>b 1/2, a=b half of each way
    expected = 2 * math.log(2 / 3) + math.log(1 / 2) + math.log(1 / 3) + math.log(1 / 2)
    expected += 0.5 * math.log(2 / 3) + 0.5 * math.log(1 / 3)
    assert score.pair_loglik == pytest.approx(expected)
    assert (score.games, score.pairs) == (2, 6)
    # decided: a-b, a-c (game 1, both right), c-a (game 2, wrong); b-c has equal strengths, a=b is a tie
    assert (score.wrong, score.decided) == (1, 3)


def test_both_fits_share_one_solver_that_reports_non_convergence() -> None:
    """An unconverged fit raises instead of returning its last guess; given its steps, it converges."""
    from skyjo_ref.stats import bradley_terry
    from skyjo_ref.stats.newton import NotConverged

    games = [(deal, [("a", 1), ("b", 2), ("c", 3)]) for deal in range(6)]
    games += [(deal + 6, [("b", 1), ("a", 2), ("c", 3)]) for deal in range(3)]
    chosen, stages = pl.order_data(games).totals()
    wins, played = bradley_terry.pair_data(games).totals()
    with pytest.raises(NotConverged, match="Plackett-Luce fit did not converge in 1 Newton steps"):
        pl.fit(chosen, stages, max_iter=1)
    with pytest.raises(NotConverged, match="Bradley-Terry fit did not converge in 1 Newton steps"):
        bradley_terry.fit(wins, played, max_iter=1)
    strengths = pl.fit(chosen, stages)
    assert strengths[0] > strengths[1] > strengths[2] and abs(sum(strengths)) < 1e-9
    pairwise = bradley_terry.fit(wins, played)
    assert pairwise[0] > pairwise[1] > pairwise[2] and abs(sum(pairwise)) < 1e-9
