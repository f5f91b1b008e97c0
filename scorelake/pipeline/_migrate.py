"""Getting a warehouse ready for a write: the former table format converted, the tables declared."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from scorelake.storage import TABLES, Store
from scorelake.pipeline._policies import stored_policies
from scorelake.pipeline._rescore import rescore
from scorelake.transforms.sources import LegacyTables


def prepare_for_writing(store: Store) -> str | None:
    """With the writer lock held: a warehouse of the former table format converted (where its former
    files were kept, else None), the tables declared, a killed writer's temporary files removed."""
    kept = migrate(store) if store.tables.legacy_tables() else None
    store.tables.init()
    if store.tables.is_local:
        for tmp in (*store.tables.root.glob(".*.tmp"), *store.tables.root.glob(".schemas/*.tmp")):
            tmp.unlink(missing_ok=True)
    return str(kept) if kept else None


def migrate(store: Store) -> Path:
    """Convert a warehouse of scorelake's former table format (``tables/``) to Delta tables, every
    visible row kept (with its generation, so scores stay attached); the old folder is then renamed
    aside, not deleted. Until that rename the old folder is the warehouse: a conversion cut short
    is simply run again (each table is overwritten whole, in one commit)."""
    legacy = LegacyTables(store.tables.legacy_tables())
    store.tables.init()
    for table in TABLES:
        if table != "commits":
            store.tables.replace(table, legacy.visible(table))
    for policy in stored_policies(store):  # rate counts a former warehouse lacked, counted from its scores
        rescore(store, policy)
    kept = legacy.folder.with_name(f"tables.pre-delta-{datetime.now(UTC):%Y%m%dT%H%M%S}")
    store.log.record("migrate", f"from the former table format; its files kept in {kept.name}")
    legacy.folder.rename(kept)
    return kept

