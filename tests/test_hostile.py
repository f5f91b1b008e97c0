"""Hostile input and bad usage, as a hostile user brings them: every broken file ends quarantined or
refused with a message naming the file and the reason, the rest of the ingest is committed, the
warehouse stays consistent, nothing outside the given folders is read; a bad command line ends with
a message and an exit code, never a traceback or a hang."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from scorelake.transforms.sources import list_session
from tests import hostile
from tests.conftest import BASELINE, CONFORMANCE

runner = CliRunner()
SCORELAKE = str(Path(sys.executable).parent / "scorelake")


@pytest.fixture(scope="module")
def hostile_ingest(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    runs, cases, clean = hostile.build(root / "corpus", root / "outside")
    done = subprocess.run([SCORELAKE, "ingest", str(runs), "-w", str(root / "wh")], capture_output=True, text=True,
                          timeout=300)  # a FIFO read without care would hang here until the timeout
    return scorelake.open(root / "wh"), cases, clean, done


def test_the_ingest_finishes_and_says_what_it_refused(hostile_ingest):
    _, cases, _, done = hostile_ingest
    assert "Traceback" not in done.stderr
    assert done.returncode == 1  # a session was refused: the non-UTF-8 folder
    refused = [c for c in cases if c.refused]
    for case in refused:
        assert re.search(rf"refused .*{re.escape(case.file)}.*{case.reason}", done.stderr), case


def test_every_hostile_file_is_quarantined_naming_the_file_and_the_reason(hostile_ingest):
    wh, cases, _, done = hostile_ingest
    quarantined = wh.sql("SELECT run_id, scenario_name, file, reason, error FROM quarantined").to_dicts()
    for case in (c for c in cases if not c.refused):
        found = [q for q in quarantined if q["run_id"] == case.run_id and q["scenario_name"] == case.scenario]
        assert found, case
        assert any(q["file"].endswith(case.file) and case.reason in q["reason"] for q in found), (case, found)
        assert f"{case.file}: {case.reason}" in done.stderr or case.scenario is None, case


def test_the_rest_of_the_ingest_is_committed_whole(hostile_ingest):
    wh, cases, clean, _ = hostile_ingest
    runs = set(wh.runs()["run_id"])
    assert set(clean) <= runs
    assert wh.summary(clean[0]) == (CONFORMANCE / clean[0] / "all_summary.txt").read_text()
    assert {c.run_id for c in cases if not c.refused} <= runs  # broken runs are stored, as quarantined
    partly = wh.scenarios(run="eval_20990101_000001")
    assert partly.height == 14 - sum(1 for c in cases if c.run_id == "eval_20990101_000001")


def test_check_finds_the_warehouse_consistent(hostile_ingest):
    wh, *_ = hostile_ingest
    done = runner.invoke(app, ["check", "-w", wh.location])
    assert done.exit_code == 0, done.output


def test_stored_fingerprints_are_those_a_pass_of_stats_lists(hostile_ingest):
    """A read fingerprints what it opened (FIFOs, folders, symlinks in and out included) as a pass of
    stats would: a no-change re-ingest compares the two, and would otherwise read these runs again."""
    wh, *_ = hostile_ingest
    runs = wh.sql("SELECT session_path, fingerprint FROM stg_runs WHERE source = 'nemo'").rows()
    scenarios = wh.sql("SELECT r.session_path, s.scenario_name, s.fingerprint FROM stg_scenarios s "
                       "JOIN stg_runs r USING (run_id, generation) WHERE r.source = 'nemo'").rows()
    assert len(runs) >= 2 and scenarios
    listings = {path: list_session(Path(path)) for path, _ in runs}
    assert {path: fingerprint for path, fingerprint in runs} == {path: got.fingerprint for path, got in listings.items()}
    for path, scenario, fingerprint in scenarios:
        assert fingerprint == listings[path].scenarios[scenario], scenario


def test_nothing_outside_the_given_folders_was_read(hostile_ingest):
    """The reference files outside the corpus were refused by their path, before any open (a FIFO
    opened for reading would have hung the ingest), and their content is in no table."""
    wh, *_ = hostile_ingest
    found = wh.sql("SELECT count(*) AS n FROM stg_scenarios WHERE reference_json LIKE '%never%'")
    assert found["n"][0] == 0


@pytest.mark.slow
@pytest.mark.browser
def test_a_hostile_domain_name_leaves_every_chart_of_the_report(tmp_path):
    """A domain named to break out of the report's JSON script block renders as a chart like any other."""
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    runs = tmp_path / "runs"
    shutil.copytree(CONFORMANCE / BASELINE, runs / BASELINE)
    for i, name in enumerate(["<!--<script>", "</script><script>alert(1)</script>", "a\u2028b&amp;"]):
        (runs / f"tau2_hostile_{i}.json").write_text(json.dumps(hostile.tau2_document(domain=name)))
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(runs)
    page = tmp_path / "report.html"
    page.write_text(wh.report())
    dom = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True).stdout
    rates, latency = dom.split('id="latency-charts"', 1)
    charts = re.findall(r'<figure class="chart" data-domain=', rates)
    domains = wh.rates().filter(pl.col("domain") != "(all)")["domain"].n_unique()  # a chart each, not the run
    assert len(charts) == domains and f'data-rendered="{domains}"' in dom
    timed = len(re.findall(r'<figure class="chart" data-domain=', latency))
    assert timed and f'data-latency-rendered="{timed}"' in dom  # the script ran to its end
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in dom  # shown as text, run as nothing


# ---- bad usage --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> tuple[str, Path]:
    root = tmp_path_factory.mktemp("usage")
    shutil.copytree(CONFORMANCE / BASELINE, root / "runs" / BASELINE)
    scorelake.open(root / "wh").ingest(root / "runs")
    (root / "afile").write_text("x")
    (root / "notes").mkdir()
    (root / "notes" / "todo.txt").write_text("x")
    (root / "empty-runs").mkdir()
    return str(root / "wh"), root


BAD_USAGE = [
    (["ingest", "/dev/null"], 2, "not a recognised results file"),
    (["ingest", "{root}/runs", "-w", "{root}/afile"], 2, "is a file, not a warehouse folder"),
    (["ingest", "{root}/runs", "-w", "{root}/notes"], 2, "holds other files"),
    (["ingest", "{root}/runs", "-w", "/proc/scorelake"], 1, "No such file or directory"),
    (["ingest", "{root}/empty-runs"], 1, "no run found"),
    (["ingest", "{root}/runs", "--dask-address", "tcp://127.0.0.1:1"], 2, "does not answer"),
    (["rates", "-w", "/"], 1, "no scorelake warehouse here"),
    (["rates", "-w", "{root}/afile"], 1, "no scorelake warehouse here"),
    (["report", "--out", "{root}/missing/report.html"], 2, "cannot write"),
    (["report", "--out", "{root}"], 2, "cannot write"),
    (["summary", BASELINE, "-o", "{root}/missing/summary.txt"], 2, "cannot write"),
    (["rescore", "--min-agent-turns", "1e9"], 2, "is not a valid int"),
    (["rescore", "--min-agent-turns", "1000000000000000000000"], 2, "--min-agent-turns"),
    (["rescore", "--min-agent-turns", "-5"], 2, "--min-agent-turns: input should be greater than or equal to 0"),
    (["rescore", "--judge-threshold", "nan"], 2, "--judge-threshold: input should be a finite number"),
    (["rescore", "--judge-threshold", "inf"], 2, "--judge-threshold: input should be a finite number"),
    (["rescore", "--judge-threshold", "-1"], 2, "--judge-threshold: input should be greater than or equal to 0"),
    (["rescore", "--judge-threshold", "2"], 2, "--judge-threshold: input should be less than or equal to 1"),
    (["rescore", "--whitelist", "nowhere=judge_passed"], 2, "names domains no stored run has: nowhere"),
    (["rescore", "--whitelist", "qa=telepathy"], 2, "--whitelists"),
    (["sql", "select 1", "--as-of", ""], 2, "as_of is empty"),
    (["sql", "CREATE OR REPLACE VIEW domain_rates AS SELECT 1", "--as-of", "1"], 2, "one read-only query"),
    (["sql", "DROP VIEW domain_rates", "--as-of", "1"], 2, "one read-only query"),
    (["sql", "ATTACH ':memory:' AS elsewhere", "--as-of", "1"], 2, "one read-only query"),
    (["sql", "ATTACH ':memory:' AS elsewhere"], 2, "one read-only query"),
    (["sql", "SELECT count(*) FROM range(1000000000000)", "--timeout", "1"], 2, "time limit of 1 s"),
    (["sql", "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t",
      "--timeout", "1"], 2, "time limit"),
    (["sql", "SELECT length(string_agg(repeat('x', 1000), '')) FROM range(3000000)", "--memory-limit", "300MB"],
     2, "memory"),
]


@pytest.mark.parametrize("args, code, message", BAD_USAGE, ids=[" ".join(a)[:60] for a, _, _ in BAD_USAGE])
def test_bad_usage_ends_with_a_message_not_a_traceback(sample, args, code, message):
    warehouse, root = sample
    args = [a.replace("{root}", str(root)) for a in args]
    if "-w" not in args:
        args += ["-w", warehouse]
    done = runner.invoke(app, args)
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    assert done.exit_code == code, done.output
    assert message in done.output, done.output
    assert "pydantic" not in done.output and "https://errors" not in done.output


@pytest.mark.slow
def test_an_object_store_that_does_not_answer_is_one_line(sample):
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x",
           "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
    for args in (["rates"], ["ingest", str(sample[1] / "runs")]):
        done = runner.invoke(app, [*args, "-w", "s3://nowhere/wh"], env=env)
        assert done.exit_code == 1 and isinstance(done.exception, SystemExit), done.output
        assert "error:" in done.output and "Connection refused" in done.output


def test_help_version_and_completion(sample, monkeypatch):
    assert runner.invoke(app, ["-h"]).exit_code == 0
    assert runner.invoke(app, ["rates", "-h"]).output.count("Example: scorelake rates --run eval_20260904_080000 --by") == 1
    assert runner.invoke(app, ["--version"]).output.strip() == f"scorelake {scorelake.__version__}"
    # The shell named, not detected: detection reads the process tree, and a test run in the
    # background (its shell gone) has none, which failed this test now and then. Set before the
    # command is built: that is when typer reads it.
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    shown = runner.invoke(app, ["--show-completion", "bash"])
    assert shown.exit_code == 0 and "complete -o default -F" in shown.output


# ---- answers that surprised ---------------------------------------------------------------------------

def test_runs_are_found_at_any_depth_and_a_folder_without_any_says_so(tmp_path):
    from tests.test_external import EXTERNAL

    wh = scorelake.open(tmp_path / "wh")
    result = wh.ingest(EXTERNAL)  # tau2 files 3 to 4 levels down, a tau-bench file 2 down
    assert len(result.ingested) == 5 and result.refused == []
    loop = tmp_path / "loop"
    loop.mkdir()
    (loop / "again").symlink_to(loop)  # a symlink loop ends
    with pytest.raises(scorelake.NothingFound, match="no run found"):
        wh.ingest(loop)


def test_a_new_group_for_an_unchanged_run_is_applied_without_re_reading(tmp_path):
    shutil.copytree(CONFORMANCE / BASELINE, tmp_path / "runs" / BASELINE)
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(tmp_path / "runs")
    again = wh.ingest(tmp_path / "runs", group="candidate-7")
    assert again.ingested == [] and again.regrouped == [scorelake.Regrouped(BASELINE, "candidate-7")]
    assert wh.runs()["run_group"].to_list() == ["candidate-7"]
    assert set(wh.passk()["run_group"]) == {"candidate-7"}


def test_rates_by_domain_carry_every_signal_and_compare_pairs_a_run_with_itself(sample):
    warehouse, _ = sample
    wh = scorelake.open(warehouse)
    columns = wh.rates(run=BASELINE).columns
    for signal in ("action_match", "db_state_match", "db_state_assertion", "nl_assertion", "judge_passed",
                   "clean_exit", "communicate"):
        assert f"{signal}_passed" in columns and f"{signal}_total" in columns
    itself = wh.compare(BASELINE, BASELINE)
    assert itself.paired == 14 - wh.scenarios(run=BASELINE)["is_successful"].null_count() and itself.mcnemar.p_value == 1


def test_compare_as_csv_keeps_the_flips_and_the_test(ingested):
    store, _ = ingested
    done = runner.invoke(app, ["compare", BASELINE, "eval_20260904_083000", "-f", "csv", "-w", str(store.tables.root)])
    import polars as pl

    table = pl.read_csv(done.stdout.encode())
    whole = table.filter(pl.col("domain") == "(all)").row(0, named=True)
    c = scorelake.open(store.tables.root).compare(BASELINE, "eval_20260904_083000")
    assert whole["paired"] == c.paired and whole["mcnemar_p_value"] == pytest.approx(c.mcnemar.p_value)
    assert sorted(filter(None, (whole["fixed"] or "").split(";"))) == sorted(c.fixed)
    assert sorted(filter(None, (whole["broken"] or "").split(";"))) == sorted(c.broken)


@pytest.mark.slow  # worker processes start
def test_the_process_pool_task_runner_finishes(tmp_path):
    shutil.copytree(CONFORMANCE / BASELINE, tmp_path / "runs" / BASELINE)
    done = subprocess.run([SCORELAKE, "ingest", str(tmp_path / "runs"), "--task-runner", "processes", "-w",
                           str(tmp_path / "wh")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "1 ingested" in done.stderr, done.stderr


def test_object_storage_without_credentials_is_one_line_naming_the_variables(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "RUST_LOG"))}
    env.update(AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE=str(tmp_path / "none"),
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"), PREFECT_API_URL="")
    done = subprocess.run([sys.executable, "-m", "scorelake", "rates", "-w", "s3://no-such-bucket/prefix"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode != 0 and len(said) == 1, done.stderr[-2000:]
    assert "AWS_ACCESS_KEY_ID" in said[0] and "WARN" not in done.stderr
