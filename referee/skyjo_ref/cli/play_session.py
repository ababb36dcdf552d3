"""The session behind ``skyjo-ref play``: a person's seat on a referee, through the SDK client.

The person's :class:`~skyjo_ref.cli.play_view.HumanBot` connects to the
referee's BotService with a token, exactly as a remote bot does, so every
game played here also exercises the protocol. The bots sit in an execution
room (:mod:`skyjo_ref.execution.room`: its referee unless an address is given;
bots named by file or command run as their own processes, built-in bots inside
the referee).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skyjo_bot.client import BotClient, ConnectionLost, SessionRefused
from skyjo_bot.types import Rules, TimeControl

from skyjo_ref.cli.play_view import HumanBot
from skyjo_ref.errors import UsageError
from skyjo_ref.execution.room import CONNECT_TIMEOUT_S, MatchRoom, open_room
from skyjo_ref.execution.types import RefereeConfig
from skyjo_ref.match import MatchSpec, SeatSpec
from skyjo_ref.players import BotSpec, ProcessFault
from skyjo_ref.server.client import FinishedGame, MatchClient

#: A person thinks for as long as they like: an hour a decision, a day a game.
HUMAN_TIME_CONTROL = TimeControl(decision_ms=3_600_000, bank_ms=86_400_000, max_strikes=3, grace_ms=30_000)
#: How long the end of the last game may take to reach the screen (a failure detector: it is awaited).
GAMES_SEEN_TIMEOUT_S = 60.0


class PlayError(UsageError):
    """The session could not be set up or broke; the message says what and what is expected."""


@dataclass(slots=True)
class PlayOutcome:
    """How the session ended."""

    games: int = 0  # games the referee finished
    quit: bool = False  # the person left before the end
    error: str = ""  # why the match stopped early, if it did
    records: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False  # Ctrl-C or SIGTERM (not the person typing quit)
    seat_names: list[str] = field(default_factory=list)
    log_paths: dict[str, Path] = field(default_factory=dict)  # seat name -> its bot process's output
    crashes: dict[str, list[ProcessFault]] = field(default_factory=dict)  # seat name -> its process's faults


async def play(
    human: HumanBot,
    bots: Sequence[BotSpec],
    *,
    seat: int = 0,
    rules: Rules | None = None,
    games: int = 1,
    seed: str = "",
    referee: RefereeConfig | None = None,
    log_dir: Path | None = None,
    on_game: Callable[[FinishedGame], None] | None = None,
    in_process: bool = False,
) -> PlayOutcome:
    """Seat ``human`` at ``seat`` among ``bots`` and play ``games`` games in an execution room
    (bot processes' output in ``log_dir/SEAT.log``; ``on_game`` sees each finished game)."""
    if not 0 <= seat <= len(bots):
        raise PlayError(f"--seat {seat} is not a seat of this table: expected 0 to {len(bots)}")
    if in_process and referee is not None:
        raise PlayError("--in-process plays Python bots inside this process's own referee: drop --referee")
    if any(b.kind == "remote" for b in bots):
        raise PlayError("play seats built-in bots, Python bot files and cmd: bots; remote: bots need skyjo-ref serve")
    loop = asyncio.get_running_loop()
    quit_event = asyncio.Event()

    def on_quit() -> None:
        loop.call_soon_threadsafe(quit_event.set)

    human.on_quit = on_quit
    outcome = PlayOutcome(seat_names=_seat_names(human.name, bots, seat))
    interrupted = asyncio.Event()
    installed = _on_sigint(loop, quit_event, interrupted)
    room: MatchRoom | None = None
    try:
        async with open_room(referee or RefereeConfig(), HUMAN_TIME_CONTROL, log_dir=log_dir) as room:
            names = outcome.seat_names
            token = await room.referee.client.issue_token(names[seat])
            # a person thinks for seconds: decide in a worker thread, so the session stays responsive
            client = BotClient(human, room.referee.address, token, inline=False, give_up_after=CONNECT_TIMEOUT_S)
            async with _human_client(client) as client_task:
                bot_names = [n for i, n in enumerate(names) if i != seat]
                # the person's stream shares this event loop: an in-process bot's wait must not block it
                seats = [await room.seat(name, spec, in_process=in_process) for spec, name in zip(bots, bot_names)]
                seats.insert(seat, SeatSpec.of_token(token, names[seat]))
                outcome.log_paths = {n: p.log_path for n, p in room.processes.items() if p.log_path is not None}
                await _wait_welcome(client, client_task)
                await room.wait_connected()
                spec = MatchSpec(
                    seats=tuple(seats), rules=rules or Rules(), time_control=HUMAN_TIME_CONTROL, games=games, seed=seed
                )
                await _session(room, spec, human, client_task, quit_event, interrupted, outcome, on_game)
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
        if room is not None:
            outcome.crashes = {name: list(p.faults) for name, p in room.processes.items() if p.faults}
    return outcome


@contextlib.asynccontextmanager
async def _human_client(client: BotClient) -> AsyncIterator[asyncio.Task[None]]:
    """The person's client, running; stopped on the way out, whatever happens."""
    task = asyncio.create_task(client.run())
    try:
        yield task
    finally:
        client.stop()
        # asyncio.timeout, not wait_for (whose 3.11 version can return as if nothing happened when
        # cancelled); the client's own end or failure is no error here, and the bots and the referee
        # are stopped after it whatever happens
        with contextlib.suppress(Exception, asyncio.CancelledError):
            async with asyncio.timeout(5.0):
                await task


async def _session(
    room: MatchRoom,
    spec: MatchSpec,
    human: HumanBot,
    client_task: asyncio.Task[None],
    quit_event: asyncio.Event,
    interrupted: asyncio.Event,
    outcome: PlayOutcome,
    on_game: Callable[[FinishedGame], None] | None,
) -> None:
    """Play the match until it ends, the person quits or their client breaks."""
    matches = room.referee.client
    match_id = await matches.start_match(spec)
    watch = asyncio.create_task(_watch(matches, match_id, outcome, on_game))
    quitting = asyncio.create_task(quit_event.wait())
    done, _ = await asyncio.wait({watch, quitting, client_task}, return_when=asyncio.FIRST_COMPLETED)
    if quitting in done or human.quit.is_set():
        outcome.quit = True
        outcome.interrupted = interrupted.is_set()
        watch.cancel()
    elif client_task in done and watch not in done:
        watch.cancel()
        outcome.error = _client_failure(client_task)
    else:
        quitting.cancel()
        await watch  # raises RefereeError if the watch broke
        await _wait_games_seen(human, outcome.games, client_task)


def _seat_names(human: str, bots: Sequence[BotSpec], seat: int) -> list[str]:
    """Display names, one a seat, made unique (``greedy``, ``greedy 2``)."""
    raw = [b.name for b in bots]
    raw.insert(seat, human)
    seen: dict[str, int] = {}
    out = []
    for name in raw:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} {seen[name]}")
    return out


async def _wait_welcome(client: BotClient, task: asyncio.Task[None]) -> None:
    """Until the person's client holds a session (the referee answered Hello), or its task ends."""
    welcomed = asyncio.ensure_future(client.welcomed.wait())
    try:
        await asyncio.wait({welcomed, task}, timeout=CONNECT_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
    finally:
        welcomed.cancel()
    if client.welcomed.is_set():
        return
    if task.done():
        raise PlayError(f"could not join the referee: {_client_failure(task)}")
    raise PlayError(f"could not join the referee at {client.addr} within {CONNECT_TIMEOUT_S:.0f} s")


def _client_failure(task: asyncio.Task[None]) -> str:
    if task.cancelled():
        return "the connection was cancelled"
    exc = task.exception()
    if isinstance(exc, SessionRefused | ConnectionLost):
        return str(exc)
    if exc is not None:
        return f"{type(exc).__name__}: {exc}"
    return "the referee ended the session"


async def _watch(
    matches: MatchClient, match_id: str, outcome: PlayOutcome, on_game: Callable[[FinishedGame], None] | None
) -> None:
    async for update in matches.watch(match_id):
        if isinstance(update, FinishedGame):
            outcome.games += 1
            outcome.records.append(update.record)
            if on_game is not None:
                on_game(update)
        else:
            outcome.error = update.error


async def _wait_games_seen(human: HumanBot, games: int, client_task: asyncio.Task[None]) -> None:
    """The referee reports a game before the person's client shows its end: wait until it is on the screen.

    Woken by the screen itself (a condition); the bound only matters when the
    client is gone and will never show it.
    """
    shown = asyncio.ensure_future(asyncio.to_thread(human.wait_games_over, games, GAMES_SEEN_TIMEOUT_S))
    await asyncio.wait({shown, client_task}, return_when=asyncio.FIRST_COMPLETED)
    if not shown.done():  # the client ended: no more game ends will come
        human.stop_waiting()
        await shown


def _on_sigint(
    loop: asyncio.AbstractEventLoop, event: asyncio.Event, interrupted: asyncio.Event
) -> list[signal.Signals]:
    """Ctrl-C (and SIGTERM) leave the game cleanly, noting that it was an interruption (exit 130)."""

    def stop() -> None:
        interrupted.set()
        event.set()

    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop)
            installed.append(sig)
    return installed
