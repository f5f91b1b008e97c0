"""The options several commands share, declared once (as sqlite-utils bundles its output options)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Optional

import typer


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


WarehouseOpt = Annotated[Optional[str], typer.Option(
    "--warehouse", "-w", help="Warehouse: a directory, or a URL such as s3://bucket/prefix "
                              "[default: $SCORELAKE_WAREHOUSE or data/warehouse]")]
AsOfOpt = Annotated[Optional[str], typer.Option(
    "--as-of", help="Answer as the warehouse stood then: a version (see `scorelake log`) or a timestamp "
                    "(ISO 8601, UTC unless it says; a date means its end)")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format")]
PolicyOpt = Annotated[str, typer.Option("--policy", "-p", help="Stored policy name or id")]
WideOpt = Annotated[bool, typer.Option("--wide", help="Every column, in one table however wide")]
PrefectOpt = Annotated[bool, typer.Option(
    "--prefect", help="Run as a Prefect flow even with no API configured (a temporary local server)")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Show Prefect's log lines")]
DaskAddressOpt = Annotated[Optional[str], typer.Option(
    help="Scheduler address (tcp://HOST:PORT) of a Dask cluster to run the tasks on (a Prefect flow)")]
RunsOpt = Annotated[Optional[list[str]], typer.Option("--run", "-r", help="Only these runs (repeatable)")]
AlphaOpt = Annotated[float, typer.Option(help="Significance of the exact McNemar test that labels a change")]
