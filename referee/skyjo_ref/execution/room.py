"""The execution room: a referee (started here, or a running one) and bots seated on it by their specs.

Every caller that puts bots on a referee comes through here: ``match`` and
``play`` (:class:`MatchRoom`: one process per seat for a whole match, through
:func:`execution.lineup.play_lineup`), the tournament and the gate
(:mod:`execution.backend`: a bot pool of isolated processes, a game at a time,
on the referee :func:`open_referee` starts), ``match --executor`` (the same
backend on each Dask worker) and ``check-bot``. What is written once here:

* starting our own referee, or reaching a running one (its control token, TLS
  from ``SKYJO_CA_FILE``): :func:`open_referee` -> :class:`Referee`;
* turning a bot spec into a seat (built-in, in-process, a managed process,
  ``remote:``): :func:`seat_spec`, :func:`load_in_process`, :meth:`MatchRoom.seat`;
* how long a bot has to connect (:data:`CONNECT_TIMEOUT_S`, overridable; a
  ``remote:`` bot on our own referee: :data:`REMOTE_CONNECT_TIMEOUT_S`), and
  the message when it does not (with its log file) or exits first
  (:class:`BotCannotRun`, exit 3 in every command).

The API, for a command (or ``check-bot``) that seats bots itself::

    async with open_room(RefereeConfig(), time_control, log_dir=logs) as room:
        seats = [await room.seat(name, spec) for name, spec in line_up]   # SeatSpec each, in slot order
        await room.wait_connected()             # every process and remote bot holds its stream
        records, end = await room.play(MatchSpec(seats=tuple(seats), ...), on_game=print)

``open_room`` stops every process and the referee it started on the way out.
To seat a tournament config's bot exactly as the league runs it (isolation,
limits, a fresh process per deal), use :func:`execution.backend.referee_backend`
with a :class:`~.types.RoomConfig` (``TournamentConfig.room()``) instead. A
caller that runs a referee of its own making (check-bot's scripted one) starts
the bot's processes as the league would with :class:`BotProcesses`::

    processes = BotProcesses(spec, tcp_address=tcp, unix_address=unix, log_dir=logs)
    process = await processes.start(token)          # a ManagedBot, never restarted
    ...
    await processes.aclose()
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from skyjo_bot.bot import Bot
from skyjo_bot.loader import BotSpecError as LoaderSpecError
from skyjo_bot.loader import load_bot
from skyjo_bot.tls import client_tls
from skyjo_bot.types import TimeControl

from skyjo_ref.errors import UsageError
from skyjo_ref.execution.pool import BotPool
from skyjo_ref.execution.types import CONNECT_TIMEOUT_S as CONNECT_TIMEOUT_S  # re-exported: defaults live in types
from skyjo_ref.execution.types import REMOTE_CONNECT_TIMEOUT_S as REMOTE_CONNECT_TIMEOUT_S  # (read by --help)
from skyjo_ref.execution.types import BotCannotRun, FaultList, QuietNotes, RefereeConfig, RunUnfinished
from skyjo_ref.match import MatchSpec, SeatSpec
from skyjo_ref.players import BotSpec, ManagedBot
from skyjo_ref.sandbox import share_socket
from skyjo_ref.server.client import FinishedGame, MatchClient, MatchEnd
from skyjo_ref.server.config import ServerConfig
from skyjo_ref.server.server import RefereeServer

#: Restarts of a match seat's process before it is given up (its seat then forfeits each game it cannot start).
MATCH_RESTARTS: Final = 5


@dataclass(slots=True)
class Referee:
    """A referee reached through MatchService: ``server`` is ours (None: a running one at ``address``)."""

    address: str
    client: MatchClient
    server: RefereeServer | None
    unix_address: str | None = None  # our referee's unix: socket, for bots without the host's network

    async def wait_connected(self, token: str, timeout_s: float) -> bool:
        """Whether the token's bot holds its stream within ``timeout_s`` (a running referee: assumed so)."""
        return True if self.server is None else await self.server.wait_connected(token, timeout_s)


@contextlib.asynccontextmanager
async def open_referee(
    config: RefereeConfig,
    time_control: TimeControl,
    *,
    tokens: Mapping[str, str] | None = None,
    unix_socket: bool = False,
    stop_grace_s: float = 1.0,
) -> AsyncIterator[Referee]:
    """Our own referee (``config.listen``; with ``unix_socket``, a ``unix:`` socket in a private temporary folder
    too) or the running one at ``config.address``; stopped (ours) and disconnected on the way out."""
    if config.address is not None:
        if not config.control_token:
            raise UsageError(
                "--referee needs the referee's control token: pass --control-token or set SKYJO_CONTROL_TOKEN"
            )
        try:  # a running referee may speak TLS (serve --tls-cert): SKYJO_CA_FILE, as for bots
            tls = client_tls()
        except ValueError as exc:
            raise UsageError(f"cannot reach the referee at {config.address}: {exc}") from None
        async with MatchClient(config.address, config.control_token, tls=tls) as client:
            yield Referee(config.address, client, None, config.address if config.address.startswith("unix:") else None)
        return
    folder = Path(tempfile.mkdtemp(prefix="skyjo-ref-")) if unix_socket else None  # short: sockets max ~100 bytes
    if folder is not None:
        (folder / "s").mkdir()  # what isolated bots see of it (the folder above stays private)
    server = RefereeServer(
        ServerConfig(
            address=config.listen,
            tokens=dict(tokens or {}),
            time_control=time_control,
            unix_socket=folder / "s" / "referee.sock" if folder is not None else None,
        )
    )
    try:
        try:
            await server.start()
            if folder is not None:
                share_socket(folder / "s")
        except OSError as exc:
            raise RunUnfinished(f"cannot start the referee: {exc}") from None
        try:
            async with MatchClient(server.address, server.control_token) as client:
                yield Referee(server.address, client, server, server.unix_address)
        finally:
            await server.stop(stop_grace_s)
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def seat_spec(name: str, spec: BotSpec, token: str | None = None) -> SeatSpec:
    """The referee's seat for bot ``spec`` named ``name``: a built-in bot plays inside it, any other by ``token``."""
    if spec.kind == "builtin":
        assert spec.builtin is not None
        return SeatSpec.of_builtin(spec.builtin, name)
    assert token is not None, f"bot {name!r} ({spec.kind}) needs a token"
    return SeatSpec.of_token(token, name)


def load_in_process(spec: BotSpec) -> Bot:
    """A trusted Python bot, loaded into this process (``--in-process``, ``in_process: true``); one that cannot be
    loaded cannot run (:class:`BotCannotRun`, as when its process exits before connecting)."""
    assert spec.python is not None, f"bot {spec.name!r} is not a Python bot"
    try:
        return load_bot(spec.python)
    except LoaderSpecError as exc:
        raise BotCannotRun(f"bot {spec.text or spec.name!r} cannot run (in process): {exc}") from None


def file_name(seat: str) -> str:
    """A seat name as a file name (``greedy#2`` -> ``greedy-2``)."""
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in seat) or "bot"


@dataclass(slots=True)
class _Waiting:
    name: str
    token: str
    process: ManagedBot | None  # None: a remote: bot


@dataclass(slots=True)
class MatchRoom:
    """The seats of one match on ``referee``: a process per managed seat for the whole match (the author's own
    bots: not isolated), its output in ``log_dir/SEAT.log``; crashes are told after the match."""

    referee: Referee
    log_dir: Path | None = None
    connect_timeout_s: float = CONNECT_TIMEOUT_S
    remote_connect_timeout_s: float = REMOTE_CONNECT_TIMEOUT_S
    notice: Callable[[str], None] = lambda text: None
    processes: dict[str, ManagedBot] = field(default_factory=dict)  # seat name -> its process
    remotes: dict[str, str] = field(default_factory=dict)  # seat name -> a remote: bot's token
    pool: BotPool = field(init=False)
    _waits: list[_Waiting] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self.pool = BotPool(
            (),
            address=self.referee.address,
            issue_token=self.referee.client.issue_token,
            wait_connected=None,  # wait_connected() below: a process that exits first is an error with its output
            store=FaultList(),
            observer=QuietNotes(),
            log_dir=self.log_dir,
            connect_timeout_s=self.connect_timeout_s,
            max_restarts=MATCH_RESTARTS,
            log_name=lambda seat, number: f"{file_name(seat)}.log",
            replace_given_up=False,  # a seat's process holds its token for the whole match
        )

    async def seat(self, name: str, spec: BotSpec, *, in_process: bool = False, block_loop: bool = False) -> SeatSpec:
        """Seat bot ``spec`` as ``name``: ``in_process`` loads a Python bot into our referee (``block_loop``: it may
        hold the event loop while it thinks, when no seat plays over a stream)."""
        if spec.kind == "builtin":
            return seat_spec(name, spec)
        if in_process and spec.kind == "python":
            if self.referee.server is None:
                raise UsageError(
                    "--in-process plays Python bots inside this process's own referee: it cannot be used with --referee"
                )
            bot = load_in_process(spec)
            return seat_spec(name, spec, self.referee.server.add_in_process_bot(name, bot, block_loop=block_loop))
        if spec.managed:
            return seat_spec(name, spec, await self._start(name, spec))
        token = await self.referee.client.issue_token(name)
        address = self.referee.address
        if self.referee.server is not None:
            self.notice(
                f"waiting {self.remote_connect_timeout_s:g} s for remote bot {name!r}: connect it with "
                f"SKYJO_ADDR={address} SKYJO_TOKEN={token}"
            )
        else:  # the referee's own token for a name it knows (serve --token NAME=...), else a fresh one
            self.notice(
                f"remote bot {name!r} must be connected when the first game starts: "
                f"SKYJO_ADDR={address} SKYJO_TOKEN={token}"
            )
        self.remotes[name] = token
        self._waits.append(_Waiting(name, token, None))
        return seat_spec(name, spec, token)

    async def _start(self, name: str, spec: BotSpec) -> str:
        """A process for the seat, started now (its log file emptied first: this match's output only)."""
        self.pool.add(dataclasses.replace(spec, name=name))
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            (self.log_dir / f"{file_name(name)}.log").write_text("", encoding="utf-8")
        try:
            process = (await self.pool.start(name)).process
        except RunUnfinished as exc:
            raise BotCannotRun(f"cannot start bot {spec.text or spec.name!r}: {exc}") from None
        self.processes[name] = process
        self._waits.append(_Waiting(name, process.token, process))
        return process.token

    async def wait_connected(self) -> None:
        """Until every seated process and remote bot holds its stream (our own referee; a running one tells at the
        first game, see :func:`lineup.play_lineup`); from then on a process's exit is a crash to restart."""
        if self.referee.server is not None:
            for waiting in self._waits:
                await self._wait_one(waiting)
        self.pool.connected_once.update(self.processes)

    async def _wait_one(self, waiting: _Waiting) -> None:
        process = waiting.process
        timeout_s = self.connect_timeout_s if process is not None else self.remote_connect_timeout_s
        connected = asyncio.ensure_future(self.referee.wait_connected(waiting.token, timeout_s))
        waits: set[asyncio.Future[Any]] = {connected}
        exited = asyncio.ensure_future(process.exited.wait()) if process is not None else None
        if exited is not None:
            waits.add(exited)
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for fut in waits:
                fut.cancel()
        if connected.done() and not connected.cancelled() and connected.result():
            return
        if process is None:
            raise BotCannotRun(
                f"remote bot {waiting.name!r} did not connect to the referee within {timeout_s:g} s "
                "(--connect-timeout): start it with the SKYJO_ADDR and SKYJO_TOKEN printed above"
            )
        where = f"\n(all of its output: {process.log_path})" if process.log_path is not None else ""
        if exited is not None and exited.done() and not exited.cancelled():
            output = process.output(12).strip() or "(no output)"
            raise BotCannotRun(f"bot {process.spec.text!r} exited before connecting to the referee:\n{output}{where}")
        raise BotCannotRun(
            f"bot {waiting.name!r} did not connect to the referee within {timeout_s:g} s (--connect-timeout){where}"
        )

    async def play(
        self, spec: MatchSpec, on_game: Callable[[FinishedGame], None] | None = None
    ) -> tuple[list[dict[str, Any]], MatchEnd]:
        """Play the match; its records (in game order) and how it ended."""
        records: list[dict[str, Any]] = []
        end = MatchEnd(0, "the referee did not report the end of the match")
        match_id = await self.referee.client.start_match(spec)
        async for item in self.referee.client.watch(match_id):
            if isinstance(item, FinishedGame):
                records.append(item.record)
                if on_game is not None:
                    on_game(item)
            else:
                end = item
        records.sort(key=lambda r: int(r.get("meta", {}).get("game", 0)))
        return records, end

    async def aclose(self) -> None:
        """Stop every process the room started (never raises: the referee is stopped after it)."""
        with contextlib.suppress(Exception):
            await self.pool.aclose()


@contextlib.asynccontextmanager
async def open_room(
    referee: RefereeConfig,
    time_control: TimeControl,
    *,
    log_dir: Path | None = None,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
    remote_connect_timeout_s: float = REMOTE_CONNECT_TIMEOUT_S,
    notice: Callable[[str], None] = lambda text: None,
    stop_grace_s: float = 0.5,
) -> AsyncIterator[MatchRoom]:
    """:func:`open_referee` and a :class:`MatchRoom` on it; every process, then the referee, stopped on the way out."""
    async with open_referee(referee, time_control, stop_grace_s=stop_grace_s) as ref:
        room = MatchRoom(
            ref,
            log_dir=log_dir,
            connect_timeout_s=connect_timeout_s,
            remote_connect_timeout_s=remote_connect_timeout_s,
            notice=notice,
        )
        try:
            yield room
        finally:
            await room.aclose()


async def _no_tokens(name: str) -> str:
    raise RuntimeError(f"bot {name!r}: the caller's referee issues its tokens (BotProcesses.start(token))")


class BotProcesses:
    """One bot's processes exactly as the league starts them (its sandbox view, limits and environment; a
    ``unix:`` socket when it has no network), on a referee the caller runs itself: the caller gives each
    process its token, and may point it at another of its listeners (``address``, as the bot sees it).
    Never restarted (``max_restarts``): a check wants the exit of the process it started."""

    def __init__(
        self,
        spec: BotSpec,
        *,
        tcp_address: str,
        unix_address: str | None,
        log_dir: Path,
        hidden: tuple[Path, ...] = (),
        env: Mapping[str, str] | None = None,
        max_restarts: int = 0,
    ) -> None:
        self.spec = spec
        # no relay: a check runs one bot against its own referee and listeners, all in one folder the bot sees
        self.pool = BotPool(
            (spec,),
            address=tcp_address,
            unix_address=unix_address,
            issue_token=_no_tokens,
            wait_connected=None,
            store=FaultList(),
            observer=QuietNotes(),
            log_dir=log_dir,
            connect_timeout_s=CONNECT_TIMEOUT_S,
            hidden=hidden,
            max_restarts=max_restarts,
            log_name=lambda name, number: f"{number:02d}.log",
            replace_given_up=False,
            referee_env=env,
            relay=False,
        )

    def address(self) -> str:
        """Where the bot's processes connect by default, as the bot sees the machine."""
        return self.pool.address_for(self.spec)

    async def start(
        self,
        token: str,
        *,
        address: str | None = None,
        env: Mapping[str, str] | None = None,
        parent_pid: int | None = None,
    ) -> ManagedBot:
        """A new process with ``token`` (OSError-like :class:`RunUnfinished` when it cannot start at all);
        ``env``: more environment for this one; ``parent_pid``: the parent it watches (SKYJO_PARENT_PID)."""
        worker = await self.pool.start(self.spec.name, token=token, address=address, env=env, parent_pid=parent_pid)
        return worker.process

    async def aclose(self) -> None:
        """Stop every process started (SIGTERM, then SIGKILL)."""
        await self.pool.aclose()
