"""Shards and merge: a league split across a CI matrix, then put back together.

A shard ``I/N`` plays the duplicate blocks (a table and a deal, all its
rotations) whose number in schedule order is ``I-1`` modulo ``N``: every game
is in exactly one shard, a block is never split, and shard sizes differ by at
most one block. Each shard plays into its own store; :func:`merge` copies
stores with the same meaning into one, keeping a game stored twice once, so
the merged tables equal the unsharded run's.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skyjo_ref.errors import UsageError
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import (
    GAME_COLUMNS,
    RECORDS_DIR,
    SEAT_COLUMNS,
    Store,
    StoreError,
    record_name,
    short_setting,
)

#: What must agree between stores for their games to be merged (beside the fingerprint).
MERGED_INFO = ("schedule", "rating", "bots", "name")


class ShardError(UsageError):
    """A shard spec or a set of stores that cannot be merged; the message says what and what is expected."""


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if match is None:
            raise ShardError(f"--shard {text!r}: expected I/N, e.g. 1/4 (shard I of N, counted from 1)")
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1 or not 1 <= index <= count:
            raise ShardError(f"--shard {text!r}: expected 1 <= I <= N, e.g. 1/4")
        return cls(index, count)

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def suffix(self) -> str:
        """For the shard's own output folder: ``.shard-2-of-4``."""
        return f".shard-{self.index}-of-{self.count}"

    def check(self, games: Sequence[GameId]) -> None:
        """ShardError when this shard would play nothing: more shards than duplicate blocks (a mis-sized CI
        matrix must fail, not pass with 0 games). Shards 1 to the number of blocks still split the league."""
        blocks = len({game.block for game in games})
        if self.index > blocks:
            raise ShardError(
                f"--shard {self.label}: this league has {blocks} duplicate block{'s' if blocks != 1 else ''} "
                f"(a table and a deal, never split), so shard {self.index} would play nothing: "
                f"expected at most {blocks} shards"
            )

    def select(self, games: Sequence[GameId]) -> list[GameId]:
        """This shard's games of a schedule (in schedule order): whole blocks, every N-th one."""
        numbers: dict[tuple[tuple[str, ...], int], int] = {}
        chosen = []
        for game in games:
            number = numbers.setdefault(game.block, len(numbers))
            if number % self.count == self.index - 1:
                chosen.append(game)
        return chosen


@dataclass(slots=True)
class MergeSummary:
    stores: int = 0
    added: int = 0  # games new to the output
    duplicates: int = 0  # games already there (the same game from two shards, or a second merge)
    conflicts: list[str] = field(default_factory=list)  # games stored twice with different records
    records_copied: int = 0


def _describe(value: Any) -> str:
    return "not set" if value is None else short_setting(value)


def _kind(fingerprint: dict[str, Any]) -> str:
    """Whose store this is, in words: a gate's stores say their format (skyjo-gate/N), a tournament's do not."""
    return "a gate's" if str(fingerprint.get("format", "")).startswith("skyjo-gate/") else "a tournament's"


def _differs(path: Path, first_path: Path, key: str, theirs: Any, ours: Any) -> ShardError:
    """Which value is whose: ``alpha differs (OTHER has 0.05, FIRST has not set)``."""
    return ShardError(
        f"{path} cannot be merged with {first_path}: {key} differs "
        f"({path} has {_describe(theirs)}, {first_path} has {_describe(ours)})"
    )


def check_compatible(stores: Sequence[tuple[Path, Store]]) -> dict[str, Any]:
    """The stores' common fingerprint and infos; ShardError naming the first thing that differs."""
    first_path, first = stores[0]
    fingerprint = first.fingerprint()
    if fingerprint is None:
        raise ShardError(f"{first_path}: holds no tournament results yet")
    infos = {key: first.info(key) for key in MERGED_INFO}
    for path, store in stores[1:]:
        other = store.fingerprint()
        if other is None:
            raise ShardError(f"{path}: holds no tournament results yet")
        if _kind(other) != _kind(fingerprint):
            raise ShardError(
                f"{path} cannot be merged with {first_path}: {path} is {_kind(other)} store and {first_path} "
                f"{_kind(fingerprint)}; expected the shards of one gate or of one tournament"
            )
        for key in sorted(set(fingerprint) | set(other)):
            if fingerprint.get(key) != other.get(key):
                raise _differs(path, first_path, key, other.get(key), fingerprint.get(key))
        for key in MERGED_INFO:
            theirs = store.info(key)
            if key != "name" and theirs != infos[key]:
                raise _differs(path, first_path, key, theirs, infos[key])
    return {"fingerprint": fingerprint, **infos}


def merge(out: Path, sources: Sequence[Path], on_wait: Callable[[str], None] | None = None) -> MergeSummary:
    """Merge tournament stores (and their record files) into ``out``; a game stored twice is kept once.

    ``out`` is written under its writer lock (:class:`~.store.StoreBusy` when another run holds it)."""
    opened: list[tuple[Path, Store]] = []
    try:
        for path in sources:
            if not path.is_dir():
                raise ShardError(f"{path}: no such folder: expected a tournament output folder")
            try:
                opened.append((path, Store(path, create=False)))
            except StoreError as exc:
                raise ShardError(str(exc)) from None
        if out.resolve() in {p.resolve() for p, _ in opened}:
            raise ShardError(f"{out}: is also one of the stores to merge: expected a new or a merged folder")
        common = check_compatible(opened)
        target = Store(out, writer=True, on_wait=on_wait)  # StoreBusy: another run writes there
        try:
            target.bind(
                common["fingerprint"],
                what="each store to merge",
                remedy=f"they cannot be mixed; merge into another (new) OUT folder, or delete {out} first",
            )
        except StoreError as exc:
            target.close()
            raise ShardError(str(exc)) from None
        summary = MergeSummary(stores=len(opened))
        try:
            for key in MERGED_INFO:
                if common[key] is not None:
                    target.set_info(key, common[key])
            currents = [target.current_versions(), *(store.current_versions() for _, store in opened)]
            for path, store in opened:
                _absorb(target, path, store, summary)
            _merge_current_versions(target, currents)
        finally:
            target.close()
        return summary
    finally:
        for _, store in opened:
            store.close()


def _merge_current_versions(target: Store, currents: Sequence[dict[str, str]]) -> None:
    """Each bot's current version in the merged store: of the stores' current ones, the one that appeared last."""
    if not any(currents):
        return
    first = {(bot, version): at for bot, version, at in target.version_history()}
    merged: dict[str, str] = {}
    for bot in sorted({bot for current in currents for bot in current}):
        candidates = {current[bot] for current in currents if bot in current}
        merged[bot] = max(candidates, key=lambda v: (first.get((bot, v), 0.0), v))
    target.set_info("versions", merged)


def _absorb(target: Store, path: Path, source: Store, summary: MergeSummary) -> None:
    """Copy ``source``'s games, seats, faults, bot versions and record files into ``target`` in one transaction.

    Games are matched by their store key, which holds the versions of their bots: two versions of a bot never
    share a game, and a game in two stores (shards, or stores that grew apart from one artifact) is kept once.
    """
    with source.lock:
        rows = source.db.execute(f"SELECT {GAME_COLUMNS} FROM games ORDER BY key").fetchall()
        seats = source.db.execute(f"SELECT {SEAT_COLUMNS} FROM seats").fetchall()
        faults = source.db.execute("SELECT at, bot, game_key, kind, detail FROM faults ORDER BY id").fetchall()
        versions = source.db.execute("SELECT bot, version, first_at FROM versions").fetchall()
        rounds = source.db.execute("SELECT number, planned_at, plan FROM rounds ORDER BY number").fetchall()
    by_game: dict[str, list[Any]] = {}
    for seat in seats:
        by_game.setdefault(seat[0], []).append(seat)
    with target.lock:
        db = target.db
        existing = {key: record for key, record in db.execute("SELECT key, record FROM games")}
        known_faults = set(db.execute("SELECT at, bot, game_key, kind, detail FROM faults").fetchall())
        new_keys = []
        with db:
            db.execute("BEGIN IMMEDIATE")
            for row in rows:
                key, record = row[0], row[6]
                if key in existing:
                    summary.duplicates += 1
                    if existing[key] != record:
                        summary.conflicts.append(key)
                    continue
                db.execute(f"INSERT INTO games ({GAME_COLUMNS}) VALUES ({', '.join('?' * len(row))})", row)
                db.executemany(
                    f"INSERT INTO seats ({SEAT_COLUMNS}) VALUES ({', '.join('?' * 9)})", by_game.get(key, [])
                )
                existing[key] = record
                new_keys.append(key)
                summary.added += 1
            db.executemany(
                "INSERT INTO faults (at, bot, game_key, kind, detail) VALUES (?, ?, ?, ?, ?)",
                [f for f in faults if tuple(f) not in known_faults],
            )
            # an adaptive schedule's rounds: the same plan in every store (planned from the same merged games)
            known_rounds = dict(db.execute("SELECT number, plan FROM rounds").fetchall())
            for number, planned_at, plan in rounds:
                if number in known_rounds and known_rounds[number] != plan:
                    summary.conflicts.append(f"adaptive round {number}")
                elif number not in known_rounds:
                    db.execute("INSERT INTO rounds VALUES (?, ?, ?)", (number, planned_at, plan))
            # a version first seen in either store: the earlier time
            db.executemany(
                "INSERT INTO versions VALUES (?, ?, ?) ON CONFLICT (bot, version) "
                "DO UPDATE SET first_at = min(first_at, excluded.first_at)",
                versions,
            )
    records = target.records_dir
    records.mkdir(parents=True, exist_ok=True)
    for key in new_keys:
        slot, _, vtag = key.partition("~")
        name = record_name(GameId.parse(slot), vtag)
        source_file, target_file = path / RECORDS_DIR / name, records / name
        if target_file.exists():
            continue
        if source_file.is_file():
            shutil.copyfile(source_file, target_file)
        else:  # the store's copy of the record is the one that counts
            target_file.write_text(str(existing[key]) + "\n", encoding="utf-8")
        summary.records_copied += 1
