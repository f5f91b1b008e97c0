"""The units of work the Prefect flows orchestrate: read and score one session, commit a batch of
them, re-score stored runs.

Nothing here knows about Prefect, so each step is testable on its own.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from transforms.columns import frame
from transforms.discover import Session, session_fingerprint
from transforms.external import UNRESOLVED_SUFFIX, read_tau2, read_tau_bench
from transforms.extract import read_session
from transforms.legacy import LegacyTables
from transforms.policy import Policy
from transforms.rollup import SCENARIO_FACTS, rate_counts
from transforms.signals import as_scores, with_scores
from transforms.warehouse import RUN_TABLES, TABLES, Warehouse, new_generation


@dataclass
class SessionReport:
    run_id: str
    status: str
    scenarios: int
    quarantined: int
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class IngestedRun:
    """A session read and scored, not yet committed: its ``runs`` row and its rows of ``RUN_TABLES``."""

    report: SessionReport
    run: pl.DataFrame
    tables: dict[str, pl.DataFrame]


@dataclass
class IngestPlan:
    todo: list[Session]
    unchanged: list[Session]
    # (session, reason) for sessions that cannot be ingested as they stand
    refused: list[tuple[Session, str]]


def plan_ingest(wh: Warehouse, sessions: list[Session], force: bool = False) -> IngestPlan:
    """Which sessions are new or changed since their last ingest (by stat fingerprint)."""
    committed = {r["run_id"]: r for r in wh.committed_runs().iter_rows(named=True)}
    todo, unchanged, refused = [], [], []
    seen: dict[str, Session] = {}
    for session in sessions:
        path = str(session.path.resolve())
        if session.run_id in seen:
            refused.append((session, f"duplicate run id: also found at {seen[session.run_id].path}"))
            continue
        seen[session.run_id] = session
        stored = committed.get(session.run_id)
        if stored is not None and stored["session_path"] != path:
            refused.append((session, f"duplicate run id: already ingested from {stored['session_path']}"))
        elif not force and stored is not None and stored["fingerprint"] == session_fingerprint(session):
            unchanged.append(session)
        else:
            todo.append(session)
    return IngestPlan(todo, unchanged, refused)


def stored_policies(wh: Warehouse) -> list[Policy]:
    """Every stored policy, ``recorded`` first; the recorded policy always exists."""
    specs = wh.read("policies").sort("created_at").unique("policy_id", keep="first", maintain_order=True).collect()
    policies = [Policy.from_spec_json(s) for s in specs["spec_json"]]
    recorded = Policy()
    return [recorded] + [p for p in policies if p.id != recorded.id]


def check_policy(wh: Warehouse, policy: Policy) -> None:
    """A name is bound to one content, and one content to one name."""
    for existing in stored_policies(wh):
        if existing.name == policy.name and existing.id != policy.id:
            raise ValueError(f"policy '{policy.name}' already exists with other settings; choose another name")
        if existing.id == policy.id and existing.name != policy.name:
            raise ValueError(f"policy '{policy.name}' has the same settings as stored policy '{existing.name}'")


def save_policy(wh: Warehouse, policy: Policy) -> bool:
    """Store a policy; False if it was stored already. Scores are visible only for stored policies,
    so storing one after its scores are written makes a new policy appear whole or not at all."""
    check_policy(wh, policy)
    if wh.read("policies").filter(pl.col("policy_id") == policy.id).select(pl.len()).collect().item():
        return False
    row = {"policy_id": policy.id, "name": policy.name, "spec_json": policy.spec_json(),
           "created_at": datetime.now(UTC)}
    wh.append("policies", frame("policies", [row]))
    return True


def find_policy(wh: Warehouse, name: str) -> Policy:
    for policy in stored_policies(wh):
        if name in (policy.name, policy.id):
            return policy
    raise KeyError(f"no stored policy named '{name}'")


def score_and_count(scenarios: pl.LazyFrame, policy: Policy) -> dict[str, pl.DataFrame]:
    """The ``scores`` rows of ``scenarios`` under ``policy`` and their ``rate_counts``, in one pass."""
    scored = with_scores(scenarios, policy)
    scores, counts = pl.collect_all([scored.pipe(as_scores), rate_counts(scored)])
    return {"scores": scores, "rate_counts": counts}  # written in this order: see rescore


def count_stored(wh: Warehouse, runs: pl.DataFrame, policy_id: str) -> pl.DataFrame:
    """``rate_counts`` of scores already stored, with the scenario facts they need."""
    key = ["run_id", "generation", "scenario_name"]
    facts = wh.scan("scenarios", runs).select(*key, *SCENARIO_FACTS)
    scores = wh.scan("scores", runs).filter(pl.col("policy_id") == policy_id)
    return rate_counts(scores.join(facts, on=key)).collect()


READERS = {"nemo": read_session, "tau2": read_tau2, "tau2-dir": read_tau2, "tau-bench": read_tau_bench}


def ingest_session(session: Session, policies: list[Policy]) -> IngestedRun:
    """Read a session and score it under every policy, as one new generation."""
    tables = READERS[session.kind](session, new_generation())
    scenarios = tables.scenarios.lazy()
    scored = [score_and_count(scenarios, policy) for policy in policies]
    report = SessionReport(session.run_id, tables.run["status"], tables.scenarios.height, tables.quarantine.height,
                           [str(e) for e in tables.errors], list(task_id_warnings(scenarios).values()))
    rows = {"scenarios": tables.scenarios, "verdicts": tables.verdicts, "quarantine": tables.quarantine,
            **{table: pl.concat([s[table] for s in scored]) for table in ("scores", "rate_counts")}}
    return IngestedRun(report, frame("runs", [tables.run]), rows)


def commit_ingested(wh: Warehouse, batch: list[IngestedRun]) -> None:
    """Commit a batch of ingested sessions: one Delta commit per table, ``runs`` last (the switch)."""
    if batch:
        wh.commit_runs(pl.concat([r.run for r in batch]),
                       {table: pl.concat([r.tables[table] for r in batch]) for table in RUN_TABLES})
        wh.record("ingest", f"{len(batch)} runs: {', '.join(sorted(r.report.run_id for r in batch))}")


def task_id_warnings(scenarios: pl.LazyFrame) -> dict[str, str]:
    """Per run, a line on the simulations whose task id contradicts their task definition."""
    counts = scenarios.group_by("run_id").agg(
        pl.len().alias("total"), pl.col("task_id_claimed").is_not_null().sum().alias("contradicted"),
        pl.col("task_id").str.ends_with(UNRESOLVED_SUFFIX).sum().alias("unresolved"),
    ).filter(pl.col("contradicted") > 0).sort("run_id").collect()
    return {r["run_id"]: f"{r['contradicted']} of {r['total']} simulations carry a task_id that contradicts their "
                         f"task definition: {r['contradicted'] - r['unresolved']} recovered from their checks, "
                         f"{r['unresolved']} unresolved (pass^k groups by the recovered id; see task_id_claimed)"
            for r in counts.iter_rows(named=True)}


def record_refusals(wh: Warehouse, refused: list[tuple[Session, str]]) -> None:
    """The sessions the latest ingest could not take, replacing the previous list (when it changed:
    an ingest with nothing to do writes nothing)."""
    rows = [{"run_id": s.run_id, "path": str(s.path), "reason": reason, "refused_at": datetime.now(UTC)}
            for s, reason in refused]
    key = ["run_id", "path", "reason"]
    stored = wh.read("refusals").select(key).collect()
    if sorted(stored.iter_rows()) != sorted(frame("refusals", rows).select(key).iter_rows()):
        wh.replace("refusals", frame("refusals", rows))


def verify(wh: Warehouse) -> list[str]:
    """Consistency problems of the committed state: every run's rows complete, every stored policy scored."""
    runs = wh.committed_runs()
    expected = runs.select("run_id", "n_scenarios", "n_quarantined")
    problems = []
    for table, column in (("scenarios", "n_scenarios"), ("quarantine", "n_quarantined")):
        found = wh.scan(table, runs).group_by("run_id").len().collect()
        joined = expected.join(found, on="run_id", how="left").with_columns(pl.col("len").fill_null(0))
        for run_id, want, got in joined.filter(pl.col("len") != pl.col(column)).select(
                "run_id", column, "len").iter_rows():
            problems.append(f"{run_id}: {table} has {got} rows, run says {want}")
    policies = stored_policies(wh)
    for table, covered in (("scores", pl.len()), ("rate_counts", pl.col("scenarios").sum())):
        found = wh.scan(table, runs).group_by("run_id", "policy_id").agg(covered.alias("len")).collect()
        for policy in policies:
            counts = expected.filter(pl.col("n_scenarios") > 0).join(
                found.filter(pl.col("policy_id") == policy.id), on="run_id", how="left")
            for run_id, want, got in counts.filter(pl.col("len").fill_null(0) != pl.col("n_scenarios")).select(
                    "run_id", "n_scenarios", "len").iter_rows():
                problems.append(f"{run_id}: policy {policy.name}: {table} cover {got or 0} of {want} scenarios")
    return problems


RESCORE_BATCH_ROWS = 250_000  # bounds memory: the store is scored a batch of runs at a time


def _run_batches(runs: pl.DataFrame, max_rows: int) -> list[pl.DataFrame]:
    """Consecutive slices of ``runs`` holding at most ``max_rows`` scenarios (or one larger run)."""
    if runs.is_empty():
        return []
    batches, start, rows = [], 0, 0
    counts = runs["n_scenarios"].fill_null(0).to_list()
    for i, n in enumerate(counts):
        if rows and rows + n > max_rows:
            batches.append(runs.slice(start, i - start))
            start, rows = i, 0
        rows += n
    return batches + [runs.slice(start)]


def _append_all(wh: Warehouse, tables: dict[str, pl.DataFrame]) -> None:
    for table, rows in tables.items():  # in their order: scores before their counts
        wh.append(table, rows)


def rescore(wh: Warehouse, policy: Policy, run_ids: list[str] | None = None) -> int:
    """Score stored scenarios under ``policy`` from the tables alone; returns the number scored.

    Runs that already hold scores under this policy for their committed generation are skipped:
    a policy's id is a hash of everything its verdicts depend on (scorer version included), so
    those scores could only come out the same. An interrupted re-score thus resumes where it stopped.
    Scores are written before their rate counts (one commit each per batch of runs), so runs scored
    but not yet counted (a re-score killed in between, a warehouse older than rate_counts) are
    counted from the stored scores.
    """
    runs = wh.committed_runs()
    if run_ids:
        missing = sorted(set(run_ids) - set(runs["run_id"]))
        if missing:
            raise KeyError(f"not in the warehouse: {', '.join(missing)}")
        runs = runs.filter(pl.col("run_id").is_in(run_ids))
    runs = runs.filter(pl.col("n_scenarios") > 0)
    scored_runs, counted_runs = (
        wh.scan(table, runs).filter(pl.col("policy_id") == policy.id).select("run_id").unique().collect()
        for table in ("scores", "rate_counts"))
    scored, committing = 0, None
    # A batch is committed (scores, then counts) while the next one is scored: delta-rs writes
    # without holding the GIL. One batch in flight bounds memory.
    with ThreadPoolExecutor(1) as writer:
        for batch in _run_batches(runs.join(scored_runs, on="run_id", how="anti"), RESCORE_BATCH_ROWS):
            tables = score_and_count(wh.scan("scenarios", batch), policy)
            if committing:
                committing.result()
            committing = writer.submit(_append_all, wh, tables)
            scored += tables["scores"].height
        if committing:
            committing.result()
    uncounted = runs.join(scored_runs, on="run_id", how="semi").join(counted_runs, on="run_id", how="anti")
    for batch in _run_batches(uncounted, RESCORE_BATCH_ROWS):
        wh.append("rate_counts", count_stored(wh, batch, policy.id))
    return scored


def prepare_for_writing(wh: Warehouse) -> None:
    """With the writer lock held: a warehouse of the former table format converted, the tables
    declared, a killed writer's temporary files removed."""
    if wh.legacy_tables():
        migrate(wh)
    wh.init()
    if wh.is_local:
        for tmp in (*wh.root.glob(".*.tmp"), *wh.root.glob(".schemas/*.tmp")):
            tmp.unlink(missing_ok=True)


def migrate(wh: Warehouse) -> Path:
    """Convert a warehouse of scorelake's former table format (``tables/``) to Delta tables, every
    visible row kept (with its generation, so scores stay attached); the old folder is then renamed
    aside, not deleted. Until that rename the old folder is the warehouse: a conversion cut short
    is simply run again (each table is overwritten whole, in one commit)."""
    legacy = LegacyTables(wh.legacy_tables())
    wh.init()
    for table in TABLES:
        if table != "commits":
            wh.replace(table, legacy.visible(table))
    for policy in stored_policies(wh):  # rate counts a former warehouse lacked, counted from its scores
        rescore(wh, policy)
    kept = legacy.folder.with_name(f"tables.pre-delta-{datetime.now(UTC):%Y%m%dT%H%M%S}")
    wh.record("migrate", f"from the former table format; its files kept in {kept.name}")
    legacy.folder.rename(kept)
    return kept
