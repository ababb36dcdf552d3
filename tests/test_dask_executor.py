"""The Dask executors (``processes``, ``tcp://scheduler``): the same tables as ``local``, and the faults.

One LocalCluster (real worker processes under nannies) serves the module
through its scheduler address; the CLI test starts ``processes:2`` itself, and
the all-workers-gone test starts ``dask scheduler`` and ``dask worker``
subprocesses. Every run is small: a cluster costs seconds, games do not.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from distributed import Client, LocalCluster
from skyjo_ref.execution.dask_backend import backend_factory
from skyjo_ref.execution.executor import Executor, ExecutorError
from skyjo_ref.execution.types import BotCannotRun, RunUnfinished
from skyjo_ref.tournament import runner
from skyjo_ref.tournament.config import ConfigError, load_config
from skyjo_ref.tournament.store import Store, StoredGame
from test_tournament_run import (
    BOT_SOURCE,
    THREE_BOTS,
    cli,
    holding,
    setup_folder,
    stored_count,
    tables_json,
    write_config,
)

DASK = Path(sys.executable).with_name("dask")
MINIMAL = str(Path(__file__).resolve().parent.parent / "examples" / "python" / "minimal_bot.py")


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[LocalCluster, Client]]:
    """Two worker processes (nannies restart a killed one), two threads each."""
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None, host="127.0.0.1"
        ) as local,
        Client(local) as client,
    ):
        yield local, client


class Notes(runner.QuietObserver):
    def __init__(self) -> None:
        self.notes: list[str] = []
        self.finished = 0

    def note(self, message: str) -> None:
        self.notes.append(message)

    def game_finished(self, game: StoredGame, done: int, total: int) -> None:
        self.finished += 1


def run_on(config_path: Path, executor: Executor, observer: runner.Observer | None = None) -> dict[str, Any]:
    """Run the tournament on ``executor`` through the runner; its tables as --json writes them."""
    config = load_config(config_path)
    with Store(config.output) as store:
        store.bind(runner.fingerprint(config))
        asyncio.run(
            runner.run(config, store, observer, backend=backend_factory(executor, config.concurrency), concurrency=None)
        )
        return runner.compute_tables(config, store).to_json()


def unversioned(tables: dict[str, Any]) -> dict[str, Any]:
    """Tables without the bots' versions (the numbers only)."""
    out = {k: v for k, v in tables.items() if k != "versions"}
    out["bots"] = [{k: v for k, v in row.items() if k != "version"} for row in tables["bots"]]
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The tables of THREE_BOTS over 4 deals with executor local, played once for the module."""
    folder = setup_folder(tmp_path_factory.mktemp("local"))
    write_config(folder, THREE_BOTS, deals=4)
    result = cli("tournament", "league.yaml", "--json", "tables.json", cwd=folder)
    assert result.returncode == 0, result.stderr
    return tables_json(folder / "tables.json")


# ------------------------------------------------------------------ the setting


def test_executor_setting_forms_and_errors(tmp_path: Path) -> None:
    assert Executor.parse("local").is_local
    assert Executor.parse("processes:3") == Executor("processes", workers=3)
    assert Executor.parse({"processes": 2}) == Executor("processes", workers=2)
    assert Executor.parse("tcp://10.0.0.5:8786") == Executor("scheduler", address="tcp://10.0.0.5:8786")
    for bad in ("processes:0", "cluster", "10.0.0.5:8786", 3):
        with pytest.raises(ExecutorError, match="expected"):
            Executor.parse(bad)
    folder = setup_folder(tmp_path)
    path = write_config(folder, THREE_BOTS)
    path.write_text(path.read_text() + "executor: processes:2\n")
    assert load_config(path).executor == Executor("processes", workers=2)
    path.write_text(path.read_text().replace("processes:2", "procs"))
    with pytest.raises(ConfigError, match=r"league.yaml:\d+: executor: 'procs': expected"):
        load_config(path)


def test_remote_bots_are_refused_with_a_dask_executor(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    write_config(
        folder,
        THREE_BOTS + "  - {name: far, remote: {token: far-token-0123456}}\n" + "referee: {listen: '127.0.0.1:50999'}\n",
    )
    result = cli("tournament", "league.yaml", "--executor", "processes:1", cwd=folder)
    assert result.returncode == 2
    assert "remote bots (far) connect to one referee" in " ".join(result.stderr.split())
    assert not (folder / "out").exists() or stored_count(folder / "out" / "results.sqlite") == 0


def test_a_game_delivered_twice_is_stored_once(tmp_path: Path) -> None:
    """At-least-once execution: a worker that died after finishing a game sends no record, another worker's does;
    should both arrive, the store keeps one game under its key."""
    folder = setup_folder(tmp_path)
    write_config(folder, "  - {name: greedy, builtin: greedy}\n  - {name: random, builtin: random}\n", deals=1)
    config = load_config(folder / "league.yaml")
    with Store(config.output) as store:
        asyncio.run(runner.run(config, store))
        game = store.games()[0]
        record = store.record(game.ref)
        assert record is not None
        again = store.add_game(game.id, "0/deal/0", record, 0.1)
        assert store.count() == 2 and again == game  # two games scheduled, the second delivery replaced the first
        assert [g for g in store.games() if g.id == game.id] == [game]


# ------------------------------------------------------------ the same tables


def test_processes_cli_gives_the_local_tables_byte_for_byte(tmp_path: Path, reference: dict[str, Any]) -> None:
    folder = setup_folder(tmp_path / "processes")
    write_config(folder, THREE_BOTS, deals=4)
    result = cli(
        "tournament", "league.yaml", "--executor", "processes:2", "--json", "tables.json", "--plain", cwd=folder
    )
    assert result.returncode == 0, result.stderr
    assert "24 games played" in " ".join(result.stderr.split())
    ours = tables_json(folder / "tables.json")
    assert json.dumps(ours, sort_keys=True) == json.dumps(reference, sort_keys=True)


def test_scheduler_address_gives_the_local_tables_and_survives_a_killed_worker(
    tmp_path: Path, cluster: tuple[LocalCluster, Client], reference: dict[str, Any]
) -> None:
    """kill -9 of a worker process that is playing games: they are played elsewhere, the tables do not change."""
    local, client = cluster
    folder = setup_folder(tmp_path / "dask")
    path = write_config(folder, THREE_BOTS, deals=4)
    pids: dict[str, int] = client.run(os.getpid)
    killed: list[str] = []

    class KillOne(Notes):
        def game_finished(self, game: StoredGame, done: int, total: int) -> None:
            super().game_finished(game, done, total)
            if killed or self.finished < 3:
                return
            busy = [w for w, keys in client.processing().items() if keys and w in pids]
            if busy:  # a worker in the middle of a game
                killed.append(busy[0])
                os.kill(pids[busy[0]], signal.SIGKILL)

    observer = KillOne()
    tables = run_on(path, Executor.parse(local.scheduler_address), observer)
    assert killed, "no worker was playing a game when the third one finished"
    assert any(f"Dask worker {killed[0]} left" in note for note in observer.notes), observer.notes
    assert stored_count(folder / "out" / "results.sqlite") == 24  # nothing lost, nothing twice
    assert json.dumps(tables, sort_keys=True) == json.dumps(reference, sort_keys=True)
    client.wait_for_workers(2, timeout=60)  # the nanny's new worker, for the next tests


def test_a_bot_missing_on_the_workers_is_named_before_any_game(
    tmp_path: Path, cluster: tuple[LocalCluster, Client]
) -> None:
    local, _ = cluster
    folder = setup_folder(tmp_path)
    path = write_config(folder, THREE_BOTS, deals=2)
    config = load_config(path)  # the coordinator has the file ...
    (folder / "bots" / "low.py").unlink()  # ... the workers do not
    with Store(config.output) as store, pytest.raises(BotCannotRun) as caught:
        asyncio.run(runner.run(config, store, backend=backend_factory(Executor.parse(local.scheduler_address), 2)))
    message = str(caught.value)
    assert "Dask worker tcp://127.0.0.1:" in message and "cannot run bot 'low'" in message
    assert "low.py does not exist here" in message
    assert stored_count(folder / "out" / "results.sqlite") == 0


def test_a_worker_that_cannot_isolate_refuses_to_play_and_says_why(tmp_path: Path) -> None:
    """The coordinator's check proves nothing about other hosts: each worker checks before it plays. Here the
    workers' PATH has no bubblewrap, as on a host without it."""
    folder = setup_folder(tmp_path)
    path = write_config(folder, THREE_BOTS, deals=1, isolation="strict")
    config = load_config(path)  # the coordinator can isolate
    bare = tmp_path / "bin"
    bare.mkdir()
    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            host="127.0.0.1",
            env={"PATH": str(bare)},
        ) as local,
        Store(config.output) as store,
        pytest.raises(RunUnfinished) as caught,
    ):
        asyncio.run(runner.run(config, store, backend=backend_factory(Executor.parse(local.scheduler_address), 1)))
    message = str(caught.value)
    assert "Dask worker tcp://127.0.0.1:" in message, message
    assert "bot 'low' cannot be sandboxed on this machine: isolation: bubblewrap is not installed" in message
    assert stored_count(folder / "out" / "results.sqlite") == 0


def held_while(control: Path, held: Path) -> str:
    """The tests' low-card bot that, once one of its games is over, waits while ``control`` exists (and touches
    ``held``), then plays on as before. While ``control`` exists a run cannot end by itself, so a test stops it at
    a point it has seen, however busy the machine. The paths are in the bot's text: bots on Dask workers get the
    cluster's environment, not the test's."""
    hold = f"""
    finished = 0

    def on_game_over(self, result):
        self.finished += 1

    async def decide(self, view):
        import asyncio
        import os

        if self.finished >= 1 and os.path.exists({str(control)!r}):
            open({str(held)!r}, "a").close()
            while os.path.exists({str(control)!r}):  # the test removes the file to let the bot play on
                await asyncio.sleep(0.02)
        return self._play(view)
"""
    return holding(BOT_SOURCE, hold)


def start_cli(folder: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "skyjo_ref", "tournament", "league.yaml", "--plain", "--progress-every", "1", *args],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until_held(proc: subprocess.Popen[str], held: Path, db: Path, stored: int) -> list[str]:
    """Read the progress lines until ``stored`` games are stored and a bot holds; the lines read.

    A failure detector, not a synchronization: the run cannot end while its bots hold."""
    assert proc.stderr is not None
    seen: list[str] = []
    for line in proc.stderr:
        seen.append(line)
        if sum("] deal " in s for s in seen) >= stored:
            break
    deadline = time.monotonic() + 90
    while not held.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the tournament ended while its bots were to hold:\n" + "".join(seen)
    assert held.exists() and stored_count(db) >= stored, "no bot held within 90 s"
    return seen


def test_ctrl_c_and_kill_9_of_the_coordinator_then_resume(
    tmp_path: Path, cluster: tuple[LocalCluster, Client], reference: dict[str, Any]
) -> None:
    """Ctrl-C: exit 130, games kept; kill -9: the rerun plays only what is missing; the tables are local's."""
    local, _ = cluster
    folder = setup_folder(tmp_path / "dask")
    config = write_config(folder, THREE_BOTS, deals=4, isolation="none")  # the bot holds on files
    # a held decision must never be struck (a struck game would change the tables): a long limit
    config.write_text(config.read_text(encoding="utf-8").replace("decision_ms: 5000", "decision_ms: 100000"))
    control, held = tmp_path / "hold", tmp_path / "held"
    (folder / "bots" / "low.py").write_text(held_while(control, held), encoding="utf-8")
    db = folder / "out" / "results.sqlite"
    control.touch()

    proc = start_cli(folder, "--executor", local.scheduler_address)
    seen = wait_until_held(proc, held, db, 2)
    proc.send_signal(signal.SIGINT)
    assert proc.stderr is not None
    err = "".join(seen) + proc.stderr.read()
    assert proc.wait(timeout=60) == 130, err
    assert "Traceback" not in err
    kept = stored_count(db)
    assert f"interrupted: {kept} finished games are kept" in " ".join(err.split())

    held.unlink()
    proc = start_cli(folder, "--executor", local.scheduler_address)
    wait_until_held(proc, held, db, 2)
    proc.kill()  # the coordinator dies; the workers' bots are reaped when idle (ROOM_IDLE_S)
    proc.wait(timeout=30)
    control.unlink()  # the dead coordinator's games on the workers play on and free their threads
    before = stored_count(db)
    assert kept + 2 <= before < 24

    resumed = cli("tournament", "league.yaml", "--executor", local.scheduler_address, "--json", "t.json", cwd=folder)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{24 - before} games played" in " ".join(resumed.stderr.split())
    # the held copy of low is another file, so another version of low: the numbers are local's
    assert json.dumps(unversioned(tables_json(folder / "t.json")), sort_keys=True) == json.dumps(
        unversioned(reference), sort_keys=True
    )


def gate_here_and_on(address: str, folder: Path, args: tuple[str, ...], exit_code: int) -> dict[str, Any]:
    """The same gate played locally and on the scheduler at ``address``: each run's JSON, by "local" and "dask"."""
    runs = {}
    tag = str(len(args))  # one store per gate (a test may play several, of different lengths)
    for name, extra in (("local", ()), ("dask", ("--executor", address))):
        out = f"{name}{tag}"
        done = subprocess.run(
            [sys.executable, "-m", "skyjo_ref", "gate", *args, *extra, "--out", out, "--json", f"{out}.json"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=110,
        )
        assert done.returncode == exit_code, done.stderr
        runs[name] = json.loads((folder / f"{out}.json").read_text())
    return runs


def test_gate_on_a_scheduler_reaches_the_local_verdict(tmp_path: Path, cluster: tuple[LocalCluster, Client]) -> None:
    local, _ = cluster
    args = (MINIMAL, "greedy", "--elo0", "-300", "--elo1", "-150", "--option", "end_score=30", "-j", "2")
    runs = gate_here_and_on(local.scheduler_address, tmp_path, args, 0)
    assert runs["local"]["verdict"] == "accepted"
    for key in ("verdict", "games", "llr", "pentanomial", "history", "elo", "elo_ci"):
        assert runs["dask"][key] == runs["local"][key], key


def test_a_multi_player_gate_on_a_scheduler_reaches_the_local_verdict(
    tmp_path: Path, cluster: tuple[LocalCluster, Client]
) -> None:
    """--players K on Dask workers: the candidate's copies gate and its field gate (the balanced block)."""
    local, _ = cluster
    for table in (("--players", "3"), ("--players", "4", "--field", "random", "--field", "greedy")):
        args = ("random", "greedy", *table, "--preset", "gain", "--option", "end_score=30", "-j", "2")
        runs = gate_here_and_on(local.scheduler_address, tmp_path, args, 1)  # random behind greedy: rejected
        for key in ("verdict", "games", "llr", "block_scores", "history", "elo", "elo_ci", "field", "seating"):
            assert runs["dask"][key] == runs["local"][key], (table, key)


def test_a_bad_executor_is_one_line_and_exit_2(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    write_config(folder, THREE_BOTS)
    result = cli("tournament", "league.yaml", "--executor", "cluster", cwd=folder)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: --executor: 'cluster': expected 'local', 'processes', 'processes:N' (N worker processes) "
        "or a Dask scheduler address tcp://HOST:PORT"
    )


# -------------------------------------------------------------- all workers gone


@contextlib.contextmanager
def dask_process(*args: str) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([str(DASK), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def scheduler_address(scheduler_file: Path, scheduler: subprocess.Popen[bytes]) -> str:
    """The address a ``dask scheduler --scheduler-file`` wrote, once the whole file is there.

    Dask writes the file in place, so it exists (empty, or half written) before it holds JSON: waiting
    for it to exist is not enough (a loaded run read it empty). Wait until it parses.
    """
    deadline = time.monotonic() + 60
    while scheduler.poll() is None and time.monotonic() < deadline:
        try:
            return str(json.loads(scheduler_file.read_text())["address"])
        except (FileNotFoundError, ValueError, KeyError):
            time.sleep(0.05)
    raise AssertionError(f"the Dask scheduler wrote no address to {scheduler_file} (exit code {scheduler.poll()})")


def test_all_workers_gone_exits_3_and_keeps_finished_games(tmp_path: Path) -> None:
    """``dask scheduler`` + one ``dask worker --no-nanny``; the worker is killed after the first games."""
    scheduler_file = tmp_path / "scheduler.json"
    with dask_process(
        "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(scheduler_file)
    ) as scheduler:
        address = scheduler_address(scheduler_file, scheduler)
        with dask_process("worker", address, "--no-nanny", "--nthreads", "2", "--no-dashboard") as worker:
            with Client(address, timeout="60s") as watcher:
                watcher.wait_for_workers(1, timeout=60)  # joined before the run, whose own wait is 2 s here
            folder = setup_folder(tmp_path / "gone")
            path = write_config(folder, THREE_BOTS, deals=20, isolation="none")
            control = tmp_path / "hold"
            control.touch()  # the low bot holds after a game: the run cannot end before the worker is killed
            (folder / "bots" / "low.py").write_text(held_while(control, tmp_path / "held"), encoding="utf-8")
            path.write_text(path.read_text().replace("concurrency: 2", "concurrency: 2\nconnect_timeout_s: 2"))
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "skyjo_ref",
                    "tournament",
                    "league.yaml",
                    "--executor",
                    address,
                    "--plain",
                    "--progress-every",
                    "1",
                ],
                cwd=folder,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            assert proc.stderr is not None
            seen: list[str] = []
            for line in proc.stderr:  # the progress lines: kill the worker once games are stored
                seen.append(line)
                if "] deal " in line:
                    break
            worker.kill()
            err = "".join(seen) + proc.stderr.read()
            proc.wait(timeout=90)
    text = " ".join(err.split())
    assert proc.returncode == 3, err
    assert "no Dask worker left at the Dask scheduler at" in text
    kept = stored_count(folder / "out" / "results.sqlite")
    assert 1 <= kept < 120
    assert f"{kept} finished games are kept" in text
