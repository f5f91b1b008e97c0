"""A verdict you can trust without reading it (issue 60): a judge kept with a guarantee and the rest
escalated, rates from the judge and few labels (PPI++, active labels), and a gate corrected for its
many tests; each held to an outside reference (ppi_py, scipy, statsmodels) and checked by simulation."""

from __future__ import annotations

import bisect
import csv
import math
import random
from fractions import Fraction

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from scorelake.transforms.analysis import (
    active_rate,
    adjusted_p_values,
    binomial_cdf,
    draw,
    gate_tests,
    inclusion_probabilities,
    mcnemar_exact,
    minimum_detectable_difference,
    ppi_rate,
    select,
    upper_bound,
)
from tests.conftest import REPO

runner = CliRunner()


# ---- the arithmetic, against its outside references -------------------------------------------------

# scipy's binom.cdf and beta.ppf (R's pbinom and qbeta agree), scipy 1.17.1, frozen here: the suite
# carries no scipy
BINOMIAL = [(10, 0, 0.1, 0.34867844009999993, 0.2056717652757185), (46, 4, 0.2, 0.03316596117431627, 0.16630843039212093),
            (300, 17, 0.05, 0.7532695491598583, 0.07781572397877896),
            (1000, 90, 0.1, 0.15823814139344086, 0.10271308265860538), (5, 5, 0.3, 1.0, None)]


def test_the_binomial_tail_and_its_exact_bound_equal_scipys():
    for n, k, p, cdf, upper in BINOMIAL:
        assert binomial_cdf(k, n, p) == pytest.approx(cdf, rel=1e-9)
        assert binomial_cdf(k, n, p) == pytest.approx(  # and exact rational arithmetic
            float(sum(Fraction(math.comb(n, i)) * Fraction(p) ** i * (1 - Fraction(p)) ** (n - i)
                      for i in range(k + 1))), rel=1e-12)
        if upper is not None:  # Clopper-Pearson's one-sided upper 90% bound: the beta quantile
            assert upper_bound(k, n, 0.1) == pytest.approx(upper, abs=1e-9)


def test_holm_and_benjamini_hochberg_equal_statsmodels():
    # statsmodels' multipletests(p, method="holm" / "fdr_bh"), statsmodels 0.15.0 (R's p.adjust agrees)
    p = [0.012, 0.3, 0.004, 0.049, 0.81, 0.02, 0.7]
    assert adjusted_p_values(p, "holm") == pytest.approx([0.072, 0.9, 0.028, 0.196, 1.0, 0.1, 1.0])
    assert adjusted_p_values(p, "bh") == pytest.approx([0.042, 0.42, 0.028, 0.08575, 0.81, 0.046666666667, 0.81])
    assert adjusted_p_values([0.01, 0.04], "none") == [0.01, 0.04]
    assert adjusted_p_values([0.03], "holm") == [0.03]


def test_ppi_plus_plus_equals_ppi_py():
    import numpy as np

    from tests.ppi_reference.ppi import ppi_mean_ci, ppi_mean_pointestimate

    chance = random.Random(3)
    for n, big_n, accuracy in ((50, 500, 0.85), (200, 5000, 0.7), (30, 30, 0.95), (500, 2000, 0.55)):
        truth = [float(chance.random() < 0.6) for _ in range(n + big_n)]
        judge = [t if chance.random() < accuracy else 1 - t for t in truth]
        y, f, f_u = truth[:n], judge[:n], judge[n:]
        ours = ppi_rate(y, f, f_u)
        arrays = np.array(y), np.array(f), np.array(f_u)
        low, high = ppi_mean_ci(*arrays, alpha=0.05)
        assert ours.rate == pytest.approx(float(np.ravel(ppi_mean_pointestimate(*arrays))[0]), abs=1e-12)
        assert (ours.ci_low, ours.ci_high) == pytest.approx((max(0, float(low[0])), min(1, float(high[0]))), abs=1e-9)
        assert 0 <= ours.tuning <= 1


def test_a_judge_of_one_verdict_has_no_tuning_and_a_rate_needs_labels_and_unlabelled():
    assert ppi_rate([1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [1.0] * 10).tuning == 0.0  # the labels' own mean
    assert ppi_rate([1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [1.0] * 10).rate == pytest.approx(2 / 3)
    assert ppi_rate([1.0], [1.0], [1.0]).rate is None
    few = ppi_rate([1.0] * 9, [1.0] * 9, [1.0, 0.0] * 10)  # nine labels that agree: no [100%, 100%]
    assert few.rate == pytest.approx(1.0) and few.ci_low is None and few.ci_high is None
    assert ppi_rate([1.0, 0.0], [1.0, 0.0], []).rate is None


def test_the_threshold_is_the_lowest_that_passes_in_sequence_and_says_what_it_lacks():
    # 30 confident labels that agree, then 10 less confident ones half of which disagree
    chosen = select([0.9] * 30 + [0.6] * 10, [True] * 30 + [False, True] * 5, alpha=0.1, delta=0.1)
    assert (chosen.threshold, chosen.kept_labels, chosen.kept_disagreements) == (0.9, 30, 0)
    assert chosen.agreement_bound == pytest.approx(0.1 ** (1 / 30))  # (1 - bound)^30 = delta with none wrong
    few = select([0.9] * 10, [True] * 10, alpha=0.1, delta=0.1)
    assert few.threshold is None and few.more_labels == 12 and "22" in few.note  # 0.9^22 <= 0.1
    hopeless = select([0.9] * 50, [False] * 50, alpha=0.1, delta=0.1)
    assert hopeless.threshold is None and hopeless.more_labels is None and "no guarantee" in hopeless.note
    # a single most confident label cannot pass alone: the sequence starts where labels can
    assert select([0.99] + [0.8] * 40, [False] + [True] * 40, 0.1, 0.1).threshold == 0.8


def test_inclusion_probabilities_spend_the_budget_and_leave_no_scenario_out():
    doubt = [0.0] * 900 + [0.45] * 100
    chances = inclusion_probabilities(doubt, 100)
    assert sum(chances) == pytest.approx(100)
    assert min(chances) > 0 and max(chances) <= 1
    assert chances[-1] > 10 * chances[0]  # where the judge is likelier wrong
    assert inclusion_probabilities(doubt, 5000) == [1.0] * 1000
    assert sum(draw(chances, 1)) == sum(draw(chances, 1))


# ---- by simulation ---------------------------------------------------------------------------------

def _repeated_judge(chance: random.Random, asks: int = 5) -> tuple[float, bool]:
    """One verdict of a judge asked ``asks`` times: its confidence (the share of asks agreeing with
    the majority) and whether the majority agrees with people. Each scenario has its own flip rate
    (how often an ask passes, drawn from Beta(0.6, 0.6)); the judge is right more often the surer its
    asks lean (0.6 plus the lean: 96% at a confidence of 1, 86% at 0.8, 77% at 0.6)."""
    lean = chance.betavariate(0.6, 0.6)
    passes = sum(chance.random() < lean for _ in range(asks))
    return max(passes, asks - passes) / asks, chance.random() < min(1.0, 0.6 + abs(lean - 0.5))


@pytest.mark.slow  # 1,000 calibrations
def test_kept_verdicts_agree_at_least_one_minus_alpha_in_at_least_one_minus_delta_of_calibrations():
    alpha, delta = 0.1, 0.1
    chance = random.Random(60)
    fresh = sorted(_repeated_judge(chance) for _ in range(200_000))  # the judge's verdicts to come
    confidences = [c for c, _ in fresh]
    agree_above = [0] * (len(fresh) + 1)  # agreeing verdicts from position i to the end
    for i in range(len(fresh) - 1, -1, -1):
        agree_above[i] = agree_above[i + 1] + fresh[i][1]
    held, chosen = 0, 0
    for _ in range(1000):
        labels = [_repeated_judge(chance) for _ in range(400)]
        calibration = select([c for c, _ in labels], [a for _, a in labels], alpha, delta)
        if calibration.threshold is None:
            held += 1  # nothing kept: nothing promised
            continue
        chosen += 1
        start = bisect.bisect_left(confidences, calibration.threshold)
        held += agree_above[start] / (len(fresh) - start) >= 1 - alpha
    assert chosen > 900  # the guarantee is not bought by keeping nothing
    assert held >= 1000 * (1 - delta)


def test_ppi_intervals_cover_the_true_rate_at_their_nominal_level():
    chance = random.Random(11)
    covered = 0
    for _ in range(1000):
        truth = [float(chance.random() < 0.6) for _ in range(1200)]
        judge = [t if chance.random() < 0.8 else 1 - t for t in truth]
        estimate = ppi_rate(truth[:150], judge[:150], judge[150:])
        covered += estimate.ci_low <= 0.6 <= estimate.ci_high
    assert covered >= 930


def _population(chance: random.Random, size: int) -> tuple[list[float], list[float], list[float]]:
    """Scenarios where the judge's errors concentrate: a tenth it doubts and is wrong on 45% of the
    time, the rest it is sure of and wrong on 0.5%: (people's verdicts, the judge's, its doubt)."""
    people, judge, doubt = [], [], []
    for i in range(size):
        wrong = 0.45 if i % 10 == 0 else 0.005
        truth = float(chance.random() < 0.6)
        people.append(truth)
        judge.append(1 - truth if chance.random() < wrong else truth)
        doubt.append(wrong)
    return people, judge, doubt


def _mean_half_width(active: bool, budget: int, repeats: int, seed: int) -> tuple[float, float]:
    """The mean half-width of the 95% interval over ``repeats`` label draws of about ``budget``, and
    how often the interval covered the true rate."""
    chance = random.Random(seed)
    widths, covered = [], 0
    for r in range(repeats):
        people, judge, doubt = _population(chance, 5000)
        true_rate = sum(people) / len(people)
        if active:
            chances = inclusion_probabilities(doubt, budget)
            drawn = draw(chances, seed * 1000 + r)
            estimate = active_rate(judge, [y if d else None for y, d in zip(people, drawn)],
                                   [p if d else None for p, d in zip(chances, drawn)])
        else:
            picked = set(chance.sample(range(len(people)), budget))
            estimate = ppi_rate([people[i] for i in sorted(picked)], [judge[i] for i in sorted(picked)],
                                [judge[i] for i in range(len(people)) if i not in picked])
        widths.append((estimate.ci_high - estimate.ci_low) / 2)
        covered += estimate.ci_low <= true_rate <= estimate.ci_high
    return sum(widths) / repeats, covered / repeats


@pytest.mark.slow  # label draws over populations of 5,000
def test_active_labels_reach_three_points_with_at_most_half_the_labels_uniform_sampling_needs():
    uniform_needed = next(b for b in range(150, 600, 25) if _mean_half_width(False, b, 40, 1)[0] <= 0.03)
    width, coverage = _mean_half_width(True, uniform_needed // 2, 200, 2)
    assert width <= 0.03, (uniform_needed, width)
    assert coverage >= 0.9  # and the interval still covers: the chances keep it unbiased


# ---- in the warehouse ------------------------------------------------------------------------------

SAMPLE = "eval_20260903_140200"
WRONG = 10  # people disagree with the judge's least confident verdicts, this many


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """The sample with people's labels of JUDGE_PASSED on every judged scenario: agreeing with the
    judge except on its ten least confident verdicts."""
    wh = scorelake.open(tmp_path_factory.mktemp("guarantees") / "wh")
    wh.ingest(REPO / "data" / "runs", prefect=False)
    verdicts = wh.sql("SELECT * FROM judge_confidence WHERE judge = 'recorded' ORDER BY confidence, run_id, "
                      "scenario_name").to_dicts()
    path = tmp_path_factory.mktemp("labels") / "labels.csv"
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["run_id", "scenario_name", "signal", "verdict", "reviewer"])
        for n, v in enumerate(verdicts):
            out.writerow([v["run_id"], v["scenario_name"], "judge_passed", "pass" if v["passed"] == (n >= WRONG) else "fail",
                          "alice"])
    wh.import_reviews(path)
    return wh, verdicts


def test_a_calibration_is_stored_shown_and_keeps_what_it_promises(labelled):
    wh, verdicts = labelled
    done = runner.invoke(app, ["judges", "--calibrate", "recorded", "--alpha", "0.2", "--delta", "0.2",
                               "-w", wh.location])
    assert done.exit_code == 0, done.output
    standing = wh.calibrations("recorded").row(0, named=True)
    kept = [n for n, v in enumerate(verdicts) if v["confidence"] >= (standing["threshold"] or 2)]
    assert (standing["scope"], standing["labels"]) == ("(all)", len(verdicts))
    assert standing["kept_labels"] == len(kept) < len(verdicts)  # some escalated: 10 of 46 wrong is over 0.2
    assert standing["kept_disagreements"] == sum(n < WRONG for n in kept)
    assert standing["agreement_bound"] >= 0.8 - 1e-9
    assert standing["coverage"] == pytest.approx(
        sum(v["confidence"] >= standing["threshold"] for v in verdicts) / len(verdicts))
    listed = runner.invoke(app, ["judges", "-w", wh.location])
    assert "calibrations" in listed.output and "agrees at least" in listed.output
    per_domain = wh.calibrate_judge("recorded", 0.1, 0.1, by="domain")
    assert set(per_domain["scope"]) == {v["domain"] for v in verdicts}
    assert per_domain.filter(pl.col("threshold").is_null())["more_labels"].min() > 0  # a domain's few labels
    wh.calibrate_judge("recorded", 0.2, 0.2)  # the one that stands for what follows


def test_escalated_verdicts_are_a_queue_a_rate_and_left_to_people_by_a_selective_policy(labelled):
    wh, verdicts = labelled
    wh.calibrate_judge("recorded", 0.2, 0.2)
    threshold = wh.calibrations("recorded").filter(pl.col("scope") == "(all)")["threshold"][0]
    below = {(v["run_id"], v["scenario_name"]) for v in verdicts if v["confidence"] < threshold}
    queue = wh.review_queue("escalated", limit=1000)
    assert {(r["run_id"], r["scenario_name"]) for r in queue.iter_rows(named=True)} == below
    assert all("escalated" in reason for reason in queue["reason"])
    rates = wh.selective_rates().filter(pl.col("domain") == "(all)")
    assert rates["escalated"].sum() == len(below) and rates["judged"].sum() == len(verdicts)
    assert runner.invoke(app, ["rates", "--selective", "-w", wh.location]).exit_code == 0
    # judge_passed where the calibration keeps it; where it escalates, people's verdict (with --reviews)
    wh.rescore("kept", selective=True)
    wh.rescore("kept-or-people", reviews=True, selective=True)
    counted = {p: wh.rates(policy=p).filter(pl.col("domain") == "(all)")["judge_passed_total"].sum()
               for p in ("recorded", "kept", "kept-or-people")}
    stalled = set(wh.sql("SELECT run_id, scenario_name FROM scenario_scores s JOIN stg_policies p USING (policy_id) "
                         "WHERE p.name = 'recorded' AND s.stalled").rows())
    kept = len({(v["run_id"], v["scenario_name"]) for v in verdicts} - below - stalled)
    assert counted["kept"] == kept < counted["recorded"]
    assert counted["kept-or-people"] == counted["recorded"]  # every escalated verdict has a person's


def test_rates_ppi_sets_the_four_rates_side_by_side_and_an_active_draw_weighs_its_labels(labelled, tmp_path):
    wh, _ = labelled
    rates = wh.ppi_rates(run=SAMPLE).row(0, named=True)
    assert rates["domain"] == "(all)" and rates["labels"] == rates["judged"]  # every scenario labelled
    assert rates["labels_rate"] is not None and rates["judge_rate"] is not None
    done = runner.invoke(app, ["rates", "--ppi", "-w", wh.location])
    assert done.exit_code == 0 and "ppi rate [95% CI]" in done.output
    first = wh.review_queue("active", SAMPLE, budget=8, seed=3)
    again = wh.review_queue("active", SAMPLE, budget=8, seed=3)
    assert first.equals(again)  # the same draw read back, not drawn again
    draws = wh.sql("SELECT * FROM stg_label_draws")
    assert draws.height == first.height and draws["probability"].is_between(0, 1, closed="right").all()
    active = wh.ppi_rates(run=SAMPLE).row(0, named=True)
    assert active["ppi_method"] == "active" and active["ppi_rate"] is not None
    both = runner.invoke(app, ["rates", "--ppi", "--selective", "-w", wh.location])
    assert both.exit_code == 2 and "choose one" in both.output


def test_the_gate_corrects_for_its_many_tests_and_says_what_it_can_detect():
    counts = {"a": (400, 14, 4), "b": (400, 5, 5), "c": (400, 3, 2), "(all)": (1200, 22, 11)}
    deltas = pl.DataFrame([{"domain": d, "pairs": n, "broken": b, "fixed": f, "p_value": mcnemar_exact(b, f).p_value}
                           for d, (n, b, f) in counts.items()])
    holm = gate_tests(deltas, 0.05, "holm")
    raw = gate_tests(deltas, 0.05, "none")
    assert raw.filter(pl.col("domain") == "a")["regressed"][0]  # 14 broken against 4 alone: p 0.031
    assert not holm["regressed"].any()  # one of four tests: not beyond the noise once corrected
    assert holm["adjusted_p"].to_list() == pytest.approx(adjusted_p_values(deltas["p_value"].to_list(), "holm"))
    a = holm.row(0, named=True)
    assert a["min_detectable"] == pytest.approx(minimum_detectable_difference(400, 18, 0.05 / 4))
    assert a["min_detectable"] > raw.row(0, named=True)["min_detectable"]


@pytest.mark.slow  # a replayed run, 300 times
def test_a_run_replayed_against_itself_fails_the_gate_at_most_alpha_of_the_time():
    from bench.gate_replay import false_alarms

    rate = false_alarms(domains=8, scenarios_per_domain=60, flip_rate=0.1, replays=300, alpha=0.05, seed=5)
    assert rate <= 0.05
    assert math.isfinite(rate)


def test_the_viewer_queue_draws_active_labels_and_lists_the_escalated(labelled):
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    wh, _ = labelled
    client = TestClient(make_app(wh, token="t" * 16, review=True))
    client.cookies.set("scorelake_token", "t" * 16)
    page = client.get("/review?pick=active&budget=6&seed=9&token=" + "t" * 16)
    assert page.status_code == 200 and "drawn for a label with chance" in page.text
    assert 'name="budget" value="6"' in page.text
    assert client.get("/review?pick=escalated&token=" + "t" * 16).status_code == 200


def test_a_repeated_judges_confidence_is_the_share_of_its_asks_that_agree(tmp_path):
    import json

    from tests.judge_server import JudgeServer, Reply, user_content

    def two_to_one(payload: dict, _: int) -> Reply:  # the third ask of every other input says otherwise
        odd = payload["seed"] == 3 and hash(user_content(payload)) % 2
        return Reply(content=json.dumps({"score": 0.1 if odd else 0.95, "reason": "scripted"}))

    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(REPO / "data" / "runs", prefect=False)
    with JudgeServer(two_to_one) as server:
        wh.rejudge("thrice", url=server.url, repeat=3, seed=0, concurrency=4, retries=0, prefect=False)
    found = wh.sql("SELECT c.confidence, s.flip_rate FROM judge_confidence AS c JOIN judge_stability AS s "
                   "ON s.judge = 'thrice' AND s.run_id = c.run_id AND s.scenario_name = c.scenario_name "
                   "WHERE c.judge = 'thrice@majority'")
    assert found.height > 0 and set(found["confidence"].round(6)) <= {1.0, round(2 / 3, 6)}
    assert (found["confidence"] - (1 - found["flip_rate"])).abs().max() < 1e-12
    assert wh.calibrate_judge("thrice@majority")["judged"][0] == found.height
