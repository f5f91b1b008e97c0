"""tau2-bench and tau-bench results as a second source: published numbers, signal mapping, formats."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from scorelake.flows.flow_bodies import InProcess, ingest
from scorelake.flows.prefect_flows import ingest_flow
from scorelake.storage import Store
from scorelake.transforms.scoring import Policy
from tests.conftest import SHARED

EXTERNAL = SHARED / "external"
ORCHESTRA = EXTERNAL / "tau2/web/leaderboard/public/submissions/toolorchestra_nvidia_2025-12-02"
SIERRA = EXTERNAL / "tau2/src/experiments/model_training/results"
TAU_BENCH = EXTERNAL / "tau-bench/historical_trajectories/gpt-4o-airline.json"
runner = CliRunner()


@pytest.fixture(scope="module")
def external(tmp_path_factory):
    root = tmp_path_factory.mktemp("external")
    result = ingest(InProcess(), runs_dirs=[str(ORCHESTRA / "trajectories"), str(SIERRA), str(TAU_BENCH)],
                    warehouse=str(root))
    return Store(root), result


def pass_hat_k(wh: Store, run_group: str) -> dict[int, tuple]:
    with wh.views.connect() as con:
        rows = con.execute("SELECT k, pass_hat_k, claimed_pass_hat_k FROM pass_hat_k WHERE run_group = ? "
                           "AND policy_id = ? ORDER BY k", [run_group, Policy().id]).fetchall()
    return {k: (p, claimed) for k, p, claimed in rows}


def test_every_file_is_recognised_and_ingested_whole(external):
    _, result = external
    assert {r.run_id: r.scenarios for r in result.ingested} == {
        "toolorchestra_airline_gpt-5_1trial": 50, "toolorchestra_retail_gpt-5_1trial": 114,
        "gpt-4.1_telecom_default_gpt-4.1_1trials": 40,
        "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm_telecom_default_gpt-4.1_1trials": 40,
        "gpt-4o-airline": 200,
    }
    assert all(r.quarantined == 0 for r in result.ingested)


def test_toolorchestra_pass1_equals_the_published_leaderboard(external):
    wh, _ = external
    published = json.loads((ORCHESTRA / "submission.json").read_text())["results"]
    airline = pass_hat_k(wh, "toolorchestra_airline_gpt-5_1trial")
    retail = pass_hat_k(wh, "toolorchestra_retail_gpt-5_1trial")
    assert round(airline[1][1] * 100, 1) == published["airline"]["pass_1"] == 56.0
    assert round(retail[1][1] * 100, 1) == published["retail"]["pass_1"] == 84.2
    # Recomputed with COMMUNICATE gating (retail's one DB pass that fails it) and recovered task ids.
    assert round(airline[1][0] * 100, 1) == 56.0 and airline[1][0] == pytest.approx(28 / 50)
    assert round(retail[1][0] * 100, 1) == 84.2 and retail[1][0] == pytest.approx(96 / 114)


def test_tau_bench_pass_hat_1_to_4_equal_the_published_readme(external):
    wh, _ = external
    claimed = {k: round(v[1], 3) for k, v in pass_hat_k(wh, "gpt-4o-airline").items()}
    assert claimed == {1: 0.420, 2: 0.273, 3: 0.220, 4: 0.200}


@pytest.mark.parametrize("run_id,counts", [
    # (clean exits, db matches, env assertions all met, composite passes): tau2-notes.md §9
    ("toolorchestra_airline_gpt-5_1trial", (50, 28, 0, 28)),
    ("toolorchestra_retail_gpt-5_1trial", (114, 97, 0, 96)),
    ("gpt-4.1_telecom_default_gpt-4.1_1trials", (40, 6, 20, 18)),
    ("ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm_telecom_default_gpt-4.1_1trials", (34, 13, 30, 30)),
])
def test_checks_map_onto_the_signals(external, run_id, counts):
    wh, _ = external
    with wh.views.connect() as con:
        got = con.execute(
            "SELECT count(*) FILTER (WHERE clean_exit), count(*) FILTER (WHERE db_state_match), "
            "count(*) FILTER (WHERE db_state_assertion_pass_rate = 1), count(*) FILTER (WHERE is_successful) "
            "FROM scenario_scores WHERE run_id = ? AND policy_id = ?", [run_id, Policy().id]).fetchone()
    assert got == counts


def test_verdicts_keep_every_check(external):
    wh, _ = external
    with wh.views.connect() as con:
        kinds = dict(con.execute(
            "SELECT kind, count(*) FROM stg_verdicts WHERE run_id = 'gpt-4.1_telecom_default_gpt-4.1_1trials' "
            "GROUP BY kind").fetchall())
    assert set(kinds) == {"db_state_assertion", "action"}


def test_dir_format_reads_like_the_monolithic_file(prefect_server, tmp_path):
    doc = json.loads((ORCHESTRA / "trajectories/toolorchestra_airline_gpt-5_1trial.json").read_text())
    run = tmp_path / "runs" / "airline-dir"
    (run / "simulations").mkdir(parents=True)
    sims = doc.pop("simulations")
    doc["simulation_index"] = [{"id": s["id"], "task_id": s["task_id"], "trial": s["trial"]} for s in sims]
    (run / "results.json").write_text(json.dumps(doc))
    for s in sims:
        (run / "simulations" / f"{s['id']}.json").write_text(json.dumps(s))
    (run / "simulations" / "broken.json").write_text("{")
    (tmp_path / "runs" / "notes.json").write_text('{"not": "a run"}')  # passed over, not a run

    result = ingest_flow(runs_dirs=[str(tmp_path / "runs")], warehouse=str(tmp_path / "wh"))
    (report,) = result.ingested
    assert (report.run_id, report.scenarios, report.quarantined) == ("airline-dir", 50, 1)
    wh = Store(tmp_path / "wh")
    assert pass_hat_k(wh, "airline-dir")[1][1] == pytest.approx(0.56)
    with wh.views.connect() as con:
        assert con.execute("SELECT file, reason FROM quarantined").fetchall() == [
            ("simulations/broken.json", "invalid JSON")]


def test_an_unrecognised_file_is_refused_by_name(tmp_path):
    path = tmp_path / "other.json"
    path.write_text('{"hello": 1}')
    result = runner.invoke(app, ["ingest", str(path), "--warehouse", str(tmp_path / "wh")])
    assert result.exit_code == 2 and "not a recognised results file" in result.stderr


TAU2_FILES = {"toolorchestra_airline_gpt-5_1trial": 50, "toolorchestra_retail_gpt-5_1trial": 114,
              "gpt-4.1_telecom_default_gpt-4.1_1trials": 40,
              "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm_telecom_default_gpt-4.1_1trials": 40}


def test_recomputed_reward_equals_tau2s_reward_on_every_simulation(external):
    wh, _ = external
    with wh.views.connect() as con:
        rows = con.execute(
            "SELECT run_id, count(*), count(*) FILTER (WHERE abs(reward - claimed_reward) <= 1e-6), "
            "count(*) FILTER (WHERE is_successful = (abs(claimed_reward - 1) <= 1e-6)) "
            "FROM scenario_scores WHERE source = 'tau2' AND policy_id = ? GROUP BY run_id", [Policy().id]).fetchall()
        assert {run_id: (n, agree, success) for run_id, n, agree, success in rows} == {
            run_id: (n, n, n) for run_id, n in TAU2_FILES.items()}
        assert con.execute("SELECT count(*) FROM reward_disagreements").fetchone() == (0,)
        # COMMUNICATE has its own per-signal rate (tau2-notes §9: 4 of 6 airline, 37 of 38 retail)
        communicate = dict(((r, (p, n)) for r, p, n in con.execute(
            "SELECT run_id, passed, total FROM signal_rates WHERE signal = 'communicate' AND policy_id = ?",
            [Policy().id]).fetchall()))
        assert communicate == {"toolorchestra_airline_gpt-5_1trial": (4, 6),
                               "toolorchestra_retail_gpt-5_1trial": (37, 38)}


def test_task_ids_that_contradict_their_task_are_recovered_and_reported(external):
    wh, result = external
    with wh.views.connect() as con:
        counts = dict((r, (c, u)) for r, c, u in con.execute(
            "SELECT run_id, count(task_id_claimed), count(*) FILTER (WHERE task_id LIKE '% (unresolved)') "
            "FROM stg_scenarios GROUP BY run_id").fetchall())
        # tau2-notes §8: one label per ToolOrchestra file is right; airline 50/50, retail 112/114 resolvable
        assert counts["toolorchestra_airline_gpt-5_1trial"] == (49, 0)
        assert counts["toolorchestra_retail_gpt-5_1trial"] == (113, 2)
        for right in ("gpt-4.1_telecom_default_gpt-4.1_1trials", "gpt-4o-airline"):
            assert counts[right] == (0, 0)  # files whose ids are right are left alone
        # the simulation labelled "0" is really task 27 (tau2-notes §8)
        assert con.execute("SELECT task_id FROM stg_scenarios WHERE run_id = 'toolorchestra_airline_gpt-5_1trial' "
                           "AND task_id_claimed = '0'").fetchone() == ("27",)
        tasks = con.execute("SELECT count(DISTINCT task_id) FROM stg_scenarios "
                            "WHERE run_id = 'toolorchestra_retail_gpt-5_1trial'").fetchone()
        assert tasks == (114,)  # one trial per task: a recovered id never doubles up with a claimed one
    warned = {r.run_id: r.warnings for r in result.ingested}
    assert "49 of 50 simulations carry a task_id that contradicts" in warned["toolorchestra_airline_gpt-5_1trial"][0]
    assert warned["gpt-4.1_telecom_default_gpt-4.1_1trials"] == []
    check = runner.invoke(app, ["check", "-w", str(wh.tables.root)])
    assert check.exit_code == 0
    assert "toolorchestra_retail_gpt-5_1trial: 113 of 114 simulations" in check.stderr
    assert "111 recovered from their checks, 2 unresolved" in check.stderr


def test_passk_command_prints_recomputed_and_claimed_side_by_side(external):
    wh, _ = external
    table = runner.invoke(app, ["passk", "--group", "gpt-4o-airline", "-w", str(wh.tables.root)], env={"COLUMNS": "100"})
    assert table.exit_code == 0, table.output
    claimed = [line.split()[-1] for line in table.stdout.splitlines() if line.startswith("taubench_airline")]
    assert claimed == ["0.420", "0.273", "0.220", "0.200"]
    rows = json.loads(runner.invoke(app, ["passk", "-f", "json", "-w", str(wh.tables.root)]).stdout)
    orchestra = {(r["run_group"], r["k"]): r for r in rows if r["run_group"].startswith("toolorchestra")}
    assert round(orchestra["toolorchestra_retail_gpt-5_1trial", 1]["pass_hat_k"] * 100, 1) == 84.2
    assert orchestra["toolorchestra_retail_gpt-5_1trial", 1]["ci_low"] < 0.842 < orchestra[
        "toolorchestra_retail_gpt-5_1trial", 1]["ci_high"]
    unknown = runner.invoke(app, ["passk", "--group", "nope", "-w", str(wh.tables.root)])
    assert unknown.exit_code == 2 and "no run group 'nope'" in unknown.stderr


def test_a_reward_that_disagrees_with_its_checks_is_recorded_not_relabelled(tmp_path):
    doc = json.loads((ORCHESTRA / "trajectories/toolorchestra_airline_gpt-5_1trial.json").read_text())
    sims = doc["simulations"]
    failed = next(s for s in sims if s["reward_info"]["reward"] == 0 and s["termination_reason"] == "user_stop")
    failed["reward_info"]["reward"] = 1.0  # a reward its own checks do not support
    missing = next(s for s in sims if s is not failed and s["reward_info"]["db_check"] is not None)
    missing["reward_info"]["db_check"] = None  # DB is in the basis, but no check was recorded
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "edited.json").write_text(json.dumps(doc))
    ingest(InProcess(), runs_dirs=[str(tmp_path / "runs")], warehouse=str(tmp_path / "wh"))
    with Store(tmp_path / "wh").views.connect() as con:
        rows = con.execute("SELECT claimed_reward, reward, basis_checks_missing, reason FROM reward_disagreements "
                           "ORDER BY reason").fetchall()
    assert (1.0, 0.0, [], "reward disagrees with its checks") in rows
    assert any(missing_ == ["DB"] and reason == "basis names a check that is not present"
               for _, _, missing_, reason in rows)
    assert len(rows) == 2


def test_flaky_tasks_from_repeated_trials_of_one_run(external):
    """tau-bench's four trials of each task are repeated verdicts: a task that passed some and failed
    others is flaky, its flips counted in trial order."""
    wh = scorelake.open(external[0].tables.root)
    verdicts = (wh.sql("SELECT task_id, trial, is_successful FROM scenario_scores WHERE run_id = 'gpt-4o-airline' "
                       "AND policy_name = 'recorded' AND is_successful IS NOT NULL ORDER BY task_id, position")
                .group_by("task_id", maintain_order=True).agg("is_successful"))
    expected = {r["task_id"]: (len(r["is_successful"]), sum(a != b for a, b in zip(r["is_successful"], r["is_successful"][1:])))
                for r in verdicts.iter_rows(named=True) if 0 < sum(r["is_successful"]) < len(r["is_successful"])}
    flaky = wh.flaky(group="gpt-4o-airline")
    assert expected and {r["task_id"]: (r["verdicts"], r["flips"]) for r in flaky.iter_rows(named=True)} == expected
    assert (flaky["runs"] == 1).all() and flaky["flip_rate"].is_sorted(descending=True)
