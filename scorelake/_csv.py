"""A table as CSV a spreadsheet can open safely: what the command line's ``--format csv`` and the
viewer's exports write."""

from __future__ import annotations

import polars as pl

# A cell a spreadsheet would take for a formula (OWASP's CSV injection advice): given a leading apostrophe.
_FORMULA_START = r"^[=+\-@\t\r]"


def spreadsheet_safe(df: pl.DataFrame) -> pl.DataFrame:
    """``df``'s text cells that begin as a formula would, prefixed with ``'`` (numbers stay numbers)."""
    return df.with_columns(pl.when(pl.col(c).str.contains(_FORMULA_START)).then(pl.lit("'") + pl.col(c))
                           .otherwise(pl.col(c)).alias(c) for c, t in df.schema.items() if t == pl.String)


def csv_text(df: pl.DataFrame) -> str:
    """``df`` as CSV: list cells joined by ``;``, formula-like text made inert."""
    flat = df.with_columns(pl.col(c).cast(pl.List(pl.String)).list.join(";")
                           for c, t in df.schema.items() if isinstance(t, pl.List))
    return spreadsheet_safe(flat).write_csv()
