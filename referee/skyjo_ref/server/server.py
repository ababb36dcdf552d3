"""The referee server: BotService (bots take seats) and MatchService (start and follow matches).

A ``grpc.aio`` server: one event loop holds every bot stream and every game
(a sync server would hold a thread per stream). It knows nothing of
tournaments; the match runner (``skyjo_ref.match``) plays the games.
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import errno
import itertools
import logging
import secrets
import socket
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import grpc
from google.protobuf.message import DecodeError
from grpc.aio import EOF  # type: ignore[attr-defined]
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer as AsyncHealthServicer
from grpc_reflection.v1alpha import reflection
from skyjo_bot import Bot, convert
from skyjo_bot.address import check_address
from skyjo_bot.types import RulesError, TimeControl, TimeControlError
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
from skyjo_proto.skyjo.v1 import skyjo_pb2_grpc as pb_grpc

from skyjo_ref.errors import ConfigError
from skyjo_ref.match import GamePlan, MatchSpec, MatchSpecError, Seat, SeatSpec, builtin_seat, run_match
from skyjo_ref.match.runner import new_seed
from skyjo_ref.match.threaded import BotThread, ThreadedSeat
from skyjo_ref.records import dumps
from skyjo_ref.server import wire
from skyjo_ref.server.guard import PeerThrottle, default_max_connections, raise_open_files_limit, token_problem
from skyjo_ref.server.session import RemoteSeat, Session, Stream
from skyjo_ref.server.tls import ServerTls
from skyjo_ref.yamlfile import KeyPath, YamlFileError, dotted, line_of, load_yaml

log = logging.getLogger(__name__)

#: A match watched to its end is forgotten (records freed) this long after: long tournaments stay small.
FORGET_WATCHED_MATCH_S: Final = 60.0
#: Messages over this size are refused by grpc itself (the call just ends); those over
#: ``max_message_bytes`` but under this are refused by the referee, which records the fault.
GRPC_MESSAGE_BACKSTOP: Final = 1024 * 1024
#: When the referee ends a stream, how long a message being written may take to finish first.
WRITE_DRAIN_S: Final = 1.0
#: How long a new Play stream may take to send its Hello.
HELLO_TIMEOUT_S: Final = 30.0


_CONFIG_KEYS: Final = (
    "address",
    "control_token",
    "tokens",
    "time_control",
    "max_message_bytes",
    "token_idle_ms",
    "token_unused_ms",
    "tls_cert",
    "tls_key",
    "tls_client_ca",
    "handshake_timeout_ms",
    "max_connections",
)
#: Issued tokens: released this long after their last use (a stream or a match), or after issue when never used.
TOKEN_IDLE_MS: Final = 60_000
TOKEN_UNUSED_MS: Final = 24 * 3600 * 1000
#: A connection that has not finished its TLS handshake and sent the HTTP/2 preface by then is closed.
HANDSHAKE_TIMEOUT_MS: Final = 10_000
#: A connection with no call open for this long is closed (a client opens a new one when it needs it).
CONNECTION_IDLE_MS: Final = 5 * 60_000
#: Calls open at once on one connection (a bot needs one; a tournament's MatchService client one per game).
MAX_STREAMS_PER_CONNECTION: Final = 1024


@dataclass(slots=True)
class ServerConfig:
    """How a referee runs. ``address`` port 0 picks a free port (tests, ``match``)."""

    address: str = "127.0.0.1:50051"
    control_token: str | None = None  # None: a fresh random one
    tokens: Mapping[str, str] = field(default_factory=dict)  # bot name -> token, known from the start
    time_control: TimeControl = field(default_factory=TimeControl)  # for matches that set none
    max_message_bytes: int = 64 * 1024
    keepalive_time_ms: int = 20_000  # the server pings an idle connection this often
    keepalive_timeout_ms: int = 10_000  # and drops it when the ping is not answered in this time
    min_client_ping_ms: int = 10_000  # clients may ping at most this often (more is a GOAWAY)
    token_idle_ms: int = TOKEN_IDLE_MS  # an issued token is released this long after its last use
    token_unused_ms: int = TOKEN_UNUSED_MS  # and one never used, this long after it was issued
    unix_socket: Path | None = None  # also listen here (bots without network reach the referee by it)
    tls: ServerTls | None = None  # the TCP address serves TLS with these files (a unix socket never does)
    handshake_timeout_ms: int = HANDSHAKE_TIMEOUT_MS  # a connection silent this long after connecting is closed
    max_connections: int | None = None  # None: the descriptor limit less guard.RESERVED_FDS
    failed_token_burst: int = 10  # failed token attempts a TCP peer may make at once,
    failed_token_refill_ms: int = 2_000  # then one more this often (guard.PeerThrottle)
    throttle_loopback: bool = False  # loopback peers are local processes: not throttled (True: tests)

    @classmethod
    def from_file(cls, path: str | Path) -> ServerConfig:
        """Read a YAML config (keys: address, control_token, tokens {name: token}, time_control, max_message_bytes,
        token_idle_ms, token_unused_ms, tls_cert, tls_key, tls_client_ca, handshake_timeout_ms, max_connections).
        TLS file paths are relative to the config file's folder."""
        source = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except IsADirectoryError:
            raise ConfigError(f"{source}: is a folder: expected a referee config file (YAML)") from None
        except OSError as exc:
            raise ConfigError(f"{source}: cannot read: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{source}: not UTF-8 text: expected a referee config (YAML)") from None
        try:
            data, lines = load_yaml(text, source)
        except YamlFileError as exc:
            raise ConfigError(str(exc)) from None
        return cls.from_mapping({} if data is None else data, source, lines, base=Path(path).parent)

    @classmethod
    def from_mapping(
        cls, data: Any, where: str = "config", lines: dict[KeyPath, int] | None = None, *, base: Path | None = None
    ) -> ServerConfig:
        """Check a config's mapping; errors read ``WHERE[:LINE]: key: what is expected`` (lines: from the file).
        ``base``: the folder relative TLS file paths start from (default: the working folder)."""

        def fail(path: KeyPath, message: str) -> ConfigError:
            line = line_of(lines or {}, path)
            at = f"{where}:{line}" if line is not None else where
            return ConfigError(f"{at}: {dotted(path)}: {message}")

        keys = ", ".join(_CONFIG_KEYS)
        if not isinstance(data, dict):
            raise fail((), f"expected a mapping of {keys}, got {type(data).__name__}")
        for key in data:
            if key not in _CONFIG_KEYS:
                close = difflib.get_close_matches(key, _CONFIG_KEYS, n=1, cutoff=0.6) if isinstance(key, str) else []
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise fail((str(key),), f"unknown key {key!r}{hint}: expected one of {keys}")
        config = cls()
        if "address" in data:
            address = data["address"]
            try:
                if not isinstance(address, str):
                    raise ValueError(address)
                config.address = check_address(address)
            except ValueError:
                raise fail(
                    ("address",), f"expected HOST:PORT (port 0-65535; 0: any free port), got {address!r}"
                ) from None
        if "control_token" in data:
            token = data["control_token"]
            if not isinstance(token, str) or not token.strip():
                raise fail(("control_token",), f"expected a non-empty string, got {token!r}")
            problem = token_problem(token)
            if problem is not None:
                raise fail(("control_token",), problem)
            config.control_token = token
        if "tokens" in data:
            tokens = data["tokens"]
            if not isinstance(tokens, dict) or not all(
                isinstance(k, str) and k.strip() and isinstance(v, str) and v.strip() for k, v in tokens.items()
            ):
                raise fail(("tokens",), "expected a mapping of bot name to token string")
            for name, token in tokens.items():
                problem = token_problem(token)
                if problem is not None:
                    raise fail(("tokens", name), problem)
            config.tokens = dict(tokens)
        if "time_control" in data:
            try:
                config.time_control = TimeControl.from_mapping(data["time_control"])
            except TimeControlError as exc:
                raise fail(("time_control", exc.key) if exc.key else ("time_control",), exc.problem) from None
        if "max_message_bytes" in data:
            value = data["max_message_bytes"]
            try:
                config.max_message_bytes = check_message_bytes(value)
            except ValueError as exc:
                raise fail(("max_message_bytes",), str(exc)) from None
        for key in ("token_idle_ms", "token_unused_ms"):
            if key in data:
                value = data[key]
                if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKEN_MS:
                    raise fail((key,), f"expected milliseconds from 0 to {MAX_TOKEN_MS}, got {value!r}")
                setattr(config, key, value)
        files: dict[str, Path] = {}
        for key in ("tls_cert", "tls_key", "tls_client_ca"):
            if key in data:
                value = data[key]
                if not isinstance(value, str) or not value.strip():
                    raise fail((key,), f"expected the path of a PEM file, got {value!r}")
                files[key] = (base or Path()) / value
        if files:
            if "tls_cert" not in files or "tls_key" not in files:
                missing = "tls_key" if "tls_cert" in files else "tls_cert"
                raise fail((next(iter(files)),), f"TLS needs both tls_cert and tls_key: add {missing}")
            config.tls = ServerTls(files["tls_cert"], files["tls_key"], files.get("tls_client_ca"))
        if "handshake_timeout_ms" in data:
            value = data["handshake_timeout_ms"]
            if isinstance(value, bool) or not isinstance(value, int) or not 100 <= value <= MAX_TOKEN_MS:
                expected = f"expected milliseconds from 100 to {MAX_TOKEN_MS}, got {value!r}"
                raise fail(("handshake_timeout_ms",), expected)
            config.handshake_timeout_ms = value
        if "max_connections" in data:
            value = data["max_connections"]
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**31 - 1:
                raise fail(("max_connections",), f"expected a number of connections of at least 1, got {value!r}")
            config.max_connections = value
        return config


#: The longest ``token_idle_ms`` / ``token_unused_ms``: a year.
MAX_TOKEN_MS: Final = 365 * 24 * 3600 * 1000
#: Pings a client may send too early (closer than ``min_client_ping_ms``) before GOAWAY too_many_pings.
MAX_PING_STRIKES: Final = 2


def open_files_limit() -> int:
    """This process's soft RLIMIT_NOFILE (a large number where rlimits do not exist)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return 1 << 20
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return 1 << 20 if soft == resource.RLIM_INFINITY else int(soft)


def grpc_server_options(config: ServerConfig) -> list[tuple[str, int]]:
    """The grpc core channel arguments of a referee.

    Against connections that never speak (thousands of them shut real bots out
    before): a connection must finish its handshake and send the HTTP/2 preface
    within ``handshake_timeout_ms`` (grpc's default is 120 s), one with no call
    open is closed after :data:`CONNECTION_IDLE_MS`, and past ``max_connections``
    new connections are closed at once, so the referee keeps descriptors for its
    own files and bots whatever the network does.

    The ping policy is what docs/writing-a-bot.md asks of bots: pings at most every
    ``min_client_ping_ms`` (10 s; bots ping every 30 s), also on an idle stream and with
    no call open. grpc core ignores argument names it does not know, so these are its
    own names (``grpc.http2.min_ping_interval_without_data_ms`` is the server's minimum
    interval between pings it receives); a test checks each name against the library.
    """
    return [
        ("grpc.so_reuseport", 0),
        # grpc's own cap is a backstop: the referee refuses what is over max_message_bytes itself,
        # so that the fault is counted and recorded (grpc would end the call without a word to us)
        ("grpc.max_receive_message_length", max(config.max_message_bytes, GRPC_MESSAGE_BACKSTOP)),
        ("grpc.keepalive_time_ms", config.keepalive_time_ms),
        ("grpc.keepalive_timeout_ms", config.keepalive_timeout_ms),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", config.min_client_ping_ms),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.http2.max_ping_strikes", MAX_PING_STRIKES),
        ("grpc.server_handshake_timeout_ms", config.handshake_timeout_ms),
        ("grpc.max_connection_idle_ms", CONNECTION_IDLE_MS),
        ("grpc.max_concurrent_streams", MAX_STREAMS_PER_CONNECTION),
        (
            "grpc.max_allowed_incoming_connections",
            config.max_connections or default_max_connections(open_files_limit()),
        ),
    ]


#: The range of ``max_message_bytes`` (config file and ``--max-message-bytes``): gRPC takes an int32.
MIN_MESSAGE_BYTES: Final = 1024
MAX_MESSAGE_BYTES: Final = 2**31 - 1


def check_message_bytes(value: Any) -> int:
    """``value`` if it is a usable ``max_message_bytes``, else ValueError saying what is expected."""
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_MESSAGE_BYTES <= value <= MAX_MESSAGE_BYTES:
        raise ValueError(f"expected an integer from {MIN_MESSAGE_BYTES} to {MAX_MESSAGE_BYTES}, got {value!r}")
    return value


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


def _bearer(context: grpc.aio.ServicerContext[Any, Any]) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key.lower() == "authorization" and isinstance(value, str):
            scheme, _, token = value.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


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
        _add_bot_service(_BotService(self), server)
        pb_grpc.add_MatchServiceServicer_to_server(_MatchService(self), server)  # type: ignore[no-untyped-call]
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


# ---------------------------------------------------------------------- services


def _add_bot_service(service: _BotService, server: grpc.aio.Server) -> None:
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


class _BotService(pb_grpc.BotServiceServicer):
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


class _MatchService(pb_grpc.MatchServiceServicer):
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


# ---------------------------------------------------------------------- conversions


def time_control_or_default(msg: pb.TimeControl, default: TimeControl) -> TimeControl:
    """Fields left at 0 take the referee's default."""
    return TimeControl(
        decision_ms=msg.decision_ms or default.decision_ms,
        bank_ms=msg.bank_ms or default.bank_ms,
        max_strikes=msg.max_strikes or default.max_strikes,
        grace_ms=msg.grace_ms or default.grace_ms,
    )


def spec_from_proto(msg: pb.StartMatchRequest, default_tc: TimeControl) -> MatchSpec:
    seats = []
    for i, seat in enumerate(msg.seats):
        which = seat.WhichOneof("player")
        if which == "builtin":
            seats.append(SeatSpec(seat.name or seat.builtin, builtin=seat.builtin))
        elif which == "token":
            seats.append(SeatSpec(seat.name or f"seat {i}", token=seat.token))
        else:
            raise MatchSpecError(f"seat {i} ({seat.name!r}) names no player: set SeatSpec.builtin or SeatSpec.token")
    return MatchSpec(
        seats=tuple(seats),
        rules=convert.rules_from_proto(msg.rules),
        time_control=time_control_or_default(msg.time_control, default_tc),
        games=msg.games,
        seed=msg.seed,
        rotate_seats=msg.rotate_seats,
        concurrency=max(1, msg.concurrency),
        first_game=msg.first_game,
    )


def spec_to_proto(spec: MatchSpec) -> pb.StartMatchRequest:
    seats = [
        pb.SeatSpec(name=s.name, builtin=s.builtin)
        if s.builtin is not None
        else pb.SeatSpec(name=s.name, token=s.token)
        for s in spec.seats
    ]
    return pb.StartMatchRequest(
        seats=seats,
        rules=convert.rules_to_proto(spec.rules),
        time_control=convert.time_control_to_proto(spec.time_control),
        games=spec.games,
        seed=spec.seed,
        rotate_seats=spec.rotate_seats,
        concurrency=spec.concurrency,
        first_game=spec.first_game,
    )


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
