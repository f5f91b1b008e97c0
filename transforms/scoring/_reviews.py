"""People's verdicts in place of the signals they review, then the composite recomputed from the
signals by the runner's rules (whitelist, not applicable, stall override): pure expressions over
the scenarios, composed with ``.pipe`` by ``with_scores``.

A review of a signal as a whole sets it (a pass rate to 1.0 or 0.0, its items all passed or all
failed); a review of one NL assertion or DB predicate replaces that item's verdict and the pass
rate is recounted; a review of the composite sets ``is_successful`` and ``is_task_successful``.
"""

from __future__ import annotations

import polars as pl

from scorelake.transforms.names import SIGNALS

COMPOSITE = "is_successful"
col = pl.col
# Whole-signal review columns: review_<signal>, Boolean (null: not reviewed).
REVIEW_COLUMNS = tuple(f"review_{name}" for name in (*SIGNALS, COMPOSITE))
# Item signal -> (its pass rate column, passed items, total items).
_ITEMS = {"nl_assertion": ("nl_assertion_pass_rate", "nl_passed", "nl_total"),
          "db_state_assertion": ("db_state_assertion_pass_rate", "dbsa_passed", "dbsa_total")}
_SIGNAL_COLUMN = {"is_action_match": "is_action_match", "db_state_match": "db_state_match",
                  "judge_passed": "judge_passed", "clean_exit": "clean_exit", "communicate": "communicate"}


def review_columns(reviews: pl.LazyFrame, items: pl.LazyFrame) -> pl.LazyFrame:
    """Per reviewed scenario (run_id, scenario_name), and only those: the ``REVIEW_COLUMNS`` of its
    standing whole-signal reviews, and by how much its item reviews change its passed NL assertions
    and DB predicates. ``reviews``: run_id, scenario_name, signal, assertion, verdict; ``items``:
    each reviewed item's verdict before review (run_id, scenario_name, signal, assertion, passed)."""
    key = ["run_id", "scenario_name"]
    whole = (reviews.filter(col("assertion").is_null())
             .group_by(key).agg((col("verdict") == "pass").filter(col("signal") == name).first().alias(f"review_{name}")
                                for name in (*SIGNALS, COMPOSITE)))
    changed = (reviews.filter(col("assertion").is_not_null())
               .join(items, on=[*key, "signal", "assertion"], how="left")
               .with_columns(delta=(col("verdict") == "pass").cast(pl.Int64) - col("passed").fill_null(False).cast(pl.Int64))
               .group_by(key).agg(col("delta").filter(col("signal") == name).sum().alias(f"_delta_{name}")
                                  for name in _ITEMS))
    return whole.join(changed, on=key, how="full", coalesce=True)


def split_reviewed(scenarios: pl.LazyFrame, columns: pl.LazyFrame) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """``scenarios`` in two: those without reviews as they are, and those with ``review_columns``
    (computed by ``review_columns``), with them beside, their NL assertion and DB predicate counts
    recounted with the reviews. Scoring only the second through the review path keeps a policy
    that takes reviews nearly as fast as one that does not: few scenarios of a store are reviewed."""
    recounted = []
    for name, (_, passed, total) in _ITEMS.items():
        whole_review = col(f"review_{name}")
        recounted.append(pl.when(whole_review).then(col(total)).when(whole_review.not_()).then(0)
                         .otherwise(col(passed) + col(f"_delta_{name}").fill_null(0)).alias(passed))
    key = ["run_id", "scenario_name"]
    return (scenarios.join(columns, on=key, how="anti"),
            scenarios.join(columns, on=key, how="inner").with_columns(recounted)
            .drop(*(f"_delta_{name}" for name in _ITEMS)))


def _verdict(value: pl.Expr) -> pl.Expr:
    return pl.when(value.is_null()).then(pl.lit("not applicable")).when(value).then(pl.lit("passed")).otherwise(
        pl.lit("failed"))


def with_reviewed_signals(frame: pl.LazyFrame) -> pl.LazyFrame:
    """The signals (``with_signals``' columns) as reviewed: a review, where there is one, in place of
    the value; what each reviewed signal was before is kept in ``unreviewed`` ("judge_passed=failed;...")."""
    before = {**{name: col(column) for name, column in _SIGNAL_COLUMN.items()},
              **{name: col(rate) >= 1.0 for name, (rate, _, _) in _ITEMS.items()}}
    rates = [pl.when(col(f"review_{name}").is_not_null()).then(col(f"review_{name}").cast(pl.Float64))
             .otherwise(col(rate)).alias(rate) for name, (rate, _, _) in _ITEMS.items()]
    unreviewed = pl.concat_str([pl.when(col(f"review_{name}").is_not_null()).then(pl.lit(f"{name}=") + _verdict(value))
                                for name, value in before.items()], separator=";", ignore_nulls=True)
    return frame.with_columns(unreviewed.alias("unreviewed")).with_columns(
        *(pl.coalesce(col(f"review_{name}"), col(column)).alias(column) for name, column in _SIGNAL_COLUMN.items()),
        *rates)


def with_reviewed_composite(frame: pl.LazyFrame) -> pl.LazyFrame:
    """A review of the composite sets ``is_successful`` and ``is_task_successful`` (stalled or not)."""
    review = col(f"review_{COMPOSITE}")
    unreviewed = pl.concat_str([col("unreviewed"), pl.when(review.is_not_null()).then(
        pl.lit(f"{COMPOSITE}=") + _verdict(col("is_successful")))], separator=";", ignore_nulls=True)
    return frame.with_columns(pl.when(unreviewed != "").then(unreviewed).alias("unreviewed"),
                              pl.coalesce(review, col("is_successful")).alias("is_successful"),
                              pl.coalesce(review, col("is_task_successful")).alias("is_task_successful"))
