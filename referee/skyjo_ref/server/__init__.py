"""The referee server (gRPC) and its MatchService client. See docs/referee.md.

Python API, for the CLI and the tournament::

    server = RefereeServer(ServerConfig(address="127.0.0.1:0"))
    await server.start()                      # server.address, server.control_token
    async with MatchClient(server.address, server.control_token) as client:
        token = await client.issue_token("mybot")
        match_id = await client.start_match(MatchSpec(seats=(...), games=10, seed="1"))
        async for item in client.watch(match_id):   # FinishedGame ..., then MatchEnd
            ...
    await server.stop(grace=1.0)
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skyjo_bot.types import TimeControl

    from skyjo_ref.errors import ConfigError
    from skyjo_ref.match import MatchSpec, MatchSpecError, SeatSpec
    from skyjo_ref.server.client import FinishedGame, MatchClient, MatchEnd, RefereeError
    from skyjo_ref.server.config import ServerConfig
    from skyjo_ref.server.server import RefereeServer
    from skyjo_ref.server.session import RemoteSeat, Session
    from skyjo_ref.server.tls import ServerTls, TlsError

#: Where each name of the package's API lives. The package loads a name's module when it is first used, so that
#: ``skyjo_ref.server.config`` (read by tournament configs and ``serve --help``) does not load gRPC and the server.
_HOMES = {
    "TimeControl": "skyjo_bot.types",
    "ConfigError": "skyjo_ref.errors",
    "MatchSpec": "skyjo_ref.match",
    "MatchSpecError": "skyjo_ref.match",
    "SeatSpec": "skyjo_ref.match",
    "FinishedGame": "skyjo_ref.server.client",
    "MatchClient": "skyjo_ref.server.client",
    "MatchEnd": "skyjo_ref.server.client",
    "RefereeError": "skyjo_ref.server.client",
    "ServerConfig": "skyjo_ref.server.config",
    "RefereeServer": "skyjo_ref.server.server",
    "RemoteSeat": "skyjo_ref.server.session",
    "Session": "skyjo_ref.server.session",
    "ServerTls": "skyjo_ref.server.tls",
    "TlsError": "skyjo_ref.server.tls",
}


def __getattr__(name: str) -> Any:
    import importlib

    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)


__all__ = [
    "ConfigError",
    "FinishedGame",
    "MatchClient",
    "MatchEnd",
    "MatchSpec",
    "MatchSpecError",
    "RefereeError",
    "RefereeServer",
    "RemoteSeat",
    "SeatSpec",
    "ServerConfig",
    "ServerTls",
    "Session",
    "TimeControl",
    "TlsError",
]
