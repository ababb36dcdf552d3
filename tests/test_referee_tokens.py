"""Bot tokens are released once nothing can use them, so a long-lived referee stays small.

The in-process tests count the referee's own objects (tokens, sessions,
streams, seats) after many matches; the subprocess test reads a real
``skyjo-ref serve``'s RSS over N and then N more matches, driven by the same
calls ``match --referee`` makes (IssueToken, Play, StartMatch, WatchMatch).
"""

from __future__ import annotations

import asyncio
import gc
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from referee_harness import RawBot, play, reply, start_referee
from skyjo_bot.types import TimeControl
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
from skyjo_ref.server import MatchClient, MatchSpec, MatchSpecError, RefereeServer, SeatSpec
from skyjo_ref.server.session import RemoteSeat, Session, Stream

#: One bad answer forfeits: the built-in stand-in plays the rest in-process, so a match is quick.
QUICK = TimeControl(decision_ms=10_000, bank_ms=600_000, max_strikes=1, grace_ms=10_000)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 100))


#: A failure detector, not a speed target: one quick match takes a second or two even on a loaded machine.
MATCH_HUNG_S = 120.0
#: How long released tokens may take to go once their last match is over (they go at once: token_idle_ms=0).
TOKENS_HUNG_S = 60.0


async def give_up_at_once(bot: RawBot, msg: pb.PlayResponse) -> None:
    if msg.WhichOneof("message") == "decision":
        bot.send(reply(msg.decision.request_id, index=99))  # out of range: a strike, the limit


async def one_match(server: RefereeServer, client: MatchClient | None = None) -> str:
    """Issue a token, connect a raw bot with it, play one quick game, close the bot; the token.

    Each wait is bounded by what it waits for: the IssueToken call by the client's timeout, the
    match by :data:`MATCH_HUNG_S`; closing the bot cancels its stream and does not wait on the referee.
    """
    token = await client.issue_token("quick") if client is not None else server.issue_token("quick")
    bot = RawBot(server.address, token, give_up_at_once, "quick")
    bot.connect()
    try:
        spec = MatchSpec(seats=(SeatSpec.of_token(token, "quick"), SeatSpec.of_builtin("greedy")), time_control=QUICK)
        records, end = await play(server, spec, timeout=MATCH_HUNG_S)
        assert end.error == "" and records[0]["result"]["forfeits"] == [0]
    finally:
        await bot.close()
    return token


def alive(kind: type) -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is kind)


def test_a_token_is_released_once_its_match_is_over_and_its_stream_closed() -> None:
    async def scenario() -> None:
        server = await start_referee(QUICK, tokens={"league": "tok-league"}, token_idle_ms=0)
        try:
            tokens = [await one_match(server) for _ in range(12)]
            assert await server.wait_tokens(1, 30), f"{len(server.sessions)} tokens still held"
            assert list(server.sessions) == ["tok-league"]  # a config token is never released
            assert alive(Session) == 1 and alive(RemoteSeat) == 0 and alive(Stream) == 0
            # a released token opens nothing any more, and says so
            late = RawBot(server.address, tokens[0])
            late.connect()
            await late.done.wait()
            assert late.status is grpc.StatusCode.UNAUTHENTICATED and "unknown bot token" in late.details
            await late.close()
            with pytest.raises(MatchSpecError, match="unknown bot token"):
                server.start_match(
                    MatchSpec(seats=(SeatSpec.of_token(tokens[0], "late"), SeatSpec.of_builtin("greedy")))
                )
        finally:
            await server.stop()

    run(scenario())


def test_a_token_in_use_is_kept_and_one_never_used_expires() -> None:
    async def scenario() -> None:
        server = await start_referee(QUICK, token_idle_ms=0, token_unused_ms=0)
        try:
            for _ in range(50):
                server.issue_token("never-used")
            assert await server.wait_tokens(0, 30)
            assert alive(Session) == 0
        finally:
            await server.stop()
        # a token held by an open stream, or named by a match that has not ended, stays
        server = await start_referee(QUICK, token_idle_ms=0)
        try:
            token = server.issue_token("held")
            waiting = RawBot(server.address, token, give_up_at_once)
            waiting.connect()
            assert await server.wait_connected(token, 30)
            absent = server.issue_token("absent")  # never connects: its seat waits the grace period
            spec = MatchSpec(
                seats=(SeatSpec.of_token(absent, "absent"), SeatSpec.of_builtin("greedy")),
                time_control=TimeControl(decision_ms=1_000, bank_ms=60_000, max_strikes=3, grace_ms=300),
            )
            records, _ = await play(server, spec)
            assert "not connected" in records[0]["meta"]["forfeited"][0]["reason"]
            assert token in server.sessions  # its stream is open: in use, however long
            assert await server.wait_tokens(1, 30)  # the absent one: its match is over
            await waiting.close()
            assert await server.wait_tokens(0, 30)
        finally:
            await server.stop()

    run(scenario())


def test_many_matches_leave_the_referee_with_no_more_tokens_or_sessions_than_few() -> None:
    """30 matches in a row: no deadline on the whole (a busy machine may take minutes), each wait bounded."""

    async def scenario() -> tuple[int, int]:
        server = await start_referee(QUICK, token_idle_ms=0)
        try:
            async with MatchClient(server.address, server.control_token) as client:
                for _ in range(5):
                    await one_match(server, client)
                assert await server.wait_tokens(0, TOKENS_HUNG_S)
                after_few = alive(Session) + alive(RemoteSeat) + alive(Stream)
                for _ in range(25):
                    await one_match(server, client)
                assert await server.wait_tokens(0, TOKENS_HUNG_S)
                after_many = alive(Session) + alive(RemoteSeat) + alive(Stream)
            return after_few, after_many
        finally:
            await server.stop()

    after_few, after_many = asyncio.run(scenario())
    assert after_few == after_many == 0


# ---------------------------------------------------------------------- a real `serve`, its RSS


def _rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    assert found is not None
    return int(found.group(1))


async def _drive(address: str, control: str, matches: int, decoys: int) -> None:
    """``matches`` quick matches on the config token, each also issuing ``decoys`` tokens nobody uses."""
    async with MatchClient(address, control) as client:
        for _ in range(matches):
            for _ in range(0, decoys, 100):  # 100 at a time: a realistic burst
                await asyncio.gather(*(client.issue_token("decoy") for _ in range(100)))
            bot = RawBot(address, "tok-quick-0123456", give_up_at_once, "quick")
            bot.connect()
            try:
                spec = MatchSpec(
                    seats=(SeatSpec.of_token("tok-quick-0123456", "quick"), SeatSpec.of_builtin("greedy")),
                    time_control=QUICK,
                )
                match_id = await client.start_match(spec)
                async for _item in client.watch(match_id):
                    pass
            finally:
                await bot.close()


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RSS from /proc")
def test_a_serve_process_stays_flat_over_many_matches(tmp_path: Path) -> None:
    """RSS growth over a second round of N matches, once warm, is far below what keeping tokens would cost.

    The played seat uses a config token (never released) so that expiry cannot race the test; the
    tokens issued and never used (as a client that gives up would leave them) expire at once here.
    """
    config = tmp_path / "referee.yaml"
    config.write_text(
        "address: 127.0.0.1:0\ncontrol_token: ctl-token-0123456\ntokens: {quick: tok-quick-0123456}\n"
        "token_idle_ms: 0\ntoken_unused_ms: 0\n"
    )
    env = {**os.environ, "SKYJO_CONTROL_TOKEN": ""}
    serve = subprocess.Popen(
        [sys.executable, "-m", "skyjo_ref", "serve", "--config", str(config)],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert serve.stderr is not None
        address = None
        while address is None:
            line = serve.stderr.readline()
            assert line, "serve exited before listening"
            found = re.search(r"listening on (\S+)", line)
            address = found.group(1) if found else None
        n, decoys, rounds = 2, 1500, 3  # a round issues n * decoys tokens: ~6 MiB if they were kept (~2 KiB each)
        rss = []
        for _ in range(1 + rounds):  # the first round warms up (arenas, caches, grpc's pools)
            asyncio.run(_drive(address, "ctl-token-0123456", n, decoys))
            rss.append(_rss_kib(serve.pid))
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=30)
    kept_cost_kib = n * decoys * 2  # one round's tokens, were they kept: the leak would grow by this each round
    print(f"serve RSS after rounds of {n} matches (+{n * decoys} tokens): {rss} KiB")
    assert rss[-1] - rss[0] < kept_cost_kib, f"RSS {rss} KiB over rounds of {n} matches and {n * decoys} tokens"
    assert serve.returncode == 0
