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


def sniff(path: Path) -> str | None:
    """The format of a results file from its first bytes: ``tau2``, ``tau-bench`` or None."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(65536).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return None
    if head.startswith(b"{"):
        return "tau2" if b'"simulations"' in head or (b'"timestamp"' in head and b'"info"' in head) else None
    if head.startswith(b"["):
        if b'"traj"' in head and b'"reward"' in head:
            return "tau-bench"
        if b'"termination_reason"' in head or b'"reward_info"' in head:
            return "tau2"
    return None


def _recognise(path: Path, group: str | None) -> Session | None:
    """A run at ``path``, recognised by its content, or None."""
    if path.is_dir():
        if _is_session(path) or path.name.startswith("eval_"):
            return Session(path.name, path, "nemo", group)
        if (path / "results.json").is_file() and (path / "simulations").is_dir():
            return Session(path.name, path, "tau2-dir", group)
        return None
    if path.suffix == ".json" and (kind := sniff(path)):
        return Session(path.stem, path, kind, group)
    return None


def discover_sessions(roots: list[Path], group: str | None = None) -> list[Session]:
    """Runs given directly, or found one level below each root: voice-agent ``eval_*`` session
    directories, tau2-bench results files or ``results.json`` + ``simulations/`` folders, and
    tau-bench trajectory files. Other files (a manifest, notes) are not runs and are passed over."""
    found: list[Session] = []
    for root in roots:
        root = Path(root)
        if not root.exists():
            raise FileNotFoundError(f"{root}: no such file or directory")
        direct = _recognise(root, group)
        if direct is not None:
            found.append(direct)
        elif root.is_file():
            raise ValueError(f"{root}: not a recognised results file (tau2-bench or tau-bench JSON)")
        else:
            found.extend(s for child in sorted(root.iterdir()) if (s := _recognise(child, group)))
    return found


def scenario_dirs(session: Path) -> tuple[list[Path], list[Path]]:
    """(scenario directories, ``*.killed.*`` directories) of a session, each sorted by name."""
    live: list[Path] = []
    killed: list[Path] = []
    with os.scandir(session) as entries:
        folders = sorted((e.name, e.path) for e in entries if e.is_dir())
    for name, path in folders:
        if KILLED_MARK in name:
            killed.append(Path(path))
        elif any(os.path.exists(os.path.join(path, marker)) for marker in SCENARIO_MARKERS):
            live.append(Path(path))
    return live, killed


def _stat_token(path: str | Path) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_size}:{st.st_mtime_ns}"


def scenario_fingerprint(scenario_dir: Path) -> str:
    # Plain strings and os.stat: this runs for every scenario of every session on each ingest.
    base = os.fspath(scenario_dir)
    tokens = ";".join(_stat_token(os.path.join(base, name)) for name in SCENARIO_INPUTS)
    return hashlib.blake2b(tokens.encode(), digest_size=12).hexdigest()


def session_fingerprint(session: Session, scenario_fingerprints: dict[str, str] | None = None) -> str:
    """Changes whenever a file scoring reads is added, removed, resized or touched.

    ``scenario_fingerprints`` (by directory name) saves re-stating files already fingerprinted.
    """
    digest = hashlib.blake2b(digest_size=16)
    if session.kind in ("tau2", "tau-bench"):
        digest.update(_stat_token(session.path).encode())
    elif session.kind == "tau2-dir":
        digest.update(f"results={_stat_token(session.path / 'results.json')};".encode())
        for path in sorted((session.path / "simulations").glob("*.json")):
            digest.update(f"{path.name}={_stat_token(path)};".encode())
    else:
        live, killed = scenario_dirs(session.path)
        for name in RUN_FILES:
            digest.update(f"{name}={_stat_token(session.path / name)};".encode())
        for path in killed:
            digest.update(f"killed:{path.name};".encode())
        known = scenario_fingerprints or {}
        for path in live:
            digest.update(f"{path.name}:{known.get(path.name) or scenario_fingerprint(path)};".encode())
    return digest.hexdigest()
