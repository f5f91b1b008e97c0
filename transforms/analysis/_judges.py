"""Comparing two judges on the same stored inputs: agreement on JUDGE_PASSED and on each NL
assertion per domain, Cohen's kappa with a 95% interval, the mean score difference, the flips."""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

Z95 = 1.959963984540054


def cohen_kappa(both: int, only_a: int, only_b: int, neither: int) -> tuple[float | None, float | None, float | None]:
    """Cohen's kappa of two raters' pass/fail and its 95% interval (the large-sample standard error
    sqrt(p_o (1 - p_o) / (n (1 - p_e)^2)), clipped to [-1, 1]); None where it is undefined (no pairs,
    or both raters constant and equal: chance agreement 1)."""
    n = both + only_a + only_b + neither
    if n == 0:
        return None, None, None
    observed = (both + neither) / n
    chance = ((both + only_a) * (both + only_b) + (neither + only_b) * (neither + only_a)) / n ** 2
    if chance >= 1:
        return None, None, None
    kappa = (observed - chance) / (1 - chance)
    se = math.sqrt(observed * (1 - observed) / (n * (1 - chance) ** 2))
    return kappa, max(-1.0, kappa - Z95 * se), min(1.0, kappa + Z95 * se)


@dataclass(frozen=True)
class JudgeComparison:
    judge_a: str
    judge_b: str
    agreement: pl.DataFrame  # domain, kind (judge_passed | nl_assertion), pairs, counts, agreement, kappa, interval
    flips: pl.DataFrame  # run_id, scenario_name, domain, kind, assertion_index, a, b (passed), score_a, score_b

    def as_json(self) -> dict:
        """The comparison as plain data (``--format json``)."""
        return {"judge_a": self.judge_a, "judge_b": self.judge_b, "agreement": self.agreement.to_dicts(),
                "flips": self.flips.to_dicts()}


def _agreement(pairs: pl.DataFrame, kind: str) -> list[dict]:
    """Per domain and over all: the 2x2 counts of the pairs where neither judge failed."""
    answered = pairs.filter(~pl.col("error_a") & ~pl.col("error_b")).drop_nulls(["passed_a", "passed_b"])
    rows = []
    for domain, group in [("(all)", answered), *sorted(answered.group_by("domain"), key=lambda g: g[0][0])]:
        domain = domain if isinstance(domain, str) else domain[0]
        a, b = group["passed_a"], group["passed_b"]
        counts = [int((a & b).sum()), int((a & ~b).sum()), int((~a & b).sum()), int((~a & ~b).sum())]
        kappa, low, high = cohen_kappa(*counts)
        errored = pairs if domain == "(all)" else pairs.filter(pl.col("domain") == domain)
        diff = (group["score_b"] - group["score_a"]).mean() if "score_a" in group.columns and group.height else None
        rows.append({"domain": domain, "kind": kind, "pairs": group.height,
                     "judge_errors": int((errored["error_a"] | errored["error_b"]).sum()),
                     "both_pass": counts[0], "only_a": counts[1], "only_b": counts[2], "neither": counts[3],
                     "agreement": (counts[0] + counts[3]) / group.height if group.height else None,
                     "kappa": kappa, "kappa_ci_low": low, "kappa_ci_high": high, "mean_score_diff": diff})
    return rows


def compare_judges(judge_a: str, judge_b: str, pairs: pl.DataFrame, nl_pairs: pl.DataFrame) -> JudgeComparison:
    """``pairs``: queries/judge_pairs.sql rows; ``nl_pairs``: queries/judge_nl_pairs.sql rows."""
    rows = _agreement(pairs, "judge_passed") + (_agreement(nl_pairs, "nl_assertion") if nl_pairs.height else [])
    agreement = pl.DataFrame(rows, schema={
        "domain": pl.String, "kind": pl.String, "pairs": pl.Int64, "judge_errors": pl.Int64, "both_pass": pl.Int64,
        "only_a": pl.Int64, "only_b": pl.Int64, "neither": pl.Int64, "agreement": pl.Float64, "kappa": pl.Float64,
        "kappa_ci_low": pl.Float64, "kappa_ci_high": pl.Float64, "mean_score_diff": pl.Float64})
    flipped = lambda df: df.filter(pl.col("passed_a") != pl.col("passed_b"))  # noqa: E731
    verdict = flipped(pairs).select("run_id", "scenario_name", "domain", pl.lit("judge_passed").alias("kind"),
                                    pl.lit(None, pl.Int64).alias("assertion_index"), "passed_a", "passed_b",
                                    "score_a", "score_b", "error_a", "error_b")
    nl = flipped(nl_pairs).select("run_id", "scenario_name", "domain", pl.lit("nl_assertion").alias("kind"),
                                  "assertion_index", "passed_a", "passed_b", pl.lit(None, pl.Float64).alias("score_a"),
                                  pl.lit(None, pl.Float64).alias("score_b"), "error_a", "error_b")
    flips = pl.concat([verdict, nl]).sort("run_id", "scenario_name", "kind", "assertion_index", nulls_last=False)
    return JudgeComparison(judge_a, judge_b, agreement, flips)
