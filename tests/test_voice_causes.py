"""Why a call failed, against causes read by hand: 30 failed scenarios of the conformance sessions
(the 12 of the baseline, the 18 of eval_20260902_091500), each labelled by reading its
metrics.json, judge_result.json, conversation_log.txt, DB predicates and LLM contexts, before the
tool's causes were compared with them. The manual (docs/guide/voice.md) reports the agreement."""

from __future__ import annotations

import polars as pl
import pytest

import scorelake
from scorelake.transforms.columns import FAILURE_CAUSES

BASE, MIXED = "eval_20260904_080000", "eval_20260902_091500"
TELECOM_MMS = ("tau2_telecom__mms_issue__airplane_mode_on__bad_network_preference__bad_wifi_calling__break_apn_mms_"
               "setting__break_app_storage_permission__data_mode_off__data_usage_exceeded__unseat_sim_card__user_"
               "abroad_roaming_disabled_on__easy")
# (session, scenario): (the cause a voice engineer gives, what the files show)
LABELS = {
    (BASE, "customer_service__account_access"): ("dead_air", "the agent greets; nobody speaks for 114 s; timeout"),
    (BASE, "customer_service__order_delay"): ("logic", "a whole conversation; the actions do not match"),
    (BASE, "eva_airline__6_3_4"): ("logic", "a normal call, the DB left wrong; the judge erred on an excluded signal"),
    (BASE, "qa__moon_landing"): ("stall", "the greeting, then the call exits at 9 s"),
    (BASE, "qa__speed_of_light"): ("logic", "a working judge scores the answer 0.85, under 0.9"),
    (BASE, "qa__telephone_inventor"): ("judge", "the judge answered 500; its verdict is all that failed"),
    (BASE, "restaurant__burger_spicy_feast"): ("turn_taking", "one sentence logged as 179 s, to the timeout: the "
                                                              "end of the user's turn never detected"),
    (BASE, "restaurant__waitlist_join_then_drop"): ("stall", "one agent turn, then the call exits"),
    (BASE, "simple_qa_1"): ("logic", "a working judge scores the answer 0.0"),
    (BASE, "tau2_airline__28"): ("dead_air", "845 s of silence after the last word; timeout"),
    (BASE, "tau2_retail__21"): ("logic", "the agent says goodbye at once; DB and NL assertion fail"),
    (BASE, "tau2_telecom__service_issue__airplane_mode_on__break_apn_settings__lock_sim_card_pin"): (
        "dead_air", "866 s of silence to the timeout; the predicate's KeyError and the judge's error come on top"),
    (MIXED, "customer_service__order_delay"): ("logic", "a whole conversation; the actions do not match"),
    (MIXED, "eva_airline__2_2_2"): ("stall", "the greeting, then the call exits at 9 s"),
    (MIXED, "eva_airline__7_2_2"): ("dead_air", "the user asks; the agent never speaks; 889 s to the timeout"),
    (MIXED, "qa__weather_new_york"): ("judge", "the judge's reply could not be parsed; its verdict is all that failed"),
    (MIXED, "qa__weather_san_francisco"): ("dead_air", "38 s of silence to the timeout; the judge's error on top"),
    (MIXED, "restaurant__burger_classic"): ("dead_air", "83 s of silence after the agent's last turn; timeout"),
    (MIXED, "restaurant__pizza_party_order"): ("logic", "a whole conversation; the order does not match"),
    (MIXED, "restaurant__waitlist_join_then_drop"): ("dead_air", "84 s of silence to the timeout"),
    (MIXED, "simple_qa_3"): ("turn_taking", "'Yes, that's right.' logged as 40 s, to the timeout: the end of the "
                                            "user's turn never detected"),
    (MIXED, "tau2_airline__20"): ("logic", "a whole conversation; the DB left wrong"),
    (MIXED, "tau2_airline__32"): ("logic", "a whole conversation; the DB left wrong"),
    (MIXED, "tau2_airline__36"): ("logic", "the DB left wrong; the judge erred on an excluded signal"),
    (MIXED, "tau2_retail__2"): ("logic", "the agent says goodbye at once; the DB left wrong"),
    (MIXED, "tau2_retail__3"): ("logic", "a short call; the DB left wrong"),
    (MIXED, "tau2_retail__89"): ("logic", "a whole conversation; the DB left wrong"),
    (MIXED, "tau2_retail__93"): ("logic", "the DB left wrong; the judge erred on an excluded signal"),
    (MIXED, TELECOM_MMS): ("logic", "a DB predicate evaluated and failed (no error)"),
    (MIXED, "tau2_telecom__mobile_data_issue__data_saver_mode_on__data_usage_exceeded__easy"): (
        "harness", "nothing ran: no turn, no LLM call on either side, no DB pulled back; timeout"),
}


@pytest.fixture(scope="module")
def causes(ingested) -> dict[tuple[str, str], dict]:
    store, _ = ingested
    rows = scorelake.open(store.location).sql(
        "SELECT * FROM scenario_failure_causes WHERE policy_name = 'recorded'").to_dicts()
    return {(r["run_id"], r["scenario_name"]): r for r in rows}


def test_the_primary_cause_of_each_hand_labelled_failure_is_the_label(causes):
    assert len(LABELS) == 30
    wrong = {key: (label, causes[key]["failure_causes"]) for key, (label, _) in LABELS.items()
             if causes[key]["failure_cause"] != label}
    assert not wrong


def test_every_cause_that_holds_is_kept_with_its_evidence_the_primary_first(causes):
    order = [c.name for c in FAILURE_CAUSES]
    both = causes[(MIXED, "eva_airline__7_2_2")]  # timed out in silence and stalled: both hold
    assert both["failure_causes"] == ["dead_air", "stall"] and both["failure_cause"] == "dead_air"
    assert both["causes_evidence"][0] == both["evidence"] == "timed out after 888.6 s of dead air"
    assert both["causes_evidence"][1] == "0 agent turns, fewer than 3"  # the user spoke, the agent never did
    for row in causes.values():
        assert row["failure_causes"] == sorted(row["failure_causes"], key=order.index)
        assert len(row["causes_evidence"]) == len(row["failure_causes"]) and all(row["causes_evidence"])
        assert "logic" not in row["failure_causes"] or row["failure_causes"] == ["logic"]


def test_the_judge_cause_is_judge_errors_judge_only(causes, ingested):
    """`voice` and `rates`' judge notes agree: a failure is the judge's exactly where judge_errors
    marks it judge_only, under every policy."""
    store, _ = ingested
    wh = scorelake.open(store.location)
    judged = wh.sql("SELECT run_id, policy_id, scenario_name FROM scenario_failure_causes "
                    "WHERE failure_cause = 'judge'").sort(pl.all())
    only = wh.sql("SELECT run_id, policy_id, scenario_name FROM judge_errors WHERE judge_only").sort(pl.all())
    assert judged.rows() == only.rows() and judged.height > 0
