"""Output a person reads at a glance (issue 59): a headline per run in every face, listings that
stay short and keep their keys, every column explained."""

from __future__ import annotations

import re

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from tests.conftest import CONFORMANCE, summary_rates

runner = CliRunner()


@pytest.fixture(scope="module")
def wh(ingested) -> scorelake.Warehouse:
    return scorelake.open(ingested[0].location)


def test_a_runs_headline_is_the_runners_first_line_and_what_history_and_the_judge_say(wh):
    headlines = wh.headlines()
    assert [h.run_id for h in headlines] == wh.runs()["run_id"].to_list()
    history = {r["run_id"]: r for r in wh.history().iter_rows(named=True)}
    errors = wh.judge_errors()
    for h in headlines:
        assert (h.success_passed, h.success_total) == summary_rates(h.run_id)["(all)", "success"]
        past = history[h.run_id]
        assert (h.previous_run, h.pairs, h.broken, h.fixed, h.change) == (
            past["previous_run"], past["pairs"], past["broken"], past["fixed"], past["change"])
        mine = errors.filter(pl.col("run_id") == h.run_id)
        assert (h.judge_errors, h.judge_only) == (mine.height, mine["judge_only"].sum())
        domains = wh.rates(run=h.run_id).filter(pl.col("domain") != "(all)")
        lowest = domains["success_rate"].min()
        if domains.height > 1:
            worst = domains.filter(pl.col("success_rate") == lowest).sort("scenarios", descending=True)
            assert h.worst_domain == worst["domain"][0] and h.worst_passed / h.worst_total == lowest
        assert h.stalled == wh.rates(run=h.run_id)["stalled"][0]


def test_the_headline_is_in_rates_summary_brief_the_viewer_and_the_report(wh, tmp_path):
    from starlette.testclient import TestClient

    from scorelake.present import headline_text
    from scorelake.web import make_app

    lines = [headline_text(h) for h in wh.headlines()]
    brief = runner.invoke(app, ["summary", "--brief", "-w", wh.location])
    assert brief.exit_code == 0 and brief.stdout.splitlines() == lines
    first = wh.headlines()[0]
    assert re.match(rf"{first.run_id}: success [\d.]+% {first.success_passed}/{first.success_total} \(95% CI ",
                    lines[0])
    rates = runner.invoke(app, ["rates", "-r", first.run_id, "-w", wh.location]).stdout.splitlines()
    assert rates[0] == f"{first.run_id} (policy recorded): {lines[0].split(': ', 1)[1]}"
    assert rates[3].split()[0] == "(all)"  # the whole run's row first, in the table as in JSON and CSV
    missing = runner.invoke(app, ["summary", "-w", wh.location])
    assert missing.exit_code == 2 and "--brief" in missing.stderr
    page = TestClient(make_app(wh)).get("/").text
    report = wh.report()
    for line in lines:
        said = line.split(": ", 1)[1]
        assert f'<p class="headline">{said}</p>' in page and said in report


def test_every_conformance_session_has_a_headline(wh):
    assert {h.run_id for h in wh.headlines()} == {p.name for p in CONFORMANCE.glob("eval_*")}
