"""Bot versions: a bot is its name and a version, and the current table rates each bot's current version.

A version is what the config's ``version:`` says (a commit id, a tag), else a digest of exactly the files the
bot can read and run (:func:`skyjo_ref.botfiles.bot_files`); a built-in bot's is skyjo-ref's own release and a
remote bot's is ``remote`` unless the config gives one. Games are stored under the versions of their bots
(:func:`.store.version_tag`), so a new version plays its games again while the old version's stay as history.

The tables fit every stored game at once, an old version of a bot being a player of its own (``low@3f2a9c1b0d4e``):
the history still informs the ratings of the bots it met, but only the current versions of the configured bots
are rows of the current table; ``--json`` lists every version's rating, numbered in the order the store first
saw them (the times are in the store's ``versions`` table: the tables' JSON stays the same for the same games).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skyjo_ref.tournament.store import StoredGame
from skyjo_ref.tournament.tables import RatingConfig, Tables, rated

if TYPE_CHECKING:  # a bot's files are read when a run versions its bots, not when a table is shown
    from skyjo_ref.players import BotSpec


def bot_version(spec: BotSpec, output: Path | None = None) -> str:
    """The version a config's bot plays as (see the module docstring); ``output``, the tournament's folder, is
    never part of it (a command bot whose folder is the config's holds the store, which changes every game)."""
    if spec.version:
        return spec.version
    if spec.kind == "builtin":
        try:
            release = metadata.version("skyjo-ref")
        except metadata.PackageNotFoundError:
            release = "unknown"
        return f"builtin:{spec.builtin}@skyjo-ref-{release}"
    if spec.kind == "remote":
        return "remote"
    from skyjo_ref.botfiles import bot_files

    files = bot_files(spec)
    if output is None or files.root is None:
        return files.digest()
    skipped = output.resolve()
    if not skipped.is_relative_to(files.root):
        return files.digest()
    h = hashlib.sha256()  # BotFiles.digest's format, without the output folder
    for path in files.walk():
        if path.is_relative_to(skipped) or (path.is_symlink() and not path.exists()):
            continue
        try:
            data = path.read_bytes()
        except (IsADirectoryError, PermissionError, FileNotFoundError):
            continue
        rel = os.path.relpath(path, files.root)
        h.update(f"{len(rel)}:{rel}:{len(data)}:".encode())
        h.update(data)
    return "sha256:" + h.hexdigest()


def short(version: str) -> str:
    """A version as tables show it: a digest's first 12 hex digits, anything else up to 40 characters."""
    if version.startswith("sha256:"):
        return version[len("sha256:") : len("sha256:") + 12]
    return version if len(version) <= 40 else version[:39] + "~"


def label(bot: str, version: str) -> str:
    """An old version's name in the fit: ``low@3f2a9c1b0d4e``."""
    return f"{bot}@{short(version)}"


def current_view(games: Sequence[StoredGame], current: Mapping[str, str]) -> list[StoredGame]:
    """The games with every seat that is not a bot's current version renamed to its version's label."""
    if not current:
        return list(games)
    out = []
    for game in games:
        seats = tuple(
            seat
            if not seat.version or current.get(seat.bot) == seat.version
            else dataclasses.replace(seat, bot=label(seat.bot, seat.version))
            for seat in game.seats
        )
        out.append(game if seats == game.seats else dataclasses.replace(game, seats=seats))
    return out


def current_table(
    tables: Tables, current: Mapping[str, str], history: Sequence[tuple[str, str, float]], bots: Sequence[str]
) -> Tables:
    """``tables`` (fitted over :func:`current_view`) cut down to the configured bots' current versions, with
    every version's rating in ``versions``."""
    if not current:
        return tables
    by_name = {row.name: row for row in tables.rows}
    keep = set(bots) if bots else set(current)
    versions: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for bot, version, _ in history:  # oldest first: the n-th version of a bot the store saw is its number n
        is_current = current.get(bot) == version and bot in keep
        row = by_name.get(bot if current.get(bot) == version else label(bot, version))
        seen[bot] = seen.get(bot, 0) + 1
        versions.append(
            {
                "bot": bot,
                "version": version,
                "number": seen[bot],
                "current": is_current,
                "games": row.games if row is not None else 0,
                "elo": None if row is None or row.elo is None else round(row.elo, 2),
                "elo_low": None if row is None or row.elo_low is None else round(row.elo_low, 2),
                "elo_high": None if row is None or row.elo_high is None else round(row.elo_high, 2),
            }
        )
    rows = []
    for row in tables.rows:
        if row.name in keep:
            row.version = current.get(row.name)
            rows.append(row)
    h2h = {
        a: {b: cell for b, cell in line.items() if b in keep} for a, line in tables.head_to_head.items() if a in keep
    }
    dropped = len(tables.rows) - len(rows)
    notes = list(tables.notes)
    if dropped:
        notes.append(
            f"{dropped} older versions or removed bots are rated with their games but left out of this table "
            "(every version is in --json's versions)"
        )
    return dataclasses.replace(tables, rows=rows, head_to_head=h2h, versions=versions, notes=notes)


def versioned_tables(
    games: Sequence[StoredGame],
    *,
    current: Mapping[str, str],
    history: Sequence[tuple[str, str, float]],
    bots: Sequence[str],
    rating: RatingConfig,
) -> Tables:
    """The current table of a store's games (every game fitted, current versions shown; see the module),
    rated as ``rating`` says."""
    return current_table(rated(current_view(games, current), bots, rating), current, history, bots)
