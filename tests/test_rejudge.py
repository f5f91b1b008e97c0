"""Re-judging stored runs: upstream's judgement of a reply on every branch, the conformance corpus's
own judge results reproduced through a real HTTP judge, retries, the cache, the journal (kill -9),
rescoring under a judge, and comparing judges.

The judge is tests/judge_server.py: a scripted OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from scorelake.transforms.analysis import clopper_pearson, cohen_kappa
from scorelake.transforms.judging import MISSING_VERDICT, judgement
from tests.conftest import BASELINE, CONFORMANCE, REPO
from tests.judge_server import JudgeServer, Reply, completion, user_content

runner = CliRunner()
MIXED = "eval_20260902_091500"
PARSE_ERROR = "Error: Could not parse judgement JSON from LLM response: "


def judged(content, nl=None) -> dict:
    return judgement(completion(content), nl)


# ---- upstream's judgement of a reply, branch by branch -------------------------------------------

@pytest.mark.parametrize("content, score, reason", [
    ('{"score": 0.7, "reason": "r"}', 0.7, "r"),
    ('Here it is:\n```json\n{"score": 0.4, "reason": "x"}\n```\nthanks', 0.4, "x"),
    ('```\n{"score": 1, "reason": "y"}\n```', 1.0, "y"),
    ('The verdict is {"score": 0.9, "reason": "z"} overall.', 0.9, "z"),
    ('{"score": "0.8"}', 0.8, ""),  # a string score: float() of it; no reason: ""
    ('{"score": true, "reason": "t"}', 1.0, "t"),  # float(True)
    ('{"score": 0.5, "reason": 7}', 0.5, 7),  # the reason passes through, whatever its type
])
def test_replies_upstream_parses(content, score, reason):
    result = judged(content)
    assert result["score"] == score and isinstance(result["score"], float) and result["reason"] == reason


@pytest.mark.parametrize("content, reason", [
    # prose around an object with a nested one: no flat object carries the score
    ('Verdict: {"score": 0.9, "detail": {"a": 1}} done',
     PARSE_ERROR + 'Verdict: {"score": 0.9, "detail": {"a": 1}} done'),
    ("I cannot judge this.", PARSE_ERROR + "I cannot judge this."),
    ('{"score": "high", "reason": "r"}', "Error: could not convert string to float: 'high'"),
    ('[{"score": 1}]', "Error: list indices must be integers or slices, not str"),
    ('{"reason": "no score"}', "Error: 'score'"),
    ('"just a string"', "Error: string indices must be integers, not 'str'"),
    ("42", "Error: 'int' object is not subscriptable"),
    (None, "Error: the JSON object must be str, bytes or bytearray, not NoneType"),
])
def test_replies_upstream_turns_into_errors(content, reason):
    assert judged(content) == {"score": 0.0, "reason": reason}


def test_error_branches_that_depend_on_the_python_version_start_as_upstreams():
    assert judged('{"score": null}')["reason"].startswith("Error: float() argument must be")
    # a fenced block that is not JSON is an error (the flat-object fallback is not tried)
    assert judged('```json\n{"score": 0.5,}\n```\n{"score": 0.5}')["reason"].startswith(
        "Error: Expecting property name enclosed in double quotes")
    assert judgement(b"<html>bad gateway</html>", None) == {"score": 0.0, "reason": "Error: Expecting value: "
                                                                                      "line 1 column 1 (char 0)"}
    assert judgement(b'{"choices": []}', None)["reason"] == "Error: list index out of range"
    assert math.isnan(judged('{"score": NaN}')["score"])  # Python's json reads NaN; float() keeps it


def test_extra_keys_pass_through():
    result = judged('{"score": 0.9, "reason": "r", "confidence": 0.8, "deductions": ["a"]}')
    assert result == {"score": 0.9, "reason": "r", "confidence": 0.8, "deductions": ["a"]}


NL = ["A1", "A2", "A3"]


def verdicts(result: dict) -> list[tuple]:
    return [(v["index"], v["assertion"], v["passed"], v["reason"]) for v in result["nl_assertion_verdicts"]]


def test_nl_verdicts_are_normalised_as_upstream():
    given = [
        {"index": 1, "passed": True, "reason": "first"},
        {"index": 1, "passed": False, "reason": "second"},  # a duplicate index: the last one counts
        {"index": 0, "passed": True}, {"index": 4, "passed": True},  # out of range
        "x", 5, None, ["index", 2],  # not a dict
        {"index": "x", "passed": True},  # not a number
        {"index": "3", "passed": "true", "reason": "a string true"},  # "3" is int 3; "true" is not true
    ]
    result = judged(json.dumps({"score": 0.5, "reason": "r", "nl_assertion_verdicts": given}), NL)
    assert verdicts(result) == [(1, "A1", False, "second"), (2, "A2", False, MISSING_VERDICT),
                                (3, "A3", False, "a string true")]
    assert (result["nl_assertion_pass_count"], result["nl_assertion_total"], result["nl_assertion_pass_rate"]) == (0, 3, 0)

    given = [{"index": 2.9, "passed": True}, {"index": True, "passed": True, "reason": "r1"}, {"index": 3, "passed": 1}]
    result = judged(json.dumps({"score": 0.5, "nl_assertion_verdicts": given}), NL)
    assert verdicts(result) == [(1, "A1", True, "r1"), (2, "A2", True, ""), (3, "A3", False, "")]
    assert result["nl_assertion_pass_rate"] == 2 / 3


@pytest.mark.parametrize("given", [None, {"1": {"index": 1, "passed": True}}, "", []])
def test_nl_verdicts_missing_or_not_a_list_are_all_failed(given):
    result = judged(json.dumps({"score": 1.0, "nl_assertion_verdicts": given}), NL)
    assert [v[2:] for v in verdicts(result)] == [(False, MISSING_VERDICT)] * 3 and result["score"] == 1.0


@pytest.mark.parametrize("given, error", [(5, "'int' object is not iterable"),
                                          ([{"index": "Infinity"}], None)])
def test_nl_verdicts_that_raise_make_an_error_judgement(given, error):
    if error is None:  # int(inf) raises OverflowError, which upstream's index guard does not catch
        content = '{"score": 1.0, "nl_assertion_verdicts": [{"index": Infinity, "passed": true}]}'
        error = "cannot convert float infinity to integer"
    else:
        content = json.dumps({"score": 1.0, "nl_assertion_verdicts": given})
    result = judged(content, NL)
    assert result["score"] == 0.0 and result["reason"] == f"Error: {error}"
    assert verdicts(result) == [(i, a, False, f"Judge error: {error}") for i, a in enumerate(NL, 1)]
    assert result["nl_assertion_pass_rate"] == 0.0


def test_cohen_kappa_and_its_interval():
    kappa, low, high = cohen_kappa(20, 5, 10, 15)  # p_o 0.7, p_e 0.5
    assert kappa == pytest.approx(0.4)
    se = math.sqrt(0.7 * 0.3 / (50 * 0.25))
    assert (low, high) == (pytest.approx(0.4 - 1.959964 * se), pytest.approx(0.4 + 1.959964 * se))
    assert cohen_kappa(10, 0, 0, 0) == (None, None, None)  # both always pass: chance agreement is 1
    assert cohen_kappa(5, 0, 0, 5)[:1] == (1.0,)


def test_kappa_from_few_pairs_has_no_interval_and_where_the_normal_one_fails_the_exact_one():
    assert cohen_kappa(1, 0, 0, 0) == (None, None, None) and cohen_kappa(1, 0, 0, 1) == (1.0, None, None)
    assert cohen_kappa(4, 1, 1, 3)[1:] == (None, None)  # 9 pairs: too few for an interval
    # 12 pairs all agreeing, half passes (p_e 0.5): the large-sample interval was [1.00, 1.00]; the exact
    # one is Clopper-Pearson's on 12 of 12 agreeing (R: binom.test(12, 12)$conf.int = 0.7353515, 1)
    kappa, low, high = cohen_kappa(6, 0, 0, 6)
    assert kappa == 1.0 and high == 1.0 and low == pytest.approx((0.7353515 - 0.5) / 0.5, abs=1e-6)
    # R: binom.test(3, 10)$conf.int = 0.06673951, 0.65245285
    assert clopper_pearson(3, 10) == (pytest.approx(0.06673951, abs=1e-8), pytest.approx(0.65245285, abs=1e-8))
    assert clopper_pearson(0, 10) == (0.0, pytest.approx(0.3084971, abs=1e-7))


# ---- the conformance corpus's own judge results, through a real HTTP judge -------------------------

def recorded_results() -> dict[str, dict]:
    """Every conformance judge_result.json that holds its input, by the user content it was asked."""
    found = {}
    for path in CONFORMANCE.glob("eval_*/*/judge_result.json"):
        result = json.loads(path.read_text())
        if "judge_input" in result:
            found[result.pop("judge_input")["user_content"]] = result
    return found


def replay(payload: dict, _: int) -> Reply:
    """What the judge must have answered for upstream to store the result it stored."""
    result = RECORDED[user_content(payload)]
    if result["reason"].startswith(PARSE_ERROR):
        return Reply(content=result["reason"].removeprefix(PARSE_ERROR))
    if result["reason"].startswith("Error: "):  # the endpoint failed (500, refused, timed out)
        return Reply(status=500)
    said = {k: v for k, v in result.items() if not k.startswith("nl_assertion_")}
    if "nl_assertion_verdicts" in result:
        said["nl_assertion_verdicts"] = [{k: v[k] for k in ("index", "passed", "reason")}
                                         for v in result["nl_assertion_verdicts"]]
    return Reply(content=json.dumps(said))


RECORDED = recorded_results()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The whole conformance corpus in a warehouse of this module's own, re-judged by `replay`."""
    root = tmp_path_factory.mktemp("rejudge") / "wh"
    wh = scorelake.open(root)
    wh.ingest(CONFORMANCE, prefect=False)
    with JudgeServer(replay) as server:
        result = wh.rejudge("replay", url=server.url, concurrency=16, retries=0, prefect=False)
        requests = list(server.requests)
    return wh, result, requests


def test_rejudged_results_are_upstreams_own(corpus):
    wh, result, requests = corpus
    stored = wh.sql("SELECT count(*) AS n FROM stg_judge_inputs WHERE askable")["n"][0]
    # each request sent once: an input the policy variants share is asked once, its answer copied
    sent = {json.dumps(r["payload"], sort_keys=True) for r in requests}
    assert result.asked == len(requests) == len(sent) < stored and stored >= 140
    assert result.without_call == {"cache": stored - result.asked}
    rows = wh.sql("""SELECT g.*, i.user_content FROM stg_judgements g JOIN stg_judge_inputs i
                     USING (run_id, scenario_name, input_hash) WHERE judge = 'replay'""")
    assert rows.height == stored
    for row in rows.iter_rows(named=True):
        want = RECORDED[row["user_content"]]
        if want["reason"].startswith("Error: ") and not want["reason"].startswith(PARSE_ERROR):
            assert row["errored"] and row["score"] == 0.0 and row["reason"].startswith("Error: 500 Server Error")
            want_verdicts = [(v["index"], v["assertion"], False) for v in want.get("nl_assertion_verdicts", [])]
            got = json.loads(row["nl_verdicts_json"] or "[]")
            assert [(v["index"], v["assertion"], v["passed"]) for v in got] == want_verdicts
            assert all(v["reason"].startswith("Judge error: 500 Server Error") for v in got)
            continue
        assert (row["score"], row["reason"], row["errored"]) == (want["score"], want["reason"],
                                                                 want["reason"].startswith("Error: "))
        if "nl_assertion_verdicts" in want:
            assert json.loads(row["nl_verdicts_json"]) == want["nl_assertion_verdicts"]
            assert (row["nl_passed"], row["nl_total"]) == (want["nl_assertion_pass_count"], want["nl_assertion_total"])
        extra = {k: v for k, v in want.items() if k not in ("score", "reason") and not k.startswith("nl_assertion_")}
        assert json.loads(row["extra_json"]) == extra


def test_the_request_is_upstreams_payload(corpus):
    _, _, requests = corpus
    args = json.loads((CONFORMANCE / MIXED / "run_args.json").read_text())["invocations"][0]["parsed_args"]
    asked = next(r["payload"] for r in requests if r["payload"]["messages"][1]["content"] in RECORDED)
    assert list(asked) == ["model", "messages", "max_tokens", "temperature", "top_p", "seed", "chat_template_kwargs"]
    assert asked["model"] == args["judge_model"] and asked["max_tokens"] == args["judge_max_tokens"]
    assert (asked["temperature"], asked["top_p"], asked["seed"]) == (args["judge_temperature"], args["judge_top_p"],
                                                                     args["judge_seed"])
    assert asked["chat_template_kwargs"] == {"enable_thinking": True}
    assert [m["role"] for m in asked["messages"]] == ["system", "user"]
    assert asked["messages"][0]["content"].startswith("You are a judge that evaluates voice agent performance")


def test_a_policy_under_the_replayed_judge_reproduces_upstreams_summaries(corpus):
    wh, _, _ = corpus
    result = wh.rescore("replayed", judge="replay", prefect=False)
    assert result.judge == "replay" and result.scenarios > 0
    for session in (MIXED, BASELINE, "eval_20260903_140200"):
        assert wh.summary(session, "replayed") == (CONFORMANCE / session / "all_summary.txt").read_text()
    assert wh.policy_judge("replayed") == "replay"
    assert wh.policies().filter(pl.col("name") == "replayed")["judge"][0] == "replay"
    assert set(wh.sql("SELECT DISTINCT judge FROM scenario_scores WHERE policy_name = 'replayed'")["judge"]) == {"replay"}
    # the replayed judge agrees with the recorded one everywhere neither failed
    c = wh.compare_judges("recorded", "replay")
    whole = c.agreement.filter(pl.col("domain") == "(all)")
    assert whole["agreement"].to_list() == [1.0, 1.0] and c.flips.is_empty()
    assert whole.filter(pl.col("kind") == "judge_passed")["judge_errors"][0] > 0


def test_a_second_rejudge_sends_nothing_and_an_identical_judge_is_answered_from_the_cache(corpus):
    wh, first, _ = corpus
    with JudgeServer(replay) as server:
        again = wh.rejudge("replay", retries=0, prefect=False)
        assert again.asked == 0 and again.judged_already == first.scope and not server.requests
        # another name, the same requests (its URL is replay's, stored): answers that did not fail are reused,
        # the failed ones asked again (each request once), to the old URL, which no longer answers: each
        # fails, and the inputs that share its request get its failure
        twin = wh.rejudge("twin", url=first.settings.split("url=")[1].split(",")[0], retries=0, prefect=False)
    errored = wh.sql("SELECT count(*) AS n FROM stg_judgements WHERE judge = 'replay' AND errored")["n"][0]
    assert twin.errors == twin.asked < errored
    assert twin.without_call == {"cache": first.scope - twin.asked}
    sources = wh.sql("SELECT source, count(*) AS n FROM stg_judgements WHERE judge = 'twin' GROUP BY ALL ORDER BY ALL")
    assert dict(sources.rows()) == {"asked": twin.asked, "cache": first.scope - twin.asked}
    judges = wh.judges(price_in=1.0, price_out=2.0).filter(pl.col("judge").is_in(["replay", "twin"]))
    assert judges["coverage"].to_list() == [1.0, 1.0]
    replay_row = judges.row(0, named=True)
    answered = wh.sql("SELECT count(*) AS n FROM stg_judgements WHERE judge = 'replay' AND source = 'asked' "
                      "AND reason NOT LIKE 'Error: 500%'")["n"][0]  # a 500 reports no usage
    assert replay_row["asked"] == first.asked and replay_row["prompt_tokens"] == 100 * answered
    assert replay_row["cost"] == pytest.approx((100 * 1.0 + 20 * 2.0) * answered / 1e6)


def test_rescore_under_a_judge_that_has_not_judged_everything_is_refused(corpus, tmp_path):
    wh, _, _ = corpus
    with JudgeServer(lambda p, n: Reply(content='{"score": 0.95, "reason": "fine"}')) as server:
        wh.rejudge("partial", url=server.url, runs=[BASELINE], prefect=False)
    result = runner.invoke(app, ["rescore", "--policy", "p-partial", "--judge", "partial", "-w", wh.location])
    assert result.exit_code == 2
    missing = wh.sql("SELECT count(*) AS n FROM stg_judge_inputs WHERE askable AND run_id <> $r", {"r": BASELINE})["n"][0]
    assert f"judge 'partial' has not judged {missing} scenarios" in result.stderr
    assert "scorelake rejudge --judge partial --run " in result.stderr
    ok = runner.invoke(app, ["rescore", "--policy", "p-partial", "--judge", "partial", "--run", BASELINE,
                             "-w", wh.location])
    assert ok.exit_code == 0, ok.output
    assert "judge partial" in ok.stderr
    summary = runner.invoke(app, ["summary", BASELINE, "--policy", "p-partial", "-w", wh.location])
    assert "judge verdicts from judge 'partial'" in summary.stderr
    assert runner.invoke(app, ["check", "-w", wh.location]).exit_code == 0  # unjudged runs are not a fault
    unknown = runner.invoke(app, ["rescore", "--policy", "p-x", "--judge", "nobody", "-w", wh.location])
    assert unknown.exit_code == 2 and "no judge named 'nobody'" in unknown.stderr


# ---- transient failures, a refused key, --only-errors -------------------------------------------

@pytest.fixture
def sample(tmp_path) -> scorelake.Warehouse:
    """The embedded sample (46 scenarios, 7 with a failed judge) in a fresh warehouse."""
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(REPO / "data" / "runs", prefect=False)
    return wh


GOOD = Reply(content='{"score": 0.97, "reason": "good"}')


def test_429_and_500_are_retried_honouring_retry_after(sample):
    def script(payload, n):
        if n == 0:
            return Reply(status=429, headers={"Retry-After": "0.3"}) if len(user_content(payload)) % 2 else Reply(status=503)
        return GOOD

    with JudgeServer(script) as server:
        started = time.monotonic()
        result = sample.rejudge("flaky", url=server.url, concurrency=46, backoff=0.01, prefect=False)
        took = time.monotonic() - started
        assert len(server.requests) == 2 * result.scope
    assert result.asked == result.scope and result.errors == 0 and result.retries == result.scope
    assert took >= 0.3  # the 429s waited as told
    rows = sample.sql("SELECT attempts, errored, score FROM stg_judgements WHERE judge = 'flaky'")
    assert set(rows["attempts"]) == {2} and not rows["errored"].any() and set(rows["score"]) == {0.97}


@pytest.mark.slow
def test_a_slow_reply_times_out_and_is_retried(sample):
    def script(payload, n):
        return Reply(delay=2.0) if n == 0 else GOOD

    with JudgeServer(script) as server:
        result = sample.rejudge("patient", url=server.url, timeout=0.5, runs=[BASELINE], concurrency=16, backoff=0,
                                prefect=False)
    assert result.asked == 14 and result.errors == 0 and result.retries == 14


def test_persistent_failures_are_stored_as_judge_errors_and_asked_again_with_only_errors(sample):
    # one call in six fails for good: stored as a judge error, the command exits 1, asked again later
    endpoint = {"down": True}

    def script(payload, n):
        return Reply(status=500) if endpoint["down"] and len(user_content(payload)) % 6 == 0 else GOOD

    server = JudgeServer(script).__enter__()
    done = runner.invoke(app, ["rejudge", "-j", "outage", "--judge-url", server.url, "--retries", "2", "--backoff", "0",
                               "-w", sample.location])
    assert done.exit_code == 1 and "calls went unanswered" in done.stderr
    assert done.stderr.count("judge error Error: 500") == 1  # the same error said once
    rows = sample.sql("SELECT * FROM judgements WHERE judge = 'outage'")
    failed = rows.filter(pl.col("judge_error"))
    assert 0 < failed.height < rows.height and set(failed["score"]) == {0.0}
    assert all(r.startswith("Error: 500 Server Error: Internal Server Error for url: http://127.0.0.1:")
               for r in failed["reason"])
    result = runner.invoke(app, ["judges", "-w", sample.location, "-f", "json"])
    outage = next(j for j in json.loads(result.stdout) if j["judge"] == "outage")
    assert outage["error_rate"] == failed.height / rows.height and outage["retries"] == 2 * failed.height

    endpoint["down"] = False  # the endpoint is back
    again = sample.rejudge("outage", only_errors=True, prefect=False)
    server.__exit__()
    assert again.asked == failed.height and again.errors == 0 and again.unanswered == 0
    assert not sample.sql("SELECT * FROM judgements WHERE judge = 'outage'")["judge_error"].any()


def test_a_judge_that_answers_no_call_is_given_up_on_and_leaves_no_judge(sample):
    with JudgeServer(lambda p, n: Reply(status=500)) as server:
        with pytest.raises(scorelake.JudgeUnavailable, match="never answered, so nothing of it is kept"):
            sample.rejudge("hopeless", url=server.url, retries=0, backoff=0, concurrency=2, prefect=False)
        # the first alone, then five (at least twice the concurrency), and the call in flight beside the fifth
        assert 1 + 5 <= len(server.requests) <= 1 + 5 + 1
    assert "hopeless" not in sample.judges()["judge"].to_list()
    assert sample.sql("SELECT count(*) AS n FROM stg_judgements WHERE judge = 'hopeless'")["n"][0] == 0
    with JudgeServer(lambda p, n: GOOD) as server:  # the name is free for the right settings
        assert sample.rejudge("hopeless", url=server.url, runs=[BASELINE], prefect=False).asked == 14


def test_the_first_call_alone_stops_on_the_judges_own_refusal(sample):
    def script(payload, n):
        return Reply(status=400, content="", body=b'{"error": {"message": "Invalid model name passed in model=gpt-9"}}')

    with JudgeServer(script) as server:
        done = runner.invoke(app, ["rejudge", "-j", "typo-model", "--judge-url", server.url, "--judge-model", "gpt-9",
                                   "-w", sample.location])
        assert len(server.requests) == 1
    assert done.exit_code == 1 and "400 Bad Request" in done.stderr
    assert "Invalid model name passed in model=gpt-9" in done.stderr
    assert "typo-model" not in sample.judges()["judge"].to_list()


def test_only_errors_asks_only_what_the_recorded_judge_failed_on(sample):
    recorded_errors = sample.sql("SELECT count(*) AS n FROM judgements WHERE judge = 'recorded' AND judge_error")["n"][0]
    assert recorded_errors == 7
    with JudgeServer(lambda p, n: GOOD) as server:
        result = runner.invoke(app, ["rejudge", "--judge", "mended", "--only-errors", "--judge-url", server.url,
                                     "-w", sample.location])
        assert result.exit_code == 0, result.output
        assert len(server.requests) == recorded_errors
    assert f"{recorded_errors} asked, 39 from the base judge" in result.stderr
    mended = sample.sql("SELECT * FROM judgements WHERE judge = 'mended'")
    assert mended.height == 46 and not mended["judge_error"].any()
    recorded = sample.sql("SELECT run_id, scenario_name, score FROM judgements WHERE judge = 'recorded' AND NOT judge_error")
    kept = mended.join(recorded, on=["run_id", "scenario_name"], suffix="_recorded")
    assert kept.height == 39 and (kept["score"] == kept["score_recorded"]).all()
    # the two scenarios that failed only because the judge failed pass under the mended judge
    note = runner.invoke(app, ["rates", "-w", sample.location])
    assert "failed only because the judge itself failed" in note.stderr
    assert "scorelake rejudge --judge retried --only-errors" in note.stderr
    assert runner.invoke(app, ["rescore", "--policy", "mended", "--judge", "mended", "-w", sample.location]).exit_code == 0
    assert sample.judge_errors(policy="mended").is_empty()
    fixed = sample.scenarios(policy="mended").join(sample.scenarios(), on=["run_id", "scenario_name"], suffix="_rec")
    flipped = fixed.filter(pl.col("is_successful") & ~pl.col("is_successful_rec"))["scenario_name"].to_list()
    assert sorted(set(flipped)) == ["qa__telephone_inventor", "simple_qa_1"]


def test_a_refused_key_stops_at_once_with_nothing_written(sample, monkeypatch):
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-wrong")
    with JudgeServer(lambda p, n: Reply(status=401)) as server:
        result = runner.invoke(app, ["rejudge", "--judge", "locked", "--judge-url", server.url, "--concurrency", "4",
                                     "--api-key-env", "MY_JUDGE_KEY", "-w", sample.location])
        assert len(server.requests) == 1  # one call first: refused, nothing more
        assert server.requests[0]["authorization"] == "Bearer sk-wrong"
    assert result.exit_code == 1
    assert f"{server.url} answered 401 Unauthorized (the key was refused): scripted; nothing more is asked" in result.stderr
    assert "Traceback" not in result.output
    assert sample.sql("SELECT count(*) AS n FROM stg_judgements WHERE judge = 'locked'")["n"][0] == 0
    assert "locked" not in sample.judges()["judge"].to_list()  # the first call is refused before anything is stored
    assert len(server.requests) == 1


def test_the_key_comes_from_judge_api_key_and_a_prompt_file_replaces_the_system_prompt(sample, monkeypatch, tmp_path):
    monkeypatch.setenv("JUDGE_API_KEY", "sk-default")
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("You are a strict judge. Return JSON.")
    with JudgeServer(lambda p, n: GOOD) as server:
        result = runner.invoke(app, ["rejudge", "-j", "strict", "--judge-url", server.url, "--judge-model", "m",
                                     "--prompt", str(prompt), "--max-tokens", "512", "--temperature", "0",
                                     "--seed", "7", "--run", BASELINE, "-w", sample.location])
        assert result.exit_code == 0, result.output
        first = server.requests[0]
    assert first["authorization"] == "Bearer sk-default"
    payload = first["payload"]
    assert payload["messages"][0]["content"] == "You are a strict judge. Return JSON."
    assert (payload["model"], payload["max_tokens"], payload["temperature"], payload["seed"]) == ("m", 512, 0, 7)
    stored = sample.sql("SELECT user_content FROM stg_judge_inputs WHERE run_id = $r", {"r": BASELINE})["user_content"]
    assert payload["messages"][1]["content"] in set(stored)
    other = runner.invoke(app, ["rejudge", "-j", "strict", "--judge-model", "other", "-w", sample.location])
    assert other.exit_code == 2 and "judge 'strict' exists with other settings" in other.stderr
    builtin = runner.invoke(app, ["rejudge", "-j", "recorded", "-w", sample.location])
    assert builtin.exit_code == 2 and "'recorded' is the built-in judge" in builtin.stderr


def test_compare_judges_command(sample):
    def script(payload, n):  # disagrees with the recorded judge on every other input
        return Reply(content='{"score": 0.1, "reason": "bad"}') if len(user_content(payload)) % 2 else GOOD

    with JudgeServer(script) as server:
        sample.rejudge("contrarian", url=server.url, prefect=False)
    table = runner.invoke(app, ["compare-judges", "recorded", "contrarian", "-w", sample.location])
    assert table.exit_code == 0, table.output
    assert "kappa" in table.stdout and "flipped verdicts" in table.stdout
    doc = json.loads(runner.invoke(app, ["compare-judges", "recorded", "contrarian", "-w", sample.location,
                                         "-f", "json"]).stdout)
    whole = next(r for r in doc["agreement"] if r["domain"] == "(all)" and r["kind"] == "judge_passed")
    assert whole["pairs"] == 39 and whole["judge_errors"] == 7
    assert whole["both_pass"] + whole["only_a"] + whole["only_b"] + whole["neither"] == 39
    flips = [f for f in doc["flips"] if f["kind"] == "judge_passed"]
    # every flip is listed, those where a judge failed too (flagged): a failed judgement flipped is an outage mended
    assert len([f for f in flips if not (f["error_a"] or f["error_b"])]) == whole["only_a"] + whole["only_b"]
    assert {(f["error_a"], f["passed_b"]) for f in flips if f["error_a"] or f["error_b"]} <= {(True, True)}
    missing = runner.invoke(app, ["compare-judges", "recorded", "nobody", "-w", sample.location])
    assert missing.exit_code == 2 and "no judge named 'nobody'" in missing.stderr


# ---- kill -9 mid-way ----------------------------------------------------------------------------

@pytest.mark.slow
def test_a_rejudge_killed_mid_way_loses_only_the_calls_in_flight(sample, tmp_path):
    with JudgeServer(lambda p, n: Reply(content='{"score": 0.9, "reason": "slow"}', delay=0.15)) as server:
        command = [sys.executable, "-m", "scorelake", "rejudge", "-j", "killed", "--judge-url", server.url,
                   "--concurrency", "2", "-w", sample.location]
        env = {**os.environ, "PREFECT_API_URL": ""}
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while len(server.requests) < 12 and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        asked_before = len(server.requests)
        assert 12 <= asked_before < 46
        journal = list((Path(sample.location) / ".journal").glob("*.jsonl"))
        assert journal  # answers not committed yet are in the journal
        committed = sample.sql("SELECT count(*) AS n FROM stg_judgements WHERE judge = 'killed'")["n"][0]
        again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
        asked_after = len(server.requests) - asked_before
    recovered = int(again.stderr.split(" judgements of an interrupted rejudge")[0].split()[-1])
    assert committed + recovered >= asked_before - 2  # at most the two calls in flight were lost
    assert asked_after == 46 - committed - recovered
    rows = sample.sql("SELECT run_id, scenario_name FROM judgements WHERE judge = 'killed'")
    assert rows.height == 46 and rows.unique().height == 46
    assert not list((Path(sample.location) / ".journal").glob("*.jsonl"))
    counts = sample.sql("SELECT count(*) AS n FROM {{ judgements }}".replace("{{ judgements }}", "delta_judgements")
                        + " WHERE judge = 'killed'")["n"][0]
    assert counts == 46  # no judgement committed twice


# ---- as a Prefect flow ---------------------------------------------------------------------------

def test_rejudge_runs_as_a_prefect_flow_when_an_api_is_configured(prefect_server, sample):
    with JudgeServer(lambda p, n: GOOD) as server:
        result = sample.rejudge("flowed", url=server.url, runs=[BASELINE])
    assert result.ran.startswith("ran as a Prefect flow") and result.asked == 14
    assert sample.sql("SELECT count(*) AS n FROM judgements WHERE judge = 'flowed'")["n"][0] == 14


def test_show_under_a_judge_policy_gives_that_judges_reason_and_nl_verdicts(corpus):
    wh, _, _ = corpus
    with JudgeServer(lambda p, n: Reply(content=json.dumps({
            "score": 0.42, "reason": "second opinion", "nl_assertion_verdicts": [{"index": 1, "passed": True,
                                                                                  "reason": "held"}]}))) as server:
        wh.rejudge("second", url=server.url, runs=[MIXED], prefect=False)
    wh.rescore("second-opinion", judge="second", runs=[MIXED], prefect=False)
    nl_scenario = wh.sql("SELECT scenario_name FROM stg_judge_inputs WHERE run_id = $r AND nl_assertions IS NOT NULL "
                         "AND askable LIMIT 1", {"r": MIXED})["scenario_name"][0]
    evidence = wh.evidence(MIXED, nl_scenario, "second-opinion")
    assert evidence.judge.judge == "second" and evidence.judge.reason == "second opinion"
    nl = [v for v in evidence.verdicts if v.kind == "nl_assertion"]
    assert nl[0].passed and nl[0].detail == "held"
    assert evidence.scenario.judge_score == 0.42 and evidence.scenario.judge == "second"
    shown = runner.invoke(app, ["show", MIXED, nl_scenario, "--policy", "second-opinion", "-w", wh.location])
    assert shown.exit_code == 0 and "judged by judge 'second'" in shown.stdout and "second opinion" in shown.stdout
    recorded = wh.evidence(MIXED, nl_scenario)
    assert recorded.judge.judge == "recorded" and recorded.judge.reason != "second opinion"


# ---- on object storage ---------------------------------------------------------------------------

def test_rejudge_and_rescore_on_object_storage(s3_warehouse, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # where an S3 warehouse's journal goes
    wh = scorelake.open(s3_warehouse)
    wh.ingest(REPO / "data" / "runs", prefect=False)
    with JudgeServer(lambda p, n: GOOD) as server:
        result = wh.rejudge("mended", url=server.url, only_errors=True, prefect=False)
        assert len(server.requests) == 7
    assert result.asked == 7 and result.without_call == {"copied": 39}
    assert wh.rescore("mended", judge="mended", prefect=False).scenarios == 46
    assert wh.judge_errors(policy="mended").is_empty()
    journals = list((tmp_path / "cache" / "scorelake" / "journal").rglob("*.jsonl"))
    assert journals == []  # committed, then removed


def test_a_judge_that_is_down_is_given_up_on_and_asked_again_later(corpus):
    wh, _, _ = corpus
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    result = runner.invoke(app, ["rejudge", "-j", "down", "--judge-url", url, "--retries", "1", "--backoff", "0",
                                 "--concurrency", "4", "-w", wh.location])
    assert result.exit_code == 1
    assert "calls in a row unanswered and has answered none (last: ConnectError" in result.stderr
    assert "never answered, so nothing of it is kept" in result.stderr
    stored = wh.sql("SELECT count(*) AS n FROM judgements WHERE judge = 'down'")
    assert stored["n"][0] == 0 and "down" not in wh.judges()["judge"].to_list()  # nothing left behind
    with JudgeServer(lambda p, n: GOOD, port=port) as server:
        again = wh.rejudge("down", url=url, prefect=False)
        assert len(server.requests) == again.asked == again.scope - again.without_call.get("cache", 0)
    assert again.errors == 0


def test_a_judge_url_that_is_not_http_is_refused_before_anything_is_asked(sample):
    result = runner.invoke(app, ["rejudge", "-j", "typo", "--judge-url", "localhost:8000/v1/chat/completions",
                                 "-w", sample.location])
    assert result.exit_code == 2 and "--judge-url: not an http:// or https:// URL (got 'localhost:8000" in result.stderr
    assert "typo" not in sample.judges()["judge"].to_list()


def test_a_dropped_connection_is_retried(sample):
    """A judge that closes the connection without answering (the first request of each input), then answers."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    seen: dict[bytes, int] = {}
    reply = completion('{"score": 0.93, "reason": "after a drop"}')

    def serve(conn) -> None:
        with conn:
            while True:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, body = data.split(b"\r\n\r\n", 1)
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                while len(body) < length:
                    body += conn.recv(65536)
                key = json.loads(body)["messages"][1]["content"].encode()
                seen[key] = seen.get(key, 0) + 1
                if seen[key] == 1:
                    return  # dropped: closed with no answer
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             + f"Content-Length: {len(reply)}\r\n\r\n".encode() + reply)

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1/chat/completions"
    try:
        result = sample.rejudge("dropped", url=url, runs=[BASELINE], backoff=0, prefect=False)
    finally:
        listener.close()
    assert result.asked == 14 and result.errors == 0 and result.retries == 14
    assert set(sample.sql("SELECT reason FROM judgements WHERE judge = 'dropped'")["reason"]) == {"after a drop"}


def test_run_judge_settings_come_from_the_invocation_with_upstreams_defaults():
    from scorelake.transforms.judging import run_judge

    args = {"invocations": [{"parsed_args": {"judge_model": "first", "judge_seed": 1}},
                            {"parsed_args": {"judge_model": "second", "judge_timeout": "soon",
                                             "judge_thinking_token_budget": 512}}]}
    first, second = run_judge(json.dumps(args), 0), run_judge(json.dumps(args), 1)
    assert (first.model, first.seed, first.max_tokens, first.temperature, first.top_p, first.timeout) == (
        "first", 1, 100000, 1.0, 0.95, 120.0)
    assert (second.model, second.seed, second.thinking_token_budget, second.timeout) == ("second", 42, 512, 120.0)
    legacy = run_judge(json.dumps({"judge_url": "http://judge/v1/chat/completions"}), 0)  # a bare namespace
    assert legacy.url == "http://judge/v1/chat/completions"
    assert run_judge("not json", 0).url == "http://localhost:8000/v1/chat/completions"


@pytest.mark.slow
def test_the_progress_bar_shows_calls_errors_retries_and_tokens_on_a_terminal(sample):
    import pty

    def script(payload, n):
        return Reply(status=503) if n == 0 else Reply(content='{"score": 0.9}', delay=0.05)

    with JudgeServer(script) as server:
        primary, secondary = pty.openpty()
        env = {**os.environ, "PREFECT_API_URL": "", "COLUMNS": "160", "TERM": "xterm"}
        process = subprocess.Popen([sys.executable, "-m", "scorelake", "rejudge", "-j", "shown", "--judge-url",
                                    server.url, "--concurrency", "2", "--backoff", "0", "-w", sample.location],
                                   env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=secondary)
        os.close(secondary)
        shown = b""
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the command ended and closed the terminal
                break
            if not chunk:
                break
            shown += chunk
        assert process.wait(timeout=120) == 0
        os.close(primary)
    text = shown.decode(errors="replace")
    assert "judge shown" in text and "/46" in text and " retries, " in text and " tokens" in text


def test_replies_that_crashed_rejudge_are_judgements_or_judge_errors(sample):
    """A lone surrogate in the reason, a body nested too deep to parse, a gzip header on a body that is
    not gzip, a token count past 64 bits, a body past the size cap: each one call's answer or error."""
    deep = b'{"choices": [{"message": {"content": "{}"}}], "usage": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    replies = [Reply(content='{"score": 0.5, "reason": "\\ud800 broken"}'), Reply(status=200, body=deep),
               Reply(status=200, body=b"not gzip", headers={"content-encoding": "gzip"}),
               Reply(content='{"score": 0.7, "reason": "big"}', usage={"prompt_tokens": 10**30}),
               Reply(content='{"score": "Infinity", "reason": "odd"}'), Reply(content='{"score": true, "reason": "t"}')]

    served = itertools.count(1)  # the first call (made alone) answers well; then each hostile reply in turn

    def script(payload, n):
        i = next(served)
        return replies[(i - 2) % len(replies)] if i > 1 else GOOD

    with JudgeServer(script) as server:
        done = runner.invoke(app, ["rejudge", "-j", "hostile", "--judge-url", server.url, "--retries", "0",
                                   "--run", BASELINE, "-w", sample.location])
    assert "Traceback" not in done.output and done.exit_code in (0, 1), done.output
    rows = sample.sql("SELECT reason, prompt_tokens, score FROM stg_judgements WHERE judge = 'hostile'")
    assert rows.height == 14
    assert any(r == "? broken" for r in rows["reason"]), rows["reason"].to_list()
    assert rows["prompt_tokens"].max() is None or rows["prompt_tokens"].max() < 2**63
    odd = sample.judges().filter(pl.col("judge") == "hostile")["odd_scores"][0]
    assert odd >= 2  # "Infinity" and true, each taken as float() takes it, each counted
    assert "scores outside 0-1 or not finite" in done.output


def test_a_nan_score_recovered_from_the_journal_stays_nan(tmp_path):
    import math
    from datetime import UTC, datetime

    from scorelake.judge_client import Journal, read_journal

    journal = Journal(tmp_path)
    journal.write({"judgement_id": "x", "score": float("nan"), "latency_ms": float("inf"), "reason": "r",
                   "judged_at": datetime.now(UTC)})
    (row,) = read_journal(journal.path)
    assert math.isnan(row["score"]) and row["latency_ms"] == float("inf") and row["reason"] == "r"
    assert "_special_floats" not in row


@pytest.mark.slow  # waits out a deadline
def test_a_reply_is_bounded_in_time_and_size_and_retry_after_inf_is_not_waited(sample):
    """--timeout is a deadline for the whole call (a reply trickled a byte at a time is cut off), a reply
    past the size cap (16 MB) is an error rather than memory, and Retry-After: inf is not waited."""
    big = b'{"choices": [{"message": {"content": "{\\"score\\": 1}"}}], "pad": "' + b"x" * (17 * 2**20) + b'"}'
    plan = iter([GOOD, Reply(trickle=0.2), Reply(status=200, body=big), Reply(status=429, headers={"retry-after": "inf"})])
    chosen: dict[str, Reply] = {}

    def script(payload, n):  # each input keeps the reply it first drew
        key = user_content(payload)
        if key not in chosen:
            chosen[key] = next(plan, GOOD)
        return chosen[key]

    with JudgeServer(script) as server:
        started = time.monotonic()
        result = sample.rejudge("bounded", url=server.url, runs=[BASELINE], timeout=1, retries=1, backoff=0,
                                concurrency=1, prefect=False)
        took = time.monotonic() - started
    assert took < 30  # the trickle cut off at its deadline (twice), the 429's inf never waited
    reasons = sample.sql("SELECT reason FROM stg_judgements WHERE judge = 'bounded' AND errored")["reason"].to_list()
    assert any("did not answer within 1 s" in r for r in reasons), reasons
    assert any("longer than 16 MB" in r for r in reasons), reasons
    assert any(r.startswith("Error: 429") for r in reasons), reasons
    assert result.asked == 14 and result.unanswered == 3


def test_the_judge_input_key_is_json_dumps_exact_text():
    """input_hash writes its JSON with orjson for speed: it must be json.dumps' text byte for byte,
    or every stored judgement would lose its input."""
    import hashlib
    import json as stdlib_json

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from scorelake.transforms.sources._evidence import input_hash

    @settings(max_examples=300, deadline=None)
    @given(st.text(), st.text(), st.none() | st.lists(st.text(), max_size=3))
    def same(system: str, user: str, assertions):
        blob = stdlib_json.dumps([system, user, assertions or []], ensure_ascii=False)
        assert input_hash(system, user, assertions) == hashlib.sha256(
            blob.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    same()
    assert input_hash("\ud800 lone", "x", None)  # a lone surrogate: json's own text


def _prompts_on_disk(root: Path) -> dict[tuple[str, str], str]:
    """Each scenario's judge system prompt as its judge_result.json holds it (killed folders are no scenarios)."""
    found = {}
    for path in root.glob("eval_*/*/judge_result.json"):
        if ".killed." in path.parent.name:
            continue
        asked = json.loads(path.read_text()).get("judge_input")
        if isinstance(asked, dict) and isinstance(asked.get("system_prompt"), str):
            found[(path.parent.parent.name, path.parent.name)] = asked["system_prompt"]
    return found


def test_each_judge_system_prompt_is_stored_once_and_read_back_whole(sample):
    """The same long system prompt opens every judge input of a run: stored once per distinct prompt,
    each input reads back its own, as the file holds it (and the rows of an older scorelake, which
    hold their prompt themselves, read the same)."""
    from scorelake.storage import Store
    from scorelake.transforms.columns import frame

    on_disk = _prompts_on_disk(REPO / "data" / "runs")
    store = Store(sample.location)
    stored = store.tables.read("judge_prompts").collect()
    assert stored.height == len(set(on_disk.values())) < len(on_disk)
    assert store.tables.read("judge_inputs").select(pl.col("system_prompt").is_null().all()).collect().item()

    def read_back() -> dict[tuple[str, str], str]:
        rows = sample.sql("SELECT run_id, scenario_name, system_prompt FROM stg_judge_inputs")
        tables = Store(sample.location).tables
        via_polars = tables.judge_inputs(tables.committed_runs()).collect()
        assert sorted(via_polars.select(rows.columns).rows()) == sorted(rows.rows())
        return {(r, s): p for r, s, p in rows.iter_rows()}

    assert read_back() == on_disk
    # as an older scorelake left it: each input with its own prompt, no judge_prompts table, its views
    older = sample.sql("SELECT * FROM stg_judge_inputs").with_columns(prompt_hash=pl.lit(None, pl.String))
    store.tables.replace("judge_inputs", frame("judge_inputs", older.to_dicts()))
    shutil.rmtree(store.tables.root / "judge_prompts")
    store.tables.schema_file("judge_prompts").unlink()
    store.tables.db_path.unlink()
    read = scorelake.open(sample.location)  # a reader: its views bound in memory, the table missing
    assert {(r, s): p for r, s, p in read.sql("SELECT run_id, scenario_name, system_prompt FROM stg_judge_inputs")
            .iter_rows()} == on_disk
    sample.ingest(REPO / "data" / "runs", prefect=False)  # a write creates the table; nothing re-read
    assert Store(sample.location).tables.read("judge_prompts").collect().is_empty()
    assert read_back() == on_disk


def test_the_judges_reply_is_kept_as_its_model_wrote_it(sample):
    """The raw reply (fences, prose and all) is stored beside its parse, and `show` prints it."""
    content = 'My verdict:\n```json\n{"score": 0.97, "reason": "good"}\n```'
    with JudgeServer(lambda p, n: Reply(content=content)) as server:
        sample.rejudge("raw", url=server.url, prefect=False)
    judged = sample.sql("SELECT DISTINCT reply, score FROM judgements WHERE judge = 'raw'")
    assert judged.rows() == [(content, 0.97)]
    assert sample.sql("SELECT count(*) AS n FROM judgements WHERE judge = 'recorded' AND reply IS NOT NULL")["n"][0] == 0
    sample.rescore("p-raw", judge="raw")
    run, scenario = sample.sql("SELECT run_id, scenario_name FROM judgements WHERE judge = 'raw' LIMIT 1").row(0)
    assert sample.evidence(run, scenario, policy="p-raw").judge.reply == content
    text = runner.invoke(app, ["show", run, scenario, "--policy", "p-raw", "-w", sample.location]).output
    assert "the judge's reply as its model wrote it" in text and "My verdict:" in text


@pytest.mark.slow  # seconds of one call: the fast loop leaves it to CI
def test_scores_that_disagree_with_their_policys_judge_are_found_by_check_and_repaired_by_rescore(tmp_path):
    """A judgement of a policy's judge that changes after the policy scored with it (here appended as
    a commit of judgements would): `check` names the run and the policy, `rescore` scores it again,
    and then scores and judge agree."""
    import secrets
    from datetime import UTC, datetime

    from scorelake.storage import Store
    from scorelake.pipeline import commit_judgements
    from scorelake.pipeline._judgements import latest

    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(CONFORMANCE / BASELINE, prefect=False)
    with JudgeServer(lambda p, n: GOOD) as server:
        wh.rejudge("steady", url=server.url, prefect=False)
    wh.rescore("by-steady", judge="steady", prefect=False)
    assert runner.invoke(app, ["check", "-w", wh.location]).exit_code == 0
    store = Store(wh.location)
    changed = (latest(store, "steady").filter(~pl.col("errored")).head(1).collect()
               .with_columns(judgement_id=pl.lit(secrets.token_hex(12)), score=pl.lit(0.05),
                             judged_at=pl.lit(datetime.now(UTC))))
    commit_judgements(store, changed, "a judgement changed after the policy scored with it")
    found = runner.invoke(app, ["check", "-w", wh.location])
    assert found.exit_code != 0 and f"{BASELINE}: policy by-steady: scored with judgements its judge steady" in (
        found.stdout + found.stderr)
    assert wh.rescore("by-steady", prefect=False).scenarios > 0
    assert runner.invoke(app, ["check", "-w", wh.location]).exit_code == 0
    scenario = changed["scenario_name"][0]
    row = wh.scenarios(run=BASELINE, policy="by-steady").filter(pl.col("scenario_name") == scenario)
    assert row["judge_score"][0] == pytest.approx(0.05) and row["judge_passed"][0] is False
