"""Input formats to table rows, each a ``Source`` (recognise a run, fingerprint it, read it):
voice-agent runs (``nemo``), tau2-bench and tau-bench results (``tau``); and scorelake's former
table format (for its conversion).

A reader takes a discovered ``Session`` and a new generation and returns ``SessionTables``; a file
it cannot use becomes a quarantine row (``BadInput``), never an exception out of the reader. Other
packages add formats through the entry point group ``scorelake.sources``, their rows built with
the kit the tau sources use (``scenario_row``, ``run_row``, ``collect_items``, ...).
"""

from scorelake.transforms.sources._discover import (
    DEFAULT_RUNS,
    discover_sessions,
    read_session_tables,
    same_content,
    session_fingerprint,
    source_warnings,
)
from scorelake.transforms.sources._files import BadInput, SessionTables, is_utf8, open_regular, printable, read_within
from scorelake.transforms.sources._kit import (
    ItemRows,
    collect_items,
    file_fingerprint,
    quarantined_run,
    run_row,
    scenario_row,
)
from scorelake.transforms.sources._legacy import LegacyTables
from scorelake.transforms.sources._read_sessions import EVIDENCE_TABLES, IngestedRuns, ingest_sessions
from scorelake.transforms.sources._registry import SOURCES, plugin_problems
from scorelake.transforms.sources._session import Session, Source
from scorelake.transforms.sources.nemo import list_session, read_session
from scorelake.transforms.sources.tau import UNRESOLVED_SUFFIX

__all__ = ["BadInput", "DEFAULT_RUNS", "EVIDENCE_TABLES", "IngestedRuns", "ItemRows", "SOURCES", "LegacyTables", "Session",
           "SessionTables", "Source", "UNRESOLVED_SUFFIX", "discover_sessions", "ingest_sessions", "is_utf8",
           "list_session", "open_regular", "plugin_problems", "printable", "read_session", "read_session_tables", "read_within",
           "same_content", "session_fingerprint", "source_warnings", "collect_items", "file_fingerprint",
           "quarantined_run", "run_row", "scenario_row"]
