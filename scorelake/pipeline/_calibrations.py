"""A judge's verdicts kept with a guarantee, and scenarios drawn for labels with a known chance: the
write steps behind ``judges --calibrate`` and the review queue's ``active`` pick (what they compute is
``transforms.analysis``'s ``select`` and ``inclusion_probabilities``)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import polars as pl

from scorelake.pipeline._migrate import prepare_for_writing
from scorelake.pipeline._reviews import REVIEW_LOCK_WAIT_S
from scorelake.storage import Store
from scorelake.transforms.analysis import draw, inclusion_probabilities, select
from scorelake.transforms.columns import frame
from scorelake.transforms.errors import InvalidArgument

ALL = "(all)"


def calibration_rows(sample: pl.DataFrame, judge: str, alpha: float, delta: float, by_domain: bool,
                     version: int) -> list[dict]:
    """One calibration row per scope (each domain with ``by_domain``, else (all)) of ``sample``
    (queries/calibration_sample.sql rows: every verdict of the judge, people's where they stand)."""
    scopes = sorted(sample["domain"].unique().to_list()) if by_domain else [ALL]
    now = datetime.now(UTC)
    rows = []
    for scope in scopes:
        mine = sample if scope == ALL else sample.filter(pl.col("domain") == scope)
        labelled = mine.filter(pl.col("people_passed").is_not_null())
        chosen = select(labelled["confidence"].to_list(),
                        (labelled["passed"] == labelled["people_passed"]).to_list(), alpha, delta)
        kept = mine.filter(pl.col("confidence") >= chosen.threshold).height if chosen.threshold is not None else 0
        key = f"{judge}|{scope}|{alpha}|{delta}|{version}|{now.isoformat()}"
        rows.append({"calibration_id": hashlib.sha256(key.encode()).hexdigest()[:16], "judge": judge, "scope": scope,
                     "alpha": alpha, "delta": delta, "threshold": chosen.threshold, "labels": chosen.labels,
                     "kept_labels": chosen.kept_labels, "kept_disagreements": chosen.kept_disagreements,
                     "agreement_bound": chosen.agreement_bound, "judged": mine.height,
                     "coverage": kept / mine.height if mine.height else None, "more_labels": chosen.more_labels,
                     "note": chosen.note, "warehouse_version": version, "created_at": now})
    return rows


def store_calibration(store: Store, judge: str, alpha: float, delta: float, by_domain: bool) -> pl.DataFrame:
    """Calibrate ``judge`` on the labels that stand now and store the calibration as one write step."""
    store.tables.require(writing=True)
    with store.lock.hold(REVIEW_LOCK_WAIT_S):
        prepare_for_writing(store)  # (a warehouse an older scorelake wrote has no calibrations table yet)
        with store.views.connect() as con:
            sample = store.views.query(con, "calibration_sample", judge=judge)
        if sample.is_empty():
            raise InvalidArgument(f"judge '{judge}' has no verdicts to calibrate (askable inputs it judged)")
        version = store.tables.delta_table("commits").version()
        rows = frame("calibrations", calibration_rows(sample, judge, alpha, delta, by_domain, version))
        store.tables.append("calibrations", rows)
        kept = rows.filter(pl.col("threshold").is_not_null()).height
        store.log.record("calibrate", f"judge {judge} calibrated at alpha {alpha:g}, delta {delta:g}: "
                                      f"{kept} of {rows.height} scopes keep verdicts")
        store.views.build()
    return rows


def _draw_id(judge: str, run: str | None, budget: int, seed: int) -> str:
    return hashlib.sha256(f"{judge}|{run or '*'}|{budget}|{seed}".encode()).hexdigest()[:16]


def active_draw(store: Store, population: pl.DataFrame, run: str | None, budget: int, seed: int) -> pl.DataFrame:
    """Scenarios of ``population`` (queries/active_population.sql rows) drawn for labels, about
    ``budget`` of them, each with a chance that grows with the judge's doubt; recorded (the chances
    weight the labels in ``rates --ppi``) once per judge, runs, budget and seed: the same draw read
    back after that. The drawn scenarios (run_id, scenario_name, probability)."""
    if population.is_empty():
        raise InvalidArgument("active: the policy's judge has judged no scenario in scope")
    judge = population["judge"][0]
    key = _draw_id(judge, run, budget, seed)
    store.tables.require(writing=True)
    with store.lock.hold(REVIEW_LOCK_WAIT_S):
        prepare_for_writing(store)  # (a warehouse an older scorelake wrote has no label_draws table yet)
        stored = store.tables.read("label_draws").filter(pl.col("draw_id") == key).collect()
        if stored.is_empty():
            chances = inclusion_probabilities(population["doubt"].to_list(), budget)
            drawn = population.with_columns(pl.Series("probability", chances, pl.Float64)).filter(
                pl.Series(draw(chances, seed)))
            stored = frame("label_draws", [{"draw_id": key, "judge": judge, "run_id": r["run_id"],
                                            "scenario_name": r["scenario_name"], "probability": r["probability"],
                                            "drawn_at": datetime.now(UTC)} for r in drawn.iter_rows(named=True)])
            store.tables.append("label_draws", stored)
            store.log.record("draw", f"{stored.height} scenarios drawn for labels of judge {judge} "
                                     f"(budget {budget}, seed {seed})")
            store.views.build()
    return stored.select("run_id", "scenario_name", "probability")
