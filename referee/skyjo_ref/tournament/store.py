"""The results store: one SQLite database (WAL) per tournament folder, plus the game records.

Every finished game is committed the moment it reaches the store, games that
finish together in one transaction (a group commit, :meth:`Store.add_games`):
its record, and per seat the bot, final total, rank, strikes, forfeit and round
scores. Nothing else holds results, so a run interrupted any way (Ctrl-C,
kill -9, power loss) resumes from the store and plays only what is missing.

The store remembers what makes its results comparable (rules, players per game,
seed): a config that changes any of them is refused instead of mixing games
that mean different things.

Schema versions: ``meta.schema`` counts the migrations applied (a store made
before it existed is schema 1); opening a store applies the missing ones from
:data:`MIGRATIONS` in order, each in one transaction, so every store, new or
old, has the same tables with the same columns in the same order. A store of a
newer schema than this code knows is refused.

Another process holding SQLite's write lock (a backup, an ``sqlite3`` shell) is
waited for: the store says so once through ``on_wait`` and retries until the
lock is released.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, Final, NamedTuple, ParamSpec, TypeVar

from skyjo_ref import records
from skyjo_ref.errors import Busy, Unfinished, UsageError
from skyjo_ref.execution.types import PlayedGame
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.writer_lock import FolderBusy, WriterLock, lock_holder

STORE_FORMAT: Final = "skyjo-tournament-store/1"
DB_NAME: Final = "results.sqlite"
RECORDS_DIR: Final = "games"
STRIKE_REASONS: Final = ("timeout", "illegal")
#: How long one SQLite call waits for another process's lock before the store says it waits (then retries).
BUSY_WAIT_S: Final = 2.0
#: How long the store waits in all for a lock another process holds before it gives up (StoreLocked).
LOCK_WAIT_S: Final = 60.0

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

_TO_2: Final = """
-- bot versions: a game is a slot of the schedule (table/deal/rotation) played by given versions of its bots
ALTER TABLE games ADD COLUMN slot TEXT NOT NULL DEFAULT '';      -- table/deal/rotation (GameId.key)
ALTER TABLE games ADD COLUMN vtag TEXT NOT NULL DEFAULT '';      -- digest of the table's versions ('' before)
ALTER TABLE games ADD COLUMN versions TEXT NOT NULL DEFAULT '{}'; -- JSON {bot: version}
ALTER TABLE seats ADD COLUMN version TEXT NOT NULL DEFAULT '';
UPDATE games SET slot = key;
CREATE INDEX IF NOT EXISTS games_slot ON games(slot, vtag);
CREATE TABLE IF NOT EXISTS versions (
    bot        TEXT NOT NULL,
    version    TEXT NOT NULL,
    first_at   REAL NOT NULL,       -- unix time the store first saw it
    PRIMARY KEY (bot, version)
);
-- adaptive schedules: each round's plan, stored before it is played
CREATE TABLE IF NOT EXISTS rounds (
    number     INTEGER PRIMARY KEY,
    planned_at REAL NOT NULL,
    plan       TEXT NOT NULL        -- JSON: the round's blocks and why
);
"""

_TO_3: Final = """
-- round starters: per round, the seat that played the first turn (records.round_starters), for starter effects
ALTER TABLE games ADD COLUMN starters TEXT NOT NULL DEFAULT '[]';  -- JSON list, one seat (or null) a round
UPDATE games SET starters = (
    SELECT json_group_array((
        SELECT json_extract(a.value, '$.seat') FROM json_each(r.value, '$.actions') AS a
        WHERE json_extract(a.value, '$.act') IN ('draw', 'take') ORDER BY a.key LIMIT 1
    ))
    FROM json_each(games.record, '$.rounds') AS r
);
"""

#: Migrations in order: (the schema version they lead to, their SQL). A new store runs them all too.
MIGRATIONS: Final[tuple[tuple[int, str], ...]] = ((2, _TO_2), (3, _TO_3))
SCHEMA_VERSION: Final = MIGRATIONS[-1][0]


#: What a run that may not resume a store can do (a command without ``--output``/``--new`` says its own).
RESUME_REMEDY: Final = "they cannot be mixed; use another output folder (--output DIR), or --new to set them aside"
#: A store refused for other settings names at most this many of them, each value at most this long.
MISMATCHES_SHOWN: Final = 3
SETTING_CHARS: Final = 40


class StoreError(UsageError):
    """A folder that is not a usable store, or one whose results the config would contradict."""


class StoreBusy(Busy, StoreError):
    """Another run writes to this store (its writer lock is held); the message names the holder."""


class StoreLocked(Unfinished, StoreError):
    """Another process held the database's lock longer than the store waits (or the run was stopped while it
    waited); the message names the holder and what to do."""


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat of one stored game."""

    bot: str
    total: int
    rank: int
    strikes: int
    forfeit: bool
    round_scores: tuple[int, ...]
    version: str = ""  # the bot's version in this game ('' when the store did not know it)


@dataclass(frozen=True, slots=True)
class StoredGame:
    """A finished game as the tables need it."""

    id: GameId  # its slot in the schedule (one per version of the table)
    seats: tuple[SeatResult, ...]  # in seat order
    key: str = ""  # the store's key: the slot's key, and ``~`` and the table's version tag when known
    starters: tuple[int | None, ...] = ()  # per round, the seat that played its first turn (records.round_starters)

    @property
    def ref(self) -> str:
        """The game's key in the store (``store.record(game.ref)``)."""
        return self.key or self.id.key

    @property
    def file_name(self) -> str:
        """Its record's file name in ``games/``."""
        return record_name(self.id, self.ref.partition("~")[2])

    @property
    def winners(self) -> tuple[str, ...]:
        return tuple(s.bot for s in self.seats if s.rank == 1)


class _CheckedGame(NamedTuple):
    """A played game whose record replayed: the record's text (as its file holds it) and its per-seat results."""

    played: PlayedGame
    text: str
    results: tuple[SeatResult, ...]


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


def version_tag(table: Sequence[str], versions: Mapping[str, str]) -> str:
    """A short digest of the versions of a table's bots: games of other versions get other keys."""
    text = "\n".join(f"{name}={versions.get(name, '')}" for name in table)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def store_key(game: GameId, vtag: str) -> str:
    return f"{game.key}~{vtag}" if vtag else game.key


def record_name(game: GameId, vtag: str) -> str:
    """The record's file name: the slot's, with the version tag when there is one."""
    name = game.file_name()
    return f"{name[: -len('.json')]}~{vtag}.json" if vtag else name


def is_locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _locked(method: Callable[Concatenate[Store, _P], _R]) -> Callable[Concatenate[Store, _P], _R]:
    """One thread at a time in the store (games are committed from a worker thread); a database locked by
    another process is waited for (every method is safe to run again: it fails before changing anything)."""

    def wrapper(self: Store, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self.lock:
            return self._patiently(lambda: method(self, *args, **kwargs))

    wrapper.__doc__ = method.__doc__
    return wrapper


class Store:
    """One tournament folder: ``results.sqlite`` and ``games/*.json``.

    Safe to use from several threads (one at a time): the runner commits games
    from a worker thread so that a slow disk never stalls the event loop the
    in-process referee shares.
    """

    def __init__(
        self,
        folder: str | Path,
        create: bool = True,
        on_wait: Callable[[str], None] | None = None,
        busy_wait_s: float = BUSY_WAIT_S,
        writer: bool = False,
        lock_wait_s: float = LOCK_WAIT_S,
    ) -> None:
        """``writer``: take the folder's writer lock for as long as the store is open (one run at a time, see
        :mod:`.writer_lock`); readers leave it False."""
        self.folder = Path(folder)
        self.db_path = self.folder / DB_NAME
        self.records_dir = self.folder / RECORDS_DIR
        self.lock = threading.RLock()
        self.on_wait = on_wait
        self.versions: dict[str, str] = {}  # the current version of each bot: games committed are keyed by them
        self.record_meta: dict[str, Any] = {}  # added to each record's meta as it is stored (e.g. which secret dealt)
        self._waited = False
        self.lock_wait_s = lock_wait_s
        self._give_up = threading.Event()  # set by give_up_waiting(): a lock held by another process ends the wait
        self.writer_lock: WriterLock | None = None
        if not create and not self.db_path.is_file():
            raise StoreError(f"{self.folder}: no {DB_NAME} here: expected a tournament output folder")
        if writer:
            try:
                self.writer_lock = WriterLock(self.folder)
            except FolderBusy as exc:
                raise StoreBusy(str(exc)) from None
            except OSError as exc:
                raise StoreError(f"{self.folder}: cannot lock the folder for this run: {exc}") from None
        try:
            if create:
                self.records_dir.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.db_path, isolation_level=None, timeout=busy_wait_s, check_same_thread=False)
            self._patiently(self._open)
            found = self._meta().get("format")
        except (OSError, sqlite3.Error, StoreError) as exc:
            if self.writer_lock is not None:
                self.writer_lock.release()
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"{self.db_path}: cannot open the results store: {exc}") from None
        if found is None:
            self._patiently(lambda: self.db.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (STORE_FORMAT,)))
        elif found != STORE_FORMAT:
            raise StoreError(f"{self.db_path}: store format {found!r}, expected {STORE_FORMAT!r}")

    def _open(self) -> None:
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")  # a committed game survives a power loss
        if self.db.execute("SELECT name FROM sqlite_master WHERE name = 'meta'").fetchone() is None:
            self.db.executescript(_SCHEMA)
        self._migrate()

    def _migrate(self) -> None:
        """Apply the migrations this store lacks, in order, each in one transaction (see the module docstring)."""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        current = int(row[0]) if row is not None else 1
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"{self.db_path}: store schema {current} is newer than this skyjo-ref knows ({SCHEMA_VERSION}): "
                "upgrade skyjo-ref to use it"
            )
        for version, script in MIGRATIONS:
            if version <= current:
                continue
            self.db.execute("BEGIN IMMEDIATE")
            try:
                again = self.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                if again is None or int(again[0]) < version:  # another process may have migrated meanwhile
                    for statement in _statements(script):
                        self.db.execute(statement)
                    self.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(version),))
                self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:  # a Ctrl-C may land after COMMIT: nothing to roll back then
                    self.db.execute("ROLLBACK")
                raise

    def _patiently(self, action: Callable[[], _R]) -> _R:
        """Run ``action``; while another process holds the database's lock, say once who holds it and try again,
        for at most ``lock_wait_s`` in all (then :class:`StoreLocked`), or until :meth:`give_up_waiting`.

        SQLite's own busy timeout does the waiting (no sleeps here); each attempt that times out is retried.
        """
        started = time.monotonic()
        while True:
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if not is_locked(exc):
                    raise
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                waited = time.monotonic() - started
                if self._give_up.is_set() or waited >= self.lock_wait_s:
                    why = "as the run was stopped" if self._give_up.is_set() else f"for {self.lock_wait_s:g} s"
                    raise StoreLocked(
                        f"the store {self.db_path} is still locked by {lock_holder(self.db_path)} {why}: "
                        "stop that process (or let it finish), then run the same command again"
                    ) from None
                if not self._waited and self.on_wait is not None:
                    self.on_wait(
                        f"the store {self.db_path} is locked by {lock_holder(self.db_path)}: waiting for it to "
                        f"be released (at most {self.lock_wait_s:g} s)"
                    )
                self._waited = True

    def give_up_waiting(self) -> None:
        """From any thread: a wait for another process's lock ends (StoreLocked) after the current attempt
        (at most ``busy_wait_s``), instead of lasting up to ``lock_wait_s``; a stopped run uses it, so that a
        lock someone holds never keeps Ctrl-C from stopping it. Commits that meet no lock go on as before."""
        self._give_up.set()

    def close(self) -> None:
        with self.lock:
            self.db.close()
            if self.writer_lock is not None:
                self.writer_lock.release()

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
    def bind(self, fingerprint: Mapping[str, Any], what: str = "this config", remedy: str = RESUME_REMEDY) -> None:
        """Remember what the results mean; refuse a different meaning in one line: what changed (the first few
        settings, their values shortened) and ``remedy``, what to do about it."""
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
            found = [leaf for k in changed for leaf in _differences(k, stored.get(k), wanted.get(k))]
            detail = "; ".join(
                f"{key}: stored {short_setting(old)}, {what} has {short_setting(new)}"
                for key, old, new in found[:MISMATCHES_SHOWN]
            )
            if len(found) > MISMATCHES_SHOWN:
                detail += f"; and {len(found) - MISMATCHES_SHOWN} more"
            raise StoreError(f"{self.folder} holds results played with other settings ({detail}): {remedy}")

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
        """The store keys of every stored game (a slot's key, ``~`` and its version tag when it has one)."""
        return {row[0] for row in self.db.execute("SELECT key FROM games")}

    @_locked
    def finished_slots(self) -> set[tuple[str, str]]:
        """``(slot key, version tag)`` of every stored game: what a versioned schedule checks against."""
        return {(row[0], row[1]) for row in self.db.execute("SELECT slot, vtag FROM games")}

    # ---------------------------------------------------------------- versions

    @_locked
    def use_versions(self, versions: Mapping[str, str]) -> list[tuple[str, str, str]]:
        """The bots' current versions: games committed from now on are stored under them.

        Records when each version first appeared, takes the games stored before versions were known as
        the current versions' (once: a store migrated from schema 1), and remembers the current versions for
        readers (``info.versions``). Returns ``(bot, version, previous version)`` for every bot whose version is
        new to a store that knew an earlier one.
        """
        wanted = dict(sorted(versions.items()))
        now = time.time()
        known: dict[str, list[tuple[float, str]]] = {}
        for bot, version, first in self.db.execute("SELECT bot, version, first_at FROM versions"):
            known.setdefault(bot, []).append((first, version))
        changed: list[tuple[str, str, str | None]] = [
            (bot, version, max(known[bot])[1] if bot in known else None)
            for bot, version in wanted.items()
            if version not in {v for _, v in known.get(bot, [])}
        ]
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany(
                "INSERT OR IGNORE INTO versions VALUES (?, ?, ?)", [(b, v, now) for b, v in wanted.items()]
            )
            self._adopt(wanted)
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('info.versions', ?)", (json.dumps(wanted, sort_keys=True),)
            )
        self.versions = wanted
        return [(bot, version, old) for bot, version, old in changed if old is not None]

    def _adopt(self, versions: Mapping[str, str]) -> None:
        """Games stored before versions existed (tag '') become the current versions' games, when every bot of
        the table has a version now (their keys stay: the slot's)."""
        rows = self.db.execute("SELECT key, slot FROM games WHERE vtag = ''").fetchall()
        for key, slot in rows:
            game = GameId.parse(slot)
            if not all(name in versions for name in game.table):
                continue
            tag = version_tag(game.table, versions)
            table_versions = {name: versions[name] for name in game.table}
            self.db.execute(
                "UPDATE games SET vtag = ?, versions = ? WHERE key = ?",
                (tag, json.dumps(table_versions, sort_keys=True), key),
            )
            self.db.execute(
                "UPDATE seats SET version = (CASE bot "
                + " ".join("WHEN ? THEN ?" for _ in table_versions)
                + " ELSE version END) WHERE game_key = ?",
                (*[x for pair in table_versions.items() for x in pair], key),
            )

    @_locked
    def version_history(self) -> list[tuple[str, str, float]]:
        """``(bot, version, first seen)`` of every version the store has seen, oldest first."""
        rows = self.db.execute("SELECT bot, version, first_at FROM versions ORDER BY first_at, bot, version")
        return [(str(b), str(v), float(t)) for b, v, t in rows]

    @_locked
    def current_versions(self) -> dict[str, str]:
        """The versions the last run played (``info.versions``); empty for a store without versions."""
        raw = self._meta().get("info.versions")
        return {} if raw is None else {str(k): str(v) for k, v in json.loads(raw).items()}

    def add_game(self, game: GameId, deal_seed: str, record: Mapping[str, Any], duration_s: float) -> StoredGame:
        """Check the record by replaying it, write its file, and commit the game (one transaction)."""
        return self.add_games([PlayedGame(game, deal_seed, record, duration_s)])[0]

    def add_games(self, batch: Sequence[PlayedGame]) -> list[StoredGame]:
        """Check each record by replaying it and write its file, then commit them all in ONE transaction.

        One transaction is one fsync (``synchronous=FULL``) for the whole batch: a group commit, which is
        what lets one writer keep up with many workers. A record that fails its check is never stored, but
        the batch's other games are committed all the same; then the first failure is raised. A game stored
        again replaces the first copy (a game delivered twice is stored once). Returns the stored games in
        batch order. The checks and files run outside the store's lock: only the transaction holds it.
        """
        checked: list[_CheckedGame] = []
        refused: Exception | None = None
        for played in batch:
            try:
                checked.append(_CheckedGame(played, *self._checked_file(played)))
            except Exception as exc:  # a refused record: the rest of the batch is still committed
                refused = refused or exc
        if checked:
            self._commit(checked)
        if refused is not None:
            raise refused
        versions = dict(self.versions)
        return [
            StoredGame(
                c.played.game,
                c.results,
                store_key(c.played.game, self._vtag(c.played.game, versions)),
                tuple(records.round_starters(c.played.record)),
            )
            for c in checked
        ]

    @staticmethod
    def _vtag(game: GameId, versions: Mapping[str, str]) -> str:
        return version_tag(game.table, versions) if versions else ""

    def _checked_file(self, played: PlayedGame) -> tuple[str, tuple[SeatResult, ...]]:
        """Replay-check a record and write its file; its text and per-seat results (raises if refused)."""
        game, record = played.game, played.record
        records.replay(record)  # a record that does not replay is never stored
        seats = game.seats
        if list(record["players"]) != list(seats):
            raise StoreError(f"game {game.key}: the record's players {record['players']} are not {list(seats)}")
        versions = dict(self.versions)
        if versions:
            record = _with_versions(record, seats, versions)
        if self.record_meta:
            record = {**record, "meta": {**(record.get("meta") or {}), **self.record_meta}}
        results = tuple(
            SeatResult(r.bot, r.total, r.rank, r.strikes, r.forfeit, r.round_scores, versions.get(r.bot, ""))
            for r in seat_results(record, seats)
        )
        text = records.dumps(record)
        path = self.records_dir / record_name(game, self._vtag(game, versions))
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text + "\n", encoding="utf-8")
        os.replace(tmp, path)
        return text, results

    @_locked
    def _commit(self, checked: Sequence[_CheckedGame]) -> None:
        """Checked games in one transaction (a key already stored is replaced, seats included)."""
        now = time.time()
        versions = dict(self.versions)
        keyed = [
            (store_key(c.played.game, self._vtag(c.played.game, versions)), self._vtag(c.played.game, versions), c)
            for c in checked
        ]
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany("DELETE FROM seats WHERE game_key = ?", [(key,) for key, *_ in keyed])
            self.db.executemany(
                f"INSERT OR REPLACE INTO games ({GAME_COLUMNS}) VALUES ({', '.join('?' * 13)})",
                [
                    (
                        key,
                        "+".join(p.game.table),
                        p.game.deal,
                        p.game.rotation,
                        json.dumps(list(p.game.seats)),
                        p.deal_seed,
                        text,
                        now,
                        p.duration_s,
                        p.game.key,
                        vtag,
                        json.dumps({name: versions[name] for name in p.game.table} if vtag else {}, sort_keys=True),
                        json.dumps(records.round_starters(p.record)),
                    )
                    for key, vtag, (p, text, _) in keyed
                ],
            )
            self.db.executemany(  # a key twice in a batch: the last
                f"INSERT OR REPLACE INTO seats ({SEAT_COLUMNS}) VALUES ({', '.join('?' * 9)})",
                [
                    (
                        key,
                        seat,
                        s.bot,
                        s.total,
                        s.rank,
                        s.strikes,
                        int(s.forfeit),
                        json.dumps(list(s.round_scores)),
                        s.version,
                    )
                    for key, _, checked_game in keyed
                    for seat, s in enumerate(checked_game.results)
                ],
            )

    @_locked
    def games(self) -> list[StoredGame]:
        """Every stored game, in key order (so tables never depend on the finishing order)."""
        by_game: dict[str, list[SeatResult]] = {}
        rows = self.db.execute(
            "SELECT game_key, bot, total, rank, strikes, forfeit, round_scores, version FROM seats "
            "ORDER BY game_key, seat"
        )
        for key, bot, total, rank, strikes, forfeit, rounds, version in rows:
            by_game.setdefault(key, []).append(
                SeatResult(bot, total, rank, strikes, bool(forfeit), tuple(json.loads(rounds)), version)
            )
        starters = {key: tuple(json.loads(text)) for key, text in self.db.execute("SELECT key, starters FROM games")}
        return [
            StoredGame(GameId.parse(key.partition("~")[0]), tuple(seats), key, starters.get(key, ()))
            for key, seats in sorted(by_game.items())
        ]

    @_locked
    def record(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT record FROM games WHERE key = ?", (key,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    @_locked
    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    # ------------------------------------------------------------------ rounds

    @_locked
    def add_round(self, number: int, plan: Mapping[str, Any]) -> None:
        """Store an adaptive schedule's round before it is played (a round stored once is never changed)."""
        with self.db:
            self.db.execute(
                "INSERT OR IGNORE INTO rounds VALUES (?, ?, ?)", (number, time.time(), json.dumps(plan, sort_keys=True))
            )

    @_locked
    def rounds(self) -> list[dict[str, Any]]:
        """The stored rounds' plans, in order."""
        return [dict(json.loads(row[0])) for row in self.db.execute("SELECT plan FROM rounds ORDER BY number")]

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


#: The games table's columns, in their order in every store (schema 1's, then each migration's).
GAME_COLUMNS: Final = (
    "key, tbl, deal, rotation, seats, deal_seed, record, finished_at, duration_s, slot, vtag, versions, starters"
)
SEAT_COLUMNS: Final = "game_key, seat, bot, total, rank, strikes, forfeit, round_scores, version"


def _statements(script: str) -> list[str]:
    """A migration's statements (``executescript`` would commit the transaction they must share)."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [part.strip() for part in "\n".join(lines).split(";") if part.strip()]


def _with_versions(record: Mapping[str, Any], seats: Sequence[str], versions: Mapping[str, str]) -> dict[str, Any]:
    """The record with each seat's league version in ``meta.bots[i].version_id`` (``version`` stays what the bot
    said in its Hello)."""
    out = dict(record)
    meta = dict(out.get("meta") or {})
    listed = meta.get("bots")
    bots = (
        [dict(b) if isinstance(b, dict) else {"name": name} for b, name in zip(listed, seats)]
        if isinstance(listed, list) and len(listed) == len(seats)
        else [{"name": name} for name in seats]
    )
    for entry, name in zip(bots, seats, strict=True):
        if name in versions:
            entry["version_id"] = versions[name]
    meta["bots"] = bots
    out["meta"] = meta
    return out


def short_setting(value: Any) -> str:
    """A stored setting for a one-line message: its JSON, cut to :data:`SETTING_CHARS` (a bot list, a rules map)."""
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= SETTING_CHARS else text[: SETTING_CHARS - 1] + "…"


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


def set_aside(folder: Path) -> Path:
    """``--new``: move an old results folder out of the way (results are never deleted); where it went."""
    target = folder.with_name(f"{folder.name}.old-{time.strftime('%Y%m%d-%H%M%S')}")
    folder.rename(target)
    return target


def open_run_store(
    folder: Path,
    fingerprint: Mapping[str, Any],
    *,
    what: str,
    info: Mapping[str, Any],
    new: bool = False,
    on_wait: Callable[[str], None] | None = None,
    on_set_aside: Callable[[Path], None] | None = None,
    remedy: str = RESUME_REMEDY,
) -> Store:
    """The store a run (a tournament, a gate) writes: its writer lock held (:class:`StoreBusy`, exit 6, when
    another run has it), bound to ``fingerprint`` (:class:`StoreError` when the stored results mean something
    else, ``what`` naming the config), ``info`` written. ``new`` first sets an old folder aside (under its lock:
    never one another run writes to) and tells ``on_set_aside`` where it went."""
    if new and folder.exists():
        with WriterLock(folder):
            moved = set_aside(folder)
        if on_set_aside is not None:
            on_set_aside(moved)
    store = Store(folder, writer=True, on_wait=on_wait)
    try:
        store.bind(fingerprint, what=what, remedy=remedy)
    except StoreError:
        store.close()
        raise
    for key, value in info.items():
        store.set_info(key, value)
    return store
