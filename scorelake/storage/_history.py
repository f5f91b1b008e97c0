"""The commit log: every write step ends with a row in ``commits`` naming what it did and the
version of every table; that row's Delta version is the warehouse version ``--as-of`` takes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import polars as pl

from scorelake.storage._tables import COMMITTER_KEY, TABLES, Tables
from scorelake.transforms.errors import InvalidArgument, NotFound


@dataclass(frozen=True)
class Commit:
    """One write step as ``commits`` recorded it: the warehouse version and each table's version,
    and the process that made it (``host:pid``; None for steps of a scorelake that did not record it)."""

    version: int
    committed_at: datetime
    operation: str
    detail: str
    table_versions: dict[str, int]
    committer: str | None = None


class CommitLog:
    """The ``commits`` table read as the warehouse's versions."""

    def __init__(self, tables: Tables):
        self.tables = tables

    def record(self, operation: str, detail: str) -> None:
        """End a write step: a row in ``commits`` naming what it did and the version of every table."""
        versions = {t: self.tables.delta_table(t).version() for t in TABLES if t != "commits"}
        row = {"committed_at": datetime.now(UTC), "operation": operation, "detail": detail,
               "table_versions": json.dumps(versions, sort_keys=True)}
        metadata = {f"scorelake.{k}": v for k, v in row.items() if k != "committed_at"}
        self.tables.write("commits", pl.DataFrame([row]), metadata, mode="append")

    def version(self) -> int:
        """The warehouse's current version: the ``commits`` table's."""
        return self.tables.delta_table("commits").version()

    def entries(self) -> list[Commit]:
        """Every recorded write step, oldest first; its version is the ``commits`` table's."""
        entries = [h for h in self.tables.delta_table("commits").history() if "scorelake.operation" in h]
        return sorted((Commit(h["version"], datetime.fromtimestamp(h["timestamp"] / 1000, UTC),
                              h["scorelake.operation"], h["scorelake.detail"],
                              json.loads(h["scorelake.table_versions"]), h.get(COMMITTER_KEY)) for h in entries),
                      key=lambda c: c.version)

    def as_of(self, when: str) -> Commit:
        """The write step the warehouse stood at: a version ``scorelake log`` lists, or the last
        step at or before a timestamp (ISO 8601; a date means its end; UTC unless it says)."""
        log = self.entries()
        if when.isdigit():
            found = [c for c in log if c.version == int(when)]
            if not found:
                raise NotFound(f"no warehouse version {when} (`scorelake log` lists them)")
            return found[0]
        try:
            moment = datetime.fromisoformat(when)
        except ValueError:
            raise InvalidArgument(f"--as-of takes a version number or an ISO timestamp, not '{when}'") from None
        if len(when) == 10:  # a date: as the warehouse stood at the end of that day
            moment += timedelta(days=1) - timedelta(microseconds=1)
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        before = [c for c in log if c.committed_at <= moment]
        if not before:
            raise NotFound(f"the warehouse has no version as old as {when}")
        return before[-1]
