"""Ingest, step by step: plan which sessions are new or changed, read and score one, commit a
batch of them. Nothing here knows about Prefect, so each step is testable on its own."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from scorelake.transforms.columns import frame
from scorelake.transforms.pipeline._check import task_id_warnings
from scorelake.transforms.pipeline._rescore import score_and_count
from scorelake.transforms.results import SessionReport
from scorelake.transforms.scoring import Policy
from scorelake.transforms.sources import (
    EVIDENCE_TABLES,
    Session,
    is_utf8,
    printable,
    read_session_tables,
    same_content,
    session_fingerprint,
)
from scorelake.transforms.warehouse import RUN_TABLES, Store, new_generation


@dataclass
class IngestedRun:
    """A session read and scored, not yet committed: its ``runs`` row and its rows of ``RUN_TABLES``."""

    report: SessionReport
    run: pl.DataFrame
    tables: dict[str, pl.DataFrame]


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


def _once_each(messages) -> list[str]:
    """Each message once, with how many times it came when more than once (a session quarantined
    whole says so once, not once per scenario)."""
    counts = Counter(messages)
    return [message if n == 1 else f"{message} (x{n})" for message, n in counts.items()]


def ingest_session(session: Session, policies: list[Policy]) -> IngestedRun:
    """Read a session and score it under every policy, as one new generation."""
    tables = read_session_tables(session, new_generation())
    scenarios = tables.scenarios.lazy()
    scored = [score_and_count(scenarios, policy) for policy in policies]
    report = SessionReport(session.run_id, tables.run["status"], tables.scenarios.height, tables.quarantine.height,
                           _once_each(str(e) for e in tables.errors),
                           tables.warnings + list(task_id_warnings(scenarios).values()))
    rows = {"scenarios": tables.scenarios, "verdicts": tables.verdicts, "quarantine": tables.quarantine,
            **{table: frame(table, tables.evidence.get(table, [])) for table in EVIDENCE_TABLES},
            **{table: pl.concat([s[table] for s in scored]) for table in ("scores", "rate_counts")}}
    return IngestedRun(report, frame("runs", [tables.run]), rows)


def commit_ingested(store: Store, batch: list[IngestedRun]) -> None:
    """Commit a batch of ingested sessions: one Delta commit per table, ``runs`` last (the switch)."""
    if batch:
        store.tables.commit_runs(pl.concat([r.run for r in batch]),
                       {table: pl.concat([r.tables[table] for r in batch]) for table in (*RUN_TABLES, "judge_prompts")})
        store.log.record("ingest", f"{len(batch)} runs: {', '.join(sorted(r.report.run_id for r in batch))}")


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


