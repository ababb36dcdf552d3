"""The referee server: its sessions (tokens), its matches, and the grpc server it starts and stops.

A ``grpc.aio`` server: one event loop holds every bot stream and every game
(a sync server would hold a thread per stream). It knows nothing of
tournaments; the match runner (``skyjo_ref.match``) plays the games. Beside
it: ``config.py`` (ServerConfig, checked), ``services.py`` (BotService and
MatchService over gRPC), ``match_proto.py`` (a match spec on the wire).
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import itertools
import logging
import secrets
import socket
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer as AsyncHealthServicer
from grpc_reflection.v1alpha import reflection
from skyjo_bot import Bot
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
from skyjo_proto.skyjo.v1 import skyjo_pb2_grpc as pb_grpc

from skyjo_ref.match import GamePlan, MatchSpec, MatchSpecError, Seat, SeatSpec, builtin_seat, run_match
from skyjo_ref.match.runner import new_seed
from skyjo_ref.match.threaded import BotThread, ThreadedSeat
from skyjo_ref.records import dumps
from skyjo_ref.server.config import ServerConfig, grpc_server_options
from skyjo_ref.server.guard import PeerThrottle, raise_open_files_limit
from skyjo_ref.server.services import BotServicer, MatchServicer, add_bot_service
from skyjo_ref.server.session import RemoteSeat, Session

log = logging.getLogger(__name__)

#: A match watched to its end is forgotten (records freed) this long after: long tournaments stay small.
FORGET_WATCHED_MATCH_S: Final = 60.0


@dataclass(slots=True)
class _Match:
    id: str
    spec: MatchSpec
    finished: list[tuple[int, str]] = field(default_factory=list)  # (game index, record JSON)
    done: bool = False
    error: str = ""
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    forget_scheduled: bool = False

    def notify(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()


#: How long a stopped referee waits for its RPC handlers to end (they end at once on their cancellation; the cap
#: only keeps a handler that ignores it from hanging the stop).
SETTLE_CAP_S: Final = 10.0

if TYPE_CHECKING:  # generic in the type stubs only
    _ServerInterceptor = grpc.aio.ServerInterceptor[Any, Any]
    _MethodHandler = grpc.RpcMethodHandler[Any, Any]
else:
    _ServerInterceptor = grpc.aio.ServerInterceptor
    _MethodHandler = grpc.RpcMethodHandler


class _RpcTasks(_ServerInterceptor):
    """Remembers the task each RPC of one server runs in, so that :meth:`RefereeServer.stop` can wait for grpc's own
    tasks around it to finish before it returns.

    Why: grpc's aio server runs each RPC as a task (``HandleExceptions[...]``) awaited by another
    (``_schedule_rpc_coro``) that catches *everything* there, CancelledError included, and prints its traceback
    with ``traceback.print_exc()``. ``server.stop()`` returns once the calls are over in grpc's core, possibly
    before those tasks ran to their end; if the event loop then closes (``asyncio.run`` cancels what is left), the
    awaiting task is cancelled at that ``await`` and the user sees a ``_schedule_rpc_coro ... CancelledError``
    traceback (grpc/grpc#37239 is the same gap seen from the other side: stop() does not await its tasks)."""

    def __init__(self) -> None:
        # an RPC's task stays here while anything references it: while grpc's awaiting task is alive, at least
        self.tasks: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[_MethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> _MethodHandler:
        task = asyncio.current_task()  # grpc resolves the handler inside the RPC's own task
        if task is not None:
            self.tasks.add(task)
        return await continuation(handler_call_details)

    async def settle(self) -> None:
        """Once the server has stopped: wait until every RPC task of this server, and every grpc task awaiting
        one, has finished, so that closing the loop afterwards cancels none of them where grpc prints."""
        rpcs = set(self.tasks)
        running = [task for task in rpcs if not task.done()]
        if running:  # the calls are cancelled by now: each handler ends on its CancelledError
            _, stuck = await asyncio.wait(running, timeout=SETTLE_CAP_S)
            if stuck:  # a handler that ignores its cancellation must not hang the stop: it is reported instead
                log.warning("%d RPC handlers still running %.0f s after the referee stopped", len(stuck), SETTLE_CAP_S)
                return
        # grpc's _schedule_rpc_coro tasks still suspended on one of them (private attribute of asyncio's Task,
        # the only link to them: grpc keeps them in a local set of its serving loop)
        awaiting = [
            task
            for task in asyncio.all_tasks()
            if not task.done() and getattr(task, "_fut_waiter", None) in rpcs and task is not asyncio.current_task()
        ]
        if awaiting:
            await asyncio.wait(awaiting)


class RefereeServer:
    """A referee: ``await start()``, read ``address`` and ``control_token``, ``await stop(grace)``.

    Bots connect to BotService with a bot token (``config.tokens``, or
    :meth:`issue_token` / MatchService.IssueToken); matches start through
    MatchService with the control token, or directly with :meth:`start_match`.
    """

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config or ServerConfig()
        self.control_token = self.config.control_token or secrets.token_urlsafe(24)
        self.sessions: dict[str, Session] = {}
        for name, token in self.config.tokens.items():
            self.sessions[token] = Session(token, name, permanent=True)
        self._tokens_changed = asyncio.Event()
        self.matches: dict[str, _Match] = {}
        self.request_ids = itertools.count(1)  # unique across the server: a token cannot guess another's
        self._match_ids = itertools.count(1)
        self._server: grpc.aio.Server | None = None
        self._rpc_tasks = _RpcTasks()
        self._health: AsyncHealthServicer | None = None
        self.address = ""
        self.port = 0
        self.unix_address: str | None = None  # "unix:PATH" when config.unix_socket is set
        self.in_process: dict[str, tuple[BotThread, bool]] = {}  # token -> trusted bot played here, block_loop
        self.throttle = PeerThrottle(
            self.config.failed_token_burst,
            self.config.failed_token_refill_ms / 1000,
            loopback=self.config.throttle_loopback,
        )

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Listen (TLS on the TCP address when ``config.tls`` is set); OSError or TlsError when it cannot."""
        c = self.config
        raise_open_files_limit()  # before the options: the default connection cap follows the limit
        credentials = c.tls.credentials() if c.tls is not None else None  # TlsError names the bad file
        server = grpc.aio.server(options=grpc_server_options(c), interceptors=[self._rpc_tasks])
        add_bot_service(BotServicer(self), server)
        pb_grpc.add_MatchServiceServicer_to_server(MatchServicer(self), server)  # type: ignore[no-untyped-call]
        self._health = AsyncHealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        names = (
            pb.DESCRIPTOR.services_by_name["BotService"].full_name,
            pb.DESCRIPTOR.services_by_name["MatchService"].full_name,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        )
        reflection.enable_server_reflection(names, server)
        on_unix = c.address.startswith("unix:")
        if not on_unix:
            _refuse_taken_port(c.address)
        try:
            if credentials is not None and not on_unix:
                port = server.add_secure_port(c.address, credentials)
            else:
                port = server.add_insecure_port(c.address)
        except RuntimeError:  # grpc says only "Failed to bind"
            raise OSError(
                f"cannot listen on {c.address}: the port is in use (another referee?) "
                "or the host is not an address of this machine"
            ) from None
        if port == 0:
            raise OSError(f"cannot listen on {c.address}: the address is in use or invalid")
        if c.unix_socket is not None:
            self.unix_address = f"unix:{c.unix_socket}"
            try:
                server.add_insecure_port(self.unix_address)
            except RuntimeError:
                raise OSError(f"cannot listen on {self.unix_address}: is its folder writable?") from None
        await server.start()
        for name in names[:3]:
            await self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        await self._health.set("", health_pb2.HealthCheckResponse.SERVING)
        host = c.address.rsplit(":", 1)[0] or "127.0.0.1"
        if host in ("0.0.0.0", "[::]", "::"):
            host = "127.0.0.1"
        self.port = port
        self.address = c.address if on_unix else f"{host}:{port}"
        self._server = server
        log.info("referee listening on %s", self.address)

    async def stop(self, grace: float | None = 1.0) -> None:
        """Stop matches and streams (finished games are already reported), then the server."""
        if self._health is not None:
            await self._health.enter_graceful_shutdown()
        for match in self.matches.values():
            if match.task is not None and not match.task.done():
                match.task.cancel()
        for match in list(self.matches.values()):
            if match.task is not None:
                await asyncio.gather(match.task, return_exceptions=True)
        for session in self.sessions.values():
            if session.stream is not None:
                session.stream.close()  # OK: the session is over (the SDK exits 0)
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None
            await self._rpc_tasks.settle()  # then grpc's tasks are over: closing the loop cannot make it print

    async def wait_for_termination(self) -> None:
        if self._server is not None:
            await self._server.wait_for_termination()

    # ------------------------------------------------------------------ tokens

    def issue_token(self, name: str) -> str:
        """A token for a seat-holder named ``name``: the one the referee was given for that name
        (``serve --token NAME=TOKEN``), so the bot already started with it plays; else a fresh one,
        released (forgotten) once unused for a while: see :meth:`_let_go`."""
        known = self.config.tokens.get(name)
        if known is not None:
            return known
        token = secrets.token_urlsafe(18)
        session = self.sessions[token] = Session(token, name or "bot")
        self._release_later(session, self.config.token_unused_ms)
        return token

    def add_in_process_bot(self, name: str, bot: Bot, *, block_loop: bool = False) -> str:
        """A token whose seats this referee plays itself with ``bot`` on its own thread, without gRPC
        (trusted bots only: see :mod:`skyjo_ref.match.threaded`). ``block_loop``: only when every
        other seat of its matches is in-process or built in."""
        token = secrets.token_urlsafe(18)
        self.sessions[token] = Session(token, name or "bot", permanent=True)  # lives as long as the referee
        self.in_process[token] = (BotThread(bot, name), block_loop)
        return token

    def _hold(self, session: Session) -> None:
        """A Play call or an unfinished match uses the token: it is not released meanwhile."""
        session.users += 1
        session.used = True
        if session.expiry is not None:
            session.expiry.cancel()
            session.expiry = None

    def _let_go(self, session: Session) -> None:
        """A Play call ended, or a match naming the token did.

        An issued token that nothing uses any more (no Play call open, no
        unfinished match naming it) is released ``token_idle_ms`` later, and
        one never used ``token_unused_ms`` after it was issued, unless it is
        used again meanwhile. Released, it opens no stream and seats no
        match: everything it held is freed. Tokens from the config (or
        ``--token``) are never released.
        """
        session.users -= 1
        if session.users == 0:
            self._release_later(session, self.config.token_idle_ms)

    def _release_later(self, session: Session, delay_ms: int) -> None:
        if session.permanent:
            return
        if session.expiry is not None:
            session.expiry.cancel()
        session.expiry = asyncio.get_running_loop().call_later(delay_ms / 1000, self._release, session)

    def _release(self, session: Session) -> None:
        session.expiry = None
        if session.users == 0 and self.sessions.get(session.token) is session:
            del self.sessions[session.token]
            log.debug("token %s released (%s)", session.name, "idle" if session.used else "never used")
            self._tokens_changed.set()
            self._tokens_changed = asyncio.Event()

    async def wait_tokens(self, at_most: int, timeout_s: float) -> bool:
        """True once the referee holds at most ``at_most`` tokens (False after ``timeout_s``)."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while len(self.sessions) > at_most:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return False
            try:
                # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a cancellation
                async with asyncio.timeout(left):
                    await self._tokens_changed.wait()
            except TimeoutError:
                return len(self.sessions) <= at_most
        return True

    def session(self, token: str) -> Session | None:
        return self.sessions.get(token)

    async def wait_connected(self, token: str, timeout_s: float) -> bool:
        """True once a bot holds a live stream with ``token`` (False after ``timeout_s``)."""
        session = self.sessions.get(token)
        if session is None:
            raise KeyError(f"unknown token for {token[:4]}...")
        return await session.wait_connected(timeout_s)

    # ------------------------------------------------------------------ matches

    def start_match(self, spec: MatchSpec) -> str:
        """Check and start a match in the background; returns its id. :class:`MatchSpecError` if unplayable."""
        spec.check()
        for i, seat in enumerate(spec.seats):
            if seat.token is not None and seat.token not in self.sessions:
                raise MatchSpecError(
                    f"seat {i} ({seat.name!r}): unknown bot token: issue one with IssueToken "
                    "(or give it to the referee with --token NAME=TOKEN)"
                )
        if not spec.seed:
            spec = dataclasses.replace(spec, seed=new_seed())
        match_id = f"m{next(self._match_ids)}"
        match = _Match(match_id, spec)
        self.matches[match_id] = match
        held = [self.sessions[seat.token] for seat in spec.seats if seat.token is not None]
        for session in held:
            self._hold(session)
        match.task = asyncio.create_task(self._run(match, held))
        return match_id

    async def _run(self, match: _Match, held: list[Session]) -> None:
        seed = match.spec.seed

        async def make_seat(seat: SeatSpec, plan: GamePlan, slot: int) -> Seat:
            if seat.builtin is not None:
                return builtin_seat(seat, seed, plan, slot)
            assert seat.token is not None
            session = next(s for s in held if s.token == seat.token)  # held: never released meanwhile
            await session.lock.acquire()  # one game at a time per token
            local = self.in_process.get(seat.token)
            if local is not None:
                thread, block_loop = local
                return ThreadedSeat(thread, seat.name, block_loop=block_loop, on_close=session.lock.release)
            return RemoteSeat(session, seat.name, release_lock=True)

        async def on_game(index: int, record: dict[str, Any]) -> None:
            match.finished.append((index, dumps(record)))
            match.notify()

        try:
            await run_match(match.spec, make_seat, on_game, match_id=match.id, request_ids=self.request_ids)
        except asyncio.CancelledError:
            match.error = "the referee stopped before the match finished"
        except Exception as exc:
            log.exception("match %s failed", match.id)
            match.error = f"the match stopped: {type(exc).__name__}: {exc}"
        finally:
            match.done = True
            match.notify()
            for session in held:
                self._let_go(session)

    async def watch(self, match_id: str) -> AsyncIterator[tuple[int, str] | tuple[None, str]]:
        """Every finished game as ``(index, record JSON)`` (earlier ones first), then ``(None, error)``."""
        match = self.matches.get(match_id)
        if match is None:
            raise KeyError(match_id)
        sent = 0
        while True:
            changed = match.changed
            while sent < len(match.finished):
                yield match.finished[sent]
                sent += 1
            if match.done:
                if not match.forget_scheduled:  # watched to the end: free its records soon after
                    match.forget_scheduled = True
                    asyncio.get_running_loop().call_later(FORGET_WATCHED_MATCH_S, self.matches.pop, match_id, None)
                yield (None, match.error)
                return
            await changed.wait()


def _refuse_taken_port(address: str) -> None:
    """Fail when any address ``address`` resolves to has its port taken.

    gRPC binds every resolved address it can and says nothing about the rest:
    ``localhost:PORT`` would listen on [::1] alone while another server holds
    127.0.0.1, and bots would reach that other server.
    """
    host, _, port_text = address.rpartition(":")
    if port_text == "0":
        return
    try:
        infos = socket.getaddrinfo(host.strip("[]") or None, int(port_text), type=socket.SOCK_STREAM)
    except (OSError, ValueError):
        return  # gRPC's own bind reports what is wrong with the address
    for family, kind, proto, _, sockaddr in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(sockaddr)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise OSError(
                        f"cannot listen on {address}: port {port_text} of {sockaddr[0]} is in use (another referee?)"
                    ) from None
