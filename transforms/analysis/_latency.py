"""How two runs' response latency differs: per domain the difference of medians with a seeded
bootstrap 95% interval, and the scenarios that slowed most. In Polars alone: numpy is no dependency."""

from __future__ import annotations

import polars as pl

RESAMPLES = 1000
MAX_VALUES = 5000  # per run and domain, drawn at random (seeded) beyond that: the interval stays cheap at any size
SLOWED = 10  # scenarios listed as slowed most

LATENCY_SCHEMA = {"domain": pl.String, "exchanges_a": pl.Int64, "exchanges_b": pl.Int64, "median_a_ms": pl.Float64,
                  "median_b_ms": pl.Float64, "delta_ms": pl.Float64, "delta_ci_low_ms": pl.Float64,
                  "delta_ci_high_ms": pl.Float64, "p95_a_ms": pl.Float64, "p95_b_ms": pl.Float64}


def _runner_quantile(values: pl.Series, q: float) -> float:
    """The runner's percentile: the sorted values indexed at int(n * q)."""
    return float(values.sort()[int(len(values) * q)])


def _bootstrap_medians(values: pl.Series, seed: int) -> pl.Series:
    """RESAMPLES medians, each of a resample of ``values`` (drawn with replacement, seeded)."""
    if len(values) > MAX_VALUES:
        values = values.sample(MAX_VALUES, seed=seed)
    drawn = values.sample(RESAMPLES * len(values), with_replacement=True, seed=seed + 1)
    return (pl.DataFrame({"value": drawn}).with_row_index("i")
            .group_by(pl.col("i") // len(values), maintain_order=True).agg(pl.col("value").median())["value"])


def latency_change(rows: pl.DataFrame, run_a: str, run_b: str, scenarios: list[str], seed: int = 0) -> tuple[
        pl.DataFrame, pl.DataFrame]:
    """``rows``: queries/compare_latency.sql rows; ``scenarios``: those compared (like with like).
    Per domain and (all): each run's median and p95, the difference of medians B - A and its bootstrap
    95% interval; and the scenarios whose median slowed most."""
    kept = rows.filter(pl.col("scenario_name").is_in(scenarios) & pl.col("latencies_ms").is_not_null())
    out = []
    domains = [("(all)", kept), *sorted(kept.group_by("domain"), key=lambda g: g[0][0])]
    for domain, group in domains:
        domain = domain if isinstance(domain, str) else domain[0]
        a, b = (group.filter(pl.col("run_id") == run)["latencies_ms"].explode().drop_nulls().cast(pl.Float64)
                for run in (run_a, run_b))
        if not len(a) or not len(b):
            continue
        boot = _bootstrap_medians(b, seed + 2) - _bootstrap_medians(a, seed)
        out.append({"domain": domain, "exchanges_a": len(a), "exchanges_b": len(b), "median_a_ms": a.median(),
                    "median_b_ms": b.median(), "delta_ms": b.median() - a.median(),
                    "delta_ci_low_ms": boot.quantile(0.025, "linear"),
                    "delta_ci_high_ms": boot.quantile(0.975, "linear"),
                    "p95_a_ms": _runner_quantile(a, 0.95), "p95_b_ms": _runner_quantile(b, 0.95)})
    change = pl.DataFrame(out, schema=LATENCY_SCHEMA)
    change = pl.concat([change.filter(pl.col("domain") != "(all)"), change.filter(pl.col("domain") == "(all)")])
    per = kept.select("run_id", "scenario_name", "domain", "p50_ms")
    slowed = (per.filter(pl.col("run_id") == run_a).drop("run_id").rename({"p50_ms": "p50_a_ms"})
              .join(per.filter(pl.col("run_id") == run_b).select("scenario_name", pl.col("p50_ms").alias("p50_b_ms")),
                    on="scenario_name")
              .with_columns(slower_ms=pl.col("p50_b_ms") - pl.col("p50_a_ms"))
              .filter(pl.col("slower_ms") > 0).sort(["slower_ms", "scenario_name"], descending=[True, False]).head(SLOWED))
    return change, slowed
