"""The named cases: one rule of docs/writing-a-bot.md each (docs/check-bot.md says why each matters).

A case returns what the bot did when it kept the rule, and raises
:class:`~skyjo_ref.checkbot.context.CaseFailed` (what was expected, what the
bot did) when it broke it, or :class:`NotApplicable` when the rule cannot
apply to the bot as it runs (TLS for a bot without network).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import shutil
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

import grpc
from skyjo_bot import convert
from skyjo_bot.types import PRESETS, DecisionKind, Event, EventKind, Rules, Strike
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb

from skyjo_ref.checkbot.context import (
    CONNECT_S,
    STOP_S,
    BotRun,
    CaseFailed,
    Context,
    NotApplicable,
    describe_exit,
    judge,
)
from skyjo_ref.checkbot.fixtures import TableGame, after_column_clear, find_position, last_turn, of_kind
from skyjo_ref.checkbot.launch import start_under_stand_in
from skyjo_ref.checkbot.referee import Stream, StreamEnded

Run = Callable[[Context], Awaitable[str]]

#: How long a dropped bot may take to open a new stream (its backoff starts small; 60 s is when the SDK gives up).
RECONNECT_S: Final = 15.0
#: An idle stream is held this long in ``keepalive-policy``: a bot pinging every second or two is closed by then.
IDLE_S: Final = 5.0
#: The time left announced in ``answer-in-time``: a league's default decision limit (TimeControl.decision_ms).
TIME_LEFT_MS: Final = 2000
#: Streams refused in a row in ``backoff``.
BACKOFF_TRIES: Final = 6
#: How much longer the last two pauses must be than the first two (the SDK's: 1.2 s or more against 0.3 s or less).
BACKOFF_GROWTH_S: Final = 0.5


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    rule: str  # the rule it checks, one line (docs/writing-a-bot.md section)
    run: Run
    quick: bool  # part of the quick set a league runs before a bot's first game


CASES: dict[str, Case] = {}


def case(name: str, rule: str, *, quick: bool = False) -> Callable[[Run], Run]:
    def register(run: Run) -> Run:
        CASES[name] = Case(name, rule, run, quick)
        return run

    return register


# ---------------------------------------------------------------------- one stream


@case("hello-first", "the first message is Hello with protocol_version 1 (§2)", quick=True)
async def hello_first(ctx: Context) -> str:
    await ctx.drop_shared()  # a stream of its own: this case is about its very first message
    await ctx.session()
    assert ctx.hello is not None
    return f"said Hello (name {ctx.hello.name!r}, version {ctx.hello.version!r}, protocol 1)"


def _decision_case(name: str, rule: str, wanted: Callable[..., bool]) -> None:
    async def run(ctx: Context) -> str:
        position = find_position(name, wanted)
        _, stream = await ctx.session()
        await stream.send(position.game_start())
        action = await ctx.ask(stream, position.request(ctx.request_id()))
        await stream.send(position.game_over())
        return f"played {action} (legal: {', '.join(str(a) for a in position.view.legal_actions)})"

    case(name, rule, quick=True)(run)


_decision_case("decision-opening-reveal", "an opening reveal is answered with a legal reveal (§4, §5)",
               of_kind(DecisionKind.OPENING_REVEAL))  # fmt: skip
_decision_case("decision-draw-or-take", "the start of a turn is answered with draw or take (§4, §5)",
               of_kind(DecisionKind.DRAW_OR_TAKE))  # fmt: skip
_decision_case("decision-swap-or-reveal", "a drawn card is swapped or discarded for a reveal (§4, §5)",
               of_kind(DecisionKind.SWAP_OR_REVEAL))  # fmt: skip
_decision_case("decision-swap-after-take", "a taken discard is placed with a swap (§4, §5)",
               of_kind(DecisionKind.SWAP_AFTER_TAKE))  # fmt: skip
_decision_case("decision-after-column-clear", "a forced swap with a column cleared: removed slots are not open (§4)",
               after_column_clear)  # fmt: skip
_decision_case("decision-last-turn", "the last turn after another seat finished is answered (§4)", last_turn)


@case("request-id-echoed", "every reply echoes its request's uint64 id exactly (§5)", quick=True)
async def request_id_echoed(ctx: Context) -> str:
    position = find_position("request-id", of_kind(DecisionKind.DRAW_OR_TAKE))
    _, stream = await ctx.session()
    await stream.send(position.game_start())
    big = (1 << 63) + (1 << 53) + 7  # above 2^53: a double cannot hold it; above 2^63: nor can an int64
    ctx.next_request = max(ctx.next_request, big)  # a referee's request ids only grow
    big = ctx.request_id()
    await ctx.ask(stream, position.request(big))
    await stream.send(position.game_over())
    return f"echoed request_id {big}"


@case("events-before-decision", "events (batches, inside requests, unknown kinds) do not stop play (§6)", quick=True)
async def events_before_decision(ctx: Context) -> str:
    table = TableGame("check-events", "check-bot-events")
    _, stream = await ctx.session()
    await stream.send(table.start())
    messages = table.advance()
    for message in messages:
        await stream.send(message)
    unknown = pb.Event(game_id=table.game_id, kind="comet_strike", seat=1, value=99)  # a kind a later version adds
    await stream.send(pb.PlayResponse(events=pb.EventBatch(game_id=table.game_id, events=[unknown])))
    request = table.request(ctx.request_id())
    request.decision.events.append(unknown)
    request.decision.events.append(convert.event_to_proto(Event(EventKind.DRAW, seat=1), table.game_id))
    action = await ctx.ask(stream, request)
    await stream.send(pb.PlayResponse(game_over=pb.GameOver(game_id=table.game_id, totals=[0, 0], ranks=[1, 1],
                                                              winners=[0, 1])))  # fmt: skip
    return (
        f"took {len(messages)} event message(s), an unknown event kind and events inside the request; played {action}"
    )


async def play_table(ctx: Context, stream: Stream, table: TableGame) -> int:
    """Play ``table`` to its end with the bot on seat 0; the number of decisions it made."""
    await stream.send(table.start())
    while True:
        messages = table.advance()
        for message in messages:
            await stream.send(message)
        if table.game.over:
            return table.decisions
        try:
            action = await ctx.ask(stream, table.request(ctx.request_id()))
        except CaseFailed as failed:
            raise CaseFailed(failed.expected, f"{failed.did} (decision {table.decisions} of {table.game_id})") from None
        table.apply(action)


@case("game-after-game", "games follow one another on one stream, each to its GameOver (§3, §8)", quick=True)
async def game_after_game(ctx: Context) -> str:
    _, stream = await ctx.session()
    first = await play_table(ctx, stream, TableGame("check-game-1", "check-bot-game-1"))
    second = await play_table(ctx, stream, TableGame("check-game-2", "check-bot-game-2"))
    return f"played two whole games on one stream ({first} and {second} decisions, all legal)"


@case("game-over", "GameOver (ties, forfeits) leaves the stream open for the next game (§8)", quick=True)
async def game_over(ctx: Context) -> str:
    position = find_position("game-over", of_kind(DecisionKind.DRAW_OR_TAKE))
    _, stream = await ctx.session()
    over = pb.GameOver(game_id="check-over", totals=[40, 40], ranks=[1, 1], winners=[0, 1], forfeits=[])
    await stream.send(pb.PlayResponse(game_over=over))
    forfeit = pb.GameOver(game_id="check-over-2", totals=[12, 30], ranks=[2, 1], winners=[1], forfeits=[0])
    await stream.send(pb.PlayResponse(game_over=forfeit))
    await stream.send(position.game_start())
    action = await ctx.ask(stream, position.request(ctx.request_id()))
    await stream.send(position.game_over())
    return f"took a shared win and a forfeit, then played {action} in the next game"


@case("strike-then-play-on", "a Strike is read and play goes on (§9)", quick=True)
async def strike_then_play_on(ctx: Context) -> str:
    position = find_position("strike", of_kind(DecisionKind.DRAW_OR_TAKE))
    _, stream = await ctx.session()
    await stream.send(position.game_start())
    rid = ctx.request_id()
    await ctx.ask(stream, position.request(rid))
    played = position.view.legal_actions[0]
    strike = Strike(position.start.game_id, rid, "timeout", "check-bot: a strike the referee sends", played, 1, 3)
    await stream.send(pb.PlayResponse(strike=convert.strike_to_proto(strike)))
    action = await ctx.ask(stream, position.request(ctx.request_id()))
    await stream.send(position.game_over())
    return f"took a strike, then played {action}"


def _preset_case(preset: str) -> None:
    async def run(ctx: Context) -> str:
        rules = Rules.preset_named(preset)
        position = find_position(f"rules-{preset}", of_kind(DecisionKind.SWAP_OR_REVEAL), rules)
        _, stream = await ctx.session()
        await stream.send(position.game_start())
        action = await ctx.ask(stream, position.request(ctx.request_id()))
        await stream.send(position.game_over())
        return f"played {action} under the {preset} rules"

    case(f"rules-{preset}", f"a decision under the {preset} preset's rules (§3)", quick=True)(run)


for _preset in PRESETS:
    _preset_case(_preset)


@case("answer-in-time", f"a decision with time_left_ms {TIME_LEFT_MS} is answered within it (§4)", quick=True)
async def answer_in_time(ctx: Context) -> str:
    position = find_position("in-time", of_kind(DecisionKind.DRAW_OR_TAKE))
    _, stream = await ctx.session()
    await stream.send(position.game_start())
    request = position.request(ctx.request_id(), TIME_LEFT_MS)
    sent = time.monotonic()
    await stream.send(request)
    try:
        reply, at = await ctx.reply(stream, TIME_LEFT_MS / 1000)
    except CaseFailed:
        raise CaseFailed(
            f"a reply within time_left_ms {TIME_LEFT_MS}", f"had not answered after {TIME_LEFT_MS} ms"
        ) from None
    judge(reply, request.decision)
    await stream.send(position.game_over())
    return f"answered in {(at - sent) * 1000:.0f} ms of {TIME_LEFT_MS}"


@case("keepalive-policy", "pings no more often than every 10 s; answers the referee's pings (§1)")
async def keepalive_policy(ctx: Context) -> str:
    position = find_position("keepalive", of_kind(DecisionKind.DRAW_OR_TAKE))
    _, stream = await ctx.session()
    try:
        said = await stream.quiet(IDLE_S)
    except StreamEnded:
        raise CaseFailed(
            f"an idle stream kept for {IDLE_S:g} s under the referee's ping policy (pings every 10 s or less often)",
            "lost its connection: the referee closes a connection that pings too often (GOAWAY too_many_pings)",
        ) from None
    if said is not None:
        raise CaseFailed("nothing sent while no decision is due", f"sent {said.WhichOneof('message')}")
    await stream.send(position.game_start())
    action = await ctx.ask(stream, position.request(ctx.request_id()))
    await stream.send(position.game_over())
    return f"kept an idle stream {IDLE_S:g} s (pinged every 2 s by the referee), then played {action}"


# ---------------------------------------------------------------------- reconnects


@case("reconnect-same-token", "a stream dropped mid-decision: reconnect, same token, the request answered once (§10)")
async def reconnect_same_token(ctx: Context) -> str:
    position = find_position("reconnect", of_kind(DecisionKind.SWAP_OR_REVEAL))
    run, stream = await ctx.session()
    await stream.send(position.game_start())
    request = position.request(ctx.request_id())
    await stream.send(request)
    await stream.end_and_wait(grpc.StatusCode.UNAVAILABLE, "check-bot: the connection broke")
    dropped = time.monotonic()
    again = await ctx.arrival(run, RECONNECT_S)
    took = time.monotonic() - dropped
    ctx.adopt(again)
    await ctx.welcome(again)
    await again.send(position.game_start())
    action = await ctx.ask(again, request)
    extra = await again.quiet(0.5)
    if extra is not None:
        raise CaseFailed("the re-sent request answered once", f"sent another {extra.WhichOneof('message')}")
    await again.send(position.game_over())
    return (
        f"reconnected with the same token after {took:.2f} s, said Hello, answered the re-sent request once ({action})"
    )


async def refuse_all(ctx: Context, run: BotRun, code: grpc.StatusCode, details: str, log: list[float]) -> None:
    """Refuse every stream ``run`` opens with ``code`` (noting when each came), until cancelled. The time noted is
    the stream's opening, not when this task got to it: on a busy machine a late turn would shorten the gaps."""
    while True:
        stream = await ctx.referee.next_stream(run.token, 3600)
        stream.end(code, details)
        async with ctx.news:
            log.append(stream.opened_at)
            ctx.news.notify_all()


@case("backoff", "reconnects back off: the pauses grow (exponential backoff with jitter, §10)")
async def backoff(ctx: Context) -> str:
    run = await ctx.fresh()
    arrivals: list[float] = []
    refuser = asyncio.create_task(
        refuse_all(ctx, run, grpc.StatusCode.UNAVAILABLE, "check-bot: the referee is restarting", arrivals)
    )
    try:
        await ctx.arrival_count(run, arrivals, BACKOFF_TRIES)
    finally:
        refuser.cancel()
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    shown = ", ".join(f"{g:.2f}" for g in gaps)
    earlier, later = gaps[0] + gaps[1], gaps[-2] + gaps[-1]
    if later - earlier < BACKOFF_GROWTH_S:  # a difference: a loaded machine slows every reconnect alike
        raise CaseFailed(
            f"pauses between reconnects that grow (the last two at least {BACKOFF_GROWTH_S:g} s longer than the "
            "first two)",
            f"reconnected after pauses of {shown} s",
        )
    return f"reconnected after pauses of {shown} s"


@case("refused-token-exits-1", "a refused token (UNAUTHENTICATED) ends the bot with exit code 1 (§9)")
async def refused_token(ctx: Context) -> str:
    run = await ctx.fresh()
    arrivals: list[float] = []
    refuser = asyncio.create_task(
        refuse_all(ctx, run, grpc.StatusCode.UNAUTHENTICATED, "unknown bot token (check-bot)", arrivals)
    )
    try:
        code = await run.exit_code(15.0)
    finally:
        refuser.cancel()
    if code is None:
        raise CaseFailed("exit code 1 after the token was refused", f"was still running 15 s later ({len(arrivals)} "
                         "streams opened)")  # fmt: skip
    if code != 1:
        raise CaseFailed("exit code 1 after the token was refused", describe_exit(code))
    return f"exited with code 1 after {len(arrivals)} refused stream(s)"


# ---------------------------------------------------------------------- stopping


async def _state(ctx: Context, state: str) -> BotRun:
    """A fresh process brought to ``state``: connecting, waiting, deciding or backing off."""
    if state == "connecting":
        before = ctx.referee.silent.connections
        run = await ctx.fresh("silent")
        await ctx.wait_silent(run, before + 1)
        return run
    run = await ctx.fresh()
    if state == "backing-off":
        arrivals: list[float] = []
        refuser = asyncio.create_task(
            refuse_all(ctx, run, grpc.StatusCode.UNAVAILABLE, "check-bot: the referee is restarting", arrivals)
        )
        ctx.background.append(refuser)
        await ctx.arrival_count(run, arrivals, 3)
        return run
    stream = await ctx.arrival(run)
    await ctx.welcome(stream)
    if state == "deciding":
        position = find_position("stop", of_kind(DecisionKind.SWAP_OR_REVEAL))
        await stream.send(position.game_start())
        await stream.send(position.request(ctx.request_id()))
    ctx.background.append(asyncio.create_task(_hold(stream)))
    return run


async def _hold(stream: Stream) -> None:
    """Keep the stream open, reading what comes (a reply to the pending decision)."""
    with contextlib.suppress(StreamEnded):
        while True:
            await stream.receive(3600)


def _stop_case(sig: signal.Signals, state: str) -> None:
    name = f"{sig.name.lower()}-{state}"

    async def run(ctx: Context) -> str:
        bot = await _state(ctx, state)
        sent = time.monotonic()
        bot.signal(sig)
        code = await bot.exit_code(STOP_S)
        if code is None:
            raise CaseFailed(f"exit code 0 within {STOP_S:g} s of {sig.name}", f"was still running {STOP_S:g} s later")
        if code != 0:
            raise CaseFailed(f"exit code 0 after {sig.name}", describe_exit(code))
        return f"exited 0 in {time.monotonic() - sent:.2f} s"

    case(name, f"{sig.name} while {state.replace('-', ' ')}: exit 0 promptly (§9 Stopping)", quick=False)(run)


for _sig in (signal.SIGTERM, signal.SIGINT):
    for _state_name in ("connecting", "waiting", "deciding", "backing-off"):
        _stop_case(_sig, _state_name)


@case("parent-death", "the process named by SKYJO_PARENT_PID dies: the bot ends (§9 Stopping)")
async def parent_death(ctx: Context) -> str:
    if ctx.room.spec.sandbox.isolation == "strict":
        raise NotApplicable("isolated, the bot gets no SKYJO_PARENT_PID: its sandbox ends it with its parent")
    token = secrets.token_urlsafe(18)
    ctx.referee.expect(token)
    orphan = await start_under_stand_in(ctx.room, token)
    ctx.logs.append(str(orphan.log))
    try:
        stream = await ctx.referee.next_stream(token, CONNECT_S)
        await ctx.welcome(stream)
        ctx.background.append(asyncio.create_task(_hold(stream)))
        gone = time.monotonic()
        ended = await orphan.kill_parent(STOP_S)
    except TimeoutError:
        raise CaseFailed(f"a connection to the referee within {CONNECT_S:g} s", "did not connect") from None
    finally:
        await orphan.close()
    if not ended:
        raise CaseFailed(f"an end within {STOP_S:g} s of its parent's death", f"was still running {STOP_S:g} s later")
    return f"ended {time.monotonic() - gone:.2f} s after its parent (SKYJO_PARENT_PID) was killed"


# ---------------------------------------------------------------------- TLS


@case("tls", "with SKYJO_CA_FILE, the bot speaks TLS to a referee that serves it (§1)")
async def tls(ctx: Context) -> str:
    if not ctx.room.has_network:
        raise NotApplicable("the bot has no network: it reaches the referee on a unix: socket, in plaintext")
    if ctx.tls_ca is None:
        raise NotApplicable("no TLS here: " + ("openssl is not installed" if shutil.which("openssl") is None else
                                               "the certificates could not be made"))  # fmt: skip
    run = await ctx.fresh("tls", env={"SKYJO_CA_FILE": str(ctx.tls_ca)})
    stream = await ctx.arrival(run)
    await ctx.welcome(stream)
    position = find_position("tls", of_kind(DecisionKind.DRAW_OR_TAKE))
    await stream.send(position.game_start())
    action = await ctx.ask(stream, position.request(ctx.request_id()))
    return f"connected over TLS (trusting SKYJO_CA_FILE) and played {action}"


def quick_cases() -> list[str]:
    return [name for name, c in CASES.items() if c.quick]
