"""Run comparison: exact McNemar and Newcombe intervals by hand, run_diff and `scorelake compare` on real runs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from scorelake.cli import app
from scorelake.transforms.analysis import mcnemar_exact, newcombe_interval
from scorelake.transforms.scoring import Policy
from tests.conftest import upstream_metrics

runner = CliRunner()
BASE, NO_STALL = "eval_20260904_080000", "eval_20260904_093000"


@pytest.mark.parametrize("broken,fixed,p", [
    (0, 0, 1.0),
    (0, 2, 0.5),  # 2 * (1/2)^2
    (1, 4, 0.375),  # 2 * (C(5,0) + C(5,1)) / 2^5 = 2 * 6/32
    (0, 6, 0.03125),  # 2 / 2^6
    (7, 1, 0.0703125),  # 2 * (1 + 8) / 256
    (10, 10, 1.0),  # capped at 1
])
def test_exact_mcnemar_by_hand(broken, fixed, p):
    assert mcnemar_exact(broken, fixed).p_value == pytest.approx(p)


def test_newcombe_interval_by_hand():
    # Newcombe (1998) example 1: 56/70 vs 48/80 -> difference 0.2, interval (0.0524, 0.3339).
    def wilson(x, n, z=1.959963984540054):
        p = x / n
        centre, half = p + z * z / (2 * n), z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
        return p, (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)

    low, high = newcombe_interval(*wilson(48, 80), *wilson(56, 70))
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)


def expected_flips(a: str, b: str) -> dict[str, str]:
    """Hand-computed from the two sessions' metrics.json: composite True <-> False changes."""
    before = {m["scenario_name"]: m["is_successful"] for m in upstream_metrics(a)}
    after = {m["scenario_name"]: m["is_successful"] for m in upstream_metrics(b)}
    flips = {}
    for name in before.keys() & after.keys():
        if before[name] is False and after[name] is True:
            flips[name] = "fixed"
        elif before[name] is True and after[name] is False:
            flips[name] = "broken"
    return flips


def test_run_diff_matches_hand_computed_flips(ingested):
    wh, _ = ingested
    with wh.views.connect() as con:
        rows = con.execute("SELECT scenario_name, flip, stalled_a, stalled_b FROM run_diff "
                           "WHERE run_a = ? AND run_b = ? AND policy_id = ? AND flipped",
                           [BASE, NO_STALL, Policy().id]).fetchall()
    assert {name: flip for name, flip, _, _ in rows} == expected_flips(BASE, NO_STALL) == {
        "qa__moon_landing": "fixed", "restaurant__waitlist_join_then_drop": "fixed"}
    assert all(stalled_a and not stalled_b for _, _, stalled_a, stalled_b in rows)


def test_compare_command_reports_deltas_flips_and_mcnemar(ingested):
    wh, _ = ingested
    result = runner.invoke(app, ["compare", BASE, NO_STALL, "--warehouse", str(wh.tables.root), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert sorted(report["fixed"]) == ["qa__moon_landing", "restaurant__waitlist_join_then_drop"]
    assert report["broken"] == [] and report["paired"] == 14
    assert report["mcnemar"]["p_value"] == pytest.approx(0.5)
    overall = next(d for d in report["domains"] if d["domain"] == "(all)")
    assert (overall["passed_a"], overall["total_a"], overall["passed_b"], overall["total_b"]) == (2, 14, 4, 14)
    assert overall["delta"] == pytest.approx(2 / 14)
    assert overall["delta_ci_low"] < overall["delta"] < overall["delta_ci_high"]

    table = runner.invoke(app, ["compare", BASE, NO_STALL, "--warehouse", str(wh.tables.root)])
    assert "exact McNemar on 14 paired scenarios: 0 broken vs 2 fixed, p = 0.5" in table.stdout


def test_history_lists_runs_in_session_order_with_intervals(ingested):
    wh, _ = ingested
    result = runner.invoke(app, ["history", "--domain", "tau2_retail", "-w", str(wh.tables.root), "-f", "json"])
    rows = json.loads(result.stdout)
    assert [r["run_id"] for r in rows] == sorted(r["run_id"] for r in rows)  # eval_<timestamp> names
    for r in rows:
        assert r["success_ci_low"] <= r["success_rate"] <= r["success_ci_high"]
