"""Real positions for the check cases, from the rules engine: nothing here is made up by hand.

A crafted decision is the first position of a seeded game (``greedy`` on every
seat) where the seat to move faces what the case asks for: a decision kind, a
forced swap, the last turn of a round, a preset's rules. :class:`TableGame` is
a whole game the bot plays against ``greedy`` through the scripted referee.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from skyjo_bot import convert
from skyjo_bot.types import Action, DecisionKind, GameResult, GameStart, Rules, TimeControl, View
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb

from skyjo_ref.bots import GreedyBot
from skyjo_ref.rules.engine import Game

#: The clock a check announces: a decision may take 10 s (a loaded machine), never forfeit on strikes.
CHECK_CLOCK: Final = TimeControl(decision_ms=10_000, bank_ms=0, max_strikes=0, grace_ms=30_000)
#: Two seats: the bot and greedy (players as a league names them).
PLAYERS: Final = ("you", "greedy")
#: Seeds tried, in order, for a position a case asks for.
SEEDS: Final = tuple(f"check-bot-{n}" for n in range(40))


@dataclass(frozen=True, slots=True)
class Position:
    """One decision due: the GameStart its seat got and the View (with legal actions) it must answer."""

    start: GameStart
    view: View

    def request(self, request_id: int, time_left_ms: int = CHECK_CLOCK.decision_ms) -> pb.PlayResponse:
        return pb.PlayResponse(
            decision=convert.decision_request_to_proto(request_id, self.start.game_id, self.view, time_left_ms)
        )

    def game_start(self) -> pb.PlayResponse:
        return pb.PlayResponse(game_start=convert.game_start_to_proto(self.start))

    def game_over(self) -> pb.PlayResponse:
        """A GameOver for this game (the check ends it here; the totals are those so far)."""
        totals = self.view.totals
        order = sorted(totals)
        ranks = tuple(order.index(t) + 1 for t in totals)
        winners = tuple(i for i, r in enumerate(ranks) if r == 1)
        return pb.PlayResponse(
            game_over=convert.game_over_to_proto(GameResult(self.start.game_id, tuple(totals), ranks, winners))
        )


def find_position(name: str, wanted: Callable[[View], bool], rules: Rules | None = None, players: int = 2) -> Position:
    """The first position of a seeded greedy game where the seat to move's view satisfies ``wanted``."""
    greedy = GreedyBot()
    for seed in SEEDS:
        game = Game(len(PLAYERS), rules or Rules(), seed=seed, players=PLAYERS)
        while not game.over:
            seat = game.seat
            view = game.view(seat)
            if wanted(view):
                start = GameStart(f"check-{name}", seat, game.players, game.rules, CHECK_CLOCK)
                return Position(start, view)
            game.apply(greedy.decide(view))
    raise LookupError(f"no position for check {name!r} in {len(SEEDS)} seeded games")


def of_kind(kind: DecisionKind) -> Callable[[View], bool]:
    return lambda view: view.decision is kind


def after_column_clear(view: View) -> bool:
    """A taken card to place (a forced swap) on a grid with a column cleared: removed slots are not open."""
    return view.decision is DecisionKind.SWAP_AFTER_TAKE and len(view.my_grid.open_positions()) < 12


def last_turn(view: View) -> bool:
    """Another seat ended the round: this is the seat's last turn."""
    return view.finisher is not None and view.finisher != view.seat and view.decision is DecisionKind.DRAW_OR_TAKE


class TableGame:
    """A whole game: the bot on seat 0, ``greedy`` on seat 1; the messages seat 0 gets, and its answers applied.

    ``end_score`` low: a game of one or two rounds, so a check plays games quickly.
    """

    def __init__(self, game_id: str, seed: str, end_score: int = 20) -> None:
        self.game_id = game_id
        self.game = Game(2, Rules(end_score=end_score), seed=seed, players=PLAYERS)
        self.greedy = GreedyBot()
        self.decisions = 0

    def start(self) -> pb.PlayResponse:
        start = GameStart(self.game_id, 0, self.game.players, self.game.rules, CHECK_CLOCK)
        return pb.PlayResponse(game_start=convert.game_start_to_proto(start))

    def advance(self) -> list[pb.PlayResponse]:
        """Play greedy's turns until seat 0 must decide (or the game ends): the events, rounds' results, and
        then the DecisionRequest (with no id yet: :meth:`request`) or the GameOver."""
        while not self.game.over and self.game.seat != 0:
            self.game.apply(self.greedy.decide(self.game.view(1)))
        out = convert.event_responses(self.game.drain_events(), self.game_id)
        if self.game.over:
            assert self.game.ranks is not None and self.game.winners is not None
            result = GameResult(self.game_id, tuple(self.game.totals), tuple(self.game.ranks), tuple(self.game.winners))
            out.append(pb.PlayResponse(game_over=convert.game_over_to_proto(result)))
        return out

    def request(self, request_id: int) -> pb.PlayResponse:
        self.decisions += 1
        view = self.game.view(0)
        return pb.PlayResponse(
            decision=convert.decision_request_to_proto(request_id, self.game_id, view, CHECK_CLOCK.decision_ms)
        )

    def legal(self) -> tuple[Action, ...]:
        return self.game.legal_actions()

    def apply(self, action: Action) -> None:
        self.game.apply(action)
