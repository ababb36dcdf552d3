"""A client for MatchService: what ``skyjo-ref match`` and the tournament use to run games on a referee."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import grpc
from skyjo_bot.tls import ClientTls
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
from skyjo_proto.skyjo.v1 import skyjo_pb2_grpc as pb_grpc

from skyjo_ref.errors import Unfinished
from skyjo_ref.match import MatchSpec
from skyjo_ref.server.match_proto import spec_to_proto


class RefereeError(Unfinished):
    """The referee refused a call or could not be reached; the message says which and why."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class FinishedGame:
    """One finished game of a match: its index and its parsed ``skyjo-game/1`` record."""

    index: int
    record: dict[str, Any]


@dataclass(frozen=True, slots=True)
class MatchEnd:
    """The end of a match: games finished, and why it stopped early (empty when it played out)."""

    games: int
    error: str


class MatchClient:
    """``async with MatchClient(address, control_token) as client: ...``

    ``tls``: reach a referee that serves TLS (``serve --tls-cert``), trusting its CA
    (and with a client certificate when it asks for one); :func:`skyjo_bot.tls.client_tls`
    reads them from ``SKYJO_CA_FILE`` etc. None: plaintext (a referee of this process).
    """

    def __init__(
        self, address: str, control_token: str, *, timeout_s: float = 30.0, tls: ClientTls | None = None
    ) -> None:
        self.address = address
        self.timeout_s = timeout_s
        self._metadata = (("authorization", f"Bearer {control_token}"),)
        if tls is not None and not address.startswith("unix:"):
            self._channel = grpc.aio.secure_channel(address, tls.credentials())
        else:
            self._channel = grpc.aio.insecure_channel(address)
        self._stub = pb_grpc.MatchServiceStub(self._channel)  # type: ignore[no-untyped-call]

    async def __aenter__(self) -> MatchClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close(None)

    def _error(self, what: str, exc: grpc.aio.AioRpcError) -> RefereeError:
        code = exc.code()
        if code is grpc.StatusCode.UNAVAILABLE:
            return RefereeError(f"cannot reach the referee at {self.address}: {exc.details()}", code)
        return RefereeError(f"{what}: {exc.details()}", code)

    async def issue_token(self, name: str) -> str:
        """A new bot token; the bot connects to BotService with it."""
        try:
            response = await self._stub.IssueToken(
                pb.IssueTokenRequest(name=name), metadata=self._metadata, timeout=self.timeout_s
            )
        except grpc.aio.AioRpcError as exc:
            raise self._error("the referee refused to issue a token", exc) from None
        return str(response.token)

    async def start_match(self, spec: MatchSpec) -> str:
        """Start a match; returns its id at once (:class:`RefereeError` when the referee refuses it)."""
        try:
            response = await self._stub.StartMatch(spec_to_proto(spec), metadata=self._metadata, timeout=self.timeout_s)
        except grpc.aio.AioRpcError as exc:
            raise self._error("the referee refused the match", exc) from None
        return str(response.match_id)

    async def watch(self, match_id: str) -> AsyncIterator[FinishedGame | MatchEnd]:
        """Every finished game (those already finished first), then one :class:`MatchEnd`."""
        call = self._stub.WatchMatch(pb.WatchMatchRequest(match_id=match_id), metadata=self._metadata)
        try:
            async for update in call:
                if update.WhichOneof("update") == "game_finished":
                    yield FinishedGame(update.game_finished.index, json.loads(update.game_finished.record_json))
                else:
                    yield MatchEnd(update.match_finished.games, update.match_finished.error)
                    return
        except grpc.aio.AioRpcError as exc:
            raise self._error(f"watching match {match_id} failed", exc) from None
        finally:
            call.cancel()
        raise RefereeError(f"the referee ended match {match_id}'s watch without a MatchFinished")
