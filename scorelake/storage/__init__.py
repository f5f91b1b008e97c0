"""The warehouse: Delta Lake tables under one root, the commit log over them, and the DuckDB views."""

from scorelake.storage._faults import crash_point
from scorelake.storage._history import Commit
from scorelake.storage._store import Store
from scorelake.storage._tables import (
    COMMITTER_KEY,
    DB_FILE,
    HISTORY_DAYS,
    RUN_TABLES,
    TABLES,
    default_location,
    is_in,
    sql_literal,
)
from scorelake.storage._views import QueryLimits, fetch, sql_text
from scorelake.transforms.errors import WarehouseBusy

__all__ = ["COMMITTER_KEY", "Commit", "crash_point", "QueryLimits", "DB_FILE", "HISTORY_DAYS", "RUN_TABLES", "Store", "TABLES",
           "WarehouseBusy", "default_location", "fetch", "is_in", "sql_literal", "sql_text"]
