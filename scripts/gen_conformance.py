#!/usr/bin/env python3
"""Write the language-neutral conformance vectors in ``conformance/`` from the rules engine.

Every SDK reads the same vectors in its own unit tests (conformance/README.md has the format):
``views.json`` holds decision requests of every kind, each with the typed view an SDK must read
from it, its legal actions and the reference strategy's answer; ``matches/*.json`` hold every
decision of the reference strategy in a whole seeded game, so an SDK's strategy can be checked
move by move without a referee. The reference strategy is ``examples/python/minimal_bot.py``.

    python scripts/gen_conformance.py           # rewrite conformance/
    python scripts/gen_conformance.py --check   # exit 1 when conformance/ is stale

``tests/test_conformance_vectors.py`` runs ``--check``'s comparison, so a change to the proto, the
rules or the reference strategy that changes a vector fails the suite until this script is rerun.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skyjo_bot import convert
from skyjo_bot.bot import Bot
from skyjo_bot.loader import load_bot
from skyjo_bot.types import GameStart, Rules, SlotState, TimeControl, View
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb
from skyjo_ref.bots import make_builtin
from skyjo_ref.rules.engine import Game

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "conformance"
REFERENCE = ROOT / "examples" / "python" / "minimal_bot.py"
FORMAT = "skyjo-conformance/1"
TIME_CONTROL = TimeControl(decision_ms=2000, bank_ms=120_000, max_strikes=3, grace_ms=10_000)
#: time_left_ms written into every request: a fixed number, so the vectors do not depend on a clock
TIME_LEFT_MS = 1750

#: (name, preset, players, seed, seats): games whose decisions are sampled for views.json;
#: a seat is "reference", "greedy" or "random"
VIEW_GAMES: tuple[tuple[str, str, int, int, tuple[str, ...]], ...] = (
    ("official-2p", "official", 2, 11, ("reference", "greedy")),
    ("official-3p", "official", 3, 12, ("random", "reference", "greedy")),
    ("indonesian-2p", "indonesian", 2, 13, ("reference", "random")),
    ("turkish-4p", "turkish", 4, 14, ("greedy", "random", "reference", "random")),
    ("french-2p", "french", 2, 15, ("random", "reference")),
    ("slovenian-3p", "slovenian", 3, 16, ("reference", "greedy", "random")),
    (
        "official-8p",
        "official",
        8,
        17,
        ("reference", "random", "greedy", "random", "greedy", "random", "greedy", "random"),
    ),
)

#: (name, preset, players, seed, seats): whole games whose every reference decision goes in matches/
MATCHES: tuple[tuple[str, str, int, int, tuple[str, ...]], ...] = (
    ("official-2p-vs-greedy", "official", 2, 2026, ("reference", "greedy")),
    ("french-3p", "french", 3, 7, ("greedy", "reference", "random")),
    ("slovenian-4p", "slovenian", 4, 99, ("random", "greedy", "random", "reference")),
)


@dataclass(frozen=True)
class Decision:
    """One decision of one seat: the messages the referee sends and the view they carry."""

    game_id: str
    start: GameStart
    request_id: int
    view: View


def _b64(message: pb.PlayResponse) -> str:
    return base64.b64encode(message.SerializeToString(deterministic=True)).decode()


def _start_message(start: GameStart) -> pb.PlayResponse:
    return pb.PlayResponse(game_start=convert.game_start_to_proto(start))


def _request_message(decision: Decision) -> pb.PlayResponse:
    return pb.PlayResponse(
        decision=convert.decision_request_to_proto(decision.request_id, decision.game_id, decision.view, TIME_LEFT_MS)
    )


def _grid_json(view: View, seat: int) -> dict[str, Any]:
    grid = view.grids[seat]
    return {"states": [state.value for state in grid.states], "values": list(grid.values)}


def view_json(decision: Decision) -> dict[str, Any]:
    """The typed view an SDK must read from ``decision``'s two messages, in plain JSON."""
    view, start = decision.view, decision.start
    return {
        "game_id": decision.game_id,
        "request_id": decision.request_id,
        "seat": view.seat,
        "players": list(start.players),
        "num_players": view.num_players,
        "rules": {"preset": start.rules.preset or "", **start.rules.in_force().options()},
        "time_control": {
            "decision_ms": TIME_CONTROL.decision_ms,
            "bank_ms": TIME_CONTROL.bank_ms,
            "max_strikes": TIME_CONTROL.max_strikes,
            "grace_ms": TIME_CONTROL.grace_ms,
        },
        "round": view.round,
        "decision": view.decision.value,
        "grids": [_grid_json(view, seat) for seat in range(view.num_players)],
        "discard_pile": list(view.discard_pile),
        "discard_top": view.discard_top,
        "draw_pile_size": view.draw_pile_size,
        "hand": view.hand,
        "totals": list(view.totals),
        "round_scores": [list(scores) for scores in view.round_scores],
        "finisher": view.finisher,
        "starter": view.starter,
        "legal_actions": [str(action) for action in view.legal_actions],
        "time_left_ms": TIME_LEFT_MS,
    }


def _seat_bot(kind: str, seed: int, seat: int) -> Bot:
    if kind == "reference":
        return load_bot(str(REFERENCE))
    return make_builtin(kind, f"{seed}/{seat}")


def play(
    name: str, preset: str, players: int, seed: int, seats: tuple[str, ...]
) -> Iterator[tuple[Decision, bool, str]]:
    """Every decision of a seeded game played out: whether the reference strategy made it, and the action."""
    rules = Rules.preset_named(preset)
    names = tuple(f"{kind}-{seat}" for seat, kind in enumerate(seats))
    game = Game(players, rules, seed=f"conformance/{name}/{seed}", players=names)
    bots = [_seat_bot(kind, seed, seat) for seat, kind in enumerate(seats)]
    game_id = f"conformance-{name}"
    starts = [
        GameStart(game_id=game_id, seat=seat, players=names, rules=rules.in_force(), time_control=TIME_CONTROL)
        for seat in range(players)
    ]
    request_ids = [0] * players
    while game.current_seat is not None:
        seat = game.current_seat
        request_ids[seat] += 1
        view = game.view(seat)
        decision = Decision(game_id, starts[seat], request_ids[seat], view)
        action = bots[seat].decide(view)
        yield decision, seats[seat] == "reference", str(action)
        game.apply(action)


def _features(view: View) -> set[str]:
    """What makes a view worth a vector: each feature's first occurrence is kept."""
    features = {f"decision:{view.decision.value}", f"players:{view.num_players}", f"round:{min(view.round, 3)}"}
    if view.finisher is not None:
        features.add("last-turn")
    if view.starter is None:
        features.add("no-starter")
    if view.hand is not None and view.hand < 0:
        features.add("negative-hand")
    if len(view.legal_actions) == 1:
        features.add("forced")
    if not view.discard_pile:
        features.add("empty-discard")
    if any(state is SlotState.REMOVED for grid in view.grids for state in grid.states):
        features.add("removed-slots")
    if any(state is SlotState.REMOVED for state in view.my_grid.states):
        features.add("own-removed-slots")
    if view.round_scores:
        features.add("round-scores")
    if any(total < 0 for total in view.totals):
        features.add("negative-total")
    revealed = [view.my_grid.values[p] for p in view.my_grid.revealed_positions()]
    if revealed and revealed.count(max(v for v in revealed if v is not None)) > 1:
        features.add("tied-worst")
    return features


def view_vectors() -> list[dict[str, Any]]:
    """Decisions chosen so that every feature appears, in every preset, plus a few drawn at random."""
    vectors: list[dict[str, Any]] = []
    pick = random.Random("conformance/views")
    for name, preset, players, seed, seats in VIEW_GAMES:
        seen: set[str] = set()
        for decision, by_reference, _ in play(name, preset, players, seed, seats):
            new = {f"{preset}:{feature}" for feature in _features(decision.view)} - seen
            if not new and pick.random() > 0.01:
                continue
            seen |= new
            vectors.append(
                _vector(f"{name}/r{decision.view.round}/seat{decision.view.seat}/{decision.request_id}", decision)
                | {"features": sorted(f.split(":", 1)[1] for f in new), "by_reference": by_reference}
            )
    return vectors


def _vector(name: str, decision: Decision) -> dict[str, Any]:
    reference = load_bot(str(REFERENCE))
    return {
        "name": name,
        "game_start": _b64(_start_message(decision.start)),
        "request": _b64(_request_message(decision)),
        "view": view_json(decision),
        "reference": str(reference.decide(decision.view)),
    }


def match_vectors() -> dict[str, dict[str, Any]]:
    """Each seeded game's reference decisions, in order, with the answer the reference strategy gave."""
    out: dict[str, dict[str, Any]] = {}
    for name, preset, players, seed, seats in MATCHES:
        played = [(d, action) for d, by_reference, action in play(name, preset, players, seed, seats) if by_reference]
        out[name] = {
            "format": FORMAT,
            "name": name,
            "rules": preset,
            "players": players,
            "seats": list(seats),
            "game_start": _b64(_start_message(played[0][0].start)),
            "decisions": [{"request": _b64(_request_message(d)), "reference": action} for d, action in played],
        }
    return out


def render() -> dict[Path, str]:
    """Every file of conformance/ (but its README) and its text."""

    def dump(data: Any) -> str:
        return json.dumps(data, indent=1, sort_keys=False) + "\n"

    files = {OUT / "views.json": dump({"format": FORMAT, "vectors": view_vectors()})}
    for name, match in match_vectors().items():
        files[OUT / "matches" / f"{name}.json"] = dump(match)
    return files


def stale(files: dict[Path, str]) -> list[str]:
    """The files that differ from ``files`` (missing, changed, or left over)."""
    wrong = [
        str(path.relative_to(ROOT)) for path, text in files.items() if not path.exists() or path.read_text() != text
    ]
    extra = [str(path.relative_to(ROOT)) for path in sorted((OUT / "matches").glob("*.json")) if path not in files]
    return wrong + extra


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when conformance/ is stale; write nothing")
    args = parser.parse_args(argv)
    files = render()
    if args.check:
        wrong = stale(files)
        if wrong:
            print(f"conformance vectors are stale: {', '.join(wrong)}; run python scripts/gen_conformance.py")
            return 1
        print(f"conformance vectors are current ({len(files)} files)")
        return 0
    (OUT / "matches").mkdir(parents=True, exist_ok=True)
    for path in (OUT / "matches").glob("*.json"):
        if path not in files:
            path.unlink()
    for path, text in files.items():
        path.write_text(text)
    print(f"wrote {len(files)} files to {OUT.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
