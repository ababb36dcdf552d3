"""The scripted referee: a real gRPC ``BotService`` whose every message a check case chooses.

Unlike the real referee (skyjo_ref.server), it plays no game of its own: each
``Play`` call is handed to the case that expects its token as a
:class:`Stream`, and the case reads what the bot sent, sends any message
(crafted or out of order), and ends the call with any status (a refusal, a
drop in the middle of a decision). It listens on loopback TCP, on a Unix
socket (for bots without network), and, when asked, on TLS; its ping policy
is the real referee's (skyjo_ref.server.server.grpc_server_options), so a bot
that pings too often is closed by it exactly as in a league.

A :class:`SilentListener` beside it accepts connections and never answers: a
bot connecting to it is "connecting" for as long as the case likes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import grpc
import grpc.aio
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb

from skyjo_ref.server.config import ServerConfig, grpc_server_options
from skyjo_ref.server.tls import ServerTls

#: Messages a bot may have sent that no case has read yet (a flood ends the stream, and memory stays bounded).
MAX_UNREAD: Final = 1000
#: The referee pings connections this often here (20 s in a league): a check sees a bot answer pings in seconds.
PING_EVERY_MS: Final = 2_000


class StreamEnded(Exception):
    """The bot's side of the stream ended (it closed it, or the connection went away)."""


@dataclass(frozen=True, slots=True)
class Endpoints:
    """Where the scripted referee (and the silent listener) can be reached."""

    tcp: str  # 127.0.0.1:PORT
    unix: str  # unix:/path/referee.sock
    tls: str | None  # 127.0.0.1:PORT serving TLS, or None
    silent_tcp: str
    silent_unix: str


class Stream:
    """One ``Play`` call: the bot's messages in order, anything sent back, ended with any status."""

    def __init__(self, token: str, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        self.token = token
        self.opened_at = time.monotonic()
        self._context = context
        self._inbox: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()
        self._status: asyncio.Future[tuple[grpc.StatusCode, str]] = asyncio.get_running_loop().create_future()
        self.gone = asyncio.Event()  # set once the call is over, whoever ended it

    async def receive(self, timeout: float) -> pb.PlayRequest:
        """The bot's next message; :class:`StreamEnded` when its side ended, TimeoutError after ``timeout``."""
        async with asyncio.timeout(timeout):
            message = await self._inbox.get()
        if message is None:
            self._inbox.put_nowait(None)  # later reads see the end too
            raise StreamEnded("the bot's stream ended")
        return message

    async def quiet(self, seconds: float) -> pb.PlayRequest | None:
        """A message the bot sends within ``seconds`` (None: it stayed quiet, as it should)."""
        try:
            return await self.receive(seconds)
        except TimeoutError:
            return None

    async def send(self, message: pb.PlayResponse) -> None:
        """Send one message (:class:`StreamEnded` when the call is already over)."""
        if self.gone.is_set():
            raise StreamEnded("the stream is closed")
        try:
            await self._context.write(message)
        except Exception as exc:  # grpc's errors for a call that is over vary (AioRpcError, ExecuteBatchError, ...)
            raise StreamEnded(f"the stream is closed: {type(exc).__name__}") from None

    def end(self, code: grpc.StatusCode = grpc.StatusCode.OK, details: str = "") -> None:
        """End the call with ``code`` (OK: the referee ended the session)."""
        if not self._status.done():
            self._status.set_result((code, details))

    async def end_and_wait(self, code: grpc.StatusCode = grpc.StatusCode.OK, details: str = "") -> None:
        self.end(code, details)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5.0):
                await self.gone.wait()

    async def _read(self) -> None:
        try:
            while True:
                message = await self._context.read()
                if message is grpc.aio.EOF:  # type: ignore[attr-defined]
                    break
                request = pb.PlayRequest.FromString(message) if isinstance(message, bytes) else message
                if self._inbox.qsize() >= MAX_UNREAD:  # a flood: ended as the referee ends one
                    self.end(grpc.StatusCode.RESOURCE_EXHAUSTED, f"over {MAX_UNREAD} messages left unread")
                    break
                self._inbox.put_nowait(request)
        except Exception as exc:  # a broken connection or bytes that do not decode: the bot's side is over
            del exc
        finally:
            self._inbox.put_nowait(None)

    async def _serve(self) -> None:
        reader = asyncio.create_task(self._read())
        try:
            code, details = await self._status
        finally:
            self.gone.set()
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        if code != grpc.StatusCode.OK:
            await self._context.abort(code, details)


class ScriptedReferee:
    """The gRPC server; :meth:`expect` a token, then :meth:`next_stream` for each call it opens."""

    def __init__(self, folder: Path, tls: ServerTls | None = None) -> None:
        self._folder = folder
        self._tls = tls
        self._arrivals: dict[str, asyncio.Queue[Stream]] = {}
        self._server: grpc.aio.Server | None = None
        self._silent = SilentListener()
        self.endpoints: Endpoints | None = None

    def expect(self, token: str) -> None:
        """Accept calls with ``token`` (others are refused with UNAUTHENTICATED, as the referee does)."""
        self._arrivals.setdefault(token, asyncio.Queue())

    async def next_stream(self, token: str, timeout: float) -> Stream:
        """The next call opened with ``token`` (TimeoutError after ``timeout``)."""
        async with asyncio.timeout(timeout):
            return await self._arrivals[token].get()

    async def start(self) -> Endpoints:
        config = ServerConfig(keepalive_time_ms=PING_EVERY_MS)
        server = grpc.aio.server(options=grpc_server_options(config))
        handlers = {
            "Play": grpc.stream_stream_rpc_method_handler(
                self._play,
                request_deserializer=pb.PlayRequest.FromString,
                response_serializer=pb.PlayResponse.SerializeToString,
            )
        }
        name = pb.DESCRIPTOR.services_by_name["BotService"].full_name
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
        port = server.add_insecure_port("127.0.0.1:0")
        sock = self._folder / "referee.sock"
        server.add_insecure_port(f"unix:{sock}")
        tls_addr = None
        if self._tls is not None:
            tls_addr = f"127.0.0.1:{server.add_secure_port('127.0.0.1:0', self._tls.credentials())}"
        await server.start()
        self._server = server
        silent_tcp, silent_unix = await self._silent.start(self._folder / "silent.sock")
        self.endpoints = Endpoints(f"127.0.0.1:{port}", f"unix:{sock}", tls_addr, silent_tcp, silent_unix)
        return self.endpoints

    @property
    def silent(self) -> SilentListener:
        return self._silent

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(grace=None)
        await self._silent.stop()

    async def _play(self, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        del request  # messages are read with context.read()
        token = ""
        for key, value in context.invocation_metadata() or ():
            if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
                token = value[len("Bearer ") :]
        arrivals = self._arrivals.get(token)
        if arrivals is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown bot token (scripted referee)")
            return
        stream = Stream(token, context)
        arrivals.put_nowait(stream)
        await stream._serve()


class SilentListener:
    """Accepts connections (TCP and Unix) and never says a word: a referee that hangs."""

    def __init__(self) -> None:
        self._servers: list[asyncio.Server] = []
        self._writers: list[asyncio.StreamWriter] = []
        self.connections = 0
        self._news = asyncio.Condition()

    async def start(self, sock: Path) -> tuple[str, str]:
        tcp = await asyncio.start_server(self._hold, "127.0.0.1", 0)
        unix = await asyncio.start_unix_server(self._hold, str(sock))
        self._servers = [tcp, unix]
        port = tcp.sockets[0].getsockname()[1]
        return f"127.0.0.1:{port}", f"unix:{sock}"

    async def wait_connections(self, count: int, timeout: float) -> None:
        """Until ``count`` connections in all were accepted (TimeoutError after ``timeout``)."""
        async with asyncio.timeout(timeout):
            async with self._news:
                await self._news.wait_for(lambda: self.connections >= count)

    async def _hold(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        async with self._news:
            self.connections += 1
            self._news.notify_all()
        with contextlib.suppress(Exception):
            while await reader.read(65536):  # read and drop: never answer
                pass

    async def stop(self) -> None:
        for writer in self._writers:
            writer.close()
        for server in self._servers:
            server.close()


@contextlib.asynccontextmanager
async def scripted_referee(folder: Path, tls: ServerTls | None = None) -> AsyncIterator[ScriptedReferee]:
    referee = ScriptedReferee(folder, tls)
    await referee.start()
    try:
        yield referee
    finally:
        await referee.stop()
