"""Each declared signal and rate (transforms/registry.py) reaches every output derived from it:
a signal added to the registry and left out of one of them fails here, naming it."""

from __future__ import annotations

import re

import polars as pl
import pytest

import scorelake
from scorelake.cli._query import DOMAIN_RATES, _domain_grid
from scorelake.storage._fragments import FRAGMENTS
from scorelake.storage._tables import TABLES
from scorelake.storage._views import sql_text
from scorelake.transforms.columns import SCHEMAS, VOICE_METRICS
from scorelake.transforms.names import SIGNALS as NAMES
from scorelake.transforms.registry import RATES, SIGNALS
from scorelake.present import explain
from scorelake.transforms.scoring import Signal


@pytest.fixture(scope="module")
def wh(ingested) -> scorelake.Warehouse:
    return scorelake.open(ingested[0].location)


def columns_of(wh: scorelake.Warehouse, view: str) -> list[str]:
    return wh.sql(f"SELECT * FROM {view} LIMIT 0").columns


def test_every_signal_has_its_name_its_computation_and_its_stored_columns():
    assert [str(s) for s in Signal] == [s.name for s in SIGNALS] == list(NAMES)
    assert all(callable(s.expression) for s in SIGNALS)
    for s in SIGNALS:
        assert s.value in SCHEMAS["scores"], s.name
        assert {f"{s.rate}_passed", f"{s.rate}_total"} <= set(SCHEMAS["rate_counts"]), s.name
        if s.items:
            assert set(s.items) <= set(SCHEMAS["scenarios"]), s.name


def test_every_rate_and_signal_reaches_the_views(wh):
    rollup, diff, scores = (columns_of(wh, v) for v in ("rate_rollup", "run_diff", "scenario_scores"))
    for r in RATES:
        assert {f"{r.prefix}_passed", f"{r.prefix}_total", r.rate, f"{r.interval}_low", f"{r.interval}_high"} \
            <= set(rollup), r.prefix
        assert r.rate in columns_of(wh, "domain_rates"), r.prefix
    for s in SIGNALS:
        assert {f"{s.name}_a", f"{s.name}_b", f"{s.name}_flipped"} <= set(diff), s.name
        assert {s.value, *(s.items or ())} <= set(scores), s.name
        assert f"'signal': '{s.name}'" in sql_text("marts", "signal_rates.sql"), s.name


def test_every_rate_reaches_the_command_line_and_every_signal_show(wh):
    by_domain = wh.rates(by="domain")
    assert {r.rate for r in RATES} <= set(by_domain.columns)
    grid = _domain_grid("run (policy recorded)", by_domain.to_dicts())
    assert [label for label, _, _ in DOMAIN_RATES] == [r.label for r in RATES]
    assert set(grid.headers) <= {"domain", "n", "stalled", *(r.label for r in RATES)}
    run, scenario = wh.runs().row(0, named=True)["run_id"], wh.scenarios().row(0, named=True)["scenario_name"]
    lines = {line.signal for line in explain(wh.evidence(run, scenario)).signals}
    gated = set(wh.scenarios(run).filter(pl.col("scenario_name") == scenario)["success_signals"][0])
    assert gated <= lines


def test_a_fragment_is_named_apart_from_every_table():
    """``{{ name }}`` also names a table in a staging view: a fragment of the same name would take its place."""
    assert not set(FRAGMENTS) & set(TABLES)
    for name, make in FRAGMENTS.items():
        assert not re.search(r"\{\{", make()), name


def test_every_voice_metric_reaches_its_views_and_the_panel(wh):
    from scorelake.present import VOICE_PANEL

    per_scenario, per_run = columns_of(wh, "scenario_voice"), columns_of(wh, "run_voice")
    for metric in VOICE_METRICS:
        assert metric.name in per_scenario, metric.name
        assert not metric.rollup or metric.name in per_run, metric.name
        assert not metric.events or metric.events in per_run, metric.name
    assert [m.name for m in VOICE_PANEL.metrics] == [m.name for m in VOICE_METRICS if m.label]


def test_every_latency_metric_reaches_its_views(wh):
    from scorelake.present import LATENCY_PANEL, LATENCY_SCENARIO_PANEL

    assert {m.name for m in LATENCY_PANEL.metrics} <= set(columns_of(wh, "run_latency"))
    assert {m.name for m in LATENCY_SCENARIO_PANEL.metrics} <= set(columns_of(wh, "scenario_latency"))


def _read_by(body: str) -> set[str]:
    """The relations a statement reads, from DuckDB's parse of it (its CTEs aside)."""
    import json

    import duckdb

    tree = json.loads(duckdb.connect().execute("SELECT json_serialize_sql(?)", [body]).fetchone()[0])
    assert not tree.get("error"), tree
    tables, ctes = set(), set()

    def walk(node) -> None:
        if isinstance(node, dict):
            if node.get("type") == "BASE_TABLE":
                tables.add(node["table_name"])
            ctes.update(entry["key"] for entry in node.get("cte_map", {}).get("map", []))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(tree)
    return tables - ctes


def test_every_view_names_the_views_it_reads_and_no_other():
    """A view file's ``-- depends on:`` line (the order views are created in) is what its body reads
    (a column named like a view, ``turns`` or ``reviews``, is no dependency)."""
    from scorelake.storage._views import SQL_LAYERS, sql_files, view_dependencies

    views = {stem: text for layer in SQL_LAYERS for stem, text in sql_files(layer)}
    for name, text in views.items():
        body = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: f"delta_{m.group(1)}", text.strip().removesuffix(";"))
        assert sorted(view_dependencies(text)) == sorted(r for r in _read_by(body) if r in views), name


def test_the_read_options_are_declared_once():
    """``--as-of`` and ``--wide`` come from the option bundles (``Where``, ``Read``) alone: no command
    spells them, and every command that reads as the warehouse stood offers the four read options
    together (``Read``) or the two that say which warehouse (``Where``)."""
    import inspect

    from scorelake.cli import app

    for registered in app.registered_commands:
        own = inspect.signature(inspect.unwrap(registered.callback)).parameters
        offered = inspect.signature(registered.callback).parameters
        assert not {"as_of", "wide"} & set(own), registered.callback.__name__
        if "as_of" in offered:
            assert {"warehouse", "as_of"} <= set(offered), registered.callback.__name__


def test_a_scenario_row_types_what_the_faces_read_and_keeps_every_column(wh):
    run, scenario = wh.runs().row(0, named=True)["run_id"], wh.scenarios().row(0, named=True)["scenario_name"]
    row = wh.evidence(run, scenario).scenario
    assert (row.run_id, row.scenario_name) == (run, scenario) and set(row.columns) >= {s.value for s in SIGNALS}
    assert all(row.value(s.value) == row.columns[s.value] for s in SIGNALS)
    with pytest.raises(KeyError):
        row.value("is_action_matched")  # a typo is an error, not a silent None
    assert wh.evidence(run, scenario).as_dict()["scenario"] == row.columns  # --format json: every column
