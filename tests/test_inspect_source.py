"""Inspect AI logs as a source (issue 61, item 1): logs written by Inspect's own eval with its mockllm
model (tests/data/inspect/make_logs.py: a tool-using task scored by match and a model-graded scorer
over three epochs, a sample stopped by the message limit, one that errors; a second task scored by
includes), in both of its formats, give per task and scorer exactly the metrics Inspect wrote in
each log's results, the pass^k of the epochs as trials, the transcript and tool calls as evidence,
and take reviews as any run does."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from tests.conftest import REPO

LOGS = REPO / "tests" / "data" / "inspect" / "logs"
runner = CliRunner()


def inspect_results(path: Path) -> dict:
    """What Inspect wrote in the log's results: per scorer, its metrics."""
    if path.suffix == ".json":
        header = json.loads(path.read_text())
    else:
        from scorelake.transforms.sources.inspect._document import eval_document

        header = eval_document(path)[0]
    return {s["name"]: {k: m["value"] for k, m in s["metrics"].items()} for s in header["results"]["scores"]}


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> scorelake.Warehouse:
    wh = scorelake.open(tmp_path_factory.mktemp("inspect") / "wh")
    result = wh.ingest(LOGS, prefect=False)
    assert sorted(r.run_id for r in result.ingested) == sorted(p.stem for p in LOGS.iterdir())
    return wh


def test_each_scorers_metrics_are_inspects_in_both_formats(wh):
    ours = wh.rates(by="scorer")
    for path in sorted(LOGS.iterdir()):
        mine = {r["scorer"]: r for r in ours.filter(pl.col("run_id") == path.stem).iter_rows(named=True)}
        written = inspect_results(path)
        assert set(mine) == set(written), path.name
        for scorer, metrics in written.items():
            for metric, value in metrics.items():
                assert mine[scorer][metric] == pytest.approx(value, abs=1e-12), (path.name, scorer, metric)
    assert len({p.suffix for p in LOGS.iterdir()}) == 2  # .eval and .json


def test_epochs_are_trials_and_pass_hat_k_is_theirs(wh):
    run = next(p.stem for p in LOGS.iterdir() if "arith" in p.name and p.suffix == ".eval")
    scenarios = wh.scenarios(run=run)
    assert scenarios.height == 15 and set(scenarios["trial"]) == {0, 1, 2}
    stops = dict(zip(scenarios["scenario_name"], scenarios["stop_reason"]))
    assert stops["arith__s5__epoch1"] == "error" and stops["arith__s4__epoch2"] == "limit: message"
    assert stops["arith__s1__epoch3"] == "completed"
    log = json.loads(next(p for p in LOGS.iterdir() if "arith" in p.name and p.suffix == ".json").read_text())
    wins: dict[str, list[bool]] = {}
    for sample in log["samples"]:  # success: every scorer gave full credit, the sample ran to its end
        scores = sample.get("scores") or {}
        wins.setdefault(sample["id"], []).append(bool(scores) and all(s["value"] == "C" for s in scores.values())
                                                 and not sample.get("error") and not sample.get("limit"))
    passk = wh.passk(group=run).filter(pl.col("domain") == "arith").sort("k")
    for k in (1, 2, 3):
        expected = sum(math.comb(sum(w), k) / math.comb(len(w), k) for w in wins.values()) / len(wins)
        assert passk.filter(pl.col("k") == k)["pass_hat_k"][0] == pytest.approx(expected)


def test_the_transcript_tool_calls_and_judge_reasons_are_the_evidence(wh):
    run = next(p.stem for p in LOGS.iterdir() if "arith" in p.name and p.suffix == ".eval")
    evidence = wh.evidence(run, "arith__s1__epoch1")
    assert [t.role for t in evidence.turns] == ["user", "assistant", "assistant"]  # the call's message, the answer
    assert evidence.turns[-1].text == "2"
    (call,) = evidence.tool_calls
    assert (call.name, json.loads(call.arguments_json), call.result) == ("add", {"x": 1, "y": 1}, "2")
    assert [(v.label, v.passed) for v in evidence.verdicts] == [("match", True), ("model_graded_qa", False)]
    assert evidence.judge.score == 0.0 and evidence.judge.reason == "GRADE: I"  # the grader's, epoch 1
    assert evidence.task.instructions == "What is 1 + 1?"
    done = runner.invoke(app, ["show", run, "arith__s1__epoch1", "-w", wh.location])
    assert done.exit_code == 0 and "add" in done.output


def test_a_review_of_a_scorer_takes_its_place_on_rescore(wh):
    run = next(p.stem for p in LOGS.iterdir() if "arith" in p.name and p.suffix == ".json")
    before = wh.rates(run=run).filter(pl.col("domain") == "arith")["success_passed"][0]
    wh.review(run, "arith__s2__epoch1", "nl_assertion", "pass", assertion=1, reviewer="alice")  # match said I
    wh.rescore("people", reviews=True, runs=[run])
    after = wh.rates(run=run, policy="people").filter(pl.col("domain") == "arith")["success_passed"][0]
    assert after == before + 1  # s2's grader said C in epoch 1: with match reviewed, it passes


def test_a_json_log_is_recognised_by_its_content_and_an_eval_archive_needs_its_header(tmp_path):
    import zipfile

    from scorelake.transforms.sources import SOURCES

    inspect = SOURCES["inspect"]
    log = next(p for p in LOGS.iterdir() if p.suffix == ".json")
    assert inspect.recognises(log) == log.stem and SOURCES["tau2"].recognises(log) is None
    running = tmp_path / "running.eval"
    with zipfile.ZipFile(running, "w") as archive:
        archive.writestr("_journal/start.json", "{}")
    assert inspect.recognises(running) == "running"
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(running, prefect=False)
    refused = wh.sql("SELECT reason FROM stg_quarantine")["reason"][0]
    assert "no header.json" in refused
