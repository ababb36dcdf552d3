"""TLS for a referee on the network: its certificate and key, and optionally a CA whose client
certificates it requires (mutual TLS). See docs/referee.md, "TLS".

The files are checked with the standard library's :mod:`ssl` before grpc sees them: grpc
only says "Failed to bind" when a file is not PEM or the key does not match the certificate.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from skyjo_ref.errors import UsageError

if TYPE_CHECKING:  # grpc loads when a referee starts, not when a config or `serve --help` names the files
    import grpc


class TlsError(UsageError):
    """A TLS file that cannot be used; the message names the file and what is expected."""


def _read(path: Path, what: str, marker: bytes) -> bytes:
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise TlsError(f"{what} {path}: is a folder: expected a PEM file") from None
    except OSError as exc:
        raise TlsError(f"{what} {path}: cannot read: {exc.strerror or exc}") from None
    if b"-----BEGIN " not in data or marker not in data:
        kind = marker.decode().strip("- ")
        raise TlsError(f"{what} {path}: not a PEM {kind.lower()}: expected a file with '-----BEGIN {kind}' lines")
    return data


@dataclass(frozen=True, slots=True)
class ServerTls:
    """A referee's TLS files: ``cert`` (its chain, PEM), ``key`` (PEM), ``client_ca`` (PEM CAs whose
    client certificates are required and verified; None: any client may connect, tokens still apply)."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    def credentials(self) -> grpc.ServerCredentials:
        """grpc's server credentials, after checking every file (:class:`TlsError` saying what is wrong)."""
        cert = _read(self.cert, "TLS certificate", b"CERTIFICATE-----")
        key = _read(self.key, "TLS key", b"PRIVATE KEY-----")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            context.load_cert_chain(self.cert, self.key)
        except ssl.SSLError as exc:
            raise TlsError(
                f"TLS key {self.key} does not go with certificate {self.cert} ({exc.reason or exc}): "
                "expected the private key the certificate was made for"
            ) from None
        client_ca = None
        if self.client_ca is not None:
            client_ca = _read(self.client_ca, "TLS client CA", b"CERTIFICATE-----")
            try:
                context.load_verify_locations(cafile=self.client_ca)
            except ssl.SSLError as exc:
                why = exc.reason or exc
                raise TlsError(f"TLS client CA {self.client_ca}: not a usable CA certificate ({why})") from None
        import grpc

        return grpc.ssl_server_credentials(
            [(key, cert)], root_certificates=client_ca, require_client_auth=client_ca is not None
        )
