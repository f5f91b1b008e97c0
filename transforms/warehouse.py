"""The warehouse: Delta Lake tables under one root, and the DuckDB views over them.

The root is a local directory or an object-store URL (``s3://bucket/prefix`` and the other schemes
delta-rs supports; credentials and endpoint from their usual environment variables). Under it::

    runs/ scenarios/ verdicts/ quarantine/ scores/ rate_counts/ policies/ refusals/ commits/
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

import fcntl
import hashlib
import json
import os
import random
import re
import secrets
import shutil
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Iterable, Iterator

import duckdb
import polars as pl

from transforms.columns import SCHEMAS, empty_frame

REPO_ROOT = Path(__file__).resolve().parent.parent
SQL_DIR = REPO_ROOT / "sql"
SQL_LAYERS = ("staging", "intermediate", "marts")  # folders of view bodies, one view per file
DEFAULT_WAREHOUSE = REPO_ROOT / "data" / "warehouse"
DB_FILE = "scorelake.duckdb"
TABLES = tuple(SCHEMAS)
# Rows keyed by (run_id, generation): visible while their generation is the run's committed one.
RUN_TABLES = ("scenarios", "verdicts", "quarantine", "scores", "rate_counts")
COMPACT_AFTER_FILES = 256  # data files in the warehouse before an ingest or re-score compacts
# What vacuum keeps: files and log entries of the last 90 days stay readable with --as-of.
HISTORY_DAYS = 90
TABLE_CONFIG = {"delta.deletedFileRetentionDuration": f"interval {HISTORY_DAYS} days",
                "delta.logRetentionDuration": f"interval {HISTORY_DAYS} days"}
# An uncommitted generation older than this is a killed writer's; younger, maybe another's in flight.
ABANDONED_AFTER = timedelta(days=1)
COMMIT_RETRIES = 10
FILES_TABLE = "scorelake_files"  # in the view database: the files its views read


def default_location() -> str:
    return os.environ.get("SCORELAKE_WAREHOUSE") or str(DEFAULT_WAREHOUSE)


def new_generation() -> str:
    """Sortable by time (the ingest that wrote it), unique by its random tail."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f") + secrets.token_hex(3)


def sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def is_in(column: str, values: Iterable[str]) -> str:
    """A Delta predicate: ``column`` is one of ``values``."""
    return f"{column} IN ({', '.join(sql_literal(v) for v in sorted(set(values)))})"


def _retrying(commit):
    """``commit()``, run again on a fresh read of the table when it failed to land because another
    writer's commit (on object storage, where writers do not wait for each other) touched what it
    read or took the next version past delta-rs's own retries."""
    from deltalake.exceptions import CommitFailedError

    for attempt in range(COMMIT_RETRIES):
        try:
            return commit()
        except CommitFailedError:
            if attempt == COMMIT_RETRIES - 1:
                raise
            # backing off at random, so writers that collided do not collide again in step
            time.sleep(random.uniform(0, min(2.0, 0.05 * 2 ** attempt)))


def delta_schema(table: str):
    """The table's declared schema as Delta's (through arro3: no pyarrow on the write path)."""
    from arro3.core import Table
    from deltalake import Schema

    return Schema.from_arrow(Table.from_arrow(empty_frame(table)).schema)


def conform(table: str, df: pl.DataFrame) -> pl.DataFrame:
    """``df`` in the table's declared columns and types, the Delta table's schema."""
    return df.select(pl.col(name).cast(dtype) for name, dtype in SCHEMAS[table].items())


def _lock_holder(fh) -> str:
    """Who holds the lock, as its holder wrote it; it writes just after taking the lock, so a
    moment's wait covers a holder that has the lock but has not written yet."""
    for _ in range(20):
        fh.seek(0)
        holder = fh.read().strip()
        if holder:
            return holder
        time.sleep(0.01)
    return "another process"


class WarehouseBusy(RuntimeError):
    """Another process is writing the warehouse."""


@dataclass(frozen=True)
class Commit:
    """One write step as ``commits`` recorded it: the warehouse version and each table's version."""

    version: int
    committed_at: datetime
    operation: str
    detail: str
    table_versions: dict[str, int]


class Warehouse:
    def __init__(self, location: Path | str | None = None):
        location = str(location) if location is not None else default_location()
        if "://" in location and not location.startswith("file://"):
            self.location = location.rstrip("/")
            self.root: Path | None = None  # object storage: no local files, no view database
        else:
            self.root = Path(location.removeprefix("file://")).absolute()
            self.location = str(self.root)
        self.db_path = self.root / DB_FILE if self.root else None
        self._loaded: dict[str, object] = {}  # table -> its DeltaTable, brought up to date on each use

    def delta_table(self, table: str, version: int | None = None):
        """The table's DeltaTable at ``version``, or at its latest version (kept loaded: bringing
        it up to date reads only the log entries since, where a fresh load replays the log)."""
        from deltalake import DeltaTable

        if version is not None:
            return DeltaTable(self.table_uri(table), version=version)
        if table in self._loaded:
            self._loaded[table].update_incremental()
        else:
            self._loaded[table] = DeltaTable(self.table_uri(table))
        return self._loaded[table]

    @property
    def is_local(self) -> bool:
        return self.root is not None

    def table_uri(self, table: str) -> str:
        return f"{self.location}/{table}"

    # ---- layout -------------------------------------------------------------------------
    def exists(self) -> bool:
        if self.is_local:
            return self.db_path.exists()
        from deltalake import DeltaTable

        return DeltaTable.is_deltatable(self.table_uri("runs"))

    def require(self) -> None:
        if not self.exists():
            raise FileNotFoundError(f"{self.location}: no scorelake warehouse here (run `scorelake ingest` first)")
        if self.legacy_tables():
            raise FileNotFoundError(f"{self.location} is in scorelake's former table format: convert it with "
                                    "`scorelake migrate` (any write command does it too)")

    def legacy_tables(self) -> Path | None:
        """The folder of a warehouse in scorelake's former table format, if this is one."""
        folder = self.root / "tables" if self.is_local else None
        return folder if folder and (folder / "runs").is_dir() else None

    def schema_file(self, table: str) -> Path:
        return self.root / ".schemas" / f"{table}.parquet"

    def init(self) -> None:
        """Create the tables this warehouse lacks. A table whose declared schema changed (a newer
        scorelake) is rewritten to it in one commit, new columns NULL."""
        from deltalake import DeltaTable
        from deltalake.exceptions import DeltaError, TableNotFoundError

        for table in TABLES:
            uri, declared = self.table_uri(table), delta_schema(table)
            try:
                stored = self.delta_table(table).schema()
            except TableNotFoundError:
                try:
                    DeltaTable.create(uri, declared, configuration=TABLE_CONFIG)
                except DeltaError:  # created by another writer on object storage just now
                    if not DeltaTable.is_deltatable(uri):
                        raise
                continue
            if stored.to_json() != declared.to_json():
                rows = pl.concat([empty_frame(table), pl.read_delta(uri)], how="diagonal_relaxed")
                self._write(table, rows, mode="overwrite", schema_mode="overwrite")
        self._write_schema_files()

    def _write_schema_files(self) -> None:
        for table in TABLES if self.is_local else ():
            path = self.schema_file(table)
            if not path.exists() or pl.read_parquet_schema(path) != empty_frame(table).schema:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{secrets.token_hex(4)}.tmp")
                empty_frame(table).write_parquet(tmp)
                os.replace(tmp, path)

    # ---- reading --------------------------------------------------------------------------
    def read(self, table: str, version: int | None = None) -> pl.LazyFrame:
        """The table's rows at ``version`` (default: the current one)."""
        if not self.is_local:
            return pl.scan_delta(self.delta_table(table, version))
        # Locally, its files as plain Parquet (scorelake writes neither deletion vectors nor
        # partitions): Polars' Delta reader would import pyarrow, 50 ms on every command.
        files = self.files(table, version)
        return pl.scan_parquet(files) if files else empty_frame(table).lazy()

    def committed_runs(self) -> pl.DataFrame:
        """Each run's committed row (should two writers have committed one run at once: the newer)."""
        return (self.read("runs").collect().sort("generation", descending=True)
                .unique("run_id", keep="first", maintain_order=True).sort("run_id"))

    def scan(self, table: str, runs: pl.DataFrame) -> pl.LazyFrame:
        """The visible rows of ``table`` for the given committed runs. The run_id filter reaches into
        the Parquet reader (rows of other runs are never decoded); the join keeps the committed generation."""
        return self.read(table).filter(pl.col("run_id").is_in(runs["run_id"].implode())).join(
            runs.select("run_id", "generation").lazy(), on=["run_id", "generation"], how="semi")

    def files(self, table: str, version: int | None = None) -> list[str]:
        return self.delta_table(table, version).file_uris()

    # ---- writing -------------------------------------------------------------------------
    def _write(self, table: str, df: pl.DataFrame, **options) -> None:
        from deltalake import write_deltalake

        write_deltalake(self.delta_table(table), conform(table, df), **options)

    def append(self, table: str, df: pl.DataFrame) -> None:
        if not df.is_empty():  # a commit that failed did not land, so writing again adds no duplicate
            _retrying(lambda: self._write(table, df, mode="append"))

    def replace(self, table: str, df: pl.DataFrame) -> None:
        """The whole table replaced by ``df``, in one commit."""
        _retrying(lambda: self._write(table, df, mode="overwrite"))

    def delete(self, table: str, predicate: str) -> None:
        _retrying(lambda: self.delta_table(table).delete(predicate))

    def commit_runs(self, runs: pl.DataFrame, tables: dict[str, pl.DataFrame]) -> None:
        """Commit a batch of ingested runs: their rows of ``RUN_TABLES`` (of the generations in
        ``runs``), then their ``runs`` rows, then the removal of the rows they replace."""
        for table in RUN_TABLES:
            self.append(table, tables[table])
        run_ids = runs["run_id"].to_list()

        def switch() -> set[str]:
            replaced = self.read("runs").filter(pl.col("run_id").is_in(run_ids)).select("generation").collect()
            self._write("runs", runs, mode="overwrite", predicate=is_in("run_id", run_ids))
            return set(replaced["generation"])

        dead = _retrying(switch) - set(runs["generation"])
        for table in RUN_TABLES if dead else ():
            self.delete(table, is_in("generation", dead))

    def drop_dead_generations(self) -> None:
        """Rows no committed run shows: of a generation older than the run's committed one (a
        re-ingest cut short before its cleanup), or of an uncommitted one abandoned long enough
        that no writer can still be committing it."""
        committed = self.committed_runs().select("run_id", pl.col("generation").alias("committed"))
        abandoned = (datetime.now(UTC) - ABANDONED_AFTER).strftime("%Y%m%dT%H%M%S%f")
        for table in RUN_TABLES:
            dead = (self.read(table).select("run_id", "generation").unique()
                    .join(committed.lazy(), on="run_id", how="left")
                    .filter(pl.when(pl.col("committed").is_null()).then(pl.col("generation") < abandoned)
                            .otherwise(pl.col("generation") < pl.col("committed")))
                    .select("generation").collect())
            if not dead.is_empty():
                self.delete(table, is_in("generation", dead["generation"]))

    def compact(self) -> None:
        """Drop dead generations, bin-pack each table's small files (Delta optimize), then remove
        the files no version of the last ``HISTORY_DAYS`` days reads (vacuum) and checkpoint the log."""
        self.drop_dead_generations()
        for table in TABLES:
            _retrying(lambda: self.delta_table(table).optimize.compact())
            dt = self.delta_table(table)
            dt.vacuum(dry_run=False)
            dt.create_checkpoint()
            dt.cleanup_metadata()
        self.record("compact", "dead generations dropped, files bin-packed (optimize), old files vacuumed")

    def compact_if_fragmented(self) -> bool:
        if sum(len(self.files(t)) for t in TABLES) <= COMPACT_AFTER_FILES:
            return False
        self.compact()
        return True

    # ---- the commit log ---------------------------------------------------------------------
    def record(self, operation: str, detail: str) -> None:
        """End a write step: a row in ``commits`` naming what it did and the version of every table."""
        from deltalake import CommitProperties

        versions = {t: self.delta_table(t).version() for t in TABLES if t != "commits"}
        row = {"committed_at": datetime.now(UTC), "operation": operation, "detail": detail,
               "table_versions": json.dumps(versions, sort_keys=True)}
        metadata = CommitProperties(custom_metadata={f"scorelake.{k}": v for k, v in row.items() if k != "committed_at"})
        _retrying(lambda: self._write("commits", pl.DataFrame([row]), mode="append", commit_properties=metadata))

    def log(self) -> list[Commit]:
        """Every recorded write step, oldest first; its version is the ``commits`` table's."""
        entries = [h for h in self.delta_table("commits").history() if "scorelake.operation" in h]
        return sorted((Commit(h["version"], datetime.fromtimestamp(h["timestamp"] / 1000, UTC),
                              h["scorelake.operation"], h["scorelake.detail"],
                              json.loads(h["scorelake.table_versions"])) for h in entries),
                      key=lambda c: c.version)

    def as_of(self, when: str) -> Commit:
        """The write step the warehouse stood at: a version ``scorelake log`` lists, or the last
        step at or before a timestamp (ISO 8601; a date means its end; UTC unless it says)."""
        log = self.log()
        if when.isdigit():
            found = [c for c in log if c.version == int(when)]
            if not found:
                raise KeyError(f"no warehouse version {when} (`scorelake log` lists them)")
            return found[0]
        try:
            moment = datetime.fromisoformat(when)
        except ValueError:
            raise ValueError(f"--as-of takes a version number or an ISO timestamp, not '{when}'") from None
        if len(when) == 10:  # a date: as the warehouse stood at the end of that day
            moment += timedelta(days=1) - timedelta(microseconds=1)
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        before = [c for c in log if c.committed_at <= moment]
        if not before:
            raise KeyError(f"the warehouse has no version as old as {when}")
        return before[-1]

    # ---- DuckDB views ----------------------------------------------------------------------
    def view_sql(self) -> list[tuple[str, str]]:
        """(name, statement): ``sql/macros/*.sql`` as written, then a CREATE VIEW per view file, its
        ``{{ table }}`` placeholders naming the relation ``delta_<table>`` (see ``table_views``).

        Views are ordered so that each comes after the views its body names.
        """
        statements = [(path.stem, path.read_text()) for path in sorted((SQL_DIR / "macros").glob("*.sql"))]
        bodies = {}
        for layer in SQL_LAYERS:
            for path in sorted((SQL_DIR / layer).glob("*.sql")):
                body = re.sub(r";\s*$", "", path.read_text().strip())
                bodies[path.stem] = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: f"delta_{m.group(1)}", body)
        words = {name: set(re.findall(r"\w+", body)) for name, body in bodies.items()}
        names = {name: [other for other in bodies if other != name and other in words[name]] for name in bodies}
        done: set[str] = set()

        def add(name: str, trail: tuple[str, ...] = ()) -> None:
            if name in done:
                return
            if name in trail:
                raise ValueError(f"views depend on each other in a cycle: {' -> '.join(trail + (name,))}")
            for other in names[name]:
                add(other, trail + (name,))
            done.add(name)
            statements.append((name, f"CREATE OR REPLACE VIEW {name} AS\n{bodies[name]}"))

        for name in bodies:
            add(name)
        return statements

    def view_files(self, versions: dict[str, int] | None = None) -> dict[str, list[str]]:
        """Per table, the files its view reads: its files at a version (default: the current one),
        or its schema file while it has none. (Not the schema file beside the files: files of two
        writers' layouts cost DuckDB its pruning, 5x on a rate view.)"""
        return {table: self.files(table, (versions or {}).get(table)) or [self.schema_file(table).as_posix()]
                for table in TABLES}

    @staticmethod
    def table_views(files: dict[str, list[str]]) -> list[tuple[str, str]]:
        """(name, statement): a view ``delta_<table>`` per table over ``files``: plain Parquet, so
        any DuckDB client reads the view database, no Delta reader needed."""
        return [(f"delta_{table}", f"CREATE OR REPLACE VIEW delta_{table} AS SELECT * FROM "
                                   f"read_parquet([{', '.join(sql_literal(f) for f in paths)}])")
                for table, paths in files.items()]

    def build_views(self) -> None:
        """Write the view database beside the old one and rename it into place (local only: on
        object storage each command binds the views in memory, see ``connect``).

        Only the ``delta_<table>`` views name files, so when the other views are those the old
        database holds, a copy of it gets new ``delta_<table>`` views (binding every view anew
        costs 0.1 s), and nothing is written when those name the same files either. Readers
        holding the old file keep reading it (its files stay until vacuum, 90 days on); a rename
        never waits for their locks.
        """
        if not self.is_local:
            return
        files = self.view_files()
        views, tables = self.view_sql(), self.table_views(files)
        stamps = [hashlib.sha256(repr(part).encode()).hexdigest() for part in (views, tables)]
        stamp_file = self.root / ".views.sha256"
        built = stamp_file.read_text().split() if self.db_path.exists() and stamp_file.exists() else []
        if built == stamps:
            return
        same_views = built[:1] == stamps[:1]
        tmp = self.root / f".{DB_FILE}.{secrets.token_hex(4)}.tmp"
        try:
            if same_views:
                shutil.copyfile(self.db_path, tmp)
            with duckdb.connect(str(tmp)) as con:
                for _, statement in tables if same_views else tables + views:
                    con.execute(statement)
                # the files a reader may open, and nothing else (see connect)
                con.execute(f"CREATE OR REPLACE TABLE {FILES_TABLE} AS SELECT unnest($files) AS path",
                            {"files": sorted(f for paths in files.values() for f in paths)})
                con.execute("CHECKPOINT")
            os.replace(tmp, self.db_path)
            stamp_file.write_text(" ".join(stamps))
        finally:
            tmp.unlink(missing_ok=True)
            Path(f"{tmp}.wal").unlink(missing_ok=True)

    def writer_lock(self):
        """One writer at a time on local disk; on object storage Delta's conditional commits keep
        concurrent writers from losing each other's commits, so there is no lock to take."""
        return self._local_lock() if self.is_local else nullcontext()

    @contextmanager
    def _local_lock(self) -> Iterator[None]:
        """The OS drops the lock if the holder dies, even by ``kill -9``."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise WarehouseBusy(f"{self.location} is being written by {_lock_holder(fh)}; "
                                    "try again when it finishes") from None
            fh.seek(0)
            fh.truncate()
            fh.write(f"pid {os.getpid()}")
            fh.flush()
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def query(self, con: duckdb.DuckDBPyConnection, name: str, **params: object) -> pl.DataFrame:
        """Run ``sql/queries/<name>.sql`` with named ``$parameters``."""
        # Through the Arrow C stream interface: no pyarrow import on a read command's path.
        return pl.DataFrame(con.sql((SQL_DIR / "queries" / f"{name}.sql").read_text(), params=params))

    @contextmanager
    def connect(self, as_of: str | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only connection to the views that cannot touch files outside the tables: the
        view database of a local warehouse at its current version; otherwise (object storage, or
        ``as_of`` a past version) views bound in memory to the tables at that version."""
        self.require()
        if self.is_local and as_of is None:
            con = duckdb.connect(str(self.db_path), read_only=True)
            files = [path for (path,) in con.execute(f"SELECT path FROM {FILES_TABLE}").fetchall()]
        else:
            con, files = self._bound_in_memory(as_of)
        try:
            # Exactly the tables' files, not their folders: a COPY TO could add a commit to a _delta_log.
            con.execute(f"SET allowed_paths = [{', '.join(sql_literal(f) for f in files)}]")
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
            yield con
        finally:
            con.close()

    def _arrow_dataset(self, table: str, version: int | None):
        """The table at ``version`` as an Arrow dataset, strings read as string views: the type of
        the constants DuckDB pushes into its filters (plain strings would fail to compare)."""
        import pyarrow as pa

        def as_view(dtype):
            if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
                return pa.string_view()
            if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
                return pa.list_(as_view(dtype.value_type))
            return dtype

        dt = self.delta_table(table, version)
        schema = pa.schema([f.with_type(as_view(f.type)) for f in pa.schema(dt.schema().to_arrow())])
        return dt.to_pyarrow_dataset(schema=schema)

    def _bound_in_memory(self, as_of: str | None) -> tuple[duckdb.DuckDBPyConnection, list[str]]:
        """An in-memory database with the views over each table at ``as_of``, and the local files they read."""
        from deltalake.exceptions import DeltaError

        commit = self.as_of(as_of) if as_of else None
        versions = {**commit.table_versions, "commits": commit.version} if commit else {}
        con = duckdb.connect()
        try:
            files = self.view_files(versions) if self.is_local else {}
            tables = self.table_views(files)
            for table in TABLES if not self.is_local else ():
                # DuckDB reads object storage only through an extension: hand it Arrow datasets
                con.register(f"delta_{table}", self._arrow_dataset(table, versions.get(table)))
            for _, statement in tables + self.view_sql():
                con.execute(statement)
        except (DeltaError, OSError, duckdb.IOException) as exc:
            con.close()
            if commit is None:
                raise
            raise KeyError(f"warehouse version {commit.version} is no longer readable: compaction has vacuumed "
                           f"its files (history is kept {HISTORY_DAYS} days) [{str(exc).splitlines()[0]}]") from exc
        return con, sorted(f for paths in files.values() for f in paths)
