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
    domains_of_flips: dict[str, str]  # flipped scenario -> its domain
    paired: int
    mcnemar: McNemar

    def as_json(self) -> dict:
        """The comparison as plain data (``--format json``)."""
        return {"run_a": self.run_a, "run_b": self.run_b, "domains": self.deltas.to_dicts(), "fixed": self.fixed,
                "broken": self.broken, "paired": self.paired,
                "mcnemar": {"broken": self.mcnemar.broken, "fixed": self.mcnemar.fixed,
                            "p_value": self.mcnemar.p_value}}

    def as_table(self) -> pl.DataFrame:
        """Everything in one table (for CSV): a row per domain with its rates, delta and the
        scenarios that flipped each way (``;``-joined); the paired count and the McNemar test, which
        are run-wide, on the ``(all)`` row."""
        flips = pl.DataFrame({"scenario_name": self.fixed + self.broken,
                              "flip": ["fixed"] * len(self.fixed) + ["broken"] * len(self.broken)},
                             schema={"scenario_name": pl.String, "flip": pl.String})
        domains = self.domains_of_flips
        per_domain = (flips.with_columns(domain=pl.col("scenario_name").replace_strict(domains, default=None, return_dtype=pl.String))
                      .group_by("domain").agg(fixed=pl.col("scenario_name").filter(pl.col("flip") == "fixed"),
                                              broken=pl.col("scenario_name").filter(pl.col("flip") == "broken")))
        whole = pl.col("domain") == "(all)"
        return (self.deltas.join(per_domain, on="domain", how="left", maintain_order="left")
                .with_columns(pl.when(whole).then(pl.lit(self.fixed)).otherwise(pl.col("fixed")).alias("fixed"),
                              pl.when(whole).then(pl.lit(self.broken)).otherwise(pl.col("broken")).alias("broken"))
                .with_columns(pl.col("fixed", "broken").list.join(";").fill_null(""),
                              pl.when(whole).then(self.paired).alias("paired"),
                              pl.when(whole).then(self.mcnemar.broken).alias("mcnemar_broken"),
                              pl.when(whole).then(self.mcnemar.fixed).alias("mcnemar_fixed"),
                              pl.when(whole).then(self.mcnemar.p_value).alias("mcnemar_p_value")))


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
    flipped = flips.filter(pl.col("flip").is_not_null())
    return Comparison(run_a, run_b, deltas, fixed, broken, dict(zip(flipped["scenario_name"], flipped["domain"])),
                      flips.height, mcnemar_exact(len(broken), len(fixed)))
