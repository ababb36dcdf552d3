"""Output for CI pages (issue 10 §4): --markdown, --fail-on, JSON on every exit, thinned progress lines.

Real CLI subprocesses and real SQLite stores; the 100-bot store is built in-process from real
engine games (tests/report_stores.py) so the size check stays fast.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from report_stores import round_robin_store
from skyjo_ref.cli.markdown import MARKDOWN_LIMIT, fit
from skyjo_ref.tournament.incidents import parse_fail_on
from test_tournament_run import setup_folder, write_config


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "COLUMNS": "200", **(env or {})}
    full.pop("GITHUB_STEP_SUMMARY", None) if env is None or "GITHUB_STEP_SUMMARY" not in env else None
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=110
    )


def one_line(text: str) -> str:
    return " ".join(text.split())


def hundred_bot_store(folder: Path) -> None:
    """100 bots, one deal of every pairing (9,900 games), with a forfeit, strikes and a crash injected."""
    bots = [f"bot{i:03d}-with-a-long-name" for i in range(100)]
    store = round_robin_store(folder, bots, deals=1, pool=2, rating={"anchor": None, "elo": 1500, "bootstrap": 0})
    with store.lock, store.db:
        store.db.execute(
            "UPDATE seats SET forfeit = 1 WHERE rowid = (SELECT MIN(rowid) FROM seats WHERE bot = ?)", (bots[7],)
        )
        store.db.execute(
            "UPDATE seats SET strikes = 2 WHERE rowid = (SELECT MIN(rowid) FROM seats WHERE bot = ?)", (bots[42],)
        )
    store.add_fault(bots[99], "crash", "process 1 exited with code 3; restarted", None)
    store.close()


def test_a_100_bot_summary_fits_githubs_limit_and_names_the_faulty_bots(tmp_path: Path) -> None:
    hundred_bot_store(tmp_path / "league")
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    done = cli(
        "ratings", "league", "--markdown", str(summary), "--fail-on", "forfeit,crash",
        cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": str(summary)},
    )  # fmt: skip
    assert done.returncode == 5, done.stderr
    message = one_line(done.stderr)
    assert "--fail-on forfeit,crash:" in message
    assert "bot bot007-with-a-long-name: 1 forfeit" in message and "bot bot099-with-a-long-name: 1 crash" in message
    assert "bot042" not in message  # struck, but strikes were not asked for
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## ")  # the step summary is appended to, never replaced
    assert len(text.encode("utf-8")) < MARKDOWN_LIMIT / 4
    assert (
        "> ⚠️ **3 bots with faults**: `bot007-with-a-long-name` 1 forfeit; `bot042-with-a-long-name` 2 strikes;" in text
    )
    assert "> ❌ **--fail-on forfeit,crash:" in text
    assert "| 1 | `bot" in text and "| 100 |" in text  # leaderboard ranks, and the matrix's numbered columns
    matrix = [line for line in text.splitlines() if line.startswith("| ") and line.count("|") > 100]
    assert len(matrix) == 101 and matrix[0].startswith("| # | bot | 1 | 2 |")  # header + one row per bot
    assert "### Faults and forfeits" in text and "process 1 exited with code 3" in text

    # without --fail-on it passes; a file that is not the step summary is replaced; - is stdout alone
    again = cli("ratings", "league", "--markdown", str(summary), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert summary.read_text(encoding="utf-8").startswith("## league: Elo")
    alone = cli("ratings", "league", "--markdown", "-", cwd=tmp_path)
    assert alone.returncode == 0 and alone.stdout.startswith("## league: Elo") and "\t" not in alone.stdout


def test_fit_cuts_at_a_line_and_says_so() -> None:
    text = "".join(f"| row {i} | {'x' * 100} |\n" for i in range(20_000))
    cut = fit(text)
    assert len(cut.encode("utf-8")) <= MARKDOWN_LIMIT and cut.endswith("the JSON and the report have everything)*\n")
    assert re.search(r"\| row \d+ \| x+ \|\n\n\*\(summary cut here", cut)
    assert fit("short\n") == "short\n"


def test_fail_on_takes_any_combination_and_refuses_other_words(tmp_path: Path) -> None:
    assert parse_fail_on(["forfeit,crash", "strikes"]) == {"forfeit", "crash", "strike"}
    assert parse_fail_on(None) == frozenset()
    with pytest.raises(ValueError, match="'timeouts' is not one of forfeit, strike, crash"):
        parse_fail_on(["forfeit,timeouts"])
    write_config(tmp_path, "  - {name: a, builtin: greedy}\n  - {name: b, builtin: random}\n", deals=1)
    refused = cli("tournament", "league.yaml", "--fail-on", "bugs", cwd=tmp_path)
    assert refused.returncode == 2 and "--fail-on 'bugs'" in refused.stderr and "Traceback" not in refused.stderr
    assert not (tmp_path / "out").exists()  # refused before anything was played


def test_a_piped_league_writes_a_progress_line_every_n_games_not_one_per_game(tmp_path: Path) -> None:
    bots = "  - {name: a, builtin: greedy}\n  - {name: b, builtin: random}\n  - {name: c, builtin: random}\n"
    write_config(tmp_path, bots, deals=5)  # 3 tables x 5 deals x 2 seatings = 30 games
    done = cli("tournament", "league.yaml", "--progress-every", "10", "--progress-seconds", "3600", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    progress = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert [line.split("]")[0] for line in progress] == ["[10/30", "[20/30", "[30/30"]
    assert "100.0% done; 0 strikes, 0 forfeits" in progress[-1]
    every = cli("tournament", "league.yaml", "-o", "each", "--progress-every", "1", cwd=tmp_path)
    assert len([line for line in every.stderr.splitlines() if line.startswith("[")]) == 30
    assert "won by" in every.stderr  # one line per game names the seats


def test_a_forfeiting_crashing_bot_fails_the_league_with_exit_5_and_the_summary_shows_it(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    bots = "  - {name: greedy, builtin: greedy}\n  - {name: crashy, python: bots/low.py, env: {CRASH_EVERY: 3}}\n"
    config = write_config(folder, bots, deals=1)
    config.write_text(config.read_text().replace("grace_ms: 5000", "grace_ms: 1000"))
    args = ("tournament", "league.yaml", "--json", "t.json", "--markdown", "s.md", "--fail-on", "forfeit")
    done = cli(*args, cwd=folder)
    assert done.returncode == 5, done.stderr
    assert "--fail-on forfeit: bot crashy: 2 forfeits" in one_line(done.stderr)
    data = json.loads((folder / "t.json").read_text())
    assert data["tournament"]["exit_code"] == 5 and data["tournament"]["stopped"] is None
    (crashy,) = data["tournament"]["incidents"]
    assert crashy["bot"] == "crashy" and crashy["forfeits"] == 2 and crashy["crashes"] >= 2
    text = (folder / "s.md").read_text()
    assert "> ⚠️ **1 bot with faults**: `crashy` 2 forfeits" in text
    assert re.search(r"\| 2 \| `crashy` \|.*\| ⚠️ 2 forfeits, \d+ crashes", text)
    # the same store, checked again without playing: ratings and merge fail on it the same way
    assert cli("ratings", "out", "--fail-on", "crash", cwd=folder).returncode == 5
    merged = cli("merge", "m", "out", "--fail-on", "strike,forfeit", "--markdown", "m.md", cwd=folder)
    assert merged.returncode == 5 and "bot crashy" in merged.stderr
    assert "(merged from 1 stores)" in (folder / "m.md").read_text()


def test_a_league_that_stops_early_still_writes_its_json_and_summary_saying_why(tmp_path: Path) -> None:
    bots = "  - {name: aaa, builtin: greedy}\n  - {name: bbb, builtin: random}\n"
    write_config(tmp_path, bots, deals=1)
    assert cli("tournament", "league.yaml", cwd=tmp_path).returncode == 0
    broken = '  - name: broken\n    command: [sh, -c, "echo no luck; exit 4"]\n'
    write_config(tmp_path, bots + broken, deals=1)
    done = cli("tournament", "league.yaml", "--json", "t.json", "--markdown", "s.md", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    data = json.loads((tmp_path / "t.json").read_text())
    run = data["tournament"]
    assert run["exit_code"] == 3 and "bot 'broken'" in run["stopped"] and "exited with code 4" in run["stopped"]
    assert run["played_now"] == 0 and run["already_stored"] == 2 and run["scheduled"] == 6
    assert data["games"] == 2
    text = (tmp_path / "s.md").read_text()
    assert "> ⏸️ **Stopped before the end**: bot 'broken'" in text and "### Leaderboard" in text


RAISER = """\
from skyjo_bot import Bot


class Raiser(Bot):
    def decide(self, view):
        raise RuntimeError("no idea")
"""


def test_the_gate_fails_on_a_forfeiting_bot_and_its_summary_lists_the_faults(tmp_path: Path) -> None:
    (tmp_path / "raiser.py").write_text(RAISER, encoding="utf-8")
    args = ("gate", "greedy", "raiser.py", "--preset", "gain", "--option", "end_score=30", "--out", "g")
    done = cli(*args, "--fail-on", "forfeit", "--markdown", "s.md", "--json", "g.json", "--progress-every", "10",
               "--progress-seconds", "3600", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 5, done.stderr  # accepted, but the baseline forfeited
    counted = [int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("games ")]
    steps = [b - a for a, b in itertools.pairwise(counted)]
    assert counted and all(step >= 10 for step in steps[:-1]) and steps[-1] > 0  # thinned; the last one shown
    assert "--fail-on forfeit: bot raiser:" in one_line(done.stderr)
    data = json.loads((tmp_path / "g.json").read_text())
    assert data["verdict"] == "accepted" and data["exit_code"] == 5
    assert data["incidents"][0]["bot"] == "raiser" and data["incidents"][0]["forfeits"] > 0
    text = (tmp_path / "s.md").read_text()
    assert text.startswith("## ✅ Gate accepted") and text.index("Verdict") < text.index("1 bot with faults")
    assert "> ❌ **--fail-on forfeit: bot raiser:" in text and "| `raiser` |" in text
    assert "RuntimeError" in text  # the first failure, with what the bot said
    shown = cli("ratings", "g", "--markdown", "-", cwd=tmp_path)  # a gate's store: its verdict comes first
    assert shown.returncode == 0 and shown.stdout.startswith("## ✅ Gate accepted"), shown.stderr
    assert shown.stdout.index("Verdict") < shown.stdout.index("### Leaderboard")
    plain = cli(*args, "--markdown", "s.md", cwd=tmp_path)  # resumed: same verdict, no --fail-on: exit 0
    assert plain.returncode == 0, plain.stderr
    assert "`raiser`" in (tmp_path / "s.md").read_text()
    refused = cli(*args, "--fail-on", "bogus", cwd=tmp_path)
    assert refused.returncode == 2 and "--fail-on 'bogus'" in refused.stderr


def test_match_json_says_whether_and_why_it_stopped(tmp_path: Path) -> None:
    done = cli("match", "greedy", "random", "--games", "2", "--seed", "1", "--option", "end_score=30",
               "--json", "m.json", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "m.json").read_text())
    assert data["stopped"] is None and data["exit_code"] == 0 and data["games"] == 2


def test_json_and_markdown_cannot_both_be_stdout(tmp_path: Path) -> None:
    write_config(tmp_path, "  - {name: a, builtin: greedy}\n  - {name: b, builtin: random}\n", deals=1)
    for args in (("tournament", "league.yaml"), ("gate", "greedy", "random", "--out", "g")):
        refused = cli(*args, "--json", "-", "--markdown", "-", cwd=tmp_path)
        assert refused.returncode == 2 and "only one of them can be stdout" in refused.stderr, refused.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "g").exists()


def test_an_interrupted_league_writes_its_json_and_summary_with_exit_130(tmp_path: Path) -> None:
    bots = "  - {name: a, builtin: greedy}\n  - {name: b, builtin: random}\n  - {name: c, builtin: random}\n"
    write_config(tmp_path, bots, deals=200)  # 1,200 games: far from done when the signal comes
    args = ["tournament", "league.yaml", "--progress-every", "1", "--json", "t.json", "--markdown", "s.md"]
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "skyjo_ref", *args], cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stderr is not None
    for line in proc.stderr:  # the first finished game's line: games are stored
        if line.startswith("["):
            break
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 130, rest
    run = json.loads((tmp_path / "t.json").read_text())["tournament"]
    assert run["stopped"] == "interrupted" and run["exit_code"] == 130
    assert 1 <= run["played_now"] < run["scheduled"] == 1200
    assert "> ⏸️ **Stopped before the end**: interrupted" in (tmp_path / "s.md").read_text()
