"""A throwaway PKI for the TLS tests, made with the ``openssl`` command at test time: a CA, a
referee certificate for localhost / 127.0.0.1 / ::1, and a client certificate (mutual TLS)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from sdk_harness import RELAXED, autos, play_match, start_bot
from skyjo_ref.match import SeatSpec
from skyjo_ref.records import replay
from skyjo_ref.server import RefereeServer, ServerConfig, ServerTls


@dataclass(frozen=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path  # a CA that signed nothing here: trusting it must fail

    def bot_env(self) -> dict[str, str]:
        """A bot's environment for mutual TLS: the referee's CA and the bot's certificate and key."""
        return {
            "SKYJO_CA_FILE": str(self.ca),
            "SKYJO_CLIENT_CERT": str(self.client_cert),
            "SKYJO_CLIENT_KEY": str(self.client_key),
        }


def _openssl(*args: str, cwd: Path) -> None:
    openssl = shutil.which("openssl")
    assert openssl is not None, "openssl is not installed: the TLS tests make their certificates with it"
    done = subprocess.run([openssl, *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"openssl {' '.join(args)}: {done.stderr}"


def _ca(folder: Path, name: str) -> None:
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={name}",
        cwd=folder,
    )  # fmt: skip


def _signed(folder: Path, name: str, extensions: str) -> None:
    _openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}",
        cwd=folder,
    )  # fmt: skip
    (folder / f"{name}.ext").write_text(extensions + "\n")
    _openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext",
        cwd=folder,
    )  # fmt: skip


def make_pki(folder: Path) -> Pki:
    folder.mkdir(parents=True, exist_ok=True)
    _ca(folder, "ca")
    _ca(folder, "other-ca")
    _signed(folder, "referee", "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1")
    _signed(folder, "bot", "extendedKeyUsage=clientAuth")
    return Pki(
        ca=folder / "ca.pem",
        server_cert=folder / "referee.pem",
        server_key=folder / "referee.key",
        client_cert=folder / "bot.pem",
        client_key=folder / "bot.key",
        other_ca=folder / "other-ca.pem",
    )


@asynccontextmanager
async def tls_referee(tls: ServerTls) -> AsyncIterator[RefereeServer]:
    server = RefereeServer(ServerConfig(address="127.0.0.1:0", time_control=RELAXED, tls=tls))
    await server.start()
    try:
        yield server
    finally:
        await server.stop(0.5)


async def plays(server: RefereeServer, argv: list[str], env: dict[str, str], cwd: Path | None = None) -> None:
    """The bot started with ``env`` plays two games against greedy with no move made for it."""
    token = server.issue_token("tls-bot")
    bot = await start_bot(argv, "tls-bot", token, server.address, env=env, cwd=cwd)
    try:
        records = await play_match(server, [SeatSpec.of_token(token, "tls-bot"), SeatSpec.of_builtin("greedy")], 2)
    finally:
        code = await bot.stop()
    assert code == 0, bot.text()
    for record in records:
        replay(record)
        assert autos(record) == [], f"the referee played for the bot: {autos(record)}"
