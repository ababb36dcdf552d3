"""The session behind ``skyjo-ref play``: a person's seat on a referee, through the SDK client.

The person's :class:`~skyjo_ref.cli.play_view.HumanBot` connects to the
referee's BotService with a token, exactly as a remote bot does, so every
game played here also exercises the protocol. The referee is started in this
process unless an address is given; bots named by file or command run as
their own processes (:class:`~skyjo_ref.players.ManagedBot`), built-in bots
inside the referee.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skyjo_bot.client import BotClient, ConnectionLost, SessionRefused
from skyjo_bot.loader import BotSpecError as LoaderError
from skyjo_bot.loader import load_bot
from skyjo_bot.types import Rules, TimeControl

from skyjo_ref.cli.play_view import HumanBot
from skyjo_ref.execution.lineup import LineupError, seat_pool, wait_bot_connected
from skyjo_ref.execution.pool import BotPool
from skyjo_ref.execution.types import RunUnfinished
from skyjo_ref.match import MatchSpec, MatchSpecError, SeatSpec
from skyjo_ref.players import BotSpec, ManagedBot, ProcessFault
from skyjo_ref.server.client import FinishedGame, MatchClient, RefereeError
from skyjo_ref.server.server import RefereeServer, ServerConfig

#: A person thinks for as long as they like: an hour a decision, a day a game.
HUMAN_TIME_CONTROL = TimeControl(decision_ms=3_600_000, bank_ms=86_400_000, max_strikes=3, grace_ms=30_000)
#: How long the person's client and the bot processes may take to connect.
CONNECT_TIMEOUT_S = 30.0
#: How long the end of the last game may take to reach the screen (a failure detector: it is awaited).
GAMES_SEEN_TIMEOUT_S = 60.0


class PlayError(Exception):
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
    referee: str | None = None,
    control_token: str | None = None,
    log_dir: Path | None = None,
    on_game: Callable[[FinishedGame], None] | None = None,
    in_process: bool = False,
) -> PlayOutcome:
    """Seat ``human`` at ``seat`` among ``bots`` and play ``games`` games on a referee
    (bot processes' output in ``log_dir/SEAT.log``; ``on_game`` sees each finished game)."""
    if not 0 <= seat <= len(bots):
        raise PlayError(f"--seat {seat} is not a seat of this table: expected 0 to {len(bots)}")
    if in_process and referee is not None:
        raise PlayError("--in-process plays Python bots inside this process's own referee: drop --referee")
    if any(b.kind == "remote" for b in bots):
        raise PlayError("play seats built-in bots, Python bot files and cmd: bots; remote: bots need skyjo-ref serve")
    server: RefereeServer | None = None
    if referee is None:
        server = RefereeServer(ServerConfig(address="127.0.0.1:0", time_control=HUMAN_TIME_CONTROL))
        try:
            await server.start()
        except OSError as exc:
            raise PlayError(f"cannot start a referee: {exc}") from None
        address, control = server.address, server.control_token
    else:
        if not control_token:
            raise PlayError(
                "--referee needs the referee's control token: pass --control-token or set SKYJO_CONTROL_TOKEN"
            )
        address, control = referee, control_token
    loop = asyncio.get_running_loop()
    quit_event = asyncio.Event()

    def on_quit() -> None:
        loop.call_soon_threadsafe(quit_event.set)

    human.on_quit = on_quit
    managed: list[ManagedBot] = []
    pool: BotPool | None = None
    client: BotClient | None = None
    client_task: asyncio.Task[None] | None = None
    outcome = PlayOutcome()
    interrupted = asyncio.Event()
    installed = _on_sigint(loop, quit_event, interrupted)
    try:
        async with MatchClient(address, control) as matches:
            names = _seat_names(human.name, bots, seat)
            outcome.seat_names = names
            token = await matches.issue_token(names[seat])
            # a person thinks for seconds: decide in a worker thread, so the session stays responsive
            client = BotClient(human, address, token, inline=False, give_up_after=CONNECT_TIMEOUT_S)
            client_task = asyncio.create_task(client.run())
            seats: list[SeatSpec] = []
            bot_names = [n for i, n in enumerate(names) if i != seat]
            managed_seats = [
                dataclasses.replace(spec, name=name)
                for spec, name in zip(bots, bot_names)
                if spec.managed and not (in_process and spec.kind == "python")
            ]
            pool = seat_pool(managed_seats, address, matches.issue_token, log_dir)  # your own bots: not isolated
            for spec, name in zip(bots, bot_names):
                if spec.builtin is not None:
                    seats.append(SeatSpec.of_builtin(spec.builtin, name))
                    continue
                if in_process and spec.kind == "python":
                    assert server is not None and spec.python is not None
                    try:
                        loaded = load_bot(spec.python)
                    except LoaderError as exc:
                        raise PlayError(f"bot {spec.text or spec.name!r}: {exc}") from None
                    # the person's stream shares this event loop: the bot's wait must not block it
                    seats.append(SeatSpec.of_token(server.add_in_process_bot(name, loaded, block_loop=False), name))
                    continue
                try:
                    process = (await pool.start(name)).process
                except RunUnfinished as exc:
                    raise PlayError(f"cannot start bot {spec.text or spec.name!r}: {exc}") from None
                if log_dir is not None and process.log_path is not None:
                    outcome.log_paths[name] = process.log_path
                managed.append(process)
                seats.append(SeatSpec.of_token(process.token, name))
            seats.insert(seat, SeatSpec.of_token(token, names[seat]))
            await _wait_welcome(client, client_task)
            if server is not None:
                for process in managed:
                    try:
                        await wait_bot_connected(server, process.spec.name, process.token, process)
                    except LineupError as exc:
                        raise PlayError(str(exc)) from None
            pool.connected_once.update(p.spec.name for p in managed)
            match_spec = MatchSpec(
                seats=tuple(seats),
                rules=rules or Rules(),
                time_control=HUMAN_TIME_CONTROL,
                games=games,
                seed=seed,
            )
            try:
                match_id = await matches.start_match(match_spec)
            except (RefereeError, MatchSpecError) as exc:
                raise PlayError(str(exc)) from None
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
    except RefereeError as exc:
        raise PlayError(str(exc)) from None
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
        if client is not None:
            client.stop()
        if client_task is not None:
            # asyncio.timeout, not wait_for (whose 3.11 version can return as if nothing happened when
            # cancelled); the client's own end or failure is no error here, and the bots and the referee
            # below are stopped whatever happens
            with contextlib.suppress(Exception, asyncio.CancelledError):
                async with asyncio.timeout(5.0):
                    await client_task
        if pool is not None:
            await pool.aclose()
        outcome.crashes = {p.spec.name: list(p.faults) for p in managed if p.faults}
        if server is not None:
            await server.stop(0.5)
    return outcome


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
