"""Output a person reads: long lists cut to their first 20 with how many more and where the rest
are; cost says which priced side has no tokens and what unit its columns are in."""

from __future__ import annotations

import html

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from scorelake.present import listed, regression_text
from scorelake.transforms.analysis import Regression
from tests.conftest import BASELINE, CONFORMANCE

runner = CliRunner()


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> scorelake.Warehouse:
    wh = scorelake.open(tmp_path_factory.mktemp("workbench") / "wh")
    wh.ingest(CONFORMANCE / BASELINE, prefect=False)
    return wh


def test_a_long_list_is_cut_at_twenty_with_how_many_more():
    names = [f"scenario_{i:02d}" for i in range(25)]
    said = listed(names, more=" (--format json for all)")
    assert said.startswith("scenario_00, ") and "scenario_19" in said and "scenario_20" not in said
    assert said.endswith("... and 5 more (--format json for all)")
    assert listed(names[:20]) == ", ".join(names[:20])
    row = {"domain": "qa", "label": "regressed", "delta": -0.5, "p_value": 0.01}
    assert regression_text(Regression("qa", "regressed", row), names).endswith("... and 5 more")


def test_cost_says_which_priced_side_has_no_tokens_and_the_unit(wh):
    shown = runner.invoke(app, ["cost", "--price", "agent=3,15", "--price", "judge=1,4", "-w", wh.location])
    assert shown.exit_code == 0, shown.output
    assert "judge: priced, but the runs record no judge tokens" in shown.stderr
    assert "agent cost" in shown.stdout and "in the currency of the prices" in shown.stdout


def test_search_results_mark_the_phrase_and_link_the_run(wh):
    from starlette.testclient import TestClient

    from scorelake.web import make_app
    from scorelake.web._pages import marked

    assert marked("Order ORD-54321 <b>", "ord-") == "Order <mark>ORD-</mark>54321 &lt;b&gt;"
    page = TestClient(make_app(wh)).get("/search?q=ORD-54321").text
    assert "<mark>ORD-54321</mark>" in page and f'href="/runs/{BASELINE}?policy=recorded"' in page


def test_one_long_name_is_shortened_in_the_middle_instead_of_turning_the_table_into_records(monkeypatch):
    import io

    from scorelake.cli._terminal import Grid, show

    monkeypatch.setenv("COLUMNS", "100")
    out = io.StringIO()
    show(Grid(["scenario", "domain", "failed by"], [["tau2_" + "x" * 150, "tau2_retail", "is_action_match"],
                                                    ["short", "qa", "judge_passed_y"]]), stream=out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["scenario", "domain", "failed", "by"] and max(map(len, lines)) <= 100
    assert lines[2].startswith("tau2_xxx") and lines[2].endswith("is_action_match") and "…" in lines[2]
    assert len(lines) == 4  # a line a row: the name's start and end, the middle left out
    assert any(line.startswith("short ") for line in lines)  # a row each, not a block of records


def test_the_viewer_exports_a_filtered_run_page_and_the_reviews_as_csv(wh):
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    client = TestClient(make_app(wh))
    page = client.get(f"/runs/{BASELINE}?failed=1&domain=qa").text
    assert f'href="/runs/{BASELINE}/export.csv?domain=qa&amp;sort=position&amp;failed=1' in page
    exported = client.get(f"/runs/{BASELINE}/export.csv?failed=1&domain=qa")
    assert exported.headers["content-type"].startswith("text/csv")
    rows = pl.read_csv(exported.content)
    expected = wh.run_scenarios(BASELINE, failed_only=True, domain="qa")
    assert rows["scenario_name"].to_list() == expected["scenario_name"].to_list() and rows.height >= 1
    wh.review(BASELINE, "qa__speed_of_light", "judge_passed", "pass", reviewer="mallory", note="=HYPERLINK(1)")
    reviewing = TestClient(make_app(wh, token="t" * 16, review=True))
    assert reviewing.get("/review/export.csv").status_code == 401
    reviews = pl.read_csv(reviewing.get("/review/export.csv?token=" + "t" * 16).content)
    assert reviews["reviewer"].to_list() == ["mallory"] and reviews["note"][0] == "'=HYPERLINK(1)"


def test_paging_a_filtered_run_page_keeps_the_failed_only_filter(wh):
    import re

    from starlette.testclient import TestClient

    from scorelake.web import make_app

    page = TestClient(make_app(wh, page_size=1)).get(f"/runs/{BASELINE}?failed=1").text
    following = re.search(r'id="next" href="([^"]+)"', page)[1]
    assert "failed=1" in following  # was failed=True, which the next page read as every scenario


def test_a_queue_of_what_changed_between_two_runs_and_one_scenario_of_two_runs_together(tmp_path):
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    later = "eval_20260904_093000"  # the baseline's scenarios again: two of them fixed
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest([CONFORMANCE / BASELINE, CONFORMANCE / later], prefect=False)
    c = wh.compare(BASELINE, later)
    queue = wh.review_queue("changed", between=[BASELINE, later])
    assert sorted(queue["scenario_name"]) == sorted(c.fixed + c.broken) and set(queue["run_id"]) == {later}
    assert queue["reason"].str.ends_with(f"since {BASELINE}").all()
    with pytest.raises(scorelake.InvalidArgument, match="the two runs"):
        wh.review_queue("changed")
    token = "t" * 16
    client = TestClient(make_app(wh, token=token, review=True))
    page = client.get(f"/review?token={token}&pick=sample&per_domain=20").text
    assert "↳ the same scenario, in another run" in page  # each sampled scenario of both runs, together


def test_help_paragraphs_wrap_to_the_terminal_not_to_the_source(monkeypatch):
    from scorelake.cli._app import reflowed

    assert reflowed("""One line.

    A paragraph
    over lines.

    Example: a
    Example: b
    """) == "One line.\n\nA paragraph over lines.\n\nExample: a\nExample: b"
    monkeypatch.setenv("COLUMNS", "80")
    shown = runner.invoke(app, ["rejudge", "--help"]).output
    line = next(line for line in shown.splitlines() if "upstream sends, and" in line)
    assert "upstream sends, and stores" in line  # the source breaks after "and": the help does not


def test_judge_scores_per_domain_beside_the_threshold_in_use(wh):
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    bins = wh.judge_scores(BASELINE)
    scores = wh.scenarios(run=BASELINE).filter(pl.col("judge_score").is_not_null())
    assert bins["scenarios"].sum() == scores.height
    qa = scores.filter(pl.col("domain") == "qa")
    expected = sorted(min(int(s * 10), 9) for s in qa["judge_score"])
    got = sorted(b for b, n in bins.filter(pl.col("domain") == "qa").select("bin", "scenarios").rows() for _ in range(n))
    assert got == expected
    page = TestClient(make_app(wh)).get(f"/runs/{BASELINE}/judge").text
    assert page.count('class="judge-scores"') == bins["domain"].n_unique() and 'class="threshold"' in page
    assert "threshold in use: 0.9" in page


def test_the_scenario_page_puts_the_evidence_first_and_folds_the_task_to_its_opening(wh):
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    page = TestClient(make_app(wh)).get(f"/runs/{BASELINE}/scenarios/qa__speed_of_light").text
    prompt = (CONFORMANCE / BASELINE / "qa__speed_of_light" / "scenario_config" / "user_prompt.txt").read_text()
    first_line = prompt.strip().splitlines()[0]
    task = page[page.index('<details class="task">'):]
    assert html.escape(first_line) in task[:task.index("</summary>")]  # the opening, folded
    order = [page.index(mark) for mark in ('class="outcome', '<div class="why">', '<pre class="reference">',
                                           '<ol class="transcript">', '<details class="task">', "<h2>Signals</h2>")]
    assert order == sorted(order)
