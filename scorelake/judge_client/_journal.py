"""Judgements on local disk the moment they arrive, until they are committed to the warehouse.

A rejudge writes each answer as a line of its journal (one file per batch, locked by its writer)
and commits the batch to Delta at its end. A rejudge killed mid-batch (even by ``kill -9``) thus
loses only the calls in flight: the next one finds the journal unlocked and commits its lines
first. A line cut short by the kill is ignored.
"""

from __future__ import annotations

import fcntl
import hashlib
import math
import os
import secrets
from datetime import datetime
from pathlib import Path

import orjson

SPECIAL_FLOATS = "_special_floats"  # the keys of a journal row whose float is NaN or infinite, written as text


def journal_folder(root: Path | None, location: str) -> Path:
    """Beside a local warehouse; for one on object storage, in the user's cache folder."""
    if root is not None:
        return root / ".journal"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser()
    return cache / "scorelake" / "journal" / hashlib.sha256(location.encode()).hexdigest()[:16]


class Journal:
    """An append-only file of judgement rows, locked while its writer lives."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"judgements-{os.getpid()}-{secrets.token_hex(4)}.jsonl"
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def write(self, row: dict) -> None:
        # JSON has no NaN or Infinity (orjson writes null): a score that is one is kept as its name
        special = {k: repr(v) for k, v in row.items() if isinstance(v, float) and not math.isfinite(v)}
        os.write(self._fd, orjson.dumps({**row, **special, SPECIAL_FLOATS: sorted(special)}) + b"\n")

    def discard(self) -> None:
        """After its rows are committed."""
        self.path.unlink(missing_ok=True)
        os.close(self._fd)


def orphaned(folder: Path) -> list[Path]:
    """Journals whose writer is gone (their lock is free)."""
    found = []
    for path in sorted(folder.glob("judgements-*.jsonl")) if folder.is_dir() else ():
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            found.append(path)
        except BlockingIOError:
            pass
        finally:
            os.close(fd)
    return found


def read_journal(path: Path) -> list[dict]:
    rows = []
    for line in path.read_bytes().splitlines():
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # the line a kill cut short
        row["judged_at"] = datetime.fromisoformat(row["judged_at"])
        for key in row.pop(SPECIAL_FLOATS, ()):
            row[key] = float(row[key])
        rows.append(row)
    return rows
