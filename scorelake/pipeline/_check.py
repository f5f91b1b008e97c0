"""What `scorelake check` verifies of the committed state, and warns of."""

from __future__ import annotations

import polars as pl

from scorelake.storage import Store
from scorelake.pipeline._policies import stored_policies
from scorelake.pipeline._rescore import coverage, judged_since


def verify(store: Store) -> list[str]:
    """Consistency problems of the committed state: every run's rows complete, every stored policy scored."""
    runs = store.tables.committed_runs()
    expected = runs.select("run_id", "n_scenarios", "n_quarantined")
    problems = []
    for table, column in (("scenarios", "n_scenarios"), ("quarantine", "n_quarantined")):
        found = store.tables.scan(table, runs).group_by("run_id").len().collect()
        joined = expected.join(found, on="run_id", how="left").with_columns(pl.col("len").fill_null(0))
        for run_id, want, got in joined.filter(pl.col("len") != pl.col(column)).select(
                "run_id", column, "len").iter_rows():
            problems.append(f"{run_id}: {table} has {got} rows, run says {want}")
    covered = coverage(store, runs)
    for policy in stored_policies(store):
        for table, found in covered.items():
            counts = expected.filter(pl.col("n_scenarios") > 0).join(
                found.filter(pl.col("policy_id") == policy.id), on="run_id", how="left")
            if policy.judge:  # runs its judge has not judged yet are scored once it has (rescore)
                counts = counts.filter(pl.col("covered").is_not_null())
            for run_id, want, got in counts.filter(pl.col("covered").fill_null(0) != pl.col("n_scenarios")).select(
                    "run_id", "n_scenarios", "covered").iter_rows():
                problems.append(f"{run_id}: policy {policy.name}: {table} cover {got or 0} of {want} scenarios"
                                + (" (stored twice: `scorelake rescore` repairs it)" if (got or 0) > want else ""))
        for run_id in judged_since(store, policy, runs)["run_id"]:
            problems.append(f"{run_id}: policy {policy.name}: scored with judgements its judge {policy.judge} no "
                            f"longer gives (`scorelake rescore --policy {policy.name}` repairs it)")
    return problems
