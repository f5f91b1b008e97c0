"""Prefect flows: ingest run directories, re-score stored runs, and the scheduled refresh of both.

Flows only orchestrate; the work is in ``transforms.pipeline``. A task handles a whole session
(or, for re-scoring, a whole policy), never a single scenario.
"""

from __future__ import annotations

import os
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from transforms.discover import Session, discover_sessions
from transforms.pipeline import (
    check_policy,
    ingest_session,
    plan_ingest,
    prepare_for_writing,
    record_refusals,
    rescore,
    save_policy,
    stored_policies,
)
from transforms.policy import Policy
from transforms.warehouse import DEFAULT_WAREHOUSE, Warehouse

DEFAULT_RUNS = DEFAULT_WAREHOUSE.parent / "runs"
TASK_RUNNERS = ("threads", "processes", "dask")


def make_task_runner(kind: str, dask_address: str | None = None):
    """The task runner for the ingest fan-out: threads (Prefect's default), a local process pool,
    or Dask through prefect-dask (an existing cluster at ``dask_address``, else a local
    multi-process cluster with one worker per core)."""
    if kind == "threads":
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
    raise ValueError(f"unknown task runner '{kind}'; choose one of {', '.join(TASK_RUNNERS)}")


def _progress(enabled: bool) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    disable=not enabled, transient=True)


# Writes are idempotent (each attempt writes a fresh generation), so a retry after a transient
# I/O error is safe; results are not cached: the warehouse's fingerprints already skip unchanged
# sessions durably, across processes.
@task(name="ingest-session", retries=2, retry_delay_seconds=1, cache_policy=NO_CACHE,
      task_run_name="ingest {run_id}")
def ingest_session_task(warehouse: str, run_id: str, path: str, kind: str, group: str | None) -> dict:
    wh = Warehouse(warehouse)
    report = ingest_session(wh, Session(run_id, Path(path), kind, group), stored_policies(wh))
    if report.problems:
        logger = get_run_logger()
        for problem in report.problems:
            logger.warning("%s: quarantined %s", run_id, problem)
    return report.__dict__


@flow(name="scorelake-ingest")
def ingest_flow(runs_dirs: list[str] | None = None, warehouse: str | None = None, force: bool = False,
                progress: bool = False, group: str | None = None) -> dict:
    """Ingest new or changed runs under ``runs_dirs`` into the warehouse and refresh its views.

    ``group`` names the system the runs are trials of (pass^k); by default voice-agent sessions
    share one group and each tau2 / tau-bench file is its own.
    """
    wh = Warehouse(warehouse)
    sessions = discover_sessions([Path(p) for p in (runs_dirs or [str(DEFAULT_RUNS)])], group)
    with wh.writer_lock():
        prepare_for_writing(wh)
        save_policy(wh, Policy())
        plan = plan_ingest(wh, sessions, force=force)
        logger = get_run_logger()
        for session, reason in plan.refused:
            logger.error("%s: not ingested: %s", session.path, reason)
        record_refusals(wh, plan.refused)
        futures = [ingest_session_task.submit(str(wh.root), s.run_id, str(s.path), s.kind, s.group)
                   for s in plan.todo]
        reports = []
        with _progress(progress) as bar:
            job = bar.add_task("ingesting sessions", total=len(futures))
            for future in as_completed(futures):
                reports.append(future.result())
                bar.advance(job)
        wh.compact_if_fragmented()
        wh.build_views()
    return {
        "warehouse": str(wh.root),
        "ingested": sorted(reports, key=lambda r: r["run_id"]),
        "unchanged": [s.run_id for s in plan.unchanged],
        "refused": [{"path": str(s.path), "reason": reason} for s, reason in plan.refused],
    }


@task(name="rescore-policy", retries=2, retry_delay_seconds=1, cache_policy=NO_CACHE,
      task_run_name="rescore {policy_name}")
def rescore_task(warehouse: str, policy_name: str, policy_spec: str, run_ids: list[str] | None) -> int:
    return rescore(Warehouse(warehouse), Policy.from_spec_json(policy_spec), run_ids)


@flow(name="scorelake-rescore")
def rescore_flow(warehouse: str | None = None, policy_specs: list[str] | None = None,
                 run_ids: list[str] | None = None) -> dict:
    """Re-score stored runs from Parquet alone under the given policies (JSON specs; default: every
    stored policy). A new policy is stored once all its scores are written: it appears whole."""
    wh = Warehouse(warehouse)
    wh.require()
    with wh.writer_lock():
        prepare_for_writing(wh)
        policies = ([Policy.from_spec_json(s) for s in policy_specs] if policy_specs else stored_policies(wh))
        for policy in policies:
            check_policy(wh, policy)
        futures = {p.name: rescore_task.submit(str(wh.root), p.name, p.spec_json(), run_ids) for p in policies}
        scored = {name: future.result() for name, future in futures.items()}
        for policy in policies:
            save_policy(wh, policy)
        wh.compact_if_fragmented()
        wh.build_views()
    return {"warehouse": str(wh.root), "scored": scored}


@flow(name="scorelake-refresh")
def refresh_flow(runs_dirs: list[str], warehouse: str | None = None) -> dict:
    """The scheduled job: ingest what is new, then re-score every stored policy."""
    ingested = ingest_flow(runs_dirs=runs_dirs, warehouse=warehouse)
    rescored = rescore_flow(warehouse=warehouse)
    return {"ingest": ingested, "rescore": rescored}
