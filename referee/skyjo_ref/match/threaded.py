"""Trusted Python bots played inside the referee's process, without gRPC: the author's fast loop.

A plain direct call (as for built-in bots) that never returns would hang the
whole run, so every call into such a bot has a deadline, enforced one of two ways:

- **direct, under an alarm** (when every seat is in-process or built in and the
  game runs in the main thread, as in ``match --in-process``): the bot is called
  in the referee's own thread with a ``SIGALRM`` timer armed for the time left;
  when it rings, :class:`BotStopped` is raised inside the bot, which stops a
  bot spinning in Python code and one blocked in ``time.sleep`` or a lock
  alike. No thread switch per decision: this is what makes it as fast as the
  built-in bots (a hand-off to a thread cost 60-100% more per game under load).
- **on the bot's own thread** (:class:`BotThread`: beside remote seats, whose
  streams must not wait; or off the main thread): the seat hands the decision
  over and waits at most the time left, then raises :class:`BotStopped` in the
  bot's thread. A bot stuck where that cannot reach it (a blocking call) is
  left on its parked thread: its seat forfeits, and every later seat of that
  bot forfeits at once, so the run ends.

Either way a late answer is a ``timeout`` strike and the default action, as
over gRPC. A bot stuck in C code that holds the GIL cannot be stopped in-process.

This gives up isolation: an in-process bot shares the referee's memory and
could read hidden cards or change the game. Use it only for your own bots.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import queue
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from skyjo_bot import Bot
from skyjo_bot.types import Action, Event, GameResult, GameStart, View

from skyjo_ref.match.runner import NO_LIMIT_MS
from skyjo_ref.match.seat import DISCONNECTED, ILLEGAL, TIMEOUT, Answer, Decision, Seat

log = logging.getLogger(__name__)


class BotStopped(BaseException):  # a BaseException, like KeyboardInterrupt: `except Exception` lets it pass
    """Raised inside a bot's ``decide`` that overran its limit, to stop it."""


@dataclass(slots=True)
class _Job:
    call: Callable[[], object]
    done: threading.Event = field(default_factory=threading.Event)
    result: object = None
    error: BaseException | None = None
    stopped: bool = False


class _NoWait(threading.Event):
    """The ``done`` of jobs nobody waits for (hooks): setting it costs nothing."""

    def set(self) -> None:
        pass


_NO_WAIT: Final = _NoWait()


#: After the first alarm, it rings again this often until the bot returns (it may catch one BotStopped).
_REPEAT_S: Final = 0.05
_alarm_armed = False


def _on_alarm(signum: int, frame: object) -> None:
    if _alarm_armed:
        raise BotStopped


def can_use_alarm() -> bool:
    """Whether calls may be timed by ``SIGALRM`` here (only the main thread receives signal handlers)."""
    return threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")


def call_with_alarm(call: Callable[[], object], limit_s: float) -> _Job:
    """Call ``call`` in this (main) thread, stopped by :class:`BotStopped` once ``limit_s`` has passed."""
    global _alarm_armed
    if signal.getsignal(signal.SIGALRM) is not _on_alarm:
        signal.signal(signal.SIGALRM, _on_alarm)
    job = _Job(call, done=_NO_WAIT)
    try:
        _alarm_armed = True
        signal.setitimer(signal.ITIMER_REAL, max(limit_s, 1e-6), _REPEAT_S)
        try:
            job.result = call()
        finally:  # an alarm that rings in here still lands in the `except BotStopped` below
            signal.setitimer(signal.ITIMER_REAL, 0)
            _alarm_armed = False
    except BotStopped:
        job.stopped = True
    except Exception as exc:  # the bot's bug: the seat turns it into a strike
        job.error = exc
    return job


def _overrides(bot: Bot, hook: str) -> bool:
    """Whether ``bot`` does something in ``hook`` (``Bot``'s own hooks do nothing)."""
    return getattr(type(bot), hook, None) is not getattr(Bot, hook) or hook in vars(bot)


class BotThread:
    """One trusted bot and how it is called: directly under an alarm (``direct``, set by its seat)
    or on its own thread (started at the first call), which runs its calls one at a time, in order.

    On the thread, hooks are queued and never waited for; ``decide`` is waited
    for with a deadline. ``hung`` says why the bot is given up (it did not return from a
    call even after being stopped), after which nothing more is sent to it.
    """

    def __init__(self, bot: Bot, name: str) -> None:
        self.bot = bot
        self.name = name
        self.hung: str = ""
        self.direct = False  # calls made in the caller's (main) thread under an alarm: see the module's docstring
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._running: _Job | None = None
        self._last_decide: _Job | None = None
        self._hooks = {
            hook for hook in ("on_game_start", "on_event", "on_game_over") if _overrides(bot, hook)
        }  # fmt: skip
        self._thread = threading.Thread(target=self._serve, name=f"skyjo bot {name}", daemon=True)
        self.hook_limit_s = NO_LIMIT_MS / 1000  # the game's decision limit, for the hooks of direct calls

    def _started(self) -> None:
        if not self._thread.is_alive() and self._thread.ident is None:
            self._thread.start()

    # ------------------------------------------------------------------ referee side

    def notify(self, hook: str, arg: object) -> None:
        """Queue a call of the bot's hook ``hook(arg)``; an exception in it is logged and ignored.
        Hooks the bot does not override (``Bot``'s own do nothing) are not queued at all."""
        if self.hung or hook not in self._hooks:
            return
        if self.direct:
            job = call_with_alarm(lambda: getattr(self.bot, hook)(arg), self.hook_limit_s)
            if job.error is not None:
                log.warning("bot %s: %s raised %r; ignored", self.name, hook, job.error)
            if job.stopped:
                self.hung = f"its {hook} did not return within {self.hook_limit_s:g} s"
            return
        self._started()
        self._jobs.put(_Job(lambda: self._hook(hook, arg), done=_NO_WAIT))

    def decide(self, view: View, limit_s: float) -> tuple[_Job | None, float]:
        """Ask for a decision and wait at most ``limit_s``: the finished job (None if it did not
        finish in time, or the previous decision is still running) and the seconds waited."""
        started = time.perf_counter()
        if self.direct:
            done = call_with_alarm(lambda: self.bot.decide(view), limit_s)
            return (None if done.stopped else done), time.perf_counter() - started
        self._started()
        previous = self._last_decide
        if previous is not None and not previous.done.wait(limit_s):
            self.hung = "a decide() it was stopped in never returned"
            return None, time.perf_counter() - started
        job = _Job(lambda: self.bot.decide(view))
        self._last_decide = job
        self._jobs.put(job)
        left = limit_s - (time.perf_counter() - started)
        if job.done.wait(max(left, 0.0)):
            return job, time.perf_counter() - started
        self._stop(job)
        return None, time.perf_counter() - started

    async def decide_async(self, view: View, limit_s: float) -> tuple[_Job | None, float]:
        """:meth:`decide` without blocking the event loop (other games and streams go on meanwhile)."""
        return await asyncio.to_thread(self.decide, view, limit_s)

    def _stop(self, job: _Job) -> None:
        """Raise :class:`BotStopped` in the bot's thread if ``job`` is still running there."""
        with self._lock:
            if self._running is job and self._thread.ident is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(self._thread.ident), ctypes.py_object(BotStopped)
                )

    # ------------------------------------------------------------------ the bot's thread

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                try:
                    with self._lock:
                        self._running = job
                    job.result = job.call()
                except BotStopped:
                    job.stopped = True
                except Exception as exc:  # the bot's bug: the seat turns it into a strike
                    job.error = exc
                finally:
                    with self._lock:
                        self._running = None
            except BotStopped:  # a stop that landed just after the call returned: the answer was late anyway
                job.stopped = True
                self._running = None
            job.done.set()

    def _hook(self, hook: str, arg: object) -> None:
        try:
            getattr(self.bot, hook)(arg)
        except Exception:
            log.warning("bot %s: %s raised; ignored", self.name, hook, exc_info=True)


class ThreadedSeat(Seat):
    """A seat played by a :class:`BotThread` under the time control (see the module's docstring).

    ``block_loop``: wait for the bot in the event loop's own thread — the
    fastest, right when every seat is in-process or built in (the games are
    CPU-bound in one process anyway); otherwise the wait runs beside the loop
    so that remote seats' streams and clocks are not held up.
    """

    keeps_time = True

    def __init__(
        self,
        thread: BotThread,
        name: str,
        *,
        version: str = "in-process",
        block_loop: bool = True,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.thread = thread
        self.name = name
        self.version = version
        self.block_loop = block_loop
        self._on_close = on_close

    async def open(self, start: GameStart) -> bool:
        thread = self.thread
        thread.direct = self.block_loop and can_use_alarm()
        limit_ms = start.time_control.decision_ms if start.time_control is not None else 0
        thread.hook_limit_s = (limit_ms or NO_LIMIT_MS) / 1000
        thread.notify("on_game_start", start)
        return True

    async def decide(self, decision: Decision) -> Answer:
        thread = self.thread
        if thread.hung:
            return Answer(
                None,
                0.0,
                DISCONNECTED,
                "nothing",
                f"in-process bot {thread.name} is stuck ({thread.hung}); its seats forfeit",
            )
        limit_s = decision.time_left_ms / 1000
        if thread.direct or self.block_loop:
            job, waited_s = thread.decide(decision.view, limit_s)
        else:
            job, waited_s = await thread.decide_async(decision.view, limit_s)
        elapsed = waited_s * 1000
        if thread.hung:
            return Answer(
                None, elapsed, DISCONNECTED, "nothing", f"in-process bot {thread.name} is stuck ({thread.hung})"
            )
        if job is None:
            return Answer(
                None, elapsed, TIMEOUT, "nothing", f"no answer within {decision.time_left_ms} ms (the bot was stopped)"
            )
        if job.error is not None:
            text = f"raised {type(job.error).__name__}: {job.error}"
            return Answer(None, elapsed, ILLEGAL, text, f"decide() {text}; expected one of the legal actions")
        action = job.result
        if not isinstance(action, Action):
            return Answer(
                None, elapsed, ILLEGAL, f"returned {action!r}", "decide() must return an Action (e.g. Action.draw())"
            )
        if elapsed > decision.time_left_ms:
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
            self.thread.notify("on_event", event)

    def game_over(self, result: GameResult) -> None:
        self.thread.notify("on_game_over", result)

    async def close(self) -> None:
        if self._on_close is not None:
            self._on_close()
            self._on_close = None
