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

from skyjo_bot.types import TimeControl

from skyjo_ref.errors import ConfigError
from skyjo_ref.match import MatchSpec, MatchSpecError, SeatSpec
from skyjo_ref.server.client import FinishedGame, MatchClient, MatchEnd, RefereeError
from skyjo_ref.server.config import ServerConfig
from skyjo_ref.server.server import RefereeServer
from skyjo_ref.server.session import RemoteSeat, Session
from skyjo_ref.server.tls import ServerTls, TlsError

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
