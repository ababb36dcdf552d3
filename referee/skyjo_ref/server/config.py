"""The referee's settings: :class:`ServerConfig`, read and checked from a YAML file, and the grpc options they make.

Every limit a referee config can set is checked here, once, with the same
words as the ``serve`` flags that override it (``serve`` calls
:meth:`ServerConfig.with_flags`).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from skyjo_bot.address import check_address
from skyjo_bot.types import TimeControl, TimeControlError

from skyjo_ref.errors import ConfigError, UsageError
from skyjo_ref.server.guard import check_token, default_max_connections, token_problem
from skyjo_ref.server.tls import ServerTls
from skyjo_ref.yamlfile import KeyPath, YamlFileError, dotted, line_of, load_yaml

#: Messages over this size are refused by grpc itself (the call just ends); those over
#: ``max_message_bytes`` but under this are refused by the referee, which records the fault.
GRPC_MESSAGE_BACKSTOP: Final = 1024 * 1024

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

    def override(self, flags: CommandLine) -> None:
        """Apply ``serve``'s command line over this config, each setting through the config file's check, the
        errors (UsageError) naming the flag; the address is checked last, whoever set it."""
        if flags.address is not None:
            self.address = flags.address
        if flags.control_token:  # "" (an empty SKYJO_CONTROL_TOKEN): a random one, as when none is given
            self.control_token = _checked_token(flags.control_token, "--control-token (or SKYJO_CONTROL_TOKEN)")
        self.tokens = {**self.tokens, **_named_tokens(flags.tokens)}
        if flags.tls_cert is not None or flags.tls_key is not None or flags.tls_client_ca is not None:
            if flags.tls_cert is None or flags.tls_key is None:
                missing = "--tls-key" if flags.tls_cert is not None else "--tls-cert"
                raise UsageError(f"TLS needs both --tls-cert and --tls-key: add {missing}")
            self.tls = ServerTls(flags.tls_cert, flags.tls_key, flags.tls_client_ca)
        if self.tls is not None and self.address.startswith("unix:"):
            raise UsageError(
                f"TLS is for a TCP address, not {self.address} (a Unix socket does not leave the machine): "
                "drop --tls-cert/--tls-key or listen on HOST:PORT"
            )
        if flags.handshake_timeout_ms is not None:
            self.handshake_timeout_ms = _flag("--handshake-timeout-ms", check_handshake_ms, flags.handshake_timeout_ms)
        if flags.max_connections is not None:
            self.max_connections = _flag("--max-connections", check_max_connections, flags.max_connections)
        if flags.time_control is not None:
            self.time_control = flags.time_control
        if flags.max_message_bytes is not None:
            self.max_message_bytes = _flag("--max-message-bytes", check_message_bytes, flags.max_message_bytes)
        try:
            self.address = check_address(self.address, "--address")
        except ValueError as exc:
            raise UsageError(str(exc)) from None

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
        _read_tls_and_connections(config, data, fail, base)
        return config


@dataclass(frozen=True, slots=True)
class CommandLine:
    """``serve``'s settings as given on its command line (None: not given, the config file's or the default)."""

    address: str | None = None
    control_token: str | None = None
    tokens: tuple[str, ...] = ()  # NAME=TOKEN, each
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_client_ca: Path | None = None
    handshake_timeout_ms: int | None = None
    max_connections: int | None = None
    time_control: TimeControl | None = None
    max_message_bytes: int | None = None


def _flag(flag: str, check: Callable[[Any], Any], value: Any) -> Any:
    """``value`` checked as the config file checks its key, the message naming the flag."""
    try:
        return check(value)
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from None


def _checked_token(token: str, flag: str) -> str:
    """A token given on the command line (``flag`` names it in the error)."""
    try:
        return check_token(token, flag)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _named_tokens(pairs: Sequence[str]) -> dict[str, str]:
    """``--token NAME=TOKEN`` pairs, each token checked."""
    tokens: dict[str, str] = {}
    for pair in pairs:
        name, sep, token = pair.partition("=")
        if not sep or not name.strip() or not token.strip():
            raise UsageError(f"--token {pair!r}: expected NAME=TOKEN, e.g. --token tomas=8kG2vQx7LmN4pR1sT6wY3zA9")
        tokens[name.strip()] = _checked_token(token.strip(), f"--token {name.strip()}")
    return tokens


def _read_tls_and_connections(
    config: ServerConfig, data: Mapping[str, Any], fail: Callable[[KeyPath, str], ConfigError], base: Path | None
) -> None:
    """The config's TLS files (relative to ``base``) and its connection limits, checked into ``config``."""
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
    for key, check in (("handshake_timeout_ms", check_handshake_ms), ("max_connections", check_max_connections)):
        if key in data:
            try:
                setattr(config, key, check(data[key]))
            except ValueError as exc:
                raise fail((key,), str(exc)) from None


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
    open is closed after the same deadline (a connection that speaks HTTP/2 and
    answers pings but makes no call, or no more, would else hold a slot of the cap:
    a client opens a new connection when it needs one), and past ``max_connections``
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
        ("grpc.max_connection_idle_ms", config.handshake_timeout_ms),
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


#: The range of ``handshake_timeout_ms`` and ``max_connections`` (config file and ``serve`` flags alike).
MIN_HANDSHAKE_MS: Final = 100
MAX_CONNECTIONS: Final = 2**31 - 1


def check_handshake_ms(value: Any) -> int:
    """``value`` if it is a usable ``handshake_timeout_ms``, else ValueError saying what is expected."""
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_HANDSHAKE_MS <= value <= MAX_TOKEN_MS:
        raise ValueError(f"expected at least {MIN_HANDSHAKE_MS} (milliseconds, at most {MAX_TOKEN_MS}), got {value!r}")
    return value


def check_max_connections(value: Any) -> int:
    """``value`` if it is a usable ``max_connections``, else ValueError saying what is expected."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CONNECTIONS:
        raise ValueError(f"expected at least 1 (connections, at most {MAX_CONNECTIONS}), got {value!r}")
    return value
