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

from scorelake.transforms.warehouse._history import History
from scorelake.transforms.warehouse._lock import Locking
from scorelake.transforms.warehouse._maintenance import Maintenance
from scorelake.transforms.warehouse._tables import Tables
from scorelake.transforms.warehouse._views import QueryLimits, Views


class Store(Tables, History, Maintenance, Views, Locking):
    """A warehouse's tables and views: the Delta I/O and commit protocol (``_tables``), the commit
    log and ``--as-of`` (``_history``), compaction (``_maintenance``), the DuckDB views
    (``_views``) and the writer lock (``_lock``), one job per module."""

    def __init__(self, location=None, limits: QueryLimits | None = None):
        super().__init__(location)
        self.limits = limits or QueryLimits()  # of every connection ``connect`` opens
