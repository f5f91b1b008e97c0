"""Rate counts: a run's scores summed per policy and domain, written beside the scores.

Every rate view adds these up, so a question over a million scenarios reads a few thousand rows.
The rules are all_summary.txt's: stalled scenarios count as failures in the composite and task
rates and are skipped in every per-signal rate; the two assertion signals count predicates and
assertions, not scenarios.
"""

from __future__ import annotations

import polars as pl

from scorelake.transforms.columns import SCHEMAS
from scorelake.transforms.registry import SIGNALS

col = pl.col
# Facts of the scenario the counts need beside its scores (the rest of the row is not read).
SCENARIO_FACTS = ("domain", *(item for s in SIGNALS if s.pass_rate for item in s.items), "agent_prompt_tokens",
                  "agent_completion_tokens", "user_prompt_tokens", "user_completion_tokens")

def _counted(expr: pl.Expr, applies: pl.Expr = pl.lit(True)) -> pl.Expr:
    """``expr`` over the scenarios that were not stalled (and where ``applies``)."""
    return expr.filter(~col("stalled") & applies)


def _tokens(side: str) -> pl.Expr:
    return (col(f"{side}_prompt_tokens").fill_null(0) + col(f"{side}_completion_tokens").fill_null(0)).sum()


def count_expressions() -> list[pl.Expr]:
    signals = []
    for s in SIGNALS:  # a pass-rate signal counts its items, a verdict its scenarios
        if s.pass_rate:
            passed, total = s.items
            signals += [_counted(col(passed), col(s.value).is_not_null()).sum().alias(f"{s.rate}_passed"),
                        _counted(col(total), col(s.value).is_not_null()).sum().alias(f"{s.rate}_total")]
        else:
            signals += [_counted(col(s.value)).sum().alias(f"{s.rate}_passed"),
                        _counted(col(s.value)).count().alias(f"{s.rate}_total")]
    return [
        pl.len().alias("scenarios"),
        col("stalled").sum().alias("stalled"),
        col("is_successful").sum().alias("success_passed"),
        col("is_successful").count().alias("success_total"),
        col("is_task_successful").sum().alias("task_passed"),
        col("is_task_successful").count().alias("task_total"),
        *signals,
        _counted(col("judge_score")).sum().alias("judge_score_sum"),
        _counted(col("judge_score")).count().alias("judge_scored"),
        _tokens("agent").alias("agent_tokens"),
        _tokens("user").alias("user_tokens"),
        col("success_signals").list.explode(keep_nulls=False, empty_as_null=False).unique().sort()
        .alias("gating_signals"),
    ]


def rate_counts(scored: pl.LazyFrame) -> pl.LazyFrame:
    """Scores rows with their ``SCENARIO_FACTS``, summed into the ``rate_counts`` table."""
    return (scored.group_by("run_id", "generation", "policy_id", "domain").agg(count_expressions())
            .select([col(name).cast(dtype) for name, dtype in SCHEMAS["rate_counts"].items()]))
