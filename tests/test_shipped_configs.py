"""Every tournament config the repository ships runs as shipped under the default isolation (issue 27, section 5).

``tournaments/examples-vs-builtins.yaml`` once exited 3 wherever bubblewrap is installed: its Node bot read
``../../proto``, outside its view. Each config here plays one deal (``deals: 1``, no bootstrap: the rest as
shipped) from a copy laid out as in the repository (``examples/*`` are links to the repository's own folders,
above each bot's folder), with the isolation it defaults to; every game is stored, no bot fails.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from skyjo_ref.sandbox import isolation_problem

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted([*REPO.glob("tournaments/*.yaml"), *REPO.glob("examples/ci/*.yaml")])


def shrunk(text: str) -> str:
    """The config with one deal, no bootstrap and a small adaptive budget; everything else as shipped."""
    text = re.sub(r"^deals: \d+", "deals: 1", text, flags=re.M)
    text = re.sub(r"bootstrap: \d+", "bootstrap: 0", text)
    return re.sub(r"max_games: \d+", "max_games: 8", text)


@pytest.mark.skipif(isolation_problem() is not None, reason=f"no isolation here: {isolation_problem()}")
@pytest.mark.parametrize("config", SHIPPED, ids=lambda p: str(p.relative_to(REPO)))
@pytest.mark.timeout(600)
def test_a_shipped_config_plays_under_the_default_isolation(tmp_path: Path, config: Path) -> None:
    assert "isolation:" not in config.read_text(encoding="utf-8")  # the default: strict where it can be
    for folder in ("python", "node", "go", "cpp"):
        (tmp_path / "examples").mkdir(exist_ok=True)
        (tmp_path / "examples" / folder).symlink_to(REPO / "examples" / folder)
    copy = tmp_path / config.relative_to(REPO)
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(shrunk(config.read_text(encoding="utf-8")), encoding="utf-8")
    if shutil.which("node") is None and "node bot.js" in copy.read_text(encoding="utf-8"):
        pytest.fail("node is not installed: the Node example bot needs Node.js 18+")
    done = subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "tournament", str(copy), "--output", str(tmp_path / "out"), "--plain"],
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "200", "LEAGUE_SECRET": "a-test-secret-of-16+-chars"},
        capture_output=True,
        text=True,
        timeout=560,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not isolated" not in done.stderr, done.stderr  # the default isolation here is strict
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        games = db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        forfeits = db.execute("SELECT COUNT(*) FROM seats WHERE forfeit = 1").fetchone()[0]
        faults = db.execute("SELECT bot, kind, detail FROM faults").fetchall()
    assert games > 0 and forfeits == 0 and faults == [], (games, forfeits, faults)
