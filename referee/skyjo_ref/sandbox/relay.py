"""A bot's own door to the referee: a unix socket per isolated bot, relayed to the referee's, with a cap on the
connections the bot holds open at once.

gRPC's server counts connections for all its clients together (and does not
say which listener took one), so a bot that opens 20,000 idle connections
would fill the referee's cap and shut every other bot out. Each isolated bot
sees only its own relay's socket (at ``/run/skyjo``). At its cap the relay
stops accepting that bot's connections (they wait in the socket's backlog, then
fail, costing the referee nothing) until one of them closes, and reports the
cap reached as that bot's fault. The relay copies bytes; TLS and tokens are the
referee's business as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Final

#: Connections one isolated bot may hold open at once (each process uses one; a bot keeps a few dozen).
DEFAULT_BOT_CONNECTIONS: Final = 128

#: Bytes read at once from either side.
_CHUNK: Final = 65536


class Relay:
    """A unix socket at ``path`` that forwards each connection to the referee's socket ``target``, at most
    ``limit`` at once; ``reached(limit)`` is called each time the bot fills its cap."""

    def __init__(self, path: Path, target: Path, limit: int, reached: Callable[[int], None]) -> None:
        self.path = path
        self.target = target
        self.limit = limit
        self.open = 0
        self.times_full = 0
        self._reached = reached
        self._listener: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._slot = asyncio.Event()

    async def start(self) -> None:
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listening.bind(str(self.path))
        self.path.chmod(0o666)  # the bot's unprivileged uid connects; the folder above stays private
        listening.listen(64)
        listening.setblocking(False)
        self._listener = asyncio.create_task(self._accept(listening))

    async def _accept(self, listening: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                if self.open >= self.limit:  # full: accept nothing more of this bot until one closes
                    self.times_full += 1
                    self._reached(self.limit)
                    self._slot.clear()
                    await self._slot.wait()
                conn, _ = await loop.sock_accept(listening)
                self.open += 1
                task = asyncio.create_task(self._serve(conn))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        finally:
            listening.close()

    async def _serve(self, conn: socket.socket) -> None:
        writer: asyncio.StreamWriter | None = None
        up_writer: asyncio.StreamWriter | None = None
        try:
            reader, writer = await asyncio.open_unix_connection(sock=conn, limit=_CHUNK)
            up_reader, up_writer = await asyncio.open_unix_connection(str(self.target), limit=_CHUNK)
            pipes = [asyncio.create_task(_pipe(reader, up_writer)), asyncio.create_task(_pipe(up_reader, writer))]
            try:
                await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)  # one side ended: end both
            finally:
                for pipe in pipes:
                    pipe.cancel()
                await asyncio.gather(*pipes, return_exceptions=True)
        except OSError:
            pass
        finally:
            self.open -= 1
            self._slot.set()
            for side in (writer, up_writer):
                if side is not None:
                    side.close()
            if writer is None:
                conn.close()

    async def aclose(self) -> None:
        """Stop accepting, end every relayed connection, remove the socket."""
        tasks = [*self._tasks, *((self._listener,) if self._listener is not None else ())]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(OSError):
            self.path.unlink()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
