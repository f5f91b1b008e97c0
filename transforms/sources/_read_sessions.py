"""Sessions read, not yet committed: what an ingest's worker processes run. It imports only what
reading needs (not the warehouse, DuckDB or the judge's client), so a worker process starts in half
the time and memory. Its scenarios are scored when committed, a batch of sessions at once (see
``scorelake.pipeline.commit_ingested``)."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import polars as pl

from scorelake.transforms.columns import SHARED_TEXTS, frame
from scorelake.transforms.keys import new_generation
from scorelake.transforms.results import SessionReport
from scorelake.transforms.sources._discover import read_session_tables, source_warnings
from scorelake.transforms.sources._files import SessionTables
from scorelake.transforms.sources._session import Session

# what a reader gives besides its scenarios, verdicts and quarantine rows
EVIDENCE_TABLES = ("turns", "tool_calls", "judge_results", "judge_inputs", "judge_prompts", "voice", "tasks",
                   "task_instructions")


@dataclass
class IngestedRuns:
    """Sessions read, not yet committed: a report on each, their ``runs`` rows and their rows of the
    tables an ingest reads into (the warehouse's ``RUN_TABLES`` but the scores, and ``judge_prompts``)."""

    reports: list[SessionReport]
    runs: pl.DataFrame
    tables: dict[str, pl.DataFrame]

    @property
    def scenarios(self) -> int:
        return self.tables["scenarios"].height


def _once_each(messages) -> list[str]:
    """Each message once, with how many times it came when more than once (a session quarantined
    whole says so once, not once per scenario)."""
    counts = Counter(messages)
    return [message if n == 1 else f"{message} (x{n})" for message, n in counts.items()]


def _report(session: Session, tables: SessionTables, lines: dict[str, str]) -> SessionReport:
    warnings = tables.warnings + ([lines[session.run_id]] if session.run_id in lines else [])
    return SessionReport(session.run_id, tables.run["status"], len(tables.rows.get("scenarios", [])),
                         len(tables.rows.get("quarantine", [])), _once_each(str(e) for e in tables.errors), warnings)


@contextmanager
def _cycle_collector_off() -> Iterator[None]:
    """Reading makes hundreds of thousands of dicts and lists and hardly a reference cycle: the
    cycle collector's passes over them (one every 700 allocations) cost a reader 4% of its time,
    to find next to nothing. The few cycles there are go once it is back on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _rows(read: list[SessionTables], table: str) -> list[dict]:
    """The sessions' rows of ``table``; of a table of shared texts, each text once (the same instructions
    open a scenario in every run of its suite: not sent back, framed and written a time per run)."""
    rows = [row for t in read for row in t.rows.get(table, [])]
    key = SHARED_TEXTS.get(table)
    return rows if key is None else list({row[key]: row for row in rows}.values())


def ingest_sessions(sessions: list[Session]) -> IngestedRuns:
    """Read sessions, each as one new generation, their rows framed together: a frame costs about
    as much for a few rows as for hundreds (a list column: 3 µs a row one by one, 0.3 ms grouped)."""
    with _cycle_collector_off():
        read = [read_session_tables(session, new_generation()) for session in sessions]
    tables = {table: frame(table, _rows(read, table))
              for table in ("scenarios", "verdicts", "quarantine", *EVIDENCE_TABLES)}
    # each format's own warnings on the rows of its runs (a format with none costs no query)
    lines: dict[str, str] = {}
    for kind in dict.fromkeys(s.kind for s in sessions):
        lines.update(source_warnings(kind, tables["scenarios"].lazy()))
    return IngestedRuns([_report(s, t, lines) for s, t in zip(sessions, read)],
                        frame("runs", [t.run for t in read]), tables)
