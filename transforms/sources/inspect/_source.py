"""Inspect AI logs as a ``Source``: an ``.eval`` archive or a ``.json`` log, a run each."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from scorelake.transforms.sources._files import SessionTables, first_bytes
from scorelake.transforms.sources._kit import file_fingerprint
from scorelake.transforms.sources._session import Session
from scorelake.transforms.sources.inspect._document import eval_document, is_eval_archive, json_document
from scorelake.transforms.sources.inspect._read import KIND, read_inspect

READER_VERSION = "1"


def _is_json_log(path: Path) -> bool:
    """An Inspect ``.json`` log by its first bytes: an object opening with its ``version`` and ``status``
    and holding an ``eval`` object with its ``task``."""
    if path.suffix != ".json" or path.is_dir():
        return False
    head = first_bytes(path, 4096)
    return head is not None and (head.startswith(b"{") and b'"version"' in head[:64] and b'"status"' in head[:200]
            and b'"eval"' in head and b'"task"' in head)


class InspectLog:
    kind = KIND

    def recognises(self, path: Path) -> str | None:
        return path.stem if is_eval_archive(path) or _is_json_log(path) else None

    def fingerprint(self, session: Session) -> str:
        return file_fingerprint(session, READER_VERSION)

    def input_files(self, session: Session, path: Path) -> list[str] | None:
        return ["."]

    def read(self, session: Session, generation: str) -> SessionTables:
        document = eval_document if session.path.suffix == ".eval" else json_document
        return read_inspect(session, generation, self.fingerprint(session), document)

    def warnings(self, scenarios: pl.LazyFrame) -> dict[str, str]:
        return {}
