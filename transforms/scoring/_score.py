"""A set of scenarios scored under a policy: its ``scores`` rows and their ``rate_counts``."""

from __future__ import annotations

import polars as pl

from scorelake.transforms.columns import SCHEMAS
from scorelake.transforms.scoring._policy import Policy
from scorelake.transforms.scoring._rollup import SCENARIO_FACTS, rate_counts
from scorelake.transforms.scoring._signals import as_scores, with_scores

_SCORED_COLUMNS = list(dict.fromkeys([*SCHEMAS["scores"], *SCENARIO_FACTS]))


def score_and_count(scenarios: pl.LazyFrame, policy: Policy, reviews_version: int | None = None,
                    reviews: pl.LazyFrame | None = None) -> dict[str, pl.DataFrame]:
    """The ``scores`` rows of ``scenarios`` under ``policy`` and their ``rate_counts``, in one pass
    (``reviews``: the review columns of those reviewed, under a policy that takes reviews)."""
    # Collected once, only the columns the two tables read: left to collect_all, a plan that joins
    # (reviews) would be scored twice, once per table.
    scored = with_scores(scenarios, policy, reviews_version, reviews).select(_SCORED_COLUMNS).collect().lazy()
    scores, counts = pl.collect_all([scored.pipe(as_scores), rate_counts(scored)])
    return {"scores": scores, "rate_counts": counts}  # written in this order: see rescore
