"""A cancelled referee task stays cancelled (Python 3.11's ``asyncio.wait_for`` could swallow it).

In 3.11, ``wait_for`` returns the inner result when the outer task is
cancelled in the same loop turn as the inner awaitable finishes: the
cancellation is lost and the task goes on (here: waits again, until a
30 s timeout or forever). The referee uses ``asyncio.timeout`` instead; these
tests cancel exactly in that turn and check the task ends cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from skyjo_bot.types import Action, Event, GameResult, GameStart
from skyjo_ref.bots import make_builtin
from skyjo_ref.match import GameSetup, play_game
from skyjo_ref.match.seat import Answer, Decision, InProcessSeat, Seat
from skyjo_ref.server.server import RefereeServer, ServerConfig

#: Far below the 30 s a swallowed cancellation would cost, far above a loop turn.
ENDS_WITHIN_S = 10.0


async def _until(condition: object) -> None:
    """Yield to the loop until ``condition()`` holds (each turn is deterministic: no clock involved)."""
    assert callable(condition)
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never held")


def test_wait_tokens_cancelled_as_a_token_is_released_ends_cancelled() -> None:
    async def main() -> None:
        server = RefereeServer(ServerConfig(address="127.0.0.1:0"))
        server.issue_token("a")
        task = asyncio.create_task(server.wait_tokens(0, 30.0))
        await _until(lambda: bool(getattr(server._tokens_changed, "_waiters", None)))
        server._tokens_changed.set()  # the inner wait finishes in the next turn...
        task.cancel()  # ...and the cancellation arrives in the same turn
        done, _ = await asyncio.wait({task}, timeout=ENDS_WITHIN_S)
        assert task in done, "the cancellation was swallowed: wait_tokens kept waiting"
        assert task.cancelled()

    asyncio.run(main())


class _SlowSeat(Seat):
    """A seat that does not keep time (the runner adds its backstop) and answers when told to."""

    keeps_time = False

    def __init__(self) -> None:
        self.name = "slow"
        self.asked: asyncio.Future[None] | None = None
        self.answer: asyncio.Future[Action] | None = None

    async def open(self, start: GameStart) -> bool:
        return True

    async def decide(self, decision: Decision) -> Answer:
        loop = asyncio.get_running_loop()
        self.answer = loop.create_future()
        if self.asked is not None and not self.asked.done():
            self.asked.set_result(None)
        action = await self.answer
        return Answer(action, 0.0)

    def events(self, game_id: str, events: Sequence[Event]) -> None:
        pass

    def game_over(self, result: GameResult) -> None:
        pass


def test_a_game_cancelled_as_a_seat_without_its_own_clock_answers_ends_cancelled() -> None:
    async def main() -> None:
        slow = _SlowSeat()
        slow.asked = asyncio.get_running_loop().create_future()
        setup = GameSetup("g", [slow, InProcessSeat(make_builtin("greedy"), "greedy")], seed="1")
        game = asyncio.create_task(play_game(setup))
        await slow.asked
        await _until(lambda: slow.answer is not None and bool(getattr(slow.answer, "_callbacks", None)))
        assert slow.answer is not None
        slow.answer.set_result(Action.reveal(0))  # the decision finishes in the next turn...
        game.cancel()  # ...and the cancellation arrives in the same turn
        done, _ = await asyncio.wait({game}, timeout=ENDS_WITHIN_S)
        assert game in done, "the cancellation was swallowed: the game went on"
        assert game.cancelled()

    asyncio.run(main())
