"""The gate's statistics: a generalized SPRT on pentanomial counts over duplicate deal blocks.

Pure functions over counts, no I/O (like fishtest's ``LLRcalc``; see docs/gate.md):

* a **block** is one deal played in both seatings (candidate in seat 0, then
  in seat 1); its score for the candidate is 0, 0.5, 1, 1.5 or 2 (a shared win
  counts half), so a run of blocks is five counts, the **pentanomial**
  ``[LL, LD, WL+DD, WD, WW]``;
* the **LLR** is the generalized log-likelihood ratio of fishtest's
  ``LLRcalc``: the observed distribution of block scores is fitted by maximum
  likelihood under each hypothesis (its expected score is ``s0``, resp.
  ``s1``: a secular equation solved by Newton's method), and
  ``LLR = N * sum_i p_i * ln(p1_i / p0_i)``. Hypotheses are Elo differences,
  logistic (``s = 1 / (1 + 10**(-elo/400))`` per game) or normalized
  (``nElo = (s - 0.5) / sigma_pg * 800 / ln 10``, fishtest's unit);
* the test stops when the LLR leaves ``(ln(beta/(1-alpha)), ln((1-beta)/alpha))``,
  those bounds tightened by fishtest's dynamic overshoot correction
  (Siegmund, *Sequential Analysis*, corollary 8.33), which this module
  computes from the LLR's history;
* Elo with its 95% interval and LOS from the mean and variance of the block
  scores (normal approximation, as fastchess prints them).

The luck-adjusted variant (``adjusted_llr``) works on continuous block scores
(``score - c * luck``, see :mod:`skyjo_ref.gate.luck`): its LLR is the
Brownian (normal) approximation fishtest uses for the LLR's drift.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

#: normalized Elo per unit of t-value (fishtest's ``nelo_divided_by_nt``).
NELO_PER_T: Final = 800.0 / math.log(10.0)
#: A count of zero is replaced by this much, so every outcome has some mass (fishtest's regularization).
EPSILON_COUNT: Final = 1e-3
#: The block scores (candidate's points in the two games of a deal), normalized to [0, 1].
PAIR_SCORES: Final = (0.0, 0.25, 0.5, 0.75, 1.0)
Z975: Final = 1.959963984540054

EloModel = Literal["logistic", "normalized"]
ELO_MODELS: Final = ("logistic", "normalized")


def score_of(elo: float) -> float:
    """Expected score per game of an Elo difference (logistic)."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def elo_of(score: float) -> float:
    """Logistic Elo difference of an expected score (clamped to [0.001, 0.999] as fishtest does: +/-1200)."""
    s = min(max(score, 1e-3), 1.0 - 1e-3)
    return -400.0 * math.log10(1.0 / s - 1.0)


def llr_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's bounds: reject H1 below ``ln(beta/(1-alpha))``, accept it above ``ln((1-beta)/alpha)``."""
    return (math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha))


def pentanomial(block_scores: Sequence[float]) -> list[int]:
    """Counts of block scores 0, 0.5, 1, 1.5, 2 (the candidate's points over a deal's two games)."""
    counts = [0] * 5
    for score in block_scores:
        index = round(score * 2)
        if not 0 <= index <= 4 or abs(index - score * 2) > 1e-9:
            raise ValueError(f"a block score is 0, 0.5, 1, 1.5 or 2, got {score!r}")
        counts[index] += 1
    return counts


# ------------------------------------------------------------------ distributions


def _distribution(counts: Sequence[float]) -> tuple[float, list[float]]:
    """(N, probabilities) with empty outcomes given a little mass (as fishtest's ``regularize``)."""
    regular = [c if c > 0 else EPSILON_COUNT for c in counts]
    total = sum(regular)
    return total, [c / total for c in regular]


def _moments(values: Sequence[float], probs: Sequence[float]) -> tuple[float, float]:
    mean = sum(p * a for a, p in zip(values, probs))
    var = sum(p * (a - mean) ** 2 for a, p in zip(values, probs))
    return mean, var


def solve_secular(coefficients: Sequence[float], probs: Sequence[float]) -> float:
    """The root x of ``sum_i p_i * a_i / (1 + x * a_i) = 0`` with every ``1 + x * a_i > 0``.

    On that interval ``(-1/max a, -1/min a)`` the function is strictly
    decreasing (its derivative is ``-sum p_i a_i^2 / (1 + x a_i)^2``), so the
    root is unique: Newton's method, kept inside a shrinking bracket (a step
    that would leave it bisects instead).
    """
    low_a, high_a = min(coefficients), max(coefficients)
    if not (low_a < 0 < high_a):
        raise ValueError("no maximum-likelihood fit: the expected score is outside the observed scores")
    lo, hi = -1.0 / high_a, -1.0 / low_a
    x = 0.0
    for _ in range(200):
        f = 0.0
        df = 0.0
        for a, p in zip(coefficients, probs):
            d = 1.0 + x * a
            f += p * a / d
            df -= p * a * a / (d * d)
        if f > 0:
            lo = x
        else:
            hi = x
        step = x - f / df if df != 0 else (lo + hi) / 2
        if not lo < step < hi:
            step = (lo + hi) / 2
        if abs(step - x) < 1e-15 or hi - lo < 1e-15:
            return step
        x = step
    return x


def mle_expected(values: Sequence[float], probs: Sequence[float], s: float) -> list[float]:
    """The distribution on ``values`` nearest the observed ``probs`` (maximum likelihood) with mean ``s``.

    Its probabilities are ``p_i / (1 + x (a_i - s))`` with ``x`` the root of the
    secular equation (fishtest's ``MLE_expected``, after M. Van den Bergh's note
    "support_MLE_multinomial", proposition 1.1).
    """
    shifted = [a - s for a in values]
    x = solve_secular(shifted, probs)
    return [p / (1.0 + x * a) for a, p in zip(shifted, probs)]


def mle_t_value(values: Sequence[float], probs: Sequence[float], ref: float, t: float) -> list[float]:
    """The maximum-likelihood distribution on ``values`` whose t-value ``(mean - ref) / sd`` is ``t``.

    A fixed point: at the current fit's mean and sd, the constraint is
    linearized and solved as a secular equation (fishtest's ``MLE_t_value``,
    after "normalized_elo_practical", section 4.1).
    """
    fit = [1.0 / len(values)] * len(values)
    for _ in range(50):
        mean, var = _moments(values, fit)
        sd = math.sqrt(var)
        coefficients = [a - ref - t * sd * (1.0 + ((mean - a) / sd) ** 2) / 2.0 for a in values]
        x = solve_secular(coefficients, probs)
        new = [p / (1.0 + x * c) for c, p in zip(coefficients, probs)]
        change = max(abs(u - v) for u, v in zip(new, fit))
        fit = new
        if change < 1e-12:
            break
    return fit


def llr(counts: Sequence[float], elo0: float, elo1: float, model: EloModel = "logistic") -> float:
    """The generalized LLR of H1 (Elo ``elo1``) against H0 (``elo0``) for pentanomial ``counts``.

    ``model`` says what the Elo numbers are: ``logistic`` (per game) or
    ``normalized`` (fishtest's nElo). Zero while no block is counted.
    """
    if len(counts) != 5:
        raise ValueError(f"expected 5 pentanomial counts, got {len(counts)}")
    if sum(counts) <= 0:
        return 0.0
    n, probs = _distribution(counts)
    if model == "logistic":
        fit0 = mle_expected(PAIR_SCORES, probs, score_of(elo0))
        fit1 = mle_expected(PAIR_SCORES, probs, score_of(elo1))
    elif model == "normalized":
        # per game nElo -> per pair t-value: sigma_pg = sqrt(2) * sigma_pair
        t0, t1 = (elo * math.sqrt(2.0) / NELO_PER_T for elo in (elo0, elo1))
        fit0 = mle_t_value(PAIR_SCORES, probs, 0.5, t0)
        fit1 = mle_t_value(PAIR_SCORES, probs, 0.5, t1)
    else:
        raise ValueError(f"elo model {model!r}: expected one of {', '.join(ELO_MODELS)}")
    return n * sum(p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, fit0, fit1))


def normal_llr(n: float, mean: float, var: float, s0: float, s1: float) -> float:
    """The LLR's Brownian approximation for ``n`` samples of mean ``mean``, variance ``var``: H1 mean s1, H0 s0.

    ``n (s1 - s0) (2 mean - s0 - s1) / (2 var)`` — fishtest's ``LLR_alt2``
    (M. Van den Bergh, "GSPRT_approximation"); used for continuous scores.
    """
    if n <= 0 or var <= 0:
        return 0.0
    return n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)


# --------------------------------------------------------------------- overshoot


class Overshoot:
    """fishtest's dynamic overshoot estimate, fed the LLR after each block in order.

    Every new low of the LLR is a step below the previous low (``delta``); the
    expected overshoot past the lower bound is ``E[delta^2] / (2 E[delta])``
    over those steps (Siegmund, corollary 8.33), and likewise for new highs.
    The test stops at ``lower + o0`` and ``upper - o1``.
    """

    __slots__ = ("m0", "m1", "ref0", "ref1", "sq0", "sq1")

    def __init__(self) -> None:
        self.ref0 = self.ref1 = 0.0
        self.m0 = self.sq0 = self.m1 = self.sq1 = 0.0

    def add(self, value: float) -> None:
        if value < self.ref0:
            delta = value - self.ref0
            self.m0 += delta
            self.sq0 += delta * delta
            self.ref0 = value
        if value > self.ref1:
            delta = value - self.ref1
            self.m1 += delta
            self.sq1 += delta * delta
            self.ref1 = value

    def corrections(self) -> tuple[float, float]:
        """``(o0, o1)``: how far in from the lower and the upper bound the test stops."""
        o0 = -self.sq0 / self.m0 / 2.0 if self.m0 != 0 else 0.0
        o1 = self.sq1 / self.m1 / 2.0 if self.m1 != 0 else 0.0
        return o0, o1


def overshoot(history: Sequence[float]) -> tuple[float, float]:
    """The overshoot corrections ``(o0, o1)`` after the LLRs of ``history`` (see :class:`Overshoot`)."""
    state = Overshoot()
    for value in history:
        state.add(value)
    return state.corrections()


# ------------------------------------------------------------------------ estimates


@dataclass(frozen=True, slots=True)
class Estimate:
    """What the blocks say about the candidate: logistic Elo ± 95%, normalized Elo, LOS."""

    elo: float
    elo_low: float
    elo_high: float
    nelo: float
    nelo_half: float  # the 95% half-width of nElo
    los: float  # likelihood of superiority: P(true score > 0.5)
    score: float  # mean score per game

    @property
    def elo_half(self) -> float:
        return (self.elo_high - self.elo_low) / 2.0


def estimate_from_moments(n: float, mean: float, var: float) -> Estimate:
    """Estimates from ``n`` blocks whose normalized score (0..1 per block) has this mean and variance."""
    if n <= 0:
        return Estimate(0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.5)
    se = math.sqrt(max(var, 0.0) / n)
    low, high = mean - Z975 * se, mean + Z975 * se
    sigma_pg = math.sqrt(2.0 * var) if var > 0 else 0.0
    if sigma_pg > 0:
        nelo = (mean - 0.5) / sigma_pg * NELO_PER_T
        nelo_half = Z975 * se / sigma_pg * NELO_PER_T
    else:
        nelo = nelo_half = 0.0
    if se > 0:
        los = 0.5 * math.erfc(-(mean - 0.5) / se / math.sqrt(2.0))
    else:
        los = 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    return Estimate(elo_of(mean), elo_of(low), elo_of(high), nelo, nelo_half, los, mean)


def estimate(counts: Sequence[int]) -> Estimate:
    """Elo, its 95% interval, nElo and LOS from pentanomial counts."""
    if sum(counts) <= 0:
        return estimate_from_moments(0, 0.5, 0.0)
    n, probs = _distribution(counts)  # regularized: one-sided counts still get an interval
    mean, var = _moments(PAIR_SCORES, probs)
    return estimate_from_moments(n, mean, var)


# --------------------------------------------------------------------------- the test


@dataclass(frozen=True, slots=True)
class Hypotheses:
    """What the gate tests: H0 elo0 against H1 elo1 (in ``model`` Elo), with error rates alpha and beta."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: EloModel = "logistic"

    def check(self) -> None:
        """ValueError naming what is wrong."""
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise ValueError(f"alpha and beta must be between 0 and 0.5, got {self.alpha:g} and {self.beta:g}")
        if not self.elo1 > self.elo0:
            raise ValueError(f"elo1 must be greater than elo0, got elo0 {self.elo0:g} and elo1 {self.elo1:g}")
        if self.model not in ELO_MODELS:
            raise ValueError(f"elo model {self.model!r}: expected one of {', '.join(ELO_MODELS)}")
        if self.model == "logistic" and not (-800 < self.elo0 and self.elo1 < 800):
            raise ValueError("elo0 and elo1 must be within -800 to 800 (logistic Elo)")

    @property
    def bounds(self) -> tuple[float, float]:
        return llr_bounds(self.alpha, self.beta)


Verdict = Literal["accepted", "rejected", "inconclusive", "running"]


@dataclass(frozen=True, slots=True)
class Decision:
    """The test after some blocks: the LLR against its (overshoot-corrected) bounds and the verdict."""

    llr: float
    lower: float  # where the test rejects (Wald's bound + o0)
    upper: float  # where it accepts (Wald's bound - o1)
    verdict: Verdict  # accepted, rejected, or running (no bound crossed yet)


def decide(llr_history: Sequence[float], hypotheses: Hypotheses, correct_overshoot: bool = True) -> Decision:
    """Where the test stands after the last LLR of ``llr_history`` (one LLR per block, in deal order)."""
    state = Overshoot()
    if correct_overshoot:
        for value in llr_history:
            state.add(value)
    return decide_at(llr_history[-1] if llr_history else 0.0, state, hypotheses)


def decide_at(value: float, state: Overshoot, hypotheses: Hypotheses) -> Decision:
    """Where the test stands at LLR ``value``, ``state`` having been fed every LLR so far (``value`` last)."""
    a, b = hypotheses.bounds
    o0, o1 = state.corrections()
    lower, upper = a + o0, b - o1
    verdict: Verdict = "rejected" if value < lower else "accepted" if value > upper else "running"
    return Decision(value, lower, upper, verdict)


def run_test(
    block_scores: Sequence[float],
    hypotheses: Hypotheses,
    max_blocks: int | None = None,
    correct_overshoot: bool = True,
) -> tuple[int, Decision]:
    """Run the sequential test over blocks in order: (blocks used, decision at the first crossing or the end).

    The reference loop the gate and the simulation tests follow: the LLR after
    each complete prefix of blocks, stop at the first that crosses a bound.
    """
    counts = [0] * 5
    state = Overshoot()
    decision = Decision(0.0, *hypotheses.bounds, "running")
    used = 0
    for score in block_scores:
        if max_blocks is not None and used >= max_blocks:
            break
        counts[pentanomial([score]).index(1)] += 1
        used += 1
        value = llr(counts, hypotheses.elo0, hypotheses.elo1, hypotheses.model)
        if correct_overshoot:
            state.add(value)
        decision = decide_at(value, state, hypotheses)
        if decision.verdict != "running":
            break
    return used, decision
