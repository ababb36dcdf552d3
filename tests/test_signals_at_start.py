"""Ctrl-C and SIGTERM at any moment of a command's start end it with exit 130 and one line, never a traceback.

Each signal is sent at moments the test observes in /proc (not after a sleep): once the command's entry point
has taken SIGTERM, while gRPC's extension is being loaded (the imports still under way), and once the
tournament has opened its store, and once it has written a game's record. After each, the same command runs
again to the end: nothing was lost or left half-written.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

CONFIG = textwrap.dedent(
    """\
    name: sig
    rules: {preset: official, end_score: 30}
    players_per_game: 2
    deals: 25
    seed: 3
    rating: {bootstrap: 0}
    output: out
    bots:
      - {name: greedy, builtin: greedy}
      - {name: random, builtin: random}
    """
)


def _caught(pid: int) -> int:
    """The process's caught-signal mask (SigCgt in /proc/PID/status), 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return int(line.split()[1], 16)
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def _maps(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/maps").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return ""


MOMENTS: dict[str, Callable[[int, Path], bool]] = {
    # the entry point has installed its SIGTERM handler: the CLI's imports begin
    "entry": lambda pid, folder: bool(_caught(pid) & (1 << (signal.SIGTERM - 1))),
    # gRPC's C extension is mapped: the imports are under way
    "imports": lambda pid, folder: "cygrpc" in _maps(pid),
    # the tournament has made its store: bots start, games play
    "running": lambda pid, folder: (folder / "out" / "results.sqlite").exists(),
    # the first game's record is written: games play and the store is being written
    "playing": lambda pid, folder: any((folder / "out" / "games").glob("*.json")),
}


def _wait_for(proc: subprocess.Popen[str], moment: Callable[[int, Path], bool], folder: Path) -> bool:
    """Poll the observable ``moment`` until it holds (True) or the process ended first (False)."""
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        if moment(proc.pid, folder):
            return True
        time.sleep(0.0005)  # a poll interval of an observable state, not a synchronization
    return False


@pytest.mark.parametrize("moment", list(MOMENTS))
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_at_any_moment_of_start_is_exit_130_and_one_line(tmp_path: Path, sig: int, moment: str) -> None:
    (tmp_path / "league.yaml").write_text(CONFIG)
    env = {**os.environ, "COLUMNS": "120"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "skyjo_ref", "tournament", "league.yaml", "--plain"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    reached = _wait_for(proc, MOMENTS[moment], tmp_path)
    assert reached, f"the command ended before the moment {moment!r}: {proc.communicate()}"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, err)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("interrupted"), err
    again = subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "tournament", "league.yaml", "--plain"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert again.returncode == 0, again.stderr  # whatever the moment, the same command goes on
    assert "50 games played" not in again.stderr or moment != "playing"  # the finished games were kept
