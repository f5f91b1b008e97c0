"""The composite's edges, on tiny in-memory frames: no Prefect, no disk."""

import polars as pl
import pytest

from scorelake.transforms.columns import SCENARIO_COLUMNS
from scorelake.transforms.scoring import Policy, score_and_count

BASE = {c.name: None for c in SCENARIO_COLUMNS} | {
    "run_id": "r", "generation": "g", "scenario_name": "d__s", "domain": "d", "position": 0,
    "success_signals": ["clean_exit"], "disallow_extra_items": False,
    "rec_judge_enabled": True, "rec_judge_threshold": 0.9, "rec_strict_match": False, "rec_min_agent_turns": 3,
    "stop_reason": "[EXIT]", "agent_n_calls": 10, "has_reference": False, "has_prediction": False,
    "has_db_state_assertions": False, "judge_ran": False,
}
SCHEMA = {c.name: c.dtype for c in SCENARIO_COLUMNS}


def scored(policy=Policy(), **fields) -> dict:
    frame = pl.DataFrame([BASE | fields], schema=SCHEMA)
    return score_and_count(frame.lazy(), policy)["scores"].row(0, named=True)


def test_clean_exit_alone():
    assert scored()["is_successful"] is True
    timed_out = scored(stop_reason="[TIMEOUT]")
    assert timed_out["is_successful"] is False and timed_out["is_task_successful"] is True
    assert timed_out["failed"] == ["clean_exit"]


def test_na_when_no_whitelisted_signal_applies():
    row = scored(success_signals=["judge_passed"], judge_ran=False)
    assert row["is_successful"] is None and row["is_task_successful"] is None
    assert row["not_applicable"] == ["judge_passed"]
    assert row["excluded"] == ["clean_exit"]


def test_stalled_is_false_even_when_everything_passed():
    row = scored(agent_n_calls=2)
    assert row["stalled"] and row["is_successful"] is False and row["is_task_successful"] is False
    assert row["passed"] == ["clean_exit"]  # the breakdown keeps the real signals


def test_stalled_overrides_na():
    row = scored(success_signals=["judge_passed"], agent_n_calls=0)
    assert row["is_successful"] is False


def test_stall_threshold_zero_disables_and_fallback_count():
    assert not scored(Policy(min_agent_turns=0), agent_n_calls=0)["stalled"]
    assert scored(agent_n_calls=None, agent_context_messages=2)["stalled"]
    assert not scored(agent_n_calls=None, agent_context_messages=None)["stalled"]  # unknown: no check


def test_excluded_lists_computed_but_unlisted_signals():
    row = scored(judge_ran=True, judge_score=0.95, expected_db_hash="x", actual_db_hash="y")
    assert row["excluded"] == ["db_state_match", "judge_passed"]
    assert row["is_successful"] is True


@pytest.mark.parametrize("passed,total,ok", [(3, 3, True), (2, 3, False), (19, 20, False)])
def test_float_signals_pass_only_at_exactly_one(passed, total, ok):
    row = scored(success_signals=["db_state_assertion", "clean_exit"], has_db_state_assertions=True,
                 dbsa_passed=passed, dbsa_total=total)
    assert row["is_successful"] is ok
    nl = scored(success_signals=["nl_assertion", "clean_exit"], judge_ran=True, judge_score=1.0,
                nl_passed=passed, nl_total=total)
    assert nl["is_successful"] is ok


def test_judge_threshold_is_inclusive_and_policy_can_move_it():
    fields = dict(success_signals=["judge_passed"], judge_ran=True, judge_score=0.9)
    assert scored(**fields)["judge_passed"] is True
    assert scored(Policy(judge_threshold=0.95), **fields)["judge_passed"] is False


def test_judge_disabled_makes_judge_signals_not_applicable():
    row = scored(Policy(judge_enabled=False), success_signals=["nl_assertion", "judge_passed", "clean_exit"],
                 judge_ran=True, judge_score=0.1, nl_passed=0, nl_total=2)
    assert row["judge_score"] is None and row["nl_assertion_pass_rate"] is None
    assert row["not_applicable"] == ["nl_assertion", "judge_passed"]
    assert row["is_successful"] is True


def test_missing_prediction_is_false_and_missing_reference_is_na():
    listed = ["is_action_match", "clean_exit"]
    assert scored(success_signals=listed, has_reference=True, has_prediction=False)["is_action_match"] is False
    assert scored(success_signals=listed, has_reference=False)["is_action_match"] is None


def test_strict_match_uses_the_stored_item_counts():
    fields = dict(success_signals=["is_action_match"], has_reference=True, has_prediction=True,
                  action_match_lenient=True, action_reference_items=1, action_prediction_items=2)
    assert scored(**fields)["is_action_match"] is True
    assert scored(Policy(strict_match=True), **fields)["is_action_match"] is False
    assert scored(disallow_extra_items=True, **fields)["is_action_match"] is False


def test_missing_actual_hash_is_a_failure_not_na():
    listed = ["db_state_match", "clean_exit"]
    assert scored(success_signals=listed, expected_db_hash="abc", actual_db_hash=None)["db_state_match"] is False
    assert scored(success_signals=listed, expected_db_hash=None)["db_state_match"] is None


def test_task_success_ignores_only_clean_exit():
    row = scored(success_signals=["db_state_match", "clean_exit"], expected_db_hash="a", actual_db_hash="b",
                 stop_reason="[TIMEOUT]")
    assert row["failed"] == ["db_state_match", "clean_exit"]
    assert row["is_task_successful"] is False


def test_policy_whitelist_override_by_domain():
    policy = Policy(name="w", whitelists={"d": ("judge_passed",)})
    row = scored(policy, judge_ran=True, judge_score=0.5)
    assert row["is_successful"] is False and row["excluded"] == ["clean_exit"]
    assert scored(policy, domain="other", judge_ran=True, judge_score=0.5)["is_successful"] is True


def test_policy_id_is_stable_and_ignores_the_name():
    assert Policy(name="a", judge_threshold=0.8).id == Policy(name="b", judge_threshold=0.8).id
    assert Policy(judge_threshold=0.8).id != Policy(judge_threshold=0.85).id


def test_rate_counts_follow_the_summary_rules():
    """Stalled scenarios fail the composite and leave every per-signal count; the assertion
    signals count items, only where their rate exists; tokens add up with missing as zero."""
    rows = [
        BASE | {"scenario_name": "d__ok", "judge_ran": True, "judge_score": 0.95, "dbsa_passed": 1, "dbsa_total": 2,
                "has_db_state_assertions": True, "agent_prompt_tokens": 10, "agent_completion_tokens": 5},
        BASE | {"scenario_name": "d__stalled", "agent_n_calls": 1, "judge_ran": True, "judge_score": 0.2,
                "dbsa_passed": 3, "dbsa_total": 3, "has_db_state_assertions": True, "agent_prompt_tokens": 7},
        BASE | {"scenario_name": "d__timeout", "stop_reason": "[TIMEOUT]", "dbsa_passed": 0, "dbsa_total": 0},
        BASE | {"scenario_name": "e__other", "domain": "e", "success_signals": ["judge_passed"]},
    ]
    scenarios = pl.DataFrame(rows, schema=SCHEMA).lazy()
    counts = score_and_count(scenarios, Policy())["rate_counts"].sort("domain").to_dicts()
    d, e = ({k: v for k, v in row.items() if k not in ("run_id", "generation", "policy_id")} for row in counts)
    assert d == {
        "domain": "d", "scenarios": 3, "stalled": 1, "success_passed": 1, "success_total": 3,
        "task_passed": 2, "task_total": 3, "action_match_passed": 0, "action_match_total": 0,
        "db_state_match_passed": 0, "db_state_match_total": 0,
        "db_state_assertion_passed": 1, "db_state_assertion_total": 2,  # the stalled 3/3 and the 0/0 are out
        "nl_assertion_passed": 0, "nl_assertion_total": 0, "judge_passed_passed": 1, "judge_passed_total": 1,
        "clean_exit_passed": 1, "clean_exit_total": 2, "communicate_passed": 0, "communicate_total": 0,
        "judge_score_sum": 0.95, "judge_scored": 1,
        "agent_tokens": 22, "user_tokens": 0, "gating_signals": sorted(BASE["success_signals"]),
    }
    assert e["gating_signals"] == ["judge_passed"]  # the signals that gate the domain: its whitelist
    assert (e["scenarios"], e["success_passed"], e["success_total"], e["clean_exit_total"]) == (1, 0, 0, 1)
