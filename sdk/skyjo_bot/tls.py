"""TLS for a bot reaching a referee over the network: the CA that signed the referee's certificate,
and a client certificate when the referee asks for one (``serve --tls-client-ca``).

From arguments, or the environment: ``SKYJO_CA_FILE``, ``SKYJO_CLIENT_CERT``, ``SKYJO_CLIENT_KEY``
(the same names the Node, Go and C++ examples read). A ``unix:`` address never uses TLS.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import grpc


@dataclass(frozen=True, slots=True)
class ClientTls:
    """PEM contents: ``ca`` (the referee's CA), ``cert`` and ``key`` (this bot's, for mutual TLS)."""

    ca: bytes
    cert: bytes | None = None
    key: bytes | None = None

    def credentials(self) -> grpc.ChannelCredentials:
        """grpc's channel credentials for these files."""
        return grpc.ssl_channel_credentials(
            root_certificates=self.ca, private_key=self.key, certificate_chain=self.cert
        )


def _pem(path: str, what: str, option: str) -> bytes:
    try:
        data = Path(path).read_bytes()
    except IsADirectoryError:
        raise ValueError(f"{what} {path} ({option}): is a folder: expected a PEM file") from None
    except OSError as exc:
        raise ValueError(f"{what} {path} ({option}): cannot read: {exc.strerror or exc}") from None
    if b"-----BEGIN " not in data:
        raise ValueError(f"{what} {path} ({option}): not PEM: expected '-----BEGIN ...' lines")
    return data


def client_tls(
    ca_file: str | None = None, cert_file: str | None = None, key_file: str | None = None
) -> ClientTls | None:
    """The TLS a bot uses: the arguments, else ``SKYJO_CA_FILE``/``SKYJO_CLIENT_CERT``/``SKYJO_CLIENT_KEY``;
    None when no CA file is given (plaintext). ValueError names a file that cannot be used."""
    ca_file = ca_file or os.environ.get("SKYJO_CA_FILE", "")
    cert_file = cert_file or os.environ.get("SKYJO_CLIENT_CERT", "")
    key_file = key_file or os.environ.get("SKYJO_CLIENT_KEY", "")
    if not ca_file:
        if cert_file or key_file:
            raise ValueError(
                "a client certificate needs TLS: pass --ca-file PEM or set SKYJO_CA_FILE "
                "(the CA that signed the referee's certificate)"
            )
        return None
    if bool(cert_file) != bool(key_file):
        missing = "--client-key (SKYJO_CLIENT_KEY)" if cert_file else "--client-cert (SKYJO_CLIENT_CERT)"
        raise ValueError(f"a client certificate needs both its certificate and its key: add {missing}")
    ca = _pem(ca_file, "CA file", "--ca-file / SKYJO_CA_FILE")
    cert = _pem(cert_file, "client certificate", "--client-cert / SKYJO_CLIENT_CERT") if cert_file else None
    key = _pem(key_file, "client key", "--client-key / SKYJO_CLIENT_KEY") if key_file else None
    return ClientTls(ca, cert, key)
