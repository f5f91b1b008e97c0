"""The ``scorelake`` command line: the app, its shared options and output helpers.

Each command is a thin adapter over the Python API (``scorelake.Warehouse``): the read commands
live in ``_read_commands``, the write commands in ``_write_commands``. Read-only commands import
neither Prefect nor the scoring code: each command imports what it uses.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Callable, Optional

import polars as pl
import typer

import scorelake
from scorelake.flows._terminal import Grid, show
from scorelake.transforms.errors import ScorelakeError

RECORDED = "recorded"  # the built-in policy (scoring.RECORDED)

app = typer.Typer(help="Re-score and query stored voice-agent evaluation runs.\n\nStart with `scorelake ingest` "
                       "(reads ./data/runs into ./data/warehouse), then `scorelake rates`.",
                  no_args_is_help=True, pretty_exceptions_enable=False,
                  context_settings={"help_option_names": ["-h", "--help"]})


def _version(shown: bool) -> None:
    if shown:
        print(f"scorelake {scorelake.__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit")] = False) -> None:
    """Re-score and query stored voice-agent evaluation runs."""


@functools.cache
def err():
    """The console for messages (rich, for their colours: imported only when there is one to print)."""
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)  # a message is one line, however narrow the terminal


def say(line: str) -> None:
    """A line for the user from the API (e.g. that a temporary Prefect server starts)."""
    err().print(f"[dim]{line}[/]", highlight=False)


def fail(message: str, code: int = 1) -> None:
    err().print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def os_error_text(exc: OSError) -> str:
    """One line from an OSError: its first line and, for a chain of causes (delta-rs), the innermost."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip(" \u21b3") for line in str(exc).splitlines() if line.strip()]
    return ": ".join(dict.fromkeys([lines[0], lines[-1]])) if lines else type(exc).__name__


def write_output(path: Path, text: str) -> None:
    """``text`` into ``path``, or a clear error when it cannot be written there."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}", 2)


def command(*args, **kwargs) -> Callable:
    """``app.command``: scorelake's errors end the command with their message and exit code."""

    def register(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def run(*a, **kw):
            try:
                return fn(*a, **kw)
            except ScorelakeError as exc:
                fail(str(exc), exc.exit_code)
            except BrokenPipeError:  # the reader of the output went away (`| head`): nothing to say
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nor at exit's flush
                raise typer.Exit(1) from None
            except OSError as exc:  # the file system, the object store or a cluster said no: say what it said
                fail(os_error_text(exc), 1)

        return app.command(*args, **kwargs)(run)

    return register


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


def emitted(df: pl.DataFrame, fmt: Format, wide: bool) -> bool:
    """Emit ``df`` as is when asked for JSON, CSV or every column; False when a compact table is wanted."""
    if fmt is Format.table and not wide:
        return False
    emit(df, fmt, wide)
    return True


def pct(passed: int | None, total: int | None) -> str:
    """A rate as people read it: percent with its counts; blank without a denominator."""
    return f"{passed / total * 100:.1f}% {passed}/{total}" if total else ""


def interval(low: float | None, high: float | None) -> str:
    return "" if low is None else f"{low * 100:.1f}-{high * 100:.1f}"


# The commands register themselves on ``app`` (imported last: they use what is defined above).
from scorelake.flows import _read_commands, _write_commands  # noqa: E402, F401
