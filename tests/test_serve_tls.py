"""TLS on a real referee: SDK and Node bots play over it with a CA file (and a client certificate
when the referee asks for one); a bot without the right CA or certificate gets no session; `serve`
checks its TLS files and warns when tokens would cross a network in plaintext.

Certificates are made at test time with the ``openssl`` command (tests/tls_pki.py)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sdk_harness import MINIMAL_BOT, NODE_DIR, node_argv, sdk_argv, start_bot
from skyjo_ref.server import RefereeServer, ServerConfig, ServerTls
from tls_pki import Pki, make_pki, plays, tls_referee


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


async def _shut_out(server: RefereeServer, argv: list[str], env: dict[str, str]) -> str:
    """The bot started with ``env`` never gets a session: it gives up (exit 1); its stderr."""
    token = server.issue_token("shut-out")
    bot = await start_bot(argv, "shut-out", token, server.address, env={"SKYJO_GIVE_UP_MS": "1000", **env})
    code = await asyncio.wait_for(bot.proc.wait(), 120)  # a hang detector: it gives up after about 1 s
    assert bot._reader is not None
    await bot._reader
    assert code == 1, bot.text()
    assert server.sessions[token].connections == 0
    return bot.text()


def test_an_sdk_bot_plays_over_tls_with_the_ca_file_and_one_without_it_gets_no_session(pki: Pki) -> None:
    async def main() -> None:
        async with tls_referee(ServerTls(pki.server_cert, pki.server_key)) as server:
            await plays(server, sdk_argv(MINIMAL_BOT), {"SKYJO_CA_FILE": str(pki.ca)})
            await plays(server, sdk_argv(MINIMAL_BOT, "--ca-file", str(pki.ca)), {})  # the option, not the env
            plaintext = await _shut_out(server, sdk_argv(MINIMAL_BOT, "--give-up", "1"), {"SKYJO_CA_FILE": ""})
            assert "no session with the referee" in plaintext and "if it serves TLS, set SKYJO_CA_FILE" in plaintext
            stranger = await _shut_out(
                server, sdk_argv(MINIMAL_BOT, "--give-up", "1"), {"SKYJO_CA_FILE": str(pki.other_ca)}
            )
            assert "no session with the referee" in stranger

    asyncio.run(main())


def test_a_referee_that_requires_client_certificates_seats_only_bots_that_have_one(pki: Pki) -> None:
    async def main() -> None:
        async with tls_referee(ServerTls(pki.server_cert, pki.server_key, pki.ca)) as server:
            with_cert = {
                "SKYJO_CA_FILE": str(pki.ca),
                "SKYJO_CLIENT_CERT": str(pki.client_cert),
                "SKYJO_CLIENT_KEY": str(pki.client_key),
            }
            await plays(server, sdk_argv(MINIMAL_BOT), with_cert)
            no_cert = await _shut_out(server, sdk_argv(MINIMAL_BOT, "--give-up", "1"), {"SKYJO_CA_FILE": str(pki.ca)})
            assert "if it asks for client certificates, set SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY" in no_cert

    asyncio.run(main())


def test_the_node_bot_plays_over_tls_with_a_client_certificate(pki: Pki) -> None:
    argv = node_argv()

    async def main() -> None:
        async with tls_referee(ServerTls(pki.server_cert, pki.server_key, pki.ca)) as server:
            env = {
                "SKYJO_CA_FILE": str(pki.ca),
                "SKYJO_CLIENT_CERT": str(pki.client_cert),
                "SKYJO_CLIENT_KEY": str(pki.client_key),
            }
            await plays(server, argv, env, cwd=NODE_DIR)
            text = await _shut_out(server, argv, {"SKYJO_CA_FILE": str(pki.ca)})  # no client certificate
            assert "giving up" in text

    asyncio.run(main())


def test_sdk_tls_files_that_cannot_be_used_are_one_line_errors(pki: Pki, tmp_path: Path) -> None:
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("hello\n")
    env = {**os.environ, "SKYJO_ADDR": "127.0.0.1:1", "SKYJO_TOKEN": "x" * 24}
    cases = [
        (["--ca-file", str(tmp_path / "missing.pem")], "CA file", "cannot read"),
        (["--ca-file", str(not_pem)], "CA file", "not PEM"),
        (["--client-cert", str(pki.client_cert), "--client-key", str(pki.client_key)], "needs TLS", "--ca-file"),
        (["--ca-file", str(pki.ca), "--client-cert", str(pki.client_cert)], "both", "--client-key"),
    ]
    for extra, *expected in cases:
        done = subprocess.run(sdk_argv(MINIMAL_BOT, *extra), env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
        assert all(word in lines[0] for word in expected), lines[0]


# ---------------------------------------------------------------------- the serve command


def _serve(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "SKYJO_CONTROL_TOKEN": ""}
    return subprocess.Popen(
        [sys.executable, "-m", "skyjo_ref", "serve", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def _lines_until_listening(serve: subprocess.Popen[str]) -> list[str]:
    """serve's stderr up to the 'stop with' line (the last of its start-up lines)."""
    assert serve.stderr is not None
    lines = []
    while not lines or "stop with Ctrl-C" not in lines[-1]:
        line = serve.stderr.readline()
        assert line, f"serve exited early: {''.join(lines)}"
        lines.append(line)
    return lines


def _stop(serve: subprocess.Popen[str]) -> None:
    serve.send_signal(signal.SIGTERM)
    serve.communicate(timeout=60)
    assert serve.returncode == 0


def test_serve_with_tls_says_so_and_match_referee_plays_a_bot_over_it(pki: Pki) -> None:
    """The documented remote workflow over TLS: serve, an SDK bot and `match --referee`, all with SKYJO_CA_FILE."""
    token, control = "tls-bot-token-0123456789", "tls-control-token-0123456789"
    serve = _serve(
        "--address", "127.0.0.1:0", "--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key),
        "--token", f"tlsbot={token}", "--control-token", control,
    )  # fmt: skip
    bot = None
    try:
        lines = _lines_until_listening(serve)
        found = re.search(r"listening on (\S+) \(TLS\)", lines[0])
        assert found, lines[0]
        assert not any("warning" in line for line in lines)
        address = found.group(1)
        assert any(f"SKYJO_TOKEN={token} SKYJO_CA_FILE=CA.pem python -m skyjo_bot run" in line for line in lines)
        env = {**os.environ, "SKYJO_ADDR": address, "SKYJO_TOKEN": token, "SKYJO_CA_FILE": str(pki.ca)}
        bot = subprocess.Popen(sdk_argv(MINIMAL_BOT), env=env, stderr=subprocess.DEVNULL)
        env.pop("SKYJO_TOKEN")
        match = subprocess.run(
            [sys.executable, "-m", "skyjo_ref", "match", "remote:tlsbot", "greedy", "--games", "2", "--referee",
             address, "--control-token", control, "--grace-ms", "60000", "--json", "-"],
            capture_output=True, text=True, env=env, timeout=240,
        )  # fmt: skip
        assert match.returncode == 0, match.stderr
        assert '"games": 2' in match.stdout.replace('"games":2', '"games": 2'), match.stdout[:2000]
    finally:
        if bot is not None:
            bot.terminate()
            bot.wait(timeout=60)
        _stop(serve)


def test_serve_warns_once_when_tokens_would_cross_the_network_in_plaintext() -> None:
    serve = _serve("--address", "0.0.0.0:0")
    try:
        lines = _lines_until_listening(serve)
    finally:
        _stop(serve)
    warnings = [line for line in lines if "warning" in line]
    assert len(warnings) == 1 and "plaintext" in warnings[0] and "--tls-cert" in warnings[0], lines
    serve = _serve("--address", "127.0.0.1:0")
    try:
        assert not any("warning" in line for line in _lines_until_listening(serve))
    finally:
        _stop(serve)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--tls-cert", "{cert}"], "TLS needs both --tls-cert and --tls-key: add --tls-key"),
        (["--tls-cert", "{missing}", "--tls-key", "{key}"], "cannot read"),
        (["--tls-cert", "{key}", "--tls-key", "{key}"], "not a PEM certificate"),
        (["--tls-cert", "{cert}", "--tls-key", "{other_key}"], "does not go with certificate"),
        (["--tls-cert", "{cert}", "--tls-key", "{key}", "--tls-client-ca", "{key}"], "TLS client CA"),
        (["--address", "unix:{missing}", "--tls-cert", "{cert}", "--tls-key", "{key}"], "TLS is for a TCP address"),
    ],
)
def test_serve_refuses_tls_files_it_cannot_use_in_one_line(pki: Pki, args: list[str], expected: str) -> None:
    paths = {
        "cert": pki.server_cert,
        "key": pki.server_key,
        "other_key": pki.client_key,
        "missing": pki.ca.parent / "missing.pem",
    }
    argv = [arg.format(**paths) for arg in args]
    env = {**os.environ, "SKYJO_CONTROL_TOKEN": ""}
    done = subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "serve", "--address", "127.0.0.1:0", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], done.stderr


def test_a_serve_config_names_tls_files_relative_to_its_own_folder(pki: Pki, tmp_path: Path) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    for source in (pki.server_cert, pki.server_key, pki.ca):
        (folder / source.name).write_bytes(source.read_bytes())
    config = folder / "referee.yaml"
    config.write_text(f"tls_cert: {pki.server_cert.name}\ntls_key: {pki.server_key.name}\ntls_client_ca: ca.pem\n")
    tls = ServerConfig.from_file(config).tls
    assert tls == ServerTls(folder / pki.server_cert.name, folder / pki.server_key.name, folder / "ca.pem")
    tls.credentials()  # the files check out
