"""Starting the bot under check: its process exactly as a league starts it (command, folder, env, limits, isolation).

:func:`start_bot` is the one place check-bot starts a process, through the
execution room (:class:`~skyjo_ref.execution.room.BotProcesses`): the bot's
sandbox view, limits and environment exactly as a league's, its address a
``unix:`` socket for a bot without network, never restarted (a check wants the
exit code of the process it started).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from skyjo_ref.checkbot.referee import Endpoints
from skyjo_ref.execution.room import BotProcesses
from skyjo_ref.players import BotSpec, ManagedBot
from skyjo_ref.sandbox.namespaces import SOCKET_DIR_INSIDE

Listener = Literal["referee", "silent", "tls"]


@dataclass(slots=True)
class Room:
    """What every process of the bot under check shares: its spec, the room's processes (its view), its logs."""

    spec: BotSpec
    endpoints: Endpoints
    log_dir: Path
    processes: BotProcesses
    stand_ins: int = 0  # processes started under a stand-in parent (parent-death), numbered after the room's

    @classmethod
    def for_bot(cls, spec: BotSpec, endpoints: Endpoints, log_dir: Path) -> Room:
        processes = BotProcesses(spec, tcp_address=endpoints.tcp, unix_address=endpoints.unix, log_dir=log_dir)
        return cls(spec, endpoints, log_dir, processes)

    @property
    def has_network(self) -> bool:
        """Whether the bot reaches TCP addresses (else only the referee's Unix socket, and never TLS)."""
        return self.spec.sandbox.has_network and self.spec.sandbox.isolation != "strict"

    def address(self, listener: Listener) -> str:
        """Where the bot connects to reach ``listener``, as it sees the machine."""
        e = self.endpoints
        if listener == "tls":
            if e.tls is None or not self.has_network:
                raise ValueError("TLS needs the bot to have network")
            return e.tls
        if self.has_network:
            return e.tcp if listener == "referee" else e.silent_tcp
        unix = e.unix if listener == "referee" else e.silent_unix
        if self.spec.sandbox.isolation == "strict":
            return f"unix:{SOCKET_DIR_INSIDE / Path(unix.removeprefix('unix:')).name}"
        return unix


async def start_bot(
    room: Room,
    token: str,
    listener: Listener = "referee",
    *,
    env: Mapping[str, str] | None = None,
    parent_pid: int | None = None,
) -> ManagedBot:
    """Start one process of the bot under check, connecting to ``listener`` with ``token``; its output goes to
    its own log file in ``room.log_dir`` (RunUnfinished when it cannot be started at all)."""
    return await room.processes.start(token, address=room.address(listener), env=env, parent_pid=parent_pid)


#: The stand-in parent: sets SKYJO_PARENT_PID to itself, starts the bot (argv) as its child with its output on
#: stderr, says the bot's pid on stdout, and waits.
_STAND_IN = (
    "import os, subprocess, sys\n"
    "os.environ['SKYJO_PARENT_PID'] = str(os.getpid())\n"
    "bot = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=2, stderr=2)\n"
    "print(bot.pid, flush=True)\n"
    "bot.wait()\n"
)


@dataclass(slots=True)
class Orphan:
    """A bot process started under a stand-in parent, to be orphaned (``parent-death``)."""

    stand_in: asyncio.subprocess.Process
    pid: int
    log: Path

    async def kill_parent(self, timeout: float) -> bool:
        """Kill the stand-in (SIGKILL, as a ``kill -9`` of a tournament); whether the bot ended within ``timeout``."""
        fd = os.pidfd_open(self.pid)
        ended = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_reader(fd, ended.set)  # a pidfd is readable once its process has exited
        try:
            self.stand_in.kill()
            await self.stand_in.wait()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await ended.wait()
            return ended.is_set()
        finally:
            loop.remove_reader(fd)
            os.close(fd)

    async def close(self) -> None:
        """Kill whatever is left (the bot, if it did not end; the stand-in, if the case stopped early)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.stand_in.pid, signal.SIGKILL)
        if self.stand_in.returncode is None:
            await self.stand_in.wait()


async def start_under_stand_in(room: Room, token: str) -> Orphan:
    """The bot's command under a stand-in parent that SKYJO_PARENT_PID names (``parent-death`` alone).

    Not through :func:`start_bot`: the sandbox's supervisor ends the bot itself when its parent dies (and kills
    the orphan's process group), which would hide whether the bot watches SKYJO_PARENT_PID. Its environment and
    folder are the league's (not isolated: the case does not apply to isolated bots); limits do not matter here.
    """
    room.stand_ins += 1
    room.log_dir.mkdir(parents=True, exist_ok=True)
    log = room.log_dir / f"parent-death-{room.stand_ins}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKYJO_")}
    env.update({**room.spec.env, "SKYJO_ADDR": room.address("referee"), "SKYJO_TOKEN": token, "PYTHONUNBUFFERED": "1"})
    with log.open("ab") as sink:
        stand_in = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _STAND_IN, *room.spec.process_command(),
            cwd=str(room.spec.cwd) if room.spec.cwd is not None else None,
            env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=sink,
            start_new_session=True,
        )  # fmt: skip
    assert stand_in.stdout is not None
    line = await stand_in.stdout.readline()
    if not line.strip().isdigit():
        await stand_in.wait()
        raise OSError(f"the stand-in parent could not start the bot (see {log})")
    return Orphan(stand_in, int(line), log)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def bot_process_group(process: ManagedBot) -> int | None:
    """The process group to signal to reach the bot's own program.

    Not isolated, that is the group its supervisor leads (a league's SIGTERM goes there, and reaches the bot).
    Isolated, bubblewrap starts the bot in a session of its own and a league's stop ends the sandbox instead;
    to see the bot's own handling of a signal, it is the group of the first process under the supervisor that
    is not bubblewrap (None: it is gone).
    """
    pid = process.pid
    if pid is None or process.spec.sandbox.isolation != "strict":
        return pid
    queue = _children(pid)
    while queue:
        child = queue.pop(0)
        try:
            name = Path(f"/proc/{child}/comm").read_text().strip()
            if name != "bwrap":
                return os.getpgid(child)
        except OSError:
            continue
        queue += _children(child)
    return None
