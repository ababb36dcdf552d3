"""The conformance vectors (conformance/) are current, and the Python SDK reads and plays them as they say."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from skyjo_bot import convert
from skyjo_bot.loader import load_bot
from skyjo_bot.types import View
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "conformance"
REFERENCE = ROOT / "examples" / "python" / "minimal_bot.py"


def _message(text: str) -> pb.PlayResponse:
    message = pb.PlayResponse()
    message.ParseFromString(base64.b64decode(text))
    return message


def _read(start_b64: str, request_b64: str) -> tuple[View, pb.DecisionRequest]:
    start = convert.game_start_from_proto(_message(start_b64).game_start)
    request = _message(request_b64).decision
    return convert.decision_request_from_proto(request, start), request


def _as_json(view: View, request: pb.DecisionRequest, start_b64: str) -> dict[str, Any]:
    """The SDK's View in the vectors' JSON, written here independently of the generator."""
    start = _message(start_b64).game_start
    rules = view.rules
    return {
        "game_id": request.game_id,
        "request_id": request.request_id,
        "seat": view.seat,
        "players": list(view.players),
        "num_players": view.num_players,
        "rules": {"preset": rules.preset or "", **rules.options()},
        "time_control": {
            "decision_ms": start.time_control.decision_ms,
            "bank_ms": start.time_control.bank_ms,
            "max_strikes": start.time_control.max_strikes,
            "grace_ms": start.time_control.grace_ms,
        },
        "round": view.round,
        "decision": str(view.decision),
        "grids": [{"states": [str(s) for s in g.states], "values": list(g.values)} for g in view.grids],
        "discard_pile": list(view.discard_pile),
        "discard_top": view.discard_top,
        "draw_pile_size": view.draw_pile_size,
        "hand": view.hand,
        "totals": list(view.totals),
        "round_scores": [list(s) for s in view.round_scores],
        "finisher": view.finisher,
        "starter": view.starter,
        "legal_actions": [str(a) for a in view.legal_actions],
        "time_left_ms": request.time_left_ms,
    }


def test_vectors_are_current() -> None:
    """A change to the proto, the rules or the reference strategy must be followed by regenerating."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_conformance.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_views_cover_every_decision_kind_and_preset() -> None:
    vectors = json.loads((VECTORS / "views.json").read_text())["vectors"]
    assert {v["view"]["decision"] for v in vectors} == {
        "opening_reveal",
        "draw_or_take",
        "swap_or_reveal",
        "swap_after_take",
    }
    assert {v["view"]["rules"]["preset"] for v in vectors} == {
        "official",
        "indonesian",
        "turkish",
        "french",
        "slovenian",
    }
    features = {f for v in vectors for f in v["features"]}
    assert {"last-turn", "removed-slots", "tied-worst", "negative-hand", "round-scores", "empty-discard"} <= features
    assert len({v["name"] for v in vectors}) == len(vectors)


def test_python_sdk_reads_every_view_vector() -> None:
    reference = load_bot(str(REFERENCE))
    for vector in json.loads((VECTORS / "views.json").read_text())["vectors"]:
        view, request = _read(vector["game_start"], vector["request"])
        assert _as_json(view, request, vector["game_start"]) == vector["view"], vector["name"]
        assert str(reference.decide(view)) == vector["reference"], vector["name"]


@pytest.mark.parametrize("path", sorted((VECTORS / "matches").glob("*.json")), ids=lambda p: p.stem)
def test_python_reference_plays_every_match_vector(path: Path) -> None:
    match = json.loads(path.read_text())
    reference = load_bot(str(REFERENCE))
    assert match["decisions"], path
    for index, decision in enumerate(match["decisions"]):
        view, _ = _read(match["game_start"], decision["request"])
        assert str(reference.decide(view)) == decision["reference"], f"{path.stem} decision {index}"
