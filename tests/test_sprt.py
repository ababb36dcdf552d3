"""The gate's statistics (skyjo_ref.stats.sprt): against an independent implementation, and by simulation."""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Sequence

import pytest
from skyjo_ref.stats import sprt

VALUES = sprt.PAIR_SCORES


# ----------------------------------------------------------- an independent implementation
#
# The product solves the constrained maximum-likelihood fit with a secular equation (Newton).
# Here the same fit is found by brute force: Nelder-Mead over the simplex, in coordinates of the
# affine subspace the linear constraints leave, and for the t-value constraint a golden-section
# search over the mean outside it. Slow, but it shares no step with the product.


def _null_space(rows: Sequence[Sequence[float]], n: int) -> list[list[float]]:
    """An orthonormal basis of the vectors orthogonal to ``rows`` (Gram-Schmidt on the unit vectors)."""
    basis: list[list[float]] = []
    for r in rows:
        v = list(r)
        for b in basis:
            d = sum(x * y for x, y in zip(v, b))
            v = [x - d * y for x, y in zip(v, b)]
        norm = math.sqrt(sum(x * x for x in v))
        basis.append([x / norm for x in v])
    out: list[list[float]] = []
    for i in range(n):
        v = [1.0 if j == i else 0.0 for j in range(n)]
        for b in basis + out:
            d = sum(x * y for x, y in zip(v, b))
            v = [x - d * y for x, y in zip(v, b)]
        norm = math.sqrt(sum(x * x for x in v))
        if norm > 1e-8:
            out.append([x / norm for x in v])
    return out


def _nelder_mead(f: Callable[[list[float]], float], start: list[float], step: float, iters: int = 4000) -> list[float]:
    """Minimise ``f`` (which may return inf outside its domain)."""
    n = len(start)
    simplex = [start] + [[s + (step if j == i else 0.0) for j, s in enumerate(start)] for i in range(n)]
    values = [f(p) for p in simplex]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: values[i])
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        if abs(values[-1] - values[0]) < 1e-15 and iters > 200:
            break
        centroid = [sum(p[j] for p in simplex[:-1]) / n for j in range(n)]
        worst = simplex[-1]
        reflected = [c + (c - w) for c, w in zip(centroid, worst)]
        fr = f(reflected)
        if fr < values[0]:
            expanded = [c + 2 * (c - w) for c, w in zip(centroid, worst)]
            fe = f(expanded)
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = [c + 0.5 * (w - c) for c, w in zip(centroid, worst)]
            fc = f(contracted)
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:
                best = simplex[0]
                simplex = [best] + [[b + 0.5 * (x - b) for b, x in zip(best, p)] for p in simplex[1:]]
                values = [values[0]] + [f(p) for p in simplex[1:]]
    return simplex[min(range(n + 1), key=lambda i: values[i])]


def _best_loglik_linear(probs: Sequence[float], rows: Sequence[Sequence[float]], rhs: Sequence[float]) -> float:
    """max sum p_i log q_i over q >= 0 with rows . q = rhs (one row is all ones)."""
    n = len(probs)
    # a feasible interior start: least-norm solution, then pushed toward the interior along the null space
    basis = _null_space(rows, n)
    # least-squares point of the affine set: solve (R R^T) y = rhs, q = R^T y
    m = len(rows)
    gram = [[sum(a * b for a, b in zip(rows[i], rows[j])) for j in range(m)] for i in range(m)]
    y = _solve(gram, list(rhs))
    q0 = [sum(y[i] * rows[i][k] for i in range(m)) for k in range(n)]

    def objective(z: list[float]) -> float:
        q = [q0[k] + sum(z[j] * basis[j][k] for j in range(len(basis))) for k in range(n)]
        if min(q) <= 0:
            return math.inf
        return -sum(p * math.log(x) for p, x in zip(probs, q))

    # find an interior start by maximising the smallest coordinate first
    def negmin(z: list[float]) -> float:
        q = [q0[k] + sum(z[j] * basis[j][k] for j in range(len(basis))) for k in range(n)]
        return -min(q)

    start = _nelder_mead(negmin, [0.0] * len(basis), 0.1, 600)
    if negmin(start) >= 0:
        return -math.inf
    best = start
    for scale in (0.05, 0.01, 0.002):  # restarts: Nelder-Mead stalls on long ridges
        best = _nelder_mead(objective, best, scale)
    return -objective(best)


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    m = [[*row, rhs] for row, rhs in zip(a, b)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] for i in range(n)]


def brute_llr_logistic(counts: Sequence[int], elo0: float, elo1: float) -> float:
    n = sum(c if c > 0 else 1e-3 for c in counts)
    probs = [(c if c > 0 else 1e-3) / n for c in counts]
    ones = [1.0] * 5

    def best(s: float) -> float:
        return _best_loglik_linear(probs, [ones, list(VALUES)], [1.0, s])

    s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1))
    return n * (best(s1) - best(s0))


def brute_llr_normalized(counts: Sequence[int], nelo0: float, nelo1: float) -> float:
    n = sum(c if c > 0 else 1e-3 for c in counts)
    probs = [(c if c > 0 else 1e-3) / n for c in counts]
    ones = [1.0] * 5
    squares = [v * v for v in VALUES]

    def best(t: float) -> float:
        if t == 0:  # the mean is 1/2, the variance free
            return _best_loglik_linear(probs, [ones, list(VALUES)], [1.0, 0.5])

        # the mean m fixes the variance ((m - 1/2) / t)^2: two linear constraints, then golden section over m
        def at(m: float) -> float:
            var = ((m - 0.5) / t) ** 2
            return _best_loglik_linear(probs, [ones, list(VALUES), squares], [1.0, m, m * m + var])

        # feasible means: the variance ((m - 1/2) / t)^2 cannot exceed m (1 - m), the most a mean m allows
        def feasible(m: float) -> bool:
            return ((m - 0.5) / t) ** 2 < m * (1 - m) * 0.999

        near, far = 0.5, (1.0 if t > 0 else 0.0)
        for _ in range(60):
            mid = (near + far) / 2
            near, far = (mid, far) if feasible(mid) else (near, mid)
        lo, hi = sorted((0.5 + (1e-6 if t > 0 else -1e-6), near))
        g = (math.sqrt(5) - 1) / 2
        a, b = lo, hi
        c, d = b - g * (b - a), a + g * (b - a)
        fc, fd = at(c), at(d)
        for _ in range(60):
            if fc > fd:
                b, d, fd = d, c, fc
                c = b - g * (b - a)
                fc = at(c)
            else:
                a, c, fc = c, d, fd
                d = a + g * (b - a)
                fd = at(d)
        return max(fc, fd)

    t0, t1 = (e * math.sqrt(2) / sprt.NELO_PER_T for e in (nelo0, nelo1))
    return n * (best(t1) - best(t0))


@pytest.mark.parametrize(
    ("counts", "elo0", "elo1"),
    [
        ([98, 3, 160, 0, 39], -100.0, -50.0),
        ([98, 3, 160, 0, 39], 0.0, 20.0),
        ([10, 4, 30, 6, 14], -10.0, 10.0),
        ([3, 0, 5, 1, 9], 0.0, 50.0),
        ([1, 1, 1, 1, 1], 5.0, 15.0),
    ],
)
def test_logistic_llr_matches_a_brute_force_fit(counts: list[int], elo0: float, elo1: float) -> None:
    assert sprt.llr(counts, elo0, elo1) == pytest.approx(brute_llr_logistic(counts, elo0, elo1), rel=1e-4, abs=1e-5)


@pytest.mark.parametrize(
    ("counts", "nelo0", "nelo1"),
    [
        ([10, 4, 30, 6, 14], -10.0, 10.0),
        ([98, 3, 160, 0, 39], -60.0, -30.0),
        ([20, 5, 40, 5, 30], 0.0, 25.0),
    ],
)
def test_normalized_llr_matches_a_brute_force_fit(counts: list[int], nelo0: float, nelo1: float) -> None:
    expected = brute_llr_normalized(counts, nelo0, nelo1)
    assert sprt.llr(counts, nelo0, nelo1, "normalized") == pytest.approx(expected, rel=2e-3, abs=2e-4)


def test_logistic_and_normalized_agree_on_equivalent_bounds() -> None:
    # fishtest's own example: bounds [0.2, 0.9] logistic are [0.764, 3.439] normalized for this sample
    counts = [39, 2226, 31451, 2412, 40]
    assert sprt.llr(counts, 0.2, 0.9) == pytest.approx(sprt.llr(counts, 0.764, 3.439, "normalized"), abs=0.01)


def test_fitted_distributions_keep_their_constraints() -> None:
    probs = [0.3, 0.01, 0.5, 0.02, 0.17]
    fit = sprt.mle_expected(VALUES, probs, 0.55)
    assert sum(fit) == pytest.approx(1.0)
    assert sum(p * v for p, v in zip(fit, VALUES)) == pytest.approx(0.55)
    fit = sprt.mle_t_value(VALUES, probs, 0.5, 0.2)
    mean = sum(p * v for p, v in zip(fit, VALUES))
    sd = math.sqrt(sum(p * (v - mean) ** 2 for p, v in zip(fit, VALUES)))
    assert (mean - 0.5) / sd == pytest.approx(0.2, abs=1e-7)


def test_bounds_pentanomial_and_bad_input() -> None:
    assert sprt.llr_bounds(0.05, 0.05) == pytest.approx((-math.log(19), math.log(19)))
    assert sprt.pentanomial([0, 0.5, 1, 1, 2, 1.5]) == [1, 1, 2, 1, 1]
    with pytest.raises(ValueError, match="block score"):
        sprt.pentanomial([0.7])
    with pytest.raises(ValueError, match="5 pentanomial counts"):
        sprt.llr([1, 2, 3], 0, 10)
    assert sprt.llr([0] * 5, 0, 10) == 0.0
    with pytest.raises(ValueError, match="elo1 must be greater"):
        sprt.Hypotheses(10, 0).check()
    with pytest.raises(ValueError, match="alpha and beta"):
        sprt.Hypotheses(0, 10, alpha=0.7).check()


def test_estimates_are_symmetric_and_centred() -> None:
    even = sprt.estimate([5, 0, 10, 0, 5])
    assert even.elo == pytest.approx(0.0) and even.los == pytest.approx(0.5) and even.nelo == pytest.approx(0.0)
    up, down = sprt.estimate([2, 1, 10, 3, 8]), sprt.estimate([8, 3, 10, 1, 2])
    assert up.elo == pytest.approx(-down.elo) and up.los == pytest.approx(1 - down.los)
    assert up.elo_low < up.elo < up.elo_high and up.elo > 0 and up.los > 0.5
    # the measured Skyjo sample: minimal bot against greedy scores about 0.40 a game (about -71 Elo)
    skyjo = sprt.estimate([98, 3, 160, 0, 39])
    assert skyjo.score == pytest.approx(0.399, abs=1e-3) and -80 < skyjo.elo < -60


def test_overshoot_follows_new_lows_and_highs() -> None:
    assert sprt.overshoot([]) == (0.0, 0.0)
    o0, o1 = sprt.overshoot([0.5, 1.0, 0.2, 1.5])  # highs: steps 0.5, 0.5, 0.5 -> 0.25
    assert o0 == 0.0 and o1 == pytest.approx(0.25)
    o0, o1 = sprt.overshoot([-0.2, -0.6])  # lows: steps -0.2, -0.4 -> (0.04 + 0.16) / 0.6 / 2
    assert o0 == pytest.approx(0.2 / 0.6 / 2) and o1 == 0.0
    jump = sprt.decide([0.1, 2.8], sprt.Hypotheses(0, 10))  # a big step: a big expected overshoot
    assert jump.upper == pytest.approx(math.log(19) - (0.01 + 2.7**2) / 2.8 / 2) and jump.verdict == "accepted"
    steps = [0.1 * k for k in range(1, 29)]  # small steps up to 2.8: about 0.05 of overshoot
    creeping = sprt.decide(steps, sprt.Hypotheses(0, 10))
    assert creeping.upper == pytest.approx(math.log(19) - 0.05) and creeping.verdict == "running"
    assert sprt.decide([3.0], sprt.Hypotheses(0, 10)).verdict == "accepted"
    assert sprt.decide([-3.0], sprt.Hypotheses(0, 10)).verdict == "rejected"


# ----------------------------------------------------------------------------- simulation
#
# Synthetic duplicate blocks: a symmetric pentanomial shaped like Skyjo's (much mass on 1: the deal
# decides; little on 0.5 and 1.5: shared wins are rare), tilted to the expected score of a known
# Elo difference. The test runs exactly as the gate does (the product's LLR after every block, its
# overshoot-corrected bounds, first crossing wins); at elo0 it must accept at most alpha of the time,
# at elo1 reject at most beta, within sampling error (3 standard errors of a binomial proportion over
# 1,000 tests).

SHAPE = (0.25, 0.02, 0.46, 0.02, 0.25)
SIMULATIONS = 1000


def _tilted(shape: Sequence[float], score: float) -> list[float]:
    """``shape`` exponentially tilted so that its mean pair score is ``score``."""
    lo, hi = -50.0, 50.0
    for _ in range(100):
        lam = (lo + hi) / 2
        weights = [p * math.exp(lam * v) for p, v in zip(shape, VALUES)]
        mean = sum(w * v for w, v in zip(weights, VALUES)) / sum(weights)
        lo, hi = (lam, hi) if mean < score else (lo, lam)
    total = sum(weights)
    return [w / total for w in weights]


def _simulate(true_elo: float, hyp: sprt.Hypotheses, seed: int) -> tuple[float, float, float]:
    """(share accepted, share rejected, mean blocks) over SIMULATIONS tests."""
    probs = _tilted(SHAPE, sprt.score_of(true_elo))
    cumulative = [sum(probs[: i + 1]) for i in range(5)]
    rng = random.Random(seed)
    llr_of = functools.lru_cache(maxsize=None)(lambda counts: sprt.llr(counts, hyp.elo0, hyp.elo1, hyp.model))
    accepted = rejected = 0
    blocks = 0
    for _ in range(SIMULATIONS):
        counts = [0] * 5
        overshoot = sprt.Overshoot()
        for n in range(1, 20_000):  # noqa: B007 (n is the test's length after the loop)
            u = rng.random()
            counts[next(i for i, c in enumerate(cumulative) if u < c) if u < cumulative[-1] else 4] += 1
            value = llr_of(tuple(counts))
            overshoot.add(value)
            verdict = sprt.decide_at(value, overshoot, hyp).verdict
            if verdict == "accepted":
                accepted += 1
                break
            if verdict == "rejected":
                rejected += 1
                break
        blocks += n
    return accepted / SIMULATIONS, rejected / SIMULATIONS, blocks / SIMULATIONS


def test_incremental_overshoot_matches_the_history_form() -> None:
    rng = random.Random(3)
    history = [rng.gauss(0, 1) for _ in range(50)]
    hyp = sprt.Hypotheses(0, 60)
    o0, o1 = sprt.overshoot(history)
    assert sprt.decide(history, hyp).lower == pytest.approx(hyp.bounds[0] + o0)
    assert sprt.decide(history, hyp).upper == pytest.approx(hyp.bounds[1] - o1)
    state = sprt.Overshoot()
    for value in history:
        state.add(value)
    assert sprt.decide_at(history[-1], state, hyp) == sprt.decide(history, hyp)


@pytest.mark.parametrize("which", ["elo0", "elo1"])
def test_wrong_verdicts_are_within_alpha_and_beta(which: str) -> None:
    hyp = sprt.Hypotheses(0.0, 40.0, alpha=0.05, beta=0.05)
    true_elo = hyp.elo0 if which == "elo0" else hyp.elo1
    accepted, rejected, mean_blocks = _simulate(true_elo, hyp, seed=10 if which == "elo0" else 11)
    assert accepted + rejected == pytest.approx(1.0)  # every test ended with a verdict
    wrong, rate = (accepted, hyp.alpha) if which == "elo0" else (rejected, hyp.beta)
    tolerance = 3 * math.sqrt(rate * (1 - rate) / SIMULATIONS)
    assert wrong <= rate + tolerance, f"{wrong:.3f} wrong verdicts at {which} (allowed {rate} + {tolerance:.3f})"
    assert 100 < mean_blocks < 400


def test_a_clearly_better_candidate_is_accepted_and_the_run_is_deterministic() -> None:
    hyp = sprt.Hypotheses(0.0, 60.0)
    probs = _tilted(SHAPE, sprt.score_of(150))
    rng = random.Random(5)
    scores = [rng.choices([0, 0.5, 1, 1.5, 2], weights=probs)[0] for _ in range(2000)]
    used, decision = sprt.run_test(scores, hyp)
    assert decision.verdict == "accepted" and used < 200
    assert sprt.run_test(scores, hyp) == (used, decision)
    capped, truncated = sprt.run_test(scores, hyp, max_blocks=3)
    assert capped == 3 and truncated.verdict == "running"
