"""Ingest: new or changed runs read into the warehouse, by the ingest flow."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from scorelake._services._reads import Reads
from scorelake.flows.runtime import say_nothing
from scorelake.transforms.errors import InvalidArgument
from scorelake.transforms.results import IngestResult


def require_answering(address: str, timeout_s: float = 5.0) -> None:
    """A Dask scheduler ``tcp://host:port`` that accepts a connection, or a clear error (Prefect's
    engine would wait 30 s, then fail the flow with a traceback)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or not port:
        raise InvalidArgument(f"--dask-address {address}: expected tcp://HOST:PORT")
    try:
        socket.create_connection((parts.hostname, port), timeout=timeout_s).close()
    except OSError as exc:
        raise InvalidArgument(f"--dask-address {address} does not answer ({exc.strerror or exc})") from None


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
                raise InvalidArgument(f"{root}: no such file or directory")
        if dask_address:
            require_answering(dask_address)
            task_runner = "dask"
        how = runtime.How(prefect, verbose, say, task_runner, dask_address)
        return runtime.ingest(how, warehouse=self._reads.location, runs_dirs=[str(p.absolute()) for p in roots],
                              force=force, group=group, progress=progress)
