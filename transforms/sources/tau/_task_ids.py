"""Warnings on the task ids a tau2 results file claims for its simulations."""

from __future__ import annotations

import polars as pl

from scorelake.transforms.sources.tau._read import UNRESOLVED_SUFFIX


def task_id_warnings(scenarios: pl.LazyFrame) -> dict[str, str]:
    """Per run, a line on the simulations whose task id contradicts their task definition."""
    counts = scenarios.group_by("run_id").agg(
        pl.len().alias("total"), pl.col("task_id_claimed").is_not_null().sum().alias("contradicted"),
        pl.col("task_id").str.ends_with(UNRESOLVED_SUFFIX).sum().alias("unresolved"),
    ).filter(pl.col("contradicted") > 0).sort("run_id").collect()
    return {r["run_id"]: f"{r['contradicted']} of {r['total']} simulations carry a task_id that contradicts their "
                         f"task definition: {r['contradicted'] - r['unresolved']} recovered from their checks, "
                         f"{r['unresolved']} unresolved (pass^k groups by the recovered id; see task_id_claimed)"
            for r in counts.iter_rows(named=True)}
