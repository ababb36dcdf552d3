"""End to end: ``skyjo-ref tournament`` through the real CLI, a real referee and subprocess SDK bots.

Games are kept short with a low ``end_score``; every run is a subprocess of the
CLI as a user would start it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pty
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from sdk_harness import WITH_CTRL_C
from skyjo_ref import records
from skyjo_ref.tournament import runner
from skyjo_ref.tournament.config import load_config
from skyjo_ref.tournament.store import Store, StoredGame

BOT_SOURCE = textwrap.dedent(
    '''\
    """A deterministic SDK bot for the tournament tests (CRASH_ONCE=file: crash once; CRASH_EVERY=n: always)."""
    import os

    from skyjo_bot import Action, Bot, DecisionKind, View


    class LowCards(Bot):
        def __init__(self) -> None:
            super().__init__()
            self.decisions = 0

        def decide(self, view: View) -> Action:
            self.decisions += 1
            marker = os.environ.get("CRASH_ONCE")
            if marker and self.decisions == 15:
                try:  # created atomically: of two processes at their 15th decision at once, only one crashes
                    os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                except FileExistsError:
                    pass
                else:
                    os._exit(3)
            if self.decisions == int(os.environ.get("CRASH_EVERY", "0")):
                os._exit(5)  # every process dies at its n-th decision
            grid = view.my_grid
            hidden = grid.hidden_positions()
            if view.decision is DecisionKind.OPENING_REVEAL:
                return Action.reveal(hidden[-1])
            if view.decision is DecisionKind.DRAW_OR_TAKE:
                top = view.discard_top
                limit = int(os.environ.get("TAKE_MAX", "3"))
                return Action.take() if top is not None and top <= limit else Action.draw()
            card = view.hand
            assert card is not None
            revealed = grid.revealed_positions()
            worst = max(revealed, key=lambda p: grid.values[p] or 0, default=None)
            if worst is not None and (grid.values[worst] or 0) > card:
                return Action.swap(worst)
            if hidden and card <= 4:
                return Action.swap(hidden[0])
            if hidden and view.decision is DecisionKind.SWAP_OR_REVEAL:
                return Action.reveal(hidden[0])
            return Action.swap(hidden[0] if hidden else revealed[0])
    '''
)


#: Appended to a bot class whose ``decide`` is renamed ``_play`` (see :func:`holding`): with HOLD_AFTER=n in its
#: environment, once n of its games are over it touches HOLD_FILE and never answers again (until stopped: its
#: event loop stays free for SIGTERM). A run then cannot end by itself: a test stops it at a point it has seen,
#: however fast or slow the machine. Without HOLD_AFTER it plays exactly as ``_play`` does.
HOLD_WHEN_TOLD = """
    finished = 0

    def on_game_over(self, result):
        self.finished += 1

    async def decide(self, view):
        import asyncio
        import os

        after = os.environ.get("HOLD_AFTER")
        if after is not None and self.finished >= int(after):
            open(os.environ["HOLD_FILE"], "a").close()
            await asyncio.Event().wait()
        return self._play(view)
"""


def holding(source: str, hooks: str = HOLD_WHEN_TOLD) -> str:
    """``source`` (one bot class, its ``decide`` last) with its ``decide`` renamed ``_play`` and ``hooks`` (by
    default :data:`HOLD_WHEN_TOLD`: a ``decide`` that calls ``_play``, and more) added to the class."""
    assert source.count("    def decide(") == 1 and source.rstrip().endswith(")")
    return source.replace("    def decide(", "    def _play(", 1) + hooks


def setup_folder(tmp_path: Path) -> Path:
    (tmp_path / "bots").mkdir(parents=True, exist_ok=True)
    (tmp_path / "bots" / "low.py").write_text(BOT_SOURCE, encoding="utf-8")
    return tmp_path


def write_config(
    folder: Path,
    bots: str,
    *,
    k: int = 2,
    deals: int = 2,
    seed: int = 5,
    rating: str = "{bootstrap: 50}",
    isolation: str | None = None,
) -> Path:
    """``isolation: none`` for bots that talk with the test through files and environment variables."""
    text = (
        (f"isolation: {isolation}\n" if isolation else "")
        + f"name: t\nrules: {{preset: official, end_score: 30}}\nplayers_per_game: {k}\ndeals: {deals}\n"
        f"seed: {seed}\nconcurrency: 2\ntime_control: {{decision_ms: 5000, grace_ms: 5000}}\n"
        f"rating: {rating}\noutput: out\nbots:\n{textwrap.dedent(bots)}"
    )
    path = folder / "league.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def tables_json(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("tournament", None)
    return dict(data)


def stored_count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def child_pids(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


THREE_BOTS = """\
  - {name: greedy, builtin: greedy}
  - {name: random, builtin: random}
  - {name: low, python: bots/low.py}
"""


def test_three_bots_two_players(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    write_config(folder, THREE_BOTS, deals=2)
    result = cli("tournament", "league.yaml", "--json", "tables.json", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    for name in ("greedy", "random", "low"):
        assert name in result.stdout
    assert "head to head" in result.stdout
    data = tables_json(folder / "tables.json")
    assert data["games"] == 12  # 3 tables x 2 deals x 2 rotations
    assert data["duplicate_blocks"] == 6
    assert {b["name"]: b["games"] for b in data["bots"]} == {"greedy": 8, "random": 8, "low": 8}
    assert data["head_to_head"]["greedy"]["low"]["games"] == 4
    # 2 deals shared by every table: 2 independent units, too few for an interval (not a zero-width one)
    assert data["rating"]["resample"] == "deal" and data["rating"]["resample_units"] == 2
    assert all(b["elo_low"] is None and b["elo_high"] is None for b in data["bots"])
    assert any(note.startswith("too few games for an interval: greedy, low, random") for note in data["notes"])
    # pool mean anchoring: the mean Elo is 1500
    assert abs(sum(b["elo"] for b in data["bots"]) / 3 - 1500) < 1e-6

    files = sorted((folder / "out" / "games").glob("*.json"))
    assert len(files) == 12
    decks: dict[int, list[int]] = {}
    for file in files:
        game = records.check_file(file)  # every stored record replays and its results are right
        record = records.load(file)
        table, deal, rotation = file.stem.split("~")[0].replace("__d", "/").replace("_r", "/").split("/")
        names = table.split("+")
        assert record["players"] == names[int(rotation) :] + names[: int(rotation)]
        # duplicate format: every table and every rotation of a deal gets the same first deck
        assert decks.setdefault(int(deal), record["rounds"][0]["deck"]) == record["rounds"][0]["deck"]
        assert game.over
    assert decks[0] != decks[1]

    again = cli("ratings", "out", "--json", "-", cwd=folder)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == data
    anchored = cli(
        "ratings", "out", "--anchor", "random", "--elo", "1000", "--bootstrap", "0", "--json", "-", cwd=folder
    )
    rows = {b["name"]: b for b in json.loads(anchored.stdout)["bots"]}
    assert rows["random"]["elo"] == 1000 and rows["random"]["elo_low"] is None
    gaps = {b["name"]: b["elo"] - 1500 for b in data["bots"]}
    assert abs((rows["greedy"]["elo"] - 1000) - (gaps["greedy"] - gaps["random"])) < 0.05  # same fit, new anchor


def test_an_in_process_bot_plays_the_same_tournament_as_its_process(tmp_path: Path) -> None:
    """in_process: true plays the file inside the referee (no process, no log) with identical results."""
    tables = []
    for folder, extra in ((tmp_path / "grpc", ""), (tmp_path / "local", ", in_process: true")):
        setup_folder(folder)
        write_config(folder, THREE_BOTS.replace("python: bots/low.py", "python: bots/low.py" + extra), deals=1)
        result = cli("tournament", "league.yaml", "--json", "tables.json", cwd=folder)
        assert result.returncode == 0, result.stderr
        tables.append(tables_json(folder / "tables.json"))
    assert tables[0]["games"] == 6
    assert tables[1] == tables[0]
    assert not list((tmp_path / "local" / "out" / "logs").glob("low-*.log"))
    record = records.load(sorted((tmp_path / "local" / "out" / "games").glob("*low*.json"))[0])
    assert {"name": "low", "version": "in-process"} in [
        {k: v for k, v in b.items() if k != "version_id"} for b in record["meta"]["bots"]
    ]


def test_four_bots_three_players_with_a_command_bot(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    bots = f"""\
  - {{name: greedy, builtin: greedy}}
  - {{name: random, builtin: random}}
  - {{name: low, python: "bots/low.py:LowCards"}}
  - name: cmd
    command: [{json.dumps(sys.executable)}, -m, skyjo_bot, run, low.py]
    cwd: bots
    env: {{TAKE_MAX: 5}}
"""
    path = write_config(folder, bots, k=3, deals=1, rating="{anchor: random, elo: 1000, bootstrap: 50}")
    path.write_text("seating: rotations\n" + path.read_text(), encoding="utf-8")  # 3 games a block, not 6
    result = cli("tournament", "league.yaml", "--json", "tables.json", cwd=folder)
    assert result.returncode == 0, result.stderr
    data = tables_json(folder / "tables.json")
    assert data["games"] == 12  # 4 tables x 1 deal x 3 rotations
    assert {b["name"]: b["games"] for b in data["bots"]} == {"greedy": 9, "random": 9, "low": 9, "cmd": 9}
    assert data["head_to_head"]["cmd"]["low"]["games"] == 6
    random_row = next(b for b in data["bots"] if b["name"] == "random")
    assert random_row["elo"] == 1000 and data["rating"]["anchor"] == "random"
    assert sorted(p.name for p in (folder / "out" / "logs").iterdir())[0].startswith("cmd-")


def test_at_a_big_table_a_process_goes_on_to_other_deals_instead_of_being_replaced(tmp_path: Path) -> None:
    """A 4-player block is 12 games, more than the 9 processes the SDK bot keeps: a process plays one game of
    each deal (never two of one: it has seen the deck), so the pool needs 12 processes for all 3 deals. Played
    deal after deal, processes that had seen a deal were retired and replaced: 18 for these 36 games."""
    folder = setup_folder(tmp_path)
    (folder / "bots" / "tell.py").write_text(
        "import os\nfrom low import LowCards\n\n\nclass Tell(LowCards):\n"
        "    def on_game_start(self, start: object) -> None:\n"
        "        print(f\"GAME {os.getpid()} {getattr(start, 'game_id', '?')}\", flush=True)\n",
        encoding="utf-8",
    )
    bots = """\
  - {name: tell, python: "bots/tell.py:Tell"}
  - {name: greedy, builtin: greedy}
  - {name: greedy2, builtin: greedy}
  - {name: random, builtin: random}
"""
    path = write_config(folder, bots, k=4, deals=3, rating="{bootstrap: 0}")
    path.write_text(path.read_text(encoding="utf-8").replace("concurrency: 2", "concurrency: 1"), encoding="utf-8")
    result = cli("tournament", "league.yaml", cwd=folder)  # one game at a time: the order does not hang on timing
    assert result.returncode == 0, result.stderr
    logs = sorted((folder / "out" / "logs").glob("tell-*.log"))
    deal_of = {}
    for record in (folder / "out" / "games").glob("*.json"):
        game_id = json.loads(record.read_text(encoding="utf-8"))["meta"]["game_id"]
        deal_of[game_id] = int(record.stem.rsplit("__d", 1)[1].split("_r")[0])  # table__dD_rR.json
    played: dict[str, list[int]] = {}
    for log in logs:
        for line in log.read_text(encoding="utf-8").splitlines():
            if line.startswith("GAME "):
                _, pid, game_id = line.split()
                played.setdefault(f"{log.name}:{pid}", []).append(deal_of[game_id])
    assert sum(len(deals) for deals in played.values()) == 36
    assert all(len(deals) == len(set(deals)) for deals in played.values()), played
    assert len(logs) == 12, [len(d) for d in played.values()]  # deal after deal it took 18


def test_kill_9_in_the_middle_then_resume_gives_identical_tables(tmp_path: Path) -> None:
    # the held copy of low is another file (another digest): one `version:` says it is the same bot
    one_version = THREE_BOTS.replace("python: bots/low.py}", "python: bots/low.py, version: low-1}")
    reference = setup_folder(tmp_path / "reference")
    write_config(reference, one_version, deals=4)
    whole = cli("tournament", "league.yaml", "--json", "tables.json", cwd=reference)
    assert whole.returncode == 0, whole.stderr

    folder = setup_folder(tmp_path / "killed")
    (folder / "bots" / "low.py").write_text(holding(BOT_SOURCE), encoding="utf-8")  # the same play, and a hold
    write_config(folder, one_version, deals=4, isolation="none")
    db = folder / "out" / "results.sqlite"
    held = folder / "holding"
    proc = subprocess.Popen(  # a low process holds after 2 of its games: the kill comes mid-run, never after the end
        [sys.executable, "-m", "skyjo_ref", "tournament", "league.yaml"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "HOLD_AFTER": "2", "HOLD_FILE": str(held)},
    )
    deadline = time.monotonic() + 90  # a failure detector: the run cannot end by itself
    while not (held.exists() and stored_count(db) >= 2) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the tournament ended before the test killed it"
    assert held.exists() and stored_count(db) >= 2, "no game held and two stored within 90 s"
    bots = child_pids(proc.pid)  # bot processes run in their own process groups
    proc.kill()  # kill -9, then the bots too, as a power cut would
    for pid in bots:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait(timeout=30)
    before = stored_count(db)
    assert 2 <= before < 24

    # no HOLD_AFTER now: low plays to the end
    resumed = cli("tournament", "league.yaml", "--json", "tables.json", cwd=folder)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{24 - before} games played" in " ".join(resumed.stderr.split())
    assert f"{before} were already stored" in " ".join(resumed.stderr.split())
    assert tables_json(folder / "tables.json") == tables_json(reference / "tables.json")


def test_adding_a_bot_plays_only_its_games(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    write_config(folder, THREE_BOTS, deals=2)
    first = cli("tournament", "league.yaml", cwd=folder)
    assert first.returncode == 0, first.stderr
    db = folder / "out" / "results.sqlite"
    with sqlite3.connect(db) as conn:
        old = dict(conn.execute("SELECT key, finished_at FROM games").fetchall())
    assert len(old) == 12

    write_config(folder, THREE_BOTS + "  - {name: greedy2, builtin: greedy}\n", deals=2)
    second = cli("tournament", "league.yaml", "--json", "tables.json", cwd=folder)
    assert second.returncode == 0, second.stderr
    assert "12 games played" in second.stderr and "12 were already stored" in second.stderr
    with sqlite3.connect(db) as conn:
        now = dict(conn.execute("SELECT key, finished_at FROM games").fetchall())
    assert len(now) == 24
    assert {k: now[k] for k in old} == old  # nothing was played again
    assert all("greedy2" in key for key in set(now) - set(old))
    data = tables_json(folder / "tables.json")
    assert {b["name"]: b["games"] for b in data["bots"]} == {"greedy": 12, "random": 12, "low": 12, "greedy2": 12}


def test_changed_settings_are_refused_and_new_sets_old_results_aside(tmp_path: Path) -> None:
    bots = "  - {name: greedy, builtin: greedy}\n  - {name: random, builtin: random}\n"
    write_config(tmp_path, bots, deals=1, seed=1)
    assert cli("tournament", "league.yaml", cwd=tmp_path).returncode == 0
    write_config(tmp_path, bots, deals=1, seed=2)
    refused = cli("tournament", "league.yaml", cwd=tmp_path)
    message = " ".join(refused.stderr.split())
    assert refused.returncode == 2
    assert "seed: stored 1, league.yaml has 2" in message and "--new" in message
    fresh = cli("tournament", "league.yaml", "--new", cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    assert len(list(tmp_path.glob("out.old-*"))) == 1


def test_a_crashed_bot_process_is_restarted_and_the_fault_recorded(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    marker = folder / "crashed.txt"
    bots = f"""\
  - {{name: greedy, builtin: greedy}}
  - {{name: low, python: bots/low.py, env: {{CRASH_ONCE: {json.dumps(str(marker))}}}}}
"""
    config = write_config(folder, bots, deals=2, isolation="none")
    # one game at a time: the crash (low's 15th decision, in game 1 or 2) comes before a game that needs low again,
    # which waits for the restart; with two at once the other games could all end first (seen under load), and the
    # run end before the crash is noted
    config.write_text(config.read_text().replace("concurrency: 2", "concurrency: 1"))
    result = cli("tournament", "league.yaml", "--json", "tables.json", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert marker.exists()
    assert "restarting it" in result.stderr
    with sqlite3.connect(folder / "out" / "results.sqlite") as conn:
        faults = conn.execute("SELECT bot, kind, detail FROM faults").fetchall()
    assert [(bot, kind) for bot, kind, _ in faults] == [("low", "crash")]
    assert "exited with code 3" in faults[0][2]
    assert tables_json(folder / "tables.json")["games"] == 4


#: Hooks for BOT_SOURCE (see :func:`holding`): the first of its processes to decide claims PARENT_FILE and writes its
#: parent's PID (the process the referee side started) there; once END_AFTER of its games are over, that process
#: waits while END_HOLD exists, then exits with code 3 (the bot's other processes play on).
CRASH_AT_THE_END = """
    finished = 0
    claimed = False

    def on_game_over(self, result):
        import os
        import time

        self.finished += 1
        if self.claimed and self.finished == int(os.environ["END_AFTER"]):
            while os.path.exists(os.environ["END_HOLD"]):  # the test removes it once the run's last game is in
                time.sleep(0.01)
            os._exit(3)

    def decide(self, view):
        import os

        if self.decisions == 0:
            try:
                fd = os.open(os.environ["PARENT_FILE"] + ".claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return self._play(view)
            os.close(fd)
            self.claimed = True
            with open(os.environ["PARENT_FILE"] + ".tmp", "w") as out:
                out.write(str(os.getppid()))
            os.replace(os.environ["PARENT_FILE"] + ".tmp", os.environ["PARENT_FILE"])
        return self._play(view)
"""


def test_a_bot_that_crashes_as_the_run_ends_has_its_fault_stored(tmp_path: Path) -> None:
    """The bot's process dies once the last game is committed, before the run stops its processes: the crash is
    stored and told like any other, not taken for the exit that stopping it causes."""
    folder = setup_folder(tmp_path)
    (folder / "bots" / "ender.py").write_text(holding(BOT_SOURCE, CRASH_AT_THE_END), encoding="utf-8")
    hold, parent_file = folder / "hold", folder / "parent.txt"
    hold.touch()
    env = {"END_AFTER": 1, "END_HOLD": str(hold), "PARENT_FILE": str(parent_file)}
    bots = f"  - {{name: greedy, builtin: greedy}}\n  - {{name: ender, python: bots/ender.py, env: {json.dumps(env)}}}"
    # two games, one at a time: the first process of ender plays the first and holds; no process plays both games
    # of a deal, so a second one plays the last; once that is committed the first exits 3
    path = write_config(folder, bots, deals=1, isolation="none")
    path.write_text(path.read_text().replace("concurrency: 2", "concurrency: 1"))

    class LetItCrashAtTheEnd(runner.QuietObserver):
        def __init__(self) -> None:
            self.notes: list[str] = []

        def game_finished(self, game: StoredGame, done: int, total: int) -> None:
            if done == total:  # the last game is committed: let the bot go, and wait, loop blocked, until it is gone
                hold.unlink()
                with contextlib.suppress(ChildProcessError):  # reaped already by asyncio's child watcher thread
                    os.waitid(os.P_PID, int(parent_file.read_text()), os.WEXITED | os.WNOWAIT)

        def note(self, message: str) -> None:
            self.notes.append(message)

    config = load_config(path)
    observer = LetItCrashAtTheEnd()
    with Store(config.output) as store:
        store.bind(runner.fingerprint(config))
        summary = asyncio.run(asyncio.wait_for(runner.run(config, store, observer), 100))
        faults = store.faults()
    assert summary.played == 2 and not hold.exists()
    assert [(f.bot, f.kind) for f in faults] == [("ender", "crash")], faults
    assert "exited with code 3" in faults[0].detail
    assert any("bot ender:" in note and "exited with code 3" in note for note in observer.notes), observer.notes


def test_a_bot_that_keeps_crashing_after_it_played_does_not_stop_the_tournament(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    bots = "  - {name: greedy, builtin: greedy}\n  - {name: crashy, python: bots/low.py, env: {CRASH_EVERY: 3}}\n"
    config = write_config(folder, bots, deals=1)
    config.write_text(config.read_text().replace("grace_ms: 5000", "grace_ms: 1000"))
    result = cli("tournament", "league.yaml", "--json", "tables.json", cwd=folder)
    assert result.returncode == 0, result.stderr
    rows = {b["name"]: b for b in tables_json(folder / "tables.json")["bots"]}
    assert rows["crashy"]["games"] == 2 and rows["crashy"]["forfeits"] == 2
    with sqlite3.connect(folder / "out" / "results.sqlite") as conn:
        kinds = [kind for (kind,) in conn.execute("SELECT kind FROM faults")]
    assert kinds.count("crash") >= 2


def test_a_bot_that_cannot_run_stops_the_tournament_with_exit_3(tmp_path: Path) -> None:
    bots = "  - {name: aaa, builtin: greedy}\n  - {name: bbb, builtin: random}\n"
    write_config(tmp_path, bots, deals=1)
    assert cli("tournament", "league.yaml", cwd=tmp_path).returncode == 0
    broken = """\
  - name: broken
    command: [sh, -c, "echo no luck; exit 4"]
"""
    write_config(tmp_path, bots + broken, deals=1)
    result = cli("tournament", "league.yaml", cwd=tmp_path)
    message = " ".join(result.stderr.split())
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    assert "bot 'broken'" in message and "exited with code 4" in message and "no luck" in message
    assert "2 finished games are kept" in message
    assert stored_count(tmp_path / "out" / "results.sqlite") == 2


HOLD_SOURCE = textwrap.dedent(
    """\
    \"\"\"Plays one game, then never answers again (until stopped) and says so: touches HOLD_FILE.\"\"\"
    import asyncio
    import os
    from pathlib import Path

    from skyjo_bot import Action, Bot, GameResult, View


    class Hold(Bot):
        def __init__(self) -> None:
            super().__init__()
            self.games = 0

        def on_game_over(self, result: GameResult) -> None:
            self.games += 1

        async def decide(self, view: View) -> Action:
            if self.games >= 1:
                Path(os.environ["HOLD_FILE"]).touch()
                await asyncio.Event().wait()  # the loop stays free: SIGTERM still ends this process
            return view.legal_actions[0]
    """
)


def test_ctrl_c_exits_130_and_keeps_finished_games(tmp_path: Path) -> None:
    """SIGINT at a point the test sees: two games stored and a bot holding a game, so none can finish."""
    folder = setup_folder(tmp_path)
    (folder / "bots" / "hold.py").write_text(HOLD_SOURCE, encoding="utf-8")
    holding = folder / "holding"
    bots = f"""\
  - {{name: greedy, builtin: greedy}}
  - {{name: random, builtin: random}}
  - {{name: hold, python: bots/hold.py, env: {{HOLD_FILE: {json.dumps(str(holding))}}}}}
"""
    config = write_config(folder, bots, deals=2, isolation="none")
    forever = "{decision_ms: 86400000, bank_ms: 86400000, grace_ms: 5000}"  # a held decision never times out
    config.write_text(config.read_text().replace("{decision_ms: 5000, grace_ms: 5000}", forever))
    db = folder / "out" / "results.sqlite"
    proc = subprocess.Popen(
        [*WITH_CTRL_C, "-X", "faulthandler", "-m", "skyjo_ref", "tournament", "league.yaml"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 90  # a failure detector: the tournament cannot end by itself
    while not (holding.exists() and stored_count(db) >= 2) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the tournament ended before the test interrupted it"
    assert holding.exists() and stored_count(db) >= 2, "no game held and two stored within 90 s"
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # -X faulthandler: every thread's stack, to show where it hangs
        _, err = proc.communicate(timeout=30)
        raise AssertionError(f"the tournament did not stop within 60 s of SIGINT:\n{err[-8000:]}") from None
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    kept = stored_count(db)
    assert f"interrupted: {kept} finished games are kept" in " ".join(err.split())
    assert 2 <= kept < 12


def test_a_bot_that_cannot_be_loaded_stops_the_run_at_its_first_exit(tmp_path: Path) -> None:
    """An import error is a config to fix: one note and exit 3, not a restart after restart of the same error."""
    (tmp_path / "broken.py").write_text("import no_such_module_here\n", encoding="utf-8")
    write_config(
        tmp_path,
        "  - {name: aaa, builtin: greedy}\n"
        f"  - {{name: broken, command: [{json.dumps(sys.executable)}, -m, skyjo_bot, run, broken.py]}}\n",
        deals=1,
    )
    result = cli("tournament", "league.yaml", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert "Traceback (most recent call last)" not in result.stderr.split("error:")[-1]
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: bot broken: process")]
    assert len(notes) == 1 and "exited with code 2" in notes[0], result.stderr
    assert "restarting" not in result.stderr
    assert "bot 'broken' cannot run" in " ".join(result.stderr.split())


def test_a_bot_that_never_connects_stops_the_tournament_with_exit_3(tmp_path: Path) -> None:
    bots = """\
  - {name: greedy, builtin: greedy}
  - name: silent
    command: [sleep, "60"]
"""
    config = write_config(tmp_path, bots, deals=1)
    config.write_text(config.read_text().replace("bots:\n", "connect_timeout_s: 2\nbots:\n"))
    started = time.monotonic()
    result = cli("tournament", "league.yaml", cwd=tmp_path)
    message = " ".join(result.stderr.split())
    assert result.returncode == 3, result.stderr
    assert "bot 'silent' did not connect to the referee within 2 s (connect_timeout_s)" in message
    assert time.monotonic() - started < 60  # it was stopped, not waited for


def test_a_remote_bot_plays_with_its_own_token(tmp_path: Path) -> None:
    folder = setup_folder(tmp_path)
    # a fixed address the bot knows in advance: a Unix socket in the test's folder (a free TCP port found by a
    # probe could be taken by another test's server before the referee binds it)
    address = "unix:referee.sock"  # relative: both processes run in the folder
    token = "remote-token-1234"
    bots = f"  - {{name: greedy, builtin: greedy}}\n  - {{name: far, remote: {{token: {token}}}}}\n"
    config = write_config(folder, bots, deals=1)
    config.write_text(config.read_text().replace("bots:\n", f"referee: {{listen: '{address}'}}\nbots:\n"))
    env = {**os.environ, "SKYJO_ADDR": address, "SKYJO_TOKEN": token}
    remote = subprocess.Popen(
        [sys.executable, "-m", "skyjo_bot", "run", "bots/low.py", "--give-up", "20"],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        result = cli("tournament", "league.yaml", "--json", "tables.json", cwd=folder)
    finally:
        remote.terminate()
        remote.wait(timeout=30)
    assert result.returncode == 0, result.stderr
    data = tables_json(folder / "tables.json")
    assert {b["name"]: b["games"] for b in data["bots"]} == {"greedy": 2, "far": 2}
    assert all(b["forfeits"] == 0 for b in data["bots"])


def test_live_display_on_a_terminal(tmp_path: Path) -> None:
    """On a terminal (a pseudo-terminal here), progress bar and live standings; the tables at the end."""
    bots = (
        "  - {name: greedy, builtin: greedy}\n  - {name: random, builtin: random}\n  - {name: rnd2, builtin: random}\n"
    )
    write_config(tmp_path, bots, deals=3)
    primary, secondary = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "skyjo_ref", "tournament", "league.yaml"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:  # the other side closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(primary)
    assert proc.wait(timeout=60) == 0
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert "games" in screen and "18/18" in screen  # the progress bar reached the end
    assert "Plackett-Luce Elo" in screen and "head to head" in screen
    assert "Traceback" not in screen
