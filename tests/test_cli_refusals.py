"""Small command-line promises of issue 22: what a command refuses or says instead of doing something else quietly.
Real commands as subprocesses (Typer's runner where nothing is played)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from skyjo_ref.cli import errors
from skyjo_ref.cli.app import app
from test_tournament_run import cli, write_config
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent


def _refusal(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert isinstance(result.exception, errors.UserError), (result.exit_code, result.output, result.exception)
    assert result.exception.exit_code == errors.EXIT_USAGE
    return str(result.exception)


def test_match_with_one_bot_is_refused_and_says_how_to_play_it_against_itself() -> None:
    message = _refusal("match", "greedy", "--games", "4")
    assert message == (
        "match needs at least two bots, got one (greedy); to play a bot against itself, "
        "name it twice: skyjo-ref match greedy greedy"
    )


def test_ratings_of_a_config_file_names_the_output_folder_it_wants(tmp_path: Path) -> None:
    config = write_config(tmp_path, "  - {name: a, builtin: greedy}\n  - {name: b, builtin: random}\n")
    done = cli("ratings", "league.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: league.yaml is a tournament config; ratings wants the tournament's output folder: skyjo-ref ratings out"
    )
    other = tmp_path / "notes.txt"
    other.write_text("hello\n", encoding="utf-8")
    assert (
        "notes.txt: is a file: expected a tournament's output folder" in cli("ratings", str(other), cwd=tmp_path).stderr
    )
    assert config.exists()


def test_a_one_bot_config_does_not_suggest_an_invalid_players_per_game(tmp_path: Path) -> None:
    write_config(tmp_path, "  - {name: a, builtin: greedy}\n")
    done = cli("tournament", "league.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert "only 1 bot: expected at least 2 bots" in done.stderr
    assert "at most 1" not in done.stderr


def test_in_process_says_which_bots_it_leaves_as_processes(tmp_path: Path) -> None:
    command = f"cmd:{sys.executable} -m skyjo_bot run {ROOT / 'examples' / 'python' / 'minimal_bot.py'}"
    done = cli("match", command, "greedy", "--games", "2", "--seed", "1", "--in-process", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (
        f"note: --in-process plays only Python bot files in this process; {command} runs as its own process as before"
        in done.stderr.splitlines()
    )


def test_serve_prints_its_address_and_control_token_on_stdout_for_scripts() -> None:
    env = {**os.environ, "SKYJO_CONTROL_TOKEN": ""}
    server = subprocess.Popen(
        [sys.executable, "-m", "skyjo_ref", "serve", "--address", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
    finally:
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    found = re.fullmatch(r"SKYJO_REFEREE=(127\.0\.0\.1:\d+) SKYJO_CONTROL_TOKEN=(\S+)\n", line)
    assert found is not None, line
    assert f"listening on {found.group(1)}" in err and f"control token: {found.group(2)}" in err
    assert out == ""


def test_a_shard_that_would_play_nothing_is_refused_before_anything_runs(tmp_path: Path) -> None:
    write_config(tmp_path, "  - {name: a, builtin: greedy}\n  - {name: b, builtin: random}\n", deals=2)  # 2 blocks
    done = cli("tournament", "league.yaml", "--shard", "3/3", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "error: --shard 3/3: this league has 2 duplicate blocks (a table and a deal, never split), "
        "so shard 3 would play nothing: expected at most 2 shards"
    )
    assert not any(tmp_path.glob("out*"))


def test_merge_of_a_gate_s_store_with_a_tournament_s_says_which_is_which(tmp_path: Path) -> None:
    from skyjo_ref.tournament.store import Store

    with Store(tmp_path / "league") as store:
        store.bind({"rules": {}, "players_per_game": 2, "seed": 5})
    with Store(tmp_path / "gate") as store:
        store.bind({"format": "skyjo-gate/1", "rules": {}, "players_per_game": 2, "seed": 5, "alpha": 0.05})
    with Store(tmp_path / "gate2") as store:
        store.bind({"format": "skyjo-gate/1", "rules": {}, "players_per_game": 2, "seed": 5, "alpha": 0.1})
    done = cli("merge", "out", "league", "gate", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: gate cannot be merged with league: gate is a gate's store and league a tournament's; "
        "expected the shards of one gate or of one tournament"
    )
    done = cli("merge", "out", "gate", "gate2", cwd=tmp_path)
    assert done.returncode == 2
    assert "error: gate2 cannot be merged with gate: alpha differs (gate2 has 0.1, gate has 0.05)" in done.stderr


def test_a_gate_shard_s_progress_and_summary_show_no_verdict_and_its_own_stop_bounds(tmp_path: Path) -> None:
    args = ("gate", "random", "greedy", "--preset", "gain", "--option", "end_score=30", "--shard", "1/2")
    done = cli(*args, "--out", "s1", "--progress-every", "10", "--markdown", "summary.md", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    progress = [line for line in done.stderr.splitlines() if line.startswith("games ")]
    assert progress, done.stderr
    for line in progress:
        assert "(-1.47, 1.47)" in line and "shard 1/2: no verdict (the merged shards decide)" in line, line
        assert "accepted" not in line and "rejected" not in line, line
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## ⏸️ Gate shard 1/2 done: `random` vs `greedy`"), summary
    assert "| Verdict | **none**: shard 1/2" in summary and "rejected" not in summary
