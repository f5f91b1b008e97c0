"""Asking a judge again from the stored judge inputs: the calls of a batch made, journalled, committed.

A judge's judgements are rows of ``judgements``; the runs' own ``judge_result.json`` are the built-in
judge ``recorded``. ``rejudge`` asks a judge about every stored input it has not judged (so a
second run of the same command sends nothing), reuses the answer of any identical request made
before (the cache: ``request_key``), and journals every answer as it arrives, committing them every
``COMMIT_EVERY`` (see ``judge_client._journal``), in the one process that commits: asked elsewhere (a
cluster's worker), a batch's answers come back to it with the batch.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterator

import polars as pl

from scorelake.judge_client import Journal, JudgeRefused, RetryPolicy, Tally, ask_all, journal_folder
from scorelake.storage import Store
from scorelake.transforms.columns import frame
from scorelake.transforms.errors import JudgeUnavailable
from scorelake.transforms.judging import Call, JudgeSpec, answer_row, request
from scorelake.pipeline._judgements import KEY, commit_judgements
from scorelake.pipeline._judges import RunJudgeSettings

JUDGE_BATCH = 2000  # calls per Prefect task


@dataclass
class BatchResult:
    tally: Tally = field(default_factory=Tally)  # calls answered, errors, retries, tokens
    refused: str | None = None  # the endpoint refused: nothing more was asked
    down: str | None = None  # the judge left too many calls unanswered: nothing more was asked
    error_samples: list[str] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)  # the answers, where not kept as they came (asked elsewhere)


INPUT_CHUNK = 500  # stored inputs read at a time (while the calls before them are in flight)


COMMIT_EVERY = 2000  # answers per commit (the journal keeps them meanwhile)


def _calls(store: Store, spec: JudgeSpec, keys: pl.DataFrame, requests: dict) -> Iterator[list[Call]]:
    """The calls for ``keys``, a chunk at a time: each chunk's texts read from ``judge_inputs`` only
    when it is due, so memory holds a chunk or two, not every input."""
    runs = store.tables.committed_runs().filter(pl.col("run_id").is_in(keys["run_id"].unique().implode()))
    settings = RunJudgeSettings(runs)
    for chunk in keys.iter_slices(INPUT_CHUNK):
        chunk_runs = runs.filter(pl.col("run_id").is_in(chunk["run_id"].unique().implode()))
        texts = (store.tables.judge_inputs(chunk_runs).select(*KEY, "system_prompt", "user_content")
                 .join(chunk.lazy().select(KEY), on=KEY, how="semi").collect())
        by_key = {(r, s, h): (p, u) for r, s, h, p, u in texts.iter_rows()}
        calls = []
        for run_id, scenario, input_hash, invocation, nl in chunk.select(
                *KEY, "invocation_index", "nl_assertions").iter_rows():
            key = (run_id, scenario, input_hash)
            if key not in by_key:  # re-ingested meanwhile: asked next time
                continue
            system_prompt, user_content = by_key[key]
            made = request(spec, settings.of(run_id, invocation), system_prompt, input_hash)
            requests[key] = made
            calls.append(Call(key, made.url, made.payload(user_content), made.timeout, nl))
        yield calls


class JudgementCommitter:
    """Answers journalled as they arrive and committed every ``COMMIT_EVERY``, in a thread of its own
    so that the calls go on meanwhile; each commit's journal is removed once it landed. ``close``
    commits the rest (used as a context manager: on leaving it, whatever happened)."""

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

    def __enter__(self) -> JudgementCommitter:
        return self

    def __exit__(self, *_) -> None:
        self.close()


def judge_batch(store: Store, spec: JudgeSpec, keys: pl.DataFrame, *, concurrency: int, api_key: str | None,
                policy: RetryPolicy = RetryPolicy(), on_answer: Callable[[Tally], None] = lambda tally: None,
                keep: Callable[[dict], None] | None = None) -> BatchResult:
    """Ask the judge about a batch of stored inputs (``keys``: KEY, invocation_index, nl_assertions):
    each answer's judgement row to ``keep`` as it arrives (a ``JudgementCommitter``'s ``add``), or,
    without one, returned with the batch (``BatchResult.rows``); ``on_answer`` gets the batch's tally
    after each answer. Nothing is written here."""
    requests: dict = {}
    result = BatchResult()
    keep = keep or result.rows.append

    def kept(answer) -> None:
        row = answer_row(spec.name, answer, requests.pop(answer.call.key))
        keep(row)
        if answer.errored and len(result.error_samples) < 3 and row["reason"] not in result.error_samples:
            result.error_samples.append(row["reason"])
        on_answer(result.tally)

    try:
        ask_all(_calls(store, spec, keys, requests), api_key=api_key, concurrency=concurrency, on_answer=kept,
                policy=policy, tally=result.tally)
    except JudgeUnavailable as down:
        result.down = str(down)
    except JudgeRefused as refused:
        result.refused = str(refused)
    return result


def api_key_from(variable: str | None) -> str | None:
    """The judge's key: ``$JUDGE_API_KEY`` (upstream's default) or the named variable."""
    return os.environ.get(variable or "JUDGE_API_KEY") or None
