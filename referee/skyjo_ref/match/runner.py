"""The match runner: drives the rules engine for one game, and a match of games.

Policy lives here, not in the engine (see docs/referee.md): time control, strikes,
the default action played for a seat at fault, forfeits and the substitute bot
that finishes a forfeited seat's game. Every fault is kept in the record's
``meta`` with what the bot answered, the limit and the time it took.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypedDict

from skyjo_bot import Bot
from skyjo_bot.types import Action, ActionKind, GameResult, GameStart, Rules, Strike, TimeControl, View

from skyjo_ref.bots import make_builtin
from skyjo_ref.match.schedule import GamePlan, bot_seed, deal_seed, plan_game
from skyjo_ref.match.seat import DISCONNECTED, ILLEGAL, MALFORMED, TIMEOUT, Answer, Decision, Fault, InProcessSeat, Seat
from skyjo_ref.match.spec import SUBSTITUTE_BOT, MatchSpec, SeatSpec
from skyjo_ref.records import game_to_record
from skyjo_ref.rules import Dealer, Game, SeededDealer
from skyjo_ref.rules.engine import DRAW
from skyjo_ref.safetext import printable

log = logging.getLogger(__name__)

#: A limit of 0 means "no limit"; this stands in for it.
NO_LIMIT_MS: Final = 24 * 3600 * 1000
#: The record's ``auto`` tag for an action played because of a fault.
_AUTO_TAG: Final = {TIMEOUT: "timeout", ILLEGAL: "illegal", MALFORMED: "illegal", DISCONNECTED: "disconnected"}


def default_action(view: View) -> Action:
    """What the referee plays for a seat at fault: reveal the lowest hidden position when
    a reveal is legal (opening reveals; after a draw, discarding the drawn card), else
    draw, else the first legal action (after a take: swap at the lowest open position)."""
    legal = view.legal_actions
    for action in legal:
        if action.kind is ActionKind.REVEAL:
            return action
    return DRAW if DRAW in legal else legal[0]


@dataclass(slots=True)
class _SeatState:
    seat: Seat
    bank_ms: float
    strikes: int = 0
    forfeited: bool = False
    substitute: Bot | None = None
    decisions: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0
    decision_ms: list[float] = field(default_factory=list)  # each decision's time, for meta.decision_ms


class MatchPlace(TypedDict):
    """Where a game sits in its match: the keys :func:`run_match` adds to each record's meta (docs/referee.md)."""

    match_id: str
    game: int  # the game's number in the match
    seed: str  # the match seed
    deal: int
    rotation: int
    slots: list[int]  # per seat, the match slot (line-up place) that sat there


@dataclass(slots=True)
class GameSetup:
    """One game: who plays (``seats``, in seat order), on which rules and cards, under which clock."""

    game_id: str
    seats: Sequence[Seat]
    rules: Rules = field(default_factory=Rules)
    dealer: Dealer | None = None
    seed: str | int | None = None  # used when no dealer is given
    time_control: TimeControl = field(default_factory=TimeControl)
    meta: MatchPlace | dict[str, Any] = field(default_factory=dict)  # extra keys for the record's meta


class GameRunner:
    """Plays one game to its end and returns its ``skyjo-game/1`` record.

    A bot at fault never stops the game: a timeout, an illegal or malformed
    answer is a strike and the referee plays :func:`default_action` for the
    seat (tagged ``auto`` in the record); after ``max_strikes`` strikes, or a
    disconnection longer than ``grace_ms``, the seat forfeits and a built-in
    ``greedy`` bot plays its remaining decisions (tagged ``forfeit``).
    """

    def __init__(self, setup: GameSetup, request_ids: Iterator[int] | None = None) -> None:
        self.setup = setup
        self.request_ids = request_ids if request_ids is not None else itertools.count(1)
        tc = setup.time_control
        self.tc = tc
        self.decision_ms = tc.decision_ms or NO_LIMIT_MS
        players = [s.name for s in setup.seats]
        if setup.dealer is not None:
            self.game = Game(len(players), setup.rules, dealer=setup.dealer, players=players)
        else:
            self.game = Game(len(players), setup.rules, seed=setup.seed, players=players)
        self.states = [_SeatState(s, float(tc.bank_ms or NO_LIMIT_MS)) for s in setup.seats]
        self.strikes: list[dict[str, Any]] = []
        self.forfeits: list[dict[str, Any]] = []
        self._pending: tuple[int, int] | None = None  # (seat, request id) being decided

    # ------------------------------------------------------------------ the game

    async def run(self) -> dict[str, Any]:
        game = self.game
        gid = self.setup.game_id
        started = time.time()
        try:
            for i, st in enumerate(self.states):  # before open(): a bot may err as soon as it hears of the game
                st.seat.set_fault_handler(functools.partial(self._out_of_band, i))
            opened = await asyncio.gather(
                *(
                    st.seat.open(GameStart(gid, i, game.players, game.rules.in_force(), self.tc))
                    for i, st in enumerate(self.states)
                )
            )
            for i, ok in enumerate(opened):
                if not ok:
                    self._forfeit(i, f"not connected within the grace period ({self.tc.grace_ms} ms) at the game start")
            self._broadcast()
            while not game.over:
                seat = game.seat
                view = game.view(seat)
                action, auto = await self._decide(seat, view)
                game.apply(action, auto)
                self._broadcast()
            assert game.ranks is not None and game.winners is not None
            result = GameResult(
                gid, tuple(game.totals), tuple(game.ranks), tuple(game.winners), tuple(sorted(game.forfeits))
            )
            for st in self.states:
                st.seat.game_over(result)
        finally:
            for st in self.states:
                try:
                    await st.seat.close()
                except Exception:
                    log.exception("closing seat %s", st.seat.name)
        return game_to_record(game, self._meta(started))

    async def _decide(self, seat: int, view: View) -> tuple[Action, str | None]:
        st = self.states[seat]
        if st.forfeited:
            return self._substitute(st).decide(view), "forfeit"
        limit = int(min(self.decision_ms, max(st.bank_ms, 0.0)))
        request_id = next(self.request_ids)
        self._pending = (seat, request_id)
        decision = Decision(self.setup.game_id, request_id, view, limit)
        try:
            if st.seat.keeps_time:
                answer = await st.seat.decide(decision)
            else:  # a backstop for seats that do not enforce the clock themselves
                # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a cancellation
                async with asyncio.timeout((limit + self.tc.grace_ms) / 1000 + 30.0):
                    answer = await st.seat.decide(decision)
        except TimeoutError:
            answer = Answer(None, float(limit), TIMEOUT, "nothing", f"no answer within {limit} ms")
        finally:
            self._pending = None
        st.decisions += 1
        st.total_ms += answer.elapsed_ms
        st.max_ms = max(st.max_ms, answer.elapsed_ms)
        if self.tc.bank_ms:  # no bank: time_left_ms stays NO_LIMIT_MS, as the protocol says
            st.bank_ms -= answer.elapsed_ms
        if st.forfeited:  # it forfeited while deciding (strikes out of turn): the stand-in plays this one at once
            return self._substitute(st).decide(view), "forfeit"
        st.decision_ms.append(answer.elapsed_ms)  # one per action not tagged "forfeit" (meta.decision_ms)
        fault, detail = answer.fault, answer.detail
        if fault is None:
            if answer.action is not None and answer.action in view.legal_actions:
                return answer.action, None
            fault = ILLEGAL
            legal = ", ".join(str(a) for a in view.legal_actions)
            detail = f"{answer.action} is not legal now ({view.decision.value}): expected one of {legal}"
        played = default_action(view)
        if fault == DISCONNECTED:
            self._forfeit(seat, detail or "disconnected longer than the grace period", request_id)
        else:
            self._strike(
                seat, fault, detail, answer.answered, request_id, played, answer.elapsed_ms, limit, view.decision.value
            )
        return played, _AUTO_TAG[fault]

    def _substitute(self, st: _SeatState) -> Bot:
        if st.substitute is None:
            st.substitute = make_builtin(SUBSTITUTE_BOT)
        return st.substitute

    def _broadcast(self) -> None:
        events = self.game.drain_events()
        if events:
            for st in self.states:
                st.seat.events(self.setup.game_id, events)

    # ------------------------------------------------------------------ faults

    def _where(self) -> dict[str, int]:
        game = self.game
        return {"round": game.round_index, "action": len(game.rounds[-1].actions)}

    def _out_of_band(self, seat: int, fault: Fault) -> None:
        """A fault that answers no pending decision: a strike, nothing played."""
        if self.game.over:
            return
        self._strike(seat, fault.reason, fault.detail, fault.answered, fault.request_id, None, None, None)

    def _strike(
        self,
        seat: int,
        reason: str,
        detail: str,
        answered: str,
        request_id: int,
        played: Action | None,
        elapsed_ms: float | None,
        limit_ms: int | None,
        decision: str | None = None,
    ) -> None:
        st = self.states[seat]
        if st.forfeited:
            return
        st.strikes += 1
        entry: dict[str, Any] = {
            "seat": seat,
            **self._where(),
            "request_id": request_id,
            "reason": reason,
            "answered": printable(answered),  # bot text, later shown on terminals: no escape sequences
            "detail": printable(detail),
            "played": str(played) if played is not None else None,
            "strikes": st.strikes,
        }
        if decision is not None:
            entry["decision"] = decision  # which decision was due (opening_reveal, draw_or_take, ...)
        if elapsed_ms is not None:
            entry["elapsed_ms"] = round(elapsed_ms, 1)
            entry["limit_ms"] = limit_ms
        self.strikes.append(entry)
        log.info("game %s seat %d (%s): strike %d: %s", self.setup.game_id, seat, st.seat.name, st.strikes, detail)
        st.seat.strike(Strike(self.setup.game_id, request_id, reason, detail, played, st.strikes, self.tc.max_strikes))
        if self.tc.max_strikes and st.strikes >= self.tc.max_strikes:
            self._forfeit(seat, f"{st.strikes} strikes (the limit is {self.tc.max_strikes})", request_id)

    def _forfeit(self, seat: int, why: str, request_id: int = 0) -> None:
        st = self.states[seat]
        if st.forfeited:
            return
        st.forfeited = True
        self.game.mark_forfeit(seat)
        self.forfeits.append({"seat": seat, **self._where(), "reason": why})
        log.info("game %s seat %d (%s) forfeits: %s", self.setup.game_id, seat, st.seat.name, why)
        st.seat.forfeited()

    def _meta(self, started: float) -> dict[str, Any]:
        tc = self.tc
        meta: dict[str, Any] = {
            "game_id": self.setup.game_id,
            **self.setup.meta,
            "bots": [{"name": st.seat.name, "version": st.seat.version} for st in self.states],
            "time_control": {
                "decision_ms": tc.decision_ms,
                "bank_ms": tc.bank_ms,
                "max_strikes": tc.max_strikes,
                "grace_ms": tc.grace_ms,
            },
            "strikes": self.strikes,
            "forfeited": self.forfeits,
            "timings": [
                {
                    "decisions": st.decisions,
                    "total_ms": round(st.total_ms, 1),
                    "max_ms": round(st.max_ms, 1),
                }
                for st in self.states
            ],
            # per seat, the time each of its decisions took, in the order of its actions that are
            # not tagged "forfeit" (the substitute's decisions are not timed): the report's histograms
            "decision_ms": [[round(ms, 2) for ms in st.decision_ms] for st in self.states],
            "started_at": round(started, 3),
            "seconds": round(time.time() - started, 3),
        }
        return meta


async def play_game(setup: GameSetup, request_ids: Iterator[int] | None = None) -> dict[str, Any]:
    """Play one game (see :class:`GameRunner`) and return its record."""
    return await GameRunner(setup, request_ids).run()


# ---------------------------------------------------------------------- matches

#: Makes the seat for match slot ``slot`` in game ``game`` (a remote seat may wait for its token).
SeatFactory = Callable[[SeatSpec, GamePlan, int], Awaitable[Seat]]
#: Told about each finished game: its index and its record.
GameSink = Callable[[int, dict[str, Any]], Awaitable[None]]


def builtin_seat(spec: SeatSpec, match_seed: str, plan: GamePlan, slot: int) -> InProcessSeat:
    """A built-in bot seeded from the match seed (by hashing, never from the deal seed)."""
    assert spec.builtin is not None
    return InProcessSeat(make_builtin(spec.builtin, bot_seed(match_seed, plan.game, slot)), spec.name)


def new_seed() -> str:
    return str(secrets.randbelow(10**12))


async def run_match(
    spec: MatchSpec,
    make_seat: SeatFactory,
    on_game: GameSink,
    *,
    match_id: str = "",
    request_ids: Iterator[int] | None = None,
) -> int:
    """Play every game of ``spec`` (``concurrency`` at once); returns how many finished.

    Game ``g`` plays the deal and seating of :func:`plan_game`; its cards come
    from :func:`deal_seed` of the match seed. Seats are made in token order so
    that concurrent games waiting for the same tokens cannot deadlock.
    """
    spec.check()
    seed = spec.seed or new_seed()
    ids = request_ids if request_ids is not None else itertools.count(1)
    n = len(spec.seats)
    gate = asyncio.Semaphore(spec.concurrency)
    finished = 0

    async def one(g: int) -> None:
        nonlocal finished
        async with gate:
            plan = plan_game(g, n, spec.rotate_seats)
            by_slot: dict[int, Seat] = {}
            order = sorted(range(n), key=lambda k: (spec.seats[k].token or "", k))
            try:
                for slot in order:
                    by_slot[slot] = await make_seat(spec.seats[slot], plan, slot)
            except BaseException:
                for made in by_slot.values():
                    await made.close()
                raise
            seats = [by_slot[plan.slots[s]] for s in range(n)]
            setup = GameSetup(
                game_id=f"{match_id}/{g}" if match_id else str(g),
                seats=seats,
                rules=spec.rules,
                dealer=SeededDealer(deal_seed(seed, plan.deal)),
                time_control=spec.time_control,
                meta=MatchPlace(
                    match_id=match_id,
                    game=g,
                    seed=seed,
                    deal=plan.deal,
                    rotation=plan.rotation,
                    slots=list(plan.slots),
                ),
            )
            record = await GameRunner(setup, ids).run()
        finished += 1
        await on_game(g, record)

    tasks = [asyncio.create_task(one(g)) for g in range(spec.first_game, spec.first_game + spec.games)]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return finished
