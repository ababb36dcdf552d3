"""Gauntlet and sampled schedules: their balance properties, their config checks, and real runs through the CLI."""

from __future__ import annotations

import itertools
import json
import math
import random
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from skyjo_ref.tournament.config import ConfigError, load_config
from skyjo_ref.tournament.league import (
    ScheduleError,
    cyclic_blocks,
    full_meetings,
    gauntlet_tables,
    league_games,
    min_sample_tables,
    sampled_tables,
    schonheim_tables,
)
from skyjo_ref.tournament.shard import Shard
from test_tournament_run import cli, setup_folder, write_config


def names(n: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(n)]


def pair_counts(tables: list[tuple[str, ...]], bots: list[str]) -> Counter[tuple[str, str]]:
    counts: Counter[tuple[str, str]] = Counter({pair: 0 for pair in itertools.combinations(sorted(bots), 2)})
    for table in tables:
        counts.update(itertools.combinations(table, 2))
    return counts


@st.composite
def leagues(draw: st.DrawFn) -> tuple[int, int, int]:
    """(bots, players per table, meetings): 3 to 40 bots, 2 to 8 players, 1 to 3 meetings."""
    k = draw(st.integers(2, 8))
    n = draw(st.integers(max(3, k), 40))
    meetings = draw(st.integers(1, min(3, full_meetings(n, k))))
    return n, k, meetings


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(leagues(), st.integers(0, 3))
def test_a_sample_is_balanced_and_deterministic(league: tuple[int, int, int], seed: int) -> None:
    n, k, meetings = league
    bots = names(n)
    tables = sampled_tables(bots, k, meetings, seed)
    assert len(set(tables)) == len(tables) and all(len(set(t)) == k and list(t) == sorted(t) for t in tables)
    counts = pair_counts(tables, bots).values()
    assert min(counts) >= meetings and max(counts) - min(counts) <= 1  # every pair, within one
    assert min_sample_tables(n, k, meetings) <= len(tables) <= math.comb(n, k)
    assert len(set(Counter(bot for table in tables for bot in table).values())) == 1  # every bot, as many tables
    shuffled = bots[:]
    random.Random(seed).shuffle(shuffled)
    assert sampled_tables(shuffled, k, meetings, seed) == tables  # the config's order does not matter
    # every bot sits in every seat equally often: once per seat in each block it plays
    games = league_games(tables, 2)
    seats: Counter[tuple[str, int]] = Counter()
    for game in games:
        seats.update((bot, seat) for seat, bot in enumerate(game.seats))
    for bot in bots:
        per_seat = {seats[(bot, seat)] for seat in range(k)}
        assert len(per_seat) == 1


@pytest.mark.parametrize(("n", "k", "meetings"), [(100, 4, 1), (100, 7, 1), (100, 3, 2), (40, 8, 1)])
def test_big_leagues_are_balanced_and_near_the_lower_bound(n: int, k: int, meetings: int) -> None:
    bots = names(n)
    tables = sampled_tables(bots, k, meetings, 5)
    assert len(set(tables)) == len(tables)
    counts = pair_counts(tables, bots).values()
    assert min(counts) >= meetings and max(counts) - min(counts) <= 1
    # a cyclic design has n tables per base table: within one base table of the lower bound's
    assert schonheim_tables(n, k, meetings) <= len(tables) <= schonheim_tables(n, k, meetings) + 2 * n


@settings(max_examples=25, deadline=None)
@given(st.integers(3, 40), st.integers(2, 8), st.integers(1, 2), st.integers(0, 3))
def test_base_tables_cover_every_distance_within_one(n: int, k: int, meetings: int, seed: int) -> None:
    """The design's invariant: turning the base tables round Z_n gives every pair L or L + 1 tables."""
    if k > n or meetings > full_meetings(n, k):
        return
    blocks = cyclic_blocks(n, k, meetings, seed)
    if blocks is None:  # none found below the round robin's size: sampled_tables plays the round robin
        assert sampled_tables(names(n), k, meetings, seed) == list(itertools.combinations(names(n), k))
        return
    developed = {tuple(sorted((b + t) % n for b in block)) for block in blocks for t in range(n)}
    assert len(developed) == n * len(blocks)  # no table twice
    counts = Counter(pair for table in developed for pair in itertools.combinations(table, 2))
    values = [counts[pair] for pair in itertools.combinations(range(n), 2)]
    assert min(values) >= meetings and max(values) - min(values) <= 1


def test_shards_partition_a_sample() -> None:
    tables = sampled_tables(names(30), 4, 1, 3)
    games = league_games(tables, 2)
    shards = [Shard(i, 7).select(games) for i in range(1, 8)]
    assert sorted(g for shard in shards for g in shard) == sorted(games)  # every game in exactly one shard
    blocks = [len({g.block for g in shard}) for shard in shards]
    assert max(blocks) - min(blocks) <= 1
    for shard in shards:  # a block is never split
        per_block = Counter(g.block for g in shard)
        assert set(per_block.values()) == {4}


def test_a_sample_of_a_big_league_is_small_and_its_size_is_measured() -> None:
    tables = sampled_tables(names(30), 4, 1, 2026)
    counts = pair_counts(tables, names(30)).values()
    assert min(counts) >= 1 and max(counts) <= 2
    assert len(tables) <= 1.25 * min_sample_tables(30, 4, 1) < 27_405  # 73 is the least possible


def test_adding_a_bot_keeps_game_identities() -> None:
    """The sample is recomputed (the circle has one more point), but game keys name only their table."""
    before = sampled_tables(names(12), 3, 1, 7)
    after = sampled_tables(names(13), 3, 1, 7)
    old_keys = {g.key for g in league_games(before, 2)}
    new_keys = {g.key for g in league_games(after, 2)}
    # a kept table is the same games; a table no longer sampled is an extra (still counted) game
    for table in set(before) & set(after):
        keys = {g.key for g in league_games([table], 2)}
        assert keys <= old_keys and keys <= new_keys


@pytest.mark.parametrize("k", [2, 3, 4])
def test_a_gauntlet_seats_one_challenger_with_the_field(k: int) -> None:
    bots = names(6)
    challengers = ["bot01", "bot04"]
    tables = gauntlet_tables(bots, challengers, k)
    field = [b for b in bots if b not in challengers]
    assert len(tables) == 2 * math.comb(4, k - 1) == len(set(tables))
    for table in tables:
        assert sum(b in challengers for b in table) == 1
    counts = pair_counts(tables, bots)
    assert counts[("bot01", "bot04")] == 0  # challengers never meet
    assert {counts[(min(c, f), max(c, f))] for c in challengers for f in field} == {math.comb(3, k - 2)}
    with pytest.raises(ScheduleError, match="field has 2"):
        gauntlet_tables(bots[:3], ["bot00"], 4)


# ------------------------------------------------------------------------ config


def config_error(tmp_path: Path, extra: str, bots: int = 4, k: int = 2) -> str:
    body = "".join(f"  - {{name: b{i}, builtin: greedy}}\n" for i in range(bots))
    path = tmp_path / "league.yaml"
    path.write_text(f"players_per_game: {k}\n{extra}\nbots:\n{body}", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return str(info.value)


def test_config_mistakes_name_the_line_and_what_is_expected(tmp_path: Path) -> None:
    assert config_error(tmp_path, "schedule: gauntlett").endswith(
        ":2: schedule: unknown schedule 'gauntlett' (did you mean 'gauntlet'?): "
        "expected one of round_robin, gauntlet, sampled, adaptive"
    )
    assert "missing key 'challengers'" in config_error(tmp_path, "schedule: gauntlet")
    assert ":3: challengers[1]: 'b9' is not one of the bots" in config_error(
        tmp_path, "schedule: gauntlet\nchallengers: [b1, b9]"
    )
    assert "'b1' is listed twice" in config_error(tmp_path, "schedule: gauntlet\nchallengers: [b1, b1]")
    message = config_error(tmp_path, "schedule: gauntlet\nchallengers: [b0, b1, b2]", k=3)
    assert ":3: challengers: 3 challengers of 4 bots leave a field of 1" in message
    assert ":2: challengers: challengers belong to a gauntlet" in config_error(tmp_path, "challengers: [b1]")
    assert "missing key 'meetings'" in config_error(tmp_path, "schedule: sampled")
    message = config_error(tmp_path, "schedule: sampled\nmeetings: 4", k=3)
    assert ":3: meetings: expected an integer from 1 to 2" in message
    assert ":2: meetings: meetings size a sampled schedule" in config_error(tmp_path, "meetings: 1")


def test_a_config_reads_its_schedule(tmp_path: Path) -> None:
    path = tmp_path / "league.yaml"
    path.write_text(
        "players_per_game: 3\nschedule: sampled\nmeetings: 1\nbots:\n"
        + "".join(f"  - {{name: b{i}, builtin: greedy}}\n" for i in range(7)),
        encoding="utf-8",
    )
    config = load_config(path)
    assert config.schedule == "sampled" and config.meetings == 1
    assert config.tables() == sampled_tables(config.bot_names, 3, 1, config.seed)


# ------------------------------------------------------------------------ real runs


def stored_tables(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {row[0].rsplit("/", 2)[0] for row in conn.execute("SELECT key FROM games")}


BOTS = """\
  - {name: low, python: bots/low.py}
  - {name: greedy, builtin: greedy}
  - {name: random, builtin: random}
  - {name: greedy2, builtin: greedy}
"""


def test_a_gauntlet_through_the_cli(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    path = write_config(folder, BOTS, k=2, deals=1)
    path.write_text(path.read_text().replace("bots:\n", "schedule: gauntlet\nchallengers: [low]\nbots:\n"))
    result = cli("tournament", str(path), "--json", "out.json", "--plain", cwd=folder)
    assert result.returncode == 0, result.stderr
    data = json.loads((folder / "out.json").read_text())
    assert data["games"] == 3 * 2 and data["tournament"]["scheduled"] == 6
    assert stored_tables(folder / "out" / "results.sqlite") == {"greedy+low", "low+random", "greedy2+low"}
    assert data["head_to_head"]["greedy"]["random"]["score"] is None  # the field never meets itself
    assert all(bot["elo"] is not None for bot in data["bots"])


def test_a_sample_through_the_cli_then_a_new_bot(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    six = BOTS + "  - {name: random2, builtin: random}\n  - {name: greedy3, builtin: greedy}\n"
    path = write_config(folder, six, k=3, deals=1)
    text = path.read_text().replace("bots:\n", "schedule: sampled\nmeetings: 1\nseating: rotations\nbots:\n")
    path.write_text(text)
    first = cli("tournament", str(path), "--json", "first.json", "--plain", cwd=folder)
    assert first.returncode == 0, first.stderr
    config = load_config(path)
    tables = {"+".join(t) for t in config.tables()}
    db = folder / "out" / "results.sqlite"
    assert stored_tables(db) == tables and len(tables) < math.comb(6, 3)
    played = json.loads((folder / "first.json").read_text())["games"]
    assert played == 3 * len(tables)

    path.write_text(text + "- {name: random3, builtin: random}\n")  # a seventh bot joins
    second = cli("tournament", str(path), "--json", "second.json", "--plain", cwd=folder)
    assert second.returncode == 0, second.stderr
    grown = {"+".join(t) for t in load_config(path).tables()}
    data = json.loads((folder / "second.json").read_text())
    assert stored_tables(db) == tables | grown  # nothing lost, nothing played twice
    assert data["games"] == 3 * len(tables | grown)  # every stored game is rated
    assert data["tournament"]["already_stored"] == 3 * len(tables & grown)
    assert data["tournament"]["played_now"] == 3 * len(grown - tables)


def test_a_balanced_league_at_three_players_then_the_rotations_it_contains(tmp_path: Path) -> None:
    """Balanced: 6 games a block, stored with the design's seats; the rotations design finds them all played."""
    folder = setup_folder(tmp_path)
    three = "  - {name: g1, builtin: greedy}\n  - {name: g2, builtin: greedy}\n  - {name: r, builtin: random}\n"
    path = write_config(folder, three, k=3, deals=1)
    first = cli("tournament", str(path), "--json", "out.json", "--plain", cwd=folder)
    assert first.returncode == 0, first.stderr
    db = folder / "out" / "results.sqlite"
    with sqlite3.connect(db) as conn:
        seats = {rotation: json.loads(s) for rotation, s in conn.execute("SELECT rotation, seats FROM games")}
    assert sorted(seats) == list(range(6))
    after = Counter((s[i], s[(i + 1) % 3]) for s in seats.values() for i in range(3))
    assert set(after.values()) == {3} and len(after) == 6  # every ordered pair neighbours 3 times
    path.write_text("seating: rotations\n" + path.read_text(), encoding="utf-8")
    second = cli("tournament", str(path), "--json", "again.json", "--plain", cwd=folder)
    assert second.returncode == 0, second.stderr
    data = json.loads((folder / "again.json").read_text())
    assert data["tournament"]["played_now"] == 0 and data["tournament"]["scheduled"] == 3
