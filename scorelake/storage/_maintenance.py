"""Compaction: rows of dead generations dropped, small files bin-packed, old files vacuumed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl

from scorelake.storage._history import CommitLog
from scorelake.storage._tables import RUN_TABLES, TABLES, Tables, is_in

COMPACT_AFTER_FILES = 256  # data files in the warehouse before an ingest or re-score compacts
# An uncommitted generation older than this is a killed writer's; younger, maybe another's in flight.
ABANDONED_AFTER = timedelta(days=1)


class Maintenance:
    """Compaction of the tables, recorded in the commit log."""

    def __init__(self, tables: Tables, log: CommitLog):
        self.tables, self.log = tables, log

    def drop_dead_generations(self) -> None:
        """Rows no committed run shows: of a generation older than the run's committed one (a
        re-ingest cut short before its cleanup), or of an uncommitted one abandoned long enough
        that no writer can still be committing it."""
        committed = self.tables.committed_runs().select("run_id", pl.col("generation").alias("committed"))
        abandoned = (datetime.now(UTC) - ABANDONED_AFTER).strftime("%Y%m%dT%H%M%S%f")
        for table in RUN_TABLES:
            dead = (self.tables.read(table).select("run_id", "generation").unique()
                    .join(committed.lazy(), on="run_id", how="left")
                    .filter(pl.when(pl.col("committed").is_null()).then(pl.col("generation") < abandoned)
                            .otherwise(pl.col("generation") < pl.col("committed")))
                    .select("generation").collect())
            if not dead.is_empty():
                self.tables.delete(table, is_in("generation", dead["generation"]))

    def compact(self, every_table: bool = True) -> None:
        """Drop dead generations, rewrite each table of more than one file (``every_table``: each
        table that has files) into as few as it takes, then remove the files no version of the last
        ``HISTORY_DAYS`` days reads (vacuum) and checkpoint the log. A rewrite, not Delta's optimize:
        delta-rs's optimize writes strings as ``string_view``, which Daft cannot read."""
        self.drop_dead_generations()
        for table in TABLES:
            files = len(self.tables.files(table))
            if files > 1 or (every_table and files):
                self.tables.rewrite(table)
            dt = self.tables.delta_table(table)
            dt.vacuum(dry_run=False)
            dt.create_checkpoint()
            dt.cleanup_metadata()
        self.log.record("compact", "dead generations dropped, files rewritten together, old files vacuumed")

    def compact_if_fragmented(self) -> bool:
        if sum(len(self.tables.files(t)) for t in TABLES) <= COMPACT_AFTER_FILES:
            return False
        self.compact(every_table=False)
        return True
