"""Referee addresses: ``HOST:PORT`` or ``unix:PATH``, checked once for everyone who takes one."""

from __future__ import annotations

import re
from typing import Final

_ADDRESS: Final = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")


def check_address(text: str, what: str = "address") -> str:
    """Return ``text`` (without a ``grpc://`` prefix) if it is HOST:PORT with a port 0-65535, or
    ``unix:PATH`` (a gRPC Unix domain socket: what a bot without network reaches the referee by).

    Raises :class:`ValueError` naming what is wrong and what is expected.
    """
    address = text.strip().removeprefix("grpc://")
    if address.startswith("unix:"):
        if not address[len("unix:") :].strip("/"):
            raise ValueError(f"{what} {text!r}: expected a socket path after unix:, e.g. unix:/tmp/referee.sock")
        return address
    match = _ADDRESS.match(address)
    if match is None:
        raise ValueError(f"{what} {text!r}: expected HOST:PORT, e.g. 127.0.0.1:50051 or [::1]:50051, or unix:PATH")
    if int(match.group(2)) > 65535:
        raise ValueError(f"{what} {text!r}: the port must be 0-65535")
    return address
