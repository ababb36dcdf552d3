"""A lock someone else holds on the store never stops a run for good (issue 27, section 1).

A real second process holds the store's SQLite write lock. The store waits a bounded time, says which process
holds it (PID and command line) and what to do; a stopped run stops waiting at once; Ctrl-C stops a tournament
whose commit waits for that lock, with exit 130 and the finished games kept.
"""

from __future__ import annotations

import os
import queue
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from skyjo_ref.tournament.store import Store, StoreLocked

HOLDER = textwrap.dedent(
    """\
    import sqlite3, sys, time


    def games() -> int:
        try:
            with sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True) as db:
                return db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        except sqlite3.Error:  # not there yet
            return -1


    while games() < int(sys.argv[2]):  # a condition, polled by the holder
        time.sleep(0.05)
    db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
    db.execute("BEGIN IMMEDIATE")
    print("held", flush=True)
    sys.stdin.read()  # holds the write lock until the test closes our stdin
    """
)


@contextmanager
def holding(db: Path, after_games: int = 0) -> Iterator[subprocess.Popen[str]]:
    """A second process that takes ``db``'s write lock once it holds ``after_games`` games, until the end."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db), str(after_games)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait(timeout=30)


def test_a_held_lock_is_waited_for_a_bounded_time_and_its_holder_is_named(tmp_path: Path) -> None:
    Store(tmp_path).close()
    notes: list[str] = []
    with holding(tmp_path / "results.sqlite") as holder:
        store = Store(tmp_path, on_wait=notes.append, busy_wait_s=0.2, lock_wait_s=1.0)
        started = time.monotonic()
        with pytest.raises(StoreLocked) as caught:
            store.set_info("name", "blocked")
        waited = time.monotonic() - started
        store.close()
    assert 1.0 <= waited < 30, waited
    message = str(caught.value)
    assert f"locked by process PID {holder.pid} (" in message and "for 1 s" in message, message
    assert "stop that process (or let it finish), then run the same command again" in message
    assert len(notes) == 1 and f"PID {holder.pid}" in notes[0] and "at most 1 s" in notes[0], notes


def test_a_stopped_run_stops_waiting_for_a_lock_at_once(tmp_path: Path) -> None:
    """give_up_waiting() (from another thread, as a stopped run calls it) ends a wait that could last 10 minutes."""
    Store(tmp_path).close()
    waiting = threading.Event()
    failures: queue.Queue[BaseException] = queue.Queue()
    with holding(tmp_path / "results.sqlite"):
        store = Store(tmp_path, on_wait=lambda _: waiting.set(), busy_wait_s=0.2, lock_wait_s=600)

        def commit() -> None:
            try:
                store.set_info("name", "blocked")
            except BaseException as exc:
                failures.put(exc)

        thread = threading.Thread(target=commit)
        thread.start()
        assert waiting.wait(60)
        store.give_up_waiting()
        thread.join(60)
        assert not thread.is_alive()
        store.close()
    failure = failures.get_nowait()
    assert isinstance(failure, StoreLocked) and "as the run was stopped" in str(failure)


SLOW_BOT = textwrap.dedent(
    """\
    import os
    from skyjo_bot import Action, Bot, View


    class Slow(Bot):
        \"\"\"Its first decision waits until the test opens the FIFO (a process at a time; then it plays).\"\"\"

        opened = False

        def decide(self, view: View) -> Action:
            if not self.opened:
                with open(os.environ["GO_FIFO"], "rb"):
                    pass
                self.opened = True
            return view.legal_actions[0]
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a FIFO and /proc/locks")
@pytest.mark.timeout(240)
def test_ctrl_c_stops_a_tournament_whose_commit_waits_for_a_held_lock(tmp_path: Path) -> None:
    """The two games of the built-in bots are stored; a second process then takes the write lock; the slow bot's
    games finish and wait for it; Ctrl-C stops the run at once (exit 130), the two finished games kept.
    Before, the commit retried forever and Ctrl-C waited for it (the run hung)."""
    fifo = tmp_path / "go.fifo"
    os.mkfifo(fifo)
    (tmp_path / "slow.py").write_text(SLOW_BOT, encoding="utf-8")
    (tmp_path / "league.yaml").write_text(
        "name: locks\nplayers_per_game: 2\ndeals: 1\nseed: 3\nconcurrency: 6\noutput: out\nisolation: none\n"
        "time_control: {decision_ms: 0, bank_ms: 0}\nrating: {bootstrap: 0}\nbots:\n"
        "  - {name: greedy, builtin: greedy}\n  - {name: random, builtin: random}\n"
        f"  - {{name: slow, python: slow.py, env: {{GO_FIFO: '{fifo}'}}}}\n",
        encoding="utf-8",
    )
    run = subprocess.Popen(
        [sys.executable, "-m", "skyjo_ref", "tournament", "league.yaml", "--plain"],
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "300"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert run.stderr is not None
    reader = threading.Thread(target=lambda: [lines.put(line) for line in run.stderr or ()], daemon=True)
    reader.start()
    try:
        with holding(tmp_path / "out" / "results.sqlite", after_games=2) as holder:
            with open(fifo, "wb"):  # the slow bot's processes play on: their games end and wait for the lock
                seen = []
                while not any(f"locked by process PID {holder.pid}" in line for line in seen):
                    seen.append(lines.get(timeout=120))
                run.send_signal(signal.SIGINT)
                code = run.wait(timeout=60)
                reader.join(60)
    finally:
        if run.poll() is None:
            run.kill()
    while not lines.empty():
        seen.append(lines.get_nowait())
    text = "".join(seen)
    assert code == 130, text
    assert "interrupted: 2 finished games are kept" in text, text
    assert "Traceback" not in text and "internal error" not in text, text
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 2
