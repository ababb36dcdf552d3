"""The match runner: plays games between seats under a time control (see docs/referee.md).

Below the referee server, above the rules engine. It knows nothing of gRPC:
remote seats are one more :class:`Seat` implementation, in ``skyjo_ref.server``.
"""

from skyjo_bot.types import TimeControl

from skyjo_ref.match.runner import (
    GameRunner,
    GameSetup,
    builtin_seat,
    default_action,
    play_game,
    run_match,
)
from skyjo_ref.match.schedule import GamePlan, bot_seed, deal_seed, plan_game
from skyjo_ref.match.seat import Answer, Decision, Fault, InProcessSeat, Seat
from skyjo_ref.match.spec import SUBSTITUTE_BOT, MatchSpec, MatchSpecError, SeatSpec

__all__ = [
    "SUBSTITUTE_BOT",
    "Answer",
    "Decision",
    "Fault",
    "GamePlan",
    "GameRunner",
    "GameSetup",
    "InProcessSeat",
    "MatchSpec",
    "MatchSpecError",
    "Seat",
    "SeatSpec",
    "TimeControl",
    "bot_seed",
    "builtin_seat",
    "deal_seed",
    "default_action",
    "plan_game",
    "play_game",
    "run_match",
]
