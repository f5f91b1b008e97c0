"""One writer at a time on local disk: an OS file lock the holder's death releases."""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager, nullcontext
from typing import Iterator

from scorelake.transforms.errors import WarehouseBusy


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


class Locking:
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
