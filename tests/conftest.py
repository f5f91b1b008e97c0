"""Shared fixtures: the ground-truth corpus in ../shared, one Prefect server, one ingested warehouse."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SCORELAKE_SHARED", REPO.parent / "shared"))
CONFORMANCE = SHARED / "conformance" / "runs"
BASELINE = "eval_20260904_080000"

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")


def conformance_sessions() -> list[str]:
    return sorted(p.name for p in CONFORMANCE.glob("eval_*"))


def upstream_metrics(session: str) -> list[dict]:
    """Every scenario's metrics.json of a conformance session, as upstream wrote it."""
    return json.loads((CONFORMANCE / session / "all_metrics.json").read_text())


@pytest.fixture(scope="session", autouse=True)
def _shared_corpus_present():
    if not CONFORMANCE.is_dir():
        pytest.exit(f"ground-truth corpus not found at {CONFORMANCE} (set SCORELAKE_SHARED)", returncode=2)


@pytest.fixture(scope="session")
def prefect_server():
    """One temporary Prefect API server for the whole test session (it takes seconds to start)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def ingested(tmp_path_factory, prefect_server):
    """A warehouse holding the whole conformance corpus, built by the real ingest flow."""
    from flows.ingest import ingest_flow
    from transforms.warehouse import Warehouse

    root = tmp_path_factory.mktemp("warehouse")
    result = ingest_flow(runs_dirs=[str(CONFORMANCE)], warehouse=str(root))
    return Warehouse(root), result


@pytest.fixture
def runs_copy(tmp_path):
    """A writable copy of selected conformance sessions, for tests that change files."""

    def make(*sessions: str) -> Path:
        target = tmp_path / "runs"
        for name in sessions:
            shutil.copytree(CONFORMANCE / name, target / name)
            for path in (target / name).rglob("*"):
                path.chmod(path.stat().st_mode | 0o200)
            (target / name).chmod(0o755)
        return target

    return make
