"""Sandboxed league bots: limits and ``network: false`` through the real CLI, real referee and real bot processes.

Each misbehaving bot connects, then misbehaves at its first decision: it must
be stopped by its sandbox, lose its games, have the reason stored as a fault,
and leave the tournament (and the games of the other bots) running. Limits are
small so the tests are quick.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from loopback import loopback_listener
from skyjo_bot.address import check_address
from skyjo_ref.match import MatchSpec, SeatSpec
from skyjo_ref.sandbox import (
    Limits,
    Sandbox,
    SandboxPlan,
    SandboxUnavailable,
    check_sandbox,
    classify_exit,
    network_isolation,
    pids_cgroups,
    plan_for,
)
from skyjo_ref.sandbox.cgroups import bot_cgroups, oom_kills, retire_group
from skyjo_ref.sandbox.namespaces import BotView, python_runtime
from skyjo_ref.sandbox.plan import DEFAULT_PROCESS_TASKS
from skyjo_ref.sandbox.relay import DEFAULT_BOT_CONNECTIONS
from skyjo_ref.server import FinishedGame, MatchClient, RefereeServer, ServerConfig
from skyjo_ref.server.client import MatchEnd
from skyjo_ref.tournament.config import ConfigError, parse_config

#: The smallest bot file the up-front check accepts (one Bot class).
A_BOT = (
    "from skyjo_bot import Action, Bot, View\n\n\n"
    "class B(Bot):\n    def decide(self, view: View) -> Action:\n        return view.legal_actions[0]\n"
)

LINUX = sys.platform.startswith("linux")
REPO = Path(__file__).resolve().parents[1]

MISBEHAVING_BOT = textwrap.dedent(
    '''\
    """Does what MISBEHAVE says at its first decision (or as it starts, with MISBEHAVE_AT=start)."""
    import os
    import socket
    import sys
    import time

    from skyjo_bot import Action, Bot, View


    def misbehave(how: str) -> None:
        if how == "memory":  # allocate until stopped
            hoard = []
            while True:
                hoard.append(bytearray(16 * 1024 * 1024))
        if how == "cpu":  # spin
            while True:
                pass
        if how == "cpu-stubborn":  # ignore the kernel's SIGXCPU and spin on, until its SIGKILL
            import signal

            signal.signal(signal.SIGXCPU, signal.SIG_IGN)
            while True:
                pass
        if how == "serial-cpu":  # children one after another, each under the per-process limit, more in all
            import subprocess

            spin = "import time\\nwhile time.process_time() < 1.5:\\n    pass\\n"
            for _ in range(6):
                subprocess.run([sys.executable, "-c", spin])
            print("spent 9 s of CPU in children", flush=True)
        if how == "flood":  # 20,000 connections to the referee's socket, held open, then play on
            held = []
            for _ in range(20000):
                conn = socket.socket(socket.AF_UNIX)
                conn.setblocking(False)
                try:
                    conn.connect(os.environ["SKYJO_ADDR"].removeprefix("unix:"))
                except BlockingIOError:  # the backlog is full: the relay accepts no more of ours
                    conn.close()
                    break
                except OSError:
                    conn.close()
                    break
                held.append(conn)
            globals()["HELD"] = held
            print(f"holding {len(held)} connections", flush=True)
            return
        if how == "spinners":  # 200 spinning processes, forever: the others must play on at their pace
            if getattr(misbehave, "spun", False):
                return
            misbehave.spun = True
            for _ in range(200):
                if os.fork() == 0:
                    os.nice(19)  # its own decisions first (the run waits for its games); its cgroup shares the same
                    while True:
                        pass
            return
        if how == "fork":  # start children until the cap stops it
            while True:
                if os.fork() == 0:
                    time.sleep(600)
                    os._exit(0)
        if how == "file":  # write a huge file
            with open(os.environ["BIG_FILE"], "wb") as out:
                while True:
                    out.write(b"x" * 1024 * 1024)
                    out.flush()
        if how == "network":  # call a listener on loopback
            try:
                socket.create_connection(("127.0.0.1", int(os.environ["LISTENER_PORT"])), timeout=5).close()
            except OSError as exc:
                print(f"network blocked: {exc}", flush=True)
                os._exit(4)
            print("network reached", flush=True)


    if os.environ.get("MISBEHAVE_AT") == "start":
        misbehave(os.environ["MISBEHAVE"])


    class Misbehaving(Bot):
        def decide(self, view: View) -> Action:
            misbehave(os.environ["MISBEHAVE"])
            return view.legal_actions[0]
    '''
)


def write_league(folder: Path, bad: str, *, extra_env: str = "") -> Path:
    """A league of the misbehaving bot (``bad`` is its limits/network YAML) and two built-in bots.

    No decision limit: a game waits until the sandbox stops the bot (however
    loaded the machine), then the seat forfeits after a short grace period.
    """
    (folder / "bad.py").write_text(MISBEHAVING_BOT, encoding="utf-8")
    text = (
        "name: sandbox\nrules: {preset: official, end_score: 30}\nplayers_per_game: 2\ndeals: 1\nseed: 3\n"
        "concurrency: 2\ntime_control: {decision_ms: 0, bank_ms: 0, max_strikes: 1, grace_ms: 500}\n"
        "rating: {bootstrap: 0}\noutput: out\nbots:\n"
        "  - {name: greedy, builtin: greedy}\n"
        "  - {name: random, builtin: random}\n"
        f"  - {{name: bad, python: bad.py, {bad}, env: {{{extra_env}}}}}\n"
    )
    path = folder / "league.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def run_league(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "tournament", "league.yaml"],
        cwd=folder,
        env={**os.environ, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=100,
    )


def check_lost_and_recorded(folder: Path, result: subprocess.CompletedProcess[str], reason: str) -> list[str]:
    """The tournament finished; bad lost every game by forfeit; greedy v random played on; a fault says why."""
    assert result.returncode == 0, result.stdout + result.stderr
    for leak in ("Traceback", "Exception ignored", "Event loop is closed"):  # every transport closed on its loop
        assert leak not in result.stderr, result.stderr
    with sqlite3.connect(folder / "out" / "results.sqlite") as db:
        games = db.execute("SELECT key FROM games").fetchall()
        assert len(games) == 6  # 3 tables x 2 rotations: none was lost to the misbehaving bot
        bad = db.execute("SELECT rank, forfeit FROM seats WHERE bot = 'bad'").fetchall()
        assert len(bad) == 4 and all(forfeit == 1 for _, forfeit in bad), bad
        others = db.execute(
            "SELECT COUNT(*) FROM seats s JOIN games g ON s.game_key = g.key "
            "WHERE g.key NOT LIKE '%bad%' AND s.forfeit = 0"
        ).fetchone()[0]
        assert others == 4  # greedy v random: both games, no forfeit
        faults = [
            f"{kind}: {detail}" for kind, detail in db.execute("SELECT kind, detail FROM faults WHERE bot = 'bad'")
        ]
    assert any(reason in fault for fault in faults), faults
    return faults


needs_linux = pytest.mark.skipif(not LINUX, reason="the sandbox's process cap and namespaces are Linux features")


@needs_linux
def test_a_bot_that_allocates_memory_until_stopped_loses_and_the_memory_limit_is_recorded(tmp_path: Path) -> None:
    write_league(tmp_path, "limits: {memory_mb: 300}", extra_env="MISBEHAVE: memory")
    faults = check_lost_and_recorded(tmp_path, run_league(tmp_path), "killed: memory limit 300 MB")
    assert any(f.startswith("limit: ") for f in faults)


@needs_linux
def test_a_bot_that_spins_is_killed_at_its_cpu_limit_and_loses(tmp_path: Path) -> None:
    write_league(tmp_path, "isolation: none, limits: {cpu_seconds: 1}", extra_env="MISBEHAVE: cpu")
    check_lost_and_recorded(tmp_path, run_league(tmp_path), "killed: CPU limit 1 s (killed by SIGXCPU")


@needs_linux
def test_a_bot_that_ignores_sigxcpu_is_killed_and_recorded_as_a_limit_not_a_crash(tmp_path: Path) -> None:
    """The kernel's SIGKILL one second past the soft limit: the supervisor ends by that signal too (it once
    raised EINVAL setting SIGKILL's handler, and the bot was stored as a crash, exit code 1)."""
    write_league(tmp_path, "isolation: none, limits: {cpu_seconds: 1}", extra_env="MISBEHAVE: cpu-stubborn")
    check_lost_and_recorded(tmp_path, run_league(tmp_path), "killed: CPU limit 1 s (or the kernel's OOM killer)")


@needs_linux
def test_a_fork_bomb_is_bounded_by_the_process_cap_and_its_whole_tree_killed(tmp_path: Path) -> None:
    try:
        pids_cgroups()
    except SandboxUnavailable as exc:
        pytest.skip(f"no writable pids cgroup here: {exc}")
    write_league(tmp_path, "limits: {processes: 24}", extra_env="MISBEHAVE: fork")
    check_lost_and_recorded(tmp_path, run_league(tmp_path), "killed: process limit 24 reached")
    leftovers = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _runs_from(p, tmp_path)]
    assert leftovers == []  # no child of the bomb survived the run


def needs_cgroups(what: str) -> None:
    """Skip where this machine gives no cgroup ``what`` needs (named in the reason)."""
    try:
        pids_cgroups()
    except SandboxUnavailable as exc:
        pytest.skip(f"no writable pids cgroup here: {exc}")
    if what == "cpu" and bot_cgroups()[1] is None:
        pytest.skip("no writable cgroup counts CPU time here")
    if what == "memory" and bot_cgroups()[2] is None:
        pytest.skip("no writable memory cgroup here")


HOGS = (
    "import os\n"
    "ready_r, ready_w = os.pipe()  # each child writes a byte here once its memory is in use, then lets go of it\n"
    "release_r, release_w = os.pipe()  # closed by the parent once every child has either written or died\n"
    "children = []\n"
    "for _ in range(2):  # two processes of 80 MB each: each under the bot's cap, together over it\n"
    "    child = os.fork()\n"
    "    if child == 0:\n"
    "        os.close(ready_r); os.close(release_w)\n"
    "        hoard = b'x' * (80 * 1024 * 1024)\n"
    "        os.write(ready_w, b'+'); os.close(ready_w)\n"
    "        os.read(release_r, 1)  # both hoards are held at once: one child cannot exit before the other fills\n"
    "        os._exit(0)\n"
    "    children.append(child)\n"
    "os.close(ready_w); os.close(release_r)\n"
    "while os.read(ready_r, 1):  # end of file: every child has written (then closed) or was killed\n"
    "    pass\n"
    "os.close(release_w)\n"
    "print([os.waitstatus_to_exitcode(os.waitpid(c, 0)[1]) for c in children], flush=True)\n"
)


@needs_linux
def test_an_isolated_bots_processes_share_one_memory_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bot's memory cap holds for all its processes together: two of 80 MB under a 128 MB cap, and the
    kernel kills one (counted in the bot's group, so the fault says whose cap it was)."""
    import skyjo_ref.sandbox.plan as plan_module

    needs_cgroups("memory")
    monkeypatch.setattr(plan_module, "bot_memory_mb", lambda: 128)
    view = BotView(runtime=python_runtime(), binds=(), socket_dir=None, hidden=(), cwd=None)
    plan = plan_for(Sandbox(isolation="strict"), f"hogs{os.getpid()}", view)
    assert plan.bot_memory is not None
    try:
        done = subprocess.run(plan.wrap([sys.executable, "-c", HOGS]), input=b"", capture_output=True, timeout=120)
        assert oom_kills(plan.bot_memory) >= 1, done
        assert b"-9" in done.stdout, done  # one child was SIGKILLed
    finally:
        for group in (plan.cgroup, *plan.more_cgroups):
            if group is not None:
                retire_group(group)


@needs_linux
def test_an_isolated_fork_bomb_without_limits_meets_the_default_cap_and_the_run_goes_on(tmp_path: Path) -> None:
    needs_cgroups("pids")
    write_league(tmp_path, "isolation: strict", extra_env="MISBEHAVE: fork")
    check_lost_and_recorded(tmp_path, run_league(tmp_path), f"killed: process limit {DEFAULT_PROCESS_TASKS} reached")
    assert [p for p in Path("/proc").iterdir() if p.name.isdigit() and _runs_from(p, tmp_path)] == []


@needs_linux
def test_cpu_seconds_is_the_bots_total_children_one_after_another_included(tmp_path: Path) -> None:
    """Six children of 1.5 s each, one after another: each is under ``cpu_seconds: 2``, all of them are not."""
    needs_cgroups("cpu")
    write_league(tmp_path, "isolation: strict, limits: {cpu_seconds: 2}", extra_env="MISBEHAVE: serial-cpu")
    faults = check_lost_and_recorded(tmp_path, run_league(tmp_path), "killed: total CPU limit 2 s (")
    assert any("it has used its CPU time" in f for f in faults if f.startswith("disqualified: ")), faults
    logs = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "out" / "logs").glob("bad-*.log"))
    assert "spent 9 s" not in logs


@needs_linux
def test_a_bot_spinning_200_processes_slows_only_itself_and_none_survives(tmp_path: Path) -> None:
    """200 spinning processes in each of its processes, to the end of the run: the other bots' games are played
    without a strike or forfeit, and nothing of the spinner is left. (It runs with its processes in its own
    cgroups, one CPU share for the bot: benchmarks/bench_spinner.py measures the victim's latency; a latency
    bound here would be a flake on a busy machine.)"""
    needs_cgroups("cpu")
    write_league(tmp_path, "isolation: strict", extra_env="MISBEHAVE: spinners")
    text = (tmp_path / "league.yaml").read_text(encoding="utf-8")
    text = text.replace("decision_ms: 0, bank_ms: 0, max_strikes: 1", "decision_ms: 5000, bank_ms: 0, max_strikes: 50")
    (tmp_path / "league.yaml").write_text(text, encoding="utf-8")
    result = run_league(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 6
        others = db.execute("SELECT strikes, forfeit FROM seats WHERE bot != 'bad'").fetchall()
    assert all(strikes == 0 and forfeit == 0 for strikes, forfeit in others), others
    assert [p for p in Path("/proc").iterdir() if p.name.isdigit() and _runs_from(p, tmp_path)] == []


@needs_linux
def test_a_bot_flooding_the_referee_socket_fills_only_its_own_connection_cap(tmp_path: Path) -> None:
    """20,000 connections held (once the cap is full, connects wait in the backlog and then fail): the bot's cap
    is reached and recorded as its fault, every game is played, the others play without a forfeit."""
    write_league(tmp_path, "isolation: strict", extra_env="MISBEHAVE: flood")
    result = run_league(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 6
        assert db.execute("SELECT COUNT(*) FROM seats WHERE bot != 'bad' AND forfeit = 1").fetchone()[0] == 0
        faults = db.execute("SELECT kind, detail FROM faults WHERE bot = 'bad'").fetchall()
    assert (
        "limit",
        f"connection limit {DEFAULT_BOT_CONNECTIONS} reached on the referee's socket: further connections wait",
    ) in faults, faults
    logs = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "out" / "logs").glob("bad-*.log"))
    held = [int(line.split()[1]) for line in logs.splitlines() if line.startswith("holding ")]
    # its processes filled its cap; no flood got more through than the cap and the socket's backlog (65)
    assert sum(held) >= DEFAULT_BOT_CONNECTIONS and max(held) < DEFAULT_BOT_CONNECTIONS + 100, held


def _runs_from(proc: Path, folder: Path) -> bool:
    try:
        return str(folder / "bad.py") in (proc / "cmdline").read_text(errors="replace")
    except OSError:
        return False


@needs_linux
def test_a_bot_that_writes_a_huge_file_is_killed_at_its_file_size_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    write_league(
        tmp_path, "isolation: none, limits: {file_size_mb: 1}", extra_env=f"MISBEHAVE: file, BIG_FILE: '{big}'"
    )
    check_lost_and_recorded(tmp_path, run_league(tmp_path), "killed: file size limit 1 MB (killed by SIGXFSZ")
    assert big.stat().st_size <= 1024 * 1024


@needs_linux
def test_a_bot_without_network_reaches_only_the_referee(tmp_path: Path) -> None:
    if network_isolation()[1] is not None:
        pytest.skip(f"no network namespaces here: {network_isolation()[1]}")
    with loopback_listener() as (port, accepted):
        write_league(tmp_path, "network: false", extra_env=f"MISBEHAVE: network, LISTENER_PORT: {port}")
        faults = check_lost_and_recorded(tmp_path, run_league(tmp_path), "network blocked: ")
    assert accepted == []  # the listener on loopback was never reached
    # isolated: a loopback of its own, where nothing listens; else no interface at all
    assert any("Network is unreachable" in f or "Connection refused" in f for f in faults), faults


@needs_linux
@pytest.mark.parametrize(("limits", "how", "reason"), [("memory_mb: 300", "memory", "memory limit 300 MB")])
def test_a_bot_killed_by_its_sandbox_before_it_ever_plays_forfeits_and_the_run_goes_on(
    tmp_path: Path, limits: str, how: str, reason: str
) -> None:
    """Unlike a bot that cannot run at all (a config mistake: exit 3), this one broke the league's limits."""
    write_league(tmp_path, f"limits: {{{limits}}}", extra_env=f"MISBEHAVE: {how}, MISBEHAVE_AT: start")
    faults = check_lost_and_recorded(tmp_path, run_league(tmp_path), "disqualified: every process killed by its")
    assert any(f.startswith("disqualified: ") and reason in f for f in faults), faults


# ------------------------------------------------------------------------ config and units


def config_error(tmp_path: Path, text: str) -> str:
    (tmp_path / "bot.py").write_text(
        A_BOT,
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        parse_config(text, tmp_path / "league.yaml")
    return str(caught.value)


BOTS = "bots:\n  - {name: a, builtin: greedy}\n  - {name: b, python: bot.py}\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("limits: {memory: 5}\n" + BOTS, "league.yaml:1: limits.memory: unknown key 'memory' (did you mean"),
        ("limits: {cpu_seconds: 0}\n" + BOTS, "league.yaml:1: limits.cpu_seconds: expected an integer from 1 to"),
        ("limits: {memory_mb: 10}\n" + BOTS, "league.yaml:1: limits.memory_mb: expected an integer from 64 to"),
        ("limits: 512\n" + BOTS, "league.yaml:1: limits: expected a mapping (memory_mb, cpu_seconds"),
        ("network: no-thanks\n" + BOTS, "league.yaml:1: network: expected true or false"),
        (
            "bots:\n  - {name: a, builtin: greedy, limits: {memory_mb: 100}}\n  - {name: b, python: bot.py}\n",
            "league.yaml:2: bots[0].limits: limits applies to python and command bots only, not builtin",
        ),
        (
            "bots:\n  - {name: a, builtin: greedy}\n  - name: b\n    python: bot.py\n"
            "    limits:\n      open_files: x\n",
            "league.yaml:6: bots[1].limits.open_files: expected an integer from 16 to",
        ),
        (
            "referee: {address: '127.0.0.1:5', control_token: t}\n"
            "bots:\n  - {name: a, builtin: greedy}\n  - {name: b, python: bot.py, network: false}\n",
            "league.yaml:4: bots[1].network: a bot without network reaches the referee only by a unix: socket",
        ),
    ],
)
def test_sandbox_keys_are_checked_with_file_line_and_key(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in config_error(tmp_path, text)


def test_bot_limits_override_the_default_key_by_key(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(
        A_BOT,
        encoding="utf-8",
    )
    text = (
        "limits: {memory_mb: 512, cpu_seconds: 600}\n"
        "bots:\n  - {name: a, builtin: greedy}\n  - {name: b, python: bot.py, limits: {cpu_seconds: 5}}\n"
        "  - {name: c, python: bot.py}\n"
    )
    config = parse_config(text, tmp_path / "league.yaml")
    isolation = config.sandbox.isolation  # strict where this machine can isolate bots (the league's default)
    assert config.bot("b").sandbox == Sandbox(Limits(memory_mb=512, cpu_seconds=5), isolation=isolation)
    assert config.bot("c").sandbox == Sandbox(Limits(memory_mb=512, cpu_seconds=600), isolation=isolation)
    assert config.bot("a").sandbox == Sandbox()  # built-in bots run inside the referee: no process to limit


def test_a_limit_this_machine_cannot_enforce_is_refused_not_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    import skyjo_ref.sandbox.cgroups as cgroups
    import skyjo_ref.sandbox.namespaces as namespaces

    monkeypatch.setattr(cgroups, "_own_cgroups", lambda controller="pids": iter(()))  # no cgroups here ...
    monkeypatch.setattr(namespaces, "user_namespaces", lambda: "user namespaces are disabled")  # ... nor namespaces
    cgroups.pids_cgroups.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="processes: cannot cap one bot's processes here: RLIMIT_NPROC"):
            check_sandbox(Sandbox(Limits(processes=8)))
    finally:
        cgroups.pids_cgroups.cache_clear()


FORKER = (
    "import os, time\n"
    "forks = 0\n"
    "try:\n"
    "    while forks < 50:\n"
    "        if os.fork() == 0:\n"
    "            time.sleep(5)\n"
    "            os._exit(0)\n"
    "        forks += 1\n"
    "except OSError as exc:\n"
    "    print(forks, exc.errno)\n"
)


SYSTEM_PYTHON = Path("/usr/bin/python3")


@needs_linux
def test_a_normal_user_gets_a_process_cap_and_no_network(tmp_path: Path) -> None:
    """As ``nobody`` (no writable cgroup): the cap falls back to a user namespace of the bot's own, where
    RLIMIT_NPROC counts only its processes (nobody runs other processes meanwhile: the test's python);
    no network works too (unprivileged user + network namespace)."""
    if os.geteuid() != 0 or not SYSTEM_PYTHON.exists() or shutil.which("setpriv") is None:
        pytest.skip("needs root (to become nobody), setpriv and a system python3 that nobody may run")
    if subprocess.run([str(SYSTEM_PYTHON), "-c", "import sys; sys.exit(sys.version_info < (3, 10))"]).returncode:
        pytest.skip(f"{SYSTEM_PYTHON} is older than 3.10")
    script = (
        "import subprocess, sys\n"
        "from skyjo_ref.sandbox import *\n"
        "assert process_cap() == 'userns', process_cap()\n"
        "flags, problem = network_isolation()\n"
        "assert problem is None, problem\n"
        "plan = plan_for(Sandbox(Limits(processes=5), network=False), 'probe')\n"
        "code = 'import socket\\ntry:\\n    socket.create_connection((\"127.0.0.1\", 9), 2)\\n'\\\n"
        "    'except OSError as exc:\\n    print(exc.errno)\\n' + sys.argv[1]\n"
        "done = subprocess.run(plan.wrap([sys.executable, '-I', '-S', '-c', code]), capture_output=True, text=True)\n"
        "print(done.returncode, done.stdout.split(), done.stderr.strip()[-300:])\n"
    )
    # nobody may not enter the folder this checkout lies in (mktemp -d, a private home): give it a copy of the
    # sandbox room (standard library only) in a folder it may read
    public = Path(tempfile.mkdtemp(prefix="skyjo-ref-nobody-"))
    public.chmod(0o755)
    package = public / "skyjo_ref"
    shutil.copytree(REPO / "referee" / "skyjo_ref" / "sandbox", package / "sandbox")
    (package / "__init__.py").write_text("", encoding="utf-8")
    for folder, _, names in os.walk(public):
        os.chmod(folder, 0o755)
        for name in names:
            os.chmod(os.path.join(folder, name), 0o644)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(public)}
    try:
        result = _run_as_nobody(script, env, tmp_path)
    finally:
        shutil.rmtree(public, ignore_errors=True)
    if "Permission denied" in result.stderr and "skyjo_ref" not in result.stdout:
        pytest.skip(f"nobody cannot run the system python here: {result.stderr.strip()[-200:]}")
    assert result.returncode == 0, result.stderr
    code, rest = result.stdout.split(" ", 1)
    assert code == "0" and rest.startswith("['101', '4', '11']"), result.stdout  # no network (101), then 4 forks


def _run_as_nobody(script: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", str(SYSTEM_PYTHON), "-c", script, FORKER],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path.anchor,
        timeout=60,
    )


def test_the_sdk_accepts_unix_socket_addresses() -> None:
    assert check_address("unix:/tmp/referee.sock") == "unix:/tmp/referee.sock"
    with pytest.raises(ValueError, match="expected a socket path after unix:"):
        check_address("unix:")


# ------------------------------------------------------------------------ kill -9 of the tournament

PARENT_BOT = textwrap.dedent(
    '''\
    """Starts two sleeping children at its first decision (one leaves the process group), then plays on."""
    import os
    import subprocess

    from skyjo_bot import Action, Bot, View


    def sleeper(leave_group: bool) -> int:
        return subprocess.Popen(["sleep", "600"], start_new_session=leave_group).pid


    class Parent(Bot):
        started = False

        def decide(self, view: View) -> Action:
            if not self.started:
                self.started = True
                pids = [os.getpid(), sleeper(False), sleeper(True)]
                target = os.environ["PIDS_FILE"]
                with open(target + ".tmp", "w") as out:
                    out.write(" ".join(map(str, pids)))
                os.replace(target + ".tmp", target)
            return view.legal_actions[0]
    '''
)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait(condition: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@needs_linux
@pytest.mark.parametrize("limits", ["", "limits: {processes: 64}, "])
def test_kill_9_of_the_tournament_takes_the_bots_children_with_it(tmp_path: Path, limits: str) -> None:
    (tmp_path / "parent.py").write_text(PARENT_BOT, encoding="utf-8")
    pids_file = tmp_path / "pids.txt"
    (tmp_path / "league.yaml").write_text(
        "name: kill\nplayers_per_game: 2\ndeals: 200\nconcurrency: 1\noutput: out\nrating: {bootstrap: 0}\n"
        "isolation: none\nbots:\n"  # the bot writes its children's pids where the test reads them
        "  - {name: greedy, builtin: greedy}\n"
        f"  - {{name: parent, python: parent.py, {limits}env: {{PIDS_FILE: '{pids_file}'}}}}\n",
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "skyjo_ref", "tournament", "league.yaml"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert _wait(lambda: pids_file.exists() or proc.poll() is not None, 60), "the bot never decided"
        assert proc.poll() is None
        bot, in_group, left_group = (int(p) for p in pids_file.read_text().split())
        assert _alive(bot) and _alive(in_group) and _alive(left_group)
    finally:
        proc.kill()  # kill -9: no cleanup code of the tournament runs
        proc.wait(timeout=30)
    try:
        assert _wait(lambda: not _alive(bot) and not _alive(in_group), 30), "the bot or its child outlived kill -9"
        if limits:  # the cgroup also holds the child that left the process group
            assert _wait(lambda: not _alive(left_group), 30), "a child that called setsid outlived kill -9"
    finally:
        for pid in (bot, in_group, left_group):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)  # documented: without a process cap, setsid escapes the group


def test_the_referee_listens_and_plays_on_unix_sockets(tmp_path: Path) -> None:
    """``serve --address unix:PATH`` and the extra socket of bots without network: a real match over each."""

    async def scenario() -> None:
        server = RefereeServer(
            ServerConfig(address=f"unix:{tmp_path / 'main.sock'}", unix_socket=tmp_path / "bots.sock")
        )
        await server.start()
        try:
            assert server.address == f"unix:{tmp_path / 'main.sock'}"
            assert server.unix_address == f"unix:{tmp_path / 'bots.sock'}"
            for address in (server.address, server.unix_address):
                async with MatchClient(address, server.control_token) as client:
                    spec = MatchSpec(seats=(SeatSpec.of_builtin("greedy"), SeatSpec.of_builtin("random")), games=1)
                    finished = [item async for item in client.watch(await client.start_match(spec))]
                    assert [type(item) for item in finished] == [FinishedGame, MatchEnd]
        finally:
            await server.stop()

    asyncio.run(scenario())


@needs_linux
def test_any_program_is_killed_at_its_file_size_limit_not_only_python(tmp_path: Path) -> None:
    """The supervisor is Python, which ignores SIGXFSZ and SIGPIPE: the program it starts must not inherit that."""
    sandbox = Sandbox(Limits(file_size_mb=1))
    plan = SandboxPlan(sandbox)
    big = tmp_path / "big"
    done = subprocess.run(plan.wrap(["/bin/sh", "-c", f"exec head -c 3000000 /dev/zero > '{big}'"]), timeout=30)
    assert done.returncode == -signal.SIGXFSZ
    assert classify_exit(sandbox, done.returncode, "") == "file size limit 1 MB"
    assert big.stat().st_size == 1024 * 1024


@needs_linux
def test_the_sandboxed_example_league_is_valid() -> None:
    config = parse_config(
        (REPO / "tournaments" / "sandboxed.yaml").read_text(encoding="utf-8"), REPO / "tournaments" / "sandboxed.yaml"
    )
    assert config.bot("strong").sandbox == Sandbox(
        Limits(1024, 600, 256, 16, 32), network=False, isolation=config.sandbox.isolation
    )
    assert config.bot("minimal").sandbox.limits.memory_mb == 512


@needs_linux
def test_each_limit_is_the_rlimit_the_docs_name() -> None:
    limits = Limits(memory_mb=512, cpu_seconds=30, open_files=64, file_size_mb=8)
    done = subprocess.run(
        SandboxPlan(Sandbox(limits)).wrap(["cat", "/proc/self/limits"]), capture_output=True, text=True, timeout=30
    )
    rows = {line[:26].strip(): line[26:].split()[:2] for line in done.stdout.splitlines()[1:]}
    assert rows["Max address space"] == [str(512 * 2**20)] * 2
    assert rows["Max cpu time"] == ["30", "31"]  # SIGXCPU at 30 s, SIGKILL at 31 s
    assert rows["Max open files"] == ["64", "64"]
    assert rows["Max file size"] == [str(8 * 2**20)] * 2
