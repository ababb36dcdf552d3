"""What a match is: seats, rules, time control, games, seed. Plain data, checked once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from skyjo_bot.types import MAX_PLAYERS, MIN_PLAYERS, Rules, TimeControl

from skyjo_ref.bots import BUILTIN_BOTS
from skyjo_ref.errors import UsageError

#: The built-in bot that finishes a game for a seat that forfeited.
SUBSTITUTE_BOT: Final = "greedy"


class MatchSpecError(UsageError):
    """A match that cannot be played; the message says what is wrong and what is expected."""


@dataclass(frozen=True, slots=True)
class SeatSpec:
    """Who sits in a seat: a built-in bot played inside the referee, or a bot token."""

    name: str
    builtin: str | None = None
    token: str | None = None

    @classmethod
    def of_builtin(cls, builtin: str, name: str | None = None) -> SeatSpec:
        return cls(name or builtin, builtin=builtin)

    @classmethod
    def of_token(cls, token: str, name: str) -> SeatSpec:
        return cls(name, token=token)


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """Some games between the same seats (seat order of the first game).

    ``seed`` empty: the referee picks one and reports it in every record's
    ``meta.seed``. With ``rotate_seats`` each deal is played in every cyclic
    rotation of the seats before the next deal (``games`` should then be a
    multiple of the number of seats). ``concurrency``: games played at once.
    ``first_game``: play games ``first_game`` to ``first_game + games - 1`` of
    the match with this seed, each exactly as in the whole match (a slice of a
    match: its games spread over several referees).
    """

    seats: tuple[SeatSpec, ...]
    rules: Rules = field(default_factory=Rules)
    time_control: TimeControl = field(default_factory=TimeControl)
    games: int = 1
    seed: str = ""
    rotate_seats: bool = False
    concurrency: int = 1
    first_game: int = 0

    def check(self) -> None:
        """Raise :class:`MatchSpecError` naming the first thing that is wrong."""
        n = len(self.seats)
        if not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise MatchSpecError(f"a match needs {MIN_PLAYERS} to {MAX_PLAYERS} seats, got {n}")
        tokens: set[str] = set()
        for i, seat in enumerate(self.seats):
            if (seat.builtin is None) == (seat.token is None):
                raise MatchSpecError(f"seat {i} ({seat.name!r}) must name exactly one of a built-in bot or a token")
            if seat.builtin is not None and seat.builtin not in BUILTIN_BOTS:
                raise MatchSpecError(
                    f"seat {i}: no built-in bot {seat.builtin!r}: expected one of {', '.join(sorted(BUILTIN_BOTS))}"
                )
            if seat.token is not None:
                if seat.token in tokens:
                    raise MatchSpecError(
                        f"seat {i} ({seat.name!r}) uses a token another seat uses: "
                        "a token holds one seat of a game; issue one token per seat"
                    )
                tokens.add(seat.token)
        if self.games < 1:
            raise MatchSpecError(f"games must be at least 1, got {self.games}")
        if self.first_game < 0:
            raise MatchSpecError(f"first_game must be 0 or more, got {self.first_game}")
        if self.concurrency < 1:
            raise MatchSpecError(f"concurrency must be at least 1, got {self.concurrency}")
