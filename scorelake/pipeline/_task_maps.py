"""Task maps: which scenario of one harness's runs is which of another's, so that ``compare`` pairs
a voice-agent run with a tau2-bench or Inspect run (``compare --map FILE``)."""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

from scorelake.pipeline._migrate import prepare_for_writing
from scorelake.pipeline._reviews import REVIEW_LOCK_WAIT_S
from scorelake.storage import Store
from scorelake.transforms.columns import frame
from scorelake.transforms.errors import InvalidArgument

MAX_MAP_BYTES = 16 * 1024 * 1024


def read_task_map(path: Path) -> list[tuple[str, str]]:
    """The pairs of a task map file: CSV with a header naming the columns ``a`` and ``b`` (run A's
    scenario name or task id, and run B's it is), one pair a line; ``InvalidArgument`` naming the file
    and the line for anything else."""
    try:
        if path.stat().st_size > MAX_MAP_BYTES:
            raise InvalidArgument(f"{path}: over {MAX_MAP_BYTES // (1024 * 1024)} MB: not a task map")
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgument(f"{path}: cannot be read as a task map ({exc})") from None
    rows = csv.DictReader(text.splitlines())
    if not rows.fieldnames or not {"a", "b"} <= set(rows.fieldnames):
        raise InvalidArgument(f"{path}: a task map's header names the columns a and b (run A's scenario or task, "
                              f"run B's), got {', '.join(rows.fieldnames or []) or 'none'}")
    pairs = []
    for n, row in enumerate(rows, start=2):
        a, b = (row.get("a") or "").strip(), (row.get("b") or "").strip()
        if not a or not b:
            raise InvalidArgument(f"{path}: line {n}: both a and b are needed")
        pairs.append((a, b))
    if not pairs:
        raise InvalidArgument(f"{path}: no pair in it")
    return pairs


def declare_task_map(store: Store, name: str, pairs: list[tuple[str, str]]) -> None:
    """Store ``pairs`` as the task map ``name`` (replacing its earlier declaration) as one write step."""
    store.tables.require(writing=True)
    now = datetime.now(UTC)
    with store.lock.hold(REVIEW_LOCK_WAIT_S):
        prepare_for_writing(store)
        store.tables.append("task_maps", frame("task_maps", [{"map_name": name, "a": a, "b": b, "declared_at": now}
                                                             for a, b in pairs]))
        store.log.record("map", f"task map {name}: {len(pairs)} pairs")
        store.views.build()
