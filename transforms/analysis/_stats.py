"""Small exact statistics for comparing runs."""

from __future__ import annotations

import math
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
