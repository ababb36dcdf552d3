"""Links in a submission: an isolated bot's files stay in its folder, whatever its links say (issue 27, section 1).

A bot folder that arrives as a git repository or a tarball can hold symlinks. Each hostile link below (to
``/etc/shadow``, to a 0600 secret, to the live store and its ``-wal``/``-shm``, ``skyjo_ref`` to the referee's
package, to a folder outside) refuses the league before any game, in one line that names the link and where it
points (exit 2); a link that stays inside the folder keeps working, staged copy included (as root, a folder
other users cannot read is copied for the bot's unprivileged uid).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from skyjo_ref.sandbox import isolation_problem
from skyjo_ref.tournament.config import ConfigError, load_config

REPO = Path(__file__).resolve().parents[1]
MINIMAL = REPO / "examples" / "python" / "minimal_bot.py"
REFEREE_PACKAGE = REPO / "referee" / "skyjo_ref"

IMPORTING_BOT = MINIMAL.read_text(encoding="utf-8").replace(
    "from skyjo_bot", "import helper  # noqa: F401\nfrom skyjo_bot", 1
)


def league(folder: Path, bot: str, *, extra: str = "") -> Path:
    """An isolated league of ``bot`` (a YAML bot entry, named evil) and the built-in random bot."""
    (folder / "secret.txt").write_text("the runner's seed secret\n", encoding="utf-8")
    (folder / "secret.txt").chmod(0o600)
    text = (
        "name: links\nplayers_per_game: 2\ndeals: 1\nseed: 5\nconcurrency: 1\noutput: out\nisolation: strict\n"
        f"seed_secret_file: secret.txt\nrating: {{bootstrap: 0}}\n{extra}bots:\n"
        f"  - {bot}\n  - {{name: random, builtin: random}}\n"
    )
    path = folder / "league.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def evil_python_bot(folder: Path, link: str, target: Path) -> Path:
    """``evil/bot.py`` imports ``helper`` (or the linked package); ``evil/LINK -> target``."""
    (folder / "evil").mkdir()
    source = IMPORTING_BOT if link == "helper.py" else IMPORTING_BOT.replace("import helper", f"import {link}")
    (folder / "evil" / "bot.py").write_text(source, encoding="utf-8")
    (folder / "evil" / link).symlink_to(target)
    return folder / "evil" / link


def store_file(folder: Path, suffix: str) -> Path:
    """The league's live store (and its WAL files), as a finished earlier run left them."""
    (folder / "out").mkdir(exist_ok=True)
    with sqlite3.connect(folder / "out" / "results.sqlite") as db:
        db.execute("CREATE TABLE IF NOT EXISTS t (x)")
    path = folder / "out" / f"results.sqlite{suffix}"
    path.touch()
    return path


def outside_folder(folder: Path) -> Path:
    (folder / "elsewhere").mkdir()
    (folder / "elsewhere" / "__init__.py").write_text("SECRET = 'outside'\n", encoding="utf-8")
    return folder / "elsewhere"


#: (link name in the bot's folder, where it points) for each hostile link.
HOSTILE: dict[str, tuple[str, Callable[[Path], Path]]] = {
    "etc-shadow": ("helper.py", lambda folder: Path("/etc/shadow")),
    "secret-0600": ("helper.py", lambda folder: folder / "secret.txt"),
    "store": ("helper.py", lambda folder: store_file(folder, "")),
    "store-wal": ("helper.py", lambda folder: store_file(folder, "-wal")),
    "store-shm": ("helper.py", lambda folder: store_file(folder, "-shm")),
    "referee-package": ("skyjo_ref", lambda folder: REFEREE_PACKAGE),
    "folder-outside": ("lib", outside_folder),
}

needs_isolation = pytest.mark.skipif(isolation_problem() is not None, reason=f"{isolation_problem()}")


@needs_isolation
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_python_bots_link_out_of_its_folder_is_refused_naming_link_and_target(tmp_path: Path, case: str) -> None:
    name, target_of = HOSTILE[case]
    target = target_of(tmp_path)
    link = evil_python_bot(tmp_path, name, target)
    config = league(tmp_path, "{name: evil, python: evil/bot.py}")
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    message = str(caught.value)
    assert "\n" not in message
    assert f"{link} is a link to {os.path.realpath(target)}" in message, message
    assert "bots[0]" in message and "bot 'evil'" in message


@needs_isolation
@pytest.mark.parametrize("case", ["etc-shadow", "store-wal", "referee-package"])
def test_a_root_folders_link_out_is_refused_even_unimported(tmp_path: Path, case: str) -> None:
    """A bot with a root folder is mounted whole: any link in it counts, imported or not, however deep."""
    _, target_of = HOSTILE[case]
    target = target_of(tmp_path)
    (tmp_path / "evil" / "data" / "deep").mkdir(parents=True)
    (tmp_path / "evil" / "bot.py").write_text(MINIMAL.read_text(encoding="utf-8"), encoding="utf-8")
    link = tmp_path / "evil" / "data" / "deep" / "peek"
    link.symlink_to(target)
    config = league(tmp_path, "{name: evil, python: evil/bot.py, root: evil}")
    with pytest.raises(ConfigError, match=f"{link} is a link to {os.path.realpath(target)}"):
        load_config(config)


@needs_isolation
def test_a_link_inside_a_command_bots_folder_to_the_store_is_refused(tmp_path: Path) -> None:
    """A command bot's folder is the league's own here: the link stays inside it, but leads to the store."""
    store = store_file(tmp_path, "")
    (tmp_path / "peek").symlink_to("out/results.sqlite")
    config = league(tmp_path, f"{{name: evil, command: [{sys.executable}, -c, 'pass']}}")
    with pytest.raises(ConfigError, match=f"{tmp_path / 'peek'} is a link to {store}, which the run keeps out"):
        load_config(config)


@needs_isolation
def test_the_tournament_refuses_a_hostile_link_before_any_game_in_one_line(tmp_path: Path) -> None:
    link = evil_python_bot(tmp_path, "helper.py", Path("/etc/shadow"))
    league(tmp_path, "{name: evil, python: evil/bot.py}")
    done = run_cli(tmp_path, "tournament", "league.yaml")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{link} is a link to /etc/shadow, outside the bot's folder" in lines[0], lines
    assert not (tmp_path / "out" / "results.sqlite").exists()  # no game, not even a store


@needs_isolation
def test_the_gate_refuses_a_hostile_link_before_any_game_in_one_line(tmp_path: Path) -> None:
    link = evil_python_bot(tmp_path, "helper.py", tmp_path / "secret.txt")
    (tmp_path / "secret.txt").write_text("s3cret\n", encoding="utf-8")
    done = run_cli(tmp_path, "gate", "evil/bot.py", "random", "--isolation", "strict", "--max-games", "2")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"candidate: bot 'bot': {link} is a link to {tmp_path / 'secret.txt'}" in lines[0]


@needs_isolation
@pytest.mark.timeout(300)
def test_links_that_stay_inside_the_folder_keep_working_staged_copy_included(tmp_path: Path) -> None:
    """``helper.py -> impl/helper.py`` and ``tools -> impl`` (a package through a folder link) inside the bot's
    folder: the bot plays every game. As root the folder is 0700, so the bot plays a staged copy (copied from the
    links' targets, never further)."""
    bot = tmp_path / "good"
    (bot / "impl" / "pkg").mkdir(parents=True)
    (bot / "impl" / "helper.py").write_text("VALUE = 1\n", encoding="utf-8")
    (bot / "impl" / "pkg" / "__init__.py").write_text("OTHER = 2\n", encoding="utf-8")
    (bot / "helper.py").symlink_to("impl/helper.py")
    (bot / "tools").symlink_to("impl/pkg")
    (bot / "bot.py").write_text(IMPORTING_BOT.replace("import helper", "import helper, tools"), encoding="utf-8")
    if os.geteuid() == 0:
        bot.chmod(0o700)
    league(tmp_path, "{name: good, python: good/bot.py}")
    done = run_cli(tmp_path, "tournament", "league.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 2
        assert db.execute("SELECT COUNT(*) FROM seats WHERE forfeit = 1").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM faults").fetchone()[0] == 0


def run_cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args],
        cwd=folder,
        env={**os.environ, "COLUMNS": "300"},
        capture_output=True,
        text=True,
        timeout=240,
    )
