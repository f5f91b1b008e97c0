"""The DuckDB views over the tables (``sql/``, package data): a view database beside a local
warehouse's tables, or views bound in memory (object storage, a past version)."""

from __future__ import annotations

import hashlib
import math
import os
import re
import secrets
import shutil
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib.resources import files as package_files
from pathlib import Path
from typing import Iterator

import duckdb
import polars as pl

from scorelake.storage._faults import crash_point
from scorelake.storage._fragments import render
from scorelake.storage._history import CommitLog
from scorelake.storage._tables import DB_FILE, HISTORY_DAYS, TABLES, Tables, sql_literal
from scorelake.transforms.columns import empty_frame
from scorelake.transforms.errors import InvalidArgument, NotFound, QueryLimitHit, TableMissing

SQL_LAYERS = ("staging", "intermediate", "marts")  # folders of view bodies, one view per file
FILES_TABLE = "scorelake_files"  # in the view database: the files its views read


_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|PB|KIB|MIB|GIB|TIB|PIB)?\s*", re.I)
_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30,
          "TIB": 2**40, "PB": 10**15,
          "PIB": 2**50}


def _size(value: str, said: str, at_most: int | None = None) -> str:
    """A DuckDB size ("4GB", "512MiB") that is positive (and at most ``at_most`` bytes), or
    ``InvalidArgument`` naming the value and where it came from (``said``)."""
    found = _SIZE.fullmatch(str(value))
    if not found:
        raise InvalidArgument(f"{said} '{value}': a size such as 4GB or 512MiB")
    size = float(found[1]) * _UNITS[(found[2] or "B").upper()]
    if size <= 0:
        raise InvalidArgument(f"{said} '{value}': must be more than nothing")
    if at_most is not None and size > at_most:
        raise InvalidArgument(f"{said} '{value}': more than this machine's memory ({at_most / 10**9:.1f} GB)")
    return f"{found[1]}{(found[2] or 'B').upper()}"


def _seconds(value: object, said: str) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{said} '{value}': a number of seconds") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise InvalidArgument(f"{said} '{value}': a positive, finite number of seconds")
    return seconds


def _machine_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


@dataclass(frozen=True)
class QueryLimits:
    """What one connection's queries may take: DuckDB's memory limit and spill size, and a time
    limit in seconds. ``QueryLimits.of`` takes them from the options, else ``$SCORELAKE_SQL_MEMORY``,
    ``$SCORELAKE_SQL_SPILL`` and ``$SCORELAKE_SQL_TIMEOUT``, else these defaults, and refuses a
    value that would switch a limit off."""

    memory: str = "4GB"
    spill: str = "10GB"
    timeout_s: float = 300.0

    @classmethod
    def of(cls, memory: str | None = None, timeout: float | None = None) -> QueryLimits:
        env = os.environ
        return cls(
            _size(memory, "--memory-limit", _machine_memory()) if memory is not None else
            _size(env["SCORELAKE_SQL_MEMORY"], "$SCORELAKE_SQL_MEMORY", _machine_memory())
            if env.get("SCORELAKE_SQL_MEMORY") else cls.memory,
            _size(env["SCORELAKE_SQL_SPILL"], "$SCORELAKE_SQL_SPILL") if env.get("SCORELAKE_SQL_SPILL") else cls.spill,
            _seconds(timeout, "--timeout") if timeout is not None else
            _seconds(env["SCORELAKE_SQL_TIMEOUT"], "$SCORELAKE_SQL_TIMEOUT") if env.get("SCORELAKE_SQL_TIMEOUT")
            else cls.timeout_s)


def fetch(con: duckdb.DuckDBPyConnection, query: str, params: object, timeout_s: float | None) -> pl.DataFrame | None:
    """``query``'s rows as a DataFrame (through the Arrow C stream interface: no pyarrow import on a
    read command's path; None for a statement that returns none), interrupted past ``timeout_s``."""
    timer = threading.Timer(timeout_s, con.interrupt) if timeout_s else None
    if timer:
        timer.daemon = True
        timer.start()
    try:
        relation = con.sql(query, params=params)
        return pl.DataFrame(relation) if relation is not None else None
    except duckdb.InterruptException:
        raise QueryLimitHit(f"the query ran past its time limit of {timeout_s:g} s (--timeout, or "
                            "$SCORELAKE_SQL_TIMEOUT)") from None
    except duckdb.OutOfMemoryException as exc:
        raise QueryLimitHit(f"the query needs more memory than its limit ({str(exc).splitlines()[0]}); "
                            "raise --memory-limit (or $SCORELAKE_SQL_MEMORY)") from None
    finally:
        if timer:
            timer.cancel()


def _with_declared_columns(con: duckdb.DuckDBPyConnection, table: str, source: str) -> str:
    """A query of ``source`` with every column ``table`` declares: a table an older scorelake wrote
    (or a past version of one) lacks the newer columns, NULL here until a write command rewrites the
    table to its declared schema, so the views bind to it all the same."""
    stored = {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    declared = empty_frame(table).to_arrow()
    con.register("declared_columns", declared)
    try:
        types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE declared_columns)").fetchall())
    finally:
        con.unregister("declared_columns")
    fills = "".join(f", NULL::{types[name]} AS {name}" for name in declared.column_names if name not in stored)
    return f"SELECT *{fills} FROM {source}"


def _bound_files(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The files the views of a view database read, as ``build`` listed them."""
    return [path for (path,) in con.execute(f"SELECT path FROM {FILES_TABLE}").fetchall()]


def _stamp(statements: list[tuple[str, str]]) -> str:
    return hashlib.sha256(repr(statements).encode()).hexdigest()


@cache
def sql_text(*parts: str) -> str:
    """A file of the ``scorelake.sql`` package, e.g. ``sql_text("queries", "run.sql")``, its
    ``{{ fragments }}`` filled (``_fragments.py``)."""
    return render(package_files("scorelake.sql").joinpath(*parts).read_text(encoding="utf-8"))


@cache
def sql_files(folder: str) -> tuple[tuple[str, str], ...]:
    """(stem, text) of every ``.sql`` file in a folder of ``scorelake.sql``, by name."""
    found = [f for f in package_files("scorelake.sql").joinpath(folder).iterdir() if f.name.endswith(".sql")]
    return tuple((f.name.removesuffix(".sql"), render(f.read_text(encoding="utf-8")))
                 for f in sorted(found, key=lambda f: f.name))


def view_dependencies(text: str) -> list[str]:
    """The views a view file says it reads: its first line's ``-- depends on: a, b`` (none without)."""
    first = text.lstrip().split("\n", 1)[0]
    found = re.fullmatch(r"--\s*depends on:\s*(.*)", first.strip())
    return [name.strip() for name in found.group(1).split(",") if name.strip()] if found else []


class Views:
    """The DuckDB views over the tables: the view database of a local warehouse, or views bound in
    memory (object storage, ``--as-of``), and the connections that read them under ``limits``."""

    def __init__(self, tables: Tables, log: CommitLog, limits: QueryLimits):
        self.tables, self.log, self.limits = tables, log, limits

    def statements(self) -> list[tuple[str, str]]:
        """(name, statement): ``sql/macros/*.sql`` as written, then a CREATE VIEW per view file, its
        ``{{ table }}`` placeholders naming the relation ``delta_<table>`` (see ``table_views``).

        Views are ordered so that each comes after the views it depends on, as its file's first line
        names them (``-- depends on: a, b``; ``tests/test_registry.py`` holds that line to what the
        body reads, from DuckDB's parse of it).
        """
        statements = list(sql_files("macros"))
        bodies = {}
        for layer in SQL_LAYERS:
            for stem, text in sql_files(layer):
                body = re.sub(r";\s*$", "", text.strip())
                bodies[stem] = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: f"delta_{m.group(1)}", body)
        names = {name: view_dependencies(body) for name, body in bodies.items()}
        for name, needed in names.items():
            if unknown := [other for other in needed if other not in bodies]:
                raise ValueError(f"sql view {name} depends on {', '.join(unknown)}: no such view")
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

    def files(self, versions: dict[str, int] | None = None) -> dict[str, list[str]]:
        """Per table, the files its view reads: its files at a version (default: the current one),
        or its schema file while it has none. (Not the schema file beside the files: files of two
        writers' layouts cost DuckDB its pruning, 5x on a rate view.)"""
        found = {}
        for table in TABLES:
            try:
                listed = self.tables.files(table, (versions or {}).get(table))
            except TableMissing:  # declared since an older scorelake wrote the warehouse: see _bound_in_memory
                continue
            schema = self.tables.schema_file(table)
            if listed or schema.exists():  # (no schema file yet: a first write cut short before it wrote them)
                found[table] = listed or [schema.as_posix()]
        return found

    @staticmethod
    def table_views(files: dict[str, list[str]]) -> list[tuple[str, str]]:
        """(name, statement): a view ``delta_<table>`` per table over ``files``: plain Parquet, so
        any DuckDB client reads the view database, no Delta reader needed."""
        return [(f"delta_{table}", f"CREATE OR REPLACE VIEW delta_{table} AS SELECT * FROM "
                                   f"read_parquet([{', '.join(sql_literal(f) for f in paths)}])")
                for table, paths in files.items()]

    def build(self) -> None:
        """Write the view database beside the old one and rename it into place (local only: on
        object storage each command binds the views in memory, see ``connect``).

        Only the ``delta_<table>`` views name files, so when the other views are those the old
        database holds, a copy of it gets new ``delta_<table>`` views (binding every view anew
        costs 0.1 s), and nothing is written when those name the same files either. Readers
        holding the old file keep reading it (its files stay until vacuum, 90 days on); a rename
        never waits for their locks.
        """
        if not self.tables.is_local:
            return
        files = self.files()
        views, tables = self.statements(), self.table_views(files)
        stamps = [_stamp(views), _stamp(tables)]
        built = self._built_stamps()
        if built == stamps:
            return
        same_views = built[:1] == stamps[:1]
        tmp = self.tables.root / f".{DB_FILE}.{secrets.token_hex(4)}.tmp"
        try:
            if same_views:
                shutil.copyfile(self.tables.db_path, tmp)
            with duckdb.connect(str(tmp)) as con:
                for _, statement in tables if same_views else tables + views:
                    con.execute(statement)
                # the files a reader may open, and nothing else (see connect)
                con.execute(f"CREATE OR REPLACE TABLE {FILES_TABLE} AS SELECT unnest($files) AS path",
                            {"files": sorted(f for paths in files.values() for f in paths)})
                con.execute("CHECKPOINT")
            crash_point("views")
            os.replace(tmp, self.tables.db_path)
            self._stamp_file().write_text(" ".join(stamps))
        finally:
            tmp.unlink(missing_ok=True)
            Path(f"{tmp}.wal").unlink(missing_ok=True)

    def query(self, con: duckdb.DuckDBPyConnection, name: str, parts: dict[str, str] | None = None,
              **params: object) -> pl.DataFrame:
        """Run ``sql/queries/<name>.sql`` with named ``$parameters``, each ``{{ part }}`` of it replaced
        by the text ``parts`` gives."""
        text = sql_text("queries", f"{name}.sql")
        for part, replacement in (parts or {}).items():
            text = text.replace(f"{{{{ {part} }}}}", replacement)
        return fetch(con, text, params, self.limits.timeout_s)

    @contextmanager
    def connect(self, as_of: str | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only connection to the views that cannot touch files outside the tables: the
        view database of a local warehouse at its current version; otherwise (object storage, or
        ``as_of`` a past version) views bound in memory to the tables at that version."""
        self.tables.require()
        con = None
        if self.tables.is_local and as_of is None and self.tables.db_path.exists():
            con = duckdb.connect(str(self.tables.db_path), read_only=True)
            files = _bound_files(con)
            # a copied or moved warehouse (its view database names the old place), or views an older
            # scorelake wrote: bound anew in memory until the next write rebuilds the database
            if self._outside(files) or not self._views_current():
                con.close()
                con = None
        if con is None:
            con, files = self._bound_in_memory(as_of)
        limits = self.limits
        spill = tempfile.mkdtemp(prefix="scorelake-spill-")  # never beside the tables
        try:
            con.execute(f"SET memory_limit = {sql_literal(limits.memory)}")
            con.execute(f"SET temp_directory = {sql_literal(spill)}")
            con.execute(f"SET max_temp_directory_size = {sql_literal(limits.spill)}")
            # Exactly the tables' files, not their folders: a COPY TO could add a commit to a _delta_log.
            con.execute(f"SET allowed_paths = [{', '.join(sql_literal(f) for f in files)}]")
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
            yield con
        finally:
            con.close()
            shutil.rmtree(spill, ignore_errors=True)

    def _stamp_file(self) -> Path:
        return self.tables.root / ".views.sha256"

    def _built_stamps(self) -> list[str]:
        """The stamps of the view database's views and table bindings, as ``build`` wrote them."""
        stamp_file = self._stamp_file()
        return stamp_file.read_text().split() if self.tables.db_path.exists() and stamp_file.exists() else []

    def _views_current(self) -> bool:
        """Whether the view database holds the views of this scorelake (not an older one's SQL)."""
        return self._built_stamps()[:1] == [_stamp(self.statements())]

    def _outside(self, files: list[str]) -> list[str]:
        """The files of ``files`` that are not under this warehouse's root."""
        return [f for f in files if not Path(f).is_relative_to(self.tables.root)]

    def moved(self) -> str | None:
        """Where a local view database reads files outside this warehouse (it was copied or moved:
        reads bind the views in memory meanwhile, the next write rebuilds it), in words; else None."""
        if not self.tables.is_local or not self.tables.db_path.exists():
            return None
        with duckdb.connect(str(self.tables.db_path), read_only=True) as con:
            outside = self._outside(_bound_files(con))
        if not outside:
            return None
        return (f"the warehouse was moved or copied here: its view database {self.tables.db_path} names "
                f"{len(outside)} files of where it was written (e.g. {outside[0]}); reads bind the views to "
                "this warehouse's own files meanwhile, and the next write (or `scorelake compact`) rebuilds it")

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

        dt = self.tables.delta_table(table, version)
        schema = pa.schema([f.with_type(as_view(f.type)) for f in pa.schema(dt.schema().to_arrow())])
        return dt.to_pyarrow_dataset(schema=schema)

    def _bound_in_memory(self, as_of: str | None) -> tuple[duckdb.DuckDBPyConnection, list[str]]:
        """An in-memory database with the views over each table at ``as_of``, and the local files they read."""
        from deltalake.exceptions import DeltaError

        commit = self.log.as_of(as_of) if as_of else None
        versions = {**commit.table_versions, "commits": commit.version} if commit else {}
        con = duckdb.connect()
        try:
            files: dict[str, list[str]] = {}
            if self.tables.is_local:
                files = self.files(versions)
                for _, statement in self.table_views(files):
                    con.execute(statement.replace("VIEW delta_", "VIEW stored_", 1))
                missing = [table for table in TABLES if table not in files]
            else:  # DuckDB reads object storage only through an extension: hand it Arrow datasets
                missing = []
                for table in TABLES:
                    try:
                        con.register(f"stored_{table}", self._arrow_dataset(table, versions.get(table)))
                    except TableMissing:
                        missing.append(table)
            for table in missing:  # declared by this scorelake, not yet created in a warehouse an older
                # one wrote (its next write creates it): empty until then
                con.register(f"stored_{table}", empty_frame(table).to_arrow())
            for table in TABLES:
                con.execute(f"CREATE VIEW delta_{table} AS {_with_declared_columns(con, table, f'stored_{table}')}")
            for _, statement in self.statements():
                con.execute(statement)
        except (DeltaError, OSError, duckdb.IOException) as exc:
            con.close()
            if commit is None:
                raise
            raise NotFound(f"warehouse version {commit.version} is no longer readable: compaction has vacuumed "
                           f"its files (history is kept {HISTORY_DAYS} days) [{str(exc).splitlines()[0]}]") from exc
        return con, sorted(f for paths in files.values() for f in paths)
