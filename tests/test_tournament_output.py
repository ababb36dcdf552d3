"""Tournament output for people and for scripts: a readable head-to-head at 12 and 40 bots, plain lines in pipes,
stdout holding the JSON alone with ``--json -``, each failing bot's first failure, and exit 3 for a bot that
cannot run."""

from __future__ import annotations

import io
import itertools
import json
import textwrap
from pathlib import Path

import pytest
from rich.console import Console
from skyjo_ref.cli.tournament_view import render_tables
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import SeatResult, StoredGame
from skyjo_ref.tournament.tables import Tables, compute
from test_tournament_run import cli, setup_folder, write_config

BOX = set("│┃━─┏┓┗┛┡┩╇╋┼")


def league(n: int) -> Tables:
    """``n`` bots with realistic names, every pair playing one 2-seat duplicate block."""
    names = [f"team{i:02d}_mcts_rollouts_v{i % 3 + 1}" for i in range(n)]
    games = []
    for a, b in itertools.combinations(range(n), 2):
        for rotation in range(2):
            first, second = (a, b) if rotation == 0 else (b, a)
            win_first = (a + b + rotation) % 3 != 0
            seats = (
                SeatResult(names[first], 40 if win_first else 90, 1 if win_first else 2, 0, False, (40,)),
                SeatResult(names[second], 90 if win_first else 40, 2 if win_first else 1, 0, False, (90,)),
            )
            games.append(StoredGame(GameId((names[first], names[second]), 0, rotation), seats))
    return compute(games, bots=names, bootstrap=0)


@pytest.mark.parametrize("bots", [12, 40])
def test_the_head_to_head_matrix_is_readable_on_a_terminal(bots: int) -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, force_terminal=True, color_system=None)
    tables = league(bots)
    render_tables(console, tables, title="league: Elo")
    text = buffer.getvalue()
    assert all(len(line) <= 120 for line in text.splitlines())
    for i, row in enumerate(tables.rows):
        assert f"{i + 1} {row.name}" in text  # the numbered rows are the legend, names in full
    assert "…" not in text  # nothing cut


def test_piped_tables_are_tab_separated_lines_without_boxes() -> None:
    buffer = io.StringIO()
    tables = league(3)
    render_tables(Console(file=buffer, width=80), tables, title="league: Elo")
    text = buffer.getvalue()
    assert not BOX & set(text)
    lines = text.splitlines()
    header = lines.index("bot\tElo\tElo_low\tElo_high\tgames\twins\twin%\tavg_total\tavg_round\tstrikes\tforfeits")
    assert lines[header + 1].split("\t")[0] == tables.rows[0].name
    assert "#\tbot\t1\t2\t3" in lines


RAISING = textwrap.dedent(
    """\
    from skyjo_bot import Bot


    class Flaky(Bot):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def decide(self, view):
            self.calls += 1
            if self.calls == 3:
                raise KeyError("no such card")
            return view.legal_actions[0]
    """
)


def test_json_to_stdout_is_json_alone_and_a_failing_bot_shows_its_first_failure(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    (folder / "bots" / "flaky.py").write_text(RAISING, encoding="utf-8")
    write_config(folder, "  - {name: greedy, builtin: greedy}\n  - {name: flaky, python: bots/flaky.py}\n", deals=1)
    result = cli("tournament", "league.yaml", "--json", "-", cwd=folder)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)  # nothing else on stdout
    assert {b["name"] for b in data["bots"]} == {"greedy", "flaky"}
    message = " ".join(result.stderr.split())
    assert "note: bot flaky: first failure in game" in message
    assert "KeyError: 'no such card' (at" in message and "flaky.py:12 in decide)" in message
    assert f"its output: {folder / 'out' / 'logs'}/flaky-*.log" in message
    assert "head to head" in result.stderr  # the tables went to stderr


def test_a_python_bot_that_fails_at_import_stops_the_tournament_with_exit_3(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    (folder / "bots" / "needs.py").write_text(
        "import no_such_module_here\nfrom skyjo_bot import Bot\n\n\nclass Needs(Bot):\n    pass\n", encoding="utf-8"
    )
    write_config(folder, "  - {name: greedy, builtin: greedy}\n  - {name: needs, python: bots/needs.py}\n", deals=1)
    result = cli("tournament", "league.yaml", cwd=folder)
    message = " ".join(result.stderr.split())
    assert result.returncode == 3, result.stderr
    assert "bot 'needs' cannot run" in message and "no_such_module_here" in message
