"""Finding session directories and their scenario directories, and fingerprinting them cheaply."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from scorelake.transforms.columns import SCENARIO_FILES
from scorelake.transforms.errors import InvalidArgument
from scorelake.transforms.sources._files import open_regular

DEFAULT_RUNS = "data/runs"  # what ingest reads when given nothing, under the current directory
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
    "bot_logs_user/llm_context.json",
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
    fd = open_regular(path)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
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


MAX_DEPTH = 8  # folders below a root that discovery descends into


def _walk(folder: Path, group: str | None, depth: int, visited: set[Path], found: list[Session]) -> None:
    """Runs at any depth below ``folder`` (not below a run: a run's own folders are its contents),
    each real folder visited once, so symlink loops end."""
    try:
        children = sorted(folder.iterdir())
    except OSError:  # unreadable: nothing found there
        return
    for child in children:
        if child.name.startswith(".") or child.name == "_delta_log":
            continue
        if (session := _recognise(child, group)) is not None:
            found.append(session)
        elif depth < MAX_DEPTH and child.is_dir() and (real := child.resolve()) not in visited:
            visited.add(real)
            _walk(child, group, depth + 1, visited, found)


def discover_sessions(roots: list[Path], group: str | None = None) -> list[Session]:
    """Runs given directly, or found at any depth (up to ``MAX_DEPTH`` folders) below each root:
    voice-agent ``eval_*`` session directories, tau2-bench results files or ``results.json`` +
    ``simulations/`` folders, and tau-bench trajectory files. Other files (a manifest, notes) are
    not runs and are passed over."""
    found: list[Session] = []
    for root in roots:
        root = Path(root)
        if not root.exists():
            raise InvalidArgument(f"{root}: no such file or directory")
        direct = _recognise(root, group)
        if direct is not None:
            found.append(direct)
        elif not root.is_dir():
            raise InvalidArgument(f"{root}: not a recognised results file (tau2-bench or tau-bench JSON)")
        else:
            _walk(root, group, 1, {root.resolve()}, found)
    return found


METRICS_AT = SCENARIO_INPUTS.index("metrics.json")


@dataclass(frozen=True)
class Listing:
    """A voice-agent session directory as one pass of stats sees it."""

    scenarios: dict[str, str]  # scenario folder name -> its fingerprint, in name order
    killed: list[str]  # ``*.killed.*`` folder names, in name order
    fingerprint: str  # the session's: changes whenever a file scoring reads is added, removed, resized or touched


def _stat_token(path: str | Path) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_size}:{st.st_mtime_ns}"


def list_session(session_dir: Path) -> Listing:
    """Scenario and killed folders of a session, each scenario fingerprinted by its input files' stats.

    Plain strings and ``os.stat``: this runs for every scenario of every session on each ingest,
    and it is most of a no-change re-ingest.
    """
    base = os.fspath(session_dir)
    with os.scandir(base) as entries:
        folders = sorted(e.name for e in entries if e.is_dir())
    scenarios: dict[str, str] = {}
    killed: list[str] = []
    for name in folders:
        if KILLED_MARK in name:
            killed.append(name)
            continue
        folder = f"{base}/{name}/"
        tokens = [_stat_token(folder + file) for file in SCENARIO_INPUTS]
        if tokens[METRICS_AT] != "-" or any(os.path.exists(folder + marker) for marker in SCENARIO_MARKERS):
            scenarios[name] = hashlib.blake2b(";".join(tokens).encode(), digest_size=12).hexdigest()
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"reader={NEMO_READER_VERSION};".encode())
    for name in RUN_FILES:
        digest.update(f"{name}={_stat_token(f'{base}/{name}')};".encode())
    for name in killed:
        digest.update(f"killed:{name};".encode("utf-8", "surrogateescape"))
    for name, fingerprint in scenarios.items():
        digest.update(f"{name}:{fingerprint};".encode("utf-8", "surrogateescape"))
    return Listing(scenarios, killed, digest.hexdigest())


# Part of a tau2 / tau-bench file's fingerprint: a reader that extracts more from the same file
# (2: COMMUNICATE, reward basis, recovered task ids) re-reads files ingested by an older one.
EXTERNAL_READER_VERSION = "3"  # 3: evidence (turns, tool calls)
# The same for voice-agent sessions (2: evidence: turns, tool calls, judge results, action items;
# 3: the judge's input).
NEMO_READER_VERSION = "3"


def session_fingerprint(session: Session) -> str:
    """Changes whenever a file scoring reads is added, removed, resized or touched."""
    if session.kind == "nemo":
        return list_session(session.path).fingerprint
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"reader={EXTERNAL_READER_VERSION};".encode())
    if session.kind == "tau2-dir":
        digest.update(f"results={_stat_token(session.path / 'results.json')};".encode())
        for path in sorted((session.path / "simulations").glob("*.json")):
            digest.update(f"{path.name}={_stat_token(path)};".encode("utf-8", "surrogateescape"))
    else:
        digest.update(_stat_token(session.path).encode())
    return digest.hexdigest()


def _input_files(session: Session, path: Path) -> list[str] | None:
    """The files scoring reads of ``session`` as if it lay at ``path``, relative to it."""
    if session.kind != "nemo":
        return ["."] if session.kind != "tau2-dir" else ["results.json", *(
            f"simulations/{p.name}" for p in sorted((path / "simulations").glob("*.json")))]
    if not path.is_dir():
        return None
    listing = list_session(path)
    return [*RUN_FILES, *(f"{name}/{file}" for name in listing.scenarios for file in SCENARIO_INPUTS),
            *(f"killed:{name}" for name in listing.killed)]


def same_content(session: Session, other: Path) -> bool:
    """Whether ``other`` holds ``session`` byte for byte (every file scoring reads): the same run
    found again, under another folder."""
    import filecmp

    mine, theirs = _input_files(session, session.path), _input_files(session, other)
    if mine is None or mine != theirs:
        return False
    for rel in mine:
        a, b = (session.path if rel == "." else session.path / rel), (other if rel == "." else other / rel)
        if rel.startswith("killed:") or not (a.exists() or b.exists()):
            continue
        if a.is_file() != b.is_file() or (a.is_file() and not filecmp.cmp(a, b, shallow=False)):
            return False
    return True
