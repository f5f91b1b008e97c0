"""What the ingest and re-score flows do, free of Prefect: the task functions and the flow
bodies, which fan the tasks out through a ``Fanout``.

``InProcess`` runs the tasks on a local thread or process pool (no orchestrator: what a one-shot
command uses when no Prefect API is configured); ``flows.prefect_flows`` wraps the same functions as
Prefect tasks and flows. Either way a task handles whole sessions, a batch of runs or a batch of
judge calls, never a scenario, and the writer lock, the commit protocol and the progress bar are the
same. Tasks read and compute; the flow is the one process that commits what they hand back (an
ingest's rows a batch of sessions at a time: one scoring pass and a handful of Delta commits per
batch, not per session), so that tasks on a cluster's workers never write to the warehouse.
"""

from __future__ import annotations

import dataclasses
import functools
import multiprocessing
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from scorelake.flows.ingest_job import ingest_sessions_job
from scorelake.judge_client import JudgeRefused, RetryPolicy, Tally
from scorelake.pipeline import (
    COMMIT_LOCK_WAIT_S,
    JUDGE_BATCH,
    REVIEW_LOCK_WAIT_S,
    BatchResult,
    Delivery,
    JudgementCommitter,
    Review,
    api_key_from,
    check_policy,
    check_reviews,
    check_whitelisted_domains,
    commit_ingested,
    commit_judgements,
    commit_majority,
    keep_majority_of_policies,
    commit_orphaned_journals,
    define_judge,
    describe_reviews,
    export_otlp,
    find_judge,
    find_policy,
    forget_judge,
    group_runs,
    judge_batch,
    plan_ingest,
    plan_rejudge,
    prepare_for_writing,
    record_refusals,
    require_judged,
    rescore,
    save_judge,
    save_policy,
    score_runs,
    store_reviews,
    stored_judges,
    stored_policies,
    twin_judgements,
    undecided,
)
from scorelake.pipeline import (
    migrate as convert_legacy,
)
from scorelake.storage import Store
from scorelake.transforms.analysis import GateResult
from scorelake.transforms.errors import InvalidArgument, JudgeUnavailable, NothingFound
from scorelake.transforms.judging import MAJORITY, JudgeSpec, ask_name, check_judge_name
from scorelake.transforms.names import RECORDED
from scorelake.transforms.results import (
    ExportResult,
    IngestResult,
    Refusal,
    Regrouped,
    RejudgeResult,
    RescoreResult,
    ReviewResult,
)
from scorelake.transforms.scoring import Policy
from scorelake.transforms.sources import DEFAULT_RUNS, Session, discover_sessions, plugin_problems, printable

if TYPE_CHECKING:
    import polars as pl

# Ingest and re-score tasks only read, so a retry after a transient I/O error is safe.
TASK_RETRIES = 2
RETRY_DELAY_S = 1.0
# Passes a re-score makes over runs that another writer re-ingested while it scored them.
RESCORE_CATCH_UP = 5
# Sessions read but not committed are held in memory: a commit once they hold this many scenarios
# (5,000 keeps an ingest of 100,000 under 600 MB with its workers; 25,000 took 938 MB, no faster).
COMMIT_BATCH_SCENARIOS = 5_000


# ---- the task functions --------------------------------------------------------------------------

def score_runs_job(warehouse: str, policy_spec: str, runs: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Score a batch of stored runs under a policy: their rows of each policy table, for the flow to commit."""
    return score_runs(Store(warehouse), Policy.from_spec_json(policy_spec), runs)


# Retried when they fail (they only read); a rejudge batch is not: its calls cost money.
RETRIED_JOBS = frozenset({ingest_sessions_job, score_runs_job})


def _scenarios_in(path: Path) -> int:
    """About how many scenarios a session holds: its folder's entries, a results file's size at about
    20 KB a simulation (only to group and place the work)."""
    try:
        return len(os.listdir(path)) if path.is_dir() else path.stat().st_size // 20_000
    except OSError:
        return 0


def _scenarios_to_read(calls: list[tuple], enough: int) -> int:
    """The scenarios ``calls`` read, counted until there are ``enough`` (whether there are that many is
    all a runner asks): ``_jobs`` listed every session folder already, 80 ms at 100,000 in sessions of 25."""
    held = 0
    for (sessions,) in calls:
        for session in sessions:
            held += _scenarios_in(Path(session[1]))
            if held >= enough:
                return held
    return held


# A job reads sessions until it holds about this many scenarios: what a job costs beyond its
# scenarios (its frames, sending them back, the committing process taking them) is paid per job,
# about 2 ms, which a store of small sessions paid per session.
JOB_SCENARIOS = 500


def _jobs(sessions: list[Session]) -> list[tuple]:
    """The calls of the ingest job for ``sessions``, in order: groups of about ``JOB_SCENARIOS``
    scenarios, smaller where fewer would leave a core under four jobs (one session may hold more)."""
    sizes = [_scenarios_in(s.path) for s in sessions]
    target = min(JOB_SCENARIOS, sum(sizes) // (4 * (os.cpu_count() or 1)))
    calls, group, held = [], [], 0
    for session, size in zip(sessions, sizes):
        group.append((session.run_id, str(session.path), session.kind, session.group))
        held += size
        if held >= target:
            calls.append((group,))
            group, held = [], 0
    return calls + ([(group,)] if group else [])


# Jobs that parse in Python (the GIL held): under the `auto` runner they get a process per core
# once there is enough of them to repay starting the processes (about 0.4 s).
PARSING_JOBS = {ingest_sessions_job: _scenarios_to_read}
PROCESSES_FROM_SCENARIOS = 1_000


# ---- upkeep: each under the writer lock -----------------------------------------------------------

def migrate(store: Store) -> Path | None:
    """Convert a warehouse of the former table format to Delta tables: where the former files were
    kept, or None when there was nothing to convert."""
    if store.tables.legacy_tables() is None:
        return None
    with store.lock.hold():
        if store.tables.legacy_tables() is None:  # converted by another process meanwhile
            return None
        kept = convert_legacy(store)
        store.views.build()
    return kept


def compact(store: Store) -> None:
    """Drop rows of replaced ingests, bin-pack small files, vacuum files older than the history kept."""
    store.tables.require(writing=True)
    with store.lock.hold():
        prepare_for_writing(store)
        store.maintenance.compact()
        store.views.build()


def record_reviews(store: Store, reviews: list[Review], unreadable: Sequence[str] = (),
                   source: str = "") -> ReviewResult:
    """Check the reviews against the stored runs and store them as one write step, under one hold of
    the writer lock; a bad one (or an ``unreadable`` line of their file, ``source``) stores nothing."""
    store.tables.require(writing=True)
    with store.lock.hold(REVIEW_LOCK_WAIT_S):
        prepare_for_writing(store)
        problems = sorted([*unreadable, *check_reviews(store, reviews)],
                          key=lambda p: int(p.split(":")[0].removeprefix("line ")) if p.startswith("line ") else 0)
        if problems:
            raise InvalidArgument(f"{source}nothing stored: " + (
                problems[0] if len(problems) == 1 else f"{len(problems)} bad lines:\n" + "\n".join(problems)))
        if not reviews:
            raise InvalidArgument(f"{source}no review to store")
        return ReviewResult(len(reviews), *store_reviews(store, reviews, describe_reviews(reviews)))


def export_new_runs(warehouse: str, run_ids: list[str], export_url: str) -> ExportResult:
    """The scheduled refresh's export: the new runs' verdicts under the recorded policy, sent to an
    OpenTelemetry backend (each scenario once per endpoint: a refresh after a failed one sends the rest)."""
    store = Store(warehouse)
    scenarios, events = export_otlp(store, export_url, Policy().id, RECORDED, run_ids)
    return ExportResult(export_url, RECORDED, scenarios, events)


# ---- fan-out ------------------------------------------------------------------------------------

class Fanout(Protocol):
    # True: one stream of work in this process (a rejudge asks all its calls as one batch, with a
    # live progress bar); False: each batch its own task run (Prefect)
    streams: bool

    def run(self, job: Callable, calls: list[tuple]) -> Iterator:
        """``job(*call)`` for every call, results in the order they complete."""

    def log(self, level: str, message: str) -> None: ...


def _with_retries(job: Callable, *args):
    for attempt in range(TASK_RETRIES + 1):
        try:
            return job(*args)
        except Exception:
            if attempt == TASK_RETRIES:
                raise
            time.sleep(RETRY_DELAY_S)


class InProcess:
    """Tasks on a local pool: threads, or one process per core (``processes``); ``auto`` chooses
    processes for parsing jobs with enough work on a machine with more than one core."""

    RUNNERS = ("auto", "threads", "processes")

    def __init__(self, runner: str = "auto"):
        if runner not in self.RUNNERS:
            raise InvalidArgument(f"unknown in-process task runner '{runner}'; choose one of {', '.join(self.RUNNERS)}")
        self.runner = runner

    def _uses_processes(self, job: Callable, calls: list[tuple]) -> bool:
        if self.runner != "auto":
            return self.runner == "processes"
        work = PARSING_JOBS.get(job)
        return (work is not None and (os.cpu_count() or 1) > 1 and len(calls) > 1
                and "forkserver" in multiprocessing.get_all_start_methods()  # not on Windows
                and work(calls, PROCESSES_FROM_SCENARIOS) >= PROCESSES_FROM_SCENARIOS)

    def _executor(self, job: Callable, calls: list[tuple]) -> Executor:
        if not self._uses_processes(job, calls):
            return ThreadPoolExecutor()
        # Not forked: a child forked from a process whose Polars / Rust thread pools are running
        # inherits their locks held and hangs.
        return ProcessPoolExecutor(os.cpu_count(), mp_context=multiprocessing.get_context("forkserver"))

    streams = True

    def run(self, job: Callable, calls: list[tuple]) -> Iterator:
        if not calls:
            return
        run = functools.partial(_with_retries, job) if job in RETRIED_JOBS else job
        with self._executor(job, calls) as pool:
            for future in as_completed([pool.submit(run, *call) for call in calls]):
                yield future.result()

    def log(self, level: str, message: str) -> None:
        pass  # the command line prints every report itself


def _progress(enabled: bool, *columns) -> Progress:
    """A bar on stderr (where the commands ask whether there is a terminal), gone when done."""
    from rich.console import Console

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), *columns,
                    TimeElapsedColumn(), console=Console(stderr=True), disable=not enabled, transient=True)


# ---- the flow bodies ------------------------------------------------------------------------------

def ingest(fanout: Fanout, runs_dirs: list[str] | None = None, warehouse: str | None = None, force: bool = False,
           progress: bool = False, group: str | None = None) -> IngestResult:
    """Ingest new or changed runs under ``runs_dirs`` into the warehouse and refresh its views.

    ``group`` names the system the runs are trials of (pass^k); by default voice-agent sessions
    share one group and each tau2 / tau-bench file is its own.
    """
    store = Store(warehouse)
    roots = [Path(p) for p in (runs_dirs or [DEFAULT_RUNS])]
    sessions = discover_sessions(roots, group)
    if not sessions:
        raise NothingFound(f"no run found in {', '.join(map(str, roots))}: expected voice-agent eval_* session folders "
                           "(with run_args.json), tau2-bench results or tau-bench trajectory files, at any depth")
    with store.lock.hold():
        converted = prepare_for_writing(store)
        save_policy(store, Policy())
        plan = plan_ingest(store, sessions, force=force)
        for session, reason in plan.refused:
            fanout.log("error", f"{session.path}: not ingested: {reason}")
        record_refusals(store, plan.refused)
        reports, pending = [], []
        # A commit scores what its sessions hold; a policy under a judge other than the runs' own, or
        # one that takes reviews or keeps calibrated verdicts only, needs the tables: it is scored once the runs
        # are committed (rescore).
        scoring = [p for p in stored_policies(store) if p.judge is None and not p.reviews and not p.selective]
        with _progress(progress) as bar:
            job = bar.add_task("ingesting sessions", total=len(plan.todo))
            for ingested in fanout.run(ingest_sessions_job, _jobs(plan.todo)):
                reports += ingested.reports
                pending.append(ingested)
                if sum(r.scenarios for r in pending) >= COMMIT_BATCH_SCENARIOS:
                    commit_ingested(store, pending, scoring)
                    pending = []
                bar.advance(job, len(ingested.reports))
        commit_ingested(store, pending, scoring)
        ingested_ids = [r.run_id for r in reports if r.scenarios]
        # Scored from the tables once committed: the policies the commits could not score, and every
        # policy another writer stored meanwhile (on object storage writers do not wait for each other):
        # what this ingest commits is scored under every policy stored by then.
        scored_on_commit = {p.id for p in scoring}
        for policy in stored_policies(store) if ingested_ids else ():
            if policy.id not in scored_on_commit:
                rescore(store, policy, ingested_ids)
        if plan.regroup:
            group_runs(store, plan.regroup)
        if plan.todo:
            store.maintenance.compact_if_fragmented()
        store.views.build()
    return IngestResult(store.location, sorted(reports, key=lambda r: r.run_id), [s.run_id for s in plan.unchanged],
                        [Regrouped(s.run_id, s.group) for s in plan.regroup],
                        [Refusal(printable(str(s.path)), reason) for s, reason in plan.refused], converted,
                        source_problems=plugin_problems())


def _policies_to_score(store: Store, policy_specs: list[str] | None, policy_name: str | None,
                       run_ids: list[str] | None) -> list[Policy]:
    """The policies a re-score scores, checked: those of ``policy_specs`` (new or stored), the stored
    one named ``policy_name``, else every stored policy. A given one must not clash with a stored one
    by name or content, whitelist only domains some run has, and, under a judge, have every judge
    input in scope judged by it."""
    if not policy_specs and not policy_name:
        return stored_policies(store)
    policies = [Policy.from_spec_json(s) for s in policy_specs] if policy_specs else [find_policy(store, policy_name)]
    for policy in policies:
        check_policy(store, policy)
        check_whitelisted_domains(store, policy)
        if policy.judge:
            find_judge(store, policy.judge)
        require_judged(store, policy, run_ids)
    return policies


def rescore_policies(fanout: Fanout, warehouse: str | None = None, policy_specs: list[str] | None = None,
                     run_ids: list[str] | None = None, policy_name: str | None = None) -> RescoreResult:
    """Re-score stored runs from the tables alone under the given policies (JSON specs), the stored
    policy named ``policy_name``, or every stored policy. A new policy is stored once all its scores
    are written: it appears whole."""
    store = Store(warehouse)
    store.tables.require(writing=True)
    with store.lock.hold():
        converted = prepare_for_writing(store)
        policies = _policies_to_score(store, policy_specs, policy_name, run_ids)
        scored = {}
        for policy in policies:
            scored[policy.name] = rescore(store, policy, run_ids, _score_on(fanout, store, policy))
            stored = save_policy(store, policy)
            # runs another writer re-ingested while they were scored have a new generation: scored too,
            # until none is left unscored (on object storage only: locally the writer lock keeps
            # other writers out)
            for _ in range(0 if store.tables.is_local else RESCORE_CATCH_UP):
                late = rescore(store, policy, run_ids)
                scored[policy.name] += late
                if not late:
                    break
            if stored or scored[policy.name]:  # a step the log shows: something changed
                store.log.record("rescore", f"policy {policy.name} ({policy.id}): {scored[policy.name]} scenarios scored")
        store.maintenance.compact_if_fragmented()
        store.views.build()
    chosen = policies[0] if len(policies) == 1 and (policy_specs or policy_name) else None
    rule = chosen and chosen.reviews and chosen.review_rule
    return RescoreResult(store.location, scored, chosen and chosen.name, chosen and chosen.id,
                         chosen and (chosen.judge or RECORDED), converted,
                         undecided=undecided(store, rule, chosen.adjudicator) if rule else 0, review_rule=rule or None)


# A re-score's batches scored at once by a fan-out's tasks: one committing while the next is scored,
# as in one process (each batch's frames are held until committed).
SCORED_AT_ONCE = 2


def _score_on(fanout: Fanout, store: Store, policy: Policy) -> Callable | None:
    """How a re-score's batches are scored: here (None) where the fan-out is this process, else as its
    tasks (on a cluster's workers), ``SCORED_AT_ONCE`` batches at a time."""
    if fanout.streams:
        return None

    def score_batches(batches: list) -> Iterator[dict]:
        calls = [(store.location, policy.spec_json(), batch) for batch in batches]
        for start in range(0, len(calls), SCORED_AT_ONCE):
            yield from fanout.run(score_runs_job, calls[start:start + SCORED_AT_ONCE])

    return score_batches


def rejudge_job(warehouse: str, spec_json: str, keys, concurrency: int, api_key_env: str | None,
                retry: RetryPolicy) -> BatchResult:
    """Ask the judge about one batch of stored inputs; their judgements come back with the result,
    for the flow to commit (the key is read here, never passed as a parameter a flow run would record)."""
    return judge_batch(Store(warehouse), JudgeSpec.model_validate_json(spec_json), keys, concurrency=concurrency,
                       api_key=api_key_from(api_key_env), policy=retry)


def rejudge(fanout: Fanout, warehouse: str, judge: str, settings: dict | None = None, run_ids: list[str] | None = None,
            only_errors: bool = False, concurrency: int = 8, api_key_env: str | None = None, retries: int = 5,
            backoff: float = 0.5, progress: bool = False, repeat: int = 1) -> RejudgeResult:
    """``rejudge_one`` of the judge ``judge``; with ``repeat`` K above 1, of each of its K asks in turn
    (the judges ``NAME#k``, the k-th with seed S + k, S the settings' seed or 0), then the majority
    of the asks committed as the judge ``NAME@majority``."""
    if judge.endswith(MAJORITY):
        raise InvalidArgument(f"judge '{judge}' is the majority of a repeated judge's asks: rejudge "
                              f"--judge {judge.removesuffix(MAJORITY)} --repeat K makes it")
    check_judge_name(judge)  # NAME#k and NAME@majority are made by --repeat alone
    args = (run_ids, only_errors, concurrency, api_key_env, retries, backoff, progress)
    if repeat == 1:
        return rejudge_one(fanout, warehouse, judge, settings, *args)
    keep_majority_of_policies(Store(warehouse), judge, repeat)
    settings = dict(settings or {})
    start = settings.get("seed") or 0
    results = [rejudge_one(fanout, warehouse, ask_name(judge, k), {**settings, "seed": start + k}, *args)
               for k in range(1, repeat + 1)]
    commit_majority(Store(warehouse), judge)
    others = re.sub(r"(, )?seed=-?\d+", "", results[0].settings).lstrip(", ")
    return dataclasses.replace(
        results[0], judge=judge, asks=repeat,
        settings=f"{repeat} asks, seeds {start + 1} to {start + repeat}" + (f", {others}" if others else ""),
        **{name: sum(getattr(r, name) for r in results) for name in (
            "scope", "judged_already", "asked", "errors", "retries", "tokens", "recovered", "unanswered", "odd_scores")},
        without_call=dict(sum((Counter(r.without_call) for r in results), Counter())),
        error_samples=list(dict.fromkeys(s for r in results for s in r.error_samples))[:3])


def rejudge_one(fanout: Fanout, warehouse: str, judge: str, settings: dict | None = None,
                run_ids: list[str] | None = None, only_errors: bool = False, concurrency: int = 8,
                api_key_env: str | None = None, retries: int = 5, backoff: float = 0.5,
                progress: bool = False) -> RejudgeResult:
    """Ask the judge ``judge`` (of ``settings``: those unset as stored, see ``define_judge``) about
    every stored judge input it has not judged (taking over its base judge's judgements that did not
    fail; ``only_errors``: its own failed ones asked again too, and the base defaults to the runs' own
    judge), a batch at a time through ``fanout``: one stream of calls here with a live progress bar,
    or a Prefect task per batch. Either way the answers are journalled and committed here, as they
    come (a task's with its batch)."""
    store = Store(warehouse)
    store.tables.require(writing=True)
    retry = RetryPolicy(attempts=retries + 1, backoff_s=backoff)
    with store.lock.hold(COMMIT_LOCK_WAIT_S):
        converted = prepare_for_writing(store)
    settings = dict(settings or {})
    spec = define_judge(store, judge, default_base=settings.get("base") or (RECORDED if only_errors else None),
                        **settings)
    spec_json = spec.model_dump_json()
    recovered = commit_orphaned_journals(store)
    plan = plan_rejudge(store, spec, run_ids, only_errors)  # refuses what cannot be asked, before the judge is stored
    new = spec.name not in {judge.name for judge in stored_judges(store)}
    total, samples = Tally(), []  # of the batches done
    with _progress(progress, TextColumn("{task.fields[stats]}")) as bar:  # errors, retries, tokens
        job = bar.add_task(f"judge {spec.name}", total=plan.todo.height, stats="")
        shown = [0.0]

        def advanced(batch: Tally) -> None:  # ten times a second at most: a redraw per answer costs the calls their pace
            done = total.done + batch.done
            if time.monotonic() - shown[0] >= 0.1 or done == plan.todo.height:
                shown[0] = time.monotonic()
                bar.update(job, completed=done, stats=f"{total.errors + batch.errors} errors, "
                                                      f"{total.retries + batch.retries} retries, "
                                                      f"{total.tokens + batch.tokens:,} tokens")

        def add(batch: BatchResult) -> None:
            for name in ("done", "errors", "retries", "tokens", "answered", "unanswered", "odd_scores"):
                setattr(total, name, getattr(total, name) + getattr(batch.tally, name))
            samples[:] = list(dict.fromkeys(samples + batch.error_samples))[:3]
            if batch.down:
                raise JudgeUnavailable(batch.down)
            if batch.refused:
                raise JudgeRefused(f"{batch.refused}; {total.done} judgements made before it are kept"
                                   if total.done else batch.refused)

        def ask(keys, calls_at_once: int, policy: RetryPolicy) -> BatchResult:
            if fanout.streams:  # in this process: each answer committed as it comes, the bar redrawn
                return judge_batch(store, spec, keys, concurrency=calls_at_once, api_key=api_key_from(api_key_env),
                                   policy=policy, on_answer=advanced, keep=committer.add)
            call = (warehouse, spec_json, keys, calls_at_once, api_key_env, policy)
            batch = list(fanout.run(rejudge_job, [call]))[0]
            for row in batch.rows:
                committer.add(row)
            return batch

        def keep_judge() -> None:
            with store.lock.hold(COMMIT_LOCK_WAIT_S):
                if save_judge(store, spec):
                    store.log.record("rejudge", f"judge {spec.name}: {spec.describe()}")
                    store.views.build()

        try:
            with JudgementCommitter(store, spec.name) as committer:  # left once every answer is committed
                # One call first, alone: a refused key, a wrong URL or model stops the command here (any
                # 4xx but 408 and 429, the judge's own message shown), with nothing stored.
                if plan.todo.height:
                    add(ask(plan.todo.head(1), 1, dataclasses.replace(retry, alone=True)))
                if plan.copied.height:
                    commit_judgements(store, plan.copied,
                                      f"judge {spec.name}: {plan.copied.height} judgements without a call")
                # In-process one stream of calls; a Prefect task per batch (each batch's last calls leave
                # the concurrency idle while they finish)
                rest = plan.todo.slice(1)
                size = max(rest.height, 1) if fanout.streams else JUDGE_BATCH
                for batch in (rest.slice(i, size) for i in range(0, rest.height, size)):
                    add(ask(batch, concurrency, retry))
            # the inputs whose request another asked: its answer, now that the committer has committed them all
            twins = twin_judgements(store, plan.twins, spec.name)
            if twins.height:
                commit_judgements(store, twins, f"judge {spec.name}: {twins.height} judgements of the same requests")
        except JudgeUnavailable as down:
            if new and not total.answered and not plan.copied.height:  # it never answered: nothing of it is kept, its name stays free
                forget_judge(store, spec.name)
                raise JudgeUnavailable(f"{down}; judge '{spec.name}' never answered, so nothing of it is kept") from None
            keep_judge()
            raise JudgeUnavailable(f"{down}; {total.answered} answers are kept; ask the rest later: "
                                   f"scorelake rejudge --judge {spec.name} --only-errors") from None
        if new and plan.todo.height and not total.answered and not plan.copied.height:
            forget_judge(store, spec.name)
            raise JudgeUnavailable(f"judge '{spec.name}' answered none of {total.done} calls (last: "
                                   f"{samples[-1] if samples else 'no reply'}): nothing of it is kept")
        keep_judge()
    sources = Counter([*plan.copied["source"], *twins["source"]])
    return RejudgeResult(store.location, spec.name, spec.describe(), plan.scope, plan.judged_already, dict(sources),
                         total.done, total.errors, total.retries, total.tokens, recovered, samples,
                         unanswered=total.unanswered, odd_scores=total.odd_scores, converted=converted)


def gate_new_runs(warehouse: str, run_ids: list[str], notify_url: str | None = None, max_drop: float = 0.0,
                  outbox: Path | None = None) -> tuple[list[GateResult], Delivery | None]:
    """Gate each of ``run_ids`` on the run before it in its group (under the recorded policy); with
    ``notify_url`` (a Slack-compatible incoming webhook), the regressions are POSTed to it after the
    alerts earlier runs could not deliver (kept in ``outbox``, as are those this one cannot)."""
    # here, not above: only this flow needs the comparison and its statistics (an ingest worker loads neither)
    from scorelake.pipeline import alert, comparison, deliver, gate, previous_runs

    store = Store(warehouse)
    pairs = previous_runs(store, run_ids)
    results = []
    if pairs:
        with store.views.connect() as con:
            results = [gate(comparison(store, con, base, candidate, Policy().id), max_drop)
                       for base, candidate in pairs]
    if not notify_url or outbox is None:
        return results, None
    return results, deliver(notify_url, [alert(r) for r in results if not r.passed], outbox)
