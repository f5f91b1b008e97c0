"""Reading input files safely: bad files become ``BadInput`` naming the file and the reason."""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import orjson
import polars as pl
from pydantic import ValidationError

from scorelake.transforms.columns import frame
from scorelake.transforms.sources._session import ABSENT, stat_token_of

MAX_JSON_DEPTH = 1024  # orjson's limit; deeper documents would exhaust Python's recursion elsewhere
MAX_FILE_BYTES = int(os.environ.get("SCORELAKE_MAX_FILE_BYTES", 64 * 1024 * 1024))


class BadInput(Exception):
    """A file that cannot be used, with the reason in words a user can act on."""

    def __init__(self, file: str, reason: str, error: str = ""):
        super().__init__(f"{file}: {reason}" + (f" ({error})" if error else ""))
        self.file, self.reason, self.error = file, reason, error

    def quarantine_row(self, run_id: str, generation: str, scenario: str | None) -> dict[str, Any]:
        return {"run_id": run_id, "generation": generation, "scenario_name": scenario,
                "file": self.file, "reason": self.reason, "error": self.error}


def read_bytes(path: str | Path, root: Path, missing_ok: bool = False,
               seen: dict[str, str] | None = None) -> bytes | None:
    """A file's bytes, refusing symlinks that leave ``root``, loops, non-files and oversized files;
    None for no file at all (not even a dangling symlink) when ``missing_ok``. ``seen`` gets the
    file's ``stat_token`` under ``path`` (a fingerprint made of what the reads saw, not stats again).

    The common case (a plain file) costs one open and one fstat; symlinks take the slow path.
    """
    rel = lambda: os.path.relpath(path, root)  # noqa: E731  (only built for an error)
    if not inside(path, root):
        raise BadInput(rel(), "path outside the run directory", os.path.normpath(path))
    try:
        # O_NONBLOCK: opening a FIFO waits for a writer that may never come (a regular file ignores it)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        if seen is not None:
            seen[path] = ABSENT
        if missing_ok:
            return None
        raise BadInput(rel(), "missing file") from None
    except OSError as exc:
        if exc.errno != errno.ELOOP:  # ELOOP: the file itself is a symlink
            raise BadInput(rel(), "unreadable path", str(exc)) from None
        return read_bytes(_resolve_inside(path, root, rel), Path(root).resolve())
    try:
        st = os.fstat(fd)
        if seen is not None:
            seen[path] = stat_token_of(st)
        if stat.S_ISDIR(st.st_mode):
            raise BadInput(rel(), "a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise BadInput(rel(), "not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise BadInput(rel(), "file too large", f"{st.st_size} bytes > limit {MAX_FILE_BYTES}")
        if st.st_size == 0:
            raise BadInput(rel(), "empty file")
        data = read_within(fd, MAX_FILE_BYTES, st.st_size)
        if data is None:  # grew while being read
            raise BadInput(rel(), "file too large", f"over {MAX_FILE_BYTES} bytes")
        return data
    finally:
        os.close(fd)


def read_within(fd: int, limit: int, expected: int = 0) -> bytes | None:
    """Every byte ``fd`` gives, or None once they pass ``limit`` (the rest is never read).
    ``expected``: the size ``fstat`` gave, asked for in one read with a byte more; the read coming
    back one short of that is the end of the file, with no second read to find it empty (ten reads
    fewer a scenario)."""
    if 0 < expected <= limit:
        data = os.read(fd, expected + 1)
        if len(data) == expected:
            return data
        if len(data) > limit:
            return None
        chunks, size = [data], len(data)  # the file changed since: read on to its end
    else:
        chunks, size = [], 0
    while chunk := os.read(fd, 1 << 20):
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def inside(path: str | Path, root: str | Path) -> bool:
    """Whether ``path``, as written (``..`` folded, symlinks not followed), lies under ``root``.
    Plain strings: it runs for every file an ingest reads."""
    path, root = os.fspath(path), os.fspath(root)
    if ".." not in path and path.startswith(root.rstrip(os.sep) + os.sep):
        return True  # no component to climb out with: the common case, without normalising
    base = os.path.normpath(root)
    full = os.path.normpath(os.path.join(base, path))
    return full == base or full.startswith(base if base.endswith(os.sep) else base + os.sep)


def resolves_inside(path: str | Path, root: str | Path) -> bool:
    """Whether ``path``, every symlink on it followed, lies under ``root`` (its symlinks followed too)."""
    return inside(os.path.realpath(path), os.path.realpath(root))


def is_utf8(text: str) -> bool:
    """False for a name the file system gave as bytes that are not UTF-8 (surrogate escapes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(text: str) -> str:
    """A file name as text that can be stored and shown: bytes that are not UTF-8 as ``\\xNN``."""
    return text if is_utf8(text) else text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def open_regular(path: str | Path) -> int | None:
    """A file descriptor of ``path`` when it is a regular file (never waiting on a FIFO or device), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def first_bytes(path: str | Path, size: int) -> bytes | None:
    """A regular file's first ``size`` bytes, a byte-order mark and white space taken off the front
    (how a format is told by its content); None for what is no regular file or cannot be read."""
    fd = open_regular(path)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            return fh.read(size).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return None


def _resolve_inside(path: Path, root: Path, rel: Callable[[], str]) -> Path:
    """Where a symlink leads, if that is inside ``root``."""
    try:
        resolved = Path(path).resolve(strict=True)
    except FileNotFoundError:
        raise BadInput(rel(), "missing file", "dangling symlink") from None
    except (RuntimeError, OSError) as exc:  # a symlink loop, permissions
        raise BadInput(rel(), "unreadable path", str(exc)) from None
    if not resolved.is_relative_to(Path(root).resolve()):
        raise BadInput(rel(), "symlink points outside the run directory", str(resolved))
    return resolved


def check_directory(path: str | Path, root: Path) -> None:
    """A scenario directory (or one inside it) that is a symlink must stay inside ``root``."""
    if os.path.islink(path):
        _resolve_inside(path, root, lambda: os.path.relpath(path, root))


def load_json(path: str | Path, root: Path) -> Any:
    return json_of(read_bytes(path, root), path, root)


def load_json_if_present(path: str | Path, root: Path, absent: Any = None, seen: dict[str, str] | None = None) -> Any:
    """The JSON document at ``path``, or ``absent`` when there is no file (a JSON null reads None)."""
    data = read_bytes(path, root, missing_ok=True, seen=seen)
    return absent if data is None else json_of(data, path, root)


def json_of(data: bytes, path: str | Path, root: Path) -> Any:
    """The JSON document ``data`` read from ``path``, or ``BadInput`` naming it."""
    try:
        return parse_json_bytes(data)
    except UnicodeDecodeError as exc:
        raise BadInput(os.path.relpath(path, root), "not UTF-8", str(exc)) from None
    except ValueError as exc:
        raise BadInput(os.path.relpath(path, root), "invalid JSON", str(exc)) from None


def validate(model: type, doc: Any, file: str | Callable[[], str]) -> Any:
    """``doc`` as ``model``, or ``BadInput`` naming ``file`` (a function giving it: built only for an error)."""
    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<root>"
        raise BadInput(file() if callable(file) else file, f"schema violation at {where}: {first['msg']}",
                       f"{exc.error_count()} error(s)") from None


@dataclass
class SessionTables:
    """A session as read: its ``runs`` row and its rows of each other table it fills (scenarios,
    verdicts, quarantine, the evidence tables), as dicts framed by whoever takes them (an ingest
    frames a group of sessions at once)."""

    run: dict[str, Any]
    rows: dict[str, list[dict[str, Any]]]
    errors: list[BadInput] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what was read but could not be stored

    def table(self, name: str) -> pl.DataFrame:
        """The rows of table ``name`` as a frame of its declared columns."""
        return frame(name, self.rows.get(name, []))


# json.dumps(value, ensure_ascii=False) and json.dumps(value, sort_keys=True), their encoders made once:
# json.dumps builds a new encoder on every call given an option, a third of the time on a small value.
dump_json = json.JSONEncoder(ensure_ascii=False).encode
dump_json_sorted = json.JSONEncoder(sort_keys=True).encode


def parse_json_bytes(data: bytes) -> Any:
    """Parse JSON the way the upstream writer's ``json`` module round-trips it.

    orjson is the fast path; Python's ``json.dump`` can also emit ``NaN``/``Infinity`` and
    integers beyond 64 bits, which orjson rejects, so those fall back to the stdlib parser.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if "recursion" in str(exc):  # what the stdlib parser would hit too, as a RecursionError
            raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels") from None
        try:
            return json.loads(data.decode("utf-8"))
        except RecursionError:
            raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels") from None

