"""One session read, not yet committed: what an ingest's worker processes run. It imports only what
reading needs (not the warehouse, DuckDB or the judge's client), so a worker process starts in half
the time and memory. Its scenarios are scored when committed, a batch of sessions at once (see
``_ingest.commit_ingested``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import polars as pl

from scorelake.transforms.columns import frame
from scorelake.transforms.keys import new_generation
from scorelake.transforms.results import SessionReport
from scorelake.transforms.sources import EVIDENCE_TABLES, Session, read_session_tables, task_id_warnings


@dataclass
class IngestedRun:
    """A session read, not yet committed: its ``runs`` row and its rows of the tables an ingest reads
    into (the warehouse's ``RUN_TABLES`` but the scores, and ``judge_prompts``)."""

    report: SessionReport
    run: pl.DataFrame
    tables: dict[str, pl.DataFrame]


def _once_each(messages) -> list[str]:
    """Each message once, with how many times it came when more than once (a session quarantined
    whole says so once, not once per scenario)."""
    counts = Counter(messages)
    return [message if n == 1 else f"{message} (x{n})" for message, n in counts.items()]


def ingest_session(session: Session) -> IngestedRun:
    """Read a session, as one new generation."""
    tables = read_session_tables(session, new_generation())
    scenarios = tables.scenarios
    # only tau2 claims task ids: a look at the column spares the others the query (1.4 ms a session)
    claims = scenarios["task_id_claimed"].null_count() < scenarios.height
    report = SessionReport(session.run_id, tables.run["status"], scenarios.height, tables.quarantine.height,
                           _once_each(str(e) for e in tables.errors),
                           tables.warnings + (list(task_id_warnings(scenarios.lazy()).values()) if claims else []))
    rows = {"scenarios": scenarios, "verdicts": tables.verdicts, "quarantine": tables.quarantine,
            **{table: frame(table, tables.evidence.get(table, [])) for table in EVIDENCE_TABLES}}
    return IngestedRun(report, frame("runs", [tables.run]), rows)
