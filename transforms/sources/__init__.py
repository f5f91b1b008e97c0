"""Input formats, one reader each, to table rows: voice-agent runs (``nemo``), tau2-bench and
tau-bench results (``tau``), and scorelake's former table format (for its conversion).

A reader takes a discovered ``Session`` and a new generation and returns ``SessionTables``; a file
it cannot use becomes a quarantine row (``BadInput``), never an exception out of the reader.
"""

from scorelake.transforms.sources._discover import (
    DEFAULT_RUNS,
    Session,
    discover_sessions,
    list_session,
    same_content,
    session_fingerprint,
)
from scorelake.transforms.sources._files import BadInput, SessionTables, is_utf8, printable
from scorelake.transforms.sources._legacy import LegacyTables
from scorelake.transforms.sources.nemo import read_session
from scorelake.transforms.sources.tau import UNRESOLVED_SUFFIX, read_tau2, read_tau_bench

EVIDENCE_TABLES = ("turns", "tool_calls", "judge_results", "judge_inputs")
READERS = {"nemo": read_session, "tau2": read_tau2, "tau2-dir": read_tau2, "tau-bench": read_tau_bench}

__all__ = [
    "BadInput",
    "DEFAULT_RUNS",
    "EVIDENCE_TABLES",
    "LegacyTables",
    "READERS",
    "Session",
    "SessionTables",
    "UNRESOLVED_SUFFIX",
    "discover_sessions",
    "is_utf8",
    "list_session",
    "printable",
    "same_content",
    "read_session",
    "read_tau2",
    "read_tau_bench",
    "session_fingerprint",
]
