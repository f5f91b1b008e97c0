"""The options several commands share, declared once (as sqlite-utils bundles its output options)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Optional

import polars as pl
import typer

from scorelake.transforms.errors import InvalidArgument, did_you_mean

if TYPE_CHECKING:
    import scorelake


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
LegendOpt = Annotated[bool, typer.Option("--legend/--no-legend", help="Under each table on a terminal, what "
                                                                      "each column means")]
LimitOpt = Annotated[Optional[int], typer.Option(
    "--limit", "--top", min=1, help="Only the first N rows, in --sort's order or the listing's own [default: all]")]
SortOpt = Annotated[Optional[str], typer.Option(
    "--sort", help="Order the rows by this column (its --format json name; -COL: descending)")]
PrefectOpt = Annotated[bool, typer.Option(
    "--prefect", help="Run as a Prefect flow even with no API configured (a temporary local server)")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Show Prefect's log lines")]
DaskAddressOpt = Annotated[Optional[str], typer.Option(
    help="Scheduler address (tcp://HOST:PORT) of a Dask cluster to run the tasks on (a Prefect flow)")]
RunsOpt = Annotated[Optional[list[str]], typer.Option("--run", "-r", help="Only these runs (repeatable)")]
AlphaOpt = Annotated[float, typer.Option(help="Significance of the exact McNemar test that labels a change")]


@dataclass(frozen=True)
class Where:
    """Which warehouse, as it stood when: the options of every command that reads it, declared once.
    A command's parameter annotated ``Where`` (or ``Read``) stands for them: ``command`` spells them
    out for typer and hands them back as one."""

    warehouse: WarehouseOpt = None
    as_of: AsOfOpt = None

    def open(self, **limits: Any) -> scorelake.Warehouse:
        """The warehouse as it stood at ``as_of`` (``limits``: ``scorelake.open``'s query limits)."""
        import scorelake

        return scorelake.open(self.warehouse, self.as_of, **limits)


@dataclass(frozen=True)
class Read(Where):
    """``Where``, and how a table is written: its format and every column."""

    fmt: FormatOpt = Format.table
    wide: WideOpt = False
    legend: LegendOpt = True


@dataclass(frozen=True)
class Listing(Read):
    """``Read``, for a listing of many rows (scenarios, verdicts, reviews): how many, in what order."""

    limit: LimitOpt = None
    sort: SortOpt = None

    def of(self, rows: pl.DataFrame) -> pl.DataFrame:
        """``rows`` in ``sort``'s order (nulls last), the first ``limit`` of them; how many were left
        out said on stderr. ``InvalidArgument`` for a column ``rows`` does not have."""
        if self.sort:
            name = self.sort.removeprefix("-")
            if name not in rows.columns:
                hint = did_you_mean(name, rows.columns) or f"; the columns: {', '.join(rows.columns)}"
                raise InvalidArgument(f"--sort {self.sort}: no column '{name}'{hint}")
            rows = rows.sort(name, descending=self.sort.startswith("-"), nulls_last=True, maintain_order=True)
        if self.limit is not None and rows.height > self.limit:
            sys.stderr.write(f"the first {self.limit} of {rows.height} rows (--limit N for more)\n")
            rows = rows.head(self.limit)
        return rows


OPTION_BUNDLES = (Where, Read, Listing)
