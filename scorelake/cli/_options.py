"""The options several commands share, declared once (as sqlite-utils bundles its output options)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

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


OPTION_BUNDLES = (Where, Read)
