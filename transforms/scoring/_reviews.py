"""People's verdicts in place of the signals they review, then the composite recomputed from the
signals by the runner's rules (whitelist, not applicable, stall override): pure expressions over
the scenarios, composed with ``.pipe`` by ``with_scores``.

A review of a signal as a whole sets it (a pass rate to 1.0 or 0.0, its items all passed or all
failed); a review of one NL assertion or DB predicate replaces that item's verdict and the pass
rate is recounted; a review of the composite sets ``is_successful`` and ``is_task_successful``.
"""

from __future__ import annotations

import unicodedata

import polars as pl

from scorelake.transforms.names import SIGNALS
from scorelake.transforms.registry import SIGNALS as DECLARED

COMPOSITE = "is_successful"
col = pl.col
# Whole-signal review columns: review_<signal>, Boolean (null: not reviewed).
REVIEW_COLUMNS = tuple(f"review_{name}" for name in (*SIGNALS, COMPOSITE))
# Signals reviewed item by item too: their pass rate is recounted from their items.
_ITEMS = tuple(s for s in DECLARED if s.pass_rate)


MAX_REVIEWER_CHARS = 64
# what no name may hold: controls, format characters (zero-width spaces, direction overrides),
# private-use, surrogate and unassigned code points, line and paragraph separators
_INVISIBLE = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
_LOOKALIKE_SCRIPTS = frozenset({"LATIN", "CYRILLIC", "GREEK"})  # whose letters print alike (а, a; ο, o)


def reviewer_identity(name: str) -> str:
    """A reviewer's name as one voter: NFKC, case-folded (NFKC again after), white space runs one
    space; ``ValueError`` saying why for a name that is empty, longer than ``MAX_REVIEWER_CHARS``,
    holds an invisible or control character, or mixes Latin, Cyrillic and Greek letters (``аlice``
    with a Cyrillic ``а`` prints as ``alice``): names that print alike are one reviewer or refused."""
    for char in name.strip():
        if unicodedata.category(char) in _INVISIBLE:
            raise ValueError(f"the reviewer's name holds an invisible or control character (U+{ord(char):04X})")
    folded = " ".join(unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold()).split())
    if not folded:
        raise ValueError("the reviewer's name is empty")
    if len(folded) > MAX_REVIEWER_CHARS:
        raise ValueError(f"the reviewer's name is {len(folded)} characters: at most {MAX_REVIEWER_CHARS}")
    scripts = {unicodedata.name(char, "").split(" ")[0] for char in folded if char.isalpha()} & _LOOKALIKE_SCRIPTS
    if len(scripts) > 1:
        mixed = " and ".join(sorted(scripts)).lower()
        raise ValueError(f"the reviewer's name mixes {mixed} letters, which print alike")
    return folded


# Which verdict stands where reviewers reviewed the same key (run, scenario, signal, assertion).
REVIEW_RULES = ("latest", "majority", "adjudicated")
_KEY = ["run_id", "scenario_name", "signal", "assertion"]


def standing_verdicts(mine: pl.LazyFrame, rule: str = "latest", adjudicator: str | None = None) -> pl.LazyFrame:
    """Per key, the verdict that stands, from ``mine``: each reviewer's own standing review (rows of
    ``reviews``, one per key and reviewer, withdrawals gone). ``latest``: the latest of them;
    ``majority``: the verdict most reviewers gave (none stands on a tie); ``adjudicated``: the
    reviewers' verdict where they agree, the ``adjudicator``'s where they disagree (none stands
    until the adjudicator reviews it)."""
    latest = mine.sort("reviewed_at", "review_id").unique(_KEY, keep="last", maintain_order=True)
    if rule == "latest":
        return latest
    votes = mine.group_by(_KEY).agg((pl.col("verdict") == "pass").sum().alias("_passes"),
                                    (pl.col("verdict") == "fail").sum().alias("_fails"))
    if rule == "majority":
        decided = votes.filter(pl.col("_passes") != pl.col("_fails")).select(
            *_KEY, pl.when(pl.col("_passes") > pl.col("_fails")).then(pl.lit("pass")).otherwise(pl.lit("fail"))
            .alias("_verdict"))
        return latest.join(decided, on=_KEY, how="inner", nulls_equal=True).with_columns(
            pl.col("_verdict").alias("verdict")).drop("_verdict")
    if rule == "adjudicated":
        agreed = votes.filter((pl.col("_passes") == 0) | (pl.col("_fails") == 0)).select(_KEY)
        settled = latest.join(agreed, on=_KEY, how="inner", nulls_equal=True)
        ruled = (mine.filter(pl.col("reviewer") == adjudicator)
                 .join(agreed, on=_KEY, how="anti", nulls_equal=True))
        return pl.concat([settled, ruled], how="diagonal_relaxed")
    raise ValueError(f"review rule '{rule}': one of {', '.join(REVIEW_RULES)}")


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
               .group_by(key).agg(col("delta").filter(col("signal") == s.name).sum().alias(f"_delta_{s.name}")
                                  for s in _ITEMS))
    return whole.join(changed, on=key, how="full", coalesce=True)


def split_reviewed(scenarios: pl.LazyFrame, columns: pl.LazyFrame) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """``scenarios`` in two: those without reviews as they are, and those with ``review_columns``
    (computed by ``review_columns``), with them beside, their NL assertion and DB predicate counts
    recounted with the reviews. Scoring only the second through the review path keeps a policy
    that takes reviews nearly as fast as one that does not: few scenarios of a store are reviewed."""
    recounted = []
    for s in _ITEMS:
        (passed, total), whole_review = s.items, col(f"review_{s.name}")
        recounted.append(pl.when(whole_review).then(col(total)).when(whole_review.not_()).then(0)
                         .otherwise(col(passed) + col(f"_delta_{s.name}").fill_null(0)).alias(passed))
    key = ["run_id", "scenario_name"]
    return (scenarios.join(columns, on=key, how="anti"),
            scenarios.join(columns, on=key, how="inner").with_columns(recounted)
            .drop(*(f"_delta_{s.name}" for s in _ITEMS)))


def _verdict(value: pl.Expr) -> pl.Expr:
    return pl.when(value.is_null()).then(pl.lit("not applicable")).when(value).then(pl.lit("passed")).otherwise(
        pl.lit("failed"))


def with_reviewed_signals(frame: pl.LazyFrame) -> pl.LazyFrame:
    """The signals (``with_signals``' columns) as reviewed: a review, where there is one, in place of
    the value; what each reviewed signal was before is kept in ``unreviewed`` ("judge_passed=failed;...")."""
    def before(s) -> pl.Expr:
        return col(s.value) >= 1.0 if s.pass_rate else col(s.value)

    def reviewed(s) -> pl.Expr:
        review = col(f"review_{s.name}")
        return (pl.when(review.is_not_null()).then(review.cast(pl.Float64)).otherwise(col(s.value)) if s.pass_rate
                else pl.coalesce(review, col(s.value)))

    unreviewed = pl.concat_str([pl.when(col(f"review_{s.name}").is_not_null()).then(pl.lit(f"{s.name}=")
                                                                                     + _verdict(before(s)))
                                for s in DECLARED], separator=";", ignore_nulls=True)
    return frame.with_columns(unreviewed.alias("unreviewed")).with_columns(reviewed(s).alias(s.value) for s in DECLARED)


def with_reviewed_composite(frame: pl.LazyFrame) -> pl.LazyFrame:
    """A review of the composite sets ``is_successful`` and ``is_task_successful`` (stalled or not)."""
    review = col(f"review_{COMPOSITE}")
    unreviewed = pl.concat_str([col("unreviewed"), pl.when(review.is_not_null()).then(
        pl.lit(f"{COMPOSITE}=") + _verdict(col("is_successful")))], separator=";", ignore_nulls=True)
    return frame.with_columns(pl.when(unreviewed != "").then(unreviewed).alias("unreviewed"),
                              pl.coalesce(review, col("is_successful")).alias("is_successful"),
                              pl.coalesce(review, col("is_task_successful")).alias("is_task_successful"))
