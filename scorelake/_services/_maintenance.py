"""Keeping the warehouse: its history (``log``), a check of the committed state, conversion of the
former table format, compaction, and the served scheduled refresh."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from scorelake._services._reads import Reads
from scorelake.flows.runtime import say_nothing
from scorelake.storage import Commit
from scorelake.transforms.errors import InvalidArgument, check_range
from scorelake.transforms.results import CheckResult


class Maintenance:
    def __init__(self, reads: Reads):
        self._reads = reads

    def log(self) -> list[Commit]:
        """Every write step, oldest first: its version (an ``as_of``), time, what it did, table versions;
        opened ``as_of``, the steps up to the version it names (the history as it stood then)."""
        self._reads.store.tables.require()
        entries = self._reads.store.log.entries()
        if self._reads.as_of is None:
            return entries
        then = self.version()
        return [c for c in entries if c.version <= then]

    def version(self) -> int:
        """The version the warehouse is read at: the one opened ``as_of``, else the current one."""
        self._reads.store.tables.require()
        if self._reads.as_of is not None:
            return self._reads.store.log.as_of(self._reads.as_of).version
        return self._reads.store.log.version()

    def versions(self) -> pl.DataFrame:
        """``log()`` as a table: version, committed_at, operation, detail, table_versions (JSON), committer."""
        return pl.DataFrame([{"version": c.version, "committed_at": c.committed_at, "operation": c.operation,
                              "detail": c.detail, "table_versions": json.dumps(c.table_versions, sort_keys=True),
                              "committer": c.committer} for c in self.log()],
                            schema={"version": pl.Int64, "committed_at": pl.Datetime("us", "UTC"),
                                    "operation": pl.String, "detail": pl.String, "table_versions": pl.String,
                                    "committer": pl.String})

    def check(self) -> CheckResult:
        """Verify the committed state: every run's rows complete, every stored policy scored; warn of
        tau2 task ids that contradict their task, of speech segments no measure should trust (each
        scenario's anomalies), and of a warehouse moved or copied since its view database was written
        (consistent: reads bind this warehouse's own files)."""
        from scorelake.pipeline import verify
        from scorelake.transforms.sources import SOURCES, source_warnings

        store = self._reads.store
        store.tables.require()
        runs = store.tables.committed_runs()
        moved = store.views.moved()
        lines: dict[str, str] = {}
        for kind in SOURCES:  # each format's warnings, on its own runs' rows
            lines.update(source_warnings(kind, store.tables.scan("scenarios", runs)))
        warnings = [f"{run_id}: {warning}" for run_id, warning in sorted(lines.items())] + ([moved] if moved else [])
        warnings += [f"{run_id}/{scenario}: {anomaly}" for run_id, scenario, anomaly
                     in self._reads.query("voice_anomalies").iter_rows()]
        return CheckResult(runs.height, verify(store), warnings)

    def migrate(self) -> Path | None:
        """Convert a warehouse of scorelake's former table format to Delta tables; returns where the
        former files were kept (None: nothing to convert). Write methods do it first themselves."""
        from scorelake.flows import runtime

        self._reads.writable()
        kept = runtime.migrate(self._reads.location)
        return Path(kept) if kept else None

    def compact(self) -> None:
        """Drop rows of replaced ingests, bin-pack small files, vacuum files older than the history kept."""
        from scorelake.flows import runtime

        self._reads.writable()
        runtime.compact(self._reads.location)

    def serve(self, runs_dirs: Sequence[str | Path], *, cron: str | None = None, interval: float | None = None,
              name: str = "scheduled", notify_url: str | None = None, max_drop: float = 0.0,
              export_url: str | None = None, verbose: bool = False, say: Callable[[str], None] = say_nothing) -> None:
        """Serve the Prefect deployment ``scorelake-refresh/<name>``: on the schedule (``cron`` or
        ``interval`` seconds, exactly one), ingest what is new under ``runs_dirs``, re-score every
        stored policy, and gate each new run on the run before it in its group (a Prefect artifact;
        a regression beyond ``max_drop`` points POSTed to ``notify_url``, a Slack-compatible
        incoming webhook); with ``export_url`` (an OTLP/HTTP traces endpoint), each new run's verdicts
        sent there as ``export_otlp`` sends them. Needs a running Prefect server (``PREFECT_API_URL``);
        runs until stopped."""
        from scorelake.flows import runtime

        self._reads.writable()
        if (cron is None) == (interval is None):
            raise InvalidArgument("give exactly one of --cron or --interval")
        check_range("interval", interval, 1)  # seconds
        check_range("max-drop", max_drop, 0, 100)  # points
        if notify_url is not None and not notify_url.startswith(("http://", "https://")):
            raise InvalidArgument(f"--notify-url: an http:// or https:// URL (got '{notify_url}')")
        if export_url is not None:
            from scorelake.pipeline._otlp import require_otlp

            require_otlp()
        runtime.serve([str(Path(p).resolve()) for p in runs_dirs], self._reads.location, name, cron, interval, verbose,
                      say, notify_url, max_drop, export_url)
