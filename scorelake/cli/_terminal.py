"""Plain-text tables that fit the terminal without cutting a value.

A table is printed whole when it fits; otherwise its value columns are split into as many tables as
needed, each repeating the key columns; when even the key columns and one value column do not fit,
long key values (scenario names) are shortened in the middle ("tau2_telecom…_roaming_7": JSON and
CSV keep them whole), and failing that each row is printed as a block of ``header: value`` lines,
a value longer than a line wrapped at its spaces. Output to a terminal (or with ``COLUMNS`` set) is
fitted to its width, a legend saying what each column means under each table; other output is
printed at the table's natural width, never squeezed. Output to a terminal longer than the screen
goes through a pager, as git's does. Plain string work, no rendering library: the read commands
start in a fraction of a second, and widths are exact.
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TextIO

GAP = "  "  # between columns
# A command's legends on a terminal: the headers its tables explained so far (each is explained once,
# under the first table that has it); None: no legends (--no-legend, or no command's output)
LEGENDS: ContextVar[set[str] | None] = ContextVar("LEGENDS", default=None)
# Control characters from run data (names, notes, transcripts) would move the cursor, ring the bell or
# clear the screen: shown as escapes instead (a line break and a tab stay what they are).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` with its control characters (but line breaks and tabs) written as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


@dataclass
class Grid:
    """A table as text: ``keys`` leading columns identify a row and repeat in every split part."""

    headers: list[str]
    rows: list[list[str]]
    title: str | None = None
    keys: int = 1
    right: set[str] = field(default_factory=set)  # headers of right-aligned (numeric) columns
    note: str | None = None
    # long key values (scenario names) may be shortened in the middle rather than turn the table into
    # records; off where people copy the keys whole (policy names, commands)
    shortenable: bool = True
    short: dict[int, int] = field(default_factory=dict)  # column -> the width its longer values are shortened to

    def without_empty_columns(self) -> Grid:
        """The grid less its value columns that are empty in every row."""
        keep = [i for i in range(len(self.headers)) if i < self.keys or any(r[i] for r in self.rows)]
        return dataclasses.replace(self, headers=[self.headers[i] for i in keep],
                                   rows=[[r[i] for i in keep] for r in self.rows])

    def column_width(self, i: int) -> int:
        natural = max(len(self.headers[i]), *(len(r[i]) for r in self.rows)) if self.rows else len(self.headers[i])
        return min(natural, self.short[i]) if i in self.short else natural

    def width(self, columns: list[int]) -> int:
        return sum(self.column_width(i) for i in columns) + len(GAP) * (len(columns) - 1)

    def lines(self, columns: list[int], bold: bool = False) -> list[str]:
        widths = [self.column_width(i) for i in columns]

        def line(cells: list[str]) -> str:
            return GAP.join(c.rjust(w) if self.headers[i] in self.right else c.ljust(w)
                            for i, c, w in zip(columns, cells, widths)).rstrip()

        header = line([self.headers[i] for i in columns])
        return ([f"\033[1m{header}\033[0m" if bold else header, GAP.join("-" * w for w in widths)]
                + [line([shortened(row[i], w) for i, w in zip(columns, widths)]) for row in self.rows])


def shortened(value: str, width: int) -> str:
    """``value`` in at most ``width`` characters: its start and its end, an ellipsis between."""
    if len(value) <= width:
        return value
    tail = (width - 1) // 2
    return value[:width - 1 - tail] + "…" + value[len(value) - tail:]


MIN_SHORT = 24  # a key column is shortened no narrower than this; below it the rows are printed as records


def _shortened(grid: Grid, width: int) -> Grid | None:
    """``grid`` with its key columns shortened so that they and any one of its value columns fit
    ``width`` (one long name need not turn a whole table into records), or None when that would
    shorten them below ``MIN_SHORT``."""
    values = [grid.column_width(i) for i in range(grid.keys, len(grid.headers))]
    gaps = len(GAP) * (len(grid.headers) - 1)
    each = (width - sum(values) - gaps) // max(grid.keys, 1)  # one table, if shortening allows it
    if each < MIN_SHORT:  # else parts: the keys beside any one value column
        each = (width - max(values, default=0) - len(GAP) * grid.keys) // max(grid.keys, 1)
    if each < MIN_SHORT:
        return None
    return dataclasses.replace(grid, short={i: each for i in range(grid.keys) if grid.column_width(i) > each})


def terminal_width(stream: TextIO) -> int | None:
    """The width to fit: ``COLUMNS`` if set, the terminal's if ``stream`` is one, else None (no limit)."""
    if os.environ.get("COLUMNS", "").isdigit():
        return int(os.environ["COLUMNS"])
    return shutil.get_terminal_size().columns if stream.isatty() else None


def _parts(grid: Grid, width: int) -> list[list[int]] | None:
    """Column groups (key columns first in each) that each fit ``width``, or None when none can."""
    keys, parts, current = list(range(grid.keys)), [], []
    for i in range(grid.keys, len(grid.headers)):
        if current and grid.width(keys + current + [i]) > width:
            parts.append(keys + current)
            current = []
        current.append(i)
        if grid.width(keys + current) > width:
            return None
    return parts + [keys + current] if current or not parts else parts


def _records(grid: Grid, width: int) -> list[str]:
    label = max(len(h) for h in grid.headers)
    lines: list[str] = []
    for n, row in enumerate(grid.rows):
        if n:
            lines.append("")
        for header, value in zip(grid.headers, row):
            room = max(width - label - len(GAP), 1)  # a long value wraps at its spaces, never mid-word if it can
            chunks = textwrap.wrap(value, room, break_on_hyphens=False) or [""]
            lines.append(f"{header:>{label}}{GAP}{chunks[0]}")
            lines.extend(" " * (label + len(GAP)) + chunk for chunk in chunks[1:])
    return lines


def wrapped(text: str, stream: TextIO | None = None) -> str:
    """``text`` wrapped at spaces to the terminal's width (never cut: a long word is folded)."""
    width = terminal_width(stream or sys.stdout)
    return text if width is None else "\n".join(textwrap.wrap(text, width, break_on_hyphens=False)) or text


def show(grid: Grid, wide: bool = False, stream: TextIO | None = None) -> None:
    """Print ``grid`` to fit the terminal (``wide``: one table at its natural width, whatever the terminal)."""
    stream = stream or sys.stdout
    grid = dataclasses.replace(grid, headers=[visible(h) for h in grid.headers],
                               rows=[[visible(c) for c in row] for row in grid.rows],
                               title=grid.title and visible(grid.title), note=grid.note and visible(grid.note))
    width = None if wide else terminal_width(stream)
    bold = stream.isatty()
    everything = list(range(len(grid.headers)))
    if width is None or grid.width(everything) <= width:
        lines = grid.lines(everything, bold)
    else:
        parts = _parts(grid, width)
        short = _shortened(grid, width) if parts is None and grid.shortenable else None
        if short is not None:
            grid, parts = short, _parts(short, width)
        if parts is None:
            lines = _records(grid, width)
        else:
            lines = [line for n, part in enumerate(parts) for line in ([""] if n else []) + grid.lines(part, bold)]
    if grid.title:
        lines.insert(0, wrapped(grid.title, stream))
    if grid.note:
        lines.append(wrapped(grid.note, stream))
    explained = LEGENDS.get()
    if width is not None and explained is not None:
        legend = {h: meaning for h, meaning in _legend(grid).items() if h not in explained}
        explained.update(legend)
        lines += [wrapped(f"{header}: {meaning}", stream) for header, meaning in legend.items()]
    stream.write("\n".join(lines) + "\n")


def _legend(grid: Grid) -> dict[str, str]:
    """What each of ``grid``'s columns means, in the glossary's words (``present``)."""
    from scorelake.present import column_meaning  # on use: only a table on a terminal has a legend

    return {h: meaning for h in grid.headers if (meaning := column_meaning(h))}


class _Screen(io.StringIO):
    """Output held for the pager: to what writes it, the terminal it will reach."""

    def isatty(self) -> bool:
        return True


@contextmanager
def paged() -> Iterator[None]:
    """Standard output, when it is a terminal, held and then shown through a pager if it is longer
    than the screen, as git does: ``$SCORELAKE_PAGER``, else ``$PAGER``, else ``less`` (with ``LESS``
    FRX unless set: it quits when the text fits and keeps colours); empty or ``cat``: no pager.
    Output to a pipe or a file is written as it comes."""
    pager = os.environ.get("SCORELAKE_PAGER", os.environ.get("PAGER", "less")).strip()
    if not sys.stdout.isatty() or pager in ("", "cat"):
        yield
        return
    real, sys.stdout = sys.stdout, _Screen()
    try:
        yield
    finally:
        text, sys.stdout = sys.stdout.getvalue(), real
        _page(text, pager)


def _page(text: str, pager: str) -> None:
    if text.count("\n") < shutil.get_terminal_size().lines - 1:
        sys.stdout.write(text)
        return
    try:
        subprocess.run(shlex.split(pager), input=text, text=True, check=False,
                       env={**os.environ, "LESS": os.environ.get("LESS", "FRX")})
    except OSError:  # no such pager: the text as it is
        sys.stdout.write(text)
