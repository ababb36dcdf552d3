"""The results store: one SQLite database (WAL) per tournament folder, plus the game records.

Every finished game is committed the moment it reaches the store, games that
finish together in one transaction (a group commit, :meth:`Store.add_games`):
its record, and per seat the bot, final total, rank, strikes, forfeit and round
scores. Nothing else holds results, so a run interrupted any way (Ctrl-C,
kill -9, power loss) resumes from the store and plays only what is missing.

The store remembers what makes its results comparable (rules, players per game,
seed): a config that changes any of them is refused instead of mixing games
that mean different things.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, Final, ParamSpec, TypeVar

from skyjo_ref import records
from skyjo_ref.execution.types import PlayedGame
from skyjo_ref.tournament.schedule import GameId

STORE_FORMAT: Final = "skyjo-tournament-store/1"
DB_NAME: Final = "results.sqlite"
RECORDS_DIR: Final = "games"
STRIKE_REASONS: Final = ("timeout", "illegal")

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    key         TEXT PRIMARY KEY,   -- table/deal/rotation, see schedule.GameId
    tbl         TEXT NOT NULL,      -- the table's bot names, sorted, joined by '+'
    deal        INTEGER NOT NULL,
    rotation    INTEGER NOT NULL,
    seats       TEXT NOT NULL,      -- JSON list: bot names in seat order
    deal_seed   TEXT NOT NULL,
    record      TEXT NOT NULL,      -- the skyjo-game/1 record (JSON)
    finished_at REAL NOT NULL,      -- unix time
    duration_s  REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS seats (
    game_key     TEXT NOT NULL REFERENCES games(key),
    seat         INTEGER NOT NULL,
    bot          TEXT NOT NULL,
    total        INTEGER NOT NULL,
    rank         INTEGER NOT NULL,
    strikes      INTEGER NOT NULL,
    forfeit      INTEGER NOT NULL,  -- 0 or 1
    round_scores TEXT NOT NULL,     -- JSON list, one score per round
    PRIMARY KEY (game_key, seat)
);
CREATE INDEX IF NOT EXISTS seats_bot ON seats(bot);
CREATE TABLE IF NOT EXISTS faults (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    at       REAL NOT NULL,
    bot      TEXT NOT NULL,
    game_key TEXT,
    kind     TEXT NOT NULL,         -- crash, restart, start_failed, ...
    detail   TEXT NOT NULL
);
"""


class StoreError(ValueError):
    """A folder that is not a usable store, or one whose results the config would contradict."""


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat of one stored game."""

    bot: str
    total: int
    rank: int
    strikes: int
    forfeit: bool
    round_scores: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class StoredGame:
    """A finished game as the tables need it."""

    id: GameId
    seats: tuple[SeatResult, ...]  # in seat order

    @property
    def winners(self) -> tuple[str, ...]:
        return tuple(s.bot for s in self.seats if s.rank == 1)


@dataclass(frozen=True, slots=True)
class Fault:
    at: float
    bot: str
    game_key: str | None
    kind: str
    detail: str


def seat_results(record: Mapping[str, Any], seats: Sequence[str]) -> tuple[SeatResult, ...]:
    """Per-seat results read from a finished record.

    Strikes are the referee's list in ``meta.strikes`` (one entry per strike,
    with its seat) when the record has one, else the actions it played for a
    seat after a timeout or an illegal answer (``auto``).
    """
    result = record["result"]
    forfeits = set(result.get("forfeits", []))
    counted = [0] * len(seats)
    meta = record.get("meta")
    listed = meta.get("strikes") if isinstance(meta, dict) else None
    if isinstance(listed, list) and all(isinstance(e, dict) and isinstance(e.get("seat"), int) for e in listed):
        for entry in listed:
            if 0 <= entry["seat"] < len(seats):
                counted[entry["seat"]] += 1
    else:
        for rnd in record["rounds"]:
            for action in rnd["actions"]:
                if action.get("auto") in STRIKE_REASONS:
                    counted[action["seat"]] += 1
    return tuple(
        SeatResult(
            bot=bot,
            total=int(result["totals"][seat]),
            rank=int(result["ranks"][seat]),
            strikes=counted[seat],
            forfeit=seat in forfeits,
            round_scores=tuple(int(r["result"]["scores"][seat]) for r in record["rounds"]),
        )
        for seat, bot in enumerate(seats)
    )


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _locked(method: Callable[Concatenate[Store, _P], _R]) -> Callable[Concatenate[Store, _P], _R]:
    """One thread at a time in the store (games are committed from a worker thread)."""

    def wrapper(self: Store, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self.lock:
            return method(self, *args, **kwargs)

    wrapper.__doc__ = method.__doc__
    return wrapper


class Store:
    """One tournament folder: ``results.sqlite`` and ``games/*.json``.

    Safe to use from several threads (one at a time): the runner commits games
    from a worker thread so that a slow disk never stalls the event loop the
    in-process referee shares.
    """

    def __init__(self, folder: str | Path, create: bool = True) -> None:
        self.folder = Path(folder)
        self.db_path = self.folder / DB_NAME
        self.records_dir = self.folder / RECORDS_DIR
        self.lock = threading.RLock()
        if not create and not self.db_path.is_file():
            raise StoreError(f"{self.folder}: no {DB_NAME} here: expected a tournament output folder")
        try:
            if create:
                self.records_dir.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.db_path, isolation_level=None, timeout=30.0, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")  # a committed game survives a power loss
            self.db.executescript(_SCHEMA)
            found = self._meta().get("format")
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{self.db_path}: cannot open the results store: {exc}") from None
        if found is None:
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (STORE_FORMAT,))
        elif found != STORE_FORMAT:
            raise StoreError(f"{self.db_path}: store format {found!r}, expected {STORE_FORMAT!r}")

    @_locked
    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- identity

    @_locked
    def _meta(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, value FROM meta").fetchall())

    @_locked
    def fingerprint(self) -> dict[str, Any] | None:
        raw = self._meta().get("fingerprint")
        return None if raw is None else dict(json.loads(raw))

    @_locked
    def bind(self, fingerprint: Mapping[str, Any], what: str = "this config") -> None:
        """Remember what the results mean; refuse a different meaning, saying what changed."""
        stored = self.fingerprint()
        wanted = json.loads(json.dumps(fingerprint, sort_keys=True))
        if stored is None:
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (json.dumps(wanted, sort_keys=True),)
            )
            return
        changed = [k for k in sorted(set(stored) | set(wanted)) if stored.get(k) != wanted.get(k)]
        if changed and self.count() == 0:  # nothing was played under the old settings: take the new ones
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (json.dumps(wanted, sort_keys=True),)
            )
            return
        if changed:
            detail = "; ".join(
                f"{key}: stored {json.dumps(old, sort_keys=True)}, {what} has {json.dumps(new, sort_keys=True)}"
                for k in changed
                for key, old, new in _differences(k, stored.get(k), wanted.get(k))
            )
            raise StoreError(
                f"{self.folder} holds results played with other settings ({detail}): "
                "they cannot be mixed; use another output folder, or --new to set the old results aside"
            )

    @_locked
    def set_info(self, key: str, value: Any) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"info.{key}", json.dumps(value)))

    @_locked
    def info(self, key: str) -> Any:
        raw = self._meta().get(f"info.{key}")
        return None if raw is None else json.loads(raw)

    # ------------------------------------------------------------------- games

    @_locked
    def finished_keys(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT key FROM games")}

    def add_game(self, game: GameId, deal_seed: str, record: Mapping[str, Any], duration_s: float) -> StoredGame:
        """Check the record by replaying it, write its file, and commit the game (one transaction)."""
        return self.add_games([(game, deal_seed, record, duration_s)])[0]

    def add_games(self, batch: Sequence[PlayedGame]) -> list[StoredGame]:
        """Check each record by replaying it and write its file, then commit them all in ONE transaction.

        One transaction is one fsync (``synchronous=FULL``) for the whole batch: a group commit, which is
        what lets one writer keep up with many workers. A record that fails its check is never stored, but
        the batch's other games are committed all the same; then the first failure is raised. A game stored
        again replaces the first copy (a game delivered twice is stored once). Returns the stored games in
        batch order. The checks and files run outside the store's lock: only the transaction holds it.
        """
        checked: list[tuple[PlayedGame, str, tuple[SeatResult, ...]]] = []
        refused: Exception | None = None
        for played in batch:
            try:
                checked.append((played, *self._checked_file(played)))
            except Exception as exc:  # a refused record: the rest of the batch is still committed
                refused = refused or exc
        if checked:
            self._commit(checked)
        if refused is not None:
            raise refused
        return [StoredGame(played[0], results) for played, _, results in checked]

    def _checked_file(self, played: PlayedGame) -> tuple[str, tuple[SeatResult, ...]]:
        """Replay-check a record and write its file; its text and per-seat results (raises if refused)."""
        game, _, record, _ = played
        records.replay(record)  # a record that does not replay is never stored
        seats = game.seats
        if list(record["players"]) != list(seats):
            raise StoreError(f"game {game.key}: the record's players {record['players']} are not {list(seats)}")
        results = seat_results(record, seats)
        text = records.dumps(record)
        path = self.records_dir / game.file_name()
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text + "\n", encoding="utf-8")
        os.replace(tmp, path)
        return text, results

    @_locked
    def _commit(self, checked: Sequence[tuple[PlayedGame, str, tuple[SeatResult, ...]]]) -> None:
        """Checked games in one transaction (a key already stored is replaced, seats included)."""
        now = time.time()
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany("DELETE FROM seats WHERE game_key = ?", [(p[0].key,) for p, _, _ in checked])
            self.db.executemany(
                "INSERT OR REPLACE INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        game.key,
                        "+".join(game.table),
                        game.deal,
                        game.rotation,
                        json.dumps(list(game.seats)),
                        deal_seed,
                        text,
                        now,
                        duration_s,
                    )
                    for (game, deal_seed, _, duration_s), text, _ in checked
                ],
            )
            self.db.executemany(
                "INSERT OR REPLACE INTO seats VALUES (?, ?, ?, ?, ?, ?, ?, ?)",  # a key twice in a batch: the last
                [
                    (
                        game.key,
                        seat,
                        s.bot,
                        s.total,
                        s.rank,
                        s.strikes,
                        int(s.forfeit),
                        json.dumps(list(s.round_scores)),
                    )
                    for (game, _, _, _), _, results in checked
                    for seat, s in enumerate(results)
                ],
            )

    @_locked
    def games(self) -> list[StoredGame]:
        """Every stored game, in key order (so tables never depend on the finishing order)."""
        by_game: dict[str, list[SeatResult]] = {}
        rows = self.db.execute(
            "SELECT game_key, bot, total, rank, strikes, forfeit, round_scores FROM seats ORDER BY game_key, seat"
        )
        for key, bot, total, rank, strikes, forfeit, rounds in rows:
            by_game.setdefault(key, []).append(
                SeatResult(bot, total, rank, strikes, bool(forfeit), tuple(json.loads(rounds)))
            )
        return [StoredGame(GameId.parse(key), tuple(seats)) for key, seats in sorted(by_game.items())]

    @_locked
    def record(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT record FROM games WHERE key = ?", (key,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    @_locked
    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    # ------------------------------------------------------------------ faults

    @_locked
    def add_fault(self, bot: str, kind: str, detail: str, game_key: str | None = None) -> None:
        with self.db:
            self.db.execute(
                "INSERT INTO faults (at, bot, game_key, kind, detail) VALUES (?, ?, ?, ?, ?)",
                (time.time(), bot, game_key, kind, detail),
            )

    @_locked
    def faults(self) -> list[Fault]:
        rows = self.db.execute("SELECT at, bot, game_key, kind, detail FROM faults ORDER BY id")
        return [Fault(*row) for row in rows]


def _differences(key: str, old: Any, new: Any) -> list[tuple[str, Any, Any]]:
    """The leaves that differ between two settings, by dotted name (``rules.column_clear``), not whole mappings."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [
            found
            for sub in sorted(set(old) | set(new))
            if old.get(sub) != new.get(sub)
            for found in _differences(f"{key}.{sub}", old.get(sub), new.get(sub))
        ]
    return [(key, old, new)]
