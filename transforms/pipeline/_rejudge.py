"""Asking a judge again from the stored judge inputs, and the judges a warehouse holds.

A judge's judgements are rows of ``judgements``; the runs' own ``judge_result.json`` are the built-in
judge ``recorded``. ``rejudge`` asks a judge about every stored input it has not judged (so a
second run of the same command sends nothing), reuses the answer of any identical request made
before (the cache: ``request_key``), and journals every answer as it arrives, committing them every
``COMMIT_EVERY`` (see ``judging._journal``).
"""

from __future__ import annotations

import json
import os
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Callable, Iterator

import polars as pl

from scorelake.transforms.columns import frame
from scorelake.transforms.errors import InvalidArgument, NotFound
from scorelake.transforms.judging import (
    BUILTIN,
    Call,
    Journal,
    JudgeRefused,
    JudgeSpec,
    RetryPolicy,
    Tally,
    answer_row,
    ask_all,
    journal_folder,
    orphaned,
    read_journal,
    request,
    run_judge,
)
from scorelake.transforms.pipeline._policies import stored_policies
from scorelake.transforms.scoring import RECORDED
from scorelake.transforms.warehouse import Store

JUDGE_BATCH = 2000  # calls per Prefect task
COMMIT_LOCK_WAIT_S = 600.0  # a batch's commit waits this long for another writer (an ingest) to finish
KEY = ["run_id", "scenario_name", "input_hash"]


# ---- judges --------------------------------------------------------------------------------------

def stored_judges(store: Store) -> list[JudgeSpec]:
    """Every judge, the built-in ``recorded`` first."""
    rows = store.tables.read("judges").sort("created_at").unique("name", keep="first", maintain_order=True).collect()
    return [BUILTIN] + [JudgeSpec.model_validate_json(s) for s in rows["spec_json"]]


def find_judge(store: Store, name: str) -> JudgeSpec:
    for judge in stored_judges(store):
        if judge.name == name:
            return judge
    known = ", ".join(j.name for j in stored_judges(store))
    raise NotFound(f"no judge named '{name}' (judges: {known}); `scorelake rejudge --judge {name} ...` makes one")


def define_judge(store: Store, name: str, default_base: str | None = None, **settings: object) -> JudgeSpec:
    """The judge ``name`` of the given settings (unset ones: as stored; a stored judge keeps its
    settings, its judgements were made with them). A new judge's base is ``default_base`` unless set."""
    if name == RECORDED:
        raise InvalidArgument(f"'{RECORDED}' is the built-in judge (the runs' own judge_result.json): "
                              "give the new judge another name")
    existing = next((j for j in stored_judges(store) if j.name == name), None)
    given = {k: v for k, v in settings.items() if v is not None}
    if existing is None:
        spec = JudgeSpec.checked(name=name, **{"base": default_base, **given})
    else:
        spec = JudgeSpec.checked(**{**existing.model_dump(), **given})
        if spec.identity() != existing.identity():
            raise InvalidArgument(f"judge '{name}' exists with other settings ({existing.describe()}); its "
                                  "judgements were made with those: give the new settings another judge name")
    if spec.base == name:
        raise InvalidArgument(f"judge '{name}' cannot be its own base (--from)")
    if spec.base is not None:
        find_judge(store, spec.base)
    return spec


def save_judge(store: Store, spec: JudgeSpec) -> None:
    if spec.name == RECORDED or store.tables.read("judges").filter(pl.col("name") == spec.name).select(pl.len()).collect().item():
        return
    store.tables.append("judges", frame("judges", [{"name": spec.name, "spec_json": spec.model_dump_json(),
                                          "created_at": datetime.now(UTC)}]))


def policies_using(store: Store, judge: str) -> list[str]:
    return [p.name for p in stored_policies(store) if p.judge == judge]


# ---- judgements ------------------------------------------------------------------------------------

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
    todo = _with_request_keys(todo, spec, run_judges(runs))
    cached = _cached(store, todo, spec.name)
    if cached.height:
        copied = pl.concat([copied, cached])
        todo = todo.join(cached.select(KEY), on=KEY, how="anti")
    return RejudgePlan(spec, todo.sort("run_id", "scenario_name"), copied,
                       inputs.height - todo.height - copied.height, inputs.height)


class run_judges(dict):  # noqa: N801 (a dict, used as a function of the runs)
    """(run_id, invocation) -> that invocation's judge settings (run_args.json), parsed once each."""

    def __init__(self, runs: pl.DataFrame):
        super().__init__()
        self.run_args = dict(runs.select("run_id", "run_args_json").iter_rows())

    def __missing__(self, key: tuple[str, int]):
        self[key] = run_judge(self.run_args[key[0]], key[1])
        return self[key]


def _with_request_keys(todo: pl.DataFrame, spec: JudgeSpec, runs: run_judges) -> pl.DataFrame:
    keys = [request(spec, runs[run_id, invocation], "", input_hash).key
            for run_id, invocation, input_hash in todo.select("run_id", "invocation_index", "input_hash").iter_rows()]
    return todo.with_columns(request_key=pl.Series(keys, dtype=pl.String))


def _cached(store: Store, todo: pl.DataFrame, judge: str) -> pl.DataFrame:
    """Answers to identical requests made before (by any judge), that did not fail."""
    if todo.is_empty():
        return frame("judgements", [])
    hits = (store.tables.read("judgements").filter(~pl.col("errored") & pl.col("request_key").is_in(todo["request_key"].implode()))
            .sort("judged_at").unique("request_key", keep="last").drop(*KEY).collect())
    rows = todo.select(*KEY, "request_key").join(hits, on="request_key")
    return _copied(rows, judge, "cache")


# ---- asking ------------------------------------------------------------------------------------

@dataclass
class BatchResult:
    tally: Tally = field(default_factory=Tally)  # calls answered, errors, retries, tokens
    refused: str | None = None  # the endpoint refused: nothing more was asked
    error_samples: list[str] = field(default_factory=list)


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


INPUT_CHUNK = 500  # stored inputs read at a time (while the calls before them are in flight)
COMMIT_EVERY = 2000  # answers per commit (the journal keeps them meanwhile)


def _calls(store: Store, spec: JudgeSpec, keys: pl.DataFrame, requests: dict) -> Iterator[list[Call]]:
    """The calls for ``keys``, a chunk at a time: each chunk's texts read from ``judge_inputs`` only
    when it is due, so memory holds a chunk or two, not every input."""
    runs = store.tables.committed_runs().filter(pl.col("run_id").is_in(keys["run_id"].unique().implode()))
    settings = run_judges(runs)
    for chunk in keys.iter_slices(INPUT_CHUNK):
        chunk_runs = runs.filter(pl.col("run_id").is_in(chunk["run_id"].unique().implode()))
        texts = (store.tables.scan("judge_inputs", chunk_runs).select(*KEY, "system_prompt", "user_content")
                 .join(chunk.lazy().select(KEY), on=KEY, how="semi").collect())
        by_key = {(r, s, h): (p, u) for r, s, h, p, u in texts.iter_rows()}
        calls = []
        for run_id, scenario, input_hash, invocation, nl in chunk.select(
                *KEY, "invocation_index", "nl_assertions").iter_rows():
            key = (run_id, scenario, input_hash)
            if key not in by_key:  # re-ingested meanwhile: asked next time
                continue
            system_prompt, user_content = by_key[key]
            made = request(spec, settings[run_id, invocation], system_prompt, input_hash)
            requests[key] = made
            calls.append(Call(key, made.url, made.payload(user_content), made.timeout, nl))
        yield calls


class _Committer:
    """Answers journalled as they arrive and committed every ``COMMIT_EVERY``, in a thread of its own
    so that the calls go on meanwhile; each commit's journal is removed once it landed."""

    def __init__(self, store: Store, judge: str):
        self.store, self.judge = store, judge
        self.pool = ThreadPoolExecutor(1)
        self.landing: list = []
        self._start()

    def _start(self) -> None:
        self.journal, self.rows = Journal(journal_folder(self.store.tables.root, self.store.location)), []

    def add(self, row: dict) -> None:
        self.journal.write(row)
        self.rows.append(row)
        if len(self.rows) >= COMMIT_EVERY:
            self.flush()

    def flush(self, last: bool = False) -> None:
        journal, rows = self.journal, self.rows
        if not last:
            self._start()
        self.landing.append(self.pool.submit(self._commit, journal, rows))

    def _commit(self, journal: Journal, rows: list[dict]) -> None:
        if rows:
            commit_judgements(self.store, frame("judgements", rows), f"judge {self.judge}: {len(rows)} judgements")
        journal.discard()

    def close(self) -> None:
        """Every answer committed (a failed commit raises here: its journal stays for the next run)."""
        self.flush(last=True)
        self.pool.shutdown(wait=True)
        for landed in self.landing:
            landed.result()


def judge_batch(store: Store, spec: JudgeSpec, keys: pl.DataFrame, *, concurrency: int, api_key: str | None,
                policy: RetryPolicy = RetryPolicy(),
                on_answer: Callable[[Tally], None] = lambda tally: None) -> BatchResult:
    """Ask the judge about a batch of stored inputs (``keys``: KEY, invocation_index, nl_assertions),
    journal every answer as it arrives, commit them as they add up; ``on_answer`` gets the batch's
    tally after each answer."""
    requests: dict = {}
    committer, result = _Committer(store, spec.name), BatchResult()

    def keep(answer) -> None:
        row = answer_row(spec.name, answer, requests.pop(answer.call.key))
        committer.add(row)
        if answer.errored and len(result.error_samples) < 3:
            result.error_samples.append(row["reason"])
        on_answer(result.tally)

    try:
        ask_all(_calls(store, spec, keys, requests), api_key=api_key, concurrency=concurrency, on_answer=keep,
                policy=policy, tally=result.tally)
    except JudgeRefused as refused:
        result.refused = str(refused)
    finally:
        committer.close()
    return result


def api_key_from(variable: str | None) -> str | None:
    """The judge's key: ``$JUDGE_API_KEY`` (upstream's default) or the named variable."""
    return os.environ.get(variable or "JUDGE_API_KEY") or None
