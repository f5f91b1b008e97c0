"""The write commands: ingest, rescore, compact, migrate, and serve (the scheduled refresh)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import typer

import scorelake
from scorelake.cli._app import command, err, fail, say, say_converted
from scorelake.cli._options import DaskAddressOpt, PolicyOpt, PrefectOpt, RunsOpt, VerboseOpt, WarehouseOpt
from scorelake.transforms.names import RECORDED

WARNINGS_SHOWN = 5  # per run, unless --verbose: a store whose every call has one oddity reads at a glance


@command
def demo(warehouse: WarehouseOpt = None) -> None:
    """Ingest the sample scorelake ships (two voice-agent sessions, 46 scenarios) and show each run's
    headline: a first look with nothing of your own; then try the commands it names.

    Example: scorelake demo -w /tmp/demo
    """
    from scorelake.present import headline_text

    wh = scorelake.open(warehouse)
    result = wh.ingest(scorelake.sample_runs(), say=say, progress=sys.stderr.isatty())
    say_converted(wh.location, result.converted)
    headlines = wh.headlines()
    for headline in headlines:
        print(headline_text(headline))
    at = "" if warehouse is None else f" -w {warehouse}"
    run = headlines[-1].run_id
    err().print(f"the sample is in {result.warehouse}; next: scorelake rates{at} · scorelake show {run} --failed{at} "
                f"· scorelake voice{at} · scorelake view{at}", highlight=False)


@command
def ingest(
    runs_dirs: Annotated[Optional[list[Path]], typer.Argument(
        help="Folders of eval_* sessions, or session folders [default: data/runs]")] = None,
    warehouse: WarehouseOpt = None,
    force: Annotated[bool, typer.Option(help="Re-read sessions whose fingerprint is unchanged")] = False,
    group: Annotated[Optional[str], typer.Option(
        help="Run group: the system these runs are trials of, for pass^k [default: one group for all "
             "voice-agent sessions, one per tau2 / tau-bench file]")] = None,
    task_runner: Annotated[str, typer.Option(
        help="Where the per-run tasks run: auto (a process per core once the runs to read hold about 1,000 "
             "scenarios, else threads), threads, processes, or dask (prefect-dask, a Prefect flow)")] = "auto",
    dask_address: DaskAddressOpt = None,
    prefect: PrefectOpt = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v",
                                          help="Show Prefect's log lines and every warning")] = False,
) -> None:
    """Ingest new or changed runs, score them, refresh the views.

    In-process when no Prefect API is configured; a Prefect flow run when one is (PREFECT_API_URL or
    a profile), with --prefect, or with --task-runner dask. RUNS_DIR may be a folder of voice-agent
    eval_* sessions or a session folder, a tau2-bench results file or results folder (results.json +
    simulations/), a tau-bench trajectory file, or a folder of them; formats are recognised by content.

    Each run's first 5 warnings are printed, with how many more; --verbose prints every one.

    Example: scorelake ingest /data/eval_results --group nemotron-v2
    """
    wh = scorelake.open(warehouse)
    result = wh.ingest(runs_dirs, force=force, group=group, task_runner=task_runner, dask_address=dask_address,
                       prefect=prefect or None, verbose=verbose, progress=sys.stderr.isatty(), say=say)
    say_converted(wh.location, result.converted)
    console = err()
    for problem in result.source_problems:
        console.print(f"[yellow]warning[/] {problem}", highlight=False)
    for report in result.ingested:
        console.print(f"{report.run_id}: {report.status}, {report.scenarios} scenarios"
                      + (f", [yellow]{report.quarantined} quarantined[/]" if report.quarantined else ""))
        for problem in report.problems:
            console.print(f"  [yellow]quarantined[/] {problem}", highlight=False)
        shown = report.warnings if verbose else report.warnings[:WARNINGS_SHOWN]
        for warning in shown:
            console.print(f"  [yellow]warning[/] {warning}", highlight=False)
        if len(shown) < len(report.warnings):
            console.print(f"  [yellow]warning[/] and {len(report.warnings) - len(shown)} more in this run "
                          "(--verbose lists every one)", highlight=False)
    for moved in result.regrouped:
        console.print(f"{moved.run_id}: unchanged, now in run group {moved.group}", highlight=False)
    for refused in result.refused:
        console.print(f"[red]refused[/] {refused.path}: {refused.reason}", highlight=False)
    console.print(f"{len(result.ingested)} ingested, {len(result.unchanged)} unchanged, "
                f"{len(result.refused)} refused -> {result.warehouse}; {result.ran}", highlight=False)
    if result.refused:
        raise typer.Exit(1)


def _parse_whitelists(items: list[str]) -> dict[str, list[str]]:
    whitelists = {}
    for item in items:
        domain, sep, signals = item.partition("=")
        if not sep or not domain:
            fail(f"--whitelist expects DOMAIN=signal[,signal...], got '{item}'", 2)
        whitelists[domain] = [s.strip() for s in signals.split(",") if s.strip()]
    return whitelists


class ReviewRule(StrEnum):
    latest = "latest"
    majority = "majority"
    adjudicated = "adjudicated"


@command
def rescore(
    policy: Annotated[Optional[str], typer.Option(
        "--policy", "-p", help="Policy name: a stored one, or a new one defined by the flags below")] = None,
    judge_threshold: Annotated[Optional[float], typer.Option(help="Judge pass threshold (score >= F)")] = None,
    min_agent_turns: Annotated[Optional[int], typer.Option(help="Stall filter (0 turns it off)")] = None,
    strict_match: Annotated[Optional[bool], typer.Option(
        "--strict-match/--lenient-match", help="Force ACTION_MATCH strict matching on or off")] = None,
    judge: Annotated[Optional[str], typer.Option(
        help="Take JUDGE_PASSED and NL_ASSERTION from this judge's judgements (see `scorelake judges`) "
             "[default: the runs' own judge_result.json, the judge 'recorded']")] = None,
    judge_enabled: Annotated[Optional[bool], typer.Option(
        "--judge-enabled/--no-judge", help="Count the LLM judge's signals, or treat them as not applicable")] = None,
    whitelist: Annotated[Optional[list[str]], typer.Option(
        help="Override a domain's gating signals: DOMAIN=signal[,signal...] (repeatable)")] = None,
    reviews: Annotated[bool, typer.Option(
        "--reviews", help="People's verdicts (scorelake review) take the place of the signals they review; "
                          "running it again picks up the reviews made since")] = False,
    review_rule: Annotated[Optional[ReviewRule], typer.Option(
        help="With --reviews, which verdict stands where reviewers reviewed the same thing: the latest, the "
             "majority's (none on a tie), or the adjudicator's where they disagree [default: latest]")] = None,
    adjudicator: Annotated[Optional[str], typer.Option(
        help="With --review-rule adjudicated: the reviewer who decides where reviewers disagree")] = None,
    selective: Annotated[bool, typer.Option(
        "--selective", help="JUDGE_PASSED only where the judge's calibration (judges --calibrate) keeps its "
                            "verdict: an escalated one counts as not applicable unless people reviewed it "
                            "(with --reviews)")] = False,
    run: RunsOpt = None,
    warehouse: WarehouseOpt = None,
    dask_address: DaskAddressOpt = None,
    prefect: PrefectOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Re-score stored runs under a policy from the tables alone (in-process, or a Prefect
    flow run when an API is configured or with --prefect).

    Example: scorelake rescore --policy lenient-judge --judge-threshold 0.8
    Example: scorelake rescore --policy judged-by-gpt --judge gpt-judge
    Example: scorelake rescore --policy people --reviews --review-rule adjudicated --adjudicator carol
    Example: scorelake rescore --policy kept --reviews --selective
    """
    wh = scorelake.open(warehouse)
    result = wh.rescore(policy, judge_threshold=judge_threshold, min_agent_turns=min_agent_turns,
                        strict_match=strict_match, judge_enabled=judge_enabled, judge=judge,
                        whitelists=_parse_whitelists(whitelist or []), reviews=reviews,
                        review_rule=review_rule and review_rule.value, adjudicator=adjudicator, selective=selective,
                        runs=run,
                        dask_address=dask_address, prefect=prefect or None, verbose=verbose, say=say)
    say_converted(wh.location, result.converted)
    err().print(f"policy '{result.policy}' ({result.policy_id}, judge {result.judge}): {result.scenarios} "
                f"scenarios scored; {result.ran}", highlight=False)
    if result.undecided:  # people reviewed them, and the rule lets none of their verdicts stand
        why = ("its reviewers are tied" if result.review_rule == "majority"
               else "its reviewers disagree and the adjudicator has not ruled")
        err().print(f"[yellow]{result.undecided} reviewed item(s) undecided[/]: {why}; each keeps the verdict it "
                    "had (scorelake review adds a verdict)", highlight=False)


@command
def compact(warehouse: WarehouseOpt = None) -> None:
    """Compact every table: rows of replaced ingests dropped, small files bin-packed (Delta
    optimize), files older than 90 days of history vacuumed (ingest and rescore do it on their own
    once the files pile up).

    Example: scorelake compact -w data/warehouse
    """
    wh = scorelake.open(warehouse)
    wh.compact()
    err().print(f"{wh.location}: compacted ({wh.runs().height} runs)")


@command
def migrate(warehouse: WarehouseOpt = None) -> None:
    """Convert a warehouse of scorelake's former table format to Delta tables (the first write
    command does it too); the old files are kept aside.

    Example: scorelake migrate -w data/warehouse
    """
    wh = scorelake.open(warehouse)
    kept = wh.migrate()
    if kept is None:  # done already, or never needed: what was asked holds
        err().print(f"{wh.location}: nothing to migrate (no tables/ folder of the former format)", highlight=False)
        return
    err().print(f"{wh.location}: converted to Delta tables ({wh.runs().height} runs); the former files are in "
                f"{kept}: remove them once you no longer need them", highlight=False)


@command
def serve(
    runs_dirs: Annotated[list[Path], typer.Argument(help="Folders of eval_* sessions to watch")],
    cron: Annotated[Optional[str], typer.Option(help="Cron schedule, e.g. '0 * * * *'")] = None,
    interval: Annotated[Optional[float], typer.Option(help="Seconds between runs")] = None,
    name: Annotated[str, typer.Option(help="Deployment name")] = "scheduled",
    notify_url: Annotated[Optional[str], typer.Option(
        help="A Slack-compatible incoming webhook that hears of a new run that regressed")] = None,
    max_drop: Annotated[float, typer.Option(help="Points a domain may drop, beyond the noise, unreported")] = 0.0,
    export_otlp: Annotated[Optional[str], typer.Option(
        "--export-otlp", metavar="URL",
        help="An OpenTelemetry backend's OTLP/HTTP traces endpoint each new run's verdicts are sent to "
             "(as scorelake export otlp sends them; needs scorelake[otlp])")] = None,
    warehouse: WarehouseOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Serve a Prefect deployment that ingests new runs, re-scores every stored policy and gates each
    new run on the run before it in its group, on a schedule; with --export-otlp, sends their verdicts on.

    Example: scorelake serve /data/eval_results --cron '*/30 * * * *'
    """
    scorelake.open(warehouse).serve(runs_dirs, cron=cron, interval=interval, name=name, notify_url=notify_url,
                                    max_drop=max_drop, export_url=export_otlp, verbose=verbose, say=say)


class ExportFormat(StrEnum):
    otlp = "otlp"


@command
def export(
    to: Annotated[ExportFormat, typer.Argument(help="Where to: otlp, an OpenTelemetry backend")],
    endpoint: Annotated[str, typer.Option(
        help="The backend's OTLP/HTTP traces endpoint, e.g. http://localhost:4318/v1/traces (Phoenix: "
             "http://localhost:6006/v1/traces)")],
    run: RunsOpt = None,
    policy: PolicyOpt = RECORDED,
    warehouse: WarehouseOpt = None,
) -> None:
    """Send the verdicts to an OpenTelemetry backend (Langfuse, Phoenix, Datadog, Grafana): each scenario
    a span, each verdict on it (the composite, each signal, each person's standing review) a
    gen_ai.evaluation.result event with its score, label and explanation. Scenarios sent before to the
    endpoint under the policy are not sent again: an export killed half-way sends the rest. Needs
    scorelake[otlp].

    Example: scorelake export otlp --endpoint http://localhost:4318/v1/traces --run eval_20260904_080000
    """
    result = scorelake.open(warehouse).export_otlp(endpoint, run, policy, say=say)
    err().print(f"{result.scenarios} scenarios' verdicts sent ({result.events} evaluation events) to "
                f"{result.endpoint} under policy {result.policy}" if result.scenarios else
                f"nothing to send: every scenario in scope was sent to {result.endpoint} under policy "
                f"{result.policy} already", highlight=False)
