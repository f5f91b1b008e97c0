"""Judges: rejudge (ask one again), judges (list them), compare-judges (which to trust)."""

from __future__ import annotations

import dataclasses
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import polars as pl
import typer

import scorelake
from scorelake.cli._app import command, emit, emitted, err, fail, pct, print_json, say, say_converted
from scorelake.cli._options import DaskAddressOpt, Format, Listing, PrefectOpt, RunsOpt, VerboseOpt, WarehouseOpt
from scorelake.cli._terminal import Grid, wrapped
from scorelake.cli._terminal import show as show_grid
from scorelake.transforms.names import MAJORITY, RECORDED


@command
def rejudge(
    judge: Annotated[str, typer.Option("--judge", "-j", help="Name of the judge: a new one, or a stored one to go on with")],
    judge_url: Annotated[Optional[str], typer.Option(
        help="Full OpenAI-compatible chat-completions URL (.../v1/chat/completions) [default: each run's own]")] = None,
    judge_model: Annotated[Optional[str], typer.Option(help="Model name [default: each run's own]")] = None,
    run: RunsOpt = None,
    only_errors: Annotated[bool, typer.Option(
        help="Ask only where the base judge (--from, default 'recorded') failed; also ask this judge's own "
             "failed judgements again")] = False,
    base: Annotated[Optional[str], typer.Option(
        "--from", help="Base judge whose judgements that did not fail are taken over [default with "
                       "--only-errors: recorded]")] = None,
    concurrency: Annotated[int, typer.Option(help="Calls in flight at once")] = 8,
    retries: Annotated[int, typer.Option(help="Retries of a call that failed for a passing reason "
                                              "(429, 5xx, a timeout, a dropped connection)")] = 5,
    backoff: Annotated[float, typer.Option(help="Seconds before the first retry, doubled for each next one "
                                                "(a Retry-After header wins)")] = 0.5,
    api_key_env: Annotated[Optional[str], typer.Option(
        help="Environment variable holding the key, sent as a Bearer token [default: JUDGE_API_KEY]")] = None,
    prompt: Annotated[Optional[Path], typer.Option(
        help="File whose text replaces the judge's system prompt (the stored user content is kept)")] = None,
    timeout: Annotated[Optional[float], typer.Option(help="Seconds per request [default: each run's own]")] = None,
    max_tokens: Annotated[Optional[int], typer.Option(help="[default: each run's own]")] = None,
    temperature: Annotated[Optional[float], typer.Option(help="[default: each run's own]")] = None,
    top_p: Annotated[Optional[float], typer.Option(help="[default: each run's own]")] = None,
    seed: Annotated[Optional[int], typer.Option(help="[default: each run's own]")] = None,
    thinking_token_budget: Annotated[Optional[int], typer.Option(help="[default: each run's own]")] = None,
    repeat: Annotated[int, typer.Option(
        help="Ask the same judge K times per input: the asks JUDGE#1..JUDGE#K (seed --seed + k, --seed default 0) "
             "and their majority JUDGE@majority; see judges --stability")] = 1,
    warehouse: WarehouseOpt = None,
    dask_address: DaskAddressOpt = None,
    prefect: PrefectOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Ask an LLM judge again from the stored judge inputs, without re-running a conversation.

    Sends each stored judge input the judge has not judged, with the payload upstream sends, and
    stores its judgement as upstream would make it; transient failures are retried, a call that
    still fails is stored as a judge error (ask again with --only-errors). Identical requests are
    never paid twice. Then: scorelake rescore --policy NAME --judge JUDGE.

    Example: scorelake rejudge --judge fixed-outage --only-errors
    Example: scorelake rejudge --judge gpt-judge --judge-url https://api.openai.com/v1/chat/completions --judge-model gpt-5
    Example: scorelake rejudge --judge gpt-judge --repeat 5   (then: rescore --judge gpt-judge@majority)
    """
    prompt_text = None
    if prompt is not None:
        try:
            prompt_text = prompt.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            fail(f"--prompt {prompt}: {getattr(exc, 'strerror', None) or exc}", 2)
    wh = scorelake.open(warehouse)
    result = wh.rejudge(judge, url=judge_url, model=judge_model, prompt=prompt_text, max_tokens=max_tokens,
                        temperature=temperature, top_p=top_p, seed=seed, thinking_token_budget=thinking_token_budget,
                        timeout=timeout, runs=run, only_errors=only_errors, base=base, concurrency=concurrency,
                        api_key_env=api_key_env, retries=retries, backoff=backoff, repeat=repeat,
                        dask_address=dask_address, prefect=prefect or None, verbose=verbose, progress=sys.stderr.isatty(), say=say)
    say_converted(wh.location, result.converted)
    if result.recovered:
        err().print(f"{result.recovered} judgements of an interrupted rejudge recovered from its journal")
    without = ", ".join(f"{n} from {'the cache' if k == 'cache' else 'the base judge'}"
                        for k, n in sorted(result.without_call.items()))
    err().print(f"judge '{result.judge}' ({result.settings}): {result.scope} stored inputs, "
                f"{result.judged_already} judged already, {result.asked} asked"
                + (f", {without}" if without else "")
                + f"; {result.errors} errors, {result.retries} retries, {result.tokens:,} tokens; "
                f"{result.ran}", highlight=False)
    if result.asks > 1:
        err().print(f"the majority of the {result.asks} asks is judge '{result.judge}{MAJORITY}' (rescore --judge "
                    f"{result.judge}{MAJORITY}); how often they disagree: scorelake judges --stability",
                    highlight=False)
    for sample in result.error_samples:
        err().print(f"  [yellow]judge error[/] {sample[:300]}", highlight=False)
    if result.odd_scores:
        err().print(f"  [yellow]note[/] {result.odd_scores} scores outside 0-1 or not finite (Infinity, NaN), taken "
                    "as upstream's float() takes them: see `scorelake judges`", highlight=False)
    if result.errors:
        again = f" --repeat {result.asks}" if result.asks > 1 else ""
        err().print(f"ask them again: scorelake rejudge --judge {result.judge} --only-errors{again}", highlight=False)
    if result.unanswered:  # the answered ones are stored; the command did not do all of its job
        err().print(f"[red]{result.unanswered} calls went unanswered[/] (stored as judge errors)", highlight=False)
        raise typer.Exit(1)


class StabilityBy(StrEnum):
    domain = "domain"
    scenario = "scenario"


@command
def judges(
    price_in: Annotated[Optional[float], typer.Option(help="Price per million input (prompt) tokens, for the cost")] = None,
    price_out: Annotated[Optional[float], typer.Option(help="Price per million output tokens, for the cost")] = None,
    stability: Annotated[bool, typer.Option(
        "--stability", help="How often a repeated judge's asks (rejudge --repeat) disagree, per judge and domain")] = False,
    by: Annotated[Optional[StabilityBy], typer.Option(
        help="With --stability: per domain (the default) or per scenario; with --calibrate: a threshold per "
             "domain (domain) instead of one")] = None,
    calibrate: Annotated[Optional[str], typer.Option(
        "--calibrate", metavar="JUDGE",
        help="Choose on people's labels the confidence above which JUDGE's verdicts are kept: they agree with "
             "people at least 1 - alpha of the time, with probability at least 1 - delta; the rest are "
             "escalated to people")] = None,
    alpha: Annotated[float, typer.Option(help="With --calibrate: the disagreement allowed on kept verdicts")] = 0.1,
    delta: Annotated[float, typer.Option(help="With --calibrate: the chance the guarantee may fail")] = 0.1,
    read: Listing = Listing(),
) -> None:
    """List judges: the runs' own ('recorded') and every judge `scorelake rejudge` asked, with their
    coverage of the stored judge inputs, error rate, calls, retries, tokens and cost, and for a
    repeated judge's majority the asks behind it and how often they flip; then, in the table, the
    calibrations that stand (judges --calibrate; the calibrations view).

    Example: scorelake judges --price-in 0.5 --price-out 1.5
    Example: scorelake judges --stability --by scenario
    Example: scorelake judges --calibrate recorded --alpha 0.1 --delta 0.1 --by domain
    """
    wh = read.open()
    if calibrate is not None:
        if by is StabilityBy.scenario:
            fail("--calibrate --by: domain, or leave it out for one threshold")
        _calibrations(wh.calibrate_judge(calibrate, alpha, delta, by=by and by.value), read)
        return
    if stability:
        by = by or StabilityBy.domain
        _stability(read.of(wh.judge_stability(by=by.value)), read.fmt, read.wide, by)
        return
    found = read.of(wh.judges(price_in, price_out))
    if emitted(found.drop("spec_json"), read.fmt, read.wide):
        return
    tokens = lambda n: "" if n is None else f"{n:,}"  # noqa: E731
    cells = [[r["judge"], r["model"] or ("each run's own" if r["judge"] != RECORDED else ""), r["base"] or "",
              pct(r["judged"], r["inputs"]), pct(r["errors"], r["judged"]), str(r["asked"]),
              str(r["from_cache"] + r["from_base"]), str(r["retries"]), tokens(r["prompt_tokens"]),
              tokens(r["completion_tokens"]), "" if r["cost"] is None else f"{r['cost']:.2f}",
              "" if r["asks"] is None else str(r["asks"]),
              "" if r["flip_rate"] is None else f"{r['flip_rate'] * 100:.1f}%"]
             for r in found.iter_rows(named=True)]
    show_grid(Grid(["judge", "model", "from", "coverage", "errors", "asked", "no call", "retries", "tokens in",
                    "tokens out", "cost", "asks", "flip rate"], cells,
                   right={"coverage", "errors", "asked", "no call", "retries", "tokens in", "tokens out", "cost", "asks",
                          "flip rate"}).without_empty_columns())
    calibrations = wh.calibrations()
    if not calibrations.is_empty():
        print()
        _calibrations(calibrations, read)


def _calibrations(found: pl.DataFrame, read: Listing) -> None:
    """Calibrations as a table: per judge and scope, what is kept and the guarantee, or what it lacks."""
    if emitted(found, read.fmt, read.wide):
        return
    share = lambda v: "" if v is None else f"{v * 100:.1f}%"  # noqa: E731
    cells = [[r["judge"], r["scope"], f"{r['alpha']:g}", f"{r['delta']:g}",
              "" if r["threshold"] is None else f"{r['threshold']:.3f}", str(r["labels"]), share(r["coverage"]),
              share(r["agreement_bound"]), "" if r["more_labels"] is None else str(r["more_labels"]), r["note"] or ""]
             for r in found.iter_rows(named=True)]
    headers = ["judge", "scope", "may disagree", "may fail", "confidence at least", "labels", "kept share",
               "agrees at least", "more labels", "calibration note"]
    show_grid(Grid(headers, cells, "calibrations: verdicts kept where the judge agrees with people at least "
                                   "1 - alpha of the time, with probability 1 - delta", keys=2,
                   right=set(headers[2:-1])).without_empty_columns())


def _stability(found, fmt: Format, wide: bool, by: StabilityBy) -> None:
    if emitted(found, fmt, wide):
        return
    if found.is_empty():
        err().print("no repeated judge: scorelake rejudge --judge NAME --repeat K asks one K times", highlight=False)
        return
    keys = ["judge", "domain"] if by is StabilityBy.domain else ["judge", "run", "scenario"]
    cells = [[r["judge"], *([r["domain"]] if by is StabilityBy.domain else [r["run_id"], r["scenario_name"]]),
              str(r["scenarios"]), str(r["asks"]), f"{r['flip_rate'] * 100:.1f}%", str(r["flipping_scenarios"]),
              "" if r["score_spread"] is None else f"{r['score_spread']:.2f}", f"{r['settled_after']:.1f}",
              str(r["settled_after_max"])] for r in found.iter_rows(named=True)]
    headers = [*keys, "scenarios", "asks", "flip rate", "flipping", "score spread", "settled after", "at most"]
    show_grid(Grid(headers, cells, "judge stability: the same judge asked again (flip rate: asks that disagree "
                                   "with the majority)", keys=len(keys), right=set(headers[len(keys):])))


def kappa_text(row: dict) -> str:
    """A kappa with its 95% interval; with too few pairs for one, that instead; blank where undefined."""
    from scorelake.transforms.analysis import MIN_KAPPA_PAIRS  # on use: the analysis costs every command 9 ms

    if row["kappa"] is None:
        return ""
    if row["kappa_ci_low"] is None:
        return f"too few pairs ({row['pairs']} < {MIN_KAPPA_PAIRS})"
    return f"{row['kappa']:.2f} [{row['kappa_ci_low']:.2f}, {row['kappa_ci_high']:.2f}]"


@command
def compare_judges(
    judges: Annotated[list[str], typer.Argument(
        help="Judge A (the reference, e.g. recorded or human), judge B, and optionally more (Krippendorff's alpha "
             "over all)")],
    run: RunsOpt = None,
    threshold: Annotated[Optional[float], typer.Option(
        help="JUDGE_PASSED threshold for both [default: each run's --judge-threshold]")] = None,
    sweep: Annotated[bool, typer.Option(
        "--sweep", help="Against human: the agreement and kappa of each candidate threshold, and the best one")] = False,
    plan: Annotated[Optional[float], typer.Option(
        help="Against human: how many more labels, by domain and the judge's verdict, would bring the kappa "
             "interval to this width (e.g. 0.2)")] = None,
    read: Listing = Listing(),
) -> None:
    """Which judge to trust: per domain, agreement of two judges on JUDGE_PASSED and on each NL
    assertion, Cohen's kappa with a 95% interval, mean score difference, and the verdicts that flip.
    The judge 'human' is people's standing reviews (scorelake review): against it, the judge's
    precision and recall, and with --sweep the threshold that agrees best.

    Example: scorelake compare-judges recorded gpt-judge --run eval_20260904_080000
    Example: scorelake compare-judges human recorded --sweep
    """
    if len(judges) < 2:
        fail("give two judges or more: A B [C ...]", 2)
    c = read.open().compare_judges(judges[0], judges[1], run, threshold, others=judges[2:], sweep=sweep, plan=plan)
    c = dataclasses.replace(c, flips=read.of(c.flips))  # --limit and --sort order the flipped verdicts
    if read.fmt is Format.json:
        print_json(c.as_json())
        return
    if read.fmt is Format.csv or read.wide:
        emit(c.agreement, read.fmt, read.wide)
        return
    share = lambda v: "" if v is None else f"{v * 100:.1f}%"  # noqa: E731
    cells = [[r["domain"], r["kind"].replace("_", " "), str(r["pairs"]), pct(r["both_pass"] + r["neither"], r["pairs"]),
              kappa_text(r), "" if r["mean_score_diff"] is None else f"{r['mean_score_diff']:+.3f}",
              str(r["only_a"]), str(r["only_b"]), str(r["judge_errors"] or ""), share(r["precision"]),
              share(r["recall"])]
             for r in c.agreement.iter_rows(named=True)]
    show_grid(Grid(["domain", "verdict", "pairs", "agree", "kappa [95% CI]", "score B-A", "A only", "B only",
                    "judge errors", "precision", "recall"], cells, f"judge A {c.judge_a} vs judge B {c.judge_b}",
                   keys=2,
                   right={"pairs", "agree", "score B-A", "A only", "B only", "judge errors", "precision", "recall"})
              .without_empty_columns())
    if c.flips.is_empty():
        print("flipped verdicts: none")
    else:
        verdict = lambda passed, error: ("pass" if passed else "fail") + (" (judge error)" if error else "")  # noqa: E731
        score = lambda v: "" if v is None else f"{v:g}"  # noqa: E731
        cells = [[r["run_id"], r["scenario_name"], r["kind"].replace("_", " ")
                  + ("" if r["assertion_index"] is None else f" #{r['assertion_index']}"),
                  verdict(r["passed_a"], r["error_a"]), score(r["score_a"]), verdict(r["passed_b"], r["error_b"]),
                  score(r["score_b"])] for r in c.flips.iter_rows(named=True)]
        print()
        show_grid(Grid(["run", "scenario", "verdict", "A", "A score", "B", "B score"], cells,
                       f"flipped verdicts, {c.flips.height}: one a line", keys=3, right={"A score", "B score"})
                  .without_empty_columns())
    if c.sweep is not None:
        in_use = set(c.sweep.in_use)
        rows = [[f"{r['threshold']:g}" + (" (in use)" if r["threshold"] in in_use else ""), str(r["passes"]),
                 str(r["pairs"]), pct(round(r["agreement"] * r["pairs"]), r["pairs"]),
                 kappa_text(r) or "undefined"] for r in c.sweep.table.iter_rows(named=True)]
        print()
        show_grid(Grid(["threshold", "judge passes", "pairs", "agree", "kappa [95% CI]"], rows,
                       "JUDGE_PASSED at each threshold against people",
                       right={"threshold", "judge passes", "pairs", "agree"}))
        used = ", ".join(f"{t:g}" for t in c.sweep.in_use) or "none"
        best = (f"{c.sweep.best:g} (--judge-threshold {c.sweep.best:g})" if c.sweep.best is not None
                else "none")
        print(wrapped(f"threshold in use: {used}; best threshold: {best}"
                      + (f" ({c.sweep.note})" if c.sweep.note else "")))
    if c.plan is not None:
        p = c.plan
        rows = [[r["domain"], "passed" if r["judge_passed"] else "failed", str(r["scenarios"]), str(r["labelled"]),
                 str(r["more"])] for r in p.strata.iter_rows(named=True)]
        print()
        show_grid(Grid(["domain", "judge said", "scenarios", "labelled", "label more"], rows,
                       f"labels for a kappa interval {p.width:g} wide: {p.needed} pairs needed ({p.arithmetic()}); "
                       f"{p.labelled} labelled + {p.more} more = {p.labelled + p.more} (stratified by domain and the "
                       "judge's verdict)" + (f"; only {p.unlabelled} scenarios are unlabelled: the interval will be "
                                             "wider" if p.labelled + p.more < p.needed else ""),
                       right={"scenarios", "labelled", "label more"}))
        if p.guessed:
            print(wrapped("planned with a guessed agreement of 0.8 and chance agreement of 0.5: fewer than two "
                          "labels of each kind so far"))
    if c.alpha is not None:
        rows = [[r["domain"], r["kind"].replace("_", " "), str(r["units"]),
                 "" if r["alpha"] is None else f"{r['alpha']:.3f}"] for r in c.alpha.iter_rows(named=True)]
        print()
        show_grid(Grid(["domain", "verdict", "units", "alpha"], rows,
                       f"Krippendorff's alpha (nominal) over {', '.join(judges)}", right={"units", "alpha"}))
