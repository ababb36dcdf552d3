"""A league's store across runs: a lock held by another process, one writer per folder, schema migration,
bot versions (a changed bot replays only its games) and merging stores that grew apart.

Real processes throughout: the CLI as a subprocess, a lock held by another process (released on a line the
test writes to it), SQLite files on disk.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from report_stores import play
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import _SCHEMA, SCHEMA_VERSION, Store, seat_results

MINI = (Path(__file__).resolve().parents[1] / "examples" / "python" / "minimal_bot.py").read_text(encoding="utf-8")


def league(folder: Path, *, deals: int = 1, extra: str = "") -> Path:
    """A small league: two built-in bots and two Python bot files (each its own version)."""
    (folder / "bots").mkdir(parents=True, exist_ok=True)
    for name in ("mini", "mini2"):
        path = folder / "bots" / f"{name}.py"
        if not path.exists():
            path.write_text(MINI, encoding="utf-8")
    config = folder / "league.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            name: lg
            rules: {{preset: official, end_score: 30}}
            players_per_game: 2
            deals: {deals}
            seed: 3
            rating: {{anchor: greedy, bootstrap: 0}}
            output: out
            bots:
              - {{name: greedy, builtin: greedy}}
              - {{name: random, builtin: random}}
              - {{name: mini, python: bots/mini.py}}
              - {{name: mini2, python: bots/mini2.py{extra}}}
            """
        ),
        encoding="utf-8",
    )
    return config


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_line(text: str) -> str:
    return " ".join(text.split())


class Holder:
    """Another process that holds a lock until the test writes a line to it."""

    def __init__(self, code: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "held"  # the lock is held from here on

    def release(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        assert self.proc.wait(timeout=60) == 0


def test_a_store_locked_by_another_process_is_waited_for_with_one_line(tmp_path: Path) -> None:
    config = league(tmp_path)
    assert cli("tournament", str(config), cwd=tmp_path).returncode == 0
    db = tmp_path / "out" / "results.sqlite"
    holder = Holder(
        "import sqlite3, sys\n"
        f"db = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
        "db.execute('BEGIN EXCLUSIVE')\n"
        "print('held', flush=True)\n"
        "sys.stdin.readline()\n"
        "db.execute('ROLLBACK')\n"
    )
    config.write_text(config.read_text().replace("deals: 1", "deals: 2"))
    run = subprocess.Popen(
        [sys.executable, "-m", "skyjo_ref", "tournament", str(config)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert run.stderr is not None
    seen = []
    for line in run.stderr:  # the run says it waits (then the test lets it go on)
        seen.append(line)
        if f"locked by process PID {holder.proc.pid} (" in line:  # the holder named
            break
    holder.release()
    _, err = run.communicate(timeout=120)
    err = "".join(seen) + err
    assert run.returncode == 0, err
    waiting = [line for line in err.splitlines() if f"locked by process PID {holder.proc.pid}" in line]
    assert len(waiting) == 1 and "waiting for it to be released (at most 60 s)" in waiting[0], err
    assert "internal error" not in err and "Traceback" not in err
    assert "12 games played" in one_line(err)  # the second deal of the 6 tables, both seatings


def test_a_second_run_on_the_same_folder_is_refused_at_once_naming_the_holder(tmp_path: Path) -> None:
    config = league(tmp_path)
    holder = Holder(
        "import sys\n"
        "from pathlib import Path\n"
        "from skyjo_ref.tournament.writer_lock import WriterLock\n"
        f"lock = WriterLock(Path({str(tmp_path / 'out')!r}))\n"
        "print('held', flush=True)\n"
        "sys.stdin.readline()\n"
        "lock.release()\n"
    )
    refused = cli("tournament", str(config), cwd=tmp_path)
    assert refused.returncode == 6, refused.stderr
    message = one_line(refused.stderr)
    assert f"is in use by another run (host {os.uname().nodename}, PID {holder.proc.pid}, started" in message
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert not (tmp_path / "out" / "results.sqlite").exists()  # nothing was done
    holder.release()
    assert cli("tournament", str(config), cwd=tmp_path).returncode == 0
    shutil.copytree(tmp_path / "out", tmp_path / "copy")
    # readers never take the lock: ratings reads while another run holds it
    holder = Holder(
        "import sys\n"
        "from pathlib import Path\n"
        "from skyjo_ref.tournament.writer_lock import WriterLock\n"
        f"lock = WriterLock(Path({str(tmp_path / 'out')!r}))\n"
        "print('held', flush=True)\n"
        "sys.stdin.readline()\n"
    )
    read = cli("ratings", "out", cwd=tmp_path)
    assert read.returncode == 0 and "greedy" in read.stdout, read.stderr
    merged = cli("merge", "out", "copy", cwd=tmp_path)  # merge writes OUT: it takes the same lock
    assert merged.returncode == 6 and "is in use by another run" in merged.stderr, merged.stderr
    holder.release()


def test_a_schema_1_store_is_migrated_and_its_games_taken_as_the_current_versions(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    folder.mkdir()
    db = sqlite3.connect(folder / "results.sqlite", isolation_level=None)
    db.executescript(_SCHEMA)  # schema 1: the tables as they were before versions
    db.execute("INSERT INTO meta VALUES ('format', 'skyjo-tournament-store/1')")
    game = GameId(("a", "b"), 0, 0)
    record = play(list(game.seats), "s", ["greedy", "random"])
    db.execute(
        "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (game.key, "a+b", 0, 0, json.dumps(list(game.seats)), "s", json.dumps(record), 1.0, 0.1),
    )
    for seat, s in enumerate(seat_results(record, game.seats)):
        db.execute(
            "INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (game.key, seat, s.bot, s.total, s.rank, s.strikes, int(s.forfeit), json.dumps(list(s.round_scores))),
        )
    db.close()
    with Store(folder, create=False) as store:
        assert dict(store.db.execute("SELECT key, value FROM meta").fetchall())["schema"] == str(SCHEMA_VERSION)
        assert [g.ref for g in store.games()] == ["a+b/0/0"]  # the game is there, under its old key
        assert store.use_versions({"a": "v1", "b": "v7"}) == []  # no earlier versions: nothing is "new"
        assert {s.version for s in store.games()[0].seats} == {"v1", "v7"}  # adopted, not replayed
        assert store.use_versions({"a": "v2", "b": "v7"}) == [("a", "v2", "v1")]
    with Store(folder, create=False) as again:  # opening a migrated store changes nothing
        assert len(again.games()) == 1


def stored(folder: Path) -> dict[str, dict[str, str]]:
    with Store(folder, create=False) as store:
        return {g.ref: {s.bot: s.version for s in g.seats} for g in store.games()}


def test_a_changed_bot_replays_only_its_own_games_and_the_old_ones_stay_as_history(tmp_path: Path) -> None:
    config = league(tmp_path, extra=", version: v1")
    first = cli("tournament", str(config), "--json", "one.json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert len(stored(tmp_path / "out")) == 12  # 6 tables x 1 deal x 2 seatings
    # mini2's file changes but its config says the same version: nothing to play
    (tmp_path / "bots" / "mini2.py").write_text(MINI + "\n# a comment\n", encoding="utf-8")
    same = cli("tournament", str(config), cwd=tmp_path)
    assert "0 games played" in one_line(same.stderr), same.stderr
    # mini's file changes (a new digest): its 3 tables are played again, nothing else
    (tmp_path / "bots" / "mini.py").write_text(MINI + "\n# a new version\n", encoding="utf-8")
    second = cli("tournament", str(config), "--json", "two.json", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "6 games played" in one_line(second.stderr) and "bot mini is a new version" in one_line(second.stderr)
    games = stored(tmp_path / "out")
    assert len(games) == 18
    minis = [v["mini"] for v in games.values() if "mini" in v]
    assert len(minis) == 6 + 6 and len(set(minis)) == 2  # both versions, each with its games
    data = json.loads((tmp_path / "two.json").read_text(encoding="utf-8"))
    rows = {row["name"]: row for row in data["bots"]}
    assert set(rows) == {"greedy", "random", "mini", "mini2"}  # the old version is not a row
    assert rows["mini"]["games"] == 6 and rows["mini2"]["version"] == "v1"
    old = [v for v in data["versions"] if v["bot"] == "mini" and not v["current"]]
    assert len(old) == 1 and old[0]["games"] == 6 and old[0]["elo"] is not None
    # the record says which version played
    record = json.loads(next((tmp_path / "out" / "games").glob("mini+mini2__d0_r0~*.json")).read_text())
    assert {b["name"]: b["version_id"] for b in record["meta"]["bots"]}["mini2"] == "v1"
    # a bot removed from the config keeps its history out of the table
    config.write_text(config.read_text().replace("  - {name: random, builtin: random}\n", ""))
    third = cli("tournament", str(config), "--json", "three.json", cwd=tmp_path)
    assert third.returncode == 0 and "0 games played" in one_line(third.stderr), third.stderr
    names = [row["name"] for row in json.loads((tmp_path / "three.json").read_text())["bots"]]
    assert sorted(names) == ["greedy", "mini", "mini2"]


def test_merge_of_two_stores_that_grew_apart_keeps_every_game_once(tmp_path: Path) -> None:
    base = tmp_path / "base"
    config = league(base)
    assert cli("tournament", str(config), cwd=base).returncode == 0
    one, two = tmp_path / "one", tmp_path / "two"
    shutil.copytree(base, one)
    shutil.copytree(base, two)
    (one / "bots" / "mini.py").write_text(MINI + "\n# one's change\n", encoding="utf-8")
    (two / "bots" / "mini2.py").write_text(MINI + "\n# two's change\n", encoding="utf-8")
    for folder in (one, two):
        assert cli("tournament", "league.yaml", cwd=folder).returncode == 0
    merged = cli("merge", "merged", "one/out", "two/out", cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    games = stored(tmp_path / "merged")
    assert len(games) == 12 + 6 + 6  # the artifact's games once, each store's new games
    assert set(games) == set(stored(one / "out")) | set(stored(two / "out"))
    data: dict[str, Any] = json.loads(cli("ratings", "merged", "--json", "-", cwd=tmp_path).stdout)
    current = {row["name"]: row["version"] for row in data["bots"]}
    with Store(one / "out", create=False) as a, Store(two / "out", create=False) as b:
        assert current["mini"] == a.current_versions()["mini"]  # each store's newer version is current
        assert current["mini2"] == b.current_versions()["mini2"]
    assert all(row["games"] == 6 for row in data["bots"] if row["name"].startswith("mini"))


def test_a_secret_seed_deals_what_the_public_seed_cannot_and_records_say_which(tmp_path: Path) -> None:
    config = league(tmp_path)
    text = config.read_text()
    config.write_text(text.replace("seed: 3\n", "seed: 3\nseed_secret_env: LG_SECRET\n"))
    short = cli("tournament", str(config), cwd=tmp_path)
    assert short.returncode == 2 and "seed_secret_env: environment variable LG_SECRET is not set" in short.stderr
    secret = "0123456789abcdef-secret"
    played = subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "tournament", str(config)],
        cwd=tmp_path,
        env={**os.environ, "LG_SECRET": secret},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert played.returncode == 0, played.stderr
    records = {
        p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted((tmp_path / "out" / "games").glob("*.json"))
    }
    assert len(records) == 12
    for record in records.values():
        assert record["meta"]["deals"]["source"] == "env:LG_SECRET"
        assert secret not in json.dumps(record)  # the secret itself is nowhere
    with Store(tmp_path / "out", create=False) as store:
        seeds = {
            g.ref: store.db.execute("SELECT deal_seed FROM games WHERE key = ?", (g.ref,)).fetchone()[0]
            for g in store.games()
        }
    assert all(seed.startswith("secret-") and "3/deal" not in seed for seed in seeds.values())
    # both seatings of a table share their deal; two tables of one deal number do not
    by_table: dict[str, set[str]] = {}
    for key, seed in seeds.items():
        by_table.setdefault(key.split("/")[0], set()).add(seed)
    assert all(len(s) == 1 for s in by_table.values()) and len(set().union(*by_table.values())) == 6


def test_a_command_bot_in_the_config_folder_keeps_its_version_while_the_store_grows(tmp_path: Path) -> None:
    """Its folder (the config's) holds the store, which changes every game: the store is never part of a version."""
    config = league(tmp_path)
    (tmp_path / "bot.py").write_text(MINI, encoding="utf-8")
    text = config.read_text().replace(
        "  - {name: mini2, python: bots/mini2.py}\n",
        f"  - {{name: cmd, command: [{sys.executable}, -m, skyjo_bot, run, bot.py]}}\n",
    )
    config.write_text(text)
    first = cli("tournament", str(config), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    again = cli("tournament", str(config), cwd=tmp_path)
    assert again.returncode == 0 and "0 games played" in one_line(again.stderr), again.stderr
    (tmp_path / "bot.py").write_text(MINI + "\n# changed\n", encoding="utf-8")  # its own file: a new version
    changed = cli("tournament", str(config), cwd=tmp_path)
    assert "6 games played" in one_line(changed.stderr) and "bot cmd is a new version" in changed.stderr
