"""What a check case works with: the bot's processes, its streams, and how a reply is judged.

Cases that need no process of their own share one (``session``): it is started
once, said Hello to once, and stopped after a case that failed, so one fault
does not make the next case fail too. A case that needs a process of its own
(signals, exit codes, a different address) starts one with ``fresh``; every
process a case started is stopped when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import time
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TypeVar

import grpc
from skyjo_bot import convert
from skyjo_bot.types import Action
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb

from skyjo_ref.checkbot.launch import Listener, Room, bot_process_group, start_bot
from skyjo_ref.checkbot.referee import ScriptedReferee, Stream, StreamEnded
from skyjo_ref.players import ManagedBot, telling_line
from skyjo_ref.sandbox import describe_returncode

#: How long a bot process may take from its start to its Hello (a loaded machine, a sandbox, a JVM).
CONNECT_S: Final = 30.0
#: How long a reply may take (the clock the check announces is 10 s a decision).
REPLY_S: Final = 10.0
#: How long a bot may take to exit after SIGTERM/SIGINT or its parent's death: a league sends SIGKILL after 3 s.
STOP_S: Final = 3.0
PROTOCOL_VERSION: Final = 1

T = TypeVar("T")


class CaseFailed(Exception):
    """A rule the bot broke: what was expected, and what the bot did."""

    def __init__(self, expected: str, did: str) -> None:
        super().__init__(f"expected {expected}; the bot {did}")
        self.expected = expected
        self.did = did


class NotApplicable(Exception):
    """The case cannot apply to this bot as it runs (no network: no TLS), with why."""


@dataclass(slots=True)
class BotRun:
    """One process of the bot under check, with its token."""

    token: str
    process: ManagedBot

    @property
    def log(self) -> str:
        return str(self.process.log_path or "")

    def signal(self, sig: signal.Signals) -> None:
        """Signal the bot's process group, as a league stops a bot (isolated: the bot's own group in its sandbox)."""
        group = bot_process_group(self.process)
        if group is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, sig)

    async def exit_code(self, timeout: float) -> int | None:
        """Its exit code once it ends on its own (None: still running after ``timeout`` s)."""
        try:
            async with asyncio.timeout(timeout):
                await self.process.wait_fault(0)
        except TimeoutError:
            return None
        return self.process.faults[0].returncode


def describe_exit(code: int) -> str:
    return "exited with code 0" if code == 0 else describe_returncode(code)


@dataclass(slots=True)
class Context:
    """The scripted referee, the bot's room, and the processes of the case in progress."""

    referee: ScriptedReferee
    room: Room
    shared: tuple[BotRun, Stream] | None = None
    own: list[BotRun] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)  # the logs of the processes the case used
    next_request: int = 1
    hello: pb.Hello | None = None
    tls_ca: Path | None = None  # the CA file of the referee's TLS listener (None: no TLS here)
    background: list[asyncio.Task[None]] = field(default_factory=list)  # a case's helpers, cancelled at its end
    news: asyncio.Condition = field(default_factory=asyncio.Condition)
    ever_connected: bool = False  # a process of the bot reached the referee at least once in this run

    def request_id(self) -> int:
        self.next_request += 1
        return self.next_request

    async def fresh(
        self,
        listener: Listener = "referee",
        *,
        env: Mapping[str, str] | None = None,
        parent_pid: int | None = None,
    ) -> BotRun:
        """A new process of the bot for this case alone (stopped when the case ends)."""
        token = secrets.token_urlsafe(18)
        self.referee.expect(token)
        run = BotRun(token, await start_bot(self.room, token, listener, env=env, parent_pid=parent_pid))
        self.own.append(run)
        self.logs.append(run.log)
        return run

    async def until(self, run: BotRun, waited: Awaitable[T], expected: str, timeout: float) -> T:
        """What ``waited`` gives, unless ``run``'s process exits first or ``timeout`` passes (CaseFailed)."""
        waiting = asyncio.ensure_future(waited)
        exited = asyncio.ensure_future(run.process.wait_fault(0))
        try:
            await asyncio.wait({waiting, exited}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            exited.cancel()
        if waiting.done() and not waiting.cancelled() and waiting.exception() is None:
            self.ever_connected = True
            return waiting.result()
        waiting.cancel()
        with contextlib.suppress(BaseException):
            await waiting
        if run.process.faults:
            raise CaseFailed(expected, f"{run.process.faults[0].describe()} (see its log)")
        said = telling_line(run.process.output(40))
        raise CaseFailed(f"{expected} within {timeout:g} s", f"did not; its last output: {said}")

    async def arrival(self, run: BotRun, timeout: float = CONNECT_S) -> Stream:
        """The next stream ``run`` opens (CaseFailed when it exits or takes longer than ``timeout``)."""
        return await self.until(run, self.referee.next_stream(run.token, timeout + 1), "a connection to the referee",
                                timeout)  # fmt: skip

    async def arrival_count(self, run: BotRun, arrivals: list[float], count: int) -> None:
        """Until ``arrivals`` (filled by a refuser that notifies ``news``) holds ``count`` streams."""

        async def enough() -> None:
            async with self.news:
                await self.news.wait_for(lambda: len(arrivals) >= count)

        await self.until(run, enough(), f"{count} connections in a row", CONNECT_S)

    async def wait_silent(self, run: BotRun, count: int) -> None:
        """Until the silent listener has accepted ``count`` connections in all."""
        await self.until(run, self.referee.silent.wait_connections(count, CONNECT_S + 1),
                         "a connection to the referee's address", CONNECT_S)  # fmt: skip

    async def welcome(self, stream: Stream) -> pb.Hello:
        """Read the stream's first message: Hello with the protocol version (then Welcome it), else CaseFailed."""
        try:
            first = await stream.receive(CONNECT_S)
        except TimeoutError:
            raise CaseFailed("Hello as the first message", f"sent nothing within {CONNECT_S:g} s") from None
        except StreamEnded:
            raise CaseFailed("Hello as the first message", "closed the stream without a word") from None
        kind = first.WhichOneof("message")
        if kind != "hello":
            stream.end(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be Hello")
            raise CaseFailed("Hello as the first message", f"sent {kind or 'an empty message'} first")
        if first.hello.protocol_version != PROTOCOL_VERSION:
            stream.end(grpc.StatusCode.INVALID_ARGUMENT, "unsupported protocol version")
            raise CaseFailed(
                f"Hello with protocol_version {PROTOCOL_VERSION}",
                f"said protocol_version {first.hello.protocol_version}",
            )
        await stream.send(convert.welcome("you"))
        return first.hello

    async def session(self) -> tuple[BotRun, Stream]:
        """The shared process's welcomed stream (started on first use, or after a case failed)."""
        if self.shared is not None and not self.shared[1].gone.is_set() and self.shared[0].process.running:
            self.logs.append(self.shared[0].log)
            return self.shared
        await self.drop_shared()
        token = secrets.token_urlsafe(18)
        self.referee.expect(token)
        run = BotRun(token, await start_bot(self.room, token))
        self.logs.append(run.log)
        self.shared = (run, await self.arrival(run))
        self.hello = await self.welcome(self.shared[1])
        return self.shared

    def adopt(self, stream: Stream) -> None:
        """``stream`` (a reconnect of the shared process) is the shared stream from now on."""
        if self.shared is not None:
            self.shared = (self.shared[0], stream)

    async def drop_shared(self) -> None:
        if self.shared is not None:
            run, stream = self.shared
            self.shared = None
            stream.end()
            await run.process.stop(STOP_S)

    async def end_case(self, failed: bool) -> None:
        """Stop the case's own processes; after a failure, the shared one too."""
        if failed:
            await self.drop_shared()
        for task in self.background:
            task.cancel()
        await asyncio.gather(*self.background, return_exceptions=True)
        await asyncio.gather(*(run.process.stop(STOP_S) for run in self.own), return_exceptions=True)
        self.background.clear()
        self.own.clear()
        self.logs.clear()

    async def reply(self, stream: Stream, timeout: float = REPLY_S) -> tuple[pb.DecisionReply, float]:
        """The bot's next message, which must be a DecisionReply, and when it came."""
        try:
            message = await stream.receive(timeout)
        except TimeoutError:
            raise CaseFailed(f"a DecisionReply within {timeout:g} s", "did not answer") from None
        except StreamEnded:
            raise CaseFailed("a DecisionReply", "closed its stream instead of answering") from None
        kind = message.WhichOneof("message")
        if kind != "reply":
            raise CaseFailed("a DecisionReply", f"sent {kind or 'an empty message'} instead")
        return message.reply, time.monotonic()

    async def ask(self, stream: Stream, request: pb.PlayResponse, timeout: float = REPLY_S) -> Action:
        """Send a DecisionRequest and judge the reply (CaseFailed names what was wrong)."""
        await stream.send(request)
        reply, _ = await self.reply(stream, timeout)
        return judge(reply, request.decision)


def judge(reply: pb.DecisionReply, request: pb.DecisionRequest) -> Action:
    """The action a reply chooses; CaseFailed for a wrong request id, an index outside the legal actions, an action
    that is not legal, an error or no choice."""
    legal = [convert.action_from_proto(a) for a in request.legal_actions]
    listed = ", ".join(str(a) for a in legal)
    if reply.request_id != request.request_id:
        raise CaseFailed(
            f"the request's id {request.request_id} echoed in the reply",
            f"replied with request_id {reply.request_id}",
        )
    choice = reply.WhichOneof("choice")
    if choice == "index":
        if reply.index >= len(legal):
            raise CaseFailed(
                f"an index into the {len(legal)} legal actions (0..{len(legal) - 1})",
                f"answered index {reply.index}, outside the legal actions",
            )
        return legal[reply.index]
    if choice == "action":
        try:
            action = convert.action_from_proto(reply.action)
        except ValueError as exc:
            raise CaseFailed(f"one of the legal actions ({listed})", f"sent an action that is not one: {exc}") from None
        if action not in legal:
            raise CaseFailed(f"one of the legal actions ({listed})", f"played {action}, which is not legal here")
        return action
    if choice == "error":
        raise CaseFailed(f"one of the legal actions ({listed})", f"replied with an error: {reply.error[:200]}")
    raise CaseFailed("a reply that chooses an index or an action", "sent a reply that chooses nothing")


def log_paths(paths: list[str]) -> str:
    """The logs a case used, once each, in order."""
    return ", ".join(dict.fromkeys(p for p in paths if p))
