"""The tables of a tournament: Elo with intervals, per-bot statistics, head-to-head.

Computed only from stored games (never from a run's memory), in game-key
order, so the same store always gives the same tables: a resumed run and an
uninterrupted one print identical numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from skyjo_ref.stats import bradley_terry, plackett_luce
from skyjo_ref.stats.clustered import ClusteredMean, clustered_mean
from skyjo_ref.tournament.store import StoredGame

JSON_FORMAT: Final = "skyjo-tournament-tables/1"
#: How the tables name each rating model.
MODEL_NAMES: Final = {"plackett-luce": "Plackett-Luce", "bradley-terry": "Bradley-Terry"}


@dataclass(slots=True)
class BotRow:
    """One bot's line in the table."""

    name: str
    elo: float | None = None  # None until the bot has a game
    elo_low: float | None = None
    elo_high: float | None = None
    games: int = 0
    wins: float = 0.0  # a win shared by w players counts 1/w
    total_sum: int = 0
    rounds: int = 0
    round_sum: int = 0
    strikes: int = 0
    forfeits: int = 0
    pair_score: float = 0.0  # pairwise points (win 1, draw 0.5)
    pair_games: int = 0
    version: str | None = None  # the bot's current version, in a store that knows versions

    @property
    def win_rate(self) -> float | None:
        return self.wins / self.games if self.games else None

    @property
    def avg_total(self) -> float | None:
        return self.total_sum / self.games if self.games else None

    @property
    def avg_round(self) -> float | None:
        return self.round_sum / self.rounds if self.rounds else None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "elo": _round(self.elo),
            "elo_low": _round(self.elo_low),
            "elo_high": _round(self.elo_high),
            "games": self.games,
            "wins": round(self.wins, 6),
            "win_rate": _round(self.win_rate, 6),
            "avg_total": _round(self.avg_total, 4),
            "avg_round_score": _round(self.avg_round, 4),
            "rounds": self.rounds,
            "strikes": self.strikes,
            "forfeits": self.forfeits,
            "pair_score": round(self.pair_score, 6),
            "pair_games": self.pair_games,
            **({"version": self.version} if self.version is not None else {}),
        }


@dataclass(slots=True)
class HeadToHead:
    """How ``bot`` fared against ``opponent`` in the games where both sat (pairwise, by rank)."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def score(self) -> float | None:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else None

    def to_json(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score": _round(self.score, 6),
        }


@dataclass(frozen=True, slots=True)
class SizeRow:
    """One bot's Elo from the games of one table size only (a league of mixed sizes)."""

    name: str
    elo: float | None
    elo_low: float | None
    elo_high: float | None
    games: int

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "elo": _round(self.elo),
            "elo_low": _round(self.elo_low),
            "elo_high": _round(self.elo_high),
            "games": self.games,
        }


@dataclass(frozen=True, slots=True)
class StarterEffect:
    """How the player who started round 1 fared, at one table size, over every bot that started it.

    The starter is whoever revealed the highest two cards (a tie to the lower
    seat), so this is what starting round 1 *with those cards* came to, not the
    worth of the first turn alone. It follows from the cards, not from the
    order around the table (the seat effects) nor from how strong the bot is.
    Later rounds are started by the previous round's finisher or winner
    (``next_round_starter``), more often the stronger bot: not compared.
    ``points``: the starter's round-1 score minus the mean of the other seats'
    (finisher penalty included; below 0 it did better);
    ``share``: the share of the other seats it finished the game ahead of (0.5
    = level). 95% intervals over duplicate blocks (:mod:`skyjo_ref.stats.clustered`).
    """

    points: ClusteredMean
    share: ClusteredMean

    def to_json(self) -> dict[str, Any]:
        return {
            "games": self.points.count,
            "points": round(self.points.mean, 4),
            "points_low": _round(self.points.low, 4),
            "points_high": _round(self.points.high, 4),
            "share": round(self.share.mean, 6),
            "share_low": _round(self.share.low, 6),
            "share_high": _round(self.share.high, 6),
        }


@dataclass(slots=True)
class Tables:
    """Everything the end of a tournament prints (and ``--json`` writes)."""

    rows: list[BotRow]  # best Elo first
    head_to_head: dict[str, dict[str, HeadToHead]]
    games: int
    blocks: int
    anchor: str | None
    anchor_elo: float
    bootstrap: int
    interval_seed: int | str
    notes: list[str] = field(default_factory=list)
    model: str = "plackett-luce"
    interval: str = "normal"
    #: Per table size (players -> rows, best first), when the games have more than one size.
    by_size: dict[int, list[SizeRow]] = field(default_factory=dict)
    #: Per table size, per seat: (games, mean share of the other seats beaten; 0.5 = no seat effect).
    seat_effects: dict[int, list[tuple[int, float]]] = field(default_factory=dict)
    #: Per table size, what starting a round is worth (from the records' round starters).
    starter_effects: dict[int, StarterEffect] = field(default_factory=dict)
    versions: list[dict[str, Any]] = field(default_factory=list)  # every bot version's rating (versions.py)

    def to_json(self) -> dict[str, Any]:
        names = [r.name for r in self.rows]
        return {
            "format": JSON_FORMAT,
            "games": self.games,
            "duplicate_blocks": self.blocks,
            "rating": {
                "model": self.model,
                "scale": "elo",
                "anchor": self.anchor,
                "anchor_elo": self.anchor_elo,
                "pool_mean": self.anchor is None,
                "interval": 0.95 if self.bootstrap else None,
                "interval_method": self.interval if self.bootstrap else None,
                "bootstrap_samples": self.bootstrap,
                "interval_seed": self.interval_seed,
                "prior_draws_per_pair": PRIOR,
            },
            "bots": [r.to_json() for r in self.rows],
            "head_to_head": {
                a: {b: self.head_to_head.get(a, {}).get(b, HeadToHead()).to_json() for b in names if b != a}
                for a in names
            },
            "by_size": {str(k): [row.to_json() for row in rows] for k, rows in sorted(self.by_size.items())},
            "seat_effects": {
                str(k): [{"seat": s, "games": n, "score": round(score, 6)} for s, (n, score) in enumerate(seats)]
                for k, seats in sorted(self.seat_effects.items())
            },
            "starter_effects": {str(k): effect.to_json() for k, effect in sorted(self.starter_effects.items())},
            "notes": list(self.notes),
            **({"versions": list(self.versions)} if self.versions else {}),
        }


PRIOR: Final = 1.0


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def compute(
    games: Sequence[StoredGame],
    bots: Iterable[str] = (),
    anchor: str | None = None,
    anchor_elo: float = 1500.0,
    bootstrap: int = 0,
    interval_seed: int | str = 0,
    model: str = "plackett-luce",
    interval: str = "normal",
) -> Tables:
    """The tables over ``games``; ``bots`` adds rows for bots without games yet (e.g. at the start)."""
    rows: dict[str, BotRow] = {}
    for name in bots:
        rows.setdefault(name, BotRow(name))
    h2h: dict[str, dict[str, HeadToHead]] = {}
    for game in games:
        winners = sum(1 for s in game.seats if s.rank == 1)
        for seat in game.seats:
            row = rows.setdefault(seat.bot, BotRow(seat.bot))
            row.games += 1
            if seat.rank == 1:
                row.wins += 1.0 / winners
            row.total_sum += seat.total
            row.rounds += len(seat.round_scores)
            row.round_sum += sum(seat.round_scores)
            row.strikes += seat.strikes
            row.forfeits += int(seat.forfeit)
        for a in game.seats:
            for b in game.seats:
                if a is b:
                    continue
                cell = h2h.setdefault(a.bot, {}).setdefault(b.bot, HeadToHead())
                cell.games += 1
                if a.rank < b.rank:
                    cell.wins += 1
                elif a.rank == b.rank:
                    cell.draws += 1
                else:
                    cell.losses += 1
    for name, row in rows.items():
        for cell in h2h.get(name, {}).values():
            row.pair_games += cell.games
            row.pair_score += cell.wins + 0.5 * cell.draws

    notes: list[str] = []
    played = sorted(name for name, row in rows.items() if row.games)
    used_anchor = anchor
    if anchor is not None and anchor not in played:
        notes.append(f"anchor {anchor!r} has no games yet: Elo is anchored at the pool mean instead")
        used_anchor = None
    orders = [(g.id.block, [(s.bot, s.rank) for s in g.seats]) for g in games]
    if model == "bradley-terry":
        pairs = bradley_terry.pair_data(orders, played)
        blocks = len(pairs.blocks)
    else:
        tables = plackett_luce.order_data(orders, played)
        blocks = len(tables.blocks)
    if len(played) >= 2:
        if model == "bradley-terry":
            ratings = bradley_terry.rate(
                pairs, used_anchor, anchor_elo, samples=bootstrap, seed=interval_seed, prior=PRIOR, method=interval
            )
        else:
            ratings = plackett_luce.rate(
                tables, used_anchor, anchor_elo, samples=bootstrap, seed=interval_seed, prior=PRIOR, method=interval
            )
        for rating in ratings:
            row = rows[rating.name]
            row.elo, row.elo_low, row.elo_high = rating.elo, rating.low, rating.high
    elif len(played) == 1:
        rows[played[0]].elo = anchor_elo
    sizes = sorted({len(g.seats) for g in games})
    by_size: dict[int, list[SizeRow]] = {}
    if len(sizes) > 1:
        for k in sizes:
            subset = [(block, seats) for (block, seats), g in zip(orders, games) if len(g.seats) == k]
            by_size[k] = _size_rows(subset, used_anchor, anchor_elo, bootstrap, interval_seed, model, interval)
    ordered = sorted(rows.values(), key=lambda r: (r.elo is None, -(r.elo or 0.0), r.name))
    return Tables(
        rows=ordered,
        head_to_head=h2h,
        games=len(games),
        blocks=blocks,
        anchor=used_anchor,
        anchor_elo=anchor_elo,
        bootstrap=bootstrap,
        interval_seed=interval_seed,
        notes=notes,
        model=model,
        interval=interval,
        by_size=by_size,
        seat_effects=seat_effects(games),
        starter_effects=starter_effects(games),
    )


def seat_effects(games: Sequence[StoredGame]) -> dict[int, list[tuple[int, float]]]:
    """Per table size and seat: games and the seat's mean share of the others beaten (a tie half).

    Seat 0 is the first seat of the order around the table, not the first to
    play (who starts a round follows from the revealed cards): this measures
    where a seat sits, over every bot that sat there.
    """
    sums: dict[int, list[list[float]]] = {}
    for game in games:
        k = len(game.seats)
        if k < 2:
            continue
        cells = sums.setdefault(k, [[0.0, 0.0] for _ in range(k)])
        ranks = [s.rank for s in game.seats]
        for seat in range(k):
            cells[seat][0] += 1
            cells[seat][1] += _share_beaten(ranks, seat)
    return {k: [(int(n), total / n if n else 0.5) for n, total in cells] for k, cells in sums.items()}


def _share_beaten(ranks: Sequence[int], seat: int) -> float:
    """The share of the other seats that ``seat`` finished ahead of (a tie half)."""
    mine = ranks[seat]
    beaten = sum(1.0 if mine < r else 0.5 if mine == r else 0.0 for r in ranks) - 0.5
    return beaten / (len(ranks) - 1)


def starter_effects(games: Sequence[StoredGame]) -> dict[int, StarterEffect]:
    """Per table size, what starting round 1 is worth (:class:`StarterEffect`).

    The starter is read from the record (:func:`skyjo_ref.records.round_starters`), not from the table
    order, so a seat effect is not a starter effect. Games without a known starter are left out.
    """
    points: dict[int, dict[Any, list[float]]] = {}
    shares: dict[int, dict[Any, list[float]]] = {}
    for game in games:
        k = len(game.seats)
        starter = game.starters[0] if game.starters else None
        if k < 2 or starter is None or not 0 <= starter < k or not game.seats[0].round_scores:
            continue
        scores = [seat.round_scores[0] for seat in game.seats]
        points.setdefault(k, {}).setdefault(game.id.block, []).append(
            scores[starter] - (sum(scores) - scores[starter]) / (k - 1)
        )
        ranks = [seat.rank for seat in game.seats]
        shares.setdefault(k, {}).setdefault(game.id.block, []).append(_share_beaten(ranks, starter))
    effects: dict[int, StarterEffect] = {}
    for k, by_block in points.items():
        mean, share = clustered_mean(list(by_block.values())), clustered_mean(list(shares[k].values()))
        if mean is not None and share is not None:
            effects[k] = StarterEffect(mean, share)
    return effects


def _size_rows(
    orders: Sequence[tuple[Any, list[tuple[str, int]]]],
    anchor: str | None,
    anchor_elo: float,
    bootstrap: int,
    interval_seed: int | str,
    model: str,
    interval: str,
) -> list[SizeRow]:
    """Elo from one table size's games alone (anchored as the whole table, or at the pool mean without it)."""
    counts: dict[str, int] = {}
    for _, seats in orders:
        for bot, _ in seats:
            counts[bot] = counts.get(bot, 0) + 1
    names = sorted(counts)
    if len(names) < 2:
        return [SizeRow(name, anchor_elo, None, None, counts[name]) for name in names]
    use = anchor if anchor in counts else None
    if model == "bradley-terry":
        pairs = bradley_terry.pair_data(orders, names)
        ratings = bradley_terry.rate(
            pairs, use, anchor_elo, samples=bootstrap, seed=interval_seed, prior=PRIOR, method=interval
        )
    else:
        tables = plackett_luce.order_data(orders, names)
        ratings = plackett_luce.rate(
            tables, use, anchor_elo, samples=bootstrap, seed=interval_seed, prior=PRIOR, method=interval
        )
    rows = [SizeRow(r.name, r.elo, r.low, r.high, counts[r.name]) for r in ratings]
    return sorted(rows, key=lambda r: (-(r.elo or 0.0), r.name))
