"""The execution layer's vocabulary: what the tournament, the gate and ``match`` hand it, and its errors.

Neutral on purpose: a game's identity, the part of a config a referee room
needs (:class:`RoomConfig`), where notes and bot faults go (:class:`Notes`,
:class:`FaultLog`). Nothing here knows of ratings, schedules or verdicts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

from skyjo_bot.types import Rules, TimeControl

from skyjo_ref.errors import Unfinished
from skyjo_ref.seating import seat_order

if TYPE_CHECKING:  # the bots' process layer loads when bots run, not with the shared types
    from skyjo_ref.players import BotSpec

#: How long a bot process has to start and connect, unless the caller says (``match --connect-timeout``,
#: a config's ``connect_timeout_s``): the same default in every command.
CONNECT_TIMEOUT_S: Final = 30.0
#: How long a ``remote:`` bot has to connect to a referee of our own, by default (a person starts it by hand).
REMOTE_CONNECT_TIMEOUT_S: Final = 300.0


class RunUnfinished(Unfinished):
    """The run stopped before its end (a bot or the referee failed); finished games are kept."""


class BotCannotRun(RunUnfinished):
    """A bot that cannot run at all as configured (it cannot be loaded): the user's input to fix."""


@dataclass(frozen=True, slots=True, order=True)
class GameId:
    """One game of the schedule: a table of bots (sorted names), a deal and a seating.

    ``rotation`` indexes the fixed seatings of the table's size
    (:func:`skyjo_ref.seating.seat_order`): below ``k`` the cyclic rotations, so
    a key says who sat where whatever design (rotations or balanced) played it.
    """

    table: tuple[str, ...]
    deal: int
    rotation: int

    @property
    def key(self) -> str:
        """The stable text key (``alice+bob+carol/3/1``); bot names never hold ``+`` or ``/``."""
        return f"{'+'.join(self.table)}/{self.deal}/{self.rotation}"

    @property
    def seats(self) -> tuple[str, ...]:
        """Bot names in seat order: seating ``rotation`` of the table (below ``k``: rotated left by it)."""
        return tuple(self.table[i] for i in seat_order(len(self.table), self.rotation))

    @property
    def block(self) -> tuple[tuple[str, ...], int]:
        """The duplicate block: a table and a deal, all its seatings together."""
        return (self.table, self.deal)

    @classmethod
    def parse(cls, key: str) -> GameId:
        table, deal, rotation = key.split("/")
        return cls(tuple(table.split("+")), int(deal), int(rotation))

    def file_name(self) -> str:
        """``alice+bob__d3_r1.json``; a long table (8 long names) is shortened with a digest of its names."""
        table = "+".join(self.table)
        if len(table) > 150:
            table = f"{table[:100]}~{hashlib.sha256(table.encode()).hexdigest()[:16]}"
        return f"{table}__d{self.deal}_r{self.rotation}.json"


@dataclass(frozen=True, slots=True)
class PlayedGame:
    """A finished game for a writer: its id, its deal seed (text), its record and how long it took."""

    game: GameId
    deal_seed: str
    record: Mapping[str, Any]
    duration_s: float


@dataclass(frozen=True, slots=True)
class MatchSlice:
    """Game ``game`` of the match with seed ``seed`` (seats rotating), played on its own.

    A game's seed is usually a match seed of its own (a tournament's deal); a
    slice instead plays one game of a larger match exactly as the whole match
    would (``MatchSpec.first_game``), so ``match --executor`` equals ``local``.
    """

    seed: str
    game: int

    def __str__(self) -> str:
        return f"{self.seed}#{self.game}"


#: How a game is seeded: its own match seed, or a slice of a match.
GameSeed = str | MatchSlice


@dataclass(frozen=True, slots=True)
class RefereeConfig:
    """Where games are played: an in-process referee (``listen``) or a running one (``address``)."""

    address: str | None = None
    control_token: str | None = None
    listen: str = "127.0.0.1:0"


@dataclass(frozen=True, slots=True)
class RoomConfig:
    """What a referee room (a referee and its bots' processes) needs: the bots, the game, where logs go."""

    bots: tuple[BotSpec, ...]
    rules: Rules
    time_control: TimeControl
    players_per_game: int
    connect_timeout_s: float
    output: Path  # bot processes' output goes to output/logs
    referee: RefereeConfig = field(default_factory=RefereeConfig)
    hidden: tuple[Path, ...] = ()  # what isolated bots must not see besides the output folder (the config file)

    def bot(self, name: str) -> BotSpec:
        for entry in self.bots:
            if entry.name == name:
                return entry
        raise KeyError(name)


class Notes(Protocol):
    """Where the execution layer says what happened (a bot restarted, a worker left); called on the event loop."""

    def note(self, message: str) -> None: ...


class QuietNotes:
    def note(self, message: str) -> None:
        pass


class FaultLog(Protocol):
    """Where bot faults are kept (the tournament's store is one)."""

    def add_fault(self, bot: str, kind: str, detail: str, game_key: str | None = None) -> Any: ...


class BotFault(NamedTuple):
    """One bot fault as a :class:`FaultLog` is told it (a store adds when; ``game_key`` None: between games)."""

    bot: str
    kind: str
    detail: str
    game_key: str | None


@dataclass(slots=True)
class FaultList:
    """Bot faults kept in memory (a Dask worker's, shipped to the coordinator with the next game)."""

    rows: list[BotFault] = field(default_factory=list)

    def add_fault(self, bot: str, kind: str, detail: str, game_key: str | None = None) -> None:
        self.rows.append(BotFault(bot, kind, detail, game_key))
