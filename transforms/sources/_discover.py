"""Finding runs under folders, each recognised by the first ``Source`` that claims it; a run's
fingerprint, and whether two folders hold the same run."""

from __future__ import annotations

from pathlib import Path

from scorelake.transforms.errors import InvalidArgument
from scorelake.transforms.sources._registry import SOURCES
from scorelake.transforms.sources._session import Session

DEFAULT_RUNS = "data/runs"  # what ingest reads when given nothing, under the current directory
MAX_DEPTH = 8  # folders below a root that discovery descends into


def _recognise(path: Path, group: str | None) -> Session | None:
    """A run at ``path``, recognised by its content, or None."""
    for source in SOURCES.values():
        if (run_id := source.recognises(path)) is not None:
            return Session(run_id, path, source.kind, group)
    return None


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


def session_fingerprint(session: Session) -> str:
    """Changes whenever a file scoring reads is added, removed, resized or touched."""
    return SOURCES[session.kind].fingerprint(session)


def source_warnings(kind: str, scenarios) -> dict[str, str]:
    """The format ``kind``'s warnings on ``scenarios`` rows (per run of that format among them)."""
    return SOURCES[kind].warnings(scenarios)


def read_session_tables(session: Session, generation: str):
    """The run's rows, read by its format's reader."""
    return SOURCES[session.kind].read(session, generation)


def same_content(session: Session, other: Path) -> bool:
    """Whether ``other`` holds ``session`` byte for byte (every file scoring reads): the same run
    found again, under another folder."""
    import filecmp

    source = SOURCES[session.kind]
    mine, theirs = source.input_files(session, session.path), source.input_files(session, other)
    if mine is None or mine != theirs:
        return False
    for rel in mine:
        a, b = (session.path if rel == "." else session.path / rel), (other if rel == "." else other / rel)
        if a.exists() != b.exists() or a.is_file() != b.is_file():
            return False
        if a.is_file() and not filecmp.cmp(a, b, shallow=False):  # a folder listed is the same by its name
            return False
    return True
