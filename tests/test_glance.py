"""Output a person reads at a glance (issue 59): a headline per run in every face, listings that
stay short and keep their keys, every column explained."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from tests.conftest import CONFORMANCE, REPO, summary_rates

SAMPLE = "eval_20260903_140200"  # data/runs' first run

runner = CliRunner()


@pytest.fixture(scope="module")
def wh(ingested) -> scorelake.Warehouse:
    return scorelake.open(ingested[0].location)


def test_a_runs_headline_is_the_runners_first_line_and_what_history_and_the_judge_say(wh):
    headlines = wh.headlines()
    assert [h.run_id for h in headlines] == wh.runs()["run_id"].to_list()
    history = {r["run_id"]: r for r in wh.history().iter_rows(named=True)}
    errors = wh.judge_errors()
    for h in headlines:
        assert (h.success_passed, h.success_total) == summary_rates(h.run_id)["(all)", "success"]
        past = history[h.run_id]
        assert (h.previous_run, h.pairs, h.broken, h.fixed, h.change) == (
            past["previous_run"], past["pairs"], past["broken"], past["fixed"], past["change"])
        mine = errors.filter(pl.col("run_id") == h.run_id)
        assert (h.judge_errors, h.judge_only) == (mine.height, mine["judge_only"].sum())
        domains = wh.rates(run=h.run_id).filter(pl.col("domain") != "(all)")
        lowest = domains["success_rate"].min()
        if domains.height > 1:
            worst = domains.filter(pl.col("success_rate") == lowest).sort("scenarios", descending=True)
            assert h.worst_domain == worst["domain"][0] and h.worst_passed / h.worst_total == lowest
        assert h.stalled == wh.rates(run=h.run_id)["stalled"][0]


def test_the_headline_is_in_rates_summary_brief_the_viewer_and_the_report(wh, tmp_path):
    from starlette.testclient import TestClient

    from scorelake.present import headline_text
    from scorelake.web import make_app

    lines = [headline_text(h) for h in wh.headlines()]
    brief = runner.invoke(app, ["summary", "--brief", "-w", wh.location])
    assert brief.exit_code == 0 and brief.stdout.splitlines() == lines
    first = wh.headlines()[0]
    assert re.match(rf"{first.run_id}: success [\d.]+% {first.success_passed}/{first.success_total} \(95% CI ",
                    lines[0])
    rates = runner.invoke(app, ["rates", "-r", first.run_id, "-w", wh.location]).stdout.splitlines()
    assert rates[0] == f"{first.run_id} (policy recorded): {lines[0].split(': ', 1)[1]}"
    assert rates[3].split()[0] == "(all)"  # the whole run's row first, in the table as in JSON and CSV
    missing = runner.invoke(app, ["summary", "-w", wh.location])
    assert missing.exit_code == 2 and "--brief" in missing.stderr
    page = TestClient(make_app(wh)).get("/").text
    report = wh.report()
    for line in lines:
        said = line.split(": ", 1)[1]
        assert f'<p class="headline">{said}</p>' in page and said in report


def test_every_conformance_session_has_a_headline(wh):
    assert {h.run_id for h in wh.headlines()} == {p.name for p in CONFORMANCE.glob("eval_*")}


# ---- every column explained -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """The sample's runs with people's reviews and a judge asked three times over: every table the
    command line prints has rows."""
    from tests.judge_server import JudgeServer
    from tests.test_rejudge import replay

    wh = scorelake.open(tmp_path_factory.mktemp("glance") / "wh")
    wh.ingest(REPO / "data" / "runs", prefect=False)
    with JudgeServer(replay) as server:
        wh.rejudge("replay", url=server.url, model="judge-model-x", repeat=3, concurrency=4, retries=0, prefect=False)
    for n, name in enumerate(wh.scenarios(run=SAMPLE)["scenario_name"][:6]):
        wh.review(SAMPLE, name, "judge_passed", "pass" if n % 2 else "fail", reviewer="alice")
        wh.review(SAMPLE, name, "judge_passed", "pass", reviewer="bob")
    return wh


def tables_of(wh: scorelake.Warehouse) -> list[list[str]]:
    """Each command that prints tables, on the sample: ``--format table`` and its arguments."""
    first, second = wh.runs()["run_id"].to_list()[:2]
    return [["rates"], ["rates", "--by", "signal"], ["rates", "--calibrated", "-r", SAMPLE],
            ["compare", first, second], ["history"], ["flaky"], ["passk"], ["log"], ["policies"],
            ["latency"], ["latency", "--by", "scenario"], ["voice"], ["voice", "--by", "scenario"],
            ["cost"], ["cost", "--price", "agent=1,2"], ["show", SAMPLE, "--failed"], ["show", "--grep", "order"],
            ["judges"], ["judges", "--stability"], ["judges", "--stability", "--by", "scenario"],
            ["compare-judges", "recorded", "replay@majority"], ["compare-judges", "human", "recorded", "--sweep"],
            ["compare-judges", "human", "recorded", "--plan", "0.5"], ["reviews"], ["reviews", "--history"],
            ["judges", "--calibrate", "recorded"], ["rates", "--selective"], ["rates", "--ppi"], ["gate", first, second]]


@pytest.mark.slow  # a judge asked three times over the sample, or whole processes on a terminal
def test_every_column_a_table_prints_is_explained_in_its_legend(judged, monkeypatch):
    from scorelake.cli import _terminal

    seen: dict[str, str] = {}
    legend = _terminal._legend

    def recorded(grid):
        said = legend(grid)
        seen.update({h: " ".join(args) for h in grid.headers if h not in said})
        shown_headers.update(grid.headers)
        return said

    shown_headers: set[str] = set()
    monkeypatch.setattr(_terminal, "_legend", recorded)
    monkeypatch.setenv("COLUMNS", "400")
    for args in tables_of(judged):
        done = runner.invoke(app, [*args, "-w", judged.location])
        assert done.exit_code == 0, (args, done.output)
    assert not seen, f"columns without a meaning: {seen}"
    assert len(shown_headers) > 80


@pytest.mark.slow  # a judge asked three times over the sample, or whole processes on a terminal
def test_every_table_heading_of_the_viewer_and_the_report_says_what_it_means(judged):
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    client = TestClient(make_app(judged, token="t" * 16, review=True))
    client.cookies.set("scorelake_token", "t" * 16)
    first, second = judged.runs()["run_id"].to_list()[:2]
    failed = judged.scenarios(run=SAMPLE).filter(~pl.col("is_successful"))["scenario_name"][0]
    pages = {path: client.get(path + ("&" if "?" in path else "?") + "token=" + "t" * 16).text for path in (
        "/", f"/runs/{SAMPLE}", f"/runs/{SAMPLE}/latency", f"/runs/{SAMPLE}/flaky", f"/runs/{SAMPLE}/voice",
        f"/runs/{SAMPLE}/judge", f"/runs/{SAMPLE}/scenarios/{failed}", f"/compare?a={first}&b={second}",
        "/search?q=order", "/review")}
    pages["report"] = judged.report()
    untitled = {(path, h) for path, text in pages.items() for h in re.findall(r"<th>([^<]+)</th>", text)}
    assert not untitled, " | ".join(sorted({h for _, h in untitled}))
    assert sum(text.count("<th title=") for text in pages.values()) > 100


# ---- long output that stays readable --------------------------------------------------------------

def test_listings_take_a_limit_and_a_sort_in_every_format(wh):
    every = runner.invoke(app, ["latency", "--by", "scenario", "-f", "csv", "-w", wh.location])
    rows = pl.read_csv(every.stdout.encode())
    slowest = runner.invoke(app, ["latency", "--by", "scenario", "--top", "5", "--sort", "-p95_ms", "-f", "csv",
                                  "-w", wh.location])
    top = pl.read_csv(slowest.stdout.encode())
    slowest_first = rows["p95_ms"].sort(descending=True, nulls_last=True)[:5].to_list()
    assert top.height == 5 and top["p95_ms"].to_list() == slowest_first
    assert f"the first 5 of {rows.height} rows" in slowest.stderr
    limited = runner.invoke(app, ["voice", "--by", "scenario", "--limit", "3", "-f", "json", "-w", wh.location])
    assert len(json.loads(limited.stdout)) == 3
    typo = runner.invoke(app, ["voice", "--by", "scenario", "--sort", "overlap", "-w", wh.location])
    assert typo.exit_code == 2 and "did you mean 'overlap_s'?" in typo.stderr
    for command in (["flaky"], ["reviews"], ["judges"], ["cost"], ["compare-judges", "recorded", "human"]):
        assert "--limit" in runner.invoke(app, [*command, "--help"]).stdout, command
    versions = runner.invoke(app, ["log", "--last", "2", "-f", "json", "-w", wh.location])
    assert [v["version"] for v in json.loads(versions.stdout)] == [v.version for v in wh.log()][-2:]


def test_split_tables_repeat_their_key_columns_and_long_names_are_shortened_in_the_middle(wh, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    latency = runner.invoke(app, ["latency", "--no-legend", "-w", wh.location]).stdout.split("\n\n")
    assert len(latency) > 1
    headers = [part.splitlines()[1 if n == 0 else 0].split()[:2] for n, part in enumerate(latency)]
    assert all(h == ["run", "domain"] for h in headers), headers
    by_scenario = runner.invoke(app, ["voice", "--by", "scenario", "--no-legend", "-w", wh.location]).stdout
    names = set(wh.voice(by="scenario")["scenario_name"])
    long = max(names, key=len)
    assert len(long) > 60 and long not in by_scenario
    shortened = [line.split("  ")[1].strip() for line in by_scenario.splitlines() if "…" in line]
    ends = [s.split("…") for s in shortened]
    assert ends and all(head and any(n.startswith(head) and n.endswith(tail) for n in names) for head, tail in ends)
    assert max(map(len, by_scenario.splitlines())) <= 100


def test_a_legend_explains_each_column_once_a_command_and_drops_with_no_legend(wh, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    said = runner.invoke(app, ["rates", "-w", wh.location]).stdout
    assert said.count("\nsuccess: the composite is_successful") == 1 and said.count("\n(all) ") >= len(wh.runs())
    assert "success: the composite" not in runner.invoke(app, ["rates", "--no-legend", "-w", wh.location]).stdout
    monkeypatch.delenv("COLUMNS")
    assert "success: the composite" not in runner.invoke(app, ["rates", "-w", wh.location]).stdout  # piped


@pytest.mark.slow  # a judge asked three times over the sample, or whole processes on a terminal
def test_output_longer_than_the_terminal_goes_through_the_pager_and_never_when_piped(wh, tmp_path):
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import sys
    import termios

    pager = tmp_path / "pager"
    pager.write_text('#!/bin/sh\ncat > "$PAGED"\n')
    pager.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | {"SCORELAKE_PAGER": str(pager)}

    def on_a_terminal(*args: str) -> tuple[str | None, str]:
        paged = tmp_path / f"paged-{args[0]}"
        main, screen = pty.openpty()
        fcntl.ioctl(screen, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        subprocess.run([sys.executable, "-m", "scorelake", *args, "-w", wh.location], stdin=screen, stdout=screen,
                       stderr=screen, env=env | {"PAGED": str(paged)}, timeout=300, check=True)
        os.close(screen)
        shown = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        os.close(main)
        return (paged.read_text() if paged.exists() else None), shown.decode()

    paged, shown = on_a_terminal("latency", "--by", "scenario")
    assert paged is not None and paged.count("\n") > 30  # bold headings kept: less -R shows them
    assert max(len(re.sub(r"\x1b\[[0-9;]*m", "", line)) for line in paged.splitlines()) <= 100
    assert "response latency (ms)" not in shown  # all of it went to the pager
    paged, shown = on_a_terminal("policies")
    assert paged is None and "recorded" in shown  # it fits the screen: written as it is
    piped = subprocess.run([sys.executable, "-m", "scorelake", "latency", "--by", "scenario", "-w", wh.location],
                           capture_output=True, text=True, env=env | {"PAGED": str(tmp_path / "piped")}, check=True)
    assert not (tmp_path / "piped").exists() and piped.stdout.count("\n") > 30


# ---- honest small numbers --------------------------------------------------------------------------

@pytest.mark.slow  # a judge asked three times over the sample, or whole processes on a terminal
def test_small_numbers_say_too_few_and_a_plan_adds_up(judged):
    agreement = runner.invoke(app, ["compare-judges", "human", "recorded", "--no-legend", "-w", judged.location])
    assert agreement.exit_code == 0 and re.search(r"too few pairs \(\d < 10\)", agreement.stdout)
    assert not re.search(r"\[(-?\d\.\d\d), \1\]", agreement.stdout)  # no interval of one point
    plan = runner.invoke(app, ["compare-judges", "human", "recorded", "--plan", "0.5", "-f", "table",
                               "--no-legend", "-w", judged.location]).stdout
    needed, labelled, more, total = map(int, re.search(
        r"(\d+) pairs needed \(.* = \d+\); (\d+) labelled \+ (\d+) more = (\d+)", plan).groups())
    strata = plan.split("label more\n", 1)[1].split("\n\n")[0].splitlines()[1:]
    assert labelled + more == total and more == sum(int(line.split()[-1]) for line in strata if line[-1:].isdigit())
    assert total == needed or f"only {more} scenarios are unlabelled" in plan
    calibrated = runner.invoke(app, ["rates", "--calibrated", "-r", SAMPLE, "-f", "json", "-w", judged.location])
    rows = json.loads(calibrated.stdout)
    assert rows and all(r["judge_passed_corrected_ci_low"] is None and r["judge_passed_corrected_note"]
                        for r in rows if r["judge_labels"])  # 6 labels: no [0%, 100%] without a word
    majority = judged.judges().filter(pl.col("judge") == "replay@majority")
    assert majority["model"].to_list() == ["judge-model-x"]  # its asks' model, not "each run's own"


def test_undo_brings_back_the_verdict_before_or_withdraws_the_first(tmp_path):
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(REPO / "data" / "runs", prefect=False)
    name = wh.scenarios(run=SAMPLE)["scenario_name"][0]
    standing = lambda: wh.reviews(SAMPLE).filter(pl.col("scenario_name") == name)  # noqa: E731
    wh.review(SAMPLE, name, "judge_passed", "pass", reviewer="Dana", note="right answer")
    wh.review(SAMPLE, name, "judge_passed", "fail", reviewer="dana")
    wh.undo_review(SAMPLE, name, "judge_passed", reviewer="DANA")
    assert standing().select("verdict", "reviewer", "note").rows() == [("pass", "dana", "right answer")]
    wh.undo_review(SAMPLE, name, "judge_passed", reviewer="dana")  # the undo undone: fail again
    assert standing()["verdict"].to_list() == ["fail"]
    other = wh.scenarios(run=SAMPLE)["scenario_name"][1]
    wh.review(SAMPLE, other, "is_successful", "pass", reviewer="dana")
    wh.undo_review(SAMPLE, other, "is_successful", reviewer="dana")
    assert wh.reviews(SAMPLE).filter(pl.col("scenario_name") == other).is_empty()
    with pytest.raises(scorelake.NotFound, match="nothing to undo"):
        wh.undo_review(SAMPLE, other, "judge_passed", reviewer="dana")


# ---- a sample in the wheel; the cluster path an extra -----------------------------------------------

def test_demo_ingests_the_sample_inside_the_package_from_an_empty_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert scorelake.sample_runs().is_dir() and {p.name for p in scorelake.sample_runs().iterdir()} == {
        SAMPLE, "eval_20260904_080000"}
    missing = runner.invoke(app, ["ingest"])
    assert missing.exit_code == 2 and "scorelake demo" in missing.stderr
    shown = runner.invoke(app, ["demo"])
    assert shown.exit_code == 0 and "scorelake rates" in shown.stderr
    wh = scorelake.open(tmp_path / "data" / "warehouse")
    assert shown.stdout.splitlines()[0].startswith(f"{SAMPLE}: success ") and wh.scenarios().height == 46


def test_the_cluster_path_without_the_dask_extra_says_what_to_install(wh, monkeypatch):
    import importlib.util

    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("distributed", "prefect_dask") else found(name, *a))
    for args in (["rescore", "--policy", "x", "--dask-address", "tcp://127.0.0.1:9"],
                 ["ingest", str(scorelake.sample_runs()), "--task-runner", "dask"]):
        said = runner.invoke(app, [*args, "-w", wh.location])
        assert said.exit_code == 2 and "pip install 'scorelake[dask]'" in said.stderr, said.stderr
