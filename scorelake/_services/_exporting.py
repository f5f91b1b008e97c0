"""Verdicts out to where people already look: an OpenTelemetry backend (``export_otlp``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from scorelake._services._reads import Reads
from scorelake.flows.runtime import say_nothing
from scorelake.transforms.names import RECORDED
from scorelake.transforms.results import ExportResult


class Exporting:
    def __init__(self, reads: Reads):
        self._reads = reads

    def export_otlp(self, endpoint: str, runs: Sequence[str] | None = None, policy: str = RECORDED, *,
                    say: Callable[[str], None] = say_nothing) -> ExportResult:
        """Send the verdicts of ``runs`` (every run by default) under ``policy`` to an OpenTelemetry
        backend's OTLP/HTTP traces endpoint (``http://host:4318/v1/traces``): each scenario a span,
        each verdict on it (the composite, each signal, each person's standing review) a
        ``gen_ai.evaluation.result`` event; those sent before to the endpoint under the policy are not
        sent again (a killed export resumes). Needs ``scorelake[otlp]``."""
        from scorelake.pipeline import export_otlp

        self._reads.writable()
        with self._reads.connection():
            policy_id = self._reads.scoped(policy, *(runs or ()))
        scenarios, events = export_otlp(self._reads.store, endpoint, policy_id, policy, runs, say)
        return ExportResult(endpoint, policy, scenarios, events)
