"""The warehouse: Delta Lake tables under one root, and the DuckDB views over them.

The root is a local directory or an object-store URL (``s3://bucket/prefix`` and the other schemes
delta-rs supports; credentials and endpoint from their usual environment variables). Under it::

    runs/ scenarios/ verdicts/ quarantine/ turns/ tool_calls/ judge_results/ scores/ rate_counts/
    policies/ refusals/ commits/
                                 one Delta table each (``_delta_log/`` + Parquet files)
    scorelake.duckdb             local only: the views (sql/), over each table's current files
    .schemas/<table>.parquet     local only: each table's declared schema, no rows (views of empty tables)

Delta has no transaction across tables, so the ``runs`` table is the commit point across them: a
run's rows in the other tables carry the ``generation`` of the ingest that wrote them, and the
staging views join every table to ``runs`` on (run_id, generation). An ingest appends the rows of a
new generation, then replaces the runs' rows in ``runs`` by one predicate overwrite (readers switch
to the new rows there, in one Delta commit), then deletes the rows of the generation it replaced.
A crash at any moment leaves the old or the new state visible, never a mix, at every table version:
which is what makes ``--as-of`` exact across tables. Each write step ends with a row in ``commits``,
whose Delta version is the warehouse version that ``scorelake log`` lists and ``--as-of`` takes.
"""

from __future__ import annotations

from pathlib import Path

from scorelake.storage._history import CommitLog
from scorelake.storage._lock import WriterLock
from scorelake.storage._maintenance import Maintenance
from scorelake.storage._tables import Tables
from scorelake.storage._views import QueryLimits, Views


class Store:
    """A warehouse as its parts, each with one job and the parts it needs named in its constructor:

    - ``tables``: the Delta tables, their committed rows and the commit protocol (``_tables``);
    - ``log``: the commit log over them, the warehouse versions ``--as-of`` takes (``_history``);
    - ``views``: the DuckDB views and the connections that read them (``_views``);
    - ``lock``: one writer at a time on local disk (``_lock``);
    - ``maintenance``: compaction, recorded in the log (``_maintenance``).
    """

    def __init__(self, location: Path | str | None = None, limits: QueryLimits | None = None):
        self.tables = Tables(location)
        self.log = CommitLog(self.tables)
        self.views = Views(self.tables, self.log, limits or QueryLimits.of())
        self.lock = WriterLock(self.tables)
        self.maintenance = Maintenance(self.tables, self.log)

    @property
    def location(self) -> str:
        """The warehouse's absolute path, or its URL."""
        return self.tables.location
