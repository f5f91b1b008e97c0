"""Reading a warehouse of scorelake's former table format, to convert it (``pipeline.migrate``).

That format kept, under ``tables/``: per-run files ``<table>/<run_id>/<generation>[__<policy>].parquet``,
re-score files ``<table>/_rescore/*.parquet``, compacted ``_snapshots/<table>.parquet``, and a one-row
``runs/<run_id>/run.parquet`` whose generation was the run's commit point. Its visible rows are the
rows of each run's newest generation, a compacted row counted once.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from scorelake.transforms.columns import empty_frame

# Rows of a table were the same rows when these matched (a compaction cut short left both copies).
ROW_KEYS = {"runs": ("run_id", "generation"), "scenarios": ("run_id", "generation"),
            "verdicts": ("run_id", "generation"), "quarantine": ("run_id", "generation"),
            "scores": ("run_id", "generation", "policy_id"), "rate_counts": ("run_id", "generation", "policy_id")}


class LegacyTables:
    def __init__(self, folder: Path):
        self.folder = folder

    def _read(self, table: str, paths: list[Path]) -> pl.DataFrame:
        """The files' rows in the table's declared columns (files of an older scorelake lack some: NULL)."""
        target = empty_frame(table)
        frames = [pl.read_parquet(p) for p in paths if p.exists()]
        return pl.concat([target, *frames], how="diagonal_relaxed").select(target.columns)

    def _per_run_files(self, table: str) -> list[Path]:
        return [p for p in (self.folder / table).glob("*/*.parquet") if p.parent.name != "_schema"]

    def committed_runs(self) -> pl.DataFrame:
        rows = self._read("runs", [self.folder / "_snapshots" / "runs.parquet", *self._per_run_files("runs")])
        return rows.sort("generation", descending=True).unique("run_id", keep="first", maintain_order=True)

    def visible(self, table: str) -> pl.DataFrame:
        """The table's visible rows (read whole: a conversion runs once, and memory is plentiful
        next to the format's largest tables)."""
        if table == "runs":
            return self.committed_runs().sort("run_id")
        if table not in ROW_KEYS:  # policies, refusals: every file's rows
            return self._read(table, [p for p in (self.folder / table).rglob("*.parquet") if p.parent.name != "_schema"])
        key = list(ROW_KEYS[table])
        runs = self.committed_runs().select("run_id", "generation")
        compacted = self._read(table, [self.folder / "_snapshots" / f"{table}.parquet"]).join(
            runs, on=["run_id", "generation"], how="semi")
        recent = self._read(table, self._per_run_files(table)).join(runs, on=["run_id", "generation"], how="semi")
        return pl.concat([compacted, recent.join(compacted.select(key).unique(), on=key, how="anti")])
