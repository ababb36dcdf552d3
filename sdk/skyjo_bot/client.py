"""Run a :class:`~skyjo_bot.Bot` against a skyjo-ref referee over gRPC.

An asyncio core (:class:`BotClient`) with a synchronous face (:func:`run`):

    from skyjo_bot import run
    run(MyBot())                      # address and token from SKYJO_ADDR / SKYJO_TOKEN

The client opens one ``BotService.Play`` stream, says Hello and plays game
after game: it calls the bot's ``on_game_start``, ``decide``, ``on_event`` and
``on_game_over`` and answers each DecisionRequest with its request id.

- The bot's code runs on the network thread by default (``inline=True``): the
  lowest latency and CPU per decision. A slow ``decide`` does not endanger the
  connection (gRPC answers keepalive pings in its own threads; a 40 s
  ``decide`` under 20 s pings was checked); messages wait until it returns.
  ``inline=False`` runs the bot's code in one worker thread, in message order,
  so the client keeps reading while it thinks (it costs 0.1-0.2 ms a decision).
- When the stream drops, the client reconnects with exponential backoff and
  jitter; the referee re-sends the pending decision and the client answers it
  again (from the answer it already computed, if any) without a second
  ``decide`` call. It gives up after ``give_up_after`` seconds without a
  session.
- If ``decide`` raises (or returns something that is not an Action), the error
  is logged with the decision, and the client replies ``DecisionReply.error``
  with the exception's text: the referee strikes the seat at once and plays
  its default action, and the record says why. The process goes on.
- It ends cleanly when the referee ends the session (stream status OK), on
  SIGINT/SIGTERM (with :func:`run`) or on :meth:`BotClient.stop`, whatever the
  connection is doing; :func:`run` ends the process itself if that takes more
  than :data:`STOP_DEADLINE_S`. A refused session (bad token, replaced by
  another connection with the same token, unsupported protocol) raises
  :class:`SessionRefused` (an INTERNAL status before Welcome is checked again
  with the synchronous client: grpc/grpc#36066); giving up raises
  :class:`ConnectionLost`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import queue
import random
import signal
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import grpc
import grpc.aio
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb

from skyjo_bot import convert
from skyjo_bot.address import check_address
from skyjo_bot.bot import Bot
from skyjo_bot.tls import ClientTls, client_tls
from skyjo_bot.types import Action, GameStart, Rules, View

log = logging.getLogger("skyjo_bot")

PLAY_METHOD: Final = "/skyjo.v1.BotService/Play"

#: Channel options: detect a dead referee, cap message sizes far below the 4 MiB default.
CHANNEL_OPTIONS: Final[list[tuple[str, Any]]] = [
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.max_receive_message_length", 1 << 20),
    ("grpc.max_send_message_length", 64 << 10),
    ("grpc.enable_retries", 0),
]

#: Statuses after which reconnecting cannot help.
_FATAL: Final = {
    grpc.StatusCode.UNAUTHENTICATED: "the referee refused the token",
    grpc.StatusCode.PERMISSION_DENIED: "the referee refused the token",
    grpc.StatusCode.INVALID_ARGUMENT: "the referee refused the session",
    grpc.StatusCode.FAILED_PRECONDITION: "the referee refused the session",
    grpc.StatusCode.UNIMPLEMENTED: "the server at this address is not a skyjo-ref referee",
    grpc.StatusCode.ABORTED: "another connection with the same token replaced this one",
}

T = TypeVar("T")


class SessionRefused(Exception):
    """The referee refused or ended the session for good (bad token, replaced, ...)."""


class ConnectionLost(Exception):
    """No session could be (re)established within the give-up time."""


@dataclass
class Stats:
    """What a client did, for logs and tests."""

    games: int = 0
    decisions: int = 0
    decide_errors: int = 0
    strikes: int = 0
    sessions: int = 0  # streams that got a Welcome (1 + reconnects)


class _Worker:
    """One daemon thread that runs the bot's code in submission order.

    Daemon, so a bot stuck in ``decide`` never keeps the process alive after
    a shutdown was asked for.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], asyncio.Future[Any]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="skyjo-bot-worker", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._jobs.put((fn, future))
        return future

    def close(self) -> None:
        self._jobs.put(None)

    def _loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, future = job
            loop = future.get_loop()
            try:
                result = fn()
            except BaseException as exc:
                self._deliver(loop, future, None, exc)
            else:
                self._deliver(loop, future, result, None)

    @staticmethod
    def _deliver(
        loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], result: Any, exc: BaseException | None
    ) -> None:
        def settle() -> None:
            if future.done():
                return
            if exc is not None:
                future.set_exception(exc)
            else:
                future.set_result(result)

        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle)


class BotClient:
    """Plays ``bot`` on the referee at ``addr`` with ``token`` until the session ends.

    ``addr`` and ``token`` default to the environment variables ``SKYJO_ADDR``
    and ``SKYJO_TOKEN``; ``ca_file`` (and ``client_cert``/``client_key``) to
    ``SKYJO_CA_FILE`` (``SKYJO_CLIENT_CERT``/``SKYJO_CLIENT_KEY``): with a CA
    file the bot speaks TLS to a TCP address (see :mod:`skyjo_bot.tls`).
    """

    def __init__(
        self,
        bot: Bot,
        addr: str | None = None,
        token: str | None = None,
        *,
        version: str | None = None,
        inline: bool = True,
        give_up_after: float = 60.0,
        backoff_base: float = 0.1,
        backoff_max: float = 5.0,
        ca_file: str | None = None,
        client_cert: str | None = None,
        client_key: str | None = None,
    ) -> None:
        addr = addr or os.environ.get("SKYJO_ADDR", "")
        token = token or os.environ.get("SKYJO_TOKEN", "")
        if not addr:
            raise ValueError("no referee address: pass --addr HOST:PORT or set SKYJO_ADDR")
        if not token:
            raise ValueError("no bot token: pass --token TOKEN or set SKYJO_TOKEN (skyjo-ref serve issues tokens)")
        self.bot = bot
        self.addr = check_address(addr, "referee address")
        tls = client_tls(ca_file, client_cert, client_key)  # ValueError: a file that cannot be used
        self.tls: ClientTls | None = None if self.addr.startswith("unix:") else tls
        self._token = token
        self.version = version if version is not None else str(bot.version)
        self.inline = inline
        self.give_up_after = give_up_after
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.stats = Stats()
        self.seat_name = ""
        #: Set once the referee has answered Hello (a session holds): wait on it instead of polling stats.
        self.welcomed = asyncio.Event()
        self._games: dict[str, GameStart] = {}
        # decision -> the reply being computed or computed (kept for re-sent requests)
        self._answers: OrderedDict[bytes, asyncio.Future[pb.DecisionReply]] = OrderedDict()
        self._latest_request = 0
        self._struck: set[int] = set()
        self._worker: _Worker | None = None
        self._stop: asyncio.Event | None = None
        self._session: asyncio.Task[str] | None = None
        self._call: grpc.aio.StreamStreamCall[pb.PlayRequest, pb.PlayResponse] | None = None
        # events are converted and handed to the bot only if it looks at them
        self._wants_events = getattr(type(bot), "on_event", Bot.on_event) is not Bot.on_event

    # ------------------------------------------------------------------ public

    def stop(self) -> None:
        """Ask :meth:`run` to end: the stream is closed and run returns (call from the loop's thread).

        The session's task is cancelled too, not only the call: a call whose
        stream never opened (a server that accepts TCP and never answers)
        keeps ``call.write`` waiting after ``call.cancel()`` (grpc.aio waits
        for the initial metadata to be sent, which never happens).
        """
        if self._stop is not None:
            self._stop.set()
        if self._call is not None:
            self._call.cancel()
        if self._session is not None:
            self._session.cancel()

    async def run(self) -> None:
        """Play until the referee ends the session or :meth:`stop` is called."""
        self._stop = asyncio.Event()
        self._worker = None if self.inline else _Worker()
        attempt = 0
        lost_since = time.monotonic()
        try:
            while not self._stop.is_set():
                welcomed_before = self.stats.sessions
                self._session = asyncio.ensure_future(self._one_session())
                try:
                    outcome = await self._session
                except asyncio.CancelledError:
                    if self._stop.is_set():  # stopped before the session task ever ran
                        return
                    raise
                finally:
                    self._session = None
                if outcome == "closed" or self._stop.is_set():
                    return
                if self.stats.sessions > welcomed_before:
                    attempt, lost_since = 0, time.monotonic()
                waited = time.monotonic() - lost_since
                if waited > self.give_up_after:
                    raise ConnectionLost(
                        f"no session with the referee at {self.addr} for {waited:.0f} s ({outcome}): giving up"
                        + self._closed_hint(outcome)
                    )
                delay = min(self.backoff_max, self.backoff_base * 2**attempt) * random.uniform(0.5, 1.0)
                attempt += 1
                log.warning("stream to %s lost (%s); reconnecting in %.2f s", self.addr, outcome, delay)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):  # not wait_for: 3.11's may swallow a cancel of run()
                        await self._stop.wait()
        finally:
            if self._worker is not None:
                self._worker.close()

    def _closed_hint(self, outcome: str) -> str:
        """What a connection closed before HTTP/2 may mean (TLS is the usual cause), for the give-up message."""
        closed = ("Socket closed", "reset by peer", "Broken pipe", "handshake", "Handshake")
        if not any(word in outcome for word in closed):
            return ""
        if self.tls is None:
            return (
                "; the referee closed the connection at once: if it serves TLS, set SKYJO_CA_FILE (--ca-file) to its CA"
            )
        if self.tls.cert is None:
            return (
                "; the referee closed the connection at once: if it asks for client certificates, set "
                "SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY"
            )
        return ""

    # ------------------------------------------------------------------ one stream

    async def _one_session(self) -> str:
        """One Play stream, until it ends; returns ``"closed"`` or why it broke (raises when fatal)."""
        assert self._stop is not None
        if self.tls is not None:
            channel = grpc.aio.secure_channel(self.addr, self.tls.credentials(), options=CHANNEL_OPTIONS)
        else:
            channel = grpc.aio.insecure_channel(self.addr, options=CHANNEL_OPTIONS)
        play = channel.stream_stream(
            PLAY_METHOD,
            request_serializer=pb.PlayRequest.SerializeToString,
            response_deserializer=pb.PlayResponse.FromString,
        )
        call: grpc.aio.StreamStreamCall[pb.PlayRequest, pb.PlayResponse] = play(
            None, metadata=(("authorization", f"Bearer {self._token}"),)
        )
        self._call = call
        # request ids grow within one referee's life; a restarted referee starts again
        self._latest_request = 0
        self._struck = set()
        write_lock = asyncio.Lock()
        tasks: set[asyncio.Task[None]] = set()
        welcomed_before = self.stats.sessions
        try:
            await call.write(convert.hello(self.bot.name, self.version))
            log.debug("-> hello name=%s version=%s", self.bot.name, self.version)
            # read() rather than ``async for``: no async generator between gRPC and the handler
            while (msg := await call.read()) is not grpc.aio.EOF:  # type: ignore[attr-defined]
                assert isinstance(msg, pb.PlayResponse)
                task = await self._handle(msg, call, write_lock)
                if task is not None:
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
            code = await call.code()
            if code == grpc.StatusCode.OK:
                log.info("the referee ended the session")
                return "closed"
            return f"stream ended with {code.name}"
        except grpc.aio.AioRpcError as exc:
            if self._stop.is_set():
                return "stopped"
            code, details = exc.code(), exc.details()
            if code == grpc.StatusCode.INTERNAL and self.stats.sessions == welcomed_before:
                # grpc/grpc#36066: a stream the referee refuses at once may surface here as INTERNAL
                # ("Internal error from Core") instead of the referee's status: ask again, reliably
                log.debug("stream ended with INTERNAL before Welcome (%s); asking the referee why", details)
                code, details = await self._why_refused(code, details or "")
            fatal = _FATAL.get(code)
            if fatal is not None:
                raise SessionRefused(f"{fatal}: {code.name}: {details}") from None
            return f"{code.name}: {details}"
        except asyncio.CancelledError:
            if self._stop.is_set():
                return "stopped"
            raise
        finally:
            self._call = None
            call.cancel()
            for task in tasks:
                task.cancel()
            await channel.close(None)

    async def _why_refused(self, code: grpc.StatusCode, details: str) -> tuple[grpc.StatusCode, str]:
        """The status the referee gives a fresh stream before Welcome, seen by the synchronous client.

        The synchronous gRPC client reports the server's status even when the
        refusal races our Hello. A Welcome means the token is good: the
        original (transient) status is kept and the client reconnects as usual.
        """
        hello = convert.hello(self.bot.name, self.version)
        answer: asyncio.Future[tuple[grpc.StatusCode, str] | None] = asyncio.get_running_loop().create_future()
        # a daemon thread, not the default executor: a stop never waits for it
        threading.Thread(
            target=_refusal_in_thread,
            args=(self.addr, self._token, hello, _WHY_TIMEOUT_S, answer, self.tls),
            name="skyjo-why-refused",
            daemon=True,
        ).start()
        refusal = await answer
        if refusal is None:
            return code, details
        return refusal

    async def _handle(
        self,
        msg: pb.PlayResponse,
        call: grpc.aio.StreamStreamCall[pb.PlayRequest, pb.PlayResponse],
        write_lock: asyncio.Lock,
    ) -> asyncio.Task[None] | None:
        kind = msg.WhichOneof("message")
        if log.isEnabledFor(logging.DEBUG):
            log.debug("<- %s %s", kind, str(getattr(msg, kind or "welcome")).replace("\n", " ")[:400])
        if kind == "decision":
            request = msg.decision
            self._latest_request = max(self._latest_request, request.request_id)
            if self._wants_events and len(request.events):  # events that came with the request go first
                for event in convert.events_from_proto(request):
                    self._hook(self.bot.on_event, event)
            key = _decision_key(request)
            if self._worker is None and key not in self._answers:
                await self._answer(request, key, call, write_lock)  # inline: no task, no extra loop turn
                return None
            return asyncio.create_task(self._answer(request, key, call, write_lock))
        if kind == "events":
            if self._wants_events:
                for event in convert.events_from_proto(msg.events):
                    self._hook(self.bot.on_event, event)
        elif kind == "game_start":
            start = convert.game_start_from_proto(msg.game_start)
            if start.game_id not in self._games:  # a re-sent GameStart after a reconnect is not news
                self._games[start.game_id] = start
                self._hook(self.bot.on_game_start, start)
        elif kind == "round_result":
            if self._wants_events:
                self._hook(self.bot.on_event, convert.round_result_from_proto(msg.round_result))
        elif kind == "game_over":
            result = convert.game_over_from_proto(msg.game_over)
            self._games.pop(result.game_id, None)
            self.stats.games += 1
            if self._wants_events:
                self._hook(self.bot.on_event, convert.game_end_event(result))
            self._hook(self.bot.on_game_over, result)
        elif kind == "strike":
            strike = convert.strike_from_proto(msg.strike)
            self._struck.add(strike.request_id)
            self.stats.strikes += 1
            log.warning(
                "strike %d/%d in game %s (request %d, %s): %s; the referee played %s",
                strike.strikes,
                strike.max_strikes,
                strike.game_id,
                strike.request_id,
                strike.reason,
                strike.detail,
                strike.played if strike.played is not None else "nothing",
            )
        elif kind == "welcome":
            self.seat_name = msg.welcome.seat_name
            self.stats.sessions += 1
            self.welcomed.set()
            log.info(
                "connected to %s as %r (protocol %d)", self.addr, msg.welcome.seat_name, msg.welcome.protocol_version
            )
        else:
            log.debug("skipping unknown message %r", kind)
        return None

    # ------------------------------------------------------------------ the bot's code

    def _hook(self, fn: Callable[[Any], None], arg: Any) -> None:
        """Call a bot hook in order with decisions; its errors are logged, never fatal."""

        def call() -> None:
            try:
                fn(arg)
            except Exception:
                log.exception("%s.%s raised on %r", type(self.bot).__name__, fn.__name__, arg)

        if self._worker is None:
            call()
        else:
            self._worker.submit(call)

    async def _answer(
        self,
        request: pb.DecisionRequest,
        key: bytes,
        call: grpc.aio.StreamStreamCall[pb.PlayRequest, pb.PlayResponse],
        write_lock: asyncio.Lock,
    ) -> None:
        rid = request.request_id
        future = self._answers.get(key)
        if future is not None:  # a re-sent request reuses the answer being (or already) computed
            reply = await asyncio.shield(future)
        elif self._worker is None:
            future = asyncio.get_running_loop().create_future()
            self._remember(key, future)
            try:
                reply = await self._decide(request)
            except BaseException:  # cancelled: a re-sent request must compute it again
                self._answers.pop(key, None)
                future.cancel()
                raise
            future.set_result(reply)
        else:
            future = asyncio.ensure_future(self._decide(request))
            self._remember(key, future)
            reply = await asyncio.shield(future)
        if rid in self._struck or rid < self._latest_request:
            log.warning("decision %d came too late (the referee moved on); not sent", rid)
            return
        async with write_lock:
            try:
                await call.write(pb.PlayRequest(reply=reply))
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError, grpc.aio.UsageError) as exc:
                log.debug("reply %d not sent, the stream is gone: %s", rid, exc)
                return
        if log.isEnabledFor(logging.DEBUG):
            log.debug("-> reply %d %s", rid, str(reply).replace("\n", " "))

    def _remember(self, key: bytes, future: asyncio.Future[pb.DecisionReply]) -> None:
        self._answers[key] = future
        while len(self._answers) > 8:
            self._answers.popitem(last=False)

    async def _decide(self, request: pb.DecisionRequest) -> pb.DecisionReply:
        rid = request.request_id
        start = self._games.get(request.game_id)
        if start is None:
            log.warning(
                "decision %d for game %r that never started here; guessing players and rules", rid, request.game_id
            )
            n = len(request.view.grids)
            start = GameStart(request.game_id, request.view.seat, tuple(f"seat {i}" for i in range(n)), Rules())
        try:
            view = convert.decision_request_from_proto(request, start)
        except ValueError as exc:
            log.error("decision %d is malformed: %s", rid, exc)
            return convert.error_reply(rid, f"the bot could not read the request: {exc}")
        self.stats.decisions += 1
        try:
            answer: object
            if self._worker is None:
                answer = self.bot.decide(view)
            else:
                answer = await self._worker.submit(lambda: self.bot.decide(view))
            action = answer
            if not isinstance(action, Action) and inspect.isawaitable(answer):  # an async def decide
                action = await answer
            if not isinstance(action, Action):
                raise TypeError(f"decide returned {action!r}, expected an Action (one of view.legal_actions)")
        except Exception as exc:
            self.stats.decide_errors += 1
            log.exception("decide raised on decision %d (%s)", rid, _describe(view))
            return convert.error_reply(rid, f"{type(exc).__name__}: {exc}{_raised_at(exc)}")
        if action not in view.legal_actions:
            log.warning("decide chose %s, which is not legal in decision %d (%s)", action, rid, _describe(view))
        return convert.reply_to_proto(rid, action, view.legal_actions)


#: How long the second look at a refused stream may take.
_WHY_TIMEOUT_S: Final = 10.0


def _refusal_in_thread(
    addr: str,
    token: str,
    hello: pb.PlayRequest,
    timeout_s: float,
    answer: asyncio.Future[tuple[grpc.StatusCode, str] | None],
    tls: ClientTls | None = None,
) -> None:
    """Open a Play stream with the synchronous client, say Hello; deliver its status (None: welcomed)."""
    result: tuple[grpc.StatusCode, str] | None
    finished = threading.Event()

    def requests() -> Any:
        yield hello
        finished.wait(timeout_s)  # keep our side open: closing it would be a bot leaving

    try:
        channel = (
            grpc.secure_channel(addr, tls.credentials(), options=CHANNEL_OPTIONS)
            if tls is not None
            else grpc.insecure_channel(addr, options=CHANNEL_OPTIONS)
        )
        with channel:
            play = channel.stream_stream(
                PLAY_METHOD,
                request_serializer=pb.PlayRequest.SerializeToString,
                response_deserializer=pb.PlayResponse.FromString,
            )
            responses: Any = play(requests(), metadata=(("authorization", f"Bearer {token}"),), timeout=timeout_s)
            try:
                result = (grpc.StatusCode.OK, "the referee ended the session")
                for response in responses:
                    if response.WhichOneof("message") == "welcome":
                        result = None
                        break
            except grpc.RpcError as exc:
                call = exc if isinstance(exc, grpc.Call) else None
                result = (
                    (call.code(), call.details() or "") if call is not None else (grpc.StatusCode.UNKNOWN, str(exc))
                )
            finally:
                finished.set()
                responses.cancel()
    except Exception as exc:  # the probe must never take the bot down
        result = (grpc.StatusCode.UNKNOWN, f"{type(exc).__name__}: {exc}")
    _Worker._deliver(answer.get_loop(), answer, result, None)


def _decision_key(request: pb.DecisionRequest) -> bytes:
    """What identifies a decision across a re-send: its id, game and view.

    Not the time left or the events that came with it (they differ when it is
    sent again), and not the id alone: a restarted referee counts ids from 1 again.
    The legal actions follow from the view and the game's rules (only their
    count is kept): one serialisation per decision, not one per action.
    """
    return b"%d|%d|%s|%s" % (
        request.request_id,
        len(request.legal_actions),
        request.game_id.encode(),
        request.view.SerializeToString(deterministic=True),
    )


#: The SDK's own folder: an exception raised in it (``Action.swap(99)`` checks its argument) is blamed on the bot's
#: line that called it, which is the line to fix.
_SDK_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _raised_at(exc: BaseException) -> str:
    """`` (at bot.py:12 in decide)``: the bot's innermost line the exception passed through (not the SDK's), so the
    referee can show it."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [frame for frame in frames if not os.path.abspath(frame.filename).startswith(_SDK_DIR)]
    if not (mine or frames):
        return ""
    last = (mine or frames)[-1]
    return f" (at {last.filename}:{last.lineno} in {last.name})"


def _describe(view: View) -> str:
    return (
        f"game round {view.round}, seat {view.seat}, {view.decision.value}, hand {view.hand}, "
        f"legal: {', '.join(str(a) for a in view.legal_actions)}"
    )


# ---------------------------------------------------------------------- sync face


#: After SIGINT/SIGTERM, :func:`run` ends the process itself if the clean stop takes longer than this.
STOP_DEADLINE_S: Final = 0.75


def run(
    bot: Bot,
    addr: str | None = None,
    token: str | None = None,
    **options: Any,
) -> Stats:
    """Play ``bot`` on a referee until the session ends; SIGINT and SIGTERM end it cleanly.

    Blocking; returns the client's :class:`Stats`. Options are those of :class:`BotClient`.

    A signal closes the session; if that has not finished within
    :data:`STOP_DEADLINE_S` (a ``decide`` that blocks the event loop, a
    connection stuck in a state gRPC cannot cancel), the process exits at
    once with status 0: a bot never outlives the SIGTERM that stops it.
    """
    client = BotClient(bot, addr, token, **options)
    deadline = _StopDeadline()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        previous: dict[signal.Signals, Any] = {}

        def on_signal(signum: int, frame: object) -> None:
            # a plain signal handler, not loop.add_signal_handler: it runs even while decide blocks the loop
            sig = signal.Signals(signum)
            deadline.arm(sig)
            with contextlib.suppress(RuntimeError):  # the loop is closing: the deadline ends the process
                loop.call_soon_threadsafe(_on_signal, client, sig)

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous[sig] = signal.signal(sig, on_signal)
        try:
            await client.run()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    try:
        asyncio.run(main())
    finally:
        deadline.disarm()
    return client.stats


def _on_signal(client: BotClient, sig: signal.Signals) -> None:
    log.info("%s: closing the session", sig.name)
    client.stop()


class _StopDeadline:
    """Ends the process if :func:`run` has not returned :data:`STOP_DEADLINE_S` after a signal."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._signal = signal.SIGTERM
        self._thread: threading.Thread | None = None

    def arm(self, sig: signal.Signals) -> None:
        """Start the clock (from the signal handler: no locks; a second signal changes nothing)."""
        if self._thread is not None or self._done.is_set():
            return
        self._signal = sig
        self._thread = threading.Thread(target=self._watch, name="skyjo-stop-deadline", daemon=True)
        self._thread.start()

    def disarm(self) -> None:
        self._done.set()

    def _watch(self) -> None:
        if self._done.wait(STOP_DEADLINE_S):
            return
        log.warning("%s: the session did not close within %.2f s; exiting now", self._signal.name, STOP_DEADLINE_S)
        for handler in logging.getLogger().handlers + log.handlers:
            with contextlib.suppress(Exception):
                handler.flush()
        os._exit(0)
