"""The HTML report, rendered by a real headless Chromium and read back from its DOM."""

from __future__ import annotations

import re
import shutil
import subprocess

import polars as pl
import pytest
from typer.testing import CliRunner

from scorelake.cli import app

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
runner = CliRunner()


def render(url: str, tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", *args, url],
        capture_output=True, text=True, timeout=120, check=True)


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_report_renders_charts_comparison_and_stalled_scenarios(ingested, tmp_path):
    wh, _ = ingested
    page = tmp_path / "report.html"
    result = runner.invoke(app, ["report", "--out", str(page), "--warehouse", str(wh.tables.root)])
    assert result.exit_code == 0, result.output
    assert "http" not in re.sub(r"http://www\.w3\.org/2000/svg", "", page.read_text())  # self-contained

    dom = render(page.as_uri(), tmp_path, "--dump-dom").stdout
    domains = re.findall(r'<figure class="chart" data-domain="([^"]+)"', dom.split('id="latency-charts"', 1)[0])
    assert domains == sorted(domains) and {"qa", "tau2_retail", "tau2_telecom_workflow"} <= set(domains)
    assert f'data-rendered="{len(domains)}"' in dom  # the script ran to the end
    bars = re.findall(r'<rect [^>]*class="bar" data-run="([^"]+)" data-rate="([^"]+)"', dom)
    assert len(bars) > len(domains) and all(0 <= float(rate) <= 1 for _, rate in bars)
    # response latency per domain across runs: a box per run whose median is the run's p50 there
    charts = dom.split('id="latency-charts"', 1)[1]
    latency_domains = re.findall(r'<figure class="chart" data-domain="([^"]+)"', charts)
    assert latency_domains and f'data-latency-rendered="{len(latency_domains)}"' in dom
    import scorelake

    expected = scorelake.open(wh.tables.root).latency().filter(pl.col("domain") != "(all)")
    for figure in charts.split('<figure class="chart" data-domain="')[1:]:
        domain = figure.split('"', 1)[0]
        for run, p50 in re.findall(r'<g class="box" data-run="([^"]+)" data-p50="([^"]+)"', figure):
            row = expected.filter((pl.col("run_id") == run) & (pl.col("domain") == domain)).row(0, named=True)
            assert float(p50) == pytest.approx(row["p50_ms"])
    assert "Previous <b>eval_20260904_103000</b> → latest <b>eval_20260904_110000</b>" in dom
    assert re.search(r"Exact McNemar on \d+ paired scenarios", dom)
    assert "eva_airline__2_2_2" in dom.split('id="stalled"', 1)[1]  # a stalled scenario of the mixed run
    # each regressed or stalled scenario links to its page in the report, the layout of `scorelake view`'s
    target = re.search(r"<a href=\"#(s-[0-9a-f]+)\">eva_airline__2_2_2</a>", dom)[1]
    section = dom.split(f'id="{target}"', 1)[1].split("</section>", 1)[0]
    assert "eva_airline__2_2_2" in section and "stalled: the agent made" in section
    assert 'class="transcript"' in section and "Signals" in section

    shot = tmp_path / "report.png"
    render(page.as_uri(), tmp_path, f"--screenshot={shot}", "--window-size=1200,1600")
    assert shot.stat().st_size > 20_000  # a drawn page, not a blank one
