"""A pass rate from every judged scenario and a correction from the labelled ones.

Prediction-powered inference with power tuning (PPI++, Angelopoulos, Duchi and Zrnic, arXiv
2311.01453), the mean's closed form as ``ppi_py.ppi_mean_ci`` computes it (tests/test_guarantees.py
holds the two equal): with people's verdicts ``Y`` and the judge's ``f`` on the ``n`` labelled
scenarios and the judge's ``f~`` on the ``N`` others,

    lambda = clip(cov(Y, f) / ((1 + n / N) var(f, f~)), 0, 1)
    rate   = lambda mean(f~) + mean(Y - lambda f)
    se^2   = var(lambda f~) / N + var(Y - lambda f) / n

(``cov`` and the variances of the last line over ``n`` and ``N``, ``var(f, f~)`` of both sets over
``n + N - 1``); the 95% interval is the rate plus or minus 1.96 se. A judge that gives one verdict
throughout has no variance to tune on: lambda is 0, the labels' own mean (ppi_py would give NaN).

Active labels (Zrnic and Candes, arXiv 2403.03208): scenarios drawn for labelling with probability
``pi`` (larger where the judge is likelier wrong), the rate over the ``N`` scenarios of the draw is
``mean(f + (Y - f) xi / pi)``, ``xi`` 1 for a drawn and labelled scenario, with the summands'
variance over ``N`` as its squared standard error: unbiased whatever the probabilities, so long as
none is 0.

Below ``MIN_PPI_LABELS`` labels either rate has no interval (its normal approximation fails there).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import polars as pl

from scorelake.transforms.analysis._calibration import Labels, rogan_gladen
from scorelake.transforms.analysis._stats import Z95, wilson

UNIFORM_SHARE = 0.1  # of an active draw's budget spread evenly: no scenario's probability is near 0
# Labels below which a rate has no interval: the normal approximation both estimators rest on fails
# there (three labels that agree give [100%, 100%]), as Rogan-Gladen's (MIN_LABELS) does
MIN_PPI_LABELS = 10


@dataclass(frozen=True)
class Estimate:
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    labels: int
    tuning: float | None = None  # PPI++'s lambda (None: the active estimator, or no rate)


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values)


def _variance(values: list[float], ddof: int = 0) -> float:
    centre = _mean(values)
    return math.fsum((v - centre) ** 2 for v in values) / (len(values) - ddof)


def _interval(rate: float, se: float, labels: int, tuning: float | None = None) -> Estimate:
    if labels < MIN_PPI_LABELS:
        return Estimate(rate, None, None, labels, tuning)
    return Estimate(rate, max(0.0, rate - Z95 * se), min(1.0, rate + Z95 * se), labels, tuning)


def ppi_rate(people: list[float], judge_labelled: list[float], judge_unlabelled: list[float]) -> Estimate:
    """PPI++'s rate and 95% interval (the module's formula); None without two labels and one
    unlabelled scenario."""
    n, big_n = len(people), len(judge_unlabelled)
    if n < 2 or big_n < 1:
        return Estimate(None, None, None, n)
    mean_y, mean_f = _mean(people), _mean(judge_labelled)
    covariance = math.fsum((y - mean_y) * (f - mean_f) for y, f in zip(people, judge_labelled, strict=True)) / n
    spread = _variance(judge_labelled + judge_unlabelled, ddof=1) if n + big_n > 1 else 0.0
    tuning = min(1.0, max(0.0, covariance / ((1 + n / big_n) * spread))) if spread > 0 else 0.0
    rectified = [y - tuning * f for y, f in zip(people, judge_labelled, strict=True)]
    rate = tuning * _mean(judge_unlabelled) + _mean(rectified)
    se = math.sqrt(tuning ** 2 * _variance(judge_unlabelled) / big_n + _variance(rectified) / n)
    return _interval(rate, se, n, tuning)


def active_rate(judge: list[float], people: list[float | None], probabilities: list[float | None]) -> Estimate:
    """The active estimator's rate over the ``N`` scenarios of a draw: ``judge`` verdicts of all,
    ``people``'s where drawn and labelled (None elsewhere), each drawn one's ``probabilities``."""
    big_n = len(judge)
    summands = [f + ((y - f) / p if y is not None and p else 0.0)
                for f, y, p in zip(judge, people, probabilities, strict=True)]
    labels = sum(y is not None and bool(p) for y, p in zip(people, probabilities, strict=True))
    if big_n < 2 or not labels:
        return Estimate(None, None, None, labels)
    return _interval(_mean(summands), math.sqrt(_variance(summands) / big_n), labels)


def inclusion_probabilities(doubt: list[float], budget: int) -> list[float]:
    """Each scenario's chance to be drawn for a label, ``budget`` drawn in expectation: in
    proportion to the square root of ``doubt`` (the chance the judge is wrong, as Zrnic and Candes'
    optimum for a binary verdict), capped at 1 (the rest spread over the others), with
    ``UNIFORM_SHARE`` of the budget spread evenly."""
    big_n = len(doubt)
    if not big_n or budget <= 0:
        return [0.0] * big_n
    if budget >= big_n:
        return [1.0] * big_n
    weights = [math.sqrt(max(d, 0.0)) for d in doubt]
    active = _capped(weights, budget * (1 - UNIFORM_SHARE)) if sum(weights) > 0 else [0.0] * big_n
    even = budget * UNIFORM_SHARE / big_n
    return [min(1.0, a + even) for a in active]


def _capped(weights: list[float], total: float) -> list[float]:
    """``weights`` scaled to sum to ``total``, none above 1 (the excess spread over the rest)."""
    probabilities, fixed = [0.0] * len(weights), set()
    while True:
        free = [i for i in range(len(weights)) if i not in fixed]
        mass = math.fsum(weights[i] for i in free)
        left = total - len(fixed)
        if mass <= 0 or left <= 0:
            return probabilities
        scale = left / mass
        over = [i for i in free if weights[i] * scale >= 1.0]
        if not over:
            for i in free:
                probabilities[i] = weights[i] * scale
            return probabilities
        for i in over:
            probabilities[i] = 1.0
            fixed.add(i)


def draw(probabilities: list[float], seed: int) -> list[bool]:
    """Each scenario drawn on its own with its probability (Poisson sampling), the same for the same seed."""
    chance = random.Random(seed)
    return [chance.random() < p for p in probabilities]


PPI_SCHEMA = {"run_id": pl.String, "domain": pl.String, "judged": pl.Int64, "labels": pl.Int64,
              "judge_rate": pl.Float64, "labels_rate": pl.Float64, "labels_ci_low": pl.Float64,
              "labels_ci_high": pl.Float64, "corrected_rate": pl.Float64, "corrected_ci_low": pl.Float64,
              "corrected_ci_high": pl.Float64, "ppi_rate": pl.Float64, "ppi_ci_low": pl.Float64,
              "ppi_ci_high": pl.Float64, "ppi_method": pl.String, "ppi_tuning": pl.Float64}


def _rates_row(run_id: str, domain: str, group: pl.DataFrame) -> dict:
    """One run's (and domain's) judge-only, labels-only, Rogan-Gladen and prediction-powered rates."""
    judge = [float(v) for v in group["judge_passed"]]
    people = group["people_passed"].to_list()
    labelled = [(float(y), f) for y, f in zip(people, judge, strict=True) if y is not None]
    passed = sum(y for y, _ in labelled)
    low_high = wilson(int(passed), len(labelled))
    both = Labels(*(sum(1 for y, f in labelled if (y, f) == pair) for pair in ((1, 1), (1, 0), (0, 0), (0, 1))))
    corrected = rogan_gladen(int(sum(judge)), len(judge), both)
    if group["run_drawn"].any():  # an active draw: its labels, weighted by their chance
        drawn = group["probability"].to_list()
        estimate = active_rate(judge, [y if p is not None else None for y, p in zip(people, drawn, strict=True)],
                               drawn)
        method = "active"
    else:
        unlabelled = [f for y, f in zip(people, judge, strict=True) if y is None]
        estimate = ppi_rate([y for y, _ in labelled], [f for _, f in labelled], unlabelled)
        method = "ppi++"
    return {"run_id": run_id, "domain": domain, "judged": len(judge), "labels": len(labelled),
            "judge_rate": sum(judge) / len(judge) if judge else None, "labels_rate": low_high[0],
            "labels_ci_low": low_high[1], "labels_ci_high": low_high[2], "corrected_rate": corrected.rate,
            "corrected_ci_low": corrected.ci_low, "corrected_ci_high": corrected.ci_high,
            "ppi_rate": estimate.rate, "ppi_ci_low": estimate.ci_low, "ppi_ci_high": estimate.ci_high,
            "ppi_method": method if estimate.rate is not None else None, "ppi_tuning": estimate.tuning}


def ppi_rates(verdicts: pl.DataFrame) -> pl.DataFrame:
    """Per run, the whole run first and then each domain: JUDGE_PASSED's rate from the judge alone,
    from people's labels alone (Wilson), corrected by Rogan-Gladen and prediction-powered (PPI++, or
    the active estimator where the run's labels were drawn with a known chance), each with its 95%
    interval (``verdicts``: queries/ppi_verdicts.sql rows)."""
    rows = []
    for (run_id,), run in verdicts.group_by("run_id", maintain_order=True):
        rows.append(_rates_row(run_id, "(all)", run))
        rows += [_rates_row(run_id, domain, group)
                 for (domain,), group in sorted(run.group_by("domain"), key=lambda g: g[0][0])]
    return pl.DataFrame(rows, schema=PPI_SCHEMA)
