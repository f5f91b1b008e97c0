"""The ``scorelake`` command line."""

from __future__ import annotations

import functools
import json
import sys
from contextlib import ExitStack, contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Iterator, Optional

import polars as pl
import typer

from flows import runtime
from flows.terminal import Grid, show, wrapped
from transforms.warehouse import Warehouse, WarehouseBusy

# Read-only commands import neither Prefect nor the scoring code: each command imports what it uses.
RECORDED = "recorded"  # the built-in policy (transforms.policy.RECORDED)

app = typer.Typer(help="Re-score and query stored voice-agent evaluation runs.", no_args_is_help=True,
                  add_completion=False, pretty_exceptions_enable=False)


@functools.cache
def err():
    """The console for messages (rich, for their colours: imported only when there is one to print)."""
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)  # a message is one line, however narrow the terminal


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


class RatesBy(StrEnum):
    domain = "domain"
    signal = "signal"


WarehouseOpt = Annotated[Optional[str], typer.Option(
    "--warehouse", "-w", help="Warehouse: a directory, or a URL such as s3://bucket/prefix "
                              "[default: $SCORELAKE_WAREHOUSE or data/warehouse]")]
AsOfOpt = Annotated[Optional[str], typer.Option(
    "--as-of", help="Answer as the warehouse stood then: a version (see `scorelake log`) or a timestamp "
                    "(ISO 8601, UTC unless it says; a date means its end)")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format")]
PolicyOpt = Annotated[str, typer.Option("--policy", "-p", help="Stored policy name or id")]


def fail(message: str, code: int = 1) -> None:
    err().print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


WideOpt = Annotated[bool, typer.Option("--wide", help="Every column, in one table however wide")]
PrefectOpt = Annotated[bool, typer.Option(
    "--prefect", help="Run as a Prefect flow even with no API configured (a temporary local server)")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Show Prefect's log lines")]


def cell(value: object) -> str:
    return "" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)


def emit(df: pl.DataFrame, fmt: Format, wide: bool = False) -> None:
    """``df`` as JSON, CSV, or a table of every column (fitted to the terminal unless ``wide``)."""
    if fmt is Format.json:
        sys.stdout.write(json.dumps(df.to_dicts(), default=str, indent=2) + "\n")
    elif fmt is Format.csv:
        flat = df.with_columns(pl.col(c).cast(pl.List(pl.String)).list.join(";")
                               for c, t in df.schema.items() if isinstance(t, pl.List))
        sys.stdout.write(flat.write_csv())
    else:
        right = {name for name, dtype in df.schema.items() if dtype.is_numeric()}
        show(Grid(df.columns, [[cell(v) for v in row] for row in df.iter_rows()], right=right), wide)


def pct(passed: int | None, total: int | None) -> str:
    """A rate as people read it: percent with its counts; blank without a denominator."""
    return f"{passed / total * 100:.1f}% {passed}/{total}" if total else ""


def interval(low: float | None, high: float | None) -> str:
    return "" if low is None else f"{low * 100:.1f}-{high * 100:.1f}"


def open_warehouse(warehouse: str | None) -> Warehouse:
    """The warehouse, or a clear error."""
    wh = Warehouse(warehouse)
    try:
        wh.require()
    except FileNotFoundError as exc:
        fail(str(exc))
    return wh


@contextmanager
def connected(warehouse: str | None, as_of: str | None = None) -> Iterator[tuple[Warehouse, object]]:
    """The warehouse and one connection to its views as of ``as_of``; a clear error when the
    warehouse, or a version it can still read, is not there."""
    wh = open_warehouse(warehouse)
    with ExitStack() as stack:
        try:
            con = stack.enter_context(wh.connect(as_of))
        except (KeyError, ValueError) as exc:
            fail(str(exc.args[0]), 2)
        yield wh, con


@contextmanager
def scored(warehouse: str | None, policy: str, as_of: str | None = None) -> Iterator[tuple[Warehouse, object, str]]:
    """``connected``, with the id of the stored policy named ``policy`` (a name or an id)."""
    with connected(warehouse, as_of) as (wh, con):
        found = wh.query(con, "policy", policy=policy)
        if found.is_empty():
            fail(f"no stored policy named '{policy}'", 2)
        yield wh, con, found["policy_id"][0]


def open_for_writing(warehouse: str | None) -> Warehouse:
    """``open_warehouse`` for a write command: a warehouse of the former table format converted first."""
    convert_if_former(Warehouse(warehouse))
    return open_warehouse(warehouse)


def orchestrate(prefect: bool, task_runner: str, verbose: bool) -> runtime.Orchestration:
    """In-process or a Prefect flow run (see flows.runtime), with Prefect's settings made first."""
    chosen = runtime.choose(prefect, task_runner)
    if chosen.prefect:
        runtime.prepare_prefect(chosen, verbose, lambda line: err().print(f"[dim]{line}[/]", highlight=False))
    return chosen


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
        help="Where the per-run tasks run: threads, processes, or dask (prefect-dask, a Prefect flow)")] = "threads",
    dask_address: Annotated[Optional[str], typer.Option(
        help="Scheduler address of an existing Dask cluster [default: a local multi-process cluster]")] = None,
    prefect: PrefectOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Ingest new or changed runs, score them, refresh the views.

    In-process when no Prefect API is configured; a Prefect flow run when one is (PREFECT_API_URL or
    a profile), with --prefect, or with --task-runner dask. RUNS_DIR may be a folder of voice-agent
    eval_* sessions or a session folder, a tau2-bench results file or results folder (results.json +
    simulations/), a tau-bench trajectory file, or a folder of them; formats are recognised by content."""
    for path in runs_dirs or []:
        if not path.exists():
            fail(f"{path}: no such file or directory", 2)
    if dask_address:
        task_runner = "dask"
    convert_if_former(Warehouse(warehouse))  # here, to say where the former files went
    orchestration = orchestrate(prefect, task_runner, verbose)
    args = dict(runs_dirs=[str(p) for p in runs_dirs] if runs_dirs else None,
                warehouse=warehouse, force=force, progress=sys.stderr.isatty(),
                group=group)
    try:
        if orchestration.prefect:
            from flows.ingest import ingest_flow, make_task_runner

            result = ingest_flow.with_options(task_runner=make_task_runner(task_runner, dask_address))(**args)
        else:
            from flows.flow_bodies import InProcess, ingest as ingest_in_process

            result = ingest_in_process(InProcess(task_runner), **args)
    except (ImportError, ValueError) as exc:
        fail(str(exc), 2)
    except WarehouseBusy as exc:
        fail(str(exc))
    for report in result["ingested"]:
        err().print(f"{report['run_id']}: {report['status']}, {report['scenarios']} scenarios"
                  + (f", [yellow]{report['quarantined']} quarantined[/]" if report["quarantined"] else ""))
        for problem in report["problems"]:
            err().print(f"  [yellow]quarantined[/] {problem}", highlight=False)
        for warning in report["warnings"]:
            err().print(f"  [yellow]warning[/] {warning}", highlight=False)
    for refused in result["refused"]:
        err().print(f"[red]refused[/] {refused['path']}: {refused['reason']}", highlight=False)
    err().print(f"{len(result['ingested'])} ingested, {len(result['unchanged'])} unchanged, "
              f"{len(result['refused'])} refused -> {result['warehouse']}; {orchestration.describe()}",
              highlight=False)
    if result["refused"]:
        raise typer.Exit(1)


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="A SQL query over the warehouse views")],
    warehouse: WarehouseOpt = None,
    as_of: AsOfOpt = None,
    fmt: FormatOpt = Format.table,
    wide: WideOpt = False,
) -> None:
    """Run a read-only SQL query against the warehouse's DuckDB views."""
    import duckdb

    with connected(warehouse, as_of) as (_, con):
        try:
            relation = con.sql(query)
            if relation is None:
                fail("the statement returned no rows (statements that modify the warehouse are refused)", 2)
            df = pl.DataFrame(relation)
        except duckdb.Error as exc:
            fail(str(exc).splitlines()[0], 2)
    emit(df, fmt, wide)


def scored_rows(warehouse: str | None, policy: str, query: str, missing: str | None, as_of: str | None = None,
                **params) -> pl.DataFrame:
    """``sql/queries/<query>.sql`` under the stored policy ``policy``; an error saying ``missing``
    when it has no rows (None: no rows is an answer)."""
    with scored(warehouse, policy, as_of) as (wh, con, policy_id):
        df = wh.query(con, query, policy_id=policy_id, **params)
    if missing and df.is_empty():
        fail(missing.replace("{root}", wh.location), 2)
    return df


def emitted(df: pl.DataFrame, fmt: Format, wide: bool) -> bool:
    """Emit ``df`` as is when asked for JSON, CSV or every column; False when a compact table is wanted."""
    if fmt is Format.table and not wide:
        return False
    emit(df, fmt, wide)
    return True


SIGNAL_HEADERS = {"is_action_match": "action match", "db_state_match": "db match",
                  "db_state_assertion": "db assertions", "nl_assertion": "nl assertions",
                  "judge_passed": "judge passed", "clean_exit": "clean exit"}


def _domain_grid(run_id: str, policy: str, rows: list[dict]) -> Grid:
    headers = ["domain", "n", "success", "task", "db match", "db assertions", "nl assertions", "stalled"]
    cells = [[r["domain"], str(r["scenarios"]), pct(r["success_passed"], r["success_total"]),
              pct(r["task_passed"], r["task_total"]), pct(r["db_state_match_passed"], r["db_state_match_total"]),
              pct(r["db_state_assertion_passed"], r["db_state_assertion_total"]),
              pct(r["nl_assertion_passed"], r["nl_assertion_total"]), str(r["stalled"])] for r in rows]
    return Grid(headers, cells, f"{run_id} (policy {policy})", right=set(headers[1:])).without_empty_columns()


def _signal_grid(run_id: str, policy: str, rows: list[dict]) -> Grid:
    cells = [[SIGNAL_HEADERS[r["signal"]], pct(r["passed"], r["total"]), r["unit"]] for r in rows]
    return Grid(["signal", "pass rate", "counted in"], cells, f"{run_id} (policy {policy})", right={"pass rate"})


@app.command()
def rates(
    run: Annotated[Optional[str], typer.Option("--run", "-r", help="Only this run (its session directory name)")] = None,
    by: Annotated[RatesBy, typer.Option("--by", help="Group by domain or by signal")] = RatesBy.domain,
    policy: PolicyOpt = RECORDED,
    warehouse: WarehouseOpt = None,
    as_of: AsOfOpt = None,
    fmt: FormatOpt = Format.table,
    wide: WideOpt = False,
) -> None:
    """Success, task-success and per-signal rates, per domain or per signal (one table per run)."""
    missing = f"no scored run '{run}' in {{root}}" if run else None  # all runs: no rows is an answer
    df = scored_rows(warehouse, policy, f"rates_by_{by}", missing, as_of, run_id=run)
    if emitted(df, fmt, wide):
        return
    grid = _domain_grid if by is RatesBy.domain else _signal_grid
    for n, ((run_id,), rows) in enumerate(df.group_by("run_id", maintain_order=True)):
        if n:
            print()
        show(grid(run_id, policy, rows.to_dicts()))


def require_run(wh: Warehouse, con, run: str) -> dict:
    """The committed run named ``run``, or a clear error."""
    found = wh.query(con, "run", run_id=run)
    if found.is_empty():
        fail(f"no run '{run}' in {wh.location}", 2)
    return found.row(0, named=True)


@app.command()
def summary(
    run: Annotated[str, typer.Argument(help="Run id: the session directory name, e.g. eval_20260902_091500")],
    policy: PolicyOpt = RECORDED,
    warehouse: WarehouseOpt = None,
    as_of: AsOfOpt = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write to this file")] = None,
) -> None:
    """Render the run's all_summary.txt from the warehouse, as the upstream runner writes it."""
    from transforms.summary import render_summary

    with scored(warehouse, policy, as_of) as (wh, con, policy_id):
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


def _parse_whitelists(items: list[str]) -> dict:
    from transforms.raw import Signal

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
    prefect: PrefectOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Re-score stored runs under a policy from the tables alone (in-process, or a Prefect
    flow run when an API is configured or with --prefect)."""
    from transforms.pipeline import check_policy, find_policy
    from transforms.policy import Policy

    wh = open_for_writing(warehouse)  # the policies are looked up here, before the flow's own preparation
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
    orchestration = orchestrate(prefect, "threads", verbose)
    args = dict(warehouse=wh.location, policy_specs=[chosen.spec_json()], run_ids=run)
    try:
        if orchestration.prefect:
            from flows.ingest import rescore_flow

            result = rescore_flow(**args)
        else:
            from flows.flow_bodies import InProcess, rescore_policies

            result = rescore_policies(InProcess(), **args)
    except KeyError as exc:
        fail(str(exc.args[0]), 2)
    except WarehouseBusy as exc:
        fail(str(exc))
    err().print(f"policy '{chosen.name}' ({chosen.id}): {result['scored'][chosen.name]} scenarios scored; "
              f"{orchestration.describe()}", highlight=False)


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
    as_of: AsOfOpt = None,
    fmt: FormatOpt = Format.table,
    wide: WideOpt = False,
) -> None:
    """Compare two runs: per-domain deltas with 95% intervals, flipped scenarios, exact McNemar test."""
    from transforms.compare import delta_text

    with scored(warehouse, policy, as_of) as (wh, con, policy_id):
        for run in (run_a, run_b):
            require_run(wh, con, run)
        c = _comparison(wh, con, run_a, run_b, policy_id)
    if fmt is Format.json:
        sys.stdout.write(json.dumps({
            "run_a": run_a, "run_b": run_b, "domains": c.deltas.to_dicts(), "fixed": c.fixed, "broken": c.broken,
            "paired": c.paired, "mcnemar": {"broken": c.mcnemar.broken, "fixed": c.mcnemar.fixed,
                                            "p_value": c.mcnemar.p_value}}, indent=2) + "\n")
        return
    if emitted(c.deltas, fmt, wide):
        return
    headers = ["domain", "A", "A 95% CI", "B", "B 95% CI", "delta", "delta 95% CI"]
    cells = [[r["domain"], pct(r["passed_a"], r["total_a"]), interval(r["ci_low_a"], r["ci_high_a"]),
              pct(r["passed_b"], r["total_b"]), interval(r["ci_low_b"], r["ci_high_b"]), *delta_text(r, "")]
             for r in c.deltas.iter_rows(named=True)]
    show(Grid(headers, cells, f"A {run_a} -> B {run_b} (composite success, policy {policy})",
              right=set(headers[1:])))
    print(wrapped(f"fixed (failed -> passed), {len(c.fixed)}: {', '.join(c.fixed) or 'none'}"))
    print(wrapped(f"broken (passed -> failed), {len(c.broken)}: {', '.join(c.broken) or 'none'}"))
    print(wrapped(f"exact McNemar on {c.paired} paired scenarios: {c.mcnemar.broken} broken vs "
                  f"{c.mcnemar.fixed} fixed, p = {c.mcnemar.p_value:.4g}"))


@app.command()
def history(
    domain: Annotated[str, typer.Option("--domain", "-d", help="A domain bucket [default: the whole run]")] = "(all)",
    policy: PolicyOpt = RECORDED,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
    wide: WideOpt = False,
) -> None:
    """Rates across runs in session order, for one domain or the whole run, with Wilson 95% intervals."""
    df = scored_rows(warehouse, policy, "history", f"no scored runs for domain '{domain}' under policy '{policy}'",
                     domain=domain)
    if emitted(df, fmt, wide):
        return
    headers = ["run", "started", "n", "success", "95% CI", "task", "stalled"]
    cells = [[r["run_id"], cell(r["session_started_at"])[:16], str(r["scenarios"]),
              pct(r["success_passed"], r["success_total"]), interval(r["success_ci_low"], r["success_ci_high"]),
              "" if r["task_success_rate"] is None else f"{r['task_success_rate'] * 100:.1f}%", str(r["stalled"])]
             for r in df.iter_rows(named=True)]
    show(Grid(headers, cells, f"composite success of {domain}, policy {policy}, oldest first",
              right=set(headers[2:])).without_empty_columns())


@app.command()
def passk(
    group: Annotated[Optional[str], typer.Option("--group", "-g", help="One run group [default: every group]")] = None,
    policy: PolicyOpt = RECORDED,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
    wide: WideOpt = False,
) -> None:
    """pass^k per run group and domain (k up to the trial count): recomputed and claimed side by side."""
    missing = f"no run group '{group}' scored under policy '{policy}'" if group else "no scored runs in {root}"
    df = scored_rows(warehouse, policy, "passk", missing, run_group=group)
    if emitted(df, fmt, wide):
        return
    share = lambda v: "" if v is None else f"{v:.3f}"  # noqa: E731
    headers = ["domain", "k", "tasks", "pass^k", "95% CI", "claimed tasks", "claimed pass^k"]
    for n, ((run_group,), rows) in enumerate(df.group_by("run_group", maintain_order=True)):
        if n:
            print()
        cells = [[r["domain"], str(r["k"]), str(r["tasks"]), share(r["pass_hat_k"]),
                  interval(r["ci_low"], r["ci_high"]), str(r["claimed_tasks"]), share(r["claimed_pass_hat_k"])]
                 for r in rows.iter_rows(named=True)]
        show(Grid(headers, cells, f"{run_group} (policy {policy})", right=set(headers[1:])).without_empty_columns())


@app.command()
def report(
    out_file: Annotated[Path, typer.Option("--out", "-o", help="Where to write the HTML file")],
    policy: PolicyOpt = RECORDED,
    warehouse: WarehouseOpt = None,
) -> None:
    """Write a self-contained HTML report: rates across runs, latest vs previous run, stalled scenarios."""
    from transforms.report import render_report

    with scored(warehouse, policy) as (wh, con, policy_id):
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
    err().print(f"report written to {out_file}")


@app.command()
def check(warehouse: WarehouseOpt = None) -> None:
    """Verify the warehouse: every run's committed rows complete and every stored policy scored."""
    from transforms.pipeline import task_id_warnings, verify

    wh = open_warehouse(warehouse)
    problems = verify(wh)
    for problem in problems:
        err().print(f"[red]inconsistent[/] {problem}", highlight=False)
    for run_id, warning in task_id_warnings(wh.scan("scenarios", wh.committed_runs())).items():
        err().print(f"[yellow]warning[/] {run_id}: {warning}", highlight=False)
    if problems:
        raise typer.Exit(1)
    err().print(f"{wh.location}: consistent ({wh.committed_runs().height} runs)")


@app.command()
def compact(warehouse: WarehouseOpt = None) -> None:
    """Compact every table: rows of replaced ingests dropped, small files bin-packed (Delta
    optimize), files older than 90 days of history vacuumed (ingest and rescore do it on their own
    once the files pile up)."""
    from transforms.pipeline import prepare_for_writing

    wh = open_for_writing(warehouse)
    try:
        with wh.writer_lock():
            prepare_for_writing(wh)
            wh.compact()
            wh.build_views()
    except WarehouseBusy as exc:
        fail(str(exc))
    err().print(f"{wh.location}: compacted ({wh.committed_runs().height} runs)")


def convert_if_former(wh: Warehouse) -> None:
    """Convert a warehouse of the former table format to Delta tables (see pipeline.migrate)."""
    from transforms.pipeline import migrate as convert

    if wh.legacy_tables() is None:
        return
    try:
        with wh.writer_lock():
            if wh.legacy_tables() is not None:  # not converted by another command meanwhile
                kept = convert(wh)
                wh.build_views()
                err().print(f"{wh.location}: converted to Delta tables ({wh.committed_runs().height} runs); the "
                            f"former files are in {kept}: remove them once you no longer need them", highlight=False)
    except WarehouseBusy as exc:
        fail(str(exc))


@app.command()
def migrate(warehouse: WarehouseOpt = None) -> None:
    """Convert a warehouse of scorelake's former table format to Delta tables (the first write
    command does it too); the old files are kept aside."""
    wh = Warehouse(warehouse)
    if wh.legacy_tables() is None:
        fail(f"{wh.location}: nothing to migrate (no tables/ folder of the former format)", 2)
    convert_if_former(wh)


@app.command()
def log(warehouse: WarehouseOpt = None, fmt: FormatOpt = Format.table, wide: WideOpt = False) -> None:
    """The warehouse versions, oldest first: what each write step did and the table versions it left
    (any of them is an --as-of VERSION)."""
    wh = open_warehouse(warehouse)
    commits = wh.log()
    df = pl.DataFrame([{"version": c.version, "committed_at": c.committed_at, "operation": c.operation,
                        "detail": c.detail, "table_versions": json.dumps(c.table_versions, sort_keys=True)}
                       for c in commits], schema={"version": pl.Int64, "committed_at": pl.Datetime("us", "UTC"),
                                                  "operation": pl.String, "detail": pl.String,
                                                  "table_versions": pl.String})
    if emitted(df, fmt, wide):
        return
    cells, before = [], {}
    for c in commits:  # the tables each step changed (from their creation, version 0), at the version it left them
        before = before or dict.fromkeys(c.table_versions, 0)
        changed = " ".join(f"{t}@{v}" for t, v in sorted(c.table_versions.items()) if before.get(t) != v)
        cells.append([str(c.version), c.committed_at.strftime("%Y-%m-%d %H:%M:%S"), c.operation, c.detail, changed])
        before = c.table_versions
    show(Grid(["version", "committed (UTC)", "operation", "what", "tables changed"], cells, right={"version"}))


POLICY_FIELDS = {"judge_threshold": "threshold", "min_agent_turns": "min turns", "strict_match": "strict",
                 "judge_enabled": "judge", "whitelists": "whitelists", "scorer_version": "scorer"}


@app.command()
def policies(warehouse: WarehouseOpt = None, fmt: FormatOpt = Format.table, wide: WideOpt = False) -> None:
    """List stored scoring policies."""
    with connected(warehouse) as (wh, con):
        stored = wh.query(con, "policies")
    specs = [json.loads(spec) for spec in stored["spec_json"]]
    df = pl.DataFrame([{"policy_id": pid, **spec, "whitelists": json.dumps(spec["whitelists"], sort_keys=True)}
                       for pid, spec in zip(stored["policy_id"], specs)])
    if emitted(df, fmt, wide):
        return
    unset = lambda v: "" if v is None else str(v).lower() if isinstance(v, bool) else str(v)  # noqa: E731
    cells = [[spec["name"], pid, *(unset(spec[f]) if f != "whitelists" else
                                   " ".join(f"{d}={','.join(s)}" for d, s in sorted(spec[f].items()))
                                   for f in POLICY_FIELDS)]
             for pid, spec in zip(stored["policy_id"], specs)]
    show(Grid(["name", "id", *POLICY_FIELDS.values()], cells, right={"threshold", "min turns"},
              note="blank: each run's own flag (as run_args.json recorded it)").without_empty_columns())


@app.command()
def serve(
    runs_dirs: Annotated[list[Path], typer.Argument(help="Folders of eval_* sessions to watch")],
    cron: Annotated[Optional[str], typer.Option(help="Cron schedule, e.g. '0 * * * *'")] = None,
    interval: Annotated[Optional[float], typer.Option(help="Seconds between runs")] = None,
    name: Annotated[str, typer.Option(help="Deployment name")] = "scheduled",
    warehouse: WarehouseOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Serve a Prefect deployment that ingests new runs and re-scores every stored policy on a schedule."""
    if (cron is None) == (interval is None):
        fail("give exactly one of --cron or --interval", 2)
    orchestration = orchestrate(True, "threads", verbose)
    if not orchestration.api_url:  # a temporary server has no scheduler (Prefect refuses to schedule on one)
        fail("serve needs a running Prefect server: start one (`prefect server start`) and set PREFECT_API_URL", 2)
    from prefect import serve as prefect_serve

    from flows.ingest import refresh_flow

    wh = Warehouse(warehouse)
    deployment = refresh_flow.to_deployment(
        name=name, cron=cron, interval=interval,
        parameters={"runs_dirs": [str(p.resolve()) for p in runs_dirs], "warehouse": wh.location})
    err().print(f"serving deployment 'scorelake-refresh/{name}' -> {wh.location}")
    prefect_serve(deployment)


if __name__ == "__main__":
    app()
