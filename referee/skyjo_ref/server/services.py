"""The referee's gRPC services: BotService (a bot's stream: Hello, replies, events) and MatchService (control).

Both are thin over :class:`~skyjo_ref.server.server.RefereeServer`, which
holds the sessions and the matches; here are the calls' authentication,
throttling, message parsing and the stream's reading and writing.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

import grpc
from google.protobuf.message import DecodeError
from grpc.aio import EOF  # type: ignore[attr-defined]
from skyjo_bot import convert
from skyjo_bot.types import RulesError
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
from skyjo_proto.skyjo.v1 import skyjo_pb2_grpc as pb_grpc

from skyjo_ref.match import MatchSpecError
from skyjo_ref.server import wire
from skyjo_ref.server.guard import PeerThrottle
from skyjo_ref.server.match_proto import spec_from_proto
from skyjo_ref.server.session import Session, Stream

if TYPE_CHECKING:
    from skyjo_ref.server.server import RefereeServer

log = logging.getLogger("skyjo_ref.server.server")  # one logger for the whole referee (server and services)

#: When the referee ends a stream, how long a message being written may take to finish first.
WRITE_DRAIN_S: Final = 1.0
#: How long a new Play stream may take to send its Hello.
HELLO_TIMEOUT_S: Final = 30.0


def _bearer(context: grpc.aio.ServicerContext[Any, Any]) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key.lower() == "authorization" and isinstance(value, str):
            scheme, _, token = value.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


def add_bot_service(service: BotServicer, server: grpc.aio.Server) -> None:
    """Register BotService with Play taking raw bytes: the servicer parses each message itself.

    With the generated deserializer a message that does not decode ends the
    call inside grpc, with status OK and no detail (which a bot reads as "the
    referee is shutting down"); parsed here, it is refused with
    INVALID_ARGUMENT and a sentence, and counted against the bot.
    """
    handlers = {
        "Play": grpc.stream_stream_rpc_method_handler(
            service.Play,
            request_deserializer=None,  # bytes in: see _parse
            response_serializer=wire.serialize_response,  # messages, or bytes built by wire
        )
    }
    name = pb.DESCRIPTOR.services_by_name["BotService"].full_name
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
    server.add_registered_method_handlers(name, handlers)  # type: ignore[attr-defined]


def _parse(raw: object) -> pb.PlayRequest:
    """A PlayRequest from the bytes a bot sent; :class:`DecodeError` when they are not one."""
    if isinstance(raw, pb.PlayRequest):
        return raw
    if not isinstance(raw, bytes):
        raise DecodeError(f"expected bytes, got {type(raw).__name__}")
    return pb.PlayRequest.FromString(raw)


def undecodable(raw: object, exc: Exception) -> str:
    """The sentence a bot gets when its message is not a PlayRequest."""
    size = len(raw) if isinstance(raw, bytes) else 0
    return (
        f"could not decode PlayRequest ({size} bytes): {exc}: "
        "send serialized skyjo.v1.PlayRequest messages (proto/skyjo/v1/skyjo.proto)"
    )


async def _refuse_throttled(throttle: PeerThrottle, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    """End the call with RESOURCE_EXHAUSTED while its peer backs off after too many failed tokens."""
    wait = throttle.check(context.peer())
    if wait > 0:
        await context.abort(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"too many failed token attempts from this address: try again in {max(wait, 0.1):.1f} s "
            "with a token the referee knows",
        )


class BotServicer(pb_grpc.BotServiceServicer):
    def __init__(self, referee: RefereeServer) -> None:
        self.referee = referee

    async def Play(self, request_iterator: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await _refuse_throttled(self.referee.throttle, context)
        token = _bearer(context)
        if token is None:
            self.referee.throttle.failed(context.peer())
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "missing bot token: send the metadata header 'authorization: Bearer <token>'",
            )
        session = self.referee.sessions.get(token or "")
        if session is None:
            self.referee.throttle.failed(context.peer())
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "unknown bot token: use a token the referee issued (MatchService.IssueToken, "
                "or serve --token NAME=TOKEN); an issued token is released once unused for a while",
            )
        assert session is not None
        self.referee._hold(session)
        try:
            await self._play(context, session)
        finally:
            self.referee._let_go(session)

    async def _play(self, context: grpc.aio.ServicerContext[Any, Any], session: Session) -> None:
        """The call of a known token: Hello, then the bot's messages until the stream ends."""
        try:
            async with asyncio.timeout(HELLO_TIMEOUT_S):  # not wait_for: 3.11's can swallow a cancellation
                first = await context.read()
        except TimeoutError:
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED, f"no Hello within {HELLO_TIMEOUT_S:.0f} s: send Hello first"
            )
            return
        if first is EOF:
            return
        limit = self.referee.config.max_message_bytes
        if isinstance(first, bytes) and len(first) > limit:
            why = f"a message of {len(first)} bytes is over the referee's limit of {limit} bytes"
            session.cut_off.append(why)
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, f"{why}; the first message must be Hello")
        try:
            first = _parse(first)
        except DecodeError as exc:
            why = undecodable(first, exc)
            session.cut_off.append(why)
            log.info("token %s: stream refused: %s", session.name, why)
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{why}; the first message must be Hello")
            return
        assert isinstance(first, pb.PlayRequest)
        if first.WhichOneof("message") != "hello":
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"the first message must be Hello (name, version, protocol_version "
                f"{convert.PROTOCOL_VERSION}), got {first.WhichOneof('message') or 'an empty PlayRequest'}",
            )
        hello = first.hello
        if hello.protocol_version not in (0, convert.PROTOCOL_VERSION):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"protocol_version {hello.protocol_version} is not spoken here: this referee speaks "
                f"{convert.PROTOCOL_VERSION}",
            )
        stream = Stream(context.peer())
        stream.send(convert.welcome(session.name))
        session.attach(stream, hello)
        log.debug("token %s connected from %s", session.name, stream.peer)
        reader = asyncio.create_task(self._read(context, session, stream))
        writer = asyncio.create_task(self._write(context, stream))
        try:
            await stream.closed.wait()
        finally:
            session.detach(stream)
            if stream.writing:  # cancelled mid-write, the call could end without its status reaching the bot
                await asyncio.wait({writer}, timeout=WRITE_DRAIN_S)
            writer.cancel()
            log.debug("token %s stream closed: %s", session.name, stream.detail or "by the bot")
        if stream.status is not None:
            context.set_code(stream.status)
            context.set_details(stream.detail)
        reader.cancel()

    async def _read(self, context: grpc.aio.ServicerContext[Any, Any], session: Session, stream: Stream) -> None:
        limit = self.referee.config.max_message_bytes
        try:
            while not stream.closed.is_set():
                raw = await context.read()
                if raw is EOF:
                    break
                if isinstance(raw, bytes) and len(raw) > limit:
                    detail = f"a message of {len(raw)} bytes is over the referee's limit of {limit} bytes"
                    session.on_unreadable(
                        stream, grpc.StatusCode.RESOURCE_EXHAUSTED, detail, f"a message of {len(raw)} bytes"
                    )
                    break
                try:
                    message = _parse(raw)
                except DecodeError as exc:
                    answered = "bytes that are not a PlayRequest"
                    session.on_unreadable(stream, grpc.StatusCode.INVALID_ARGUMENT, undecodable(raw, exc), answered)
                    break
                session.on_message(stream, message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the call broke (oversize message, reset...): the stream is gone
            log.debug("token %s: read ended: %s", session.name, exc)
        stream.close()

    @staticmethod
    async def _write(context: grpc.aio.ServicerContext[Any, Any], stream: Stream) -> None:
        try:
            while not stream.closed.is_set():
                message = await stream.outbox.get()
                if stream.closed.is_set():
                    return
                stream.writing = True
                try:
                    await context.write(message)
                finally:
                    stream.writing = False
                stream.mark_written()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.debug("write ended: %s", exc)
            stream.close()


class MatchServicer(pb_grpc.MatchServiceServicer):
    def __init__(self, referee: RefereeServer) -> None:
        self.referee = referee

    async def _authorize(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await _refuse_throttled(self.referee.throttle, context)
        token = _bearer(context)
        if token is None or not secrets.compare_digest(token.encode(), self.referee.control_token.encode()):
            self.referee.throttle.failed(context.peer())
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "MatchService needs the referee's control token: 'authorization: Bearer <control token>'",
            )

    async def IssueToken(
        self, request: pb.IssueTokenRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.IssueTokenResponse:
        await self._authorize(context)
        return pb.IssueTokenResponse(token=self.referee.issue_token(request.name[:100]))

    async def StartMatch(
        self, request: pb.StartMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.StartMatchResponse:
        await self._authorize(context)
        try:
            spec = spec_from_proto(request, self.referee.config.time_control)
            match_id = self.referee.start_match(spec)
        except (MatchSpecError, RulesError, ValueError) as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return pb.StartMatchResponse(match_id=match_id)

    async def WatchMatch(
        self, request: pb.WatchMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.WatchMatchResponse]:
        await self._authorize(context)
        if request.match_id not in self.referee.matches:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r} on this referee")
        finished = 0
        async for index, payload in self.referee.watch(request.match_id):
            if index is None:
                yield pb.WatchMatchResponse(match_finished=pb.MatchFinished(games=finished, error=payload))
                return
            finished += 1
            yield pb.WatchMatchResponse(game_finished=pb.GameFinished(index=index, record_json=payload))
