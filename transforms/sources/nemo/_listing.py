"""A voice-agent session folder as one pass of stats sees it: its scenario and killed folders, each
scenario fingerprinted by the stats of the files scoring reads."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from scorelake.transforms.sources._files import resolves_inside
from scorelake.transforms.sources._session import ABSENT, stat_token
from scorelake.transforms.sources.nemo.columns import SCENARIO_FILES

KILLED_MARK = ".killed."
# check_resume.py counts a sub-directory as a scenario when it holds any of these (run-format.md §14).
SCENARIO_MARKERS = ("metrics.json", "bridge_log.txt", "scenario_config")
RUN_FILES = ("run_args.json", "all_summary.txt")
SEGMENTS_FILE = "conversation_log.seglst.json"  # who spoke when (the voice panel)
USER_PROMPT_FILE = "scenario_config/user_prompt.txt"  # the user simulator's instructions: the task, key entities
AUDIO_FILE = "conversation_log.wav"  # the recording, where the runner kept it (its stat: the fingerprint)


def recording(session: str | Path, scenario: str) -> Path | None:
    """A scenario's recording in its session folder on this machine, when there is one: a regular
    file that no symlink takes out of the session."""
    path = Path(session) / scenario / AUDIO_FILE
    return path if path.is_file() and resolves_inside(path, session) else None


# Everything scoring reads from a scenario directory; a change to any of them changes the fingerprint.
SCENARIO_INPUTS = (
    *SCENARIO_FILES.values(),
    "scenario_config/reference_answer.json",
    "final_agent_response.json",
    "bot_logs_agent/llm_context.json",
    "bot_logs_user/llm_context.json",
    SEGMENTS_FILE,
    USER_PROMPT_FILE,
    AUDIO_FILE,
)
# Part of a session's fingerprint: a reader that extracts more from the same files re-reads sessions
# an older one ingested (2: evidence: turns, tool calls, judge results, action items; 3: the judge's input;
# 4: the definition's lineage; 5: where each tool call falls in the transcript; 6: the voice panel;
# 7: the task, as the user simulator got it; 8: the call's length and end, beside its segments).
NEMO_READER_VERSION = "8"

METRICS_AT = SCENARIO_INPUTS.index("metrics.json")


@dataclass(frozen=True)
class Listing:
    """A voice-agent session directory as one pass of stats sees it."""

    scenarios: dict[str, str]  # scenario folder name -> its fingerprint, in name order
    killed: list[str]  # ``*.killed.*`` folder names, in name order
    fingerprint: str  # the session's: changes whenever a file scoring reads is added, removed, resized or touched


def session_folders(session_dir: Path) -> tuple[list[str], list[str]]:
    """A session's sub-folders that may be scenarios and its ``*.killed.*`` ones, each in name order."""
    with os.scandir(os.fspath(session_dir)) as entries:
        folders = sorted(e.name for e in entries if e.is_dir())
    return [name for name in folders if KILLED_MARK not in name], [name for name in folders if KILLED_MARK in name]


def scenario_fingerprint(session_dir: Path, name: str, token: Callable[[str], str] = stat_token) -> str | None:
    """The fingerprint of folder ``name`` from the ``token`` of each of its input files (by path), or
    None when it is no scenario (no ``metrics.json`` and none of check_resume.py's markers)."""
    folder = f"{os.fspath(session_dir)}/{name}/"
    tokens = [token(folder + file) for file in SCENARIO_INPUTS]
    if tokens[METRICS_AT] == ABSENT and not any(os.path.exists(folder + marker) for marker in SCENARIO_MARKERS):
        return None
    return hashlib.blake2b(";".join(tokens).encode(), digest_size=12).hexdigest()


def session_fingerprint(session_dir: Path, scenarios: dict[str, str], killed: list[str]) -> str:
    """The session's fingerprint from its scenarios' (folder name -> fingerprint, in name order)."""
    base = os.fspath(session_dir)
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"reader={NEMO_READER_VERSION};".encode())
    for name in RUN_FILES:
        digest.update(f"{name}={stat_token(f'{base}/{name}')};".encode())
    for name in killed:
        digest.update(f"killed:{name};".encode("utf-8", "surrogateescape"))
    for name, fingerprint in scenarios.items():
        digest.update(f"{name}:{fingerprint};".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def list_session(session_dir: Path) -> Listing:
    """Scenario and killed folders of a session, each scenario fingerprinted by its input files' stats.

    Plain strings and ``os.stat``: this runs for every scenario of every session on each ingest
    that plans what changed, and it is most of a no-change re-ingest.
    """
    folders, killed = session_folders(session_dir)
    scenarios = {name: fingerprint for name in folders
                 if (fingerprint := scenario_fingerprint(session_dir, name)) is not None}
    return Listing(scenarios, killed, session_fingerprint(session_dir, scenarios, killed))
