"""The warehouse as Delta tables: object storage, time travel, the commit log, and the conversion
of a warehouse written in the former table format."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tarfile
from datetime import timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from scorelake.cli import app
from scorelake.storage import Store
from tests.conftest import CONFORMANCE

runner = CliRunner()
MIXED = "eval_20260902_091500"
BASELINE = "eval_20260904_080000"
LEGACY = Path(__file__).parent / "data" / "legacy_warehouse.tar.gz"
# Every staging view and the two rate marts: what the former warehouse answered, per view.
LEGACY_VIEWS = ("stg_runs", "stg_scenarios", "stg_verdicts", "stg_quarantine", "stg_scores", "stg_rate_counts",
                "stg_policies", "stg_refusals", "domain_rates", "signal_rates")


def ok(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


# ---- object storage ------------------------------------------------------------------------------

def test_s3_warehouse_answers_as_a_local_one(s3_warehouse, ingested):
    local, _ = ingested
    runs = [str(CONFORMANCE / s) for s in (MIXED, BASELINE, "eval_20260904_083000")]
    result = runner.invoke(app, ["ingest", *runs, "-w", s3_warehouse])
    assert result.exit_code == 0, result.output
    assert ok("summary", MIXED, "-w", s3_warehouse) == (CONFORMANCE / MIXED / "all_summary.txt").read_text()
    query = ("SELECT * FROM domain_rates WHERE run_id IN ('{}', '{}') AND policy_id IN "  # other tests add policies
             "(SELECT policy_id FROM stg_policies WHERE name = 'recorded') ORDER BY ALL").format(MIXED, BASELINE)
    assert ok("sql", query, "-w", s3_warehouse, "-f", "csv") == ok("sql", query, "-w", str(local.tables.root), "-f", "csv")
    assert ok("check", "-w", s3_warehouse) == ""

    # Readable without scorelake: deltalake alone, Polars, DuckDB over deltalake's Arrow dataset.
    from deltalake import DeltaTable

    assert DeltaTable(f"{s3_warehouse}/runs").to_pyarrow_table().num_rows == 3
    scenarios = DeltaTable(f"{s3_warehouse}/scenarios").to_pyarrow_dataset()
    (n,), = duckdb.sql("SELECT count(*) FROM scenarios").fetchall()
    assert n == pl.scan_delta(f"{s3_warehouse}/scenarios").select(pl.len()).collect().item() == 34 + 14 + 14


def test_an_unknown_warehouse_url_is_a_clear_error(s3_warehouse):
    result = runner.invoke(app, ["rates", "-w", s3_warehouse])
    assert result.exit_code == 1 and "no scorelake warehouse" in result.stderr


# ---- time travel and the log ---------------------------------------------------------------------

@pytest.mark.slow
def test_as_of_answers_as_the_warehouse_stood_then(runs_copy, tmp_path):
    runs = runs_copy(MIXED, BASELINE)
    wh = str(tmp_path / "wh")
    ok("ingest", str(runs), "-w", wh)
    reported = {"summary": ok("summary", MIXED, "-w", wh), "rates": ok("rates", "-w", wh, "-f", "csv"),
                "compare": ok("compare", BASELINE, MIXED, "-w", wh, "-f", "json")}
    ok("rescore", "--policy", "lenient-judge", "--judge-threshold", "0.5", "-w", wh)

    # The session changes and is re-ingested: today's answers move, last version's do not.
    metrics_file = runs / MIXED / "qa__largest_ocean" / "metrics.json"
    metrics_file.write_text(json.dumps({**json.loads(metrics_file.read_text()), "stop_reason": "[TIMEOUT]"}))
    ok("ingest", str(runs), "-w", wh)
    assert ok("summary", MIXED, "-w", wh) != reported["summary"]
    log = json.loads(ok("log", "-w", wh, "-f", "json"))
    assert [e["operation"] for e in log] == ["ingest", "rescore", "ingest"]
    assert log[0]["detail"] == f"2 runs: {MIXED}, {BASELINE}" and log[2]["detail"] == f"1 runs: {MIXED}"
    assert "lenient-judge" in log[1]["detail"]
    assert {e["committer"] for e in log} == {f"{socket.gethostname()}:{os.getpid()}"}  # these commands ran in-process
    first, rescored = str(log[0]["version"]), str(log[1]["version"])
    # the history as it stood then: the versions up to the one named
    assert json.loads(ok("log", "-w", wh, "-f", "json", "--as-of", rescored)) == log[:2]

    assert ok("summary", MIXED, "-w", wh, "--as-of", first) == reported["summary"]
    assert ok("rates", "-w", wh, "-f", "csv", "--as-of", first) == reported["rates"]
    assert ok("compare", BASELINE, MIXED, "-w", wh, "-f", "json", "--as-of", first) == reported["compare"]
    # By timestamp: the last version committed at or before it.
    just_after = (pl.Series([log[1]["committed_at"]]).str.to_datetime()[0] + timedelta(milliseconds=1)).isoformat()
    assert ok("summary", MIXED, "-w", wh, "--as-of", just_after) == reported["summary"]
    # Under the policy re-scored then: it did not exist at the first version, it does at the second.
    assert runner.invoke(app, ["rates", "-p", "lenient-judge", "-w", wh, "--as-of", first]).exit_code == 2
    ok("rates", "-p", "lenient-judge", "-w", wh, "--as-of", rescored)
    ok("sql", "SELECT count(*) FROM stg_commits", "-w", wh, "--as-of", first)

    # Compaction rewrites the files, not what any version answers.
    ok("compact", "-w", wh)
    assert ok("summary", MIXED, "-w", wh, "--as-of", first) == reported["summary"]
    assert json.loads(ok("log", "-w", wh, "-f", "json"))[-1]["operation"] == "compact"

    for bad, message in (("99", "no warehouse version 99"), ("last month", "version number or an ISO timestamp"),
                         ("2001-01-01", "no version as old as 2001-01-01")):
        result = runner.invoke(app, ["rates", "-w", wh, "--as-of", bad])
        assert result.exit_code == 2 and message in result.stderr, result.output

    # A version whose files a vacuum removed (here with no retention at all) is refused, clearly.
    from deltalake import DeltaTable

    DeltaTable(f"{wh}/scenarios").vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    result = runner.invoke(app, ["summary", MIXED, "-w", wh, "--as-of", first])
    assert result.exit_code == 2 and f"warehouse version {first} is no longer readable" in result.stderr
    assert ok("summary", MIXED, "-w", wh) != reported["summary"]  # today's still answers


# ---- conversion of the former table format -------------------------------------------------------

@pytest.fixture
def legacy(tmp_path) -> tuple[Path, Path]:
    """A warehouse written by scorelake's former table format (compacted snapshots, per-run files of
    a later ingest and of a forced re-ingest, a re-score, a quarantined scenario, a refusal) and, per
    view, what it answered then (CSV, rows sorted)."""
    with tarfile.open(LEGACY) as archive:
        archive.extractall(tmp_path, filter="data")
    return tmp_path / "wh", tmp_path / "expected"


def text(value: str | None) -> str:
    """A value as a CSV holds it; a decimal to 9 places (recounted sums add in another order)."""
    if value is None:
        return ""
    try:
        return f"{float(value):.9f}" if "." in value else value
    except ValueError:
        return value


def rows(con, relation: str, columns: list[str] | None = None) -> list[tuple]:
    """The relation's rows as text (of ``columns``, default all), sorted."""
    picked = ", ".join(f'"{c}"::VARCHAR' for c in columns) if columns else "COLUMNS(*)::VARCHAR"
    return sorted(tuple(map(text, row)) for row in con.sql(f"SELECT {picked} FROM {relation}").fetchall())


def assert_answers_as_before(wh: Path, expected: Path) -> None:
    """Every view answers as it did (in the columns it had then: views may have gained some)."""
    then = {view: f"read_csv('{expected / view}.csv', all_varchar = true)" for view in LEGACY_VIEWS}
    with Store(wh).views.connect() as con:
        now = {view: rows(con, view, duckdb.sql(f"SELECT * FROM {then[view]} LIMIT 0").columns)
               for view in LEGACY_VIEWS}
    for view in LEGACY_VIEWS:
        assert now[view] == rows(duckdb, then[view]), view
    assert ok("summary", BASELINE, "-w", str(wh)) == (expected / "summary.txt").read_text()
    then = pl.read_csv(expected / "rates.csv")  # today's rates add every signal's columns and the whole run's row
    now = pl.read_csv(ok("rates", "-w", str(wh), "-f", "csv").encode()).filter(pl.col("domain") != "(all)")
    assert now.select(then.columns).equals(then)


@pytest.mark.slow  # converts a whole former warehouse
def test_migrate_converts_a_former_warehouse_losing_nothing(legacy):
    wh, expected = legacy
    result = runner.invoke(app, ["migrate", "-w", str(wh)])
    assert result.exit_code == 0, result.output
    assert not (wh / "tables").exists()
    kept = list(wh.glob("tables.pre-delta-*"))
    assert len(kept) == 1 and (kept[0] / "_snapshots" / "scenarios.parquet").exists()  # kept, not deleted
    assert_answers_as_before(wh, expected)
    assert ok("check", "-w", str(wh)) == ""
    assert [e["operation"] for e in json.loads(ok("log", "-w", str(wh), "-f", "json"))] == ["migrate"]
    again = runner.invoke(app, ["migrate", "-w", str(wh)])
    assert again.exit_code == 0 and "nothing to migrate" in again.stderr  # what was asked holds


@pytest.mark.slow  # converts a whole former warehouse
def test_the_first_write_command_converts_a_former_warehouse(legacy):
    wh, expected = legacy
    ok("rescore", "--policy", "t08", "-w", str(wh))  # a stored policy, already scored: nothing else to do
    assert not (wh / "tables").exists()
    assert_answers_as_before(wh, expected)
    ok("ingest", str(CONFORMANCE / "eval_20260904_083000"), "-w", str(wh))  # and it keeps taking runs
    assert "eval_20260904_083000" in ok("sql", "SELECT run_id FROM stg_runs", "-w", str(wh))


@pytest.mark.slow  # converts a whole former warehouse
def test_a_former_warehouse_from_before_rate_counts_is_counted_on_conversion(legacy):
    wh, expected = legacy
    shutil.rmtree(wh / "tables" / "rate_counts")
    (wh / "tables" / "_snapshots" / "rate_counts.parquet").unlink()
    ok("migrate", "-w", str(wh))
    assert_answers_as_before(wh, expected)
