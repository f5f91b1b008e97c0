"""Verdicts out as OpenTelemetry evaluation events (``scorelake export otlp``): each scenario a span
(a run's spans in one trace, under a span for the run), each verdict on it (the composite, each
signal, and each person's standing review) a ``gen_ai.evaluation.result`` event with the GenAI
semantic conventions' attributes (``gen_ai.evaluation.name``, ``.score.value``, ``.score.label``,
``.explanation``) and scorelake's run, scenario and policy; sent with the OpenTelemetry SDK's OTLP
exporter (the extra ``scorelake[otlp]``).

Resumable: a batch of scenarios is recorded (``exports``) once the backend took it, and a scenario
recorded for the endpoint and policy is not sent again. Every id is derived from what it names (the
trace from the run and policy, a span from its scenario), so a batch sent again after a kill, before
it was recorded, carries the same ids: a backend that keys spans by id (Phoenix, Jaeger, Tempo)
stores it once."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from scorelake.pipeline._migrate import prepare_for_writing
from scorelake.pipeline._reviews import REVIEW_LOCK_WAIT_S
from scorelake.storage import Store, crash_point
from scorelake.transforms.columns import frame
from scorelake.transforms.errors import InvalidArgument, ScorelakeError
from scorelake.transforms.registry import SIGNALS

EVENT = "gen_ai.evaluation.result"
# scenarios a batch sends (and then records), about 16,000 events
BATCH_SCENARIOS = int(os.environ.get("SCORELAKE_EXPORT_BATCH", 2000))


class ExportFailed(ScorelakeError):
    """The backend did not take a batch: what it took before is recorded, the rest is not sent."""

    exit_code = 1


@dataclass(frozen=True)
class Verdict:
    """One evaluation result: what was evaluated, its score and label, why, and who said it."""

    name: str  # is_successful, a signal, or a reviewed item (nl_assertion#2)
    value: float | None
    label: str  # pass | fail | not_applicable
    explanation: str | None
    evaluator: str  # scorelake (the runner's rules under the policy), or human:NAME


def _label(passed: bool | None) -> str:
    return "not_applicable" if passed is None else "pass" if passed else "fail"


def scenario_verdicts(row: dict, reviews: list[dict]) -> list[Verdict]:
    """A scenario's verdicts: the composite, each signal it has (its value: a verdict 1 or 0, a pass
    rate as it is), and people's standing reviews, from its ``scenario_scores`` row (with the
    policy's judge's ``judge_reason``) and its ``reviews`` rows."""
    found = [Verdict("is_successful", None if row["is_successful"] is None else float(row["is_successful"]),
                     _label(row["is_successful"]), None, "scorelake")]
    for signal in SIGNALS:
        value = row.get(signal.value)
        if value is None and signal.name not in (row.get("failed") or []):
            continue
        passed = value == 1.0 if signal.pass_rate else bool(value)
        why = row.get("judge_reason") if signal.name in ("judge_passed", "nl_assertion") else None
        found.append(Verdict(signal.name, None if value is None else float(value), _label(passed), why, "scorelake"))
    for review in reviews:
        name = review["signal"] + (f"#{review['assertion']}" if review["assertion"] is not None else "")
        passed = review["verdict"] == "pass"
        found.append(Verdict(name, float(passed), _label(passed), review["note"], f"human:{review['reviewer']}"))
    return found


def _id(bits: int, *parts: str) -> int:
    """An id of ``bits`` bits derived from ``parts`` (never 0, which OpenTelemetry reserves)."""
    digest = int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[: bits // 8], "big")
    return digest or 1


def _spans(rows: list[dict], reviews: dict[tuple[str, str], list[dict]], policy: str, started_runs: set[str],
           resource) -> tuple[list, dict[tuple[str, str], int]]:
    """The spans of a batch of scenario rows (and of each run not yet sent), and each scenario's
    event count."""
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, TraceFlags

    scope = InstrumentationScope("scorelake")
    now = int(datetime.now(UTC).timestamp() * 1e9)
    spans, counts = [], {}
    for row in rows:
        run, scenario = row["run_id"], row["scenario_name"]
        trace = _id(128, "trace", run, policy)
        run_span = SpanContext(trace, _id(64, "run", run, policy), is_remote=False, trace_flags=TraceFlags(1))
        if run not in started_runs:
            started_runs.add(run)
            spans.append(ReadableSpan(name=f"scorelake run {run}", context=run_span, resource=resource,
                                      attributes={"scorelake.run_id": run, "scorelake.policy": policy},
                                      kind=SpanKind.INTERNAL, start_time=now, end_time=now,
                                      instrumentation_scope=scope))
        context = SpanContext(trace, _id(64, "scenario", run, scenario, policy), is_remote=False,
                              trace_flags=TraceFlags(1))
        base = {"scorelake.run_id": run, "scorelake.scenario": scenario, "scorelake.policy": policy,
                "scorelake.domain": row["domain"] or ""}
        events = []
        for verdict in scenario_verdicts(row, reviews.get((run, scenario), [])):
            attributes = {**base, "gen_ai.evaluation.name": verdict.name, "gen_ai.evaluation.score.label": verdict.label,
                          "scorelake.evaluator": verdict.evaluator}
            if verdict.value is not None:
                attributes["gen_ai.evaluation.score.value"] = verdict.value
            if verdict.explanation:
                attributes["gen_ai.evaluation.explanation"] = verdict.explanation
            events.append(Event(EVENT, attributes, timestamp=now))
        counts[(run, scenario)] = len(events)
        spans.append(ReadableSpan(name=f"scorelake scenario {scenario}", context=context, parent=run_span,
                                  resource=resource, attributes=base, events=events, kind=SpanKind.INTERNAL,
                                  start_time=now, end_time=now, instrumentation_scope=scope))
    return spans, counts


def require_otlp() -> None:
    """Refuse in one line, naming the extra, where the OpenTelemetry SDK or its OTLP exporter is missing."""
    from importlib.util import find_spec

    try:
        found = all(find_spec(name) for name in ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"))
    except ModuleNotFoundError:
        found = False
    if not found:
        raise InvalidArgument("export otlp needs the OpenTelemetry SDK: pip install 'scorelake[otlp]'")


def export_otlp(store: Store, endpoint: str, policy_id: str, policy: str, runs: Sequence[str] | None,
                say: Callable[[str], None] = lambda line: None, timeout: float = 30.0) -> tuple[int, int]:
    """Send the verdicts of ``runs`` (every run when None) under the policy not yet sent to
    ``endpoint`` (an OTLP/HTTP traces URL, ``.../v1/traces``); (scenarios, events) sent."""
    require_otlp()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace.export import SpanExportResult

    store.tables.require(writing=True)
    with store.lock.hold(REVIEW_LOCK_WAIT_S):  # (a warehouse an older scorelake wrote has no exports table yet)
        prepare_for_writing(store)
        store.views.build()
    params = {"policy_id": policy_id, "endpoint": endpoint, "runs": list(runs) if runs else None}
    with store.views.connect() as con:
        rows = store.views.query(con, "export_verdicts", **params).to_dicts()
        reviewed = store.views.query(con, "export_reviews", runs=params["runs"])
        sent_runs = set(store.views.query(con, "export_runs", policy_id=policy_id, endpoint=endpoint)["run_id"])
    reviews: dict[tuple[str, str], list[dict]] = {}
    for review in reviewed.iter_rows(named=True):
        reviews.setdefault((review["run_id"], review["scenario_name"]), []).append(review)
    exporter = OTLPSpanExporter(endpoint=endpoint, timeout=timeout)
    resource = Resource.create({"service.name": "scorelake"})
    scenarios = events = 0
    try:
        for start in range(0, len(rows), BATCH_SCENARIOS):
            batch = rows[start:start + BATCH_SCENARIOS]
            spans, counts = _spans(batch, reviews, policy, sent_runs, resource)
            if exporter.export(spans) is not SpanExportResult.SUCCESS:
                raise ExportFailed(f"{endpoint} did not take a batch of {len(batch)} scenarios; {scenarios} sent "
                                   "before it are recorded, and running export again sends the rest")
            crash_point("export")
            now = datetime.now(UTC)
            with store.lock.hold(REVIEW_LOCK_WAIT_S):
                store.tables.append("exports", frame("exports", [
                    {"endpoint": endpoint, "policy_id": policy_id, "run_id": run, "scenario_name": scenario,
                     "verdicts": n, "exported_at": now} for (run, scenario), n in counts.items()]))
                store.views.build()  # what was recorded is what a resumed export reads
            scenarios, events = scenarios + len(batch), events + sum(counts.values())
            say(f"{scenarios} of {len(rows)} scenarios sent ({events} evaluation events)")
    finally:
        exporter.shutdown()
        if scenarios:
            with store.lock.hold(REVIEW_LOCK_WAIT_S):
                store.log.record("export", f"{scenarios} scenarios' verdicts ({events} events) sent to {endpoint}")
                store.views.build()
    return scenarios, events
