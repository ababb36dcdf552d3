"""Built-in bots. They implement the SDK's :class:`skyjo_bot.Bot` interface."""

from __future__ import annotations

from collections.abc import Callable

from skyjo_bot import Bot

from skyjo_ref.bots.greedy import GreedyBot
from skyjo_ref.bots.random_bot import RandomBot

#: name -> factory taking a seed (bots that need no randomness ignore it).
BUILTIN_BOTS: dict[str, Callable[[int | str | None], Bot]] = {
    "random": lambda seed: RandomBot(seed),
    "greedy": lambda seed: GreedyBot(),
}


def make_builtin(name: str, seed: int | str | None = None) -> Bot:
    """A fresh built-in bot by name; ``KeyError`` names the choices."""
    try:
        factory = BUILTIN_BOTS[name]
    except KeyError:
        raise KeyError(f"no built-in bot {name!r}: expected one of {', '.join(sorted(BUILTIN_BOTS))}") from None
    return factory(seed)


__all__ = ["BUILTIN_BOTS", "GreedyBot", "RandomBot", "make_builtin"]
