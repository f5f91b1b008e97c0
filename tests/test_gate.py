"""Regressions you can trust: compare pairs like with like (a scenario whose definition changed is
listed apart, not counted as broken), labels each domain's change by an exact McNemar test, and
`scorelake gate` gives CI an exit code."""

from __future__ import annotations

import json
import shutil
import time

import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from scorelake.transforms.analysis import label, minimum_detectable_difference
from tests.conftest import CONFORMANCE

runner = CliRunner()
MIXED, COPY = "eval_20260902_091500", "eval_20260902_101500"
EDITED = ("restaurant__pizza_veggie_combo", "restaurant__deli_italian_sub_lunch", "restaurant__burger_classic")


@pytest.fixture
def copies(tmp_path) -> scorelake.Warehouse:
    """A session and a copy of it in which three restaurant reference answers were edited (the
    scenarios changed, not the agent) and every other passing scenario broken: its end state (the
    final DB hash) where DB_STATE_MATCH gates it, else its clean exit (it timed out)."""
    runs = tmp_path / "runs"
    shutil.copytree(CONFORMANCE / MIXED, runs / MIXED)
    shutil.copytree(CONFORMANCE / MIXED, runs / COPY)
    for path in (runs / COPY).rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    for name in EDITED:
        reference = runs / COPY / name / "scenario_config" / "reference_answer.json"
        reference.write_text(json.dumps({"edited": True, "was": json.loads(reference.read_text())}))
    broken = []
    for metrics in json.loads((CONFORMANCE / MIXED / "all_metrics.json").read_text()):
        name = metrics["scenario_name"]
        if metrics.get("is_successful") is not True or name in EDITED:
            continue
        if metrics.get("db_state_match") is True:
            (runs / COPY / name / "final_scenario_db_hash.txt").write_text("db_hash: " + "0" * 64)
        else:
            path = runs / COPY / name / "metrics.json"
            path.write_text(json.dumps({**json.loads(path.read_text()), "stop_reason": "[TIMEOUT]"}))
        broken.append(name)
    assert len(broken) >= 6
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(runs)
    return wh


def test_a_changed_definition_is_listed_apart_and_the_broken_end_states_are_significant(copies):
    c = copies.compare(MIXED, COPY)
    assert sorted(d["scenario_name"] for d in c.changed_definitions) == sorted(EDITED)
    assert all(d["changed"] == ["reference"] for d in c.changed_definitions)
    assert not set(EDITED) & set(c.broken) and not set(EDITED) & set(c.fixed)
    whole = c.deltas.filter(c.deltas["domain"] == "(all)").row(0, named=True)
    assert whole["label"] == "regressed" and whole["p_value"] < 0.05 and whole["pairs"] == c.paired
    assert (c.paired, len(c.broken), len(c.fixed)) == (34 - len(EDITED), 11, 0)  # every scenario with a verdict
    assert c.only_a == [] and c.only_b == [] and c.lineage_changes == []
    everything = copies.compare(MIXED, COPY, all_scenarios=True)
    assert not everything.like_with_like and everything.paired == c.paired + len(EDITED)
    done = runner.invoke(app, ["compare", MIXED, COPY, "-w", copies.location, "--format", "json"])
    doc = json.loads(done.stdout)
    assert {d["scenario_name"] for d in doc["changed_definitions"]} == set(EDITED)
    assert doc["only_a"] == [] and doc["only_b"] == []


def test_the_gate_fails_a_significant_regression_with_exit_3_and_names_what_broke(copies):
    done = runner.invoke(app, ["gate", MIXED, COPY, "-w", copies.location])
    assert done.exit_code == 3, done.output
    assert "regressed (all)" in done.output and "gate: failed" in done.output
    result = copies.gate(MIXED, COPY)
    assert not result.passed and {r.domain for r in result.regressions} >= {"(all)"}
    loose = copies.gate(MIXED, COPY, max_drop=99)  # a drop within the limit passes
    assert loose.passed
    assert runner.invoke(app, ["gate", MIXED, MIXED, "-w", copies.location]).exit_code == 0  # itself passes
    assert runner.invoke(app, ["gate", COPY, MIXED, "-w", copies.location]).exit_code == 0  # an improvement
    bad = runner.invoke(app, ["gate", MIXED, COPY, "--domain", "nope", "-w", copies.location])
    assert bad.exit_code == 2


def test_runs_with_disjoint_scenarios_pair_nothing_and_pass_the_gate(tmp_path):
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest([CONFORMANCE / MIXED, CONFORMANCE / "eval_20260904_080000"])
    c = wh.compare(MIXED, "eval_20260904_080000")
    assert (c.paired, len(c.only_a), len(c.only_b)) == (6, 28, 8)  # the few both ran are the ones compared
    assert wh.gate(MIXED, "eval_20260904_080000").passed


def test_labels_never_call_noise_a_regression():
    assert label(0, 0, 1.0, 0.05) == "unchanged"
    assert label(1, 0, 1.0, 0.05) == "inconclusive"  # a single flipped scenario
    assert label(6, 0, 0.03125, 0.05) == "regressed" and label(0, 6, 0.03125, 0.05) == "improved"
    # 100 pairs, 20 discordant: a McNemar test at 0.05 with power 0.8 finds about 12 points
    assert minimum_detectable_difference(100, 20) == pytest.approx(0.1238, abs=1e-3)
    assert minimum_detectable_difference(14, 2) is None  # too few pairs to find any difference


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")  # the app in this process
def test_the_viewers_compare_page_picks_runs_and_shows_intervals_labels_and_what_was_not_compared(copies):
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    client = TestClient(make_app(copies))
    picker = client.get("/compare")
    assert picker.status_code == 200 and 'id="run-a"' in picker.text and 'id="run-b"' in picker.text
    page = client.get(f"/compare?a={MIXED}&b={COPY}").text
    assert "A 95% CI" in page and "regressed" in page and "definition changed (3)" in page


def test_history_marks_the_change_beyond_the_noise_as_compare_labels_it(copies):
    c = copies.compare(MIXED, COPY)
    whole = c.deltas.filter(c.deltas["domain"] == "(all)").row(0, named=True)
    rows = {r["run_id"]: r for r in copies.history().iter_rows(named=True)}
    assert rows[MIXED]["previous_run"] is None and rows[MIXED]["change"] is None
    step = rows[COPY]
    assert step["previous_run"] == MIXED and step["change"] == "regressed" == whole["label"]
    assert (step["pairs"], step["broken"], step["fixed"]) == (c.paired, len(c.broken), len(c.fixed))
    assert step["p_value"] == pytest.approx(whole["p_value"])
    qa = copies.history("qa")
    label_qa = c.deltas.filter(c.deltas["domain"] == "qa")["label"][0]
    assert qa.filter(qa["run_id"] == COPY)["change"][0] == label_qa  # per domain as well
    shown = runner.invoke(app, ["history", "-w", copies.location])
    assert shown.exit_code == 0 and "REGRESSED" in shown.stdout
    assert runner.invoke(app, ["history", "--alpha", "2", "-w", copies.location]).exit_code == 2


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_flaky_tasks_from_history_and_where_they_show(copies):
    """Each scenario that flipped between the two runs is flaky in their group's history; an edited
    one starts a new series (its definition changed), so it is not."""
    c = copies.compare(MIXED, COPY)
    flaky = copies.flaky(run=COPY)
    assert set(flaky["task_id"]) == set(c.broken) | set(c.fixed)
    assert not set(EDITED) & set(flaky["task_id"])
    assert (flaky["verdicts"] == 2).all() and (flaky["flips"] == 1).all() and (flaky["flip_rate"] == 1.0).all()
    assert copies.flaky(run=COPY, min_verdicts=3).is_empty()
    shown = runner.invoke(app, ["flaky", "--run", COPY, "-w", copies.location, "--format", "json"])
    assert {r["task_id"] for r in json.loads(shown.stdout)} == set(flaky["task_id"])
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    client = TestClient(make_app(copies))
    assert f'href="/runs/{COPY}/flaky' in client.get(f"/runs/{COPY}").text
    page = client.get(f"/runs/{COPY}/flaky").text
    assert all(name in page for name in c.broken) and 'id="flaky"' in page


def test_the_reports_comparison_is_like_with_like_and_says_what_it_left_out(copies):
    page = copies.report()
    section = page.split("Latest run against the previous one", 1)[1].split("Stalled scenarios", 1)[0]
    assert "like with like" in section and "regressed" in section and "detectable" in section
    assert "definition changed (3)" in section and all(name in section for name in EDITED)


@pytest.mark.slow
def test_the_scheduled_refresh_gates_each_new_run_and_posts_a_regression_to_the_webhook(prefect_server, tmp_path):
    """The refresh flow, run through the suite's Prefect server: a new run that regressed against the
    run before it in its group is POSTed, as JSON, to a local Slack-compatible webhook."""
    import http.server
    import threading

    from scorelake.flows.prefect_flows import refresh_flow

    heard: list[dict] = []

    class Webhook(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            heard.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Webhook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = tmp_path / "base"
        shutil.copytree(CONFORMANCE / MIXED, base / MIXED)
        warehouse = str(tmp_path / "wh")
        scorelake.open(warehouse).ingest(base)
        new = tmp_path / "new"  # a new session of the same group arrives: every passing scenario timed out
        shutil.copytree(CONFORMANCE / MIXED, new / COPY)
        for path in (new / COPY).rglob("metrics.json"):
            path.chmod(0o644)
            doc = json.loads(path.read_text())
            if doc.get("is_successful") is True:
                path.write_text(json.dumps({**doc, "stop_reason": "[TIMEOUT]"}))
        result = refresh_flow(runs_dirs=[str(new)], warehouse=warehouse,
                              notify_url=f"http://127.0.0.1:{server.server_port}/")
    finally:
        server.shutdown()
    (gated,) = result.gates
    assert not gated.passed and (gated.comparison.run_a, gated.comparison.run_b) == (MIXED, COPY)
    assert len(heard) == 1 and "REGRESSED" in heard[0]["text"] and heard[0]["gate"]["passed"] is False


def test_a_view_says_what_each_scenario_was_graded_against(copies):
    import polars as pl

    rows = copies.sql("SELECT * FROM scenario_lineage WHERE policy_name = 'recorded'")
    assert rows.height == 68 and rows["definition_hash"].null_count() == 0
    hashes = rows.group_by("scenario_name").agg(pl.col("definition_hash").n_unique().alias("n"))
    changed = set(hashes.filter(pl.col("n") > 1)["scenario_name"])
    assert changed == set(EDITED)  # only the edited reference answers changed what they are graded against
    judged = rows.filter(pl.col("judge_prompt_md5").is_not_null())
    assert judged.height and (judged["judge"] == "recorded").all() and judged["judge_model"].null_count() == 0
    assert set(rows["scorer_version"]) == {"1"} and rows["judge_threshold"].null_count() == 0


def test_tau2_end_states_broken_in_a_copy_are_found_and_gated(tmp_path):
    """A tau2-bench results file and a copy of it in which every passing simulation's end state
    (its DB check) is broken: each is paired by name, the drop is significant, the gate fails."""
    source = (CONFORMANCE.parent.parent / "external/tau2/web/leaderboard/public/submissions/"
              "toolorchestra_nvidia_2025-12-02/trajectories/toolorchestra_airline_gpt-5_1trial.json")
    doc = json.loads(source.read_text())
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "airline_before.json").write_text(json.dumps(doc))
    broke = 0
    for sim in doc["simulations"]:
        info = sim.get("reward_info") or {}
        if info.get("reward") == 1.0 and isinstance(info.get("db_check"), dict):
            info["db_check"]["db_match"] = False
            info["reward"] = 0.0
            broke += 1
    (runs / "airline_after.json").write_text(json.dumps(doc))
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(runs)
    c = wh.compare("airline_before", "airline_after")
    whole = c.deltas.filter(c.deltas["domain"] == "(all)").row(0, named=True)
    assert broke >= 20 and c.paired == 50 and not c.changed_definitions and not c.only_a
    assert len(c.broken) == broke and whole["label"] == "regressed"
    assert not wh.gate("airline_before", "airline_after").passed
    assert wh.gate("airline_before", "airline_before").passed


class _Webhook:
    """A local webhook whose answer a test sets: a status, a hang, or a trickle of bytes."""

    def __init__(self):
        import http.server
        import threading

        self.heard, self.behaviour, self.delay_s = [], "ok", 0.0
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if hook.behaviour == "hang":
                    time.sleep(5)
                    return
                if hook.behaviour == "trickle":  # headers at once, then a byte every 0.2 s for ever
                    self.send_response(200)
                    self.send_header("Content-Length", "1000")
                    self.end_headers()
                    for _ in range(25):
                        self.wfile.write(b".")
                        self.wfile.flush()
                        time.sleep(0.2)
                    return
                time.sleep(hook.delay_s)
                status = 500 if hook.behaviour == "fail" else 400 if body.get("text") == "refuse me" else 200
                if status == 200:
                    hook.heard.append(body)
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.slow  # seconds of one call: the fast loop leaves it to CI
@pytest.mark.parametrize("behaviour", ["fail", "hang", "trickle", "down"])
def test_an_alert_the_webhook_does_not_take_is_kept_and_sent_with_the_next_run(tmp_path, behaviour):
    """A webhook that answers 500, hangs, trickles its answer or is down: each call ends within its
    total deadline, is retried, and the alert is kept in the outbox; the next delivery, once the
    webhook answers, sends the kept alert first, then the new one, and empties the outbox."""
    from scorelake.pipeline import deliver

    hook = _Webhook()
    url = hook.url
    if behaviour == "down":
        hook.close()
    else:
        hook.behaviour = behaviour
    outbox = tmp_path / "outbox.jsonl"
    try:
        started = time.monotonic()
        first = deliver(url, [{"text": "run 1 regressed"}], outbox, deadline_s=1.0, attempts=2, backoff_s=0.05)
        assert time.monotonic() - started < 6, "each call ends at its deadline"
        assert (first.sent, first.kept) == (0, 1) and first.last_error
        assert outbox.is_file()
        if behaviour == "down":
            hook = _Webhook()
            url = hook.url
        hook.behaviour = "ok"
        second = deliver(url, [{"text": "run 2 regressed"}], outbox, deadline_s=1.0, attempts=2, backoff_s=0.05)
        assert (second.sent, second.kept) == (2, 0)
        assert [h["text"] for h in hook.heard] == ["run 1 regressed", "run 2 regressed"]
        assert not outbox.exists()
    finally:
        hook.close()


@pytest.mark.slow  # seconds of one call: the fast loop leaves it to CI
def test_alerts_go_on_past_one_refused_for_good_or_unreadable_and_overlapping_runs_send_each_once(tmp_path):
    """An alert the webhook refuses for good (400) and a line of the outbox that is not UTF-8 are set
    aside with the reason, and the alerts after them are delivered, in order; two runs delivering one
    outbox at once send each alert once; a delivery stops at its time budget, the rest kept."""
    import threading

    from scorelake.pipeline import deliver

    hook = _Webhook()
    outbox = tmp_path / "outbox.jsonl"
    try:
        outbox.write_bytes(b'{"text": "kept 1"}\n\xff\xfe not UTF-8\n')
        first = deliver(hook.url, [{"text": "refuse me"}, {"text": "new 1"}], outbox, deadline_s=2.0, attempts=2,
                        backoff_s=0.05)
        assert (first.sent, first.refused, first.kept) == (2, 2, 0) and first.last_error is None
        assert [h["text"] for h in hook.heard] == ["kept 1", "new 1"]
        refused = [json.loads(line) for line in (tmp_path / "outbox.jsonl.refused").read_text().splitlines()]
        assert [r["reason"].split(":")[0] for r in refused] == ["unreadable", "the webhook answered HTTP 400"]
        assert not outbox.exists()

        hook.heard.clear()
        hook.delay_s = 0.05
        outbox.write_text("".join(json.dumps({"text": f"queued {k}"}) + "\n" for k in range(12)))
        runs = [threading.Thread(target=deliver, args=(hook.url, [{"text": f"run {k}"}], outbox)) for k in (1, 2)]
        for run in runs:
            run.start()
        for run in runs:
            run.join(60)
        if outbox.exists():  # the run that found delivery under way left its alert to the next one
            deliver(hook.url, [], outbox)
        texts = [h["text"] for h in hook.heard]
        assert len(texts) == len(set(texts)) == 14 and texts[:12] == [f"queued {k}" for k in range(12)]

        hook.heard.clear()
        outbox.write_text("".join(json.dumps({"text": f"many {k}"}) + "\n" for k in range(1000)))
        started = time.monotonic()
        budgeted = deliver(hook.url, [], outbox, budget_s=1.0)
        assert time.monotonic() - started < 3 and budgeted.kept == 1000 - budgeted.sent > 0
        assert "budget" in budgeted.last_error
        assert [h["text"] for h in hook.heard] == [f"many {k}" for k in range(budgeted.sent)]
    finally:
        hook.close()
