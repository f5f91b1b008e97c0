"""Re-scoring stored runs from the tables alone, a batch of runs at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

import polars as pl

from scorelake.storage import Store, is_in, sql_literal
from scorelake.transforms.errors import InvalidArgument
from scorelake.transforms.names import RECORDED
from scorelake.transforms.judging import with_judgements, without_escalated
from scorelake.pipeline._judgements import KEY, judged_by, latest, stored_inputs
from scorelake.pipeline._reviews import standing
from scorelake.transforms.scoring import (
    SCENARIO_FACTS,
    Policy,
    rate_counts,
    review_columns,
    score_and_count,
    split_reviewed,
)


def count_stored(store: Store, runs: pl.DataFrame, policy: Policy) -> pl.DataFrame:
    """``rate_counts`` of scores already stored, with the scenario facts they need (as the policy
    sees the scenarios: its judge's assertion counts, its reviews)."""
    key = ["run_id", "generation", "scenario_name"]
    scenarios, reviews = _scenarios(store, runs, policy)
    if reviews is not None:
        scenarios = pl.concat(split_reviewed(scenarios, reviews), how="diagonal")
    facts = scenarios.select(*key, *SCENARIO_FACTS)
    scores = store.tables.scan("scores", runs).filter(pl.col("policy_id") == policy.id)
    return rate_counts(scores.join(facts, on=key)).collect()


def _standing(store: Store, policy: Policy) -> pl.DataFrame:
    """The reviews that stand under the policy's review rule."""
    return standing(store, rule=policy.review_rule or "latest", adjudicator=policy.adjudicator).collect()


def _scenarios(store: Store, runs: pl.DataFrame, policy: Policy, reviews: pl.DataFrame | None = None
               ) -> tuple[pl.LazyFrame, pl.LazyFrame | None]:
    """The runs' scenarios as the policy scores them (with the judge's judgements in place of the
    recorded ones under a judge policy) and, under a policy that takes reviews, the review columns
    of those reviewed (``reviews``: the standing reviews, read once by the caller; else read here)."""
    scenarios = store.tables.scan("scenarios", runs)
    if policy.judge:
        scenarios = scenarios.pipe(with_judgements, judged_by(store, policy.judge, runs))
    if policy.selective:
        scenarios = scenarios.pipe(without_escalated, _escalated(store, policy, runs))
    if not policy.reviews:
        return scenarios, None
    reviews = _standing(store, policy) if reviews is None else reviews
    mine = reviews.filter(pl.col("run_id").is_in(runs["run_id"].implode()))
    if mine.is_empty():  # scored as without reviews: the same scores, none of the review path's cost
        return scenarios, None
    return scenarios, review_columns(mine.lazy(), _item_verdicts(store, runs, policy, mine))


def _escalated(store: Store, policy: Policy, runs: pl.DataFrame) -> pl.LazyFrame:
    """The scenarios of ``runs`` whose verdict of the policy's judge its standing calibration escalates
    (the views first brought up to the tables: an ingest scores its runs before it rebuilds them)."""
    store.views.build()
    with store.views.connect() as con:
        found = store.views.query(con, "escalated_verdicts", judge=policy.judge or RECORDED)
    return found.lazy().join(runs.lazy().select("run_id"), on="run_id", how="semi")


def _item_verdicts(store: Store, runs: pl.DataFrame, policy: Policy, reviews: pl.DataFrame) -> pl.LazyFrame:
    """The verdict before review of each reviewed NL assertion and DB predicate (the NL ones from
    the policy's judge); read only for the runs that have such reviews."""
    items = reviews.filter(pl.col("assertion").is_not_null()).select("run_id", "scenario_name").unique()
    runs = runs.filter(pl.col("run_id").is_in(items["run_id"].unique().implode()))

    def kind(name: str) -> pl.LazyFrame:
        return (store.tables.scan("verdicts", runs).filter(pl.col("kind") == name)
                .join(items.lazy(), on=["run_id", "scenario_name"], how="semi")
                .select("run_id", "scenario_name", pl.lit(name).alias("signal"), pl.col("ordinal").alias("assertion"),
                        "passed"))

    if policy.judge is None:
        return pl.concat([kind("db_state_assertion"), kind("nl_assertion")])
    inputs = store.tables.scan("judge_inputs", runs).select(*KEY)
    verdicts = pl.List(pl.Struct({"index": pl.Int64, "passed": pl.Boolean}))
    nl = (latest(store, policy.judge).join(inputs, on=KEY, how="semi")
          .join(items.lazy(), on=["run_id", "scenario_name"], how="semi")
          .select("run_id", "scenario_name", pl.col("nl_verdicts_json").str.json_decode(verdicts).alias("_v"))
          .explode("_v").drop_nulls("_v")
          .select("run_id", "scenario_name", pl.lit("nl_assertion").alias("signal"),
                  pl.col("_v").struct.field("index").alias("assertion"), pl.col("_v").struct.field("passed")))
    return pl.concat([kind("db_state_assertion"), nl])


RESCORE_BATCH_ROWS = 250_000  # bounds memory: the store is scored a batch of runs at a time


def _run_batches(runs: pl.DataFrame, max_rows: int) -> list[pl.DataFrame]:
    """Consecutive slices of ``runs`` holding at most ``max_rows`` scenarios (or one larger run)."""
    if runs.is_empty():
        return []
    batches, start, rows = [], 0, 0
    counts = runs["n_scenarios"].fill_null(0).to_list()
    for i, n in enumerate(counts):
        if rows and rows + n > max_rows:
            batches.append(runs.slice(start, i - start))
            start, rows = i, 0
        rows += n
    return batches + [runs.slice(start)]


def _append_all(store: Store, policy: Policy, tables: dict[str, pl.DataFrame]) -> None:
    for table, rows in tables.items():  # in their order: scores before their counts
        store.tables.append_policy_rows(table, rows, policy.id)


# What each policy covers of each run: (table, what one row counts: a scenario, or its count)
COVERAGE = (("scores", pl.len()), ("rate_counts", pl.col("scenarios").sum()))


def coverage(store: Store, runs: pl.DataFrame, policy: Policy | None = None) -> dict[str, pl.DataFrame]:
    """Per table of ``COVERAGE``: the scenarios each (run, policy) covers, as stored (of ``policy``
    only when given)."""
    covered = {}
    for table, counted in COVERAGE:
        rows = store.tables.scan(table, runs)
        if policy is not None:
            rows = rows.filter(pl.col("policy_id") == policy.id)
        covered[table] = rows.group_by("run_id", "policy_id").agg(counted.cast(pl.Int64).alias("covered")).collect()
    return covered


def _judged_runs(store: Store, policy: Policy, runs: pl.DataFrame, require_judged: bool) -> pl.DataFrame:
    """The runs the policy's judge has judged whole; with ``require_judged`` any other is refused."""
    missing = (stored_inputs(store, runs).join(judged_by(store, policy.judge, runs), on=KEY, how="anti")
               .group_by("run_id").len().collect())
    if missing.height and require_judged:
        runs_flags = " ".join(f"--run {r}" for r in sorted(missing["run_id"])[:5])
        raise InvalidArgument(
            f"judge '{policy.judge}' has not judged {missing['len'].sum()} scenarios of {missing.height} runs in scope; "
            f"judge them first: scorelake rejudge --judge {policy.judge} {runs_flags}"
            + (" ..." if missing.height > 5 else ""))
    return runs.join(missing.select("run_id"), on="run_id", how="anti")


def require_judged(store: Store, policy: Policy, run_ids: list[str] | None) -> None:
    """Refuse a judge policy whose judge has not judged every stored input of the runs in scope."""
    if policy.judge:
        runs = _runs_in_scope(store, run_ids)
        _judged_runs(store, policy, runs, require_judged=True)


# Scores batches of runs elsewhere (a cluster's workers), nothing written: each batch's tables, in
# any order, for the one process that commits them.
ScoreBatches = Callable[[list[pl.DataFrame]], Iterable[dict[str, pl.DataFrame]]]


def _scorer(store: Store, policy: Policy) -> Callable[[pl.DataFrame], dict[str, pl.DataFrame]]:
    """Scores a batch of runs under ``policy``, writing nothing (the standing reviews read once, for
    every batch)."""
    version = store.tables.delta_table("reviews").version() if policy.reviews else None
    reviews = _standing(store, policy) if policy.reviews else None

    def score(batch: pl.DataFrame) -> dict[str, pl.DataFrame]:
        scenarios, reviewed = _scenarios(store, batch, policy, reviews)
        return score_and_count(scenarios, policy, version, reviewed)

    return score


def score_runs(store: Store, policy: Policy, runs: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """``runs`` (committed rows, a batch of ``rescore``) scored under ``policy``, nothing written:
    a worker's part of a re-score spread over a cluster."""
    return _scorer(store, policy)(runs)


def _runs_in_scope(store: Store, run_ids: list[str] | None) -> pl.DataFrame:
    return store.tables.committed_runs(run_ids).filter(pl.col("n_scenarios") > 0)


def rescore(store: Store, policy: Policy, run_ids: list[str] | None = None,
            score_batches: ScoreBatches | None = None) -> int:
    """Score stored scenarios under ``policy`` from the tables alone; returns the number scored.

    Runs that already hold scores under this policy for their committed generation are skipped:
    a policy's id is a hash of everything its verdicts depend on (scorer version included), so
    those scores could only come out the same. An interrupted re-score thus resumes where it stopped.
    Scores are written before their rate counts (one commit each per batch of runs), so runs scored
    but not yet counted (a re-score killed in between, a warehouse older than rate_counts) are
    counted from the stored scores. A policy's rows are appended by generation, never twice
    (``Tables.append_policy_rows``); runs found holding them twice (written by an older scorelake) are
    scored again, once.

    Under a policy with a judge, JUDGE_PASSED and NL_ASSERTION come from that judge's judgements; a
    run it has not judged whole is left unscored (``require_judged`` refuses a command that asks for it).
    A selective policy's runs are scored again each time, under the calibration standing then.

    The batches are scored here, each while the one before it commits, or by ``score_batches``
    (workers elsewhere): either way this process alone commits.
    """
    runs = _runs_in_scope(store, run_ids)
    if policy.judge:
        runs = _judged_runs(store, policy, runs, require_judged=False)
    covered = coverage(store, runs, policy)
    scored_runs, counted_runs = (covered[table].select("run_id") for table, _ in COVERAGE)
    scored, committing = 0, None
    todo = _run_batches(runs.join(scored_runs, on="run_id", how="anti"), RESCORE_BATCH_ROWS)
    # A batch is committed (scores, then counts) while the next one is scored: delta-rs writes
    # without holding the GIL. One batch in flight bounds memory.
    with ThreadPoolExecutor(1) as writer:
        for tables in score_batches(todo) if score_batches else map(_scorer(store, policy), todo):
            if committing:
                committing.result()
            committing = writer.submit(_append_all, store, policy, tables)
            scored += tables["scores"].height
        if committing:
            committing.result()
    uncounted = runs.join(scored_runs, on="run_id", how="semi").join(counted_runs, on="run_id", how="anti")
    for batch in _run_batches(uncounted, RESCORE_BATCH_ROWS):
        store.tables.append_policy_rows("rate_counts", count_stored(store, batch, policy), policy.id)
    stored = runs.join(scored_runs, on="run_id", how="semi")
    stale = _doubled(stored, covered)
    if policy.reviews:
        stale = pl.concat([stale, _reviewed_since(store, policy, stored)])
    if policy.selective:  # kept by the calibration standing now, which a new one replaces: every run again
        stale = pl.concat([stale, stored])
    stale = pl.concat([stale, judged_since(store, policy, stored)]).unique("run_id", maintain_order=True)
    return scored + _score_again(store, policy, stale)


def _doubled(runs: pl.DataFrame, covered: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """The runs whose scores or counts under the policy cover more scenarios than the run holds: stored
    twice by writers of a scorelake that appended them blindly (``check`` reports them; scored again, once)."""
    over = pl.concat([c.select("run_id", "covered") for c in covered.values()]).join(
        runs.select("run_id", "n_scenarios"), on="run_id").filter(pl.col("covered") > pl.col("n_scenarios"))
    return runs.filter(pl.col("run_id").is_in(over["run_id"].implode()))


def _reviewed_since(store: Store, policy: Policy, runs: pl.DataFrame) -> pl.DataFrame:
    """The runs whose reviews changed since their stored scores under ``policy`` were made."""
    stored = (store.tables.scan("scores", runs).filter(pl.col("policy_id") == policy.id)
              .select("run_id", "reviews_version").unique().collect())
    now = store.tables.delta_table("reviews").version()
    if stored["reviews_version"].eq_missing(now).all():  # every run scored with the reviews as they are
        return runs.clear()
    current = store.tables.read("reviews").select("run_id", "review_id").collect()
    stale = set()
    for version in stored["reviews_version"].unique().to_list():
        scored_with = stored.filter(pl.col("reviews_version").eq_missing(version))["run_id"]
        seen = (store.tables.read("reviews", version).select("review_id").collect() if version is not None
                else pl.DataFrame(schema={"review_id": pl.String}))
        newer = current.join(seen, on="review_id", how="anti")
        stale |= set(newer.filter(pl.col("run_id").is_in(scored_with.implode()))["run_id"])
    return runs.filter(pl.col("run_id").is_in(sorted(stale)))


def judged_since(store: Store, policy: Policy, runs: pl.DataFrame) -> pl.DataFrame:
    """The runs of ``runs`` whose scores under ``policy`` hold a judge score its judge no longer gives
    (its judgements changed after they were scored): `check` names them, ``rescore`` scores them again."""
    if not policy.judge:
        return runs.clear()
    key = ["run_id", "scenario_name"]
    scored = (store.tables.scan("scores", runs).filter(pl.col("policy_id") == policy.id)
              .select(*key, "judge_score"))
    now = judged_by(store, policy.judge, runs).select(*key, _now=pl.col("score"))
    stale = (scored.join(now, on=key).filter(pl.col("judge_score").ne_missing(pl.col("_now")))
             .select("run_id").unique().collect())
    return runs.join(stale, on="run_id", how="semi")


def _score_again(store: Store, policy: Policy, runs: pl.DataFrame) -> int:
    """Score ``runs`` again under ``policy`` (reviewed since they were scored, or stored twice): their
    counts replaced first, then their scores, each by a predicate overwrite (a kill in between
    leaves scores of the older reviews version, or still doubled, so the next re-score does both again)."""
    if runs.is_empty():
        return 0
    score, scored = _scorer(store, policy), 0
    for batch in _run_batches(runs, RESCORE_BATCH_ROWS):
        tables = score(batch)
        predicate = f"{is_in('run_id', batch['run_id'])} AND policy_id = {sql_literal(policy.id)}"
        for table in ("rate_counts", "scores"):
            store.tables.write(table, tables[table], mode="overwrite", predicate=predicate)
        scored += tables["scores"].height
    return scored
