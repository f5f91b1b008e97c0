"""Finding session directories and their scenario directories, and fingerprinting them cheaply."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from transforms.columns import SCENARIO_FILES

KILLED_MARK = ".killed."
# check_resume.py counts a sub-directory as a scenario when it holds any of these (run-format.md §14).
SCENARIO_MARKERS = ("metrics.json", "bridge_log.txt", "scenario_config")
RUN_FILES = ("run_args.json", "all_summary.txt")
# Everything scoring reads from a scenario directory; a change to any of them changes the fingerprint.
SCENARIO_INPUTS = (
    *SCENARIO_FILES.values(),
    "scenario_config/reference_answer.json",
    "final_agent_response.json",
    "bot_logs_agent/llm_context.json",
)


@dataclass(frozen=True)
class Session:
    """One run to ingest: a voice-agent session directory, or a tau2 / tau-bench results file or folder."""

    run_id: str
    path: Path
    kind: str = "nemo"  # nemo | tau2 | tau2-dir | tau-bench
    group: str | None = None


def _is_session(path: Path) -> bool:
    return path.is_dir() and (path / "run_args.json").exists()


def discover_sessions(roots: list[Path]) -> list[Session]:
    """Session directories under each root (``eval_*`` children), or the root itself if it is one."""
    found: list[Session] = []
    for root in roots:
        root = Path(root)
        if not root.exists():
            raise FileNotFoundError(f"{root}: no such runs directory")
        if _is_session(root) or root.name.startswith("eval_"):
            found.append(Session(root.name, root))
            continue
        for child in sorted(root.iterdir()):
            if child.name.startswith("eval_") and child.is_dir():
                found.append(Session(child.name, child))
    return found


def scenario_dirs(session: Path) -> tuple[list[Path], list[Path]]:
    """(scenario directories, ``*.killed.*`` directories) of a session, each sorted by name."""
    live: list[Path] = []
    killed: list[Path] = []
    for child in sorted(session.iterdir()):
        if not child.is_dir():
            continue
        if KILLED_MARK in child.name:
            killed.append(child)
        elif any((child / marker).exists() for marker in SCENARIO_MARKERS):
            live.append(child)
    return live, killed


def _stat_token(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return "-"
    return f"{st.st_size}:{st.st_mtime_ns}"


def scenario_fingerprint(scenario_dir: Path) -> str:
    digest = hashlib.blake2b(digest_size=12)
    for name in SCENARIO_INPUTS:
        digest.update(f"{name}={_stat_token(scenario_dir / name)};".encode())
    return digest.hexdigest()


def session_fingerprint(session: Path) -> str:
    """Changes whenever a file scoring reads is added, removed, resized or touched."""
    live, killed = scenario_dirs(session)
    digest = hashlib.blake2b(digest_size=16)
    for name in RUN_FILES:
        digest.update(f"{name}={_stat_token(session / name)};".encode())
    for path in killed:
        digest.update(f"killed:{path.name};".encode())
    for path in live:
        digest.update(f"{path.name}:{scenario_fingerprint(path)};".encode())
    return digest.hexdigest()


def relative_to(path: Path, base: Path) -> str:
    return os.path.relpath(path, base)
