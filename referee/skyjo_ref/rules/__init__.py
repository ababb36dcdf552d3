"""The rules engine: pure game logic, no I/O (see docs/rules.md)."""

from skyjo_ref.rules.engine import (
    Dealer,
    DealError,
    FixedDealer,
    Game,
    LoggedAction,
    RoundLog,
    SeededDealer,
    check_deck,
    competition_ranks,
)

__all__ = [
    "DealError",
    "Dealer",
    "FixedDealer",
    "Game",
    "LoggedAction",
    "RoundLog",
    "SeededDealer",
    "check_deck",
    "competition_ranks",
]
