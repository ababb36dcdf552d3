"""Bot sessions on the referee: one per token, one live stream, one game at a time.

A :class:`Session` is what a bot token stands for. Its :class:`Stream` is the
live Play call (a newer call with the same token replaces it: a reconnect).
While the token holds a seat, a :class:`RemoteSeat` bridges the match runner
and the stream: it sends the seat's messages and turns replies into answers.

Reply rules (docs/referee.md): a reply is accepted only for the pending
request id of this token's seat, once. A reply to a request id that is
already settled (answered, or timed out and played for) is ignored: a late or
duplicate answer costs nothing. Any other message (an unknown request id,
a reply when no decision is due, a second Hello, an empty message) is a
``malformed`` strike. Unexpected messages also draw on a small per-stream
budget; a stream that floods past it is closed with RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections import deque
from collections.abc import Sequence
from typing import Final

import grpc
from skyjo_bot import convert
from skyjo_bot.types import (
    Action,
    Event,
    EventKind,
    GameResult,
    GameStart,
    IllegalActionError,
    InvalidActionError,
    Strike,
)
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb

from skyjo_ref.match.seat import DISCONNECTED, ILLEGAL, MALFORMED, TIMEOUT, Answer, Decision, Fault, FaultHandler, Seat
from skyjo_ref.server import wire

log = logging.getLogger(__name__)

#: Messages queued for a bot that does not read them before its stream is closed.
OUTBOX_LIMIT: Final = 10_000
#: Unexpected messages a stream may send in a burst, and how fast that budget refills (per second).
FLOOD_BURST: Final = 30.0
FLOOD_REFILL_PER_S: Final = 5.0
#: At most this long between a public event and its delivery to a seat that is not deciding.
EVENT_DELAY_S: Final = 0.02
#: Settled request ids remembered per token, so a late duplicate is ignored rather than struck.
RECENT_IDS: Final = 256


#: What a stream sends: a message, or one already serialized (:mod:`skyjo_ref.server.wire`).
Outgoing = pb.PlayResponse | bytes


class Stream:
    """One live Play call: a bounded outbox the call's writer drains, and a close reason."""

    def __init__(self, peer: str) -> None:
        self.peer = peer
        self.outbox: asyncio.Queue[Outgoing] = asyncio.Queue(maxsize=OUTBOX_LIMIT)
        self.closed = asyncio.Event()
        self.waiters: set[asyncio.Future[None]] = set()  # woken when the stream closes
        self.status: grpc.StatusCode | None = None
        self.detail = ""
        self._budget = FLOOD_BURST
        self._budget_at = time.monotonic()
        self.queued = 0  # messages queued on this stream
        self.written = 0  # of those, messages handed to gRPC
        self.written_at = 0.0  # perf_counter() when the last one was handed over
        self.writing = False  # a message is being handed to gRPC now

    def mark_written(self) -> None:
        """The writer handed one more message to gRPC (a decision's clock starts here, not at queueing)."""
        self.written += 1
        self.written_at = time.perf_counter()

    def send(self, message: Outgoing) -> None:
        """Queue a message without ever blocking the game; a bot that stops reading is cut off."""
        if self.closed.is_set():
            return
        try:
            self.outbox.put_nowait(message)
            self.queued += 1
        except asyncio.QueueFull:
            self.close(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"the bot left {OUTBOX_LIMIT} messages unread: read the stream as messages arrive",
            )

    def close(self, status: grpc.StatusCode | None = None, detail: str = "") -> None:
        if not self.closed.is_set():
            self.status, self.detail = status, detail
            self.closed.set()
            for waiter in self.waiters:
                _wake(waiter)

    def waiter(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """A future that is woken when this stream closes (or by whoever else holds it)."""
        waiter: asyncio.Future[None] = loop.create_future()
        if self.closed.is_set():
            waiter.set_result(None)
        else:
            self.waiters.add(waiter)
        return waiter

    def spend(self) -> bool:
        """Take one unexpected message from the flood budget; False when it is exhausted."""
        now = time.monotonic()
        self._budget = min(FLOOD_BURST, self._budget + (now - self._budget_at) * FLOOD_REFILL_PER_S)
        self._budget_at = now
        self._budget -= 1
        return self._budget >= 0


class Session:
    """What one bot token stands for: its live stream, its hello, and the seat it holds."""

    def __init__(self, token: str, name: str, *, permanent: bool = False) -> None:
        self.token = token
        self.name = name
        self.permanent = permanent  # from the config: never released
        self.users = 0  # open Play calls and unfinished matches naming the token (RefereeServer._hold)
        self.used = False
        self.expiry: asyncio.TimerHandle | None = None  # when an unused token is released
        self.bot_name = ""
        self.version = ""
        self._stream: Stream | None = None  # the latest call, until its handler ends (see stream)
        self.seat: RemoteSeat | None = None
        self.lock = asyncio.Lock()  # held by a game for its whole length: one game at a time
        self.recent: deque[int] = deque(maxlen=RECENT_IDS)
        self.connections = 0
        self.cut_off: list[str] = []  # why the referee closed this token's streams (floods, undecodable bytes)
        self._closed_why = ""  # why the referee ended the last stream (see closed_why)
        self._changed = asyncio.Event()

    @property
    def stream(self) -> Stream | None:
        """The live stream: None once the referee or the bot closed it, even before its call has ended.

        (A stream the referee closes, say for a flood, is detached only when
        its call's handler runs again; until then it must not count as live,
        or a pending decision would spin on it.)
        """
        stream = self._stream
        return stream if stream is not None and not stream.closed.is_set() else None

    @property
    def connected(self) -> bool:
        return self.stream is not None

    @property
    def closed_why(self) -> str:
        """Why the referee ended this token's last stream ("" when it did not, or a newer one is live)."""
        stream = self._stream
        if stream is not None and stream.closed.is_set():
            return _why(stream)
        return self._closed_why if stream is None else ""

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_connected(self, timeout_s: float) -> bool:
        """Wait until a stream is live (at most ``timeout_s``); True when it is."""
        deadline = time.monotonic() + timeout_s
        while self.stream is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                # asyncio.timeout, not wait_for: Python 3.11's wait_for returns (swallowing the cancel)
                # when the task is cancelled in the loop turn the event is set
                async with asyncio.timeout(left):
                    await self._changed.wait()
            except TimeoutError:
                return self.stream is not None
        return True

    def attach(self, stream: Stream, hello: pb.Hello) -> None:
        """A new stream said Hello: it replaces any older one, and the seat catches up on it."""
        old = self._stream
        self._stream = stream
        self._closed_why = ""
        self.bot_name, self.version = hello.name[:100], hello.version[:100]
        self.connections += 1
        if old is not None:
            old.close(grpc.StatusCode.ABORTED, "replaced by a newer Play stream with the same token")
        self._notify()
        if self.seat is not None:
            self.seat.reconnected(stream)

    def detach(self, stream: Stream) -> None:
        if self._stream is stream:
            self._stream = None
            self._closed_why = _why(stream)
            self._notify()

    def send(self, message: pb.PlayResponse) -> None:
        stream = self.stream
        if stream is not None:
            stream.send(message)

    def on_message(self, stream: Stream, message: pb.PlayRequest) -> None:
        """One message from the bot (after its Hello)."""
        kind = message.WhichOneof("message")
        seat = self.seat
        if kind == "reply":
            reply = message.reply
            rid = reply.request_id
            if seat is not None and seat.take_reply(rid, reply):
                return
            if rid in self.recent:
                log.debug("token %s: reply to settled request %d ignored", self.name, rid)
                return
            answered = f"a reply to request_id {rid} ({describe_reply(reply)})"
            if seat is None:
                detail = f"{answered}, but this token holds no seat in a game now: reply only to DecisionRequests"
            elif seat.pending_id is not None:
                detail = f"{answered}, but the pending decision is request_id {seat.pending_id}"
            else:
                detail = f"{answered}, but no decision is due for you now: wait for a DecisionRequest"
            fault = Fault(MALFORMED, detail, rid, answered)
        else:
            what = "a second Hello" if kind == "hello" else "an empty PlayRequest"
            detail = f"{what}: Hello is sent once, first on a stream; after it send only DecisionReply messages"
            fault = Fault(MALFORMED, detail, 0, what)
        if not stream.spend():
            why = f"too many unexpected messages (more than {FLOOD_BURST:.0f} at once); last: {detail}"
            self.cut_off.append(why)
            log.info("token %s: stream closed: %s", self.name, why)
            stream.close(grpc.StatusCode.RESOURCE_EXHAUSTED, why)
            return
        self._count(stream, fault)

    def on_unreadable(self, stream: Stream, status: grpc.StatusCode, detail: str, answered: str) -> None:
        """A message that cannot be read (bytes that are not a PlayRequest, or over the size limit).

        It is a ``malformed`` fault: with a decision pending it answers it (the
        default action is played at once); otherwise it is a strike outside any
        decision. The stream then ends with ``status`` and ``detail``: a bot
        whose encoder is broken sends nothing better after it. A token in no
        game has nothing to count it against: the reason is kept in
        :attr:`cut_off`.
        """
        fault = Fault(MALFORMED, detail, 0, answered)
        seat = self.seat
        if seat is None or seat.benched:
            self.cut_off.append(detail)
        elif seat.pending_id is not None and self.stream is stream:
            seat.settle_with_fault(fault)
        else:
            seat.report(fault)
        log.info("token %s: stream closed: %s", self.name, detail)
        stream.close(status, detail)

    def _count(self, stream: Stream, fault: Fault) -> None:
        """A strike for the seat this token holds; with no seat, a Strike message that counts nothing."""
        seat = self.seat
        if seat is not None and not seat.benched:
            seat.report(fault)
        elif seat is None:
            stream.send(
                pb.PlayResponse(strike=pb.Strike(request_id=fault.request_id, reason=fault.reason, detail=fault.detail))
            )


def describe_reply(reply: pb.DecisionReply) -> str:
    """What a reply chose, in words, for strike messages and records."""
    which = reply.WhichOneof("choice")
    if which == "index":
        return f"index {reply.index}"
    if which == "action":
        try:
            return f"action {convert.action_from_proto(reply.action)}"
        except InvalidActionError:
            pos = reply.action.pos if reply.action.HasField("pos") else None
            return f"action kind={reply.action.kind} pos={pos}"
    if which == "error":
        return f"error {reply.error[:200]!r}"
    return "no choice"


# The runner hands every seat the same list of events: convert it once for all of them.
_last_events: tuple[Sequence[Event], str, list[bytes | pb.PlayResponse]] | None = None


def _event_items(events: Sequence[Event], game_id: str) -> list[bytes | pb.PlayResponse]:
    """Each event as a serialized ``Event`` (held, then batched) or a RoundResult message; no game_end.

    The same split as :func:`skyjo_bot.convert.event_responses`: GameOver is
    built from the final result, not from the ``game_end`` event.
    """
    global _last_events
    last = _last_events
    if last is not None and last[0] is events and last[1] == game_id:
        return last[2]
    items: list[bytes | pb.PlayResponse] = []
    for event in events:
        if event.kind in convert.EVENT_MESSAGE_KINDS:
            items.append(wire.event_bytes(event, game_id))
        elif event.kind is EventKind.ROUND_END:
            items.append(pb.PlayResponse(round_result=convert.round_result_to_proto(event, game_id)))
    _last_events = (events, game_id, items)
    return items


def _why(stream: Stream) -> str:
    """``STATUS: detail`` when the referee ended ``stream`` for a fault, else ""."""
    if stream.status is None or stream.status is grpc.StatusCode.OK:
        return ""
    return f"{stream.status.name}: {stream.detail}"


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class _Pending:
    __slots__ = ("decision", "future", "sent_on", "seq", "waiter")

    def __init__(self, decision: Decision, future: asyncio.Future[pb.DecisionReply | Fault]) -> None:
        self.decision = decision
        self.future = future
        self.sent_on: Stream | None = None
        self.seq = 0  # the request's place among the messages queued on sent_on
        self.waiter: asyncio.Future[None] | None = None  # what decide() awaits now


class RemoteSeat(Seat):
    """A seat played by a bot connected over gRPC with the session's token.

    The decision clock runs only while the bot is connected: a disconnection
    is governed by the grace period instead (the pending decision is sent
    again, same request id, on the new stream, with the time that was left).
    """

    keeps_time = True

    def __init__(self, session: Session, name: str, *, release_lock: bool = False) -> None:
        self.session = session
        self.name = name
        self.version = session.version
        self.benched = False
        self._release_lock = release_lock
        self._start: GameStart | None = None
        self._grace_s = 0.0
        self._pending: _Pending | None = None
        self._on_fault: FaultHandler | None = None
        self._held: list[bytes] = []  # serialized Events not sent yet (see events())
        self._before: list[Outgoing] = []  # messages that go before the held events (RoundResults)
        self._game_id = ""
        self._flush_timer: asyncio.TimerHandle | None = None
        self._benched_event = asyncio.Event()  # set by forfeited(): wakes a decision waiting for a reconnect

    @property
    def pending_id(self) -> int | None:
        return self._pending.decision.request_id if self._pending is not None else None

    def set_fault_handler(self, handler: FaultHandler) -> None:
        self._on_fault = handler

    def report(self, fault: Fault) -> None:
        if self._on_fault is not None:
            self._on_fault(fault)

    async def open(self, start: GameStart) -> bool:
        self._start = start
        tc = start.time_control
        self._grace_s = (tc.grace_ms if tc is not None else 0) / 1000
        self.session.seat = self
        if self.session.stream is not None:
            self.version = self.session.version
            self.session.send(pb.PlayResponse(game_start=convert.game_start_to_proto(start)))
            return True
        if not await self.session.wait_connected(self._grace_s):
            return False
        self.version = self.session.version  # reconnected() sent GameStart on the new stream
        return True

    def reconnected(self, stream: Stream) -> None:
        """A new stream: tell it which game it is in; :meth:`decide` re-sends the pending request."""
        if self._start is not None:
            stream.send(pb.PlayResponse(game_start=convert.game_start_to_proto(self._start)))

    def take_reply(self, request_id: int, reply: pb.DecisionReply) -> bool:
        """Settle the pending decision with ``reply``; True also for a duplicate of an answer just given."""
        pending = self._pending
        if self.benched or pending is None or pending.decision.request_id != request_id:
            return False
        if not pending.future.done():
            pending.future.set_result(reply)
            if pending.waiter is not None:
                _wake(pending.waiter)
        return True

    def settle_with_fault(self, fault: Fault) -> None:
        """Settle the pending decision with ``fault`` (a message that was not a reply at all)."""
        pending = self._pending
        if self.benched or pending is None or pending.future.done():
            return
        pending.future.set_result(dataclasses.replace(fault, request_id=pending.decision.request_id))
        if pending.waiter is not None:
            _wake(pending.waiter)

    async def _reconnected_in_time(self) -> bool:
        """Wait for a new stream, at most the grace period; False after it, or once the seat forfeits."""
        if self.benched:
            return False
        connected = asyncio.ensure_future(self.session.wait_connected(self._grace_s))
        benched = asyncio.ensure_future(self._benched_event.wait())
        try:
            await asyncio.wait((connected, benched), return_when=asyncio.FIRST_COMPLETED)
        finally:
            connected.cancel()
            benched.cancel()
        return not self.benched and connected.done() and not connected.cancelled() and connected.result()

    async def decide(self, decision: Decision) -> Answer:
        session = self.session
        loop = asyncio.get_running_loop()
        pending = _Pending(decision, loop.create_future())
        self._pending = pending
        limit = decision.time_left_ms
        used = 0.0  # ms of connected time so far
        try:
            while True:
                if self.benched:  # forfeited while deciding (strikes out of turn): the stand-in plays it
                    return Answer(None, used, answered="nothing (the seat forfeited)")
                stream = session.stream
                if stream is None:
                    if not await self._reconnected_in_time():
                        if self.benched:
                            continue
                        why = f"disconnected for longer than the grace period ({self._grace_s * 1000:.0f} ms)"
                        if session.closed_why:
                            why += f" after the referee ended its stream: {session.closed_why}"
                        return Answer(None, used, DISCONNECTED, "nothing (disconnected)", why)
                    continue
                if pending.sent_on is not stream:
                    pending.sent_on = stream
                    held = self._take_held()
                    stream.send(  # built as bytes: what PlayResponse(decision=...) serializes to, ~3x cheaper
                        wire.decision_response(
                            decision.request_id, decision.game_id, decision.view, int(limit - used), held
                        )
                    )
                    pending.seq = stream.queued
                started = time.perf_counter()
                waiter = stream.waiter(loop)  # woken by the reply (below) or by the stream's end
                pending.waiter = waiter
                timer = loop.call_later(max(0.0, limit - used) / 1000, _wake, waiter)
                try:
                    await waiter
                    if not pending.future.done() and not stream.closed.is_set() and not self.benched:
                        # the deadline: let a reply that already arrived, but waits behind other
                        # work on this loop, be read first — the referee's delays are not the bot's
                        for _ in range(3):
                            await asyncio.sleep(0)
                finally:
                    timer.cancel()
                    pending.waiter = None
                    stream.waiters.discard(waiter)
                # the bot's clock runs from when the request was handed to gRPC, not from when it was
                # queued (a request still unwritten means the bot stopped reading: its clock runs)
                now = time.perf_counter()
                handed = stream.written_at if stream.written >= pending.seq else started
                used += (now - max(started, handed)) * 1000
                if pending.future.done():
                    return self._answer(decision, pending.future.result(), used)
                if session.stream is stream and not stream.closed.is_set():
                    if used < limit:
                        continue  # the request left late: the bot still has time
                    return Answer(
                        None,
                        used,
                        TIMEOUT,
                        "nothing",
                        f"no answer within the limit of {limit} ms (waited {used:.0f} ms)",
                    )
                # the stream went away: wait for a reconnect (the clock stops meanwhile)
        finally:
            self._pending = None
            if not pending.future.done():
                pending.future.cancel()
            session.recent.append(decision.request_id)

    def _answer(self, decision: Decision, reply: pb.DecisionReply | Fault, used: float) -> Answer:
        if isinstance(reply, Fault):
            return Answer(None, used, reply.reason, reply.answered, reply.detail)
        try:
            action: Action = convert.reply_action(reply, decision.view.legal_actions)
        except (InvalidActionError, IllegalActionError) as exc:
            return Answer(None, used, ILLEGAL, describe_reply(reply), str(exc))
        return Answer(action, used, answered=str(action))  # the reply in words only when it is at fault

    def events(self, game_id: str, events: Sequence[Event]) -> None:
        """Buffer public events; they go out with (or before) this seat's next message, or within EVENT_DELAY_S.

        A seat that is not deciding gets the events of several actions in one
        message, and a seat about to decide gets them inside its
        DecisionRequest (``events``): fewer writes per decision. The order
        never changes.
        """
        if self.session.stream is None:
            return  # a reconnecting bot gets GameStart and its pending decision; the view says the rest
        for item in _event_items(events, game_id):
            if item.__class__ is bytes:
                self._held.append(item)
            else:  # a RoundResult: the events held before it go first, in a batch of their own
                self._close_batch(game_id)
                self._before.append(item)
        self._game_id = game_id
        if self._flush_timer is None:  # left armed across decisions: one timer per EVENT_DELAY_S, not per action
            self._flush_timer = asyncio.get_running_loop().call_later(EVENT_DELAY_S, self._on_timer)

    def _close_batch(self, game_id: str) -> None:
        if self._held:
            self._before.append(wire.event_batch_response(game_id, self._held))
            self._held = []

    def _send_before(self) -> None:
        if self._before:
            before, self._before = self._before, []
            stream = self.session.stream
            if stream is not None:
                for message in before:
                    stream.send(message)

    def _take_held(self) -> list[bytes]:
        """The held events, to ride inside the next DecisionRequest (one write less per decision).

        Only the events after the last RoundResult are held: what came before
        it is sent first, so the order never changes.
        """
        self._send_before()
        held, self._held = self._held, []
        return held

    def _on_timer(self) -> None:
        self._flush_timer = None
        self._close_batch(self._game_id)
        self._send_before()

    def _flush(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        self._close_batch(self._game_id)
        self._send_before()

    def strike(self, strike: Strike) -> None:
        self._flush()
        self.session.send(pb.PlayResponse(strike=convert.strike_to_proto(strike)))

    def forfeited(self) -> None:
        """From now on the stand-in plays: a decision still pending is handed to it at once."""
        self.benched = True
        self._benched_event.set()
        pending = self._pending
        if pending is not None and pending.waiter is not None:
            _wake(pending.waiter)

    def game_over(self, result: GameResult) -> None:
        self._flush()
        self.session.send(pb.PlayResponse(game_over=convert.game_over_to_proto(result)))

    async def close(self) -> None:
        self._flush()
        if self.session.seat is self:
            self.session.seat = None
        if self._release_lock and self.session.lock.locked():
            self._release_lock = False
            self.session.lock.release()
