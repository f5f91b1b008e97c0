"""The Prefect flows: ingest run directories, re-score stored runs, ask a judge again (rejudge), and
the scheduled refresh of ingest and re-score, served as a deployment.

The flows run the bodies of ``flows.flow_bodies`` with their task functions wrapped as Prefect tasks,
so a flow run and an in-process command do the same work; Prefect adds the flow and task runs in
its API, retries and the task runners (threads, processes, Dask). Importing this module imports
Prefect: ``flows.runtime`` does so only when a flow runs through Prefect.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Callable, Iterator

import polars as pl
from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed

from scorelake.flows import flow_bodies
from scorelake.flows.flow_bodies import (
    RETRY_DELAY_S,
    TASK_RETRIES,
    ingest_sessions_job,
    rejudge_job,
    score_runs_job,
)
from scorelake.judge_client import RetryPolicy
from scorelake.pipeline import BatchResult
from scorelake.present import gate_summary
from scorelake.transforms.errors import InvalidArgument
from scorelake.transforms.results import IngestResult, RefreshResult, RejudgeResult, RescoreResult
from scorelake.transforms.sources import IngestedRuns

TASK_RUNNERS = ("auto", "threads", "processes", "dask")


def make_task_runner(kind: str, dask_address: str | None = None):
    """The task runner for the ingest fan-out: threads (Prefect's default), a local process pool,
    or Dask through prefect-dask (an existing cluster at ``dask_address``, else a local
    multi-process cluster with one worker per core). ``auto`` is threads here: a flow run's tasks
    report to the Prefect server from its own process."""
    if kind in ("auto", "threads"):
        from prefect.task_runners import ThreadPoolTaskRunner

        return ThreadPoolTaskRunner()
    if kind == "processes":
        from prefect.task_runners import ProcessPoolTaskRunner

        return ProcessPoolTaskRunner(max_workers=os.cpu_count())
    if kind == "dask":
        from prefect_dask import DaskTaskRunner

        if dask_address:
            return DaskTaskRunner(address=dask_address)
        return DaskTaskRunner(cluster_kwargs={"n_workers": os.cpu_count(), "threads_per_worker": 1,
                                              "processes": True, "dashboard_address": None})
    raise InvalidArgument(f"unknown task runner '{kind}'; choose one of {', '.join(TASK_RUNNERS)}")


# Results are not cached: the warehouse's fingerprints already skip unchanged sessions durably,
# across processes.
def _ingest_task_name() -> str:
    from prefect.runtime import task_run

    sessions = task_run.parameters["sessions"]
    return f"ingest {sessions[0][0]}" + (f" and {len(sessions) - 1} more" if len(sessions) > 1 else "")


@task(name="ingest-sessions", retries=TASK_RETRIES, retry_delay_seconds=RETRY_DELAY_S, cache_policy=NO_CACHE,
      task_run_name=_ingest_task_name)
def ingest_sessions_task(sessions: list[tuple[str, str, str, str | None]]) -> IngestedRuns:
    ingested = ingest_sessions_job(sessions)
    logger = get_run_logger()
    for report in ingested.reports:
        for problem in report.problems:
            logger.warning("%s: quarantined %s", report.run_id, problem)
    return ingested


def _score_task_name() -> str:
    from prefect.runtime import task_run

    runs = task_run.parameters["runs"]["run_id"]
    policy = json.loads(task_run.parameters["policy_spec"])["name"]
    return f"score {policy}: {runs[0]}" + (f" and {len(runs) - 1} more runs" if len(runs) > 1 else "")


@task(name="score-runs", retries=TASK_RETRIES, retry_delay_seconds=RETRY_DELAY_S, cache_policy=NO_CACHE,
      task_run_name=_score_task_name)
def score_runs_task(warehouse: str, policy_spec: str, runs: pl.DataFrame) -> dict[str, pl.DataFrame]:
    return score_runs_job(warehouse, policy_spec, runs)


# Not retried: a batch's calls cost money. Its answers come back to the flow, which journals and commits them.
@task(name="rejudge-batch", cache_policy=NO_CACHE, task_run_name="judge a batch of calls")
def rejudge_batch_task(warehouse: str, spec_json: str, keys, concurrency: int, api_key_env: str | None,
                       retry: RetryPolicy) -> BatchResult:
    result = rejudge_job(warehouse, spec_json, keys, concurrency, api_key_env, retry)
    get_run_logger().info("%d judged, %d errors, %d retries", result.tally.done, result.tally.errors,
                          result.tally.retries)
    return result


class PrefectTasks:
    """The fan-out of a flow run: each task function submitted as its Prefect task to the flow's task runner."""

    TASKS = {ingest_sessions_job: ingest_sessions_task, score_runs_job: score_runs_task,
             rejudge_job: rejudge_batch_task}
    streams = False

    def run(self, job: Callable, calls: list[tuple]) -> Iterator:
        futures = [self.TASKS[job].submit(*call) for call in calls]
        for future in as_completed(futures):
            yield future.result()

    def log(self, level: str, message: str) -> None:
        getattr(get_run_logger(), level)(message)


@flow(name="scorelake-ingest")
def ingest_flow(runs_dirs: list[str] | None = None, warehouse: str | None = None, force: bool = False,
                progress: bool = False, group: str | None = None) -> IngestResult:
    """Ingest new or changed runs under ``runs_dirs`` into the warehouse and refresh its views."""
    return flow_bodies.ingest(PrefectTasks(), runs_dirs, warehouse, force, progress, group)


@flow(name="scorelake-rescore")
def rescore_flow(warehouse: str | None = None, policy_specs: list[str] | None = None,
                 run_ids: list[str] | None = None, policy_name: str | None = None) -> RescoreResult:
    """Re-score stored runs under the given policies (JSON specs), the stored one named
    ``policy_name``, or every stored policy."""
    return flow_bodies.rescore_policies(PrefectTasks(), warehouse, policy_specs, run_ids, policy_name)


@flow(name="scorelake-rejudge")
def rejudge_flow(warehouse: str, judge: str, settings: dict | None = None, run_ids: list[str] | None = None,
                 only_errors: bool = False, concurrency: int = 8, api_key_env: str | None = None, retries: int = 5,
                 backoff: float = 0.5, progress: bool = False, repeat: int = 1) -> RejudgeResult:
    """Ask a judge again (``repeat`` times) about the stored judge inputs it has not judged, one task
    per batch of calls."""
    return flow_bodies.rejudge(PrefectTasks(), warehouse, judge, settings, run_ids, only_errors, concurrency,
                               api_key_env, retries, backoff, repeat=repeat)


@task(name="gate-new-runs", cache_policy=NO_CACHE)
def gate_task(warehouse: str, run_ids: list[str], notify_url: str | None, max_drop: float) -> list:
    from prefect.artifacts import create_markdown_artifact

    results, delivery = flow_bodies.gate_new_runs(warehouse, run_ids, notify_url, max_drop,
                                                  _outbox(warehouse, notify_url) if notify_url else None)
    for result in results:
        create_markdown_artifact(markdown=gate_summary(result), key=f"gate-{_artifact_key(result.comparison.run_b)}",
                                 description="scorelake gate of a new run against the run before it in its group")
        if not result.passed:
            get_run_logger().warning(gate_summary(result))
    if delivery is not None and delivery.refused:
        get_run_logger().error(f"{delivery.refused} alert(s) refused by the webhook for good: set aside in "
                               f"{_outbox(warehouse, notify_url)}.refused with the reason")
    if delivery is not None and delivery.busy:
        get_run_logger().warning("another flow run is delivering alerts: this run's are in the outbox, sent by it")
    elif delivery is not None and delivery.kept:
        get_run_logger().error(f"{delivery.kept} alert(s) not delivered to the webhook ({delivery.last_error}): "
                               "kept, and sent with the next run")
    return results


def _outbox(warehouse: str, notify_url: str) -> Path:
    """Where this machine keeps the alerts to a webhook about a warehouse that were not delivered yet
    (under Prefect's home: the deployment's flow runs all run on the machine that serves it)."""
    from prefect.settings import PREFECT_HOME

    key = hashlib.sha256(f"{warehouse}\n{notify_url}".encode()).hexdigest()[:16]
    return Path(PREFECT_HOME.value()) / "scorelake-alerts" / f"{key}.jsonl"


def _artifact_key(run_id: str) -> str:
    """A Prefect artifact key (lowercase letters, digits and dashes) for a run id."""
    return "".join(c if c.isalnum() else "-" for c in run_id.lower()).strip("-")[:80] or "run"


@task(name="export-new-runs", cache_policy=NO_CACHE)
def export_task(warehouse: str, run_ids: list[str], export_url: str):
    exported = flow_bodies.export_new_runs(warehouse, run_ids, export_url)
    get_run_logger().info(f"{exported.scenarios} scenarios' verdicts ({exported.events} events) sent to {export_url}")
    return exported


@flow(name="scorelake-refresh")
def refresh_flow(runs_dirs: list[str], warehouse: str | None = None, notify_url: str | None = None,
                 max_drop: float = 0.0, export_url: str | None = None) -> RefreshResult:
    """The scheduled job: ingest what is new, re-score every stored policy, then gate each new run on
    the run before it in its group (a Prefect artifact each; a regression POSTed to ``notify_url``),
    and send the new runs' verdicts to an OpenTelemetry backend (``export_url``)."""
    ingested = ingest_flow(runs_dirs=runs_dirs, warehouse=warehouse)
    rescored = rescore_flow(warehouse=warehouse)
    new_runs = [r.run_id for r in ingested.ingested if r.scenarios]
    gates = gate_task(ingested.warehouse, new_runs, notify_url, max_drop)
    exported = export_task(ingested.warehouse, new_runs, export_url) if export_url and new_runs else None
    return RefreshResult(ingested, rescored, gates, exported)


def serve(runs_dirs: list[str], warehouse: str, name: str, cron: str | None, interval: float | None,
          notify_url: str | None = None, max_drop: float = 0.0, export_url: str | None = None) -> None:
    """Serve the deployment ``scorelake-refresh/<name>`` on its schedule, in this process, until stopped."""
    from prefect import serve as prefect_serve

    # one flow run at a time: a refresh that outlasts the interval (a long ingest, a webhook's delivery)
    # is not overlapped by the next, which waits for it
    prefect_serve(refresh_flow.to_deployment(name=name, cron=cron, interval=interval, parameters={
        "runs_dirs": runs_dirs, "warehouse": warehouse, "notify_url": notify_url, "max_drop": max_drop,
        "export_url": export_url}), limit=1)
