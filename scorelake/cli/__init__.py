"""The ``scorelake`` command line: a thin face over the Python API (``scorelake.Warehouse``).

One module per group of commands; ``_options`` holds the options they share and ``_app`` the app,
its error handling and output formats. Read-only commands import neither Prefect nor the scoring
code: each command imports what it uses. The commands are registered here, in the order
``scorelake --help`` lists them.
"""

from scorelake.cli import _compare, _evidence, _judges, _latency, _query, _review, _write
from scorelake.cli._app import app

COMMANDS = (
    (_query.sql, None), (_query.rates, None), (_query.summary, None), (_compare.compare_runs, "compare"), (_compare.gate, None),
    (_query.history, None), (_compare.flaky, None), (_query.passk, None), (_query.report, None), (_query.check, None), (_query.log, None),
    (_query.policies, None), (_latency.latency, None), (_latency.voice, None), (_latency.cost, None),
    (_evidence.show, None),
    (_evidence.view, None), (_judges.judges, None),
    (_judges.compare_judges, "compare-judges"), (_write.demo, None), (_write.ingest, None), (_write.rescore, None),
    (_judges.rejudge, None), (_review.review, None), (_review.reviews, None), (_write.compact, None),
    (_write.migrate, None), (_write.serve, None), (_write.export, None),
)
for function, name in COMMANDS:
    app.command(name)(function)

__all__ = ["app"]
