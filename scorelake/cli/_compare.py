"""compare (one run against another, like with like), gate (the same, as an exit code for CI) and flaky
(the tasks whose verdict flips between comparable runs: the noise a comparison reads through)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import typer

import scorelake
from scorelake.cli._app import command, emitted, err, interval, pct, print_json
from scorelake.cli._options import AlphaOpt, Format, FormatOpt, Listing, PolicyOpt, Read, WarehouseOpt
from scorelake.cli._terminal import Grid, wrapped
from scorelake.cli._terminal import show as show_grid
from scorelake.transforms.names import RECORDED

ALL = " (--format json for all)"


def _mdd(value: float | None) -> str:
    return "" if value is None else f"{value * 100:.1f} pts"


def _show(c, policy: str) -> None:
    """A comparison as people read it: the table, the flips, what was not compared and why (each
    list cut at its first 20 names)."""
    from scorelake.present import delta_text, listed, mcnemar_text, not_compared

    headers = ["domain", "A", "A 95% CI", "B", "B 95% CI", "delta", "delta 95% CI", "change", "p", "detectable"]
    cells = [[r["domain"], pct(r["passed_a"], r["total_a"]), interval(r["ci_low_a"], r["ci_high_a"]),
              pct(r["passed_b"], r["total_b"]), interval(r["ci_low_b"], r["ci_high_b"]), *delta_text(r, ""),
              r["label"] or "", "" if r["p_value"] is None else f"{r['p_value']:.3g}", _mdd(r["min_detectable"])]
             for r in c.deltas.iter_rows(named=True)]
    what = "like with like" if c.like_with_like else "every scenario (--all)"
    show_grid(Grid(headers, cells, f"A {c.run_a} -> B {c.run_b} (composite success, policy {policy}, {what})",
              right=set(headers[1:7]) | {"p", "detectable"}))
    print(wrapped(f"fixed (failed -> passed), {len(c.fixed)}: {listed(c.fixed, more=ALL) or 'none'}"))
    print(wrapped(f"broken (passed -> failed), {len(c.broken)}: {listed(c.broken, more=ALL) or 'none'}"))
    print(wrapped(f"exact {mcnemar_text(c)} (alpha {c.alpha:g}; a change is "
                  "'regressed' or 'improved' only beyond the noise; 'detectable': the smallest difference "
                  "these pairs find with power 0.8)"))
    for words, names in not_compared(c):
        counted = " [counted under --all]" if words == "definition changed" and not c.like_with_like else ""
        err().print(wrapped(f"not compared, {words} ({len(names)}): {listed(names, more=ALL)}{counted}"),
                    highlight=False)
    for change in c.lineage_changes:
        err().print(wrapped(f"scored differently: {change}"), highlight=False)
    if c.latency is not None and c.latency.height:
        cells = [[r["domain"], f"{r['median_a_ms']:.0f}", f"{r['median_b_ms']:.0f}", f"{r['delta_ms']:+.0f}",
                  f"[{r['delta_ci_low_ms']:+.0f}, {r['delta_ci_high_ms']:+.0f}]", f"{r['p95_a_ms']:.0f}",
                  f"{r['p95_b_ms']:.0f}"] for r in c.latency.iter_rows(named=True)]
        print()
        show_grid(Grid(["domain", "p50 A", "p50 B", "B-A", "95% CI (bootstrap)", "p95 A", "p95 B"], cells,
                       "response latency (ms) of the scenarios compared",
                       right={"p50 A", "p50 B", "B-A", "95% CI (bootstrap)", "p95 A", "p95 B"}))
        if c.slowed is not None and c.slowed.height:
            slowed = ", ".join(f"{r['scenario_name']} (+{r['slower_ms']:.0f} ms)" for r in c.slowed.iter_rows(named=True))
            print(wrapped(f"slowed most (median): {slowed}"))
    if c.voice is not None and c.voice.height:
        share = lambda v: "" if v is None else f"{v * 100:.1f}%"  # noqa: E731
        seconds = lambda v: "" if v is None else f"{v:.2f}"  # noqa: E731
        cells = [[r["domain"], seconds(r["overlap_a_s"]), seconds(r["overlap_b_s"]),
                  "" if r["overlap_rise_s"] is None else f"{r['overlap_rise_s']:+.2f}", share(r["wer_a"]),
                  share(r["wer_b"]), "" if r["wer_rise_pts"] is None else f"{r['wer_rise_pts']:+.1f}",
                  *(str(r[k] or "") for k in ("words_a", "words_b", "missing_a", "missing_b"))]
                 for r in c.voice.iter_rows(named=True)]
        print()
        headers = ["domain", "overlap A s", "overlap B s", "B-A s", "WER A", "WER B", "B-A pts", "words A", "words B",
                   "missing A", "missing B"]
        show_grid(Grid(headers, cells, "voice of the scenarios compared (overlap of speech a scenario; WER of what "
                       "the agent heard, over the user turns it heard; user turns it never heard)",
                       right=set(headers[1:])))


@command
def compare_runs(
    run_a: Annotated[str, typer.Argument(help="The earlier run (baseline)")],
    run_b: Annotated[str, typer.Argument(help="The later run")],
    policy: PolicyOpt = RECORDED,
    alpha: AlphaOpt = 0.05,
    all_scenarios: Annotated[bool, typer.Option(
        "--all", help="Every scenario of each run, changed definitions included (rates over each run's own)")] = False,
    task_map: Annotated[Optional[str], typer.Option(
        "--map", metavar="NAME|FILE",
        help="Pair the scenarios as a task map says (runs of two harnesses): a declared map's name, or a CSV "
             "file (header a,b: run A's scenario or task, run B's) declared under its file's name first")] = None,
    read: Read = Read(),
) -> None:
    """Compare two runs like with like (the scenarios both ran with the same definition, paired):
    per-domain deltas with 95% intervals, each labelled improved / regressed / inconclusive /
    unchanged by an exact McNemar test, flipped scenarios; what could not be compared, apart. Runs
    of two harnesses (a voice-agent session, a tau2-bench run) pair by a task map (--map).

    Example: scorelake compare eval_20260903_140200 eval_20260904_080000 --format json
    Example: scorelake compare eval_20260903_140200 toolorchestra_airline --map airline.csv
    """
    wh = read.open()
    if task_map is not None and Path(task_map).is_file():
        name = Path(task_map).name.removesuffix(".csv")
        pairs = wh.declare_task_map(name, task_map)
        err().print(f"task map '{name}' declared: {pairs} pairs (--map {name} from now on)", highlight=False)
        task_map = name
    c = wh.compare(run_a, run_b, policy, alpha=alpha, all_scenarios=all_scenarios, task_map=task_map)
    if c.nothing_matches:
        err().print(f"[yellow]{c.nothing_matches}[/]", highlight=False)
    if read.fmt is Format.json:
        print_json(c.as_json())
        return
    if read.fmt is not Format.table or read.wide:
        emitted(c.as_table(), read.fmt, read.wide)
        return
    _show(c, policy)


class Correction(StrEnum):
    holm = "holm"
    bh = "bh"
    none = "none"


def _show_tests(result) -> None:
    """The gate's tests per domain: the p-value, corrected, and the smallest drop it can detect."""
    if result.tests is None or result.tests.is_empty():
        return
    share = lambda v: "" if v is None else f"{v * 100:.1f} pts"  # noqa: E731
    cells = [[r["domain"], str(r["pairs"]), f"{r['broken']}/{r['fixed']}", f"{r['p_value']:.3g}",
              f"{r['adjusted_p']:.3g}", "regressed" if r["regressed"] else "", share(r["min_detectable"])]
             for r in result.tests.iter_rows(named=True)]
    headers = ["domain", "paired", "broken/fixed", "p-value", "corrected p", "call", "detectable drop"]
    print()
    show_grid(Grid(headers, cells, f"gate tests, corrected ({result.correction}) for {result.tests.height} tests",
                   right=set(headers[1:5]) | {"detectable drop"}))


@command
def gate(
    base: Annotated[str, typer.Argument(help="The baseline run")],
    candidate: Annotated[str, typer.Argument(help="The run that may replace it")],
    policy: PolicyOpt = RECORDED,
    alpha: AlphaOpt = 0.05,
    max_drop: Annotated[float, typer.Option(help="Points a domain may drop, beyond the noise, and pass")] = 0.0,
    domain: Annotated[Optional[list[str]], typer.Option(help="Only these domains (repeatable) [default: all]")] = None,
    max_p95_rise: Annotated[Optional[float], typer.Option(
        help="Milliseconds a domain's p95 response latency may rise and pass [default: not checked]")] = None,
    max_overlap_rise: Annotated[Optional[float], typer.Option(
        help="Seconds a domain's mean overlap of speech a scenario may rise and pass [default: not checked]")] = None,
    max_wer_rise: Annotated[Optional[float], typer.Option(
        help="Points the word error rate of what a domain's agent heard may rise and pass [default: not checked]"
    )] = None,
    correction: Annotated[Correction, typer.Option(
        help="How the tests of the many domains are corrected: holm (no false alarm at all, but with chance alpha), "
             "bh (Benjamini-Hochberg: false alarms at most a share alpha of the alarms) or none")] = Correction.holm,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """For CI: exit 0 when no domain (and not the whole run) regressed beyond the noise by more than
    --max-drop points, exit 3 when one did, naming the domains and the scenarios that broke (paired
    as compare pairs them: the same scenario, the same definition). A single flipped scenario does
    not fail the gate; a run compared with itself passes. Each domain and the whole run is a test of
    its own: their p-values are corrected for being many (--correction), and each domain's smallest
    drop the gate can detect at 80% power with its pairs is printed.

    Example: scorelake gate eval_20260903_140200 eval_20260904_080000 --max-drop 2
    """
    result = scorelake.open(warehouse).gate(base, candidate, policy, alpha=alpha, max_drop=max_drop,
                                            domains=domain or (), max_p95_rise=max_p95_rise,
                                            max_overlap_rise=max_overlap_rise, max_wer_rise=max_wer_rise,
                                            correction=correction.value)
    if fmt is Format.json:
        print_json(result.as_json())
    elif fmt is Format.table:
        _show(result.comparison, policy)
        _show_tests(result)
    from scorelake.present import regression_text

    for r in result.regressions:
        err().print(wrapped(f"[red]regressed[/] {regression_text(r, result.broken.get(r.domain, []), ALL)}"),
                    highlight=False)
    err().print("gate: " + ("passed" if result.passed else f"failed ({len(result.regressions)} regressions)"),
                highlight=False)
    if not result.passed:
        raise typer.Exit(3)


@command
def flaky(
    run: Annotated[Optional[str], typer.Option("--run", "-r", help="The flaky tasks of this run (its group's history)")] = None,
    group: Annotated[Optional[str], typer.Option("--group", "-g", help="One run group [default: every group]")] = None,
    min_verdicts: Annotated[int, typer.Option("--min-verdicts", help="Only tasks with at least this many verdicts")] = 2,
    policy: PolicyOpt = RECORDED,
    read: Listing = Listing(),
) -> None:
    """Tasks whose verdict both passed and failed across the comparable runs (and trials) of their group,
    most often flipping first: a flip of one of them between two runs is likely noise.

    Example: scorelake flaky --run eval_20260904_110000
    """
    df = read.of(read.open().flaky(run, group, policy, min_verdicts=min_verdicts))
    if emitted(df, read.fmt, read.wide):
        return
    if df.is_empty():
        print("no flaky tasks: every task with two verdicts or more gave the same one each time")
        return
    cells = [[r["task_id"], r["domain"], r["run_group"], str(r["verdicts"]), str(r["passed"]), str(r["failed"]),
              str(r["flips"]), f"{r['flip_rate'] * 100:.0f}%"] for r in df.iter_rows(named=True)]
    headers = ["task id", "domain", "group", "verdicts", "passed", "failed", "flips", "flip rate"]
    show_grid(Grid(headers, cells, f"flaky tasks ({df.height}), policy {policy}, most often flipping first", keys=2,
                   right=set(headers[3:])))
