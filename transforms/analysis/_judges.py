"""Comparing judges on the same stored inputs: agreement on JUDGE_PASSED and on each NL assertion
per domain, Cohen's kappa with a 95% interval, the mean score difference, the flips; against people
(the judge ``human``: the standing reviews) the judge's precision and recall and the threshold that
agrees best; over more than two judges, Krippendorff's alpha."""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

from scorelake.transforms.analysis._planning import LabelPlan, plan_labels
from scorelake.transforms.analysis._stats import Z95, clopper_pearson

MIN_KAPPA_PAIRS = 10  # below this many pairs kappa has no interval: "too few pairs" (one pair gave [0.00, 0.00])
MIN_NORMAL = 5  # the large-sample interval wants this many agreements and disagreements; fewer: the exact one


def cohen_kappa(both: int, only_a: int, only_b: int, neither: int) -> tuple[float | None, float | None, float | None]:
    """Cohen's kappa of two raters' pass/fail and its 95% interval, clipped to [-1, 1]: the large-sample
    one (standard error sqrt(p_o (1 - p_o) / (n (1 - p_e)^2))) while the pairs hold ``MIN_NORMAL``
    agreements and disagreements or more; else, where that approximation fails (it gave [1.00, 1.00]
    for perfect agreement), the exact one: Clopper-Pearson's interval of the agreement p_o taken
    through kappa = (p_o - p_e) / (1 - p_e) at the chance agreement p_e seen. No interval (None)
    below ``MIN_KAPPA_PAIRS`` pairs; None throughout where kappa is undefined (no pairs, or both
    raters constant and equal: chance agreement 1)."""
    n = both + only_a + only_b + neither
    if n == 0:
        return None, None, None
    agreed = both + neither
    observed = agreed / n
    chance = ((both + only_a) * (both + only_b) + (neither + only_b) * (neither + only_a)) / n ** 2
    if chance >= 1:
        return None, None, None
    kappa = (observed - chance) / (1 - chance)
    if n < MIN_KAPPA_PAIRS:
        return kappa, None, None
    if min(agreed, n - agreed) < MIN_NORMAL:
        low, high = ((p - chance) / (1 - chance) for p in clopper_pearson(agreed, n))
    else:
        se = math.sqrt(observed * (1 - observed) / (n * (1 - chance) ** 2))
        low, high = kappa - Z95 * se, kappa + Z95 * se
    return kappa, max(-1.0, low), min(1.0, high)


HUMAN = "human"  # the built-in judge of people's standing reviews (the latest per key); human:NAME one reviewer's


def is_people(judge: str) -> bool:
    return judge == HUMAN or judge.startswith(f"{HUMAN}:")


def krippendorff_alpha(units: list[list[bool]]) -> float | None:
    """Krippendorff's alpha for nominal data: each unit the values its raters gave (a unit with
    fewer than two values is not pairable and is left out). None where it is undefined (fewer than
    two pairable values, or a single value throughout: no expected disagreement)."""
    pairable = [u for u in units if len(u) >= 2]
    coincidence: dict[tuple[bool, bool], float] = {}
    for values in pairable:
        m = len(values)
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    coincidence[c, k] = coincidence.get((c, k), 0.0) + 1 / (m - 1)
    n = sum(coincidence.values())
    if n < 2:
        return None
    totals = {c: sum(v for (a, _), v in coincidence.items() if a == c) for c in (True, False)}
    observed = sum(v for (c, k), v in coincidence.items() if c != k)
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k) / (n - 1)
    return None if expected == 0 else 1 - observed / expected


@dataclass(frozen=True)
class JudgeComparison:
    judge_a: str
    judge_b: str
    # domain, kind (judge_passed | nl_assertion), pairs, counts, agreement, kappa and its interval, and
    # against people (one judge `human`) the other's precision and recall as a classifier of their verdict
    agreement: pl.DataFrame
    flips: pl.DataFrame  # run_id, scenario_name, domain, kind, assertion_index, a, b (passed), score_a, score_b
    sweep: Sweep | None = None  # JUDGE_PASSED at each threshold against people
    alpha: pl.DataFrame | None = None  # domain, kind, judges, units, alpha: over every judge compared
    plan: LabelPlan | None = None  # the labels that would bring the kappa interval to a width

    def as_json(self) -> dict:
        """The comparison as plain data (``--format json``)."""
        extra = {}
        if self.sweep is not None:
            extra.update(sweep=self.sweep.table.to_dicts(), best_threshold=self.sweep.best,
                         thresholds_in_use=self.sweep.in_use, sweep_note=self.sweep.note)
        if self.alpha is not None:
            extra["alpha"] = self.alpha.to_dicts()
        if self.plan is not None:
            extra["plan"] = {"judge": self.plan.judge, "width": self.plan.width, "labelled": self.plan.labelled,
                             "needed": self.plan.needed, "guessed": self.plan.guessed, "more": self.plan.more,
                             "strata": self.plan.strata.to_dicts()}
        return {"judge_a": self.judge_a, "judge_b": self.judge_b, "agreement": self.agreement.to_dicts(),
                "flips": self.flips.to_dicts(), **extra}


def _agreement(pairs: pl.DataFrame, kind: str, truth: str | None) -> list[dict]:
    """Per domain and over all: the 2x2 counts of the pairs where neither judge failed (and, where
    ``truth`` names the side that is people's, the other judge's precision and recall)."""
    answered = pairs.filter(~pl.col("error_a") & ~pl.col("error_b")).drop_nulls(["passed_a", "passed_b"])
    rows = []
    for domain, group in [("(all)", answered), *sorted(answered.group_by("domain"), key=lambda g: g[0][0])]:
        domain = domain if isinstance(domain, str) else domain[0]
        a, b = group["passed_a"], group["passed_b"]
        counts = [int((a & b).sum()), int((a & ~b).sum()), int((~a & b).sum()), int((~a & ~b).sum())]
        kappa, low, high = cohen_kappa(*counts)
        errored = pairs if domain == "(all)" else pairs.filter(pl.col("domain") == domain)
        diff = (group["score_b"] - group["score_a"]).mean() if "score_a" in group.columns and group.height else None
        # the judge's passes that people passed too, and people's passes the judge found
        judge_only, human_only = (counts[2], counts[1]) if truth == "a" else (counts[1], counts[2])
        precision = counts[0] / (counts[0] + judge_only) if truth and counts[0] + judge_only else None
        recall = counts[0] / (counts[0] + human_only) if truth and counts[0] + human_only else None
        rows.append({"domain": domain, "kind": kind, "pairs": group.height,
                     "judge_errors": int((errored["error_a"] | errored["error_b"]).sum()),
                     "both_pass": counts[0], "only_a": counts[1], "only_b": counts[2], "neither": counts[3],
                     "agreement": (counts[0] + counts[3]) / group.height if group.height else None,
                     "kappa": kappa, "kappa_ci_low": low, "kappa_ci_high": high, "mean_score_diff": diff,
                     "precision": precision, "recall": recall})
    return rows


def _pairs(verdicts: pl.DataFrame, judge_a: str, judge_b: str, kind: str) -> pl.DataFrame:
    """Two judges' verdicts of the same scenarios (or NL assertions), side by side."""
    key = ["run_id", "scenario_name"] + (["assertion_index"] if kind == "nl_assertion" else [])
    side = lambda judge, s: verdicts.filter((pl.col("judge") == judge) & (pl.col("kind") == kind)).select(  # noqa: E731
        *key, *(["domain"] if s == "a" else []), *(["assertion"] if kind == "nl_assertion" else []),
        pl.col("score").alias(f"score_{s}"), pl.col("passed").alias(f"passed_{s}"),
        pl.col("threshold").alias(f"threshold_{s}"),
        pl.col("judge_error").fill_null(False).alias(f"error_{s}"))
    a, b = side(judge_a, "a"), side(judge_b, "b")
    if kind == "nl_assertion":
        b = b.rename({"assertion": "_assertion_b"})
    pairs = a.join(b, on=key).sort(key)
    if kind == "nl_assertion":
        pairs = pairs.with_columns(pl.coalesce("assertion", "_assertion_b").alias("assertion")).drop("_assertion_b")
    return pairs


# Below this many reviewed pairs the sweep recommends no threshold: the kappa interval of a few dozen
# labels is wider than the differences between thresholds (50 labels leave one at least 0.20 wide).
MIN_SWEEP_PAIRS = 30


@dataclass(frozen=True)
class Sweep:
    """JUDGE_PASSED at each candidate threshold against people's verdicts."""

    table: pl.DataFrame  # threshold, pairs, agreement, kappa and its interval, passes
    best: float | None  # the threshold that agrees best; None with too few labels (``note`` says why)
    in_use: list[float]  # the thresholds the reviewed scenarios are scored with now
    note: str | None = None


def threshold_sweep(pairs: pl.DataFrame, truth: str) -> Sweep:
    """For each candidate threshold (the distinct scores the judge gave the reviewed scenarios): the
    agreement and kappa of ``score >= t`` with people's verdicts (``truth``: their side), and the
    threshold that agrees best (then by kappa, then the lowest), beside the ones in use. Kappa is
    undefined (None) while people gave fewer than two passes or two fails; below ``MIN_SWEEP_PAIRS``
    pairs no threshold is recommended."""
    judge = "b" if truth == "a" else "a"
    scored = pairs.filter(~pl.col(f"error_{judge}")).drop_nulls([f"score_{judge}", f"passed_{truth}"]).filter(
        ~pl.col(f"score_{judge}").is_nan())
    human = scored[f"passed_{truth}"]
    defined = int(human.sum()) >= 2 and int((~human).sum()) >= 2
    rows = []
    for t in sorted(set(scored[f"score_{judge}"].to_list())):
        said = scored[f"score_{judge}"] >= t
        counts = [int((said & human).sum()), int((said & ~human).sum()), int((~said & human).sum()),
                  int((~said & ~human).sum())]
        kappa, low, high = cohen_kappa(*counts) if defined else (None, None, None)
        rows.append({"threshold": t, "pairs": scored.height, "agreement": (counts[0] + counts[3]) / scored.height,
                     "kappa": kappa, "kappa_ci_low": low, "kappa_ci_high": high, "passes": counts[0] + counts[1]})
    table = pl.DataFrame(rows, schema={"threshold": pl.Float64, "pairs": pl.Int64, "agreement": pl.Float64,
                                       "kappa": pl.Float64, "kappa_ci_low": pl.Float64, "kappa_ci_high": pl.Float64,
                                       "passes": pl.Int64})
    in_use = sorted(set(scored[f"threshold_{judge}"].drop_nulls().to_list()))
    if table.is_empty():
        return Sweep(table, None, in_use, "no reviewed scores")
    if scored.height < MIN_SWEEP_PAIRS:
        return Sweep(table, None, in_use, f"too few labels: {scored.height} reviewed pairs, at least "
                                          f"{MIN_SWEEP_PAIRS} are needed to recommend a threshold")
    best = table.sort([pl.col("agreement"), pl.col("kappa").fill_null(-2.0), pl.col("threshold")],
                      descending=[True, True, False]).row(0, named=True)
    return Sweep(table, best["threshold"], in_use,
                 None if defined else "kappa undefined: people gave fewer than two passes or two fails")


def _alpha(verdicts: pl.DataFrame, judges: list[str]) -> pl.DataFrame:
    """Krippendorff's alpha (nominal) over every judge, per kind and domain and over all: a unit is a
    scenario (JUDGE_PASSED) or an NL assertion, valued by each judge that answered it without failing."""
    answered = verdicts.filter(pl.col("judge").is_in(judges) & ~pl.col("judge_error").fill_null(False)).drop_nulls(
        "passed")
    units = answered.group_by("kind", "domain", "run_id", "scenario_name", "assertion_index").agg("passed")
    rows = []
    for kind in ("judge_passed", "nl_assertion"):
        of_kind = units.filter(pl.col("kind") == kind)
        if of_kind.is_empty():
            continue
        for domain, group in [("(all)", of_kind), *sorted(of_kind.group_by("domain"), key=lambda g: str(g[0][0]))]:
            domain = domain if isinstance(domain, str) else domain[0]
            values = group["passed"].to_list()
            rows.append({"domain": domain, "kind": kind, "judges": len(judges),
                         "units": sum(len(v) >= 2 for v in values), "alpha": krippendorff_alpha(values)})
    return pl.DataFrame(rows, schema={"domain": pl.String, "kind": pl.String, "judges": pl.Int64, "units": pl.Int64,
                                      "alpha": pl.Float64})


def _label_plan(verdicts: pl.DataFrame, pairs: pl.DataFrame, agreement: pl.DataFrame, judge: str, side: str,
                width: float) -> LabelPlan:
    """The labels that would bring the kappa of ``judge`` (the pairs' ``side``) against people to ``width``."""
    whole = agreement.filter((pl.col("domain") == "(all)") & (pl.col("kind") == "judge_passed"))
    counts = tuple(whole.row(0, named=True)[c] for c in ("both_pass", "only_a", "only_b", "neither")) \
        if whole.height else (0, 0, 0, 0)
    population = verdicts.filter((pl.col("judge") == judge) & (pl.col("kind") == "judge_passed")
                                 & ~pl.col("judge_error").fill_null(False)).select("domain", pl.col("passed")
                                                                                   .alias("judge_passed"))
    labelled = pairs.filter(~pl.col(f"error_{side}")).select("domain", pl.col(f"passed_{side}").alias("judge_passed"))
    return plan_labels(judge, width, counts, population, labelled)


def compare_judges(judges: list[str], verdicts: pl.DataFrame, sweep: bool = False,
                   plan_width: float | None = None) -> JudgeComparison:
    """Judge ``judges[1]`` against ``judges[0]`` on what both judged (``verdicts``:
    queries/judge_verdicts.sql rows); against ``human`` with precision, recall and, with ``sweep``,
    the thresholds; over three judges or more, Krippendorff's alpha over all of them."""
    judge_a, judge_b = judges[0], judges[1]
    truth = "a" if is_people(judge_a) else "b" if is_people(judge_b) else None
    pairs, nl_pairs = _pairs(verdicts, judge_a, judge_b, "judge_passed"), _pairs(verdicts, judge_a, judge_b,
                                                                                "nl_assertion")
    rows = _agreement(pairs, "judge_passed", truth) + (_agreement(nl_pairs, "nl_assertion", truth)
                                                        if nl_pairs.height else [])
    agreement = pl.DataFrame(rows, schema={
        "domain": pl.String, "kind": pl.String, "pairs": pl.Int64, "judge_errors": pl.Int64, "both_pass": pl.Int64,
        "only_a": pl.Int64, "only_b": pl.Int64, "neither": pl.Int64, "agreement": pl.Float64, "kappa": pl.Float64,
        "kappa_ci_low": pl.Float64, "kappa_ci_high": pl.Float64, "mean_score_diff": pl.Float64,
        "precision": pl.Float64, "recall": pl.Float64})
    flipped = lambda df: df.filter(pl.col("passed_a") != pl.col("passed_b"))  # noqa: E731
    verdict = flipped(pairs).select("run_id", "scenario_name", "domain", pl.lit("judge_passed").alias("kind"),
                                    pl.lit(None, pl.Int64).alias("assertion_index"), "passed_a", "passed_b",
                                    "score_a", "score_b", "error_a", "error_b")
    nl = flipped(nl_pairs).select("run_id", "scenario_name", "domain", pl.lit("nl_assertion").alias("kind"),
                                  pl.col("assertion_index").cast(pl.Int64), "passed_a", "passed_b",
                                  pl.lit(None, pl.Float64).alias("score_a"), pl.lit(None, pl.Float64).alias("score_b"),
                                  "error_a", "error_b")
    flips = pl.concat([verdict, nl]).sort("run_id", "scenario_name", "kind", "assertion_index", nulls_last=False)
    swept = threshold_sweep(pairs, truth) if sweep and truth else None
    alpha = _alpha(verdicts, judges) if len(judges) > 2 else None
    judge_side = "b" if truth == "a" else "a"
    plan = (_label_plan(verdicts, pairs, agreement, judges[0 if judge_side == "a" else 1], judge_side, plan_width)
            if plan_width is not None and truth else None)
    return JudgeComparison(judge_a, judge_b, agreement, flips, swept, alpha, plan)
