"""scorelake against the upstream runner's own output, scenario by scenario and byte for byte.

Every session of ../shared/conformance/runs is ingested once by the real Prefect ingest flow;
policy-variant sessions are reproduced by re-scoring the baseline session from the stored tables alone.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from scorelake.cli import app
from scorelake.transforms.scoring import Policy
from scorelake.transforms.sources.nemo import RunArgsFile
from tests.conftest import BASELINE, CONFORMANCE, conformance_sessions, summary_rates, upstream_metrics

SESSIONS = conformance_sessions()
SCENARIOS = [(s, m["scenario_name"]) for s in SESSIONS for m in upstream_metrics(s)]
MANIFEST = json.loads((CONFORMANCE / "MANIFEST.json").read_text()) if CONFORMANCE.is_dir() else {"sessions": []}
VARIANTS = [s["session"] for s in MANIFEST["sessions"] if s["group"] == "V1" and s["session"] != BASELINE]
runner = CliRunner()


def upstream_verdicts(m: dict) -> dict:
    """What upstream wrote, in scorelake's terms (absent key or "N/A" -> None)."""
    na = lambda v: None if v == "N/A" else v  # noqa: E731
    return {
        "is_successful": na(m["is_successful"]),
        "is_task_successful": m.get("is_task_successful"),
        "is_action_match": na(m["is_action_match"]),
        "db_state_match": m.get("db_state_match"),
        "db_state_assertion_pass_rate": m.get("db_state_assertion_pass_rate"),
        "nl_assertion_pass_rate": m.get("nl_assertion_pass_rate"),
        "judge_score": m.get("judge_score"),
        "judge_passed": m.get("judge_passed"),
        "clean_exit": m["clean_exit"],
        "stalled": bool(m.get("insufficient_agent_turns")),
        **m["success_breakdown"],
    }


def scored_rows(wh, run_id: str, policy: Policy) -> dict[str, dict]:
    with wh.views.connect() as con:
        rows = wh.views.query(con, "summary_scenarios", run_id=run_id, policy_id=policy.id).to_dicts()
    return {r["scenario_name"]: r for r in rows}


@pytest.fixture(scope="module")
def recorded(ingested):
    wh, _ = ingested
    return {s: scored_rows(wh, s, Policy()) for s in SESSIONS}


def test_every_session_ingested_without_quarantine(ingested):
    _, result = ingested
    assert [r.run_id for r in result.ingested] == SESSIONS
    assert all(r.quarantined == 0 for r in result.ingested)


def assert_matches_upstream(got: dict, session: str, scenario: str) -> None:
    expected = upstream_verdicts({m["scenario_name"]: m for m in upstream_metrics(session)}[scenario])
    assert {k: got[k] for k in expected} == expected


@pytest.mark.parametrize("session,scenario", SCENARIOS, ids=[f"{s}/{n}" for s, n in SCENARIOS])
def test_scenario_verdicts_match_upstream(recorded, session, scenario):
    assert_matches_upstream(recorded[session][scenario], session, scenario)


@pytest.mark.parametrize("session", SESSIONS)
def test_scenario_order_is_all_metrics_order(recorded, session):
    assert list(recorded[session]) == [m["scenario_name"] for m in upstream_metrics(session)]


@pytest.mark.parametrize("session", SESSIONS)
def test_summary_is_byte_identical(ingested, session):
    wh, _ = ingested
    result = runner.invoke(app, ["summary", session, "--warehouse", str(wh.tables.root)])
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == (CONFORMANCE / session / "all_summary.txt").read_bytes()


def variant_policy(session: str) -> Policy:
    """The variant's recorded flags as a policy, read from its own run_args.json."""
    args = RunArgsFile.model_validate_json((CONFORMANCE / session / "run_args.json").read_bytes())
    flags = args.invocations[-1].parsed_args
    return Policy(name=f"as-{session}", judge_threshold=flags.judge_threshold,
                  min_agent_turns=flags.min_agent_turns, strict_match=flags.strict_match,
                  judge_enabled=flags.judge_enabled)


@pytest.fixture(scope="module")
def variants(ingested):
    """Each variant's flags applied to the baseline session by `scorelake rescore` (a Prefect flow)."""
    wh, _ = ingested
    for session in VARIANTS:
        p = variant_policy(session)
        args = ["rescore", "--policy", p.name, "--judge-threshold", str(p.judge_threshold),
                "--min-agent-turns", str(p.min_agent_turns),
                "--strict-match" if p.strict_match else "--lenient-match",
                "--judge-enabled" if p.judge_enabled else "--no-judge", "--run", BASELINE, "--warehouse", str(wh.tables.root)]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    return {s: scored_rows(wh, BASELINE, variant_policy(s)) for s in VARIANTS}


VARIANT_SCENARIOS = [(v, m["scenario_name"]) for v in VARIANTS for m in upstream_metrics(v)]


@pytest.mark.parametrize("variant,scenario", VARIANT_SCENARIOS, ids=[f"{v}/{n}" for v, n in VARIANT_SCENARIOS])
def test_rescored_baseline_matches_variant_scenario(variants, variant, scenario):
    assert_matches_upstream(variants[variant][scenario], variant, scenario)


@pytest.mark.parametrize("variant", VARIANTS)
def test_rescored_baseline_summary_equals_variant_summary(ingested, variants, variant):
    wh, _ = ingested
    result = runner.invoke(app, ["summary", BASELINE, "--policy", f"as-{variant}", "--warehouse", str(wh.tables.root)])
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == (CONFORMANCE / variant / "all_summary.txt").read_bytes()


def assert_rates_match_summary(wh, run_id: str, policy_id: str, summary_of: str) -> None:
    """rate_rollup, added up from rate_counts, against every figure of upstream's all_summary.txt."""
    with wh.views.connect() as con:
        rollup = {r["domain"]: r for r in con.sql("SELECT * FROM rate_rollup WHERE run_id = $run AND policy_id = "
                                                  "$policy", params={"run": run_id, "policy": policy_id}).pl().to_dicts()}
    expected = summary_rates(summary_of)
    assert {(d, rate): (rollup[d][f"{rate}_passed"], rollup[d][f"{rate}_total"]) for d, rate in expected} == expected
    text = (CONFORMANCE / summary_of / "all_summary.txt").read_text()
    if judge := re.search(r"Judge score mean: +([\d.]+) \(across (\d+) scenarios", text):
        assert (f"{rollup['(all)']['judge_score_mean']:.3f}", rollup["(all)"]["judge_scored"]) == (
            judge[1], int(judge[2]))
    total = sum(rollup["(all)"][f"{side}_tokens"] for side in ("agent", "user"))
    assert f"Run total: {total:,} tokens" in text


@pytest.mark.parametrize("session", SESSIONS)
def test_rate_views_equal_the_summary_rates(ingested, session):
    assert_rates_match_summary(ingested[0], session, Policy().id, session)


@pytest.mark.parametrize("variant", VARIANTS)
def test_rescored_rate_views_equal_the_variant_summary_rates(ingested, variants, variant):
    assert_rates_match_summary(ingested[0], BASELINE, variant_policy(variant).id, variant)
