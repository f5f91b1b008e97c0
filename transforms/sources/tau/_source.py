"""tau2-bench and tau-bench results as ``Source``s: a tau2 results folder, a tau2 results file, a
tau-bench trajectory file."""

from __future__ import annotations

import hashlib
from pathlib import Path

import polars as pl

from scorelake.transforms.sources._files import SessionTables, first_bytes
from scorelake.transforms.sources._kit import file_fingerprint
from scorelake.transforms.sources._session import Session, stat_token
from scorelake.transforms.sources.tau._read import read_tau2, read_tau_bench, tau2_file_document, tau2_folder_document
from scorelake.transforms.sources.tau._task_ids import task_id_warnings

# Part of a file's fingerprint: a reader that extracts more from the same file re-reads files an
# older one ingested (2: COMMUNICATE, reward basis, recovered task ids; 3: evidence: turns, tool calls;
# 4: the definition's lineage; 5: where each tool call falls in the transcript; 6: τ-voice ticks;
# 7: the task's user instructions; 8: τ-voice ticks as tau2 reads them, turn kinds marked).
READER_VERSION = "8"


def sniff(path: Path) -> str | None:
    """The format of a results file from its first bytes: ``tau2``, ``tau-bench`` or None."""
    head = first_bytes(path, 65536)
    if head is None:
        return None
    if head.startswith(b"{"):
        return "tau2" if b'"simulations"' in head or (b'"timestamp"' in head and b'"info"' in head) else None
    if head.startswith(b"["):
        if b'"traj"' in head and b'"reward"' in head:
            return "tau-bench"
        if b'"termination_reason"' in head or b'"reward_info"' in head:
            return "tau2"
    return None


class _ResultsFile:
    """A results file of the format ``kind`` (recognised by its first bytes), a run each."""

    kind: str

    def recognises(self, path: Path) -> str | None:
        return path.stem if path.suffix == ".json" and not path.is_dir() and sniff(path) == self.kind else None

    def fingerprint(self, session: Session) -> str:
        return file_fingerprint(session, READER_VERSION)

    def input_files(self, session: Session, path: Path) -> list[str] | None:
        return ["."]


class Tau2File(_ResultsFile):
    """A monolithic tau2-bench results file."""

    kind = "tau2"

    def read(self, session: Session, generation: str) -> SessionTables:
        return read_tau2(session, generation, self.fingerprint(session), tau2_file_document)

    def warnings(self, scenarios: pl.LazyFrame) -> dict[str, str]:
        return task_id_warnings(scenarios)


class TauBenchFile(_ResultsFile):
    """A tau-bench (v1) trajectory file."""

    kind = "tau-bench"

    def read(self, session: Session, generation: str) -> SessionTables:
        return read_tau_bench(session, generation, self.fingerprint(session))

    def warnings(self, scenarios: pl.LazyFrame) -> dict[str, str]:
        return {}


class Tau2Folder:
    """A tau2-bench results folder: ``results.json`` and ``simulations/``."""

    kind = "tau2-dir"

    def recognises(self, path: Path) -> str | None:
        is_results = path.is_dir() and (path / "results.json").is_file() and (path / "simulations").is_dir()
        return path.name if is_results else None

    def fingerprint(self, session: Session) -> str:
        digest = hashlib.blake2b(digest_size=16)
        digest.update(f"reader={READER_VERSION};".encode())
        digest.update(f"results={stat_token(session.path / 'results.json')};".encode())
        for path in sorted((session.path / "simulations").glob("*.json")):
            digest.update(f"{path.name}={stat_token(path)};".encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    def input_files(self, session: Session, path: Path) -> list[str] | None:
        return ["results.json", *(f"simulations/{p.name}" for p in sorted((path / "simulations").glob("*.json")))]

    def read(self, session: Session, generation: str) -> SessionTables:
        return read_tau2(session, generation, self.fingerprint(session), tau2_folder_document)

    def warnings(self, scenarios: pl.LazyFrame) -> dict[str, str]:
        return task_id_warnings(scenarios)
