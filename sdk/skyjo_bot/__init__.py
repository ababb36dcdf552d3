"""skyjo_bot: write a Skyjo bot for the skyjo-ref referee.

Subclass :class:`Bot` (or decorate a function with :func:`bot`), receive a
:class:`View`, return an :class:`Action`.
"""

from skyjo_bot.bot import Bot, FunctionBot, bot
from skyjo_bot.types import (
    Action,
    ActionKind,
    DecisionKind,
    Event,
    EventKind,
    GameResult,
    GameStart,
    Grid,
    IllegalActionError,
    InvalidActionError,
    Rules,
    RulesError,
    SlotState,
    View,
    column_positions,
)

__all__ = [
    "Action",
    "ActionKind",
    "Bot",
    "DecisionKind",
    "Event",
    "EventKind",
    "FunctionBot",
    "GameResult",
    "GameStart",
    "Grid",
    "IllegalActionError",
    "InvalidActionError",
    "Rules",
    "RulesError",
    "SlotState",
    "View",
    "bot",
    "column_positions",
]
