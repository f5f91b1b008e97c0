"""scorelake: stored evaluation runs as a warehouse that can be re-scored and queried.

    >>> import scorelake
    >>> wh = scorelake.open("data/warehouse")              # or "s3://bucket/prefix", as_of=12
    >>> wh.ingest("data/runs")                              # new or changed runs only
    >>> wh.rates(by="domain", run="eval_20260904_080000")   # a polars DataFrame
    >>> wh.scenarios(policy="recorded").to_pandas()
    >>> wh.rejudge("mended", only_errors=True)              # ask the judge again where it failed
    >>> wh.rescore("mended", judge="mended")

The parts: ``scorelake.transforms`` (sources, scoring, judging, warehouse, pipeline, analysis, render),
``scorelake.flows`` (the Prefect flows and the command line), ``scorelake.sql`` (the views).
"""

from scorelake._api import CheckResult, Evidence, Warehouse, open
from scorelake.transforms.errors import (
    InvalidArgument,
    JudgeRefused,
    JudgeUnavailable,
    NotFound,
    NothingFound,
    ScorelakeError,
    WarehouseBusy,
    WarehouseMissing,
)

__version__ = "0.1.0"

__all__ = ["CheckResult", "Evidence", "InvalidArgument", "JudgeRefused", "JudgeUnavailable", "NotFound", "NothingFound", "ScorelakeError",
           "Warehouse", "WarehouseBusy", "WarehouseMissing", "__version__", "open"]
