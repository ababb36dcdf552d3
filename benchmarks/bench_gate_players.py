"""The multi-player gate's error rates and games to a verdict, by simulation through the real tracker.

    python benchmarks/bench_gate_players.py                     # K = 3, 4, 6; 1,000 gates per truth
    python benchmarks/bench_gate_players.py --players 3 --runs 200
    python benchmarks/bench_gate_players.py --design copies,field --runs 300

Each simulated gate feeds :class:`skyjo_ref.gate.tracker.GateTracker` (the
code the CLI runs) with stored games of a K-player table: the candidate and
K - 1 identical baseline copies, each deal one block of K games (the
candidate in each seat). A game's order is a Plackett-Luce draw (a Gumbel
race) in which the candidate is stronger than the copies, plus a shared
seat luck per deal (the same cards for the block's games), its edge set so
that its chance to finish ahead of one copy, averaged over the seat luck, is
``1 / (1 + 10^(-elo/400))`` (:func:`candidate_edge`),
the gate's definition of Elo at K players (docs/gate.md). At true Elo =
elo0 the share accepted is the false positive rate (alpha), at elo1 the share
rejected is the false negative rate (beta).

``--design field`` simulates the gate against a named field instead: the
table is the candidate, one baseline and K - 2 field bots (``--field-elo``:
their strengths against the baseline, spread evenly from minus to plus that),
a block is the balanced seat design (K(K-1) games), and the block score the
candidate's head-to-head result against the baseline. In a Plackett-Luce race
that chance is ``1 / (1 + 10^(-elo/400))`` whatever the field (the order of
two bots does not depend on the others), so the truths are the same Elo.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path
from statistics import NormalDist

from skyjo_bot.types import Rules, TimeControl
from skyjo_ref.gate.spec import GateSpec
from skyjo_ref.gate.tracker import GateTracker, head_to_head, prior_variance
from skyjo_ref.players import parse_bot_spec
from skyjo_ref.stats import sprt
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import SeatResult, StoredGame

NATS_PER_ELO = math.log(10.0) / 400.0


def gate_spec(players: int, elo0: float, elo1: float, max_games: int, design: str = "copies") -> GateSpec:
    field = tuple(parse_bot_spec("random") for _ in range(players - 2)) if design == "field" else ()
    return GateSpec(
        candidate=parse_bot_spec("greedy"),
        baseline=parse_bot_spec("random"),
        hypotheses=sprt.Hypotheses(elo0, elo1),
        rules=Rules(),
        time_control=TimeControl(),
        seed="sim",
        max_games=max_games,
        concurrency=1,
        output=Path("unused"),
        players=players,
        field=field,
    )


def field_strengths(spec: GateSpec, spread: float) -> dict[str, float]:
    """The field bots' Elo against the baseline: evenly from ``-spread`` to ``+spread`` (0 for one bot)."""
    names = spec.field_names
    if len(names) < 2:
        return dict.fromkeys(names, 0.0)
    return {name: spread * (2 * i / (len(names) - 1) - 1) for i, name in enumerate(names)}


def candidate_edge(elo: float, seat_luck: float) -> float:
    """The candidate's strength (nats) above the baseline's that makes its chance to finish ahead of it, averaged
    over the seat luck, exactly ``1 / (1 + 10^(-elo/400))``.

    In a Gumbel race the candidate finishes ahead of a bot ``d`` nats weaker with chance ``logistic(d)``; the
    seat luck adds ``N(0, 2 seat_luck^2)`` to ``d`` and pulls that chance toward 1/2, so ``elo`` nats alone
    would put the truth a little inside the bounds (about 10% of the way at the default luck).
    """
    target = sprt.score_of(elo)
    spread = math.sqrt(2.0) * seat_luck
    nodes = [NormalDist().inv_cdf((i + 0.5) / 400) * spread for i in range(400)]

    def chance(edge: float) -> float:
        return sum(1.0 / (1.0 + math.exp(-(edge + z))) for z in nodes) / len(nodes)

    low, high = -10.0, 10.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if chance(mid) < target else (low, mid)
    return (low + high) / 2


def simulate(
    spec: GateSpec, elo: float, rng: random.Random, seat_luck: float = 0.3, field_elo: float = 0.0
) -> GateTracker:
    """One gate to its verdict (or cap) at true Elo ``elo``."""
    tracker = GateTracker(spec)
    cand = spec.names[0]
    edge = candidate_edge(elo, seat_luck)
    strength = {name: (edge if name == cand else 0.0) for name in spec.seat_names}
    strength.update({name: e * NATS_PER_ELO for name, e in field_strengths(spec, field_elo).items()})
    k = spec.players
    deal = 0
    while not tracker.done:
        luck = [rng.gauss(0.0, seat_luck) for _ in range(k)]
        for rotation in spec.seatings:
            game = GameId(spec.table, deal, rotation)
            keys = [strength[bot] + luck[s] - math.log(-math.log(rng.random())) for s, bot in enumerate(game.seats)]
            order = sorted(range(k), key=lambda s: -keys[s])
            ranks = [0] * k
            for place, s in enumerate(order):
                ranks[s] = place + 1
            seats = tuple(SeatResult(bot, ranks[s], ranks[s], 0, False, ()) for s, bot in enumerate(game.seats))
            tracker.add(StoredGame(game, seats), None)
        deal += 1
    return tracker


def block_variance(trackers: list[GateTracker]) -> float:
    """The block scores' variance pooled over the gates (each gate's own variance, weighted by its blocks)."""
    total = sum(t.plain.n for t in trackers)
    return sum(t.plain.moments()[1] * t.plain.n for t in trackers) / total if total else 0.0


def measure(
    players: int, runs: int, elo0: float, elo1: float, seed: str, design: str = "copies", field_elo: float = 0.0
) -> dict[str, object]:
    spec = gate_spec(players, elo0, elo1, max_games=200_000, design=design)
    out: dict[str, object] = {"design": design, "players": players, "elo0": elo0, "elo1": elo1, "runs": runs}
    out["block_games"] = spec.block_games
    out["prior_block_variance"] = prior_variance(spec.block_games)
    if design == "field":
        out["field_elo"] = field_strengths(spec, field_elo)
    for label, truth, wrong in (("at_elo0", elo0, "accepted"), ("at_elo1", elo1, "rejected")):
        # the copies' streams are the ones the table in docs/gate.md was made with
        rng = random.Random(f"{seed}/{players}/{label}" + ("" if design == "copies" else f"/{design}"))
        trackers = [simulate(spec, truth, rng, field_elo=field_elo) for _ in range(runs)]
        errors = sum(t.verdict == wrong for t in trackers)
        out[label] = {
            "wrong_verdicts": errors / runs,
            "mean_games": sum(t.games for t in trackers) / runs,
            "mean_blocks": sum(t.blocks for t in trackers) / runs,
            "block_variance": block_variance(trackers),
            "inconclusive": sum(t.verdict == "inconclusive" for t in trackers),
        }
    return out


#: Real games (``--real DEALS``): the candidate, the baseline and the field bots of benchmarks/bench_seating.py.
REAL_CANDIDATE, REAL_BASELINE = "greedy", "eps05"
REAL_FIELD = ("eps20", "scavenger", "leaky", "eps30", "eps40", "eps50")


def _variance(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / (len(values) - 1)


def real_blocks(players: int, deals: int, tag: str) -> dict[str, object]:
    """The block scores' variance on real games (in-process, official rules), for copies and for a field.

    Per design: the mean block score, its variance, that variance times the games of a block (the variance
    per game a fixed budget of games pays, what the games to a verdict are proportional to) and the same
    divided by the variance of one game's result (1: the block's games are as good as independent games;
    the prior assumes 0.25 per game, the most a game's result can vary).
    """
    from bench_seating import play  # a benchmark script beside this one (its bots)
    from skyjo_ref.seating import design, seat_order

    field = REAL_FIELD[: players - 2]
    out: dict[str, object] = {"players": players, "deals": deals, "field_bots": list(field)}
    for kind in ("copies", "field"):
        if kind == "copies":
            table = (REAL_CANDIDATE, *(REAL_BASELINE,) * (players - 1))
            seatings = design(players, "rotations")
        else:
            table = (REAL_CANDIDATE, REAL_BASELINE, *field)
            seatings = design(players, "balanced")
        blocks: list[float] = []
        games: list[float] = []
        for deal in range(deals):
            scores = []
            for index in seatings:
                order = seat_order(players, index)
                bots = [table[i] for i in order]
                ranks = play(bots, deal, tag)
                mine, theirs = order.index(0), order.index(1)
                if kind == "copies":
                    score = sum(
                        1.0 if ranks[mine] < r else 0.5 if ranks[mine] == r else 0.0
                        for s, r in enumerate(ranks)
                        if s != mine
                    ) / (players - 1)
                else:
                    score = head_to_head(ranks, mine, theirs)
                scores.append(score)
            games += scores
            blocks.append(sum(scores) / len(scores))
        block_var = _variance(blocks)
        out[kind] = {
            "block_games": len(seatings),
            "mean": sum(blocks) / len(blocks),
            "elo": sprt.elo_of(sum(blocks) / len(blocks)),
            "block_variance": block_var,
            "prior_block_variance": prior_variance(len(seatings)),
            "per_game": block_var * len(seatings),
            "design_effect": block_var * len(seatings) / _variance(games),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", default="3,4,6")
    parser.add_argument("--design", default="copies", help="copies, field, or both: copies,field")
    parser.add_argument("--field-elo", type=float, default=0.0, help="the field's spread around the baseline")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=20.0)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--json", default=None)
    parser.add_argument("--real", type=int, default=0, metavar="DEALS", help="measure real games' block variance")
    args = parser.parse_args()
    if args.real:
        for k in args.players.split(","):
            print(json.dumps(real_blocks(int(k), args.real, args.seed)), flush=True)
        return
    designs = args.design.split(",")
    if not designs or any(d not in ("copies", "field") for d in designs):
        parser.error(f"--design {args.design!r}: expected copies, field or copies,field")
    results = []
    for k in args.players.split(","):
        for design in designs:
            result = measure(int(k), args.runs, args.elo0, args.elo1, args.seed, design, args.field_elo)
            print(json.dumps(result), flush=True)
            results.append(result)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
