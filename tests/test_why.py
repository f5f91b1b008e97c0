"""Why it failed, finished: ACTION_MATCH item by item against the prediction, one timeline of turns
and tool calls, the words that needed explaining, judge outages marked, search, the whitelist
marked in `rates`, compare-judges' flips as a table."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from scorelake.present import PlacedCall, explain, explain_text
from scorelake.transforms.results import Turn
from scorelake.transforms.scoring import Difference, TextFlags, differences, item_comparisons
from tests.conftest import BASELINE

runner = CliRunner()
pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


@pytest.fixture(scope="module")
def wh(ingested) -> scorelake.Warehouse:
    return scorelake.open(ingested[0].location)


def text_of(wh: scorelake.Warehouse, run: str, scenario: str) -> str:
    """``show``'s text of a scenario, its lines joined (a phrase may wrap)."""
    return " ".join(explain_text(explain(wh.evidence(run, scenario)), 100).split())


# ---- ACTION_MATCH item by item ----------------------------------------------------------------------

def test_differences_follow_the_comparators_rules():
    flags = TextFlags()
    ref = {"a": 1, "b": {"c": "x", "d": [1, 2]}, "e": "kept"}
    pred = {"a": 1.0000001, "b": {"c": "y", "d": [2, 3]}, "extra": True}
    found = differences(ref, pred, flags)
    assert [(d.path, d.kind) for d in found] == [("b.c", "other value"), ("b.d[0]", "other value"),
                                                  ("e", "missing key")]
    assert found[0] == Difference("b.c", "other value", "x", "y")
    assert differences({"q": "Hello"}, {"q": "hello!"}, TextFlags(True, True)) == []  # the flags apply
    assert differences([{"k": 1}], [], flags) == [Difference("[0]", "no element left", {"k": 1})]


def test_item_comparisons_pair_each_reference_item_with_its_match_or_the_closest():
    items, extra = item_comparisons([{"n": 1, "v": "a"}, {"n": 2, "v": "b"}],
                                    [{"n": 2, "v": "b"}, {"n": 1, "v": "z"}, {"n": 9}], TextFlags())
    assert [(i.ordinal, i.matched, i.prediction_ordinal) for i in items] == [(1, False, 2), (2, True, 1)]
    assert [(d.path, d.expected, d.actual) for d in items[0].differences] == [("v", "a", "z")]
    assert extra == [(3, {"n": 9})]  # the one neither matched nor shown as closest


def test_show_puts_the_prediction_beside_the_reference(wh):
    text = text_of(wh, BASELINE, "customer_service__order_delay")
    assert "ACTION_MATCH item by item" in text
    assert "the closest, prediction item 1, differs" in text
    assert re.search(r"resolution_details: missing; reference \"Informed customer", text)
    nested = text_of(wh, BASELINE, "customer_service__account_access")
    assert 'account.balance: expected "$0.00", got "$0.00 (updated)"' in nested


def test_the_viewer_shows_the_keys_that_differ(wh):
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    page = TestClient(make_app(wh)).get(f"/runs/{BASELINE}/scenarios/customer_service__order_delay").text
    table = page.split('class="action-keys"', 1)[1].split("</table>", 1)[0]
    assert re.search(r'<tr class="missing"><td><code>resolution_details</code>', table)


# ---- one timeline -----------------------------------------------------------------------------------

def test_a_tool_call_sits_after_the_turn_it_answers(wh):
    e = explain(wh.evidence(BASELINE, "tau2_retail__22"))
    kinds = [("turn", (m.text or "")[:30]) if isinstance(m, Turn) else ("call", m.call.name)
             if isinstance(m, PlacedCall) else ("checks", m.text[:30]) for m in e.timeline]
    first_call = kinds.index(("call", "modify_user_address"))
    assert kinds[first_call - 1][1].startswith("Hi. You want to change your u")  # the user's request
    assert kinds[first_call + 1][1].startswith("Thank you. I can see the deta")  # the agent's answer after it
    second = kinds.index(("call", "modify_pending_order_address"))
    assert kinds[second - 1][1].startswith("My name is on the account")
    assert kinds[-1][0] == "checks" and all(k == "checks" for k, _ in kinds[len(e.turns) + len(e.tool_calls):])
    text = explain_text(e, 100)
    assert "[agent calls modify_user_address] arguments:" in text and "returned:" in text


# ---- the words that needed explaining ---------------------------------------------------------------

def test_a_missing_hash_a_missing_verdict_and_a_failed_predicate_say_what_they_mean(wh):
    text = text_of(wh, BASELINE, "tau2_retail__21")
    assert "the run recorded no final database hash (the bot returned none), so DB_STATE_MATCH is False" in text
    assert "the judge's reply gave no verdict for assertion 1, so upstream counts it as failed" in text
    predicate = wh.sql("SELECT run_id, scenario_name FROM stg_verdicts WHERE kind = 'db_state_assertion' AND NOT passed "
                       "AND error IS NOT NULL AND arguments_json IS NOT NULL LIMIT 1").row(0)
    text = text_of(wh, *predicate)
    assert re.search(r"FAIL 1\. assert_\w+\(\{.*\}\) — expected .*, got .* — the predicate raised: ", text)


# ---- judge outages marked ---------------------------------------------------------------------------

def test_judge_outages_are_marked_on_the_run_and_counted_on_the_runs_page(wh):
    rows = wh.run_scenarios(BASELINE, limit=100)
    marked = set(rows.filter(rows["judge_error"])["scenario_name"])
    assert {"qa__telephone_inventor", "restaurant__pizza_veggie_combo"} <= marked
    headline = {h.run_id: h for h in wh.headlines()}[BASELINE]
    assert headline.judge_errors == len(marked) and headline.judge_only >= 1
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    client = TestClient(make_app(wh))
    runs = client.get("/").text
    assert f"{len(marked)} judge errors, " in runs and "2026-09-04 08:00" in runs  # and when it ran
    row = re.search(r"<tr class=\"passed\"><td><a [^>]*>restaurant__pizza_veggie_combo</a></td><td>(.*?)</td>",
                    client.get(f"/runs/{BASELINE}").text)[1]
    assert "judge error" in row  # passed, and its judge failed all the same


# ---- search -----------------------------------------------------------------------------------------

def test_search_finds_a_phrase_in_transcripts_judge_reasons_and_tool_calls(wh):
    found = wh.search("ORD-54321")
    assert found.height >= 9 and set(found["scenario_name"]) == {"customer_service__order_delay"}
    assert found["place"][0] == "transcript" and "ord-54321" in found["snippet"][0].lower()
    assert set(wh.search("500 Server Error", BASELINE)["scenario_name"]) >= {"qa__telephone_inventor"}
    by_arguments = wh.search('"#W9911714"', BASELINE)  # a tool call's arguments
    assert "tau2_retail__22" in set(by_arguments["scenario_name"])
    page = wh.run_scenarios(BASELINE, q="ord-54321")
    assert page["scenario_name"].to_list() == ["customer_service__order_delay"] and page["matching"][0] == 1
    with pytest.raises(scorelake.InvalidArgument):
        wh.search("x" * 501)
    with pytest.raises(scorelake.InvalidArgument):
        wh.search("  ")
    done = runner.invoke(app, ["show", "--grep", "ord-54321", "-w", wh.location, "--format", "json"])
    assert done.exit_code == 0 and {r["scenario_name"] for r in json.loads(done.stdout)} == {
        "customer_service__order_delay"}
    none = runner.invoke(app, ["show", BASELINE, "--grep", "no such phrase anywhere", "-w", wh.location])
    assert none.exit_code == 0 and "no scenario of" in none.stdout


def test_the_viewer_searches_one_run_and_every_run(wh):
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    client = TestClient(make_app(wh))
    page = client.get("/search?q=ORD-54321").text
    assert re.search(r'<p id="found">\d+ scenario\(s\) mention', page) and "customer_service__order_delay" in page
    run = client.get(f"/runs/{BASELINE}?q=ord-54321").text
    assert '<p id="matching">1 scenarios match' in run and 'value="ord-54321"' in run
    assert client.get(f"/runs/{BASELINE}?q={'x' * 501}").status_code == 400


# ---- rates marks the whitelist ----------------------------------------------------------------------

def test_rates_marks_the_signals_that_gate_each_domain(wh):
    done = runner.invoke(app, ["rates", "--run", BASELINE, "-w", wh.location])
    assert done.exit_code == 0 and "* gates success" in done.stdout
    qa = next(line for line in done.stdout.splitlines() if line.startswith("qa "))
    assert qa.count("*") == 2  # judge passed and clean exit: qa's whitelist; action match is not
    rows = wh.rates(run=BASELINE)
    assert sorted(rows.filter(rows["domain"] == "qa")["gating_signals"][0]) == ["clean_exit", "judge_passed"]


def test_show_gives_the_final_answer_always_and_the_judges_input_and_reply(wh):
    matched = wh.scenarios(run=BASELINE).filter(pl.col("is_action_match").fill_null(False))["scenario_name"][0]
    text = text_of(wh, BASELINE, matched)
    assert "the agent's final answer: " in text  # though ACTION_MATCH matched: it is what the judge graded
    e = explain(wh.evidence(BASELINE, matched))
    assert e.final_answer and e.judge_input is not None and e.judge_input.user_content
    assert "what the judge was asked" in text and "the judge's reply" in text
    from scorelake.present import explain_html

    page = explain_html(e)
    assert '<details class="judge-input">' in page and '<details class="judge-reply">' in page


def test_search_finds_the_text_of_an_nl_assertion(wh):
    label = wh.verdicts(run=BASELINE, kind="nl_assertion")["label"][0]
    phrase = " ".join(label.split()[:4])  # "Agent should tell the"
    found = wh.search(phrase, run=BASELINE)
    assert "NL assertion 1" in found.filter(pl.col("scenario_name") == "tau2_retail__21")["place"].to_list()
