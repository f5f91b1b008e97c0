"""Judge stability (rejudge --repeat K): the same judge asked K times, the k-th with seed S + k, each
ask stored and cached apart; the majority of the asks a judge of its own (NAME@majority); how often
the asks disagree (the judge_stability view, judges --stability). Against a scripted judge whose
answer depends on the seed, so that every number below is worked out by hand."""

from __future__ import annotations

import json

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from tests.conftest import REPO
from tests.judge_server import JudgeServer, Reply

runner = CliRunner()
# Each case asks a scripted judge over HTTP five to fourteen times per input: with the slow tests.
pytestmark = pytest.mark.slow


def one(values) -> float:
    """The one value every row has."""
    distinct = {round(v, 9) for v in values}
    assert len(distinct) == 1, distinct
    return distinct.pop()


def by_seed(payload: dict, _: int) -> Reply:
    """An odd seed passes (0.9), an even one fails (0.2); NL assertion 1 passes for seeds up to 3 and
    no other assertion gets a verdict (upstream counts those failed)."""
    seed = payload["seed"]
    return Reply(content=json.dumps({"score": 0.9 if seed % 2 else 0.2, "reason": f"seed {seed}",
                                     "nl_assertion_verdicts": [{"index": 1, "passed": seed <= 3, "reason": "r"}]}))


@pytest.fixture(scope="module")
def repeated(tmp_path_factory):
    wh = scorelake.open(tmp_path_factory.mktemp("stability") / "wh")
    wh.ingest(REPO / "data" / "runs", prefect=False)
    with JudgeServer(by_seed) as server:
        five = wh.rejudge("steady", url=server.url, repeat=5, prefect=False)
        four = wh.rejudge("even", url=server.url, repeat=4, seed=10, prefect=False)
        again = wh.rejudge("steady", url=server.url, repeat=5, prefect=False)
        seeds = sorted({r["payload"]["seed"] for r in server.requests})
    return wh, five, four, again, seeds


def test_the_kth_ask_sends_seed_s_plus_k_and_a_second_run_asks_nothing(repeated):
    wh, five, four, again, seeds = repeated
    assert seeds == [1, 2, 3, 4, 5, 11, 12, 13, 14]
    inputs = wh.sql("SELECT count(*) AS n FROM stg_judge_inputs WHERE askable")["n"][0]
    assert five.asks == 5 and five.asked == 5 * inputs and four.asked == 4 * inputs
    assert again.asked == 0 and again.judged_already == 5 * inputs
    stored = wh.judges().filter(pl.col("judge").str.starts_with("steady"))["judge"].to_list()
    assert stored == [f"steady#{k}" for k in range(1, 6)] + ["steady@majority"]


def test_flip_rate_majority_and_settling_worked_out_by_hand(repeated):
    wh = repeated[0]
    rows = wh.sql("SELECT * FROM judge_stability ORDER BY judge, run_id, scenario_name")
    steady, even = rows.filter(pl.col("judge") == "steady"), rows.filter(pl.col("judge") == "even")
    # seeds 1..5: pass, fail, pass, fail, pass -> 3 of 5; the running majority flips until the 5th ask
    assert set(steady["asks"]) == {5} and set(steady["passes"]) == {3}
    assert one(steady["flip_rate"]) == pytest.approx(0.4) and steady["majority_passed"].all()
    assert one(steady["score_median"]) == pytest.approx(0.9) and one(steady["score_spread"]) == pytest.approx(0.7)
    assert set(steady["settled_after"]) == {5}
    # seeds 11..14: pass, fail, pass, fail -> 2 of 4 is no majority
    assert set(even["passes"]) == {2} and one(even["flip_rate"]) == pytest.approx(0.5)
    assert not even["majority_passed"].any() and set(even["settled_after"]) == {4}


def test_the_majority_is_a_judge_rescore_and_compare_judges_take(repeated):
    wh = repeated[0]
    majority = wh.sql("SELECT score, nl_passed, nl_total, source FROM stg_judgements WHERE judge = 'steady@majority'")
    assert one(majority["score"]) == pytest.approx(0.9) and set(majority["source"]) == {"majority"}
    # assertion 1 passed by 3 of 5 asks (seeds 1-3): the majority passes it; the rest no ask passed
    assert set(majority.filter(pl.col("nl_total") > 0)["nl_passed"]) == {1}
    even = wh.sql("SELECT DISTINCT score FROM stg_judgements WHERE judge = 'even@majority'")
    assert even["score"].to_list() == [pytest.approx(0.2)]  # the lower middle of 0.9, 0.9, 0.2, 0.2
    result = wh.rescore("by-majority", judge="steady@majority", prefect=False)
    assert result.judge == "steady@majority" and result.scenarios > 0
    scored = wh.scenarios(policy="by-majority").filter(pl.col("judge_score").is_not_null())
    assert scored["judge_passed"].all()
    c = wh.compare_judges("steady#2", "steady@majority")
    assert c.agreement.filter(pl.col("domain") == "(all)")["agreement"][0] == 0.0  # every ask 2 failed


def test_judges_show_each_repeated_judges_stability(repeated):
    wh = repeated[0]
    listed = wh.judges().filter(pl.col("judge") == "steady@majority").row(0, named=True)
    assert listed["asks"] == 5 and listed["flip_rate"] == pytest.approx(0.4) and listed["flipping_share"] == 1.0
    per_domain = wh.judge_stability(by="domain").filter(pl.col("domain") == "(all)")
    assert dict(zip(per_domain["judge"], per_domain["flip_rate"])) == {"even": pytest.approx(0.5),
                                                                      "steady": pytest.approx(0.4)}
    shown = runner.invoke(app, ["judges", "--stability", "-w", wh.location])
    assert shown.exit_code == 0 and "40.0%" in shown.stdout and "50.0%" in shown.stdout
    listed = runner.invoke(app, ["judges", "-w", wh.location])
    assert listed.exit_code == 0 and "flip rate" in listed.stdout


def test_a_majority_is_not_asked_and_a_repeated_name_is_plain(repeated):
    wh = repeated[0]
    with pytest.raises(scorelake.InvalidArgument, match="majority"):
        wh.rejudge("steady@majority", url="http://127.0.0.1:9/v1/chat/completions", prefect=False)
    with pytest.raises(scorelake.InvalidArgument, match="kept for the asks"):
        wh.rejudge("odd#name", url="http://127.0.0.1:9/v1/chat/completions", repeat=3, prefect=False)
    with pytest.raises(scorelake.InvalidArgument, match="--repeat"):
        wh.rejudge("steady", repeat=0, prefect=False)


def test_only_errors_asks_each_asks_own_failed_judgements_again(tmp_path):
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(REPO / "data" / "runs", prefect=False)

    def second_ask_down_for_some(payload: dict, n: int) -> Reply:
        failing = payload["seed"] == 2 and len(payload["messages"][-1]["content"]) % 2 == 0
        return Reply(status=500) if failing else by_seed(payload, n)

    with JudgeServer(second_ask_down_for_some) as server:
        first = wh.rejudge("flaky", url=server.url, repeat=3, retries=0, prefect=False)
        url = server.url
    assert first.errors > 0 and first.errors < first.asked
    with JudgeServer(by_seed, port=int(url.split(":")[2].split("/")[0])) as server:  # the judge's URL is its own
        again = wh.rejudge("flaky", url=server.url, repeat=3, only_errors=True, prefect=False)
        asked_seeds = {r["payload"]["seed"] for r in server.requests}
    assert again.asked == first.errors and asked_seeds == {2} and again.errors == 0
    majority = wh.sql("SELECT count(*) FILTER (WHERE errored) AS errored, count(*) AS n FROM stg_judgements "
                      "WHERE judge = 'flaky@majority'").row(0, named=True)
    assert majority["errored"] == 0 and majority["n"] > 0


def test_a_majority_a_policy_scores_with_keeps_its_judgements_and_the_asks_names_are_kept(repeated):
    """More asks than the majority a policy scores with was made of would change its judgements
    under the policy's scores: refused, naming the policy, nothing asked; a name with # or @ is
    refused with --repeat 1 too (a hand-made NAME#9 would be folded into NAME's majority)."""
    wh = repeated[0]
    if "by-majority" not in wh.policies()["name"].to_list():  # the policy an earlier case makes, or this one
        wh.rescore("by-majority", judge="steady@majority", prefect=False)
    before = wh.sql("SELECT count(*) AS n FROM stg_judgements")["n"][0]
    with pytest.raises(scorelake.InvalidArgument, match="majority of 5 asks and policy .* scores with it"):
        wh.rejudge("steady", url="http://127.0.0.1:9/v1/chat/completions", repeat=7, prefect=False)
    assert wh.sql("SELECT count(*) AS n FROM stg_judgements")["n"][0] == before
    for name in ("steady#9", "b@x"):
        with pytest.raises(scorelake.InvalidArgument, match="kept for the asks"):
            wh.rejudge(name, url="http://127.0.0.1:9/v1/chat/completions", prefect=False)
