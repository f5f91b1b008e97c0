"""Voice analytics: the response latency per run, domain and scenario with the runner's own
percentiles (a whole run's p50 and p95 are its all_summary.txt's), interrupted agent turns, the
turns of many scenarios at once, and the cost of each side's tokens."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from tests.conftest import CONFORMANCE, conformance_sessions

runner = CliRunner()


@pytest.fixture(scope="module")
def wh(ingested) -> scorelake.Warehouse:
    return scorelake.open(ingested[0].location)


def overall(session: str) -> dict[str, float]:
    """all_summary.txt's Overall Latency Statistics, as upstream printed them."""
    text = (CONFORMANCE / session / "all_summary.txt").read_text()
    block = text.split("Overall Latency Statistics:", 1)[1]
    found = dict(re.findall(r"^  (Total Measurements|Mean|P50|P95|Min|Max): ([-\d.]+)", block, re.M))
    return {k: float(v) for k, v in found.items()}


@pytest.mark.parametrize("session", conformance_sessions())
def test_a_whole_runs_latency_is_its_all_summarys(wh, session):
    want = overall(session)
    row = wh.latency([session]).filter(pl.col("domain") == "(all)").row(0, named=True)
    if want.get("Total Measurements", 0) <= 0:
        assert not row["exchanges"]
        return
    assert row["exchanges"] == want["Total Measurements"]
    assert (round(row["mean_ms"], 1), round(row["p50_ms"], 1), round(row["p95_ms"], 1)) == (
        want["Mean"], want["P50"], want["P95"])
    assert round(row["max_ms"], 1) == want["Max"]


def test_each_scenarios_percentiles_are_its_metrics(wh):
    session = conformance_sessions()[0]
    rows = {r["scenario_name"]: r for r in wh.latency([session], by="scenario").iter_rows(named=True)}
    for metrics in json.loads((CONFORMANCE / session / "all_metrics.json").read_text()):
        stats, row = metrics["latency_stats"], rows.get(metrics["scenario_name"])
        if row is None or not stats["count"]:
            continue
        assert row["exchanges"] == stats["count"]
        assert (row["p50_ms"], row["p95_ms"], row["max_ms"]) == pytest.approx(
            (stats["p50_ms"], stats["p95_ms"], stats["max_ms"]))
    slowest = [r["p95_ms"] for r in rows.values() if r["p95_ms"] is not None]
    assert slowest == sorted(slowest, reverse=True)  # the slowest scenarios first


def test_interrupted_agent_turns_are_counted(wh):
    turns = wh.turns(conformance_sessions())
    marked = turns.filter((pl.col("role") == "agent") & (pl.col("text") == "[INTERRUPTED]"))
    assert marked.height > 0
    by_run = wh.latency().filter(pl.col("domain") == "(all)")
    assert by_run["interrupted"].sum() == marked.height
    whole = wh.sql("SELECT interrupted, agent_turns, interrupted_rate FROM run_latency WHERE domain = '(all)' "
                   "AND interrupted > 0 LIMIT 1").row(0, named=True)
    assert whole["interrupted_rate"] == pytest.approx(whole["interrupted"] / whole["agent_turns"])


def test_the_latency_and_cost_commands(wh):
    done = runner.invoke(app, ["latency", "-w", wh.location, "--format", "json"])
    assert done.exit_code == 0, done.output
    rows = json.loads(done.output)
    assert {"run_id", "domain", "exchanges", "mean_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms",
            "first_response_p50_ms", "interrupted"} <= set(rows[0])
    table = runner.invoke(app, ["latency", "--by", "scenario", "-w", wh.location])
    assert table.exit_code == 0 and "p95" in table.output
    costs = wh.cost({"agent": (3.0, 15.0)})
    whole = costs.filter(pl.col("domain") == "(all)").row(0, named=True)
    assert whole["agent_cost"] == pytest.approx((whole["agent_prompt_tokens"] * 3 + whole["agent_completion_tokens"] * 15)
                                                / 1e6)
    assert whole["user_cost"] is None  # no price given: no cost, not zero
    refused = runner.invoke(app, ["cost", "--price", "agent=abc", "-w", wh.location])
    assert refused.exit_code == 2
    tokens = runner.invoke(app, ["cost", "-w", wh.location])  # no price: the tokens themselves
    assert tokens.exit_code == 0 and "tokens only" in tokens.stdout and "agent in" in tokens.stdout
    assert f"{whole['agent_prompt_tokens']:,}" in tokens.stdout


def test_a_name_that_is_none_is_answered_with_the_names_close_to_it(wh):
    run = conformance_sessions()[0]
    scenario = wh.scenarios(run)["scenario_name"][0]
    typo = scenario.replace("__", "_", 1)
    shown = runner.invoke(app, ["show", run, typo, "-w", wh.location])
    assert shown.exit_code != 0 and f"did you mean '{scenario}'" in shown.stderr
    rates = runner.invoke(app, ["rates", "--run", run[:-1], "-w", wh.location])
    assert f"no run '{run[:-1]}'" in rates.stderr and "did you mean" in rates.stderr
    far = runner.invoke(app, ["rates", "--policy", "no-such-policy-at-all", "-w", wh.location])
    assert "no stored policy named" in far.stderr and "did you mean" not in far.stderr


def test_a_source_that_records_no_latency_has_none(tmp_path):
    from tests.hostile import tau2_document

    path = tmp_path / "runs" / "tau2-sample.json"
    path.parent.mkdir()
    path.write_text(json.dumps(tau2_document()))
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(path.parent)
    row = wh.latency().filter(pl.col("domain") == "(all)").row(0, named=True)
    assert row["exchanges"] is None and row["p50_ms"] is None and row["mean_ms"] is None
    assert row["interrupted"] is None and row["turns"] > 0  # what tau2 records: turns, durations


def test_compare_history_and_the_gate_read_the_latency(wh):
    a, b = conformance_sessions()[0], conformance_sessions()[1]
    c = wh.compare(a, b)
    assert c.latency is not None and "(all)" in c.latency["domain"].to_list()
    whole = c.latency.filter(pl.col("domain") == "(all)").row(0, named=True)
    assert whole["delta_ci_low_ms"] <= whole["delta_ms"] <= whole["delta_ci_high_ms"]
    again = wh.compare(a, b)  # seeded: the same interval every time
    assert again.latency.equals(c.latency)
    assert (c.slowed["slower_ms"] > 0).all()
    history = wh.history()
    assert {"p50_ms", "p95_ms"} <= set(history.columns)
    row = history.filter(pl.col("run_id") == a).row(0, named=True)
    assert round(row["p95_ms"], 1) == overall(a)["P95"]
    rise = whole["p95_b_ms"] - whole["p95_a_ms"]
    strict = wh.gate(a, b, max_drop=100, max_p95_rise=min(rise, 0) - 1 if rise <= 0 else rise - 1)
    assert not strict.passed and any(r.kind == "slower" for r in strict.regressions)
    assert wh.gate(a, b, max_drop=100, max_p95_rise=abs(rise) + 10**6).passed


@pytest.mark.parametrize("session", conformance_sessions()[:3])
def test_a_runs_distribution_and_slowest_exchanges(wh, session):
    measured = sorted(x for m in (json.loads(p.read_text()) for p in (CONFORMANCE / session).glob("*/metrics.json"))
                      for x in (entry["latency_ms"] for entry in m.get("latencies") or []))
    bins = wh.latency_histogram(session, bins=10)
    assert bins["exchanges"].sum() == len(measured) and bins.height == 11  # ten bins to p99, one open
    assert bins["high_ms"][-1] is None and bins["low_ms"][-1] == pytest.approx(measured[int(len(measured) * 0.99)])
    slowest = wh.slowest_exchanges(session, limit=3)
    assert slowest["latency_ms"].to_list() == pytest.approx(measured[::-1][:3])
    assert slowest["agent_text"].null_count() == 0 and slowest["user_text"].null_count() < 3
    with pytest.raises(scorelake.InvalidArgument):
        wh.latency_histogram(session, bins=0)


def test_the_viewer_shows_a_runs_latency(wh):
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    session = conformance_sessions()[0]
    client = TestClient(make_app(wh))
    run_page = client.get(f"/runs/{session}").text
    assert f'href="/runs/{session}/latency' in run_page
    page = client.get(f"/runs/{session}/latency")
    assert page.status_code == 200
    whole = wh.latency([session]).filter(pl.col("domain") == "(all)").row(0, named=True)
    # the panel as every face shows it (LATENCY_PANEL): whole milliseconds, as `scorelake latency` prints them
    assert f"<td class=num>{whole['p95_ms']:.0f}</td>" in page.text.split('id="latency"', 1)[1].split("</table>", 1)[0]
    bars = re.findall(r'class="bin"[^>]*data-exchanges="(\d+)"', page.text)
    assert sum(map(int, bars)) == whole["exchanges"]
    slowest = wh.slowest_exchanges(session, limit=1).row(0, named=True)
    first = page.text.split('id="slowest"', 1)[1].split("</tr>", 2)[1]
    assert slowest["scenario_name"] in first and f"{slowest['latency_ms']:,.0f}" in first
    assert client.get("/runs/no-such-run/latency").status_code == 404
