"""The referee's ping policy is what docs/writing-a-bot.md asks of bots.

The guide says: ping no more often than every 10 s; the SDK and the Node bot
ping every 30 s, also on an idle stream (between games). A grpc-js client that
did so got GOAWAY too_many_pings after its 4th ping, because the referee set a
ping option grpc core does not know (so the 5-minute default applied). The
live tests scale the policy down 100 times (the server accepts a ping every
100 ms, the client pings every 300 ms) so they take seconds, and the unit
tests check the production values and that grpc knows every option's name.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from pathlib import Path

import grpc
from sdk_harness import NODE_DIR, ROOT
from skyjo_bot import client as sdk_client
from skyjo_ref.server.config import MAX_PING_STRIKES, ServerConfig, grpc_server_options
from skyjo_ref.server.server import RefereeServer

DOCS = ROOT / "docs" / "writing-a-bot.md"
PROBE = ROOT / "tests" / "node_keepalive_client.js"
#: The guide's numbers: the referee's minimum interval and the bots' interval, in ms.
DOC_MIN_CLIENT_PING_MS = 10_000
DOC_BOT_PING_MS = 30_000
SCALE = 100


def _grpc_core_library() -> bytes:
    """The grpc core the server runs on (the channel argument names are strings in it)."""
    folder = Path(grpc.__file__).parent / "_cython"
    libraries = sorted(folder.glob("cygrpc*.so"))
    assert libraries, f"no grpc core library in {folder}"
    return libraries[0].read_bytes()


def test_production_ping_policy_is_the_documented_one() -> None:
    options = dict(grpc_server_options(ServerConfig()))
    assert options["grpc.http2.min_ping_interval_without_data_ms"] == DOC_MIN_CLIENT_PING_MS
    assert options["grpc.keepalive_permit_without_calls"] == 1  # idle connections may ping too
    assert options["grpc.http2.max_ping_strikes"] == MAX_PING_STRIKES == 2
    # the referee's own pings notice dead bots; they never count against the bot
    assert options["grpc.keepalive_time_ms"] == 20_000 and options["grpc.keepalive_timeout_ms"] == 10_000
    # the bots the project ships ping as the guide says, well above the minimum
    assert dict(sdk_client.CHANNEL_OPTIONS)["grpc.keepalive_time_ms"] == DOC_BOT_PING_MS
    assert f"'grpc.keepalive_time_ms': {DOC_BOT_PING_MS}" in (NODE_DIR / "bot.js").read_text()
    guide = " ".join(DOCS.read_text().split())
    assert "no more often than every 10 s" in guide and "ping every 30 s" in guide


def test_every_server_option_is_a_name_grpc_core_knows() -> None:
    """grpc ignores unknown channel arguments silently: a misspelt one is a policy that does not apply."""
    library = _grpc_core_library()
    unknown = [name for name, _ in grpc_server_options(ServerConfig()) if name.encode() not in library]
    assert unknown == [], f"grpc core does not know these channel arguments: {unknown}"
    # the check can fail: the name the referee used to set is not one of grpc's
    assert b"grpc.http2.min_recv_ping_interval_without_data_ms" not in library


def _node() -> str:
    node = shutil.which("node")
    assert node is not None, "node is not installed: install Node.js 18+ to run the keepalive tests"
    assert (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir(), (
        "examples/node/node_modules is missing: run `npm ci` in examples/node (the README's test command does)"
    )
    return node


async def _probe(server: RefereeServer, ping_ms: int, pings: int) -> tuple[int, str]:
    """Run the grpc-js probe on an idle stream; its exit code and what it printed."""
    token = server.issue_token("probe")
    env = {
        **os.environ,
        "NODE_PATH": str(NODE_DIR / "node_modules"),
        "GRPC_TRACE": "keepalive,transport",
        "GRPC_VERBOSITY": "DEBUG",
        "SKYJO_ADDR": server.address,
        "SKYJO_TOKEN": token,
        "PING_MS": str(ping_ms),
        "PINGS": str(pings),
    }
    proc = await asyncio.create_subprocess_exec(
        _node(), str(PROBE), env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise AssertionError("the keepalive probe did not finish within 60 s") from None
    assert proc.returncode is not None
    return proc.returncode, out.decode().strip()


def _scaled_server(scale: int = SCALE) -> RefereeServer:
    return RefereeServer(ServerConfig(address="127.0.0.1:0", min_client_ping_ms=DOC_MIN_CLIENT_PING_MS // scale))


def test_a_bot_pinging_as_documented_keeps_its_idle_stream() -> None:
    """8 pings at the documented interval (scaled): twice as many as the 4 that used to end the stream."""

    async def main() -> tuple[int, str]:
        server = _scaled_server()
        await server.start()
        try:
            return await _probe(server, DOC_BOT_PING_MS // SCALE, 8)
        finally:
            await server.stop(0.5)

    code, out = asyncio.run(main())
    assert code == 0, out
    assert re.fullmatch(r"ok 8 ping answers on an idle stream", out), out


def test_a_bot_pinging_too_often_gets_goaway() -> None:
    """The policy is enforced, and the probe sees it: far more often than the minimum is refused."""

    async def main() -> tuple[int, str]:
        server = _scaled_server(10)  # a ping every second at most: even a starved timer is far too early
        await server.start()
        try:
            return await _probe(server, 5, 200)  # every 5 ms: 200 times too often
        finally:
            await server.stop(0.5)

    code, out = asyncio.run(main())
    assert code == 1, out
    assert out.startswith("goaway too_many_pings"), out
