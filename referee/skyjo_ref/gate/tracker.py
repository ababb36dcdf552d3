"""The gate's state: blocks counted in deal order, the LLR after each, the verdict at the first crossing.

Games finish in any order (several at once, or read back from a store after an
interruption); the tracker counts a deal only when it and every deal before
it are complete, and evaluates the test after each one. So the verdict
depends on the deals alone, never on timing: a resumed gate reaches the
verdict of an uninterrupted one. Once a bound is crossed (or the cap reached)
nothing more is counted; games still in flight are stored but not counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from skyjo_ref.gate.luck import record_luck
from skyjo_ref.gate.spec import GateSpec
from skyjo_ref.stats import sprt
from skyjo_ref.tournament.store import StoredGame

#: Luck features per block (candidate's and baseline's draw luck, their reveal luck).
FEATURES: Final = 4
#: Blocks counted before the luck coefficients are fitted (before that the adjustment is off).
LUCK_WARMUP: Final = 16
#: Drawn cards above this cost no more than it: a bad draw is discarded (docs/gate.md).
DRAW_CLIP: Final = 4
#: The normal approximation's variance is shrunk toward this prior (pair scores 0..1: half the blocks
#: split, the rest won or lost; Skyjo's measured 0.10-0.13) with the weight of this many blocks. Without
#: it a test of a few blocks can see no variance at all (three blocks of 1) and stop on nothing.
PRIOR_VARIANCE: Final = 0.125
PRIOR_BLOCKS: Final = 16


def _draw_value(card: int) -> float:
    return float(min(card, DRAW_CLIP))


@dataclass(slots=True)
class LuckFit:
    """Running sums for the least-squares fit of block score (0..1) on its luck features."""

    n: int = 0
    sx: float = 0.0
    sxx: float = 0.0
    sf: list[float] = field(default_factory=lambda: [0.0] * FEATURES)
    sff: list[list[float]] = field(default_factory=lambda: [[0.0] * FEATURES for _ in range(FEATURES)])
    sfx: list[float] = field(default_factory=lambda: [0.0] * FEATURES)

    def add(self, x: float, f: Sequence[float]) -> None:
        self.n += 1
        self.sx += x
        self.sxx += x * x
        for i in range(FEATURES):
            self.sf[i] += f[i]
            self.sfx[i] += f[i] * x
            for j in range(FEATURES):
                self.sff[i][j] += f[i] * f[j]

    def adjusted(self) -> tuple[float, float]:
        """Mean and variance of ``x - c . (f - E f)``, with ``c`` the least-squares coefficients.

        The features have mean zero whatever the bots do (:mod:`.luck`), so the
        adjusted mean is ``mean(x) - c . mean(f)``; its variance is the residual
        variance (divided by ``n - features - 1``).
        """
        n = self.n
        mean_x = self.sx / n
        var_x = max(self.sxx / n - mean_x * mean_x, 0.0) * n / max(n - 1, 1)
        if n < LUCK_WARMUP:
            return mean_x, var_x
        mean_f = [s / n for s in self.sf]
        cov_ff = [[self.sff[i][j] / n - mean_f[i] * mean_f[j] for j in range(FEATURES)] for i in range(FEATURES)]
        cov_fx = [self.sfx[i] / n - mean_f[i] * mean_x for i in range(FEATURES)]
        try:
            c = _solve(cov_ff, cov_fx)
        except ArithmeticError:
            return mean_x, var_x
        explained = sum(ci * v for ci, v in zip(c, cov_fx))
        residual = max(var_x * (n - 1) / n - explained, 0.0) * n / (n - FEATURES - 1)
        return mean_x - sum(ci * m for ci, m in zip(c, mean_f)), residual

    def llr(self, s0: float, s1: float) -> float:
        """The luck-adjusted LLR (normal approximation) of mean pair score s1 against s0."""
        mean, var = self.adjusted()
        shrunk = (self.n * var + PRIOR_BLOCKS * PRIOR_VARIANCE) / (self.n + PRIOR_BLOCKS)
        return sprt.normal_llr(self.n, mean, shrunk, s0, s1)


@dataclass(slots=True)
class Moments:
    """Running mean and variance of K-player block scores."""

    n: int = 0
    total: float = 0.0
    squares: float = 0.0

    def add(self, x: float) -> None:
        self.n += 1
        self.total += x
        self.squares += x * x

    def moments(self) -> tuple[float, float]:
        if self.n == 0:
            return 0.5, 0.0
        mean = self.total / self.n
        return mean, max(self.squares / self.n - mean * mean, 0.0) * self.n / max(self.n - 1, 1)


def game_score(ranks: Sequence[int], mine: int) -> float:
    """The candidate's score in one game: the share of the other seats it finished ahead of (a tie half).

    At two players a win, a draw or a loss (1, 0.5, 0); at K players its
    expectation is the chance to finish ahead of one baseline copy, which is
    what "Elo at K players" measures (docs/gate.md).
    """
    others = [r for i, r in enumerate(ranks) if i != mine]
    points = sum(1.0 if ranks[mine] < r else 0.5 if ranks[mine] == r else 0.0 for r in others)
    return points / len(others)


def head_to_head(ranks: Sequence[int], mine: int, theirs: int) -> float:
    """The candidate's result against one other seat (the baseline, at a table with a field): 1 ahead, 0.5 tied,
    0 behind. Its expectation is the chance to finish ahead of the baseline at that table (docs/gate.md)."""
    return 1.0 if ranks[mine] < ranks[theirs] else 0.5 if ranks[mine] == ranks[theirs] else 0.0


def prior_variance(games: int) -> float:
    """The prior of a block's variance: a game's result (0..1) at most 0.25, a block the mean of ``games``
    results taken as independent: ``PRIOR_VARIANCE x 2 / games`` (``0.25 / games``)."""
    return PRIOR_VARIANCE * 2.0 / games


def shrunk_llr(n: int, mean: float, var: float, s0: float, s1: float, games: int, floor: bool = False) -> float:
    """The normal-approximation LLR with the block variance shrunk toward a prior (see :data:`PRIOR_VARIANCE`).

    A block averages ``games`` games (K with copies, K(K-1) with a field): its prior variance is
    :func:`prior_variance` of them. With ``floor`` (a field gate) the variance is never taken below that
    prior: the block's games count as no better than independent ones. Plugged in as measured, the
    variance's own noise made simulated field gates at elo0 accept 6.05% of the time (2,000 gates, alpha 5%;
    5.3% of the first 1,000 with this floor), docs/gate.md.
    """
    prior = prior_variance(games)
    shrunk = (n * var + PRIOR_BLOCKS * prior) / (n + PRIOR_BLOCKS)
    if floor:
        shrunk = max(shrunk, prior)
    return sprt.normal_llr(n, mean, shrunk, s0, s1)


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    m = [[*row, rhs] for row, rhs in zip(a, b)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) < 1e-12:
            raise ArithmeticError("singular luck features")
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col:
                factor = m[r][col] / m[col][col]
                m[r] = [x - factor * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] for i in range(n)]


@dataclass(slots=True)
class _Game:
    score: float  # the candidate's: 1 a win, 0.5 a shared win, 0 a loss
    luck: tuple[float, ...]  # FEATURES values, or () without the adjustment


class GateTracker:
    """Counts blocks in deal order and runs the sequential test over them."""

    def __init__(self, spec: GateSpec) -> None:
        self.spec = spec
        self.hypotheses = spec.hypotheses
        self.candidate, self.baseline = spec.names
        self.pending: dict[int, dict[int, _Game]] = {}
        self.order = spec.deals()
        self.position = 0  # index in ``order`` of the next deal to count
        self.counts = [0] * 5
        self.history: list[float] = []
        self.overshoot = sprt.Overshoot()
        self.moments = LuckFit()
        self.plain = Moments()  # K-player block scores
        self.decision = sprt.Decision(0.0, *self.hypotheses.bounds, "running")
        s0, s1 = (sprt.score_of(e) for e in (self.hypotheses.elo0, self.hypotheses.elo1))
        self.scores = (s0, s1)
        self.seatings = spec.seatings

    # --------------------------------------------------------------------- input

    @property
    def next_deal(self) -> int:
        """The deal counted next (past the last deal once every deal is counted)."""
        return self.order[self.position] if self.position < len(self.order) else self.spec.max_blocks

    @property
    def blocks(self) -> int:
        return len(self.history)

    @property
    def games(self) -> int:
        return self.spec.block_games * self.blocks

    @property
    def done(self) -> bool:
        """A verdict, or the cap: nothing more will be counted."""
        return self.decision.verdict != "running" or self.position >= len(self.order)

    @property
    def verdict(self) -> sprt.Verdict:
        if self.decision.verdict == "running" and self.position >= len(self.order):
            return "inconclusive"
        return self.decision.verdict

    def add(self, game: StoredGame, record: Mapping[str, Any] | None) -> bool:
        """Take one finished game; True when it completed blocks that were counted."""
        k = self.spec.players
        if game.id.table != self.spec.table or game.id.rotation not in self.seatings:
            return False
        deal = game.id.deal
        shard = self.spec.shard
        if deal < self.next_deal or self.done or (shard is not None and deal % shard.count != shard.index - 1):
            return False
        seats = [s.bot for s in game.seats]
        mine = seats.index(self.candidate)
        ranks = [s.rank for s in game.seats]
        other = 1 - mine  # (two players; the luck features are measured there only)
        score = head_to_head(ranks, mine, seats.index(self.baseline)) if self.spec.field else game_score(ranks, mine)
        luck: tuple[float, ...] = ()
        if self.spec.luck:
            if record is None:
                raise ValueError(f"game {game.id.key}: the luck adjustment needs its record")
            measured = record_luck(record, _draw_value)
            luck = (measured.draw[mine], measured.draw[other], measured.reveal[mine], measured.reveal[other])
        self.pending.setdefault(deal, {})[game.id.rotation] = _Game(score, luck)
        counted = False
        while not self.done and len(self.pending.get(self.next_deal, {})) == len(self.seatings):
            block = self.pending.pop(self.next_deal)
            if k == 2:
                self._count(block[0], block[1])
            else:
                self._count_table([block[r].score for r in self.seatings])
            self.position += 1
            counted = True
        return counted

    def _count_table(self, scores: Sequence[float]) -> None:
        """A K-player block: its score is the candidate's mean game score, in [0, 1] (with a field, its mean
        result against the baseline); normal-approximation LLR."""
        block = sum(scores) / len(scores)
        self.plain.add(block)
        self.counts[min(4, round(block * 4))] += 1  # a histogram of block scores (quarters), for display
        mean, var = self.plain.moments()
        value = shrunk_llr(self.plain.n, mean, var, *self.scores, len(scores), floor=bool(self.spec.field))
        self._decide(value)

    def _decide(self, value: float) -> None:
        h = self.hypotheses
        self.history.append(value)
        self.overshoot.add(value)
        if self.spec.shard is None:
            self.decision = sprt.decide_at(value, self.overshoot, h)
        else:  # a shard stops at 1/N of a bound: LLRs of independent blocks add up (docs/gate.md, "Shards")
            lower, upper = (bound / self.spec.shard.count for bound in h.bounds)
            verdict: sprt.Verdict = "rejected" if value < lower else "accepted" if value > upper else "running"
            self.decision = sprt.Decision(value, lower, upper, verdict)

    def _count(self, first: _Game, second: _Game) -> None:
        block = first.score + second.score
        self.counts[round(block * 2)] += 1
        h = self.hypotheses
        if self.spec.luck:
            self.moments.add(block / 2, [a + b for a, b in zip(first.luck, second.luck)])
            value = self.moments.llr(*self.scores)
        else:
            value = sprt.llr(self.counts, h.elo0, h.elo1, h.model)
        self._decide(value)

    # -------------------------------------------------------------------- output

    def estimate(self) -> sprt.Estimate:
        if self.spec.players > 2:
            return sprt.estimate_from_moments(self.plain.n, *self.plain.moments())
        if self.spec.luck and self.moments.n:
            mean, var = self.moments.adjusted()
            return sprt.estimate_from_moments(self.moments.n, mean, var)
        return sprt.estimate(self.counts)

    def info(self) -> dict[str, Any]:
        """The gate's state as the store keeps it (``info.gate``; the HTML report reads these keys)."""
        h = self.hypotheses
        est = self.estimate()
        lower, upper = h.bounds
        return {
            "candidate": self.candidate,
            "baseline": self.baseline,
            "elo0": h.elo0,
            "elo1": h.elo1,
            "alpha": h.alpha,
            "beta": h.beta,
            "elo_model": h.model,
            "luck_adjusted": self.spec.luck,
            "bounds": [lower, upper],
            "stop_bounds": [self.decision.lower, self.decision.upper],
            "llr": self.decision.llr,
            "players": self.spec.players,
            "field": list(self.spec.field_names) if self.spec.field else None,
            "seating": self.spec.seating,
            "block_games": self.spec.block_games,
            "pentanomial": list(self.counts) if self.spec.players == 2 else None,
            "block_scores": None if self.spec.players == 2 else list(self.counts),
            "games": self.games,
            "elo": est.elo,
            "elo_ci": [est.elo_low, est.elo_high],
            "nelo": est.nelo,
            "nelo_ci": [est.nelo - est.nelo_half, est.nelo + est.nelo_half],
            "los": est.los,
            "score": est.score,
            "verdict": self.verdict,
            "max_games": self.spec.max_games,
            "seed": self.spec.seed,
            "shard": None if self.spec.shard is None else self.spec.shard.label,
            "history": [[self.spec.block_games * (k + 1), value] for k, value in enumerate(self.history)],
        }
