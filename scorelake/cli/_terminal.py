"""Plain-text tables that fit the terminal without cutting a value.

A table is printed whole when it fits; otherwise its value columns are split into as many tables as
needed, each repeating the key columns; when even the key columns and one value column do not fit,
each row is printed as a block of ``header: value`` lines, a value longer than a line folded onto
the next. Output to a terminal (or with ``COLUMNS`` set) is fitted to its width; other output is
printed at the table's natural width, never squeezed. Plain string work, no rendering library:
the read commands start in a fraction of a second, and widths are exact.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import sys
import textwrap
from dataclasses import dataclass, field
from typing import TextIO

GAP = "  "  # between columns
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
    # long key values (scenario names) may fold over lines rather than turn the table into records;
    # off where people copy the keys whole (policy names, commands)
    foldable: bool = False
    fold: dict[int, int] = field(default_factory=dict)  # column -> the width its longer values fold at

    def without_empty_columns(self) -> Grid:
        """The grid less its value columns that are empty in every row."""
        keep = [i for i in range(len(self.headers)) if i < self.keys or any(r[i] for r in self.rows)]
        return dataclasses.replace(self, headers=[self.headers[i] for i in keep],
                                   rows=[[r[i] for i in keep] for r in self.rows])

    def column_width(self, i: int) -> int:
        natural = max(len(self.headers[i]), *(len(r[i]) for r in self.rows)) if self.rows else len(self.headers[i])
        return min(natural, self.fold[i]) if i in self.fold else natural

    def width(self, columns: list[int]) -> int:
        return sum(self.column_width(i) for i in columns) + len(GAP) * (len(columns) - 1)

    def lines(self, columns: list[int], bold: bool = False) -> list[str]:
        widths = [self.column_width(i) for i in columns]

        def line(cells: list[str]) -> str:
            return GAP.join(c.rjust(w) if self.headers[i] in self.right else c.ljust(w)
                            for i, c, w in zip(columns, cells, widths)).rstrip()

        def row_lines(row: list[str]) -> list[str]:  # a folded value goes on over the row's next lines
            pieces = [_chunks(row[i], w) for i, w in zip(columns, widths)]
            return [line([p[n] if n < len(p) else "" for p in pieces]) for n in range(max(map(len, pieces)))]

        header = line([self.headers[i] for i in columns])
        return ([f"\033[1m{header}\033[0m" if bold else header, GAP.join("-" * w for w in widths)]
                + [text for row in self.rows for text in row_lines(row)])


def _chunks(value: str, width: int) -> list[str]:
    """``value`` in pieces of ``width`` characters (one piece when it fits)."""
    return [value[i:i + width] for i in range(0, len(value), width)] if len(value) > width else [value]


MIN_FOLD = 24  # a key column is folded no narrower than this; below it the rows are printed as records


def _folded(grid: Grid, width: int) -> Grid | None:
    """``grid`` with its key columns folded so that they and any one of its value columns fit ``width``
    (one long name need not turn a whole table into records), or None when that would fold them
    below ``MIN_FOLD``."""
    values = [grid.column_width(i) for i in range(grid.keys, len(grid.headers))]
    gaps = len(GAP) * (len(grid.headers) - 1)
    each = (width - sum(values) - gaps) // max(grid.keys, 1)  # one table, if folding allows it
    if each < MIN_FOLD:  # else parts: the keys beside any one value column
        each = (width - max(values, default=0) - len(GAP) * grid.keys) // max(grid.keys, 1)
    if each < MIN_FOLD:
        return None
    return dataclasses.replace(grid, fold={i: each for i in range(grid.keys) if grid.column_width(i) > each})


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
            room = max(width - label - len(GAP), 1)
            chunks = [value[i:i + room] for i in range(0, len(value), room)] or [""]
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
        folded = _folded(grid, width) if parts is None and grid.foldable else None
        if folded is not None:
            grid, parts = folded, _parts(folded, width)
        if parts is None:
            lines = _records(grid, width)
        else:
            lines = [line for n, part in enumerate(parts) for line in ([""] if n else []) + grid.lines(part, bold)]
    if grid.title:
        lines.insert(0, wrapped(grid.title, stream))
    if grid.note:
        lines.append(wrapped(grid.note, stream))
    stream.write("\n".join(lines) + "\n")
