"""One session read and scored, not yet committed: what an ingest's worker processes run. It imports
only the readers and the scorers (not the warehouse, DuckDB or the judge's client), so a worker
process starts in half the time and memory."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import polars as pl

from scorelake.transforms.columns import frame
from scorelake.transforms.keys import new_generation
from scorelake.transforms.results import SessionReport
from scorelake.transforms.scoring import Policy, score_and_count
from scorelake.transforms.sources import EVIDENCE_TABLES, Session, read_session_tables, task_id_warnings


@dataclass
class IngestedRun:
    """A session read and scored, not yet committed: its ``runs`` row and its rows of the other tables
    an ingest writes (the warehouse's ``RUN_TABLES``, and ``judge_prompts``)."""

    report: SessionReport
    run: pl.DataFrame
    tables: dict[str, pl.DataFrame]


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
