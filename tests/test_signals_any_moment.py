"""Ctrl-C and SIGTERM at any moment of any long command end it with exit 130 and one line saying what was kept:
never a traceback, nothing left running, nothing lost.

Each command runs under a small reaper (PR_SET_CHILD_SUBREAPER): a process the command leaves behind, even one
that double-forked away from it (bubblewrap does), becomes the reaper's child, is listed, and is killed. Each
signal is sent at moments the test observes (never after a sleep): the entry point has taken SIGTERM; the
imports are under way (a C extension is mapped); a bot process runs; a game is stored; the store is open; the
terminal game waits at its prompt. After each, what was kept is checked: the store passes SQLite's integrity
check and keeps every game it had, records are whole, no report page or .tmp is half-written, and a tournament
or a merge run again goes on to the end.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

#: Runs a command under PR_SET_CHILD_SUBREAPER; writes its pid, waits, then lists (and kills) what it left running.
REAPER = textwrap.dedent(
    """\
    import ctypes, json, os, signal, subprocess, sys
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    pid_file, left_file, *argv = sys.argv[1:]
    child = subprocess.Popen(argv)
    with open(pid_file + ".tmp", "w") as out:
        out.write(str(child.pid))
    os.replace(pid_file + ".tmp", pid_file)
    code = child.wait()

    def children():
        found = {}
        for entry in os.listdir("/proc"):
            try:
                stat = open(f"/proc/{entry}/stat").read()
                cmd = open(f"/proc/{entry}/cmdline", "rb").read().replace(b"\\0", b" ").decode(errors="replace")
            except (OSError, ValueError):
                continue
            state, ppid = stat[stat.rindex(")") + 2 :].split()[:2]
            if int(ppid) == os.getpid() and state != "Z":
                found[int(entry)] = cmd
        return found

    left = children()
    with open(left_file, "w") as out:
        json.dump(sorted(left.values()), out)
    while left:  # nothing outlives the test, whatever the command did
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while True:
                os.waitpid(-1, 0)
        except ChildProcessError:
            pass
        left = children()
    sys.exit(code if code >= 0 else 128 - code)
    """
)

LEAGUE = textwrap.dedent(
    """\
    name: sig
    rules: {preset: official, end_score: 30}
    players_per_game: 2
    deals: 12
    seed: 3
    rating: {bootstrap: 0}
    output: out
    bots:
      - {name: greedy, builtin: greedy}
      - {name: random, builtin: random}
    """
)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return ""


def _caught(pid: int) -> int:
    """The process's caught-signal mask (SigCgt in /proc/PID/status), 0 once it is gone."""
    for line in _read(Path(f"/proc/{pid}/status")).splitlines():
        if line.startswith("SigCgt:"):
            return int(line.split()[1], 16)
    return 0


def _descendants(root: int) -> set[int]:
    """Live processes under ``root`` (the reaper): the command, its bots, anything orphaned to the reaper."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _read(Path(f"/proc/{entry}/stat"))
            if stat:
                state, ppid = stat[stat.rindex(")") + 2 :].split()[:2]
                if state != "Z":
                    parents[int(entry)] = int(ppid)
    found: set[int] = set()
    changed = True
    while changed:
        changed = False
        for pid, ppid in parents.items():
            if pid not in found and (ppid == root or ppid in found):
                found.add(pid)
                changed = True
    return found


def _has_open(pid: int, name: str) -> bool:
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}").endswith(name) for fd in os.listdir(f"/proc/{pid}/fd"))
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return False


def _games(db: Path) -> int:
    """Games in a results store (read-only; 0 while it does not exist or is still being made)."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
            return int(conn.execute("SELECT count(*) FROM games").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


@dataclass
class Run:
    """One command under the reaper: its pid, its folder, its outputs."""

    folder: Path
    reaper: subprocess.Popen[bytes]
    pid: int = 0
    seen: dict[str, int] = field(default_factory=dict)

    @property
    def out(self) -> str:
        return _read(self.folder / "stdout.txt")

    @property
    def err(self) -> str:
        return _read(self.folder / "stderr.txt")


Moment = Callable[[Run], bool]

ENTRY: Moment = lambda run: bool(_caught(run.pid) & (1 << (signal.SIGTERM - 1)))  # noqa: E731
GRPC_LOADING: Moment = lambda run: "cygrpc" in _read(Path(f"/proc/{run.pid}/maps"))  # noqa: E731
SQLITE_LOADING: Moment = lambda run: "_sqlite3" in _read(Path(f"/proc/{run.pid}/maps"))  # noqa: E731
BOT_RUNNING: Moment = lambda run: bool(_descendants(run.reaper.pid) - {run.pid})  # noqa: E731
STORE_OPEN: Moment = lambda run: _has_open(run.pid, "results.sqlite")  # noqa: E731


def _game_stored(db: str) -> Moment:
    def moment(run: Run) -> bool:
        run.seen["games"] = _games(run.folder / db)
        return run.seen["games"] > 0

    return moment


def _record_written(folder: str) -> Moment:
    return lambda run: any((run.folder / folder).glob("*.json"))


def _prompt(run: Run) -> bool:
    return "Open a card" in run.out


@dataclass
class Case:
    argv: list[str]
    moments: dict[str, Moment]
    check: Callable[[Run], None]
    stdin_open: bool = False  # a terminal game: stdin stays open (nobody types)


def _store_kept(db: str) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        path = run.folder / db
        if not path.exists():  # stopped before it made its store: nothing to lose
            assert not run.seen.get("games"), "the store is gone"
            return
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert _games(path) >= run.seen.get("games", 0), "a stored game was lost"

    return check


def _rerun_finishes(argv: list[str]) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        again = subprocess.run(_command(argv), cwd=run.folder, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr

    return check


def _records_whole(folder: str) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        assert not list((run.folder / folder).glob("*.tmp")), "a half-written record was left behind"
        for path in (run.folder / folder).glob("*.json"):
            json.loads(path.read_text())  # a whole record, never half of one

    return check


def _no_page(run: Run) -> None:
    assert not list(run.folder.glob("page.html*")), "an interrupted report left a page behind"
    _store_kept("shard1/results.sqlite")(run)


def _both(*checks: Callable[[Run], None]) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        for one in checks:
            one(run)

    return check


#: A bot of its own process in a match or at the table (built-in bots play inside the command there).
BOT_FILE = str(Path(__file__).resolve().parents[1] / "examples" / "python" / "minimal_bot.py")
TOURNAMENT = ["tournament", "league.yaml", "--plain"]
MERGE = ["merge", "merged", "shard1", "shard2"]
CASES: dict[str, Case] = {
    "tournament": Case(
        TOURNAMENT,
        {
            "entry": ENTRY,
            "imports": GRPC_LOADING,
            "store-open": STORE_OPEN,
            "bots": BOT_RUNNING,
            "playing": _game_stored("out/results.sqlite"),
        },
        _both(_store_kept("out/results.sqlite"), _rerun_finishes(TOURNAMENT)),
    ),
    "gate": Case(
        ["gate", "greedy", "greedy", "--output", "gate", "--plain", "--max-games", "4000"],
        {"entry": ENTRY, "bots": BOT_RUNNING, "playing": _game_stored("gate/results.sqlite")},
        _store_kept("gate/results.sqlite"),
    ),
    "match": Case(
        ["match", BOT_FILE, "random", "--games", "4000", "--records", "records"],
        {"entry": ENTRY, "imports": GRPC_LOADING, "bots": BOT_RUNNING, "playing": _record_written("records")},
        _records_whole("records"),
    ),
    "play": Case(
        ["play", BOT_FILE, "--records", "records"],
        {"entry": ENTRY, "bots": BOT_RUNNING, "prompt": _prompt},
        _records_whole("records"),
        stdin_open=True,
    ),
    "ratings": Case(
        ["ratings", "shard1", "--bootstrap", "1000000"],
        {"entry": ENTRY, "imports": SQLITE_LOADING, "store-open": STORE_OPEN},
        _store_kept("shard1/results.sqlite"),
    ),
    "report": Case(
        ["report", "shard1", "--bootstrap", "1000000", "--output", "page.html"],
        {"entry": ENTRY, "imports": SQLITE_LOADING, "store-open": STORE_OPEN},
        _no_page,
    ),
    "merge": Case(
        MERGE,
        {"entry": ENTRY, "imports": SQLITE_LOADING},
        _rerun_finishes(MERGE),
    ),
}


def _command(argv: list[str]) -> list[str]:
    return [sys.executable, "-m", "skyjo_ref", *argv]


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two shard stores of a small league (what ratings, report and merge read)."""
    folder = tmp_path_factory.mktemp("shards")
    (folder / "league.yaml").write_text(LEAGUE.replace("deals: 12", "deals: 8"))
    for i in (1, 2):
        done = subprocess.run(
            _command(["tournament", "league.yaml", "--plain", "--shard", f"{i}/2", "--output", f"shard{i}"]),
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
    return folder


def _start(case: Case, folder: Path) -> Run:
    env = {**os.environ, "COLUMNS": "120"}
    with (folder / "stdout.txt").open("wb") as out, (folder / "stderr.txt").open("wb") as err:
        reaper = subprocess.Popen(
            [sys.executable, "-c", REAPER, str(folder / "pid"), str(folder / "left.json"), *_command(case.argv)],
            cwd=folder,
            stdin=subprocess.PIPE if case.stdin_open else subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=env,
        )
    return Run(folder, reaper)


def _wait_for(run: Run, moment: Moment, what: str) -> None:
    """Poll the observable ``moment`` until it holds; fail when the command ends first."""
    deadline = time.monotonic() + 120
    while not (run.folder / "pid").exists():
        assert run.reaper.poll() is None and time.monotonic() < deadline, run.err
        time.sleep(0.0005)  # a poll interval of an observable state, not a synchronization
    run.pid = int((run.folder / "pid").read_text())
    while not moment(run):
        assert run.reaper.poll() is None, f"the command ended before the moment {what!r}: {run.err}"
        assert time.monotonic() < deadline, f"the moment {what!r} never came: {run.err}"
        time.sleep(0.0005)


def _matrix() -> list[tuple[str, str, signal.Signals]]:
    """Each command's moments, SIGINT and SIGTERM in turn (each command gets both), and both signals at a
    tournament's first milliseconds and while it plays: enough to cover each path without doubling the time."""
    runs = [
        (command, moment, signal.SIGINT if i % 2 == 0 else signal.SIGTERM)
        for command, case in CASES.items()
        for i, moment in enumerate(case.moments)
    ]
    return [*runs, ("tournament", "entry", signal.SIGTERM), ("tournament", "playing", signal.SIGTERM)]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("command", "moment", "sig"), _matrix(), ids=lambda v: getattr(v, "name", v))
def test_a_signal_at_any_moment_is_exit_130_one_line_nothing_left_running_nothing_lost(
    request: pytest.FixtureRequest, tmp_path: Path, command: str, moment: str, sig: int
) -> None:
    case = CASES[command]
    if command in ("ratings", "report", "merge"):
        source: Path = request.getfixturevalue("shards")
        for i in (1, 2):
            subprocess.run(["cp", "-a", str(source / f"shard{i}"), str(tmp_path / f"shard{i}")], check=True)
    (tmp_path / "league.yaml").write_text(LEAGUE)
    run = _start(case, tmp_path)
    try:
        _wait_for(run, case.moments[moment], moment)
        os.kill(run.pid, sig)
        code = run.reaper.wait(timeout=120)
    finally:
        if run.reaper.stdin is not None:
            run.reaper.stdin.close()
        if run.reaper.poll() is None:
            run.reaper.kill()
            run.reaper.wait()
    err = run.err
    assert code == 130, (code, err)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("interrupted"), err
    assert json.loads((tmp_path / "left.json").read_text()) == [], "left running after the command ended"
    case.check(run)
