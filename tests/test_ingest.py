"""The ingest flow end to end: real Prefect, real Delta tables, real DuckDB, then questions through the views."""

from __future__ import annotations

import json
import shutil

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from scorelake.cli import app
from scorelake.flows.prefect_flows import ingest_flow
from scorelake.storage import Store
from scorelake.transforms.scoring import Policy
from tests.conftest import BASELINE, CONFORMANCE, summary_rates

MIXED = "eval_20260902_091500"
RESUMED = "eval_20260903_140200"
runner = CliRunner()


def test_views_answer_from_a_plain_duckdb_client(ingested):
    wh, _ = ingested
    con = duckdb.connect(str(wh.tables.db_path), read_only=True)
    policy = Policy().id

    per_domain = con.execute(
        "SELECT domain, success_passed, success_total, db_state_match_passed, db_state_match_total "
        "FROM domain_rates WHERE run_id = ? AND policy_id = ? ORDER BY domain", [MIXED, policy]).fetchall()
    upstream = summary_rates(MIXED)
    assert {(d, "success"): (p, n) for d, p, n, _, _ in per_domain} == {
        k: v for k, v in upstream.items() if k[0] != "(all)" and k[1] == "success"}
    assert {(d, "db_state_match"): (p, n) for d, _, _, p, n in per_domain if n} == {
        k: v for k, v in upstream.items() if k[0] != "(all)" and k[1] == "db_state_match"}

    signals = dict(((s, u), (p, n)) for s, u, p, n in con.execute(
        "SELECT signal, unit, passed, total FROM signal_rates WHERE run_id = ? AND policy_id = ?",
        [MIXED, policy]).fetchall())
    assert signals == {
        ("is_action_match", "scenarios"): (21, 29), ("db_state_match", "scenarios"): (8, 16),
        ("db_state_assertion", "predicates"): (7, 8), ("nl_assertion", "assertions"): (7, 7),
        ("judge_passed", "scenarios"): (21, 31), ("clean_exit", "scenarios"): (27, 31),
    }

    stalled = [r[0] for r in con.execute(
        "SELECT scenario_name FROM stalled_scenarios WHERE run_id = ? AND policy_id = ? ORDER BY scenario_name",
        [MIXED, policy]).fetchall()]
    assert stalled == ["eva_airline__2_2_2", "eva_airline__7_2_2",
                       "tau2_telecom__mobile_data_issue__data_saver_mode_on__data_usage_exceeded__easy"]

    (passed, total, rate), = con.execute(
        "SELECT success_passed, success_total, success_rate FROM run_rates WHERE run_id = ? AND policy_id = ?",
        [MIXED, policy]).fetchall()
    assert (passed, total) == (16, 34) and rate == pytest.approx(16 / 34)
    con.close()


def test_tables_are_delta_tables_other_engines_read(ingested):
    """Without scorelake: deltalake alone, Polars, and DuckDB (over deltalake's Arrow dataset, and
    over a table version's file list) read the same rows the views count."""
    from deltalake import DeltaTable

    wh, _ = ingested
    runs = DeltaTable(str(wh.tables.root / "runs")).to_pyarrow_table()
    assert runs.num_rows == 9 and "generation" in runs.column_names
    verdicts = DeltaTable(str(wh.tables.root / "verdicts")).to_pyarrow_dataset()
    kinds = dict(duckdb.sql("SELECT kind, count(*) FROM verdicts GROUP BY kind").fetchall())
    assert kinds["db_state_assertion"] > 0 and kinds["nl_assertion"] > 0
    files = DeltaTable(str(wh.tables.root / "scenarios")).file_uris()
    (scenarios,), = duckdb.sql(f"SELECT count(*) FROM read_parquet({files})").fetchall()
    assert scenarios == pl.scan_delta(str(wh.tables.root / "scenarios")).select(pl.len()).collect().item()
    with wh.views.connect() as con:
        assert con.execute("SELECT count(*) FROM stg_scenarios").fetchone() == (scenarios,)
        assert con.execute("SELECT count(*) FROM stg_verdicts").fetchone() == (sum(kinds.values()),)


def test_resumed_session_keeps_killed_dirs_out(ingested):
    wh, _ = ingested
    with wh.views.connect() as con:
        run = con.execute("SELECT n_invocations, n_killed_dirs, n_scenarios FROM stg_runs WHERE run_id = ?",
                          [RESUMED]).fetchone()
    assert run == (2, 3, 32)


def test_second_ingest_of_unchanged_store_skips_every_session(prefect_server, runs_copy, tmp_path):
    runs = runs_copy(MIXED, RESUMED)
    first = ingest_flow(runs_dirs=[str(runs)], warehouse=str(tmp_path / "wh"))
    second = ingest_flow(runs_dirs=[str(runs)], warehouse=str(tmp_path / "wh"))
    assert len(first.ingested) == 2
    assert second.ingested == [] and sorted(second.unchanged) == [MIXED, RESUMED]


def test_partial_run_then_resume_is_picked_up(prefect_server, runs_copy, tmp_path):
    """The session as it stood when interrupted, then as the --resume invocation left it."""
    runs = runs_copy(RESUMED)
    session = runs / RESUMED
    complete = tmp_path / "complete"
    shutil.copytree(session, complete)
    # Before the resume: one invocation, no all_* files, killed dirs still in place as in-flight dirs.
    args = json.loads((session / "run_args.json").read_text())
    (session / "run_args.json").write_text(json.dumps({"invocations": args["invocations"][:1]}))
    for name in ("all_summary.txt", "all_metrics.json", "all_latencies.csv"):
        (session / name).unlink()
    resumed_names = [m["scenario_name"] for m in json.loads((complete / "all_metrics.json").read_text())[17:]]
    for name in resumed_names:
        shutil.rmtree(session / name)
    for killed in session.glob("*.killed.*"):
        (killed / "__KILLED__").unlink()
        killed.rename(session / killed.name.split(".killed.")[0])

    wh_root = tmp_path / "wh"
    first = ingest_flow(runs_dirs=[str(runs)], warehouse=str(wh_root))
    (report,) = first.ingested
    # 17 completed + 2 stalled ones (the resume later re-ran them); tau2_airline__14 was in flight.
    assert (report.status, report.scenarios, report.quarantined) == ("partial", 19, 1)

    shutil.rmtree(session)
    shutil.copytree(complete, session)
    second = ingest_flow(runs_dirs=[str(runs)], warehouse=str(wh_root))
    (report,) = second.ingested
    assert (report.status, report.scenarios, report.quarantined) == ("complete", 32, 0)
    result = runner.invoke(app, ["summary", RESUMED, "--warehouse", str(wh_root)])
    assert result.stdout_bytes == (CONFORMANCE / RESUMED / "all_summary.txt").read_bytes()


def test_bad_scenarios_are_quarantined_and_the_rest_ingested(prefect_server, runs_copy, tmp_path):
    runs = runs_copy(MIXED)
    session = runs / MIXED
    dirs = sorted(p for p in session.iterdir() if p.is_dir())
    (dirs[0] / "metrics.json").write_text('{"total_turns": 3, "dur')  # truncated
    metrics = json.loads((dirs[1] / "metrics.json").read_text())
    metrics["clean_exit"] = "N/A"  # wrong type
    (dirs[1] / "metrics.json").write_text(json.dumps(metrics))
    (dirs[2] / "scenario_config" / "metadata.json").unlink()
    (dirs[3] / "judge_result.json").write_bytes(b'{"score": 1.0, "reason": "\xff\xfe"}')
    (dirs[4] / "metrics.json").write_text("")

    result = ingest_flow(runs_dirs=[str(runs)], warehouse=str(tmp_path / "wh"))
    (report,) = result.ingested
    assert report.scenarios == len(dirs) - 5 and report.quarantined == 5
    with Store(tmp_path / "wh").views.connect() as con:
        rows = con.execute("SELECT scenario_name, file, reason FROM quarantined ORDER BY scenario_name").fetchall()
    reasons = {name: (file, reason) for name, file, reason in rows}
    assert reasons[dirs[0].name] == (f"{dirs[0].name}/metrics.json", "invalid JSON")
    assert reasons[dirs[1].name][1].startswith("schema violation at clean_exit")
    assert reasons[dirs[2].name] == (f"{dirs[2].name}/scenario_config/metadata.json", "missing file")
    assert reasons[dirs[3].name][1] == "not UTF-8"
    assert reasons[dirs[4].name][1] == "empty file"


def test_sql_cannot_modify_the_warehouse_or_read_outside_it(ingested):
    wh, _ = ingested
    for statement in ("CREATE TABLE t AS SELECT 1", "DROP VIEW domain_rates",
                      "SELECT * FROM read_csv('/etc/passwd')", f"COPY (SELECT 1) TO '{wh.tables.root}/x.csv'",
                      "SET enable_external_access = true", f"ATTACH '{wh.tables.root}/other.duckdb' AS o"):
        result = runner.invoke(app, ["sql", statement, "--warehouse", str(wh.tables.root)])
        assert result.exit_code != 0, statement
    assert not (wh.tables.root / "x.csv").exists()
    ok = runner.invoke(app, ["sql", "SELECT count(*) AS n FROM scenario_scores", "-w", str(wh.tables.root), "-f", "json"])
    assert ok.exit_code == 0 and json.loads(ok.stdout)[0]["n"] > 0


def test_score_drift_lists_stored_verdicts_that_disagree(prefect_server, ingested, runs_copy, tmp_path):
    wh, _ = ingested
    with wh.views.connect() as con:
        assert con.execute("SELECT count(*) FROM score_drift").fetchone() == (0,)

    runs = runs_copy(MIXED)
    metrics_file = runs / MIXED / "qa__largest_ocean" / "metrics.json"
    metrics = json.loads(metrics_file.read_text())
    metrics["judge_passed"] = not metrics["judge_passed"]  # a stored verdict a buggy scorer could have written
    metrics["is_successful"] = "N/A"
    metrics_file.write_text(json.dumps(metrics, indent=2))
    ingest_flow(runs_dirs=[str(runs)], warehouse=str(tmp_path / "wh"))
    with Store(tmp_path / "wh").views.connect() as con:
        drift = con.execute("SELECT scenario_name, signal, stored, recomputed FROM score_drift ORDER BY signal").fetchall()
    recomputed = json.loads((CONFORMANCE / MIXED / "qa__largest_ocean" / "metrics.json").read_text())
    assert drift == [
        ("qa__largest_ocean", "is_successful", "N/A", str(recomputed["is_successful"])),
        ("qa__largest_ocean", "judge_passed", str(metrics["judge_passed"]).lower(),
         str(recomputed["judge_passed"]).lower()),
    ]


def test_a_second_writer_is_refused_with_a_clear_message(tmp_path):
    from scorelake.storage import WarehouseBusy

    wh = Store(tmp_path / "wh")
    with wh.lock.hold():
        with pytest.raises(WarehouseBusy, match=r"is being written by pid \d+"):
            with wh.lock.hold():
                pass
    with wh.lock.hold():  # released again
        pass


def test_default_main_job_ingests_the_embedded_corpus(prefect_server, tmp_path, monkeypatch):
    monkeypatch.setenv("SCORELAKE_WAREHOUSE", str(tmp_path / "wh"))
    result = runner.invoke(app, ["ingest"])
    assert result.exit_code == 0, result.output
    assert "2 ingested" in result.stderr
    rates = runner.invoke(app, ["rates", "--by", "signal", "--format", "csv"])
    assert rates.exit_code == 0 and rates.stdout.startswith("run_id,signal,unit,passed,total,rate")
    again = runner.invoke(app, ["ingest"])
    assert "0 ingested, 2 unchanged" in again.stderr


def test_cli_reports_unknown_runs_and_policies(ingested):
    wh, _ = ingested
    for args in (["summary", "eval_19990101_000000"], ["rates", "--policy", "nope"],
                 ["rates", "--run", "eval_19990101_000000"], ["rescore", "--policy", "nope"]):
        result = runner.invoke(app, [*args, "--warehouse", str(wh.tables.root)])
        assert result.exit_code == 2, args
        assert "error:" in result.stderr
    missing = runner.invoke(app, ["sql", "SELECT 1", "--warehouse", str(wh.tables.root / "nowhere")])
    assert missing.exit_code == 1 and "no scorelake warehouse" in missing.stderr


@pytest.mark.parametrize("task_runner", ["dask", "processes"])
def test_ingest_fan_out_across_processes(prefect_server, runs_copy, tmp_path, task_runner):
    """Through prefect-dask on a local multi-process cluster, and through a local process pool."""
    runs = runs_copy(MIXED, RESUMED, "eval_20260904_080000")
    result = runner.invoke(app, ["ingest", str(runs), "--task-runner", task_runner,
                                 "--warehouse", str(tmp_path / "wh")])
    assert result.exit_code == 0, result.output
    assert "3 ingested" in result.stderr
    summary = runner.invoke(app, ["summary", MIXED, "--warehouse", str(tmp_path / "wh")])
    assert summary.stdout_bytes == (CONFORMANCE / MIXED / "all_summary.txt").read_bytes()
    scenarios = pl.read_delta(str(tmp_path / "wh" / "scenarios"))
    assert scenarios.height == 34 + 32 + 14


def test_every_scenario_column_is_mapped_from_the_voice_agent_files_and_every_format_is_a_source():
    from scorelake.transforms.columns import SCENARIO_COLUMNS
    from scorelake.transforms.sources import SOURCES
    from scorelake.transforms.sources.nemo.columns import NEMO_COLUMNS

    assert list(NEMO_COLUMNS) == [c.name for c in SCENARIO_COLUMNS]
    assert list(SOURCES)[:5] == ["nemo", "tau2-dir", "inspect", "tau2", "tau-bench"]
    session = CONFORMANCE / MIXED
    assert [k for k, s in SOURCES.items() if s.recognises(session)] == ["nemo"]


def test_auto_reads_many_scenarios_in_a_process_per_core_and_few_in_threads(tmp_path):
    """`--task-runner auto` (the default): a process per core once the runs to read hold about
    1,000 scenarios, where parsing in Python needs both cores; threads below that."""
    import os

    from scorelake.flows.flow_bodies import PROCESSES_FROM_SCENARIOS, InProcess, ingest_sessions_job

    few = [([(f"r{i}", str(CONFORMANCE / BASELINE), "nemo", None)],) for i in range(3)]
    big = tmp_path / "big"
    big.mkdir()
    for i in range(PROCESSES_FROM_SCENARIOS):
        (big / f"s{i}").mkdir()
    many = [([("a", str(big), "nemo", None)],), ([("b", str(big), "nemo", None)],)]
    auto = InProcess()
    assert not auto._uses_processes(ingest_sessions_job, few)
    assert auto._uses_processes(ingest_sessions_job, many) == ((os.cpu_count() or 1) > 1)
    assert not auto._uses_processes(len, many)  # only the jobs that parse
    assert InProcess("processes")._uses_processes(ingest_sessions_job, few)
    assert not InProcess("threads")._uses_processes(ingest_sessions_job, many)


# ---- definitions kept by their files' contents ---------------------------------------------------

def _scenario_rows(tables) -> dict[str, dict]:
    return {r["scenario_name"]: {k: v for k, v in r.items() if k not in ("fingerprint", "position", "generation")}
            for r in tables.table("scenarios").iter_rows(named=True)}


def test_a_definition_kept_from_another_run_is_the_one_its_own_files_give(runs_copy, monkeypatch):
    """A scenario's definition columns and key entities, kept by the bytes of the files they are made
    of, read the same whether worked out afresh or kept from another run, and a scenario whose
    definition changed gets its own."""
    from scorelake.transforms.sources import Session, read_session
    from scorelake.transforms.sources.nemo import _read

    runs = runs_copy(MIXED)
    edited = min(d for d in (runs / MIXED).iterdir() if (d / "scenario_config" / "metadata.json").exists())
    path = edited / "scenario_config" / "metadata.json"
    doc = json.loads(path.read_text())
    added = [*(doc.get("nl_assertions") or []), "The agent said goodbye."]
    path.write_text(json.dumps({**doc, "nl_assertions": added}))

    def read(folder, cold: bool):
        if cold:
            monkeypatch.setattr(_read, "_DEFINITIONS", _read._KeptByContent(limit=1 << 20))
            monkeypatch.setattr(_read, "_ENTITIES", _read._KeptByContent(limit=1 << 20))
        tables = read_session(Session(MIXED, folder), "g")
        return _scenario_rows(tables), tables.table("voice").drop("generation")

    original, _ = read(CONFORMANCE / MIXED, cold=True)
    changed, changed_voice = read(runs / MIXED, cold=False)  # every other definition kept from the read above
    afresh, afresh_voice = read(runs / MIXED, cold=True)
    assert changed == afresh and changed_voice.equals(afresh_voice)
    differ = {name for name in original if original[name] != changed[name]}
    assert differ == {edited.name}
    assert original[edited.name]["definition_hash"] != changed[edited.name]["definition_hash"]
    assert json.loads(changed[edited.name]["definition_json"]).keys() >= {"nl_assertions"}


def test_definitions_are_kept_within_their_limit_the_oldest_let_go():
    from scorelake.transforms.sources.nemo._read import _KeptByContent

    kept = _KeptByContent(limit=10)
    for i in range(6):
        kept.keep((b"abcd", str(i)), i)  # five bytes a key
    assert list(kept.values()) == [4, 5] and kept.size == 10
    assert kept.get((b"abcd", "5")) == 5 and kept.get((b"abcd", "0")) is None


@pytest.mark.parametrize("values", [
    [None, [], ["a"], None, [], ["a"], ["a", None], ["b", "a"]] * 4,  # lists repeated: made once each, gathered
    [["x", str(i)] for i in range(12)],  # each its own: grouped
    [[1], [True], [1.0], ["1"]] * 4,  # items of other types, equal as keys: Polars' own conversion decides
    [["x"], "x"] * 4,  # not a list
])
def test_a_text_list_column_is_the_same_made_from_repeated_lists_as_grouped(values):
    from scorelake.transforms.columns import _grouped_list_column, _list_column

    def made(build):
        try:
            return build("c", pl.List(pl.String), values).to_list()
        except (TypeError, pl.exceptions.PolarsError) as exc:
            return type(exc)

    assert made(_list_column) == made(_grouped_list_column)


def test_ingest_with_no_folder_where_there_is_no_default_says_to_give_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(app, ["ingest", "-w", str(tmp_path / "wh")])
    assert done.exit_code == 2 and "data/runs: no such file or directory (the default, under" in done.stderr
    assert "give the folder of your runs" in done.stderr
