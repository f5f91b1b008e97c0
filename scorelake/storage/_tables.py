"""The Delta tables: where they are, reading their committed rows, and the commit protocol.

``runs`` is the commit point across tables (Delta has none spanning tables): a run's rows in the
other tables carry the ``generation`` of the ingest that wrote them and count only while that is
the run's generation in ``runs``.
"""

from __future__ import annotations

import os
import random
import secrets
import socket
import time
from pathlib import Path
from typing import Callable, Iterable

import polars as pl

from scorelake.storage._faults import crash_point
from scorelake.transforms.columns import SCHEMAS, SHARED_TEXTS, empty_frame
from scorelake.transforms.errors import NotFound, TableMissing, WarehouseMissing

# delta-rs's object-store client logs, at WARN, each credential provider it tries (lines of 800
# columns, "IMDS is disabled"); the error that follows says what failed. RUST_LOG set keeps its say.
os.environ.setdefault("RUST_LOG", "error")

TABLES = tuple(SCHEMAS)
# Rows keyed by (run_id, generation): visible while their generation is the run's committed one.
RUN_TABLES = ("scenarios", "verdicts", "quarantine", "turns", "tool_calls", "judge_results", "judge_inputs", "voice",
              "tasks", "scores", "rate_counts")
# What vacuum keeps: files and log entries of the last 90 days stay readable with --as-of.
HISTORY_DAYS = 90
TABLE_CONFIG = {"delta.deletedFileRetentionDuration": f"interval {HISTORY_DAYS} days",
                "delta.logRetentionDuration": f"interval {HISTORY_DAYS} days"}
COMMIT_RETRIES = 10
STEP_KEY = "scorelake.step"  # commit metadata: which attempt of which write step made the commit
COMMITTER_KEY = "scorelake.committer"  # commit metadata: the process that made it, "host:pid"
DB_FILE = "scorelake.duckdb"  # local only: the view database (see _views)
CREATING = ".creating"  # local only: see Tables.creating_marker


def default_location() -> str:
    """``$SCORELAKE_WAREHOUSE``, else ``data/warehouse`` under the current directory."""
    return os.environ.get("SCORELAKE_WAREHOUSE") or "data/warehouse"


def sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def is_in(column: str, values: Iterable[str]) -> str:
    """A Delta predicate: ``column`` is one of ``values``."""
    return f"{column} IN ({', '.join(sql_literal(v) for v in sorted(set(values)))})"


def delta_schema(table: str):
    """The table's declared schema as Delta's (through arro3: creating the tables imports no pyarrow)."""
    from arro3.core import Table
    from deltalake import Schema

    return Schema.from_arrow(Table.from_arrow(empty_frame(table)).schema)


def conform(table: str, df: pl.DataFrame) -> pl.DataFrame:
    """``df`` in the table's declared columns and types, the Delta table's schema."""
    if list(df.schema.items()) == list(SCHEMAS[table].items()):  # what ingest builds: no copy
        return df
    return df.select(pl.col(name).cast(dtype) for name, dtype in SCHEMAS[table].items())


def arrow_rows(table: str, df: pl.DataFrame):
    """``df`` conformed, as the Arrow data written to the table: strings as ``large_string``. Polars
    hands its strings over as ``string_view``, which delta-rs would write as is, and engines that
    read Delta tables without that type (Daft, PyArrow's filters) could not read the files. Made one
    chunk first: a commit batch of sessions read apart comes in a chunk per session, and the
    conversion of list columns in ten chunks took twenty times as long as in one."""
    return conform(table, df).rechunk().to_arrow(compat_level=pl.CompatLevel.oldest())


def large_types(schema):
    """An Arrow schema with every view or plain string type as ``large_string`` (binary likewise)."""
    import pyarrow as pa

    def large(t):
        if pa.types.is_string_view(t) or pa.types.is_string(t):
            return pa.large_string()
        if pa.types.is_binary_view(t) or pa.types.is_binary(t):
            return pa.large_binary()
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t):
            return pa.large_list(pa.field(t.value_field.name, large(t.value_type), t.value_field.nullable))
        if pa.types.is_struct(t):
            return pa.struct([pa.field(f.name, large(f.type), f.nullable) for f in t])
        return t

    return pa.schema([pa.field(f.name, large(f.type), f.nullable, f.metadata) for f in schema], schema.metadata)


class Tables:
    """The Delta tables under one root: where they are, their committed rows, the commit protocol."""

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
        from deltalake.exceptions import TableNotFoundError

        try:
            if version is not None:
                return DeltaTable(self.table_uri(table), version=version)
            if table in self._loaded:
                self._loaded[table].update_incremental()
            else:
                self._loaded[table] = DeltaTable(self.table_uri(table))
        except TableNotFoundError:
            if not self.exists():
                raise self._missing() from None
            raise TableMissing(table, f"{self.location}: table '{table}' is missing (the warehouse's first write was "
                                      "cut short while it created the tables, or an older scorelake wrote it): "
                                      "any write creates it, `scorelake compact` for one") from None
        return self._loaded[table]

    @property
    def is_local(self) -> bool:
        return self.root is not None

    def table_uri(self, table: str) -> str:
        return f"{self.location}/{table}"

    # ---- layout -------------------------------------------------------------------------
    def exists(self) -> bool:
        if self.is_local:  # a first write killed before its view database still committed its tables
            return self.db_path.exists() or (self.root / "runs" / "_delta_log").is_dir()
        from deltalake import DeltaTable

        return DeltaTable.is_deltatable(self.table_uri("runs"))

    def _missing(self) -> WarehouseMissing:
        return WarehouseMissing(f"{self.location}: no scorelake warehouse here (run `scorelake ingest` first)")

    def require(self, writing: bool = False) -> None:
        """A warehouse to read (or, ``writing``, to write: a write completes an incomplete one)."""
        if not self.exists():
            raise self._missing()
        if self.is_local and not writing and self.creating_marker.exists():
            raise WarehouseMissing(f"{self.location}: the warehouse is incomplete: a write was cut short while it "
                                   "created the tables. Complete it with `scorelake compact` (or any write, such as "
                                   "`scorelake ingest RUNS_DIR`)")
        if self.legacy_tables() and not writing:  # a write converts it first
            raise WarehouseMissing(f"{self.location} is in scorelake's former table format: convert it with "
                                    "`scorelake migrate` (any write command does it too)")

    def legacy_tables(self) -> Path | None:
        """The folder of a warehouse in scorelake's former table format, if this is one."""
        folder = self.root / "tables" if self.is_local else None
        return folder if folder and (folder / "runs").is_dir() else None

    @property
    def creating_marker(self) -> Path:
        """Present while a write creates tables: a write killed then left the warehouse incomplete."""
        return self.root / CREATING

    def schema_file(self, table: str) -> Path:
        return self.root / ".schemas" / f"{table}.parquet"

    def init(self) -> None:
        """Create the tables this warehouse lacks. A table whose declared schema changed (a newer
        scorelake) is rewritten to it in one commit, new columns NULL."""
        from deltalake import DeltaTable
        from deltalake.exceptions import DeltaError

        for table in TABLES:
            uri, declared = self.table_uri(table), delta_schema(table)
            try:
                stored = self.delta_table(table).schema()
            except (TableMissing, WarehouseMissing):
                if self.is_local:  # removed once every table and its schema file is there (see require)
                    self.root.mkdir(parents=True, exist_ok=True)
                    self.creating_marker.touch()
                crash_point("create")
                try:
                    DeltaTable.create(uri, declared, configuration=TABLE_CONFIG)
                except DeltaError:  # created by another writer on object storage just now
                    if not DeltaTable.is_deltatable(uri):
                        raise
                continue
            if stored.to_json() != declared.to_json():
                rows = pl.concat([empty_frame(table), pl.read_delta(uri)], how="diagonal_relaxed")
                self.write(table, rows, mode="overwrite", schema_mode="overwrite")
        self._write_schema_files()
        if self.is_local:
            self.creating_marker.unlink(missing_ok=True)

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
        return self._rows(table, self.delta_table(table, version))

    def _rows(self, table: str, snapshot) -> pl.LazyFrame:
        """The rows of one loaded version (a DeltaTable) of the table."""
        if not self.is_local:
            return pl.scan_delta(snapshot)
        # Locally, its files as plain Parquet (scorelake writes neither deletion vectors nor
        # partitions): Polars' Delta reader would import pyarrow, 50 ms on every command.
        files = snapshot.file_uris()
        return pl.scan_parquet(files) if files else empty_frame(table).lazy()

    def _rewrite_runs(self, run_ids: list[str], rows: Callable[[pl.DataFrame], pl.DataFrame]) -> pl.DataFrame:
        """Replace the ``runs`` rows of ``run_ids`` by ``rows(current rows)`` in one predicate
        overwrite; returns the rows it replaced. The write is based on the very version the rows
        were read from, so a commit another writer landed in between is a conflict (and the whole
        step is run again on a fresh read) rather than rows this step never saw being dropped."""

        read: dict[str, pl.DataFrame] = {}

        def write(snapshot, properties) -> None:
            from deltalake import write_deltalake

            read["current"] = self._rows("runs", snapshot).filter(pl.col("run_id").is_in(run_ids)).collect()
            write_deltalake(snapshot, arrow_rows("runs", rows(read["current"])), mode="overwrite",
                            predicate=is_in("run_id", run_ids), commit_properties=properties)

        self.commit("runs", write)
        return read["current"]

    def committed_runs(self, run_ids: list[str] | None = None) -> pl.DataFrame:
        """Each run's committed row (should two writers have committed one run at once: the newer), of
        ``run_ids`` only when given (``NotFound`` naming any the warehouse does not hold)."""
        runs = (self.read("runs").collect().sort("generation", descending=True)
                .unique("run_id", keep="first", maintain_order=True).sort("run_id"))
        if run_ids:
            missing = sorted(set(run_ids) - set(runs["run_id"]))
            if missing:
                raise NotFound(f"not in the warehouse: {', '.join(missing)}")
            runs = runs.filter(pl.col("run_id").is_in(run_ids))
        return runs

    def scan(self, table: str, runs: pl.DataFrame) -> pl.LazyFrame:
        """The visible rows of ``table`` for the given committed runs. The run_id filter reaches into
        the Parquet reader (rows of other runs are never decoded); the join keeps the committed generation."""
        return self.read(table).filter(pl.col("run_id").is_in(runs["run_id"].implode())).join(
            runs.select("run_id", "generation").lazy(), on=["run_id", "generation"], how="semi")

    def judge_inputs(self, runs: pl.DataFrame) -> pl.LazyFrame:
        """``scan("judge_inputs", runs)``, each row with its system prompt (stored once per distinct
        prompt in ``judge_prompts``; rows ingested before that hold their own)."""
        prompts = self.read("judge_prompts").unique("prompt_hash", keep="any").rename({"system_prompt": "stored_prompt"})
        return (self.scan("judge_inputs", runs).join(prompts, on="prompt_hash", how="left")
                .with_columns(pl.coalesce("system_prompt", "stored_prompt").alias("system_prompt")).drop("stored_prompt"))

    def files(self, table: str, version: int | None = None) -> list[str]:
        return self.delta_table(table, version).file_uris()

    # ---- writing -------------------------------------------------------------------------
    def commit(self, table: str, write: Callable, metadata: dict[str, str] | None = None) -> None:
        """``write(snapshot, commit_properties)``: one commit to ``table`` based on ``snapshot``, its
        current version. Run again on a fresh snapshot when it failed because another writer's
        commit (on object storage, where writers do not wait for each other) touched what it read
        or took the next version past delta-rs's own retries, at random backoff so that writers
        that collided do not collide again in step. Unless it landed after all: a commit whose
        request was retried by the object store's client after its response was lost is reported
        as a conflict with itself. Each attempt is tagged, so a landed one is found in the log and
        never made twice (twice would add rows twice, or bring back rows another writer replaced)."""
        from deltalake import CommitProperties
        from deltalake.exceptions import CommitFailedError

        for attempt in range(COMMIT_RETRIES):
            snapshot = self.delta_table(table)
            base, tag = snapshot.version(), secrets.token_hex(8)  # (a write moves the snapshot on)
            crash_point("commit")
            try:
                write(snapshot, CommitProperties(custom_metadata={
                    **(metadata or {}), STEP_KEY: tag, COMMITTER_KEY: f"{socket.gethostname()}:{os.getpid()}"}))
                return
            except CommitFailedError:
                if self._landed(table, tag, base):
                    return
                if attempt == COMMIT_RETRIES - 1:
                    raise
                time.sleep(random.uniform(0, min(2.0, 0.05 * 2 ** attempt)))

    def _landed(self, table: str, tag: str, since: int) -> bool:
        """Whether a commit tagged ``tag`` is in the table's log after version ``since``."""
        latest = self.delta_table(table)
        newer = latest.version() - since
        return newer > 0 and any(entry.get(STEP_KEY) == tag for entry in latest.history(limit=newer))

    def write(self, table: str, df: pl.DataFrame, metadata: dict[str, str] | None = None, **options) -> None:
        """One commit writing ``df`` (in the table's declared columns) with ``write_deltalake``'s ``options``."""
        from deltalake import write_deltalake

        self.commit(table, lambda snapshot, properties: write_deltalake(
            snapshot, arrow_rows(table, df), commit_properties=properties, **options), metadata)

    def append(self, table: str, df: pl.DataFrame) -> None:
        if not df.is_empty():
            self.write(table, df, mode="append")

    def append_policy_rows(self, table: str, df: pl.DataFrame, policy_id: str) -> None:
        """Append ``df``, rows of one policy, but for the run generations that already hold rows
        of that policy: what a policy's scores are written by, so that no interleaving of writers
        stores them twice. Which generations hold rows is read from the very snapshot the commit is
        based on, and the commit is a predicate overwrite of exactly the (policy, generations) it
        adds, which matched no row there: a writer that added rows of them meanwhile makes it a
        conflict (a blind append would not), and the next attempt, on a fresh read, leaves them out.
        (Generations are unique to the ingest that made them: no other run shares one.)"""
        if df.is_empty():
            return

        def write(snapshot, properties) -> None:
            from deltalake import write_deltalake

            present = (self._rows(table, snapshot)
                       .filter((pl.col("policy_id") == policy_id) & pl.col("generation").is_in(df["generation"].implode()))
                       .select("generation").unique().collect())
            new = df.join(present, on="generation", how="anti")
            if not new.is_empty():
                predicate = f"policy_id = {sql_literal(policy_id)} AND {is_in('generation', new['generation'])}"
                write_deltalake(snapshot, arrow_rows(table, new), mode="overwrite", predicate=predicate,
                                commit_properties=properties)

        self.commit(table, write)

    def replace(self, table: str, df: pl.DataFrame) -> None:
        """The whole table replaced by ``df``, in one commit."""
        self.write(table, df, mode="overwrite")

    def delete(self, table: str, predicate: str) -> None:
        """The rows ``predicate`` matches removed, in one commit: a predicate overwrite with no rows.
        (delta-rs's own delete rewrites the files it keeps rows of with ``string_view`` strings.)"""
        self.write(table, empty_frame(table), mode="overwrite", predicate=predicate)

    def rewrite(self, table: str) -> None:
        """The table's current rows rewritten into as few files as delta-rs makes, in one commit,
        streamed (never whole in memory), every string a ``large_string``: compaction, which also
        makes files an older scorelake wrote with ``string_view`` readable by every engine."""
        import pyarrow as pa

        def write(snapshot, properties) -> None:
            from deltalake import write_deltalake

            scanner = snapshot.to_pyarrow_dataset().scanner(batch_size=65_536)
            schema = large_types(scanner.projected_schema)
            batches = (batch.cast(schema) for batch in scanner.to_batches())
            write_deltalake(snapshot, pa.RecordBatchReader.from_batches(schema, batches), mode="overwrite",
                            commit_properties=properties)

        self.commit(table, write)

    def set_run_group(self, run_ids: list[str], group: str) -> None:
        """The runs' ``run_group`` changed in place: one predicate overwrite of their ``runs`` rows."""

        self._rewrite_runs(run_ids, lambda current: current.with_columns(run_group=pl.lit(group)))

    def commit_runs(self, runs: pl.DataFrame, tables: dict[str, pl.DataFrame]) -> None:
        """Commit a batch of ingested runs: their rows of ``RUN_TABLES`` (of the generations in
        ``runs``), then their ``runs`` rows, then the removal of the rows they replace. The shared
        texts their rows name (judge prompts, task instructions: ``SHARED_TEXTS``) go first, those
        not stored yet."""
        for table, key in SHARED_TEXTS.items():
            if table in tables:
                stored = self.read(table).select(key).collect()
                self.append(table, tables[table].unique(key, keep="first").join(stored, on=key, how="anti"))
        for table in RUN_TABLES:
            self.append(table, tables[table])
        run_ids = runs["run_id"].to_list()

        replaced = self._rewrite_runs(run_ids, lambda _: runs)
        dead = set(replaced["generation"]) - set(runs["generation"])
        for table in RUN_TABLES if dead else ():
            self.delete(table, is_in("generation", dead))
