"""`scorelake view` as a person uses it: the command started as its own process, its pages driven in
Debian's headless Chromium through Debian's ChromeDriver (Selenium; no browser download): the run
page, filtering to the failed scenarios, opening one, reading the judge's reason and the transcript;
a run and a scenario named to inject script render as text; a token off the loopback address."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import polars as pl
import pytest

import scorelake
from tests import hostile
from tests.conftest import BASELINE, CONFORMANCE

SCORELAKE = str(Path(sys.executable).parent / "scorelake")
CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
INJECTION = "<script>alert(1)</script>"
pytestmark = pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                                reason="Debian's chromium and chromium-driver are not installed (.ci/run installs them)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(warehouse: Path, *args: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    server = subprocess.Popen([SCORELAKE, "view", "--port", str(port), "-w", str(warehouse), *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url + "/", timeout=2)
            return server, url
        except urllib.error.HTTPError:  # answering (e.g. 401 without the token)
            return server, url
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"scorelake view did not start: {server.stderr.read()}")
            time.sleep(0.2)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    """The baseline session, plus a tau2 file whose run and domain are named to inject script."""
    root = tmp_path_factory.mktemp("view")
    shutil.copytree(CONFORMANCE / BASELINE, root / "runs" / BASELINE)
    doc = hostile.tau2_document(domain=INJECTION)
    doc["simulations"][0]["task_id"] = INJECTION  # the scenario's name carries it too
    (root / "runs" / "<script>alert(1)<!--.json").write_text(json.dumps(doc))
    scorelake.open(root / "wh").ingest(root / "runs")
    return root / "wh"


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1280,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def site(warehouse):
    server, url = serve(warehouse)
    yield url
    server.terminate()
    server.wait(timeout=30)


def test_filter_to_the_failed_open_one_read_its_reason_and_transcript(site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{site}/")
    browser.find_element(By.LINK_TEXT, BASELINE).click()
    assert browser.current_url.startswith(f"{site}/runs/{BASELINE}")
    everything = len(browser.find_elements(By.CSS_SELECTOR, "#scenarios a.scenario"))
    browser.find_element(By.ID, "failed-only").click()
    browser.find_element(By.ID, "apply").click()
    WebDriverWait(browser, 30).until(lambda b: "failed=1" in b.current_url)
    failed = browser.find_elements(By.CSS_SELECTOR, "#scenarios a.scenario")
    assert 0 < len(failed) < everything == 14
    assert all(row.text.split()[1] == "failed" for row in browser.find_elements(By.CSS_SELECTOR, "#scenarios tr.failed"))
    browser.find_element(By.LINK_TEXT, "qa__telephone_inventor").click()
    page = browser.find_element(By.TAG_NAME, "body").text
    assert "FAILED: failed by judge_passed" in page
    assert "judge's reason: Error: 500 Server Error" in page and "the judge itself failed" in page
    turns = browser.find_elements(By.CSS_SELECTOR, "ol.transcript li.turn")
    assert len(turns) == 8 and "How can I help you today?" in turns[0].text
    checks = browser.find_elements(By.CSS_SELECTOR, "ol.transcript li.checks")  # where the checks looked, last
    assert checks and "the judge read the conversation" in checks[0].text


def test_filters_by_domain_and_failed_signal_and_sorting(site, browser):
    from selenium.webdriver.common.by import By

    browser.get(f"{site}/runs/{BASELINE}?signal=judge_passed&sort=name")
    names = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#scenarios a.scenario")]
    assert names == sorted(names) and "qa__telephone_inventor" in names
    assert all("judge_passed" in row.text for row in browser.find_elements(By.CSS_SELECTOR, "#scenarios tr.failed"))
    browser.get(f"{site}/runs/{BASELINE}?domain=qa")
    assert {a.text.split("__")[0] for a in browser.find_elements(By.CSS_SELECTOR, "#scenarios a.scenario")} == {"qa"}


def test_names_that_inject_script_render_as_text(site, browser):
    from selenium.webdriver.common.by import By

    browser.get(f"{site}/")
    run = "<script>alert(1)<!--"
    assert run in browser.find_element(By.TAG_NAME, "body").text  # shown, not run
    browser.find_element(By.LINK_TEXT, run).click()
    scenario = browser.find_element(By.CSS_SELECTOR, "#scenarios a.scenario")
    assert INJECTION in scenario.text
    scenario.click()
    assert INJECTION in browser.find_element(By.TAG_NAME, "h1").text
    assert browser.execute_script("return document.scripts.length") == 0  # none came from the data


def test_two_runs_side_by_side_and_the_policy_switcher(warehouse, site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    scorelake.open(warehouse).rescore("strict-judge", judge_threshold=1.0)
    browser.get(f"{site}/runs/{BASELINE}")
    Select(browser.find_element(By.NAME, "policy")).select_by_visible_text("strict-judge")
    WebDriverWait(browser, 30).until(lambda b: "policy=strict-judge" in b.current_url)
    assert Select(browser.find_element(By.NAME, "policy")).first_selected_option.text == "strict-judge"
    browser.get(f"{site}/compare?a={BASELINE}&b={BASELINE}")
    assert "Exact McNemar on 14 paired scenarios" in browser.find_element(By.TAG_NAME, "body").text


@pytest.mark.slow  # seconds of one call: the fast loop leaves it to CI
def test_off_loopback_a_token_is_required(warehouse):
    server, url = serve(warehouse, "--host", "0.0.0.0", "--token", "s3cret-s3cret-s3cret")
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{url}/", timeout=10)
        assert refused.value.code == 401
        assert urllib.request.urlopen(f"{url}/?token=s3cret-s3cret-s3cret", timeout=10).status == 200
        request = urllib.request.Request(f"{url}/runs/{BASELINE}",
                                         headers={"Authorization": "Bearer s3cret-s3cret-s3cret"})
        assert urllib.request.urlopen(request, timeout=10).status == 200
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.slow
def test_the_app_answers_as_the_warehouse_stood_at_a_version(warehouse, site):
    """`scorelake view --as-of`: the pages of an earlier version (here: before a policy existed)."""
    scorelake.open(warehouse).rescore("later-policy", judge_threshold=0.5)
    first = scorelake.open(warehouse).log()[0].version
    server, then = serve(warehouse, "--as-of", str(first))
    try:
        page = lambda url: urllib.request.urlopen(url, timeout=30).read().decode()  # noqa: E731
        assert "later-policy" in page(f"{site}/") and "later-policy" not in page(f"{then}/")
        assert "qa__telephone_inventor" in page(f"{then}/runs/{BASELINE}/scenarios/qa__telephone_inventor")
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"{then}/runs/nope", timeout=30)
        assert missing.value.code == 404
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_search_the_marks_the_diff_and_the_timeline_in_chromium(site, browser):
    """Search from the runs page, see a judge outage marked, read ACTION_MATCH's missing key and a
    tool call in its place in the conversation."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{site}/")
    browser.find_element(By.ID, "q").send_keys("ORD-54321")
    browser.find_element(By.ID, "search").click()
    WebDriverWait(browser, 30).until(lambda b: "/search" in b.current_url)
    assert "customer_service__order_delay" in browser.find_element(By.ID, "results").text
    browser.get(f"{site}/runs/{BASELINE}")
    row = next(r for r in browser.find_elements(By.CSS_SELECTOR, "#scenarios tr")
               if "qa__telephone_inventor" in r.text)
    assert "judge error" in row.text
    browser.get(f"{site}/runs/{BASELINE}/scenarios/customer_service__order_delay")
    missing = browser.find_element(By.CSS_SELECTOR, "table.action-keys tr.missing")
    assert missing.text.startswith("resolution_details") and "Informed customer" in missing.text
    browser.get(f"{site}/runs/{BASELINE}/scenarios/tau2_retail__22")
    moments = browser.find_elements(By.CSS_SELECTOR, "ol.transcript > li")
    kinds = [m.get_attribute("class").split()[0] for m in moments]
    first_call = kinds.index("call")
    assert kinds[:first_call] == ["turn", "turn"] and kinds[first_call + 1] == "turn"  # after the user's request
    assert "modify_user_address" in moments[first_call].text and "arguments" in moments[first_call].text
    assert kinds[-1] == "checks"


LONG = "a_task_whose_id_runs_on_and_on_" * 6  # 186 characters with no space to break at
WIDE_RUN = "tau2_results_of_a_system_under_a_name_long_enough_to_push_every_column_past_the_edge"


@pytest.fixture(scope="module")
def long_names(tmp_path_factory) -> Path:
    """The baseline session beside a tau2 run whose run, domain and task names are as long as tau2's
    longest, reviewed so that the review queue has rows."""
    root = tmp_path_factory.mktemp("long")
    shutil.copytree(CONFORMANCE / BASELINE, root / "runs" / BASELINE)
    doc = hostile.tau2_document(domain="customer_service_and_billing_and_account_recovery_" * 2)
    doc["simulations"][0]["task_id"] = doc["tasks"][0]["id"] = LONG
    (root / "runs" / f"{WIDE_RUN}.json").write_text(json.dumps(doc))
    wh = scorelake.open(root / "wh")
    wh.ingest(root / "runs")
    name = wh.scenarios(run=WIDE_RUN)["scenario_name"][0]
    wh.review(WIDE_RUN, name, "is_successful", "fail", reviewer="alice")
    wh.review(WIDE_RUN, name, "is_successful", "pass", reviewer="bob")
    return root / "wh"


def test_every_page_fits_the_window_at_1280_and_800_pixels(long_names, browser, tmp_path):
    """No page scrolls sideways: long names wrap, wide tables scroll inside their own box."""
    server, url = serve(long_names, "--review", "--token", "t" * 16)
    try:
        wh = scorelake.open(long_names)
        scenario = wh.scenarios(run=WIDE_RUN)["scenario_name"][0]
        pages = ["/", f"/runs/{BASELINE}", f"/runs/{WIDE_RUN}", f"/runs/{BASELINE}/latency", f"/runs/{WIDE_RUN}/flaky",
                 f"/runs/{BASELINE}/voice", f"/runs/{BASELINE}/scenarios/customer_service__order_delay",
                 f"/runs/{WIDE_RUN}/scenarios/{scenario}", f"/compare?a={BASELINE}&b={WIDE_RUN}",
                 "/search?q=done", "/review", "/review?pick=reviewers", "/review?pick=sample"]
        for width in (1280, 800):
            browser.set_window_size(width, 1000)
            for path in pages:
                browser.get(f"{url}{path}{'&' if '?' in path else '?'}token={'t' * 16}")
                overflow = browser.execute_script(
                    "return [document.scrollingElement.scrollWidth, window.innerWidth]")
                shot = tmp_path / f"{width}-{len(path)}.png"
                browser.save_screenshot(str(shot))
                assert overflow[0] <= overflow[1], f"{path} at {width} px: {overflow[0]} px wide ({shot})"
    finally:
        browser.set_window_size(1280, 1000)
        server.terminate()
        server.wait(timeout=30)


def test_a_failed_scenarios_evidence_is_in_the_first_screen_at_1280_by_800(long_names, browser):
    """The outcome, the failing signals with the reference beside the prediction, and the start of
    the transcript sit in the first screen, the review panel beside them; the task is folded to its
    opening (it took 1,600-2,400 px open)."""
    wh = scorelake.open(long_names)
    failed = wh.scenarios(run=BASELINE).filter(~pl.col("is_successful"))["scenario_name"].to_list()
    longest = max(failed, key=lambda name: len(wh.evidence(BASELINE, name).task.instructions
                                               if wh.evidence(BASELINE, name).task else ""))
    server, url = serve(long_names, "--review", "--token", "t" * 16)
    try:
        browser.set_window_size(1280, 800)
        browser.get(f"{url}/runs/{BASELINE}/scenarios/{longest}?token={'t' * 16}")
        top, screen, task_open = browser.execute_script(
            "const top = s => document.querySelector(s).getBoundingClientRect().top;"
            "return [['.outcome', 'div.why', 'pre.reference', 'pre.prediction', 'ol.transcript', "
            "'aside.review-panel'].map(top), window.innerHeight, document.querySelector('details.task').open]")
        assert not task_open and screen <= 800
        assert all(t < screen - 120 for t in top), (longest, top, screen)  # the transcript's first lines too
    finally:
        browser.set_window_size(1280, 1000)
        server.terminate()
        server.wait(timeout=30)


def test_from_the_queue_to_a_saved_review_and_the_next_by_keyboard(long_names, browser):
    """The review panel beside the evidence: `a` agrees with the outcome, saves and opens the next
    scenario of the queue, which says what was saved and on which scenario; `u` undoes it (back on
    that scenario, the review taken back); `n` skips to the next."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    server, url = serve(long_names, "--review", "--token", "t" * 16)
    try:
        browser.get(f"{url}/review?token={'t' * 16}&pick=errors")
        browser.find_element(By.ID, "start").click()
        WebDriverWait(browser, 30).until(lambda b: "/scenarios/" in b.current_url)
        first = browser.current_url
        panel = browser.find_element(By.CSS_SELECTOR, "aside.review-panel")
        assert panel.find_element(By.ID, "review-is_successful-") and "keys:" in panel.text
        reviewer = panel.find_element(By.CSS_SELECTOR, "#review-is_successful- input[name=reviewer]")
        reviewer.clear()
        reviewer.send_keys("carol")
        browser.find_element(By.TAG_NAME, "body").send_keys("a")
        WebDriverWait(browser, 30).until(lambda b: b.current_url != first and "/scenarios/" in b.current_url)
        saved = browser.find_element(By.ID, "saved").text
        reviewed = scorelake.open(long_names).reviews().filter(pl.col("reviewer") == "carol")
        assert reviewed.height == 1 and f"Saved: your verdict {reviewed['verdict'][0]}" in saved
        assert f"of {reviewed['scenario_name'][0]} ({reviewed['run_id'][0]})" in saved and "undo" in saved
        browser.find_element(By.TAG_NAME, "body").send_keys("u")
        WebDriverWait(browser, 30).until(lambda b: "Undone" in b.find_element(By.ID, "saved").text)
        assert browser.current_url.split("?")[0] == first.split("?")[0]  # back on the scenario undone
        assert scorelake.open(long_names).reviews().filter(pl.col("reviewer") == "carol").is_empty()
        browser.find_element(By.TAG_NAME, "body").send_keys("n")
        WebDriverWait(browser, 30).until(lambda b: b.current_url.split("?")[0] != first.split("?")[0])
        second = browser.current_url
        browser.find_element(By.TAG_NAME, "body").send_keys("n")
        WebDriverWait(browser, 30).until(lambda b: b.current_url != second)
        browser.find_element(By.TAG_NAME, "body").send_keys("/")
        assert browser.switch_to.active_element.get_attribute("name") in ("q", "note")
        browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_token_leaves_the_address_for_a_session_cookie_and_every_answer_is_guarded(warehouse):
    """A browser's first visit with ?token= is sent on to the address without it, the token kept in
    an HttpOnly, SameSite=Strict session cookie; no link of a page carries it; every answer has the
    security headers; a token under 16 characters is refused; a 404 does not name the warehouse's path."""
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    token = "a-token-of-24-characters"
    client = TestClient(make_app(scorelake.open(warehouse), token=token), follow_redirects=False)
    browsing = {"Sec-Fetch-Mode": "navigate"}
    first = client.get(f"/runs/{BASELINE}?token={token}&failed=1", headers=browsing)
    assert first.status_code == 303 and first.headers["location"] == f"/runs/{BASELINE}?failed=1"
    cookie = first.headers["set-cookie"]
    assert cookie.startswith("scorelake_session=") and "HttpOnly" in cookie and "SameSite=strict" in cookie
    page = client.get(first.headers["location"], headers=browsing)  # the cookie carries it now
    assert page.status_code == 200 and token not in page.text and "token=" not in page.text
    scenario = page.text.split('href="')[-1].split('"')[0]
    assert client.get("/").status_code == 200 and token not in client.get("/").text
    for answer in (page, first, client.get("/no/such/address"), TestClient(client.app).get("/")):
        assert answer.headers["referrer-policy"] == "same-origin" and answer.headers["cache-control"] == "no-store"
        assert answer.headers["x-frame-options"] == "DENY" and answer.headers["x-content-type-options"] == "nosniff"
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    assert scenario  # a link of the page, without the token
    missing = client.get("/runs/no-such-run")
    assert missing.status_code == 404 and str(warehouse) not in missing.text and "the warehouse" in missing.text
    with pytest.raises(scorelake.InvalidArgument, match="at least 16 characters"):
        make_app(scorelake.open(warehouse), token="a")
    refused = subprocess.run([SCORELAKE, "view", "-w", str(warehouse), "--token", "a", "--port", str(free_port())],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "at least 16 characters" in refused.stderr
