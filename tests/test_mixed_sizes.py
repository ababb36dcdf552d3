"""A league of mixed table sizes (players_per_game: [2, 3]): one rating across sizes, and one per size."""

from __future__ import annotations

import json
from pathlib import Path

from skyjo_ref.tournament.config import load_config
from test_tournament_run import cli, setup_folder, write_config
from test_tournament_schedules import stored_tables

THREE = "  - {name: g1, builtin: greedy}\n  - {name: g2, builtin: greedy}\n  - {name: r, builtin: random}\n"


def test_the_config_takes_a_list_of_sizes(tmp_path: Path) -> None:
    path = tmp_path / "league.yaml"
    path.write_text(f"players_per_game: [3, 2]\nbots:\n{THREE}", encoding="utf-8")
    config = load_config(path)
    assert config.table_sizes == (2, 3) and config.players_per_game == 3
    assert config.tables() == [("g1", "g2"), ("g1", "g2", "r"), ("g1", "r"), ("g2", "r")]


def test_bad_size_lists_are_config_errors(tmp_path: Path) -> None:
    path = tmp_path / "league.yaml"
    for sizes, words in (("[2, 2]", "listed twice"), ("[2, 9]", "players_per_game[1]"), ("[]", "list of sizes")):
        path.write_text(f"players_per_game: {sizes}\nbots:\n{THREE}", encoding="utf-8")
        result = cli("tournament", str(path), cwd=tmp_path)
        assert result.returncode == 2 and words in result.stderr, result.stderr
    path.write_text(f"players_per_game: [2, 4]\nbots:\n{THREE}", encoding="utf-8")
    result = cli("tournament", str(path), cwd=tmp_path)
    assert result.returncode == 2 and "only 3 bots" in result.stderr, result.stderr


def test_a_mixed_league_rates_across_sizes_and_per_size(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    path = write_config(folder, THREE, deals=1)
    path.write_text(path.read_text().replace("players_per_game: 2", "players_per_game: [2, 3]"), encoding="utf-8")
    result = cli("tournament", str(path), "--json", "out.json", "--markdown", "out.md", "--plain", cwd=folder)
    assert result.returncode == 0, result.stderr
    data = json.loads((folder / "out.json").read_text())
    assert data["games"] == 3 * 2 + 6  # three 2-player tables of 2 seatings, one 3-player table of 6
    assert stored_tables(folder / "out" / "results.sqlite") == {"g1+g2", "g1+r", "g2+r", "g1+g2+r"}
    assert {b["name"] for b in data["bots"]} == {"g1", "g2", "r"}
    assert sorted(data["by_size"]) == ["2", "3"]
    assert {row["name"]: row["games"] for row in data["by_size"]["2"]} == {"g1": 4, "g2": 4, "r": 4}
    assert {row["name"]: row["games"] for row in data["by_size"]["3"]} == {"g1": 6, "g2": 6, "r": 6}
    assert "2 players: Plackett-Luce Elo from the 2-player games alone" in result.stdout
    assert "### 3 players" in (folder / "out.md").read_text()
    # each size's win % and average total, as --json gives them, in the plain lines and the Markdown
    assert "bot\tElo\tElo_low\tElo_high\tgames\twin%\tavg_total" in result.stdout
    markdown = (folder / "out.md").read_text()
    for row in data["by_size"]["3"]:
        win, total = f"{100 * row['win_rate']:.1f}", f"{row['avg_total']:.1f}"
        assert f"\t{row['games']}\t{win}\t{total}" in result.stdout, row
        assert f" | {row['games']} | {win} | {total} |" in markdown, row
