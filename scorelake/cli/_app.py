"""The typer app and what every command shares: error handling, messages, output formats."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import os
import re
import sys
import typing
from pathlib import Path
from typing import Annotated, Callable

import polars as pl
import typer

import scorelake
from scorelake._csv import csv_text
from scorelake.cli._options import OPTION_BUNDLES, Format, Read
from scorelake.cli._terminal import LEGENDS, Grid, paged, show
from scorelake.transforms.errors import ScorelakeError

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

    # wrapped to a terminal's width as the tables are; in a pipe or a log, one line each (greppable)
    return Console(stderr=True, soft_wrap=not sys.stderr.isatty())


def say(line: str) -> None:
    """A line for the user from the API (e.g. that a temporary Prefect server starts)."""
    err().print(f"[dim]{line}[/]", highlight=False)


def fail(message: str, code: int = 1) -> None:
    """``message`` as an error line, as written (brackets in it are text: 'scorelake[dask]'), and the exit."""
    from rich.markup import escape

    err().print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    raise typer.Exit(code)


# What delta-rs's object-store client says when it found no credentials anywhere it looked
NO_CREDENTIALS = ("imds", "credential")  # (lower-cased) "IMDS is disabled", "failed to load credentials"
CREDENTIALS_HINT = ("no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) "
                    "and AWS_REGION; AWS_ENDPOINT_URL too for an S3-compatible server")


def os_error_text(exc: OSError) -> str:
    """One line from an OSError: its first line and, for a chain of causes (delta-rs), the innermost;
    for object storage that found no credentials, which variables to set."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip(" \u21b3") for line in str(exc).splitlines() if line.strip()]
    said = ": ".join(dict.fromkeys([lines[0], lines[-1]])) if lines else type(exc).__name__
    return f"{CREDENTIALS_HINT} ({said})" if any(words in said.lower() for words in NO_CREDENTIALS) else said


def write_output(path: Path, text: str) -> None:
    """``text`` into ``path``, or a clear error when it cannot be written there."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}", 2)


def command(fn: Callable) -> Callable:
    """A command function whose scorelake errors end it with their message and exit code (the
    package's ``__init__`` registers the commands on ``app``, in the order ``--help`` lists them). A
    parameter annotated with an option bundle (``Where``, ``Read``, ``Listing``) becomes the bundle's
    options (its fields, as typer reads them) and reaches the function as one bundle; what a command
    that reads prints goes through a pager on a terminal when it is longer than the screen."""
    hints = typing.get_type_hints(fn, include_extras=True)
    bundled = {name: hint for name, hint in hints.items() if hint in OPTION_BUNDLES}
    parameters = []
    for p in inspect.signature(fn).parameters.values():
        if p.name in bundled:
            fields = typing.get_type_hints(bundled[p.name], include_extras=True)
            parameters += [inspect.Parameter(f.name, p.kind, default=f.default, annotation=fields[f.name])
                           for f in dataclasses.fields(bundled[p.name])]
        else:
            parameters.append(p.replace(annotation=hints.get(p.name, p.annotation)))

    @functools.wraps(fn)
    def run(*a, **kw):
        for name, bundle in bundled.items():
            kw[name] = bundle(**{f.name: kw.pop(f.name) for f in dataclasses.fields(bundle)})
        read = next((kw[name] for name in bundled if isinstance(kw[name], Read)), None)
        explained = LEGENDS.set(set() if read is None or read.legend else None)
        try:
            if read is None:  # a command that writes, or a server: its output as it comes
                return _run(fn, *a, **kw)
            with paged():  # what a reading command prints, through a pager when longer than the terminal
                return _run(fn, *a, **kw)
        finally:
            LEGENDS.reset(explained)

    run.__signature__ = inspect.Signature(parameters)
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    run.__doc__ = reflowed(fn.__doc__ or "")
    return run


def _run(fn: Callable, *a, **kw):
    """``fn`` with the errors a user can act on said in a line and ended with their exit code."""
    try:
        return fn(*a, **kw)
    except ScorelakeError as exc:
        fail(str(exc), exc.exit_code)
    except BrokenPipeError:  # the reader of the output went away (`| head`): nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nor at exit's flush
        raise typer.Exit(1) from None
    except OSError as exc:  # the file system, the object store or a cluster said no: say what it said
        fail(os_error_text(exc), 1)


def reflowed(doc: str) -> str:
    """A docstring as ``--help`` shows it: each paragraph one line (the help wraps it to the terminal,
    not at the source's line breaks), each ``Example:`` line its own."""
    paragraphs = []
    for paragraph in inspect.cleandoc(doc).split("\n\n"):
        lines = [line.strip() for line in paragraph.splitlines()]
        paragraphs.append("\n".join(lines) if all(line.startswith("Example:") for line in lines)
                          else " ".join(lines))
    return "\n\n".join(paragraphs)


def say_converted(location: str, kept: str | None) -> None:
    """That a write converted a warehouse of the former table format, and where the old files are."""
    if kept:
        err().print(f"{location}: converted to Delta tables; the former files are in {kept}: remove them once "
                    "you no longer need them", highlight=False)


def cell(value: object) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    return "" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)


def print_json(data: object) -> None:
    """``data`` as strict JSON on stdout: a value JSON cannot hold (NaN, infinity) is null (orjson's
    rule); times as Python writes them; 100,000 rows in about a second (the json module: four)."""
    import orjson

    option = orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS
    sys.stdout.write(orjson.dumps(data, default=str, option=option).decode() + "\n")


def emit(df: pl.DataFrame, fmt: Format, wide: bool = False) -> None:
    """``df`` as JSON, CSV, or a table of every column (fitted to the terminal unless ``wide``)."""
    if fmt is Format.json:  # a row an object, NaN and infinities null, times ISO 8601: Polars writes it in Rust
        sys.stdout.write(df.write_json() + "\n")
    elif fmt is Format.csv:
        sys.stdout.write(csv_text(df))
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


def ms(value: float | None) -> str:
    """A latency in whole milliseconds; blank where none was recorded."""
    return "" if value is None else f"{value:.0f}"


def interval(low: float | None, high: float | None) -> str:
    return "" if low is None else f"{low * 100:.1f}-{high * 100:.1f}"

