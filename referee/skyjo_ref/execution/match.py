"""``skyjo-ref match``'s one entry, :func:`play_match`: a line-up's games locally or on Dask workers.

Locally the line-up sits in one execution room for the whole match
(:func:`.lineup.play_lineup`); with ``--executor processes|tcp://...``:

Game ``g`` of the match is a :class:`~.types.MatchSlice` (the match seed and
``g``): the worker's referee plays it exactly as game ``g`` of the whole match
(its deal, seat rotation and built-in bots' seeds), so the records and the
summary equal those of a local match for deterministic bots. Each seat is a
bot of the room (named by its seat name), so a bot that sits twice gets a
process per seat, as locally. Every record is replay-checked here, in the
process the user started, before it counts.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from skyjo_bot.types import Rules, TimeControl

from skyjo_ref import records
from skyjo_ref.execution.executor import Executor, ExecutorError, backend_for
from skyjo_ref.execution.lineup import Lineup, LineupResult, play_lineup
from skyjo_ref.execution.play import BackendFactory, play_games
from skyjo_ref.execution.room import CONNECT_TIMEOUT_S, REMOTE_CONNECT_TIMEOUT_S
from skyjo_ref.execution.types import FaultList, GameId, MatchSlice, PlayedGame, RefereeConfig, RoomConfig
from skyjo_ref.match.runner import new_seed
from skyjo_ref.players import ManagedBot
from skyjo_ref.server.client import FinishedGame, MatchEnd

#: Fault kinds that are a bot process's own failure (what a local match lists as its process faults).
PROCESS_FAULTS: Final = ("crash", "limit", "gave_up")


def lineup_room(
    lineup: Lineup,
    *,
    rules: Rules,
    time_control: TimeControl,
    connect_timeout_s: float,
    output: Path,
    in_process: bool = False,
) -> RoomConfig:
    """One bot per seat, named by its seat name (``in_process``: Python bots play inside the worker)."""
    bots = tuple(
        dataclasses.replace(
            lineup.bots[lineup.slot_bot[slot]],
            name=name,
            in_process=in_process and lineup.bots[lineup.slot_bot[slot]].kind == "python",
        )
        for slot, name in enumerate(lineup.seat_names)
    )
    return RoomConfig(
        bots=bots,
        rules=rules,
        time_control=time_control,
        players_per_game=lineup.players_per_game,
        connect_timeout_s=connect_timeout_s,
        output=output,
    )


class _Checked:
    """The execution layer's writer for a match: replay-check each record and hand it on (no store)."""

    def add_games(self, batch: Sequence[PlayedGame]) -> list[FinishedGame]:
        checked = []
        for played in batch:
            records.replay(played.record)  # a record that does not replay never counts (the match stops)
            checked.append(FinishedGame(played.game.deal, dict(played.record)))
        return checked


async def play_lineup_on(
    backend: BackendFactory,
    room: RoomConfig,
    lineup: Lineup,
    *,
    games: int,
    seed: str,
    concurrency: int,
    on_game: Callable[[FinishedGame], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> LineupResult:
    """Play games 0..``games``-1 of the match with ``seed`` on ``backend``; the result a local match gives."""
    table = tuple(sorted(lineup.seat_names))
    todo = [GameId(table, game, 0) for game in range(games)]
    seats = [(name, room.bot(name)) for name in lineup.seat_names]  # slot order: the referee rotates them
    faults = FaultList()
    played: list[dict[str, Any]] = []

    class Notices:
        def note(self, message: str) -> None:
            if notice is not None:
                notice(message)

    def finished(item: FinishedGame, record: dict[str, Any]) -> None:
        played.append(item.record)
        if on_game is not None:
            on_game(item)

    async with backend(room, faults, Notices()) as referee:
        await referee.prepare(todo, concurrency)
        await play_games(
            todo,
            referee,
            _Checked(),
            seats_of=lambda game: seats,
            seed_of=lambda game: MatchSlice(seed, game.deal),
            concurrency=concurrency,
            on_game=finished,
        )
    played.sort(key=lambda r: int(r.get("meta", {}).get("game", 0)))
    process_faults: dict[str, list[str]] = {}
    for fault in faults.rows:
        if fault.kind in PROCESS_FAULTS:
            process_faults.setdefault(fault.bot, []).append(fault.detail)
    return LineupResult(lineup, seed, played, MatchEnd(len(played), ""), process_faults)


async def play_match(
    lineup: Lineup,
    *,
    executor: Executor,
    games: int,
    seed: str,
    rules: Rules,
    time_control: TimeControl,
    referee: RefereeConfig | None = None,
    connect_timeout_s: float | None = None,
    log_dir: Path | None = None,
    in_process: bool = False,
    concurrency: int = 1,
    on_game: Callable[[FinishedGame], None] | None = None,
    on_process: Callable[[str, ManagedBot], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> LineupResult:
    """The match, where ``executor`` says: the same records and summary either way (deterministic bots).

    ``connect_timeout_s``: how long bot processes, ``remote:`` bots (locally) and the first Dask worker have to
    connect (None: :data:`~.room.CONNECT_TIMEOUT_S`, ``remote:`` bots :data:`~.room.REMOTE_CONNECT_TIMEOUT_S`)."""
    if executor.is_local:
        return await play_lineup(
            lineup,
            games=games,
            seed=seed,
            rules=rules,
            time_control=time_control,
            referee=referee,
            on_game=on_game,
            notice=notice,
            log_dir=log_dir,
            connect_timeout_s=connect_timeout_s or CONNECT_TIMEOUT_S,
            remote_connect_timeout_s=connect_timeout_s or REMOTE_CONNECT_TIMEOUT_S,
            on_process=on_process,
            in_process=in_process,
            concurrency=concurrency,
        )
    room = lineup_room(
        lineup,
        rules=rules,
        time_control=time_control,
        connect_timeout_s=connect_timeout_s or CONNECT_TIMEOUT_S,
        output=Path(tempfile.gettempdir()),
        in_process=in_process,
    )
    try:
        backend, in_flight = backend_for(room, executor, concurrency)
    except ExecutorError as exc:  # said in match's words: its executor is a flag
        raise ExecutorError(str(exc).replace("use executor local", "use --executor local")) from None
    assert backend is not None, "a Dask executor has a backend"
    return await play_lineup_on(
        backend,
        room,
        lineup,
        games=games,
        seed=seed or new_seed(),  # every worker plays its games of the same match
        concurrency=in_flight,
        on_game=on_game,
        notice=notice,
    )
