"""The voice-agent runner's session folders as a ``Source``."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from scorelake.transforms.sources._files import SessionTables
from scorelake.transforms.sources._session import Session
from scorelake.transforms.sources.nemo._listing import RUN_FILES, SCENARIO_INPUTS, list_session
from scorelake.transforms.sources.nemo._read import read_session


class NemoSessions:
    """``eval_*`` session folders (run-format.md), a run each."""

    kind = "nemo"

    def recognises(self, path: Path) -> str | None:
        is_session = path.is_dir() and ((path / "run_args.json").exists() or path.name.startswith("eval_"))
        return path.name if is_session else None

    def fingerprint(self, session: Session) -> str:
        return list_session(session.path).fingerprint

    def input_files(self, session: Session, path: Path) -> list[str] | None:
        if not path.is_dir():
            return None
        listing = list_session(path)
        return [*RUN_FILES, *(f"{name}/{file}" for name in listing.scenarios for file in SCENARIO_INPUTS),
                *listing.killed]  # a killed scenario's folder: what it holds is never read

    def warnings(self, scenarios: pl.LazyFrame) -> dict[str, str]:
        return {}

    def read(self, session: Session, generation: str) -> SessionTables:
        return read_session(session, generation)
