"""The tables read by the engines teams already run, without scorelake: after every kind of write
(ingest, a forced re-ingest that deletes the rows it replaces, a re-score, a review, a compaction),
each engine of the manual's "Reading the tables without scorelake" (docs/guide/scale.md) computes every run's composite
success per domain from the tables alone, equal to `scorelake rates`; and no file holds a string type
some engine cannot read (Daft reads no ``string_view``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import scorelake
from tests.conftest import REPO
from tests.docs_examples import blocks

pytestmark = pytest.mark.slow
ENGINES = ("daft", "dask_deltatable", "pysail", "pyspark")


def engine_blocks() -> list[str]:
    return blocks("python engines")


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> tuple[Path, scorelake.Warehouse]:
    """A warehouse at ``data/warehouse`` under a folder of its own, as the manual's blocks name it,
    each table's files made by every kind of write there is."""
    folder = tmp_path_factory.mktemp("engines")
    wh = scorelake.open(folder / "data" / "warehouse")
    wh.ingest(REPO / "data" / "runs", prefect=False)
    wh.rescore("lenient", judge_threshold=0.5)
    run = wh.runs()["run_id"][0]
    wh.review(run, wh.run_scenarios(run)["scenario_name"][0], "judge_passed", "pass", reviewer="ann")
    wh.ingest(REPO / "data" / "runs", prefect=False, force=True)  # rows of the old generation deleted
    wh.compact()
    wh.ingest(REPO / "data" / "runs", prefect=False, force=True)  # and after the compaction
    return folder, wh


def test_no_file_of_any_table_holds_a_view_string_type(warehouse):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from deltalake import DeltaTable

    from scorelake.storage import TABLES

    _, wh = warehouse
    for table in TABLES:
        for uri in DeltaTable(f"{wh.location}/{table}").file_uris():
            for field in pq.read_schema(uri.removeprefix("file://")):
                assert not (pa.types.is_string_view(field.type) or pa.types.is_binary_view(field.type)), (table, field)


def expected_rates(wh: scorelake.Warehouse) -> dict[tuple[str, str], tuple[int, int]]:
    rates = pl.concat([wh.rates(run=run) for run in wh.runs()["run_id"]])
    rates = rates.filter(pl.col("domain") != "(all)")
    return {(r["run_id"], r["domain"]): (r["success_total"], r["success_passed"]) for r in rates.iter_rows(named=True)}


def as_counts(frame) -> dict[tuple[str, str], tuple[int, int]]:
    frame = frame if isinstance(frame, pl.DataFrame) else pl.from_pandas(frame.reset_index())
    frame = frame.rename({"count": "scenarios", "sum": "passed"}, strict=False)
    return {(r["run_id"], r["domain"]): (int(r["scenarios"]), int(r["passed"])) for r in frame.iter_rows(named=True)}


def test_every_engine_computes_the_rates_from_the_tables_alone(warehouse, monkeypatch):
    for module in ENGINES:
        pytest.importorskip(module, reason="pip install 'scorelake[engines]'")
    folder, wh = warehouse
    monkeypatch.chdir(folder)
    namespace: dict = {}
    for block in engine_blocks():
        exec(compile(block, "docs/guide/scale.md", "exec"), namespace)  # noqa: S102
    expected = expected_rates(wh)
    assert expected and all(total for total, _ in expected.values())
    for engine in ("polars", "duckdb", "daft", "dask", "spark"):
        assert as_counts(namespace[f"{engine}_rates"]) == expected, engine
    # Spark SQL's time travel: the scores table's first commit held the first ingest's scores
    first = scorelake.open(wh.location)
    assert namespace["first_count"] == pl.read_delta(f"{first.location}/scores", version=1).height > 0
