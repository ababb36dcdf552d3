"""Results stores for the report's tests, built fast and in-process: the engine and built-in bots, no gRPC.

Every record is a real game (played by the engine, with each decision timed)
and is committed by the real :class:`Store`; only the bulk helper skips the
per-game replay and fsync of ``Store.add_game`` to build 10,000 games quickly.
"""

from __future__ import annotations

import itertools
import json
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skyjo_bot.types import Rules
from skyjo_ref.bots import make_builtin
from skyjo_ref.execution.types import PlayedGame
from skyjo_ref.records import game_to_record
from skyjo_ref.rules import Game
from skyjo_ref.seating import design
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import Store, seat_results


def play(players: Sequence[str], seed: str, kinds: Sequence[str], rules: Rules | None = None) -> dict[str, Any]:
    """One game between built-in bots (``kinds``, one per seat), its record with ``meta.decision_ms``."""
    bots = [make_builtin(kind, zlib.crc32(f"{seed}/{i}".encode())) for i, kind in enumerate(kinds)]
    game = Game(len(players), rules or Rules(), seed=seed, players=list(players))
    times: list[list[float]] = [[] for _ in players]
    while not game.over:
        seat = game.seat
        view = game.view(seat)
        started = time.perf_counter()
        action = bots[seat].decide(view)
        times[seat].append(round((time.perf_counter() - started) * 1000, 2))
        game.apply(action)
    return game_to_record(game, {"decision_ms": times, "strikes": [], "forfeited": []})


def add_games(store: Store, games: Sequence[tuple[GameId, dict[str, Any]]], finished_from: float = 1.7e9) -> None:
    """Commit many games in one transaction (no replay, no record files): for big synthetic stores only."""
    texts: dict[int, str] = {}  # a reused record is written once, its players filled in per game
    with store.lock, store.db:
        store.db.execute("BEGIN IMMEDIATE")
        for n, (game, record) in enumerate(games):
            seats = game.seats
            if id(record) not in texts:
                texts[id(record)] = json.dumps({**record, "players": "@PLAYERS@"}, separators=(",", ":"))
            text = texts[id(record)].replace('"@PLAYERS@"', json.dumps(list(seats)), 1)
            store.db.execute(
                "INSERT OR REPLACE INTO games (key, tbl, deal, rotation, seats, deal_seed, record, finished_at, "
                "duration_s, slot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    game.key,
                    "+".join(game.table),
                    game.deal,
                    game.rotation,
                    json.dumps(list(seats)),
                    "s",
                    text,
                    finished_from + n,
                    0.1,
                    game.key,
                ),
            )
            store.db.executemany(
                "INSERT OR REPLACE INTO seats (game_key, seat, bot, total, rank, strikes, forfeit, round_scores) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (game.key, i, s.bot, s.total, s.rank, s.strikes, int(s.forfeit), json.dumps(list(s.round_scores)))
                    for i, s in enumerate(seat_results({**record, "players": list(seats)}, seats))
                ],
            )


def round_robin_store(
    folder: Path,
    bots: Sequence[str],
    deals: int,
    *,
    pool: int = 0,
    rules: Rules | None = None,
    rating: dict[str, Any] | None = None,
) -> Store:
    """A 2-player duplicate round robin of built-in bots (``random`` unless the name starts with ``greedy``).

    With ``pool`` > 0, only that many distinct games are played per rotation and
    reused across tables (with the table's names): real records, built fast.
    """
    store = Store(folder)
    store.set_info("name", folder.name)
    store.set_info("bots", list(bots))
    store.set_info("rating", rating or {"anchor": None, "elo": 1500, "bootstrap": 20, "interval_seed": 0})
    kinds = {b: ("greedy" if b.startswith("greedy") else "random") for b in bots}
    cache: dict[tuple[int, int, str, str], dict[str, Any]] = {}
    batch: list[tuple[GameId, dict[str, Any]]] = []
    for deal in range(deals):
        for table in itertools.combinations(sorted(bots), 2):
            for rotation in range(2):
                game = GameId(table, deal, rotation)
                seats = game.seats
                seat_kinds = tuple(kinds[b] for b in seats)
                slot = (deal % pool if pool else deal, rotation, *seat_kinds)
                if not pool or slot not in cache:
                    record = play(seats, f"deal/{deal % pool if pool else deal}", seat_kinds, rules)
                    if pool:
                        cache[slot] = record
                else:
                    record = cache[slot]  # the same game, played again under this table's names
                batch.append((game, record))
    add_games(store, batch)
    return store


def mixed_size_store(
    folder: Path,
    bots: Sequence[str],
    sizes: Sequence[int],
    deals: int,
    *,
    rules: Rules | None = None,
    rating: dict[str, Any] | None = None,
) -> Store:
    """A league of mixed table sizes: every table of each size plays every deal in its balanced seatings.

    Built-in bots (``greedy`` for names starting with it, else ``random``) play in-process; each game is
    committed by the store's own ``add_games`` (replayed, its record file written, its round starters kept).
    """
    rules = rules or Rules()
    store = Store(folder)
    store.bind({"rules": rules.options(), "players_per_game": list(sizes), "seed": 0})
    store.set_info("name", folder.name)
    store.set_info("bots", list(bots))
    store.set_info("rating", rating or {"anchor": None, "elo": 1500, "bootstrap": 20, "interval_seed": 0})
    kinds = {b: ("greedy" if b.startswith("greedy") else "random") for b in bots}
    batch = []
    for k in sizes:
        for deal in range(deals):
            for table in itertools.combinations(sorted(bots), k):
                for rotation in design(k, "balanced"):
                    game = GameId(table, deal, rotation)
                    seed = f"{k}/{deal}"
                    record = play(game.seats, seed, [kinds[b] for b in game.seats], rules)
                    batch.append(PlayedGame(game, seed, record, 0.01))
    store.add_games(batch)
    return store
