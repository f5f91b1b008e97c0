"""The SQL that repeats per rate, signal or metric, generated from their declarations (registry.py,
columns.VOICE_METRICS and FAILURE_CAUSES).

A view file says ``{{ name }}`` where one of these goes (dbt's macros, without Jinja): the files stay
one view each and readable, and a new signal reaches every view without an edit to them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from scorelake.transforms.columns import FAILURE_CAUSES, VOICE_METRICS
from scorelake.transforms.registry import RATES, SIGNALS


def _rate_columns() -> str:
    """rate_rollup: each rate's counts, the rate over its own denominator and its Wilson interval."""
    return ",\n    ".join(
        f"{r.prefix}_passed, {r.prefix}_total, {r.prefix}_passed / nullif({r.prefix}_total, 0) AS {r.rate},\n"
        f"    wilson_low({r.prefix}_passed, {r.prefix}_total) AS {r.interval}_low,\n"
        f"    wilson_high({r.prefix}_passed, {r.prefix}_total) AS {r.interval}_high" for r in RATES)


def _rate_list() -> str:
    """Each rate's counts and rate, as a rate_rollup query selects them."""
    return ",\n       ".join(f"{r.prefix}_passed, {r.prefix}_total, {r.rate}" for r in RATES)


def _signal_rows() -> str:
    """signal_rates: one struct per signal, to unnest into a row each."""
    return ",\n        ".join(
        f"{{'signal_order': {n}, 'signal': '{s.name}', 'unit': '{s.unit}', "
        f"'passed': {s.rate}_passed, 'total': {s.rate}_total}}" for n, s in enumerate(SIGNALS, 1))


def _verdict(side: str, s) -> str:
    return f"{side}.{s.value} >= 1" if s.pass_rate else f"{side}.{s.value}"


def _signal_flips() -> str:
    """run_diff: each signal's verdict in both runs (a pass rate as its pass), and whether it flipped."""
    return ",\n    ".join(
        f"{_verdict('a', s)} AS {s.name}_a,\n    {_verdict('b', s)} AS {s.name}_b,\n"
        f"    ({_verdict('a', s)}) IS DISTINCT FROM ({_verdict('b', s)}) AS {s.name}_flipped" for s in SIGNALS)


def _signal_values() -> str:
    """scenario_scores: each signal's value under the policy, with its item counts where it has items
    (a pass-rate signal's passed items recounted from the policy's rate: a judge or a review moves it)."""
    columns = []
    for s in SIGNALS:
        columns.append(f"sc.{s.value}")
        if s.items:
            passed, total = s.items
            columns.append(f"CAST(round(sc.{s.value} * s.{total}) AS BIGINT) AS {passed}" if s.pass_rate else
                           f"CASE WHEN sc.{s.value} IS NOT NULL THEN s.{passed} END AS {passed}")
            columns.append(f"CASE WHEN sc.{s.value} IS NOT NULL THEN s.{total} END AS {total}")
    return ",\n    ".join(columns)


def _voice_metrics() -> str:
    """scenario_voice: each declared voice metric of the scenario (columns.VOICE_METRICS and FAILURE_CAUSES)."""
    return ", ".join(f"v.{c.name}" for c in VOICE_METRICS)


def _voice_rollups() -> str:
    """run_voice: each voice metric that rolls up, rolled up over the scenario rows ``v``."""
    return ",\n           ".join(c.rollup_sql() for c in VOICE_METRICS if c.rollup)


def _holds(cause) -> str:
    return f"coalesce(({cause.holds}), false)"


def _failure_causes_held() -> str:
    """scenario_failure_causes: the names of the causes that hold, in the declared order (the last,
    logic, where no other does)."""
    *causes, fallback = FAILURE_CAUSES
    held = [f"CASE WHEN {_holds(c)} THEN '{c.name}' END" for c in causes]
    held.append(f"CASE WHEN NOT ({' OR '.join(_holds(c) for c in causes)}) THEN '{fallback.name}' END")
    return "list_filter([\n        " + ",\n        ".join(held) + "], lambda c: c IS NOT NULL)"


def _failure_cause_evidence() -> str:
    """scenario_failure_causes: each held cause's evidence, in order."""
    cases = " ".join(f"WHEN '{c.name}' THEN {c.evidence}" for c in FAILURE_CAUSES)
    return f"list_transform(failure_causes, lambda c: CASE c {cases} END)"


def _failure_cause_counts() -> str:
    """run_voice: the failed scenarios by primary cause."""
    return ",\n           ".join(f"count(*) FILTER (WHERE c.failure_cause = '{c.name}') AS failed_{c.name}"
                                   for c in FAILURE_CAUSES)


FRAGMENTS: dict[str, Callable[[], str]] = {
    "failure_causes_held": _failure_causes_held,
    "failure_cause_evidence": _failure_cause_evidence,
    "failure_cause_counts": _failure_cause_counts,
    "rate_columns": _rate_columns,
    "rate_list": _rate_list,
    "signal_rows": _signal_rows,
    "signal_flips": _signal_flips,
    "signal_values": _signal_values,
    "voice_metrics": _voice_metrics,
    "voice_rollups": _voice_rollups,
}

_PLACE = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def render(sql: str) -> str:
    """``sql`` with each ``{{ name }}`` of a fragment replaced by it. Other names are the caller's to
    fill: a staging view's table (``{{ runs }}``), a query's part (``{{ picks }}``)."""
    return _PLACE.sub(lambda found: FRAGMENTS[found[1]]() if found[1] in FRAGMENTS else found[0], sql)
