"""The Python API: a warehouse opened by path or URL, its answers as Polars DataFrames.

``Warehouse`` is a facade: each method hands the call to one of its named services
(``scorelake/_services``: reading, analysis, ingesting, scoring, judging, reviewing, maintenance),
which read through one shared connection and write through the flows. Every ``scorelake`` command is
a thin adapter over a method here. Reading imports neither Prefect nor the scoring code; writing
runs the flows in-process, or as Prefect flow runs when a Prefect API is configured (or asked for).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from scorelake._services import (
    Analysis,
    Exporting,
    Ingesting,
    Judging,
    Maintenance,
    Reading,
    Reads,
    Reviewing,
    Scoring,
)
from scorelake.storage import QueryLimits, Store
from scorelake.transforms.errors import InvalidArgument

if TYPE_CHECKING:
    import duckdb

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


def _handed(service: str, method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[Warehouse, P], R]:
    """A ``Warehouse`` method that hands its call to ``method`` of the service named ``service``
    (its signature and docstring kept, for ``help()`` and editors)."""
    @functools.wraps(method)
    def handed(self: Warehouse, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(getattr(self, service), *args, **kwargs)
    return handed


class Warehouse:
    """A scorelake warehouse: ``scorelake.open(path_or_url, as_of=None)``.

    Reads answer as the warehouse stands now, or as it stood at ``as_of`` (a version that
    ``log()`` lists, or an ISO timestamp). Writes (``ingest``, ``rescore``, ``compact``) need the
    current version. Each method is one of a service's (``reading``, ``analysis``, ``ingesting``,
    ``scoring``, ``judging``, ``reviewing``, ``maintenance``); the services are there to use too.
    """

    def __init__(self, location: str | Path | None = None, as_of: str | int | None = None, *,
                 memory_limit: str | None = None, timeout: float | None = None):
        as_of = None if as_of is None else str(as_of)
        if as_of is not None and not as_of.strip():
            raise InvalidArgument("as_of is empty: give a version (see `scorelake log`) or a timestamp")
        self._reads = Reads(Store(location, QueryLimits.of(memory_limit, timeout)), as_of)
        self.reading = Reading(self._reads)
        self.analysis = Analysis(self._reads, self.reading)
        self.ingesting = Ingesting(self._reads)
        self.scoring = Scoring(self._reads)
        self.judging = Judging(self._reads)
        self.reviewing = Reviewing(self._reads)
        self.maintenance = Maintenance(self._reads)
        self.exporting = Exporting(self._reads)

    @property
    def location(self) -> str:
        """The warehouse's absolute path, or its URL."""
        return self._reads.location

    @property
    def as_of(self) -> str | None:
        return self._reads.as_of

    def __repr__(self) -> str:
        return f"scorelake.open({self.location!r}" + (f", as_of={self.as_of!r})" if self.as_of else ")")

    def exists(self) -> bool:
        return self._reads.store.tables.exists()

    @contextmanager
    def connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only DuckDB connection to the views (docs/reference/views.md); nested uses share one."""
        with self._reads.connection() as con:
            yield con

    # reading
    run = _handed("reading", Reading.run)
    runs = _handed("reading", Reading.runs)
    sql = _handed("reading", Reading.sql)
    policy_id = _handed("reading", Reading.policy_id)
    policy_judge = _handed("reading", Reading.policy_judge)
    scenarios = _handed("reading", Reading.scenarios)
    verdicts = _handed("reading", Reading.verdicts)
    run_scenarios = _handed("reading", Reading.run_scenarios)
    search = _handed("reading", Reading.search)
    evidence = _handed("reading", Reading.evidence)
    # analysis
    rates = _handed("analysis", Analysis.rates)
    headlines = _handed("analysis", Analysis.headlines)
    declare_task_map = _handed("analysis", Analysis.declare_task_map)
    task_maps = _handed("analysis", Analysis.task_maps)
    selective_rates = _handed("analysis", Analysis.selective_rates)
    ppi_rates = _handed("analysis", Analysis.ppi_rates)
    judge_errors = _handed("analysis", Analysis.judge_errors)
    compare = _handed("analysis", Analysis.compare)
    gate = _handed("analysis", Analysis.gate)
    passk = _handed("analysis", Analysis.passk)
    history = _handed("analysis", Analysis.history)
    flaky = _handed("analysis", Analysis.flaky)
    summary = _handed("analysis", Analysis.summary)
    report = _handed("analysis", Analysis.report)
    latency = _handed("analysis", Analysis.latency)
    voice = _handed("analysis", Analysis.voice)
    voice_of = _handed("analysis", Analysis.voice_of)
    speech_timeline = _handed("analysis", Analysis.speech_timeline)
    recording = _handed("analysis", Analysis.recording)
    turns = _handed("analysis", Analysis.turns)
    latency_histogram = _handed("analysis", Analysis.latency_histogram)
    slowest_exchanges = _handed("analysis", Analysis.slowest_exchanges)
    judge_scores = _handed("analysis", Analysis.judge_scores)
    cost = _handed("analysis", Analysis.cost)
    # writing: ingest, scoring, judging
    ingest = _handed("ingesting", Ingesting.ingest)
    define_policy = _handed("scoring", Scoring.define_policy)
    rescore = _handed("scoring", Scoring.rescore)
    policies = _handed("scoring", Scoring.policies)
    rejudge = _handed("judging", Judging.rejudge)
    judges = _handed("judging", Judging.judges)
    compare_judges = _handed("judging", Judging.compare_judges)
    judge_stability = _handed("judging", Judging.judge_stability)
    calibrate_judge = _handed("judging", Judging.calibrate_judge)
    export_otlp = _handed("exporting", Exporting.export_otlp)
    calibrations = _handed("judging", Judging.calibrations)
    # people's verdicts
    review = _handed("reviewing", Reviewing.review)
    undo_review = _handed("reviewing", Reviewing.undo_review)
    import_reviews = _handed("reviewing", Reviewing.import_reviews)
    reviews = _handed("reviewing", Reviewing.reviews)
    review_queue = _handed("reviewing", Reviewing.review_queue)
    review_progress = _handed("reviewing", Reviewing.review_progress)
    # maintenance
    log = _handed("maintenance", Maintenance.log)
    version = _handed("maintenance", Maintenance.version)
    versions = _handed("maintenance", Maintenance.versions)
    check = _handed("maintenance", Maintenance.check)
    migrate = _handed("maintenance", Maintenance.migrate)
    compact = _handed("maintenance", Maintenance.compact)
    serve = _handed("maintenance", Maintenance.serve)


def open(location: str | Path | None = None, as_of: str | int | None = None, *,  # noqa: A001
         memory_limit: str | None = None, timeout: float | None = None) -> Warehouse:
    """The warehouse at ``location`` (a directory, relative to the current one, or a URL such as
    ``s3://bucket/prefix``; default ``$SCORELAKE_WAREHOUSE``, else ``data/warehouse``), as it
    stands, or as it stood at ``as_of`` (a version or an ISO timestamp). Its queries may take
    ``memory_limit`` (DuckDB's, e.g. "4GB") and ``timeout`` seconds each (defaults: see ``QueryLimits``)."""
    return Warehouse(location, as_of, memory_limit=memory_limit, timeout=timeout)
