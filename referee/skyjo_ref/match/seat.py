"""A seat at the table, as the match runner sees it: whatever plays, it answers decisions.

In-process bots (built-in or any :class:`skyjo_bot.Bot`) and remote gRPC bots
both implement :class:`Seat`. A seat only reports what its bot answered, how
long it took, and what went wrong; judging it (strikes, default actions,
forfeits) is the runner's policy, in one place.
"""

from __future__ import annotations

import abc
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from skyjo_bot import Bot
from skyjo_bot.types import Action, Event, GameResult, GameStart, Strike, View

log = logging.getLogger(__name__)

#: Why an answer is at fault. ``timeout``, ``illegal`` and ``malformed`` are strikes;
#: ``disconnected`` (away longer than the grace period) is a forfeit.
TIMEOUT: Final = "timeout"
ILLEGAL: Final = "illegal"
MALFORMED: Final = "malformed"
DISCONNECTED: Final = "disconnected"


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision asked of a seat: ``view.legal_actions`` lists what it may play."""

    game_id: str
    request_id: int
    view: View
    time_left_ms: int  # the smaller of the per-decision limit and the seat's bank


@dataclass(frozen=True, slots=True)
class Answer:
    """What a seat made of a decision: an action, or a fault saying what went wrong."""

    action: Action | None
    elapsed_ms: float
    fault: str | None = None  # TIMEOUT, ILLEGAL, MALFORMED or DISCONNECTED
    answered: str = ""  # what the bot answered, in words ("index 9", "raised ValueError: ...")
    detail: str = ""  # what was wrong and what was expected


@dataclass(frozen=True, slots=True)
class Fault:
    """A fault outside any pending decision (a reply out of turn, a wrong request id...)."""

    reason: str
    detail: str
    request_id: int = 0
    answered: str = ""


FaultHandler = Callable[[Fault], None]


class Seat(abc.ABC):
    """One seat of one game. The runner calls, in order: :meth:`open`, then
    :meth:`decide` / :meth:`events` / :meth:`strike` as the game goes, then
    :meth:`game_over` and :meth:`close` (always, even after an error)."""

    #: Display name (seat name in the record) and the bot's version for the record's meta.
    name: str
    version: str = ""
    #: True when :meth:`decide` itself returns within the time left (else the runner adds a backstop).
    keeps_time: bool = False

    def set_fault_handler(self, handler: FaultHandler) -> None:  # noqa: B027 - optional hook
        """Remote seats report faults that are not answers to a decision through ``handler``."""

    @abc.abstractmethod
    async def open(self, start: GameStart) -> bool:
        """Tell the bot a game begins; False when it cannot play (not connected within the grace period)."""

    @abc.abstractmethod
    async def decide(self, decision: Decision) -> Answer:
        """Ask for a decision; return within ``decision.time_left_ms`` (plus any grace for a reconnect)."""

    @abc.abstractmethod
    def events(self, game_id: str, events: Sequence[Event]) -> None:
        """Public events, round ends and the game end included. Must not block."""

    def strike(self, strike: Strike) -> None:  # noqa: B027 - optional hook
        """The referee played for this seat (or counted a fault against it)."""

    def forfeited(self) -> None:  # noqa: B027 - optional hook
        """The seat forfeited: from now on a built-in bot plays for it; ignore what the bot sends."""

    @abc.abstractmethod
    def game_over(self, result: GameResult) -> None:
        """The game ended. Must not block."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """The game is done with this seat (release what :meth:`open` took)."""


class InProcessSeat(Seat):
    """A :class:`skyjo_bot.Bot` called directly, without gRPC: fast, for built-in and trusted bots.

    The call runs in the event loop, so a bot that hangs would hang the
    referee: run untrusted bots as subprocesses instead. An exception in
    ``decide`` (or an answer that is not an action) is an ``illegal`` fault;
    one in a notification hook is logged and otherwise ignored. With
    ``timed=True`` a decision that took longer than its limit is a timeout.
    """

    keeps_time = True  # it returns as soon as the bot does (a bot that hangs hangs the loop: see above)

    def __init__(self, bot: Bot, name: str | None = None, *, version: str = "builtin", timed: bool = False) -> None:
        self.bot = bot
        self.name = name or bot.name
        self.version = version
        self.timed = timed

    async def open(self, start: GameStart) -> bool:
        self._hook("on_game_start", start)
        return True

    async def decide(self, decision: Decision) -> Answer:
        started = time.perf_counter()
        try:
            action = self.bot.decide(decision.view)
        except Exception as exc:  # a bot's bug is a strike, never a crash of the game
            elapsed = (time.perf_counter() - started) * 1000
            text = f"raised {type(exc).__name__}: {exc}"
            return Answer(None, elapsed, ILLEGAL, text, f"decide() {text}; expected one of the legal actions")
        elapsed = (time.perf_counter() - started) * 1000
        if not isinstance(action, Action):
            return Answer(
                None, elapsed, ILLEGAL, f"returned {action!r}", "decide() must return an Action (e.g. Action.draw())"
            )
        if self.timed and elapsed > decision.time_left_ms:
            return Answer(
                None,
                elapsed,
                TIMEOUT,
                str(action),
                f"answered after {elapsed:.0f} ms; the limit was {decision.time_left_ms} ms",
            )
        return Answer(action, elapsed, answered=str(action))

    def events(self, game_id: str, events: Sequence[Event]) -> None:
        for event in events:
            self._hook("on_event", event)

    def game_over(self, result: GameResult) -> None:
        self._hook("on_game_over", result)

    def _hook(self, name: str, arg: object) -> None:
        try:
            getattr(self.bot, name)(arg)
        except Exception:
            log.warning("bot %s: %s raised; ignored", self.name, name, exc_info=True)
