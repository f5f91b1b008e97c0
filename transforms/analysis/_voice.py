"""How two runs' voice differs, on the scenarios compared: per domain and (all), the mean overlap of
speech per scenario, the word error rate of what the agent heard (pooled over the turns paired with
what the user said: word errors over the words said in them) and the user turns it never heard,
each run's and the change."""

from __future__ import annotations

import polars as pl

VOICE_SCHEMA = {"domain": pl.String, "scenarios_a": pl.Int64, "scenarios_b": pl.Int64, "overlap_a_s": pl.Float64,
                "overlap_b_s": pl.Float64, "overlap_rise_s": pl.Float64, "wer_a": pl.Float64, "wer_b": pl.Float64,
                "wer_rise_pts": pl.Float64, "words_a": pl.Int64, "words_b": pl.Int64, "missing_a": pl.Int64,
                "missing_b": pl.Int64}


def voice_change(rows: pl.DataFrame, run_a: str, run_b: str, scenarios: list[str]) -> pl.DataFrame | None:
    """``rows``: queries/compare_voice.sql rows; ``scenarios``: those compared (like with like). None
    when neither run measured any voice (tau2, tau-bench)."""
    kept = rows.filter(pl.col("scenario_name").is_in(scenarios))
    if kept.select(pl.col("overlap_s", "user_to_agent_words").is_not_null().any()).row(0) == (False, False):
        return None
    pooled = [pl.len().alias("scenarios"), pl.col("overlap_s").mean().alias("overlap_s"),
              pl.when(pl.col("user_to_agent_words").sum() > 0)
              .then(pl.col("user_to_agent_errors").sum() / pl.col("user_to_agent_words").sum()).alias("wer"),
              pl.col("user_to_agent_words").sum().alias("words"),
              pl.col("user_to_agent_turns_missing").sum().alias("missing")]
    per = pl.concat([kept.group_by("run_id", "domain").agg(pooled),
                     kept.group_by("run_id").agg(pooled).with_columns(domain=pl.lit("(all)"))], how="diagonal")
    side = lambda run, tag: per.filter(pl.col("run_id") == run).select(
        "domain", *(pl.col(c).alias(f"{c}_{tag}") for c in ("scenarios", "overlap_s", "wer", "words", "missing")))
    joined = side(run_a, "a").join(side(run_b, "b"), on="domain", how="inner")
    out = joined.select(
        "domain", pl.col("scenarios_a").cast(pl.Int64), pl.col("scenarios_b").cast(pl.Int64),
        pl.col("overlap_s_a").alias("overlap_a_s"), pl.col("overlap_s_b").alias("overlap_b_s"),
        (pl.col("overlap_s_b") - pl.col("overlap_s_a")).alias("overlap_rise_s"),
        "wer_a", "wer_b", ((pl.col("wer_b") - pl.col("wer_a")) * 100).alias("wer_rise_pts"),
        pl.col("words_a").cast(pl.Int64), pl.col("words_b").cast(pl.Int64), pl.col("missing_a").cast(pl.Int64),
        pl.col("missing_b").cast(pl.Int64)).cast(VOICE_SCHEMA)
    return pl.concat([out.filter(pl.col("domain") != "(all)").sort("domain"), out.filter(pl.col("domain") == "(all)")])
