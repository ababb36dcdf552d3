"""A referee on the network stays usable by real bots: idle connections that never speak are closed
by the handshake deadline and cannot take more than the connection cap (its descriptors stay bounded,
its limit raised); failed token attempts are throttled per peer and logged once per back-off.
A real `serve` process, raw TCP sockets and a real SDK bot; the throttle against a real server."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from referee_harness import refusal, start_referee
from sdk_harness import MINIMAL_BOT, sdk_argv
from skyjo_bot import convert
from skyjo_ref.server import MatchClient, RefereeError
from skyjo_ref.server.guard import PeerThrottle, default_max_connections, peer_key, raise_open_files_limit

#: Hang detectors, not speed targets.
CLOSED_HUNG_S = 120.0
MATCH_HUNG_S = 240.0

TOKEN = "flood-bot-token-0123456789"
CONTROL = "flood-control-token-0123456789"


def _serve(*args: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "SKYJO_CONTROL_TOKEN": ""}
    serve = subprocess.Popen(
        [sys.executable, "-m", "skyjo_ref", "serve", "--address", "127.0.0.1:0", "--control-token", CONTROL,
         "--token", f"flood={TOKEN}", *args],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env,
    )  # fmt: skip
    assert serve.stderr is not None
    lines: list[str] = []
    while not lines or "stop with Ctrl-C" not in lines[-1]:
        line = serve.stderr.readline()
        assert line, f"serve exited early: {''.join(lines)}"
        lines.append(line)
    found = re.search(r"listening on (\S+)", lines[0])
    assert found, lines
    return serve, found.group(1)


def _stop(serve: subprocess.Popen[str]) -> None:
    serve.send_signal(signal.SIGTERM)
    serve.communicate(timeout=60)
    assert serve.returncode == 0


def _open_idle(address: str, count: int) -> list[socket.socket]:
    host, port = address.rsplit(":", 1)
    return [socket.create_connection((host, int(port)), timeout=30) for _ in range(count)]


def _wait_closed(socks: list[socket.socket], at_least: int) -> set[int]:
    """Indexes of the sockets the server closed (EOF or reset), once there are ``at_least`` of them."""
    closed: set[int] = set()
    deadline = time.monotonic() + CLOSED_HUNG_S
    while len(closed) < at_least:
        left = deadline - time.monotonic()
        assert left > 0, f"only {len(closed)} of {len(socks)} idle connections were closed"
        waiting = [s for i, s in enumerate(socks) if i not in closed]
        readable, _, _ = select.select(waiting, [], [], min(left, 5.0))
        for sock in readable:
            index = socks.index(sock)
            try:
                data = sock.recv(4096)
            except OSError:
                data = b""
            if not data:  # a server that closes before any preface sends nothing first
                closed.add(index)
    return closed


def _open(sock: socket.socket) -> bool:
    """Whether the server still holds ``sock`` open (what it sent, its HTTP/2 settings, is read and dropped)."""
    while select.select([sock], [], [], 0)[0]:
        try:
            if not sock.recv(4096, socket.MSG_DONTWAIT):
                return False
        except BlockingIOError:
            return True
        except OSError:
            return False
    return True


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _play_one(address: str) -> subprocess.CompletedProcess[str]:
    """`match remote:flood greedy --referee` with the SDK bot already started: one game."""
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "match", "remote:flood", "greedy", "--games", "1", "--referee",
         address, "--control-token", CONTROL, "--grace-ms", "60000", "--json", "-"],
        capture_output=True, text=True, timeout=MATCH_HUNG_S,
    )  # fmt: skip


def _start_bot(address: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SKYJO_ADDR": address, "SKYJO_TOKEN": TOKEN, "SKYJO_CA_FILE": ""}
    return subprocess.Popen(sdk_argv(MINIMAL_BOT), env=env, stderr=subprocess.DEVNULL)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts the referee's descriptors in /proc")
def test_idle_connections_do_not_shut_a_real_bot_out_and_are_closed_by_the_handshake_deadline() -> None:
    serve, address = _serve("--handshake-timeout-ms", "20000")  # the bot starts and plays while they are held
    socks: list[socket.socket] = []
    bot = None
    try:
        limits = Path(f"/proc/{serve.pid}/limits").read_text()
        soft, hard = re.search(r"Max open files\s+(\S+)\s+(\S+)", limits).groups()  # type: ignore[union-attr]
        assert soft == hard, f"serve did not raise its descriptor limit: {soft} of {hard}"
        opened = time.monotonic()
        socks = _open_idle(address, 500)  # they connect and never send a byte
        bot = _start_bot(address)
        played = _play_one(address)  # while the idle ones are held (or being closed): the bot gets in
        assert played.returncode == 0, played.stderr
        if time.monotonic() - opened < 15.0:  # well inside the deadline (a very slow machine skips this check)
            assert all(map(_open, socks)), "the idle connections were closed before the handshake deadline"
        assert '"games": 1' in played.stdout or '"games":1' in played.stdout, played.stdout[:2000]
        assert len(_wait_closed(socks, len(socks))) == len(socks)
        assert serve.poll() is None
    finally:
        for sock in socks:
            sock.close()
        if bot is not None:
            bot.terminate()
            bot.wait(timeout=60)
        _stop(serve)


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
PING, SETTINGS, ACK = 6, 4, 1


def _frame(kind: int, flags: int, payload: bytes = b"") -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + (0).to_bytes(4, "big") + payload


def _h2_connections(address: str, count: int) -> list[socket.socket]:
    """Connections that speak HTTP/2 as a client does (the preface and SETTINGS) and never make a call."""
    socks = _open_idle(address, count)
    for sock in socks:
        sock.sendall(PREFACE + _frame(SETTINGS, 0))
    return socks


def _answer_until_closed(socks: list[socket.socket]) -> float:
    """Answer the server's SETTINGS and PINGs on each connection (ignoring its GOAWAY, as a hostile client
    does) until the server has closed every one; how long that took. Bounded by CLOSED_HUNG_S."""
    started = time.monotonic()
    buffers = {sock: b"" for sock in socks}
    while buffers:
        left = started + CLOSED_HUNG_S - time.monotonic()
        assert left > 0, f"{len(buffers)} of {len(socks)} connections that made no call are still open"
        for sock in select.select(list(buffers), [], [], min(left, 5.0))[0]:
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                del buffers[sock]
                continue
            buffer = buffers[sock] + data
            while len(buffer) >= 9 and len(buffer) >= 9 + int.from_bytes(buffer[:3], "big"):
                size, kind, flags = int.from_bytes(buffer[:3], "big"), buffer[3], buffer[4]
                payload, buffer = buffer[9 : 9 + size], buffer[9 + size :]
                with contextlib.suppress(OSError):
                    if kind == PING and not flags & ACK:
                        sock.sendall(_frame(PING, ACK, payload))
                    elif kind == SETTINGS and not flags & ACK:
                        sock.sendall(_frame(SETTINGS, ACK))
            buffers[sock] = buffer
    return time.monotonic() - started


def test_connections_that_speak_http2_but_make_no_call_are_closed_by_the_handshake_deadline() -> None:
    """Preface, SETTINGS, pings answered, no call: before, such connections held every slot of the cap until
    the 5-minute idle close, and a real bot got UNAVAILABLE all along. Now a connection with no call open is
    closed after the handshake deadline, so a bot shut out by the cap gets in once the deadline has passed."""
    cap = 20
    serve, address = _serve("--handshake-timeout-ms", "2000", "--max-connections", str(cap))
    socks: list[socket.socket] = []
    bot = None
    try:
        socks = _h2_connections(address, cap)  # every slot of the cap
        bot = _start_bot(address)  # shut out at first: it retries with backoff
        took = _answer_until_closed(socks)
        assert took < CLOSED_HUNG_S
        played = _play_one(address)
        assert played.returncode == 0, played.stderr
        assert serve.poll() is None
    finally:
        for sock in socks:
            sock.close()
        if bot is not None:
            bot.terminate()
            bot.wait(timeout=60)
        _stop(serve)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts the referee's descriptors in /proc")
def test_past_the_connection_cap_new_connections_are_closed_at_once_and_descriptors_stay_bounded() -> None:
    cap = 50
    serve, address = _serve("--handshake-timeout-ms", "600000", "--max-connections", str(cap))  # no deadline here
    socks: list[socket.socket] = []
    bot = None
    try:
        before = _fds(serve.pid)
        socks = _open_idle(address, 4 * cap)
        closed = _wait_closed(socks, 3 * cap)  # the ones past the cap, long before any deadline
        assert len(closed) == 3 * cap
        assert _fds(serve.pid) <= before + cap + 10  # what it holds is what the cap allows
        for index, sock in enumerate(socks):  # the held ones are let go: room for a real bot again
            if index not in closed:
                sock.close()
        bot = _start_bot(address)  # it retries with backoff until the referee has room
        played = _play_one(address)
        assert played.returncode == 0, played.stderr
        assert serve.poll() is None
    finally:
        for sock in socks:
            sock.close()
        if bot is not None:
            bot.terminate()
            bot.wait(timeout=60)
        _stop(serve)


def test_serve_refuses_a_bad_cap_or_deadline_in_one_line() -> None:
    for args, expected in (
        (["--max-connections", "0"], "--max-connections: expected at least 1 (connections, at most 2147483647)"),
        (
            ["--handshake-timeout-ms", "5"],
            "--handshake-timeout-ms: expected at least 100 (milliseconds, at most 31536000000)",
        ),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "skyjo_ref", "serve", "--address", "127.0.0.1:0", *args],
            capture_output=True, text=True, timeout=60, env={**os.environ, "SKYJO_CONTROL_TOKEN": ""},
        )  # fmt: skip
        assert done.returncode == 2 and done.stderr.strip().splitlines() == [f"error: {expected}, got {args[1]}"]


# ---------------------------------------------------------------------- failed token attempts


def test_failed_tokens_from_one_address_are_throttled_logged_once_and_a_good_token_waits_too(
    caplog: pytest.LogCaptureFixture,
) -> None:
    good = "good-bot-token-0123456789"

    async def main() -> None:
        server = await start_referee(  # loopback throttled as any address: the test's only one
            tokens={"good": good}, failed_token_burst=3, failed_token_refill_ms=600_000, throttle_loopback=True
        )  # a back-off far longer than the test
        hello = convert.hello("guesser", "1")
        try:
            for guess in range(3):
                code, details = await asyncio.to_thread(
                    refusal, server.address, (("authorization", f"Bearer guess-{guess}"),), hello
                )
                assert code is grpc.StatusCode.UNAUTHENTICATED and "unknown bot token" in details
            for metadata in ((("authorization", "Bearer guess-4"),), (("authorization", f"Bearer {good}"),)):
                code, details = await asyncio.to_thread(refusal, server.address, metadata, hello)
                assert code is grpc.StatusCode.RESOURCE_EXHAUSTED, (code, details)
                assert "too many failed token attempts from this address: try again in" in details
            async with MatchClient(server.address, "wrong-control-token-0123") as client:
                with pytest.raises(RefereeError, match="too many failed token attempts"):
                    await client.issue_token("x")
            assert server.throttle.refused == 3
        finally:
            await server.stop()

    with caplog.at_level(logging.WARNING, logger="skyjo_ref.server.guard"):
        asyncio.run(main())
    lines = [r.getMessage() for r in caplog.records if "failed token attempts" in r.getMessage()]
    assert len(lines) == 1 and "from 127.0.0.1 (3 at once, then one every 600 s)" in lines[0], lines


def test_failed_tokens_of_local_processes_are_not_throttled(tmp_path: Path) -> None:
    """A unix socket, and by default loopback: a tournament's bot must not lock the others out on purpose."""

    async def main() -> None:
        server = await start_referee(unix_socket=tmp_path / "r.sock", failed_token_burst=1)
        try:
            assert server.unix_address is not None
            for address in (server.unix_address, server.address):
                for guess in range(3):
                    metadata = (("authorization", f"Bearer g{guess}"),)
                    code, _ = await asyncio.to_thread(refusal, address, metadata, convert.hello("g", "1"))
                    assert code is grpc.StatusCode.UNAUTHENTICATED
            assert server.throttle.refused == 0 and len(server.throttle) == 0
        finally:
            await server.stop()

    asyncio.run(main())


def test_the_throttle_refills_one_attempt_at_a_time_and_forgets_peers_back_to_full() -> None:
    now = [0.0]
    throttle = PeerThrottle(burst=2, refill_s=10.0, max_peers=3, clock=lambda: now[0])
    peer = "ipv4:10.0.0.1:4000"
    throttle.failed(peer)
    throttle.failed("ipv4:10.0.0.1:4001")  # another port of the same host counts against it
    assert throttle.check(peer) == pytest.approx(10.0)
    now[0] = 5.0
    assert throttle.wait_s(peer) == pytest.approx(5.0)
    now[0] = 10.0
    assert throttle.check(peer) == 0  # one attempt back
    throttle.failed(peer)
    assert throttle.wait_s(peer) == pytest.approx(10.0)
    now[0] = 40.0
    assert throttle.wait_s(peer) == 0 and len(throttle) == 0  # full again: forgotten
    for host in range(5):  # a flood of addresses keeps at most max_peers
        throttle.failed(f"ipv4:10.0.1.{host}:1")
    assert len(throttle) == 3
    assert peer_key("ipv6:[2001:db8::1]:5") == peer_key("ipv6:[2001:db8::ffff]:6") == "2001:db8::/64"
    assert peer_key("unix:/tmp/r.sock") is None
    assert peer_key("ipv4:127.0.0.1:5") is peer_key("ipv6:[::1]:5") is peer_key("ipv6:[::ffff:127.0.0.1]:5") is None
    assert peer_key("ipv4:127.0.0.1:5", loopback=True) == "127.0.0.1"
    assert peer_key("ipv6:[::ffff:203.0.113.7]:9") == "203.0.113.7"


def test_raising_the_descriptor_limit_reaches_the_hard_limit() -> None:
    resource = pytest.importorskip("resource")
    soft = raise_open_files_limit()
    now_soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert soft == now_soft and (hard == resource.RLIM_INFINITY or now_soft == hard)


def test_running_out_of_descriptors_is_a_one_line_unfinished_not_an_internal_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from skyjo_ref.cli import errors

    code = errors.handle_unexpected(OSError(errno.EMFILE, "Too many open files"))
    err = capsys.readouterr().err
    assert code == errors.EXIT_UNFINISHED == 3
    assert err.strip().splitlines() == [
        "error: out of file descriptors (Too many open files): finished work is kept; run again to go on, with a "
        "higher limit (ulimit -n) or less at once (concurrency, serve --max-connections)"
    ]
    assert "internal error" not in err


def test_the_default_connection_cap_leaves_the_referee_its_reserve_of_descriptors() -> None:
    assert default_max_connections(1_048_576) == 1_048_576 - 1024
    assert default_max_connections(4096) == 3072
    assert default_max_connections(1024) == 512  # a low hard limit: half for connections, half kept
    assert default_max_connections(50) == 64
