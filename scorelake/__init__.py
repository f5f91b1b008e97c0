"""scorelake: stored evaluation runs as a warehouse that can be re-scored and queried.

    >>> import scorelake
    >>> wh = scorelake.open("data/warehouse")              # or "s3://bucket/prefix", as_of=12
    >>> wh.ingest("data/runs")                              # new or changed runs only
    >>> wh.rates(by="domain", run="eval_20260904_080000")   # a polars DataFrame
    >>> wh.scenarios(policy="recorded").to_pandas()
    >>> wh.rejudge("mended", only_errors=True)              # ask the judge again where it failed
    >>> wh.rescore("mended", judge="mended")

The floors, each importing only those below it: ``scorelake.cli`` and ``scorelake.web`` (the command
line and the viewer) over this API (``_api``), over ``scorelake.flows`` (the Prefect flows and the
flow bodies), over ``scorelake.pipeline`` (the steps that read and write the tables), over
``scorelake.judge_client`` and ``scorelake.present`` (text and HTML), over ``scorelake.storage``
(the tables, with ``scorelake.sql``'s views), over ``scorelake.transforms`` (sources, scoring,
judging, analysis, voice; then columns, names, results).
"""

from typing import Any

from scorelake.transforms.errors import (
    ClusterFailed,
    InvalidArgument,
    JudgeRefused,
    JudgeUnavailable,
    NotFound,
    NothingFound,
    ScorelakeError,
    WarehouseBusy,
    WarehouseMissing,
)
from scorelake._sample import sample_runs
from scorelake.transforms.results import (
    CheckResult,
    Evidence,
    Headline,
    ExportResult,
    IngestResult,
    ItemVerdict,
    JudgeInput,
    Judgement,
    Refusal,
    Regrouped,
    RejudgeResult,
    RescoreResult,
    ReviewResult,
    ScenarioRow,
    SessionReport,
    SpeechTimeline,
    StandingReview,
    Task,
    ToolCall,
    Turn,
)

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # The API on first use: a process that only imports a module below it (an ingest's worker
    # process) does not pay for the API's imports (DuckDB, the flows, the judge's client); nor
    # every command for the comparison's results (the analysis, 9 ms).
    if name in ("Warehouse", "open"):
        from scorelake import _api

        return getattr(_api, name)
    if name in ("GateResult", "Regression"):
        from scorelake.transforms import analysis

        return getattr(analysis, name)
    raise AttributeError(f"module 'scorelake' has no attribute {name!r}")

__all__ = ["CheckResult", "ClusterFailed", "Evidence", "ExportResult", "GateResult", "Headline", "IngestResult", "InvalidArgument",
           "ItemVerdict", "JudgeInput", "JudgeRefused", "JudgeUnavailable", "Judgement", "NotFound", "NothingFound",
           "Refusal", "Regression", "Regrouped", "RejudgeResult", "RescoreResult", "ReviewResult", "ScenarioRow",
           "ScorelakeError", "SessionReport", "SpeechTimeline", "StandingReview", "Task", "ToolCall", "Turn",
           "Warehouse", "WarehouseBusy", "WarehouseMissing", "__version__", "open", "sample_runs"]
