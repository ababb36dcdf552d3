"""The match verdict at small samples: bounded intervals, and no verdict below a minimum of deal blocks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from skyjo_ref.match import MatchSpec, SeatSpec
from skyjo_ref.match.runner import builtin_seat, run_match
from skyjo_ref.match.stats import (
    MIN_BLOCKS,
    difference_interval,
    elo_of_score,
    los_of_blocks,
    mean_interval,
    summarize,
    t_quantile_95,
)


def _records(games: int, seed: str = "1") -> list[dict[str, Any]]:
    spec = MatchSpec(
        seats=(SeatSpec.of_builtin("greedy"), SeatSpec.of_builtin("random")), games=games, seed=seed, rotate_seats=True
    )
    records: list[dict[str, Any]] = []

    async def make(seat: SeatSpec, plan: Any, slot: int) -> Any:
        return builtin_seat(seat, spec.seed, plan, slot)

    async def sink(index: int, record: dict[str, Any]) -> None:
        records.append(record)

    asyncio.run(run_match(spec, make, sink, match_id="t"))
    return records


def test_two_deals_are_not_enough_to_tell_even_when_one_bot_won_every_game() -> None:
    stats, verdict = summarize(_records(4), ["greedy", "random"], ["greedy", "random"], [0, 1])
    assert stats[0].win_rate == 1.0  # greedy won all four (seed 1)
    assert verdict is not None and verdict.better is None and verdict.blocks == 2
    assert verdict.text.startswith("not enough games to tell")
    assert f"at least {MIN_BLOCKS} deals" in verdict.text
    assert verdict.win_rate_diff_ci is not None
    lo, hi = verdict.win_rate_diff_ci
    assert lo < hi <= 1.0  # never a zero-width "+100% to +100%"


def test_every_block_agreeing_gives_a_bounded_interval_that_is_not_a_point() -> None:
    interval = difference_interval([1.0] * 3)
    assert interval is not None
    mean, lo, hi = interval
    assert mean == 1.0 and hi == pytest.approx(1.0) and -1.0 <= lo < 0.6


@pytest.mark.parametrize("diffs", [[1.0, 1.0, 0.5, 1.0], [-1.0, -1.0], [0.9] * 6, [1.0, -1.0, 1.0, 1.0, 0.0]])
def test_the_win_rate_interval_never_leaves_what_is_possible(diffs: list[float]) -> None:
    interval = difference_interval(diffs)
    assert interval is not None
    _, lo, hi = interval
    assert -1.0 <= lo <= hi <= 1.0


def test_average_totals_use_a_t_interval_wider_than_the_normal_one_at_few_blocks() -> None:
    assert t_quantile_95(1) == pytest.approx(12.706)
    assert t_quantile_95(40) == pytest.approx(2.021, abs=0.002)
    assert t_quantile_95(1000) == pytest.approx(1.962, abs=0.002)
    interval = mean_interval([1.0, 3.0])
    assert interval is not None and interval[1] < 2.0 - 12.0  # 12.706 * 1.0


def test_enough_deals_give_a_verdict() -> None:
    _, verdict = summarize(_records(2 * MIN_BLOCKS + 8), ["greedy", "random"], ["greedy", "random"], [0, 1])
    assert verdict is not None and verdict.better == "greedy"


@pytest.mark.parametrize("seed", ["1", "2", "3"])
@pytest.mark.parametrize("bots", [("greedy", "random"), ("greedy", "greedy")])
def test_the_verdict_the_elo_interval_and_the_los_always_agree(seed: str, bots: tuple[str, str]) -> None:
    """One verdict: "better" exactly when the win-rate interval excludes 0, the Elo interval is above 0 and the
    LOS is above 97.5% (the same block scores and the same test); the text says all three."""
    spec = MatchSpec(
        seats=(SeatSpec.of_builtin(bots[0]), SeatSpec.of_builtin(bots[1])), games=16, seed=seed, rotate_seats=True
    )
    records: list[dict[str, Any]] = []

    async def make(seat: SeatSpec, plan: Any, slot: int) -> Any:
        return builtin_seat(seat, spec.seed, plan, slot)

    async def sink(index: int, record: dict[str, Any]) -> None:
        records.append(record)

    asyncio.run(run_match(spec, make, sink, match_id="t"))
    _, verdict = summarize(records, ["a", "b"], list(bots), [0, 1])
    assert verdict is not None and verdict.blocks >= MIN_BLOCKS
    assert verdict.win_rate_diff_ci is not None and verdict.elo_diff_ci is not None
    better = verdict.better is not None
    assert better == (verdict.win_rate_diff_ci[0] > 0) == (verdict.elo_diff_ci[0] > 0) == (verdict.los > 0.975)
    assert "Elo " in verdict.text and "LOS " in verdict.text and "average total" not in verdict.text


@pytest.mark.parametrize(
    "diffs",
    [[0.5] * 6, [1.0, 0.0, 0.5, 0.5, 0.0, 0.5, 0.5], [0.2] * 97, [0.25] * 62, [1.0, -1.0] * 10 + [1.0], [0.0] * 8],
)
def test_the_los_crosses_97_5_percent_exactly_where_the_wilson_interval_leaves_0(diffs: list[float]) -> None:
    interval = difference_interval(diffs)
    assert interval is not None
    mean, lo, _ = interval
    los = los_of_blocks(mean, len(diffs))
    assert (lo > 0) == (los > 0.975)
    assert (elo_of_score((1 + lo) / 2) > 0) == (lo > 0)
