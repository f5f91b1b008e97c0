"""Comparing two runs like with like: the scenarios both ran with the same definition, paired; per
domain the pass rates with intervals, the delta with its Newcombe interval, an exact McNemar test on
the paired verdicts that labels the change (improved, regressed, inconclusive, unchanged, never
regressed within the noise) and the smallest difference the pairs could detect; apart, what cannot
be compared (scenarios only in one run, definitions that changed, another judge or other flags)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import polars as pl

from scorelake.transforms.analysis._latency import latency_change
from scorelake.transforms.analysis._stats import (
    McNemar,
    adjusted_p_values,
    mcnemar_exact,
    minimum_detectable_difference,
    newcombe_interval,
    wilson,
)
from scorelake.transforms.analysis._voice import voice_change
from scorelake.transforms.errors import check_range

LABELS = ("improved", "regressed", "inconclusive", "unchanged")


@dataclass(frozen=True)
class Comparison:
    run_a: str
    run_b: str
    # per domain and (all): passed/total/rate/interval of each run, delta and its interval, and on the
    # pairs: pairs, broken, fixed, the McNemar p-value, the label and the minimum detectable difference
    deltas: pl.DataFrame
    fixed: list[str]  # failed in A, passed in B
    broken: list[str]  # passed in A, failed in B
    domains_of_flips: dict[str, str]  # flipped scenario -> its domain
    paired: int
    mcnemar: McNemar
    alpha: float = 0.05
    only_a: list[str] = field(default_factory=list)  # scenarios run A has and run B has not
    only_b: list[str] = field(default_factory=list)
    changed_definitions: list[dict] = field(default_factory=list)  # scenario_name, changed (the parts)
    lineage_changes: list[str] = field(default_factory=list)  # judge or scoring flags that differ, in words
    like_with_like: bool = True  # False: every scenario of each run counted (--all)
    latency: pl.DataFrame | None = None  # per domain: medians, their difference and its bootstrap interval, p95s
    slowed: pl.DataFrame | None = None  # the scenarios whose median latency rose most
    voice: pl.DataFrame | None = None  # per domain: mean overlap and the agent's WER in each run, and the rise
    task_map: str | None = None  # the declared map that paired the scenarios (runs of two harnesses), or by name
    counterparts: dict[str, str] = field(default_factory=dict)  # under a task map: A's scenario -> B's

    @property
    def nothing_matches(self) -> str | None:
        """In words, when no scenario of A has a counterpart in B (the runs share nothing to compare)."""
        if self.paired or self.changed_definitions or not self.like_with_like:
            return None
        how = f"by the task map '{self.task_map}'" if self.task_map else "by name"
        hint = ("" if self.task_map else "; runs of two harnesses (a voice-agent session and a tau2-bench or other "
                "run) name their scenarios apart: declare which is which, compare --map FILE (columns a, b)")
        return f"nothing matches: no scenario of {self.run_a} has a counterpart in {self.run_b} {how}{hint}"

    def as_json(self) -> dict:
        """The comparison as plain data (``--format json``)."""
        return {"run_a": self.run_a, "run_b": self.run_b, "like_with_like": self.like_with_like,
                "task_map": self.task_map, "nothing_matches": self.nothing_matches,
                "domains": self.deltas.to_dicts(), "fixed": self.fixed, "broken": self.broken,
                "paired": self.paired, "alpha": self.alpha,
                "mcnemar": {"broken": self.mcnemar.broken, "fixed": self.mcnemar.fixed,
                            "p_value": self.mcnemar.p_value},
                "only_a": self.only_a, "only_b": self.only_b, "changed_definitions": self.changed_definitions,
                "lineage_changes": self.lineage_changes,
                "latency": None if self.latency is None else self.latency.to_dicts(),
                "slowed": None if self.slowed is None else self.slowed.to_dicts(),
                "voice": None if self.voice is None else self.voice.to_dicts()}

    def as_table(self) -> pl.DataFrame:
        """Everything in one table (for CSV): a row per domain with its rates, delta and the
        scenarios that flipped each way (``;``-joined); the paired count and the McNemar test, which
        are run-wide, on the ``(all)`` row."""
        flips = pl.DataFrame({"scenario_name": self.fixed + self.broken,
                              "flip": ["fixed"] * len(self.fixed) + ["broken"] * len(self.broken)},
                             schema={"scenario_name": pl.String, "flip": pl.String})
        domains = self.domains_of_flips
        per_domain = (flips.with_columns(domain=pl.col("scenario_name").replace_strict(domains, default=None,
                                                                                       return_dtype=pl.String))
                      .group_by("domain").agg(fixed=pl.col("scenario_name").filter(pl.col("flip") == "fixed"),
                                              broken=pl.col("scenario_name").filter(pl.col("flip") == "broken")))
        whole = pl.col("domain") == "(all)"
        return (self.deltas.drop("broken", "fixed").join(per_domain, on="domain", how="left", maintain_order="left")
                .with_columns(pl.when(whole).then(pl.lit(self.fixed)).otherwise(pl.col("fixed")).alias("fixed"),
                              pl.when(whole).then(pl.lit(self.broken)).otherwise(pl.col("broken")).alias("broken"))
                .with_columns(pl.col("fixed", "broken").list.join(";").fill_null(""),
                              pl.when(whole).then(self.paired).alias("paired"),
                              pl.when(whole).then(self.mcnemar.broken).alias("mcnemar_broken"),
                              pl.when(whole).then(self.mcnemar.fixed).alias("mcnemar_fixed"),
                              pl.when(whole).then(self.mcnemar.p_value).alias("mcnemar_p_value")))


@dataclass(frozen=True)
class Regression:
    """One thing a gate found worse in run B (``GateResult.regressions``)."""

    domain: str  # a domain, or "(all)": the whole run
    kind: str  # "regressed" (its composite rate, beyond the noise and the limit), "slower", "overlap" or "wer"
    figures: dict  # the comparison's row it rests on (deltas, latency or voice), "domain" and "label" included

    def as_json(self) -> dict:
        return self.figures


@dataclass
class GateResult:
    """Whether a candidate run may replace its base (``Warehouse.gate``)."""

    passed: bool
    regressions: list[Regression]  # in the order found: composite rates, then latency, then voice
    broken: dict[str, list[str]]  # per regressed domain, its scenarios that went from passed to failed
    comparison: Comparison  # what it rests on
    tests: pl.DataFrame | None = None  # per watched domain and (all): its test, corrected (gate_tests)
    correction: str = "holm"

    def as_json(self) -> dict:
        return {"passed": self.passed, "regressions": [r.as_json() for r in self.regressions], "broken": self.broken,
                "correction": self.correction, "tests": None if self.tests is None else self.tests.to_dicts(),
                "comparison": self.comparison.as_json()}


def gate_tests(deltas: pl.DataFrame, alpha: float, correction: str = "holm", power: float = 0.8) -> pl.DataFrame:
    """The gate's tests, one per row of ``deltas`` (each domain it watches, and (all)): the exact
    McNemar p-value, corrected for the tests made together (``adjusted_p_values``), whether the domain
    regressed beyond the noise at ``alpha`` after correction, and the smallest drop its pairs could
    detect with ``power`` at the level its test is held to (alpha over the number of tests for Holm
    and Benjamini-Hochberg, the strictest step of either: what a domain must show to be called alone)."""
    rows = deltas.select("domain", "pairs", "broken", "fixed", "p_value").filter(pl.col("pairs") > 0)
    adjusted = adjusted_p_values(rows["p_value"].to_list(), correction)
    level = alpha if correction == "none" else alpha / max(rows.height, 1)
    return rows.with_columns(
        pl.Series("adjusted_p", adjusted, pl.Float64),
        pl.Series("regressed", [p < alpha and b > f for p, b, f in zip(adjusted, rows["broken"], rows["fixed"], strict=True)],
                  pl.Boolean),
        pl.Series("min_detectable", [minimum_detectable_difference(n, b + f, level, power)
                                     for n, b, f in rows.select("pairs", "broken", "fixed").iter_rows()], pl.Float64))


def label(broken: int, fixed: int, p_value: float, alpha: float) -> str:
    """What the paired verdicts say of a change: regressed or improved only beyond the noise."""
    if broken == fixed == 0:
        return "unchanged"
    if p_value < alpha:
        return "regressed" if broken > fixed else "improved"
    return "inconclusive"


def check_alpha(alpha: float) -> None:
    # below 1e-9, 1 - alpha / 2 rounds towards 1 and the normal quantile of the detectable difference is lost
    check_range("alpha", alpha, 1e-9, 0.5)


def with_change_labels(history: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """``history`` rows (each run's ``previous_run`` in its group and its paired ``broken`` and
    ``fixed`` counts) with the exact McNemar p-value of each change and its label, as ``compare``
    labels a domain: a run without a run before it has neither."""
    check_alpha(alpha)
    tests = [mcnemar_exact(b, f).p_value if previous is not None else None
             for previous, b, f in history.select("previous_run", "broken", "fixed").iter_rows()]
    labels = [None if p is None else label(b, f, p, alpha)
              for p, b, f in zip(tests, history["broken"], history["fixed"], strict=True)]
    return history.with_columns(pl.Series("p_value", tests, pl.Float64), pl.Series("change", labels, pl.String))


def _changed_parts(parts_a: str | None, parts_b: str | None) -> list[str]:
    a, b = json.loads(parts_a or "{}"), json.loads(parts_b or "{}")
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


def _lineage(lineage: pl.DataFrame, run_a: str, run_b: str) -> list[str]:
    """What scored the two runs differently besides their scenarios, in words."""
    rows = {r["run_id"]: r for r in lineage.iter_rows(named=True)}
    if run_a not in rows or run_b not in rows or run_a == run_b:
        return []
    a, b = rows[run_a], rows[run_b]
    said = []
    for key, words in (("judge_model", "judge model"), ("judge_prompts", "judge system prompt"),
                       ("judge_enabled", "judge enabled"), ("judge_threshold", "judge threshold"),
                       ("strict_match", "strict match"), ("min_agent_turns", "min agent turns")):
        if a[key] != b[key]:
            shown = (lambda v: f"{len(v)} prompt(s)" if isinstance(v, list) else str(v))  # noqa: E731
            said.append(f"{words}: {shown(a[key])} in A, {shown(b[key])} in B")
    return said


def _domain_row(domain: str, group: pl.DataFrame, alpha: float) -> dict:
    passed_a, passed_b, total = int(group["is_successful_a"].sum()), int(group["is_successful_b"].sum()), group.height
    rate_a, low_a, high_a = wilson(passed_a, total)
    rate_b, low_b, high_b = wilson(passed_b, total)
    delta = low = high = None
    if total:
        delta = rate_b - rate_a
        low, high = newcombe_interval(rate_a, low_a, high_a, rate_b, low_b, high_b)
    broken = int((group["is_successful_a"] & ~group["is_successful_b"]).sum())
    fixed = int((~group["is_successful_a"] & group["is_successful_b"]).sum())
    test = mcnemar_exact(broken, fixed)
    return {"domain": domain, "passed_a": passed_a, "total_a": total, "rate_a": rate_a, "ci_low_a": low_a,
            "ci_high_a": high_a, "passed_b": passed_b, "total_b": total, "rate_b": rate_b, "ci_low_b": low_b,
            "ci_high_b": high_b, "delta": delta, "delta_ci_low": low, "delta_ci_high": high, "pairs": total,
            "broken": broken, "fixed": fixed, "p_value": test.p_value, "label": label(broken, fixed, test.p_value, alpha),
            "min_detectable": minimum_detectable_difference(total, broken + fixed, alpha)}


DELTA_SCHEMA = {"domain": pl.String, "passed_a": pl.Int64, "total_a": pl.Int64, "rate_a": pl.Float64,
                "ci_low_a": pl.Float64, "ci_high_a": pl.Float64, "passed_b": pl.Int64, "total_b": pl.Int64,
                "rate_b": pl.Float64, "ci_low_b": pl.Float64, "ci_high_b": pl.Float64, "delta": pl.Float64,
                "delta_ci_low": pl.Float64, "delta_ci_high": pl.Float64, "pairs": pl.Int64, "broken": pl.Int64,
                "fixed": pl.Int64, "p_value": pl.Float64, "label": pl.String, "min_detectable": pl.Float64}


def compare(pairs: pl.DataFrame, lineage: pl.DataFrame, run_a: str, run_b: str, alpha: float = 0.05,
            rates: pl.DataFrame | None = None, latencies: pl.DataFrame | None = None,
            voice: pl.DataFrame | None = None) -> Comparison:
    """``pairs``: queries/compare_pairs.sql rows; ``lineage``: queries/compare_lineage.sql rows. Like
    with like unless ``rates`` (queries/compare_rates.sql rows, every scenario of each run: ``--all``)
    are given: then every scenario both have is paired whatever its definition, and the rates are
    each run's own. ``latencies`` and ``voice``: queries/compare_latency.sql and compare_voice.sql rows,
    for the latency and voice change of the scenarios compared."""
    like = rates is None
    both = pairs.filter(pl.col("in_a") & pl.col("in_b"))
    changed = both.filter(pl.col("definition_a").is_not_null() & pl.col("definition_b").is_not_null()
                          & (pl.col("definition_a") != pl.col("definition_b")))
    paired = both.drop_nulls(["is_successful_a", "is_successful_b"])
    if like:
        paired = paired.join(changed.select("scenario_name"), on="scenario_name", how="anti")
    rows = [_domain_row("(all)", paired, alpha)] if paired.height or like else []
    for (domain,), group in sorted(paired.group_by("domain"), key=lambda g: g[0][0]):
        rows.append(_domain_row(domain, group, alpha))
    deltas = pl.DataFrame(rows, schema=DELTA_SCHEMA)
    if not like:  # each run's own rates, every scenario counted; the tests on the pairs by name
        deltas = _with_own_rates(deltas, rates, run_a, run_b)
    deltas = pl.concat([deltas.filter(pl.col("domain") != "(all)"), deltas.filter(pl.col("domain") == "(all)")])
    flips = paired.with_columns(flip=pl.when(~pl.col("is_successful_a") & pl.col("is_successful_b")).then(pl.lit("fixed"))
                                .when(pl.col("is_successful_a") & ~pl.col("is_successful_b")).then(pl.lit("broken")))
    fixed = flips.filter(pl.col("flip") == "fixed")["scenario_name"].to_list()
    broken = flips.filter(pl.col("flip") == "broken")["scenario_name"].to_list()
    flipped = flips.filter(pl.col("flip").is_not_null())
    return Comparison(
        run_a, run_b, deltas, fixed, broken, dict(zip(flipped["scenario_name"], flipped["domain"])), paired.height,
        mcnemar_exact(len(broken), len(fixed)), alpha,
        pairs.filter(pl.col("in_a") & ~pl.col("in_b"))["scenario_name"].to_list(),
        pairs.filter(~pl.col("in_a") & pl.col("in_b"))["scenario_name"].to_list(),
        [{"scenario_name": r["scenario_name"], "changed": _changed_parts(r["parts_a"], r["parts_b"])}
         for r in changed.iter_rows(named=True)],
        _lineage(lineage, run_a, run_b), like,
        *(latency_change(latencies, run_a, run_b, paired["scenario_name"].to_list()) if latencies is not None
          else (None, None)),
        voice_change(voice, run_a, run_b, paired["scenario_name"].to_list()) if voice is not None else None)


def _with_own_rates(deltas: pl.DataFrame, rates: pl.DataFrame, run_a: str, run_b: str) -> pl.DataFrame:
    """``deltas`` with each run's own rates (all its scenarios) and the delta between them."""
    side = lambda run, tag: rates.filter(pl.col("run_id") == run).select(  # noqa: E731
        "domain", *(pl.col(c).alias(f"{c}_{tag}") for c in ("passed", "total", "rate", "ci_low", "ci_high")))
    own = side(run_a, "a").join(side(run_b, "b"), on="domain", how="full", coalesce=True, maintain_order="left")
    rows = []
    tests = {r["domain"]: r for r in deltas.iter_rows(named=True)}
    for r in own.iter_rows(named=True):
        low = high = delta = None
        if r["rate_a"] is not None and r["rate_b"] is not None:
            delta = r["rate_b"] - r["rate_a"]
            low, high = newcombe_interval(r["rate_a"], r["ci_low_a"], r["ci_high_a"],
                                          r["rate_b"], r["ci_low_b"], r["ci_high_b"])
        test = tests.get(r["domain"], {})
        rows.append({**r, "delta": delta, "delta_ci_low": low, "delta_ci_high": high,
                     **{k: test.get(k) for k in ("pairs", "broken", "fixed", "p_value", "label", "min_detectable")}})
    return pl.DataFrame(rows, schema=DELTA_SCHEMA)
