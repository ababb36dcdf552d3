"""skyjo_bot: write a Skyjo bot for the skyjo-ref referee.

Subclass :class:`Bot` (or decorate a function with :func:`bot`), receive a
:class:`View`, return an :class:`Action`. Run it with
``python -m skyjo_bot run mybot.py``, or from Python with :func:`run`.
"""

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from skyjo_bot.client import BotClient, run


def __getattr__(name: str) -> Any:
    """``run`` and ``BotClient`` load gRPC only when used (built-in bots never need it)."""
    if name in ("run", "BotClient"):
        from skyjo_bot import client

        return getattr(client, name)
    raise AttributeError(f"module 'skyjo_bot' has no attribute {name!r}")


__all__ = [
    "Action",
    "ActionKind",
    "Bot",
    "BotClient",
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
    "run",
]
