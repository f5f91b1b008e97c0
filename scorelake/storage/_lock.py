"""One writer at a time on local disk: an OS file lock the holder's death releases."""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager, nullcontext
from typing import Iterator

from scorelake.storage._tables import CREATING, DB_FILE, TABLES, Tables
from scorelake.transforms.errors import InvalidArgument, WarehouseBusy

# What a warehouse folder holds (a first write cut short leaves some of it).
WAREHOUSE_ENTRIES = {*TABLES, DB_FILE, CREATING, ".lock", ".schemas", ".views.sha256", ".journal"}


def _ours(name: str) -> bool:
    """A name scorelake writes in a warehouse folder, its temporary files included (a view database
    being written, ``.<DB_FILE>.<id>.tmp`` and its ``.wal``; a schema file or journal in flight)."""
    return name in WAREHOUSE_ENTRIES or name.endswith(".tmp") or name.startswith(f".{DB_FILE}.")


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


class WriterLock:
    """One writer at a time on a local warehouse."""

    def __init__(self, tables: Tables):
        self.tables = tables

    def hold(self, wait_s: float = 0.0):
        """One writer at a time on local disk (waiting up to ``wait_s`` for another to finish); on
        object storage Delta's conditional commits keep concurrent writers from losing each other's
        commits, so there is no lock to take."""
        if not self.tables.is_local:
            return nullcontext()
        self.check_location()
        return self._local_lock(wait_s)

    def check_location(self) -> None:
        """A local warehouse is written into a new or empty folder, or one that holds a warehouse:
        never into a file, nor into a folder of other things (a home folder, ``/``)."""
        if self.tables.root.exists() and not self.tables.root.is_dir():
            raise InvalidArgument(f"{self.tables.location} is a file, not a warehouse folder")
        if self.tables.root.is_dir() and not self.tables.exists() and self.tables.legacy_tables() is None:
            foreign = sorted(p.name for p in self.tables.root.iterdir() if not _ours(p.name))
            if foreign:
                raise InvalidArgument(f"{self.tables.location} holds other files ({', '.join(foreign[:3])}"
                                      f"{', ...' if len(foreign) > 3 else ''}) and no scorelake warehouse: "
                                      "give a new or empty folder")

    @contextmanager
    def _local_lock(self, wait_s: float) -> Iterator[None]:
        """The OS drops the lock if the holder dies, even by ``kill -9``."""
        self.tables.root.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + wait_s
        with open(self.tables.root / ".lock", "a+") as fh:
            while True:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise WarehouseBusy(f"{self.tables.location} is being written by {_lock_holder(fh)}; "
                                            "try again when it finishes") from None
                    time.sleep(0.2)
            fh.seek(0)
            fh.truncate()
            fh.write(f"pid {os.getpid()}")
            fh.flush()
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
