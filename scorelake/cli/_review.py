"""People's verdicts: review (record one, withdraw one, or import a file of them) and reviews (list them)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

import scorelake
from scorelake.cli._app import cell, command, emitted, err, fail
from scorelake.cli._options import Listing, WarehouseOpt
from scorelake.cli._terminal import Grid
from scorelake.cli._terminal import show as show_grid
from scorelake.transforms.names import SIGNALS
from scorelake.transforms.registry import ITEM_SIGNALS


@command
def review(
    run: Annotated[Optional[str], typer.Argument(help="Run id: the session directory (or results file) name")] = None,
    scenario: Annotated[Optional[str], typer.Argument(help="A scenario of the run")] = None,
    signal: Annotated[Optional[str], typer.Option(
        help=f"What is reviewed: a success_breakdown name ({', '.join(SIGNALS)}) or is_successful (the "
             "composite)")] = None,
    assertion: Annotated[Optional[int], typer.Option(
        help="The NL assertion or DB predicate number, for "
             f"{' or '.join(ITEM_SIGNALS)}")] = None,
    verdict: Annotated[Optional[str], typer.Option(help="pass or fail")] = None,
    withdraw: Annotated[bool, typer.Option("--withdraw", help="Take the standing review of this key back")] = False,
    reviewer: Annotated[Optional[str], typer.Option(
        help="Who reviews [default: $SCORELAKE_REVIEWER, else the login name]")] = None,
    note: Annotated[Optional[str], typer.Option(help="Why: what the evidence shows")] = None,
    import_file: Annotated[Optional[Path], typer.Option(
        "--import", help="A CSV (header: run_id, scenario_name, signal, verdict[, assertion, reviewer, note]) or "
                         "JSON Lines file of reviews, stored in one step; any bad line stores nothing")] = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Record a person's verdict on a signal of a scenario, an NL assertion, a DB predicate or the
    composite (or withdraw it, or import a file of them). Kept with its history; a policy that takes
    reviews (rescore --reviews) counts it.

    Example: scorelake review eval_20260904_080000 qa__telephone_inventor --signal judge_passed --verdict pass --note "correct paraphrase"
    Example: scorelake review --import labels.csv --reviewer alice
    """
    wh = scorelake.open(warehouse)
    if import_file is not None:
        if run or scenario or signal or verdict or withdraw:
            fail("--import takes a file of reviews: give no RUN, SCENARIO, --signal, --verdict or --withdraw", 2)
        done = wh.import_reviews(import_file, reviewer)
        err().print(f"{done.stored} reviews imported from {import_file} -> version {done.version}", highlight=False)
        return
    if not (run and scenario and signal):
        fail("give RUN SCENARIO --signal S --verdict pass|fail (or --withdraw), or --import FILE", 2)
    done = wh.review(run, scenario, signal, verdict, assertion=assertion, reviewer=reviewer, note=note,
                     withdraw=withdraw)
    what = f"{signal}" + (f" #{assertion}" if assertion is not None else "")
    err().print(f"{run}/{scenario} {what}: {'withdrawn' if withdraw else verdict} -> version {done.version}; "
                "policies that take reviews count it once re-scored (scorelake rescore --policy P)", highlight=False)


@command
def reviews(
    run: Annotated[Optional[str], typer.Option("--run", "-r", help="Only this run")] = None,
    history: Annotated[bool, typer.Option("--history", help="Every review ever made, superseded and withdrawn "
                                                           "ones too")] = False,
    read: Listing = Listing(),
) -> None:
    """List the reviews that stand (one per run, scenario, signal and assertion), or their history.

    Example: scorelake reviews --run eval_20260904_080000 --history
    """
    found = read.of(read.open().reviews(run, history))
    if emitted(found, read.fmt, read.wide):
        return
    headers = ["run", "scenario", "signal", "reviewer", "verdict", "when (UTC)", "note", *(["stands"] if history else [])]
    cells = [[r["run_id"], r["scenario_name"], r["signal"] + ("" if r["assertion"] is None else f" #{r['assertion']}"),
              r["reviewer"], r["verdict"], r["reviewed_at"].strftime("%Y-%m-%d %H:%M:%S"), cell(r["note"])]
             + (["yes" if r["standing"] else ""] if history else []) for r in found.iter_rows(named=True)]
    show_grid(Grid(headers, cells, f"{len(cells)} reviews" + (" (history)" if history else ""),
                   keys=4).without_empty_columns())
