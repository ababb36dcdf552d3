"""Shards (``tournament --shard``, ``gate --shard``) and ``merge``: real processes, real stores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from skyjo_ref.tournament.schedule import schedule
from skyjo_ref.tournament.shard import MERGED_INFO, Shard, ShardError, merge
from skyjo_ref.tournament.store import Store

CONFIG = """\
name: t
rules: {preset: official, end_score: 30}
players_per_game: 2
deals: 5
seed: SEED
concurrency: 2
rating: {bootstrap: 50}
output: out
bots:
  - {name: greedy, builtin: greedy}
  - {name: random, builtin: random}
  - {name: random2, builtin: random}
"""


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=110
    )


def test_shards_hold_every_game_once_in_whole_blocks_balanced_within_one_block() -> None:
    games = schedule(["a", "b", "c", "d"], 3, 7)  # 4 tables x 7 deals = 28 blocks of 3 games
    shards = [Shard(i, 5).select(games) for i in range(1, 6)]
    assert sorted(g.key for s in shards for g in s) == sorted(g.key for g in games)
    for part in shards:
        blocks = {g.block for g in part}
        assert all(sum(1 for g in part if g.block == b) == 3 for b in blocks)  # never a split block
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 3
    assert Shard.parse(" 2/5 ") == Shard(2, 5)
    for bad in ("0/3", "4/3", "1", "a/b", "1/0"):
        with pytest.raises(ShardError, match="--shard"):
            Shard.parse(bad)


def test_merged_shards_give_the_unsharded_tables_byte_for_byte(tmp_path: Path) -> None:
    (tmp_path / "league.yaml").write_text(CONFIG.replace("SEED", "5"))
    assert cli("tournament", "league.yaml", cwd=tmp_path).returncode == 0
    for i in (1, 2, 3):
        done = cli("tournament", "league.yaml", "--shard", f"{i}/3", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "10 games played" in done.stderr
    shards = [f"out.shard-{i}-of-3" for i in (1, 2, 3)]
    merged = cli("merge", "merged", *shards, shards[1], cwd=tmp_path)  # shard 2 twice: kept once
    assert merged.returncode == 0, merged.stderr
    assert "30 games added, 10 already there (kept once), 30 record files copied" in " ".join(merged.stderr.split())
    whole = cli("ratings", "out", "--json", "-", cwd=tmp_path)
    joined = cli("ratings", "merged", "--json", "-", cwd=tmp_path)
    assert whole.returncode == joined.returncode == 0
    assert joined.stdout == whole.stdout and json.loads(joined.stdout)
    assert len(list((tmp_path / "merged" / "games").iterdir())) == 30

    # a store of another tournament (another seed) is refused, naming what differs
    with Store(tmp_path / "out.shard-1-of-3", create=False) as store:
        fingerprint = store.fingerprint()
        infos = {key: store.info(key) for key in MERGED_INFO}
    assert fingerprint is not None
    with Store(tmp_path / "other") as other:
        other.bind({**fingerprint, "seed": 6})
        for key, value in infos.items():
            other.set_info(key, value)
    refused = cli("merge", "m2", shards[0], "other", cwd=tmp_path)
    assert refused.returncode == 2
    assert "seed differs (other has 6, out.shard-1-of-3 has 5)" in refused.stderr
    assert "Traceback" not in refused.stderr
    with pytest.raises(ShardError, match="nowhere: no such folder"):
        merge(tmp_path / "m3", [tmp_path / "nowhere"])


def test_a_sharded_gate_merges_into_the_verdict_of_the_whole_gate(tmp_path: Path) -> None:
    args = ("gate", "random", "greedy", "--preset", "gain", "--option", "end_score=30")
    whole = cli(*args, "--out", "whole", "--json", "whole.json", cwd=tmp_path)
    assert whole.returncode == 1, whole.stderr
    for i in (1, 2):
        part = cli(*args, "--shard", f"{i}/2", "--out", f"s{i}", cwd=tmp_path)
        assert part.returncode == 0, part.stderr
        assert f"Shard {i}/2 done" in part.stdout
    assert cli("merge", "merged", "s1", "s2", cwd=tmp_path).returncode == 0
    verdict = cli(*args, "--out", "merged", "--json", "merged.json", cwd=tmp_path)
    assert verdict.returncode == 1, verdict.stderr
    a = json.loads((tmp_path / "whole.json").read_text())
    b = json.loads((tmp_path / "merged.json").read_text())
    for key in ("verdict", "games", "llr", "pentanomial", "history", "elo"):
        assert a[key] == b[key], key
