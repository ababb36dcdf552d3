"""The one solver loop of the rating fits: Newton's method with a backtracking line search, and its linear solve.

Bradley-Terry (:mod:`.bradley_terry`) and Plackett-Luce (:mod:`.plackett_luce`)
each give the log-likelihood (with their prior) and its gradient and Hessian;
this loop maximises it. Strengths are only defined up to a constant, so the
first is held fixed while solving and the result is centred (mean 0).

A fit that has not converged after ``max_iter`` steps raises
:class:`NotConverged` rather than returning its last guess (as fishtest
asserts): a rating table built on an unconverged fit would look as sure as any
other. Imports nothing of skyjo_ref (the statistics room is pure).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

#: Objective drop the line search tolerates (rounding at the optimum), and its smallest step fraction.
SLACK: Final = 1e-12
MIN_SCALE: Final = 1e-6

#: Gradient and Hessian of the objective at a point.
Derivatives = Callable[[list[float]], tuple[list[float], list[list[float]]]]


class NotConverged(ArithmeticError):
    """A fit whose Newton steps were still larger than the tolerance after its iteration budget."""


def maximise(
    start: Sequence[float],
    objective: Callable[[list[float]], float],
    derivatives: Derivatives,
    *,
    tol: float,
    max_iter: int,
    what: str,
) -> list[float]:
    """The maximiser of a concave ``objective`` (``what`` names the fit in a :class:`NotConverged`), centred."""
    beta = list(start)
    n = len(beta)
    value = objective(beta)
    largest = float("inf")
    for _ in range(max_iter):
        grad, hess = derivatives(beta)
        step = [0.0, *solve([row[1:] for row in hess[1:]], grad[1:])]  # beta[0] fixed: only differences count
        scale = 1.0
        while True:
            trial = [b + scale * s for b, s in zip(beta, step)]
            trial_value = objective(trial)
            if trial_value >= value - SLACK or scale < MIN_SCALE:
                break
            scale /= 2
        beta, value = trial, trial_value
        largest = max(abs(scale * s) for s in step)
        if largest < tol:
            mean = sum(beta) / n
            return [b - mean for b in beta]
    raise NotConverged(
        f"the {what} fit did not converge in {max_iter} Newton steps (last step {largest:.3g}, tolerance {tol:g})"
    )


def solve(a: Sequence[Sequence[float]], b: Sequence[float]) -> list[float]:
    """Solve ``a x = b`` by Gaussian elimination with partial pivoting (a is small and well-posed)."""
    n = len(b)
    m = [[*row, rhs] for row, rhs in zip(a, b)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) < 1e-300:
            raise ArithmeticError("singular system in a rating fit")
        m[col], m[pivot] = m[pivot], m[col]
        top = m[col]
        inv = 1.0 / top[col]
        for r in range(col + 1, n):
            factor = m[r][col] * inv
            if factor != 0.0:
                row = m[r]
                for c in range(col, n + 1):
                    row[c] -= factor * top[c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x
