"""Multi-player ratings on simulated leagues: interval coverage and held-out prediction, Plackett-Luce vs pairwise.

    python benchmarks/bench_ratings.py                          # 4,000 intervals per size, 2..6 players
    python benchmarks/bench_ratings.py --sizes 3 --intervals 500 --samples 100   # a smoke run
    python benchmarks/bench_ratings.py --truth scores --json out.json

A league: ``bots`` bots with fixed true strengths evenly spaced in Elo
(``--spread``: the best minus the worst), every table of ``k`` bots, ``deals``
deals, each deal one duplicate block in the balanced seat design
(:mod:`skyjo_ref.seating`). Two true models:

- ``pl``: Plackett-Luce itself (a Gumbel race: strength + Gumbel noise per
  game, highest first); the truth is the strengths.
- ``scores``: not Plackett-Luce: a bot's game total is ``-10 x strength
  + seat luck + noise`` (strength in nats; seat luck N(0, 4) shared by the
  block's games by seat, noise N(0, 12)),
  rounded to integers (so ties happen), lowest total best. Its truth is each
  model's own limit: its fit of one league of ``--truth-deals`` deals (3,000;
  without the prior), see :func:`limit`.
- ``shared``: a deal's seat luck shared by **every table** that plays the deal
  (as in a league without a seed secret, where every table gets deal d's
  deck): performance = strength + luck[deal][seat] + noise, normal, luck
  ``--luck-share`` of a seat's variance (default 0.64), highest first. Its truth
  is each model's limit, as for ``scores``.
- ``thurstone``: a Thurstonian truth (not Plackett-Luce): performance =
  strength + N(0, 1) noise per seat and game, no luck; truth as for ``scores``.

``--resample deal`` (the league default without a secret) resamples whole deals
(every table's games of a deal), ``block`` each (table, deal) block.

Each league is fitted by both models (Breslow ties for Plackett-Luce, half
wins for the pairwise fit), intervals come from ``--samples`` block-bootstrap
resamples (the same resamples for both) by each interval method; coverage is
of each bot's Elo on the **pool-mean scale** (Elo minus the pool's mean; so a
league of ``n`` bots gives ``n`` intervals, not independent of one another).
``normal@bias-corrected`` is the ``normal`` interval moved to the bootstrap's
bias-corrected centre ``2 x point - mean(draws)`` (the rule before issue 29).
``pl_bias_elo``: the Plackett-Luce estimate minus the truth, per bot (weakest
first), averaged over leagues; ``pl_prior_pull_elo``: the estimate minus the
same fit without the prior (over the leagues where that fit is finite).
Held-out prediction: one more deal of every table, scored by each model's
strengths as Plackett-Luce order log-likelihood per game and the share of
pairs ordered against the prediction (ties skipped).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from skyjo_ref.seating import design, seat_order
from skyjo_ref.stats import bradley_terry as bt
from skyjo_ref.stats import plackett_luce as pl
from skyjo_ref.stats.bootstrap import INTERVAL_METHODS, interval
from skyjo_ref.stats.newton import NotConverged

Game = tuple[tuple[tuple[int, ...], int], list[tuple[str, int]]]


def play_block(
    rng: random.Random,
    table: tuple[int, ...],
    deal: int,
    truth: Sequence[float],
    model: str,
    names: Sequence[str],
    deal_luck: Sequence[float] = (),
    luck_share: float = 0.64,
) -> list[Game]:
    """One duplicate block: the table's balanced seatings on one deal (``deal_luck``: the deal's seat luck)."""
    k = len(table)
    luck = [rng.gauss(0.0, 4.0) for _ in range(k)]  # shared by the block's games, by seat
    out: list[Game] = []
    for index in design(k, "balanced"):
        order = seat_order(k, index)
        bots = [table[order[s]] for s in range(k)]
        if model == "pl":
            keys = [truth[b] - math.log(-math.log(rng.random())) for b in bots]
            ranked = sorted(range(k), key=lambda s: -keys[s])
            ranks = [0] * k
            for place, s in enumerate(ranked):
                ranks[s] = place + 1
        elif model in ("shared", "thurstone"):
            noise = math.sqrt(1.0 - luck_share) if model == "shared" else 1.0
            perf = [
                truth[b] + (deal_luck[s] if model == "shared" else 0.0) + rng.gauss(0.0, noise)
                for s, b in enumerate(bots)
            ]
            ranks = [1 + sum(1 for p in perf if p > mine) for mine in perf]
        else:
            totals = [round(-truth[b] * 10.0 + luck[s] + rng.gauss(0.0, 12.0)) for s, b in enumerate(bots)]
            ranks = [1 + sum(1 for t in totals if t < mine) for mine in totals]
        out.append(((table, deal), [(names[b], ranks[s]) for s, b in enumerate(bots)]))
    return out


def play_league(
    rng: random.Random,
    n: int,
    k: int,
    deals: int,
    truth: Sequence[float],
    model: str,
    first_deal: int = 0,
    luck_share: float = 0.64,
) -> list[Game]:
    names = [f"b{i}" for i in range(n)]
    sd = math.sqrt(luck_share)
    luck = {deal: [rng.gauss(0.0, sd) for _ in range(k)] for deal in range(first_deal, first_deal + deals)}
    return [
        game
        for table in itertools.combinations(range(n), k)
        for deal in range(first_deal, first_deal + deals)
        for game in play_block(rng, table, deal, truth, model, names, luck[deal], luck_share)
    ]


def by_unit(games: Sequence[Game], resample: str) -> list[Game]:
    """``games`` keyed by the unit the bootstrap resamples: the deal, or the (table, deal) block."""
    if resample == "block":
        return list(games)
    return [((("deal",), block[1]), seats) for block, seats in games]


def centred(values: Sequence[float]) -> list[float]:
    mean = sum(values) / len(values)
    return [bt.ELO_PER_NAT * (v - mean) for v in values]


def fits(games: Sequence[Game], names: Sequence[str]) -> tuple[pl.OrderData, bt.PairData, list[float], list[float]]:
    orders = pl.order_data(games, names)
    pairs = bt.pair_data(games, names)
    beta_pl = pl.fit(*orders.totals())
    beta_bt = bt.fit(*pairs.totals())
    return orders, pairs, beta_pl, beta_bt


class HeldOut(NamedTuple):
    """Held-out games scored by fitted strengths (sums; divide by ``games`` or ``pairs``)."""

    order_loglik: float  # Plackett-Luce log-likelihood of the orders (Breslow ties)
    pair_loglik: float  # Bradley-Terry log-likelihood of every pair in a game (a tie: half a win each)
    games: int
    pairs: int  # every pair in every game, ties included
    wrong: int  # decided pairs ordered against the strengths
    decided: int  # pairs that are not tied, between bots of different strengths


def held_out(games: Sequence[Game], names: Sequence[str], beta: Sequence[float]) -> HeldOut:
    """Score ``games`` by strengths ``beta`` (natural units, indexed like ``names``)."""
    index = {name: i for i, name in enumerate(names)}
    loglik = pair_loglik = 0.0
    wrong = decided = pairs = 0
    for _, seats in games:
        order = [(index[bot], rank) for bot, rank in seats]
        chosen = [0.0] * len(names)
        stages: dict[int, float] = {}
        for mask, group in pl.stages_of(order):
            stages[mask] = stages.get(mask, 0.0) + len(group)
            for i in group:
                chosen[i] += 1
        loglik += pl.log_likelihood(beta, chosen, stages)
        for (a, ra), (b, rb) in itertools.combinations(order, 2):
            pairs += 1
            score = 1.0 if ra < rb else 0.0 if ra > rb else 0.5
            d = beta[a] - beta[b]  # log P(a ahead) = -softplus(-d), log P(b ahead) = -softplus(d)
            pair_loglik -= score * bt._softplus(-d) + (1.0 - score) * bt._softplus(d)
            if ra == rb or beta[a] == beta[b]:
                continue
            decided += 1
            wrong += (ra < rb) != (beta[a] > beta[b])
    return HeldOut(loglik, pair_loglik, len(games), pairs, wrong, decided)


def limit(
    rng: random.Random, n: int, k: int, truth: Sequence[float], names: Sequence[str], args: argparse.Namespace
) -> dict[str, list[float]]:
    """Each model's own limit on a truth that is not its model: its fit (no prior) of ``--truth-deals`` deals,
    the deals' statistics summed 50 deals at a time (luck drawn afresh per deal). The limit is one draw shared
    by every league of the run, so its own error does not average out: at 300 deals it was up to 12 Elo off the
    exact limit at 2 players (0.8 to 1.1 points of coverage), at 3,000 deals about a third of that."""
    chosen = [0.0] * n
    stages: dict[int, float] = {}
    wins = [[0.0] * n for _ in range(n)]
    counts = [[0.0] * n for _ in range(n)]
    for first in range(0, args.truth_deals, 50):
        deals = min(50, args.truth_deals - first)
        games = play_league(rng, n, k, deals, truth, args.truth, first_deal=first, luck_share=args.luck_share)
        c, st = pl.order_data(games, names).totals()
        w, g = bt.pair_data(games, names).totals()
        for i in range(n):
            chosen[i] += c[i]
            for j in range(n):
                wins[i][j] += w[i][j]
                counts[i][j] += g[i][j]
        for mask, count in st.items():
            stages[mask] = stages.get(mask, 0.0) + count
    return {"pl": centred(pl.fit(chosen, stages, prior=0.0)), "bt": centred(bt.fit(wins, counts, prior=0.0))}


def measure(k: int, args: argparse.Namespace) -> dict[str, Any]:
    n = args.bots if k < 6 else max(args.bots, 7)
    truth = [args.spread / bt.ELO_PER_NAT * (i / (n - 1) - 0.5) for i in range(n)]
    names = [f"b{i}" for i in range(n)]
    rng = random.Random(f"bench-ratings/{args.truth}/{k}/{args.seed}")
    if args.truth == "pl":
        target = {"pl": centred(truth), "bt": centred(truth)}
    else:
        target = limit(rng, n, k, truth, names, args)
    leagues = math.ceil(args.intervals / n)
    # the normal interval around the bias-corrected estimate 2 x point - mean(draws): the rule before issue 29
    methods = (*INTERVAL_METHODS, "normal@bias-corrected")
    hits = {(m, meth): 0 for m in ("pl", "bt") for meth in methods}
    widths = {key: 0.0 for key in hits}
    heldout = {m: [0.0, 0, 0] for m in ("pl", "bt")}
    bias = [0.0] * n  # Plackett-Luce point estimate minus the truth, per bot (weakest first)
    pull = [0.0] * n  # the prior's pull: the point estimate minus the same fit without the prior
    unpulled = 0  # leagues whose fit without the prior is finite
    started = time.monotonic()
    for league in range(leagues):
        games = by_unit(
            play_league(rng, n, k, args.deals, truth, args.truth, luck_share=args.luck_share), args.resample
        )
        orders, pairs, beta_pl, beta_bt = fits(games, names)
        points = {"pl": centred(beta_pl), "bt": centred(beta_bt)}
        draws: dict[str, list[list[float]]] = {"pl": [[] for _ in names], "bt": [[] for _ in names]}
        count = len(orders.blocks)
        boot = random.Random(f"{league}")
        for _ in range(args.samples):
            chosen = [boot.randrange(count) for _ in range(count)]
            c, s = pl._sum_blocks(n, [orders.blocks[i] for i in chosen])
            w, g = bt._sum_blocks(n, [pairs.blocks[i] for i in chosen])
            for i, r in enumerate(centred(pl.fit(c, s, start=beta_pl))):
                draws["pl"][i].append(r)
            for i, r in enumerate(centred(bt.fit(w, g, start=beta_bt))):
                draws["bt"][i].append(r)
        seen = {"pl": pl.bot_blocks(orders), "bt": bt.bot_blocks(pairs)}
        for model in ("pl", "bt"):
            for i in range(n):
                for method in methods:
                    low, high = interval(points[model][i], draws[model][i], seen[model][i], method.split("@")[0])
                    if method == "normal@bias-corrected":
                        shift = points[model][i] - sum(draws[model][i]) / len(draws[model][i])
                        low, high = low + shift, high + shift
                    hits[(model, method)] += low <= target[model][i] <= high
                    widths[(model, method)] += high - low
        for i in range(n):
            bias[i] += points["pl"][i] - target["pl"][i]
        try:
            free = centred(pl.fit(*orders.totals(), prior=0.0))
        except (NotConverged, OverflowError, ZeroDivisionError):
            free = None  # a perfect record: no finite fit without the prior
        if free is not None and all(math.isfinite(v) and abs(v) < 5000 for v in free):
            unpulled += 1
            for i in range(n):
                pull[i] += points["pl"][i] - free[i]
        future = play_league(rng, n, k, 1, truth, args.truth, first_deal=args.deals, luck_share=args.luck_share)
        for model, beta in (("pl", beta_pl), ("bt", beta_bt)):
            score = held_out(future, names, beta)
            heldout[model][0] += score.order_loglik
            heldout[model][1] += score.wrong
            heldout[model][2] += score.decided
    total = leagues * n
    future_games = leagues * math.comb(n, k) * len(design(k, "balanced"))
    return {
        "players": k,
        "bots": n,
        "deals": args.deals,
        "truth": args.truth,
        "resample": args.resample,
        **({"luck_share": args.luck_share} if args.truth == "shared" else {}),
        "leagues": leagues,
        "intervals": total,
        "samples": args.samples,
        "coverage": {f"{m}/{meth}": round(hits[(m, meth)] / total, 4) for m, meth in hits},
        "mean_width": {f"{m}/{meth}": round(widths[(m, meth)] / total, 1) for m, meth in widths},
        "heldout_loglik_per_game": {m: round(v[0] / future_games, 4) for m, v in heldout.items()},
        "heldout_mispredicted_pairs": {m: round(v[1] / max(v[2], 1), 4) for m, v in heldout.items()},
        "pl_bias_elo": [round(b / leagues, 1) for b in bias],
        "pl_prior_pull_elo": [round(p / max(unpulled, 1), 1) for p in pull],
        "leagues_without_prior": unpulled,
        "seconds": round(time.monotonic() - started, 1),
    }


def each_size(sizes: str, measure: Callable[[int], dict[str, Any]], json_path: str | None) -> None:
    """``measure`` each table size of ``sizes`` ("3,4,6"): a JSON line per size as it ends, all of them in
    ``json_path`` at the end (the benchmarks' common loop)."""
    results = []
    for k in (int(s) for s in sizes.split(",")):
        result = measure(k)
        results.append(result)
        print(json.dumps(result), flush=True)
    if json_path:
        with open(json_path, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="2,3,4,5,6")
    parser.add_argument("--intervals", type=int, default=4000)
    parser.add_argument("--bots", type=int, default=5)
    parser.add_argument("--deals", type=int, default=10)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--spread", type=float, default=400.0)
    parser.add_argument("--truth", choices=("pl", "scores", "shared", "thurstone"), default="pl")
    parser.add_argument("--resample", choices=("deal", "block"), default="block")
    parser.add_argument("--luck-share", type=float, default=0.64)
    parser.add_argument("--truth-deals", type=int, default=3000)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    each_size(args.sizes, lambda k: measure(k, args), args.json)


if __name__ == "__main__":
    main()
