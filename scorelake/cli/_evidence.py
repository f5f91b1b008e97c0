"""Why a verdict is what it is: show, and the viewer (view)."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated, Optional

import typer

from scorelake.cli._app import cell, command, err, fail, print_json
from scorelake.cli._options import PolicyOpt, Where
from scorelake.cli._terminal import Grid
from scorelake.cli._terminal import show as show_grid
from scorelake.transforms.names import RECORDED

SEARCH_LIMIT = 1000  # scenarios `show --grep` lists


class ShowFormat(StrEnum):
    text = "text"
    json = "json"
    html = "html"


@command
def show(
    run: Annotated[Optional[str], typer.Argument(help="Run id: the session directory (or results file) name "
                                                      "[default: with --grep, every run]")] = None,
    scenario: Annotated[Optional[str], typer.Argument(help="A scenario of the run [default: with --failed, all]")] = None,
    failed: Annotated[bool, typer.Option("--failed", help="List the run's failed scenarios and the signals that "
                                                          "failed them")] = False,
    grep: Annotated[Optional[str], typer.Option(
        "--grep", help="List the scenarios (of RUN, or of every run) whose transcript, judge reason or tool calls "
                       "hold this phrase (case-insensitive)")] = None,
    policy: PolicyOpt = RECORDED,
    at: Where = Where(),
    fmt: Annotated[ShowFormat, typer.Option("--format", "-f", help="Output format")] = ShowFormat.text,
) -> None:
    """Why a scenario passed or failed: each signal with its verdict and evidence (judge score and
    reason, NL assertions, DB predicates and hashes, unmatched reference actions, stop reason,
    agent turns), then the timeline of turns and tool calls. With --failed: the run's failed scenarios;
    with --grep PHRASE: the scenarios whose transcript, judge reason or tool calls mention it.

    Example: scorelake show eval_20260904_080000 qa__telephone_inventor
    """
    from scorelake.cli._terminal import terminal_width, visible
    from scorelake.present import explain, explain_html, explain_text

    wh = at.open()
    if grep is not None:
        found = wh.search(grep, run, policy, limit=SEARCH_LIMIT)
        if fmt is ShowFormat.json:
            print_json(found.to_dicts())
            return
        if found.is_empty():
            print(f"no scenario{' of ' + run if run else ''} mentions '{grep}' in its transcript, judge reason or tool calls")
            return
        outcome = {True: "passed", False: "failed"}
        cells = [[r["run_id"], r["scenario_name"], outcome.get(r["is_successful"], "n/a"), str(r["hits"]), r["place"],
                  " ".join((r["snippet"] or "").split())] for r in found.iter_rows(named=True)]
        more = f" (the first {SEARCH_LIMIT})" if found.height >= SEARCH_LIMIT else ""
        show_grid(Grid(["run", "scenario", "outcome", "places", "first found in", "around it"], cells,
                       f"{found.height} scenario(s){more} mention '{grep}' (policy {policy})", right={"places"}))
        return
    if run is None:
        fail("give a RUN (and a SCENARIO, or --failed), or --grep PHRASE", 2)
    if scenario is None:
        if not failed:
            fail("give a SCENARIO, or --failed to list the run's failed scenarios", 2)
        rows = wh.run_scenarios(run, policy, failed_only=True, limit=1_000_000)
        if fmt is ShowFormat.json:
            print_json(rows.drop("matching").to_dicts())
            return
        cells = [[r["scenario_name"], r["domain"], ", ".join(r["failed"] + (["stalled"] if r["stalled"] else [])),
                  cell(r["judge_score"])] for r in rows.iter_rows(named=True)]
        show_grid(Grid(["scenario", "domain", "failed by", "judge score"], cells,
                       f"{run}: {rows.height} failed (policy {policy})", right={"judge score"}).without_empty_columns())
        return
    evidence = wh.evidence(run, scenario, policy)
    if fmt is ShowFormat.json:
        print_json(evidence.as_dict())
    elif fmt is ShowFormat.html:
        sys.stdout.write(explain_html(explain(evidence)) + "\n")
    else:
        sys.stdout.write(visible(explain_text(explain(evidence), min(terminal_width(sys.stdout) or 100, 100))))


@command
def view(
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free one)", min=0, max=65535)] = 8765,
    host: Annotated[str, typer.Option(help="Address to bind: off the loopback address a token is required")] = "127.0.0.1",
    token: Annotated[Optional[str], typer.Option(
        help="The token every request must carry (?token= or Authorization: Bearer) [default: a random one when "
             "--host is not a loopback address; none on loopback]", envvar="SCORELAKE_VIEW_TOKEN")] = None,
    policy: PolicyOpt = RECORDED,
    review: Annotated[bool, typer.Option(
        "--review", help="Take reviews: agree / disagree forms on scenario pages and a review queue (/review); "
                         "a token is then required on every address")] = False,
    at: Where = Where(),
) -> None:
    """Browse the warehouse in a web browser: runs and their domains' rates, a run's scenarios
    (failed only, by domain, by failed signal, sorted), each scenario's verdict with its evidence,
    two runs side by side, a policy switcher. Read-only; local by default.

    Example: scorelake view --port 8765   (then open http://127.0.0.1:8765/)
    """
    from scorelake import web

    if review and at.as_of:
        fail("--review writes to the warehouse as it stands: give no --as-of", 2)
    web.serve(at.open(), host, port, token, policy, review,
              say=lambda line: err().print(line, highlight=False))
