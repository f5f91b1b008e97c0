"""A source another package adds (docs/guide/sources.md): a run is a ``*.scores.csv`` file of one
row per scenario (``scenario,domain,passed``), scored by one signal, the recorded pass.

Registered in its package's metadata under the entry point group ``scorelake.sources``
(``scorelake_example_source-0.1.dist-info/entry_points.txt`` here; in a ``pyproject.toml``::

    [project.entry-points."scorelake.sources"]
    scores-csv = "scorelake_example_source:ScoresCsv"
"""

from __future__ import annotations

import csv
from pathlib import Path

from scorelake.transforms.sources import (
    BadInput,
    Session,
    SessionTables,
    collect_items,
    file_fingerprint,
    quarantined_run,
    run_row,
    scenario_row,
)

READER_VERSION = "1"


class ScoresCsv:
    kind = "scores-csv"

    def recognises(self, path: Path) -> str | None:
        return path.name.removesuffix(".scores.csv") if path.name.endswith(".scores.csv") and path.is_file() else None

    def fingerprint(self, session: Session) -> str:
        return file_fingerprint(session, READER_VERSION)

    def input_files(self, session: Session, path: Path) -> list[str] | None:
        return ["."]

    def read(self, session: Session, generation: str) -> SessionTables:
        fingerprint = self.fingerprint(session)
        try:
            lines = list(csv.DictReader(session.path.read_text(encoding="utf-8").splitlines()))
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            return quarantined_run(session, generation, fingerprint, self.kind,
                                   BadInput(session.path.name, "unreadable", str(exc)))

        def item(line: dict):
            def read():
                if line.get("passed") not in ("true", "false") or not line.get("scenario"):
                    raise BadInput(session.path.name, "a row needs a scenario and passed true or false", str(line))
                row = scenario_row(session, generation, fingerprint)
                row.update(scenario_name=line["scenario"], domain=line.get("domain") or "default",
                           registry_domain=line.get("domain") or "default", task_id=line["scenario"], trial=0,
                           success_signals=["db_state_match"], db_match_recorded=line["passed"] == "true",
                           claimed_success=line["passed"] == "true")
                return row, [], {}
            return read

        rows, verdicts, quarantine, errors, evidence = collect_items(
            session, generation, [(f"{session.path.name}#{n + 2}", item(line)) for n, line in enumerate(lines)])
        run = run_row(session, generation, fingerprint, self.kind, None, len(lines), len(rows), len(quarantine), {})
        return SessionTables(run, {"scenarios": rows, "verdicts": verdicts, "quarantine": quarantine, **evidence},
                             errors)

    def warnings(self, scenarios) -> dict[str, str]:
        return {}


class NoSource:
    """Registered as a source, and none (the tests' broken plugin): it says so, the rest ingest."""

    kind = "nothing"
