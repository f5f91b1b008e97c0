"""Comparing runs of two harnesses (issue 61, item 4): a voice-agent session and a tau2-bench run
name their scenarios apart; by name nothing matches, and compare says so plainly; a declared task
map pairs them (the CLI, the API and the viewer alike)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from scorelake.transforms.errors import NotFound
from tests.conftest import REPO, SHARED

runner = CliRunner()
NEMO = "eval_20260903_140200"  # the sample's run: tau2_airline__9, __14 and __36 among its scenarios
TAU2 = "toolorchestra_airline_gpt-5_1trial"
TAU2_FILE = (SHARED / "external/tau2/web/leaderboard/public/submissions/toolorchestra_nvidia_2025-12-02/trajectories"
             / f"{TAU2}.json")


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> scorelake.Warehouse:
    wh = scorelake.open(tmp_path_factory.mktemp("harnesses") / "wh")
    wh.ingest(REPO / "data" / "runs", prefect=False)
    wh.ingest(TAU2_FILE, prefect=False)
    return wh


def test_by_name_nothing_matches_and_compare_says_so(both):
    compared = both.compare(NEMO, TAU2)
    assert compared.paired == 0
    assert compared.nothing_matches.startswith(f"nothing matches: no scenario of {NEMO} has a counterpart in {TAU2} "
                                               "by name") and "--map FILE" in compared.nothing_matches
    done = runner.invoke(app, ["compare", NEMO, TAU2, "-w", both.location])
    assert done.exit_code == 0 and "nothing matches" in done.stderr
    assert both.compare(NEMO, "eval_20260904_080000").nothing_matches is None  # runs of one harness pair by name


def test_a_declared_map_pairs_them(both, tmp_path):
    path = tmp_path / "airline.csv"
    path.write_text("a,b\ntau2_airline__36,36\ntau2_airline__14,14\ntau2_airline__9,9\nnot_in_either,999\n")
    done = runner.invoke(app, ["compare", NEMO, TAU2, "--map", str(path), "-f", "json", "-w", both.location])
    assert done.exit_code == 0, done.output
    assert "task map 'airline' declared: 4 pairs" in done.stderr
    compared = both.compare(NEMO, TAU2, task_map="airline")
    assert compared.paired == 3 and compared.nothing_matches is None
    scores = both.sql(f"SELECT run_id, scenario_name, task_id, is_successful FROM scenario_scores "
                      f"WHERE policy_id = (SELECT policy_id FROM stg_policies WHERE name = 'recorded') "
                      f"AND run_id IN ('{NEMO}', '{TAU2}')")
    verdict = {(r["run_id"], r["task_id"]): r["is_successful"] for r in scores.iter_rows(named=True)}
    expected_broken = sorted(n for n, t in (("tau2_airline__36", "36"), ("tau2_airline__14", "14"),
                                            ("tau2_airline__9", "9"))
                             if verdict[(NEMO, n)] and not verdict[(TAU2, t)])
    assert sorted(compared.broken) == expected_broken
    names = dict(scores.select("task_id", "scenario_name").filter(scores["run_id"] == TAU2).iter_rows())
    assert compared.counterparts == {n: names[t] for n, t in (("tau2_airline__36", "36"), ("tau2_airline__14", "14"),
                                                              ("tau2_airline__9", "9"))}
    assert both.task_maps().row(0, named=True)["pairs"] == 4


def test_a_bad_map_is_refused_naming_the_file_and_line_and_an_unknown_one_named(both, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\nx,\n")
    done = runner.invoke(app, ["compare", NEMO, TAU2, "--map", str(bad), "-w", both.location])
    assert done.exit_code == 2 and f"{bad}: line 2: both a and b are needed" in done.stderr
    (tmp_path / "cols.csv").write_text("left,right\nx,y\n")
    assert "header names the columns a and b" in both_error(both, tmp_path / "cols.csv")
    with pytest.raises(NotFound, match="no task map named 'nope'"):
        both.compare(NEMO, TAU2, task_map="nope")


def both_error(wh: scorelake.Warehouse, path) -> str:
    with pytest.raises(scorelake.InvalidArgument) as caught:
        wh.declare_task_map("x", path)
    return str(caught.value)


def test_the_viewer_pairs_by_a_map_and_says_when_nothing_matches(both, tmp_path):
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    (tmp_path / "air.csv").write_text("a,b\ntau2_airline__9,9\n")
    both.declare_task_map("air", tmp_path / "air.csv")
    client = TestClient(make_app(both))
    by_name = client.get(f"/compare?a={NEMO}&b={TAU2}").text
    assert 'id="nothing-matches"' in by_name and '<option value="air">air</option>' in by_name
    mapped = client.get(f"/compare?a={NEMO}&b={TAU2}&map=air").text
    assert 'id="nothing-matches"' not in mapped and '<option value="air" selected>air</option>' in mapped
