"""Translate between protocol messages (``skyjo.v1``) and :mod:`skyjo_bot.types`.

Both sides of the wire use these functions: the referee turns engine values
into messages, the SDK turns messages back into the same values, so a remote
bot sees exactly the ``View``, ``Event`` and ``GameResult`` an in-process bot
sees. Nothing else builds or reads protocol messages field by field.

Messages from the other side are checked: a malformed one raises
:class:`ProtocolError` (or :class:`InvalidActionError` /
:class:`IllegalActionError` for a reply's action) with a sentence that says
what was wrong and what was expected.

Events travel in batches (``EventBatch``); the end of a round and of a game
travel as ``RoundResult`` and ``GameOver``, not as events:
:func:`event_responses` turns engine events into the right messages, and
:func:`round_result_from_proto` / :func:`game_end_event` give the SDK back the ``round_end`` / ``game_end`` events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb

from skyjo_bot.types import (
    GRID_SIZE,
    Action,
    ActionKind,
    DecisionKind,
    Event,
    EventKind,
    FinalTie,
    FinisherPenalty,
    GameResult,
    GameStart,
    Grid,
    IllegalActionError,
    InvalidActionError,
    NextRoundStarter,
    Rules,
    RulesError,
    SlotState,
    Strike,
    TimeControl,
    View,
)

#: The protocol version this module speaks (Hello.protocol_version, Welcome.protocol_version).
PROTOCOL_VERSION: Final = 1


class ProtocolError(ValueError):
    """A protocol message that is missing something or holds an impossible value."""


class BotGaveUpError(InvalidActionError):
    """A reply that says the bot could not decide (``DecisionReply.error``)."""


# ------------------------------------------------------------------ enum tables

_ACTION_KIND_TO_PB: Final = {
    ActionKind.REVEAL: pb.ACTION_KIND_REVEAL,
    ActionKind.DRAW: pb.ACTION_KIND_DRAW,
    ActionKind.TAKE: pb.ACTION_KIND_TAKE,
    ActionKind.SWAP: pb.ACTION_KIND_SWAP,
}
_ACTION_KIND_FROM_PB: Final = {v: k for k, v in _ACTION_KIND_TO_PB.items()}

_DECISION_TO_PB: Final = {
    DecisionKind.OPENING_REVEAL: pb.DECISION_KIND_OPENING_REVEAL,
    DecisionKind.DRAW_OR_TAKE: pb.DECISION_KIND_DRAW_OR_TAKE,
    DecisionKind.SWAP_OR_REVEAL: pb.DECISION_KIND_SWAP_OR_REVEAL,
    DecisionKind.SWAP_AFTER_TAKE: pb.DECISION_KIND_SWAP_AFTER_TAKE,
}
_DECISION_FROM_PB: Final = {v: k for k, v in _DECISION_TO_PB.items()}

_SLOT_TO_PB: Final = {
    SlotState.HIDDEN: pb.SLOT_STATE_HIDDEN,
    SlotState.REVEALED: pb.SLOT_STATE_REVEALED,
    SlotState.REMOVED: pb.SLOT_STATE_REMOVED,
}
_SLOT_FROM_PB: Final = {v: k for k, v in _SLOT_TO_PB.items()}

_PENALTY_TO_PB: Final = {
    FinisherPenalty.DOUBLE_IF_POSITIVE: pb.FINISHER_PENALTY_DOUBLE_IF_POSITIVE,
    FinisherPenalty.DOUBLE: pb.FINISHER_PENALTY_DOUBLE,
    FinisherPenalty.PLUS_10: pb.FINISHER_PENALTY_PLUS_10,
}
_PENALTY_FROM_PB: Final = {v: k for k, v in _PENALTY_TO_PB.items()}

_STARTER_TO_PB: Final = {
    NextRoundStarter.FINISHER: pb.NEXT_ROUND_STARTER_FINISHER,
    NextRoundStarter.ROUND_WINNER: pb.NEXT_ROUND_STARTER_ROUND_WINNER,
    NextRoundStarter.HIGHEST_REVEAL: pb.NEXT_ROUND_STARTER_HIGHEST_REVEAL,
}
_STARTER_FROM_PB: Final = {v: k for k, v in _STARTER_TO_PB.items()}

_TIE_TO_PB: Final = {FinalTie.SHARED: pb.FINAL_TIE_SHARED, FinalTie.EXTRA_ROUND: pb.FINAL_TIE_EXTRA_ROUND}
_TIE_FROM_PB: Final = {v: k for k, v in _TIE_TO_PB.items()}

#: Event kinds that travel as ``Event`` messages (the others have messages of their own).
EVENT_MESSAGE_KINDS: Final = frozenset(EventKind) - {EventKind.ROUND_END, EventKind.GAME_END}
_EVENT_KINDS: Final = {kind.value: kind for kind in EVENT_MESSAGE_KINDS}

# Slot messages are immutable in practice here (copied into grids); cache one per (state, value).
_SLOT_CACHE: dict[tuple[SlotState, int | None], pb.Slot] = {}


def _slot(state: SlotState, value: int | None) -> pb.Slot:
    key = (state, value)
    slot = _SLOT_CACHE.get(key)
    if slot is None:
        slot = pb.Slot(state=_SLOT_TO_PB[state], value=value)
        _SLOT_CACHE[key] = slot
    return slot


# ------------------------------------------------------------------ actions

_ACTION_CACHE: dict[Action, pb.Action] = {}


def _action_pb(action: Action) -> pb.Action:
    """A shared message for ``action``: copy it (as repeated fields do), never mutate it."""
    msg = _ACTION_CACHE.get(action)
    if msg is None:
        msg = pb.Action(kind=_ACTION_KIND_TO_PB[action.kind], pos=action.pos)
        _ACTION_CACHE[action] = msg
    return msg


#: Every well-formed action by (proto kind, pos): the fast path of action_from_proto.
_ACTION_FROM_KEY: Final[dict[tuple[int, int | None], Action]] = {
    (_ACTION_KIND_TO_PB[a.kind], a.pos): a
    for a in (
        Action.draw(),
        Action.take(),
        *(Action.reveal(p) for p in range(GRID_SIZE)),
        *(Action.swap(p) for p in range(GRID_SIZE)),
    )
}


def action_to_proto(action: Action) -> pb.Action:
    msg = pb.Action()
    msg.CopyFrom(_action_pb(action))
    return msg


def action_from_proto(msg: pb.Action) -> Action:
    """The :class:`Action` a message spells; :class:`InvalidActionError` when it spells none."""
    found = _ACTION_FROM_KEY.get((msg.kind, msg.pos if msg.HasField("pos") else None))
    if found is not None:
        return found
    kind = _ACTION_KIND_FROM_PB.get(msg.kind)
    if kind is None:
        raise InvalidActionError(
            f"action kind {msg.kind} is not an action: expected ACTION_KIND_REVEAL, _DRAW, _TAKE or _SWAP"
        )
    pos = msg.pos if msg.HasField("pos") else None
    if kind in (ActionKind.REVEAL, ActionKind.SWAP) and pos is None:
        raise InvalidActionError(f"{kind.value} needs a position: set Action.pos to 0-11 (pos = 4*row + col)")
    return Action(kind, pos)


def error_reply(request_id: int, reason: str) -> pb.DecisionReply:
    """A reply that gives up on a decision and says why (the referee strikes at once)."""
    return pb.DecisionReply(request_id=request_id, error=reason[:500])


def reply_to_proto(request_id: int, action: Action, legal_actions: Sequence[Action] = ()) -> pb.DecisionReply:
    """A reply by index when ``action`` is among ``legal_actions``, else spelled out."""
    try:
        return pb.DecisionReply(request_id=request_id, index=list(legal_actions).index(action))
    except ValueError:
        return pb.DecisionReply(request_id=request_id, action=_action_pb(action))


def reply_action(msg: pb.DecisionReply, legal_actions: Sequence[Action]) -> Action:
    """The legal action a reply chose.

    Raises :class:`InvalidActionError` for a malformed reply (no choice, an
    index out of range, an action that spells nothing), its subclass
    :class:`BotGaveUpError` when the bot says it could not decide, and
    :class:`IllegalActionError` for a well-formed action that is not legal now.
    """
    which = msg.WhichOneof("choice")
    if which == "index":
        if msg.index >= len(legal_actions):
            raise InvalidActionError(
                f"index {msg.index} is out of range: expected 0-{len(legal_actions) - 1} "
                f"into the {len(legal_actions)} legal actions ({_legal_text(legal_actions)})"
            )
        return legal_actions[msg.index]
    if which == "action":
        action = action_from_proto(msg.action)
        if action not in legal_actions:
            raise IllegalActionError(f"{action} is not legal now: expected one of {_legal_text(legal_actions)}")
        return action
    if which == "error":
        raise BotGaveUpError(f"the bot could not decide: {msg.error[:500]}")
    raise InvalidActionError("the reply chooses nothing: set DecisionReply.index or DecisionReply.action")


def _legal_text(legal_actions: Sequence[Action]) -> str:
    """The legal actions in words, for error messages only (not built for every reply)."""
    return ", ".join(str(a) for a in legal_actions)


# ------------------------------------------------------------------ rules and time


def rules_to_proto(rules: Rules) -> pb.Rules:
    """Every option set to the value in force, as GameStart requires."""
    return pb.Rules(
        preset=rules.preset or "",
        column_clear=rules.column_clear,
        clear_on_final_reveal=rules.clear_on_final_reveal,
        finisher_penalty=_PENALTY_TO_PB[rules.finisher_penalty],
        next_round_starter=_STARTER_TO_PB[rules.next_round_starter],
        end_score=rules.end_score,
        final_tie=_TIE_TO_PB[rules.final_tie],
    )


def _enum_option(name: str, value: int, table: Mapping[Any, str]) -> str:
    try:
        return table[value]
    except KeyError:
        raise RulesError(f"rules option {name} has unknown enum value {value}") from None


def rules_from_proto(msg: pb.Rules) -> Rules:
    """The preset (empty: official) with every set field overriding it; :class:`RulesError` if invalid."""
    options: dict[str, object] = {}
    if msg.preset:
        options["preset"] = msg.preset
    if msg.HasField("column_clear"):
        options["column_clear"] = msg.column_clear
    if msg.HasField("clear_on_final_reveal"):
        options["clear_on_final_reveal"] = msg.clear_on_final_reveal
    if msg.finisher_penalty:
        options["finisher_penalty"] = _enum_option("finisher_penalty", msg.finisher_penalty, _PENALTY_FROM_PB)
    if msg.next_round_starter:
        options["next_round_starter"] = _enum_option("next_round_starter", msg.next_round_starter, _STARTER_FROM_PB)
    if msg.final_tie:
        options["final_tie"] = _enum_option("final_tie", msg.final_tie, _TIE_FROM_PB)
    if msg.end_score:
        options["end_score"] = msg.end_score
    return Rules.from_dict(options)


def time_control_to_proto(tc: TimeControl) -> pb.TimeControl:
    return pb.TimeControl(
        decision_ms=tc.decision_ms, bank_ms=tc.bank_ms, max_strikes=tc.max_strikes, grace_ms=tc.grace_ms
    )


def time_control_from_proto(msg: pb.TimeControl) -> TimeControl:
    return TimeControl(
        decision_ms=msg.decision_ms, bank_ms=msg.bank_ms, max_strikes=msg.max_strikes, grace_ms=msg.grace_ms
    )


# ------------------------------------------------------------------ views


# Grids repeat from one decision to the next (one grid changes per action), so both
# directions are cached: this halves the cost of a decision on each side of the wire.
_CACHE_LIMIT: Final = 4096
_GRID_TO_PB: dict[tuple[tuple[SlotState, ...], tuple[int | None, ...]], pb.Grid] = {}
_GRID_FROM_PB: dict[bytes, Grid] = {}


def _grid_to_proto(grid: Grid) -> pb.Grid:
    """A shared message for ``grid``: copy it (as repeated fields do), never mutate it."""
    key = (grid.states, grid.values)
    msg = _GRID_TO_PB.get(key)
    if msg is None:
        if len(_GRID_TO_PB) >= _CACHE_LIMIT:
            _GRID_TO_PB.clear()
        msg = _GRID_TO_PB[key] = pb.Grid(slots=[_slot(s, v) for s, v in zip(grid.states, grid.values)])
    return msg


def _grid_from_proto(msg: pb.Grid, index: int) -> Grid:
    key = msg.SerializeToString(deterministic=True)
    grid = _GRID_FROM_PB.get(key)
    if grid is None:
        grid = _read_grid(msg, index)
        if len(_GRID_FROM_PB) >= _CACHE_LIMIT:
            _GRID_FROM_PB.clear()
        _GRID_FROM_PB[key] = grid
    return grid


def _read_grid(msg: pb.Grid, index: int) -> Grid:
    if len(msg.slots) != GRID_SIZE:
        raise ProtocolError(f"grid {index} has {len(msg.slots)} slots, expected {GRID_SIZE}")
    states: list[SlotState] = []
    values: list[int | None] = []
    for pos, slot in enumerate(msg.slots):
        state = _SLOT_FROM_PB.get(slot.state)
        if state is None:
            raise ProtocolError(f"grid {index} slot {pos} has state {slot.state}: expected hidden, revealed or removed")
        has_value = slot.HasField("value")
        if (state is SlotState.REVEALED) != has_value:
            raise ProtocolError(
                f"grid {index} slot {pos} is {state.value} and {'has' if has_value else 'lacks'} a value: "
                "only revealed slots carry one"
            )
        states.append(state)
        values.append(slot.value if has_value else None)
    return Grid(states=tuple(states), values=tuple(values))


def view_to_proto(view: View) -> pb.View:
    """The seat's view (its legal actions travel beside it, in DecisionRequest)."""
    return pb.View(
        seat=view.seat,
        round=view.round,
        decision=_DECISION_TO_PB[view.decision],
        grids=[_grid_to_proto(g) for g in view.grids],
        discard_pile=view.discard_pile,
        draw_pile_size=view.draw_pile_size,
        hand=view.hand,
        totals=view.totals,
        round_scores=[pb.Scores(values=s) for s in view.round_scores],
        finisher=view.finisher,
        starter=view.starter,
    )


def view_from_proto(
    msg: pb.View, *, players: Sequence[str], rules: Rules, legal_actions: Sequence[Action] = ()
) -> View:
    """Rebuild a :class:`View`; ``players`` and ``rules`` come from the game's GameStart."""
    decision = _DECISION_FROM_PB.get(msg.decision)
    if decision is None:
        raise ProtocolError(f"view.decision is {msg.decision}: expected one of the four DecisionKind values")
    grids = tuple(_grid_from_proto(g, i) for i, g in enumerate(msg.grids))
    n = len(grids)
    if n != len(players):
        raise ProtocolError(f"view has {n} grids for {len(players)} players")
    if msg.seat >= n:
        raise ProtocolError(f"view.seat {msg.seat} is not a seat of this {n}-player game")
    if len(msg.totals) != n:
        raise ProtocolError(f"view has {len(msg.totals)} totals for {n} players")
    return View(
        seat=msg.seat,
        players=tuple(players),
        rules=rules,
        round=msg.round,
        decision=decision,
        grids=grids,
        discard_pile=tuple(msg.discard_pile),
        draw_pile_size=msg.draw_pile_size,
        hand=msg.hand if msg.HasField("hand") else None,
        totals=tuple(msg.totals),
        round_scores=tuple(tuple(s.values) for s in msg.round_scores),
        finisher=msg.finisher if msg.HasField("finisher") else None,
        starter=msg.starter if msg.HasField("starter") else None,
        legal_actions=tuple(legal_actions),
    )


def decision_request_to_proto(
    request_id: int, game_id: str, view: View, time_left_ms: int, events: Sequence[pb.Event] = ()
) -> pb.DecisionRequest:
    """Ask ``view.seat`` for a decision; the legal actions are ``view.legal_actions``.

    ``events``: held events that go out with the request (:meth:`EventBuffer.take`).
    """
    return pb.DecisionRequest(
        request_id=request_id,
        game_id=game_id,
        view=view_to_proto(view),
        legal_actions=[_action_pb(a) for a in view.legal_actions],
        time_left_ms=max(0, time_left_ms),
        events=events,
    )


def decision_request_from_proto(msg: pb.DecisionRequest, start: GameStart) -> View:
    """The :class:`View` (with its legal actions) a request asks about, in the game ``start`` began.

    Its ``events`` (held events that came with it) are read with :func:`events_from_proto`.
    """
    legal = tuple(action_from_proto(a) for a in msg.legal_actions)
    if not legal:
        raise ProtocolError(f"decision request {msg.request_id} lists no legal actions")
    return view_from_proto(msg.view, players=start.players, rules=start.rules, legal_actions=legal)


# ------------------------------------------------------------------ games


def game_start_to_proto(start: GameStart) -> pb.GameStart:
    return pb.GameStart(
        game_id=start.game_id,
        seat=start.seat,
        players=start.players,
        rules=rules_to_proto(start.rules),
        time_control=time_control_to_proto(start.time_control) if start.time_control is not None else None,
    )


def game_start_from_proto(msg: pb.GameStart) -> GameStart:
    if not msg.players:
        raise ProtocolError("game start lists no players")
    if msg.seat >= len(msg.players):
        raise ProtocolError(f"game start gives seat {msg.seat} in a game of {len(msg.players)} players")
    return GameStart(
        game_id=msg.game_id,
        seat=msg.seat,
        players=tuple(msg.players),
        rules=rules_from_proto(msg.rules),
        time_control=time_control_from_proto(msg.time_control) if msg.HasField("time_control") else None,
    )


def game_over_to_proto(result: GameResult) -> pb.GameOver:
    return pb.GameOver(
        game_id=result.game_id,
        totals=result.totals,
        ranks=result.ranks,
        winners=result.winners,
        forfeits=result.forfeits,
    )


def game_over_from_proto(msg: pb.GameOver) -> GameResult:
    return GameResult(
        game_id=msg.game_id,
        totals=tuple(msg.totals),
        ranks=tuple(msg.ranks),
        winners=tuple(msg.winners),
        forfeits=tuple(msg.forfeits),
    )


def game_end_event(result: GameResult) -> Event:
    """The ``game_end`` event an in-process bot would have seen, rebuilt from GameOver."""
    return Event(EventKind.GAME_END, totals=result.totals, ranks=result.ranks, winners=result.winners)


# ------------------------------------------------------------------ events


def event_to_proto(event: Event, game_id: str) -> pb.Event:
    """An event that travels as ``Event`` (not ``round_end``/``game_end``: see :func:`event_response`)."""
    if event.kind not in EVENT_MESSAGE_KINDS:
        raise ValueError(f"{event.kind.value} events travel as RoundResult / GameOver, not as Event")
    return pb.Event(
        game_id=game_id,
        kind=event.kind.value,
        seat=event.seat,
        pos=event.pos,
        value=event.value,
        replaced=event.replaced,
        round=event.round,
    )


def event_from_proto(msg: pb.Event) -> Event:
    """The :class:`Event`; :class:`ProtocolError` for a kind this version does not know (skip those)."""
    kind = _EVENT_KINDS.get(msg.kind)
    if kind is None:
        raise ProtocolError(f"unknown event kind {msg.kind!r}")
    return Event(
        kind,
        seat=msg.seat if msg.HasField("seat") else None,
        pos=msg.pos if msg.HasField("pos") else None,
        value=msg.value if msg.HasField("value") else None,
        replaced=msg.replaced if msg.HasField("replaced") else None,
        round=msg.round if msg.HasField("round") else None,
    )


def round_result_to_proto(event: Event, game_id: str) -> pb.RoundResult:
    """A ``round_end`` event as the RoundResult message."""
    if event.kind is not EventKind.ROUND_END or event.round is None or event.seat is None:
        raise ValueError(f"a RoundResult is made from a round_end event with round and seat, not {event!r}")
    return pb.RoundResult(
        game_id=game_id,
        round=event.round,
        finisher=event.seat,
        raw=event.raw,
        scores=event.scores,
        totals=event.totals,
    )


def round_result_from_proto(msg: pb.RoundResult) -> Event:
    """The ``round_end`` event an in-process bot would have seen."""
    return Event(
        EventKind.ROUND_END,
        round=msg.round,
        seat=msg.finisher,
        raw=tuple(msg.raw),
        scores=tuple(msg.scores),
        totals=tuple(msg.totals),
    )


def event_responses(events: Sequence[Event], game_id: str) -> list[pb.PlayResponse]:
    """The messages that carry engine events to a bot, in order, as few as possible.

    Consecutive events travel together in one ``EventBatch``; ``round_end``
    becomes a RoundResult; ``game_end`` is left out, since GameOver is built
    from the final :class:`GameResult` (forfeits included) with
    :func:`game_over_to_proto`.
    """
    out: list[pb.PlayResponse] = []
    batch: list[pb.Event] = []
    for event in events:
        kind = event.kind
        if kind in EVENT_MESSAGE_KINDS:
            batch.append(event_to_proto(event, game_id))
            continue
        if batch:
            out.append(pb.PlayResponse(events=pb.EventBatch(game_id=game_id, events=batch)))
            batch = []
        if kind is EventKind.ROUND_END:
            out.append(pb.PlayResponse(round_result=round_result_to_proto(event, game_id)))
    if batch:
        out.append(pb.PlayResponse(events=pb.EventBatch(game_id=game_id, events=batch)))
    return out


class EventBuffer:
    """Holds one seat's public events until its next message, to send fewer messages.

    Every gRPC message costs the referee a system call and the bot a wake-up;
    a decision's round trip is shortest when the events that precede it ride
    inside the DecisionRequest. The referee keeps one buffer per seat::

        for message in buffer.add(events):   # on every broadcast
            send(message)                    # (only RoundResult and what must precede it)
        decision_request_to_proto(..., events=buffer.take())
        if (message := buffer.flush()) is not None:   # before GameOver, Strike, ...
            send(message)
    """

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self._held: list[pb.Event] = []

    def add(self, events: Sequence[Event]) -> list[pb.PlayResponse]:
        """Hold these events; returns the messages that must go out now, in order (held events first)."""
        out: list[pb.PlayResponse] = []
        for event in events:
            kind = event.kind
            if kind in EVENT_MESSAGE_KINDS:
                self._held.append(event_to_proto(event, self.game_id))
            elif kind is EventKind.ROUND_END:
                held = self.flush()
                if held is not None:
                    out.append(held)
                out.append(pb.PlayResponse(round_result=round_result_to_proto(event, self.game_id)))
        return out

    def take(self) -> list[pb.Event]:
        """The held events, for :func:`decision_request_to_proto`; the buffer is empty afterwards."""
        held, self._held = self._held, []
        return held

    def flush(self) -> pb.PlayResponse | None:
        """The held events as one EventBatch message (None when there are none)."""
        held = self.take()
        return pb.PlayResponse(events=pb.EventBatch(game_id=self.game_id, events=held)) if held else None

    def __len__(self) -> int:
        return len(self._held)


def event_response(event: Event, game_id: str) -> pb.PlayResponse | None:
    """One event's message (prefer :func:`event_responses`, which batches): None for ``game_end``."""
    found = event_responses((event,), game_id)
    return found[0] if found else None


def events_from_proto(msg: pb.EventBatch | pb.DecisionRequest) -> list[Event]:
    """The events of a batch (or those a DecisionRequest carries), skipping kinds this version does not know."""
    out: list[Event] = []
    for item in msg.events:
        try:
            out.append(event_from_proto(item))
        except ProtocolError:
            continue
    return out


# ------------------------------------------------------------------ strikes and greetings


def strike_to_proto(strike: Strike) -> pb.Strike:
    return pb.Strike(
        game_id=strike.game_id,
        request_id=strike.request_id,
        reason=strike.reason,
        detail=strike.detail,
        played=_action_pb(strike.played) if strike.played is not None else None,
        strikes=strike.strikes,
        max_strikes=strike.max_strikes,
    )


def strike_from_proto(msg: pb.Strike) -> Strike:
    return Strike(
        game_id=msg.game_id,
        request_id=msg.request_id,
        reason=msg.reason,
        detail=msg.detail,
        played=action_from_proto(msg.played) if msg.HasField("played") else None,
        strikes=msg.strikes,
        max_strikes=msg.max_strikes,
    )


def hello(name: str, version: str = "") -> pb.PlayRequest:
    """The first message of every stream."""
    return pb.PlayRequest(hello=pb.Hello(name=name, version=version, protocol_version=PROTOCOL_VERSION))


def welcome(seat_name: str) -> pb.PlayResponse:
    return pb.PlayResponse(welcome=pb.Welcome(protocol_version=PROTOCOL_VERSION, seat_name=seat_name))
