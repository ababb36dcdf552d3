"""``match --executor``: a match's games on Dask workers, with the local output, and in-process bots there.

One small LocalCluster (two worker processes, one thread each) serves the
module through its scheduler address; every match is a few games.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from distributed import Client, LocalCluster

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = str(ROOT / "examples" / "python" / "minimal_bot.py")
#: Meta keys that differ between any two runs (clocks), or name the referee's match (one per worker there).
RUN_KEYS = ("timings", "decision_ms", "started_at", "seconds", "match_id", "game_id")

STUCK_BOT = textwrap.dedent(
    """\
    import time

    from skyjo_bot import Bot


    class Stuck(Bot):
        def decide(self, view):
            time.sleep(3600)  # a blocking call that no stop reaches: the seat must forfeit, the worker go on
    """
)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
        ) as local,
        Client(local),
    ):
        yield str(local.scheduler_address)


def match(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "match", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
    )


def records(folder: Path) -> list[dict[str, Any]]:
    found = []
    for path in sorted(folder.glob("game-*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        record["meta"] = {k: v for k, v in record["meta"].items() if k not in RUN_KEYS}
        found.append(record)
    return found


def test_match_on_dask_workers_gives_the_local_output(tmp_path: Path, scheduler: str) -> None:
    """An SDK bot process and a built-in bot; then the same bot in-process on the workers."""
    args = (MINIMAL, "greedy", "--games", "4", "--seed", "11")
    runs = {}
    for name, extra in (
        ("local", ()),
        ("dask", ("--executor", scheduler)),
        ("local-in-process", ("--in-process",)),
        ("dask-in-process", ("--executor", scheduler, "--in-process")),
    ):
        done = match(*args, *extra, "--json", f"{name}.json", "--records", name, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        runs[name] = (json.loads((tmp_path / f"{name}.json").read_text()), done.stdout, records(tmp_path / name))
    local = runs["local"]
    assert local[0]["games"] == 4 and local[0]["exit_code"] == 0
    assert [r["meta"]["game"] for r in local[2]] == [0, 1, 2, 3]
    assert runs["dask"] == local
    assert runs["dask-in-process"] == runs["local-in-process"]  # records say version "in-process"
    assert runs["dask-in-process"][:2] == local[:2]  # the same games, summary and table


def test_an_in_process_bot_stuck_on_a_worker_forfeits_and_the_worker_goes_on(tmp_path: Path, scheduler: str) -> None:
    (tmp_path / "stuck.py").write_text(STUCK_BOT, encoding="utf-8")
    common = ("--games", "2", "--seed", "3", "--decision-ms", "200", "--executor", scheduler)
    done = match("stuck.py", "greedy", "--in-process", *common, "--json", "stuck.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "stuck.json").read_text())
    stuck = next(bot for bot in summary["bots"] if bot["name"] == "stuck")
    assert summary["games"] == 2 and stuck["forfeits"] == 2 and stuck["wins"] == 0
    # the workers still play: a clean match on the same cluster right after
    again = match("random", "greedy", *common, cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_what_cannot_run_on_dask_workers_is_refused_in_one_line(tmp_path: Path) -> None:
    remote = match("remote:far", "greedy", "--executor", "processes:1", cwd=tmp_path)
    assert remote.returncode == 2
    assert remote.stderr.strip() == (
        "error: executor processes:1: remote bots (far) connect to one referee and cannot follow games onto "
        "Dask workers: use --executor local for them"
    )
    referee = match(
        "random", "greedy", "--executor", "processes", "--referee", "127.0.0.1:1", "--control-token", "t", cwd=tmp_path
    )
    assert referee.returncode == 2
    assert "every Dask worker runs its own referee; --referee works only with --executor local" in referee.stderr
    logs = match("random", "greedy", "--executor", "processes", "--logs", "logs", cwd=tmp_path)
    assert logs.returncode == 2 and "--logs works only with --executor local" in logs.stderr
    bad = match("random", "greedy", "--executor", "cluster", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.startswith("error: --executor: 'cluster': expected 'local'")


def test_gate_in_process_on_dask_workers_reaches_the_local_verdict(tmp_path: Path, scheduler: str) -> None:
    """gate --in-process with a Dask executor: the Python bot plays inside each worker's process."""
    args = (
        MINIMAL,
        "greedy",
        "--elo0",
        "-300",
        "--elo1",
        "-150",
        "--option",
        "end_score=30",
        "-j",
        "2",
        "--in-process",
    )
    runs = {}
    for name, extra in (("local", ()), ("dask", ("--executor", scheduler))):
        done = subprocess.run(
            [sys.executable, "-m", "skyjo_ref", "gate", *args, *extra, "--out", name, "--json", f"{name}.json"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=110,
        )
        assert done.returncode == 0, done.stderr
        runs[name] = json.loads((tmp_path / f"{name}.json").read_text())
    assert runs["local"]["verdict"] == "accepted"
    for key in ("verdict", "games", "llr", "pentanomial", "history", "elo", "elo_ci"):
        assert runs["dask"][key] == runs["local"][key], key
