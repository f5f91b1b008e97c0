"""Sources as plugins (issue 61, item 3): a format another package registers under the entry point
group ``scorelake.sources`` is discovered, read and scored like the built-in ones, whose rows are
built with the same kit (tests/plugin_example: a package's folder with its metadata, on PYTHONPATH as
an installed package would be); a registered entry that is no source is said and left out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

EXAMPLE = REPO / "tests" / "plugin_example"
SCRIPT = Path(sys.executable).with_name("scorelake")


def scorelake(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(EXAMPLE), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_a_registered_source_is_read_scored_and_a_broken_one_said(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "week1.scores.csv").write_text("scenario,domain,passed\nbooking__1,booking,true\nbooking__2,booking,false\n"
                                          "refund__1,refund,true\nbad,refund,maybe\n")
    done = scorelake("ingest", str(runs), str(REPO / "data" / "runs"), "-w", "wh", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "source plugin 'broken' (scorelake_example_source:NoSource) is no source" in done.stderr
    assert "week1: complete, 3 scenarios, 1 quarantined" in done.stderr
    assert "a row needs a scenario and passed true or false" in done.stderr
    rates = json.loads(scorelake("rates", "-r", "week1", "-f", "json", "-w", "wh", cwd=tmp_path).stdout)
    assert {r["domain"]: (r["success_passed"], r["success_total"]) for r in rates} == {
        "(all)": (2, 3), "booking": (1, 2), "refund": (1, 1)}
    runs_listed = json.loads(scorelake("sql", "-f", "json", "SELECT run_id, source FROM stg_runs ORDER BY run_id",
                                       "-w", "wh", cwd=tmp_path).stdout)
    assert {r["run_id"]: r["source"] for r in runs_listed}["week1"] == "scores-csv"
    again = scorelake("ingest", str(runs), "-w", "wh", cwd=tmp_path)  # its fingerprint: nothing changed
    assert "0 ingested, 1 unchanged" in again.stderr


def test_the_built_in_sources_come_first_and_a_kind_is_taken_once(monkeypatch):
    from importlib.metadata import EntryPoint

    from scorelake.transforms.sources import _registry

    points = [EntryPoint("again", "scorelake.transforms.sources.tau:Tau2File", _registry.GROUP),
              EntryPoint("gone", "no_such_module:Thing", _registry.GROUP)]
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: points if group == _registry.GROUP else [])
    found, problems = _registry._plugins()
    assert found == []
    assert problems == ["source plugin 'again' (scorelake.transforms.sources.tau:Tau2File) not loaded: "
                        "the kind 'tau2' is taken",
                        "source plugin 'gone' (no_such_module:Thing) not loaded: ModuleNotFoundError: "
                        "No module named 'no_such_module'"]
