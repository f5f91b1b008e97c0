"""Comparing two runs: per-domain deltas with intervals, flipped scenarios, exact McNemar."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from scorelake.transforms.analysis._stats import McNemar, mcnemar_exact, newcombe_interval


@dataclass(frozen=True)
class Comparison:
    run_a: str
    run_b: str
    deltas: pl.DataFrame  # domain, rate_a/ci, rate_b/ci, delta and its interval
    fixed: list[str]  # failed in A, passed in B
    broken: list[str]  # passed in A, failed in B
    paired: int
    mcnemar: McNemar


def delta_text(row: dict, missing: str) -> tuple[str, str]:
    """A ``deltas`` row's change in points and its 95% interval, as shown to a person."""
    if row["delta"] is None:
        return missing, missing
    return (f"{row['delta'] * 100:+.1f} pts",
            f"[{row['delta_ci_low'] * 100:+.1f}, {row['delta_ci_high'] * 100:+.1f}]")


def compare(rates: pl.DataFrame, flips: pl.DataFrame, run_a: str, run_b: str) -> Comparison:
    """``rates``: queries/compare_rates.sql rows; ``flips``: queries/compare_flips.sql rows."""
    side = lambda run, tag: rates.filter(pl.col("run_id") == run).select(  # noqa: E731
        "domain", *(pl.col(c).alias(f"{c}_{tag}") for c in ("passed", "total", "rate", "ci_low", "ci_high")))
    joined = side(run_a, "a").join(side(run_b, "b"), on="domain", how="full", coalesce=True, maintain_order="left")
    rows = []
    for r in joined.iter_rows(named=True):
        low = high = delta = None
        if r["rate_a"] is not None and r["rate_b"] is not None:
            delta = r["rate_b"] - r["rate_a"]
            low, high = newcombe_interval(r["rate_a"], r["ci_low_a"], r["ci_high_a"],
                                          r["rate_b"], r["ci_low_b"], r["ci_high_b"])
        rows.append({**r, "delta": delta, "delta_ci_low": low, "delta_ci_high": high})
    deltas = pl.DataFrame(rows, schema={**joined.schema, "delta": pl.Float64, "delta_ci_low": pl.Float64,
                                        "delta_ci_high": pl.Float64})
    fixed = flips.filter(pl.col("flip") == "fixed")["scenario_name"].to_list()
    broken = flips.filter(pl.col("flip") == "broken")["scenario_name"].to_list()
    return Comparison(run_a, run_b, deltas, fixed, broken, flips.height, mcnemar_exact(len(broken), len(fixed)))
