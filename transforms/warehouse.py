"""The warehouse on disk: Parquet tables, their commit protocol, and the DuckDB view database.

Layout under the warehouse root::

    tables/runs/<run_id>/run.parquet             one row; its ``generation`` is the commit point
    tables/<table>/<run_id>/<generation>.parquet scenarios, verdicts, quarantine
    tables/scores/<run_id>/<generation>__<policy_id>.parquet   scores written at ingest
    tables/scores/_rescore/<policy_id>__<batch>.parquet        scores written by a re-score
    tables/rate_counts/...                       as scores: their sums per domain (transforms/rollup.py)
    tables/_snapshots/<table>.parquet            compacted rows of runs and of the five tables above
    tables/policies/<policy_id>.parquet
    tables/<table>/_schema/empty.parquet         the declared schema, so empty tables still have views
    scorelake.duckdb                             views only (sql/), over the Parquet files

A run's rows are written first under a fresh generation; replacing its one-row ``run.parquet`` (an
atomic rename) then switches readers to them. The staging views keep, per run, the newest
generation and join every table to it on (run_id, generation), so a crash at any moment leaves
either the old or the new state visible, never a mix; files of dead generations are removed
afterwards. Compaction folds the visible rows of the many small per-run files into one snapshot
file per table; a per-run row whose key the snapshot already holds is not shown twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import secrets
import time
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Iterator

import duckdb
import polars as pl

from transforms.columns import SCHEMAS, empty_frame

REPO_ROOT = Path(__file__).resolve().parent.parent
SQL_DIR = REPO_ROOT / "sql"
SQL_LAYERS = ("staging", "intermediate", "marts")  # folders of view bodies, one view per file
DEFAULT_WAREHOUSE = REPO_ROOT / "data" / "warehouse"
DB_FILE = "scorelake.duckdb"
SCORED_TABLES = ("scores", "rate_counts")  # one set of rows per policy
PER_RUN_TABLES = ("scenarios", "verdicts", "quarantine", *SCORED_TABLES)
COMPACTED_TABLES = ("runs", *PER_RUN_TABLES)
# Rows of a table are the same rows when these match.
ROW_KEYS = {table: ("run_id", "generation") for table in COMPACTED_TABLES} | {
    table: ("run_id", "generation", "policy_id") for table in SCORED_TABLES}
COMPACT_AFTER_FILES = 256  # per-run files in the warehouse before an ingest or re-score compacts


def default_warehouse() -> Path:
    return Path(os.environ.get("SCORELAKE_WAREHOUSE") or DEFAULT_WAREHOUSE)


def new_generation() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f") + secrets.token_hex(3)


def write_parquet_atomic(df: pl.DataFrame, path: Path) -> None:
    """Write to a temporary sibling, fsync, then rename over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    with open(tmp, "wb") as fh:
        df.write_parquet(fh, compression="zstd")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


# A compaction reads a snapshot and writes its row groups in pieces of about PIECE_BYTES in
# memory: what it holds at once stays bounded however large the store is.
PIECE_BYTES = 16 << 20
MIN_PIECE_ROWS = 1024


def _committed(rows: pl.LazyFrame, runs: pl.DataFrame) -> pl.LazyFrame:
    """The rows of ``runs``' committed generations. The run_id filter reaches into the Parquet
    reader (rows of other runs are never decoded); the join then keeps the committed generation."""
    return rows.filter(pl.col("run_id").is_in(runs["run_id"].implode())).join(
        runs.select("run_id", "generation").lazy(), on=["run_id", "generation"], how="semi")


def _regrouped(parts: Iterator[pl.DataFrame], size: int) -> Iterator[pl.DataFrame]:
    """``parts`` gathered into frames of at least ``size`` bytes (the last may be smaller)."""
    pending: list[pl.DataFrame] = []
    held = 0
    for part in parts:
        pending.append(part)
        held += part.estimated_size()
        if held >= size:
            yield pl.concat(pending)
            pending, held = [], 0
    if pending:
        yield pl.concat(pending)


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


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class Warehouse:
    def __init__(self, root: Path | str | None = None):
        self.root = Path(root) if root is not None else default_warehouse()
        self.tables = self.root / "tables"
        self.db_path = self.root / DB_FILE

    # ---- layout -------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.db_path.exists()

    def require(self) -> None:
        if not self.exists():
            raise FileNotFoundError(f"{self.root}: no scorelake warehouse here (run `scorelake ingest` first)")

    def init(self) -> list[str]:
        """Write each table's schema file (and empty snapshot); returns the tables new to this warehouse.

        When a table's declared schema changed (a newer scorelake), its files are rewritten to it
        first, new columns as NULL: the views read every file of a table with one schema, which keeps
        binding them cheap however many there are."""
        created = []
        for table in SCHEMAS:
            schema_file = self.tables / table / "_schema" / "empty.parquet"
            if not schema_file.exists():
                created.append(table)
            if not schema_file.exists() or pl.read_parquet_schema(schema_file) != empty_frame(table).schema:
                if schema_file.exists():
                    self._migrate(table)
                write_parquet_atomic(empty_frame(table), schema_file)
            if table in COMPACTED_TABLES and not self.snapshot_file(table).exists():
                write_parquet_atomic(empty_frame(table), self.snapshot_file(table))
        return created

    def _migrate(self, table: str) -> None:
        target = empty_frame(table)
        paths = [*(self.tables / table).rglob("*.parquet"), self.snapshot_file(table)]
        for path in paths:
            if path.exists() and path.parent.name != "_schema":
                old = pl.read_parquet(path)
                write_parquet_atomic(pl.concat([target, old], how="diagonal_relaxed").select(target.columns), path)

    def sweep(self) -> None:
        """Remove temporary files a killed writer left behind (call with the writer lock held)."""
        for tmp in self.tables.rglob(".*.tmp"):
            tmp.unlink(missing_ok=True)

    def run_file(self, run_id: str) -> Path:
        return self.tables / "runs" / run_id / "run.parquet"

    def snapshot_file(self, table: str) -> Path:
        return self.tables / "_snapshots" / f"{table}.parquet"

    def delta_files(self, table: str) -> list[Path]:
        """The table's files not yet compacted (per run, or per re-score batch)."""
        return [p for p in (self.tables / table).glob("*/*.parquet") if p.parent.name != "_schema"]

    def rescore_file(self, table: str, policy_id: str) -> Path:
        return self.tables / table / "_rescore" / f"{policy_id}__{new_generation()}.parquet"

    def table_file(self, table: str, run_id: str, generation: str) -> Path:
        return self.tables / table / run_id / f"{generation}.parquet"

    def scored_file(self, table: str, run_id: str, generation: str, policy_id: str) -> Path:
        return self.tables / table / run_id / f"{generation}__{policy_id}.parquet"

    def policy_file(self, policy_id: str) -> Path:
        return self.tables / "policies" / f"{policy_id}.parquet"

    # ---- reading --------------------------------------------------------------------------
    def committed_runs(self) -> pl.DataFrame:
        """Each run's committed row: the newest generation among the snapshot and the per-run files."""
        files = [f for f in (self.snapshot_file("runs"), *self.delta_files("runs")) if f.exists()]
        if not files:
            return empty_frame("runs")
        return (pl.read_parquet(files).sort("generation", descending=True)
                .unique("run_id", keep="first", maintain_order=True).sort("run_id"))

    def scan(self, table: str, runs: pl.DataFrame) -> pl.LazyFrame:
        """The visible rows of a table for the given committed runs: compacted rows, then per-run
        rows whose key the snapshot does not hold (the same rows, if a compaction was cut short)."""
        row_key = list(ROW_KEYS[table])
        snapshot = self.snapshot_file(table)
        compacted = _committed(pl.scan_parquet(snapshot) if snapshot.exists() else empty_frame(table).lazy(), runs)
        deltas = self.delta_files(table)
        if not deltas:
            return compacted
        recent = _committed(pl.scan_parquet(deltas), runs).join(
            compacted.select(row_key).unique(), on=row_key, how="anti")
        return pl.concat([compacted, recent])

    def _visible_parts(self, table: str, runs: pl.DataFrame) -> Iterator[pl.DataFrame]:
        """``scan``'s rows, a bounded piece at a time: slices of the snapshot, then each per-run file."""
        row_key = list(ROW_KEYS[table])
        snapshot = self.snapshot_file(table)
        keys = [empty_frame(table).select(row_key)]  # of the compacted rows, gathered on the way
        if snapshot.exists():
            total, offset, rows = pl.scan_parquet(snapshot).select(pl.len()).collect().item(), 0, MIN_PIECE_ROWS
            while offset < total:
                piece = pl.scan_parquet(snapshot).slice(offset, rows).collect()
                if piece.is_empty():  # shorter than its footer said: nothing more to read
                    break
                offset += piece.height
                part = _committed(piece.lazy(), runs).collect()
                keys.append(part.select(row_key).unique())
                yield part
                # the next piece sized by what this one weighed in memory
                rows = max(MIN_PIECE_ROWS, PIECE_BYTES * piece.height // max(piece.estimated_size(), 1))
        compacted_keys = pl.concat(keys).unique()
        for path in self.delta_files(table):
            yield _committed(pl.scan_parquet(path), runs).join(
                compacted_keys.lazy(), on=row_key, how="anti").collect()

    def compact(self) -> None:
        """Fold every table's visible rows into its snapshot and remove the per-run files
        (call with the writer lock held). Each table stays exact at every moment: a snapshot
        replaces the old one by rename, and rows present in both are shown once. Rows stream
        through in pieces, so memory stays bounded however large the store is."""
        import pyarrow.parquet as pq  # compaction only: kept off every command's start-up

        runs = self.committed_runs()
        for table in COMPACTED_TABLES:
            deltas = self.delta_files(table)
            parts = iter([runs]) if table == "runs" else self._visible_parts(table, runs)
            tmp = self.snapshot_file(table).with_name(f".{table}.{secrets.token_hex(4)}.tmp")
            with open(tmp, "wb") as fh:
                with pq.ParquetWriter(fh, empty_frame(table).to_arrow().schema, compression="zstd") as writer:
                    for row_group in _regrouped(parts, PIECE_BYTES):
                        writer.write_table(row_group.to_arrow())
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.snapshot_file(table))
            for path in deltas:
                path.unlink(missing_ok=True)
            for folder in (self.tables / table).iterdir():
                with contextlib.suppress(OSError):  # removes only empty folders: each slows the views' globs
                    folder.rmdir()

    def compact_if_fragmented(self) -> bool:
        if sum(len(self.delta_files(t)) for t in COMPACTED_TABLES) <= COMPACT_AFTER_FILES:
            return False
        self.compact()
        return True

    # ---- writing -------------------------------------------------------------------------
    def write_run_tables(self, run_id: str, generation: str, tables: dict[str, pl.DataFrame]) -> None:
        for table, df in tables.items():
            write_parquet_atomic(df, self.table_file(table, run_id, generation))

    def write_scores(self, run_id: str, generation: str, policy_id: str, scored: dict[str, pl.DataFrame]) -> None:
        for table, df in scored.items():
            write_parquet_atomic(df, self.scored_file(table, run_id, generation, policy_id))

    def commit_run(self, run_row: pl.DataFrame) -> None:
        """The atomic switch: readers see the new generation from here on."""
        run_id = run_row["run_id"][0]
        write_parquet_atomic(run_row, self.run_file(run_id))
        self.drop_dead_generations(run_id, run_row["generation"][0])

    def drop_dead_generations(self, run_id: str, live: str) -> None:
        """Per-run files of older generations; compacted or re-score rows of them go at the next compaction."""
        for table in PER_RUN_TABLES:
            folder = self.tables / table / run_id
            for path in folder.glob("*.parquet") if folder.exists() else ():
                if path.stem.split("__")[0] != live:
                    path.unlink(missing_ok=True)

    # ---- DuckDB views ----------------------------------------------------------------------
    def view_sql(self) -> list[tuple[str, str]]:
        """(name, statement): ``sql/macros/*.sql`` as written, then a CREATE VIEW per view file.

        Views are ordered so that each comes after the views its body names.
        """
        statements = [(path.stem, path.read_text()) for path in sorted((SQL_DIR / "macros").glob("*.sql"))]
        tables_path = self.tables.resolve().as_posix()
        bodies = {}
        for layer in SQL_LAYERS:
            for path in sorted((SQL_DIR / layer).glob("*.sql")):
                body = path.read_text().replace("{{ tables }}", tables_path)
                bodies[path.stem] = re.sub(r";\s*$", "", body.strip())
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

    def build_views(self) -> None:
        """(Re)create the view database beside the old one and rename it into place.

        The views read the Parquet globs at query time, so new data needs no rebuild: it is skipped
        when the statements (SQL, table schemas, warehouse path) are those the database was built from.
        Readers holding the old file keep reading it; a rename never waits for their locks.
        """
        statements = self.view_sql()
        stamp = hashlib.sha256(repr((statements, SCHEMAS)).encode()).hexdigest()
        stamp_file = self.root / ".views.sha256"
        if self.db_path.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
            return
        self.init()  # the views bind to every table's files
        tmp = self.root / f".{DB_FILE}.{secrets.token_hex(4)}.tmp"
        try:
            with duckdb.connect(str(tmp)) as con:
                for _, statement in statements:
                    con.execute(statement)
                con.execute("CHECKPOINT")
            os.replace(tmp, self.db_path)
            stamp_file.write_text(stamp)
        finally:
            tmp.unlink(missing_ok=True)
            Path(f"{tmp}.wal").unlink(missing_ok=True)

    @contextmanager
    def writer_lock(self) -> Iterator[None]:
        """One writer at a time; the OS drops the lock if the holder dies, even by ``kill -9``."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise WarehouseBusy(f"{self.root} is being written by {_lock_holder(fh)}; "
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
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only connection that cannot touch files outside the warehouse."""
        self.require()
        con = duckdb.connect(str(self.db_path), read_only=True)
        try:
            con.execute(f"SET allowed_directories = [{_sql_literal(self.tables.resolve().as_posix() + '/')}]")
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
            yield con
        finally:
            con.close()
