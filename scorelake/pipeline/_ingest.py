"""Ingest, step by step: plan which sessions are new or changed, read a group of them (``_session``,
what a worker process runs), score and commit a batch of groups. Nothing here knows about Prefect, so each step
is testable on its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from scorelake.storage import Store
from scorelake.transforms.columns import empty_frame, frame
from scorelake.transforms.sources import IngestedRuns
from scorelake.transforms.scoring import Policy, score_and_count
from scorelake.transforms.sources import (
    Session,
    is_utf8,
    printable,
    same_content,
    session_fingerprint,
)
from scorelake.transforms.voice import turn_taking


@dataclass
class IngestPlan:
    todo: list[Session]
    unchanged: list[Session]
    # (session, reason) for sessions that cannot be ingested as they stand
    refused: list[tuple[Session, str]]
    # unchanged sessions given another run group: their runs row is changed, nothing re-read
    regroup: list[Session] = field(default_factory=list)


def plan_ingest(store: Store, sessions: list[Session], force: bool = False) -> IngestPlan:
    """Which sessions are new or changed since their last ingest (by stat fingerprint). A session
    found again under another folder is the same run when its files are byte for byte the same
    (unchanged), a clash otherwise (refused)."""
    committed = {r["run_id"]: r for r in store.tables.committed_runs().iter_rows(named=True)}
    plan = IngestPlan([], [], [])
    seen: dict[str, Session] = {}
    for session in sessions:
        if not is_utf8(str(session.path)):
            plan.refused.append((session, "its path is not UTF-8: rename it"))
            continue
        path = str(session.path.resolve())
        if session.run_id in seen:
            if not same_content(seen[session.run_id], session.path):
                plan.refused.append((session, f"duplicate run id: also found at {seen[session.run_id].path}, "
                                              "with other contents"))
            continue
        seen[session.run_id] = session
        stored = committed.get(session.run_id)
        if stored is not None and stored["session_path"] != path:
            if same_content(session, Path(stored["session_path"])):
                plan.unchanged.append(session)
            else:
                plan.refused.append((session, f"duplicate run id: already ingested from {stored['session_path']}, "
                                              "with other contents"))
        elif not force and stored is not None and stored["fingerprint"] == session_fingerprint(session):
            plan.unchanged.append(session)
            if session.group is not None and session.group != stored["run_group"]:
                plan.regroup.append(session)
        else:
            plan.todo.append(session)
    return plan


def commit_ingested(store: Store, batch: list[IngestedRuns], policies: list[Policy]) -> None:
    """Commit a batch of ingested sessions scored under ``policies``: one Delta commit per table,
    ``runs`` last (the switch). The batch is scored at once: a scoring pass costs about 9 ms
    whether it scores 50 scenarios or 5,000 (Polars planning the signals), so scored a session at a
    time, a store of small sessions spent most of its ingest there."""
    if batch:
        tables = {table: pl.concat([r.tables[table] for r in batch]) for table in batch[0].tables}  # all read
        tables["voice"] = turn_taking(tables["voice"].lazy()).collect(engine="in-memory")  # a batch at once, as scored
        scored = [score_and_count(tables["scenarios"].lazy(), policy) for policy in policies]
        for table in ("scores", "rate_counts"):
            tables[table] = pl.concat([s[table] for s in scored]) if scored else empty_frame(table)
        store.tables.commit_runs(pl.concat([r.runs for r in batch]), tables)
        run_ids = sorted(report.run_id for r in batch for report in r.reports)
        store.log.record("ingest", f"{len(run_ids)} runs: {', '.join(run_ids)}")


def group_runs(store: Store, sessions: list[Session]) -> None:
    """Give committed runs the run group their sessions now name (nothing re-read: only ``runs``
    changes, in one commit per group)."""
    for group in sorted({s.group for s in sessions}):
        run_ids = sorted(s.run_id for s in sessions if s.group == group)
        store.tables.set_run_group(run_ids, group)
        store.log.record("regroup", f"{len(run_ids)} runs now in group {group}: {', '.join(run_ids)}")


def record_refusals(store: Store, refused: list[tuple[Session, str]]) -> None:
    """The sessions the latest ingest could not take, replacing the previous list (when it changed:
    an ingest with nothing to do writes nothing)."""
    rows = [{"run_id": printable(s.run_id), "path": printable(str(s.path)), "reason": reason, "refused_at": datetime.now(UTC)}
            for s, reason in refused]
    key = ["run_id", "path", "reason"]
    stored = store.tables.read("refusals").select(key).collect()
    if sorted(stored.iter_rows()) != sorted(frame("refusals", rows).select(key).iter_rows()):
        store.tables.replace("refusals", frame("refusals", rows))


