"""The Skyjo rules engine: one game, from the deal to the final ranks.

Pure Python, no I/O. A :class:`Game` says which decision is due (whose, and
which kind), lists the legal actions, applies one action at a time (an illegal
one raises :class:`IllegalActionError` and changes nothing), emits public
events and keeps the history a game record needs. Chance is explicit: a
:class:`Dealer` supplies every shuffle, seeded or read back from a record.

The hot path (``legal_actions`` / ``apply``) works on plain lists of ints;
views for players are built only when asked for.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from skyjo_bot.types import (
    COLUMNS,
    DECK_COUNTS,
    DECK_SIZE,
    GRID_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    Action,
    ActionKind,
    DecisionKind,
    Event,
    EventKind,
    FinalTie,
    FinisherPenalty,
    Grid,
    IllegalActionError,
    NextRoundStarter,
    Rules,
    SlotState,
    View,
    full_deck,
)

HIDDEN: Final = 0
REVEALED: Final = 1
REMOVED: Final = 2
_SLOT_STATES: Final = (SlotState.HIDDEN, SlotState.REVEALED, SlotState.REMOVED)

REVEALS: Final = tuple(Action.reveal(p) for p in range(GRID_SIZE))
SWAPS: Final = tuple(Action.swap(p) for p in range(GRID_SIZE))
DRAW: Final = Action.draw()
TAKE: Final = Action.take()
_DRAW_OR_TAKE: Final = (DRAW, TAKE)

OPENING_REVEAL: Final = DecisionKind.OPENING_REVEAL
DRAW_OR_TAKE: Final = DecisionKind.DRAW_OR_TAKE
SWAP_OR_REVEAL: Final = DecisionKind.SWAP_OR_REVEAL
SWAP_AFTER_TAKE: Final = DecisionKind.SWAP_AFTER_TAKE

_SORTED_DECK: Final = full_deck()


def _legal_for(kind: DecisionKind, states: tuple[int, ...]) -> tuple[Action, ...]:
    """The legal actions of a reveal or swap decision for one grid's slot states (swaps first, by position)."""
    if kind is OPENING_REVEAL:
        return tuple([REVEALS[p] for p in range(GRID_SIZE) if states[p] == HIDDEN])
    swaps = [SWAPS[p] for p in range(GRID_SIZE) if states[p] != REMOVED]
    if kind is SWAP_OR_REVEAL:
        swaps.extend([REVEALS[p] for p in range(GRID_SIZE) if states[p] == HIDDEN])
    return tuple(swaps)


# Events and log entries are built with tuple.__new__ on the hot path: a named tuple's own
# constructor (keywords, defaults) costs three times as much.
_new_event: Callable[[type[Event], tuple[Any, ...]], Event] = tuple.__new__
_new_logged: Callable[[type[LoggedAction], tuple[Any, ...]], LoggedAction] = tuple.__new__
# an event tuple: kind, seat, pos, value, replaced, then round, raw, scores, totals, ranks, winners
_EV_DRAW: Final = EventKind.DRAW
_EV_TAKE: Final = EventKind.TAKE
_EV_SWAP: Final = EventKind.SWAP
_EV_DISCARD: Final = EventKind.DISCARD
_EV_REVEAL: Final = EventKind.REVEAL
_SWAP: Final = ActionKind.SWAP

#: Legal actions by (decision, slot states): a game sees few distinct grids, and the
#: lookup is several times cheaper than building the tuple (measured in bench_engine.py).
_SWAP_OR_REVEAL_CACHE: dict[tuple[int, ...], tuple[Action, ...]] = {}
_OTHER_CACHES: Final[tuple[dict[tuple[int, ...], tuple[Action, ...]], ...]] = ({}, {})  # opening, after take
_LEGAL_CACHE_SIZE: Final = 65_536


class DealError(ValueError):
    """A deck or reshuffle that cannot be right (not the 150 cards, wrong multiset, ...)."""


def check_deck(deck: Sequence[int]) -> None:
    """Refuse anything but the 150-card multiset, saying what differs."""
    if len(deck) != DECK_SIZE:
        raise DealError(f"deck has {len(deck)} cards, expected {DECK_SIZE}")
    if sorted(deck) != _SORTED_DECK:
        counts = Counter(deck)
        for value in sorted(set(counts) | set(DECK_COUNTS)):
            if counts.get(value, 0) != DECK_COUNTS.get(value, 0):
                raise DealError(
                    f"deck has {counts.get(value, 0)} cards of value {value!r}, expected {DECK_COUNTS.get(value, 0)}"
                )


#: (i, bits of i + 1) for the Fisher-Yates steps over a 150-card deck, last position first
_SHUFFLE_STEPS: Final = tuple((i, (i + 1).bit_length()) for i in range(DECK_SIZE - 1, 0, -1))


def shuffle(deck: list[int], rng: random.Random) -> None:
    """``rng.shuffle(deck)`` for a 150-card deck: the same permutation from the same generator state.

    CPython's ``Random.shuffle`` draws ``getrandbits(k)`` until the value is
    below ``i + 1``, for ``i`` from the last position down; this is that loop
    without two Python calls per card (40 -> 20 microseconds a deal). A test
    compares it with ``Random.shuffle`` over many seeds.
    """
    if len(deck) != DECK_SIZE:
        rng.shuffle(deck)
        return
    getrandbits = rng.getrandbits
    for i, bits in _SHUFFLE_STEPS:
        j = getrandbits(bits)
        while j > i:
            j = getrandbits(bits)
        deck[i], deck[j] = deck[j], deck[i]


class Dealer:
    """Supplies the shuffles of a game: one deck per round and every reshuffle."""

    #: True when every deck it deals is the 150-card multiset by construction (the game then skips its check)
    deals_full_decks: bool = False

    def deck(self, round_index: int) -> list[int]:
        raise NotImplementedError

    def reshuffle(self, round_index: int, count: int, discards: list[int]) -> list[int]:
        """The new draw pile (next card first) made of ``discards`` (the count-th reshuffle)."""
        raise NotImplementedError


class SeededDealer(Dealer):
    """Deterministic shuffles from a seed (of the full deck: nothing to check).

    Round ``k``'s deck and its ``j``-th reshuffle each come from their own
    stream, so a deal is the same whatever the players did in earlier rounds:
    duplicate games (same seed, rotated seats) see the same cards.
    """

    deals_full_decks = True

    def __init__(self, seed: int | str) -> None:
        self.seed = seed

    def deck(self, round_index: int) -> list[int]:
        deck = list(_SORTED_DECK)
        shuffle(deck, random.Random(f"skyjo/{self.seed}/round/{round_index}"))
        return deck

    def reshuffle(self, round_index: int, count: int, discards: list[int]) -> list[int]:
        pile = sorted(discards)
        random.Random(f"skyjo/{self.seed}/round/{round_index}/reshuffle/{count}").shuffle(pile)
        return pile


class FixedDealer(Dealer):
    """Shuffles given in advance, as a game record stores them."""

    def __init__(
        self,
        decks: Sequence[Sequence[int]],
        reshuffles: Sequence[Sequence[Sequence[int]]] = (),
        fallback: Dealer | None = None,
    ) -> None:
        self.decks = [list(d) for d in decks]
        self.reshuffles = [[list(p) for p in r] for r in reshuffles]
        self.fallback = fallback

    def deck(self, round_index: int) -> list[int]:
        if round_index < len(self.decks):
            deck = list(self.decks[round_index])
            check_deck(deck)
            return deck
        if self.fallback is not None:
            return self.fallback.deck(round_index)
        raise DealError(f"round {round_index}: no deck given for this round")

    def reshuffle(self, round_index: int, count: int, discards: list[int]) -> list[int]:
        given = self.reshuffles[round_index] if round_index < len(self.reshuffles) else []
        if count < len(given):
            pile = list(given[count])
            if Counter(pile) != Counter(discards):
                raise DealError(
                    f"round {round_index}: reshuffle {count} does not hold the {len(discards)} "
                    f"discards below the top card"
                )
            return pile
        if self.fallback is not None:
            return self.fallback.reshuffle(round_index, count, discards)
        raise DealError(f"round {round_index}: the draw pile ran out but no reshuffle {count} is given")


class LoggedAction(NamedTuple):
    """One applied action as a record stores it (a named tuple: one is made per action)."""

    seat: int
    action: Action
    auto: str | None = None


@dataclass(slots=True)
class RoundLog:
    """What a record stores of one round."""

    deck: list[int]
    reshuffles: list[list[int]] = field(default_factory=list)
    actions: list[LoggedAction] = field(default_factory=list)
    finisher: int | None = None
    raw: list[int] | None = None
    scores: list[int] | None = None
    #: every grid once the round is over (after the final reveal and its column clears),
    #: since the game moves on to the next deal at once; for replays and renderers.
    final_grids: tuple[Grid, ...] | None = None


def competition_ranks(totals: Sequence[int], forfeits: Iterable[int] = ()) -> list[int]:
    """1 + the number of players ranked strictly ahead; forfeits rank after everyone else."""
    gone = set(forfeits)
    stayed = [t for s, t in enumerate(totals) if s not in gone]
    left = [t for s, t in enumerate(totals) if s in gone]
    return [
        1 + sum(1 for t in left if t < total) + len(stayed) if seat in gone else 1 + sum(1 for t in stayed if t < total)
        for seat, total in enumerate(totals)
    ]


class Game:
    """One game of Skyjo between ``num_players`` seats."""

    # the state of the round in play (reset by _start_round)
    seat: int  # whose decision is due
    decision: DecisionKind
    values: list[list[int]]  # per seat, the 12 card values (hidden ones too)
    states: list[list[int]]  # per seat, HIDDEN / REVEALED / REMOVED per position
    hidden_count: list[int]
    discard: list[int]  # top card last
    draw_pile: list[int]  # next card last
    finisher: int | None
    starter: int | None
    _final_turns_left: int
    _opening_done: int
    _actions: list[LoggedAction]  # the round in play's log (rounds[-1].actions)

    def __init__(
        self,
        num_players: int,
        rules: Rules | None = None,
        *,
        seed: int | str | None = None,
        dealer: Dealer | None = None,
        players: Sequence[str] | None = None,
        record_events: bool = True,
    ) -> None:
        if (
            isinstance(num_players, bool)
            or not isinstance(num_players, int)
            or not (MIN_PLAYERS <= num_players <= MAX_PLAYERS)
        ):
            raise ValueError(f"Skyjo is played by {MIN_PLAYERS} to {MAX_PLAYERS} players, got {num_players!r}")
        if dealer is None:
            dealer = SeededDealer(random.SystemRandom().randrange(2**63) if seed is None else seed)
        elif seed is not None:
            raise ValueError("give a seed or a dealer, not both")
        self.num_players = num_players
        self.players = tuple(players) if players is not None else tuple(f"seat {i}" for i in range(num_players))
        if len(self.players) != num_players:
            raise ValueError(f"{len(self.players)} player names for {num_players} seats")
        self.rules = rules or Rules()
        self._column_clear = self.rules.column_clear
        self.dealer = dealer
        self.totals = [0] * num_players
        self.rounds: list[RoundLog] = []
        self._round_scores: tuple[tuple[int, ...], ...] = ()  # finished rounds' scores, for views
        self.forfeits: set[int] = set()
        self.events: list[Event] | None = [] if record_events else None
        self.hand: int | None = None
        self._legal: tuple[Action, ...] | None = None
        self.over = False
        self.ranks: list[int] | None = None
        self.winners: list[int] | None = None
        self._start_round()

    # ------------------------------------------------------------------ queries

    @property
    def round_index(self) -> int:
        return len(self.rounds) - 1

    @property
    def current_seat(self) -> int | None:
        """The seat whose decision is due, or None when the game is over."""
        return None if self.over else self.seat

    def legal_actions(self) -> tuple[Action, ...]:
        """The legal actions of the decision that is due (empty when the game is over)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal

    def _compute_legal(self) -> tuple[Action, ...]:
        if self.over:
            return ()
        kind = self.decision
        if kind is DRAW_OR_TAKE:
            return _DRAW_OR_TAKE
        # one cache per decision kind: hashing an enum member runs Python code, a tuple of ints does not
        cache = _SWAP_OR_REVEAL_CACHE if kind is SWAP_OR_REVEAL else _OTHER_CACHES[kind is SWAP_AFTER_TAKE]
        key = tuple(self.states[self.seat])
        legal = cache.get(key)
        if legal is None:
            if len(cache) >= _LEGAL_CACHE_SIZE:
                cache.clear()
            legal = cache[key] = _legal_for(kind, key)
        return legal

    def is_legal(self, action: Action) -> bool:
        return action in self.legal_actions()

    def view(self, seat: int) -> View:
        """What ``seat`` may see now (docs/rules.md, "Hidden information")."""
        if not 0 <= seat < self.num_players:
            raise ValueError(f"no seat {seat} in a game of {self.num_players}")
        grids = self._public_grids()
        my_turn = not self.over and seat == self.seat
        return View(
            seat=seat,
            players=self.players,
            rules=self.rules,
            round=self.round_index,
            decision=self.decision,
            grids=grids,
            discard_pile=tuple(self.discard),
            draw_pile_size=len(self.draw_pile),
            hand=self.hand if my_turn else None,
            totals=tuple(self.totals),
            round_scores=self._round_scores,
            finisher=self.finisher,
            starter=self.starter,
            legal_actions=self.legal_actions() if my_turn else (),
        )

    def _public_grids(self) -> tuple[Grid, ...]:
        """Every grid as the table sees it: hidden values are None.

        Each seat's :class:`Grid` is kept until that grid changes (``_grids[seat] = None``),
        so a view rebuilds at most the one grid the last turn touched.
        """
        grids = self._grids
        for seat, grid in enumerate(grids):
            if grid is None:
                states = self.states[seat]
                grids[seat] = Grid(
                    tuple([_SLOT_STATES[s] for s in states]),
                    tuple([v if s == REVEALED else None for v, s in zip(self.values[seat], states)]),
                )
        return tuple(grids)  # type: ignore[arg-type]  # no None left

    def drain_events(self) -> list[Event]:
        """The public events since the last call."""
        if self.events is None:
            return []
        events, self.events = self.events, []
        return events

    def mark_forfeit(self, seat: int) -> None:
        """The seat forfeited (the referee decides when): it will rank after all others."""
        self.forfeits.add(seat)
        if self.over:
            self._rank(announce=False)

    def apply(self, action: Action, auto: str | None = None) -> None:
        """Apply the due seat's ``action``; ``auto`` tags one the referee chose for it.

        The hot path of every game: one fast branch per decision, events and
        log entries built as plain tuples (see bench_engine.py for its speed);
        only the rare steps (an opening reveal, a round's last turns) are calls.
        """
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        if action not in legal:  # also when the game is over: nothing is legal then
            if self.over:
                raise IllegalActionError(f"{action}: the game is over")
            raise IllegalActionError(self._why_illegal(action))
        seat = self.seat
        kind = self.decision
        events = self.events
        if kind is DRAW_OR_TAKE:
            if action is DRAW:
                pile = self.draw_pile
                if not pile:
                    self._reshuffle()  # before logging: a dealer that refuses leaves the state unchanged
                    pile = self.draw_pile
                self._actions.append(_new_logged(LoggedAction, (seat, action, auto)))
                self.hand = pile.pop()
                self.decision = SWAP_OR_REVEAL
                if events is not None:
                    events.append(_new_event(Event, (_EV_DRAW, seat, None, None, None, None, (), (), (), (), ())))
            else:
                self._actions.append(_new_logged(LoggedAction, (seat, action, auto)))
                taken = self.hand = self.discard.pop()
                self.decision = SWAP_AFTER_TAKE
                if events is not None:
                    events.append(_new_event(Event, (_EV_TAKE, seat, None, taken, None, None, (), (), (), (), ())))
            self._legal = None
            return
        self._actions.append(_new_logged(LoggedAction, (seat, action, auto)))
        self._legal = None
        pos = action.pos
        assert pos is not None
        if kind is OPENING_REVEAL:
            self._opening_reveal(seat, pos)
            return
        # a swap decision: the card in hand goes to the grid, or (after a draw) to the discard
        hand = self.hand
        assert hand is not None
        self.hand = None
        values = self.values[seat]
        states = self.states[seat]
        self._grids[seat] = None
        if action.kind is _SWAP:
            old = values[pos]
            values[pos] = hand
            if states[pos] == HIDDEN:
                states[pos] = REVEALED
                self.hidden_count[seat] -= 1
            self.discard.append(old)
            if events is not None:
                events.append(_new_event(Event, (_EV_SWAP, seat, pos, hand, old, None, (), (), (), (), ())))
        else:
            self.discard.append(hand)
            states[pos] = REVEALED
            self.hidden_count[seat] -= 1
            if events is not None:
                events.append(_new_event(Event, (_EV_DISCARD, seat, None, hand, None, None, (), (), (), (), ())))
                events.append(_new_event(Event, (_EV_REVEAL, seat, pos, values[pos], None, None, (), (), (), (), ())))
        if self._column_clear:
            column = pos & 3  # pos % COLUMNS
            if states[column] == states[column + 4] == states[column + 8] == REVEALED:
                self._clear_column(seat, column)
        # end of the turn: the next seat's, unless the round is in (or enters) its last turns
        if self.finisher is None and self.hidden_count[seat]:
            self.seat = seat + 1 if seat + 1 < self.num_players else 0
            self.decision = DRAW_OR_TAKE
        else:
            self._last_turn_played(seat)

    def _last_turn_played(self, seat: int) -> None:
        """``seat`` ended a turn with no hidden slot left, or after someone did: the round may end."""
        if self.finisher is None:
            self._finishing(seat)
        else:
            self._final_turns_left -= 1
        if self._final_turns_left == 0:
            self._end_round()
        else:
            self.seat = seat + 1 if seat + 1 < self.num_players else 0
            self.decision = DRAW_OR_TAKE

    def _opening_reveal(self, seat: int, pos: int) -> None:
        """One of a seat's two opening reveals; after every seat's second, the first turn begins."""
        self._reveal(seat, pos)
        done = self._opening_done = self._opening_done + 1
        if not done & 1:
            if done == 2 * self.num_players:
                self._start_turns()
            else:
                self.seat = seat + 1

    def _why_illegal(self, action: Action) -> str:
        seat, kind = self.seat, self.decision
        if not isinstance(action, Action):
            return f"seat {seat}: {action!r} is not an Action (expected e.g. Action.parse('swap 3'))"
        where = f"seat {seat} cannot {action} now ({kind.value} is due"
        if kind is DRAW_OR_TAKE:
            return f"{where}: expected draw or take)"
        could_be_legal = (action.kind is ActionKind.REVEAL and kind is not SWAP_AFTER_TAKE) or (
            action.kind is ActionKind.SWAP and kind is not OPENING_REVEAL
        )
        if action.pos is not None and could_be_legal:  # the right kind of action, the wrong slot
            state = self.states[seat][action.pos]
            if state == REMOVED:
                return f"{where}: position {action.pos} is in a removed column)"
            if action.kind is ActionKind.REVEAL and state == REVEALED:
                return f"{where}: position {action.pos} is already revealed)"
        expected = {
            OPENING_REVEAL: "reveal POS of a hidden slot",
            SWAP_OR_REVEAL: "swap POS, or reveal POS of a hidden slot",
            SWAP_AFTER_TAKE: "swap POS (a taken card must be swapped)",
        }[kind]
        return f"{where}: expected {expected})"

    # ------------------------------------------------------------------ helpers

    def _start_round(self) -> None:
        index = len(self.rounds)
        n = self.num_players
        deck = self.dealer.deck(index)
        if not self.dealer.deals_full_decks:
            check_deck(deck)
        log = RoundLog(deck=list(deck))
        self.rounds.append(log)
        self._actions = log.actions
        self.values = [deck[GRID_SIZE * p : GRID_SIZE * (p + 1)] for p in range(n)]
        self.states = [[HIDDEN] * GRID_SIZE for _ in range(n)]
        self.hidden_count = [GRID_SIZE] * n
        self._grids: list[Grid | None] = [None] * n
        self.discard = [deck[GRID_SIZE * n]]
        self.draw_pile = deck[GRID_SIZE * n + 1 :][::-1]  # next card last, for pop()
        self.hand = None
        self.seat = 0
        self.decision = OPENING_REVEAL
        self.finisher = None
        self.starter = None
        self._final_turns_left = 0
        self._opening_done = 0
        self._legal = None
        if self.events is not None:
            self.events.append(Event(EventKind.ROUND_START, round=index))

    def _start_turns(self) -> None:
        rule = self.rules.next_round_starter
        previous = self.rounds[-2] if len(self.rounds) > 1 else None
        if previous is None or rule is NextRoundStarter.HIGHEST_REVEAL:
            sums = [
                sum(v for v, s in zip(values, states) if s == REVEALED)
                for values, states in zip(self.values, self.states)
            ]
            starter = sums.index(max(sums))
        elif rule is NextRoundStarter.FINISHER:
            assert previous.finisher is not None
            starter = previous.finisher
        else:
            assert previous.scores is not None
            starter = previous.scores.index(min(previous.scores))
        self.starter = self.seat = starter
        self.decision = DRAW_OR_TAKE
        if self.events is not None:
            self.events.append(Event(EventKind.TURNS_START, seat=starter))

    def _reveal(self, seat: int, pos: int) -> None:
        self._grids[seat] = None
        self.states[seat][pos] = REVEALED
        self.hidden_count[seat] -= 1
        if self.events is not None:
            self.events.append(Event(EventKind.REVEAL, seat=seat, pos=pos, value=self.values[seat][pos]))

    def _clear_column(self, seat: int, column: int) -> bool:
        states = self.states[seat]
        if not (states[column] == states[column + 4] == states[column + 8] == REVEALED):
            return False
        values = self.values[seat]
        value = values[column]
        if not (value == values[column + 4] == values[column + 8]):
            return False
        states[column] = states[column + 4] = states[column + 8] = REMOVED
        self._grids[seat] = None
        self.discard.extend((value, value, value))
        if self.events is not None:
            self.events.append(Event(EventKind.COLUMN_CLEARED, seat=seat, pos=column, value=value))
        return True

    def _reshuffle(self) -> None:
        log = self.rounds[-1]
        below = self.discard[:-1]
        pile = self.dealer.reshuffle(self.round_index, len(log.reshuffles), below)
        log.reshuffles.append(list(pile))
        self.discard = self.discard[-1:]
        self.draw_pile = list(pile)[::-1]
        if self.events is not None:
            self.events.append(Event(EventKind.RESHUFFLE, value=len(pile)))

    def _finishing(self, seat: int) -> None:
        """``seat`` has no hidden slot left: everyone else plays once more."""
        self.finisher = seat
        self._final_turns_left = self.num_players - 1
        if self.events is not None:
            self.events.append(Event(EventKind.ROUND_FINISHING, seat=seat))

    def _end_round(self) -> None:
        rules = self.rules
        events = self.events
        log = self.rounds[-1]
        for seat in range(self.num_players):
            states = self.states[seat]
            self._grids[seat] = None
            for pos in range(GRID_SIZE):
                if states[pos] == HIDDEN:
                    states[pos] = REVEALED
                    if events is not None:
                        events.append(Event(EventKind.FINAL_REVEAL, seat=seat, pos=pos, value=self.values[seat][pos]))
            self.hidden_count[seat] = 0
            if rules.column_clear and rules.clear_on_final_reveal:
                for column in range(COLUMNS):
                    self._clear_column(seat, column)
        raw = [
            sum(v for v, s in zip(values, states) if s == REVEALED) for values, states in zip(self.values, self.states)
        ]
        finisher = self.finisher
        assert finisher is not None
        scores = list(raw)
        own = raw[finisher]
        if any(raw[s] <= own for s in range(self.num_players) if s != finisher):
            penalty = rules.finisher_penalty
            if penalty is FinisherPenalty.DOUBLE:
                scores[finisher] = 2 * own
            elif penalty is FinisherPenalty.DOUBLE_IF_POSITIVE:
                scores[finisher] = 2 * own if own > 0 else own
            else:
                scores[finisher] = own + 10
        log.finisher, log.raw, log.scores = finisher, raw, scores
        self._round_scores += (tuple(scores),)
        log.final_grids = self._public_grids()
        self.totals = [t + s for t, s in zip(self.totals, scores)]
        if events is not None:
            events.append(
                Event(
                    EventKind.ROUND_END,
                    round=self.round_index,
                    seat=finisher,
                    raw=tuple(raw),
                    scores=tuple(scores),
                    totals=tuple(self.totals),
                )
            )
        if self._game_ends():
            self._finish()
        else:
            self._start_round()

    def _game_ends(self) -> bool:
        if max(self.totals) < self.rules.end_score:
            return False
        if self.rules.final_tie is FinalTie.SHARED:
            return True
        return self.totals.count(min(self.totals)) == 1

    def _finish(self) -> None:
        self.over = True
        self._legal = ()
        self._rank()

    def _rank(self, announce: bool = True) -> None:
        self.ranks = competition_ranks(self.totals, self.forfeits)
        self.winners = [s for s, r in enumerate(self.ranks) if r == 1]
        if announce and self.events is not None:
            self.events.append(
                Event(
                    EventKind.GAME_END,
                    totals=tuple(self.totals),
                    ranks=tuple(self.ranks),
                    winners=tuple(self.winners),
                )
            )
