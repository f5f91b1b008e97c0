"""How two runs' response latency differs: per domain the difference of medians with a seeded
bootstrap 95% interval, and the scenarios that slowed most."""

from __future__ import annotations

import numpy as np
import polars as pl

RESAMPLES = 1000
MAX_VALUES = 5000  # per run and domain, drawn at random (seeded) beyond that: the interval stays cheap at any size
SLOWED = 10  # scenarios listed as slowed most

LATENCY_SCHEMA = {"domain": pl.String, "exchanges_a": pl.Int64, "exchanges_b": pl.Int64, "median_a_ms": pl.Float64,
                  "median_b_ms": pl.Float64, "delta_ms": pl.Float64, "delta_ci_low_ms": pl.Float64,
                  "delta_ci_high_ms": pl.Float64, "p95_a_ms": pl.Float64, "p95_b_ms": pl.Float64}


def _runner_quantile(values: np.ndarray, q: float) -> float:
    """The runner's percentile: the sorted values indexed at int(n * q)."""
    return float(np.sort(values)[int(len(values) * q)])


def latency_change(rows: pl.DataFrame, run_a: str, run_b: str, scenarios: list[str], seed: int = 0) -> tuple[
        pl.DataFrame, pl.DataFrame]:
    """``rows``: queries/compare_latency.sql rows; ``scenarios``: those compared (like with like).
    Per domain and (all): each run's median and p95, the difference of medians B - A and its bootstrap
    95% interval; and the scenarios whose median slowed most."""
    rng = np.random.default_rng(seed)
    kept = rows.filter(pl.col("scenario_name").is_in(scenarios) & pl.col("latencies_ms").is_not_null())
    out = []
    domains = [("(all)", kept), *sorted(kept.group_by("domain"), key=lambda g: g[0][0])]
    for domain, group in domains:
        domain = domain if isinstance(domain, str) else domain[0]
        a, b = (np.array([v for values in group.filter(pl.col("run_id") == run)["latencies_ms"].to_list()
                          for v in values], dtype=float) for run in (run_a, run_b))
        if not len(a) or not len(b):
            continue
        draw = lambda v: rng.choice(v, MAX_VALUES, replace=False) if len(v) > MAX_VALUES else v  # noqa: E731
        sa, sb = draw(a), draw(b)
        boot = (np.median(rng.choice(sb, (RESAMPLES, len(sb))), axis=1)
                - np.median(rng.choice(sa, (RESAMPLES, len(sa))), axis=1))
        low, high = np.percentile(boot, [2.5, 97.5])
        out.append({"domain": domain, "exchanges_a": len(a), "exchanges_b": len(b), "median_a_ms": float(np.median(a)),
                    "median_b_ms": float(np.median(b)), "delta_ms": float(np.median(b) - np.median(a)),
                    "delta_ci_low_ms": float(low), "delta_ci_high_ms": float(high),
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
