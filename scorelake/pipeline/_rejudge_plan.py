"""What a rejudge asks: the stored inputs a judge has not judged, less what its base judge answered
without failing and what an identical request answered before (the cache)."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from scorelake.storage import Store
from scorelake.transforms.columns import frame
from scorelake.transforms.errors import InvalidArgument
from scorelake.transforms.judging import (
    JudgeSpec,
    request,
)
from scorelake.pipeline._judgements import KEY, judged_by, latest, recorded_judgements, stored_inputs
from scorelake.pipeline._judges import RunJudgeSettings, policies_using
from scorelake.transforms.scoring import RECORDED


def _copied(rows: pl.DataFrame, judge: str, source: str) -> pl.DataFrame:
    """``rows`` (some judgement columns) as ``judge``'s judgements, made now without a call."""
    ids = pl.Series([secrets.token_hex(12) for _ in range(rows.height)], dtype=pl.String)
    rows = rows.with_columns(judgement_id=ids, judge=pl.lit(judge), source=pl.lit(source),
                             judged_at=pl.lit(datetime.now(UTC)), attempts=pl.lit(0))
    return pl.concat([frame("judgements", []), rows], how="diagonal_relaxed").select(frame("judgements", []).columns)


def _recorded_rows(store: Store, keys: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """Recorded judgements of ``keys`` as full ``judgements`` rows (what --only-errors keeps of them)."""
    rows = recorded_judgements(store, runs).join(keys.lazy(), on=KEY, how="semi").collect()
    verdicts = [None if v is None else json.dumps(v, ensure_ascii=False) for v in rows["_verdicts"].to_list()]
    return rows.drop("_verdicts").with_columns(nl_verdicts_json=pl.Series(verdicts, dtype=pl.String),
                                               request_key=pl.lit(None, pl.String), model=pl.lit(None, pl.String))


@dataclass
class RejudgePlan:
    judge: JudgeSpec
    todo: pl.DataFrame  # KEY + what a request needs, sorted: the calls to make
    copied: pl.DataFrame  # judgements rows taken over without a call (cache hits, --only-errors' base)
    judged_already: int
    scope: int
    twins: pl.DataFrame  # KEY + request_key of inputs whose request another of ``todo`` makes: answered by it


def plan_rejudge(store: Store, spec: JudgeSpec, run_ids: list[str] | None, only_errors: bool) -> RejudgePlan:
    """What a rejudge does: every stored askable input of the runs the judge has not judged is asked,
    unless its base judge (if any) judged it without failing (then that judgement is taken over) or an
    identical request was answered before (the cache); ``only_errors`` asks its failed ones again."""
    runs = store.tables.committed_runs(run_ids)
    inputs = stored_inputs(store, runs).collect()
    own = latest(store, spec.name).join(inputs.lazy().select(KEY), on=KEY, how="semi").select(*KEY, "errored").collect()
    fresh = inputs.join(own, on=KEY, how="anti")
    copied = frame("judgements", [])
    if spec.base is not None:
        base_ok = judged_by(store, spec.base, runs).filter(~pl.col("errored")).select(KEY).collect()
        keep = fresh.select(KEY).join(base_ok, on=KEY, how="semi")
        if keep.height:
            rows = (_recorded_rows(store, keep, runs) if spec.base == RECORDED
                    else latest(store, spec.base).join(keep.lazy(), on=KEY, how="semi").collect())
            copied = _copied(rows, spec.name, "copied")
        fresh = fresh.join(keep, on=KEY, how="anti")
    todo = fresh
    if only_errors:
        again = inputs.join(own.filter(pl.col("errored")), on=KEY, how="semi")
        users = policies_using(store, spec.name)
        if again.height and users:
            raise InvalidArgument(f"judge '{spec.name}' is used by policy {', '.join(users)}: its judgements stay as "
                                  f"they are; ask its errors again as a new judge: --judge NEW --only-errors "
                                  f"--from {spec.name}")
        todo = pl.concat([todo, again])
    todo = _with_request_keys(todo, spec, RunJudgeSettings(runs))
    cached = _cached(store, todo, spec.name)
    if cached.height:
        copied = pl.concat([copied, cached])
        todo = todo.join(cached.select(KEY), on=KEY, how="anti")
    # the same request (the same input in two runs of one suite) asked once, its answer copied to the rest
    asked = todo.sort("run_id", "scenario_name").unique("request_key", keep="first", maintain_order=True)
    twins = todo.join(asked.select(KEY), on=KEY, how="anti").select(*KEY, "request_key")
    return RejudgePlan(spec, asked, copied, inputs.height - todo.height - copied.height, inputs.height, twins)


def twin_judgements(store: Store, twins: pl.DataFrame, judge: str) -> pl.DataFrame:
    """``judge``'s judgements of ``twins`` (``RejudgePlan.twins``), each its request's answer as
    ``judge`` stored it for the input that asked (a failed answer too: the same request failed)."""
    return _answered(store, twins, judge, pl.col("judge") == judge)


def _with_request_keys(todo: pl.DataFrame, spec: JudgeSpec, settings: RunJudgeSettings) -> pl.DataFrame:
    keys = [request(spec, settings.of(run_id, invocation), "", input_hash).key
            for run_id, invocation, input_hash in todo.select("run_id", "invocation_index", "input_hash").iter_rows()]
    return todo.with_columns(request_key=pl.Series(keys, dtype=pl.String))


def _cached(store: Store, todo: pl.DataFrame, judge: str) -> pl.DataFrame:
    """Answers to identical requests made before (by any judge), that did not fail."""
    return _answered(store, todo, judge, ~pl.col("errored"))


def _answered(store: Store, asked: pl.DataFrame, judge: str, which: pl.Expr) -> pl.DataFrame:
    """``judge``'s judgements of ``asked`` (KEY and ``request_key``) made without a call: each the
    latest stored answer to its request among the judgements ``which`` keeps, a cache hit."""
    if asked.is_empty():
        return frame("judgements", [])
    answers = (store.tables.read("judgements")
               .filter(which & pl.col("request_key").is_in(asked["request_key"].implode()))
               .sort("judged_at").unique("request_key", keep="last").drop(*KEY).collect())
    return _copied(asked.select(*KEY, "request_key").join(answers, on="request_key"), judge, "cache")
