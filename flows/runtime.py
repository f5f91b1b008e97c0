"""Where a write command's flow runs, in this process or as Prefect flow runs: the one place that
chooses, and the one door from the API to the flows (the upkeep steps, always in this process, too).

Prefect 3 has no supported serverless mode (PrefectHQ/prefect#15927): a flow called with no API
configured starts a temporary local server, 10-20 s per command and a start-up timeout a first
start on a busy machine can lose. So with no API configured the flows run in-process (the same
task functions and fan-out, without the engine), and they run as Prefect flows when an API is
configured, when asked (``--prefect``), or when a task runner needs Prefect's engine (Dask).
Deciding must not import Prefect (about a second), hence the file checks below.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from scorelake.transforms.errors import ClusterFailed, ScorelakeError

if TYPE_CHECKING:
    from scorelake.transforms.results import IngestResult, RejudgeResult, RescoreResult, ReviewResult

# Long enough for a first start on 2 cores (database migrations included) under load; Prefect's
# own default of 20 s is not (shared notes: 10-20 s unloaded).
TEMPORARY_SERVER_TIMEOUT_S = 180
# Background services of a temporary server that a one-shot command never uses (the event
# persister and task-run recorder stay on: they are what records the runs).
IDLE_SERVICES = ("CANCELLATION_CLEANUP", "FOREMAN", "LATE_RUNS", "SCHEDULER", "PAUSE_EXPIRATIONS", "REPOSSESSOR",
                 "CLEANUP_RECONCILER", "TRIGGERS", "EVENT_LOGGER")
NEEDS_PREFECT_ENGINE = ("dask",)  # task runners with no in-process equivalent


def _mentions(path: Path, word: str) -> bool:
    try:
        return word in path.read_text(errors="replace")
    except OSError:
        return False


def _settings_may_set_api() -> bool:
    """Whether any of Prefect's settings sources other than the environment could set an API URL:
    the active profile's file, and ``.env`` / ``prefect.toml`` / ``pyproject.toml`` in the working
    directory. False only when none can, so Prefect need not be imported to say no."""
    home = Path(os.environ.get("PREFECT_HOME") or "~/.prefect").expanduser()
    profiles = Path(os.environ.get("PREFECT_PROFILES_PATH") or home / "profiles.toml").expanduser()
    cwd = Path.cwd()
    return (_mentions(profiles, "PREFECT_API_URL") or _mentions(cwd / ".env", "PREFECT_API_URL")
            or (cwd / "prefect.toml").exists() or _mentions(cwd / "pyproject.toml", "tool.prefect"))


def configured_api_url() -> str | None:
    """The Prefect API URL the settings configure (environment, profile or settings file), if any."""
    if "PREFECT_API_URL" in os.environ:
        return os.environ["PREFECT_API_URL"] or None
    # Settings already loaded (a program that imported Prefect, a test harness) answer for free.
    if "prefect.settings" not in sys.modules and not _settings_may_set_api():
        return None
    from prefect.settings import get_current_settings

    return get_current_settings().api.url or None


@dataclass(frozen=True)
class Orchestration:
    prefect: bool
    api_url: str | None  # None with ``prefect``: a temporary local server

    def describe(self) -> str:
        if not self.prefect:
            return "ran in-process: no Prefect API configured"
        if self.api_url:
            return f"ran as a Prefect flow on {self.api_url}"
        return "ran as a Prefect flow on a temporary local server"


def orchestrate(prefect: bool | None, task_runner: str, verbose: bool, say) -> Orchestration:
    """How a write runs: ``prefect`` None decides by configuration, True asks for Prefect, False
    refuses it (a task runner that needs Prefect's engine still gets it). Prefect's settings are
    made before it is imported; ``say`` gets a line for the user."""
    url = configured_api_url() if prefect is not False else None
    chosen = Orchestration(bool(url) or bool(prefect) or task_runner in NEEDS_PREFECT_ENGINE, url)
    if chosen.prefect:
        prepare_prefect(chosen, verbose, say)
    return chosen


def prepare_prefect(orchestration: Orchestration, verbose: bool, say) -> None:
    """Prefect reads its settings at import: set them before. ``say`` gets a line for the user."""
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    if not verbose:
        os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    if orchestration.api_url:
        return
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", str(TEMPORARY_SERVER_TIMEOUT_S))
    os.environ.setdefault("PREFECT_SERVER_REGISTER_BLOCKS_ON_START", "false")
    for service in IDLE_SERVICES:
        os.environ.setdefault(f"PREFECT_SERVER_SERVICES_{service}_ENABLED", "false")
    say("starting a temporary local Prefect server (no PREFECT_API_URL is configured); its first start on a "
        "machine creates its database and can take a minute; set PREFECT_API_URL to use a running server")


def say_nothing(_: str) -> None:
    """The default ``say``: lines meant for a user, dropped (the API's callers pass their own)."""


@dataclass(frozen=True)
class How:
    """How a write command's flow runs: ``prefect`` None decides by configuration, True asks for
    Prefect, False refuses it; ingest's tasks on ``task_runner`` (a Dask cluster at ``dask_address``);
    ``say`` gets lines meant for the user."""

    prefect: bool | None = None
    verbose: bool = False
    say: Callable[[str], None] = say_nothing
    task_runner: str = "auto"
    dask_address: str | None = None

    def orchestrate(self) -> Orchestration:
        return orchestrate(self.prefect, self.task_runner, self.verbose, self.say)


DASK_DEADLINE_S = 10.0  # a scheduler's connection and handshake, before anything is created


def _require_answering(address: str, timeout_s: float = DASK_DEADLINE_S) -> None:
    """A Dask scheduler ``tcp://host:port`` that accepts a connection and answers Dask's handshake
    within ``timeout_s``, or a one-line error: Prefect's engine would wait 30 s on a closed port and
    fail the flow with a traceback, and on a port that accepts and never answers (or an HTTP
    server) wait for ever, its flow run Running and the warehouse's tables made."""
    import socket
    from urllib.parse import urlsplit

    from scorelake.transforms.errors import InvalidArgument

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
    from distributed import Client

    outcome: list[BaseException | None] = []

    def handshake() -> None:
        try:
            with Client(f"tcp://{parts.hostname}:{port}", timeout=timeout_s, set_as_default=False) as client:
                client.scheduler_info()
            outcome.append(None)
        except Exception as exc:  # noqa: BLE001  (distributed's OSError, TimeoutError, CommClosedError, ...)
            outcome.append(exc)

    # in a thread of its own: a port that accepts and never answers holds distributed's Client past its timeout
    caller = threading.Thread(target=handshake, name="scorelake-dask-handshake", daemon=True)
    caller.start()
    caller.join(timeout_s)
    if not outcome or outcome[0] is not None:
        why = type(outcome[0]).__name__ if outcome else "no answer"
        raise InvalidArgument(f"--dask-address {address}: no Dask scheduler answered within {timeout_s:g} s ({why})")


class _NoEngineTraceback(logging.Filter):
    """Drops the report with a traceback Prefect's engine logs of a failed flow or task run: the
    command says the error itself, in one line (``--verbose`` keeps Prefect's logs whole)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.exc_info is None


@contextmanager
def _cluster_said(how: How):
    """A flow run's failure said once, in one line: without ``verbose``, Prefect's engine does not
    log its traceback (nor, on a Dask cluster, does Dask's client each reconnection) while the run
    goes on, and a Dask cluster that fails the run mid-way (its scheduler killed, its connection
    lost) is a ``ClusterFailed``; what the run committed before stays, and running the command again
    finishes it (ingest and rescore skip what is stored). The loggers are as they were after a run
    that did not fail."""
    quiet = _NoEngineTraceback()
    engine = [logging.getLogger(name) for name in ("prefect.flow_runs", "prefect.task_runs")]
    dask = []
    if how.task_runner == "dask" and not how.verbose:  # the cluster's logs (40 lines a run) only with --verbose
        os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")  # its worker processes, started later
        import distributed  # noqa: F401  (its logging set up now, not over the levels set below)

        dask = [logging.getLogger(n) for n in dict.fromkeys(["distributed", *logging.root.manager.loggerDict])
                if n.split(".")[0] == "distributed"]
    levels = [logger.level for logger in dask]
    if not how.verbose:
        for logger in engine:
            logger.addFilter(quiet)
    for logger in dask:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    except ScorelakeError:
        raise
    except Exception as exc:  # noqa: BLE001
        if how.task_runner != "dask":
            raise
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise ClusterFailed(f"the Dask cluster at {how.dask_address} failed the run ({type(exc).__name__}"
                             f"{': ' + first if first else ''}); what was committed before stays: run the "
                             "command again to finish") from None
    else:  # after a failure Dask's client goes on reconnecting as the process ends: left quiet
        for logger, level in zip(dask, levels):
            logger.setLevel(level)
    finally:
        for logger in engine:
            logger.removeFilter(quiet)


def how_on(dask_address: str | None, prefect: bool | None, verbose: bool, say: Callable[[str], None],
           task_runner: str = "auto") -> How:
    """How a write command runs: its tasks on the Dask cluster whose scheduler is at ``dask_address``
    (checked to answer first), as a Prefect flow; without one, on ``task_runner``, where configuration says."""
    if dask_address is None:
        if task_runner == "dask":
            require_dask()
        return How(prefect, verbose, say, task_runner)
    require_dask()
    _require_answering(dask_address)
    return How(prefect, verbose, say, "dask", dask_address)


def require_dask() -> None:
    """``InvalidArgument`` saying how to install the cluster path when a plain install lacks it."""
    from importlib.util import find_spec

    from scorelake.transforms.errors import InvalidArgument

    missing = [name for name in ("distributed", "prefect_dask") if find_spec(name) is None]
    if missing:
        raise InvalidArgument(f"a Dask cluster (--task-runner dask, --dask-address) needs the dask extra, which "
                              f"brings {' and '.join(missing)}: pip install 'scorelake[dask]'")


def ingest(how: How, *, warehouse: str, runs_dirs: list[str], force: bool = False, group: str | None = None,
           progress: bool = False) -> IngestResult:
    """The ingest flow (``flow_bodies.ingest``), where ``how`` says; its result says how it ran."""
    chosen = how.orchestrate()
    args = {"runs_dirs": runs_dirs, "warehouse": warehouse, "force": force, "progress": progress, "group": group}
    if chosen.prefect:
        from scorelake.flows.prefect_flows import ingest_flow, make_task_runner

        with _cluster_said(how):
            result = ingest_flow.with_options(task_runner=make_task_runner(how.task_runner, how.dask_address))(**args)
    else:
        from scorelake.flows.flow_bodies import InProcess
        from scorelake.flows.flow_bodies import ingest as ingest_body

        result = ingest_body(InProcess(how.task_runner), **args)
    return replace(result, ran=chosen.describe())


def rescore(how: How, *, warehouse: str, policy_spec: str | None = None, policy_name: str | None = None,
            run_ids: list[str] | None = None) -> RescoreResult:
    """The re-score flow (``flow_bodies.rescore_policies``) of one policy (a JSON spec, or a stored
    one's name), or of every stored policy, where ``how`` says."""
    chosen = how.orchestrate()
    args = {"warehouse": warehouse, "policy_specs": [policy_spec] if policy_spec else None, "run_ids": run_ids,
            "policy_name": policy_name}
    if chosen.prefect:
        from scorelake.flows.prefect_flows import make_task_runner, rescore_flow

        with _cluster_said(how):
            result = rescore_flow.with_options(task_runner=make_task_runner(how.task_runner, how.dask_address))(**args)
    else:
        from scorelake.flows.flow_bodies import InProcess, rescore_policies

        result = rescore_policies(InProcess(how.task_runner), **args)
    return replace(result, ran=chosen.describe())


def rejudge(how: How, *, warehouse: str, judge: str, settings: dict, run_ids: list[str] | None = None,
            only_errors: bool = False, concurrency: int = 8, api_key_env: str | None = None, retries: int = 5,
            backoff: float = 0.5, progress: bool = False, repeat: int = 1) -> RejudgeResult:
    """The rejudge flow (``flow_bodies.rejudge``) of the judge ``judge`` of ``settings`` (asked
    ``repeat`` times), where ``how`` says."""
    chosen = how.orchestrate()
    args = {"warehouse": warehouse, "judge": judge, "settings": settings, "run_ids": run_ids,
            "only_errors": only_errors, "concurrency": concurrency, "api_key_env": api_key_env, "retries": retries,
            "backoff": backoff, "progress": progress, "repeat": repeat}
    if chosen.prefect:
        from scorelake.flows.prefect_flows import make_task_runner, rejudge_flow

        with _cluster_said(how):
            result = rejudge_flow.with_options(task_runner=make_task_runner(how.task_runner, how.dask_address))(**args)
    else:
        from scorelake.flows.flow_bodies import InProcess
        from scorelake.flows.flow_bodies import rejudge as rejudge_body

        result = rejudge_body(InProcess(), **args)
    return replace(result, ran=chosen.describe())


def migrate(warehouse: str) -> str | None:
    """Upkeep, always in this process (a step, not a flow): a warehouse of the former table format
    converted; where its former files were kept, or None."""
    from scorelake.flows import flow_bodies
    from scorelake.storage import Store

    kept = flow_bodies.migrate(Store(warehouse))
    return str(kept) if kept else None


def compact(warehouse: str) -> None:
    """Upkeep, in this process: replaced ingests' rows dropped, small files bin-packed, old ones vacuumed."""
    from scorelake.flows import flow_bodies
    from scorelake.storage import Store

    flow_bodies.compact(Store(warehouse))


def record_reviews(warehouse: str, reviews: list, unreadable: Sequence[str] = (), source: str = "") -> ReviewResult:
    """People's verdicts checked and stored as one write step, in this process."""
    from scorelake.flows import flow_bodies
    from scorelake.storage import Store

    return flow_bodies.record_reviews(Store(warehouse), reviews, unreadable, source)


def serve(runs_dirs: list[str], warehouse: str, name: str, cron: str | None, interval: float | None,
          verbose: bool, say, notify_url: str | None = None, max_drop: float = 0.0,
          export_url: str | None = None) -> None:
    """Serve the scheduled refresh as a Prefect deployment: it needs a running Prefect server."""
    from scorelake.transforms.errors import InvalidArgument

    if not configured_api_url():  # a temporary server has no scheduler (Prefect refuses to schedule on one)
        raise InvalidArgument("serve needs a running Prefect server: start one (`prefect server start`) and set "
                              "PREFECT_API_URL")
    orchestrate(True, "threads", verbose, say)  # (after the refusal: it would announce a temporary server)
    from scorelake.flows.prefect_flows import serve as serve_deployment

    say(f"serving deployment 'scorelake-refresh/{name}' -> {warehouse}")
    serve_deployment(runs_dirs, warehouse, name, cron, interval, notify_url, max_drop, export_url)
