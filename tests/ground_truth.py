"""The suite's ground truth: ``../shared`` beside the checkout (or ``$SCORELAKE_SHARED``) where it
is, else the packed copy the repository carries, so that a fresh clone runs its own tests.

The pack holds the parts the tests read (``conformance/`` and ``external/``), byte for byte;
``test_ground_truth.py`` checks it against ``../shared`` wherever both are present. After the
shared corpus changes: ``python -m tests.ground_truth`` packs it again.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKED = REPO / "tests" / "data" / "ground_truth.tar.xz"
UNPACKED = REPO / "tests" / ".ground-truth"  # git-ignored; unpacked again when the pack changes
PARTS = ("conformance", "external")


def shared_root() -> Path:
    """Where the ground truth is: ``$SCORELAKE_SHARED``, else ``../shared`` when it holds the
    conformance runs, else the pack, unpacked once."""
    if "SCORELAKE_SHARED" in os.environ:
        return Path(os.environ["SCORELAKE_SHARED"])
    beside = REPO.parent / "shared"
    if (beside / "conformance" / "runs").is_dir():
        return beside
    return unpacked()


def unpacked() -> Path:
    """The pack unpacked under tests/.ground-truth/<its digest>/ (into a temporary folder first,
    then renamed: a run killed while unpacking leaves no half corpus behind)."""
    digest = hashlib.sha256(PACKED.read_bytes()).hexdigest()[:16]
    target = UNPACKED / digest
    if not target.is_dir():
        UNPACKED.mkdir(parents=True, exist_ok=True)
        for stale in UNPACKED.iterdir():
            shutil.rmtree(stale, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(dir=UNPACKED, prefix=".unpacking-"))
        with tarfile.open(PACKED) as tar:
            tar.extractall(staging, filter="data")
        try:
            staging.rename(target)
        except OSError:  # another process unpacked it first
            shutil.rmtree(staging, ignore_errors=True)
    return target


def packed_files() -> dict[str, bytes]:
    """Each file of the pack by its path (``conformance/runs/...``)."""
    with tarfile.open(PACKED) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def shared_files(shared: Path) -> dict[str, bytes]:
    """Each file of the parts the tests read, by its path under ``shared``."""
    return {path.relative_to(shared).as_posix(): path.read_bytes()
            for part in PARTS for path in sorted((shared / part).rglob("*")) if path.is_file()}


def pack(shared: Path) -> None:
    """Packs ``shared``'s parts reproducibly: sorted, no owners, no times (the same corpus packs to
    the same bytes)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz", preset=9) as tar:
        for name, data in shared_files(shared).items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    PACKED.write_bytes(buffer.getvalue())


if __name__ == "__main__":
    pack(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared")
    print(f"{PACKED}: {PACKED.stat().st_size:,} bytes")
