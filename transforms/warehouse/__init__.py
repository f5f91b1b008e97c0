"""The warehouse: Delta Lake tables under one root, the commit log over them, and the DuckDB views."""

from scorelake.transforms.errors import WarehouseBusy
from scorelake.transforms.warehouse._history import Commit
from scorelake.transforms.warehouse._store import Store
from scorelake.transforms.warehouse._tables import (
    DB_FILE,
    HISTORY_DAYS,
    RUN_TABLES,
    TABLES,
    default_location,
    is_in,
    sql_literal,
)
from scorelake.transforms.warehouse._views import QueryLimits, fetch, sql_text

__all__ = ["Commit", "QueryLimits", "DB_FILE", "HISTORY_DAYS", "RUN_TABLES", "Store", "TABLES", "WarehouseBusy",
           "default_location", "fetch", "is_in", "sql_literal", "sql_text"]
