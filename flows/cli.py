"""The ``scorelake`` command line."""

from __future__ import annotations

import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import polars as pl
import typer
from rich.console import Console
from rich.table import Table

from transforms.pipeline import check_policy, find_policy, prepare_for_writing, stored_policies, verify
from transforms.policy import RECORDED, Policy
from transforms.raw import Signal
from transforms.summary import render_summary
from transforms.warehouse import Warehouse, WarehouseBusy

app = typer.Typer(help="Re-score and query stored voice-agent evaluation runs.", no_args_is_help=True,
                  add_completion=False, pretty_exceptions_enable=False)
# Piped output is not cut to 80 columns.
out = Console() if sys.stdout.isatty() else Console(width=250)
err = Console(stderr=True)


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


class RatesBy(StrEnum):
    domain = "domain"
    signal = "signal"


WarehouseOpt = Annotated[Optional[Path], typer.Option(
    "--warehouse", "-w", help="Warehouse directory [default: $SCORELAKE_WAREHOUSE or data/warehouse]")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format")]
PolicyOpt = Annotated[str, typer.Option("--policy", "-p", help="Stored policy name or id")]


def fail(message: str, code: int = 1) -> None:
    err.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def _prepare_prefect(verbose: bool) -> None:
    # Prefect reads its settings at import: keep its INFO lines out of the progress display, and
    # its local server from trying to send telemetry off a machine that may have no network.
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    if not verbose:
        os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")


def emit(df: pl.DataFrame, fmt: Format, title: str | None = None) -> None:
    if fmt is Format.json:
        sys.stdout.write(json.dumps(df.to_dicts(), default=str, indent=2) + "\n")
    elif fmt is Format.csv:
        flat = df.with_columns(pl.col(c).cast(pl.List(pl.String)).list.join(";")
                               for c, t in df.schema.items() if isinstance(t, pl.List))
        sys.stdout.write(flat.write_csv())
    else:
        table = Table(title=title, show_lines=False)
        for name, dtype in df.schema.items():
            table.add_column(name, justify="right" if dtype.is_numeric() else "left")
        for row in df.iter_rows():
            table.add_row(*("" if v is None else f"{v:.4f}" if isinstance(v, float) else str(v) for v in row))
        out.print(table)


def open_warehouse(warehouse: Path | None) -> Warehouse:
    wh = Warehouse(warehouse)
    try:
        wh.require()
    except FileNotFoundError as exc:
        fail(str(exc))
    return wh


@app.command()
def ingest(
    runs_dirs: Annotated[Optional[list[Path]], typer.Argument(
        help="Folders of eval_* sessions, or session folders [default: data/runs]")] = None,
    warehouse: WarehouseOpt = None,
    force: Annotated[bool, typer.Option(help="Re-read sessions whose fingerprint is unchanged")] = False,
    group: Annotated[Optional[str], typer.Option(
        help="Run group: the system these runs are trials of, for pass^k [default: one group for all "
             "voice-agent sessions, one per tau2 / tau-bench file]")] = None,
    task_runner: Annotated[str, typer.Option(
        help="Where the per-run tasks run: threads, processes, or dask (prefect-dask)")] = "threads",
    dask_address: Annotated[Optional[str], typer.Option(
        help="Scheduler address of an existing Dask cluster [default: a local multi-process cluster]")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show Prefect's log lines")] = False,
) -> None:
    """Ingest new or changed runs (a Prefect flow), score them, refresh the views.

    RUNS_DIR may be a folder of voice-agent eval_* sessions or a session folder, a tau2-bench results
    file or results folder (results.json + simulations/), a tau-bench trajectory file, or a folder of them;
    formats are recognised by content."""
    _prepare_prefect(verbose)
    from flows.ingest import ingest_flow, make_task_runner

    for path in runs_dirs or []:
        if not path.exists():
            fail(f"{path}: no such file or directory", 2)
    try:
        runner = make_task_runner(task_runner, dask_address)
    except (ValueError, ImportError) as exc:
        fail(str(exc), 2)
    try:
        result = ingest_flow.with_options(task_runner=runner)(
            runs_dirs=[str(p) for p in runs_dirs] if runs_dirs else None,
            warehouse=str(warehouse) if warehouse else None, force=force, progress=sys.stderr.isatty(), group=group)
    except WarehouseBusy as exc:
        fail(str(exc))
    except ValueError as exc:
        fail(str(exc), 2)
    for report in result["ingested"]:
        err.print(f"{report['run_id']}: {report['status']}, {report['scenarios']} scenarios"
                  + (f", [yellow]{report['quarantined']} quarantined[/]" if report["quarantined"] else ""))
        for problem in report["problems"]:
            err.print(f"  [yellow]quarantined[/] {problem}", highlight=False)
    for refused in result["refused"]:
        err.print(f"[red]refused[/] {refused['path']}: {refused['reason']}", highlight=False)
    err.print(f"{len(result['ingested'])} ingested, {len(result['unchanged'])} unchanged, "
              f"{len(result['refused'])} refused -> {result['warehouse']}")
    if result["refused"]:
        raise typer.Exit(1)


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="A SQL query over the warehouse views")],
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Run a read-only SQL query against the warehouse's DuckDB views."""
    import duckdb

    wh = open_warehouse(warehouse)
    with wh.connect() as con:
        try:
            df = con.sql(query).pl()
        except AttributeError:
            fail("the statement returned no rows (statements that modify the warehouse are refused)", 2)
        except duckdb.Error as exc:
            fail(str(exc).splitlines()[0], 2)
    emit(df, fmt)


def open_scored(warehouse: Path | None, policy: str) -> tuple[Warehouse, str]:
    """The warehouse and the id of the stored policy named ``policy``."""
    wh = open_warehouse(warehouse)
    try:
        return wh, find_policy(wh, policy).id
    except KeyError as exc:
        fail(str(exc.args[0]), 2)


@app.command()
def rates(
    run: Annotated[Optional[str], typer.Option("--run", "-r", help="Only this run (its session directory name)")] = None,
    by: Annotated[RatesBy, typer.Option("--by", help="Group by domain or by signal")] = RatesBy.domain,
    policy: PolicyOpt = RECORDED,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Success, task-success and per-signal rates, per domain or per signal."""
    wh, policy_id = open_scored(warehouse, policy)
    with wh.connect() as con:
        df = wh.query(con, f"rates_by_{by}", policy_id=policy_id, run_id=run)
    if run and df.is_empty():
        fail(f"no scored run '{run}' in {wh.root}", 2)
    emit(df, fmt)


def require_run(wh: Warehouse, con, run: str) -> dict:
    """The committed run named ``run``, or a clear error."""
    found = wh.query(con, "run", run_id=run)
    if found.is_empty():
        fail(f"no run '{run}' in {wh.root}", 2)
    return found.row(0, named=True)


@app.command()
def summary(
    run: Annotated[str, typer.Argument(help="Run id: the session directory name, e.g. eval_20260902_091500")],
    policy: PolicyOpt = RECORDED,
    warehouse: WarehouseOpt = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write to this file")] = None,
) -> None:
    """Render the run's all_summary.txt from the warehouse, as the upstream runner writes it."""
    wh, policy_id = open_scored(warehouse, policy)
    with wh.connect() as con:
        info = require_run(wh, con, run)
        rows = wh.query(con, "summary_scenarios", run_id=run, policy_id=policy_id).to_dicts()
    if info["status"] == "quarantined":
        fail(f"run '{run}' is quarantined (see the `quarantined` view)", 2)
    min_turns = rows[0]["min_agent_turns"] if rows else info["min_agent_turns"]
    text = render_summary(rows, info["queued_count"], min_turns)
    if output:
        output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def _parse_whitelists(items: list[str]) -> dict[str, tuple[Signal, ...]]:
    whitelists = {}
    for item in items:
        domain, sep, signals = item.partition("=")
        if not sep or not domain:
            fail(f"--whitelist expects DOMAIN=signal[,signal...], got '{item}'", 2)
        try:
            whitelists[domain] = tuple(Signal(s.strip()) for s in signals.split(",") if s.strip())
        except ValueError as exc:
            fail(f"--whitelist {item}: {exc}; signals are {', '.join(s.value for s in Signal)}", 2)
    return whitelists


@app.command()
def rescore(
    policy: Annotated[Optional[str], typer.Option(
        "--policy", "-p", help="Policy name: a stored one, or a new one defined by the flags below")] = None,
    judge_threshold: Annotated[Optional[float], typer.Option(help="Judge pass threshold (score >= F)")] = None,
    min_agent_turns: Annotated[Optional[int], typer.Option(help="Stall filter (0 turns it off)")] = None,
    strict_match: Annotated[Optional[bool], typer.Option(
        "--strict-match/--lenient-match", help="Force ACTION_MATCH strict matching on or off")] = None,
    judge: Annotated[Optional[bool], typer.Option(
        "--judge/--no-judge", help="Count the LLM judge's signals, or treat them as not applicable")] = None,
    whitelist: Annotated[Optional[list[str]], typer.Option(
        help="Override a domain's gating signals: DOMAIN=signal[,signal...] (repeatable)")] = None,
    run: Annotated[Optional[list[str]], typer.Option("--run", "-r", help="Only these runs (repeatable)")] = None,
    warehouse: WarehouseOpt = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show Prefect's log lines")] = False,
) -> None:
    """Re-score stored runs under a policy from the Parquet tables alone (a Prefect flow)."""
    wh = open_warehouse(warehouse)
    flags = {"judge_threshold": judge_threshold, "min_agent_turns": min_agent_turns, "strict_match": strict_match,
             "judge_enabled": judge, "whitelists": _parse_whitelists(whitelist or [])}
    defined = {k: v for k, v in flags.items() if v not in (None, {})}
    try:
        if defined:
            spec = Policy(**defined)
            chosen = Policy(name=policy or f"policy-{spec.id[:8]}", **defined)
            check_policy(wh, chosen)
        elif policy:
            chosen = find_policy(wh, policy)
        else:
            fail("give --policy NAME and/or the flags that define a policy", 2)
    except (ValueError, KeyError) as exc:
        fail(str(exc.args[0]) if isinstance(exc, KeyError) else str(exc), 2)
    _prepare_prefect(verbose)
    from flows.ingest import rescore_flow

    try:
        result = rescore_flow(warehouse=str(wh.root), policy_specs=[chosen.spec_json()], run_ids=run)
    except KeyError as exc:
        fail(str(exc.args[0]), 2)
    except WarehouseBusy as exc:
        fail(str(exc))
    err.print(f"policy '{chosen.name}' ({chosen.id}): {result['scored'][chosen.name]} scenarios scored")


def _comparison(wh: Warehouse, con, run_a: str, run_b: str, policy_id: str):
    from transforms.compare import compare

    rates = wh.query(con, "compare_rates", policy_id=policy_id, run_a=run_a, run_b=run_b)
    flips = wh.query(con, "compare_flips", policy_id=policy_id, run_a=run_a, run_b=run_b)
    return compare(rates, flips, run_a, run_b)


@app.command(name="compare")
def compare_runs(
    run_a: Annotated[str, typer.Argument(help="The earlier run (baseline)")],
    run_b: Annotated[str, typer.Argument(help="The later run")],
    policy: PolicyOpt = RECORDED,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Compare two runs: per-domain deltas with 95% intervals, flipped scenarios, exact McNemar test."""
    from transforms.compare import delta_text

    wh, policy_id = open_scored(warehouse, policy)
    with wh.connect() as con:
        for run in (run_a, run_b):
            require_run(wh, con, run)
        c = _comparison(wh, con, run_a, run_b, policy_id)
    if fmt is not Format.table:
        if fmt is Format.csv:
            emit(c.deltas, fmt)
            return
        sys.stdout.write(json.dumps({
            "run_a": run_a, "run_b": run_b, "domains": c.deltas.to_dicts(), "fixed": c.fixed, "broken": c.broken,
            "paired": c.paired, "mcnemar": {"broken": c.mcnemar.broken, "fixed": c.mcnemar.fixed,
                                            "p_value": c.mcnemar.p_value}}, indent=2) + "\n")
        return
    pct = lambda v: "" if v is None else f"{v * 100:.1f}%"  # noqa: E731
    table = Table(title=f"{run_a} -> {run_b} (composite success, policy {policy})")
    for column in ("domain", "A", "A 95% CI", "B", "B 95% CI", "delta", "delta 95% CI"):
        table.add_column(column, justify="left" if column == "domain" else "right")
    for r in c.deltas.iter_rows(named=True):
        ci = lambda lo, hi: "" if lo is None else f"[{lo * 100:.1f}, {hi * 100:.1f}]"  # noqa: E731
        delta, delta_ci = delta_text(r, "")
        table.add_row(r["domain"], f"{pct(r['rate_a'])} ({r['passed_a']}/{r['total_a']})" if r["total_a"] else "",
                      ci(r["ci_low_a"], r["ci_high_a"]),
                      f"{pct(r['rate_b'])} ({r['passed_b']}/{r['total_b']})" if r["total_b"] else "",
                      ci(r["ci_low_b"], r["ci_high_b"]), delta, delta_ci)
    out.print(table)
    out.print(f"fixed (failed -> passed), {len(c.fixed)}: {', '.join(c.fixed) or 'none'}", highlight=False)
    out.print(f"broken (passed -> failed), {len(c.broken)}: {', '.join(c.broken) or 'none'}", highlight=False)
    out.print(f"exact McNemar on {c.paired} paired scenarios: {c.mcnemar.broken} broken vs "
              f"{c.mcnemar.fixed} fixed, p = {c.mcnemar.p_value:.4g}", highlight=False)


@app.command()
def history(
    domain: Annotated[str, typer.Option("--domain", "-d", help="A domain bucket [default: the whole run]")] = "(all)",
    policy: PolicyOpt = RECORDED,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Rates across runs in session order, for one domain or the whole run, with Wilson 95% intervals."""
    wh, policy_id = open_scored(warehouse, policy)
    with wh.connect() as con:
        df = wh.query(con, "history", policy_id=policy_id, domain=domain)
    if df.is_empty():
        fail(f"no scored runs for domain '{domain}' under policy '{policy}'", 2)
    emit(df, fmt)


@app.command()
def report(
    out_file: Annotated[Path, typer.Option("--out", "-o", help="Where to write the HTML file")],
    policy: PolicyOpt = RECORDED,
    warehouse: WarehouseOpt = None,
) -> None:
    """Write a self-contained HTML report: rates across runs, latest vs previous run, stalled scenarios."""
    from transforms.report import render_report

    wh, policy_id = open_scored(warehouse, policy)
    with wh.connect() as con:
        runs = wh.query(con, "report_runs", policy_id=policy_id)
        if runs.is_empty():
            fail(f"no runs scored under policy '{policy}'", 2)
        history = wh.query(con, "report_history", policy_id=policy_id)
        latest = runs.row(-1, named=True)
        earlier = runs.filter(pl.col("run_group").eq_missing(latest["run_group"])).head(-1)
        comparison = (_comparison(wh, con, earlier["run_id"][-1], latest["run_id"], policy_id)
                      if earlier.height else None)
        stalled = wh.query(con, "report_stalled", policy_id=policy_id)
    out_file.write_text(render_report(history, runs, comparison, stalled, policy), encoding="utf-8")
    err.print(f"report written to {out_file}")


@app.command()
def check(warehouse: WarehouseOpt = None) -> None:
    """Verify the warehouse: every run's committed rows complete and every stored policy scored."""
    wh = open_warehouse(warehouse)
    problems = verify(wh)
    for problem in problems:
        err.print(f"[red]inconsistent[/] {problem}", highlight=False)
    if problems:
        raise typer.Exit(1)
    err.print(f"{wh.root}: consistent ({wh.committed_runs().height} runs)")


@app.command()
def compact(warehouse: WarehouseOpt = None) -> None:
    """Fold the per-run Parquet files into one snapshot per table (ingest and rescore do it on their
    own once the files pile up); queries and re-scores then open a handful of files."""
    wh = open_warehouse(warehouse)
    try:
        with wh.writer_lock():
            prepare_for_writing(wh)
            wh.compact()
    except WarehouseBusy as exc:
        fail(str(exc))
    err.print(f"{wh.root}: compacted ({wh.committed_runs().height} runs)")


@app.command()
def policies(warehouse: WarehouseOpt = None, fmt: FormatOpt = Format.table) -> None:
    """List stored scoring policies."""
    wh = open_warehouse(warehouse)
    rows = [{"policy_id": p.id, **p.model_dump(mode="json")} for p in stored_policies(wh)]
    emit(pl.DataFrame(rows).with_columns(pl.col("whitelists").cast(pl.String)), fmt)


@app.command()
def serve(
    runs_dirs: Annotated[list[Path], typer.Argument(help="Folders of eval_* sessions to watch")],
    cron: Annotated[Optional[str], typer.Option(help="Cron schedule, e.g. '0 * * * *'")] = None,
    interval: Annotated[Optional[float], typer.Option(help="Seconds between runs")] = None,
    name: Annotated[str, typer.Option(help="Deployment name")] = "scheduled",
    warehouse: WarehouseOpt = None,
) -> None:
    """Serve a Prefect deployment that ingests new runs and re-scores every stored policy on a schedule."""
    if (cron is None) == (interval is None):
        fail("give exactly one of --cron or --interval", 2)
    from prefect import serve as prefect_serve

    from flows.ingest import refresh_flow

    wh = Warehouse(warehouse)
    deployment = refresh_flow.to_deployment(
        name=name, cron=cron, interval=interval,
        parameters={"runs_dirs": [str(p.resolve()) for p in runs_dirs], "warehouse": str(wh.root.resolve())})
    err.print(f"serving deployment 'scorelake-refresh/{name}' -> {wh.root}")
    prefect_serve(deployment)


if __name__ == "__main__":
    app()
