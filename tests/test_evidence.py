"""The evidence behind every verdict, stored at ingest and shown by `scorelake show`: the judge's own
result, the conversation, the tool calls, the reference items ACTION_MATCH found no match for."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from scorelake.storage import Store
from scorelake.transforms.columns import frame
from tests.conftest import BASELINE, CONFORMANCE, REPO

runner = CliRunner()
MIXED = "eval_20260902_091500"


@pytest.fixture(scope="module")
def wh(ingested):
    return scorelake.open(ingested[0].tables.root)


def scenario_files(session: str):
    return sorted(p for p in (CONFORMANCE / session).iterdir() if (p / "metrics.json").exists())


def test_every_judge_result_is_stored(wh):
    judged = wh.sql("SELECT * FROM judge_results WHERE run_id = $run", {"run": BASELINE})
    on_disk = {p.name: json.loads((p / "judge_result.json").read_text()) for p in scenario_files(BASELINE)
               if (p / "judge_result.json").exists()}
    assert sorted(judged["scenario_name"]) == sorted(on_disk)
    for row in judged.iter_rows(named=True):
        doc = on_disk[row["scenario_name"]]
        assert row["reason"] == doc["reason"] and row["score"] == pytest.approx(doc["score"])
        assert row["errored"] == doc["reason"].startswith("Error:")
        extra = {k: v for k, v in doc.items() if k in ("confidence", "deductions")}
        assert json.loads(row["extra_json"]) == extra


def test_the_conversation_is_stored_turn_by_turn_with_latencies(wh):
    turns = wh.sql("SELECT * FROM turns WHERE run_id = $run AND scenario_name = 'qa__telephone_inventor' "
                   "ORDER BY ordinal", {"run": BASELINE})
    metrics = json.loads((CONFORMANCE / BASELINE / "qa__telephone_inventor" / "metrics.json").read_text())
    assert turns["text"].to_list() == [t["text"] for t in metrics["turns"]]
    assert turns["role"].to_list() == [t["role"] for t in metrics["turns"]]
    assert sorted(turns["latency_ms"].drop_nulls().to_list()) == sorted(l["latency_ms"] for l in metrics["latencies"])


def test_tool_calls_come_with_their_arguments_and_results(wh):
    calls = wh.sql("SELECT * FROM tool_calls WHERE run_id = $run", {"run": MIXED})
    assert calls.height > 0 and calls["name"].null_count() == 0
    answered = calls.filter(pl.col("result").is_not_null())
    assert answered.height > 0
    assert all(isinstance(json.loads(a), (dict, list)) for a in calls["arguments_json"])


def test_unmatched_reference_items_are_named(wh):
    actions = wh.verdicts(run=BASELINE, kind="action")
    scored = wh.scenarios(run=BASELINE).select("scenario_name", "is_action_match")
    verdict = dict(zip(scored["scenario_name"], scored["is_action_match"]))
    for name, items in actions.group_by("scenario_name"):
        if verdict.get(name[0]) is not None and items.height == 1:
            assert items["passed"][0] == verdict[name[0]]  # one reference item: matched iff the signal passed
    missing = actions.filter(~pl.col("passed"))
    assert missing.height > 0 and missing["expected_json"].null_count() == 0 and missing["actual_json"].null_count() == missing.height


def test_tau2_simulations_bring_messages_and_tool_calls(tmp_path):
    from tests.test_external import ORCHESTRA

    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(ORCHESTRA / "trajectories" / "toolorchestra_airline_gpt-5_1trial.json")
    counts = wh.sql("SELECT (SELECT count(*) FROM turns) AS turns, (SELECT count(*) FROM tool_calls) AS calls, "
                    "(SELECT count(*) FROM tool_calls WHERE result IS NOT NULL) AS answered")
    assert counts["turns"][0] > 400 and counts["calls"][0] > 100 and counts["answered"][0] == counts["calls"][0]


def test_show_explains_a_failed_scenario_in_100_columns(wh, ingested):
    done = runner.invoke(app, ["show", BASELINE, "qa__telephone_inventor", "-w", str(ingested[0].tables.root)],
                         env={"COLUMNS": "100"})
    assert done.exit_code == 0, done.output
    text = done.output
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "FAILED: failed by judge_passed" in text
    assert "score 0 against threshold 0.9" in text and "the judge itself failed" in text
    assert "judge's reason: Error: 500 Server Error" in text
    assert text.index("signals") < text.index("timeline (8 turns, 0 tool calls, in order)")


def test_show_names_what_each_signal_rests_on(wh, ingested):
    root = str(ingested[0].tables.root)
    failed = runner.invoke(app, ["show", MIXED, "--failed", "-w", root, "-f", "json"])
    rows = json.loads(failed.output)
    assert rows and all(r["is_successful"] is False for r in rows)
    stalled = next(r for r in rows if r["stalled"])
    text = runner.invoke(app, ["show", MIXED, stalled["scenario_name"], "-w", root]).output
    assert "stalled: the agent made" in text
    db = next(r for r in rows if "db_state_match" in r["failed"])
    text = runner.invoke(app, ["show", MIXED, db["scenario_name"], "-w", root]).output
    assert "expected DB hash" in text and "actual DB hash" in text
    nl = wh.verdicts(run=MIXED, kind="nl_assertion")["scenario_name"][0]
    text = runner.invoke(app, ["show", MIXED, nl, "-w", root]).output
    assert "assertions passed" in text
    whole = json.loads(runner.invoke(app, ["show", MIXED, nl, "-w", root, "-f", "json"]).output)
    assert {"scenario", "verdicts", "judge", "turns", "tool_calls"} <= set(whole)


def test_show_says_what_is_missing(ingested):
    done = runner.invoke(app, ["show", BASELINE, "nope", "-w", str(ingested[0].tables.root)])
    assert done.exit_code == 2 and "no scenario 'nope'" in done.output
    done = runner.invoke(app, ["show", BASELINE, "-w", str(ingested[0].tables.root)])
    assert done.exit_code == 2 and "--failed" in done.output


def test_judge_outages_are_told_apart_from_agent_failures(tmp_path):
    """On the embedded sample two scenarios fail only because the judge was down (its reason
    `Error: ...`): the judge_errors view marks them, rates and summary say so on stderr, and the
    summary itself stays upstream's byte for byte."""
    import subprocess
    import sys
    from pathlib import Path

    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(REPO / "data" / "runs")
    errors = wh.judge_errors()
    assert sorted(errors.filter(pl.col("judge_only"))["scenario_name"]) == ["qa__telephone_inventor", "simple_qa_1"]
    assert errors["reason"].str.starts_with("Error:").all()
    scorelake_bin = str(Path(sys.executable).parent / "scorelake")
    done = subprocess.run([scorelake_bin, "summary", BASELINE, "-w", wh.location], capture_output=True, text=True)
    assert done.stdout == (CONFORMANCE / BASELINE / "all_summary.txt").read_text()
    assert "1 scenario(s) failed only because the judge itself failed" in done.stderr
    assert "qa__telephone_inventor" in done.stderr
    done = subprocess.run([scorelake_bin, "rates", "-w", wh.location], capture_output=True, text=True)
    assert done.stderr.count("failed only because the judge itself failed") == 2


def test_the_task_is_what_the_user_simulator_was_told(wh, ingested):
    """The scenario's task (scenario_config/user_prompt.txt) is stored whole and shown by `show`."""
    stored = wh.sql("SELECT scenario_name, instructions, origin FROM tasks WHERE run_id = $run", {"run": BASELINE})
    on_disk = {p.name: (p / "scenario_config" / "user_prompt.txt").read_text() for p in scenario_files(BASELINE)
               if (p / "scenario_config" / "user_prompt.txt").exists()}
    assert on_disk and dict(zip(stored["scenario_name"], stored["instructions"])) == on_disk
    assert set(stored["origin"]) == {"scenario_config/user_prompt.txt"}
    name = sorted(on_disk)[0]
    assert wh.evidence(BASELINE, name).task.instructions == on_disk[name]
    text = runner.invoke(app, ["show", BASELINE, name, "-w", str(ingested[0].tables.root)]).output
    assert "the task (scenario_config/user_prompt.txt" in text
    assert on_disk[name].split()[0] in text.split("signals")[0]  # before the signals, the measure of the rest
    whole = json.loads(runner.invoke(app, ["show", BASELINE, name, "-w", str(ingested[0].tables.root),
                                           "-f", "json"]).output)
    assert whole["task"]["instructions"] == on_disk[name]


def test_instructions_are_stored_once_each_and_put_back_on_every_task(tmp_path):
    """Every run of a suite gives its scenarios the same instructions: stored once per distinct text
    (task_instructions, by any run), named by hash from tasks, put back on every row by stg_tasks;
    rows an older scorelake wrote (each with its own text, no task_instructions table) read as they did."""
    runs = REPO / "data" / "runs"
    on_disk = {(p.parent.name, p.name): (p / "scenario_config" / "user_prompt.txt").read_text()
               for p in runs.glob("eval_*/*")  # the scenarios, not a killed attempt's folder
               if ".killed." not in p.name and (p / "scenario_config" / "user_prompt.txt").exists()}
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(min(runs.iterdir()), prefect=False)
    wh.ingest(runs, prefect=False)  # the second run: only the texts the first did not hold
    tables = Store(wh.location).tables
    stored = tables.read("task_instructions").collect()
    assert sorted(stored["instructions"]) == sorted(set(on_disk.values())) and stored.height < len(on_disk)
    assert tables.read("tasks").select(pl.col("instructions").is_null().all()).collect().item()

    def read_back(warehouse: scorelake.Warehouse) -> dict[tuple[str, str], str]:
        rows = warehouse.sql("SELECT run_id, scenario_name, instructions FROM tasks")
        return {(r, s): text for r, s, text in rows.iter_rows()}

    assert read_back(wh) == on_disk
    older = wh.sql("SELECT * FROM stg_tasks").with_columns(instructions_hash=pl.lit(None, pl.String))
    tables.replace("tasks", frame("tasks", older.to_dicts()))
    shutil.rmtree(tables.root / "task_instructions")
    tables.schema_file("task_instructions").unlink()
    tables.db_path.unlink()
    assert read_back(scorelake.open(wh.location)) == on_disk  # a reader: its views bound, the table missing
    wh.ingest(runs, prefect=False)  # a write creates the table; nothing re-read
    assert Store(wh.location).tables.read("task_instructions").collect().is_empty()
    assert read_back(scorelake.open(wh.location)) == on_disk


def test_tau_tasks_bring_the_user_instructions(tmp_path):
    from tests.test_external import SIERRA, TAU_BENCH

    wh = scorelake.open(tmp_path / "wh")
    telecom = next(SIERRA.glob("*telecom*.json"))
    wh.ingest(telecom, prefect=False)
    wh.ingest(TAU_BENCH, prefect=False)
    tasks = wh.sql("SELECT t.origin, t.instructions FROM tasks AS t JOIN stg_scenarios AS s "
                   "USING (run_id, scenario_name)")
    counts = wh.sql("SELECT count(*) AS n FROM stg_scenarios")["n"][0]
    assert tasks.height == counts
    tau2 = tasks.filter(pl.col("origin") == "tau2 task user_scenario")["instructions"]
    assert tau2.len() > 0 and all("reason for call: " in t for t in tau2)
    assert any(t.startswith("persona: ") for t in tau2)  # where the task gives the user a persona
    v1 = tasks.filter(pl.col("origin") == "tau-bench task instruction")["instructions"]
    assert v1.len() > 0 and all(t.startswith("Your user id is") or len(t) > 20 for t in v1)
