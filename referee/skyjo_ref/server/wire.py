"""The referee's hot messages written straight to protobuf wire format, byte for byte what protobuf writes.

A DecisionRequest goes out at every decision. Built as a message
(``pb.DecisionRequest(view=pb.View(grids=[...]), ...)``) it cost ~27 µs, most
of it protobuf copying sub-messages into their parents, then ~6 µs more to
wrap and serialize it. Here it is joined from bytes: each grid's bytes are
kept while the engine keeps the same ``Grid`` (one changes per action), each
legal-action list's bytes while the engine keeps the same tuple, and each
event is serialized once for every seat. The result is the serialization
protobuf itself gives (fields in number order, proto3 defaults left out,
packed repeated scalars): ``tests/test_wire.py`` compares the two over
whole games. gRPC sends the bytes as they are (see ``serialize_response``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from skyjo_bot import convert
from skyjo_bot.types import Action, Event, Grid, SlotState, View
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb

#: Cached entries (grids, legal-action lists) before a cache starts again empty.
CACHE_LIMIT: Final = 4096


def varint(n: int) -> bytes:
    """An unsigned varint (``n`` >= 0; a negative int32 is written as protobuf does, in 10 bytes)."""
    if n < 0:
        n &= (1 << 64) - 1
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL: Final = [varint(n) for n in range(1 << 14)]


def _uv(n: int) -> bytes:
    return _SMALL[n] if 0 <= n < 16384 else varint(n)


def _sv(n: int) -> bytes:
    """A sint32 (zigzag) varint."""
    z = n << 1 if n >= 0 else (-n << 1) - 1
    return _SMALL[z] if z < 16384 else varint(z)


def _field(tag: bytes, payload: bytes) -> bytes:
    return tag + _uv(len(payload)) + payload


def _packed_sint(tag: bytes, values: Sequence[int]) -> bytes:
    """A packed ``repeated sint32`` field ("" when empty, as protobuf leaves it out)."""
    if not values:
        return b""
    payload = b"".join([_sv(v) for v in values])
    return tag + _uv(len(payload)) + payload


# Caches by identity first (the engine hands out the same Grid / legal-actions tuple until it
# changes), then by content. Content keys use id() of enum members and interned actions: an
# Enum's __hash__ is Python code, id() is not.
_GRIDS: dict[int, tuple[Grid, bytes]] = {}
_GRIDS_BY_CONTENT: dict[tuple[tuple[int, ...], tuple[int | None, ...]], bytes] = {}
_LEGAL: dict[int, tuple[tuple[Action, ...], bytes]] = {}
_LEGAL_BY_CONTENT: dict[tuple[int, ...], bytes] = {}
#: ``Grid.slots`` (field 1) entry for each (id(state), value).
_SLOT_FIELD: Final = {
    (id(state), value): _field(b"\x0a", convert._slot(state, value).SerializeToString())
    for state in SlotState
    for value in (None, *range(-128, 129))
}


def _slot_field(state: SlotState, value: int | None) -> bytes:
    found = _SLOT_FIELD.get((id(state), value))
    return found if found is not None else _field(b"\x0a", convert._slot(state, value).SerializeToString())


def _grid_field(grid: Grid) -> bytes:
    """``View.grids`` (field 4) entry for ``grid``."""
    found = _GRIDS.get(id(grid))
    if found is not None and found[0] is grid:
        return found[1]
    if len(_GRIDS) >= CACHE_LIMIT:
        _GRIDS.clear()
    key = (tuple(map(id, grid.states)), grid.values)
    data = _GRIDS_BY_CONTENT.get(key)
    if data is None:
        if len(_GRIDS_BY_CONTENT) >= CACHE_LIMIT:
            _GRIDS_BY_CONTENT.clear()
        data = _field(b"\x22", b"".join([_slot_field(s, v) for s, v in zip(grid.states, grid.values)]))
        _GRIDS_BY_CONTENT[key] = data
    _GRIDS[id(grid)] = (grid, data)
    return data


def _legal_fields(legal: tuple[Action, ...]) -> bytes:
    """``DecisionRequest.legal_actions`` (field 4), every entry."""
    found = _LEGAL.get(id(legal))
    if found is not None and found[0] is legal:
        return found[1]
    if len(_LEGAL) >= CACHE_LIMIT:
        _LEGAL.clear()
    key = tuple(map(id, legal))
    data = _LEGAL_BY_CONTENT.get(key)
    if data is None:
        if len(_LEGAL_BY_CONTENT) >= CACHE_LIMIT:
            _LEGAL_BY_CONTENT.clear()
        data = b"".join([_field(b"\x22", convert._action_pb(a).SerializeToString()) for a in legal])
        _LEGAL_BY_CONTENT[key] = data
    _LEGAL[id(legal)] = (legal, data)
    return data


_DECISION_PB: Final = {kind: _uv(value) for kind, value in convert._DECISION_TO_PB.items()}


def view_bytes(view: View) -> bytes:
    """``view`` as a serialized ``skyjo.v1.View`` (what ``convert.view_to_proto(view)`` serializes to)."""
    parts: list[bytes] = []
    if view.seat:
        parts.append(b"\x08" + _uv(view.seat))
    if view.round:
        parts.append(b"\x10" + _uv(view.round))
    parts.append(b"\x18" + _DECISION_PB[view.decision])  # never UNSPECIFIED (0)
    for grid in view.grids:
        parts.append(_grid_field(grid))
    parts.append(_packed_sint(b"\x2a", view.discard_pile))
    if view.draw_pile_size:
        parts.append(b"\x30" + _uv(view.draw_pile_size))
    if view.hand is not None:
        parts.append(b"\x38" + _sv(view.hand))
    parts.append(_packed_sint(b"\x42", view.totals))
    for scores in view.round_scores:
        parts.append(_field(b"\x4a", _packed_sint(b"\x0a", scores)))
    if view.finisher is not None:
        parts.append(b"\x50" + _uv(view.finisher))
    if view.starter is not None:
        parts.append(b"\x58" + _uv(view.starter))
    return b"".join(parts)


def decision_response(
    request_id: int, game_id: str, view: View, time_left_ms: int, events: Sequence[bytes] = ()
) -> bytes:
    """A serialized ``PlayResponse(decision=...)``: the bytes of
    ``PlayResponse(decision=convert.decision_request_to_proto(...))``.

    ``events``: serialized ``Event`` messages (:func:`event_bytes`) that ride along.
    """
    parts = [b"\x08" + _uv(request_id)] if request_id else []
    if game_id:
        parts.append(_field(b"\x12", game_id.encode()))
    parts.append(_field(b"\x1a", view_bytes(view)))
    parts.append(_legal_fields(view.legal_actions))
    left = max(0, time_left_ms)
    if left:
        parts.append(b"\x28" + _uv(left))
    for event in events:
        parts.append(_field(b"\x32", event))
    return _field(b"\x1a", b"".join(parts))


#: ``Event.kind`` (field 2) for each id(EventKind) that travels as an Event message.
_KIND_FIELD: Final = {id(kind): _field(b"\x12", kind.value.encode()) for kind in convert.EVENT_MESSAGE_KINDS}


def event_bytes(event: Event, game_id: str) -> bytes:
    """One event as a serialized ``skyjo.v1.Event`` (what ``convert.event_to_proto`` serializes to)."""
    kind = _KIND_FIELD.get(id(event.kind))
    if kind is None:
        return convert.event_to_proto(event, game_id).SerializeToString()  # raises: not an Event kind
    parts = [_field(b"\x0a", game_id.encode()), kind] if game_id else [kind]
    _, seat, pos, value, replaced, round_, *_ = event
    if seat is not None:
        parts.append(b"\x18" + _uv(seat))
    if pos is not None:
        parts.append(b"\x20" + _uv(pos))
    if value is not None:
        parts.append(b"\x28" + _sv(value))
    if replaced is not None:
        parts.append(b"\x30" + _sv(replaced))
    if round_ is not None:
        parts.append(b"\x38" + _uv(round_))
    return b"".join(parts)


def event_batch_response(game_id: str, events: Sequence[bytes]) -> bytes:
    """A serialized ``PlayResponse(events=EventBatch(game_id, events))``."""
    parts = [_field(b"\x0a", game_id.encode())] if game_id else []
    for event in events:
        parts.append(_field(b"\x12", event))
    return _field(b"\x42", b"".join(parts))


def serialize_response(message: pb.PlayResponse | bytes) -> bytes:
    """gRPC's serializer for PlayResponse: bytes built here go out as they are."""
    if isinstance(message, bytes):
        return message
    return message.SerializeToString()
