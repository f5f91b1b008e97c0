"""What a ``Source`` builds its rows with, the built-in tau2 and tau-bench sources and other packages'
alike (docs/guide/sources.md): a run's ``runs`` row, a scenario's ``scenarios`` row with what a
non-voice format has not set to its empty value, and each item of a run read on its own, one that
fails a quarantine row while the rest carry on."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from scorelake.transforms.columns import SCHEMAS
from scorelake.transforms.sources._files import BadInput, SessionTables
from scorelake.transforms.sources._session import Session, stat_token

# An item's rows: its scenarios row, its verdicts rows, and its evidence rows per table (turns, tool_calls, ...)
ItemRows = tuple[dict, list[dict], dict]


def scenario_row(session: Session, generation: str, fingerprint: str) -> dict[str, Any]:
    """A scenarios row with the voice-agent-only columns empty: the caller sets ``scenario_name``,
    ``domain``, ``success_signals`` and the signals' recorded values it has."""
    row = {name: None for name in SCHEMAS["scenarios"]}
    row.update(
        run_id=session.run_id, generation=generation, invocation_index=0, fingerprint=fingerprint,
        ignore_capitalization=False, ignore_punctuation=False, clean_text=False, disallow_extra_items=False,
        rec_judge_enabled=True, rec_judge_threshold=None, rec_strict_match=False, rec_min_agent_turns=0,
        scenario_duration=0.0, latency_count=0, latency_mean_ms=0.0, latency_p50_ms=0.0, latency_p95_ms=0.0,
        latency_min_ms=0.0, latency_max_ms=0.0, latency_ms=[], has_reference=False, has_prediction=False,
        has_db_state_assertions=False, judge_ran=False, raw_passed=[], raw_failed=[], raw_not_applicable=[],
        raw_excluded=[],
    )
    return row


def run_row(session: Session, generation: str, fingerprint: str, source: str, started: str | None,
            n_items: int, n_rows: int, n_quarantined: int, header: dict | None) -> dict[str, Any]:
    """A run's ``runs`` row: ``source`` its format's kind, ``started`` when it started (ISO 8601),
    ``n_items`` the items it holds, ``n_rows`` those read, ``header`` what it says of itself (None:
    the run could not be read at all)."""
    try:
        started_at = datetime.fromisoformat(started) if started else None
    except ValueError:
        started_at = None
    return {
        "run_id": session.run_id, "generation": generation, "source": source,
        "run_group": session.group or session.run_id, "session_path": str(session.path.resolve()),
        "session_started_at": started_at, "status": "complete" if header is not None else "quarantined",
        "fingerprint": fingerprint, "ingested_at": datetime.now(UTC), "n_invocations": 1, "queued_count": n_items,
        "judge_enabled": True, "judge_threshold": None, "strict_match": False, "min_agent_turns": 0,
        "n_scenario_dirs": n_items, "n_scenarios": n_rows, "n_quarantined": n_quarantined, "n_killed_dirs": 0,
        "run_args_json": json.dumps(header) if header is not None else None,
    }


def collect_items(session: Session, generation: str, items: list[tuple[str, Callable[[], ItemRows]]]):
    """Run each item's reader (``items``: where it is, for an error, and its reader); a failing item
    becomes a quarantine row, the rest carry on: (rows, verdicts, quarantine, errors, evidence)."""
    rows, verdicts, quarantine, errors, evidence = [], [], [], [], {}
    for where, read in items:
        try:
            try:
                row, row_verdicts, row_evidence = read()
            except (TypeError, ValueError, AttributeError, KeyError, RecursionError) as exc:  # a shape no model caught
                raise BadInput(where, "unexpected content", f"{type(exc).__name__}: {exc}") from None
        except BadInput as err:
            errors.append(err)
            quarantine.append(err.quarantine_row(session.run_id, generation, None))
            continue
        row["position"] = len(rows)
        rows.append(row)
        verdicts.extend(row_verdicts)
        for table, evidence_rows in row_evidence.items():
            evidence.setdefault(table, []).extend(evidence_rows)
    return rows, verdicts, quarantine, errors, evidence


def quarantined_run(session: Session, generation: str, fingerprint: str, source: str, err: BadInput) -> SessionTables:
    """A run that could not be read at all: its ``runs`` row and one quarantine row saying why."""
    quarantine = [err.quarantine_row(session.run_id, generation, None)]
    run = run_row(session, generation, fingerprint, source, None, 0, 0, 1, None)
    return SessionTables(run, {"quarantine": quarantine}, [err])


def file_fingerprint(session: Session, reader_version: str) -> str:
    """A one-file run's fingerprint: its size and time, and the reader's version (a reader that reads
    more from the same file reads the files an older one ingested again)."""
    return hashlib.blake2b(f"reader={reader_version};{stat_token(session.path)}".encode(), digest_size=16).hexdigest()
