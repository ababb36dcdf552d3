"""The one bot pool: every managed bot process a run starts, for tournaments, the gate, ``match`` and ``play``.

It starts each bot's processes (:class:`~skyjo_ref.players.ManagedBot`) with
tokens the referee issues, builds what an isolated bot sees of the machine
(:class:`~skyjo_ref.sandbox.BotView`: the runtime, its own files, the referee's
socket; never the store, the config, other bots' files or the referee's code),
hands a process to one game at a time, stores every fault, and stops everything
at the end. Isolation and bot identities change here and nowhere else.

**No memory between the games of a deal.** All games of a deal share the deck
(every seating, every table), so a process that has played a deal could know
the cards of its other games. A process never plays two games of one deal:
the pool hands each game a process that has not seen its deal, starting a fresh
one (and retiring an idle one that has seen it) when none is left. Isolated
processes share nothing (each has its own ``/tmp``), so two processes of one
bot cannot pass notes either.

Faults: a process that exits is restarted with the same token (the referee
treats it as a reconnect, so a game in progress goes on) and the fault is
stored. A bot whose processes keep dying before it ever connects stops the run
(:class:`RunUnfinished`, exit 3), at the first exit when it cannot even be
loaded (:class:`BotCannotRun`); one whose processes are all killed by its
sandbox before it connects is ``disqualified`` and forfeits its games.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol

from skyjo_ref.botfiles import BotFiles, BotLinkError, bot_files, check_links
from skyjo_ref.execution.types import BotCannotRun, FaultLog, Notes, RunUnfinished
from skyjo_ref.players import BotSpec, ManagedBot, ProcessFault
from skyjo_ref.sandbox import TOTAL_CPU_LIMIT, BotView, protect_referee, python_runtime, readable_by_all, referee_code
from skyjo_ref.sandbox.namespaces import DEFAULT_TMP_MB, SOCKET_DIR_INSIDE
from skyjo_ref.sandbox.relay import DEFAULT_BOT_CONNECTIONS, Relay

#: ``python -m skyjo_bot run`` exits 2 when the bot cannot be loaded (no Bot in the file, import error)
SDK_USAGE_ERROR: Final = 2

#: Restarts of one bot process before it is given up.
MAX_RESTARTS: Final = 3
#: How long a stopped process may take to exit after SIGTERM before SIGKILL.
STOP_TIMEOUT_S: Final = 3.0


class Connections(Protocol):
    """What the pool needs of the referee: tokens, and (our own referee) whether a token's bot is connected."""

    async def issue_token(self, name: str) -> str: ...


@dataclass(slots=True)
class Worker:
    """One bot process (a :class:`ManagedBot`), its token and the deals it has seen."""

    bot: str
    number: int
    process: ManagedBot
    busy: bool = False
    game_key: str | None = None
    recorded: int = 0  # process faults already stored
    watcher: asyncio.Task[None] | None = None
    seen: set[int] = field(default_factory=set)  # deals it has played a game of

    @property
    def gave_up(self) -> bool:
        """The process died and will not be restarted again."""
        p = self.process
        return not p.running and p.exited.is_set() and p.restarts >= p.max_restarts and bool(p.faults)


class BotPool:
    """The processes of a run's managed bots. ``issue_token`` asks the referee for a seat token;
    ``wait_connected(token, timeout)`` (our own referee only) says when a process holds its stream."""

    def __init__(
        self,
        bots: Sequence[BotSpec],
        *,
        address: str,
        issue_token: Callable[[str], Awaitable[str]],
        wait_connected: Callable[[str, float], Awaitable[bool]] | None,
        store: FaultLog,
        observer: Notes,
        log_dir: Path | None,
        connect_timeout_s: float,
        unix_address: str | None = None,
        hidden: Sequence[Path] = (),
        max_restarts: int = MAX_RESTARTS,
        log_name: Callable[[str, int], str] = lambda name, number: f"{name}-{number}.log",
        replace_given_up: bool = True,
        referee_env: Mapping[str, str] | None = None,
        relay: bool = True,
    ) -> None:
        self.bots = {b.name: b for b in bots if b.managed}
        if self.bots:
            protect_referee()  # bots of this run's uid can neither read this process's memory nor ptrace it
        self.address = address
        self.unix_address = unix_address
        self.issue_token = issue_token
        self.wait_connected = wait_connected
        self.store = store
        self.observer = observer
        self.log_dir = log_dir
        self.connect_timeout_s = connect_timeout_s
        self.max_restarts = max_restarts
        self.log_name = log_name  # a process's log file in log_dir, from its bot's name and number
        self.referee_env = dict(referee_env or {})  # SKYJO_CA_FILE ... for a running referee that speaks TLS
        self.replace_given_up = replace_given_up  # a fresh process (and token) for one that will not restart
        # an isolated bot reaches the referee through a relay of its own (a cap on its connections); without
        # (check-bot, which runs its own referee and listeners for one bot), it sees the referee socket's folder
        self.relay = relay
        self.workers: dict[str, list[Worker]] = {name: [] for name in self.bots}
        self.connected_once: set[str] = set()  # bots that have held a stream at least once in this run
        self.disqualified: dict[str, str] = {}  # bots killed by their sandbox before ever connecting: why
        self.failure: RunUnfinished | None = None
        self.closing = False
        self._numbers: dict[str, int] = dict.fromkeys(self.bots, 0)
        self._views: dict[str, BotView] = {}
        self._relays: dict[str, Relay] = {}  # an isolated bot's own socket to the referee, with its connection cap
        self._silenced: set[str] = set()  # bots that cannot run: their processes' faults are told once
        self._cap: dict[str, int] = {}  # processes a bot keeps before one that has seen a deal is retired
        self._staged: list[Path] = []  # copies of bot files that the bots' uid could not read where they are
        logs = () if log_dir is None else (log_dir.parent if log_dir.name == "logs" else log_dir,)
        self._hidden = (*hidden, *logs, referee_code())

    def add(self, spec: BotSpec) -> None:
        """One more managed bot, after the start (a match seats its bots one by one)."""
        if not self.bots:
            protect_referee()
        self.bots[spec.name] = spec
        self.workers[spec.name] = []
        self._numbers[spec.name] = 0

    # ----------------------------------------------------------------- what a bot sees

    def address_for(self, spec: BotSpec) -> str:
        """Where the bot's processes connect: the referee's ``unix:`` socket for bots without the host's network."""
        if spec.sandbox.has_network and spec.sandbox.isolation != "strict":
            return self.address
        if self.unix_address is None:
            raise RunUnfinished(
                f"bot {spec.name!r} is isolated or has no network: it needs the referee on a unix: socket"
            )
        if spec.sandbox.isolation == "strict":
            return f"unix:{SOCKET_DIR_INSIDE / Path(self.unix_address.removeprefix('unix:')).name}"
        return self.unix_address

    def view_for(self, spec: BotSpec) -> BotView | None:
        """What an isolated bot sees (built once per bot); None for a bot that is not isolated."""
        if spec.sandbox.isolation != "strict":
            return None
        if spec.name not in self._views:
            try:  # checked before any game by the config and the gate; here again, whoever built the spec
                check_links(spec, hidden=self._hidden)
            except BotLinkError as exc:
                raise RunUnfinished(str(exc)) from None
            files = bot_files(spec)
            staged = self._readable(spec, files)
            named = _command_files(spec)
            others = [p for name, other in self.bots.items() if name != spec.name for p in _paths(bot_files(other))]
            own = {*_paths(files), *named}
            relay = self._relays.get(spec.name)
            socket_dir = (
                relay.path.parent
                if relay is not None
                else Path(self.unix_address.removeprefix("unix:")).parent
                if not self.relay and self.unix_address is not None
                else None
            )
            runtime = python_runtime()
            mounted = (*runtime, Path("/usr"), *((files.root,) if files.root is not None else ()))
            extra = [p for p in named if not any(p.is_relative_to(m) for m in mounted)]
            limits = spec.sandbox.limits
            self._views[spec.name] = BotView(
                runtime=runtime,
                binds=(*staged, *((p, p) for p in extra)),
                socket_dir=socket_dir,
                hidden=tuple(
                    p for p in (*self._hidden, *others) if not any(p == o or o.is_relative_to(p) for o in own)
                ),
                cwd=_real(spec.cwd)  # where its folder is mounted: reached through a link above it, the link's target
                if spec.cwd is not None and files.root is not None and inside(spec.cwd, files.root)
                else files.root,
                tmp_mb=limits.file_size_mb + 1 if limits.file_size_mb is not None else DEFAULT_TMP_MB,
                network=bool(spec.sandbox.network),
            )
        return self._views[spec.name]

    async def _open_relay(self, spec: BotSpec) -> None:
        """An isolated bot's own socket (seen as the referee's), relayed to the referee's with a cap on the
        connections the bot holds at once (sandbox/relay.py): a flood fills its own cap, not the referee's."""
        if not self.relay or spec.sandbox.isolation != "strict" or self.unix_address is None:
            return
        if spec.name in self._relays:
            return
        referee = Path(self.unix_address.removeprefix("unix:"))
        folder = referee.parent.parent / f"b{len(self._relays)}"  # beside the referee's, in its private folder
        folder.mkdir(mode=0o755)
        folder.chmod(0o755)

        def reached(limit: int, name: str = spec.name) -> None:
            if self._relays[name].times_full == 1:  # once: a flood fills it again each time one closes
                detail = f"connection limit {limit} reached on the referee's socket: further connections wait"
                self.store.add_fault(name, "limit", detail, None)
                self.observer.note(f"bot {name}: {detail}")

        relay = Relay(folder / referee.name, referee, DEFAULT_BOT_CONNECTIONS, reached)
        self._relays[spec.name] = relay
        await relay.start()

    def _readable(self, spec: BotSpec, files: BotFiles) -> list[tuple[Path, Path]]:
        """(source, where the bot sees it) for the bot's files. As root, an isolated bot runs as an unprivileged
        uid: files it may not read are copied (once per run) to a folder it may, and mounted where the originals
        are; mounted alone, the folders above them do not matter."""
        own = _paths(files)
        if os.geteuid() != 0 or all(readable_by_all(p) for p in own):
            return [(_real(p), p) for p in own]  # a link's target (in the folder: check_links), never further
        stage = Path(tempfile.mkdtemp(prefix=f"skyjo-ref-{spec.name}-"))
        self._staged.append(stage)
        binds: list[tuple[Path, Path]] = []
        for number, path in enumerate(own):
            copy = stage / str(number) / path.name
            copy.parent.mkdir()
            if path.is_dir():
                shutil.copytree(path, copy, symlinks=True)  # links stay links: resolved inside the bot's view
            else:
                shutil.copy2(_real(path), copy)  # a link's target, in the bot's folder (check_links)
            binds.append((copy, path))
        for folder, _, names in os.walk(stage):
            os.chmod(folder, 0o755)
            for name in names:
                path = Path(folder) / name
                if not path.is_symlink():
                    path.chmod(path.stat().st_mode | 0o444)
        self.observer.note(f"bot {spec.name}: its files are not readable by other users; isolated, it plays a copy")
        return binds

    # ----------------------------------------------------------------- a game's processes

    def idle(self, name: str, deal: int) -> bool:
        """Whether bot ``name`` has an idle process that has not seen ``deal``: a game of it starts now, on a
        process it already has.

        The players look down the schedule for such a game first, so at big tables (a 6-player block is 30
        games, more than the processes a bot keeps) a process goes on to the next deals' games instead of being
        retired after one game of each deal (6 SDK bots at 6 players, 6 deals: 130 processes a bot before, 30
        with it; docs/performance.md)."""
        if name in self.disqualified:
            return True
        return any(not w.busy and deal not in w.seen for w in self.workers[name]) or not self.workers[name]

    async def prepare(self, wanted: dict[str, int], seatings: int) -> None:
        """Start ``wanted[name]`` processes of each bot at once, before any game (a Python process costs about a
        second of CPU: started during play, it would steal time from bots thinking under a clock). A bot keeps
        up to ``seatings`` more (one per seating of a deal) before a process that has seen a deal makes room."""
        for name, n in wanted.items():
            self._cap[name] = max(n, 1) + seatings
        starts = [self.start(name) for name, n in wanted.items() for _ in range(n - len(self.workers[name]))]
        workers = await asyncio.gather(*starts)
        await asyncio.gather(*(self._wait_connected(w) for w in workers))

    async def acquire(self, name: str, game_key: str, deal: int) -> Worker:
        """A connected process of bot ``name`` that has not seen ``deal``, marked busy with ``game_key``."""
        pool = self.workers[name]
        fresh = [w for w in pool if not w.busy and deal not in w.seen]
        if fresh:
            worker = min(fresh, key=lambda w: len(w.seen))
        else:
            stale = [w for w in pool if not w.busy]
            if stale and len(pool) >= self._cap.get(name, 1):  # all have seen this deal: one makes room
                await self._retire(max(stale, key=lambda w: len(w.seen)))
            worker = await self.start(name)
        worker.busy, worker.game_key = True, game_key
        worker.seen.add(deal)
        await self._wait_connected(worker)
        return worker

    @staticmethod
    def release(worker: Worker) -> None:
        worker.busy, worker.game_key = False, None

    async def start(
        self,
        name: str,
        *,
        token: str | None = None,
        address: str | None = None,
        env: Mapping[str, str] | None = None,
        parent_pid: int | None = None,
    ) -> Worker:
        """A new process for bot ``name``, with its own token (not yet connected, not busy); ``token``,
        ``address`` (as the bot sees it), more environment and the parent it watches (``SKYJO_PARENT_PID``)
        when the caller runs the referee itself (check-bot)."""
        spec = self.bots[name]
        await self._open_relay(spec)
        token = token if token is not None else await self.issue_token(name)
        self._numbers[name] += 1
        number = self._numbers[name]
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
        process = ManagedBot(
            spec,
            address if address is not None else self.address_for(spec),
            token,
            max_restarts=self.max_restarts,
            log_path=self.log_dir / self.log_name(name, number) if self.log_dir is not None else None,
            view=self.view_for(spec),
            referee_env={**self.referee_env, **(env or {})},
            parent_pid=parent_pid,
        )
        worker = Worker(name, number, process)
        self.workers[name].append(worker)
        try:
            await process.start()
        except OSError as exc:
            raise RunUnfinished(f"bot {name!r}: cannot start {spec.describe()}: {exc.strerror or exc}") from None
        worker.watcher = asyncio.create_task(self._watch(worker))
        return worker

    async def _retire(self, worker: Worker) -> None:
        """Stop an idle process for good (it has seen every deal it could still be given)."""
        self.workers[worker.bot].remove(worker)
        if worker.watcher is not None:
            worker.watcher.cancel()
        await worker.process.stop(STOP_TIMEOUT_S)
        self._store_late_faults(worker)

    async def _wait_connected(self, worker: Worker) -> None:
        """Our own referee: wait until the process holds its stream (restarts included)."""
        if self.wait_connected is None:
            return
        deadline = asyncio.get_running_loop().time() + self.connect_timeout_s
        while not await self.wait_connected(worker.process.token, 0.25):
            if self.failure is not None:
                raise self.failure
            if worker.bot in self.disqualified:
                return
            if asyncio.get_running_loop().time() > deadline:
                raise RunUnfinished(
                    f"bot {worker.bot!r} did not connect to the referee within {self.connect_timeout_s:g} s "
                    f"(connect_timeout_s{_sandbox_hint(worker)}); its output is in {worker.process.log_path}"
                )
        self.connected_once.add(worker.bot)

    # ----------------------------------------------------------------- faults

    async def _watch(self, worker: Worker) -> None:
        """Store every fault of the worker's processes; replace a process that will not restart again.

        A bot that has never connected and keeps exiting cannot play at all:
        that stops the run (exit 3), at its first exit when it cannot even be
        loaded. A bot that played and then crashes too often gets a fresh
        process with a fresh token; the game it was in goes on without it (the
        referee forfeits the seat after the grace period).
        """
        while not self.closing:
            process = worker.process
            await process.wait_fault(worker.recorded)  # the fault is in the list, and gave_up says if it was the last
            if self.closing:
                return
            last = process.faults[-1]
            if worker.bot not in self.connected_once and last.returncode == SDK_USAGE_ERROR and last.limit is None:
                if self.failure is None:
                    self.failure = BotCannotRun(
                        f"bot {worker.bot!r} cannot run: {last.describe()}; see {process.log_path}"
                    )
                    self._store_late_faults(worker, "; not restarted: it cannot be loaded", "")
                self._silenced.add(worker.bot)  # its other processes fail alike: one note is enough
                await asyncio.gather(*(w.process.stop(STOP_TIMEOUT_S) for w in self.workers[worker.bot]))
                return
            if last.limit is not None and last.limit.startswith(TOTAL_CPU_LIMIT):  # its CPU time is spent, for good
                self._store_late_faults(worker, "; not restarted: the bot has used its CPU time", "")
                self._disqualify(worker, f"it has used its CPU time: {last.describe()}")
                await asyncio.gather(*(w.process.stop(STOP_TIMEOUT_S) for w in self.workers[worker.bot]))
                return
            for fault in process.faults[worker.recorded :]:
                worker.recorded += 1
                if worker.gave_up and worker.recorded == len(process.faults):
                    self._store_fault(worker, fault, "gave_up", "", "; not restarted again")
                else:
                    self._store_fault(worker, fault, None, "; restarted", "; restarting it")
            if worker.gave_up:
                if worker.bot not in self.connected_once:
                    if all(fault.limit is not None for fault in process.faults):
                        self._disqualify(worker)
                        return
                    self.failure = RunUnfinished(
                        f"bot {worker.bot!r}: its process exited {len(process.faults)} times without ever "
                        f"connecting (last: {process.faults[-1].describe()}{_sandbox_hint(worker)}); "
                        f"see {process.log_path}"
                    )
                    return
                if not self.replace_given_up:
                    return
                try:
                    await self._replace(worker)
                except RunUnfinished as exc:
                    self.failure = exc
                    return

    def _disqualify(self, worker: Worker, reason: str | None = None) -> None:
        """Its sandbox killed every process of this bot before it ever connected (or it used its CPU time for
        the run): it cannot play under these limits. Unlike a bot that cannot run at all (a mistake in the
        config), this is how the league's rules treat a submission: it forfeits its games, and the run goes on."""
        if worker.bot in self.disqualified:
            return
        last = worker.process.faults[-1]
        reason = reason or f"every process killed by its sandbox before it connected (last: {last.describe()})"
        self.disqualified[worker.bot] = reason
        self.store.add_fault(worker.bot, "disqualified", reason + "; it forfeits its games", worker.game_key)
        self.observer.note(f"bot {worker.bot}: {reason}; it forfeits its games")

    async def _replace(self, worker: Worker) -> None:
        """A fresh process (and token) for a worker whose process gave up."""
        if self.closing:
            return
        token = await self.issue_token(worker.bot)
        old = worker.process
        worker.process = ManagedBot(
            old.spec,
            old.address,
            token,
            max_restarts=self.max_restarts,
            log_path=old.log_path,
            view=old.view,
            referee_env=old.referee_env,
        )
        worker.recorded = 0
        self.store.add_fault(
            worker.bot, "replaced", f"process {worker.number} replaced by a fresh one", worker.game_key
        )
        self.observer.note(f"bot {worker.bot}: process {worker.number} replaced by a fresh one")
        try:
            await worker.process.start()
        except OSError as exc:
            raise RunUnfinished(f"bot {worker.bot!r}: cannot start it again: {exc.strerror or exc}") from None

    async def aclose(self) -> None:
        """Stop every bot process (SIGTERM, then SIGKILL), and store the faults the watchers had no time to:
        a process that crashed in the run's last moments, whose exit the run's end overtook."""
        self.closing = True
        workers = [w for pool in self.workers.values() for w in pool]
        stopped = {id(w): w.process for w in workers}
        await asyncio.gather(*(w.process.stop(STOP_TIMEOUT_S) for w in workers), return_exceptions=True)
        for worker in workers:
            if worker.watcher is not None:
                worker.watcher.cancel()
        await asyncio.gather(*(w.watcher for w in workers if w.watcher is not None), return_exceptions=True)
        # a watcher that was replacing a process as the run ended started a fresh one: it goes too (left running,
        # its transport would be collected after the loop closed: "Event loop is closed" on the user's terminal)
        workers = [w for pool in self.workers.values() for w in pool]
        late = [w.process for w in workers if stopped.get(id(w)) is not w.process]
        await asyncio.gather(*(process.stop(STOP_TIMEOUT_S) for process in late), return_exceptions=True)
        for worker in workers:
            self._store_late_faults(worker)
        for stage in self._staged:
            shutil.rmtree(stage, ignore_errors=True)
        await asyncio.gather(*(relay.aclose() for relay in self._relays.values()), return_exceptions=True)

    def _store_late_faults(self, worker: Worker, stored_end: str = "", told_end: str = ", as the run ended") -> None:
        if worker.bot in self._silenced:
            worker.recorded = len(worker.process.faults)
        for fault in worker.process.faults[worker.recorded :]:
            worker.recorded += 1
            self._store_fault(worker, fault, None, stored_end, told_end)

    def _store_fault(
        self, worker: Worker, fault: ProcessFault, kind: str | None, stored_end: str, told_end: str
    ) -> None:
        """Store one process fault (``kind``: by default ``crash``, or ``limit`` for a sandbox limit) and say it."""
        detail = f"process {worker.number} {fault.describe()}"
        if worker.game_key is not None:
            detail += f" (during game {worker.game_key})"
        kind = kind or ("crash" if fault.limit is None else "limit")
        self.store.add_fault(worker.bot, kind, detail + stored_end, worker.game_key)
        self.observer.note(f"bot {worker.bot}: {detail}{told_end}")


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def _paths(files: BotFiles) -> list[Path]:
    return [files.root] if files.root is not None else list(files.files)


def _command_files(spec: BotSpec) -> list[Path]:
    """The files a command bot's command line names (its program, a script it runs), as absolute paths: its own
    (never hidden as another bot's), and mounted beside its root when they lie outside it."""
    if spec.kind != "command":
        return []
    base = spec.cwd if spec.cwd is not None else Path.cwd()
    found: list[Path] = []
    for word in spec.command:
        path = Path(word) if Path(word).is_absolute() else base / word
        if path.is_file():
            found.append(path.absolute())
    return found


def _sandbox_hint(worker: Worker) -> str:
    """For a bot that never got to play: its sandbox, since a limit too tight keeps a bot from starting."""
    sandbox = worker.process.spec.sandbox
    if not sandbox.limits.any:
        return ""
    return f"; its sandbox: {sandbox.describe()} (a limit too tight keeps a bot from starting)"
