"""A judge's pass rate corrected by people's labels (Rogan-Gladen), with a 95% interval that carries
the labels' own uncertainty (the delta method).

The judge's sensitivity (of the scenarios people passed, the share it passed) and specificity (of
those people failed, the share it failed), measured on the labelled sample, turn its observed pass
rate ``p`` into an estimate of the rate people would give: ``(p + Sp - 1) / (Se + Sp - 1)``, clipped
to [0, 1]. Its variance, the three estimates independent: ``(Var p + pi^2 Var Se + (1 - pi)^2 Var Sp)
/ (Se + Sp - 1)^2``, each a binomial variance. Undefined (None) without labels of both kinds, or
when the judge does no better than chance (``Se + Sp <= 1``), each said in its ``note``. An
estimate at 0 or 1 (every label one way: one label of each kind, say) has no binomial variance of
its own; its variance is taken at the Agresti-Coull estimate ``(x + 2) / (n + 4)``, so that a few
labels read as the uncertainty they are, not as certainty. A correction outside [0, 1] is clipped,
and its note says from what. Below ``MIN_LABELS`` labels of either kind the rate has no interval
(it spanned [0%, 100%]): the note says too few, and how many there are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

from scorelake.transforms.analysis._stats import Z95

MIN_LABELS = 10  # labels people passed, and as many failed, before the corrected rate has an interval


@dataclass(frozen=True)
class Labels:
    """The judge's verdicts against people's on the labelled scenarios."""

    both_pass: int  # people pass, the judge passes
    judge_fails: int  # people pass, the judge fails
    both_fail: int  # people fail, the judge fails
    judge_passes: int  # people fail, the judge passes

    @property
    def count(self) -> int:
        return self.both_pass + self.judge_fails + self.both_fail + self.judge_passes

    @property
    def sensitivity(self) -> float | None:
        positives = self.both_pass + self.judge_fails
        return self.both_pass / positives if positives else None

    @property
    def specificity(self) -> float | None:
        negatives = self.both_fail + self.judge_passes
        return self.both_fail / negatives if negatives else None


@dataclass(frozen=True)
class Corrected:
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    note: str | None = None  # why there is no rate, or that it was clipped


def _binomial_variance(successes: int, n: int) -> float:
    """``p (1 - p) / n`` at the estimate, or at the Agresti-Coull one where the estimate is 0 or 1."""
    p = successes / n
    if successes in (0, n):
        p = (successes + 2) / (n + 4)
    return p * (1 - p) / n


def rogan_gladen(passed: int, total: int, labels: Labels) -> Corrected:
    """The corrected pass rate of ``passed`` of ``total`` judge verdicts, given ``labels``."""
    se, sp = labels.sensitivity, labels.specificity
    if not total:
        return Corrected(None, None, None, "no judged scenario")
    if se is None or sp is None:
        return Corrected(None, None, None, f"no label people {'passed' if se is None else 'failed'}")
    positives, negatives = labels.both_pass + labels.judge_fails, labels.both_fail + labels.judge_passes
    if se + sp <= 1:
        return Corrected(None, None, None, f"the judge does no better than chance on its labels "
                                           f"(sensitivity + specificity = {se + sp:.2f}, at most 1)")
    p, youden = passed / total, se + sp - 1
    raw = (p + sp - 1) / youden
    rate = min(1.0, max(0.0, raw))
    variance = (_binomial_variance(passed, total) + rate ** 2 * _binomial_variance(labels.both_pass, positives)
                + (1 - rate) ** 2 * _binomial_variance(labels.both_fail, negatives)) / youden ** 2
    half = Z95 * math.sqrt(variance)
    note = None if raw == rate else f"clipped from {raw * 100:.1f}%"
    if min(positives, negatives) < MIN_LABELS:
        few = (f"too few labels for an interval: people passed {positives} and failed {negatives} "
               f"(it takes {MIN_LABELS} of each)")
        return Corrected(rate, None, None, few + (f"; {note}" if note else ""))
    return Corrected(rate, max(0.0, rate - half), min(1.0, rate + half), note)


def with_calibration(rates: pl.DataFrame, labels: pl.DataFrame, by: str) -> pl.DataFrame:
    """``rates`` (``rates_by_domain`` or ``rates_by_signal`` rows) with JUDGE_PASSED's corrected rate
    beside each row that has one, from each run's ``labels`` (queries/calibration_labels.sql)."""
    of_run = {r["run_id"]: Labels(r["both_pass"], r["judge_fails"], r["both_fail"], r["judge_passes"])
              for r in labels.iter_rows(named=True)}
    passed, total = ("judge_passed_passed", "judge_passed_total") if by == "domain" else ("passed", "total")
    rows = []
    for r in rates.iter_rows(named=True):
        mine = of_run.get(r["run_id"], Labels(0, 0, 0, 0))
        judged = by == "domain" or r["signal"] == "judge_passed"
        fixed = rogan_gladen(r[passed] or 0, r[total] or 0, mine) if judged else Corrected(None, None, None)
        rows.append({"judge_labels": mine.count if judged else None,
                     "judge_sensitivity": mine.sensitivity if judged else None,
                     "judge_specificity": mine.specificity if judged else None,
                     "judge_passed_corrected": fixed.rate, "judge_passed_corrected_ci_low": fixed.ci_low,
                     "judge_passed_corrected_ci_high": fixed.ci_high, "judge_passed_corrected_note": fixed.note})
    return pl.concat([rates, pl.DataFrame(rows, schema={
        "judge_labels": pl.Int64, "judge_sensitivity": pl.Float64, "judge_specificity": pl.Float64,
        "judge_passed_corrected": pl.Float64, "judge_passed_corrected_ci_low": pl.Float64,
        "judge_passed_corrected_ci_high": pl.Float64, "judge_passed_corrected_note": pl.String})],
        how="horizontal")
