"""Commands that answer from the views: sql, rates, summary, history, passk, report, check, log, policies."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import polars as pl
import typer

import scorelake
from scorelake.cli._app import cell, command, emit, emitted, err, fail, interval, ms, pct, write_output
from scorelake.cli._options import AlphaOpt, Format, PolicyOpt, Read, WarehouseOpt, Where
from scorelake.cli._terminal import Grid
from scorelake.cli._terminal import show as show_grid
from scorelake.transforms.names import RECORDED
from scorelake.transforms.registry import BY_NAME, RATES


class RatesBy(StrEnum):
    domain = "domain"
    signal = "signal"
    scorer = "scorer"


@command
def sql(
    query: Annotated[str, typer.Argument(help="A SQL query over the warehouse views")],
    read: Read = Read(),
    timeout: Annotated[Optional[float], typer.Option(
        help="Stop the query after this many seconds [default: $SCORELAKE_SQL_TIMEOUT or 300]")] = None,
    memory_limit: Annotated[Optional[str], typer.Option(
        help="DuckDB's memory limit for the query, e.g. 8GB [default: $SCORELAKE_SQL_MEMORY or 4GB]")] = None,
) -> None:
    """Run a read-only SQL query against the warehouse's DuckDB views.

    Example: scorelake sql "SELECT domain, success_rate FROM domain_rates WHERE run_id = 'eval_20260904_080000'"
    """
    emit(read.open(memory_limit=memory_limit, timeout=timeout).sql(query), read.fmt, read.wide)


# rates --by domain: each rate's rate_rollup prefix, label and the whitelist entry that gates it
DOMAIN_RATES = [(r.label, r.prefix, r.signal) for r in RATES]


def _domain_grid(title: str, rows: list[dict]) -> Grid:
    """The whole run's rates, then each domain's, a signal that gates a domain's success (its
    whitelist) marked with *: the others are reported but do not count, so judge passed 0% beside
    success 67% is no contradiction."""
    def cell_of(r: dict, rate: str, signal: str | None) -> str:
        text = pct(r[f"{rate}_passed"], r[f"{rate}_total"])
        gates = r["domain"] != "(all)" and signal in (r.get("gating_signals") or ())
        return f"{text}*" if text and gates else f"{text} " if text else text

    headers = ["domain", "n", *(header for header, _, _ in DOMAIN_RATES), "stalled"]
    cells = [[r["domain"], str(r["scenarios"]), *(cell_of(r, rate, signal) for _, rate, signal in DOMAIN_RATES),
              str(r["stalled"])]
             for r in rows]
    marked = any(r.get("gating_signals") for r in rows)
    return Grid(headers, cells, title, right=set(headers[1:]),
                note="* gates success (the domain's whitelist)" if marked else None).without_empty_columns()


def _signal_grid(title: str, rows: list[dict]) -> Grid:
    cells = [[BY_NAME[r["signal"]].label, pct(r["passed"], r["total"]), r["unit"]] for r in rows]
    return Grid(["signal", "pass rate", "counted in"], cells, title, right={"pass rate"})


def _calibrated_grid(run_id: str, policy: str, rows: list[dict]) -> Grid:
    """JUDGE_PASSED as the judge says it and as people's labels correct it."""
    share = lambda v: "" if v is None else f"{v * 100:.1f}%"  # noqa: E731
    rows = [r for r in rows if r.get("signal", "judge_passed") == "judge_passed"]
    cells = [[r.get("domain", "(all)"), pct(r.get("judge_passed_passed", r.get("passed")),
                                            r.get("judge_passed_total", r.get("total"))),
              str(r["judge_labels"]), share(r["judge_sensitivity"]), share(r["judge_specificity"]),
              "" if r["judge_passed_corrected"] is None else
              f"{share(r['judge_passed_corrected'])} [{share(r['judge_passed_corrected_ci_low'])}, "
              f"{share(r['judge_passed_corrected_ci_high'])}]", r["judge_passed_corrected_note"] or ""] for r in rows]
    headers = ["domain", "judge passed", "labels", "sensitivity", "specificity", "corrected [95% CI]", "why"]
    note = ("corrected: Rogan-Gladen from the judge's sensitivity and specificity against people's labels; "
            "why: what leaves it blank, or that it was clipped to [0, 100%]")
    return Grid(headers, cells, f"{run_id} (policy {policy}): JUDGE_PASSED corrected by people", right=set(headers[1:]),
                note=note)


def _judge_rates(wh: scorelake.Warehouse, run: str | None, policy: str, read: Read, way: str) -> None:
    """``rates --selective`` and ``rates --ppi``: JUDGE_PASSED per run and domain, one table per run."""
    found = wh.selective_rates(run, policy) if way == "selective" else wh.ppi_rates(run, policy)
    if emitted(found, read.fmt, read.wide):
        return
    for n, ((run_id,), rows) in enumerate(found.group_by("run_id", maintain_order=True)):
        if n:
            print()
        show_grid((_selective_grid if way == "selective" else _ppi_grid)(run_id, policy, rows.to_dicts()))


def _rate(rate: float | None, low: float | None = None, high: float | None = None) -> str:
    """A rate in percent with its interval where it has one; blank without a rate."""
    if rate is None:
        return ""
    return f"{rate * 100:.1f}%" + ("" if low is None else f" [{low * 100:.1f}, {high * 100:.1f}]")


def _selective_grid(run_id: str, policy: str, rows: list[dict]) -> Grid:
    cells = [[r["domain"], str(r["judged"]), str(r["kept"]), str(r["escalated"]), _rate(r["coverage"]),
              _rate(r["kept_rate"], r["kept_ci_low"], r["kept_ci_high"]), _rate(r["judge_rate"])] for r in rows]
    headers = ["domain", "judged", "kept", "escalated", "kept share", "kept rate [95% CI]", "judge rate"]
    return Grid(headers, cells, f"{run_id} (policy {policy}): JUDGE_PASSED kept by the judge's calibration",
                right=set(headers[1:]))


def _ppi_grid(run_id: str, policy: str, rows: list[dict]) -> Grid:
    cells = [[r["domain"], str(r["judged"]), str(r["labels"]), _rate(r["judge_rate"]),
              _rate(r["labels_rate"], r["labels_ci_low"], r["labels_ci_high"]),
              _rate(r["corrected_rate"], r["corrected_ci_low"], r["corrected_ci_high"]),
              _rate(r["ppi_rate"], r["ppi_ci_low"], r["ppi_ci_high"]), r["ppi_method"] or ""] for r in rows]
    headers = ["domain", "judged", "labels", "judge rate", "labels rate [95% CI]", "corrected [95% CI]",
               "ppi rate [95% CI]", "ppi method"]
    return Grid(headers, cells, f"{run_id} (policy {policy}): JUDGE_PASSED from the judge, from people, and both",
                right=set(headers[1:-1]))


@command
def rates(
    run: Annotated[Optional[str], typer.Option("--run", "-r", help="Only this run (its session directory name)")] = None,
    by: Annotated[RatesBy, typer.Option(
        "--by", help="Group by domain or by signal; scorer: Inspect AI runs' metrics per task and scorer")] = RatesBy.domain,
    policy: PolicyOpt = RECORDED,
    calibrated: Annotated[bool, typer.Option(
        "--calibrated", help="JUDGE_PASSED's rate corrected by people's labels of the run (reviews of judge_passed): "
                             "the judge's sensitivity and specificity against them, the corrected rate and its "
                             "95% interval")] = False,
    selective: Annotated[bool, typer.Option(
        "--selective", help="The verdicts of the policy's judge its calibration keeps (judges --calibrate): their "
                            "rate, the coverage and the escalated count per domain")] = False,
    ppi: Annotated[bool, typer.Option(
        "--ppi", help="JUDGE_PASSED's prediction-powered rate (PPI++) per domain, beside the judge-only, "
                      "labels-only and Rogan-Gladen rates, each with its 95% interval")] = False,
    read: Read = Read(),
) -> None:
    """Success, task-success and per-signal rates, per domain or per signal (one table per run).

    Example: scorelake rates --run eval_20260904_080000 --by signal
    Example: scorelake rates --run eval_20260904_080000 --calibrated
    Example: scorelake rates --ppi
    """
    from scorelake.present import headline_facts

    wh = read.open()
    if sum((calibrated, selective, ppi)) > 1:
        fail("--calibrated, --selective and --ppi each show JUDGE_PASSED another way: choose one", 2)
    if selective or ppi:
        _judge_rates(wh, run, policy, read, "selective" if selective else "ppi")
        return
    if by is RatesBy.scorer:
        found = wh.rates(by="scorer", run=run)
        if not emitted(found, read.fmt, read.wide):
            cells = [[r["run_id"], r["task"], r["scorer"], str(r["samples"]), str(r["scores"]), f"{r['accuracy']:.4f}",
                      f"{r['stderr']:.4f}"] for r in found.iter_rows(named=True)]
            headers = ["run", "eval task", "inspect scorer", "samples", "scores", "accuracy", "stderr"]
            show_grid(Grid(headers, cells, "Inspect AI runs: each scorer's metrics, as Inspect computes them",
                           keys=3, right=set(headers[3:])))
        return
    titled = read.fmt is Format.table and not read.wide and not calibrated  # tables titled with the headline
    with wh.connection():
        df = wh.rates(by=by.value, run=run, policy=policy, calibrated=calibrated)
        judge_only = _judge_only(wh, run, policy)
        headlines = {h.run_id: h for h in wh.headlines(run, policy)} if titled else {}
    if not emitted(df, read.fmt, read.wide):
        for n, ((run_id,), rows) in enumerate(df.group_by("run_id", maintain_order=True)):
            if n:
                print()
            if calibrated:
                show_grid(_calibrated_grid(run_id, policy, rows.to_dicts()))
                continue
            title = f"{run_id} (policy {policy}): {headline_facts(headlines[run_id])}"
            show_grid((_domain_grid if by is RatesBy.domain else _signal_grid)(title, rows.to_dicts()))
    say_policy_judge(wh, policy)
    say_judge_only(judge_only)


def _judge_only(wh: scorelake.Warehouse, run: str | None, policy: str) -> pl.DataFrame:
    """The scenarios (of ``run``, or of every run) that failed only because their judge failed."""
    return wh.judge_errors(run, policy).filter(pl.col("judge_only"))


def say_judge_only(judge_only: pl.DataFrame) -> None:
    """On stderr, per run: how many scenarios failed only because the LLM judge itself failed, and
    the command that asks a judge again about them."""
    for (run_id, judge), rows in judge_only.group_by("run_id", "judge", maintain_order=True):
        base = "" if judge == RECORDED else f" --from {judge}"
        err().print(f"[yellow]note[/] {run_id}: {rows.height} scenario(s) failed only because the judge itself "
                    f"failed (scored 0.0 as upstream does): {', '.join(rows['scenario_name'])}; see the "
                    f"judge_errors view; ask again: scorelake rejudge --judge retried --only-errors{base} "
                    f"--run {run_id}, then scorelake rescore --policy retried --judge retried", highlight=False)


def say_policy_judge(wh: scorelake.Warehouse, policy: str) -> None:
    """On stderr: which judge a policy takes JUDGE_PASSED and NL_ASSERTION from, when not the runs' own."""
    judge = wh.policy_judge(policy)
    if judge != RECORDED:
        err().print(f"[dim]policy {policy}: judge verdicts from judge '{judge}'[/]", highlight=False)


@command
def summary(
    run: Annotated[Optional[str], typer.Argument(
        help="Run id: the session directory name, e.g. eval_20260902_091500 (with --brief: every run without it)")]
        = None,
    policy: PolicyOpt = RECORDED,
    brief: Annotated[bool, typer.Option(
        "--brief", help="The run's headline in one line instead: success with its 95% interval and n, the change "
                        "from the run before in its group, judge errors, stalls, the worst domain")] = False,
    at: Where = Where(),
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write to this file")] = None,
) -> None:
    """Render the run's all_summary.txt from the warehouse, as the upstream runner writes it; or,
    with --brief, a line per run.

    Example: scorelake summary eval_20260904_080000 -o all_summary.txt
    Example: scorelake summary --brief
    """
    from scorelake.present import headline_text

    if run is None and not brief:
        fail("summary: name a run (or ask for every run's headline with --brief)", 2)
    wh = at.open()
    with wh.connection():
        if brief:
            text = "".join(headline_text(h) + "\n" for h in wh.headlines(run, policy))
        else:
            text = wh.summary(run, policy)
        judge_only = _judge_only(wh, run, policy)
    say_policy_judge(wh, policy)  # on stderr: the summary itself stays the runner's, byte for byte
    say_judge_only(judge_only)
    if output:
        write_output(output, text)
    else:
        sys.stdout.write(text)


@command
def history(
    domain: Annotated[str, typer.Option("--domain", "-d", help="A domain bucket [default: the whole run]")] = "(all)",
    policy: PolicyOpt = RECORDED,
    alpha: AlphaOpt = 0.05,
    read: Read = Read(),
) -> None:
    """Rates across runs in session order, for one domain or the whole run, with Wilson 95% intervals,
    response latency, and each run's change from the run before it in its group: `regressed` or
    `improved` only beyond the noise (exact McNemar on the scenarios both ran the same way).

    Example: scorelake history --domain qa
    """
    df = read.open().history(domain, policy, alpha=alpha)
    if df.is_empty():
        fail(f"no scored runs for domain '{domain}' under policy '{policy}'", 2)
    if emitted(df, read.fmt, read.wide):
        return
    headers = ["run", "started", "n", "success", "95% CI", "task", "stalled", "p50 ms", "p95 ms", "change",
               "broken", "fixed"]
    cells = [[r["run_id"], cell(r["session_started_at"])[:16], str(r["scenarios"]),
              pct(r["success_passed"], r["success_total"]), interval(r["success_ci_low"], r["success_ci_high"]),
              "" if r["task_success_rate"] is None else f"{r['task_success_rate'] * 100:.1f}%", str(r["stalled"]),
              ms(r["p50_ms"]), ms(r["p95_ms"]), _CHANGE_MARKS.get(r["change"], r["change"] or ""),
              "" if r["previous_run"] is None else str(r["broken"]),
              "" if r["previous_run"] is None else str(r["fixed"])]
             for r in df.iter_rows(named=True)]
    show_grid(Grid(headers, cells, f"composite success of {domain}, policy {policy}, oldest first; change: from the "
                   f"run before in its group, alpha {alpha:g}",
              right=set(headers[2:9]) | {"broken", "fixed"}).without_empty_columns())


# A change beyond the noise stands out in a column of "inconclusive"s.
_CHANGE_MARKS = {"regressed": "REGRESSED", "improved": "IMPROVED"}


@command
def passk(
    group: Annotated[Optional[str], typer.Option("--group", "-g", help="One run group [default: every group]")] = None,
    policy: PolicyOpt = RECORDED,
    read: Read = Read(),
) -> None:
    """pass^k per run group and domain (k up to the trial count): recomputed and claimed side by side.

    Example: scorelake passk --group default
    """
    wh = read.open()
    df = wh.passk(group, policy)
    if df.is_empty():
        fail(f"no run group '{group}' scored under policy '{policy}'" if group else f"no scored runs in {wh.location}", 2)
    if emitted(df, read.fmt, read.wide):
        return
    share = lambda v: "" if v is None else f"{v:.3f}"  # noqa: E731
    headers = ["domain", "k", "tasks", "pass^k", "95% CI", "claimed tasks", "claimed pass^k"]
    for n, ((run_group,), rows) in enumerate(df.group_by("run_group", maintain_order=True)):
        if n:
            print()
        cells = [[r["domain"], str(r["k"]), str(r["tasks"]), share(r["pass_hat_k"]),
                  interval(r["ci_low"], r["ci_high"]), str(r["claimed_tasks"]), share(r["claimed_pass_hat_k"])]
                 for r in rows.iter_rows(named=True)]
        show_grid(Grid(headers, cells, f"{run_group} (policy {policy})", right=set(headers[1:])).without_empty_columns())


@command
def report(
    out_file: Annotated[Path, typer.Option("--out", "-o", help="Where to write the HTML file")],
    policy: PolicyOpt = RECORDED,
    at: Where = Where(),
) -> None:
    """Write a self-contained HTML report: rates across runs, latest vs previous run, stalled scenarios.

    Example: scorelake report --out report.html
    """
    write_output(out_file, at.open().report(policy))
    err().print(f"report written to {out_file}")


@command
def check(warehouse: WarehouseOpt = None) -> None:
    """Verify the warehouse: every run's committed rows complete, every stored policy scored, the
    view database reading only this warehouse's files.

    Example: scorelake check -w s3://evals/scorelake
    """
    wh = scorelake.open(warehouse)
    result = wh.check()
    for problem in result.problems:
        err().print(f"[red]inconsistent[/] {problem}", highlight=False)
    for warning in result.warnings:
        err().print(f"[yellow]warning[/] {warning}", highlight=False)
    if not result.consistent:
        raise typer.Exit(1)
    err().print(f"{wh.location}: consistent ({result.runs} runs)")


@command
def log(
    last: Annotated[Optional[int], typer.Option("--last", "-n", min=1, help="Only the newest N versions")] = None,
    read: Read = Read(),
) -> None:
    """The warehouse versions, oldest first: what each write step did and the table versions it left
    (any of them is an --as-of VERSION; with --as-of, the versions up to it).

    Example: scorelake log --last 5
    Example: scorelake log --format json
    """
    wh = read.open()
    commits = wh.log()
    if emitted(wh.versions().tail(last or len(commits)), read.fmt, read.wide):
        return
    cells, before = [], {}
    for c in commits:  # the tables each step changed (from their creation, version 0), at the version it left them
        before = before or dict.fromkeys(c.table_versions, 0)
        changed = " ".join(f"{t}@{v}" for t, v in sorted(c.table_versions.items()) if before.get(t) != v)
        cells.append([str(c.version), c.committed_at.strftime("%Y-%m-%d %H:%M:%S"), c.operation, c.detail, changed,
                      c.committer or ""])
        before = c.table_versions
    show_grid(Grid(["version", "committed (UTC)", "operation", "what", "tables changed", "by (host:pid)"],
                   cells[-(last or len(cells)):], right={"version"}))


POLICY_FIELDS = {"judge": "judge", "reviews": "reviews", "judge_threshold": "threshold", "min_agent_turns": "min turns",
                 "strict_match": "strict", "judge_enabled": "judge on", "whitelists": "whitelists",
                 "scorer_version": "scorer"}


@command
def policies(read: Read = Read()) -> None:
    """List stored scoring policies.

    Example: scorelake policies --format csv
    """
    stored = read.open().policies()
    if emitted(stored, read.fmt, read.wide):
        return
    def shown(field: str, value: object) -> str:
        if field == "whitelists":
            return " ".join(f"{d}={','.join(s)}" for d, s in sorted(json.loads(value).items()))
        if field == "reviews":  # blank unless it takes them: the column is left out while none does
            return "yes" if value else ""
        return "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)

    cells = [[spec["name"], spec["policy_id"], *(shown(f, spec[f]) for f in POLICY_FIELDS)]
             for spec in stored.to_dicts()]
    show_grid(Grid(["name", "id", *POLICY_FIELDS.values()], cells, right={"threshold", "min turns"}, shortenable=False,
              note="blank: each run's own flag (as run_args.json recorded it)").without_empty_columns())
