"""Small exact statistics for comparing runs."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test on paired binary verdicts."""

    broken: int  # passed in A, failed in B
    fixed: int  # failed in A, passed in B
    p_value: float


def mcnemar_exact(broken: int, fixed: int) -> McNemar:
    """Two-sided exact test: discordant pairs ~ Binomial(broken + fixed, 1/2) under no difference."""
    n = broken + fixed
    if n == 0:
        return McNemar(broken, fixed, 1.0)
    tail = sum(math.comb(n, i) for i in range(min(broken, fixed) + 1)) / 2**n
    return McNemar(broken, fixed, min(1.0, 2 * tail))


def newcombe_interval(p1: float, low1: float, high1: float, p2: float, low2: float,
                      high2: float) -> tuple[float, float]:
    """95% interval of p2 - p1 from the two Wilson intervals (Newcombe's hybrid score method)."""
    delta = p2 - p1
    return (delta - math.sqrt((p2 - low2) ** 2 + (high1 - p1) ** 2),
            delta + math.sqrt((high2 - p2) ** 2 + (p1 - low1) ** 2))


Z95 = 1.959963984540054


def wilson(passed: int, total: int) -> tuple[float | None, float | None, float | None]:
    """A rate and its 95% Wilson interval (None without a denominator), as sql/macros/wilson.sql."""
    if not total:
        return None, None, None
    p, z = passed / total, Z95
    centre, half = p + z * z / (2 * total), z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total))
    return p, (centre - half) / (1 + z * z / total), (centre + half) / (1 + z * z / total)


def clopper_pearson(successes: int, n: int) -> tuple[float, float]:
    """The exact (Clopper-Pearson) 95% interval of ``successes`` of ``n``: the proportions at which
    as many successes or more (fewer) would be seen with probability 2.5%, found by bisection on
    the binomial tail (summed from the nearer end: a few terms where the normal approximation fails)."""
    if successes > n / 2:
        low, high = clopper_pearson(n - successes, n)
        return 1 - high, 1 - low

    def at_most(k: int, p: float) -> float:  # P(X <= k), X ~ Binomial(n, p)
        return sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                            + i * math.log(p) + (n - i) * math.log1p(-p)) for i in range(k + 1))

    def solve(falls_below: Callable[[float], bool]) -> float:  # the p in (0, 1) where a tail crosses 2.5%
        low, high = 0.0, 1.0
        for _ in range(60):
            mid = (low + high) / 2
            low, high = (low, mid) if falls_below(mid) else (mid, high)
        return (low + high) / 2

    tail = (1 - 0.95) / 2
    lower = 0.0 if successes == 0 else solve(lambda p: 1 - at_most(successes - 1, p) > tail)
    upper = solve(lambda p: at_most(successes, p) < tail)
    return lower, upper


def _normal_quantile(q: float) -> float:
    """The standard normal quantile (Acklam's rational approximation: 1e-9 relative error)."""
    a = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
         -3.066479806614716e+01, 2.506628277459239e+00)
    b = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
         -1.328068155288572e+01)
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
         4.374664141464968e+00, 2.938163982698783e+00)
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00)
    if q < 0.02425:
        t = math.sqrt(-2 * math.log(q))
        return (((((c[0] * t + c[1]) * t + c[2]) * t + c[3]) * t + c[4]) * t + c[5]) / \
            ((((d[0] * t + d[1]) * t + d[2]) * t + d[3]) * t + 1)
    if q > 1 - 0.02425:
        return -_normal_quantile(1 - q)
    t = q - 0.5
    r = t * t
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * t / \
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)


def minimum_detectable_difference(pairs: int, discordant: int, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """The smallest difference between two paired pass rates a McNemar test on ``pairs`` pairs finds
    with ``power`` at ``alpha`` (Connor's sample size, solved for the difference), taking the observed
    share of discordant pairs (at least one pair's worth); None without pairs."""
    if pairs <= 0:
        return None
    share = max(discordant, 1) / pairs
    z_a, z_b = _normal_quantile(1 - alpha / 2), _normal_quantile(power)

    def needed(difference: float) -> float:
        return (z_a * math.sqrt(share) + z_b * math.sqrt(max(share - difference ** 2, 0.0))) ** 2 / difference ** 2

    if needed(share) > pairs:  # not even the largest difference the discordance allows
        return None
    low, high = 0.0, share
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if needed(mid) > pairs else (low, mid)
    return high


CORRECTIONS = ("holm", "bh", "none")  # how a gate corrects for the many tests it makes


def adjusted_p_values(p_values: list[float], method: str = "holm") -> list[float]:
    """Each p-value adjusted for the others tested with it: Holm's step-down (the family-wise error
    rate held at alpha), Benjamini-Hochberg's step-up (the false discovery rate) or ``none``; as R's
    ``p.adjust`` computes them."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    if method == "holm":
        running = 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (m - rank) * p_values[i]))
            adjusted[i] = running
    elif method == "bh":
        running = 1.0
        for rank in range(m - 1, -1, -1):
            i = order[rank]
            running = min(running, m * p_values[i] / (rank + 1))
            adjusted[i] = min(1.0, running)
    elif method == "none":
        adjusted = list(p_values)
    else:
        raise ValueError(f"correction '{method}': one of {', '.join(CORRECTIONS)}")
    return adjusted
