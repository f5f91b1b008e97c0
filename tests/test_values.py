"""Values no measurement can have (a token count of 2^63, NaN / Infinity / 1e308 / negative
latencies and durations) quarantine their scenario with a message and leave the rest of the ingest
stored; what scorelake prints is strict JSON, spreadsheet-safe CSV and text with its control
characters made visible."""

from __future__ import annotations

import csv
import io
import json
import math

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake._csv import spreadsheet_safe
from scorelake.cli import app
from scorelake.cli._app import print_json
from scorelake.cli._terminal import Grid, show, visible
from tests.conftest import BASELINE

runner = CliRunner()
OTHER = "eval_20260904_083000"

# scenario -> (edit of its metrics.json, the field the quarantine names)
EDITS = {
    "qa__speed_of_light": (lambda m: m["token_usage"]["agent"].update(prompt=2**63), "token_usage.agent.prompt"),
    "qa__moon_landing": (lambda m: m.update(latencies=[{"latency_ms": float("nan")}]), "latencies.0.latency_ms"),
    "qa__telephone_inventor": (lambda m: m["latency_stats"].update(max_ms=float("inf")), "latency_stats.max_ms"),
    "customer_service__order_delay": (lambda m: m.update(latencies=[{"latency_ms": 1e308}]), "latencies.0.latency_ms"),
    "customer_service__account_access": (lambda m: m.update(scenario_duration=-3.5), "scenario_duration"),
    "eva_airline__6_3_4": (lambda m: m.update(latencies=[{"latency_ms": -12.0}]), "latencies.0.latency_ms"),
}


@pytest.fixture(scope="module")
def bad_values(tmp_path_factory):
    import shutil

    from tests.conftest import CONFORMANCE

    runs = tmp_path_factory.mktemp("bad-values") / "runs"
    for session in (BASELINE, OTHER):
        shutil.copytree(CONFORMANCE / session, runs / session)
    for scenario, (edit, _) in EDITS.items():
        path = runs / BASELINE / scenario / "metrics.json"
        path.chmod(0o644)
        metrics = json.loads(path.read_text())
        edit(metrics)
        path.write_text(json.dumps(metrics))  # NaN and Infinity as Python's json writes them
    wh = scorelake.open(runs.parent / "wh")
    return wh, wh.ingest(runs)


def test_each_bad_value_quarantines_its_scenario_naming_the_field(bad_values):
    wh, result = bad_values
    quarantined = {q["scenario_name"]: q for q in wh.sql(
        f"SELECT scenario_name, file, reason FROM quarantined WHERE run_id = '{BASELINE}'").to_dicts()}
    assert set(quarantined) == set(EDITS)
    for scenario, (_, field) in EDITS.items():
        assert quarantined[scenario]["file"] == f"{scenario}/metrics.json"
        assert field in quarantined[scenario]["reason"], quarantined[scenario]


def test_the_rest_of_the_run_and_the_other_runs_are_stored(bad_values):
    wh, result = bad_values
    runs = {r["run_id"]: r for r in wh.runs().to_dicts()}
    assert runs[BASELINE]["n_scenarios"] == 14 - len(EDITS) and runs[BASELINE]["n_quarantined"] == len(EDITS)
    assert runs[OTHER]["n_scenarios"] == 14
    assert wh.check().consistent


@pytest.mark.parametrize("args", [["latency"], ["latency", "--by", "scenario"], ["history"], ["rates"],
                                  ["cost", "--price", "agent=3,15"], ["compare", OTHER, BASELINE]])
def test_what_the_commands_print_as_json_is_strict_json(bad_values, args):
    wh, _ = bad_values
    done = runner.invoke(app, [*args, "--format", "json", "-w", wh.location])
    assert done.exit_code == 0, done.output
    json.loads(done.stdout, parse_constant=lambda name: pytest.fail(f"{name} in {args}'s JSON"))
    latencies = wh.sql("SELECT max(p95_ms) AS worst FROM scenario_latency")["worst"][0]
    assert latencies is None or math.isfinite(latencies)


def test_json_has_no_nan_nor_infinity(capsys):
    from datetime import UTC, datetime

    print_json({"a": float("nan"), "b": [float("inf"), -float("inf"), 1.5], "c": {"d": float("nan")},
                "at": datetime(2026, 12, 5, 9, 30, tzinfo=UTC)})
    assert json.loads(capsys.readouterr().out) == {"a": None, "b": [None, None, 1.5], "c": {"d": None},
                                                   "at": "2026-12-05 09:30:00+00:00"}


def test_csv_cells_that_a_spreadsheet_would_run_as_formulas_are_neutralised():
    notes = ["=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)", "\tTAB", "\rCR", "plain", "a=b", None]
    out = spreadsheet_safe(pl.DataFrame({"note": notes, "n": [-1] * len(notes)})).write_csv()
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["note"] for r in rows] == ["'=HYPERLINK(\"http://x\")", "'+1+1", "'-2+3", "'@SUM(A1)", "'\tTAB",
                                         "'\rCR", "plain", "a=b", ""]
    assert {r["n"] for r in rows} == {"-1"}  # numbers stay numbers


def test_control_characters_from_run_data_are_shown_not_obeyed(capsys):
    assert visible("bob\x1b[2J\x07\r\x00\x9b!\nnext\tcol") == "bob\\x1b[2J\\x07\\x0d\\x00\\x9b!\nnext\tcol"
    show(Grid(["reviewer", "note"], [["eve\x1b]0;owned\x07", "fine\rFORGED"]]))
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert "eve\\x1b]0;owned\\x07" in out


def test_reviews_and_sql_as_csv_are_spreadsheet_safe_and_their_tables_show_control_characters(tmp_path):
    from tests.conftest import CONFORMANCE

    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(CONFORMANCE / BASELINE)
    with pytest.raises(scorelake.InvalidArgument, match="control character"):  # a name never holds one
        wh.review(BASELINE, "qa__speed_of_light", "judge_passed", "pass", reviewer="eve\x1b[2J\x07")
    wh.review(BASELINE, "qa__speed_of_light", "judge_passed", "pass", reviewer="eve",
              note='=HYPERLINK("http://evil.example","click")')
    wh.review(BASELINE, "qa__moon_landing", "judge_passed", "pass", reviewer="eve", note="eve\x1b[2J\x07")
    for args in (["reviews", "--history", "--format", "csv"],
                 ["sql", "SELECT reviewer, note FROM reviews", "--format", "csv"]):
        out = runner.invoke(app, [*args, "-w", wh.location]).stdout
        row = next(r for r in csv.DictReader(io.StringIO(out)) if "HYPERLINK" in (r.get("note") or ""))
        assert row["note"].startswith("'=HYPERLINK"), (args, row)
    out = runner.invoke(app, ["reviews", "--history", "-w", wh.location]).stdout
    assert "\x1b" not in out and "\x07" not in out and "eve\\x1b[2J\\x07" in out, out
