"""Ingest: new or changed runs read into the warehouse, by the ingest flow."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from scorelake._services._reads import Reads
from scorelake.flows.runtime import say_nothing
from scorelake.transforms.errors import InvalidArgument
from scorelake.transforms.results import IngestResult


class Ingesting:
    def __init__(self, reads: Reads):
        self._reads = reads

    def ingest(self, paths: Sequence[str | Path] | str | Path | None = None, *, force: bool = False,
               group: str | None = None, task_runner: str = "auto", dask_address: str | None = None,
               prefect: bool | None = None, verbose: bool = False, progress: bool = False,
               say: Callable[[str], None] = say_nothing) -> IngestResult:
        """Ingest new or changed runs under ``paths`` (default ``data/runs``): voice-agent session
        folders or folders of them, tau2-bench / tau-bench results. Returns what was ingested,
        unchanged and refused, and how the flow ran. ``prefect``: None runs a Prefect flow when an
        API is configured, True always, False never. ``say`` gets lines meant for the user."""
        from scorelake.flows import runtime
        from scorelake.transforms.sources import DEFAULT_RUNS

        self._reads.writable()
        if isinstance(paths, (str, Path)):
            paths = [paths]
        roots = [Path(p) for p in paths] if paths else [Path(DEFAULT_RUNS)]  # under the current directory
        for root in roots:
            if not root.exists():
                given = "" if paths else (f" (the default, under {Path.cwd()}): give the folder of your runs, "
                                          "e.g. scorelake ingest /path/to/eval_results, or try the sample "
                                          "scorelake ships: scorelake demo")
                raise InvalidArgument(f"{root}: no such file or directory{given}")
        how = runtime.how_on(dask_address, prefect, verbose, say, task_runner)
        return runtime.ingest(how, warehouse=self._reads.location, runs_dirs=[str(p.absolute()) for p in roots],
                              force=force, group=group, progress=progress)
