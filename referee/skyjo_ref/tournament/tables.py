"""The tables of a tournament: Elo with intervals, per-bot statistics, head-to-head.

Computed only from stored games (never from a run's memory), in game-key
order, so the same store always gives the same tables: a resumed run and an
uninterrupted one print identical numbers.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from skyjo_ref.execution.types import GameId
from skyjo_ref.stats import bradley_terry, plackett_luce
from skyjo_ref.stats.bootstrap import MIN_UNITS
from skyjo_ref.stats.clustered import ClusteredMean, clustered_mean
from skyjo_ref.stats.newton import NotConverged
from skyjo_ref.tournament.store import StoredGame

JSON_FORMAT: Final = "skyjo-tournament-tables/1"
#: The rating models (docs/tournaments.md, "Elo": why Plackett-Luce is the default).
RATING_MODELS: Final = ("plackett-luce", "bradley-terry")
DEFAULT_MODEL: Final = "plackett-luce"
DEFAULT_INTERVAL: Final = "normal"
#: How a store played before the model could be chosen was rated (its ``rating`` info has no ``model``).
STORED_MODEL: Final = "bradley-terry"
STORED_INTERVAL: Final = "percentile"
#: How the tables name each rating model.
MODEL_NAMES: Final = {"plackett-luce": "Plackett-Luce", "bradley-terry": "Bradley-Terry"}
#: Virtual games per pair of bots, split as a draw, that keep every fit finite.
PRIOR: Final = 1.0
#: What the interval bootstrap resamples (docs/tournaments.md, "Intervals"): ``deal`` (every table's games of
#: one deal together: without a seed secret every table plays the same deck for a deal, so their seat luck is
#: shared) or ``block`` (a table's games of one deal: independent only when each table's deal is its own).
RESAMPLE_UNITS: Final = ("deal", "block")


def cluster(game: GameId, resample: str) -> Hashable:
    """The independent unit ``game`` belongs to for the bootstrap: its deal, or its duplicate block."""
    return game.deal if resample == "deal" else game.block


@dataclass(frozen=True, slots=True)
class RatingConfig:
    """How Elo is fitted, anchored and how its intervals are drawn: one set for every table of a store."""

    anchor: str | None = None  # a bot's name, or None for the pool mean
    elo: float = 1500.0  # the anchor bot's Elo, or the pool mean
    bootstrap: int = 400  # resamples for the 95% intervals (0: no intervals)
    interval_seed: int | str = 0
    model: str = DEFAULT_MODEL  # one of RATING_MODELS: how table orders become Elo
    interval: str = DEFAULT_INTERVAL  # one of stats.bootstrap.INTERVAL_METHODS
    resample: str = "deal"  # one of RESAMPLE_UNITS: the independent unit the bootstrap draws

    @classmethod
    def stored(cls, saved: Mapping[str, Any] | None, bootstrap: int | None = None) -> RatingConfig:
        """The settings a store's ``rating`` info holds (what ``ratings`` and ``report`` use).

        A key the store lacks takes the value it had when that store was played:
        a store from before the model could be chosen (or a gate's) is rated
        pairwise with percentile intervals. ``bootstrap`` overrides the store's.
        """
        saved = saved or {}
        return cls(
            anchor=saved.get("anchor"),
            elo=float(saved.get("elo", 1500.0)),
            bootstrap=bootstrap if bootstrap is not None else int(saved.get("bootstrap", 400)),
            interval_seed=saved.get("interval_seed", 0),
            model=saved.get("model", STORED_MODEL),
            interval=saved.get("interval", STORED_INTERVAL),
            resample=saved.get("resample", "deal"),
        )

    def to_info(self) -> dict[str, Any]:
        """What a store keeps of these settings (its ``rating`` info; :meth:`stored` reads it back)."""
        return dataclasses.asdict(self)


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
    wins: float = 0.0  # a win shared by w players counts 1/w
    total_sum: int = 0

    @property
    def win_rate(self) -> float | None:
        return self.wins / self.games if self.games else None

    @property
    def avg_total(self) -> float | None:
        return self.total_sum / self.games if self.games else None

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
    resample: str = "deal"  # the unit the intervals resample (RESAMPLE_UNITS)
    units: int = 0  # how many of them the games make
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
                "resample": self.resample if self.bootstrap else None,
                "resample_units": self.units if self.bootstrap else None,
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


def finite(value: float | None) -> float | None:
    """``value``, or None when it is not a finite number.

    A bot that played one duplicate block has no spread to resample: its
    bootstrap interval comes out infinite (or NaN), which JSON cannot carry
    and no reader can use. It is no interval, written null, shown as a dash.
    """
    return value if value is not None and math.isfinite(value) else None


def json_safe(data: Any) -> Any:
    """``data`` with every non-finite float (NaN, an infinity) replaced by None, at any depth.

    JSON has no NaN or Infinity (``json`` would write them as invalid tokens
    that browsers and ``jq`` reject); a number nobody could compute is null.
    """
    if isinstance(data, float):
        return finite(data)
    if isinstance(data, Mapping):
        return {key: json_safe(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [json_safe(value) for value in data]
    return data


def _round(value: float | None, digits: int = 2) -> float | None:
    value = finite(value)
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
    resample: str = "deal",
) -> Tables:
    """The tables over ``games``; ``bots`` adds rows for bots without games yet (e.g. at the start)."""
    rows, h2h = _tally(games, bots)
    notes: list[str] = []
    played = sorted(name for name, row in rows.items() if row.games)
    used_anchor = _anchor_in_play(anchor, played, notes)
    units = _rate_rows(
        games, rows, played, used_anchor, anchor_elo, bootstrap, interval_seed, model, interval, resample, notes
    )
    sizes = sorted({len(g.seats) for g in games})
    by_size: dict[int, list[SizeRow]] = {}
    if len(sizes) > 1:
        for k in sizes:
            subset = [g for g in games if len(g.seats) == k]
            by_size[k] = _size_rows(
                subset, used_anchor, anchor_elo, bootstrap, interval_seed, model, interval, resample
            )
    ordered = sorted(rows.values(), key=lambda r: (r.elo is None, -(r.elo or 0.0), r.name))
    return Tables(
        rows=ordered,
        head_to_head=h2h,
        games=len(games),
        blocks=len({g.id.block for g in games}),
        resample=resample,
        units=units,
        anchor=used_anchor,
        anchor_elo=anchor_elo,
        bootstrap=bootstrap,
        interval_seed=interval_seed,
        notes=notes,
        model=model,
        interval=interval,
        by_size=by_size,
        seat_effects=seat_effects(games),
        starter_effects=starter_effects(games, resample),
    )


def _tally(
    games: Sequence[StoredGame], bots: Iterable[str]
) -> tuple[dict[str, BotRow], dict[str, dict[str, HeadToHead]]]:
    """Every bot's counts (games, wins, scores, strikes, pairwise points) and the head-to-head cells."""
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
    return rows, h2h


def _anchor_in_play(anchor: str | None, played: Sequence[str], notes: list[str]) -> str | None:
    """The bot Elo is anchored at (None: the pool mean), given who ``played``; why it moved goes to ``notes``."""
    used_anchor = anchor
    copies = sorted(name for name in played if anchor is not None and name.startswith(f"{anchor}."))
    if anchor is not None and anchor not in played and f"{anchor}.1" in copies:
        # a K-player gate's store: the baseline sat as copies name.1, name.2, ... (gate/spec.py seat_names)
        notes.append(
            f"{', '.join(copies)} are copies of one bot, {anchor}, rated apart: each copy sits in a fixed place "
            f"after the candidate, so their Elo differ by where they sat, not by strength; anchored at {copies[0]}"
        )
        anchor = used_anchor = copies[0]
    if anchor is not None and anchor not in played:
        notes.append(f"anchor {anchor!r} has no games yet: Elo is anchored at the pool mean instead")
        used_anchor = None
    return used_anchor


def _rate_rows(
    games: Sequence[StoredGame],
    rows: Mapping[str, BotRow],
    played: Sequence[str],
    used_anchor: str | None,
    anchor_elo: float,
    bootstrap: int,
    interval_seed: int | str,
    model: str,
    interval: str,
    resample: str,
    notes: list[str],
) -> int:
    """Fill the rows' Elo and intervals (what could not be rated goes to ``notes``); the resampled units' count."""
    orders = [(cluster(g.id, resample), [(s.bot, s.rank) for s in g.seats]) for g in games]
    if model == "bradley-terry":
        pairs = bradley_terry.pair_data(orders, played)
        units = len(pairs.blocks)
    else:
        tables = plackett_luce.order_data(orders, played)
        units = len(tables.blocks)
    if len(played) >= 2:
        try:
            if model == "bradley-terry":
                ratings = bradley_terry.rate(
                    pairs, used_anchor, anchor_elo, samples=bootstrap, seed=interval_seed, prior=PRIOR, method=interval
                )
            else:
                ratings = plackett_luce.rate(
                    tables, used_anchor, anchor_elo, samples=bootstrap, seed=interval_seed, prior=PRIOR, method=interval
                )
        except NotConverged as exc:  # never a guess shown as a rating: no Elo, and why (the games are all kept)
            notes.append(f"{exc}: no Elo is shown; the games and their results are kept")
            ratings = []
        for rating in ratings:
            row = rows[rating.name]
            row.elo, row.elo_low, row.elo_high = rating.elo, finite(rating.low), finite(rating.high)
        few = [r.name for r in rows.values() if r.games and r.elo_low is None and r.name != used_anchor]
        if bootstrap > 0 and few:
            notes.append(
                f"too few games for an interval: {', '.join(sorted(few))} (an interval needs the bot in at least "
                f"{MIN_UNITS} independent {resample}s{' of the table' if resample == 'block' else ''} whose results "
                "differ; shown as -)"
            )
    elif len(played) == 1:
        rows[played[0]].elo = anchor_elo
    return units


def rated(games: Sequence[StoredGame], bots: Iterable[str], rating: RatingConfig) -> Tables:
    """:func:`compute` with every rating setting taken from ``rating`` (a config's, or a store's)."""
    return compute(
        games,
        bots=bots,
        anchor=rating.anchor,
        anchor_elo=rating.elo,
        bootstrap=rating.bootstrap,
        interval_seed=rating.interval_seed,
        model=rating.model,
        interval=rating.interval,
        resample=rating.resample,
    )


Order = tuple[Hashable, Sequence[tuple[str, int]]]


class RunningFit:
    """Point Elo (no intervals) of games added a few at a time, fitted exactly as :func:`compute` fits them.

    The same model and prior, only the bots with games fitted, anchored as the
    tables are (the pool mean while the anchor has no games): after the last
    games, :meth:`elo` is the tables' Elo. Each :meth:`add` sums only the new
    games' statistics (indexed by ``names``, every bot that may appear), and a
    fit starts from the previous one when the same bots are fitted.
    """

    def __init__(self, names: Sequence[str], model: str = DEFAULT_MODEL) -> None:
        if model not in RATING_MODELS:
            raise ValueError(f"unknown rating model {model!r}: expected one of {', '.join(RATING_MODELS)}")
        self.names = tuple(names)
        self.model = model
        n = len(self.names)
        self._at = {name: i for i, name in enumerate(self.names)}
        self._wins = [[0.0] * n for _ in range(n)]  # Bradley-Terry's sufficient statistics
        self._counts = [[0.0] * n for _ in range(n)]
        self._chosen = [0.0] * n  # Plackett-Luce's
        self._stages: dict[int, float] = {}
        self._seen: set[str] = set()
        self._last: tuple[tuple[str, ...], list[float]] | None = None

    def add(self, orders: Sequence[Order]) -> None:
        """Add games ``(block, [(bot, rank), ...])``."""
        self._seen.update(bot for _, seats in orders for bot, _ in seats)
        if self.model == "bradley-terry":
            wins, counts = bradley_terry.pair_data(orders, self.names).totals()
            for mine, more in ((self._wins, wins), (self._counts, counts)):
                for row, extra in zip(mine, more):
                    for j, value in enumerate(extra):
                        row[j] += value
        else:
            chosen, stages = plackett_luce.order_data(orders, self.names).totals()
            for i, value in enumerate(chosen):
                self._chosen[i] += value
            for mask, count in stages.items():
                self._stages[mask] = self._stages.get(mask, 0.0) + count

    def elo(self, anchor: str | None, anchor_elo: float) -> dict[str, float]:
        """Every bot with games so far: its Elo (``anchor`` at ``anchor_elo``, or the pool mean without it)."""
        played = tuple(sorted(self._seen))
        if len(played) < 2:
            return {name: anchor_elo for name in played}
        rows = [self._at[name] for name in played]
        start = self._last[1] if self._last is not None and self._last[0] == played else None
        if self.model == "bradley-terry":
            beta = bradley_terry.fit(
                [[self._wins[i][j] for j in rows] for i in rows],
                [[self._counts[i][j] for j in rows] for i in rows],
                prior=PRIOR,
                start=start,
            )
        else:
            bit = {row: 1 << k for k, row in enumerate(rows)}  # a stage's bots, renumbered among the played
            stages: dict[int, float] = {}
            for mask, count in self._stages.items():
                local = sum(b for row, b in bit.items() if mask >> row & 1)
                stages[local] = stages.get(local, 0.0) + count
            beta = plackett_luce.fit([self._chosen[i] for i in rows], stages, prior=PRIOR, start=start)
        self._last = (played, beta)
        use = anchor if anchor in self._seen else None
        return dict(zip(played, bradley_terry.anchor_ratings(beta, played, use, anchor_elo)))


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


def starter_effects(games: Sequence[StoredGame], resample: str = "deal") -> dict[int, StarterEffect]:
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
        unit = cluster(game.id, resample)
        points.setdefault(k, {}).setdefault(unit, []).append(
            scores[starter] - (sum(scores) - scores[starter]) / (k - 1)
        )
        ranks = [seat.rank for seat in game.seats]
        shares.setdefault(k, {}).setdefault(unit, []).append(_share_beaten(ranks, starter))
    effects: dict[int, StarterEffect] = {}
    for k, by_block in points.items():
        mean, share = clustered_mean(list(by_block.values())), clustered_mean(list(shares[k].values()))
        if mean is not None and share is not None:
            effects[k] = StarterEffect(mean, share)
    return effects


def _size_rows(
    games: Sequence[StoredGame],
    anchor: str | None,
    anchor_elo: float,
    bootstrap: int,
    interval_seed: int | str,
    model: str,
    interval: str,
    resample: str,
) -> list[SizeRow]:
    """Elo from one table size's games alone (anchored as the whole table, or at the pool mean without it)."""
    counts: dict[str, int] = {}
    wins: dict[str, float] = {}
    totals: dict[str, int] = {}
    orders = []
    for game in games:
        winners = sum(1 for s in game.seats if s.rank == 1)
        for seat in game.seats:
            counts[seat.bot] = counts.get(seat.bot, 0) + 1
            wins[seat.bot] = wins.get(seat.bot, 0.0) + (1.0 / winners if seat.rank == 1 else 0.0)
            totals[seat.bot] = totals.get(seat.bot, 0) + seat.total
        orders.append((cluster(game.id, resample), [(s.bot, s.rank) for s in game.seats]))
    names = sorted(counts)
    if len(names) < 2:
        return [SizeRow(name, anchor_elo, None, None, counts[name], wins[name], totals[name]) for name in names]
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
    rows = [
        SizeRow(r.name, r.elo, finite(r.low), finite(r.high), counts[r.name], wins[r.name], totals[r.name])
        for r in ratings
    ]
    return sorted(rows, key=lambda r: (-(r.elo or 0.0), r.name))
