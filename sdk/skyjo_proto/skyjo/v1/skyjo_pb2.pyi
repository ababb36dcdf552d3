# generated, do not edit; run scripts/gen_proto.py
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ActionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_KIND_UNSPECIFIED: _ClassVar[ActionKind]
    ACTION_KIND_REVEAL: _ClassVar[ActionKind]
    ACTION_KIND_DRAW: _ClassVar[ActionKind]
    ACTION_KIND_TAKE: _ClassVar[ActionKind]
    ACTION_KIND_SWAP: _ClassVar[ActionKind]

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_OPENING_REVEAL: _ClassVar[DecisionKind]
    DECISION_KIND_DRAW_OR_TAKE: _ClassVar[DecisionKind]
    DECISION_KIND_SWAP_OR_REVEAL: _ClassVar[DecisionKind]
    DECISION_KIND_SWAP_AFTER_TAKE: _ClassVar[DecisionKind]

class SlotState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SLOT_STATE_UNSPECIFIED: _ClassVar[SlotState]
    SLOT_STATE_HIDDEN: _ClassVar[SlotState]
    SLOT_STATE_REVEALED: _ClassVar[SlotState]
    SLOT_STATE_REMOVED: _ClassVar[SlotState]

class FinisherPenalty(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FINISHER_PENALTY_UNSPECIFIED: _ClassVar[FinisherPenalty]
    FINISHER_PENALTY_DOUBLE_IF_POSITIVE: _ClassVar[FinisherPenalty]
    FINISHER_PENALTY_DOUBLE: _ClassVar[FinisherPenalty]
    FINISHER_PENALTY_PLUS_10: _ClassVar[FinisherPenalty]

class NextRoundStarter(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NEXT_ROUND_STARTER_UNSPECIFIED: _ClassVar[NextRoundStarter]
    NEXT_ROUND_STARTER_FINISHER: _ClassVar[NextRoundStarter]
    NEXT_ROUND_STARTER_ROUND_WINNER: _ClassVar[NextRoundStarter]
    NEXT_ROUND_STARTER_HIGHEST_REVEAL: _ClassVar[NextRoundStarter]

class FinalTie(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FINAL_TIE_UNSPECIFIED: _ClassVar[FinalTie]
    FINAL_TIE_SHARED: _ClassVar[FinalTie]
    FINAL_TIE_EXTRA_ROUND: _ClassVar[FinalTie]
ACTION_KIND_UNSPECIFIED: ActionKind
ACTION_KIND_REVEAL: ActionKind
ACTION_KIND_DRAW: ActionKind
ACTION_KIND_TAKE: ActionKind
ACTION_KIND_SWAP: ActionKind
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_OPENING_REVEAL: DecisionKind
DECISION_KIND_DRAW_OR_TAKE: DecisionKind
DECISION_KIND_SWAP_OR_REVEAL: DecisionKind
DECISION_KIND_SWAP_AFTER_TAKE: DecisionKind
SLOT_STATE_UNSPECIFIED: SlotState
SLOT_STATE_HIDDEN: SlotState
SLOT_STATE_REVEALED: SlotState
SLOT_STATE_REMOVED: SlotState
FINISHER_PENALTY_UNSPECIFIED: FinisherPenalty
FINISHER_PENALTY_DOUBLE_IF_POSITIVE: FinisherPenalty
FINISHER_PENALTY_DOUBLE: FinisherPenalty
FINISHER_PENALTY_PLUS_10: FinisherPenalty
NEXT_ROUND_STARTER_UNSPECIFIED: NextRoundStarter
NEXT_ROUND_STARTER_FINISHER: NextRoundStarter
NEXT_ROUND_STARTER_ROUND_WINNER: NextRoundStarter
NEXT_ROUND_STARTER_HIGHEST_REVEAL: NextRoundStarter
FINAL_TIE_UNSPECIFIED: FinalTie
FINAL_TIE_SHARED: FinalTie
FINAL_TIE_EXTRA_ROUND: FinalTie

class PlayRequest(_message.Message):
    __slots__ = ("hello", "reply")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    REPLY_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    reply: DecisionReply
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., reply: _Optional[_Union[DecisionReply, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("name", "version", "protocol_version")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    protocol_version: int
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., protocol_version: _Optional[int] = ...) -> None: ...

class DecisionReply(_message.Message):
    __slots__ = ("request_id", "index", "action", "error")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    index: int
    action: Action
    error: str
    def __init__(self, request_id: _Optional[int] = ..., index: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("welcome", "game_start", "decision", "events", "round_result", "game_over", "strike")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    GAME_START_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    ROUND_RESULT_FIELD_NUMBER: _ClassVar[int]
    GAME_OVER_FIELD_NUMBER: _ClassVar[int]
    STRIKE_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    game_start: GameStart
    decision: DecisionRequest
    events: EventBatch
    round_result: RoundResult
    game_over: GameOver
    strike: Strike
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., game_start: _Optional[_Union[GameStart, _Mapping]] = ..., decision: _Optional[_Union[DecisionRequest, _Mapping]] = ..., events: _Optional[_Union[EventBatch, _Mapping]] = ..., round_result: _Optional[_Union[RoundResult, _Mapping]] = ..., game_over: _Optional[_Union[GameOver, _Mapping]] = ..., strike: _Optional[_Union[Strike, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("protocol_version", "seat_name")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAME_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    seat_name: str
    def __init__(self, protocol_version: _Optional[int] = ..., seat_name: _Optional[str] = ...) -> None: ...

class GameStart(_message.Message):
    __slots__ = ("game_id", "seat", "players", "rules", "time_control")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    players: _containers.RepeatedScalarFieldContainer[str]
    rules: Rules
    time_control: TimeControl
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., players: _Optional[_Iterable[str]] = ..., rules: _Optional[_Union[Rules, _Mapping]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "game_id", "view", "legal_actions", "time_left_ms", "events")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    game_id: str
    view: View
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    time_left_ms: int
    events: _containers.RepeatedCompositeFieldContainer[Event]
    def __init__(self, request_id: _Optional[int] = ..., game_id: _Optional[str] = ..., view: _Optional[_Union[View, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., time_left_ms: _Optional[int] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ...) -> None: ...

class Strike(_message.Message):
    __slots__ = ("game_id", "request_id", "reason", "detail", "played", "strikes", "max_strikes")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    request_id: int
    reason: str
    detail: str
    played: Action
    strikes: int
    max_strikes: int
    def __init__(self, game_id: _Optional[str] = ..., request_id: _Optional[int] = ..., reason: _Optional[str] = ..., detail: _Optional[str] = ..., played: _Optional[_Union[Action, _Mapping]] = ..., strikes: _Optional[int] = ..., max_strikes: _Optional[int] = ...) -> None: ...

class RoundResult(_message.Message):
    __slots__ = ("game_id", "round", "finisher", "raw", "scores", "totals")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    FINISHER_FIELD_NUMBER: _ClassVar[int]
    RAW_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    round: int
    finisher: int
    raw: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, game_id: _Optional[str] = ..., round: _Optional[int] = ..., finisher: _Optional[int] = ..., raw: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...

class GameOver(_message.Message):
    __slots__ = ("game_id", "totals", "ranks", "winners", "forfeits")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    FORFEITS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    totals: _containers.RepeatedScalarFieldContainer[int]
    ranks: _containers.RepeatedScalarFieldContainer[int]
    winners: _containers.RepeatedScalarFieldContainer[int]
    forfeits: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, game_id: _Optional[str] = ..., totals: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., winners: _Optional[_Iterable[int]] = ..., forfeits: _Optional[_Iterable[int]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("kind", "pos")
    KIND_FIELD_NUMBER: _ClassVar[int]
    POS_FIELD_NUMBER: _ClassVar[int]
    kind: ActionKind
    pos: int
    def __init__(self, kind: _Optional[_Union[ActionKind, str]] = ..., pos: _Optional[int] = ...) -> None: ...

class Slot(_message.Message):
    __slots__ = ("state", "value")
    STATE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    state: SlotState
    value: int
    def __init__(self, state: _Optional[_Union[SlotState, str]] = ..., value: _Optional[int] = ...) -> None: ...

class Grid(_message.Message):
    __slots__ = ("slots",)
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    slots: _containers.RepeatedCompositeFieldContainer[Slot]
    def __init__(self, slots: _Optional[_Iterable[_Union[Slot, _Mapping]]] = ...) -> None: ...

class Scores(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, values: _Optional[_Iterable[int]] = ...) -> None: ...

class View(_message.Message):
    __slots__ = ("seat", "round", "decision", "grids", "discard_pile", "draw_pile_size", "hand", "totals", "round_scores", "finisher", "starter")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    GRIDS_FIELD_NUMBER: _ClassVar[int]
    DISCARD_PILE_FIELD_NUMBER: _ClassVar[int]
    DRAW_PILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    ROUND_SCORES_FIELD_NUMBER: _ClassVar[int]
    FINISHER_FIELD_NUMBER: _ClassVar[int]
    STARTER_FIELD_NUMBER: _ClassVar[int]
    seat: int
    round: int
    decision: DecisionKind
    grids: _containers.RepeatedCompositeFieldContainer[Grid]
    discard_pile: _containers.RepeatedScalarFieldContainer[int]
    draw_pile_size: int
    hand: int
    totals: _containers.RepeatedScalarFieldContainer[int]
    round_scores: _containers.RepeatedCompositeFieldContainer[Scores]
    finisher: int
    starter: int
    def __init__(self, seat: _Optional[int] = ..., round: _Optional[int] = ..., decision: _Optional[_Union[DecisionKind, str]] = ..., grids: _Optional[_Iterable[_Union[Grid, _Mapping]]] = ..., discard_pile: _Optional[_Iterable[int]] = ..., draw_pile_size: _Optional[int] = ..., hand: _Optional[int] = ..., totals: _Optional[_Iterable[int]] = ..., round_scores: _Optional[_Iterable[_Union[Scores, _Mapping]]] = ..., finisher: _Optional[int] = ..., starter: _Optional[int] = ...) -> None: ...

class Rules(_message.Message):
    __slots__ = ("preset", "column_clear", "clear_on_final_reveal", "finisher_penalty", "next_round_starter", "end_score", "final_tie")
    PRESET_FIELD_NUMBER: _ClassVar[int]
    COLUMN_CLEAR_FIELD_NUMBER: _ClassVar[int]
    CLEAR_ON_FINAL_REVEAL_FIELD_NUMBER: _ClassVar[int]
    FINISHER_PENALTY_FIELD_NUMBER: _ClassVar[int]
    NEXT_ROUND_STARTER_FIELD_NUMBER: _ClassVar[int]
    END_SCORE_FIELD_NUMBER: _ClassVar[int]
    FINAL_TIE_FIELD_NUMBER: _ClassVar[int]
    preset: str
    column_clear: bool
    clear_on_final_reveal: bool
    finisher_penalty: FinisherPenalty
    next_round_starter: NextRoundStarter
    end_score: int
    final_tie: FinalTie
    def __init__(self, preset: _Optional[str] = ..., column_clear: _Optional[bool] = ..., clear_on_final_reveal: _Optional[bool] = ..., finisher_penalty: _Optional[_Union[FinisherPenalty, str]] = ..., next_round_starter: _Optional[_Union[NextRoundStarter, str]] = ..., end_score: _Optional[int] = ..., final_tie: _Optional[_Union[FinalTie, str]] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("decision_ms", "bank_ms", "max_strikes", "grace_ms")
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    decision_ms: int
    bank_ms: int
    max_strikes: int
    grace_ms: int
    def __init__(self, decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., max_strikes: _Optional[int] = ..., grace_ms: _Optional[int] = ...) -> None: ...

class EventBatch(_message.Message):
    __slots__ = ("game_id", "events")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    events: _containers.RepeatedCompositeFieldContainer[Event]
    def __init__(self, game_id: _Optional[str] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("game_id", "kind", "seat", "pos", "value", "replaced", "round")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    POS_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    REPLACED_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    kind: str
    seat: int
    pos: int
    value: int
    replaced: int
    round: int
    def __init__(self, game_id: _Optional[str] = ..., kind: _Optional[str] = ..., seat: _Optional[int] = ..., pos: _Optional[int] = ..., value: _Optional[int] = ..., replaced: _Optional[int] = ..., round: _Optional[int] = ...) -> None: ...

class IssueTokenRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class IssueTokenResponse(_message.Message):
    __slots__ = ("token",)
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    token: str
    def __init__(self, token: _Optional[str] = ...) -> None: ...

class SeatSpec(_message.Message):
    __slots__ = ("name", "builtin", "token")
    NAME_FIELD_NUMBER: _ClassVar[int]
    BUILTIN_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    name: str
    builtin: str
    token: str
    def __init__(self, name: _Optional[str] = ..., builtin: _Optional[str] = ..., token: _Optional[str] = ...) -> None: ...

class StartMatchRequest(_message.Message):
    __slots__ = ("seats", "rules", "time_control", "games", "seed", "rotate_seats", "concurrency", "first_game")
    SEATS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    ROTATE_SEATS_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    FIRST_GAME_FIELD_NUMBER: _ClassVar[int]
    seats: _containers.RepeatedCompositeFieldContainer[SeatSpec]
    rules: Rules
    time_control: TimeControl
    games: int
    seed: str
    rotate_seats: bool
    concurrency: int
    first_game: int
    def __init__(self, seats: _Optional[_Iterable[_Union[SeatSpec, _Mapping]]] = ..., rules: _Optional[_Union[Rules, _Mapping]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., games: _Optional[int] = ..., seed: _Optional[str] = ..., rotate_seats: _Optional[bool] = ..., concurrency: _Optional[int] = ..., first_game: _Optional[int] = ...) -> None: ...

class StartMatchResponse(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class WatchMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class GameFinished(_message.Message):
    __slots__ = ("index", "record_json")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    RECORD_JSON_FIELD_NUMBER: _ClassVar[int]
    index: int
    record_json: str
    def __init__(self, index: _Optional[int] = ..., record_json: _Optional[str] = ...) -> None: ...

class MatchFinished(_message.Message):
    __slots__ = ("games", "error")
    GAMES_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    games: int
    error: str
    def __init__(self, games: _Optional[int] = ..., error: _Optional[str] = ...) -> None: ...

class WatchMatchResponse(_message.Message):
    __slots__ = ("game_finished", "match_finished")
    GAME_FINISHED_FIELD_NUMBER: _ClassVar[int]
    MATCH_FINISHED_FIELD_NUMBER: _ClassVar[int]
    game_finished: GameFinished
    match_finished: MatchFinished
    def __init__(self, game_finished: _Optional[_Union[GameFinished, _Mapping]] = ..., match_finished: _Optional[_Union[MatchFinished, _Mapping]] = ...) -> None: ...
