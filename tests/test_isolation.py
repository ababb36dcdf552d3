"""Isolation, proven by a hostile bot: under the default league config, every attack class fails to harm anyone.

One league (module fixture): ``tests/hostile_bot.py`` against an honest copy of the minimal example bot, 3 deals
(6 games), as a user runs it (the ``skyjo-ref tournament`` command, with a runner secret in its environment and a
loopback listener of the test's own). Each test reads one attack's outcome from the hostile bot's logs; the run
as a whole must finish with every game stored, the honest bot's games untouched, and nothing of the bot left.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import skyjo_bot
from loopback import loopback_listener
from skyjo_ref.sandbox import isolation_problem
from user_env import UserEnv, user_env

REPO = Path(__file__).resolve().parents[1]
MINIMAL = REPO / "examples" / "python" / "minimal_bot.py"


ATTACKS = (
    "read-token",
    "signal",
    "read-referee",
    "ptrace",
    "runner-environment",
    "read-config",
    "read-records",
    "write-store",
    "write-league_config",
    "write-other_bot",
    "write-sdk_file",
    "read-other-bot",
    "kill-referee",
    "flood-referee",
    "loopback",
    "setns",
    "leave-cgroup",
    "outlive",
    "pass-notes",
    "lock-channel",
    "keyring",
    "watch-files",
    "kernel-log",
)


@dataclass
class League:
    folder: Path
    result: subprocess.CompletedProcess[str]
    lines: list[str]  # the hostile bot's output, all processes
    outlive_mark: str
    accepted: list[object]
    config_text: str


def running_with(mark: str) -> list[int]:
    """Host processes whose command line holds ``mark``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if mark.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


def as_user_problem(env: UserEnv) -> str | None:
    """None if this test can run the league as an unprivileged user here, else why not."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return "needs root (to become nobody) and setpriv"
    code = "import subprocess, sys, skyjo_ref; subprocess.run([sys.executable, '-c', 'import skyjo_bot'], check=True)"
    probe = subprocess.run(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", str(env.python), "-c", code],
        capture_output=True,
        text=True,
        cwd="/",
    )
    if probe.returncode != 0:
        return f"nobody cannot run the environment made for it: {probe.stderr.strip().splitlines()[-1:]}"
    return None


@pytest.fixture(scope="module")
def nobody_env() -> Iterator[UserEnv | str]:
    """An environment ``nobody`` can run (tests/user_env.py), or why there is none."""
    env = user_env()
    yield env
    if isinstance(env, UserEnv):
        env.remove()


@pytest.fixture(scope="module", params=["root", "user"])
def league(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[League]:
    """The league as root (as CI runs it), and as an unprivileged user (``nobody``, in an environment made for
    it) where the machine allows it."""
    if (problem := isolation_problem()) is not None:
        pytest.skip(f"cannot isolate bots here: {problem}")
    as_user = request.param == "user"
    python = sys.executable
    sdk_file = str(Path(skyjo_bot.__file__))
    if as_user:
        env = request.getfixturevalue("nobody_env")
        why = env if isinstance(env, str) else as_user_problem(env)
        if why is not None:
            pytest.skip(f"the league as an unprivileged user: {why}")
        assert isinstance(env, UserEnv)
        python, sdk_file = str(env.python), str(env.site / "skyjo_bot" / "__init__.py")
    folder = Path(tempfile.mkdtemp(prefix="skyjo-hostile-")) if as_user else tmp_path_factory.mktemp("hostile")
    (folder / "hostile").mkdir()
    shutil.copy(REPO / "tests" / "hostile_bot.py", folder / "hostile" / "bot.py")
    (folder / "honest").mkdir()
    shutil.copy(MINIMAL, folder / "honest" / "bot.py")
    mark = str(900000 + uuid.uuid4().int % 99999)
    with loopback_listener() as (port, accepted):
        env = {
            "LEAGUE_CONFIG": str(folder / "league.yaml"),
            "LEAGUE_GAMES": str(folder / "out" / "games"),
            "LEAGUE_STORE": str(folder / "out" / "results.sqlite"),
            "OTHER_BOT": str(folder / "honest" / "bot.py"),
            "SDK_FILE": sdk_file,
            "REFEREE_PID": str(os.getpid()),  # a host pid: the referee's is the next ones
            "LISTENER_PORT": str(port),
            "OUTLIVE_MARK": mark,
        }
        config_text = (
            "name: hostile\nplayers_per_game: 2\ndeals: 3\nseed: 7\nconcurrency: 1\noutput: out\n"
            "time_control: {decision_ms: 5000, grace_ms: 5000}\nrating: {bootstrap: 0}\nbots:\n"
            f"  - {{name: hostile, python: hostile/bot.py, env: {json.dumps(env)}}}\n"
            "  - {name: honest, python: honest/bot.py}\n"
        )
        (folder / "league.yaml").write_text(config_text, encoding="utf-8")
        if as_user:
            for path in [folder, *folder.rglob("*")]:
                os.chown(path, 65534, 65534)
        result = subprocess.run(
            [
                *(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] if as_user else []),
                python,
                "-m",
                "skyjo_ref",
                "tournament",
                "league.yaml",
            ],
            cwd=folder,
            env={**os.environ, "RUNNER_SECRET": "s3cret", "GITHUB_SHA": "0" * 40},
            capture_output=True,
            text=True,
            timeout=300,
        )
    lines = []
    for log in sorted((folder / "out" / "logs").glob("hostile-*.log")):
        lines += log.read_text(encoding="utf-8").splitlines()
    yield League(folder, result, lines, mark, accepted, config_text)
    for pid in running_with(f"sleep\0{mark}"):  # never leave one behind, even when a test failed
        os.kill(pid, 9)


def test_the_run_finishes_with_every_game_stored_and_the_honest_bot_untouched(league: League) -> None:
    assert league.result.returncode == 0, league.result.stderr
    assert "Traceback" not in league.result.stderr
    assert "not isolated" not in league.result.stderr  # as nobody too: isolated, not a weaker run
    with sqlite3.connect(league.folder / "out" / "results.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 6
        honest = db.execute("SELECT strikes, forfeit FROM seats WHERE bot = 'honest'").fetchall()
        faults = db.execute("SELECT bot, kind, detail FROM faults").fetchall()
    assert len(honest) == 6 and all(strikes == 0 and forfeit == 0 for strikes, forfeit in honest), honest
    assert not [f for f in faults if f[0] == "honest"], faults
    assert (league.folder / "honest" / "bot.py").read_bytes() == MINIMAL.read_bytes()
    assert (league.folder / "league.yaml").read_text(encoding="utf-8") == league.config_text


@pytest.mark.parametrize("attack", ATTACKS)
def test_the_attack_fails(league: League, attack: str) -> None:
    said = [line for line in league.lines if line.startswith(f"ATTACK {attack} ")]
    assert said, f"the hostile bot never tried {attack}: {league.lines[-20:]}"
    assert all(" blocked: " in line for line in said), said


def test_the_host_loopback_listener_was_never_reached(league: League) -> None:
    assert league.accepted == []


def test_nothing_of_the_bot_outlives_the_run(league: League) -> None:
    assert running_with(f"sleep\0{league.outlive_mark}") == []


def test_no_process_plays_two_games_of_one_deal(league: League) -> None:
    """A process that played a game of a deal has seen its deck: no other game of that deal may be its."""
    deal_of = {}
    for record in (league.folder / "out" / "games").glob("*.json"):
        meta = json.loads(record.read_text(encoding="utf-8"))["meta"]
        deal_of[meta["game_id"]] = int(record.stem.rsplit("__d", 1)[1].split("_r")[0])  # table__dD_rR.json
    played: dict[str, list[int]] = {}
    for line in league.lines:
        if line.startswith("GAME "):
            _, process, game_id = line.split()
            played.setdefault(process, []).append(deal_of[game_id])
    assert sum(len(deals) for deals in played.values()) == 6
    assert all(len(deals) == len(set(deals)) for deals in played.values()), played


def test_the_bots_see_no_runner_environment_and_an_unprivileged_uid(league: League) -> None:
    """The hostile bot's own report: uid and capabilities are checked by what it could not do (ptrace, setns,
    cgroups as root would); here the host's view: its processes ran as an unprivileged uid."""
    assert any(line.startswith("ATTACK runner-environment blocked") for line in league.lines)
    assert os.geteuid() != 0 or not any("SUCCEEDED" in line for line in league.lines)


def test_a_process_cap_counts_the_bots_processes_not_the_users(nobody_env: UserEnv | str, tmp_path: Path) -> None:
    """As a normal user who already runs 40 processes, ``processes: 32`` still lets every bot start: the cap is
    set inside the bot's own user namespace (RLIMIT_NPROC set before it counted every process of the user)."""
    if isinstance(nobody_env, str) or (why := as_user_problem(nobody_env)) is not None:
        pytest.skip(f"as an unprivileged user: {nobody_env if isinstance(nobody_env, str) else why}")
    if (problem := isolation_problem()) is not None:
        pytest.skip(f"cannot isolate bots here: {problem}")
    folder = Path(tempfile.mkdtemp(prefix="skyjo-nproc-"))
    shutil.copy(MINIMAL, folder / "bot.py")
    (folder / "league.yaml").write_text(
        "name: nproc\nplayers_per_game: 2\ndeals: 1\noutput: out\nrating: {bootstrap: 0}\n"
        "limits: {processes: 32}\nbots:\n  - {name: a, python: bot.py}\n  - {name: b, python: bot.py}\n",
        encoding="utf-8",
    )
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, 65534, 65534)
    nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    sleepers = [subprocess.Popen([*nobody, "sleep", "600"]) for _ in range(40)]
    try:
        result = subprocess.run(
            [*nobody, str(nobody_env.python), "-m", "skyjo_ref", "tournament", "league.yaml"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()
    try:
        assert result.returncode == 0, result.stderr
        with sqlite3.connect(folder / "out" / "results.sqlite") as db:
            assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 2
            assert db.execute("SELECT COUNT(*) FROM faults").fetchone()[0] == 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def league_without_bubblewrap(folder: Path, isolation: str) -> subprocess.CompletedProcess[str]:
    """A two-bot league run where bubblewrap cannot be found (a PATH without it), as on a machine without it."""
    shutil.copy(MINIMAL, folder / "bot.py")
    (folder / "league.yaml").write_text(
        f"name: bare\n{isolation}players_per_game: 2\ndeals: 1\noutput: out\nrating: {{bootstrap: 0}}\n"
        "bots:\n  - {name: mine, python: bot.py}\n  - {name: greedy, builtin: greedy}\n",
        encoding="utf-8",
    )
    (folder / "bin").mkdir()
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "tournament", "league.yaml"],
        cwd=folder,
        env={**os.environ, "PATH": str(folder / "bin")},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_league_that_cannot_isolate_says_so_in_one_line_and_plays() -> None:
    folder = Path(tempfile.mkdtemp(prefix="skyjo-bare-"))
    try:
        result = league_without_bubblewrap(folder, "")
        assert result.returncode == 0, result.stderr
        notes = [line for line in result.stderr.splitlines() if "not isolated" in line]
        assert notes == [
            "note: bots are not isolated: bubblewrap is not installed (Debian: apt-get install bubblewrap)"
        ]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_league_that_asks_for_isolation_where_there_is_none_fails_before_any_game() -> None:
    folder = Path(tempfile.mkdtemp(prefix="skyjo-bare-"))
    try:
        result = league_without_bubblewrap(folder, "isolation: strict\n")
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip().splitlines() == [
            "error: league.yaml:2: isolation: cannot be enforced on this machine: "
            "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
        ]
        assert not (folder / "out" / "results.sqlite").exists()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
