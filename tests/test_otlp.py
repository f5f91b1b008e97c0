"""Verdicts out as OpenTelemetry evaluation events (issue 61, item 2), sent with the SDK's OTLP
exporter to a real backend the tests start (Arize Phoenix, tests/phoenix_server.py) and read back
through its client: every scenario a span under its run's, every verdict a gen_ai.evaluation.result
event with the semantic conventions' attributes, people's reviews among them; an export killed after
a batch was sent and before it was recorded sends the rest, and nothing is stored twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import scorelake
from tests.conftest import REPO

pytestmark = pytest.mark.slow  # a Phoenix server (installed into a venv of its own the first time)
SCRIPT = Path(sys.executable).with_name("scorelake")
SAMPLE = "eval_20260903_140200"


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    from tests.phoenix_server import Phoenix

    server = Phoenix(tmp_path_factory.mktemp("phoenix"))
    yield server
    server.stop()


def export(wh: scorelake.Warehouse, endpoint: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), "export", "otlp", "--endpoint", endpoint, "-w", wh.location],
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=600)


def test_verdicts_arrive_as_evaluation_events_once_though_the_export_was_killed(phoenix, tmp_path):
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(REPO / "data" / "runs", prefect=False)
    reviewed = wh.scenarios(run=SAMPLE)["scenario_name"][0]
    wh.review(SAMPLE, reviewed, "judge_passed", "fail", reviewer="alice", note="it booked the wrong day")
    scenarios = wh.sql("SELECT run_id, scenario_name FROM scenario_scores JOIN stg_policies USING (policy_id) "
                       "WHERE name = 'recorded'")
    killed = export(wh, phoenix.traces, SCORELAKE_EXPORT_BATCH="10", SCORELAKE_CRASH_AT="export:2")
    assert killed.returncode == -9  # sent two batches, recorded the first
    assert wh.sql("SELECT count(*) AS n FROM stg_exports")["n"][0] == 10
    done = export(wh, phoenix.traces, SCORELAKE_EXPORT_BATCH="10")
    assert done.returncode == 0, done.stderr
    assert f"{scenarios.height - 10} scenarios' verdicts sent" in done.stderr
    again = export(wh, phoenix.traces)
    assert again.returncode == 0 and "nothing to send" in again.stderr

    spans = phoenix.spans()
    runs = {s["context"]["span_id"]: s for s in spans if s["name"].startswith("scorelake run ")}
    mine = [s for s in spans if s["name"].startswith("scorelake scenario ")]
    keys = [(s["attributes"]["scorelake.run_id"], s["attributes"]["scorelake.scenario"]) for s in mine]
    assert sorted(keys) == sorted(scenarios.iter_rows()) and len(set(keys)) == len(keys)  # each once
    assert len(runs) == 2 and all(s["parent_id"] in runs for s in mine)
    stored = wh.sql("SELECT sum(verdicts) AS n FROM stg_exports")["n"][0]
    events = [e for s in mine for e in s["events"]]
    assert len(events) == stored and {e["name"] for e in events} == {"gen_ai.evaluation.result"}
    for event in events:
        attributes = event["attributes"]
        assert {"gen_ai.evaluation.name", "gen_ai.evaluation.score.label", "scorelake.run_id", "scorelake.scenario",
                "scorelake.policy"} <= set(attributes)
        assert attributes["gen_ai.evaluation.score.label"] in ("pass", "fail", "not_applicable")
    composite = {(e["attributes"]["scorelake.run_id"], e["attributes"]["scorelake.scenario"]):
                 e["attributes"]["gen_ai.evaluation.score.label"]
                 for e in events if e["attributes"]["gen_ai.evaluation.name"] == "is_successful"}
    truth = wh.sql("SELECT run_id, scenario_name, is_successful FROM scenario_scores JOIN stg_policies "
                   "USING (policy_id) WHERE name = 'recorded'")
    assert composite == {(r, n): "not_applicable" if ok is None else "pass" if ok else "fail"
                         for r, n, ok in truth.iter_rows()}
    (person,) = [e["attributes"] for e in events if e["attributes"]["scorelake.evaluator"] == "human:alice"]
    assert (person["scorelake.scenario"], person["gen_ai.evaluation.name"], person["gen_ai.evaluation.score.label"],
            person["gen_ai.evaluation.explanation"]) == (reviewed, "judge_passed", "fail", "it booked the wrong day")
    judged = [e["attributes"] for e in events if e["attributes"]["gen_ai.evaluation.name"] == "judge_passed"
              and e["attributes"]["scorelake.evaluator"] == "scorelake"]
    assert any(a.get("gen_ai.evaluation.explanation") for a in judged)  # the judge's reason rides with its verdict


def test_the_scheduled_refresh_sends_each_new_runs_verdicts(phoenix, tmp_path):
    from scorelake.flows.flow_bodies import export_new_runs

    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(REPO / "data" / "runs", prefect=False)
    first = export_new_runs(wh.location, [SAMPLE], phoenix.traces)
    assert first.scenarios == wh.scenarios(run=SAMPLE).height and first.events > first.scenarios
    assert export_new_runs(wh.location, [SAMPLE], phoenix.traces).scenarios == 0
