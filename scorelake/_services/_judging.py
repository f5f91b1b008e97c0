"""Judging: a judge asked again about the stored judge inputs (the rejudge flow), the judges
listed with their coverage and cost, and two (or more) judges compared."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

import polars as pl

from scorelake._services._reads import Reads
from scorelake.flows.runtime import say_nothing
from scorelake.transforms.errors import MAX_PRICE, InvalidArgument, NotFound, check_range, did_you_mean

if TYPE_CHECKING:
    from scorelake.transforms.analysis import JudgeComparison
    from scorelake.transforms.results import RejudgeResult

MIN_PLAN_WIDTH = 0.01  # a kappa interval narrower than this takes millions of labels


class Judging:
    def __init__(self, reads: Reads):
        self._reads = reads

    def rejudge(self, judge: str, *, url: str | None = None, model: str | None = None, prompt: str | None = None,
                max_tokens: int | None = None, temperature: float | None = None, top_p: float | None = None,
                seed: int | None = None, thinking_token_budget: int | None = None, timeout: float | None = None,
                runs: Sequence[str] | None = None, only_errors: bool = False, base: str | None = None,
                concurrency: int = 8, api_key_env: str | None = None, retries: int = 5, backoff: float = 0.5,
                repeat: int = 1, dask_address: str | None = None, prefect: bool | None = None,
                verbose: bool = False, progress: bool = False, say: Callable[[str], None] = say_nothing) -> RejudgeResult:
        """Ask the judge ``judge`` about every stored judge input (of ``runs``, default all) it has
        not judged, through an OpenAI-compatible chat-completions ``url`` (default: each run's own
        --judge-url; likewise ``model`` and the sampling settings), with upstream's payload; the key
        from ``$JUDGE_API_KEY`` or ``api_key_env``. ``prompt`` replaces the system prompt. A new judge
        takes over the judgements of ``base`` that did not fail (``only_errors`` without a ``base``:
        ``recorded``); ``only_errors`` also asks its own failed ones again. Answers to identical
        requests are never paid twice. A call that fails for a passing reason (429, 5xx, a timeout, a
        dropped connection) is tried ``retries`` more times, waiting ``backoff`` seconds doubled each
        time (or as Retry-After says). Returns counts of what was asked, taken over and failed.

        ``repeat`` K above 1 asks the same judge K times per input: the k-th ask is the judge
        ``NAME#k`` (seed ``seed`` + k, ``seed`` default 0), stored and cached apart, so a second run
        asks nothing; then ``NAME@majority`` holds the majority of the asks (its score their median,
        for an even K the lower middle one) and ``judge_stability`` how often they disagree."""
        from scorelake.flows import runtime

        self._reads.writable()
        if not 1 <= concurrency <= 1024:
            raise InvalidArgument(f"--concurrency: between 1 and 1024 calls at once (got {concurrency})")
        if not 1 <= repeat <= 100:
            raise InvalidArgument(f"--repeat: between 1 and 100 asks per input (got {repeat})")
        if not 0 <= retries <= 100 or not 0 <= backoff <= 600:
            raise InvalidArgument(f"--retries 0 to 100 and --backoff 0 to 600 seconds (got {retries}, {backoff})")
        settings = {"url": url, "model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": temperature,
                    "top_p": top_p, "seed": seed, "thinking_token_budget": thinking_token_budget, "timeout": timeout,
                    "base": base}
        return runtime.rejudge(runtime.how_on(dask_address, prefect, verbose, say), warehouse=self._reads.location,
                               judge=judge,
                               settings=settings, run_ids=list(runs) if runs else None, only_errors=only_errors,
                               concurrency=concurrency, api_key_env=api_key_env, retries=retries, backoff=backoff,
                               progress=progress, repeat=repeat)

    def judges(self, price_in: float | None = None, price_out: float | None = None) -> pl.DataFrame:
        """Every judge (``recorded`` first) with its coverage of the stored judge inputs, error rate,
        calls, retries, tokens and latency; ``cost`` from prices per million input / output tokens."""
        check_range("price-in", price_in, 0, MAX_PRICE)
        check_range("price-out", price_out, 0, MAX_PRICE)
        found = self._reads.query("judges")
        cost = None
        if price_in is not None or price_out is not None:
            cost = (pl.col("prompt_tokens").fill_null(0) * (price_in or 0)
                    + pl.col("completion_tokens").fill_null(0) * (price_out or 0)) / 1e6
        return found.with_columns(cost=cost if cost is not None else pl.lit(None, pl.Float64))

    def calibrate_judge(self, judge: str, alpha: float = 0.1, delta: float = 0.1, *,
                        by: Literal["domain"] | None = None) -> pl.DataFrame:
        """Keep ``judge``'s verdicts with a guarantee: on people's labels of JUDGE_PASSED, the
        confidence threshold above which the judge agrees with people at least ``1 - alpha`` of the
        time with probability at least ``1 - delta`` (fixed-sequence testing with exact binomial
        bounds, ``transforms.analysis.select``); one per domain with ``by="domain"``. Stored (the
        review queue's ``escalated`` pick and ``rates --selective`` use the latest) and returned:
        per scope the threshold, the labels used, the coverage, the agreement reached, or how many
        more labels it takes."""
        from scorelake.pipeline import store_calibration

        if by not in (None, "domain"):
            raise InvalidArgument(f"calibrate by '{by}': by domain, or leave it out for one threshold")
        with self._reads.connection():
            if judge not in set(self._reads.query("judges")["judge"]):
                raise NotFound(f"no judge named '{judge}'{did_you_mean(judge, self._reads.query('judges')['judge'])}")
        self._reads.writable()
        return store_calibration(self._reads.store, judge, alpha, delta, by == "domain")

    def calibrations(self, judge: str | None = None) -> pl.DataFrame:
        """The calibration that stands per judge and scope (the latest ``calibrate_judge``)."""
        return self._reads.query("calibrations", judge=judge)

    def judge_stability(self, judge: str | None = None, by: Literal["domain", "scenario"] = "domain") -> pl.DataFrame:
        """How often a repeated judge (``rejudge(..., repeat=K)``; of ``judge``, or every one), asked
        again, says otherwise: per judge and domain (and ``(all)``) the scenarios, asks, mean flip
        rate (the share of asks that disagree with the majority), scenarios with any flip, the score's
        spread and how many asks it took before the majority stopped changing; or per scenario, the
        most unstable first (the ``judge_stability`` view)."""
        if by not in ("domain", "scenario"):
            raise InvalidArgument(f"stability by '{by}': choose domain or scenario")
        return self._reads.query("judge_stability", judge=judge, by=by)

    def compare_judges(self, judge_a: str, judge_b: str, runs: Sequence[str] | None = None,
                       threshold: float | None = None, *, others: Sequence[str] = (),
                       sweep: bool = False, plan: float | None = None) -> JudgeComparison:
        """Judge B against judge A on the scenarios both judged: per domain, agreement on JUDGE_PASSED
        (at ``threshold``, else each run's own) and on each NL assertion, Cohen's kappa with a 95%
        interval, the mean score difference, and every flipped verdict. ``human`` is people's standing
        reviews (the latest per key; ``human:NAME`` one reviewer's): against it, the other judge's
        precision and recall, and with ``sweep`` the agreement of each candidate threshold and the
        best one. With ``others``, Krippendorff's alpha over all (reviewers too: ``human:alice``,
        ``human:bob``, ``human:carol``). ``plan``: against people, how many more labels, stratified
        by domain and the judge's verdict, would bring the kappa interval to that width (a
        ``LabelPlan``; ``review_queue("sample", plan=...)`` draws them)."""
        from scorelake.transforms.analysis import HUMAN, compare_judges, is_people

        if threshold is not None and not 0 <= threshold <= 1:
            raise InvalidArgument(f"--threshold: between 0 and 1 (got {threshold})")
        judges = [judge_a, judge_b, *others]
        if len(set(judges)) < len(judges):
            raise InvalidArgument(f"each judge once: {', '.join(judges)}")
        if plan is not None and not MIN_PLAN_WIDTH <= plan <= 2:
            raise InvalidArgument(f"--plan: a kappa interval's width, from {MIN_PLAN_WIDTH} to 2 (got {plan}; a "
                                  "narrower one would need more labels than any store holds)")
        if (sweep or plan is not None) and not (is_people(judge_a) or is_people(judge_b)):
            raise InvalidArgument(f"--sweep and --plan measure a judge against people: compare it with '{HUMAN}'")
        with self._reads.connection():
            reviewers = self._reads.query("reviews", run=None, history=False)["reviewer"].unique()
            known = {*self._reads.query("judges")["judge"], HUMAN, *(f"{HUMAN}:{name}" for name in reviewers)}
            for name in judges:
                if name not in known:
                    raise NotFound(f"no judge named '{name}' (judges: {', '.join(sorted(known))})")
            verdicts = self._reads.query("judge_verdicts", judges=judges, runs=self._reads.runs_known(runs),
                                         threshold=threshold)
        return compare_judges(judges, verdicts, sweep, plan)
