"""Voice analytics: latency (how fast the agent answered, whether it was interrupted) and cost."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

import scorelake
from scorelake.cli._app import cell, command, emitted, fail, ms
from scorelake.cli._options import AsOfOpt, Format, FormatOpt, RunsOpt, WarehouseOpt, WideOpt
from scorelake.cli._terminal import Grid
from scorelake.cli._terminal import show as show_grid


class LatencyBy(StrEnum):
    domain = "domain"
    scenario = "scenario"


@command
def latency(
    run: RunsOpt = None,
    by: Annotated[LatencyBy, typer.Option(help="Per run and domain, or per scenario (slowest first)")] = LatencyBy.domain,
    warehouse: WarehouseOpt = None,
    as_of: AsOfOpt = None,
    fmt: FormatOpt = Format.table,
    wide: WideOpt = False,
) -> None:
    """The agent's response latency: exchanges measured, mean, p50, p90, p95, p99 and max in ms (the
    runner's percentiles: a whole run's p50 and p95 are its all_summary.txt's), the first response's
    latency, and interrupted agent turns. Blank where a source records no latency (tau2, tau-bench).

    Example: scorelake latency --run eval_20260904_080000
    Example: scorelake latency --by scenario --format csv
    """
    found = scorelake.open(warehouse, as_of).latency(run, by.value)
    if emitted(found, fmt, wide):
        return
    key = "domain" if by is LatencyBy.domain else "scenario_name"
    first = "first_response_p50_ms" if by is LatencyBy.domain else "first_response_ms"
    headers = ["run", key.replace("_name", ""), "exchanges", "mean", "p50", "p90", "p95", "p99", "max",
               "first p50" if by is LatencyBy.domain else "first", "interrupted"]
    cells = [[r["run_id"], r[key], cell(r["exchanges"]), *(ms(r[c]) for c in ("mean_ms", "p50_ms", "p90_ms", "p95_ms",
                                                                          "p99_ms", "max_ms", first)),
              "" if r["interrupted"] is None else f"{r['interrupted']}"
              + ("" if not r["interrupted_rate"] else f" ({r['interrupted_rate'] * 100:.1f}%)")]
             for r in found.iter_rows(named=True)]
    show_grid(Grid(headers, cells, "response latency (ms)", right=set(headers[2:]),
                   note="interrupted: agent turns the user talked over, and their share of agent turns"))


@command
def cost(
    price: Annotated[list[str], typer.Option(
        help="SIDE=IN,OUT: the price per million input and output tokens of agent, user or judge (repeatable)")],
    run: RunsOpt = None,
    warehouse: WarehouseOpt = None,
    as_of: AsOfOpt = None,
    fmt: FormatOpt = Format.table,
    wide: WideOpt = False,
) -> None:
    """What each run and domain's tokens cost, the agent's, the simulated user's and the judges' apart
    (the judges: every call scorelake rejudge made).

    Example: scorelake cost --price agent=3,15 --price user=0.5,1.5 --price judge=1,2
    """
    prices = {}
    for item in price:
        side, sep, values = item.partition("=")
        parts = values.split(",")
        try:
            prices[side.strip()] = (float(parts[0]), float(parts[1]))
        except (IndexError, ValueError):
            fail(f"--price expects SIDE=IN,OUT (prices per million tokens), got '{item}'", 2)
        if not sep:
            fail(f"--price expects SIDE=IN,OUT (prices per million tokens), got '{item}'", 2)
    found = scorelake.open(warehouse, as_of).cost(prices, run)
    if emitted(found, fmt, wide):
        return
    money = lambda v: "" if v is None else f"{v:.4f}"  # noqa: E731
    cells = [[r["run_id"], r["domain"], str(r["scenarios"]), money(r["agent_cost"]), money(r["user_cost"]),
              money(r["judge_cost"])] for r in found.iter_rows(named=True)]
    show_grid(Grid(["run", "domain", "scenarios", "agent", "user", "judge"], cells, "cost",
                   right={"scenarios", "agent", "user", "judge"}).without_empty_columns())
