"""Each success signal's computation, a Polars expression over ``scenarios`` columns and a policy's
``eff_*`` columns (the flags a scenario is scored under); its declaration in ``registry.SIGNALS``
names it. Each is a nullable Boolean (null: not applicable) or, for the two pass rates, a nullable
Float64; the rules are run-format.md's (§ numbers below). Imports only Polars."""

from __future__ import annotations

import polars as pl

col = pl.col


def action_match() -> pl.Expr:
    """``is_action_match``: N/A without a reference, False without a prediction (§7)."""
    strict = col("eff_strict_match") | col("disallow_extra_items")
    count_mismatch = col("action_reference_items").ne_missing(col("action_prediction_items"))
    return (
        pl.when(~col("has_reference")).then(None)
        .when(~col("has_prediction")).then(False)
        .when(strict & count_mismatch).then(False)
        .otherwise(col("action_match_lenient"))
    )


def db_state_match() -> pl.Expr:
    """Expected hash vs the agent-side hash; a missing actual hash is False, never N/A (§8).

    Sources without hashes (tau2's ``db_check``) bring their own verdict.
    """
    return pl.when(col("expected_db_hash").is_null()).then(col("db_match_recorded")).otherwise(
        col("expected_db_hash").eq_missing(col("actual_db_hash")))


def db_state_assertion_pass_rate() -> pl.Expr:
    return pl.when(col("dbsa_total") > 0).then(col("dbsa_passed") / col("dbsa_total"))


def judge_score() -> pl.Expr:
    """The judge's score, only when the judge counts under the policy."""
    return pl.when(col("eff_judge_enabled")).then(col("judge_score"))


def nl_assertion_pass_rate() -> pl.Expr:
    """Present when the judge ran, counts, and returned a non-empty verdict list (§3 key 19)."""
    return pl.when(col("eff_judge_enabled") & (col("nl_total") > 0)).then(col("nl_passed") / col("nl_total"))


def judge_passed() -> pl.Expr:
    """``judge_score >= threshold`` (inclusive), when a score and a threshold exist (§10). A NaN score
    (``float("nan")`` of a judge's reply) fails, as Python compares it; Polars orders NaN above all."""
    return pl.when(judge_score().is_nan()).then(False).otherwise(judge_score() >= col("eff_judge_threshold"))


# The runner's voluntary end, tau2's two normal terminations and an Inspect AI sample that ran to its
# end (anything else is premature: an error, a limit, a timeout).
CLEAN_STOP_REASONS = ("[EXIT]", "agent_stop", "user_stop", "completed")


def clean_exit() -> pl.Expr:
    return col("stop_reason").is_in(CLEAN_STOP_REASONS)


def communicate() -> pl.Expr:
    """tau2's COMMUNICATE: every communicate check met; not applicable without checks."""
    return pl.when(col("communicate_total") > 0).then(col("communicate_passed") == col("communicate_total"))
