"""Comparing two stored runs like with like and gating one on the other: the API's compare and gate,
and the scheduled refresh's gate of each new run against the run before it in its group."""

from __future__ import annotations

import dataclasses
from typing import Sequence

import duckdb
import polars as pl

from scorelake.present import gate_summary
from scorelake.storage import Store
from scorelake.transforms.analysis import Comparison, GateResult, Regression, check_alpha, compare, gate_tests
from scorelake.transforms.errors import InvalidArgument, NotFound, check_range


def comparison(store: Store, con: duckdb.DuckDBPyConnection, run_a: str, run_b: str, policy_id: str,
               alpha: float = 0.05, all_scenarios: bool = False, task_map: str | None = None) -> Comparison:
    """Run B against A under the policy ``policy_id`` (see ``analysis.compare``); with ``task_map``,
    their scenarios paired as that declared map says (runs of two harnesses), not by name."""
    check_alpha(alpha)
    scope = dict(policy_id=policy_id, run_a=run_a, run_b=run_b)
    if task_map is not None:
        if store.views.query(con, "task_maps", map_name=task_map).is_empty():
            known = ", ".join(store.views.query(con, "task_maps", map_name=None)["map_name"]) or "none"
            raise NotFound(f"no task map named '{task_map}' (maps: {known}); declare one: --map FILE (columns a, b)")
        if all_scenarios:
            raise InvalidArgument("--all pairs by name; a task map pairs as it says: choose one")
    pairs = (store.views.query(con, "compare_pairs_mapped", map_name=task_map, **scope) if task_map is not None
             else store.views.query(con, "compare_pairs", **scope))
    lineage = store.views.query(con, "compare_lineage", run_a=run_a, run_b=run_b)
    rates = store.views.query(con, "compare_rates", **scope) if all_scenarios else None
    latencies = store.views.query(con, "compare_latency", run_a=run_a, run_b=run_b)
    voice = store.views.query(con, "compare_voice", run_a=run_a, run_b=run_b)
    compared = compare(pairs, lineage, run_a, run_b, alpha, rates, latencies, voice)
    if task_map is None:
        return compared
    matched = pairs.filter(pl.col("in_a") & pl.col("in_b"))
    return dataclasses.replace(compared, task_map=task_map,
                               counterparts=dict(zip(matched["scenario_name"], matched["counterpart"], strict=True)))


# Below this many words said in the paired turns of either run, a word error rate moves by whole
# points with one word (2 points a word at 50), so the gate calls no WER rise on it.
MIN_WER_WORDS = 50


def gate(compared: Comparison, max_drop: float = 0.0, domains: Sequence[str] = (),
         max_p95_rise: float | None = None, max_overlap_rise: float | None = None,
         max_wer_rise: float | None = None, correction: str = "holm") -> GateResult:
    """Whether run B may replace run A: not when a domain (of ``domains``, default every one) or the
    whole run regressed beyond the noise by more than ``max_drop`` points, nor (with ``max_p95_rise``)
    when its p95 response latency rose by more than that many milliseconds, nor (with
    ``max_overlap_rise``) its mean overlap of speech per scenario by more than that many seconds, nor
    (with ``max_wer_rise``) the word error rate of what the agent heard by more than that many points,
    where both runs' turns paired with what the user said hold at least ``MIN_WER_WORDS`` words.

    The composite rate is tested once per watched domain and once for the whole run: their p-values
    are corrected for being many (``correction``: Holm's, the chance of any false alarm held at alpha;
    ``bh``, Benjamini-Hochberg's, the share of false alarms among the alarms; ``none``), and a domain
    regressed only where its corrected p-value is below alpha (``analysis.gate_tests``). The latency
    and voice limits are limits, not tests: nothing to correct."""
    check_range("max-drop", max_drop, 0, 100)  # points
    check_range("max-p95-rise", max_p95_rise, 0)  # milliseconds
    check_range("max-overlap-rise", max_overlap_rise, 0)  # seconds
    check_range("max-wer-rise", max_wer_rise, 0, 100)  # points
    known = set(compared.deltas["domain"])
    unknown = sorted(set(domains) - known)
    if unknown:
        raise InvalidArgument(f"--domain {', '.join(unknown)}: not in both runs (domains: "
                              f"{', '.join(sorted(known - {'(all)'}))})")
    watched = (set(domains) or known) | {"(all)"}
    tests = gate_tests(compared.deltas.filter(pl.col("domain").is_in(sorted(watched))), compared.alpha, correction)
    regressed = dict(tests.filter(pl.col("regressed")).select("domain", "adjusted_p").iter_rows())
    regressions = [{**r, "adjusted_p": regressed[r["domain"]]} for r in compared.deltas.iter_rows(named=True)
                   if r["domain"] in regressed and -(r["delta"] or 0) * 100 > max_drop]
    broken = {r["domain"]: [n for n in compared.broken if compared.domains_of_flips.get(n) == r["domain"]]
              for r in regressions if r["domain"] != "(all)"}
    if max_p95_rise is not None and compared.latency is not None:
        regressions += [{"domain": r["domain"], "label": "slower", "p95_a_ms": r["p95_a_ms"], "p95_b_ms": r["p95_b_ms"],
                         "p95_rise_ms": r["p95_b_ms"] - r["p95_a_ms"]} for r in compared.latency.iter_rows(named=True)
                        if r["domain"] in watched and r["p95_b_ms"] - r["p95_a_ms"] > max_p95_rise]
    for limit, label, rise in ((max_overlap_rise, "overlap", "overlap_rise_s"), (max_wer_rise, "wer", "wer_rise_pts")):
        if limit is not None and compared.voice is not None:
            regressions += [{"domain": r["domain"], "label": label, **r} for r in compared.voice.iter_rows(named=True)
                            if r["domain"] in watched and r[rise] is not None and r[rise] > limit
                            and (label != "wer" or min(r["words_a"], r["words_b"]) >= MIN_WER_WORDS)]
    return GateResult(not regressions, [Regression(r["domain"], r["label"], r) for r in regressions], broken,
                      compared, tests, correction)


def previous_runs(store: Store, run_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(the run before it in its group, the run) for each of ``run_ids`` that has one, by session start."""
    runs = store.tables.committed_runs().sort("session_started_at", "run_id")
    pairs = []
    for run_id in run_ids:
        row = runs.filter(pl.col("run_id") == run_id)
        if row.is_empty():
            continue
        group, started = row["run_group"][0], row["session_started_at"][0]
        earlier = runs.filter(pl.col("run_group").eq_missing(group) & (pl.col("run_id") != run_id)
                              & (pl.col("session_started_at") <= started))
        if earlier.height:
            pairs.append((earlier["run_id"][-1], run_id))
    return pairs


def alert(result: GateResult) -> dict:
    """A gate's result as a Slack-compatible incoming webhook's payload (``text``, and the details)."""
    return {"text": gate_summary(result), "gate": result.as_json()}
