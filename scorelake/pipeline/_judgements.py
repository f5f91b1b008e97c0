"""Judgements as the tables hold them: the stored judge inputs, a judge's latest judgement of each,
the runs' own judge results as judgements, and committing new ones."""

from __future__ import annotations

import polars as pl

from scorelake.judge_client import journal_folder, orphaned, read_journal
from scorelake.storage import Store
from scorelake.transforms.columns import frame
from scorelake.transforms.judging import ASK, JudgeSpec, majority_judgements, majority_name
from scorelake.transforms.errors import InvalidArgument
from scorelake.pipeline._judges import COMMIT_LOCK_WAIT_S, policies_using, save_judge, stored_judges
from scorelake.transforms.scoring import RECORDED

KEY = ["run_id", "scenario_name", "input_hash"]


def stored_inputs(store: Store, runs: pl.DataFrame) -> pl.LazyFrame:
    """The askable judge inputs of the runs' committed generations, keyed, with what a request needs
    (but the texts: those are read a chunk at a time when asked, see ``_calls``)."""
    scenarios = store.tables.scan("scenarios", runs).select("run_id", "scenario_name", "invocation_index")
    return (store.tables.scan("judge_inputs", runs).filter(pl.col("askable"))
            .select(*KEY, "nl_assertions").join(scenarios, on=["run_id", "scenario_name"]))


def latest(store: Store, judge: str) -> pl.LazyFrame:
    """A judge's latest judgement per scenario and input (``rejudge --only-errors`` may replace one)."""
    return (store.tables.read("judgements").filter(pl.col("judge") == judge)
            .sort("judged_at", "judgement_id").unique(KEY, keep="last"))


def recorded_judgements(store: Store, runs: pl.DataFrame) -> pl.LazyFrame:
    """The runs' own judge results as judgement rows (of their stored inputs)."""
    inputs = store.tables.scan("judge_inputs", runs).select(*KEY)
    nl = (store.tables.scan("verdicts", runs).filter(pl.col("kind") == "nl_assertion").sort("ordinal")
          .group_by("run_id", "scenario_name")
          .agg(pl.struct(pl.col("ordinal").alias("index"), pl.col("label").alias("assertion"), "passed",
                         pl.col("detail").alias("reason")).alias("_verdicts")))
    counts = store.tables.scan("scenarios", runs).select("run_id", "scenario_name", "nl_passed", "nl_total")
    return (store.tables.scan("judge_results", runs).join(inputs, on=["run_id", "scenario_name"])
            .join(counts, on=["run_id", "scenario_name"]).join(nl, on=["run_id", "scenario_name"], how="left")
            .select(*KEY, "score", "reason", "errored", "extra_json", "nl_passed", "nl_total", "_verdicts"))


def judged_by(store: Store, judge: str, runs: pl.DataFrame) -> pl.LazyFrame:
    """The judge's current judgement of each stored input of ``runs`` (KEY, score, errored, nl_passed, nl_total)."""
    if judge == RECORDED:
        return recorded_judgements(store, runs).select(*KEY, "score", "errored", "nl_passed", "nl_total")
    inputs = store.tables.scan("judge_inputs", runs).select(*KEY)
    return latest(store, judge).join(inputs, on=KEY, how="semi").select(*KEY, "score", "errored", "nl_passed",
                                                                     "nl_total")


def commit_judgements(store: Store, rows: pl.DataFrame, detail: str) -> None:
    """Append judgement rows (none twice: a journal committed before its file was removed is
    committed again after a kill) and record the step."""
    with store.lock.hold(COMMIT_LOCK_WAIT_S):
        stored = store.tables.read("judgements").filter(pl.col("judgement_id").is_in(rows["judgement_id"].implode()))
        rows = rows.join(stored.select("judgement_id").collect(), on="judgement_id", how="anti")
        if rows.is_empty():
            return
        store.tables.append("judgements", rows)
        store.log.record("rejudge", detail)
        store.views.build()


def _asks(store: Store, judge: str) -> list[str]:
    """The stored asks of the repeated judge ``judge`` (``NAME#k``)."""
    prefix = f"{judge}{ASK}"
    return [j.name for j in stored_judges(store) if j.name.startswith(prefix) and j.name[len(prefix):].isdigit()]


def keep_majority_of_policies(store: Store, judge: str, repeat: int) -> None:
    """``InvalidArgument`` when asking ``judge`` ``repeat`` times would change the majority a policy
    scores with: more asks than its majority was made of (a policy's judge keeps its judgements, as
    ``rejudge --only-errors`` keeps them: its scores would no longer be its judge's)."""
    users = policies_using(store, majority_name(judge))
    asked = len(_asks(store, judge))
    if users and repeat > asked:
        raise InvalidArgument(f"judge '{majority_name(judge)}' is the majority of {asked} asks and policy "
                              f"{', '.join(users)} scores with it: its judgements stay as they are; ask "
                              f"{repeat} times as a new judge: --judge NEW --repeat {repeat}")


def commit_majority(store: Store, judge: str) -> int:
    """The majority judgement of each input (``NAME@majority``) from the latest judgements of the asks
    of the repeated judge ``judge`` (``NAME#k``), committed where it is new or changed, with the
    majority judge's definition; returns the judgements committed."""
    asks = _asks(store, judge)
    rows = majority_judgements(pl.concat([latest(store, name) for name in asks]), judge)
    same = ["run_id", "scenario_name", "input_hash", "score", "errored", "nl_verdicts_json", "extra_json"]
    with store.lock.hold(COMMIT_LOCK_WAIT_S):
        stored = latest(store, majority_name(judge)).select(same).collect()
        rows = rows.join(stored, on=same, how="anti", nulls_equal=True)
        saved = save_judge(store, JudgeSpec(name=majority_name(judge), majority_of=judge))
        if rows.height:
            store.tables.append("judgements", rows)
        if rows.height or saved:
            store.log.record("rejudge", f"judge {majority_name(judge)}: the majority of {len(asks)} asks, "
                                        f"{rows.height} judgements new or changed")
            store.views.build()
    return rows.height


def commit_orphaned_journals(store: Store) -> int:
    """Commit what a killed rejudge journalled; returns the judgements recovered."""
    recovered = 0
    for path in orphaned(journal_folder(store.tables.root, store.location)):
        rows = read_journal(path)
        if rows:
            commit_judgements(store, frame("judgements", rows), f"{len(rows)} judgements recovered from {path.name}")
            recovered += len(rows)
        path.unlink(missing_ok=True)
    return recovered
