"""Human review: a person's verdict recorded with its history, imported in bulk, counted by a policy
that takes reviews (the composite recomputed by the runner's rules), shown as evidence, and the
judge measured against people (compare-judges human: precision, recall, the threshold sweep,
Krippendorff's alpha)."""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from scorelake.transforms.analysis import cohen_kappa, krippendorff_alpha, threshold_sweep
from tests.conftest import BASELINE, CONFORMANCE
from tests.test_view import browser  # noqa: F401 (the fixture)

runner = CliRunner()
SCORELAKE = str(Path(sys.executable).parent / "scorelake")
TOKEN = "review-token-0123456789"  # at least 16 characters: shorter ones are refused


@pytest.fixture
def wh(tmp_path) -> scorelake.Warehouse:
    """The baseline session (14 scenarios: stalled ones, judge failures, NL assertions, DB predicates)."""
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(CONFORMANCE / BASELINE)
    return wh


def scores(wh: scorelake.Warehouse, policy: str) -> dict[str, dict]:
    return {r["scenario_name"]: r for r in wh.scenarios(run=BASELINE, policy=policy).iter_rows(named=True)}


def test_a_review_is_kept_with_its_history_and_a_later_one_supersedes_only_its_reviewers_own(wh, monkeypatch):
    monkeypatch.setenv("SCORELAKE_REVIEWER", "alice")
    first = wh.review(BASELINE, "qa__speed_of_light", "judge_passed", "pass", note="a correct paraphrase")
    wh.review(BASELINE, "qa__speed_of_light", "judge_passed", "fail", reviewer="bob")
    wh.review(BASELINE, "tau2_retail__21", "nl_assertion", "pass", assertion=1)
    standing = wh.reviews()
    assert standing.select("scenario_name", "signal", "assertion", "verdict", "reviewer").rows() == [
        ("qa__speed_of_light", "judge_passed", None, "pass", "alice"),  # bob's verdict does not overwrite hers
        ("qa__speed_of_light", "judge_passed", None, "fail", "bob"),
        ("tau2_retail__21", "nl_assertion", 1, "pass", "alice")]
    wh.review(BASELINE, "qa__speed_of_light", "judge_passed", "fail", reviewer="bob", note="on second thought")
    history = wh.reviews(history=True)
    assert history.height == 4 and history["standing"].to_list() == [True, False, True, True]
    assert history["note"][0] == "a correct paraphrase" and history["domain"][0] == "qa"
    assert first.made_on == history["warehouse_version"][0]
    # withdrawing is a row too: alice's verdict no longer stands, bob's does; the history keeps all
    wh.review(BASELINE, "qa__speed_of_light", "judge_passed", withdraw=True)
    assert wh.reviews().select("scenario_name", "reviewer").rows() == [("qa__speed_of_light", "bob"),
                                                                        ("tau2_retail__21", "alice")]
    assert wh.reviews(history=True).height == 5
    log = [c.detail for c in wh.log() if c.operation == "review"]
    assert log[0] == f"review by alice of {BASELINE}/qa__speed_of_light (judge_passed: pass)"
    assert log[-1].startswith(f"withdrawal by alice of {BASELINE}/qa__speed_of_light")
    # as the warehouse stood after the first review
    then = scorelake.open(wh.location, as_of=first.version)
    assert then.reviews()[["reviewer", "verdict"]].rows() == [("alice", "pass")]


@pytest.mark.slow  # seconds of one call: the fast loop leaves it to CI
def test_which_reviewers_verdict_stands_is_the_policys_rule(wh):
    """Three reviewers on one key (2 pass, 1 fail), two on another (1 each), one on a third."""
    say = [("qa__speed_of_light", "alice", "pass"), ("qa__speed_of_light", "bob", "pass"),
           ("qa__speed_of_light", "carol", "fail"), ("qa__moon_landing", "alice", "fail"),
           ("qa__moon_landing", "bob", "pass"), ("qa__telephone_inventor", "bob", "pass")]
    for scenario, reviewer, verdict in say:
        wh.review(BASELINE, scenario, "is_successful", verdict, reviewer=reviewer)
    wh.review(BASELINE, "qa__moon_landing", "is_successful", "fail", reviewer="carol")  # carol adjudicates
    latest = scores(wh, wh.rescore("latest", reviews=True, prefect=False).policy)
    majority = scores(wh, wh.rescore("majority", reviews=True, review_rule="majority", prefect=False).policy)
    ruled = scores(wh, wh.rescore("ruled", reviews=True, review_rule="adjudicated", adjudicator="carol",
                                  prefect=False).policy)
    plain = scores(wh, "recorded")
    outcome = lambda rows, s: rows[s]["is_successful"]  # noqa: E731
    # latest: the last review of each key (carol's fail; carol's fail; bob's pass)
    assert [outcome(latest, s) for s in ("qa__speed_of_light", "qa__moon_landing", "qa__telephone_inventor")] == [
        False, False, True]
    # majority: 2 of 3 pass; 1 pass 2 fail (carol's too); bob alone
    assert [outcome(majority, s) for s in ("qa__speed_of_light", "qa__moon_landing", "qa__telephone_inventor")] == [
        True, False, True]
    # adjudicated: where they disagree carol decides (fail, fail); where one reviewer agrees with no one else
    assert [outcome(ruled, s) for s in ("qa__speed_of_light", "qa__moon_landing", "qa__telephone_inventor")] == [
        False, False, True]
    wh.review(BASELINE, "qa__moon_landing", "is_successful", withdraw=True, reviewer="carol")
    tie = scores(wh, wh.rescore("majority", prefect=False).policy)
    assert outcome(tie, "qa__moon_landing") == outcome(plain, "qa__moon_landing")  # a tie: no review stands
    with pytest.raises(scorelake.InvalidArgument, match="adjudicator"):
        wh.rescore("no-one", reviews=True, review_rule="adjudicated", prefect=False)


@pytest.mark.slow  # seconds of one call: the fast loop leaves it to CI
def test_reviewers_are_compared_like_judges_and_their_disagreements_queued(wh):
    for scenario, verdicts in {"qa__speed_of_light": "ppf", "qa__moon_landing": "pfp", "simple_qa_1": "fff",
                               "qa__telephone_inventor": "ppp"}.items():
        for reviewer, verdict in zip(("alice", "bob", "carol"), verdicts):
            wh.review(BASELINE, scenario, "judge_passed", "pass" if verdict == "p" else "fail", reviewer=reviewer)
    c = wh.compare_judges("human:alice", "human:bob", others=["human:carol"])
    row = c.agreement.filter((pl.col("domain") == "(all)") & (pl.col("kind") == "judge_passed")).row(0, named=True)
    assert (row["pairs"], row["both_pass"], row["only_a"], row["only_b"], row["neither"]) == (4, 2, 1, 0, 1)
    units = [[True, True, False], [True, False, True], [False, False, False], [True, True, True]]
    alpha = c.alpha.filter((pl.col("domain") == "(all)") & (pl.col("kind") == "judge_passed"))["alpha"][0]
    # by hand: coincidences o_TT 5, o_TF = o_FT 2, o_FF 3 (n 12, n_T 7, n_F 5); D_o = 4/12,
    # D_e = 2 * 7 * 5 / (12 * 11); alpha = 1 - D_o / D_e = 13/35
    assert alpha == pytest.approx(13 / 35) == krippendorff_alpha(units)
    queue = wh.review_queue("reviewers", run=BASELINE)
    assert sorted(queue["scenario_name"]) == ["qa__moon_landing", "qa__speed_of_light"]
    assert set(queue["reason"]) == {"reviewers disagree on judge_passed"}
    disagreements = wh.sql("SELECT scenario_name, passed_by, failed_by FROM review_disagreements ORDER BY 1")
    assert disagreements.rows() == [("qa__moon_landing", ["alice", "carol"], ["bob"]),
                                    ("qa__speed_of_light", ["alice", "bob"], ["carol"])]


@pytest.mark.parametrize("kwargs, says", [
    (dict(run="eval_nope", scenario="x", signal="judge_passed", verdict="pass"), "no run 'eval_nope'"),
    (dict(run=BASELINE, scenario="nope", signal="judge_passed", verdict="pass"), "no scenario 'nope'"),
    (dict(run=BASELINE, scenario="qa__speed_of_light", signal="vibes", verdict="pass"), "unknown signal 'vibes'"),
    (dict(run=BASELINE, scenario="qa__speed_of_light", signal="judge_passed", verdict="maybe"), "verdict 'maybe'"),
    (dict(run=BASELINE, scenario="qa__speed_of_light", signal="judge_passed", verdict="pass", assertion=1),
     "--assertion is for db_state_assertion and nl_assertion"),
    (dict(run=BASELINE, scenario="tau2_retail__21", signal="nl_assertion", verdict="pass", assertion=2),
     "nl_assertion 2: the scenario has 1 NL assertions"),
])
def test_a_review_of_what_is_not_there_is_refused_and_nothing_is_stored(wh, kwargs, says):
    with pytest.raises(scorelake.InvalidArgument, match=says):
        wh.review(**kwargs, reviewer="alice")
    assert wh.reviews(history=True).is_empty()


def test_an_import_is_one_step_and_a_file_with_any_bad_line_stores_nothing(wh, tmp_path):
    good = tmp_path / "labels.csv"
    good.write_text("run_id,scenario_name,signal,verdict,assertion,note\n"
                    f"{BASELINE},qa__speed_of_light,judge_passed,pass,,right answer\n"
                    f"{BASELINE},tau2_retail__21,nl_assertion,PASS,1,\n")
    before = len(wh.log())
    done = runner.invoke(app, ["review", "--import", str(good), "--reviewer", "carol", "-w", wh.location])
    assert done.exit_code == 0, done.output
    assert len(wh.log()) == before + 1 and wh.log()[-1].detail == "2 reviews by carol of 2 scenarios"
    assert wh.reviews()[["signal", "verdict", "reviewer"]].rows() == [("judge_passed", "pass", "carol"),
                                                                      ("nl_assertion", "pass", "carol")]
    bad = tmp_path / "labels.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in [
        {"run_id": BASELINE, "scenario_name": "qa__moon_landing", "signal": "judge_passed", "verdict": "pass"},
        {"run_id": "eval_nope", "scenario_name": "x", "signal": "judge_passed", "verdict": "pass"},
        {"run_id": BASELINE, "scenario_name": "qa__moon_landing", "signal": "judge_passed", "verdict": "meh"},
        {"run_id": BASELINE, "scenario_name": "qa__moon_landing", "signal": "nope", "verdict": "fail"},
        {"run_id": BASELINE, "scenario_name": "qa__moon_landing", "signal": "judge_passed", "verdict": "fail",
         "reviewer": "dave"}]) + "\n")
    done = runner.invoke(app, ["review", "--import", str(bad), "-w", wh.location])
    assert done.exit_code == 2
    assert "line 2: no run 'eval_nope'" in done.output and "line 3: verdict 'meh'" in done.output
    assert "line 4: unknown signal 'nope'" in done.output and "nothing stored" in done.output
    assert wh.reviews(history=True).height == 2  # the bad file stored nothing


@pytest.mark.slow  # seconds of one call: the fast loop leaves it to CI
def test_rescore_with_reviews_recomputes_the_composite_by_the_runners_rules(wh):
    wh.rescore("plain", judge_threshold=0.9)  # the same flags without reviews: what reviews change
    people = "people"
    reviews = [
        ("qa__speed_of_light", "judge_passed", None, "pass"),  # its only failing whitelisted signal
        ("qa__moon_landing", "judge_passed", None, "pass"),  # stalled: still failed
        ("restaurant__pizza_veggie_combo", "judge_passed", None, "fail"),  # not whitelisted: still passes
        ("tau2_retail__21", "nl_assertion", 1, "pass"),  # one assertion: the pass rate recounted
        ("tau2_telecom__service_issue__airplane_mode_on__break_apn_settings__lock_sim_card_pin",
         "is_successful", None, "pass"),  # the composite itself
    ]
    for scenario, signal, assertion, verdict in reviews:
        wh.review(BASELINE, scenario, signal, verdict, assertion=assertion, reviewer="alice", note="checked")
    done = wh.rescore(people, judge_threshold=0.9, reviews=True)
    assert done.scenarios == 14
    plain, reviewed = scores(wh, "plain"), scores(wh, people)
    assert reviewed["qa__speed_of_light"]["is_successful"] and not plain["qa__speed_of_light"]["is_successful"]
    assert reviewed["qa__speed_of_light"]["unreviewed"] == "judge_passed=failed"
    assert reviewed["qa__moon_landing"]["judge_passed"] and reviewed["qa__moon_landing"]["is_successful"] is False
    assert reviewed["restaurant__pizza_veggie_combo"]["judge_passed"] is False
    assert reviewed["restaurant__pizza_veggie_combo"]["is_successful"] is True
    retail = reviewed["tau2_retail__21"]
    assert retail["nl_assertion_pass_rate"] == 1.0 and retail["failed"] == ["db_state_match"]
    telecom = reviewed["tau2_telecom__service_issue__airplane_mode_on__break_apn_settings__lock_sim_card_pin"]
    assert telecom["is_successful"] is True and telecom["is_task_successful"] is True
    assert telecom["failed"] == plain[telecom["scenario_name"]]["failed"]  # the signals stay what they were
    untouched = set(plain) - {r[0] for r in reviews}
    columns = ["is_successful", "is_task_successful", "passed", "failed", "not_applicable", "excluded"]
    assert all({c: plain[s][c] for c in columns} == {c: reviewed[s][c] for c in columns} for s in untouched)
    # the rates add up the reviewed verdicts
    qa = wh.rates(run=BASELINE, policy=people).filter(pl.col("domain") == "qa").row(0, named=True)
    assert (qa["success_passed"], qa["judge_passed_passed"]) == (1, 1)
    nl = wh.rates(by="signal", run=BASELINE, policy=people).filter(pl.col("signal") == "nl_assertion").row(0, named=True)
    assert (nl["passed"], nl["total"]) == (1, 1)
    policies = wh.policies()
    assert policies.filter(pl.col("name") == people)["reviews"].to_list() == [True]
    assert policies.filter(pl.col("name") == "plain")["reviews"].to_list() == [False]
    assert wh.check().consistent
    # every view of a policy works under one that takes reviews
    assert "Overall Success Rate" in wh.summary(BASELINE, policy=people)
    assert wh.history(policy=people).height == 1 and "<html" in wh.report(policy=people)
    assert wh.compare(BASELINE, BASELINE, policy=people).broken == []


@pytest.mark.slow  # seconds of one call: the fast loop leaves it to CI
def test_running_rescore_again_picks_up_the_reviews_made_since(wh):
    wh.rescore("people", reviews=True)
    assert not scores(wh, "people")["qa__speed_of_light"]["is_successful"]
    version = scores(wh, "people")["qa__speed_of_light"]["reviews_version"]
    wh.review(BASELINE, "qa__speed_of_light", "judge_passed", "pass", reviewer="alice")
    again = wh.rescore("people")
    assert again.scenarios == 14  # the reviewed run, scored again (and only it)
    now = scores(wh, "people")["qa__speed_of_light"]
    assert now["is_successful"] and now["reviews_version"] > version
    assert wh.rescore("people").scenarios == 0  # nothing new
    wh.review(BASELINE, "qa__speed_of_light", "judge_passed", withdraw=True, reviewer="alice")
    wh.rescore("people")
    assert not scores(wh, "people")["qa__speed_of_light"]["is_successful"]
    assert wh.check().consistent
    summary = wh.summary(BASELINE, policy="people")
    assert summary == wh.summary(BASELINE)  # no standing review left: upstream's own numbers


def test_an_ingest_scores_policies_that_take_reviews(wh, tmp_path):
    wh.review(BASELINE, "qa__speed_of_light", "judge_passed", "pass", reviewer="alice")
    wh.rescore("people", reviews=True)
    more = tmp_path / "more"
    more.mkdir()
    (more / "eval_20260904_083000").symlink_to(CONFORMANCE / "eval_20260904_083000")
    wh.ingest(more)
    assert wh.scenarios(run="eval_20260904_083000", policy="people").height == 14
    assert wh.check().consistent


def test_show_says_what_a_review_changed_and_by_whom(wh):
    wh.review(BASELINE, "qa__speed_of_light", "judge_passed", "pass", reviewer="alice", note="a correct paraphrase")
    wh.rescore("people", reviews=True)
    shown = runner.invoke(app, ["show", BASELINE, "qa__speed_of_light", "--policy", "people", "-w", wh.location])
    assert shown.exit_code == 0, shown.output
    assert "failed → passed by alice: a correct paraphrase" in shown.output and "PASSED" in shown.output
    plain = runner.invoke(app, ["show", BASELINE, "qa__speed_of_light", "-w", wh.location])
    assert "reviewed passed by alice: a correct paraphrase" in plain.output and "FAILED" in plain.output


def test_the_review_command_line(wh):
    base = ["-w", wh.location]
    done = runner.invoke(app, ["review", BASELINE, "qa__speed_of_light", "--signal", "judge_passed", "--verdict",
                               "pass", "--reviewer", "alice", "--note", "ok", *base])
    assert done.exit_code == 0, done.output
    listed = runner.invoke(app, ["reviews", "--format", "json", *base])
    rows = json.loads(listed.output)
    assert [(r["scenario_name"], r["verdict"], r["reviewer"]) for r in rows] == [("qa__speed_of_light", "pass", "alice")]
    assert runner.invoke(app, ["review", BASELINE, "qa__speed_of_light", "--signal", "judge_passed", *base]).exit_code == 2
    refused = runner.invoke(app, ["review", BASELINE, "nope", "--signal", "judge_passed", "--verdict", "pass", *base])
    assert refused.exit_code == 2 and "no scenario 'nope'" in refused.output
    assert runner.invoke(app, ["rescore", "--policy", "people", "--reviews", *base]).exit_code == 0
    table = runner.invoke(app, ["policies", *base])
    assert "reviews" in table.output and "yes" in table.output


@pytest.mark.slow
def test_two_reviewers_at_once_lose_nothing(wh):
    """Two processes reviewing at once, while a third holds the writer lock for a moment (an ingest):
    each review waits its turn and lands."""
    env = {**os.environ, "SCORELAKE_REVIEWER": "someone"}
    scenarios = ["qa__speed_of_light", "qa__moon_landing", "simple_qa_1", "qa__telephone_inventor"]
    store = wh._reads.store
    held = threading.Event()

    def hold_the_lock() -> None:
        with store.lock.hold():
            held.set()
            time.sleep(2)

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    held.wait()
    reviewers = [subprocess.Popen([SCORELAKE, "review", BASELINE, name, "--signal", "judge_passed", "--verdict",
                                   "pass", "-w", wh.location], env=env, stderr=subprocess.PIPE, text=True)
                 for name in scenarios]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in reviewers]
    holder.join()
    assert all(code == 0 for code, _ in results), results
    assert sorted(wh.reviews()["scenario_name"]) == sorted(scenarios)
    assert wh.check().consistent


@pytest.mark.slow  # seconds of one call: the fast loop leaves it to CI
def test_the_judge_measured_against_people(wh):
    verdicts = {"qa__speed_of_light": "pass", "qa__telephone_inventor": "fail", "simple_qa_1": "fail",
                "qa__moon_landing": "pass", "customer_service__order_delay": "fail"}
    for scenario, verdict in verdicts.items():
        wh.review(BASELINE, scenario, "judge_passed", verdict, reviewer="alice")
    wh.review(BASELINE, "tau2_retail__21", "nl_assertion", "pass", assertion=1, reviewer="alice")
    c = wh.compare_judges("human", "recorded", sweep=True)
    row = c.agreement.filter((pl.col("domain") == "(all)") & (pl.col("kind") == "judge_passed")).row(0, named=True)
    recorded = scores(wh, "recorded")
    said = {s: recorded[s]["judge_passed"] for s in verdicts}
    errored = {r["scenario_name"] for r in wh.judge_errors(run=BASELINE).iter_rows(named=True)}
    pairs = [(verdicts[s] == "pass", said[s]) for s in verdicts if s not in errored]
    both = sum(h and j for h, j in pairs)
    assert row["pairs"] == len(pairs) and row["both_pass"] == both
    judge_passes, human_passes = sum(j for _, j in pairs), sum(h for h, _ in pairs)
    assert row["precision"] == (both / judge_passes if judge_passes else None)
    assert row["recall"] == (both / human_passes if human_passes else None)
    nl = c.agreement.filter((pl.col("domain") == "(all)") & (pl.col("kind") == "nl_assertion")).row(0, named=True)
    assert nl["pairs"] == 1 and nl["only_a"] == 1  # people pass the assertion the judge failed
    assert c.sweep is not None and set(c.sweep.table["threshold"]) <= {recorded[s]["judge_score"] for s in verdicts}
    assert c.sweep.best is None and c.sweep.note.startswith("too few labels")  # 5 labels recommend nothing
    assert c.sweep.in_use == sorted({recorded[s]["judge_threshold"] for s in verdicts} - {None})
    shown = runner.invoke(app, ["compare-judges", "human", "recorded", "--sweep", "-w", wh.location])
    assert shown.exit_code == 0, shown.output
    assert "precision" in shown.output and "threshold in use" in shown.output and "too few labels" in shown.output
    refused = runner.invoke(app, ["compare-judges", "recorded", "recorded", "-w", wh.location])
    assert refused.exit_code == 2


def sweep_pairs(scores: list[float], human: list[bool]) -> pl.DataFrame:
    n = len(scores)
    return pl.DataFrame({"score_a": [None] * n, "score_b": scores, "passed_a": human, "passed_b": [None] * n,
                         "error_a": [False] * n, "error_b": [False] * n, "threshold_a": [None] * n,
                         "threshold_b": [0.9] * n},
                        schema={"score_a": pl.Float64, "score_b": pl.Float64, "passed_a": pl.Boolean,
                                "passed_b": pl.Boolean, "error_a": pl.Boolean, "error_b": pl.Boolean,
                                "threshold_a": pl.Float64, "threshold_b": pl.Float64})


def test_the_threshold_sweep_names_the_threshold_that_agrees_best():
    # five times the same six labels: 30 pairs, enough to recommend
    sweep = threshold_sweep(sweep_pairs([0.2, 0.4, 0.6, 0.7, 0.9, 1.0] * 5,
                                        [False, False, True, True, True, True] * 5), truth="a")
    table = sweep.table
    assert table["threshold"].to_list() == [0.2, 0.4, 0.6, 0.7, 0.9, 1.0] and sweep.in_use == [0.9]
    assert sweep.best == 0.6 and table.filter(pl.col("threshold") == 0.6)["agreement"][0] == 1.0
    assert table.filter(pl.col("threshold") == 0.9)["agreement"][0] == 4 / 6
    assert table.filter(pl.col("threshold") == 0.6)["kappa"][0] == cohen_kappa(20, 0, 0, 10)[0] == 1.0
    assert sweep.note is None


def test_the_sweep_says_too_few_labels_and_kappa_undefined_instead_of_recommending():
    few = threshold_sweep(sweep_pairs([0.2, 0.4, 0.6, 0.7, 0.9, 1.0], [False, False, True, True, True, True]), "a")
    assert few.best is None and few.note.startswith("too few labels: 6 reviewed pairs")
    one_kind = threshold_sweep(sweep_pairs([0.5, 0.9] * 15, [True, True] * 15), "a")  # people never failed one
    assert one_kind.table["kappa"].is_null().all() and "kappa undefined" in one_kind.note
    single = threshold_sweep(sweep_pairs([0.5], [True]), "a")
    assert single.best is None and single.table["kappa"].is_null().all()


def test_krippendorffs_alpha_matches_a_hand_computed_case():
    # Four units rated by three raters (one rater missing on the third): D_o and D_e by the definition.
    units = [[True, True, True], [True, True, False], [False, False], [False, True, False]]
    # pairable values n = 11; observed disagreement D_o = sum over units of mismatched ordered pairs / (m - 1)
    d_o = (0 + 4 / 2 + 0 + 4 / 2) / 11
    n_true, n_false = 6, 5
    d_e = 2 * n_true * n_false / (11 * 10)
    assert krippendorff_alpha(units) == pytest.approx(1 - d_o / d_e)
    assert krippendorff_alpha([[True, True], [False, False]]) == 1.0
    assert krippendorff_alpha([[True, True], [True, True]]) is None  # one value throughout: undefined
    assert krippendorff_alpha([[True], [False]]) is None  # nothing pairable


def test_three_judges_or_more_add_krippendorffs_alpha():
    from scorelake.transforms.analysis import compare_judges

    rows = [(judge, f"s{i}", passed) for i, votes in enumerate([(True, True, True), (True, False, True),
                                                                 (False, False, False), (True, True, False)])
            for judge, passed in zip(("human", "a", "b"), votes)]
    verdicts = pl.DataFrame([{"judge": j, "run_id": "r", "scenario_name": s, "domain": "qa", "kind": "judge_passed",
                              "assertion_index": None, "assertion": None, "score": None, "passed": p,
                              "judge_error": False, "threshold": 0.5} for j, s, p in rows],
                            schema={"judge": pl.String, "run_id": pl.String, "scenario_name": pl.String,
                                    "domain": pl.String, "kind": pl.String, "assertion_index": pl.Int64,
                                    "assertion": pl.String, "score": pl.Float64, "passed": pl.Boolean,
                                    "judge_error": pl.Boolean, "threshold": pl.Float64})
    c = compare_judges(["human", "a", "b"], verdicts)
    units = [[True, True, True], [True, False, True], [False, False, False], [True, True, False]]
    alpha = c.alpha.filter(pl.col("domain") == "(all)").row(0, named=True)
    assert alpha["units"] == 4 and alpha["alpha"] == pytest.approx(krippendorff_alpha(units))
    row = c.agreement.filter(pl.col("domain") == "(all)").row(0, named=True)
    assert (row["both_pass"], row["only_a"], row["only_b"], row["neither"]) == (2, 1, 0, 1)
    assert row["precision"] == 1.0 and row["recall"] == 2 / 3


@pytest.mark.slow
@pytest.mark.browser
def test_a_review_through_the_viewers_queue_in_chromium(tmp_path, browser):
    """A person opens the review queue, reads the first judge failure, disagrees with its outcome
    (a note that tries to inject script), and goes on: the review is stored, shown as text, counted
    by a policy that takes reviews; without the token nothing is written."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(CONFORMANCE / BASELINE)
    server, url = serve_view(wh.location, "--review", "--token", TOKEN)
    try:
        assert urllib_status(f"{url}/review") == 401  # the token is required on loopback too
        browser.get(f"{url}/review?token={TOKEN}&pick=errors")
        left = browser.find_element(By.ID, "left").text
        browser.find_element(By.ID, "start").click()
        WebDriverWait(browser, 30).until(lambda b: "/scenarios/" in b.current_url)
        first = browser.current_url.split("/scenarios/")[1].split("?")[0]
        row = browser.find_element(By.ID, "review-is_successful-")
        row.find_element(By.NAME, "note").send_keys("<script>document.title='owned'</script>")
        row.find_element(By.NAME, "reviewer").send_keys("alice")
        row.find_element(By.CSS_SELECTOR, "button.disagree").click()
        WebDriverWait(browser, 30).until(lambda b: f"/scenarios/{first}" not in b.current_url)
        assert "/scenarios/" in browser.current_url  # on to the next in the queue
        # the reviewer's name is remembered for the next form
        assert browser.find_element(By.CSS_SELECTOR, "#review-is_successful- input[name=reviewer]").get_attribute(
            "value") == "alice"
        browser.get(f"{url}/runs/{BASELINE}/scenarios/{first}?token={TOKEN}")
        standing = browser.find_element(By.CSS_SELECTOR, "#review-is_successful- td.standing").text
        assert "by alice: <script>document.title='owned'</script>" in standing and browser.title != "owned"
        browser.get(f"{url}/review?token={TOKEN}&pick=errors")
        assert browser.find_element(By.ID, "left").text != left
    finally:
        server.terminate()
        server.wait(timeout=30)
    (review,) = wh.reviews().iter_rows(named=True)
    assert (review["scenario_name"], review["signal"], review["reviewer"]) == (first, "is_successful", "alice")
    before = scores(wh, "recorded")[first]["is_successful"]
    wh.rescore("people", reviews=True)
    assert scores(wh, "people")[first]["is_successful"] is (not before)
    assert wh.summary(BASELINE, policy="people") != wh.summary(BASELINE)  # the re-scored summary counts it


def serve_view(warehouse: str, *args: str):
    from tests.test_view import serve

    return serve(Path(warehouse), *args)


def urllib_status(url: str) -> int:
    import urllib.error
    import urllib.request

    try:
        return urllib.request.urlopen(url, timeout=10).status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_an_import_of_odd_but_valid_or_hostile_files_ends_in_a_message_never_a_traceback(wh, tmp_path):
    long_note = tmp_path / "long.csv"  # a 200 KB note: past the csv module's default 128 KiB field
    long_note.write_text("run_id,scenario_name,signal,verdict,note\n"
                         f'{BASELINE},qa__speed_of_light,judge_passed,pass,"{"why " * 50_000}"\n')
    done = runner.invoke(app, ["review", "--import", str(long_note), "--reviewer", "carol", "-w", wh.location])
    assert done.exit_code == 0, done.output
    assert len(wh.reviews()["note"][0]) == 200_000

    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 5000 + "]" * 5000 + "\n")
    huge = tmp_path / "huge.jsonl"
    huge.write_text(json.dumps({"run_id": BASELINE, "scenario_name": "qa__speed_of_light", "signal": "nl_assertion",
                                "verdict": "pass"})[:-1] + ', "assertion": 1e400}\n')
    fifo = tmp_path / "labels.fifo"
    os.mkfifo(fifo)
    for path, says in ((deep, "line 1: not JSON (nested too deep)"), (huge, "assertion 'inf' is not a whole number"),
                       (Path("/dev/zero"), "not a regular file"), (fifo, "not a regular file"),
                       (tmp_path / "absent.csv", "no such file")):
        started = time.monotonic()
        done = runner.invoke(app, ["review", "--import", str(path), "-w", wh.location])
        assert done.exit_code == 2 and says in done.output, (path, done.output)
        assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
        assert time.monotonic() - started < 30
    assert wh.reviews(history=True).height == 1


def test_an_import_killed_before_its_log_step_is_completed_by_importing_it_again(wh, tmp_path, monkeypatch):
    from scorelake.storage._history import CommitLog as History

    labels = tmp_path / "labels.csv"
    labels.write_text("run_id,scenario_name,signal,verdict\n" + "".join(
        f"{BASELINE},{name},judge_passed,pass\n" for name in ("qa__speed_of_light", "qa__moon_landing")))
    steps = len(wh.log())
    real = History.record

    def killed(self, operation, detail):
        if operation == "review":
            raise KeyboardInterrupt  # as a kill -9 after the rows landed, before the log step
        return real(self, operation, detail)

    monkeypatch.setattr(History, "record", killed)
    with pytest.raises(KeyboardInterrupt):
        wh.import_reviews(labels, reviewer="carol")
    monkeypatch.setattr(History, "record", real)
    stored = lambda: wh._reads.store.tables.read("reviews").collect().height  # noqa: E731 (the views wait for the step)
    assert stored() == 2 and len(wh.log()) == steps  # stored, no log step
    wh.import_reviews(labels, reviewer="carol")  # again: nothing doubled, the step completed
    assert stored() == 2 and wh.reviews(history=True).height == 2
    assert len(wh.log()) == steps + 1 and wh.log()[-1].detail == "2 reviews by carol of 2 scenarios"


def test_the_rate_corrected_by_people_matches_a_case_worked_out_by_hand():
    from scorelake.transforms.analysis import Labels, rogan_gladen

    # the judge passes 60 of 100; people's 30 labels: of 20 they passed it passed 18 (Se 0.9), of 10
    # they failed it failed 8 (Sp 0.8): (0.6 + 0.8 - 1) / (0.9 + 0.8 - 1) = 4/7
    fixed = rogan_gladen(60, 100, Labels(both_pass=18, judge_fails=2, both_fail=8, judge_passes=2))
    variance = (0.6 * 0.4 / 100 + (4 / 7) ** 2 * 0.9 * 0.1 / 20 + (3 / 7) ** 2 * 0.8 * 0.2 / 10) / 0.7 ** 2
    assert fixed.rate == pytest.approx(4 / 7)
    assert fixed.ci_low == pytest.approx(4 / 7 - 1.959963984540054 * variance ** 0.5)
    assert fixed.ci_high == pytest.approx(4 / 7 + 1.959963984540054 * variance ** 0.5)
    assert fixed.ci_low == pytest.approx(0.3404, abs=1e-4) and fixed.ci_high == pytest.approx(0.8025, abs=1e-4)
    assert rogan_gladen(60, 100, Labels(5, 0, 0, 0)).rate is None  # no label people failed
    assert rogan_gladen(60, 100, Labels(1, 1, 1, 1)).rate is None  # the judge no better than chance


def test_rates_calibrated_by_the_runs_labels(wh):
    said = scores(wh, "recorded")
    judged = [s for s, r in said.items() if r["judge_passed"] is not None and not r["stalled"]]
    passed = [s for s in judged if said[s]["judge_passed"]][:1]
    failed = [s for s in judged if not said[s]["judge_passed"]][:2]
    assert len(passed) == 1 and len(failed) == 2
    # people agree with the judge on two and pass one it failed: Se 1/2, Sp 1
    people = {passed[0]: "pass", failed[0]: "fail", failed[1]: "pass"}
    judged = [*passed, *failed]
    for scenario, verdict in people.items():
        wh.review(BASELINE, scenario, "judge_passed", verdict, reviewer="alice")
    from scorelake.transforms.analysis import Labels, rogan_gladen

    pairs = [(people[s] == "pass", said[s]["judge_passed"]) for s in judged]
    labels = Labels(sum(h and j for h, j in pairs), sum(h and not j for h, j in pairs),
                    sum(not h and not j for h, j in pairs), sum(not h and j for h, j in pairs))
    for row in wh.rates(run=BASELINE, calibrated=True).iter_rows(named=True):  # the run's labels, per domain
        expected = rogan_gladen(row["judge_passed_passed"] or 0, row["judge_passed_total"] or 0, labels)
        assert row["judge_labels"] == 3 and row["judge_passed_corrected"] == expected.rate
        assert row["judge_passed_corrected_ci_low"] == expected.ci_low
        assert (row["judge_sensitivity"], row["judge_specificity"]) == (0.5, 1.0)
        if row["judge_passed_total"]:  # (p + 1 - 1) / (1/2 + 1 - 1): the judge's rate doubled
            p = row["judge_passed_passed"] / row["judge_passed_total"]
            assert row["judge_passed_corrected"] == pytest.approx(min(1.0, p * 2))
    shown = runner.invoke(app, ["rates", "--run", BASELINE, "--calibrated", "-w", wh.location])
    assert shown.exit_code == 0 and "corrected [95% CI]" in shown.stdout and "specificity" in shown.stdout
    wh.rescore("people", reviews=True, prefect=False)
    with pytest.raises(scorelake.InvalidArgument, match="takes reviews"):
        wh.rates(run=BASELINE, policy="people", calibrated=True)


def test_a_label_plan_says_how_many_more_labels_and_the_queue_draws_them(wh):
    from scorelake.transforms.analysis import pairs_for_width

    # a width of 0.2 at agreement 0.8 and chance 0.5: (2 * 1.96)^2 * 0.16 / (0.25 * 0.04) = 245.9 -> 246
    assert pairs_for_width(0.8, 0.5, 0.2) == 246
    wh.review(BASELINE, "qa__speed_of_light", "judge_passed", "pass", reviewer="alice")
    c = wh.compare_judges("human", "recorded", plan=0.5)
    p = c.plan
    assert p.judge == "recorded" and p.guessed and p.labelled == 1
    assert p.needed == pairs_for_width(0.8, 0.5, 0.5) == 40  # more than the run has: every scenario is asked for
    strata = p.strata
    assert int(strata["labelled"].sum()) == 1
    assert (strata["more"] == strata["scenarios"] - strata["labelled"]).all()
    queue = wh.review_queue("sample", run=BASELINE, plan=p, seed=3)
    assert queue.height == p.more and "qa__speed_of_light" not in queue["scenario_name"].to_list()
    assert queue["reason"].str.starts_with("planned label: ").all()
    assert wh.review_queue("sample", run=BASELINE, plan=p, seed=3).equals(queue)  # the same for the same seed
    shown = runner.invoke(app, ["compare-judges", "human", "recorded", "--plan", "0.5", "-w", wh.location])
    assert shown.exit_code == 0 and "label more" in shown.stdout and "guessed" in shown.stdout


def test_the_queue_is_in_the_navigation_and_a_missing_token_gets_a_page_that_says_how(wh):
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    wh.review(BASELINE, "qa__speed_of_light", "judge_passed", "pass", reviewer="alice")
    wh.review(BASELINE, "qa__speed_of_light", "judge_passed", "fail", reviewer="bob")
    client = TestClient(make_app(wh, token=TOKEN, review=True))
    refused = client.get("/")
    assert refused.status_code == 401 and "A token is needed" in refused.text and "?token=" in refused.text
    client.cookies.set("scorelake_reviewer", "alice")
    page = client.get(f"/?token={TOKEN}").text
    assert 'id="nav-review"' in page and "1 reviewed by alice" in page and "1 where reviewers disagree" in page
    queue = client.get(f"/review?token={TOKEN}").text
    assert 'id="progress"' in queue and "<td>alice</td><td class=num>1</td>" in queue
    wh.review(BASELINE, "qa__moon_landing", "judge_passed", "pass", reviewer="alice")  # a new version: counted again
    assert "2 reviewed by alice" in client.get(f"/?token={TOKEN}").text
    assert 'id="nav-review"' not in TestClient(make_app(wh)).get("/").text  # read-only: no queue


def test_the_judge_errors_queue_puts_first_what_gates_success_and_says_what_does_not(wh):
    queue = wh.review_queue("errors", run=BASELINE)
    gates = {r["scenario_name"]: set(r["success_signals"]) for r in wh.scenarios(run=BASELINE).iter_rows(named=True)}
    for r in queue.iter_rows(named=True):
        assert r["gated"] == bool(gates[r["scenario_name"]] & {"judge_passed", "nl_assertion"})
        assert ("gates nothing here" in r["reason"]) == (not r["gated"])
    assert queue["gated"].to_list() == sorted(queue["gated"].to_list(), reverse=True)  # gated first
    assert queue["gated"].any() and not queue["gated"].all()  # the baseline has both kinds


def test_names_that_print_alike_are_one_reviewer_or_refused_and_names_are_bounded(wh, tmp_path):
    """NFKC and case-folded, Alice and ALICE (full-width too) are one voter and cannot outvote bob
    under majority; a zero-width space, a right-to-left override or Cyrillic letters among Latin
    ones are refused, naming why, as is a name over 64 characters; in an import, the line says so
    and nothing of the file is stored; the adjudicator a policy names is folded the same way."""
    scenario = "qa__speed_of_light"
    for name in ("Alice", "ＡＬＩＣＥ", " alice "):
        wh.review(BASELINE, scenario, "judge_passed", "fail", reviewer=name)
    wh.review(BASELINE, scenario, "judge_passed", "pass", reviewer="bob")
    wh.review(BASELINE, scenario, "judge_passed", "pass", reviewer="carol")
    assert set(wh.reviews(history=True)["reviewer"]) == {"alice", "bob", "carol"}
    majority = wh.rescore("by-majority", reviews=True, review_rule="majority", prefect=False).policy
    assert scores(wh, majority)[scenario]["judge_passed"] is True  # bob and carol outvote alice, once
    for name, why in (("alice\u200b", "U+200B"), ("a\u202elice", "U+202E"), ("\u0430lice", "cyrillic and latin"),
                      ("x" * 65, "at most 64")):
        with pytest.raises(scorelake.InvalidArgument, match=re.escape(why)):
            wh.review(BASELINE, scenario, "judge_passed", "fail", reviewer=name)
    labels = tmp_path / "labels.csv"
    labels.write_text(f"run_id,scenario_name,signal,verdict,reviewer\n{BASELINE},{scenario},judge_passed,fail,dave\n"
                      f"{BASELINE},{scenario},judge_passed,fail,\u0430lice\n")
    with pytest.raises(scorelake.InvalidArgument, match="line 3: the reviewer's name mixes"):
        wh.import_reviews(labels)
    assert "dave" not in set(wh.reviews(history=True)["reviewer"])
    ruled = wh.rescore("by-alice", reviews=True, review_rule="adjudicated", adjudicator="ALICE", prefect=False).policy
    assert scores(wh, ruled)[scenario]["judge_passed"] is False  # alice's verdict decides


def test_corrected_rates_from_few_labels_read_as_uncertain_and_a_blank_or_a_clip_says_why(wh):
    from scorelake.transforms.analysis import Labels, rogan_gladen

    one_each = rogan_gladen(100, 100, Labels(1, 0, 1, 0))  # was 100.0 % [100.0 %, 100.0 %]
    assert one_each.rate == 1.0 and one_each.ci_low is None
    assert one_each.note == "too few labels for an interval: people passed 1 and failed 1 (it takes 10 of each)"
    nine = rogan_gladen(60, 100, Labels(9, 0, 8, 2))  # 9 passed by people: still too few, and it says so
    assert nine.ci_low is None and "people passed 9 and failed 10" in nine.note
    chance = rogan_gladen(60, 100, Labels(1, 1, 1, 1))
    assert chance.rate is None and "no better than chance" in chance.note
    assert rogan_gladen(60, 100, Labels(5, 0, 0, 0)).note == "no label people failed"
    clipped = rogan_gladen(100, 100, Labels(9, 1, 8, 2))  # (1 + 0.8 - 1) / (0.9 + 0.8 - 1): 114.3 %
    assert clipped.rate == 1.0 and clipped.note == "clipped from 114.3%"
    for width in ("1e-200", "1e-9", "0"):
        refused = runner.invoke(app, ["compare-judges", "human", "recorded", "--plan", width, "-w", wh.location])
        assert refused.exit_code == 2 and "from 0.01 to 2" in refused.output, refused.output


@pytest.mark.slow
def test_an_import_killed_9_just_after_its_reviews_commit_stands_nowhere_and_is_completed_once(wh, tmp_path):
    """A real kill -9 of the importing process at its log step (its 50,000 reviews written): none
    stands (no view shows a step the log lacks); importing the file again completes the step, the
    history not doubled, the log line naming how many reviewers, not each."""
    labels = tmp_path / "labels.csv"
    names = ("qa__speed_of_light", "qa__moon_landing")
    labels.write_text("run_id,scenario_name,signal,verdict,reviewer\n" + "".join(
        f"{BASELINE},{names[k % 2]},judge_passed,{'pass' if k % 3 else 'fail'},r{k}\n" for k in range(50_000)))
    killer = ("import os, scorelake\nfrom scorelake.storage._history import CommitLog\nreal = CommitLog.record\n"
              "def record(self, operation, detail):\n    if operation == 'review':\n"
              "        os.kill(os.getpid(), 9)\n    return real(self, operation, detail)\n"
              f"CommitLog.record = record\nscorelake.open({wh.location!r}).import_reviews({str(labels)!r})\n")
    killed = subprocess.run([sys.executable, "-c", killer], capture_output=True, timeout=300)
    assert killed.returncode == -9
    steps = len(wh.log())
    assert wh.reviews(history=True).height == 0 and wh._reads.store.tables.read("reviews").collect().height == 50_000
    again = runner.invoke(app, ["review", "--import", str(labels), "-w", wh.location])
    assert again.exit_code == 0, again.output
    assert wh.reviews(history=True).height == 50_000 == wh._reads.store.tables.read("reviews").collect().height
    assert len(wh.log()) == steps + 1 and wh.log()[-1].detail == "50000 reviews by 50,000 reviewers of 2 scenarios"


def test_a_tie_or_a_ruling_not_made_is_said_by_rescore_not_left_silent(wh):
    """Under majority, two reviewers one each way: no verdict stands, rescore says how many items are
    undecided and why, and show --policy says it is undecided (not the latest review as standing);
    under adjudicated, likewise until the adjudicator rules, then show names the adjudicator."""
    wh.review(BASELINE, "qa__moon_landing", "is_successful", "pass", reviewer="alice")
    wh.review(BASELINE, "qa__moon_landing", "is_successful", "fail", reviewer="bob")
    tied = runner.invoke(app, ["rescore", "--policy", "tied", "--reviews", "--review-rule", "majority",
                               "-w", wh.location])
    assert tied.exit_code == 0 and "1 reviewed item(s) undecided: its reviewers are tied" in tied.stderr
    ruled = runner.invoke(app, ["rescore", "--policy", "ruled", "--reviews", "--review-rule", "adjudicated",
                                "--adjudicator", "carol", "-w", wh.location])
    assert ruled.exit_code == 0 and "the adjudicator has not ruled" in ruled.stderr
    shown = runner.invoke(app, ["show", BASELINE, "qa__moon_landing", "--policy", "tied", "-w", wh.location])
    assert "undecided (2 reviewers, tied): no review stands under the policy's rule" in shown.stdout, shown.stdout
    assert "by bob" not in shown.stdout  # the latest review is not described as the one that stands
    wh.review(BASELINE, "qa__moon_landing", "is_successful", "fail", reviewer="carol")
    assert wh.rescore("ruled", prefect=False).undecided == 0
    shown = runner.invoke(app, ["show", BASELINE, "qa__moon_landing", "--policy", "ruled", "-w", wh.location])
    assert "→ failed by the adjudicator carol" in shown.stdout, shown.stdout
