"""SDK bot processes end when told to, whatever their connection is doing.

SIGTERM, SIGINT and the death of the parent process each end a bot within a
second: while it connects to a server that accepts TCP and never answers,
while a reconnect hangs the same way, while it waits for the referee's next
message from a referee gone silent, and while its own ``decide`` blocks.

Process exit is the synchronisation; the bound on each wait only detects a
failure (a bot that never exits), so it is generous.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from sdk_harness import MINIMAL_BOT, RELAXED, BotProcess, CuttableProxy, node_argv, referee, sdk_argv, start_bot
from skyjo_ref.match import MatchSpec, SeatSpec
from skyjo_ref.server.server import RefereeServer

#: Failure detector only: the promise is one second, a loaded machine may take a few.
EXIT_BOUND_S = 15.0

#: Starts the bot (argv after -c) as its child with SKYJO_PARENT_PID set, prints its pid, then waits.
PARENT = (
    "import os, subprocess, sys\n"
    "os.environ['SKYJO_PARENT_PID'] = str(os.getpid())\n"
    "bot = subprocess.Popen(sys.argv[1:])\n"
    "print(bot.pid, flush=True)\n"
    "bot.wait()\n"
)

BLOCKING_BOT = """\
import sys, time
from skyjo_bot import Action, Bot, View

class Stuck(Bot):
    def decide(self, view: View) -> Action:
        print("deciding for ever", file=sys.stderr, flush=True)
        time.sleep(3600)  # blocks the network thread (inline mode): only the stop deadline can end us
        return view.legal_actions[0]
"""

HOW = ["SIGTERM", "SIGINT", "parent death"]


def _argv(kind: str) -> list[str]:
    """The Python SDK's command line, or the Node example bot's (it watches SKYJO_PARENT_PID too)."""
    return sdk_argv(MINIMAL_BOT, "-v") if kind == "python" else node_argv()


KINDS = pytest.mark.parametrize("kind", ["python", "node"])


@dataclass
class Stoppable:
    """A bot process and how to end it: a signal to it, or kill -9 of the parent that started it."""

    how: str
    bot: BotProcess  # for "parent death": the parent's process; the bot's stderr still comes through it
    bot_pid: int

    async def end_and_time(self) -> float:
        """Send the signal (or kill the parent); seconds until the bot process was gone."""
        pidfd = os.pidfd_open(self.bot_pid)  # opened before the signal: exit cannot be missed
        started = time.monotonic()
        if self.how == "parent death":
            self.bot.proc.kill()
        else:
            os.kill(self.bot_pid, signal.SIGTERM if self.how == "SIGTERM" else signal.SIGINT)
        try:
            await _wait_readable(pidfd, EXIT_BOUND_S)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.bot_pid, signal.SIGKILL)
            raise AssertionError(
                f"the bot did not exit within {EXIT_BOUND_S} s of {self.how}; stderr:\n{self.bot.text()}"
            ) from None
        finally:
            os.close(pidfd)
        elapsed = time.monotonic() - started
        await self.bot.proc.wait()
        assert self.bot._reader is not None
        await asyncio.wait_for(self.bot._reader, EXIT_BOUND_S)
        if self.how != "parent death":
            assert self.bot.proc.returncode == 0, self.bot.text()
        return elapsed


async def _wait_readable(fd: int, timeout: float) -> None:
    loop = asyncio.get_running_loop()
    ready = loop.create_future()

    def on_readable() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, on_readable)
    try:
        await asyncio.wait_for(ready, timeout)
    finally:
        loop.remove_reader(fd)


async def _start(how: str, argv: list[str], token: str, addr: str) -> Stoppable:
    if how != "parent death":
        bot = await start_bot(argv, how, token, addr)
        return Stoppable(how, bot, bot.proc.pid)
    parent = await start_bot([sys.executable, "-c", PARENT, *argv], how, token, addr, stdout=True)
    assert parent.proc.stdout is not None
    line = await asyncio.wait_for(parent.proc.stdout.readline(), 60)
    return Stoppable(how, parent, int(line))


async def _end_all(bots: list[Stoppable]) -> None:
    times = await asyncio.gather(*(b.end_and_time() for b in bots))
    for bot, elapsed in zip(bots, times, strict=True):
        signal_name = "SIGTERM" if bot.how == "parent death" else bot.how  # a dead parent: the bot sends itself SIGTERM
        assert f"{signal_name}: " in bot.bot.text(), bot.bot.text()
        assert "Traceback" not in bot.bot.text(), bot.bot.text()
        print(f"{bot.how}: exited {elapsed:.2f} s after")


@KINDS
def test_a_bot_connecting_to_a_server_that_never_answers_exits_on_each_signal(kind: str) -> None:
    async def main() -> None:
        holders = [CuttableProxy("127.0.0.1:9") for _ in HOW]
        for holder in holders:
            holder.hold_new = True  # accepts TCP, never sends a byte
            await holder.start()
        bots = [await _start(how, _argv(kind), "tok", holder.address) for how, holder in zip(HOW, holders, strict=True)]
        for holder in holders:
            await holder.wait_connections(1)  # the bot's first call is now waiting on that connection
        await _end_all(bots)
        for holder in holders:
            await holder.stop()

    asyncio.run(main())


@KINDS
def test_a_bot_whose_reconnect_hangs_exits_on_each_signal(kind: str) -> None:
    async def main() -> None:
        async with referee() as server:
            proxies, bots = [], []
            for how in HOW:
                proxy = CuttableProxy(server.address)
                await proxy.start()
                token = server.issue_token(how)
                bots.append(await _start(how, _argv(kind), token, proxy.address))
                proxies.append(proxy)
            for proxy, bot in zip(proxies, bots, strict=True):
                await bot.bot.wait_for_text("connected to")
                proxy.hold_new = True  # from now on the referee "accepts and never answers"
                proxy.cut()
            for proxy in proxies:
                await proxy.wait_connections(2)  # the reconnect attempt hangs on a held connection
            await _end_all(bots)
            for proxy in proxies:
                await proxy.stop()

    asyncio.run(main())


@KINDS
def test_a_bot_waiting_on_a_silent_referee_exits_on_each_signal(kind: str) -> None:
    async def main() -> None:
        async with referee() as server:
            proxies, bots = [], []
            for how in HOW:
                proxy = CuttableProxy(server.address)
                await proxy.start()
                token = server.issue_token(how)
                bots.append(await _start(how, _argv(kind), token, proxy.address))
                proxies.append(proxy)
            for proxy, bot in zip(proxies, bots, strict=True):
                await bot.bot.wait_for_text("connected to")  # it has its Welcome and waits for a decision
                proxy.frozen = True  # the referee goes silent; the connection stays up
            await _end_all(bots)
            for proxy in proxies:
                await proxy.stop()

    asyncio.run(main())


@pytest.mark.parametrize("how", HOW)
def test_a_bot_stuck_in_decide_still_exits(tmp_path: Path, how: str) -> None:
    """A decide that blocks the network thread: the stop deadline ends the process."""
    stuck = tmp_path / "stuck.py"
    stuck.write_text(BLOCKING_BOT)

    async def main() -> None:
        async with referee() as server:
            token = server.issue_token("stuck")
            bot = await _start(how, sdk_argv(stuck, "-v"), token, server.address)
            await _play_in_background(server, token)
            await bot.bot.wait_for_text("deciding for ever")
            await _end_all([bot])
            assert "did not close within" in bot.bot.text()

    asyncio.run(main())


async def _play_in_background(server: RefereeServer, token: str) -> None:
    """Start a game for the bot (it is asked for a decision soon after); nobody waits for its end."""
    assert await server.wait_connected(token, 60)
    server.start_match(
        MatchSpec(seats=(SeatSpec.of_token(token, "stuck"), SeatSpec.of_builtin("greedy")), time_control=RELAXED)
    )
