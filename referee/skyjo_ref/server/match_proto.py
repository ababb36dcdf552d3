"""A match's spec on the wire: MatchService's StartMatchRequest to and from :class:`~skyjo_ref.match.MatchSpec`."""

from __future__ import annotations

from skyjo_bot import convert
from skyjo_bot.types import TimeControl
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb

from skyjo_ref.match import MatchSpec, MatchSpecError, SeatSpec


def time_control_or_default(msg: pb.TimeControl, default: TimeControl) -> TimeControl:
    """Fields left at 0 take the referee's default."""
    return TimeControl(
        decision_ms=msg.decision_ms or default.decision_ms,
        bank_ms=msg.bank_ms or default.bank_ms,
        max_strikes=msg.max_strikes or default.max_strikes,
        grace_ms=msg.grace_ms or default.grace_ms,
    )


def spec_from_proto(msg: pb.StartMatchRequest, default_tc: TimeControl) -> MatchSpec:
    seats = []
    for i, seat in enumerate(msg.seats):
        which = seat.WhichOneof("player")
        if which == "builtin":
            seats.append(SeatSpec(seat.name or seat.builtin, builtin=seat.builtin))
        elif which == "token":
            seats.append(SeatSpec(seat.name or f"seat {i}", token=seat.token))
        else:
            raise MatchSpecError(f"seat {i} ({seat.name!r}) names no player: set SeatSpec.builtin or SeatSpec.token")
    return MatchSpec(
        seats=tuple(seats),
        rules=convert.rules_from_proto(msg.rules),
        time_control=time_control_or_default(msg.time_control, default_tc),
        games=msg.games,
        seed=msg.seed,
        rotate_seats=msg.rotate_seats,
        concurrency=max(1, msg.concurrency),
        first_game=msg.first_game,
    )


def spec_to_proto(spec: MatchSpec) -> pb.StartMatchRequest:
    seats = [
        pb.SeatSpec(name=s.name, builtin=s.builtin)
        if s.builtin is not None
        else pb.SeatSpec(name=s.name, token=s.token)
        for s in spec.seats
    ]
    return pb.StartMatchRequest(
        seats=seats,
        rules=convert.rules_to_proto(spec.rules),
        time_control=convert.time_control_to_proto(spec.time_control),
        games=spec.games,
        seed=spec.seed,
        rotate_seats=spec.rotate_seats,
        concurrency=spec.concurrency,
        first_game=spec.first_game,
    )
