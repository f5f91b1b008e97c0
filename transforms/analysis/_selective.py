"""Selective evaluation with a guarantee ("Trust or Escalate", Jung et al., ICLR 2025, arXiv
2407.18370): keep a judge's verdict only where its confidence reaches a threshold chosen on people's
labels so that, on the verdicts kept, the judge agrees with people at least ``1 - alpha`` of the time
with probability at least ``1 - delta``; escalate the rest to people.

The threshold is chosen by fixed-sequence testing, as the paper does: the candidate thresholds (the
labels' distinct confidences, at most ``MAX_CANDIDATES`` of them, by quantile) are tested from the
most confident down; at each, of the ``n`` labelled verdicts kept there, ``k`` disagree with people,
and the exact binomial p-value of "the disagreement rate exceeds alpha" is ``P(Binomial(n, alpha) <=
k)``. Testing stops at the first candidate whose p-value exceeds ``delta``; the threshold is the last
one that passed (the lowest, so the most verdicts kept). The sequence starts at the first candidate
that keeps enough labels to pass at all (``(1 - alpha)^n <= delta``): which those are depends on the
confidences alone, not on whether the judge agreed, so the order is still fixed before the test. The agreement bound is one minus the exact
(Clopper-Pearson) upper ``1 - delta`` bound of the disagreement rate there.

A verdict's confidence (sql/marts/judge_confidence.sql): of a repeated judge's majority, the share of
its asks that agree with the majority (0.5 to 1); of a judge asked once, ``0.5 + |score - threshold|
/ 2``, half the score's distance from the pass threshold (0.5 to 1, a score on the threshold 0.5); a
judge error or a score that is no number, 0 (always escalated).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scorelake.transforms.errors import check_range

MAX_CANDIDATES = 200  # thresholds tested at most: the labels' distinct confidences, thinned by quantile


@dataclass(frozen=True)
class Selection:
    """A calibration's outcome: the confidence threshold (None: no threshold gives the guarantee)."""

    threshold: float | None
    labels: int  # labelled verdicts (people's verdict beside the judge's)
    kept_labels: int  # of them, at or above the threshold
    kept_disagreements: int  # of those, where the judge and people disagree
    agreement_bound: float | None  # the agreement reached on the kept verdicts, at 1 - delta
    more_labels: int | None  # without a threshold: about how many more labels it takes (None: no number)
    note: str | None = None


def binomial_cdf(k: int, n: int, p: float) -> float:
    """``P(X <= k)``, ``X ~ Binomial(n, p)``, summed exactly in log space (k + 1 terms)."""
    if k < 0:
        return 0.0
    if k >= n or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    log_p, log_q, log_n = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    terms = [log_n - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q for i in range(k + 1)]
    top = max(terms)
    return min(1.0, math.exp(top) * math.fsum(math.exp(t - top) for t in terms))


def upper_bound(k: int, n: int, delta: float) -> float:
    """The exact (Clopper-Pearson) one-sided upper ``1 - delta`` bound of a rate seen ``k`` times in
    ``n``: the rate at which ``k`` or fewer would be seen with probability ``delta``."""
    if n == 0 or k >= n:
        return 1.0
    low, high = k / n, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if binomial_cdf(k, n, mid) > delta else (low, mid)
    return high


def _candidates(confidences: list[float]) -> list[float]:
    """The thresholds to test, the most confident first."""
    distinct = sorted(set(confidences), reverse=True)
    if len(distinct) <= MAX_CANDIDATES:
        return distinct
    step = (len(distinct) - 1) / (MAX_CANDIDATES - 1)
    return sorted({distinct[round(i * step)] for i in range(MAX_CANDIDATES)}, reverse=True)


def labels_for(rate: float, alpha: float, delta: float) -> int | None:
    """The fewest labels at which a disagreement ``rate`` seen on all of them passes the test (None
    when ``rate`` is not below ``alpha``: no number of labels does)."""
    if rate >= alpha:
        return None
    n = max(1, math.ceil(math.log(delta) / math.log1p(-alpha)))  # enough with no disagreement at all
    while binomial_cdf(math.floor(n * rate), n, alpha) > delta:
        n += max(1, n // 50)
    return n


def select(confidences: list[float], agrees: list[bool], alpha: float, delta: float) -> Selection:
    """The threshold over ``confidences`` of labelled verdicts (``agrees``: the judge agreed with
    people) that guarantees agreement ``1 - alpha`` on the kept verdicts with probability ``1 - delta``."""
    check_range("alpha", alpha, 1e-6, 0.5)
    check_range("delta", delta, 1e-6, 0.5)
    pairs = sorted(zip(confidences, agrees), key=lambda p: -p[0])
    chosen, kept, wrong = None, 0, 0
    i = n = k = 0
    for threshold in _candidates([c for c, _ in pairs]):
        while i < len(pairs) and pairs[i][0] >= threshold:
            n, k, i = n + 1, k + (not pairs[i][1]), i + 1
        if binomial_cdf(0, n, alpha) > delta:
            continue  # too few labels kept here to pass even with no disagreement: not a test yet
        if binomial_cdf(k, n, alpha) > delta:
            break
        chosen, kept, wrong = threshold, n, k
    if chosen is not None:
        return Selection(chosen, len(pairs), kept, wrong, 1 - upper_bound(wrong, kept, delta), None)
    return Selection(None, len(pairs), 0, 0, None, *_shortfall(pairs, alpha, delta))


def _shortfall(pairs: list[tuple[float, bool]], alpha: float, delta: float) -> tuple[int | None, str]:
    """About how many more labels a threshold takes, and why: the labels at or above the median
    confidence disagree at some rate; it takes ``labels_for(rate)`` labels that confident, and such
    labels are a share of all labels (``pairs``, the most confident first)."""
    if not pairs:
        needed = labels_for(0.0, alpha, delta)
        return needed, f"no labels: at least {needed} that agree are needed"
    median = pairs[(len(pairs) - 1) // 2][0]
    top = [pair for pair in pairs if pair[0] >= median]
    rate = sum(not agrees for _, agrees in top) / len(top)
    needed = labels_for(rate, alpha, delta)
    if needed is None:
        return None, (f"the judge disagrees with people on {rate:.0%} of its more confident labelled verdicts, "
                      f"not below alpha {alpha:g}: more labels give no guarantee")
    more = max(1, math.ceil(needed * len(pairs) / len(top)) - len(pairs))
    return more, (f"too few labels for the guarantee: about {more} more (its more confident verdicts disagree "
                  f"{rate:.0%} of the time; {needed} that confident are needed)")
