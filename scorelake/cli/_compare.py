"""compare: one run against another."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

import scorelake
from scorelake.cli._app import command, emitted, interval, pct
from scorelake.cli._options import AsOfOpt, Format, FormatOpt, PolicyOpt, WarehouseOpt, WideOpt
from scorelake.cli._terminal import Grid, wrapped
from scorelake.cli._terminal import show as show_grid
from scorelake.transforms.names import RECORDED


@command
def compare_runs(
    run_a: Annotated[str, typer.Argument(help="The earlier run (baseline)")],
    run_b: Annotated[str, typer.Argument(help="The later run")],
    policy: PolicyOpt = RECORDED,
    warehouse: WarehouseOpt = None,
    as_of: AsOfOpt = None,
    fmt: FormatOpt = Format.table,
    wide: WideOpt = False,
) -> None:
    """Compare two runs: per-domain deltas with 95% intervals, flipped scenarios, exact McNemar test.

    Example: scorelake compare eval_20260903_140200 eval_20260904_080000 --format csv
    """
    from scorelake.transforms.analysis import delta_text

    c = scorelake.open(warehouse, as_of).compare(run_a, run_b, policy)
    if fmt is Format.json:
        sys.stdout.write(json.dumps(c.as_json(), indent=2) + "\n")
        return
    if fmt is not Format.table or wide:
        emitted(c.as_table(), fmt, wide)
        return
    headers = ["domain", "A", "A 95% CI", "B", "B 95% CI", "delta", "delta 95% CI"]
    cells = [[r["domain"], pct(r["passed_a"], r["total_a"]), interval(r["ci_low_a"], r["ci_high_a"]),
              pct(r["passed_b"], r["total_b"]), interval(r["ci_low_b"], r["ci_high_b"]), *delta_text(r, "")]
             for r in c.deltas.iter_rows(named=True)]
    show_grid(Grid(headers, cells, f"A {run_a} -> B {run_b} (composite success, policy {policy})",
              right=set(headers[1:])))
    print(wrapped(f"fixed (failed -> passed), {len(c.fixed)}: {', '.join(c.fixed) or 'none'}"))
    print(wrapped(f"broken (passed -> failed), {len(c.broken)}: {', '.join(c.broken) or 'none'}"))
    print(wrapped(f"exact McNemar on {c.paired} paired scenarios: {c.mcnemar.broken} broken vs "
                  f"{c.mcnemar.fixed} fixed, p = {c.mcnemar.p_value:.4g}"))
