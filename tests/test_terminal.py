"""Terminal tables fit a 100-column terminal without cutting a value; piped output keeps full width."""

from __future__ import annotations

import io
import re

import pytest
from typer.testing import CliRunner

from scorelake.cli import app
from scorelake.cli._terminal import Grid, show
from scorelake.flows.flow_bodies import InProcess, ingest
from scorelake.storage import Store
from tests.conftest import CONFORMANCE, conformance_sessions, summary_rates

runner = CliRunner()
MIXED, RESUMED = "eval_20260902_091500", "eval_20260903_140200"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """The conformance corpus, plus a policy with long values to show (every flag set, a whitelist)."""
    root = tmp_path_factory.mktemp("terminal")
    ingest(InProcess(), runs_dirs=[str(CONFORMANCE)], warehouse=str(root))
    wh = Store(root)
    done = runner.invoke(app, ["rescore", "--policy", "strict-everything-with-a-long-name", "--judge-threshold", "0.9",
                               "--min-agent-turns", "3", "--strict-match", "--no-judge", "--whitelist",
                               "tau2_telecom_workflow=db_state_assertion,is_action_match,clean_exit",
                               "-w", str(wh.tables.root)])
    assert done.exit_code == 0, done.output
    return str(wh.tables.root)


def fitted(args: list[str], width: int = 100) -> str:
    result = runner.invoke(app, args, env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    text = result.stdout
    too_long = [line for line in text.splitlines() if len(line) > width]
    assert not too_long, too_long
    assert "…" not in text
    return text


@pytest.mark.parametrize("by", ["domain", "signal"])
def test_rates_fit_100_columns_one_table_per_run_titled_with_its_full_id(warehouse, by):
    text = fitted(["rates", "--by", by, "-w", warehouse])
    for session in conformance_sessions():
        assert f"{session} (policy recorded)" in text
    if by == "domain":
        for domain in ("tau2_telecom_workflow", "customer_service", "eva_airline"):
            assert domain in text
        mixed = text.split(f"{MIXED} (policy recorded)")[1].split(" (policy recorded)")[0]
        for (domain, rate), (passed, total) in summary_rates(MIXED).items():
            if rate == "success" and domain != "(all)":  # each rate with its counts, in its run's table
                assert re.search(rf"^{domain} .* {passed / total * 100:.1f}% {passed}/{total} ", mixed, re.M)


def test_history_compare_and_policies_fit_100_columns(warehouse):
    history = fitted(["history", "-w", warehouse])
    for session in conformance_sessions():
        assert session in history
    compare = fitted(["compare", MIXED, RESUMED, "-w", warehouse])
    assert f"A {MIXED} -> B {RESUMED}" in compare and "exact McNemar" in compare
    policies = fitted(["policies", "-w", warehouse])
    assert "strict-everything-with-a-long-name" in policies
    assert "tau2_telecom_workflow=db_state_assertion,is_action_match,clean_exit" in policies


def test_wide_and_piped_output_keep_every_column_at_full_width(warehouse):
    piped = runner.invoke(app, ["rates", "--wide", "-w", warehouse]).stdout
    header = piped.splitlines()[0]
    for column in ("run_id", "success_passed", "db_state_assertion_rate", "nl_assertion_total", "stalled"):
        assert column in header
    assert len(header) > 100  # one table, not fitted: nothing is cut either
    csv = runner.invoke(app, ["rates", "--format", "csv", "-w", warehouse], env={"COLUMNS": "100"}).stdout
    assert csv.startswith("run_id,domain,scenarios,success_passed,success_total,success_rate")


def test_a_table_too_wide_is_split_and_a_key_too_long_is_shortened_or_becomes_records(monkeypatch):
    grid = Grid(["run", "a", "b", "c"], [["r" * 30, "1" * 20, "2" * 20, "3" * 20]], right={"a", "b", "c"})
    monkeypatch.setenv("COLUMNS", "80")
    out = io.StringIO()
    show(grid, stream=out)
    parts = out.getvalue().split("\n\n")
    assert len(parts) == 2 and all("r" * 30 in part for part in parts)
    assert all(len(line) <= 80 for line in out.getvalue().splitlines())
    monkeypatch.setenv("COLUMNS", "50")
    out = io.StringIO()
    show(Grid(["run", "a"], [["x" * 35 + "y" * 35, "1"]]), stream=out)
    assert out.getvalue().splitlines()[2] == "x" * 23 + "…" + "y" * 23 + "  1"  # its start and end
    out = io.StringIO()
    show(Grid(["run", "a"], [["x" * 70, "1"]], shortenable=False), stream=out)  # a key people copy whole
    records = out.getvalue().splitlines()
    assert all(len(line) <= 50 for line in records)
    assert "".join(line.split()[-1] for line in records[:-1]) == "x" * 70  # folded, not cut
    assert records[-1].split() == ["a", "1"]


def test_output_cut_short_by_its_reader_ends_quietly(warehouse):
    """`scorelake rates | head -2`: the reader goes away; no error message, no traceback."""
    import subprocess
    import sys

    command = f"{sys.executable} -m scorelake rates -w {warehouse} | head -2"
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
    assert len(done.stdout.splitlines()) == 2
    # Whether rates got to its notes (on stderr) depends on when head went away: either way, only notes
    assert all(line.startswith("note ") for line in done.stderr.splitlines()), done.stderr
