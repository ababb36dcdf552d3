"""The bot interface: one call that receives a view and returns an action.

Built-in bots, in-process Python bots and remote SDK bots all implement this
same interface, so a bot moves from one to the other without changes.
"""

from __future__ import annotations

from collections.abc import Callable

from skyjo_bot.types import Action, Event, GameResult, GameStart, View


class Bot:
    """Subclass and implement :meth:`decide`; the other hooks are optional.

    ``decide`` receives the seat's :class:`View` (``view.legal_actions`` lists
    what may be played) and returns one of those actions. The referee calls a
    bot for one game at a time, in order: ``on_game_start``, then ``decide`` and
    ``on_event`` as the game goes, then ``on_game_over``.
    """

    #: The name shown in tables and records; defaults to the class name.
    name: str = ""
    #: Your bot's version, sent in Hello and kept in game records' ``meta.bots``.
    version: str = ""

    def __init__(self) -> None:
        if not self.name:
            self.name = type(self).__name__

    def decide(self, view: View) -> Action:
        raise NotImplementedError(f"{type(self).__name__} must implement decide(view) -> Action")

    def on_game_start(self, start: GameStart) -> None:
        """A game begins: your seat, the players and the rules."""

    def on_event(self, event: Event) -> None:
        """Something public happened at the table."""

    def on_game_over(self, result: GameResult) -> None:
        """The game ended."""


class FunctionBot(Bot):
    """A bot made of one function ``view -> action``."""

    def __init__(self, decide: Callable[[View], Action], name: str | None = None) -> None:
        self.name = name or str(getattr(decide, "__name__", "function_bot"))
        super().__init__()
        self._decide = decide

    def decide(self, view: View) -> Action:
        return self._decide(view)


def bot(decide: Callable[[View], Action]) -> FunctionBot:
    """Decorator: turn ``def my_bot(view) -> Action`` into a :class:`Bot`."""
    return FunctionBot(decide)
