"""What a person sees at 80 columns (the default terminal), through a real pseudo-terminal: the Elo table whole
(every Elo and games value as ``ratings --json`` has it), the gate's live line uncut."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pty_terminal import run_in_terminal
from test_tournament_run import cli, setup_folder, write_config

LONG_NAMES = ("greedy_baseline_from_last_year", "random_reference_player", "greedy_challenger_v2")


def test_the_elo_table_reads_whole_at_80_columns(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    bots = "".join(f"  - {{name: {name}, builtin: {name.split('_')[0]}}}\n" for name in LONG_NAMES)
    write_config(folder, bots, deals=2)
    played = cli("tournament", "league.yaml", cwd=folder)
    assert played.returncode == 0, played.stderr
    wanted = json.loads(cli("ratings", "out", "--json", "-", cwd=folder).stdout)["bots"]
    screen = run_in_terminal("ratings", "out", cwd=folder, columns=80)
    assert screen.code == 0, screen.text
    assert all(len(line) <= 80 for line in screen.lines), screen.text
    shown: dict[str, list[str]] = {}
    for line in screen.lines:
        cells = line.split()
        if cells and cells[0] in LONG_NAMES and cells[0] not in shown and len(cells) > 3:
            shown[cells[0]] = cells  # the Elo table's row (the head-to-head rows start with a number)
    assert set(shown) == set(LONG_NAMES), screen.text
    for bot in wanted:
        cells = shown[bot["name"]]
        assert cells[1] == f"{bot['elo']:.0f}", (bot, cells)  # the Elo, whole
        low, high = bot["elo_low"], bot["elo_high"]
        assert cells[2] == ("-" if low is None else f"{low:.0f}-{high:.0f}"), (bot, cells)  # its interval
        assert cells[3] == str(bot["games"]), (bot, cells)
        assert cells[4] == f"{bot['wins']:g}", (bot, cells)
    assert "…" not in screen.text  # nothing cut
    versions = screen.text[screen.text.index("versions") :]
    for bot in wanted:  # the version column gave way: each bot's version is beneath the table
        assert re.search(rf"{bot['name']} builtin:\w+@", versions), versions


#: A frame of the gate's live line: the numbers whole, as the full line prints them.
LIVE_LINE = re.compile(r"\d+ games .*LLR -?\d+\.\d\d \(-?\d+\.\d\d, ?-?\d+\.\d\d\) +Elo -?\d+\.\d ?\+/- ?\d+\.\d\b")


def test_the_gate_s_live_line_fits_80_columns_with_every_number_whole(tmp_path: Path) -> None:
    screen = run_in_terminal("gate", "greedy", "random", "--players-per-game", "3", "--max-games", "60", cwd=tmp_path)
    assert screen.code in (0, 1, 4), screen.text
    # Live redraws its line in place: each frame ends where the cursor moves or the line is erased
    frames = [f for f in re.split(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n", screen.raw) if "LLR" in f and "Verdict" not in f]
    live = [f for f in frames if not f.startswith("LLR:")]  # the final lines ("LLR: 2.9 (97.9%) ...") are apart
    assert live, screen.text
    for frame in live:
        assert len(frame) <= 80, frame
        assert LIVE_LINE.search(frame), frame
