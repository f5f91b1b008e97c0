"""Voice analytics: latency (how fast the agent answered, whether it was interrupted), the voice
panel (turn-taking, what each side heard, why a call failed) and cost."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Optional

import typer

from scorelake.cli._app import command, emitted, err, fail
from scorelake.cli._options import Listing, PolicyOpt, RunsOpt
from scorelake.cli._terminal import Grid
from scorelake.cli._terminal import show as show_grid
from scorelake.transforms.names import COST_SIDES


class LatencyBy(StrEnum):
    domain = "domain"
    scenario = "scenario"


@command
def latency(
    run: RunsOpt = None,
    by: Annotated[LatencyBy, typer.Option(help="Per run and domain, or per scenario (slowest first)")] = LatencyBy.domain,
    read: Listing = Listing(),
) -> None:
    """The agent's response latency: exchanges measured, mean, p50, p90, p95, p99 and max in ms (the
    runner's percentiles: a whole run's p50 and p95 are its all_summary.txt's), the first response's
    latency, and interrupted agent turns. Blank where a source records no latency (tau2, tau-bench).

    Example: scorelake latency --run eval_20260904_080000
    Example: scorelake latency --by scenario --top 10 --sort -p95_ms
    """
    from scorelake.present import LATENCY_PANEL, LATENCY_SCENARIO_PANEL  # on use, as voice's

    found = read.of(read.open().latency(run, by.value))
    if emitted(found, read.fmt, read.wide):
        return
    key = "domain" if by is LatencyBy.domain else "scenario_name"
    panel = LATENCY_PANEL if by is LatencyBy.domain else LATENCY_SCENARIO_PANEL
    headers = ["run", key.replace("_name", ""), *panel.labels, "interrupted"]
    cells = [[r["run_id"], r[key], *panel.cells(r),
              "" if r["interrupted"] is None else f"{r['interrupted']}"
              + ("" if not r["interrupted_rate"] else f" ({r['interrupted_rate'] * 100:.1f}%)")]
             for r in found.iter_rows(named=True)]
    show_grid(Grid(headers, cells, "response latency (ms)", keys=2, right=set(headers[2:]), note=panel.note))


@command
def voice(
    run: RunsOpt = None,
    by: Annotated[LatencyBy, typer.Option(help="Per run and domain, or per scenario (the worst heard first)")
                  ] = LatencyBy.domain,
    policy: PolicyOpt = "recorded",
    read: Listing = Listing(),
) -> None:
    """The voice panel: turn-taking from each conversation's speech segments (talk share, overlap,
    silence, barge-ins, words per minute, tau2's response and yield rates and latencies), what each
    side heard (word error rate each way, key entities misheard), and the failed scenarios by primary
    cause (harness, judge, dead_air, stall, transcription, turn_taking, logic: the first that holds;
    --by scenario lists every cause that holds). A rate from fewer than 10 events shows as a dash
    (--format json or csv gives every value with its event count).

    Example: scorelake voice --run eval_20260904_080000
    Example: scorelake voice --by scenario --top 20
    """
    from scorelake.present import VOICE_PANEL, cause_counts  # on use: present's imports cost every command 45 ms

    found = read.of(read.open().voice(run, by.value, policy))
    if emitted(found, read.fmt, read.wide):
        return
    if by is LatencyBy.scenario:
        cells = [[r["run_id"], r["scenario_name"],
                  *VOICE_PANEL.cells(r, events=False),
                  ", ".join(r["failure_causes"] or ())] for r in found.iter_rows(named=True)]
        headers = ["run", "scenario", *VOICE_PANEL.labels, "failed by"]
        show_grid(Grid(headers, cells, f"voice per scenario (failure causes under policy {policy})", keys=2,
                       right=set(headers[2:-1])).without_empty_columns())
        return
    cells = [[r["run_id"], r["domain"], str(r["scenarios"]),
              *VOICE_PANEL.cells(r),
              "" if r["interrupted_turns"] is None else str(r["interrupted_turns"]),
              cause_counts(r)]
             for r in found.iter_rows(named=True)]
    headers = ["run", "domain", "scenarios", *VOICE_PANEL.labels, "interrupted", "failed by cause"]
    show_grid(Grid(headers, cells, "voice (s: seconds; rates pooled over their events)", keys=2,
                   right=set(headers[2:-1]),
                   note=VOICE_PANEL.note))


@command
def cost(
    price: Annotated[Optional[list[str]], typer.Option(
        help="SIDE=IN,OUT: the price per million input and output tokens of agent, user or judge (repeatable); "
             "without any, the tokens alone")] = None,
    run: RunsOpt = None,
    read: Listing = Listing(),
) -> None:
    """What each run and domain's tokens cost, the agent's, the simulated user's and the judges' apart
    (the judges: every call scorelake rejudge made); without --price, the tokens they spent.

    Example: scorelake cost --price agent=3,15 --price user=0.5,1.5 --price judge=1,2
    Example: scorelake cost --run eval_20260904_080000
    """
    prices = {}
    for item in price or ():
        side, sep, values = item.partition("=")
        parts = values.split(",")
        try:
            prices[side.strip()] = (float(parts[0]), float(parts[1]))
        except (IndexError, ValueError):
            fail(f"--price expects SIDE=IN,OUT (prices per million tokens), got '{item}'", 2)
        if not sep:
            fail(f"--price expects SIDE=IN,OUT (prices per million tokens), got '{item}'", 2)
    found = read.of(read.open().cost(prices, run))
    # a side priced whose tokens the runs do not record costs nothing known: said, not left out silently
    for side in prices:
        if found.is_empty() or found[f"{side}_cost"].is_null().all():
            err().print(f"{side}: priced, but the runs record no {side} tokens"
                        + (" (only the judges scorelake rejudge asks record theirs)" if side == "judge" else ""),
                        highlight=False)
    if emitted(found, read.fmt, read.wide):
        return
    if not prices:  # the tokens each side spent, in and out
        count = lambda v: "" if v is None else f"{v:,}"  # noqa: E731
        cells = [[r["run_id"], r["domain"], str(r["scenarios"]),
                  *(count(r[f"{side}_{kind}_tokens"]) for side in COST_SIDES for kind in ("prompt", "completion"))]
                 for r in found.iter_rows(named=True)]
        headers = ["run", "domain", "scenarios", *(f"{side} {way}" for side in COST_SIDES for way in ("in", "out"))]
        show_grid(Grid(headers, cells, "tokens (no --price given: tokens only)", keys=2,
                       right=set(headers[2:])).without_empty_columns())
        return
    money = lambda v: "" if v is None else f"{v:.4f}"  # noqa: E731
    cells = [[r["run_id"], r["domain"], str(r["scenarios"]), money(r["agent_cost"]), money(r["user_cost"]),
              money(r["judge_cost"])] for r in found.iter_rows(named=True)]
    headers = ["run", "domain", "scenarios", "agent cost", "user cost", "judge cost"]
    show_grid(Grid(headers, cells, "cost, in the currency of the prices (given per million tokens)", keys=2,
                   right=set(headers[2:])).without_empty_columns())
