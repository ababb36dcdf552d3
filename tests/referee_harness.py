"""Helpers for the referee tests: a real referee on loopback and raw-stub bot clients.

A :class:`RawBot` speaks the protocol with the generated stubs only (no SDK),
so tests can send exactly the faulty messages they mean to, and it keeps
every message it receives, as bytes too, for the hidden-information proof.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import grpc
from skyjo_bot import convert
from skyjo_bot.types import TimeControl
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
from skyjo_proto.skyjo.v1 import skyjo_pb2_grpc as pb_grpc
from skyjo_ref.server import FinishedGame, MatchClient, MatchEnd, MatchSpec, RefereeServer, ServerConfig

#: Generous limits, for tests that are not about time (the machine is shared and loaded).
RELAXED = TimeControl(decision_ms=10_000, bank_ms=600_000, max_strikes=1000, grace_ms=20_000)

Policy = Callable[["RawBot", pb.PlayResponse], Awaitable[None]]
#: What a RawBot may send: a message, or raw bytes put on the wire as they are (garbage included).
Outgoing = pb.PlayRequest | bytes


def _serialize(message: Outgoing) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


def reply(request_id: int, *, index: int | None = None, action: pb.Action | None = None) -> pb.PlayRequest:
    if action is not None:
        return pb.PlayRequest(reply=pb.DecisionReply(request_id=request_id, action=action))
    return pb.PlayRequest(reply=pb.DecisionReply(request_id=request_id, index=index or 0))


def simple_index(decision: pb.DecisionRequest) -> int:
    """A policy that always ends rounds: reveal when it may, else draw, else the first legal action."""
    kinds = [a.kind for a in decision.legal_actions]
    for wanted in (pb.ACTION_KIND_REVEAL, pb.ACTION_KIND_DRAW):
        if wanted in kinds:
            return kinds.index(wanted)
    return 0


async def answer_first(bot: RawBot, msg: pb.PlayResponse) -> None:
    """Answer every decision at once with :func:`simple_index`."""
    if msg.WhichOneof("message") == "decision":
        bot.send(reply(msg.decision.request_id, index=simple_index(msg.decision)))


class RawBot:
    """A bot made of the raw stubs: ``await bot.connect()``, then it runs its policy on every message."""

    def __init__(self, address: str, token: str, policy: Policy = answer_first, name: str = "raw") -> None:
        self.address = address
        self.token = token
        self.policy = policy
        self.name = name
        self.received: list[pb.PlayResponse] = []
        self.raw: list[bytes] = []
        self.status: grpc.StatusCode | None = None
        self.details = ""
        self.games_over = 0
        self.game_over = asyncio.Event()
        self.done = asyncio.Event()
        self.state: dict[str, Any] = {}
        self._channel: grpc.aio.Channel | None = None
        self._outbox: asyncio.Queue[Outgoing | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._call: Any = None

    def send(self, message: Outgoing) -> None:
        self._outbox.put_nowait(message)

    def close_send(self) -> None:
        """Half-close: the bot sends nothing more (the stream stays open for reading)."""
        self._outbox.put_nowait(None)

    async def _write(self, call: Any, outbox: asyncio.Queue[Outgoing | None], first: Outgoing) -> None:
        """Send ``first``, then the outbox in order, with ``call.write`` (None: half-close).

        Not a request iterator: with one blocked on an empty outbox, the aio client
        sometimes never delivers the status of a call the referee ended (seen 40 in 300).
        """
        try:
            await call.write(first)
            while True:
                message = await outbox.get()
                if message is None:
                    await call.done_writing()
                    return
                await call.write(message)
        except asyncio.CancelledError:
            raise
        except Exception:  # the call has ended: what is left unsent is dropped, as for a real bot
            return

    def connect(self, *, hello: Outgoing | None = None, metadata: Any = None) -> None:
        """Open a Play stream (a new one replaces this bot's old one) and start reading it."""
        self._outbox = asyncio.Queue()
        if self._channel is None:
            self._channel = grpc.aio.insecure_channel(self.address)
        play = self._channel.stream_stream(
            "/skyjo.v1.BotService/Play",
            request_serializer=_serialize,
            response_deserializer=pb.PlayResponse.FromString,
        )
        if metadata is None:
            metadata = (("authorization", f"Bearer {self.token}"),)
        first = hello if hello is not None else convert.hello(self.name, "test-1")
        self.done = asyncio.Event()
        self._call = play(metadata=metadata)
        self._writer = asyncio.create_task(self._write(self._call, self._outbox, first))
        self._task = asyncio.create_task(self._read(self._call, self.done))

    async def _read(self, call: Any, done: asyncio.Event) -> None:
        try:
            while True:
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    break
                self.received.append(msg)
                self.raw.append(msg.SerializeToString())
                if msg.WhichOneof("message") == "game_over":
                    self.games_over += 1
                    self.game_over.set()
                await self.policy(self, msg)
            self.status = grpc.StatusCode.OK
        except grpc.aio.AioRpcError as exc:
            self.status, self.details = exc.code(), exc.details() or ""
        except asyncio.CancelledError:
            self.status = grpc.StatusCode.CANCELLED
        finally:
            done.set()

    async def drop(self) -> None:
        """Cancel the stream, as a crashing bot's connection would end."""
        if self._call is not None:
            self._call.cancel()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer

    async def close(self) -> None:
        await self.drop()
        if self._channel is not None:
            await self._channel.close(None)
            self._channel = None

    def messages(self, kind: str) -> list[Any]:
        return [getattr(m, kind) for m in self.received if m.WhichOneof("message") == kind]


def refusal(address: str, metadata: Any, first: pb.PlayRequest, timeout: float = 60.0) -> tuple[grpc.StatusCode, str]:
    """Open a Play stream with the synchronous client, send ``first`` and return how the referee ended it.

    Not grpc.aio: when the referee refuses a stream right after (or before) the
    first message, the aio client sometimes reports ``INTERNAL "Internal error
    from Core"`` instead of the referee's status (grpc/grpc#36066). The
    synchronous client reports the status the referee set. Blocking: call it
    with ``asyncio.to_thread`` when the referee runs in the same loop.
    """
    finished = threading.Event()

    def requests() -> Iterator[pb.PlayRequest]:
        yield first
        finished.wait(timeout)  # our side stays open: the referee, not a half-close, ends the stream

    with grpc.insecure_channel(address) as channel:
        responses = pb_grpc.BotServiceStub(channel).Play(requests(), metadata=metadata, timeout=timeout)
        try:
            for _ in responses:
                pass
            return grpc.StatusCode.OK, ""
        except grpc.RpcError as exc:
            assert isinstance(exc, grpc.Call)
            return exc.code(), exc.details() or ""
        finally:
            finished.set()


async def start_referee(tc: TimeControl = RELAXED, **config: Any) -> RefereeServer:
    server = RefereeServer(ServerConfig(address="127.0.0.1:0", time_control=tc, **config))
    await server.start()
    return server


async def play(server: RefereeServer, spec: MatchSpec, timeout: float = 90.0) -> tuple[list[dict[str, Any]], MatchEnd]:
    """Run a match through MatchService and collect its records (in game order) and its end."""
    records: list[dict[str, Any]] = []
    end: MatchEnd | None = None

    async def go() -> None:
        nonlocal end
        async with MatchClient(server.address, server.control_token) as client:
            match_id = await client.start_match(spec)
            async for item in client.watch(match_id):
                if isinstance(item, FinishedGame):
                    records.append(item.record)
                else:
                    end = item

    await asyncio.wait_for(go(), timeout)
    assert end is not None
    records.sort(key=lambda r: r["meta"]["game"])
    return records, end
