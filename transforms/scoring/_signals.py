"""The declared signals (``registry.SIGNALS``, each with its expression), the composite and the stall
override as Polars expressions.

Inputs are ``scenarios`` columns plus the ``eff_*`` columns of a ``Policy`` (the flags a
scenario is scored under); the composite rules are run-format.md §5.
``with_scores`` composes them with ``.pipe``; ``as_scores`` shapes the result as the ``scores`` table.
"""

from __future__ import annotations

import polars as pl

from scorelake.transforms.columns import SCHEMAS
from scorelake.transforms.registry import BY_NAME, SIGNALS
from scorelake.transforms.scoring._policy import Policy
from scorelake.transforms.scoring._reviews import split_reviewed, with_reviewed_composite, with_reviewed_signals
from scorelake.transforms.scoring._signal import Signal
from scorelake.transforms.signal_rules import judge_score

col = pl.col


def agent_turns() -> pl.Expr:
    """``token_usage.agent.n_calls``, else assistant messages in llm_context.json (§5.4)."""
    return pl.coalesce(col("agent_n_calls"), col("agent_context_messages"))


def stalled() -> pl.Expr:
    minimum = col("eff_min_agent_turns")
    return ((minimum > 0) & (agent_turns() < minimum)).fill_null(False)


def check(signal: Signal) -> pl.Expr:
    """Upstream ``_signal_passes``: True / False / null (not applicable); a rate passes only at 1.0."""
    declared = BY_NAME[signal]
    value = col(declared.value)
    return value >= 1.0 if declared.pass_rate else value


def _listed(signal: Signal) -> str:
    return f"_listed_{signal}"


def _check(signal: Signal) -> str:
    return f"_check_{signal}"


def with_checks(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Each signal's check and whitelist membership, computed once (the buckets below reuse them)."""
    return frame.with_columns(
        *(check(s).alias(_check(s)) for s in Signal),
        *(col("eff_success_signals").list.contains(str(s)).alias(_listed(s)) for s in Signal),
    )


# Every subset of the six signals as its list of names (in enum order), keyed by bit mask; as Series
# made once (given a dict, Polars builds a Series per list on every call: half a session's scoring).
_MASKS = pl.Series(range(1 << len(Signal)))
_SUBSETS = pl.Series([[str(s) for i, s in enumerate(Signal) if mask >> i & 1] for mask in _MASKS],
                     dtype=pl.List(pl.String))


# The signals upstream's breakdowns can name (the runner's and tau2's)
UPSTREAM = frozenset(Signal(s.name) for s in SIGNALS if s.upstream)


def _bucket(keep, among=frozenset(Signal)) -> pl.Expr:
    """The signals (``among`` them) for which ``keep(listed, check)`` holds, as a list of names.

    A bit mask looked up in ``_SUBSETS``: twenty times faster than assembling lists row by row.
    """
    bits = [keep(col(_listed(s)), col(_check(s))).fill_null(False).cast(pl.UInt8) * (1 << i)
            for i, s in enumerate(Signal) if s in among]
    return pl.sum_horizontal(bits).replace_strict(pl.lit(_MASKS).implode(), pl.lit(_SUBSETS).implode(),
                                                  return_dtype=pl.List(pl.String))


def breakdown() -> list[pl.Expr]:
    """``success_breakdown``: whitelisted signals by verdict, and non-whitelisted ones that have a value;
    a signal that is not upstream's only where whitelisted (upstream's breakdowns never name it)."""
    return [
        _bucket(lambda listed, c: listed & c).alias("passed"),
        _bucket(lambda listed, c: listed & ~c).alias("failed"),
        _bucket(lambda listed, c: listed & c.is_null()).alias("not_applicable"),
        _bucket(lambda listed, c: ~listed & c.is_not_null(), among=UPSTREAM).alias("excluded"),
    ]


def _any_failed(signals) -> pl.Expr:
    return pl.any_horizontal([(col(_listed(s)) & ~col(_check(s))).fill_null(False) for s in signals])


def is_successful() -> pl.Expr:
    """Strict AND over applicable whitelisted signals; null ("N/A") when none applies; False when stalled."""
    applicable = pl.any_horizontal([col(_listed(s)) & col(_check(s)).is_not_null() for s in Signal])
    return (
        pl.when(col("stalled")).then(False)
        .when(~applicable).then(None)
        .otherwise(~_any_failed(Signal))
    )


def is_task_successful() -> pl.Expr:
    """Same conjunction with ``clean_exit`` dropped from the failed set; False when stalled."""
    return (
        pl.when(col("stalled")).then(False)
        .when(col("is_successful").is_null()).then(None)
        .otherwise(~_any_failed(s for s in Signal if s is not Signal.CLEAN_EXIT))
    )


def with_signals(frame: pl.LazyFrame) -> pl.LazyFrame:
    return frame.with_columns(
        *(s.expression().alias(s.value) for s in SIGNALS),
        judge_score().alias("judge_score"),
        agent_turns().alias("agent_turns"),
        stalled().alias("stalled"),
    )


def reward() -> pl.Expr:
    """tau2's reward recomputed: the product over the basis of 0/1 components, i.e. the composite
    (whose whitelist is the basis plus the termination gate, CLEAN_EXIT), for sources with a basis."""
    return pl.when(col("reward_basis").is_not_null()).then(col("is_successful").cast(pl.Float64))


def with_composite(frame: pl.LazyFrame) -> pl.LazyFrame:
    return (frame.pipe(with_checks)
            .with_columns(*breakdown(), is_successful().alias("is_successful"))
            .with_columns(is_task_successful().alias("is_task_successful"), reward().alias("reward")))


def _only_if(applies: bool, step):
    return step if applies else (lambda frame: frame)


def _scored(scenarios: pl.LazyFrame, policy: Policy, reviews_version: int | None, with_reviews: bool) -> pl.LazyFrame:
    return (
        scenarios.with_columns(policy.effective())
        .pipe(with_signals)
        .pipe(_only_if(with_reviews, with_reviewed_signals))
        .pipe(with_composite)
        .pipe(_only_if(with_reviews, with_reviewed_composite))
        .with_columns(
            pl.lit(reviews_version, pl.Int64).alias("reviews_version"),
            *(() if with_reviews else (pl.lit(None, pl.String).alias("unreviewed"),)),
            pl.lit(policy.id).alias("policy_id"),
            pl.lit(policy.scorer_version).alias("scorer_version"),
            col("eff_judge_enabled").alias("judge_enabled"),
            col("eff_judge_threshold").alias("judge_threshold"),
            col("eff_strict_match").alias("strict_match"),
            col("eff_min_agent_turns").alias("min_agent_turns"),
            col("eff_success_signals").alias("success_signals"),
        )
    )


def with_scores(scenarios: pl.LazyFrame, policy: Policy, reviews_version: int | None = None,
                reviews: pl.LazyFrame | None = None) -> pl.LazyFrame:
    """``scenarios`` rows with every ``scores`` column added under ``policy`` (their own columns kept).
    Under a policy that takes reviews, ``reviews`` (``scoring.review_columns``) holds the reviews of
    the scenarios that have any, version ``reviews_version`` of them: those scenarios are scored with
    their reviews, the rest (most, in a large store) by the plain path, as without reviews."""
    if not policy.reviews or reviews is None:
        return _scored(scenarios, policy, reviews_version, with_reviews=False)
    plain, reviewed = split_reviewed(scenarios, reviews)
    return pl.concat([_scored(plain, policy, reviews_version, with_reviews=False),
                      _scored(reviewed, policy, reviews_version, with_reviews=True)], how="diagonal")


def as_scores(scored: pl.LazyFrame) -> pl.LazyFrame:
    """Shaped as the ``scores`` table."""
    return scored.select([pl.col(name).cast(dtype) for name, dtype in SCHEMAS["scores"].items()])

