"""A run to ingest, and what each input format provides to find, fingerprint and read its runs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import polars as pl

    from scorelake.transforms.sources._files import SessionTables


@dataclass(frozen=True)
class Session:
    """One run to ingest: a voice-agent session directory, or a tau2 / tau-bench results file or folder."""

    run_id: str
    path: Path
    kind: str = "nemo"  # the ``Source.kind`` that recognised it
    group: str | None = None


class Source(Protocol):
    """An input format (as Inspect AI registers its log recorders): ``sources.SOURCES`` lists them,
    in the order discovery asks them."""

    kind: str

    def recognises(self, path: Path) -> str | None:
        """The run id of the run at ``path`` when it is one of this format (by content), else None."""

    def fingerprint(self, session: Session) -> str:
        """Changes whenever a file scoring reads is added, removed, resized or touched (and when the
        reader itself changes what it extracts: its version is part of it)."""

    def input_files(self, session: Session, path: Path) -> list[str] | None:
        """The files scoring reads of ``session`` as if it lay at ``path``, relative to it ("." for
        a file run); None when ``path`` cannot hold it."""

    def read(self, session: Session, generation: str) -> SessionTables:
        """The run's rows (a file it cannot use is a quarantine row, never an exception)."""

    def warnings(self, scenarios: pl.LazyFrame) -> dict[str, str]:
        """Per run of this format among ``scenarios`` (rows of the ``scenarios`` table), a line on
        what is odd in it though it was read (the ingest's report and ``check`` show it)."""


ABSENT = "-"  # the stat token of no file


def stat_token(path: str | Path) -> str:
    """A file's size and modification time, or ``ABSENT`` when it is not there: what a fingerprint hashes."""
    try:
        st = os.stat(path)
    except OSError:
        return ABSENT
    return stat_token_of(st)


def stat_token_of(st: os.stat_result) -> str:
    return f"{st.st_size}:{st.st_mtime_ns}"
