"""``skyjo-ref gate``: real processes, a real referee, real SQLite — verdicts, exit codes, resume, outputs."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_tournament_run import child_pids, holding, stored_count

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = str(ROOT / "examples" / "python" / "minimal_bot.py")
SHORT = ("--option", "end_score=30")  # short games: the tests stay fast
GATE_KEYS = {
    "candidate",
    "baseline",
    "elo0",
    "elo1",
    "alpha",
    "beta",
    "bounds",
    "llr",
    "pentanomial",
    "games",
    "elo",
    "elo_ci",
    "verdict",
    "history",
}


def gate(*args: str, cwd: Path, timeout: float = 110) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "gate", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def store_info(folder: Path) -> dict[str, Any]:
    with sqlite3.connect(folder / "results.sqlite") as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'info.gate'").fetchone()
    return dict(json.loads(row[0]))


def test_a_weaker_candidate_is_rejected_with_exit_1_json_markdown_and_store_info(tmp_path: Path) -> None:
    args = ("random", "greedy", "--preset", "gain", *SHORT, "--out", "g", "--json", "r.json", "--markdown", "s.md")
    done = gate(*args, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert "Ptnml(0-2): [" in out and "LLR: -" in out and "(-2.94, 2.94) [0.00, 20.00]" in out
    assert "Elo: " in out and "nElo: " in out and "LOS: " in out and "Verdict: REJECTED" in out
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["verdict"] == "rejected" and data["exit_code"] == 1 and data["played_now"] >= data["games"]
    assert sum(data["pentanomial"]) * 2 == data["games"] and data["llr"] < data["stop_bounds"][0]
    info = store_info(tmp_path / "g")
    assert GATE_KEYS <= set(info)
    assert info["candidate"] == "random" and info["baseline"] == "greedy" and info["verdict"] == "rejected"
    assert len(info["history"]) == info["games"] // 2 and info["history"][-1] == [info["games"], info["llr"]]
    assert info["bounds"] == pytest.approx([-2.944439, 2.944439]) and info["elo_ci"][0] <= info["elo"]
    summary = (tmp_path / "s.md").read_text()
    assert summary.startswith("## ❌ Gate rejected: `random` vs `greedy`")
    assert summary.index("Verdict") < summary.index("Ptnml")

    # a rerun plays nothing and says the same
    again = gate(*args, cwd=tmp_path)
    assert again.returncode == 1, again.stderr
    rerun = json.loads((tmp_path / "r.json").read_text())
    assert rerun["played_now"] == 0
    for key in ("verdict", "games", "llr", "pentanomial", "history", "elo"):
        assert rerun[key] == data[key]


def test_a_stronger_candidate_is_accepted_with_exit_0_and_json_alone_on_stdout(tmp_path: Path) -> None:
    done = gate("greedy", "random", "--preset", "gain", *SHORT, "--json", "-", "--luck-adjust", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)  # nothing else on stdout
    assert data["verdict"] == "accepted" and data["luck_adjusted"] is True and data["elo"] > 100
    assert "Verdict: ACCEPTED" in done.stderr
    assert (tmp_path / "runs" / "gate-greedy-vs-random" / "results.sqlite").is_file()  # the default store


def test_max_games_without_a_verdict_exits_4(tmp_path: Path) -> None:
    done = gate("random", "greedy", "--preset", "gain", *SHORT, "--max-games", "4", "--json", "r.json", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["verdict"] == "inconclusive" and data["games"] == 4
    assert "INCONCLUSIVE" in done.stdout
    # a higher cap continues the same test
    more = gate("random", "greedy", "--preset", "gain", *SHORT, "--json", "r.json", cwd=tmp_path)
    assert more.returncode == 1, more.stderr
    assert (
        json.loads((tmp_path / "r.json").read_text())["played_now"]
        < json.loads((tmp_path / "r.json").read_text())["games"] + 4
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("greedy", "random", "--elo0", "10", "--elo1", "5"), "elo1 must be greater than elo0"),
        (("greedy", "random", "--elo0", "10"), "give both --elo0 and --elo1"),
        (("greedy", "random", "--alpha", "0.7"), "alpha and beta must be between 0 and 0.5"),
        (("greedy", "random", "--preset", "win"), "--preset 'win': expected one of gain, no-regression"),
        (("greedy", "nobot.py"), "baseline: no such file 'nobot.py'"),
        (("greedy", "remote:x"), "remote bots are not supported yet"),
        (("greedy", "random", "--luck-adjust", "--elo-model", "normalized"), "--luck-adjust works with"),
        (("greedy", "random", "--elo-model", "bayes"), "--elo-model 'bayes': expected one of logistic, normalized"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    done = gate(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert message in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_store_of_another_gate_is_refused(tmp_path: Path) -> None:
    first = gate("random", "greedy", "--preset", "gain", *SHORT, "--max-games", "2", "--out", "g", cwd=tmp_path)
    assert first.returncode == 4, first.stderr
    other = gate("random", "greedy", "--elo0", "0", "--elo1", "30", *SHORT, "--out", "g", cwd=tmp_path)
    assert other.returncode == 2
    text = " ".join(other.stderr.split())
    assert "holds results played with other settings" in text and "elo1: stored 20.0, this gate has 30.0" in text


def test_an_sdk_bot_file_gate_killed_with_9_resumes_to_the_same_verdict(tmp_path: Path) -> None:
    candidate = tmp_path / "minimal_bot.py"  # plays as the minimal bot; holds when told (HOLD_AFTER)
    candidate.write_text(holding(Path(MINIMAL).read_text(encoding="utf-8")), encoding="utf-8")
    # --isolation none: the candidate is told to hold by the environment and says so with a file
    args = (str(candidate), "greedy", "--elo0", "-300", "--elo1", "-150", *SHORT, "-j", "2", "--isolation", "none")
    whole = gate(*args, "--out", "whole", "--json", "whole.json", cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr
    reference = json.loads((tmp_path / "whole.json").read_text())
    assert reference["verdict"] == "accepted" and reference["games"] >= 12

    db = tmp_path / "killed" / "results.sqlite"
    held = tmp_path / "holding"
    proc = subprocess.Popen(  # the candidate holds after 4 games: the kill comes mid-run, never after the verdict
        [sys.executable, "-m", "skyjo_ref", "gate", *args, "--out", "killed"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "HOLD_AFTER": "4", "HOLD_FILE": str(held)},
    )
    deadline = time.monotonic() + 90  # a failure detector: the gate cannot end by itself
    while not (held.exists() and stored_count(db) >= 4) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "the gate ended before the test killed it"
    assert held.exists() and stored_count(db) >= 4, "no game held and four stored within 90 s"
    bots = child_pids(proc.pid)  # bot processes run in their own process groups
    proc.kill()
    for pid in bots:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait(timeout=30)
    before = stored_count(db)
    assert 4 <= before < reference["games"], "the kill came too late to test a resume"

    resumed = gate(*args, "--out", "killed", "--json", "resumed.json", cwd=tmp_path)  # no HOLD_AFTER: to the end
    assert resumed.returncode == 0, resumed.stderr
    again = json.loads((tmp_path / "resumed.json").read_text())
    for key in ("verdict", "games", "llr", "pentanomial", "history", "elo", "elo_ci"):
        assert again[key] == reference[key], key
    assert again["stored_games"] >= again["games"] and again["played_now"] <= again["stored_games"] - before


def test_ctrl_c_exits_130_and_writes_json(tmp_path: Path) -> None:
    """SIGINT at a point the test sees: two games stored and the candidate holding a game, so none can end."""
    candidate = tmp_path / "minimal_bot.py"
    candidate.write_text(holding(Path(MINIMAL).read_text(encoding="utf-8")), encoding="utf-8")
    held = tmp_path / "holding"
    forever = ("--decision-ms", "86400000", "--bank-ms", "86400000")  # a held decision never times out
    args = (str(candidate), "greedy", *SHORT, *forever, "--out", "g", "--json", "r.json", "--isolation", "none")
    proc = subprocess.Popen(
        [sys.executable, "-m", "skyjo_ref", "gate", *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HOLD_AFTER": "2", "HOLD_FILE": str(held)},
    )
    db = tmp_path / "g" / "results.sqlite"
    deadline = time.monotonic() + 90  # a failure detector: the gate cannot end by itself
    while not (held.exists() and stored_count(db) >= 2) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "the gate ended before the test interrupted it"
    assert held.exists() and stored_count(db) >= 2, "no game held and two stored within 90 s"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted: finished games are kept in g" in " ".join(err.split())
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["exit_code"] == 130 and data["stopped"] == "interrupted" and data["stored_games"] >= 2


def test_in_process_reaches_the_verdict_of_bot_processes_and_keeps_prints_off_stdout(tmp_path: Path) -> None:
    """--in-process plays the same games (same verdict, same counts); a bot's print() goes to stderr."""
    noisy = tmp_path / "noisy.py"
    source = Path(MINIMAL).read_text(encoding="utf-8")
    noisy.write_text(source.replace("    def decide(", "    def _quiet(", 1) + NOISY_DECIDE, encoding="utf-8")
    args = (str(noisy), "greedy", "--elo0", "-300", "--elo1", "-150", *SHORT)
    over_grpc = gate(*args, "--out", "grpc", "--json", "grpc.json", cwd=tmp_path)
    assert over_grpc.returncode == 0, over_grpc.stderr
    local = gate(*args, "--in-process", "--out", "local", "--json", "-", cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    ran_local = json.loads(local.stdout)  # stdout is the JSON alone: the bot's prints went elsewhere
    ran_grpc = json.loads((tmp_path / "grpc.json").read_text())
    for key in ("verdict", "games", "pentanomial", "llr"):
        assert ran_local[key] == ran_grpc[key], key
    assert "deciding" in local.stderr


#: A decide that prints and then plays as the minimal bot does (appended to its class).
NOISY_DECIDE = """
    def decide(self, view):
        print("deciding")
        return self._quiet(view)
"""


def test_markdown_on_stdout_has_stdout_alone_as_json_does(tmp_path: Path) -> None:
    done = gate("random", "greedy", "--preset", "gain", *SHORT, "--max-games", "2", "--markdown", "-", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert done.stdout.startswith("## ") and "Gate inconclusive" in done.stdout  # the summary alone
    assert "Gate: random (candidate)" not in done.stdout and "Gate: random (candidate)" in done.stderr


def test_the_readme_s_next_step_at_4_players_gets_its_own_folder(tmp_path: Path) -> None:
    """A 2-player gate, then the same gate at 4 players: two questions, two default stores (the 2-player one keeps
    its old name); forcing them into one folder is refused in one short line saying what differs and what to do."""
    two = gate("greedy", "random", *SHORT, "--max-games", "4", cwd=tmp_path)
    assert two.returncode == 4, two.stderr
    four = gate("greedy", "random", *SHORT, "--max-games", "4", "--players-per-game", "4", cwd=tmp_path)
    assert four.returncode == 4, four.stderr
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [
        "gate-greedy-vs-random",
        "gate-greedy-vs-random-4p",
    ]
    mixed = gate(
        "greedy", "random", *SHORT, "--max-games", "4", "--players", "4", "--output", "runs/gate-greedy-vs-random",
        cwd=tmp_path,
    )  # fmt: skip
    assert mixed.returncode == 2, mixed.stderr
    lines = mixed.stderr.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 400, mixed.stderr
    assert "players_per_game: stored 2, this gate has 4" in lines[0]
    assert "--output DIR" in lines[0] and "--new" in lines[0]


def test_merge_s_refusal_suggests_what_merge_can_do(tmp_path: Path) -> None:
    """``merge`` has no ``--new``: a merged folder holding other results is refused with merge's own remedy."""
    first = gate("greedy", "random", *SHORT, "--max-games", "2", "--output", "a", cwd=tmp_path)
    other = gate(
        "greedy", "random", *SHORT, "--max-games", "2", "--elo0", "0", "--elo1", "30", "--output", "b", cwd=tmp_path
    )
    assert first.returncode == other.returncode == 4, first.stderr + other.stderr
    merged = subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "merge", "a", "b"], cwd=tmp_path, capture_output=True, text=True
    )
    assert merged.returncode == 2, merged.stderr
    line = " ".join(merged.stderr.split())
    assert "elo1: stored 0.0, each store to merge has 30.0" in line, line
    assert "--new" not in line and "merge into another (new) OUT folder, or delete a first" in line, line
