"""The Python API (``import scorelake``) as a notebook uses it: one call per question, Polars
DataFrames back, the same answers as the command line, clear errors."""

from __future__ import annotations

import shutil

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from tests.conftest import BASELINE, CONFORMANCE, summary_rates

MIXED = "eval_20260902_091500"
runner = CliRunner()


@pytest.fixture(scope="module")
def wh(ingested):
    store, _ = ingested
    return scorelake.open(store.tables.root)


def test_runs_lists_every_committed_run_in_session_order(wh):
    runs = wh.runs()
    assert isinstance(runs, pl.DataFrame)
    assert runs["run_id"].to_list() == sorted(p.name for p in CONFORMANCE.glob("eval_*"))
    assert {"source", "run_group", "status", "n_scenarios"} <= set(runs.columns)


def test_scenarios_are_one_row_per_scenario_with_signals_and_verdicts(wh):
    scenarios = wh.scenarios(run=MIXED)
    assert scenarios.height == 34 and scenarios["run_id"].unique().to_list() == [MIXED]
    assert scenarios["position"].to_list() == sorted(scenarios["position"].to_list())
    assert {"is_action_match", "db_state_match", "judge_passed", "clean_exit", "is_successful",
            "success_signals", "stalled", "failed"} <= set(scenarios.columns)
    assert scenarios["is_successful"].sum() == summary_rates(MIXED)["(all)", "success"][0]
    everything = wh.scenarios()
    assert everything.height == sum(wh.runs()["n_scenarios"])


def test_verdicts_filter_by_run_scenario_and_kind(wh):
    verdicts = wh.verdicts(run=MIXED, kind="db_state_assertion")
    # 8 predicates count in the rate; 3 more belong to stalled scenarios, which every rate skips
    assert verdicts.height == 11 and set(verdicts["kind"]) == {"db_state_assertion"}
    one = verdicts["scenario_name"][0]
    assert set(wh.verdicts(run=MIXED, scenario=one)["scenario_name"]) == {one}


def test_rates_match_upstreams_summary_and_the_command_line(wh, ingested):
    by_domain = wh.rates(run=MIXED)  # the whole run first, as the summary's first line
    got = {(r["domain"], "success"): (r["success_passed"], r["success_total"]) for r in by_domain.to_dicts()}
    assert got == {k: v for k, v in summary_rates(MIXED).items() if k[1] == "success"}
    assert by_domain["domain"][0] == "(all)"
    by_signal = wh.rates(by="signal", run=MIXED)
    assert dict(zip(by_signal["signal"], zip(by_signal["passed"], by_signal["total"])))["clean_exit"] == (27, 31)
    done = runner.invoke(app, ["rates", "--run", MIXED, "-f", "csv", "-w", str(ingested[0].tables.root)])
    flat = by_domain.with_columns(pl.col("gating_signals").list.join(";"))  # CSV joins a list with ";"
    assert pl.read_csv(done.stdout.encode()).equals(pl.read_csv(flat.write_csv().encode()))


def test_compare_passk_history_and_policies(wh):
    c = wh.compare(BASELINE, "eval_20260904_083000")
    assert c.paired >= len(c.fixed) + len(c.broken) and "(all)" in c.deltas["domain"].to_list()
    assert {"k", "pass_hat_k", "claimed_pass_hat_k"} <= set(wh.passk().columns)
    assert wh.history()["run_id"].to_list() == wh.runs()["run_id"].to_list()
    assert wh.policies()["name"].to_list()[0] == "recorded"


def test_sql_takes_named_or_positional_parameters(wh):
    named = wh.sql("SELECT count(*) AS n FROM scenario_scores WHERE run_id = $run", {"run": MIXED})
    positional = wh.sql("SELECT count(*) AS n FROM scenario_scores WHERE run_id = ?", [MIXED])
    assert named["n"][0] == positional["n"][0] == 34


def test_summary_is_byte_identical_to_upstream(wh):
    assert wh.summary(BASELINE) == (CONFORMANCE / BASELINE / "all_summary.txt").read_text()


def test_pandas_users_get_a_pandas_frame(wh):
    frame = wh.scenarios(run=MIXED).to_pandas()
    assert len(frame) == 34 and "is_successful" in frame.columns


def test_errors_say_what_is_wrong(wh, tmp_path):
    with pytest.raises(scorelake.NotFound, match="no run 'nope'"):
        wh.scenarios(run="nope")
    with pytest.raises(scorelake.NotFound, match="no stored policy named 'nope'"):
        wh.rates(policy="nope")
    with pytest.raises(scorelake.InvalidArgument, match="Parser Error|syntax error"):
        wh.sql("SELEC 1")
    with pytest.raises(scorelake.InvalidArgument):
        wh.sql("CREATE TABLE x AS SELECT 1")
    with pytest.raises(scorelake.WarehouseMissing, match="no scorelake warehouse here"):
        scorelake.open(tmp_path / "none").runs()
    with pytest.raises(scorelake.InvalidArgument, match="as_of is empty"):
        scorelake.open(tmp_path, as_of="")


def test_write_side_ingest_rescore_and_time_travel(tmp_path, runs_copy, monkeypatch):
    # no Prefect API configured, as a user's first command: not the suite's server, should a test before
    # this one have started it for the session
    monkeypatch.setenv("PREFECT_API_URL", "")
    runs = runs_copy(BASELINE, "eval_20260904_083000")
    wh = scorelake.open(tmp_path / "wh")
    first = wh.ingest(runs)
    assert sorted(r.run_id for r in first.ingested) == [BASELINE, "eval_20260904_083000"]
    assert first.ran == "ran in-process: no Prefect API configured"
    assert wh.ingest(runs).unchanged == [BASELINE, "eval_20260904_083000"]
    version = wh.log()[-1].version

    done = wh.rescore("lenient", judge_threshold=0.5)
    assert done.scenarios == wh.runs()["n_scenarios"].sum()
    assert "lenient" in wh.policies()["name"].to_list()
    assert wh.rescore("lenient").scenarios == 0  # stored, nothing left to score
    with pytest.raises(scorelake.InvalidArgument, match="--judge-threshold"):
        wh.rescore("broken", judge_threshold=float("nan"))

    then = scorelake.open(wh.location, as_of=version)
    assert "lenient" not in then.policies()["name"].to_list()
    with pytest.raises(scorelake.InvalidArgument, match="writes need the current version"):
        then.ingest(runs)


def test_the_default_paths_are_under_the_current_directory(tmp_path, monkeypatch):
    """``scorelake ingest`` with no argument reads ./data/runs and writes ./data/warehouse, wherever
    the package is installed from."""
    shutil.copytree(CONFORMANCE / BASELINE, tmp_path / "data" / "runs" / BASELINE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCORELAKE_WAREHOUSE", raising=False)
    done = runner.invoke(app, ["ingest"])
    assert done.exit_code == 0, done.output
    wh = scorelake.open()
    assert wh.location == str(tmp_path / "data" / "warehouse")
    assert wh.runs()["run_id"].to_list() == [BASELINE]
    assert wh.runs()["session_path"].to_list() == [str(tmp_path / "data" / "runs" / BASELINE)]

