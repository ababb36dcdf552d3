"""The value types a bot sees: actions, rules and the per-seat view.

These are shared by both sides of the table: the referee's rules engine builds
them, bots (built-in, in-process or remote over gRPC) receive them. They are
pure data and know nothing of gRPC or of the engine.

Grid positions are numbered row-major, ``pos = 4*row + col`` (rows 0-2,
columns 0-3); column ``c`` is positions ``c, c+4, c+8``.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any, ClassVar, Final, NamedTuple

ROWS: Final = 3
COLUMNS: Final = 4
GRID_SIZE: Final = ROWS * COLUMNS
MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 8

#: How many cards of each value the 150-card deck holds.
DECK_COUNTS: Final[Mapping[int, int]] = {-2: 5, -1: 10, 0: 15, **{v: 10 for v in range(1, 13)}}
DECK_SIZE: Final = sum(DECK_COUNTS.values())
CARD_VALUES: Final = tuple(sorted(DECK_COUNTS))


def full_deck() -> list[int]:
    """The 150 card values, sorted (shuffle before dealing)."""
    return [value for value, count in sorted(DECK_COUNTS.items()) for _ in range(count)]


def column_positions(column: int) -> tuple[int, int, int]:
    """The three grid positions of ``column`` (0-3), top to bottom."""
    return (column, column + COLUMNS, column + 2 * COLUMNS)


class InvalidActionError(ValueError):
    """A string or mapping that does not spell an action."""


class IllegalActionError(ValueError):
    """A well-formed action that the rules do not allow now."""


class RulesError(ValueError):
    """An unknown rules option, preset or value."""


# --------------------------------------------------------------------------- actions


class ActionKind(StrEnum):
    """The action vocabulary of ``skyjo-game/1``."""

    REVEAL = "reveal"
    DRAW = "draw"
    TAKE = "take"
    SWAP = "swap"


class Action:
    """One action, as in a game record: ``reveal``/``swap`` take a position.

    Actions are interned: ``Action.swap(3) is Action.swap(3)``. The ``repr``
    is valid Python and ``str`` is the text form ``Action.parse`` reads.
    """

    __slots__ = ("kind", "pos")
    kind: ActionKind
    pos: int | None

    _interned: ClassVar[dict[tuple[ActionKind, int | None], Action]] = {}

    def __new__(cls, kind: ActionKind | str, pos: int | None = None) -> Action:
        try:
            kind = ActionKind(kind)
        except ValueError:
            raise InvalidActionError(f"unknown action {kind!r}: expected one of reveal, draw, take, swap") from None
        if kind in (ActionKind.REVEAL, ActionKind.SWAP):
            if isinstance(pos, bool) or not isinstance(pos, int) or not 0 <= pos < GRID_SIZE:
                raise InvalidActionError(f"{kind.value} needs a position 0-11 (pos = 4*row + col), got {pos!r}")
        elif pos is not None:
            raise InvalidActionError(f"{kind.value} takes no position, got {pos!r}")
        key = (kind, pos)
        found = cls._interned.get(key)
        if found is None:
            found = object.__new__(cls)
            object.__setattr__(found, "kind", kind)
            object.__setattr__(found, "pos", pos)
            cls._interned[key] = found
        return found

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Action is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Action, (self.kind.value, self.pos))

    @classmethod
    def reveal(cls, pos: int) -> Action:
        return cls(ActionKind.REVEAL, pos)

    @classmethod
    def swap(cls, pos: int) -> Action:
        return cls(ActionKind.SWAP, pos)

    @classmethod
    def draw(cls) -> Action:
        return cls(ActionKind.DRAW)

    @classmethod
    def take(cls) -> Action:
        return cls(ActionKind.TAKE)

    @classmethod
    def parse(cls, text: str) -> Action:
        """Read ``"draw"``, ``"take"``, ``"reveal 5"`` or ``"swap 11"``."""
        words = text.split()
        if not words or len(words) > 2:
            raise InvalidActionError(
                f"cannot read action {text!r}: expected 'draw', 'take', 'reveal POS' or 'swap POS'"
            )
        pos: int | None = None
        if len(words) == 2:
            try:
                pos = int(words[1])
            except ValueError:
                raise InvalidActionError(
                    f"cannot read action {text!r}: position {words[1]!r} is not a number 0-11"
                ) from None
        return cls(words[0].lower(), pos)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Action:
        """Read the record form ``{"act": "swap", "pos": 3}`` (other keys ignored)."""
        if "act" not in data:
            raise InvalidActionError(f"action {dict(data)!r} has no 'act'")
        return cls(data["act"], data.get("pos"))

    def to_dict(self) -> dict[str, Any]:
        if self.pos is None:
            return {"act": self.kind.value}
        return {"act": self.kind.value, "pos": self.pos}

    def __str__(self) -> str:
        return self.kind.value if self.pos is None else f"{self.kind.value} {self.pos}"

    def __repr__(self) -> str:
        return f"Action.{self.kind.value}({'' if self.pos is None else self.pos})"


# ----------------------------------------------------------------------------- rules


class FinisherPenalty(StrEnum):
    DOUBLE_IF_POSITIVE = "double_if_positive"
    DOUBLE = "double"
    PLUS_10 = "plus_10"


class NextRoundStarter(StrEnum):
    FINISHER = "finisher"
    ROUND_WINNER = "round_winner"
    HIGHEST_REVEAL = "highest_reveal"


class FinalTie(StrEnum):
    SHARED = "shared"
    EXTRA_ROUND = "extra_round"


_OPTION_TYPES: Final[dict[str, Any]] = {
    "column_clear": bool,
    "clear_on_final_reveal": bool,
    "finisher_penalty": FinisherPenalty,
    "next_round_starter": NextRoundStarter,
    "end_score": int,
    "final_tie": FinalTie,
}

#: Named option sets: the publisher's rules and one per rulebook text in seeds/.
PRESETS: Final[Mapping[str, Mapping[str, Any]]] = {
    "official": {},
    # 000 (Indonesian) and 001 (Turkish, the same text): the round's winner
    # starts the next round; a finisher who is not lowest is doubled. The
    # column rule is optional in these texts: add column_clear: false.
    "indonesian": {"finisher_penalty": "double", "next_round_starter": "round_winner"},
    "turkish": {"finisher_penalty": "double", "next_round_starter": "round_winner"},
    # 002 (French): highest opening reveal starts every round; +10 penalty.
    "french": {"finisher_penalty": "plus_10", "next_round_starter": "highest_reveal"},
    # 003 (Slovenian): highest opening reveal starts every round; doubled
    # whatever the sign; a tie for the win plays another round.
    "slovenian": {
        "finisher_penalty": "double",
        "next_round_starter": "highest_reveal",
        "final_tie": "extra_round",
    },
}


@dataclass(frozen=True, slots=True)
class Rules:
    """A complete set of rules options (see docs/rules.md); ``official`` by default."""

    column_clear: bool = True
    clear_on_final_reveal: bool = True
    finisher_penalty: FinisherPenalty = FinisherPenalty.DOUBLE_IF_POSITIVE
    next_round_starter: NextRoundStarter = NextRoundStarter.FINISHER
    end_score: int = 100
    final_tie: FinalTie = FinalTie.SHARED
    preset: str | None = field(default="official", compare=False)

    OPTIONS: ClassVar[tuple[str, ...]] = tuple(_OPTION_TYPES)

    def __post_init__(self) -> None:
        for name, kind in _OPTION_TYPES.items():
            value = getattr(self, name)
            if kind is bool or kind is int:
                if type(value) is not kind:
                    expected = "true or false" if kind is bool else "an integer"
                    raise RulesError(f"rules option {name} must be {expected}, got {value!r}")
            else:
                object.__setattr__(self, name, _enum_value(name, kind, value))
        if self.end_score <= 0:
            raise RulesError(f"rules option end_score must be an integer > 0, got {self.end_score}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None = None) -> Rules:
        """Build rules from ``{"preset": ..., option: value, ...}`` (the record's ``rules``).

        Options given beside a preset override it; unknown keys are refused,
        since they could change the game.
        """
        data = dict(data or {})
        preset = data.pop("preset", None)
        base = "official" if preset is None else preset
        if not isinstance(base, str) or base not in PRESETS:
            raise RulesError(f"unknown rules preset {preset!r}: expected one of {', '.join(PRESETS)}")
        unknown = sorted(set(data) - set(_OPTION_TYPES))
        if unknown:
            raise RulesError(
                f"unknown rules option {unknown[0]!r}: expected preset or one of {', '.join(_OPTION_TYPES)}"
            )
        options = {**PRESETS[base], **data}
        return cls(**options, preset=preset if preset is not None or not data else None)

    @classmethod
    def preset_named(cls, name: str) -> Rules:
        return cls.from_dict({"preset": name})

    def to_dict(self) -> dict[str, Any]:
        """The compact record form: the preset plus only the options that differ from it."""
        out: dict[str, Any] = {}
        base_name = self.preset if self.preset in PRESETS else "official"
        base = Rules.from_dict({"preset": base_name})
        if self.preset is not None:
            out["preset"] = self.preset
        for name in _OPTION_TYPES:
            value = getattr(self, name)
            if value != getattr(base, name):
                out[name] = value.value if isinstance(value, Enum) else value
        return out

    def options(self) -> dict[str, Any]:
        """Every option with its value, in plain JSON types."""
        return {name: (v.value if isinstance(v, Enum) else v) for name in _OPTION_TYPES for v in (getattr(self, name),)}

    def replace(self, **changes: Any) -> Rules:
        return dataclasses.replace(self, **changes)

    def in_force(self) -> Rules:
        """These rules as they act in a game, as GameStart reports them: ``clear_on_final_reveal``
        is false when ``column_clear`` is false, since no column can clear then."""
        if not self.column_clear and self.clear_on_final_reveal:
            return dataclasses.replace(self, clear_on_final_reveal=False)
        return self


def _enum_value(name: str, kind: type[Enum], value: Any) -> Any:
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(str(member.value) for member in kind)
        raise RulesError(f"rules option {name} must be one of {choices}, got {value!r}") from None


# ------------------------------------------------------------------------------ view


class DecisionKind(StrEnum):
    """Which decision is due: the four moments a player chooses something."""

    OPENING_REVEAL = "opening_reveal"  # reveal one of two opening cards
    DRAW_OR_TAKE = "draw_or_take"  # start of a turn
    SWAP_OR_REVEAL = "swap_or_reveal"  # after drawing: swap the drawn card, or discard it and reveal
    SWAP_AFTER_TAKE = "swap_after_take"  # after taking the discard: swap it


class SlotState(StrEnum):
    HIDDEN = "hidden"
    REVEALED = "revealed"
    REMOVED = "removed"


@dataclass(frozen=True, slots=True)
class Grid:
    """One player's 12 slots as everyone sees them: hidden values are ``None``."""

    states: tuple[SlotState, ...]
    values: tuple[int | None, ...]  # the value of each revealed slot, else None

    def hidden_positions(self) -> tuple[int, ...]:
        return tuple(p for p, s in enumerate(self.states) if s is SlotState.HIDDEN)

    def revealed_positions(self) -> tuple[int, ...]:
        return tuple(p for p, s in enumerate(self.states) if s is SlotState.REVEALED)

    def open_positions(self) -> tuple[int, ...]:
        """Positions that are not removed (hidden or revealed)."""
        return tuple(p for p, s in enumerate(self.states) if s is not SlotState.REMOVED)

    def revealed_sum(self) -> int:
        return sum(v for v in self.values if v is not None)

    def column(self, column: int) -> tuple[int | None, int | None, int | None]:
        a, b, c = column_positions(column)
        return (self.values[a], self.values[b], self.values[c])

    def render(self) -> str:
        """Three text lines, ``?`` for hidden and ``.`` for removed slots."""

        def cell(p: int) -> str:
            if self.states[p] is SlotState.HIDDEN:
                return "?"
            if self.states[p] is SlotState.REMOVED:
                return "."
            return str(self.values[p])

        return "\n".join(" ".join(f"{cell(4 * r + c):>3}" for c in range(COLUMNS)) for r in range(ROWS))


@dataclass(frozen=True, slots=True)
class View:
    """Everything one seat may know when a decision is due: the bot's whole world.

    It holds exactly what docs/rules.md's "Hidden information" allows: revealed and
    removed slots of every grid, the discard pile (all of it was seen), pile
    sizes, the card in hand (only to the seat holding it), scores, and whose
    turn it is. Never a hidden value or the draw pile's order.
    """

    seat: int
    players: tuple[str, ...]
    rules: Rules
    round: int  # 0-based round index
    decision: DecisionKind
    grids: tuple[Grid, ...]  # one per seat
    discard_pile: tuple[int, ...]  # bottom first; the top card is the last
    draw_pile_size: int
    hand: int | None  # the card drawn or taken, when a swap decision is due
    totals: tuple[int, ...]  # game totals before this round
    round_scores: tuple[tuple[int, ...], ...]  # scores of finished rounds, one tuple per round
    finisher: int | None  # the seat that ended the round, once someone has
    starter: int | None  # who starts (started) this round's turns; None during opening reveals
    legal_actions: tuple[Action, ...] = ()

    @property
    def num_players(self) -> int:
        return len(self.grids)

    @property
    def my_grid(self) -> Grid:
        return self.grids[self.seat]

    @property
    def discard_top(self) -> int | None:
        return self.discard_pile[-1] if self.discard_pile else None

    def unseen_cards(self) -> Counter[int]:
        """The multiset of cards this seat cannot see: hidden slots plus the draw pile.

        It is the deck minus every visible card (grids, discard pile, hand),
        so its average is the expected value of any hidden card.
        """
        unseen = Counter(DECK_COUNTS)
        visible: list[int] = list(self.discard_pile)
        for grid in self.grids:
            visible.extend(v for v in grid.values if v is not None)
        if self.hand is not None:
            visible.append(self.hand)
        unseen.subtract(visible)
        return unseen

    def expected_hidden_value(self) -> float:
        unseen = self.unseen_cards()
        count = sum(unseen.values())
        return sum(v * n for v, n in unseen.items()) / count if count else 0.0


# ---------------------------------------------------------------------------- events


class EventKind(StrEnum):
    """Public events: everything that happens at the table, as every seat sees it."""

    ROUND_START = "round_start"  # round
    REVEAL = "reveal"  # seat, pos, value: an opening reveal or a draw-and-reveal
    DRAW = "draw"  # seat: drew from the draw pile (the value is private to the seat)
    TAKE = "take"  # seat, value: took the top discard
    DISCARD = "discard"  # seat, value: discarded the drawn card (a reveal follows)
    SWAP = "swap"  # seat, pos, value (placed), replaced (the card that left the grid)
    COLUMN_CLEARED = "column_cleared"  # seat, pos (the column 0-3), value
    RESHUFFLE = "reshuffle"  # value: size of the rebuilt draw pile
    TURNS_START = "turns_start"  # seat: who plays the first turn of the round
    ROUND_FINISHING = "round_finishing"  # seat: the finisher; everyone else has one more turn
    FINAL_REVEAL = "final_reveal"  # seat, pos, value: hidden cards turned at the round's end
    ROUND_END = "round_end"  # round, seat (finisher), raw, scores, totals
    GAME_END = "game_end"  # totals, ranks, winners


class Event(NamedTuple):
    """One public event; only the fields its kind names are set.

    Immutable, built by keyword (``Event(EventKind.SWAP, seat=1, pos=3, value=4, replaced=9)``).
    A named tuple rather than a frozen dataclass: the engine makes one or
    more per action, and a named tuple is built three times faster.
    """

    kind: EventKind
    seat: int | None = None
    pos: int | None = None
    value: int | None = None
    replaced: int | None = None
    round: int | None = None
    raw: tuple[int, ...] = ()
    scores: tuple[int, ...] = ()
    totals: tuple[int, ...] = ()
    ranks: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Only the fields that are set, in plain JSON types."""
        out: dict[str, Any] = {"kind": self.kind.value}
        for name, value in zip(self._fields[1:], self[1:]):
            if value is not None and value != ():
                out[name] = list(value) if isinstance(value, tuple) else value
        return out


# ------------------------------------------------------------------ game start / end


class TimeControlError(ValueError):
    """A time control that cannot be used: ``key`` names the setting (None: the whole mapping is wrong),
    ``problem`` says what is expected, so each caller can say where (file line, flag) itself."""

    def __init__(self, key: str | None, problem: str) -> None:
        super().__init__(f"time control {key}: {problem}" if key else f"time control: {problem}")
        self.key = key
        self.problem = problem


@dataclass(frozen=True, slots=True)
class TimeControl:
    """How long a seat may think, and how many faults it may make, in one game.

    The one place that owns the limits: every field is an integer from 0 to
    :attr:`MAX` (24 h in ms, well inside the protocol's uint32); 0 means no
    limit (decision_ms, bank_ms), never (max_strikes) or no grace (grace_ms).
    Config files and command-line flags all go through :meth:`from_mapping`.
    """

    decision_ms: int = 2000  # limit for one decision
    bank_ms: int = 120_000  # every decision's time is taken from this bank for the whole game
    max_strikes: int = 3  # strikes (timeout, illegal, malformed) before the seat forfeits
    grace_ms: int = 10_000  # how long a disconnected seat may stay away before it forfeits

    KEYS: ClassVar[tuple[str, ...]] = ("decision_ms", "bank_ms", "max_strikes", "grace_ms")
    MAX: ClassVar[int] = 24 * 3600 * 1000

    def __post_init__(self) -> None:
        for key in self.KEYS:
            self.check(key, getattr(self, key))

    @classmethod
    def check(cls, key: str, value: Any) -> int:
        """``value`` if it is a valid ``key`` setting, else :class:`TimeControlError`."""
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= cls.MAX:
            raise TimeControlError(key, f"expected an integer from 0 to {cls.MAX}, got {value!r}")
        return value

    @classmethod
    def from_mapping(cls, data: Any, defaults: TimeControl | None = None) -> TimeControl:
        """A time control from ``{decision_ms, bank_ms, max_strikes, grace_ms}`` (``None``: all defaults);
        missing keys take ``defaults`` (default: the class defaults)."""
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise TimeControlError(None, f"expected a mapping of {', '.join(cls.KEYS)}, got {type(data).__name__}")
        for key in data:
            if key not in cls.KEYS:
                close = difflib.get_close_matches(key, cls.KEYS, n=1, cutoff=0.6) if isinstance(key, str) else []
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise TimeControlError(str(key), f"unknown key {key!r}{hint}: expected one of {', '.join(cls.KEYS)}")
        base = defaults if defaults is not None else cls()
        values = {key: data[key] if key in data else getattr(base, key) for key in cls.KEYS}
        return cls(**{key: cls.check(key, value) for key, value in values.items()})


@dataclass(frozen=True, slots=True)
class GameStart:
    """Sent to every seat when a game begins."""

    game_id: str
    seat: int
    players: tuple[str, ...]
    rules: Rules
    time_control: TimeControl | None = None  # None for in-process games without a clock


@dataclass(frozen=True, slots=True)
class Strike:
    """The referee played for a seat because its answer (or silence) was at fault."""

    game_id: str
    request_id: int  # 0 when the fault was not an answer to a request
    reason: str  # "timeout", "illegal" or "malformed"
    detail: str  # what was wrong and what was expected
    played: Action | None  # what the referee played instead, if anything
    strikes: int  # this seat's strikes in this game, this one included
    max_strikes: int  # strikes that make the seat forfeit


@dataclass(frozen=True, slots=True)
class GameResult:
    """Sent to every seat when a game is over (as in the record's ``result``)."""

    game_id: str
    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    winners: tuple[int, ...]
    forfeits: tuple[int, ...] = ()
